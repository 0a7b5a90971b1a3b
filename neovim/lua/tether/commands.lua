-- `:Tether {subcommand}`: tools, call, grep, status, log, review, history, undo, install.

local M = {}

---Shows lines in a scratch buffer in a split, replacing the one shown before under that name.
---@param name string
---@param lines string[]
---@param filetype? string
---@return integer bufnr
function M.scratch(name, lines, filetype)
  local bufname = "tether://" .. name
  local bufnr = vim.fn.bufnr(bufname)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, bufname)
    vim.bo[bufnr].bufhidden = "wipe"
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if filetype then
    vim.bo[bufnr].filetype = filetype
  end
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.api.nvim_set_current_win(win)
  end
  return bufnr
end

---@param message string
local function fail(message)
  vim.notify("tether: " .. message, vim.log.levels.ERROR, { title = "tether" })
end

---`:Tether tools`: every tool with the first line of its description.
function M.tools()
  require("tether").list_tools({}, function(err, result)
    if err then
      return fail(err)
    end
    local lines = {} ---@type string[]
    local width = 0
    for _, tool in ipairs(result.tools) do
      width = math.max(width, #tool.name)
    end
    for _, tool in ipairs(result.tools) do
      local first = vim.split(tool.description or "", "\n", { plain = true })[1]
      table.insert(lines, ("%-" .. width .. "s  %s"):format(tool.name, first))
    end
    M.scratch("tools", lines)
  end)
end

---`:Tether call {tool} {json}`: the result in a scratch buffer.
---@param tool string
---@param json? string
function M.call(tool, json)
  local args = {}
  if json and json ~= "" then
    local ok, decoded = pcall(vim.json.decode, json, { luanil = { object = true, array = true } })
    if not ok or type(decoded) ~= "table" then
      return fail("the arguments must be a JSON object: " .. json)
    end
    args = decoded
  end
  local tether = require("tether")
  tether.call(tool, args, { interactive = true }, function(err, result)
    if err then
      return fail(err)
    end
    local lines = vim.split(tether.text(result), "\n", { plain = true })
    if result.isError then
      table.insert(lines, 1, ("%s failed:"):format(tool))
    end
    M.scratch("call/" .. tool, lines)
  end)
end

---The 1-based column of the first match of `pattern` in `line`, as near as Neovim can tell: the
---pattern is Rust regex syntax, so a literal is found exactly, a simple regex through a very magic
---Vim regex, and anything else gives column 1.
---@param line string
---@param pattern string
---@return integer
local function column(line, pattern)
  if not pattern:find("[%^%$%(%)%[%]{}%.%*%+%?|\\]") then
    return line:find(pattern, 1, true) or 1
  end
  local ok, re = pcall(vim.regex, "\\v" .. pattern)
  local start = ok and re:match_str(line) or nil
  return start and start + 1 or 1
end

---Parses `grep`'s content lines (`path:line:text`) into quickfix items.
---@param text string
---@param root string
---@param pattern? string The pattern searched for, to find each match's column.
---@return vim.quickfix.entry[]
function M.grep_items(text, root, pattern)
  local items = {} ---@type vim.quickfix.entry[]
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    local path, lnum, rest = line:match("^(.-):(%d+):(.*)$")
    if path and path ~= "" then
      local file = path:sub(1, 1) == "/" and path or (root .. "/" .. path)
      local col = pattern and column(rest, pattern) or 1
      table.insert(items, { filename = file, lnum = tonumber(lnum), col = col, text = rest })
    end
  end
  return items
end

---`:Tether grep {pattern}`: matches over the live buffers and the disk, into the quickfix list.
---@param pattern string
---@param done? fun(count: integer) Called after the list is filled (for tests).
function M.grep(pattern, done)
  local tether = require("tether")
  local client = tether.client()
  local root = client and client.root_dir or vim.uv.cwd()
  tether.call("grep", { pattern = pattern, output_mode = "content" }, {}, function(err, result)
    if err then
      return fail(err)
    end
    local text = tether.text(result)
    if result.isError then
      return fail(text)
    end
    local items = M.grep_items(text, root, pattern)
    vim.fn.setqflist({}, " ", { title = "tether grep " .. pattern, items = items })
    if #items > 0 then
      vim.cmd("botright copen")
    else
      vim.notify("tether grep: no match for " .. pattern, vim.log.levels.INFO, { title = "tether" })
    end
    if done then
      done(#items)
    end
  end)
end

---`:Tether status`: the client of this buffer and how it runs.
function M.status()
  local config = require("tether.config")
  local client = require("tether").client()
  local bin, why = config.find_binary()
  local lines = { "binary: " .. (bin or why) }
  if not client then
    table.insert(lines, "not running for this buffer")
  else
    local attached = vim.tbl_count(client.attached_buffers or {})
    vim.list_extend(lines, {
      ("client %d, root %s"):format(client.id, client.root_dir or "(none)"),
      "command: " .. table.concat(type(client.config.cmd) == "table" and client.config.cmd or {}, " "),
      "position encoding: " .. client.offset_encoding,
      ("attached buffers: %d"):format(attached),
      "save policy: " .. tostring((client.config.init_options or {}).save or "clean"),
    })
  end
  vim.notify(table.concat(lines, "\n"), vim.log.levels.INFO, { title = "tether" })
end

---`:Tether log`: the server's messages and the plugin's notes.
function M.log()
  local lines = { "# tether log (the full LSP log: " .. vim.lsp.get_log_path() .. ")" }
  vim.list_extend(lines, require("tether.log").entries)
  M.scratch("log", lines)
end

M.subcommands = { "tools", "call", "grep", "status", "log", "review", "history", "undo", "install" }

---Runs `:Tether` with its arguments.
---@param args string
function M.run(args)
  local sub, rest = args:match("^%s*(%S*)%s*(.-)%s*$")
  if sub == "tools" then
    M.tools()
  elseif sub == "call" then
    local tool, json = rest:match("^(%S+)%s*(.*)$")
    if not tool then
      return fail("usage: :Tether call {tool} {json}")
    end
    M.call(tool, json)
  elseif sub == "grep" then
    if rest == "" then
      return fail("usage: :Tether grep {pattern}")
    end
    M.grep(rest)
  elseif sub == "status" then
    M.status()
  elseif sub == "log" then
    M.log()
  elseif sub == "review" then
    require("tether.review").focus()
  elseif sub == "history" then
    local client = require("tether").client()
    local history = require("tether.history")
    local path, err = history.history_path(rest, client and client.root_dir)
    if err then
      return fail(err)
    end
    history.history(path)
  elseif sub == "undo" then
    local ids, err = require("tether.history").undo_ids(rest)
    if not ids then
      return fail(("%s; usage: :Tether undo [{id}...]"):format(err))
    end
    require("tether.history").undo_command(ids)
  elseif sub == "install" then
    require("tether.install").command()
  else
    fail(("unknown subcommand %q; expected one of: %s"):format(sub, table.concat(M.subcommands, ", ")))
  end
end

---Completion for `:Tether`: subcommands, then tool names after `call`, files (and `%`) after
---`history`, and the ids of changes not yet undone after `undo`.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local words = vim.split(vim.trim(cmdline), "%s+")
  local trailing = cmdline:match("%s$") ~= nil
  local n = #words + (trailing and 1 or 0)
  local candidates = {} ---@type string[]
  if n == 2 then
    candidates = M.subcommands
  elseif n == 3 and words[2] == "call" then
    local ok, result = pcall(require("tether").list_tools, { timeout = 1000 })
    if ok and result then
      for _, tool in ipairs(result.tools) do
        table.insert(candidates, tool.name)
      end
    end
  elseif n == 3 and words[2] == "history" then
    candidates = vim.list_extend({ "%" }, vim.fn.getcompletion(arglead, "file"))
  elseif n >= 3 and words[2] == "undo" then
    candidates = require("tether.history").complete_ids(1000)
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

return M
