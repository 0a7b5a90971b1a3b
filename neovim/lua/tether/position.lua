-- Position units: LSP counts a line's characters in utf-8 bytes, utf-16 code units or utf-32
-- code points, as each server negotiated; Neovim's buffers count bytes. Every conversion the
-- plugin makes between them is here, in plain Lua (no version-specific `vim.str_*` calls), so
-- that one spec covers them all.

local M = {}

---The length in bytes of the UTF-8 sequence that starts with byte `b`, or 1 for a byte that
---cannot start one (a stray continuation byte or an invalid lead counts as one character, as
---Neovim counts it).
---@param b integer
---@return integer
local function seq_len(b)
  if b < 0x80 then
    return 1
  elseif b >= 0xF0 and b < 0xF8 then
    return 4
  elseif b >= 0xE0 then
    return b < 0xF0 and 3 or 1
  elseif b >= 0xC0 then
    return 2
  end
  return 1
end

---How many units of `encoding` the character starting at byte `i` of `line` takes, and its
---length in bytes.
---@param line string
---@param i integer 1-based byte index
---@param encoding string
---@return integer units
---@return integer bytes
local function char_at(line, i, encoding)
  local n = seq_len(line:byte(i))
  if i + n - 1 > #line then
    n = 1 -- a sequence cut off by the end of the line: each byte on its own
  else
    for k = i + 1, i + n - 1 do
      local c = line:byte(k)
      if c < 0x80 or c >= 0xC0 then
        n = 1
        break
      end
    end
  end
  if encoding == "utf-8" then
    return n, n
  elseif encoding == "utf-16" then
    return n == 4 and 2 or 1, n
  end
  return 1, n
end

---The byte offset (0-based) in `line` of the position `index`, counted in `encoding`. An index
---past the end of the line is the end of the line; one inside a character is that character's
---start.
---@param line string
---@param encoding string "utf-8"|"utf-16"|"utf-32"
---@param index integer
---@return integer
function M.to_byte(line, encoding, index)
  if index <= 0 then
    return 0
  end
  if encoding == "utf-8" then
    -- A byte index is taken as it is, only clamped: it may point inside a character, as a
    -- server in utf-8 may say.
    return math.min(index, #line)
  end
  local i, units = 1, 0
  while i <= #line do
    local u, n = char_at(line, i, encoding)
    if units + u > index then
      return i - 1
    end
    units = units + u
    i = i + n
  end
  return #line
end

---The position (0-based, counted in `encoding`) of byte offset `byte` in `line`. A byte past the
---end of the line is the end of the line; one inside a character is that character's start.
---@param line string
---@param encoding string "utf-8"|"utf-16"|"utf-32"
---@param byte integer
---@return integer
function M.from_byte(line, encoding, byte)
  if byte <= 0 then
    return 0
  end
  if encoding == "utf-8" then
    return math.min(byte, #line)
  end
  local i, units = 1, 0
  while i <= #line and i - 1 < byte do
    local u, n = char_at(line, i, encoding)
    if i - 1 + n > byte then
      break
    end
    units = units + u
    i = i + n
  end
  return units
end

---Converts a position index on `line` from one encoding to another.
---@param line string
---@param from string
---@param to string
---@param index integer
---@return integer
function M.convert(line, from, to, index)
  if from == to then
    return index
  end
  return M.from_byte(line, to, M.to_byte(line, from, index))
end

---The length in bytes of the character that starts at byte offset `byte` (0-based) of `line`;
---0 at or past the end.
---@param line string
---@param byte integer
---@return integer
function M.char_len(line, byte)
  if byte >= #line then
    return 0
  end
  local _, n = char_at(line, byte + 1, "utf-8")
  return n
end

---Splits a text into its lines as LSP counts them: a line ends at "\r\n", "\n" or a lone "\r".
---@param text string
---@return string[]
function M.lines(text)
  local lines = {} ---@type string[]
  local start = 1
  while true do
    local s, e = text:find("\r?\n", start)
    local r = text:find("\r", start, true)
    if r and (not s or r < s) then
      s, e = r, r
    end
    if not s then
      table.insert(lines, text:sub(start))
      return lines
    end
    table.insert(lines, text:sub(start, s - 1))
    start = e + 1
  end
end

return M
