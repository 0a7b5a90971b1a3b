-- The smallest Neovim configuration that runs tether: `tether lsp` for every file buffer,
-- started with `vim.lsp.start`, announcing and answering `tether/saveDocuments`. The end-to-end
-- tests load it with `-u`; it keeps Neovim's own `workspace/applyEdit` handler, so tether's
-- verification of edits is what keeps buffers right. With TETHER_PLUGIN=1 it runs tether's
-- Neovim plugin instead.
local bin = assert(vim.env.TETHER_BIN, "TETHER_BIN names the tether binary")
local root = assert(vim.env.TETHER_ROOT, "TETHER_ROOT names the workspace folder")

vim.o.swapfile = false
vim.o.undolevels = 10000
-- Keystrokes typed by the tests land exactly as typed: no automatic indenting or wrapping.
vim.cmd("filetype plugin indent off")
vim.o.autoindent = false
vim.o.textwidth = 0

local capabilities = vim.tbl_deep_extend(
  "force",
  vim.lsp.protocol.make_client_capabilities(),
  { experimental = { tether = { saveDocuments = true } } }
)

--- `tether/saveDocuments`: write each listed buffer as `:write` would, answer which were saved.
local function save_documents(_, params)
  local saved = {}
  for _, uri in ipairs(params.uris or {}) do
    local buf = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(buf) then
      local ok = pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd("silent write")
      end)
      if ok then
        table.insert(saved, uri)
      end
    end
  end
  return { saved = saved }
end

--- Neovim's own `workspace/applyEdit` handler, counting the edits tether sends.
_G.tether_apply_edits = 0
local function counted_apply_edit(...)
  _G.tether_apply_edits = _G.tether_apply_edits + 1
  return vim.lsp.handlers["workspace/applyEdit"](...)
end

if vim.env.TETHER_PLUGIN == "1" then
  -- The same tests with tether's own Neovim plugin instead: its strict `applyEdit` handler
  -- (counted here too) and its `tether/saveDocuments`.
  local plugin = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h") .. "/neovim"
  vim.opt.runtimepath:prepend(plugin)
  local apply_edit = require("tether.apply_edit")
  local strict = apply_edit.handler
  apply_edit.handler = function(...)
    _G.tether_apply_edits = _G.tether_apply_edits + 1
    return strict(...)
  end
  -- TETHER_PLUGIN_OPTIONS: more setup options, as JSON (for example `{"review": {"mode": "ask"}}`).
  local extra = vim.env.TETHER_PLUGIN_OPTIONS and vim.json.decode(vim.env.TETHER_PLUGIN_OPTIONS) or {}
  require("tether").setup(vim.tbl_extend("force", { binary = bin, highlight = false, notify = false }, extra))
else
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    callback = function(args)
      if vim.bo[args.buf].buftype ~= "" then
        return
      end
      vim.lsp.start({
        name = "tether",
        cmd = { bin, "lsp" },
        root_dir = root,
        capabilities = capabilities,
        handlers = { ["tether/saveDocuments"] = save_documents, ["workspace/applyEdit"] = counted_apply_edit },
      }, { bufnr = args.buf })
    end,
  })
end

-- A real language server beside tether, for the tests of what tether learns from the editor:
-- basedpyright for Python files when TETHER_BASEDPYRIGHT names its `basedpyright-langserver`.
if (vim.env.TETHER_BASEDPYRIGHT or "") ~= "" then
  vim.lsp.config("basedpyright", {
    cmd = { vim.env.TETHER_BASEDPYRIGHT, "--stdio" },
    filetypes = { "python" },
    root_markers = { "pyrightconfig.json", ".git" },
    settings = { basedpyright = { analysis = { diagnosticMode = "openFilesOnly" } } },
  })
  vim.lsp.enable("basedpyright")
end

-- Or Ruff's language server when TETHER_RUFF names its `ruff`: a server whose diagnostics Neovim
-- pulls (`textDocument/diagnostic`), each answer whole for the version it was asked at.
if (vim.env.TETHER_RUFF or "") ~= "" then
  vim.lsp.config("ruff", {
    cmd = { vim.env.TETHER_RUFF, "server" },
    filetypes = { "python" },
    root_markers = { "pyproject.toml", ".git" },
  })
  vim.lsp.enable("ruff")
end

-- Or pylsp (Debian's python3-pylsp with pyflakes) when TETHER_PYLSP names it: a language server
-- that publishes diagnostics without a version.
if (vim.env.TETHER_PYLSP or "") ~= "" then
  vim.lsp.config("pylsp", {
    cmd = { vim.env.TETHER_PYLSP },
    filetypes = { "python" },
    root_markers = { ".git" },
  })
  vim.lsp.enable("pylsp")
end

-- Test hooks: start a tool call without blocking Neovim's loop, and collect its answer.
_G.tether_results = {}

--- Starts `tether.callTool` for `tool` with `arguments`; the answer lands in tether_results[id].
function _G.tether_call(id, tool, arguments)
  local client = vim.lsp.get_clients({ name = "tether" })[1]
  assert(client, "no tether client")
  client:request("workspace/executeCommand", {
    command = "tether.callTool",
    arguments = { { tool = tool, arguments = arguments } },
  }, function(err, result)
    _G.tether_results[id] = { err = err and err.message or nil, result = result }
  end)
end

--- Starts `tether.callTool` and, in the same event-loop tick, changes the current buffer as
--- typing would: each of `typed` is `{row, col, text}` (0-based row, byte column). tether reads
--- the buffer before these changes, and Neovim reports them only after its 150 ms debounce.
function _G.tether_race(id, tool, arguments, typed)
  _G.tether_call(id, tool, arguments)
  for _, t in ipairs(typed) do
    vim.api.nvim_buf_set_text(0, t[1], t[2], t[1], t[2], vim.split(t[3], "\n", { plain = true }))
  end
end
