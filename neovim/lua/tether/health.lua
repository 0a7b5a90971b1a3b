-- `:checkhealth tether`.

local M = {}

local health = vim.health

---The buffer the user was in before `:checkhealth` opened its own.
---@return integer?
local function user_buffer()
  for _, candidate in ipairs({ vim.fn.bufnr("#"), vim.api.nvim_get_current_buf() }) do
    if candidate > 0 and vim.api.nvim_buf_is_valid(candidate) and vim.bo[candidate].buftype == "" then
      return candidate
    end
  end
  return nil
end

---How each source of the binary is named in the report.
---@type table<tether.BinarySource, string>
local SOURCES = {
  option = "the binary option",
  installed = ":Tether install",
  PATH = "PATH",
}

local function check_binary()
  health.start("tether: binary")
  local config = require("tether.config")
  local install = require("tether.install")
  local plugin = require("tether.version").version
  local path, why, source = config.find_binary()
  if not path then
    local repo = install.repository()
    health.error(("tether binary not found: %s"):format(why), {
      ("Run :Tether install: it downloads tether %s into %s (or builds it with cargo)"):format(plugin, install.path()),
      ("Or build it: `cargo install --locked --path %s --root %s`"):format(
        repo and repo .. "/server" or "server",
        install.root()
      ),
      ("Or from crates.io: `cargo install --locked %s --version %s`"):format(install.crate, plugin),
      'Or point the plugin at it: require("tether").setup({ binary = "/path/to/tether" })',
    })
    return nil
  end
  local ok, out = pcall(function()
    return vim.system({ path, "--version" }, { text = true }):wait(5000)
  end)
  if not ok or out.code ~= 0 then
    health.error(("%s --version failed: %s"):format(path, ok and vim.trim(out.stderr or "") or tostring(out)))
    return nil
  end
  local line = vim.trim(out.stdout)
  health.ok(("%s (%s, from %s)"):format(line, path, SOURCES[source]))
  local binary_version = line:match("^tether (%S+)$")
  if binary_version == plugin then
    health.ok(("the binary's version matches the plugin's, %s"):format(plugin))
  else
    local advice = source == "option"
        and {
          ("Point the binary option at tether %s, or remove it to use the one :Tether install puts in %s"):format(
            plugin,
            install.path()
          ),
        }
      or {
        ("Run :Tether install (or your plugin manager's build step) for tether %s"):format(plugin),
        "Or update the plugin to the binary's version",
      }
    health.warn(
      ("the binary is %s, the plugin %s: versions that differ may not understand each other"):format(
        binary_version and ("version " .. binary_version) or ("%q"):format(line),
        plugin
      ),
      advice
    )
  end
  return path
end

local function check_neovim()
  health.start("tether: Neovim")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim 0.11 or newer: vim.lsp.config and vim.lsp.enable")
  elseif vim.fn.has("nvim-0.10") == 1 then
    health.warn("Neovim 0.10: started through vim.lsp.start by setup(); tested on 0.11 only")
  else
    health.error("Neovim 0.10 or newer is required")
  end
end

local function check_server()
  health.start("tether: server")
  local clients = vim.lsp.get_clients({ name = "tether" })
  local bufnr = user_buffer()
  if require("tether").did_setup then
    health.ok('set up with require("tether").setup()')
  elseif vim.fn.has("nvim-0.11") == 1 and vim.lsp.is_enabled("tether") then
    health.ok('enabled with vim.lsp.enable("tether") (buffers without a filetype are left out)')
  end
  if #clients == 0 then
    health.warn("no tether client is running", {
      'Call require("tether").setup(), or vim.lsp.enable("tether") on Neovim 0.11',
      "Then open a file; :Tether log and :LspLog show why a start failed",
    })
    return
  end
  for _, client in ipairs(clients) do
    local here = bufnr and client.attached_buffers[bufnr]
    health.ok(
      ("client %d running, root %s, %d buffer(s)%s"):format(
        client.id,
        client.root_dir or "(none)",
        vim.tbl_count(client.attached_buffers),
        here and ", including this one" or ""
      )
    )
    local enc = client.offset_encoding
    if enc == "utf-8" then
      health.ok("position encoding: utf-8")
    else
      health.info(("position encoding: %s (utf-8 is cheaper; tether picks it when offered)"):format(enc))
    end
    local info = client.server_info or {}
    local plugin = require("tether.version").version
    if info.version and info.version ~= plugin then
      health.warn(
        ("client %d runs tether %s, the plugin is %s: versions that differ may not understand each other"):format(
          client.id,
          info.version,
          plugin
        ),
        {
          ("Run :Tether install (or your plugin manager's build step) for tether %s, then restart Neovim"):format(
            plugin
          ),
        }
      )
    end
    local caps = client.server_capabilities or {}
    local proto = vim.tbl_get(caps, "experimental", "tether", "protocolVersion")
    if proto then
      health.ok(("tether protocol version %d"):format(proto))
    end
  end
  if bufnr and not clients[1].attached_buffers[bufnr] then
    local name = vim.api.nvim_buf_get_name(bufnr)
    health.info(("not attached to %s"):format(name ~= "" and vim.fn.fnamemodify(name, ":~:.") or "this buffer"))
  end
