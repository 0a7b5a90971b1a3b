-- With diagnostics, editor_context and language_requests off, the plugin announces none of them,
-- sends nothing, and tether's tools that need them say what the editor lacks.
local H = require("helpers")

if not H.bin() then
  H.skip("privacy", "TETHER_BIN is not set")
  H.finish()
end

H.setup({ diagnostics = false, editor_context = false, language_requests = false })
local ws = H.workspace({ ["a.txt"] = "one\n" })

H.test("nothing is announced, and the tools that need it are unsupported", function()
  local bufnr, client = H.open(ws .. "/a.txt")
  H.eq({
    protocolVersion = 3,
    saveDocuments = true,
    diagnostics = false,
    editorContext = false,
    languageRequests = false,
    review = true,
    diskChanges = true,
    diskReloads = true,
  }, client.capabilities.experimental.tether)
  for _, call in ipairs({
    { "diagnostics", vim.empty_dict() },
    { "editor_context", vim.empty_dict() },
    { "hover", { path = "a.txt", line = 1, column = 1 } },
  }) do
    local r = require("tether").call(call[1], call[2], { bufnr = bufnr })
    local text = require("tether").text(r)
    H.truthy(r.isError and text:find('"unsupported"'), call[1] .. ": " .. text)
  end
end)

H.test("no diagnostics are sent", function()
  local bufnr, client = H.open(ws .. "/a.txt")
  local sent = 0
  local notify = client.notify
  client.notify = function(self, method, ...)
    if method == "tether/publishDiagnostics" then
      sent = sent + 1
    end
    return notify(self, method, ...)
  end
  -- A report from a language server (client id 999), as the wrapped handler records it.
  local diagnostics = require("tether.diagnostics")
  local ns = vim.lsp.diagnostic.get_namespace(999, false)
  vim.diagnostic.set(ns, bufnr, { { lnum = 0, col = 0, message = "secret", severity = 1 } })
  diagnostics.stamps[bufnr] = { [999] = vim.lsp.util.buf_versions[bufnr] }
  local params, reported = diagnostics.params(bufnr)
  H.truthy(reported and #params.diagnostics == 1, "the report is there to send")
  diagnostics.send(bufnr)
  vim.wait(200)
  H.eq(0, sent, "notifications sent")
  client.notify = notify
end)

H.finish()
