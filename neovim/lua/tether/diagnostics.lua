-- `tether/publishDiagnostics`: the problems the editor's other language servers report, sent to
-- tether so that its `diagnostics` tool can list them and a change's result can say what it
-- broke or fixed.
--
-- Each buffer's diagnostics are read from `vim.diagnostic` (positions in bytes, so the
-- notification is in utf-8), from the namespaces of every language server but tether, and sent
-- whole, on every change (coalesced within one turn of the event loop), and to a tether client
-- when it attaches.
--
-- The version: `vim.diagnostic` does not keep the document version a server computed its
-- diagnostics for, so the LSP diagnostic handlers are wrapped to record, per server and buffer, a
-- version the diagnostics are KNOWN to cover: the version the server stated
-- (`PublishDiagnosticsParams.version`), or for pulled ones the version the request was made at
-- (`Client:request` sends the buffer's pending changes first, so the server answers for that
-- version or a later one). Pushed diagnostics without a version have none: the buffer's version
-- when they arrive says nothing, since a server may send what it found in the text before a change
-- after the change reached it (pylsp lints in a thread from the text it had when the lint began),
-- and nothing tells when its analysis began (issue 33). A buffer's diagnostics are stamped with the
-- OLDEST version among its servers: a server that has not caught up with the latest change holds
-- the buffer's diagnostics back, so that tether never takes stale problems for the result of a
-- change. When any server's version is unknown (it sends none, or its diagnostics arrived before
-- the plugin was loaded), the version is `null`, and tether answers a change `pending`.

local M = {}

---Versions recorded: `stamps[bufnr][client_id]`, -1 when not known.
---@type table<integer, table<integer, integer>>
M.stamps = {}

---Whether a server's recorded version came from a pull (`pulled[bufnr][client_id]`): an answer
---to `textDocument/diagnostic` is whole for its version, where pushed diagnostics may come in
---parts (syntax first, then types) for one version.
---@type table<integer, table<integer, boolean>>
M.pulled = {}

---What was last sent to each tether client for each URI (JSON), to send a change only once.
---@type table<integer, table<string, string>>
local sent = {}

---Buffers whose diagnostics changed and wait to be sent.
---@type table<integer, true>
local pending = {}
local scheduled = false

local installed = false

---@param client vim.lsp.Client
---@return boolean
local function is_tether(client)
  return require("tether.language_request").is_tether(client)
end

---Whether a tether client takes `tether/publishDiagnostics`: it announced the capability and its
---server speaks protocol version 3 or newer.
---@param client vim.lsp.Client
---@return boolean
function M.accepts(client)
  return vim.tbl_get(client.capabilities or {}, "experimental", "tether", "diagnostics") == true
    and (vim.tbl_get(client.server_capabilities or {}, "experimental", "tether", "protocolVersion") or 0) >= 3
end

---Records the version a server's diagnostics for a buffer are known to cover.
---@param uri string
---@param client_id integer
---@param version? integer|vim.NIL the version, if it is known
---@param pulled boolean whether the diagnostics were pulled
local function stamp(uri, client_id, version, pulled)
  local fname = vim.uri_to_fname(uri)
  if vim.fn.bufexists(fname) == 0 then
    return
  end
  local bufnr = vim.fn.bufadd(fname)
  M.stamps[bufnr] = M.stamps[bufnr] or {}
  M.stamps[bufnr][client_id] = type(version) == "number" and version or -1
  M.pulled[bufnr] = M.pulled[bufnr] or {}
  M.pulled[bufnr][client_id] = pulled
  M.schedule(bufnr)
end

