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

H.test("bridge discovery files are reported, stale ones warned about", function()
  local dir = vim.env.XDG_RUNTIME_DIR .. "/tether"
  local sock = dir .. "/live.sock"
  H.write(sock, "")
  local me = vim.uv.os_getpid()
  H.write(
    ("%s/%d.json"):format(dir, me),
    vim.json.encode({
      pid = me,
      roots = { "/w" },
      socket = sock,
      profile = "standard",
      token = "secret",
      version = "0.1.0",
    })
  )
  H.write(dir .. "/999999999.json", vim.json.encode({ pid = 999999999, roots = {}, socket = dir .. "/gone.sock" }))
  local report = checkhealth()
  H.truthy(report:find(("OK pid %d, roots /w, socket %s"):format(me, sock), 1, true), report)
  H.truthy(report:find("the process is gone", 1, true), report)
  H.truthy(not report:find("secret", 1, true), "the token is shown:\n" .. report)
end)

H.finish()
