-- The client starts beside file buffers and speaks utf-8.
local H = require("helpers")

if not H.bin() then
  H.skip("attach", "TETHER_BIN is not set")
  H.finish()
end

H.setup()
local ws = H.workspace({ ["src/main.lua"] = "print('hi')\n", ["notes"] = "no filetype here\n" })

H.test("the client attaches to a file buffer, rooted at the workspace, in utf-8", function()
  local _, client = H.open(ws .. "/src/main.lua")
  H.eq(ws, client.root_dir, "root")
  H.eq("utf-8", client.offset_encoding, "position encoding")
  H.eq(3, vim.tbl_get(client.server_capabilities, "experimental", "tether", "protocolVersion"), "protocol version")
  H.eq({
    protocolVersion = 3,
    saveDocuments = true,
    diagnostics = true,
    editorContext = true,
    languageRequests = true,
    review = true,
    diskChanges = true,
    diskReloads = true,
  }, client.capabilities.experimental.tether, "capabilities announced")
  H.eq({ save = "clean" }, client.config.init_options, "init_options")
end)

H.test("a buffer without a filetype gets the same client", function()
  local bufnr, client = H.open(ws .. "/notes")
  H.eq("", vim.bo[bufnr].filetype, "filetype")
  H.eq(1, #vim.lsp.get_clients({ name = "tether" }), "one client for the root")
  H.eq(vim.lsp.get_clients({ name = "tether" })[1].id, client.id, "same client")
end)

H.test("the server holds the buffer's unsaved text", function()
  local bufnr, client = H.open(ws .. "/src/main.lua")
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { "print('unsaved')" })
  H.wait(function()
    local doc = H.server_doc(client, bufnr)
    return doc and doc.text == "print('unsaved')\n"
  end, "the server to see the change")
  H.eq(true, H.server_doc(client, bufnr).dirty, "dirty")
end)

H.test("scratch and help buffers get no client", function()
  vim.cmd("enew")
  vim.bo.buftype = "nofile"
  vim.bo.filetype = "lua"
  vim.wait(200)
  H.eq(0, #vim.lsp.get_clients({ bufnr = 0 }), "clients on a scratch buffer")
end)

H.finish()
