-- `tether/editorContext`: what the user is looking at, when a tool asks (`editor_context`). The
-- windows of the current tab that show file buffers, the current one active; in each, the
-- cursor as an empty selection, or in the current window the Visual selection; the lines each
-- shows. Positions are Neovim's own: 0-based lines, byte columns, so `positionEncoding` is
-- utf-8. Nothing is sent unasked.

local position = require("tether.position")

local M = {}

---Whether a buffer holds a file (the buffers tether mirrors).
---@param bufnr integer
---@return boolean
local function is_file(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return vim.api.nvim_buf_is_loaded(bufnr)
    and vim.bo[bufnr].buftype == ""
    and name ~= ""
    and not name:match("^%a[%w+.-]*://")
end

---@param bufnr integer
---@param row integer 0-based
---@return string
local function line_at(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
end

---@param line integer
---@param character integer
---@return lsp.Position
local function pos(line, character)
  return { line = line, character = character }
end

---The end of a charwise selection whose last character starts at (row, byte): after that
---character, or, on an empty line or past its end, the start of the next line (Visual mode
---selects the line break there).
---@param bufnr integer
---@param row integer 0-based
---@param byte integer 0-based
---@return lsp.Position
local function after_char(bufnr, row, byte)
  local line = line_at(bufnr, row)
  if byte < #line then
    return pos(row, byte + position.char_len(line, byte))
  end
  if row + 1 < vim.api.nvim_buf_line_count(bufnr) then
    return pos(row + 1, 0)
  end
  return pos(row, #line)
end

---The text of a range, as the buffer holds it.
---@param bufnr integer
---@param range lsp.Range
---@return string
local function text_of(bufnr, range)
  local s, e = range.start, range["end"]
  if s.line == e.line and s.character == e.character then
    return ""
  end
  local ok, lines = pcall(vim.api.nvim_buf_get_text, bufnr, s.line, s.character, e.line, e.character, {})
  return ok and table.concat(lines, "\n") or ""
end

---The ranges of the Visual selection in the current window (one per line for a block), or nil
---outside Visual mode.
---@param bufnr integer
---@return lsp.Range[]?
function M.visual_ranges(bufnr)
  local mode = vim.fn.mode()
  if mode ~= "v" and mode ~= "V" and mode ~= "\22" then
    return nil
  end
  local v, cur = vim.fn.getpos("v"), vim.fn.getpos(".")
  -- getpos: {buf, 1-based line, 1-based byte column, off}.
  local a, b = { v[2] - 1, v[3] - 1 }, { cur[2] - 1, cur[3] - 1 }
  if b[1] < a[1] or (b[1] == a[1] and b[2] < a[2]) then
    a, b = b, a
  end
  if mode == "V" then
    local last = vim.api.nvim_buf_line_count(bufnr) - 1
    local e = b[1] < last and pos(b[1] + 1, 0) or pos(b[1], #line_at(bufnr, b[1]))
    return { { start = pos(a[1], 0), ["end"] = e } }
  end
  local exclusive = vim.o.selection == "exclusive"
  if mode == "v" then
    local e = exclusive and pos(b[1], b[2]) or after_char(bufnr, b[1], b[2])
    return { { start = pos(a[1], a[2]), ["end"] = e } }
  end
  -- A block: one range per line, the columns as Neovim computes them from screen columns.
  local ranges = {}
  local ok, regions = pcall(vim.fn.getregionpos, v, cur, { type = mode, exclusive = exclusive })
  if not ok then
    return { { start = pos(a[1], a[2]), ["end"] = after_char(bufnr, b[1], b[2]) } }
  end
  for _, region in ipairs(regions) do
    local s, e = region[1], region[2]
    local row = s[2] - 1
    local line = line_at(bufnr, row)
    local start = math.min(s[3] - 1, #line)
    local last = e[3] - 1 -- the first byte of the last character, or start - 1 when empty
    local stop = last < start and start or math.min(last + position.char_len(line, last), #line)
    table.insert(ranges, { start = pos(row, start), ["end"] = pos(row, stop) })
  end
  return ranges
end

---One visible editor.
---@param win integer
---@param active boolean
---@return table
local function editor(win, active)
  local bufnr = vim.api.nvim_win_get_buf(win)
  local ranges = active and M.visual_ranges(bufnr) or nil
  if not ranges then
    local cursor = vim.api.nvim_win_get_cursor(win)
    local line = line_at(bufnr, cursor[1] - 1)
    local p = pos(cursor[1] - 1, math.min(cursor[2], #line))
    ranges = { { start = p, ["end"] = p } }
  end
  local selections = {}
  for _, r in ipairs(ranges) do
    table.insert(selections, { range = r, text = text_of(bufnr, r) })
  end
  local first, last = vim.fn.line("w0", win), vim.fn.line("w$", win)
  local version = vim.lsp.util.buf_versions[bufnr]
  return {
    uri = vim.uri_from_bufnr(bufnr),
    version = version or vim.NIL,
    active = active,
    selections = selections,
    visibleRanges = {
      { start = pos(first - 1, 0), ["end"] = pos(last - 1, #line_at(bufnr, last - 1)) },
    },
  }
end

---The protocol's result: the visible file windows of the current tab page.
---@return table
function M.context()
  local current = vim.api.nvim_get_current_win()
  local editors = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local config = vim.api.nvim_win_get_config(win)
    local bufnr = vim.api.nvim_win_get_buf(win)
    if config.relative == "" and is_file(bufnr) then
      local entry = editor(win, win == current)
      if win == current then
        table.insert(editors, 1, entry) -- the active one first
      else
        table.insert(editors, entry)
      end
    end
  end
  return { positionEncoding = "utf-8", editors = editors }
end

---The handler of `tether/editorContext`.
---@param ctx lsp.HandlerContext
---@return table? result
---@return lsp.ResponseError? error
function M.handler(_, _, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  if client and vim.tbl_get(client.capabilities or {}, "experimental", "tether", "editorContext") == false then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestFailed, "editor context is turned off")
  end
  local result = M.context()
  if client then
    -- The versions reported are Neovim's latest; the changes that made them may still wait in
    -- Neovim's 150 ms debounce. Sent now, they reach tether before this answer does.
    local ok, changetracking = pcall(require, "vim.lsp._changetracking")
    if ok and changetracking.flush then
      for _, e in ipairs(result.editors) do
        pcall(changetracking.flush, client, vim.uri_to_bufnr(e.uri))
      end
    end
  end
  return result
end

return M
