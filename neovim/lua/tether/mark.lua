-- Shows what a tool changed: a short-lived highlight over the new text, and a message naming the
-- tool and the files.

local M = {}

M.ns = vim.api.nvim_create_namespace("tether")

vim.api.nvim_set_hl(0, "TetherChanged", { default = true, link = "DiffText" })

---Marks over the edits of one workspace edit: placed before the edits apply, read after.
---@class tether.Marks
---@field private spans {bufnr: integer, first: integer, last: integer}[]
---@field private buffers integer[]
local Marks = {}
Marks.__index = Marks

---@return tether.Marks
function M.new()
  return setmetatable({ spans = {}, buffers = {} }, Marks)
end

---The byte position of an LSP position in a buffer, clamped to its text.
---@param bufnr integer
---@param pos lsp.Position
---@param encoding string
---@return integer row
---@return integer col
local function byte_pos(bufnr, pos, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  if pos.line >= count then
    local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] or ""
    return count - 1, #last
  end
  local ok, col = pcall(vim.lsp.util._get_line_byte_from_position, bufnr, pos, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, pos.line, pos.line + 1, false)[1] or ""
  if not ok or type(col) ~= "number" then
    col = pos.character
  end
  return pos.line, math.min(col, #line)
end

---Places a pair of marks around each edit's range, so that after the edit they hold the new text.
---@param bufnr integer
---@param edits lsp.TextEdit[]
---@param encoding string
function Marks:watch(bufnr, edits, encoding)
  if not vim.tbl_contains(self.buffers, bufnr) then
    table.insert(self.buffers, bufnr)
  end
  for _, e in ipairs(edits) do
    local sr, sc = byte_pos(bufnr, e.range.start, encoding)
    local er, ec = byte_pos(bufnr, e.range["end"], encoding)
    local first = vim.api.nvim_buf_set_extmark(bufnr, M.ns, sr, sc, { right_gravity = false })
    local last = vim.api.nvim_buf_set_extmark(bufnr, M.ns, er, ec, { right_gravity = true })
    table.insert(self.spans, { bufnr = bufnr, first = first, last = last })
  end
end

---Removes the marks without showing anything (the edit was rolled back).
function Marks:discard()
  for _, p in ipairs(self.spans) do
    if vim.api.nvim_buf_is_valid(p.bufnr) then
      pcall(vim.api.nvim_buf_del_extmark, p.bufnr, M.ns, p.first)
      pcall(vim.api.nvim_buf_del_extmark, p.bufnr, M.ns, p.last)
    end
  end
  self.spans = {}
end

---Highlights the changed text for a while and names the tool and the files.
---@param label? string The server's label for the edit, such as `"tether: edit_file"`.
function Marks:show(label)
  local options = require("tether.config").options
  local highlights = {} ---@type {bufnr: integer, id: integer}[]
  for _, p in ipairs(self.spans) do
    local s = vim.api.nvim_buf_get_extmark_by_id(p.bufnr, M.ns, p.first, {})
    local e = vim.api.nvim_buf_get_extmark_by_id(p.bufnr, M.ns, p.last, {})
    pcall(vim.api.nvim_buf_del_extmark, p.bufnr, M.ns, p.first)
    pcall(vim.api.nvim_buf_del_extmark, p.bufnr, M.ns, p.last)
    local nonempty = s[1] and e[1] and (e[1] > s[1] or (e[1] == s[1] and e[2] > s[2]))
    if options.highlight and nonempty then
      local id = vim.api.nvim_buf_set_extmark(p.bufnr, M.ns, s[1], s[2], {
        end_row = e[1],
        end_col = e[2],
        hl_group = "TetherChanged",
        priority = 200,
      })
      table.insert(highlights, { bufnr = p.bufnr, id = id })
    end
  end
  self.spans = {}
  if #highlights > 0 then
    vim.defer_fn(function()
      for _, h in ipairs(highlights) do
        if vim.api.nvim_buf_is_valid(h.bufnr) then
          pcall(vim.api.nvim_buf_del_extmark, h.bufnr, M.ns, h.id)
        end
      end
    end, options.highlight --[[@as integer]])
  end
  if options.notify and #self.buffers > 0 then
    local names = {} ---@type string[]
    for _, bufnr in ipairs(self.buffers) do
      table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:."))
    end
    local who = (label and label ~= "") and label or "tether"
    vim.notify(("%s changed %s"):format(who, table.concat(names, ", ")), vim.log.levels.INFO, { title = "tether" })
  end
end

return M
