-- The plugin loads cleanly, lazily, and checks its options.
local H = require("helpers")

H.test("plugin/tether.lua defines :Tether and loads no module", function()
  H.eq(2, vim.fn.exists(":Tether"), ":Tether exists")
  H.eq(nil, package.loaded["tether"], "tether module loaded at startup")
  H.eq("", vim.v.errmsg, "errors at startup")
end)

H.test("every module loads with no error", function()
  for _, mod in ipairs({
    "tether",
    "tether.config",
    "tether.apply_edit",
    "tether.save_documents",
    "tether.mark",
    "tether.log",
    "tether.commands",
    "tether.health",
    "tether.position",
    "tether.merge",
    "tether.await",
    "tether.diagnostics",
    "tether.editor_context",
    "tether.language_request",
  }) do
    local ok, err = pcall(require, mod)
    H.truthy(ok, ("require(%q) failed: %s"):format(mod, tostring(err)))
  end
  H.eq("", vim.v.errmsg, "errors while loading")
end)

H.test("lsp/tether.lua is data a vim.lsp.Config accepts", function()
  local cfg = dofile(vim.api.nvim_get_runtime_file("lsp/tether.lua", false)[1])
  H.eq({ vim.fn.exepath("tether") ~= "" and vim.fn.exepath("tether") or "tether", "lsp" }, cfg.cmd, "cmd")
  H.eq(nil, cfg.filetypes, "filetypes (every file buffer)")
  H.eq(true, cfg.capabilities.experimental.tether.saveDocuments, "saveDocuments capability")
  H.eq("function", type(cfg.handlers["workspace/applyEdit"]), "applyEdit handler")
  H.eq("function", type(cfg.handlers["tether/saveDocuments"]), "saveDocuments handler")
  local resolved = vim.lsp.config.tether
  H.eq(cfg.cmd, resolved.cmd, "vim.lsp.config.tether.cmd")
end)

H.test("lsp/tether.lua runs the binary :Tether install put in place, before PATH", function()
  local installed = require("tether.install").path()
  vim.fn.mkdir(vim.fs.dirname(installed), "p")
  vim.fn.writefile({ "#!/bin/sh", "echo tether 0.0.0" }, installed)
  vim.fn.setfperm(installed, "rwxr-xr-x")
  local cfg = dofile(vim.api.nvim_get_runtime_file("lsp/tether.lua", false)[1])
  os.remove(installed)
  H.eq({ installed, "lsp" }, cfg.cmd, "cmd")
end)

H.test("setup() rejects a bad option with a message naming it", function()
  local ok, err = pcall(require("tether").setup, { save = "always" })
  H.eq(false, ok, "setup succeeded")
  H.truthy(tostring(err):find("save", 1, true), "message names the option: " .. tostring(err))
  ok, err = pcall(require("tether").setup, { colour = "red" })
  H.eq(false, ok, "unknown option accepted")
  H.truthy(tostring(err):find("colour", 1, true), "message names the unknown option: " .. tostring(err))
end)

H.test("setup() builds the command from the options", function()
  require("tether").setup({
    binary = "/opt/tether/bin/tether",
    profile = "standard",
    read_only = true,
    log_level = "debug",
    save = "never",
  })
  local cfg = vim.lsp.config.tether
  H.eq(
    { "/opt/tether/bin/tether", "lsp", "--profile", "standard", "--read-only", "--log-level", "debug" },
    cfg.cmd,
    "cmd"
  )
  H.eq({ save = "never" }, cfg.init_options, "init_options")
  H.eq(true, vim.lsp.is_enabled("tether"), "enabled")
end)

H.test("setup() passes the deny list to the server", function()
  require("tether").setup({ binary = "/opt/tether/bin/tether", deny = { ".env", "secrets/**" }, deny_secrets = true })
  local cfg = vim.lsp.config.tether
  H.eq({ patterns = { ".env", "secrets/**" }, secrets = true }, cfg.init_options.deny, "deny")
  local ok, err = pcall(require("tether").setup, { deny = ".env" })
  H.eq(false, ok, "a string is not a list")
  H.eq(true, tostring(err):find("deny", 1, true) ~= nil, tostring(err))
end)

H.test("a second setup() replaces the first one's options", function()
  require("tether").setup({ binary = "/opt/tether/bin/tether", filetypes = { "lua" }, read_only = true })
  require("tether").setup({ binary = "/opt/tether/bin/tether" })
  local cfg = vim.lsp.config.tether
  H.eq({ "/opt/tether/bin/tether", "lsp" }, cfg.cmd, "cmd")
  H.eq(nil, cfg.filetypes, "filetypes")
  H.eq("function", type(cfg.handlers["workspace/applyEdit"]), "handlers from lsp/tether.lua kept")
end)

H.test("mcp_server() gives the stdio spec for AI plugins", function()
  require("tether").setup({ binary = "/opt/tether/bin/tether" })
  local spec = require("tether").mcp_server({ root = "/w" })
  H.eq({ command = "/opt/tether/bin/tether", args = { "mcp", "--root", "/w" }, cwd = "/w" }, spec, "spec")
end)

H.finish()
