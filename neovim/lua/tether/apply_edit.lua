-- A strict `workspace/applyEdit` for the tether client.
--
-- Neovim's own handler checks the version of the first `TextDocumentEdit` only, never checks a
-- version <= 0, and answers `applied: true` after skipping a stale edit. tether edits live buffers
-- at the exact versions its tools read, so this handler checks every `TextDocumentEdit` first and
-- applies the edit only when all of them are current: all or nothing. A refusal names the stale
-- document in `failureReason` and its index in `failedChange`; tether then reads again and retries.

local mark = require("tether.mark")

local M = {}

---@class tether.Refusal
---@field reason string
---@field index? integer 0-based index of the failing change in `documentChanges`.

---@param a lsp.Position
---@param b lsp.Position
---@return boolean
local function before(a, b)
  return a.line < b.line or (a.line == b.line and a.character < b.character)
end

---The buffer of a URI, created (unloaded) when there is none, as Neovim's handler does.
---@param uri string
---@return integer
local function buffer(uri)
  return vim.uri_to_bufnr(uri)
end

---The version the client last reported for a buffer; 0 for a buffer it never sent.
---@param bufnr integer
---@return integer
function M.buffer_version(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return 0
  end
  return vim.lsp.util.buf_versions[bufnr] or 0
end

---Checks one document's text edits against its buffer: ranges ordered, inside the text, and not
---overlapping. Returns why not, or `nil`.
---@param bufnr integer
---@param edits lsp.TextEdit[]
---@return string?
local function check_ranges(bufnr, edits)
  local lines = vim.api.nvim_buf_is_loaded(bufnr) and vim.api.nvim_buf_line_count(bufnr) or nil
  local sorted = {} ---@type lsp.TextEdit[]
  for i, e in ipairs(edits) do
    local r = e.range
    if type(r) ~= "table" or type(r.start) ~= "table" or type(r["end"]) ~= "table" then
      return ("text edit %d has no range"):format(i)
    end
    if r.start.line < 0 or r.start.character < 0 or before(r["end"], r.start) then
      return ("text edit %d has an invalid range"):format(i)
    end
    if lines and r.start.line > lines then
      return ("text edit %d starts at line %d, after the end of the buffer (%d lines)"):format(
        i,
        r.start.line + 1,
        lines
      )
    end
    sorted[#sorted + 1] = e
  end
  table.sort(sorted, function(a, b)
    return before(a.range.start, b.range.start)
  end)
  for i = 2, #sorted do
    if before(sorted[i].range.start, sorted[i - 1].range["end"]) then
      return "text edits overlap"
    end
  end
  return nil
end

---Checks a whole workspace edit without changing anything.
---@param edit lsp.WorkspaceEdit
---@return tether.Refusal?
function M.check(edit)
  if type(edit) ~= "table" then
    return { reason = "the workspace edit is missing" }
  end
  if edit.documentChanges then
    -- A text edit for a file this same edit creates or renames to is checked when it is applied:
    -- its buffer does not exist yet.
    local made = {} ---@type table<string, boolean>
    for i, change in ipairs(edit.documentChanges) do
      if change.kind == "create" then
        made[change.uri] = true
      elseif change.kind == "rename" then
        made[change.newUri] = true
      elseif change.kind == "delete" then
        made[change.uri] = nil
      elseif change.kind then
        return { reason = ("unsupported change %q"):format(tostring(change.kind)), index = i - 1 }
      elseif not made[change.textDocument.uri] then
        local uri = change.textDocument.uri
        local bufnr = buffer(uri)
        local want = change.textDocument.version
        if want ~= nil and want ~= vim.NIL then
          local have = M.buffer_version(bufnr)
          if have ~= want then
            return {
              reason = ("%s changed: the edit is for version %d, the buffer is at version %d"):format(uri, want, have),
              index = i - 1,
            }
          end
        end
        local bad = check_ranges(bufnr, change.edits or {})
        if bad then
          return { reason = ("%s: %s"):format(uri, bad), index = i - 1 }
        end
      end
    end
  elseif edit.changes then
    for uri, edits in pairs(edit.changes) do
      local bad = check_ranges(buffer(uri), edits)
      if bad then
        return { reason = ("%s: %s"):format(uri, bad) }
      end
    end
  end
  return nil
end

---Closes a buffer's undo block, so that its next change starts a new undo step. Neovim closes
---the block of the current buffer only, when it waits for a key; any other buffer keeps its
---block open, and two tool edits to it (or the user's last change and a tool edit) would be one
---undo step. Setting 'undolevels', even to its own value, closes the block of the
---current buffer (`:help undo-break`), so it is set with the buffer made current for a moment,
---and without autocommands: no OptionSet handler should see a value that did not change.
---@param bufnr integer
local function break_undo(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("noautocmd let &g:undolevels = &g:undolevels")
  end)
end

---Applies text edits to one buffer, loading it first, and remembers its text for a rollback. The
---first edit of a workspace edit to a buffer starts a new undo step there.
---@param uri string
---@param edits lsp.TextEdit[]
---@param encoding string
---@param saved table<integer, string[]>
---@param marks tether.Marks
local function apply_text(uri, edits, encoding, saved, marks)
  local bufnr = buffer(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  vim.bo[bufnr].buflisted = true
  if not saved[bufnr] then
    saved[bufnr] = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    break_undo(bufnr)
  end
  marks:watch(bufnr, edits, encoding)
  vim.lsp.util.apply_text_edits(edits, bufnr, encoding)
end

---Applies a checked workspace edit. Text edits after a resource operation on the same file are
---version-checked here. On a failure every buffer changed so far gets its text back. The edit is
---one undo step of its own in each buffer it changes, current or not: the undo block is closed
---before the buffer's first change and again after the whole edit, so that neither what came
---before nor what follows joins it.
---@param edit lsp.WorkspaceEdit
---@param encoding string
---@param marks tether.Marks
---@return tether.Refusal?
function M.apply(edit, encoding, marks)
  local saved = {} ---@type table<integer, string[]>
  local index ---@type integer?
  local ok, err = pcall(function()
    if edit.documentChanges then
      for i, change in ipairs(edit.documentChanges) do
        index = i - 1
        if change.kind then
          -- Resource operations act on disk; Neovim's own code does them well.
          vim.lsp.util.apply_workspace_edit({ documentChanges = { change } }, encoding)
        else
          local td = change.textDocument
          local want = td.version
          if want ~= nil and want ~= vim.NIL and M.buffer_version(buffer(td.uri)) ~= want then
            error(("%s changed: the edit is for version %d"):format(td.uri, want), 0)
          end
          apply_text(td.uri, change.edits or {}, encoding, saved, marks)
        end
      end
    elseif edit.changes then
      index = nil
      for uri, edits in pairs(edit.changes) do
        apply_text(uri, edits, encoding, saved, marks)
      end
    end
  end)
  if not ok then
    for bufnr, lines in pairs(saved) do
      if vim.api.nvim_buf_is_valid(bufnr) then
        pcall(vim.api.nvim_buf_set_lines, bufnr, 0, -1, false, lines)
      end
    end
  end
  for bufnr in pairs(saved) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      pcall(break_undo, bufnr)
    end
  end
  if ok then
    return nil
  end
  marks:discard()
  return { reason = tostring(err), index = index }
end

---The handler, installed for the tether client only (see `lsp/tether.lua`).
---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.handler(_, params, ctx)
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or nil
  local encoding = client and client.offset_encoding or "utf-16"
  local refusal = M.check(params and params.edit)
  local marks = mark.new()
  if not refusal then
    refusal = M.apply(params.edit, encoding, marks)
  end
  if refusal then
    -- Send the pending didChange of the buffers that moved on before the answer, so that the
    -- retry tether makes at once reads their new text instead of the same stale one.
    if client then
      pcall(require("vim.lsp._changetracking").flush, client)
    end
    require("tether.log").add("warn", ("refused an edit: %s"):format(refusal.reason))
    return { applied = false, failureReason = refusal.reason, failedChange = refusal.index }
  end
  marks:show(params.label)
  -- Report the edit now rather than after Neovim's 150 ms `didChange` debounce: tether answers
  -- the assistant once the notification shows where the edit landed.
  if client then
    pcall(require("vim.lsp._changetracking").flush, client)
  end
  return { applied = true }
end

return M
