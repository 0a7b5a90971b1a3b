-- `:Tether history` and `:Tether undo`: the pure parts (arguments, times, the lines of the list,
-- the answer read from a result, the change `:Tether undo` names), the changeset's tab from a
-- canned answer, and with a binary that keeps a journal, the whole way through the server.
local H = require("helpers")
local history = require("tether.history")

-- 2026-11-25T10:00:00Z
local T0 = 1795600800

H.test("RFC 3339 times: Z, offsets and fractions", function()
  H.eq(T0, history.parse_time("2026-11-25T10:00:00Z"))
  H.eq(T0 + 0.123, history.parse_time("2026-11-25T10:00:00.123Z"))
  H.eq(T0, history.parse_time("2026-11-25T12:00:00+02:00"))
  H.eq(T0, history.parse_time("2026-11-25T04:30:00.000-05:30"))
  H.eq(0, history.parse_time("1970-01-01T00:00:00Z"))
  H.eq(951782400, history.parse_time("2000-02-29T00:00:00Z"))
  H.eq(nil, history.parse_time("yesterday"))
  H.eq(nil, history.parse_time("2026-11-25T10:00:00"))
end)

H.test("relative times", function()
  local t = "2026-11-25T10:00:00.500Z"
  H.eq("just now", history.relative_time(t, T0))
  H.eq("just now", history.relative_time(t, T0 - 30)) -- a clock behind the server's
  H.eq("9 s ago", history.relative_time(t, T0 + 10))
  H.eq("1 min ago", history.relative_time(t, T0 + 61))
  H.eq("59 min ago", history.relative_time(t, T0 + 3599))
  H.eq("2 h ago", history.relative_time(t, T0 + 2 * 3600 + 5))
  H.eq("1 day ago", history.relative_time(t, T0 + 86400 + 1))
  H.eq("6 days ago", history.relative_time(t, T0 + 6 * 86400 + 1))
  H.eq("2026-11-25", history.relative_time(t, T0 + 8 * 86400))
  H.eq("sometime", history.relative_time("sometime", T0))
end)

local EDIT = {
  id = "12",
  time = "2026-11-25T10:00:00.123Z",
  tool = "edit_file",
  summary = "edited src/a.py: 1 replacement",
  client = "claude-code 1.0.3",
  files = { { path = "src/a.py", op = "edit", added = 1, removed = 1 } },
}

H.test("a history line: id, tool, summary, client, age; undone ones marked", function()
  H.eq(
    "#12 edit_file: edited src/a.py: 1 replacement — claude-code 1.0.3, 5 min ago",
    history.format_item(EDIT, T0 + 301)
  )
  local undone = vim.tbl_extend("force", EDIT, { undone_by = "14" })
  H.eq(
    "#12 edit_file: edited src/a.py: 1 replacement — claude-code 1.0.3, 5 min ago [undone by #14]",
    history.format_item(undone, T0 + 301)
  )
  -- No summary: the files; a summary of several lines: its first.
  local bare = {
    id = "3",
    time = "2026-11-25T10:00:00Z",
    tool = "apply_patch",
    client = "editor",
    files = { { path = "a.txt", op = "edit" }, { path = "b.txt", op = "create" } },
  }
  H.eq("#3 apply_patch: a.txt, b.txt — editor, 1 h ago", history.format_item(bare, T0 + 3600))
  bare.summary = "patched 2 files\nmore"
  H.eq("#3 apply_patch: patched 2 files — editor, 1 h ago", history.format_item(bare, T0 + 3600))
end)

H.test(":Tether undo's ids", function()
  H.eq({}, history.undo_ids(""))
  H.eq({ "12" }, history.undo_ids("12"))
  H.eq({ "12" }, history.undo_ids(" #12 "))
  H.eq({ "12", "9" }, history.undo_ids("12 #9"))
  local ids, err = history.undo_ids("12 a;b")
  H.eq(nil, ids)
  H.eq("not a changeset id: a;b", err)
end)

