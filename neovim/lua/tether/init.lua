-- tether for Neovim: starts `tether lsp` beside every file buffer and calls its tools.

local config = require("tether.config")

local M = {}

---Whether `setup()` has run.
M.did_setup = false

local has_011 = vim.fn.has("nvim-0.11") == 1

---Starts the client for one file buffer (reusing the one of its root), the way Neovim 0.10 does it and
---Neovim 0.11 does it for buffers without a filetype, which `vim.lsp.enable` never sees.
---@param bufnr integer
---@return integer? client_id
function M.start(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or not config.root_dir(bufnr) then
    return nil
  end
  local fts = config.options.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return nil
  end
  if not config.find_binary() then
    return nil
  end
  return vim.lsp.start(config.client_config(config.options, bufnr), { bufnr = bufnr })
end

---Makes the help tags of `doc/tether.txt` when they are missing: the plugin lives in a
---subfolder of tether's repository, where plugin managers do not look for docs.
function M.helptags()
  local doc = vim.api.nvim_get_runtime_file("doc/tether.txt", false)[1]
  if not doc then
    return
  end
  local dir = vim.fs.dirname(doc)
  if not vim.uv.fs_stat(dir .. "/tags") and vim.uv.fs_access(dir, "W") then
    pcall(vim.cmd.helptags, { args = { vim.fn.fnameescape(dir) }, mods = { silent = true } })
  end
end

---Sets tether up: checks the options, then starts the client for every file buffer, now and
---later. On Neovim 0.11 and newer through `vim.lsp.config` and `vim.lsp.enable`, on 0.10 through
---`vim.lsp.start`. Calling it again replaces the options for clients started afterwards.
---@param opts? tether.Options
function M.setup(opts)
  config.options = config.resolve(opts)
  M.did_setup = true
  M.helptags()
  local group = vim.api.nvim_create_augroup("tether", { clear = true })
  if has_011 then
    -- Assigned, not merged: a second setup() replaces the first one's options whole.
    vim.lsp.config["tether"] = config.overrides(config.options)
    vim.lsp.enable("tether")
    if config.options.diagnostics and config.options.pull_diagnostics then
      require("tether.diagnostics").offer_pulls()
    end
  end
  -- `vim.lsp.enable` starts clients on `FileType`; buffers without a filetype (and every buffer
  -- on 0.10) are started here.
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      vim.schedule(function()
        if not vim.api.nvim_buf_is_valid(args.buf) then
          return
        end
        if not has_011 or (vim.bo[args.buf].filetype == "" and not config.options.filetypes) then
          M.start(args.buf)
        end
      end)
    end,
  })
  if vim.v.vim_did_enter == 1 then
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and (not has_011 or vim.bo[bufnr].filetype == "") then
        M.start(bufnr)
      end
    end
  end
end

---The tether client of a buffer (default: the current one), else any running tether client.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local get = vim.lsp.get_clients
  return get({ name = "tether", bufnr = bufnr })[1] or get({ name = "tether" })[1]
end

---Sends a request on a client, with the method syntax of Neovim 0.11 and the field syntax of 0.10.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param handler fun(err: lsp.ResponseError?, result: any)
---@param bufnr integer
local function request(client, method, params, handler, bufnr)
  if has_011 then
    client:request(method, params, handler, bufnr)
  else
    ---@diagnostic disable-next-line: param-type-mismatch
    client.request(method, params, handler, bufnr)
  end
end

---The result of a tool call, as the server answers `tether.callTool`.
---@class tether.CallResult
---@field content {type: string, text: string}[]
---@field isError boolean
---@field structuredContent? table

---Calls a tool through `tether.callTool`. With `on_result` it returns at once and calls back;
---without, it waits (at most `opts.timeout` ms, default 30000) and returns the result or raises
---an error.
---@param tool string
---@param arguments? table
---`opts.interactive` says the user ran the call themselves: the server then also shows a failure
---with `window/showMessage`.
---@param opts? {bufnr?: integer, profile?: string, timeout?: integer, interactive?: boolean}
---@param on_result? fun(err: string?, result: tether.CallResult?)
---@return tether.CallResult?
function M.call(tool, arguments, opts, on_result)
  opts = opts or {}
  return M.execute("tether.callTool", {
    tool = tool,
    arguments = (arguments == nil or next(arguments) == nil) and vim.empty_dict() or arguments,
    profile = opts.profile,
    interactive = opts.interactive or nil,
  }, opts, on_result)
end

---Lists the tools of a profile through `tether.listTools`; synchronous unless `on_result` is given.
---@param opts? {bufnr?: integer, profile?: string, timeout?: integer}
---@param on_result? fun(err: string?, result: {tools: table[]}?)
---@return {tools: table[]}?
function M.list_tools(opts, on_result)
  opts = opts or {}
  return M.execute("tether.listTools", { profile = opts.profile }, opts, on_result)
end

---Runs one of tether's commands (`workspace/executeCommand`).
---@param command string
---@param argument table
---@param opts {bufnr?: integer, timeout?: integer}
---@param on_result? fun(err: string?, result: any)
---@return any
function M.execute(command, argument, opts, on_result)
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    local err = "tether is not running for this buffer (see :checkhealth tether)"
    if on_result then
      on_result(err, nil)
      return nil
    end
    error(err, 0)
  end
  -- `interactive` exists from protocol version 2 on; an older server refuses unknown fields.
  local caps = client.server_capabilities or {}
  if argument.interactive and (vim.tbl_get(caps, "experimental", "tether", "protocolVersion") or 1) < 2 then
    argument.interactive = nil
  end
  local params = { command = command, arguments = { argument } }
  if on_result then
    request(client, "workspace/executeCommand", params, function(err, result)
      on_result(err and err.message or nil, result)
    end, bufnr)
    return nil
  end
  local done, answer, failure = false, nil, nil
  request(client, "workspace/executeCommand", params, function(err, result)
    done, answer, failure = true, result, err and err.message or nil
  end, bufnr)
  -- vim.wait keeps the event loop running, so the server's own requests (the edit, the save)
  -- are answered while this waits.
  if not vim.wait(opts.timeout or 30000, function()
    return done
  end, 10) then
    error(("tether: %s did not answer in time"):format(command), 0)
  end
  if failure then
    error("tether: " .. failure, 0)
  end
  return answer
end

---The text of a tool result.
---@param result tether.CallResult
---@return string
function M.text(result)
  local parts = {} ---@type string[]
  for _, block in ipairs(result and result.content or {}) do
    if block.type == "text" then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, "\n")
end

---The stdio MCP server spec for AI plugins (mcphub.nvim, CodeCompanion, avante through mcphub):
---`tether mcp` over the current buffer's workspace root.
---@param opts? {root?: string}
---@return {command: string, args: string[], cwd: string}
function M.mcp_server(opts)
  opts = opts or {}
  local root = opts.root
  if not root then
    local client = M.client()
    root = client and client.root_dir or config.root_dir(vim.api.nvim_get_current_buf()) or assert(vim.uv.cwd())
  end
  local args = { "mcp", "--root", root }
  if config.options.profile then
    vim.list_extend(args, { "--profile", config.options.profile })
  end
  if config.options.read_only then
    table.insert(args, "--read-only")
  end
  return {
    command = config.find_binary() or config.options.binary,
    args = args,
    cwd = root,
  }
end

return M
