-- The plugin's options: defaults, validation, and the `vim.lsp.Config` they make.

local M = {}

---@alias tether.SavePolicy "clean"|"never"
---@alias tether.LogLevel "error"|"warn"|"info"|"debug"|"trace"

---Options of `require("tether").setup()`. Every field is optional.
---@class tether.Options
---@field binary? string The `tether` executable: a path or a name looked up on `PATH` (default `"tether"`).
---@field profile? string The tool profile calls use when they name none (default: the server's, `standard`).
---@field read_only? boolean Serve only the tools that change nothing (default `false`).
---@field save? tether.SavePolicy Save a buffer that was clean before a tool changed it (`"clean"`, the default) or never (`"never"`).
---@field log_level? tether.LogLevel The server's log level (default: the server's, `warn`).
---@field filetypes? string[] Filetypes to attach to; `nil` (the default) means every file buffer.
---@field root_markers? string[] Files or directories that mark a workspace root.
---@field highlight? integer|false How long, in milliseconds, changed text stays highlighted (default 1500); `false` turns it off.
---@field notify? boolean Name the tool and the files in a message after each change (default `true`).
---@field diagnostics? boolean Send tether the diagnostics of the other language servers (default `true`).
---@field pull_diagnostics? boolean On Neovim 0.11, offer every language server pull diagnostics through dynamic registration, so that a server that offers them only so (basedpyright, pyright) reports each version whole (default `true`).
---@field editor_context? boolean Answer tether's questions about the visible windows, cursors and selections (default `true`).
---@field language_requests? boolean Let tether's tools ask the other language servers (definition, references, symbols, hover, rename; default `true`).
---@field deny? string[] Globs of paths no tool may read, list, search or change, and whose buffers no tool shows (default none); `".env"` matches a name anywhere, `"config/secrets/**"` a path from the root.
---@field deny_secrets? boolean Hide the usual secrets files too: `.env`, `.env.local`, `*.pem`, `*.key`, SSH keys, `.netrc` (default `false`).
---@field review? "off"|tether.ReviewOptions Review each change before it is applied (default `"off"`).

---The review setup, sent as `initializationOptions.review` (see `:help tether-review`).
---@class tether.ReviewOptions
---@field mode? "off"|"ask" `"ask"`: every change waits for the user (default when a table is given).
---@field rules? {tool?: string, path?: string, creates?: boolean, review: "off"|"ask"}[] The first rule matching an operation decides for it.
---@field timeout? integer How long tether waits for the answer, in milliseconds (the server's default: 300000).

---@class tether.ResolvedOptions
---@field binary string
---@field profile? string
---@field read_only boolean
---@field save tether.SavePolicy
---@field log_level? tether.LogLevel
---@field filetypes? string[]
---@field root_markers string[]
---@field highlight integer|false
---@field notify boolean
---@field diagnostics boolean
---@field pull_diagnostics boolean
---@field editor_context boolean
---@field language_requests boolean
---@field deny string[]
---@field deny_secrets boolean
---@field review "off"|tether.ReviewOptions

---@type tether.ResolvedOptions
M.defaults = {
  binary = "tether",
  profile = nil,
  read_only = false,
  save = "clean",
  log_level = nil,
  filetypes = nil,
  root_markers = { ".git", ".hg", ".jj", ".svn" },
  highlight = 1500,
  notify = true,
  diagnostics = true,
  pull_diagnostics = true,
  editor_context = true,
  language_requests = true,
  deny = {},
  deny_secrets = false,
  review = "off",
}

---Every option's name (the defaults leave some unset).
M.names = {
  "binary",
  "profile",
  "read_only",
  "save",
  "log_level",
  "filetypes",
  "root_markers",
  "highlight",
  "notify",
  "diagnostics",
  "pull_diagnostics",
  "editor_context",
  "language_requests",
  "deny",
  "deny_secrets",
  "review",
}

---The options in force: the defaults until `setup()` replaces them.
---@type tether.ResolvedOptions
M.options = vim.deepcopy(M.defaults)

---@param v any
---@param values string[]
---@return boolean
local function one_of(v, values)
  return v == nil or vim.tbl_contains(values, v)
end

---Raises an error that names the option and what it must be.
---@param name string
---@param ok boolean
---@param expected string
local function check(name, ok, expected)
  if not ok then
    error(("tether: option %s must be %s"):format(name, expected), 0)
  end
end

---Checks `opts` and merges them over the defaults. Raises an error naming the bad option.
---@param opts? tether.Options
---@return tether.ResolvedOptions
function M.resolve(opts)
  opts = opts or {}
  check("opts", type(opts) == "table", "a table")
  check("binary", opts.binary == nil or type(opts.binary) == "string", "a string")
  check("profile", opts.profile == nil or type(opts.profile) == "string", "a string")
  check("read_only", opts.read_only == nil or type(opts.read_only) == "boolean", "a boolean")
  check("save", one_of(opts.save, { "clean", "never" }), '"clean" or "never"')
  check(
    "log_level",
    one_of(opts.log_level, { "error", "warn", "info", "debug", "trace" }),
    '"error", "warn", "info", "debug" or "trace"'
  )
  check("filetypes", opts.filetypes == nil or vim.islist(opts.filetypes), "a list of filetypes")
  check("root_markers", opts.root_markers == nil or vim.islist(opts.root_markers), "a list of names")
  local hl = opts.highlight
  check("highlight", hl == nil or hl == false or (type(hl) == "number" and hl >= 0), "false or milliseconds")
  check("deny", opts.deny == nil or vim.islist(opts.deny), "a list of globs")
  local rv = opts.review
  check(
    "review",
    rv == nil
      or rv == "off"
      or rv == "ask"
      or (
        type(rv) == "table"
        and one_of(rv.mode, { "off", "ask" })
        and (rv.rules == nil or vim.islist(rv.rules))
        and (rv.timeout == nil or (type(rv.timeout) == "number" and rv.timeout > 0))
      ),
    '"off", "ask" or a table {mode = "ask", rules = {...}, timeout = ms}'
  )
  for _, name in ipairs({
    "notify",
    "diagnostics",
    "pull_diagnostics",
    "editor_context",
    "language_requests",
    "deny_secrets",
  }) do
    check(name, opts[name] == nil or type(opts[name]) == "boolean", "a boolean")
  end
  for key in pairs(opts) do
    if not vim.tbl_contains(M.names, key) then
      error(("tether: unknown option %q"):format(tostring(key)), 0)
    end
  end
  return vim.tbl_extend("force", vim.deepcopy(M.defaults), opts)
end

---Where the binary in use comes from: the `binary` option, `:Tether install`, or `PATH`.
---@alias tether.BinarySource "option"|"installed"|"PATH"

---The full path of the `tether` executable, or `nil` and why not. With the default `binary`
---(`"tether"`), the binary `:Tether install` put in `stdpath("data")/tether/bin` comes first,
---then `PATH`; any other `binary` is used as it is.
---@param binary? string
---@return string? path
---@return string? reason
---@return tether.BinarySource? source
function M.find_binary(binary)
  binary = vim.fn.expand(binary or M.options.binary)
  if binary == M.defaults.binary then
    local installed = require("tether.install").path()
    if vim.fn.executable(installed) == 1 then
      return installed, nil, "installed"
    end
  end
  local path = vim.fn.exepath(binary)
  if path == "" then
    if binary:find("/", 1, true) then
      return nil, ("%s is not an executable file"):format(binary)
    end
    if binary == M.defaults.binary then
      return nil, ("tether is not installed (%s) and not on PATH"):format(require("tether.install").path())
    end
    return nil, ("%s is not on PATH"):format(binary)
  end
  return path, nil, binary == M.defaults.binary and "PATH" or "option"
end

---The command that starts the server.
---@param options tether.ResolvedOptions
---@return string[]
function M.cmd(options)
  local cmd = { M.find_binary(options.binary) or options.binary, "lsp" }
  if options.profile then
    vim.list_extend(cmd, { "--profile", options.profile })
  end
  if options.read_only then
    table.insert(cmd, "--read-only")
  end
  if options.log_level then
    vim.list_extend(cmd, { "--log-level", options.log_level })
  end
  return cmd
end

---The workspace root for a file buffer: the nearest folder holding a root marker, else the
---current directory when the file is inside it, else the file's own directory. `nil` for a buffer
---that is not a file (no name, or a special `buftype`).
---@param bufnr integer
---@return string?
function M.root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = vim.fs.root(bufnr, M.options.root_markers)
  if root then
    return root
  end
  local cwd = assert(vim.uv.cwd())
  local dir = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(name, ":p")))
  if dir == cwd or vim.startswith(dir, cwd .. "/") then
    return cwd
  end
  return dir
