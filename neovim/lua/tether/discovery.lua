-- The bridge's discovery files: a running `tether lsp` with a bridge writes `<pid>.json` with
-- {pid, roots, socket, profile, token, version} in `$XDG_RUNTIME_DIR/tether/`, else in
-- `$TMPDIR/tether-$UID/` (`TMPDIR` defaults to `/tmp`). `tether mcp` reads them to reach it.

local M = {}

---The folder of the discovery files.
---@return string
function M.dir()
  local runtime = vim.env.XDG_RUNTIME_DIR
  if runtime and runtime ~= "" then
    return vim.fs.joinpath(runtime, "tether")
  end
  local tmp = vim.env.TMPDIR
  if not tmp or tmp == "" then
    tmp = "/tmp"
  end
  return vim.fs.joinpath(tmp, ("tether-%d"):format(vim.uv.getuid()))
end

---One discovery file as read.
---@class tether.Discovery
---@field file string
---@field pid? integer
---@field roots? string[]
---@field socket? string
---@field profile? string
---@field version? string
---@field error? string Why the file could not be read.
---@field alive? boolean Whether the process `pid` runs.
---@field socket_exists? boolean Whether `socket` exists.

---Every discovery file in `dir` (default `M.dir()`). The token is never kept.
---@param dir? string
---@return tether.Discovery[]
function M.list(dir)
  dir = dir or M.dir()
  local found = {} ---@type tether.Discovery[]
  for name, kind in vim.fs.dir(dir) do
    if kind == "file" and name:match("^%d+%.json$") then
      local file = vim.fs.joinpath(dir, name)
      local entry = { file = file } ---@type tether.Discovery
      local fd = io.open(file, "r")
      local text = fd and fd:read("*a")
      if fd then
        fd:close()
      end
      local ok, data = pcall(vim.json.decode, text or "", { luanil = { object = true, array = true } })
      if not ok or type(data) ~= "table" then
        entry.error = "not valid JSON"
      else
        entry.pid = tonumber(data.pid)
        entry.roots = type(data.roots) == "table" and data.roots or {}
        entry.socket = type(data.socket) == "string" and data.socket or nil
        entry.profile = data.profile
        entry.version = data.version
        entry.alive = entry.pid ~= nil and vim.uv.kill(entry.pid, 0) == 0
        entry.socket_exists = entry.socket ~= nil and vim.uv.fs_stat(entry.socket) ~= nil
      end
      table.insert(found, entry)
    end
  end
  table.sort(found, function(a, b)
    return a.file < b.file
  end)
  return found
end

return M
