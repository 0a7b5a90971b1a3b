-- The protocol versions: the client announces its own, and a server whose range leaves the
-- plugin out is stopped with one message.
local H = require("helpers")
local version = require("tether.version")

H.test("the client announces the plugin's protocol version", function()
  H.eq(3, version.protocol)
  local base = require("tether.config").base()
  H.eq(version.protocol, base.capabilities.experimental.tether.protocolVersion, "lsp/tether.lua")
  require("tether").setup({ binary = "/nonexistent/tether" })
  local config = require("tether.config").client_config(require("tether.config").options, 0)
  H.eq(version.protocol, config.capabilities.experimental.tether.protocolVersion, "setup()")
end)

H.test("the compatibility rules", function()
  local compat = require("tether.compat")
  ---@param protocol? integer
  ---@param min? integer
  local function check(protocol, min)
    return compat.incompatible({ experimental = { tether = { protocolVersion = protocol, minProtocolVersion = min } } })
  end
  H.eq(nil, check(3, nil), "the same protocol")
  H.eq(nil, check(7, 2), "a newer server that still accepts protocol 3")
  H.eq(nil, check(1, nil), "the oldest server the plugin accepts, with no minimum")
  H.truthy(check(nil, nil), "a server announcing no protocol is not one")
  H.truthy(compat.incompatible(nil), "no capabilities")
  H.truthy(check(9, 4), "a server that needs a newer client")
  H.truthy(check(0, nil), "a server older than the plugin's minimum")
end)

---A stand-in `tether` in Python: `--version` prints `tether {server_version}`, `lsp` answers
---`initialize` with these protocol versions, then `shutdown` and `exit`.
---@param server_version string
---@param protocol? integer
---@param min? integer
---@return string
local function fake_server(server_version, protocol, min)
  local tether = protocol and vim.json.encode({ protocolVersion = protocol, minProtocolVersion = min }) or "{}"
  local path = vim.fn.tempname() .. "/tether"
  H.write(
    path,
    ([[#!/usr/bin/env python3
import json, sys
if sys.argv[1:2] == ["--version"]:
    print("tether %s")
    sys.exit(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
def send(msg):
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %%d\r\n\r\n" %% len(body) + body)
    out.flush()
while True:
    length = 0
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    msg = json.loads(inp.read(length))
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "capabilities": {"experimental": {"tether": json.loads(%q)}},
            "serverInfo": {"name": "tether", "version": "%s"}}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in msg and method:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
]]):format(server_version, tether, server_version)
  )
  vim.uv.fs_chmod(path, tonumber("755", 8))
  return path
end

---Collects the ERROR messages sent through vim.notify until the returned function restores it.
---@return string[] errors
---@return fun() restore
local function capture_errors()
  local errors = {} ---@type string[]
  local notify = vim.notify
  vim.notify = function(msg, level) ---@diagnostic disable-line: duplicate-set-field
    if level == vim.log.levels.ERROR then
      table.insert(errors, msg)
    end
  end
  return errors, function()
    vim.notify = notify
  end
end

---Opens a file with `binary` as the server and returns the error messages shown once no tether
---client runs any more.
---@param binary string
---@return string[]
local function refused(binary)
  local errors, restore = capture_errors()
  local ok, err = pcall(function()
    require("tether").setup({ binary = binary })
    local ws = H.workspace({ ["a.txt"] = "a\n" })
    vim.cmd.edit(vim.fn.fnameescape(ws .. "/a.txt"))
    H.wait(function()
      return #errors > 0
    end, "an error message")
    H.wait(function()
      return #vim.lsp.get_clients({ name = "tether" }) == 0
    end, "no tether client running")
    vim.cmd("bwipeout!")
  end)
  restore()
  if not ok then
    error(err, 0)
  end
  return errors
end

if vim.fn.executable("python3") == 0 then
  H.skip("a server out of range is stopped", "no python3")
  H.finish()
end

local install = "run :Tether install (or your plugin manager's build) for the binary that matches the plugin"
local plugin = ("this plugin (version %s, protocol 3)"):format(version.version)

H.test("a server that needs a newer client is stopped, with one message", function()
  local bin = fake_server("9.0.0", 9, 9)
  local errors = refused(bin)
  H.eq({
    ("tether: %s (version 9.0.0, protocol 9) needs a newer plugin: it accepts clients of protocol 9 or newer, "):format(
      bin
    ) .. ("and %s is older; update the plugin, or %s"):format(plugin, install),
  }, errors)
  H.eq({}, vim.api.nvim_get_proc_children(vim.uv.os_getpid()), "processes left running")
end)

H.test("a server older than the plugin's minimum is stopped, with one message", function()
  local bin = fake_server("0.0.1", 0)
  local errors = refused(bin)
  H.eq({
    ("tether: %s (version 0.0.1, protocol 0) is too old for %s, which needs protocol 1 or newer; %s"):format(
      bin,
      plugin,
      install
    ),
  }, errors)
end)

H.test("a server announcing no tether protocol is stopped, with one message", function()
  local bin = fake_server("0.0.1")
  local errors = refused(bin)
  H.eq({
    ("tether: %s is not tether, or a tether older than 0.1.0: it announces no tether protocol, "):format(bin)
      .. ("and %s needs protocol 1 or newer; %s"):format(plugin, install),
  }, errors)
end)

H.test("a compatible server of another version keeps running; checkhealth warns", function()
  local errors, restore = capture_errors()
  require("tether").setup({ binary = fake_server("0.0.9", 3, 1) })
  local ws = H.workspace({ ["a.txt"] = "a\n" })
  local _, client = H.open(ws .. "/a.txt")
  vim.wait(200)
  restore()
  H.eq({}, errors, "errors")
  H.truthy(not client:is_stopped(), "the client was stopped")
  vim.cmd("checkhealth tether")
  local report = H.text(0)
  vim.cmd("bwipeout!")
  H.truthy(
    report:find(
      ("WARNING client %d runs tether 0.0.9, the plugin is %s: versions that differ"):format(client.id, version.version),
      1,
      true
    ),
    report
  )
end)

H.finish()
