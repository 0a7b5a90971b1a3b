-- `:Tether history` and `:Tether undo`: the server's change journal (its `history` and `undo`
-- tools, called through `tether.callTool` like every other tool). The history is a list to pick
-- from; a picked changeset opens in a tab of its own, each file's text before and after it side by
-- side in diff mode, or the changeset's unified diff; `gu` there undoes it.
--
-- The pure parts (arguments, times, the lines of the list, which changeset `:Tether undo` names)
-- are functions of their inputs, so that the specs need no server.

local M = {}

---How many changesets `:Tether history` asks for.
M.limit = 50

---Above this many files a changeset opens on its unified diff rather than on its first file.
M.max_side_by_side = 3

---@class tether.ChangedFile
---@field path string
---@field op "edit"|"create"|"overwrite"|"delete"|"rename"|"mkdir"
---@field from? string the old path of a rename
---@field added? integer
---@field removed? integer
---@field before? string the whole text before (with `texts`); nil when the file did not exist
---@field after? string the whole text after (with `texts`); nil when the file did not exist
---@field binary? boolean

---@class tether.Changeset
---@field id string
---@field time string RFC 3339
---@field tool string
---@field summary? string
---@field client? string
---@field files tether.ChangedFile[]
---@field undoes? string[]
---@field undone_by? string

-- Arguments -----------------------------------------------------------------------------------

