-- Several language servers' answers to one `tether/languageRequest`, in every shape LSP allows,
-- brought to the protocol's shapes and merged. Positions go through a fake converter that adds
-- 100 to every character, so that a position left unconverted shows.
local H = require("helpers")
local merge = require("tether.merge")

local function pos(_, p)
  return { line = p.line, character = p.character + 100 }
end

local function r(l1, c1, l2, c2)
  return { start = { line = l1, character = c1 }, ["end"] = { line = l2, character = c2 } }
end

local A, B = "file:///w/a.py", "file:///w/b.py"

H.test("definition: a Location, Location[] and LocationLink[] all become Location[]", function()
  local one = merge.normalize("textDocument/definition", { uri = A, range = r(1, 2, 1, 3) }, pos)
  H.eq({ { uri = A, range = r(1, 102, 1, 103) } }, one)
  local links = merge.normalize("textDocument/definition", {
    {
      targetUri = B,
      targetRange = r(0, 0, 5, 0),
      targetSelectionRange = r(0, 4, 0, 9),
      originSelectionRange = r(9, 9, 9, 9),
    },
  }, pos)
  H.eq({ { uri = B, range = r(0, 104, 0, 109) } }, links)
  H.eq(nil, merge.normalize("textDocument/definition", vim.NIL, pos))
  H.eq({}, merge.normalize("textDocument/references", {}, pos))
end)

H.test("locations from two servers are joined, one named twice once", function()
  local a = { { uri = A, range = r(1, 2, 1, 3) }, { uri = B, range = r(0, 0, 0, 1) } }
  local b = { { uri = B, range = r(0, 0, 0, 1) }, { uri = B, range = r(4, 0, 4, 1) } }
  H.eq({ a[1], a[2], b[2] }, merge.merge("textDocument/references", { a, b }))
end)

H.test("hover: MarkupContent, MarkedString and MarkedString[] become one markdown, servers joined", function()
  local h1 = merge.normalize(
    "textDocument/hover",
    { contents = { kind = "markdown", value = "**x**: int" }, range = r(2, 0, 2, 1) },
    pos,
    A
  )
  H.eq({ contents = { kind = "markdown", value = "**x**: int" }, range = r(2, 100, 2, 101) }, h1)
  local h2 = merge.normalize(
    "textDocument/hover",
    { contents = { "plain", { language = "python", value = "def f()" } } },
    pos,
    A
  )
  H.eq("plain\n\n```python\ndef f()\n```", h2.contents.value)
  H.eq(nil, merge.normalize("textDocument/hover", { contents = "" }, pos, A))
  local merged = merge.merge("textDocument/hover", { h1, h2 })
  H.eq("**x**: int\n\n---\n\nplain\n\n```python\ndef f()\n```", merged.contents.value)
  H.eq(h1.range, merged.range)
  H.eq(vim.NIL, merge.merge("textDocument/hover", {}))
end)

H.test("document symbols keep their tree; mixed with SymbolInformation they are flattened", function()
  local tree = merge.normalize("textDocument/documentSymbol", {
    {
      name = "C",
      kind = 5,
      range = r(0, 0, 3, 0),
      selectionRange = r(0, 6, 0, 7),
      children = { { name = "m", kind = 6, range = r(1, 4, 2, 0), selectionRange = r(1, 8, 1, 9) } },
    },
  }, pos, A)
  H.eq(r(0, 106, 0, 107), tree[1].selectionRange)
  H.eq(r(1, 108, 1, 109), tree[1].children[1].selectionRange)
  H.eq(tree, merge.merge("textDocument/documentSymbol", { tree }, A))
  local flat = merge.normalize("textDocument/documentSymbol", {
    { name = "g", kind = 12, location = { uri = A, range = r(7, 0, 8, 0) } },
  }, pos, A)
  H.eq(r(7, 100, 8, 100), flat[1].location.range)
  local mixed = merge.merge("textDocument/documentSymbol", { tree, flat }, A)
  H.eq(
    { "C", "m", "g" },
    vim.tbl_map(function(s)
      return s.name
    end, mixed)
  )
  H.eq("C", mixed[2].containerName)
  H.eq({ uri = A, range = tree[1].children[1].range }, mixed[2].location)
end)

H.test("workspace symbols: a location without a range is kept as it is", function()
  local list = merge.normalize("workspace/symbol", {
    { name = "f", kind = 12, location = { uri = B, range = r(3, 4, 3, 5) } },
    { name = "g", kind = 12, location = { uri = B } },
  }, pos)
  H.eq(r(3, 104, 3, 105), list[1].location.range)
  H.eq({ uri = B }, list[2].location)
end)

H.test("rename: changes and documentChanges converted, resource operations kept, first server's edit", function()
  local e1 = merge.normalize("textDocument/rename", {
    documentChanges = {
      { textDocument = { uri = A, version = 3 }, edits = { { range = r(0, 4, 0, 9), newText = "hello" } } },
      { kind = "rename", oldUri = B, newUri = "file:///w/c.py" },
    },
  }, pos, A)
  H.eq(r(0, 104, 0, 109), e1.documentChanges[1].edits[1].range)
  H.eq(3, e1.documentChanges[1].textDocument.version)
  H.eq("rename", e1.documentChanges[2].kind)
  local e2 =
    merge.normalize("textDocument/rename", { changes = { [B] = { { range = r(1, 0, 1, 1), newText = "x" } } } }, pos, A)
  H.eq(r(1, 100, 1, 101), e2.changes[B][1].range)
  H.eq(e1, merge.merge("textDocument/rename", { e1, e2 }))
  H.eq(vim.NIL, merge.merge("textDocument/rename", {}))
end)

H.test("no answer: an empty list, or null for hover and rename", function()
  H.eq({}, merge.empty("textDocument/definition"))
  H.eq(vim.NIL, merge.empty("textDocument/rename"))
end)

H.finish()