end

---What `tether status --json` prints: the live instances and the discovery files passed over.
---@class tether.Status
---@field runtime_dir string
---@field instances {pid: integer, roots: string[], socket: string, socket_exists?: boolean, profile: string, version: string, ide?: table<string, tether.IdeState>}[]
---@field ignored? {file: string, reason: string}[]

---Whether an instance serves an assistant CLI's IDE protocol (`tether status --json`'s `ide`).
---@class tether.IdeState
---@field state "serving"|"standing aside"|"not serving"
---@field file? string
---@field server? string
---@field pid? integer

---Runs `{path} status --json`; the bridge's discovery files are read by tether itself, the one
---place that knows their directory and format.
---@param path string
---@return tether.Status? status
---@return string? error
local function bridge_status(path)
  local ok, out = pcall(function()
    return vim.system({ path, "status", "--json" }, { text = true }):wait(5000)
  end)
  if not ok then
    return nil, ("could not run %s status --json: %s"):format(path, tostring(out))
  end
  if out.code == 124 and out.signal ~= 0 then
    return nil, ("%s status --json did not finish within 5 s"):format(path)
  end
  if out.code ~= 0 then
    return nil, ("%s status --json failed (exit %d): %s"):format(path, out.code, vim.trim(out.stderr or ""))
  end
  local decoded, status = pcall(vim.json.decode, out.stdout or "", { luanil = { object = true, array = true } })
  if not decoded then
    local first = vim.split(vim.trim(out.stdout or ""), "\n")[1]
    return nil,
      ("%s status --json printed something that is not JSON: %s"):format(path, first ~= "" and first or "(nothing)")
  end
  if type(status) ~= "table" or type(status.instances) ~= "table" then
    return nil, ("%s status --json printed JSON without an `instances` list"):format(path)
  end
  return status
end

local IDE_NAMES = { ["claude-code"] = "Claude Code", ["gemini-cli"] = "Gemini CLI" }

---Reports, per assistant CLI, whether this tether lsp serves its IDE protocol or stands aside for
---another server of the project (an editor's own integration, or another tether lsp).
---@param ide? table<string, tether.IdeState>
local function check_ide(ide)
  for _, key in ipairs({ "claude-code", "gemini-cli" }) do
    local s = (ide or {})[key]
    local cli = IDE_NAMES[key]
    if s and s.state == "serving" then
      health.ok(("%s's IDE protocol: served (%s)"):format(cli, tostring(s.file)))
    elseif s and s.state == "standing aside" then
      health.info(
        ("%s's IDE protocol: standing aside, %s (pid %s) serves this project (%s)"):format(
          cli,
          tostring(s.server),
          tostring(s.pid),
          tostring(s.file)
        )
      )
    elseif s then
      health.info(("%s's IDE protocol: not served (no workspace folder yet, or `--no-ide`)"):format(cli))
    end
  end
end

---@param path? string The binary `check_binary` found and ran, if any.
local function check_bridge(path)
  health.start("tether: bridge")
  if not path then
    health.warn("not checked: the tether binary could not be run (see above)")
    return
  end
  local status, err = bridge_status(path)
  if not status then
    health.error(err, { "Run it in a shell to see more; `tether status` explains the bridge in text" })
    return
  end
  if #status.instances == 0 then
    health.info(
      ("no tether lsp is running (runtime directory %s): `tether mcp` works on the disk alone"):format(
        tostring(status.runtime_dir)
      )
    )
  end
  for _, i in ipairs(status.instances) do
    local desc = ("pid %s, roots %s, socket %s, profile %s, version %s"):format(
      tostring(i.pid),
      table.concat(i.roots or {}, ", "),
      tostring(i.socket),
      tostring(i.profile),
      tostring(i.version)
    )
    if i.socket_exists == false then
      health.warn(desc .. ": the socket does not exist, so `tether mcp` cannot attach to it")
    else
      health.ok(desc)
    end
    check_ide(i.ide)
  end
  for _, ignored in ipairs(status.ignored or {}) do
    health.warn(("%s: %s"):format(tostring(ignored.file), tostring(ignored.reason)))
  end
end

function M.check()
  check_neovim()
  local path = check_binary()
  check_server()
  check_bridge(path)
end

return M
