-- :checkhealth tether with and without the binary.
local H = require("helpers")

---Runs :checkhealth tether and returns its report.
---@return string
local function checkhealth()
  vim.cmd("checkhealth tether")
  local text = H.text(0)
  vim.cmd("bwipeout!")
  return text
end

H.test("without the binary: a clear error", function()
  require("tether").setup({ binary = "/nonexistent/bin/tether" })
  local report = checkhealth()
  H.truthy(
    report:find("ERROR tether binary not found: /nonexistent/bin/tether is not an executable file", 1, true),
    report
  )
  H.truthy(report:find("setup({ binary =", 1, true), "advice in:\n" .. report)
  H.truthy(report:find("no tether client is running", 1, true), report)
  require("tether").setup({ binary = "surely-not-a-tether-binary" })
  report = checkhealth()
  H.truthy(report:find("surely-not-a-tether-binary is not on PATH", 1, true), report)
end)

---A stand-in `tether` that answers `--version` and runs `body` for anything else.
---@param body string
---@return string
local function fake_binary(body)
  local path = vim.fn.tempname() .. "/tether"
  H.write(path, '#!/bin/sh\nif [ "$1" = --version ]; then echo "tether 0.0.0"; exit 0; fi\n' .. body .. "\n")
  vim.uv.fs_chmod(path, tonumber("755", 8))
  return path
end

H.test("a binary whose status fails or is not JSON: a clear error", function()
  local bin = fake_binary("echo 'no such runtime directory' >&2; exit 3")
  require("tether").setup({ binary = bin })
  local report = checkhealth()
  H.truthy(
    report:find(("ERROR %s status --json failed (exit 3): no such runtime directory"):format(bin), 1, true),
    report
  )
  bin = fake_binary("echo 'hello, world'")
  require("tether").setup({ binary = bin })
  report = checkhealth()
  H.truthy(
    report:find(("ERROR %s status --json printed something that is not JSON: hello, world"):format(bin), 1, true),
    report
  )
  bin = fake_binary("echo '[1, 2]'")
  require("tether").setup({ binary = bin })
  report = checkhealth()
  H.truthy(
    report:find(("ERROR %s status --json printed JSON without an `instances` list"):format(bin), 1, true),
    report
  )
  -- Without a binary there is nothing to ask.
  require("tether").setup({ binary = "/nonexistent/bin/tether" })
  report = checkhealth()
  H.truthy(report:find("WARNING not checked: the tether binary could not be run", 1, true), report)
end)

H.test("the binary's source and version: ok when it matches the plugin, a warning when not", function()
  local version = require("tether.version").version
  local install = require("tether.install")
  local path = vim.fn.tempname() .. "/tether"
  H.write(path, ('#!/bin/sh\nif [ "$1" = --version ]; then echo "tether %s"; exit 0; fi\necho "{}"\n'):format(version))
  vim.uv.fs_chmod(path, tonumber("755", 8))
  require("tether").setup({ binary = path })
  local report = checkhealth()
  H.truthy(report:find(("OK tether %s (%s, from the binary option)"):format(version, path), 1, true), report)
  H.truthy(report:find(("OK the binary's version matches the plugin's, %s"):format(version), 1, true), report)
  H.truthy(not report:find("versions that differ", 1, true), report)
  -- An older binary, installed by :Tether install.
  local old = fake_binary("echo '{}'")
  vim.fn.mkdir(vim.fs.dirname(install.path()), "p")
  vim.uv.fs_copyfile(old, install.path())
  vim.uv.fs_chmod(install.path(), tonumber("755", 8))
  require("tether").setup({})
  report = checkhealth()
  H.truthy(report:find(("OK tether 0.0.0 (%s, from :Tether install)"):format(install.path()), 1, true), report)
  H.truthy(
    report:find(
      ("WARNING the binary is version 0.0.0, the plugin %s: versions that differ may not understand each other"):format(
        version
      ),
      1,
      true
    ),
    report
  )
  H.truthy(
    report:find("Run :Tether install (or your plugin manager's build step) for tether " .. version, 1, true),
    report
  )
  -- Nothing installed and nothing on PATH: :Tether install and cargo are the advice.
  vim.fn.delete(install.path())
  local saved = vim.env.PATH
  vim.env.PATH = vim.fn.tempname()
  report = checkhealth()
  vim.env.PATH = saved
  H.truthy(
    report:find(
      ("ERROR tether binary not found: tether is not installed (%s) and not on PATH"):format(install.path()),
      1,
      true
    ),
    report
  )
  H.truthy(report:find("Run :Tether install: it downloads tether " .. version, 1, true), report)
  H.truthy(report:find("`cargo install --locked --path ", 1, true), report)
  H.truthy(report:find("`cargo install --locked tether-bridge --version " .. version .. "`", 1, true), report)
end)