---The path `:Tether history` filters on: `%` (and `%:h` and the like, `#`) is expanded as Vim
---does, and a path inside the workspace root is made relative to it, as the journal names files;
---one outside stays absolute. `nil` for no filter, or `nil` and a message when `%` names no file.
---@param arg string the command's argument, trimmed
---@param root? string the workspace root
---@param expand? fun(s: string): string Vim's `expand()` (for specs)
---@return string? path
---@return string? err
function M.history_path(arg, root, expand)
  if arg == "" then
    return nil
  end
  expand = expand or vim.fn.expand
  local path = arg
  if arg:match("^[%%#]") then
    path = expand(arg)
    if path == "" then
      return nil, ("%s names no file here"):format(arg)
    end
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  if root and root ~= "" then
    root = vim.fs.normalize(root)
    if vim.startswith(path, root .. "/") then
      return path:sub(#root + 2)
    end
  end
  return path
end

---The ids `:Tether undo` was given: `12`, `#12` and several separated by spaces. An empty list
---means "the newest change", `nil` and a message a malformed argument.
---@param arg string
---@return string[]? ids
---@return string? err
function M.undo_ids(arg)
  local ids = {} ---@type string[]
  for word in vim.gsplit(vim.trim(arg), "%s+") do
    if word ~= "" then
      local id = word:match("^#?([%w%-_.]+)$")
      if not id then
        return nil, ("not a changeset id: %s"):format(word)
      end
      table.insert(ids, id)
    end
  end
  return ids
end

-- Times ---------------------------------------------------------------------------------------

---Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
---@param y integer
---@param m integer
---@param d integer
---@return integer
local function days_from_civil(y, m, d)
  y = m <= 2 and y - 1 or y
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

---Seconds since the epoch of an RFC 3339 time (`2026-11-25T10:00:00.123Z`, `...+02:00`), or nil.
---@param s string
---@return number?
function M.parse_time(s)
  if type(s) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, sec, rest = s:match("^(%d%d%d%d)-(%d%d)-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$")
  if not y then
    return nil
  end
  local frac = rest:match("^%.(%d+)") or ""
  rest = rest:sub(frac == "" and 1 or #frac + 2)
  local offset
  if rest == "Z" or rest == "z" then
    offset = 0
  else
    local sign, oh, om = rest:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then
      return nil
    end
    offset = (tonumber(oh) * 60 + tonumber(om)) * 60 * (sign == "-" and -1 or 1)
  end
  local days = days_from_civil(tonumber(y), tonumber(mo), tonumber(d))
  local t = days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
  if frac ~= "" then
    t = t + tonumber("0." .. frac)
  end
  return t - offset
end

---How long ago `time` was, in a few characters: `12 s ago`, `5 min ago`, `3 h ago`,
---`2 days ago`; the date from a week on; `just now` for a time ahead of the clock.
---@param time string RFC 3339
---@param now? number seconds since the epoch (default: the clock)
---@return string
function M.relative_time(time, now)
  local t = M.parse_time(time)
  if not t then
    return tostring(time)
  end
  local ago = math.floor((now or os.time()) - t)
  if ago < 1 then
    return "just now"
  elseif ago < 60 then
    return ("%d s ago"):format(ago)
  elseif ago < 3600 then
    return ("%d min ago"):format(math.floor(ago / 60))
  elseif ago < 86400 then
    return ("%d h ago"):format(math.floor(ago / 3600))
  elseif ago < 7 * 86400 then
    local days = math.floor(ago / 86400)
    return days == 1 and "1 day ago" or ("%d days ago"):format(days)
  end
  return os.date("!%Y-%m-%d", math.floor(t)) --[[@as string]]
end

-- Answers -------------------------------------------------------------------------------------

---JSON nulls (`vim.NIL`) read as absent, all the way down.
---@param v any
---@return any
local function denull(v)
  if v == vim.NIL then
    return nil
  elseif type(v) == "table" then
    for k, x in pairs(v) do
      v[k] = denull(x)
    end
  end
  return v
end

---The JSON answer of a tool result (its `structuredContent`, else its text decoded), or an error
---message: the server's own for a failed call (the standard profile's `{error, message}`).
---@param result tether.CallResult
---@return table? answer
---@return string? err
function M.decode(result)
  local text = require("tether").text(result)
  if result.isError then
    local ok, e = pcall(vim.json.decode, text)
    if ok and type(e) == "table" and type(e.message) == "string" then
      return nil, e.message
    end
    return nil, text
  end
  local answer = result.structuredContent
  if type(answer) ~= "table" then
    local ok, decoded = pcall(vim.json.decode, text)
    if not ok or type(decoded) ~= "table" then
      return nil, "the answer is not JSON: " .. text:sub(1, 200)
    end
    answer = decoded
  end
  return denull(answer)
end

---One line of the history list: `#12 edit_file: edited a.py — claude-code 1.0.3, 5 min ago`,
---with ` [undone by #14]` when it was undone.
---@param cs tether.Changeset
---@param now? number seconds since the epoch
---@return string
function M.format_item(cs, now)
  local summary = cs.summary
  if not summary or summary == "" then
    local paths = {} ---@type string[]
    for _, f in ipairs(cs.files or {}) do
      table.insert(paths, f.path)
    end
    summary = table.concat(paths, ", ")
  end
  summary = summary:gsub("\n.*", "")
  local line = ("#%s %s: %s — %s, %s"):format(
    cs.id,
    cs.tool,
    summary,
    cs.client or "?",
    M.relative_time(cs.time, now)
  )
  if cs.undone_by then
    line = line .. (" [undone by #%s]"):format(cs.undone_by)
  end
  return line
end

---The changeset `:Tether undo` without an id takes back: the newest one that is neither undone
---nor itself an undo, so that repeating the command goes further back, as `u` does.
---@param changesets tether.Changeset[] newest first
---@return tether.Changeset?
function M.newest_undoable(changesets)
  for _, cs in ipairs(changesets) do
    if not cs.undone_by and not (cs.undoes and #cs.undoes > 0) then
      return cs
    end
  end
  return nil
end

-- Calls ---------------------------------------------------------------------------------------

---@param message string
local function fail(message)
  vim.notify("tether: " .. message, vim.log.levels.ERROR, { title = "tether" })
end

---Calls the `history` tool; `on_answer(err, answer)` with the decoded answer.
---@param args table
---@param opts {bufnr?: integer}
---@param on_answer fun(err: string?, answer: table?)
function M.fetch(args, opts, on_answer)
  require("tether").call("history", args, { bufnr = opts.bufnr }, function(err, result)
    if err then
      return on_answer(err, nil)
    end
    local answer, derr = M.decode(result)
    on_answer(derr and ("history: " .. derr) or nil, answer)
  end)
end

---How many undos this editor started that have not answered yet (a `:Tether undo` without an id
---from the moment it reads the history). The journal records an undo when it has landed, so until
---then the history still shows its changeset as not undone.
M.running = 0

---Undoes changesets (`undo {id}` or `undo {ids}`) and reports the result: its text as a message,
---a failure (such as a conflict, which names the file and lines) as an error.
---@param ids string[]
---@param opts? {bufnr?: integer}
---@param done? fun(ok: boolean, text: string) called after the report
function M.undo(ids, opts, done)
  opts = opts or {}
  local args = #ids == 1 and { id = ids[1] } or { ids = ids }
  M.running = M.running + 1
  require("tether").call("undo", args, { bufnr = opts.bufnr }, function(err, result)
    M.running = M.running - 1
    local ok, text
    if err then
      ok, text = false, err
    elseif result.isError then
      local _, message = M.decode(result)
      ok, text = false, message or "undo failed"
    else
      ok, text = true, require("tether").text(result)
    end
    if ok then
      vim.notify(text, vim.log.levels.INFO, { title = "tether" })
    else
      fail(("undo %s failed: %s"):format(table.concat(ids, ", "), text))
    end
    if done then
      done(ok, text)
    end
  end)
end

---Asks the user to confirm; replaceable in tests.
---@param message string
---@return boolean
function M.confirm(message)
  return vim.fn.confirm(message, "&Undo\n&Cancel", 2, "Question") == 1
end

---`:Tether undo`: the given changesets, or after a confirmation naming it, the newest change.
---@param ids string[]
---@param opts? {bufnr?: integer}
---@param done? fun(ok: boolean, text: string)
function M.undo_command(ids, opts, done)
  opts = opts or {}
  if #ids > 0 then
    return M.undo(ids, opts, done)
  end
  if M.running > 0 then
    -- The newest change would be read before that undo is recorded, and could be the one it undoes.
    vim.notify("tether: an undo is still running; try again when it has finished", vim.log.levels.WARN)
    return
  end
  M.running = M.running + 1
  local function finish(ok, text)
    M.running = M.running - 1
    if done and ok ~= nil then
      done(ok, text)
    end
  end
  M.fetch({ limit = M.limit }, opts, function(err, answer)
    if err then
      fail(err)
      return finish()
    end
    local cs = M.newest_undoable(answer.changesets or {})
    if not cs then
      local where = answer.more and (" among the newest %d; see :Tether history"):format(M.limit) or ""
      vim.notify("tether: no change to undo" .. where, vim.log.levels.INFO, { title = "tether" })
      return finish()
    end
    -- The changeset confirmed is the one undone (by its id): an assistant's change arriving while
    -- the question is open must not be taken back in its place.
    if not M.confirm(("Undo %s?"):format(M.format_item(cs))) then
      return finish()
    end
    M.undo({ cs.id }, opts, finish)
  end)
end

-- The changeset's tab -------------------------------------------------------------------------

---@class tether.HistoryView
---@field changeset tether.Changeset
---@field diff string
---@field current integer the file shown, or 0 for the unified diff
---@field last_file? integer the file shown before the unified diff
---@field tab? integer
---@field bufnr? integer the buffer the history was asked from (its client undoes)

---The views open, by tab page.
---@type table<integer, tether.HistoryView>
M.views = {}

---Buffer lines for a text (the last line break makes no empty line).
---@param text? string
---@return string[]
local function to_lines(text)
  if not text or text == "" then
    return {}
  end
  if text:sub(-1) == "\n" then
    text = text:sub(1, -2)
  end
  return vim.split(text, "\n", { plain = true })
end

local show -- forward

---The keymaps of a view's buffers: `{lhs, action, description}`.
M.keymaps = {
  { "gu", "undo", "undo this change" },
  { "]f", "next_file", "next file" },
  { "[f", "prev_file", "previous file" },
  { "gd", "toggle_diff", "unified diff / side by side" },
  { "q", "close", "close" },
}

---@param view tether.HistoryView
local function close(view)
  if view.tab and vim.api.nvim_tabpage_is_valid(view.tab) then
    M.views[view.tab] = nil
    if #vim.api.nvim_list_tabpages() > 1 then
      vim.cmd.tabclose({ args = { vim.api.nvim_tabpage_get_number(view.tab) }, bang = true })
    end
  end
end

M.actions = {
  undo = function(view)
    M.undo({ view.changeset.id }, { bufnr = view.bufnr }, function(ok)
      if ok then
        close(view)
      end
    end)
  end,
  next_file = function(view)
    local n = #view.changeset.files
    view.current = view.current % n + 1
    show(view)
  end,
  prev_file = function(view)
    local n = #view.changeset.files
    view.current = view.current <= 1 and n or view.current - 1
    show(view)
  end,
  toggle_diff = function(view)
    view.last_file = view.current > 0 and view.current or view.last_file
    view.current = view.current > 0 and 0 or (view.last_file or 1)
    show(view)
  end,
  close = close,
}

---A read-only scratch buffer of a view, wiped when no window shows it.
---@param view tether.HistoryView
---@param name string
---@param lines string[]
---@param syntax? string a filetype for syntax only (no ftplugin, no language server)
---@param filetype? string
---@return integer
local function scratch(view, name, lines, syntax, filetype)
  local bufnr = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, bufnr, ("tether://history/%s/%s"):format(view.changeset.id, name))
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].swapfile = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if filetype then
    vim.bo[bufnr].filetype = filetype
  elseif syntax then
    vim.bo[bufnr].syntax = syntax
  end
  for _, map in ipairs(M.keymaps) do
    vim.keymap.set("n", map[1], function()
      M.actions[map[2]](view)
    end, { buffer = bufnr, nowait = true, desc = "tether history: " .. map[3] })
  end
  return bufnr