---Wraps Neovim's push and pull diagnostic handlers (once) to record versions. The module
---functions are what Neovim's default handlers call, and what most custom handlers call in
---turn, so wrapping them sees every diagnostic that reaches `vim.diagnostic` from a server.
function M.install()
  if installed then
    return
  end
  installed = true
  local lsp_diagnostic = vim.lsp.diagnostic
  local on_publish = lsp_diagnostic.on_publish_diagnostics
  lsp_diagnostic.on_publish_diagnostics = function(err, params, ctx, ...)
    local results = { on_publish(err, params, ctx, ...) }
    if params and params.uri and ctx and ctx.client_id then
      -- Only the version the server stated: without one, not known.
      stamp(params.uri, ctx.client_id, params.version, false)
    end
    return unpack(results)
  end
  local on_diagnostic = lsp_diagnostic.on_diagnostic
  if on_diagnostic then
    lsp_diagnostic.on_diagnostic = function(err, result, ctx, ...)
      local results = { on_diagnostic(err, result, ctx, ...) }
      local uri = vim.tbl_get(ctx or {}, "params", "textDocument", "uri")
      if err == nil and result and uri and ctx.client_id then
        -- Pulled diagnostics (also an `unchanged` report) hold for the version requested.
        stamp(uri, ctx.client_id, ctx.version, true)
      end
      return unpack(results)
    end
  end
  local group = vim.api.nvim_create_augroup("tether.diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(args)
      M.schedule(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("LspDetach", {
    group = group,
    callback = function(args)
      local client_id = args.data and args.data.client_id
      if M.stamps[args.buf] and client_id then
        M.stamps[args.buf][client_id] = nil
        if M.pulled[args.buf] then
          M.pulled[args.buf][client_id] = nil
        end
        M.schedule(args.buf)
      end
    end,
  })
end

---Asks a server again for the diagnostics of every buffer it has registered pulls for, as its
---`workspace/diagnostic/refresh` asks (Neovim 0.11 has no handler for it).
---@param ctx lsp.HandlerContext
---@return vim.NIL
local function on_refresh(_, _, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  for bufnr in pairs(client and client.attached_buffers or {}) do
    if vim.api.nvim_buf_is_loaded(bufnr) and client:supports_method("textDocument/diagnostic", bufnr) then
      -- No handler: the client's own, which ends in `on_diagnostic` (wrapped above).
      client:request(
        "textDocument/diagnostic",
        { textDocument = vim.lsp.util.make_text_document_params(bufnr) },
        nil,
        bufnr
      )
    end
  end
  return vim.NIL
end

---Offers pull diagnostics to every language server started from now on (Neovim 0.11's
---`vim.lsp.config("*")`), through dynamic registration: Neovim 0.11 announces
---`textDocument.diagnostic.dynamicRegistration = false`, and some servers (basedpyright,
---pyright) offer pulls only through it, pushing their diagnostics otherwise. A pushed report may
---come in parts for one version, so tether waits for it to be quiet; a pulled one is whole for
---the version it was asked at, so a change is answered as soon as it comes. Neovim 0.11 pulls a
---server's registered diagnostics on each change (`vim.lsp.diagnostic`, enabled when the server
---registers), but has no handler for `workspace/diagnostic/refresh`, which such servers send
---when a report changes without an edit (basedpyright stops on the error it gets): one is
---installed where Neovim has none. A server's own configuration that sets the capability wins.
function M.offer_pulls()
  if not vim.lsp.config then
    return
  end
  vim.lsp.config("*", {
    capabilities = {
      textDocument = { diagnostic = { dynamicRegistration = true } },
      workspace = { diagnostics = { refreshSupport = true } },
    },
  })
  if vim.lsp.handlers["workspace/diagnostic/refresh"] == nil then
    vim.lsp.handlers["workspace/diagnostic/refresh"] = on_refresh
  end
end

---Queues a buffer's diagnostics to be sent once this turn of the event loop is over.
---@param bufnr integer
function M.schedule(bufnr)
  pending[bufnr] = true
  if scheduled then
    return
  end
  scheduled = true
  vim.schedule(function()
    scheduled = false
    local bufs = pending
    pending = {}
    for b in pairs(bufs) do
      M.send(b)
    end
  end)
end

---The LSP client ids whose diagnostics a buffer holds or has had a version recorded for.
---@param bufnr integer
---@return integer[]
local function sources(bufnr)
  local ids = {} ---@type table<integer, true>
  for id in pairs(M.stamps[bufnr] or {}) do
    ids[id] = true
  end
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    ids[client.id] = true
  end
  local out = vim.tbl_keys(ids)
  table.sort(out)
  return out
end

---A buffer's diagnostics from every language server but tether, as the notification's params,
---and whether any language server has reported on the buffer (possibly that it has no problems).
---@param bufnr integer
---@return table params
---@return boolean reported
function M.params(bufnr)
  local diagnostics = {}
  local reported = false
  local version ---@type integer|false|nil
  local whole = true
  for _, id in ipairs(sources(bufnr)) do
    local client = vim.lsp.get_client_by_id(id)
    if not (client and is_tether(client)) then
      local found = {} ---@type vim.Diagnostic[]
      for _, is_pull in ipairs({ false, true }) do
        -- A stopped client's namespaces are gone from `vim.diagnostic` (reset on exit).
        if client or not is_pull then
          local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, id, is_pull)
          if ok then
            vim.list_extend(found, vim.diagnostic.get(bufnr, { namespace = ns }))
          end
        end
      end
      local v = (M.stamps[bufnr] or {})[id]
      if #found > 0 or v then
        reported = true
        whole = whole and (M.pulled[bufnr] or {})[id] == true
        if not v or v < 0 then
          version = false -- diagnostics of unknown age
        elseif version ~= false and (version == nil or v < version) then
          version = v
        end
      end
      for _, d in ipairs(found) do
        table.insert(diagnostics, {
          range = {
            start = { line = d.lnum, character = d.col },
            ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
          },
          severity = d.severity,
          code = d.code,
          source = d.source,
          message = d.message,
        })
      end
    end
  end
  if not vim.api.nvim_buf_is_loaded(bufnr) or not version then
    version = nil
  end
  return {
    uri = vim.uri_from_bufnr(bufnr),
    version = version or vim.NIL,
    positionEncoding = "utf-8",
    diagnostics = diagnostics,
    -- Every server's diagnostics were pulled: no later part comes for this version.
    complete = version ~= nil and reported and whole,
  },
    reported
end

---The tether clients a buffer's diagnostics go to: those attached to it, else (a file that is
---not open) those whose workspace holds it.
---@param bufnr integer
---@return vim.lsp.Client[]
local function receivers(bufnr)
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if is_tether(client) and M.accepts(client) then
      table.insert(out, client)
    end
  end
  if #out > 0 then
    return out
  end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  for _, client in ipairs(vim.lsp.get_clients()) do
    if is_tether(client) and M.accepts(client) then
      for _, folder in ipairs(client.workspace_folders or {}) do
        local dir = vim.uri_to_fname(folder.uri)
        if vim.startswith(fname, dir .. "/") then
          table.insert(out, client)
          break
        end
      end
    end
  end
  return out
