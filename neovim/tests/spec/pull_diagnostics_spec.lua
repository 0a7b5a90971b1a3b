-- `pull_diagnostics`: setup() offers every language server pull diagnostics through dynamic
-- registration and answers `workspace/diagnostic/refresh` where Neovim has no handler for it.
-- The tests run in order in one Neovim: the first sees Neovim as it starts.
local H = require("helpers")

local REFRESH = "workspace/diagnostic/refresh"

local function offered()
  return vim.tbl_get(vim.lsp.config["*"] or {}, "capabilities", "textDocument", "diagnostic", "dynamicRegistration")
end

H.test("pull_diagnostics = false offers nothing and leaves the handlers alone", function()
  local before = vim.lsp.handlers[REFRESH]
  require("tether").setup({ binary = "/opt/tether/bin/tether", pull_diagnostics = false })
  H.eq(nil, offered(), "dynamic registration offered")
  H.eq(before, vim.lsp.handlers[REFRESH], "refresh handler")
end)

H.test("diagnostics = false offers no pulls either", function()
  require("tether").setup({ binary = "/opt/tether/bin/tether", diagnostics = false })
  H.eq(nil, offered(), "dynamic registration offered")
end)

H.test("setup() offers pulls to every server and answers their refresh", function()
  local own = vim.lsp.handlers[REFRESH]
  require("tether").setup({ binary = "/opt/tether/bin/tether" })
  H.eq(true, offered(), "dynamic registration offered")
  local refresh = vim.tbl_get(vim.lsp.config["*"], "capabilities", "workspace", "diagnostics", "refreshSupport")
  H.eq(true, refresh, "refreshSupport")
  H.eq("function", type(vim.lsp.handlers[REFRESH]), "refresh handler")
  if own ~= nil then
    H.eq(own, vim.lsp.handlers[REFRESH], "Neovim's own refresh handler kept")
  end
  -- A refresh from a client that is gone is answered, not an error.
  H.eq(vim.NIL, vim.lsp.handlers[REFRESH](nil, nil, { client_id = 12345, method = REFRESH }), "answer")
end)

H.test("pull_diagnostics must be a boolean", function()
  local ok, err = pcall(require("tether").setup, { pull_diagnostics = "yes" })
  H.eq(false, ok, "a string accepted")
  H.truthy(tostring(err):find("pull_diagnostics", 1, true), tostring(err))
end)
