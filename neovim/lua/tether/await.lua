-- Answering a server's request later: tether's requests to the editor (`tether/languageRequest`,
-- which asks other language servers) wait for other messages, and Neovim must keep reading
-- those while they wait.
--
-- Neovim 0.11 runs each handler of a server's request inside a coroutine of its own
-- (`vim.lsp.rpc`, `handle_body`) and sends the handler's return values as the response when that
-- coroutine ends; LuaJIT lets a coroutine yield across the `pcall` that wraps the handler. So a
-- handler that finds itself in such a coroutine yields, and is resumed by the callback that
-- ends its work: the event loop is never blocked. Anywhere else (called from the main thread)
-- it waits with `vim.wait`, which keeps processing events, bounded by a timeout.

local M = {}

---Runs `start(done)` and returns what `done` was given. `done` may be called at once, later from
---any callback of the main loop, or never (then the result is `nil, "timeout"` after
---`timeout` ms).
---@param start fun(done: fun(...))
---@param timeout integer milliseconds
---@return any ...
function M.run(start, timeout)
  local co, main = coroutine.running()
  local finished, waiting, values = false, false, nil
  local function done(...)
    if finished then
      return
    end
    finished, values = true, { n = select("#", ...), ... }
    if waiting then
      -- Resumed from the main loop, never from inside a fast event or the caller's own stack.
      vim.schedule(function()
        local ok, err = coroutine.resume(co)
        if not ok then
          require("tether.log").add("error", "a request handler failed: " .. tostring(err))
        end
      end)
    end
  end
  start(done)
  if not finished then
    if co and not main then
      local timer = vim.defer_fn(function()
        done(nil, "timeout")
      end, timeout)
      waiting = true
      coroutine.yield()
      if not timer:is_closing() then
        timer:stop()
        timer:close()
      end
    else
      vim.wait(timeout, function()
        return finished
      end, 5)
      done(nil, "timeout")
    end
  end
  return unpack(values, 1, values.n)
end

return M
