-- A small test harness for the specs: each spec file runs in its own Neovim (see `run`) and
-- writes one line per test, `PASS name`, `FAIL name` (with the error), or `SKIP name: reason`.

local H = {}

local counts = { pass = 0, fail = 0, skip = 0 }

-- Results go to the file the runner names (messages on stdout would mix with them), else stdout.
local sink = vim.env.TETHER_SPEC_OUT and assert(io.open(vim.env.TETHER_SPEC_OUT, "a")) or io.stdout

---@param line string
local function out(line)
  sink:write(line .. "\n")
  sink:flush()
end

---Runs one test.
---@param name string
---@param fn fun()
function H.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    counts.pass = counts.pass + 1
    out("PASS " .. name)
  else
    counts.fail = counts.fail + 1
    out("FAIL " .. name)
    for _, line in ipairs(vim.split(tostring(err), "\n")) do
      out("    " .. line)
    end
  end
end

---Records a test that cannot run here, and why.
---@param name string
---@param reason string
function H.skip(name, reason)
  counts.skip = counts.skip + 1
  out(("SKIP %s: %s"):format(name, reason))
end

---Ends the spec: exit code 1 when a test failed.
function H.finish()
  vim.lsp.stop_client(vim.lsp.get_clients(), true)
  os.exit(counts.fail > 0 and 1 or 0)
end

---@param want any
---@param got any
---@param what? string
function H.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(("%s: expected %s, got %s"):format(what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

---@param cond any
---@param what string
function H.truthy(cond, what)
  if not cond then
    error(what, 2)
  end
end

---Waits until `cond()` is true, polling; fails naming `what` after `ms` (default 10 s).
---@param cond fun(): any
---@param what string
---@param ms? integer
function H.wait(cond, what, ms)
  if not vim.wait(ms or 10000, function()
    return cond() and true or false
  end, 20) then
    error("timed out waiting for " .. what, 2)
  end
end

---The tether binary under test, or nil.
---@return string?
function H.bin()
  local bin = vim.env.TETHER_BIN
  if bin and bin ~= "" and vim.fn.executable(bin) == 1 then
    return bin
  end
  return nil
end

---A fresh workspace folder (with `.git`, so it is a root) holding `files` (name to text).
---@param files? table<string, string>
---@return string
function H.workspace(files)
  local dir = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(dir .. "/.git", "p")
  for name, text in pairs(files or {}) do
    H.write(dir .. "/" .. name, text)
  end
  return dir
end

---@param path string
---@param text string
function H.write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

---@param path string
---@return string
function H.read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

---The text of a buffer, lines joined with "\n".
---@param bufnr? integer
---@return string
function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false), "\n")
end

---Opens a file and waits until the tether client is attached and initialized.
---@param path string
---@return integer bufnr
---@return vim.lsp.Client client
function H.open(path)
  local existing = vim.fn.bufnr("^" .. vim.fn.escape(path, "\\^$.*[]~") .. "$")
  if existing ~= -1 and vim.api.nvim_buf_is_loaded(existing) then
    vim.api.nvim_set_current_buf(existing)
  else
    vim.cmd.edit(vim.fn.fnameescape(path))
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client ---@type vim.lsp.Client?
  H.wait(function()
    client = vim.lsp.get_clients({ name = "tether", bufnr = bufnr })[1]
    return client and client.initialized
  end, "the tether client to attach to " .. path)
  return bufnr, assert(client)
end

---Sets up tether with the binary under test.
---@param opts? tether.Options
function H.setup(opts)
  require("tether").setup(vim.tbl_extend("force", { binary = H.bin(), highlight = 200 }, opts or {}))
end

---Asks the server how it holds a document (`tether/debugDocument`).
---@param client vim.lsp.Client
---@param bufnr integer
---@return {version: integer, text: string, dirty: boolean}?
function H.server_doc(client, bufnr)
  local res = client:request_sync("tether/debugDocument", { uri = vim.uri_from_bufnr(bufnr) }, 5000, bufnr)
  assert(res and not res.err, "tether/debugDocument failed")
  return res.result
end

return H
