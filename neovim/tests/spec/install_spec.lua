-- :Tether install and the build step, against releases served from a local folder.
local H = require("helpers")
local install = require("tether.install")
local version = require("tether.version").version

local plugin = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file("lua/tether/install.lua", false)[1], ":p:h:h:h")

H.test("the platform's release target", function()
  H.eq("x86_64-unknown-linux-musl", install.target("Linux", "x86_64"))
  H.eq("aarch64-unknown-linux-musl", install.target("Linux", "aarch64"))
  H.eq("x86_64-apple-darwin", install.target("Darwin", "x86_64"))
  H.eq("aarch64-apple-darwin", install.target("Darwin", "arm64"))
  H.eq(nil, install.target("Linux", "riscv64"), "Linux riscv64")
  H.eq(nil, install.target("Windows_NT", "x86_64"), "Windows")
end)

H.test("the binary goes to stdpath('data'); cargo builds from the clone the plugin sits in", function()
  H.eq(vim.env.XDG_DATA_HOME .. "/nvim/tether/bin/tether", install.path())
  local repo = vim.fn.fnamemodify(plugin, ":h")
  H.eq(repo, install.repository())
  H.eq(
    { "cargo", "install", "--locked", "--path", repo .. "/server", "--root", vim.env.XDG_DATA_HOME .. "/nvim/tether" },
    install.cargo_command(version)
  )
end)

if not H.bin() then
  H.skip("installs from a release", "TETHER_BIN is not set")
  H.finish()
end

local target = assert(install.target(), "no release target for this machine")

---Runs a command, failing the test when it fails.
---@param cmd string[]
---@return string stdout
local function sh(cmd)
  local out = vim.system(cmd, { text = true }):wait()
  assert(out.code == 0, table.concat(cmd, " ") .. ": " .. tostring(out.stderr))
  return out.stdout
end

---@param file string
---@return string
local function sha256(file)
  return sh({ "sha256sum", file }):match("^(%x+)")
end

-- The releases, one folder (a base URL) per case.
local tree = vim.fn.tempname()
local name = ("tether-v%s-%s"):format(version, target)

