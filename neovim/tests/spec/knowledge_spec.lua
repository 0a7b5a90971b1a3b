-- What the plugin tells tether: diagnostics from other language servers with the version they
-- belong to, the visible windows and cursors, and what it answers when no server can help. The
-- other language servers here are in-process fakes (`cmd` as a Lua function).
local H = require("helpers")

if not H.bin() then
  H.skip("knowledge", "TETHER_BIN is not set")
  H.finish()
end

H.setup()
local ws = H.workspace({
  ["a.txt"] = "one\ntwo\nthree\n",
  ["b.txt"] = "alpha\nbeta\n",
  ["e.txt"] = "gamma\n",
  ["f.txt"] = "delta\nepsilon\n",
})

---Starts a fake language server on `bufnr` that answers `initialize` and nothing else; returns
---its client and a function that makes it publish diagnostics.
---@param name string
---@param bufnr integer
---@return vim.lsp.Client
---@return fun(params: table)
local function fake_server(name, bufnr)
  local dispatchers
  local id = vim.lsp.start({
    name = name,
    cmd = function(d)
      dispatchers = d
      return {
        request = function(method, _, callback)
          callback(nil, method == "initialize" and { capabilities = { textDocumentSync = 1 } } or vim.NIL)
          return true, 1
        end,
        notify = function() end,
        is_closing = function()
          return false
        end,
        terminate = function() end,
      }
    end,
    root_dir = ws,
  }, { bufnr = bufnr })
  local client = assert(vim.lsp.get_client_by_id(assert(id)))
  H.wait(function()
    return client.initialized and client.attached_buffers[bufnr]
  end, name .. " to attach")
  return client, function(params)
    dispatchers.notification("textDocument/publishDiagnostics", params)
  end
end

---Starts a fake language server in utf-16 on `bufnr` that answers `textDocument/definition`
---after `delay` ms with a location on line 0 of `target`, 9 utf-16 units in (after "a😀b中"...);
---`seen` collects the positions it was asked about.
---@param bufnr integer
---@param target string
---@param delay integer
---@param seen lsp.Position[]
local function fake_definition_server(bufnr, target, delay, seen)
  local id = vim.lsp.start({
    name = "fake-def",
    cmd = function()
      return {
        request = function(method, params, callback)
          if method == "initialize" then
            callback(nil, { capabilities = { positionEncoding = "utf-16", definitionProvider = true } })
          elseif method == "textDocument/definition" then
            table.insert(seen, params.position)
            vim.defer_fn(function()
              local r = { start = { line = 0, character = 5 }, ["end"] = { line = 0, character = 6 } }
              callback(nil, { { uri = vim.uri_from_fname(target), range = r } })
            end, delay)
          else
            callback(nil, vim.NIL)
          end
          return true, #seen + 1
        end,
        notify = function() end,
        is_closing = function()
          return false
        end,
        terminate = function() end,
      }
    end,
    root_dir = ws,
  }, { bufnr = bufnr })
  local client = assert(vim.lsp.get_client_by_id(assert(id)))
  H.wait(function()
    return client.initialized and client.attached_buffers[bufnr]
  end, "fake-def to attach")
  return client
end

---The `diagnostics` tool's answer for one file.
---@param bufnr integer
---@param path string
---@return table?
local function reported(bufnr, path)
  local r = require("tether").call("diagnostics", { path = path }, { bufnr = bufnr })
  assert(r and not r.isError, require("tether").text(r))
  return vim.json.decode(require("tether").text(r)).files[1]
end

local function problem(line, message)
  return {
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 3 } },
    severity = 1,
    source = "fake",
    message = message,
  }
end

H.test("diagnostics reach tether with the version the server stated, and the oldest of two servers'", function()
  local bufnr = H.open(ws .. "/a.txt")
  local uri = vim.uri_from_bufnr(bufnr)
  local _, publish_a = fake_server("fake-a", bufnr)
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { "ONE" }) -- the buffer moves on past version 0
  local version = vim.lsp.util.buf_versions[bufnr]
  publish_a({ uri = uri, version = version, diagnostics = { problem(0, "first") } })
  local file
  H.wait(function()
    file = reported(bufnr, "a.txt")
    return file and file.version == version
  end, "tether to hold fake-a's report")
  H.eq(
    { "first" },
    vim.tbl_map(function(p)
      return p.message
    end, file.problems)
  )
  H.eq(false, require("tether.diagnostics").params(bufnr).complete, "pushed diagnostics may come in parts")

  -- A second server that has reported on an older version holds the buffer's version back.
  local _, publish_b = fake_server("fake-b", bufnr)
  publish_b({ uri = uri, version = version - 1, diagnostics = { problem(1, "second") } })
  H.wait(function()
    file = reported(bufnr, "a.txt")
    return file and #file.problems == 2
  end, "tether to hold both reports")
  H.eq(version - 1, file.version, "the older of the two versions")

  -- Without a stated version, not known: not the buffer's version when the report arrived.
  publish_b({ uri = uri, diagnostics = {} })
  H.wait(function()
    file = reported(bufnr, "a.txt")
    return file and #file.problems == 1
  end, "fake-b's empty report")
  H.eq(vim.NIL, file.version, "a report without a version makes the buffer's unknown")
end)

H.test("a report without a version leaves the buffer's version unknown", function()
  local bufnr = H.open(ws .. "/e.txt")
  local uri = vim.uri_from_bufnr(bufnr)
  local _, publish = fake_server("fake-unversioned", bufnr)
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { "ALPHA" })
  -- Its buffer version when it arrives says nothing: the server may have computed it for the text
  -- before that version (issue 33).
  publish({ uri = uri, diagnostics = { problem(0, "unversioned") } })
  local file
  H.wait(function()
    file = reported(bufnr, "e.txt")
    return file and #file.problems == 1
  end, "tether to hold the report")
  H.eq(vim.NIL, file.version, "no version")
