-- `:Tether install` and the plugin managers' build step: puts the `tether` release that matches
-- the plugin's version at `stdpath("data")/tether/bin/tether`.
--
-- The release of version V for a target T is `BASE/vV/tether-vV-T.tar.gz` (a folder
-- `tether-vV-T/` holding `tether`), with its SHA-256 in `BASE/vV/tether-vV-T.tar.gz.sha256`, as
-- `.github/workflows/release.yml` makes them. Everything is downloaded into a temporary folder
-- beside the binary, checked (the checksum, then `tether --version`), and only then renamed over
-- the binary, so a failed install leaves the previous one as it was. Without a release for this
-- platform, or when the download fails, `cargo install` builds it when cargo is on PATH.

local version = require("tether.version")

local M = {}

---Where releases are downloaded from when neither the `base_url` option nor `$TETHER_RELEASE_URL`
---says otherwise.
M.default_base_url = "https://github.com/tether-dev/tether/releases/download"

---The name of the crate on crates.io.
M.crate = "tether-bridge"

---The release targets, by `vim.uv.os_uname()` system name and machine.
---@type table<string, table<string, string>>
local targets = {
  Linux = { x86_64 = "x86_64-unknown-linux-musl", aarch64 = "aarch64-unknown-linux-musl" },
  Darwin = { x86_64 = "x86_64-apple-darwin", arm64 = "aarch64-apple-darwin", aarch64 = "aarch64-apple-darwin" },
}

---The release target of a platform, or `nil` when there is no release binary for it.
---@param sysname? string Default: this machine's (`vim.uv.os_uname().sysname`).
---@param machine? string Default: this machine's (`vim.uv.os_uname().machine`).
---@return string?
function M.target(sysname, machine)
  local uname = vim.uv.os_uname()
  sysname, machine = sysname or uname.sysname, machine or uname.machine
  if machine == "amd64" then
    machine = "x86_64"
  end
  return (targets[sysname] or {})[machine]
end

---The folder cargo installs into (`--root`); the binary is in its `bin/`.
---@return string
function M.root()
  return vim.fn.stdpath("data") .. "/tether"
end

---The installed binary's path.
---@return string
function M.path()
  return M.root() .. "/bin/tether"
end

---The clone of tether's repository the plugin sits in, or `nil` when it is elsewhere.
---@return string?
function M.repository()
  local here = debug.getinfo(1, "S").source:sub(2)
  local repo = vim.fn.fnamemodify(here, ":p:h:h:h:h")
  if vim.uv.fs_stat(repo .. "/server/Cargo.toml") then
    return repo
  end
  return nil
end

