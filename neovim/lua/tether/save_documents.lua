-- `tether/saveDocuments`: tether asks the editor to save buffers that were clean before a tool
-- changed them. Each is written as `:write` would (autocommands run, so the client sends
-- `didSave`); the answer lists the ones that were saved.

local M = {}

---The loaded buffer whose URI is `uri`, if any. No buffer is created.
---@param uri string
---@return integer?
function M.find_buffer(uri)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.uri_from_bufnr(bufnr) == uri then
      return bufnr
    end
  end
  return nil
end

---Writes one buffer. Returns why not, or `nil`.
---@param bufnr integer
---@return string?
local function write(bufnr)
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("lockmarks silent keepalt write")
  end)
  if not ok then
    return tostring(err)
  end
  return nil
end

---@param params {uris: string[]}
---@param ctx? lsp.HandlerContext
---@return {saved: string[]}? result
---@return lsp.ResponseError? error
function M.handler(_, params, ctx)
  if type(params) ~= "table" or not vim.islist(params.uris or {}) then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, "params.uris must be a list")
  end
  local saved = {} ---@type string[]
  -- With `save = "never"` nothing is saved, whether or not the server reads that option itself.
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or nil
  if client and vim.tbl_get(client.config, "init_options", "save") == "never" then
    return { saved = saved }
  end
  for _, uri in ipairs(params.uris or {}) do
    local bufnr = M.find_buffer(uri)
    if not bufnr then
      require("tether.log").add("warn", ("not saved: %s has no loaded buffer"):format(uri))
    else
      local err = write(bufnr)
      if err then
        require("tether.log").add("warn", ("not saved: %s: %s"):format(uri, err))
      else
        table.insert(saved, uri)
      end
    end
  end
  return { saved = saved }
end

return M