---Makes `tree/{case}/v{version}/{name}.tar.gz` holding `bin` as `{name}/tether`, and its checksum
---file with `sum` (default: the archive's).
---@param case string
---@param bin string
---@param sum? string
---@return string archive
local function release(case, bin, sum)
  local dir = ("%s/%s/v%s"):format(tree, case, version)
  vim.fn.mkdir(dir .. "/" .. name, "p")
  sh({ "cp", bin, dir .. "/" .. name .. "/tether" })
  local archive = dir .. "/" .. name .. ".tar.gz"
  sh({ "tar", "-czf", archive, "-C", dir, name })
  H.write(archive .. ".sha256", ("%s  %s.tar.gz\n"):format(sum or sha256(archive), name))
  return archive
end

---A stand-in `tether` printing `line` for `--version`.
---@param line string
---@return string
local function script(line)
  local path = vim.fn.tempname()
  H.write(path, ("#!/bin/sh\necho '%s'\n"):format(line))
  vim.uv.fs_chmod(path, tonumber("755", 8))
  return path
end

release("good", H.bin())
local wrong_sum = ("0"):rep(64)
local badsum = release("badsum", H.bin(), wrong_sum)
release("otherversion", script("tether 0.0.9"))
vim.fn.mkdir(tree .. "/empty", "p")

-- The file server, on a port the system picked free.
local tcp = assert(vim.uv.new_tcp())
tcp:bind("127.0.0.1", 0)
local port = tcp:getsockname().port
tcp:close()
local server =
  vim.system({ "python3", "-m", "http.server", "--bind", "127.0.0.1", tostring(port), "--directory", tree })
local base = ("http://127.0.0.1:%d"):format(port)
H.wait(function()
  return vim.system({ "curl", "-fsS", "-o", "/dev/null", base .. "/" }):wait().code == 0
end, "the file server on " .. base)

---Runs `fn` with a PATH holding only what the install uses: no cargo, so no build can start.
---@param fn fun()
local function without_cargo(fn)
  local bin = vim.fn.tempname()
  vim.fn.mkdir(bin, "p")
  for _, tool in ipairs({ "curl", "sha256sum", "tar", "gzip" }) do
    vim.uv.fs_symlink(vim.fn.exepath(tool), bin .. "/" .. tool)
  end
  local saved = vim.env.PATH
  vim.env.PATH = bin
  local ok, err = pcall(fn)
  vim.env.PATH = saved
  if not ok then
    error(err, 0)
  end
end

---Installs with `opts`, collecting the messages.
---@param opts tether.InstallOptions
---@return string? path
---@return string? error
---@return string messages
local function run_install(opts)
  local messages = {} ---@type string[]
  opts.notify = function(msg)
    table.insert(messages, msg)
  end
  local path, err = install.install(opts)
  return path, err, table.concat(messages, "\n")
end

---The temporary folders an install left beside the binary.
---@return string[]
local function leftovers()
  return vim.fn.glob(vim.fs.dirname(install.path()) .. "/.install-*", true, true)
end

H.test("a good release installs, and tether --version runs from the installed path", function()
  vim.env.TETHER_RELEASE_URL = base .. "/good"
  local path, err, messages = run_install({})
  vim.env.TETHER_RELEASE_URL = nil
  H.eq(nil, err, "error")
  H.eq(install.path(), path)
  H.eq("tether " .. version .. "\n", sh({ install.path(), "--version" }))
  H.eq(sha256(H.bin()), sha256(install.path()), "the installed binary")
  H.truthy(
    messages:find(("downloading %s/good/v%s/%s.tar.gz"):format(base, version, name), 1, true),
    "the URL in:\n" .. messages
  )
  H.truthy(messages:find("tether: installed tether " .. version .. " at " .. install.path(), 1, true), messages)
  H.eq({}, leftovers(), "temporary folders")
  -- With the default `binary`, the plugin runs it.
  require("tether").setup({})
  local found, _, source = require("tether.config").find_binary()
  H.eq({ install.path(), "installed" }, { found, source })
  -- An explicit binary still wins.
  require("tether").setup({ binary = H.bin() })
  found, _, source = require("tether.config").find_binary()
  H.eq({ vim.fn.exepath(H.bin()), "option" }, { found, source })
  -- Installed and of the plugin's version: nothing to download.
  path, err, messages = run_install({ base_url = base .. "/empty" })
  H.eq({ install.path(), nil }, { path, err })
  H.truthy(messages:find("is already installed", 1, true), messages)
end)

---Puts a stand-in at the installed path, as a previous install would have.
---@return string its bytes
local function previous_install()
  sh({ "cp", script("tether 0.0.1"), install.path() })
  return H.read(install.path())
end

---Checks that a refused install left the previous binary as it was and no temporary folder.
---@param before string the previous binary's bytes
local function untouched(before)
  H.eq(before, H.read(install.path()), "the previous binary")
  H.eq({}, leftovers(), "temporary folders")
end

H.test("a wrong checksum is refused: nothing installed, the previous binary untouched", function()
  local before = previous_install()
  without_cargo(function()
    local path, err = run_install({ base_url = base .. "/badsum/" })
    H.eq(nil, path, "path")
    local want = ("tether: checksum mismatch for %s/badsum/v%s/%s.tar.gz: expected %s, got %s; nothing installed"):format(
      base,
      version,
      name,
      wrong_sum,
      sha256(badsum)
    )
    H.eq(want, err)
  end)
  untouched(before)
end)

H.test("a binary that is not the plugin's version is refused", function()
  local before = previous_install()
  without_cargo(function()
    local path, err = run_install({ base_url = base .. "/otherversion" })
    H.eq(nil, path, "path")
    H.eq(
      ('tether: the downloaded binary is not tether %s: it prints "tether 0.0.9"; nothing installed'):format(version),
      err
    )
  end)
  untouched(before)
end)

H.test("no release and no cargo: a message naming the cargo commands", function()
  local before = previous_install()
  without_cargo(function()
    local path, err = run_install({ base_url = base .. "/empty" })
    H.eq(nil, path, "path")
    err = assert(err)
    local url = ("%s/empty/v%s/%s.tar.gz"):format(base, version, name)
    H.truthy(vim.startswith(err, ("tether: could not download %s: "):format(url)), err)
    H.truthy(err:find("404", 1, true), "the HTTP status in: " .. err)
    H.truthy(err:find("cargo is not on PATH", 1, true), err)
    H.truthy(err:find("`cargo install --locked --path server --root " .. install.root() .. "`", 1, true), err)
    H.truthy(
      err:find(
        ("`cargo install --locked tether-bridge --version %s --root %s`"):format(version, install.root()),
        1,
        true
      ),
      err
    )
  end)
  untouched(before)
end)

H.test("no curl: said clearly", function()
  without_cargo(function()
    vim.fn.delete(vim.fs.dirname(vim.fn.exepath("curl")) .. "/curl")
    local _, err = run_install({ base_url = base .. "/good", force = true })
    H.truthy(
      vim.startswith(assert(err), "tether: curl is not on PATH, so the release cannot be downloaded, and cargo"),
      err
    )
  end)
end)

H.test("build.lua, run the way lazy.nvim runs a build file, installs; a failure raises", function()
  vim.fn.delete(install.path())
  local messages = {} ---@type string[]
  local notify = vim.notify
  vim.notify = function(msg) ---@diagnostic disable-line: duplicate-set-field
    table.insert(messages, msg)
  end
  vim.env.TETHER_RELEASE_URL = base .. "/good"
  local ok, err = pcall(assert(loadfile(plugin .. "/build.lua")))
  H.truthy(ok, tostring(err))
  H.eq("tether " .. version .. "\n", sh({ install.path(), "--version" }))
  previous_install()
  vim.env.TETHER_RELEASE_URL = base .. "/badsum"
  ok, err = pcall(assert(loadfile(plugin .. "/build.lua")))
  vim.env.TETHER_RELEASE_URL = nil
  vim.notify = notify
  H.eq(false, ok, "the build failed")
  H.truthy(vim.startswith(tostring(err), "tether: checksum mismatch for "), tostring(err))
  H.truthy(table.concat(messages, "\n"):find("downloading " .. base, 1, true), table.concat(messages, "\n"))
end)

H.test(":Tether install installs without blocking, then says so", function()
  vim.fn.delete(install.path())
  local messages = {} ---@type string[]
  local notify = vim.notify
  vim.notify = function(msg) ---@diagnostic disable-line: duplicate-set-field
    table.insert(messages, msg)
  end
  vim.env.TETHER_RELEASE_URL = base .. "/good"
  vim.cmd("Tether install")
  -- The command returned before the download: the install runs in a coroutine.
  local returned_early = vim.uv.fs_stat(install.path()) == nil
  local ok = vim.wait(30000, function()
    return vim.tbl_contains(messages, ("tether: installed tether %s at %s"):format(version, install.path()))
  end, 20)
  vim.env.TETHER_RELEASE_URL = nil
  vim.notify = notify
  H.truthy(ok, "no success message in:\n" .. table.concat(messages, "\n"))
  H.truthy(returned_early, ":Tether install blocked until the install was done")
  H.eq("tether " .. version .. "\n", sh({ install.path(), "--version" }))
end)

server:kill(15)
H.finish()