end

---Sends a buffer's diagnostics to its tether clients, unless they have them already.
---@param bufnr integer
---@param only? vim.lsp.Client send to this client only
function M.send(bufnr, only)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_buf_get_name(bufnr) == "" then
    return
  end
  local clients = only and { only } or receivers(bufnr)
  if #clients == 0 then
    return
  end
  local params, reported = M.params(bufnr)
  local json = vim.json.encode(params)
  for _, client in ipairs(clients) do
    sent[client.id] = sent[client.id] or {}
    if sent[client.id][params.uri] ~= json then
      -- Nothing to say about a buffer no language server has reported on (no news is not "no
      -- problems"); an empty list from a server that did report is sent.
      if reported or sent[client.id][params.uri] then
        sent[client.id][params.uri] = json
        require("tether.compat").notify(client, "tether/publishDiagnostics", params)
      end
    end
  end
end

---`LspAttach`: records versions from then on; when a tether client attaches, it gets the
---diagnostics of the buffer and, the first time, of every buffer that has some.
---@param args {buf: integer, data: {client_id: integer}}
function M.on_attach(args)
  M.install()
  local client = vim.lsp.get_client_by_id(args.data.client_id)
  if not client or not is_tether(client) or not M.accepts(client) then
    return
  end
  if not sent[client.id] then
    sent[client.id] = {}
    local bufs = {} ---@type table<integer, true>
    for _, d in ipairs(vim.diagnostic.get()) do
      bufs[d.bufnr] = true
    end
    for b in pairs(M.stamps) do
      bufs[b] = true
    end
    for b in pairs(bufs) do
      if b ~= args.buf and vim.tbl_contains(receivers(b), client) then
        M.send(b, client)
      end
    end
  end
  M.send(args.buf, client)
end

return M
