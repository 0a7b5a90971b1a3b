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

local function check_binary()
  health.start("tether: binary")
  local config = require("tether.config")
  local path, why = config.find_binary()
  if not path then
    health.error(("tether binary not found: %s"):format(why), {
      "Install it: `cargo install --locked --path server` in tether's repository",
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
  health.ok(("%s (%s)"):format(vim.trim(out.stdout), path))
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

local function check_bridge()
  health.start("tether: bridge")
  local discovery = require("tether.discovery")
  local dir = discovery.dir()
  local found = discovery.list(dir)
  if #found == 0 then
    health.info(("no discovery file in %s: no bridge is running, so `tether mcp` works on the disk alone"):format(dir))
    return
  end
  for _, d in ipairs(found) do
    if d.error then
      health.warn(("%s: %s"):format(d.file, d.error))
    else
      local desc = ("pid %s, roots %s, socket %s, profile %s, version %s"):format(
        tostring(d.pid),
        table.concat(d.roots or {}, ", "),
        tostring(d.socket),
        tostring(d.profile),
        tostring(d.version)
      )
      if d.alive and d.socket_exists then
        health.ok(desc)
      elseif not d.alive then
        health.warn(desc .. ": the process is gone (a stale file)")
      else
        health.warn(desc .. ": the socket does not exist")
      end
    end
  end
end

function M.check()
  check_neovim()
  check_binary()
  check_server()
  check_bridge()
end

return M
