-- Position units: every conversion between bytes and utf-8/16/32 indexes, on the lines that
-- break careless ones (emoji, CJK, combining marks, invalid bytes), checked against Neovim's own.
local H = require("helpers")
local position = require("tether.position")

local LINES = {
  "",
  "plain ascii",
  "x = '😀' + 1",
  "中文字符 and more",
  "e\204\129 combining", -- "e" + U+0301
  "bad \255 byte",
  "cut \240\159",
  "😀😀",
}

-- Each case: a line, an encoding, an index in that encoding, and the byte offset it names.
local CASES = {
  { "😀😀", "utf-16", 0, 0 },
  { "😀😀", "utf-16", 1, 0 }, -- inside a surrogate pair: the character's start
  { "😀😀", "utf-16", 2, 4 },
  { "😀😀", "utf-16", 4, 8 },
  { "😀😀", "utf-16", 9, 8 }, -- past the end: the end
  { "😀😀", "utf-32", 1, 4 },
  { "😀😀", "utf-8", 5, 5 }, -- bytes are taken as they are
  { "中文字符 and more", "utf-16", 4, 12 },
  { "中文字符 and more", "utf-32", 5, 13 },
  { "e\204\129 combining", "utf-16", 2, 3 },
  { "bad \255 byte", "utf-16", 5, 5 },
  { "cut \240\159", "utf-16", 6, 6 },
}

H.test("utf-16 and utf-32 indexes name the right bytes, clamped to the line", function()
  for _, c in ipairs(CASES) do
    local line, enc, index, byte = unpack(c)
    H.eq(byte, position.to_byte(line, enc, index), ("to_byte(%q, %s, %d)"):format(line, enc, index))
  end
end)

H.test("at every character boundary, bytes to indexes agree with Neovim and go back", function()
  for _, line in ipairs(LINES) do
    -- Neovim's count is the reference for valid UTF-8; the two invalid lines only go round.
    local valid = not line:find("\255") and not line:find("\240\159$")
    local byte = 0
    while byte <= #line do
      for _, enc in ipairs({ "utf-16", "utf-32" }) do
        local index = position.from_byte(line, enc, byte)
        if valid and vim.fn.has("nvim-0.11") == 1 then
          H.eq(vim.str_utfindex(line, enc, byte, false), index, ("from_byte(%q, %s, %d)"):format(line, enc, byte))
        end
        H.eq(byte, position.to_byte(line, enc, index), ("round trip %q %s %d"):format(line, enc, byte))
      end
      byte = byte + math.max(1, position.char_len(line, byte))
    end
  end
end)

H.test("convert goes from one server's unit to another's", function()
  local line = "a😀b中c"
  H.eq(5, position.convert(line, "utf-16", "utf-8", 3)) -- after the emoji: byte 5
  H.eq(4, position.convert(line, "utf-8", "utf-16", 6)) -- after "b": 1 + 2 + 1
  H.eq(3, position.convert(line, "utf-8", "utf-32", 6))
  H.eq(7, position.convert(line, "utf-8", "utf-8", 7))
end)

H.test("lines split as LSP counts them: \\n, \\r\\n and a lone \\r", function()
  H.eq({ "a", "b", "c", "d", "" }, position.lines("a\nb\r\nc\rd\n"))
  H.eq({ "" }, position.lines(""))
  H.eq({ "one" }, position.lines("one"))
  H.eq({ "", "" }, position.lines("\r\n"))
end)

H.finish()
