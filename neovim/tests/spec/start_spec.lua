-- The route Neovim 0.10 takes: require("tether").start() with vim.lsp.start, no vim.lsp.enable.
local H = require("helpers")

if not H.bin() then
  H.skip("start", "TETHER_BIN is not set")
  H.finish()
end

local config = require("tether.config")
config.options = config.resolve({ binary = H.bin() })
local ws = H.workspace({ ["m.py"] = "a = 1\n" })

H.test("start() attaches a client built from lsp/tether.lua, and tool edits land", function()
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/m.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  H.eq(false, vim.lsp.is_enabled("tether"), "enabled through vim.lsp.enable")
  local id = require("tether").start(bufnr)
  H.truthy(id, "start() returned no client")
  local client ---@type vim.lsp.Client?
  H.wait(function()
    client = vim.lsp.get_client_by_id(id)
    return client and client.initialized
  end, "the client to initialize")
  assert(client)
  H.eq(ws, client.root_dir, "root")
  H.eq({ { uri = vim.uri_from_fname(ws), name = ws } }, client.workspace_folders, "workspace folders")
  H.eq(true, client.capabilities.experimental.tether.saveDocuments, "saveDocuments announced")
  H.truthy(client.capabilities.workspace.workspaceEdit, "Neovim's own capabilities kept")
  local result = require("tether").call("edit_file", { path = "m.py", old_string = "a = 1", new_string = "a = 2" })
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.eq("a = 2", H.text(bufnr), "buffer")
  H.eq("a = 2\n", H.read(ws .. "/m.py"), "saved")
end)

H.test("start() leaves buffers that are not files alone", function()
  vim.cmd("enew")
  H.eq(nil, require("tether").start(vim.api.nvim_get_current_buf()), "unnamed buffer")
  vim.cmd("help")
  H.eq(nil, require("tether").start(vim.api.nvim_get_current_buf()), "help buffer")
end)

H.finish()
