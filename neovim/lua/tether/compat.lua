-- Whether the server and the plugin can work together, checked once the server has answered
-- `initialize`. Each side announces its protocol version (`experimental.tether.protocolVersion`,
-- see `editors/protocol.md`); the server may also announce the oldest client protocol it accepts
-- (`experimental.tether.minProtocolVersion`). A pair that cannot work is stopped at once, with
-- one message saying which side to update, instead of failing later call by call.

local version = require("tether.version")

local M = {}

---Why a server with these capabilities cannot work with this plugin, or `nil` when it can. A
---server that announces no protocol version speaks version 1, and one that announces no minimum
---accepts every client.
---@param capabilities? table The server's capabilities.
---@param server_info? {name: string, version?: string}
---@return string?
function M.incompatible(capabilities, server_info)
  local tether = vim.tbl_get(capabilities or {}, "experimental", "tether") or {}
  local protocol = tonumber(tether.protocolVersion) or 1
  local min_client = tonumber(tether.minProtocolVersion) or 0
  local server = "the tether server"
  if server_info and server_info.version then
    server = ("the tether server (%s %s)"):format(server_info.name or "tether", server_info.version)
  end
  if min_client > version.protocol then
    return (
      "tether: %s needs a newer plugin: it accepts clients of protocol %d or newer, and this plugin "
      .. "(%s) speaks protocol %d; update the plugin, or run :Tether install for the server that matches it"
    ):format(server, min_client, version.version, version.protocol)
  end
  if protocol < version.min_server_protocol then
    return (
      "tether: %s is too old: it speaks protocol %d, and this plugin (%s) needs protocol %d or newer; "
      .. "run :Tether install (or your plugin manager's build) for the server that matches it"
    ):format(server, protocol, version.version, version.min_server_protocol)
  end
  return nil
end

---`on_init` of the tether client: stops a server this plugin cannot work with, saying why.
---@param client vim.lsp.Client
---@param result lsp.InitializeResult
function M.on_init(client, result)
  local err = M.incompatible(result and result.capabilities, result and result.serverInfo)
  if not err then
    return
  end
  require("tether.log").add("error", err)
  vim.notify(err, vim.log.levels.ERROR, { title = "tether" })
  if vim.fn.has("nvim-0.11") == 1 then
    client:stop(true)
  else
    ---@diagnostic disable-next-line: missing-parameter
    client.stop(true)
  end
end

return M
