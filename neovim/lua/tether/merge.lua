-- The answers of several language servers to one `tether/languageRequest`, each brought to the
-- shapes editors/protocol.md names and to one position unit, then merged into one result. Plain
-- data in, plain data out: the caller supplies how a position is converted (`pos`), so that a
-- spec can check every shape without a server.

local M = {}

---Converts one position of document `uri`, from the answering server's unit to the result's.
---@alias tether.PosFn fun(uri: string, position: lsp.Position): lsp.Position

local NULL = vim.NIL

---@param v any
---@return boolean
local function null(v)
  return v == nil or v == NULL
end

---@param uri string
---@param range lsp.Range
---@param pos tether.PosFn
---@return lsp.Range
local function range(uri, range_, pos)
  return { start = pos(uri, range_.start), ["end"] = pos(uri, range_["end"]) }
end

---A `Location`, `Location[]` or `LocationLink[]` as `{uri, range}[]`; a link is given as its target
---and target selection range.
---@param result any
---@param pos tether.PosFn
---@return lsp.Location[]
function M.locations(result, pos)
  if null(result) then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local out = {} ---@type lsp.Location[]
  for _, loc in ipairs(result) do
    if loc.targetUri then
      local r = loc.targetSelectionRange or loc.targetRange
      table.insert(out, { uri = loc.targetUri, range = range(loc.targetUri, r, pos) })
    elseif loc.uri and loc.range then
      table.insert(out, { uri = loc.uri, range = range(loc.uri, loc.range, pos) })
    end
  end
  return out
end

---The markdown of hover contents: `MarkupContent`, `MarkedString` or `MarkedString[]`.
---@param contents any
---@return string
function M.markdown(contents)
  if null(contents) then
    return ""
  end
  if type(contents) == "string" then
    return contents
  end
  if contents.kind then
    return contents.value or ""
  end
  if contents.language then
    return ("```%s\n%s\n```"):format(contents.language, contents.value or "")
  end
  local parts = {} ---@type string[]
  for _, item in ipairs(contents) do
    local text = M.markdown(item)
    if text ~= "" then
      table.insert(parts, text)
    end
  end
  return table.concat(parts, "\n\n")
end

---@param uri string
---@param symbols lsp.DocumentSymbol[]
---@param pos tether.PosFn
---@return lsp.DocumentSymbol[]
local function document_symbols(uri, symbols, pos)
  local out = {}
  for _, s in ipairs(symbols) do
    local copy = vim.deepcopy(s)
    copy.range = range(uri, s.range, pos)
    copy.selectionRange = range(uri, s.selectionRange or s.range, pos)
    if s.children then
      copy.children = document_symbols(uri, s.children, pos)
    end
    table.insert(out, copy)
  end
  return out
end

---@param symbols (lsp.SymbolInformation|lsp.WorkspaceSymbol)[]
---@param pos tether.PosFn
---@return (lsp.SymbolInformation|lsp.WorkspaceSymbol)[]
local function symbol_informations(symbols, pos)
  local out = {}
  for _, s in ipairs(symbols) do
    local copy = vim.deepcopy(s)
    local loc = s.location
    if loc and loc.uri and loc.range then
      copy.location = { uri = loc.uri, range = range(loc.uri, loc.range, pos) }
    end
    table.insert(out, copy)
  end
  return out
end

---@param edit lsp.WorkspaceEdit
---@param pos tether.PosFn
---@return lsp.WorkspaceEdit
local function workspace_edit(edit, pos)
  local out = vim.deepcopy(edit)
  local function edits(uri, list)
    local converted = {}
    for _, e in ipairs(list or {}) do
      local copy = vim.deepcopy(e)
      copy.range = range(uri, e.range, pos)
      table.insert(converted, copy)
    end
    return converted
  end
  if edit.changes then
    out.changes = vim.empty_dict()
    for uri, list in pairs(edit.changes) do
      out.changes[uri] = edits(uri, list)
    end
  end
  if edit.documentChanges then
    out.documentChanges = {}
    for _, change in ipairs(edit.documentChanges) do
      if change.textDocument and change.edits then
        local copy = vim.deepcopy(change)
        copy.edits = edits(change.textDocument.uri, change.edits)
        table.insert(out.documentChanges, copy)
      else
        table.insert(out.documentChanges, vim.deepcopy(change)) -- a create, rename or delete
      end
    end
  end
  return out