H.test(":Tether history's path: %, relative to the root, absolute outside it", function()
  local function expand(s)
    return ({ ["%"] = "/w/src/a.py", ["%:h"] = "/w/src", ["#"] = "" })[s]
  end
  H.eq(nil, history.history_path("", "/w", expand))
  H.eq("src/a.py", history.history_path("%", "/w", expand))
  H.eq("src", history.history_path("%:h", "/w", expand))
  H.eq("/elsewhere/b.py", history.history_path("/elsewhere/b.py", "/w", expand))
  H.eq("/w/src/a.py", history.history_path("%", nil, expand))
  local path, err = history.history_path("#", "/w", expand)
  H.eq(nil, path)
  H.eq("# names no file here", err)
  -- A relative path is read from the current directory, as Vim reads file names.
  local cwd = vim.fs.normalize(assert(vim.uv.cwd()))
  H.eq("x/y.txt", history.history_path("x/y.txt", cwd, expand))
end)

H.test(":Tether undo without an id names the newest change neither undone nor an undo", function()
  local list = {
    { id = "15", tool = "undo", undoes = { "13" } },
    { id = "14", tool = "write_file", undone_by = "16" },
    { id = "13", tool = "edit_file", undone_by = "15" },
    { id = "12", tool = "edit_file" },
  }
  H.eq("12", history.newest_undoable(list).id)
  H.eq(nil, history.newest_undoable({ list[1], list[2] }))
  H.eq(nil, history.newest_undoable({}))
end)

H.test("a result's answer: structuredContent, else its JSON text; a failure's message", function()
  H.eq(
    { changesets = {}, more = false },
    history.decode({ content = {}, structuredContent = { changesets = {}, more = false }, isError = false })
  )
  local answer = history.decode({
    content = { { type = "text", text = '{"changeset": {"id": "1", "undone_by": null}, "diff": ""}' } },
    isError = false,
  })
  H.eq({ changeset = { id = "1" }, diff = "" }, answer)
  local none, err = history.decode({
    content = { { type = "text", text = '{"error": "conflict", "message": "a.txt: lines 2-3 changed since"}' } },
    isError = true,
  })
  H.eq(nil, none)
  H.eq("a.txt: lines 2-3 changed since", err)
  H.eq("boom", select(2, history.decode({ content = { { type = "text", text = "boom" } }, isError = true })))
  H.truthy(select(2, history.decode({ content = { { type = "text", text = "plain" } }, isError = false })), "not JSON")
end)

local ANSWER = {
  changeset = {
    id = "7",
    time = "2026-11-25T10:00:00Z",
    tool = "apply_patch",
    summary = "patched a.txt, b.txt",
    client = "e2e-assistant 1.0",
    files = {
      { path = "a.txt", op = "edit", added = 1, removed = 1, before = "one\ntwo\n", after = "one\nTWO\n" },
      { path = "b.txt", op = "create", added = 1, removed = 0, before = nil, after = "new\n" },
      { path = "c.bin", op = "overwrite", binary = true },
      { path = "e.txt", from = "d.txt", op = "rename" },
    },
  },
  diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n",
}

---The windows of the current tab with their buffers' names and lines, left to right.
local function windows()
  local out = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    table.insert(out, {
      name = vim.api.nvim_buf_get_name(b):match("tether://history/.*$"),
      lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
      diff = vim.wo[w].diff,
    })
  end
  return out
end

local UNIFIED = {
  {
    name = "tether://history/7/diff",
    lines = { "--- a/a.txt", "+++ b/a.txt", "@@ -1,2 +1,2 @@", " one", "-two", "+TWO" },
    diff = false,
  },
}

