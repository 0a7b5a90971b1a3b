-- Options that change where and how the client runs.
local H = require("helpers")

if not H.bin() then
  H.skip("options", "TETHER_BIN is not set")
  H.finish()
end

local notes = {} ---@type string[]
vim.notify = function(msg)
  table.insert(notes, msg)
end

H.setup({ filetypes = { "lua" }, read_only = true, log_level = "info" })
local ws = H.workspace({ ["a.lua"] = "return 1\n", ["b.py"] = "x = 1\n", ["c.txt"] = "plain\n" })
local ws2 = H.workspace({ ["d.lua"] = "return 1\n" })

H.test("filetypes limits the buffers tether attaches to", function()
  H.open(ws .. "/a.lua")
  for _, name in ipairs({ "b.py", "c.txt" }) do
    vim.cmd.edit(vim.fn.fnameescape(ws .. "/" .. name))
    vim.wait(300)
    H.eq(0, #vim.lsp.get_clients({ bufnr = 0, name = "tether" }), "clients on " .. name)
  end
end)

H.test("read_only serves only the tools that change nothing", function()
  local bufnr = H.open(ws .. "/a.lua")
  local names = vim.tbl_map(function(t)
    return t.name
  end, require("tether").list_tools({ bufnr = bufnr }).tools)
  H.truthy(vim.tbl_contains(names, "read_file"), "read_file listed")
  H.truthy(not vim.tbl_contains(names, "edit_file"), "edit_file listed: " .. table.concat(names, ", "))
end)

H.test(":Tether status names the client, its root and encoding", function()
  H.open(ws .. "/a.lua")
  notes = {}
  vim.cmd("Tether status")
  local text = table.concat(notes, "\n")
  H.truthy(text:find("root " .. ws, 1, true), text)
  H.truthy(text:find("position encoding: utf-8", 1, true), text)
  H.truthy(text:find("--read-only", 1, true), text)
end)

H.test(":Tether log shows the plugin's notes in a scratch buffer", function()
  require("tether.log").add("warn", "a note for the log")
  vim.cmd("Tether log")
  H.eq("tether://log", vim.api.nvim_buf_get_name(0), "buffer")
  H.truthy(H.text(0):find("[warn] a note for the log", 1, true), H.text(0))
end)

H.test(":Tether with a bad subcommand says what it expects", function()
  notes = {}
  vim.cmd("Tether frobnicate")
  H.truthy(notes[1] and notes[1]:find("tools, call, grep, status, log", 1, true), vim.inspect(notes))
  H.eq({ "call" }, require("tether.commands").complete("ca", "Tether ca"), "completion")
end)

H.test('save = "never" leaves a clean buffer unsaved after a tool edit', function()
  H.setup({ save = "never" })
  local bufnr = H.open(ws2 .. "/d.lua")
  local result = require("tether").call("edit_file", { path = "d.lua", old_string = "1", new_string = "2" })
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.eq("return 2", H.text(bufnr), "buffer")
  H.eq(true, vim.bo[bufnr].modified, "modified")
  H.eq("return 1\n", H.read(ws2 .. "/d.lua"), "file")
end)

H.finish()