end)

H.test("pulled diagnostics carry the version they were asked for, not the one they arrive at", function()
  local bufnr = H.open(ws .. "/f.txt")
  local asked = {} ---@type integer[] the buffer's version at each request
  local hold = false
  local id = vim.lsp.start({
    name = "fake-pull",
    cmd = function()
      return {
        request = function(method, _, callback)
          if method == "initialize" then
            callback(nil, { capabilities = { textDocumentSync = 1, diagnosticProvider = {} } })
          elseif method == "textDocument/diagnostic" then
            -- Neovim sent its pending changes before this request: the answer is for this version.
            local n = #asked + 1
            asked[n] = vim.lsp.util.buf_versions[bufnr]
            if not hold then
              vim.defer_fn(function()
                callback(nil, { kind = "full", items = { problem(0, "pulled " .. n) } })
              end, 300)
            end
          else
            callback(nil, vim.NIL)
          end
          return true, #asked + 1
        end,
        -- Neovim pulls after a `didChange` it sent (`LspNotify`), which needs a true here.
        notify = function()
          return true
        end,
        is_closing = function()
          return false
        end,
        terminate = function() end,
      }
    end,
    root_dir = ws,
  }, { bufnr = bufnr })
  local client = assert(vim.lsp.get_client_by_id(assert(id)))
  H.wait(function()
    return client.initialized and client.attached_buffers[bufnr]
  end, "fake-pull to attach")
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, { "CHANGED" })
  local version = vim.lsp.util.buf_versions[bufnr]
  H.wait(function()
    return asked[#asked] == version
  end, "a pull after the change")
  local n = #asked
  -- The buffer moves on while the answer is on its way; the next pull is never answered.
  hold = true
  vim.api.nvim_buf_set_lines(bufnr, 1, 2, false, { "AGAIN" })
  local file
  H.wait(function()
    file = reported(bufnr, "f.txt")
    return file and file.problems[1] and file.problems[1].message == "pulled " .. n
  end, "tether to hold the pulled report")
  H.eq(version, file.version, "the version asked for")
  assert(vim.lsp.util.buf_versions[bufnr] > version, "the buffer moved on")
  H.eq(true, require("tether.diagnostics").params(bufnr).complete, "a pulled answer is whole for its version")
end)

H.test("editor context: each file window with its cursor, the current one active and first", function()
  local a = H.open(ws .. "/a.txt")
  vim.cmd("vsplit")
  local b = H.open(ws .. "/b.txt")
  vim.api.nvim_win_set_cursor(0, { 2, 2 })
  local r = require("tether").call("editor_context", {}, { bufnr = b })
  assert(r and not r.isError, require("tether").text(r))
  local context = vim.json.decode(require("tether").text(r))
  H.eq("b.txt", context.active)
  H.eq(
    { "b.txt", "a.txt" },
    vim.tbl_map(function(e)
      return e.path
    end, context.editors)
  )
  H.eq(
    { { line = 2, column = 3, end_line = 2, end_column = 3, text = "" } },
    context.editors[1].selections,
    "the cursor"
  )
  H.eq(vim.lsp.util.buf_versions[b], context.editors[1].version)
  H.eq({ { line = 1, end_line = 2 } }, context.editors[1].visible)
  H.eq(false, context.editors[2].active)
  H.eq(vim.api.nvim_buf_line_count(a), context.editors[2].visible[1].end_line)
  vim.cmd("only")
end)

H.test("a language request on a file no language server serves says so", function()
  local bufnr = H.open(ws .. "/b.txt")
  local started = vim.uv.now()
  local r = require("tether").call("definition", { path = "b.txt", line = 1, column = 1 }, { bufnr = bufnr })
  local text = require("tether").text(r)
  H.truthy(r.isError, text)
  H.truthy(text:find("language server"), text)
  -- No server is starting, so the plugin does not wait out its 5 s for one to attach.
  H.truthy(vim.uv.now() - started < 3000, ("answered in %d ms"):format(vim.uv.now() - started))
end)

H.test("a language request converts positions both ways while Neovim's loop runs on", function()
  H.write(ws .. "/c.txt", "x😀y = 中(1)\n")
  local bufnr = H.open(ws .. "/c.txt")
  local seen = {}
  local client = fake_definition_server(bufnr, ws .. "/c.txt", 600, seen)
  H.eq("utf-16", client.offset_encoding)
  local ticks, answer = 0, nil
  local timer = assert(vim.uv.new_timer())
  timer:start(0, 20, function()
    ticks = ticks + 1
  end)
  -- Column 5 (1-based characters) is `=`: byte 7, utf-16 unit 5.
  require("tether").call("definition", { path = "c.txt", line = 1, column = 5 }, { bufnr = bufnr }, function(err, r)
    answer = { err = err, result = r }
  end)
  H.wait(function()
    return answer
  end, "the definition")
  timer:stop()
  timer:close()
  H.eq(nil, answer.err)
  local text = require("tether").text(answer.result)
  H.truthy(not answer.result.isError, text)
  H.eq({ { line = 0, character = 5 } }, seen, "the position the server was asked about, in utf-16")
  local loc = vim.json.decode(text).locations[1]
  -- utf-16 unit 5 is `=` again: the 5th character.
  H.eq({ "c.txt", 1, 5 }, { loc.path, loc.line, loc.column })
  H.truthy(ticks >= 15, ("the event loop ran while the server took 600 ms (%d ticks)"):format(ticks))
  vim.lsp.stop_client(client.id, true)
end)

H.finish()
