-- tether as a `vim.lsp.Config`, for `vim.lsp.enable("tether")` on Neovim 0.11 and newer.
--
-- This file is data: it starts nothing and loads only the plugin's version constants and, for
-- `cmd`, the binary lookup (the binary `:Tether install` put in place, else `tether` on PATH). The handlers and the root finder are
-- thin wrappers that load the plugin's modules only when the client needs them, so that the
-- strict `workspace/applyEdit` handler and `tether/saveDocuments` work even for users who never
-- call `require("tether").setup()`. The diagnostics that `experimental.tether.diagnostics`
-- announces are sent by `lua/tether/diagnostics.lua`, which `plugin/tether.lua` starts on the
-- first `LspAttach`.

---@type vim.lsp.Config
return {
  cmd = { require("tether.config").find_binary("tether") or "tether", "lsp" },
  -- No `filetypes`: tether serves every file buffer.
  root_markers = { ".git", ".hg", ".jj", ".svn" },
  -- Buffers without a file name get no client (on_dir is not called).
  root_dir = function(bufnr, on_dir)
    local root = require("tether.config").root_dir(bufnr)
    if root then
      on_dir(root)
    end
  end,
  capabilities = {
    experimental = {
      tether = {
        -- The protocol this plugin speaks (`lua/tether/version.lua`, a table of constants).
        protocolVersion = require("tether.version").protocol,
        saveDocuments = true,
        diagnostics = true,
        editorContext = true,
        languageRequests = true,
        -- The server asks only when review is on (the `review` initialization option).
        review = true,
        -- Changes other programs make to the file of a buffer with unsaved changes.
        diskChanges = true,
        -- Reload a buffer without unsaved changes as soon as another program changed its file.
        diskReloads = true,
      },
    },
  },
  init_options = { save = "clean" },
  -- Stops a server this plugin cannot work with (the protocol versions), saying why.
  on_init = function(...)
    return require("tether.compat").on_init(...)
  end,
  handlers = {
    ["workspace/applyEdit"] = function(...)
      return require("tether.apply_edit").handler(...)
    end,
    ["tether/saveDocuments"] = function(...)
      return require("tether.save_documents").handler(...)
    end,
    ["tether/editorContext"] = function(...)
      return require("tether.editor_context").handler(...)
    end,
    ["tether/languageRequest"] = function(...)
      return require("tether.language_request").handler(...)
    end,
    ["tether/review"] = function(...)
      return require("tether.review").handler(...)
    end,
    ["$/cancelRequest"] = function(...)
      return require("tether.review").withdraw(...)
    end,
    ["tether/diskChange"] = function(...)
      return require("tether.disk").handler(...)
    end,
    ["tether/diskReload"] = function(...)
      return require("tether.disk").reload(...)
    end,
    ["window/logMessage"] = function(...)
      return require("tether.log").handler(...)
    end,
  },
}