if not H.bin() then
  H.skip("with the binary", "TETHER_BIN is not set")
  H.finish()
end

H.test("with the binary and a running client: all OK", function()
  H.setup()
  local ws = H.workspace({ ["a.txt"] = "a\n" })
  H.open(ws .. "/a.txt")
  local report = checkhealth()
  local version = vim.trim(vim.system({ H.bin(), "--version" }, { text = true }):wait().stdout)
  H.truthy(not report:find("ERROR", 1, true), "no error in:\n" .. report)
  H.truthy(not report:find("WARNING", 1, true), "no warning in:\n" .. report)
  H.truthy(report:find("OK " .. version, 1, true), "binary version in:\n" .. report)
  H.truthy(report:find("root " .. ws, 1, true), "root in:\n" .. report)
  H.truthy(report:find("including this one", 1, true), "attached to this buffer in:\n" .. report)
  H.truthy(report:find("OK position encoding: utf-8", 1, true), report)
  H.truthy(report:find('OK set up with require("tether").setup()', 1, true), report)
  -- The running tether lsp serves the bridge: its discovery file names this workspace.
  H.truthy(report:find("roots " .. ws .. ", socket " .. vim.env.XDG_RUNTIME_DIR .. "/tether/", 1, true), report)
end)

H.test("the running lsp is reported, files tether passed over warned about with why", function()
  local dir = vim.env.XDG_RUNTIME_DIR .. "/tether"
  ---@param name string
  ---@param text string
  ---@param mode string
  ---@return string
  local function file(name, text, mode)
    local path = dir .. "/" .. name
    H.write(path, text)
    vim.uv.fs_chmod(path, tonumber(mode, 8))
    return path
  end
  -- The file of a tether lsp killed with SIGKILL: its process is gone (no pid is that high).
  local dead = 999999999
  local stale = file(
    dead .. ".json",
    vim.json.encode({
      pid = dead,
      roots = { "/w" },
      socket = ("%s/%d.sock"):format(dir, dead),
      profile = "standard",
      token = "secret",
      version = "0.1.0",
      started = 1,
    }),
    "600"
  )
  local stale_socket = file(dead .. ".sock", "", "600")
  local open = file("12.json", "{}", "644")
  local garbled = file("13.json", "{", "600")
  local client = vim.lsp.get_clients({ name = "tether" })[1]
  H.truthy(client, "the lsp of the test before still runs")
  local report = checkhealth()
  H.truthy(not report:find("ERROR", 1, true), "no error in:\n" .. report)
  local lsp = vim.api.nvim_get_proc_children(vim.uv.os_getpid())
  H.eq(1, #lsp, "processes started by Neovim")
  H.truthy(
    report:find(("OK pid %d, roots %s, socket %s/%d.sock"):format(lsp[1], client.root_dir, dir, lsp[1]), 1, true),
    "the live lsp in:\n" .. report
  )
  H.truthy(
    report:find(("WARNING %s: the process is gone (a stale file); removed"):format(stale), 1, true),
    "the stale file in:\n" .. report
  )
  H.eq(nil, vim.uv.fs_stat(stale), "the stale file is still there")
  H.eq(nil, vim.uv.fs_stat(stale_socket), "the stale socket is still there")
  H.truthy(
    report:find(("WARNING %s: not a private file: mode 644; it must be 0600"):format(open), 1, true),
    "the file open to others in:\n" .. report
  )
  H.truthy(report:find(("WARNING %s: not a discovery file: "):format(garbled), 1, true), report)
  H.truthy(not report:find("secret", 1, true), "the token is shown:\n" .. report)
end)

H.finish()