H.test("a changeset's tab: its unified diff, each file before and after in diff mode, q closes", function()
  -- Four files: more than side by side shows well, so the unified diff comes first.
  local view = history.open(vim.deepcopy(ANSWER))
  H.eq(2, #vim.api.nvim_list_tabpages())
  H.eq(UNIFIED, windows())
  H.eq("diff", vim.bo.filetype)
  H.truthy(vim.wo.winbar:find("unified diff of 4 files", 1, true), vim.wo.winbar)

  vim.cmd("normal ]f")
  H.eq({
    { name = "tether://history/7/before/a.txt", lines = { "one", "two" }, diff = true },
    { name = "tether://history/7/after/a.txt", lines = { "one", "TWO" }, diff = true },
  }, windows())
  local bar = vim.wo.winbar
  H.truthy(bar:find("#7 apply_patch: patched a.txt, b.txt — e2e-assistant 1.0", 1, true), bar)
  H.truthy(bar:find("1/4 a.txt [edit]", 1, true), bar)
  H.truthy(bar:find("gu undo", 1, true), bar)
  H.eq(false, vim.bo.modifiable)

  vim.cmd("normal ]f")
  H.eq({
    { name = "tether://history/7/before/b.txt", lines = { "" }, diff = true },
    { name = "tether://history/7/after/b.txt", lines = { "new" }, diff = true },
  }, windows())
  vim.api.nvim_set_current_win(vim.api.nvim_tabpage_list_wins(0)[1])
  H.truthy(vim.wo.winbar:find("before: did not exist", 1, true), vim.wo.winbar)

  vim.cmd("normal ]f")
  H.eq({ { name = "tether://history/7/file/c.bin", lines = { "c.bin: binary, not shown" }, diff = false } }, windows())
  vim.cmd("normal ]f")
  H.eq({ { name = "tether://history/7/file/e.txt", lines = { "renamed d.txt -> e.txt" }, diff = false } }, windows())
  H.truthy(vim.wo.winbar:find("4/4 d.txt -> e.txt [rename]", 1, true), vim.wo.winbar)
  vim.cmd("normal [f")

  vim.cmd("normal gd")
  H.eq(UNIFIED, windows())
  vim.cmd("normal gd")
  H.eq("tether://history/7/file/c.bin", windows()[1].name, "gd goes back to the file shown before")

  vim.cmd("tabfirst")
  H.eq(view, history.open(vim.deepcopy(ANSWER)), "opened again: its tab")
  H.eq(2, #vim.api.nvim_list_tabpages())
  H.eq(view.tab, vim.api.nvim_get_current_tabpage())

  vim.cmd("normal q")
  H.eq(1, #vim.api.nvim_list_tabpages())
  H.eq(nil, history.views[view.tab])
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    H.eq(nil, vim.api.nvim_buf_get_name(b):match("^tether://history"), "every view buffer is wiped")
  end
end)

H.test("a changeset of up to three files opens on its first file", function()
  local few = vim.deepcopy(ANSWER)
  table.remove(few.changeset.files)
  history.open(few)
  H.eq("tether://history/7/before/a.txt", windows()[1].name)
  vim.cmd("normal gd")
  H.eq(UNIFIED, windows())
  vim.cmd("normal q")
end)

H.test(":Tether completes history and undo", function()
  local commands = require("tether.commands")
  H.eq({ "history" }, commands.complete("his", "Tether his"))
  H.eq({ "undo" }, commands.complete("un", "Tether un"))
  H.eq("%", commands.complete("", "Tether history ")[1])
  -- No server: no ids, and no error.
  H.eq({}, commands.complete("", "Tether undo "))
end)

-- Through the server ----------------------------------------------------------------------------

local function has_journal()
  local bin = H.bin()
  if not bin then
    return false
  end
  local out = vim.fn.system({ bin, "history", "--help" })
  return vim.v.shell_error == 0 and out:find("history") ~= nil
end

if not has_journal() then
  H.skip(":Tether history and gu through the server", "no TETHER_BIN with a journal (history, undo)")
  H.finish()
  return
end

H.test(":Tether history lists an edit, the tab shows it, gu undoes it as one undo step", function()
  local dir = H.workspace({ ["a.txt"] = "alpha\nbeta\n" })
  H.setup({ notify = false })
  local bufnr = H.open(dir .. "/a.txt")
  local tether = require("tether")
  local r = tether.call("edit_file", { path = "a.txt", old_string = "beta", new_string = "BETA" })
  H.eq(false, r.isError, tether.text(r))
  H.eq("alpha\nBETA", H.text(bufnr))

  local shown ---@type string[]?
  local pick ---@type fun(item: any)?
  local items
  vim.ui.select = function(list, opts, on_choice)
    items, pick = list, on_choice
    shown = vim.tbl_map(opts.format_item, list)
  end
  vim.cmd("Tether history %")
  H.wait(function()
    return shown
  end, "the history list")
  H.truthy(shown[1]:match("^#%S+ edit_file: .* — editor, "), shown[1])
  assert(pick)(items[1])
  H.wait(function()
    return vim.api.nvim_buf_get_name(0):find("^tether://history/.*/after/a.txt$")
  end, "the changeset's tab")
  H.eq({ "alpha", "BETA" }, vim.api.nvim_buf_get_lines(0, 0, -1, false))

  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  vim.cmd("normal gu")
  H.wait(function()
    return #vim.api.nvim_list_tabpages() == 1
  end, "the tab to close after the undo")
  vim.notify = notify
  H.eq("alpha\nbeta", H.text(bufnr))
  H.truthy(notes[1] and notes[1].msg:find("undid changeset " .. items[1].id, 1, true), vim.inspect(notes))
  vim.api.nvim_set_current_buf(bufnr)
  vim.cmd("normal! u")
  H.eq("alpha\nBETA", H.text(bufnr), "one u brings the edit back")
end)

H.test(":Tether undo without an id asks, naming the newest change, and undoes that one", function()
  local dir = H.workspace({ ["b.txt"] = "one\ntwo\n" })
  local bufnr = H.open(dir .. "/b.txt")
  local tether = require("tether")
  for _, edit in ipairs({ { "one", "ONE" }, { "two", "TWO" } }) do
    local r = tether.call("edit_file", { path = "b.txt", old_string = edit[1], new_string = edit[2] })
    H.eq(false, r.isError, tether.text(r))
  end
  local ids = require("tether.commands").complete("", "Tether undo ")
  H.eq(2, #ids, "both changes complete")

  local asked, notes = {}, {} ---@type string[], {msg: string, level: integer}[]
  local answer = false
  history.confirm = function(message)
    table.insert(asked, message)
    return answer
  end
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  vim.cmd("Tether undo")
  H.wait(function()
    return #asked == 1
  end, "the question")
  H.truthy(asked[1]:match("^Undo #" .. ids[1] .. " edit_file: .* — editor, "), asked[1])
  vim.wait(200)
  H.eq("ONE\nTWO", H.text(bufnr), "declined: nothing undone")
  H.eq({}, notes)

  answer = true
  vim.cmd("Tether undo")
  -- Asked again while that undo runs: it would read the history before the undo is recorded.
  vim.cmd("Tether undo")
  H.eq(
    { msg = "tether: an undo is still running; try again when it has finished", level = vim.log.levels.WARN },
    notes[1]
  )
  H.wait(function()
    return #notes == 2
  end, "the undo's report")
  H.truthy(notes[2].msg:match("^undid changeset " .. ids[1] .. " "), notes[2].msg)
  H.eq("ONE\ntwo", H.text(bufnr))

  -- Again: the undo itself is not what is undone next, the change before it is.
  vim.cmd("Tether undo")
  H.wait(function()
    return #notes == 3
  end, "the second undo's report")
  vim.notify = notify
  H.truthy(asked[3]:match("^Undo #" .. ids[2] .. " "), asked[3])
  H.eq("one\ntwo", H.text(bufnr))
  -- Left to complete: the two undos (undoing one brings its change back), not the undone edits.
  local left = require("tether.commands").complete("", "Tether undo ")
  H.eq(2, #left, vim.inspect(left))
  H.truthy(not vim.tbl_contains(left, ids[1]) and not vim.tbl_contains(left, ids[2]), vim.inspect(left))
end)

H.finish()