end

---The header of a view: the changeset, the file shown, the keys.
---@param view tether.HistoryView
---@param side? string
---@return string
local function header(view, side)
  local cs = view.changeset
  local where
  if view.current == 0 then
    where = ("unified diff of %d file%s"):format(#cs.files, #cs.files == 1 and "" or "s")
  else
    local f = cs.files[view.current]
    local path = f.op == "rename" and f.from and ("%s -> %s"):format(f.from, f.path) or f.path
    where = ("%d/%d %s [%s]"):format(view.current, #cs.files, path, f.op)
  end
  local text = ("%s | %s%s | gu undo, ]f [f files, gd diff, q close"):format(
    M.format_item(cs),
    where,
    side and (" | " .. side) or ""
  )
  return (text:gsub("%%", "%%%%"))
end

---Shows the current file of a view (or its unified diff) in its tab.
---@param view tether.HistoryView
show = function(view)
  if not (view.tab and vim.api.nvim_tabpage_is_valid(view.tab)) then
    vim.cmd("tabnew")
    view.tab = vim.api.nvim_get_current_tabpage()
    M.views[view.tab] = view
    vim.bo.bufhidden = "wipe"
  else
    vim.api.nvim_set_current_tabpage(view.tab)
  end
  vim.cmd("silent! only")
  vim.cmd("diffoff!")
  local first = vim.api.nvim_get_current_win()
  local cs = view.changeset
  if view.current == 0 or #cs.files == 0 then
    local buf = scratch(view, "diff", to_lines(view.diff), nil, "diff")
    vim.api.nvim_win_set_buf(first, buf)
    vim.wo[first].winbar = header(view)
    return
  end
  local f = cs.files[view.current]
  local syntax = vim.filetype.match({ filename = f.path })
  -- What has no text on either side is said in words: a binary file, a new folder, a rename
  -- given without texts.
  local what
  if f.binary then
    what = ("%s: binary, not shown"):format(f.path)
  elseif f.op == "mkdir" then
    what = ("created the folder %s"):format(f.path)
  elseif f.op == "rename" and not f.before and not f.after then
    what = ("renamed %s -> %s"):format(f.from or "?", f.path)
  end
  if what then
    local buf = scratch(view, "file/" .. f.path, { what })
    vim.api.nvim_win_set_buf(first, buf)
    vim.wo[first].winbar = header(view)
    return
  end
  local old = scratch(view, "before/" .. (f.from or f.path), to_lines(f.before), syntax)
  local new = scratch(view, "after/" .. f.path, to_lines(f.after), syntax)
  vim.api.nvim_win_set_buf(first, old)
  vim.cmd("diffthis")
  vim.cmd("rightbelow vsplit")
  local right = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(right, new)
  vim.cmd("diffthis")
  vim.wo[first].winbar = header(view, f.before and "before" or "before: did not exist")
  vim.wo[right].winbar = header(view, f.after and "after" or "after: gone")
  for _, w in ipairs({ first, right }) do
    vim.wo[w].foldenable = false
  end
  vim.api.nvim_set_current_win(right)
  pcall(vim.api.nvim_win_set_cursor, right, { 1, 0 })
end

---Opens a changeset (the `history {id, texts: true}` answer) in a tab of its own, or goes to the
---tab that shows it already.
---@param answer {changeset: tether.Changeset, diff?: string}
---@param opts? {bufnr?: integer}
---@return tether.HistoryView
function M.open(answer, opts)
  local cs = answer.changeset
  for tab, view in pairs(M.views) do
    if not vim.api.nvim_tabpage_is_valid(tab) then
      M.views[tab] = nil
    elseif view.changeset.id == cs.id then
      vim.api.nvim_set_current_tabpage(tab)
      return view
    end
  end
  cs.files = cs.files or {}
  ---@type tether.HistoryView
  local view = {
    changeset = cs,
    diff = answer.diff or "",
    current = #cs.files > M.max_side_by_side and 0 or 1,
    bufnr = opts and opts.bufnr,
  }
  show(view)
  return view
end

---Fetches one changeset with its texts and opens it.
---@param id string
---@param opts? {bufnr?: integer}
---@param done? fun(view: tether.HistoryView?)
function M.show_changeset(id, opts, done)
  opts = opts or {}
  M.fetch({ id = id, texts = true }, opts, function(err, answer)
    if err or not answer or not answer.changeset then
      fail(err or ("history: no changeset %s"):format(id))
      return done and done(nil)
    end
    local view = M.open(answer, opts)
    if done then
      done(view)
    end
  end)
end

---`:Tether history [path]`: the newest changesets (of `path` when given) to pick from; the one
---picked opens in a tab.
---@param path? string relative to the root, or absolute
---@param opts? {bufnr?: integer}
function M.history(path, opts)
  opts = opts or {}
  opts.bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  M.fetch({ limit = M.limit, path = path }, opts, function(err, answer)
    if err then
      return fail(err)
    end
    local changesets = answer.changesets or {}
    if #changesets == 0 then
      local what = path and (" to " .. path) or ""
      return vim.notify(("tether: no change%s in the history"):format(what), vim.log.levels.INFO, { title = "tether" })
    end
    local now = os.time()
    local prompt = ("tether history%s%s"):format(
      path and (" of " .. path) or "",
      answer.more and (" (newest %d)"):format(#changesets) or ""
    )
    vim.ui.select(changesets, {
      prompt = prompt,
      kind = "tether.history",
      format_item = function(cs)
        return M.format_item(cs, now)
      end,
    }, function(cs)
      if cs then
        M.show_changeset(cs.id, opts)
      end
    end)
  end)
end

---Ids of recent changesets not yet undone, newest first, for completion (waits at most `timeout`).
---@param timeout? integer
---@return string[]
function M.complete_ids(timeout)
  local ok, result = pcall(require("tether").call, "history", { limit = M.limit }, { timeout = timeout or 1000 })
  if not ok or not result then
    return {}
  end
  local answer = M.decode(result)
  local ids = {} ---@type string[]
  for _, cs in ipairs(answer and answer.changesets or {}) do
    if not cs.undone_by then
      table.insert(ids, cs.id)
    end
  end
  return ids
end

return M
