-- tether's messages to the user: the server's `window/logMessage` notifications and the plugin's
-- own notes, kept in a small ring for `:Tether log`.

local M = {}

---The most recent entries, oldest first.
---@type string[]
M.entries = {}

local LIMIT = 500
local NAMES = { "error", "warn", "info", "log", "debug" }

---Records one line.
---@param level string
---@param message string
function M.add(level, message)
  table.insert(M.entries, ("%s [%s] %s"):format(os.date("%H:%M:%S"), level, message))
  if #M.entries > LIMIT then
    table.remove(M.entries, 1)
  end
end

---`window/logMessage` for the tether client: kept for `:Tether log`, and passed on to Neovim's
---own handler (the LSP log, and errors shown).
---@param err? lsp.ResponseError
---@param params lsp.LogMessageParams
---@param ctx lsp.HandlerContext
function M.handler(err, params, ctx)
  if params and params.message then
    M.add(NAMES[params.type] or "log", params.message)
  end
  local default = vim.lsp.handlers["window/logMessage"]
  if default then
    return default(err, params, ctx)
  end
end

return M
