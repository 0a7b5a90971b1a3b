-- Tool edits through tether.callTool land in buffers, can be undone, and clean buffers are saved.
local H = require("helpers")

if not H.bin() then
  H.skip("edit", "TETHER_BIN is not set")
  H.finish()
end

local notes = {} ---@type string[]
vim.notify = function(msg)
  table.insert(notes, msg)
end

H.setup()
local ws = H.workspace({
  ["a.py"] = "def f():\n    return 1\n",
  ["b.py"] = "x = 1\n",
})

H.test("edit_file on a clean buffer: lands, is saved through tether/saveDocuments, and u undoes it", function()
  local bufnr, client = H.open(ws .. "/a.py")
  local strict = client.handlers["workspace/applyEdit"]
  local label ---@type string?
  client.handlers["workspace/applyEdit"] = function(err, params, ctx)
    label = params.label
    return strict(err, params, ctx)
  end
  local result =
    require("tether").call("edit_file", { path = "a.py", old_string = "return 1", new_string = "return 2" })
  client.handlers["workspace/applyEdit"] = strict
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.eq("def f():\n    return 2", H.text(bufnr), "buffer")
  H.eq("def f():\n    return 2\n", H.read(ws .. "/a.py"), "file saved by the editor")
  H.eq(false, vim.bo[bufnr].modified, "buffer modified after the save")
  -- The server names the tool in the edit's label ("tether: edit_file") when it sends one.
  local who = label or "tether"
  H.truthy(
    vim.iter(notes):any(function(n)
      return vim.startswith(n, who .. " changed ") and n:find("a.py", 1, true)
    end),
    ("a message names %s and the file: %s"):format(who, vim.inspect(notes))
  )
  vim.api.nvim_set_current_buf(bufnr)
  vim.cmd("normal! u")
  H.eq("def f():\n    return 1", H.text(bufnr), "buffer after u")
end)

H.test("edit_file on a buffer with unsaved changes: lands and stays unsaved", function()
  local bufnr, client = H.open(ws .. "/b.py")
  vim.api.nvim_buf_set_lines(bufnr, 1, 1, false, { "y = 2" })
  H.wait(function()
    return H.server_doc(client, bufnr).text == "x = 1\ny = 2\n"
  end, "the server to see the unsaved line")
  local result = require("tether").call("edit_file", { path = "b.py", old_string = "y = 2", new_string = "y = 3" })
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.eq("x = 1\ny = 3", H.text(bufnr), "buffer")
  H.eq("x = 1\n", H.read(ws .. "/b.py"), "file untouched")
  H.eq(true, vim.bo[bufnr].modified, "buffer modified")
end)

H.test("tether/saveDocuments saves the listed buffer and answers with its URI", function()
  local bufnr, client = H.open(ws .. "/b.py")
  local uri = vim.uri_from_bufnr(bufnr)
  local handler = require("tether.save_documents").handler
  local result = handler(nil, { uris = { uri, "file:///nowhere/else.py" } }, { client_id = client.id })
  H.eq({ saved = { uri } }, result, "answer")
  H.eq("x = 1\ny = 3\n", H.read(ws .. "/b.py"), "file")
  H.eq(false, vim.bo[bufnr].modified, "modified")
  H.wait(function()
    return H.server_doc(client, bufnr).dirty == false
  end, "the server to see the save")
end)

H.test("a failing tool is a result with isError, and the buffer is unchanged", function()
  local bufnr = H.open(ws .. "/a.py")
  local before = H.text(bufnr)
  local result =
    require("tether").call("edit_file", { path = "a.py", old_string = "nothing like this", new_string = "x" })
  H.eq(true, result.isError, "isError")
  H.eq("no_match", vim.json.decode(require("tether").text(result)).error, "error kind")
  H.eq(before, H.text(bufnr), "buffer")
end)

H.test("move of an open file goes through the handler as a rename, and the buffer follows", function()
  H.write(ws .. "/old.txt", "moving\n")
  local bufnr = H.open(ws .. "/old.txt")
  local result = require("tether").call("move", { source = "old.txt", destination = "new.txt" })
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.eq(nil, vim.uv.fs_stat(ws .. "/old.txt"), "old file")
  H.eq("moving\n", H.read(ws .. "/new.txt"), "new file")
  local renamed = vim.fn.bufnr(ws .. "/new.txt")
  H.truthy(renamed ~= -1, "a buffer for new.txt")
  H.eq("moving", H.text(renamed), "its text")
  H.truthy(bufnr == renamed or not vim.api.nvim_buf_is_loaded(bufnr), "the old buffer is gone or renamed")
end)

H.finish()
