-- `tether/languageRequest`: tether asks what the editor's other language servers know (for its
-- `symbols`, `definition`, `references`, `hover` and `rename_symbol` tools). The document is
-- loaded when it is not (its filetype detected, so that its servers attach), the request goes to
-- every server attached to it except tether (positions converted to each one's unit), and the
-- answers come back merged, every position in utf-8 bytes (`tether.merge`).

local await = require("tether.await")
local merge = require("tether.merge")
local position = require("tether.position")

local M = {}

---How long the whole request may take, in milliseconds: under the 10 s tether waits, so that a
---slow server's answer is reported as incomplete rather than lost in a timeout.
M.timeout = 8500

---How long a freshly loaded document may take to get a language server that can answer.
M.attach_timeout = 5000

---The position unit of every result.
M.encoding = "utf-8"

local METHODS = {
  ["textDocument/definition"] = true,
  ["textDocument/references"] = true,
  ["textDocument/hover"] = true,
  ["textDocument/documentSymbol"] = true,
  ["workspace/symbol"] = true,
  ["textDocument/rename"] = true,
}

local has_011 = vim.fn.has("nvim-0.11") == 1

---Whether a client is a tether client (its own name, or a server announcing tether's protocol).
---@param client vim.lsp.Client
---@return boolean
function M.is_tether(client)
  return client.name == "tether"
    or vim.tbl_get(client.server_capabilities or {}, "experimental", "tether", "protocolVersion") ~= nil
end

---@param client vim.lsp.Client
---@param method string
---@param bufnr? integer
---@return boolean
local function supports(client, method, bufnr)
  if has_011 then
    return client:supports_method(method, bufnr)
  end
  ---@diagnostic disable-next-line: param-type-mismatch
  return client.supports_method(method, { bufnr = bufnr })
end

---The language servers (never tether) that can answer `method`, for `bufnr` or, without it, for
---the workspace.
---@param method string
---@param bufnr? integer
---@return vim.lsp.Client[]
function M.servers(method, bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client.initialized and not M.is_tether(client) and supports(client, method, bufnr) then
      table.insert(out, client)
    end
  end
  return out
end

---The buffer of a document, loaded (and its filetype detected) when it was not.
---@param uri string
---@return integer? bufnr
---@return string? err
function M.load(uri)
  if not vim.startswith(uri, "file:") then
    return nil, "not a file URI: " .. uri
  end
  local fname = vim.uri_to_fname(uri)
  local bufnr = vim.fn.bufadd(fname)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    if not vim.uv.fs_stat(fname) then
      return nil, "no such file: " .. fname
    end
    -- Like `:edit` in the background: BufRead autocommands run, which detect the filetype and
    -- so start its language servers.
    local ok, err = pcall(vim.fn.bufload, bufnr)
    if not ok then
      return nil, tostring(err)
    end
    -- Listed, so that a tool's change to it (a rename, left unsaved with `save = "never"`)
    -- shows in `:ls` and is not lost at `:qa` without a warning.
    vim.bo[bufnr].buflisted = true
  end
  if vim.bo[bufnr].filetype == "" then
    local ft = vim.filetype.match({ buf = bufnr })
    if ft then
      vim.bo[bufnr].filetype = ft
    end
  end
  return bufnr
end

---The loaded buffer of a file, if any; none is created.
---@param fname string
---@return integer?
function M.loaded_buffer(fname)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.api.nvim_buf_get_name(bufnr) == fname then
      return bufnr
    end
  end
  return nil
end

---The text of a document's lines, from its loaded buffer, else from its file; read once per
---request.
---@return fun(uri: string, line: integer): string
function M.line_reader()
  local cache = {} ---@type table<string, string[]|integer|false>
  return function(uri, line)
    local fname = vim.startswith(uri, "file:") and vim.uri_to_fname(uri) or uri
    local source = cache[fname]
    if source == nil then
      source = false
      local bufnr = M.loaded_buffer(fname)
      if bufnr then
        source = bufnr
      else
        local f = io.open(fname, "rb")
        if f then
          source = position.lines(f:read("*a"))
          f:close()
        end
      end
      cache[fname] = source
    end
    if type(source) == "number" then
      return vim.api.nvim_buf_get_lines(source, line, line + 1, false)[1] or ""
    end
    return source and source[line + 1] or ""
  end
end

---A position converter for `tether.merge`: from `from` to utf-8 bytes.
---@param read fun(uri: string, line: integer): string
---@param from string
---@return tether.PosFn
function M.to_utf8(read, from)
  return function(uri, p)
    if from == M.encoding then
      return { line = p.line, character = p.character }
    end
    return { line = p.line, character = position.convert(read(uri, p.line), from, M.encoding, p.character) }
  end
end

---`params` for one server: the position (if any) from tether's unit to the server's.
---@param params table
---@param read fun(uri: string, line: integer): string
---@param from string tether's position encoding
---@param to string the server's
---@return table
local function params_for(params, read, from, to)
  if not params.position or from == to then
    return params
  end
  local p = vim.deepcopy(params)
  local line = read(params.textDocument.uri, p.position.line)
  p.position.character = position.convert(line, from, to, p.position.character)
  return p
end

---@param client vim.lsp.Client
---@param method string
---@param params table
---@param handler fun(err: lsp.ResponseError?, result: any)
---@param bufnr? integer
---@return integer? request_id
local function request(client, method, params, handler, bufnr)
  local ok, id
  if has_011 then
    ok, id = client:request(method, params, handler, bufnr)
  else
    ---@diagnostic disable-next-line: param-type-mismatch
    ok, id = client.request(method, params, handler, bufnr)
  end
  return ok and id or nil
end

---Whether a language server (not tether) is still starting: one may yet attach.
---@return boolean
local function starting()
  for _, client in ipairs(vim.lsp.get_clients()) do
    if not client.initialized and not M.is_tether(client) then
      return true
    end
  end
  return false
end

---How long to keep looking for a server when none is starting: servers that are already running
---attach to a newly loaded buffer within a few turns of the event loop.
M.attach_grace = 500

---Calls `check()` every 50 ms until it returns a value, or `ms` pass, or (after the grace
---period) no language server is starting; hands that value (or nil) on.
---@param check fun(): any
---@param ms integer
---@param callback fun(value: any)
local function poll(check, ms, callback)
  local started = vim.uv.now()
  local deadline = started + ms
  local function step()
    local value = check()
    local now = vim.uv.now()
    if value or now >= deadline or (now - started >= M.attach_grace and not starting()) then
      callback(value)
    else
      vim.defer_fn(step, 50)
    end
  end
  step()
end

---Asks `clients` and answers the protocol's result (or an error) through `done`.
---@param method string
---@param params table tether's params
---@param clients vim.lsp.Client[]
---@param bufnr? integer
---@param tether_encoding string
---@param deadline integer vim.uv.now() by which servers that have not answered are given up
---@param done fun(result: table?, err: lsp.ResponseError?)
local function ask(method, params, clients, bufnr, tether_encoding, deadline, done)
  local uri = params.textDocument and params.textDocument.uri
  local read = M.line_reader()
  local answers = {} ---@type table<integer, {err: lsp.ResponseError?, result: any}>
  local ids = {} ---@type table<integer, integer>
  local left = #clients
  local finished = false
  local function finish()
    if finished then
      return
    end
    finished = true
    local servers, results, errors, complete = {}, {}, {}, true
    for _, client in ipairs(clients) do
      local a = answers[client.id]
      if not a then
        complete = false -- gave up on it
        if ids[client.id] then
          pcall(client.cancel_request, client, ids[client.id])
        end
        table.insert(errors, ("%s did not answer in time"):format(client.name))
      elseif a.err then
        table.insert(errors, ("%s: %s"):format(client.name, a.err.message or vim.inspect(a.err)))
        errors.code = errors.code or a.err.code
      else
        table.insert(servers, client.name)
        local ok, normalized = pcall(merge.normalize, method, a.result, M.to_utf8(read, client.offset_encoding), uri)
        if not ok then
          require("tether.log").add(
            "warn",
            ("%s answered %s in a shape tether cannot read: %s"):format(client.name, method, normalized)
          )
        elseif normalized ~= nil then
          table.insert(results, normalized)
        end
        if next(client.progress and client.progress.pending or {}) ~= nil then
          complete = false -- still indexing: the answer may grow
        end
      end
    end
    if #clients > 0 and #servers == 0 then
      local protocol = vim.lsp.protocol
      local code = errors.code
      if not (code and protocol.ErrorCodes[code]) then
        code = protocol.ErrorCodes.RequestFailed
      end
      done(nil, vim.lsp.rpc_response_error(code, table.concat(errors, "; ")))
      return
    end
    done({
      positionEncoding = M.encoding,
      servers = servers,
      complete = complete,
      result = #servers > 0 and merge.merge(method, results, uri) or merge.empty(method),
    })
  end
  if left == 0 then
    finish()
    return
  end
  for _, client in ipairs(clients) do
    local p = params_for(params, read, tether_encoding, client.offset_encoding)
    ids[client.id] = request(client, method, p, function(err, result)
      answers[client.id] = { err = err, result = result }
      left = left - 1
      if left == 0 then
        finish()
      end
    end, bufnr)
    if not ids[client.id] then
      answers[client.id] = { err = { code = -32803, message = "the client has stopped" } }
      left = left - 1
    end
  end
  if left == 0 then
    finish()
    return
  end
  vim.defer_fn(finish, math.max(0, deadline - vim.uv.now()))
end

---Runs one request; `done(result, err)`.
---@param method string
---@param params table
---@param tether_encoding string
---@param done fun(result: table?, err: lsp.ResponseError?)
function M.run(method, params, tether_encoding, done)
  local deadline = vim.uv.now() + M.timeout
  if method == "workspace/symbol" then
    ask(method, params, M.servers(method), nil, tether_encoding, deadline, done)
    return
  end
  local uri = vim.tbl_get(params, "textDocument", "uri")
  if type(uri) ~= "string" then
    done(
      nil,
      vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, "params.textDocument.uri is missing")
    )
    return
  end
  local bufnr, err = M.load(uri)
  if not bufnr then
    done(nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, err))
    return
  end
  -- A document just loaded gets its servers once they have started and initialized.
  poll(
    function()
      local clients = M.servers(method, bufnr)
      return #clients > 0 and clients or nil
    end,
    M.attach_timeout,
    function(clients)
      ask(method, params, clients or {}, bufnr, tether_encoding, deadline, done)
    end
  )
end

---The handler of `tether/languageRequest`.
---@param params {method: string, params: table}
---@param ctx lsp.HandlerContext
---@return table? result
---@return lsp.ResponseError? error
function M.handler(_, params, ctx)
  local protocol = vim.lsp.protocol
  if type(params) ~= "table" or not METHODS[params.method] or type(params.params) ~= "table" then
    return nil,
      vim.lsp.rpc_response_error(
        protocol.ErrorCodes.InvalidParams,
        ("unsupported method %s"):format(vim.inspect(type(params) == "table" and params.method or nil))
      )
  end
  local tether = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  if tether and vim.tbl_get(tether.capabilities or {}, "experimental", "tether", "languageRequests") == false then
    return nil, vim.lsp.rpc_response_error(protocol.ErrorCodes.RequestFailed, "language requests are turned off")
  end
  local encoding = tether and tether.offset_encoding or "utf-16"
  local result, err = await.run(function(done)
    M.run(params.method, params.params, encoding, done)
  end, M.timeout + 500)
  if err == "timeout" then
    return nil,
      vim.lsp.rpc_response_error(protocol.ErrorCodes.RequestFailed, "the language servers did not answer in time")
  end
  return result, err
end

return M