end

---The `review` initialization option for the `review` option: `nil` when review is off (the
---server's default), else the table with `mode` defaulting to `"ask"`.
---@param review "off"|"ask"|tether.ReviewOptions|nil
---@return table?
function M.review(review)
  if review == nil or review == "off" then
    return nil
  end
  if review == "ask" then
    return { mode = "ask" }
  end
  local out = vim.deepcopy(review)
  out.mode = out.mode or "ask"
  return out
end

---The settings `setup()` lays over `lsp/tether.lua`.
---@param options tether.ResolvedOptions
---@return vim.lsp.Config
function M.overrides(options)
  return {
    cmd = M.cmd(options),
    filetypes = options.filetypes,
    root_markers = options.root_markers,
    init_options = {
      save = options.save,
      -- Only when it hides something: an empty Lua table would be sent as a JSON object.
      deny = (#options.deny > 0 or options.deny_secrets)
          and { patterns = options.deny, secrets = options.deny_secrets }
        or nil,
      review = M.review(options.review),
    },
    -- What the editor shares with tether. Each is only ever asked for, except diagnostics, which
    -- are sent as they change.
    capabilities = {
      experimental = {
        tether = {
          protocolVersion = require("tether.version").protocol,
          diagnostics = options.diagnostics,
          editorContext = options.editor_context,
          languageRequests = options.language_requests,
          -- The review waits in the request's coroutine, which only Neovim 0.11 gives; on 0.10 it
          -- would block the keys that answer it, so there the server refuses reviewed changes.
          review = vim.fn.has("nvim-0.11") == 1,
        },
      },
    },
  }
end

---The data of `lsp/tether.lua`, loaded from the runtime path.
---@return vim.lsp.Config
function M.base()
  local file = vim.api.nvim_get_runtime_file("lsp/tether.lua", false)[1]
  assert(file, "tether: lsp/tether.lua is not on the runtime path")
  return dofile(file)
end

---The complete client configuration, for `vim.lsp.start()`: `lsp/tether.lua` with the options
---laid over it, capabilities merged with Neovim's own, and a fixed `root_dir` for `bufnr`.
---@param options tether.ResolvedOptions
---@param bufnr integer
---@return vim.lsp.ClientConfig
function M.client_config(options, bufnr)
  local config = vim.tbl_deep_extend("force", M.base(), M.overrides(options))
  config.name = "tether"
  config.root_dir = M.root_dir(bufnr) or assert(vim.uv.cwd())
  config.workspace_folders = {
    { uri = vim.uri_from_fname(config.root_dir), name = config.root_dir },
  }
  config.capabilities =
    vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), config.capabilities or {})
  config.filetypes = nil
  config.root_markers = nil
  return config
end

return M
