-- :Tether grep reads unsaved buffers and fills the quickfix list.
local H = require("helpers")

if not H.bin() then
  H.skip("grep", "TETHER_BIN is not set")
  H.finish()
end

H.setup()
local ws = H.workspace({ ["src/one.txt"] = "first line\nsecond line\n", ["two.txt"] = "nothing\n" })

H.test(":Tether grep finds text that exists only in an unsaved buffer", function()
  local bufnr, client = H.open(ws .. "/src/one.txt")
  vim.api.nvim_buf_set_lines(bufnr, 1, 2, false, { "an unsaved needle here" })
  H.wait(function()
    return H.server_doc(client, bufnr).text:find("needle", 1, true)
  end, "the server to see the change")
  vim.fn.setqflist({}, "r", { title = "empty", items = {} })
  vim.cmd("Tether grep needle")
  H.wait(function()
    return vim.fn.getqflist({ title = 0 }).title == "tether grep needle"
  end, "the quickfix list")
  local items = vim.fn.getqflist()
  H.eq(1, #items, "items: " .. vim.inspect(items))
  H.eq(ws .. "/src/one.txt", vim.api.nvim_buf_get_name(items[1].bufnr), "file")
  H.eq(2, items[1].lnum, "line")
  H.eq(12, items[1].col, "column")
  H.eq("an unsaved needle here", items[1].text, "text")
  H.eq("first line\nsecond line\n", H.read(ws .. "/src/one.txt"), "the file on disk is unchanged")
end)

H.test("grep_items parses paths, line numbers, text with colons, and finds columns", function()
  local grep_items = require("tether.commands").grep_items
  local items = grep_items("a/b.txt:3:x: y\n/abs/c.txt:10:z\n\n(showing 1-2 of 9)", "/w")
  H.eq({
    { filename = "/w/a/b.txt", lnum = 3, col = 1, text = "x: y" },
    { filename = "/abs/c.txt", lnum = 10, col = 1, text = "z" },
  }, items, "items")
  H.eq(5, grep_items("f:1:abc needle", "/w", "needle")[1].col, "literal")
  H.eq(5, grep_items("f:1:abc fn main()", "/w", "fn ma+in")[1].col, "simple regex")
  H.eq(1, grep_items("f:1:abc", "/w", "(?P<x>b")[1].col, "a regex Vim cannot read")
end)

H.test(":Tether call and :Tether tools show their results in scratch buffers", function()
  vim.cmd("Tether tools")
  H.wait(function()
    return vim.fn.bufnr("tether://tools") ~= -1
  end, "the tools buffer")
  H.truthy(H.text(vim.fn.bufnr("tether://tools")):find("\nedit_file ", 1, true), "edit_file listed")
  vim.cmd([[Tether call read_file {"path": "two.txt"}]])
  H.wait(function()
    return vim.fn.bufnr("tether://call/read_file") ~= -1
  end, "the call buffer")
  H.truthy(H.text(vim.fn.bufnr("tether://call/read_file")):find("nothing", 1, true), "file text shown")
end)

H.finish()
