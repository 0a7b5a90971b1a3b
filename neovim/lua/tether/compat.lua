-- Whether the server and the plugin can work together, checked once the server has answered
-- `initialize`. Each side announces its protocol version (`experimental.tether.protocolVersion`,
-- see `editors/protocol.md`); the server may also announce the oldest client protocol it accepts
-- (`experimental.tether.minProtocolVersion`, 1 when absent). A pair that cannot work is stopped
-- at once, with one message naming the binary, both versions and protocols and what to update,
-- instead of failing later call by call. A compatible server of another version keeps running;
-- `:checkhealth tether` warns about it.

local version = require("tether.version")

local M = {}

---Why a server with these capabilities cannot work with this plugin, or `nil` when it can. A
---server that announces no protocol version is not tether, or a tether older than versioning; one
---that announces no minimum accepts clients from protocol 1 on.
---@param capabilities? table The server's capabilities.
---@param server_info? {name: string, version?: string}
---@param binary? string The server's executable, as the message names it.
---@return string?
function M.incompatible(capabilities, server_info, binary)
  local tether = vim.tbl_get(capabilities or {}, "experimental", "tether") or {}
  local protocol = tonumber(tether.protocolVersion)
  local min_client = tonumber(tether.minProtocolVersion) or 1
  local server = binary or "the server"
  local plugin = ("this plugin (version %s, protocol %d)"):format(version.version, version.protocol)
  local install = "run :Tether install (or your plugin manager's build) for the binary that matches the plugin"
  if not protocol then
    return ("tether: %s is not tether, or a tether older than 0.1.0: it announces no tether protocol, and %s needs protocol %d or newer; %s"):format(
      server,
      plugin,
      version.min_server_protocol,
      install
    )
  end
  local desc = ("%s (version %s, protocol %d)"):format(
    server,
    server_info and server_info.version or "unknown",
    protocol
  )
  if min_client > version.protocol then
    return ("tether: %s needs a newer plugin: it accepts clients of protocol %d or newer, and %s is older; update the plugin, or %s"):format(
      desc,
      min_client,
      plugin,
      install
    )
  end
  if protocol < version.min_server_protocol then
    return ("tether: %s is too old for %s, which needs protocol %d or newer; %s"):format(
      desc,
      plugin,
      version.min_server_protocol,
      install
    )
  end
  return nil
end

---`on_init` of the tether client: stops a server this plugin cannot work with, saying why.
---@param client vim.lsp.Client
---@param result lsp.InitializeResult
function M.on_init(client, result)
  local cmd = client.config and client.config.cmd
  local binary = type(cmd) == "table" and cmd[1] or nil
  if binary and not binary:find("/", 1, true) then
    binary = vim.fn.exepath(binary) ~= "" and vim.fn.exepath(binary) or binary
  end
  local err = M.incompatible(result and result.capabilities, result and result.serverInfo, binary)
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

---Sends the notification `method` with `params` on `client`, in the call form of the running
---Neovim (a method from 0.11 on, a field function before).
---@param client vim.lsp.Client
---@param method string
---@param params table
function M.notify(client, method, params)
  if vim.fn.has("nvim-0.11") == 1 then
    client:notify(method, params)
  else
    ---@diagnostic disable-next-line: param-type-mismatch
    client.notify(method, params)
  end
end

return M