end

---One server's answer to `method` in the protocol's shape, its positions through `pos`; `nil`
---for no answer.
---@param method string
---@param result any
---@param pos tether.PosFn
---@param uri? string the request's document
---@return any
function M.normalize(method, result, pos, uri)
  if null(result) then
    return nil
  end
  if method == "textDocument/definition" or method == "textDocument/references" then
    return M.locations(result, pos)
  elseif method == "textDocument/hover" then
    local text = M.markdown(result.contents)
    if text == "" then
      return nil
    end
    local hover = { contents = { kind = "markdown", value = text } }
    if result.range and uri then
      hover.range = range(uri, result.range, pos)
    end
    return hover
  elseif method == "textDocument/documentSymbol" then
    if result[1] and result[1].location then
      return symbol_informations(result, pos)
    end
    return document_symbols(assert(uri), result, pos)
  elseif method == "workspace/symbol" then
    return symbol_informations(result, pos)
  elseif method == "textDocument/rename" then
    return workspace_edit(result, pos)
  end
  error("tether: no result shape for " .. method)
end

---@param uri string
---@param symbols lsp.DocumentSymbol[]
---@param container? string
---@param out lsp.SymbolInformation[]
local function flatten(uri, symbols, container, out)
  for _, s in ipairs(symbols) do
    table.insert(out, {
      name = s.name,
      kind = s.kind,
      tags = s.tags,
      deprecated = s.deprecated,
      location = { uri = uri, range = s.range },
      containerName = container,
    })
    flatten(uri, s.children or {}, s.name, out)
  end
end

---Merges the normalised answers of several servers (in the order the servers are listed) into
---one result: locations and symbols are joined (a location named twice once), hovers joined
---with a rule between them, and for a rename the first server's edit is taken (two servers'
---edits of one rename would apply twice). `uri` is the request's document.
---@param method string
---@param answers any[] normalised answers, without the `nil` ones
---@param uri? string
---@return any result the protocol's result; `vim.NIL` for none
function M.merge(method, answers, uri)
  if method == "textDocument/definition" or method == "textDocument/references" then
    local out, seen = {}, {}
    for _, list in ipairs(answers) do
      for _, loc in ipairs(list) do
        local r = loc.range
        local key = table.concat({ loc.uri, r.start.line, r.start.character, r["end"].line, r["end"].character }, "\0")
        if not seen[key] then
          seen[key] = true
          table.insert(out, loc)
        end
      end
    end
    return out
  elseif method == "textDocument/hover" then
    if #answers == 0 then
      return NULL
    end
    local parts = {}
    for _, h in ipairs(answers) do
      table.insert(parts, h.contents.value)
    end
    return { contents = { kind = "markdown", value = table.concat(parts, "\n\n---\n\n") }, range = answers[1].range }
  elseif method == "textDocument/documentSymbol" then
    local hierarchical = true
    for _, list in ipairs(answers) do
      if list[1] and list[1].location then
        hierarchical = false
      end
    end
    local out = {}
    for _, list in ipairs(answers) do
      if hierarchical or (list[1] and list[1].location) then
        vim.list_extend(out, list)
      else
        flatten(assert(uri), list, nil, out)
      end
    end
    return out
  elseif method == "workspace/symbol" then
    local out = {}
    for _, list in ipairs(answers) do
      vim.list_extend(out, list)
    end
    return out
  elseif method == "textDocument/rename" then
    return answers[1] or NULL
  end
  error("tether: no result shape for " .. method)
end

---The result when no server answered: an empty list, or `null` for hover and rename.
---@param method string
---@return any
function M.empty(method)
  if method == "textDocument/hover" or method == "textDocument/rename" then
    return NULL
  end
  return {}
end

return M