---Options of `install()`; every field is optional.
---@class tether.InstallOptions
---@field version? string The version to install (default: the plugin's).
---@field base_url? string Where releases are (default: `$TETHER_RELEASE_URL`, else `default_base_url`).
---@field target? string The release target (default: this machine's).
---@field cargo? boolean Build with `cargo install` when there is no release binary (default `true`).
---@field notify? fun(msg: string, level: integer) Progress and outcome (default: `vim.notify`).
---@field force? boolean Install even when the installed binary already prints `tether VERSION`.
---@field async? boolean Wait for commands by yielding the running coroutine (which `install()` must then run in) instead of blocking.

---Runs a command and waits for it, blocking or yielding the coroutine.
---@param cmd string[]
---@param async? boolean
---@return vim.SystemCompleted
local function run(cmd, async)
  local ok, result = pcall(function()
    if not async then
      return vim.system(cmd, { text = true }):wait()
    end
    local co = coroutine.running()
    vim.system(cmd, { text = true }, function(out)
      vim.schedule(function()
        coroutine.resume(co, out)
      end)
    end)
    return coroutine.yield()
  end)
  if not ok then
    -- vim.system raises when the executable cannot be run.
    return { code = -1, signal = 0, stdout = "", stderr = tostring(result) }
  end
  return result
end

---The last line a failed command printed on stderr, else its exit code.
---@param out vim.SystemCompleted
---@return string
local function why(out)
  local lines = vim.split(vim.trim(out.stderr or ""), "\n")
  local last = lines[#lines]
  if last and last ~= "" then
    return last
  end
  return ("exit code %d"):format(out.code)
end

---The SHA-256 of a file, with `sha256sum` or `shasum -a 256`.
---@param file string
---@param async? boolean
---@return string? hash
---@return string? error
local function sha256(file, async)
  local cmd
  if vim.fn.executable("sha256sum") == 1 then
    cmd = { "sha256sum", file }
  elseif vim.fn.executable("shasum") == 1 then
    cmd = { "shasum", "-a", "256", file }
  else
    return nil, "neither sha256sum nor shasum is on PATH, so the download cannot be checked"
  end
  local out = run(cmd, async)
  local hash = out.code == 0 and (out.stdout or ""):match("^(%x+)")
  if not hash then
    return nil, ("%s failed: %s"):format(cmd[1], why(out))
  end
  return hash:lower()
end

---What `tether --version` prints, or `nil` and why not.
---@param bin string
---@param async? boolean
---@return string? version_line
---@return string? error
function M.binary_version(bin, async)
  local out = run({ bin, "--version" }, async)
  if out.code ~= 0 then
    return nil, ("%s --version failed: %s"):format(bin, why(out))
  end
  return vim.trim(out.stdout or "")
end

---A failed download: the release is missing (or unreachable), so cargo may build it instead.
---@class tether.InstallFailure
---@field message string
---@field fallback boolean Whether building with cargo is worth trying.

---Downloads, checks and installs the release binary into `M.path()`.
---@param o tether.InstallOptions
---@param v string
---@param target string
---@param notify fun(msg: string, level: integer)
---@return string? path
---@return tether.InstallFailure? failure
local function download(o, v, target, notify)
  if vim.fn.executable("curl") == 0 then
    return nil, { message = "curl is not on PATH, so the release cannot be downloaded", fallback = true }
  end
  local env = vim.env.TETHER_RELEASE_URL ~= "" and vim.env.TETHER_RELEASE_URL or nil
  local base = (o.base_url or env or M.default_base_url):gsub("/+$", "")
  local name = ("tether-v%s-%s"):format(v, target)
  local url = ("%s/v%s/%s.tar.gz"):format(base, v, name)
  local bin_dir = vim.fs.dirname(M.path())
  vim.fn.mkdir(bin_dir, "p")
  -- In the binary's folder, so that the final rename stays on one file system.
  local tmp, terr = vim.uv.fs_mkdtemp(bin_dir .. "/.install-XXXXXX")
  if not tmp then
    return nil, { message = ("could not make a folder in %s: %s"):format(bin_dir, terr), fallback = false }
  end
  local function fail(message, fallback)
    vim.fn.delete(tmp, "rf")
    return nil, { message = message, fallback = fallback or false }
  end
  notify(("downloading %s"):format(url), vim.log.levels.INFO)
  local archive = tmp .. "/" .. name .. ".tar.gz"
  local out = run({ "curl", "-fsSL", "-o", archive, url }, o.async)
  if out.code ~= 0 then
    return fail(("could not download %s: %s"):format(url, why(out)), true)
  end
  out = run({ "curl", "-fsSL", "-o", archive .. ".sha256", url .. ".sha256" }, o.async)
  if out.code ~= 0 then
    return fail(("could not download %s.sha256: %s"):format(url, why(out)), true)
  end
  local f = assert(io.open(archive .. ".sha256", "rb"))
  local expected = (f:read("*a") or ""):match("^%s*(%x+)")
  f:close()
  if not expected or #expected ~= 64 then
    return fail(("%s.sha256 holds no SHA-256; nothing installed"):format(url))
  end
  expected = expected:lower()
  local actual, err = sha256(archive, o.async)
  if not actual then
    return fail(err .. "; nothing installed")
  end
  if actual ~= expected then
    return fail(("checksum mismatch for %s: expected %s, got %s; nothing installed"):format(url, expected, actual))
  end
  out = run({ "tar", "-xzf", archive, "-C", tmp }, o.async)
  if out.code ~= 0 then
    return fail(("could not unpack %s: %s"):format(url, why(out)))
  end
  local unpacked = tmp .. "/" .. name .. "/tether"
  if not vim.uv.fs_stat(unpacked) then
    return fail(("%s holds no %s/tether; nothing installed"):format(url, name))
  end
  vim.uv.fs_chmod(unpacked, tonumber("755", 8))
  local line, verr = M.binary_version(unpacked, o.async)
  if line ~= "tether " .. v then
    return fail(
      ("the downloaded binary is not tether %s: %s; nothing installed"):format(
        v,
        line and ("it prints %q"):format(line) or verr
      )
    )
  end
  local ok, rerr = vim.uv.fs_rename(unpacked, M.path())
  if not ok then
    return fail(("could not move the binary to %s: %s"):format(M.path(), rerr))
  end
  vim.fn.delete(tmp, "rf")
  return M.path()
end

---The `cargo install` command that builds version `v` into `M.root()`: from the clone the plugin
---sits in, else from crates.io.
---@param v string
---@return string[]
function M.cargo_command(v)
  local repo = M.repository()
  if repo then
    return { "cargo", "install", "--locked", "--path", repo .. "/server", "--root", M.root() }
  end
  return { "cargo", "install", "--locked", M.crate, "--version", v, "--root", M.root() }
end

---Builds with cargo when it is on PATH.
---@param o tether.InstallOptions
---@param v string
---@param reason string Why there is no release binary.
---@param notify fun(msg: string, level: integer)
---@return string? path
---@return string? error
local function build(o, v, reason, notify)
  local cmd = M.cargo_command(v)
  if o.cargo == false or vim.fn.executable("cargo") == 0 then
    return nil,
      (
        "%s, and cargo is not on PATH to build it instead. Install Rust (https://rustup.rs), then run "
        .. ":Tether install again, or build it yourself: `cargo install --locked --path server --root %s` "
        .. "in tether's repository, or `cargo install --locked %s --version %s --root %s`"
      ):format(reason, M.root(), M.crate, v, M.root())
  end
  notify(
    ("%s; building it with `%s` (this takes a few minutes)"):format(reason, table.concat(cmd, " ")),
    vim.log.levels.WARN
  )
  local out = run(cmd, o.async)
  if out.code ~= 0 then
    return nil, ("`%s` failed: %s"):format(table.concat(cmd, " "), why(out))
  end
  local line, err = M.binary_version(M.path(), o.async)
  if not line then
    return nil, err
  end
  if line ~= "tether " .. v then
    notify(("built %s, not tether %s (the clone is at another version)"):format(line, v), vim.log.levels.WARN)
  end
  return M.path()
end

---Installs the `tether` binary matching the plugin's version at `M.path()`: the release binary,
---checksum verified, else a build with cargo. Blocks until done unless `opts.async`. Returns the
---binary's path, or `nil` and a message starting with "tether: ".
---@param opts? tether.InstallOptions
---@return string? path
---@return string? error
function M.install(opts)
  local o = opts or {}
  local notify = o.notify or function(msg, level)
    vim.notify(msg, level, { title = "tether" })
  end
  local function say(msg, level)
    notify("tether: " .. msg, level)
  end
  local v = o.version or version.version
  if not o.force and vim.fn.executable(M.path()) == 1 and M.binary_version(M.path(), o.async) == "tether " .. v then
    say(("tether %s is already installed at %s"):format(v, M.path()), vim.log.levels.INFO)
    return M.path()
  end
  local target = o.target or M.target()
  local path, failure
  if target then
    path, failure = download(o, v, target, say)
  else
    local uname = vim.uv.os_uname()
    failure = {
      message = ("there is no release binary for %s %s"):format(uname.sysname, uname.machine),
      fallback = true,
    }
  end
  if not path and failure and failure.fallback then
    local err
    path, err = build(o, v, failure.message, say)
    if not path then
      failure.message = err
    end
  end
  if not path then
    local msg = "tether: " .. failure.message
    notify(msg, vim.log.levels.ERROR)
    return nil, msg
  end
  say(("installed tether %s at %s"):format(v, path), vim.log.levels.INFO)
  return path
end

---`:Tether install`: installs without blocking the editor, then says how to use the new binary.
function M.command()
  coroutine.wrap(function()
    local path = M.install({ async = true })
    if path and #vim.lsp.get_clients({ name = "tether" }) > 0 then
      local msg = "tether: the running tether clients keep the binary they started with; restart them or Neovim"
      vim.notify(msg, vim.log.levels.INFO, { title = "tether" })
    end
  end)()
end

return M
