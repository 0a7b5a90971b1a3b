-- Review before apply: the pure pieces (the hunks a user takes, the answer a review sends, the
-- option) and the review tab answering a proposal through the handler's coroutine.
local H = require("helpers")
local review = require("tether.review")
local config = require("tether.config")

local OLD = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
local NEW = "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"

H.test("taking one hunk keeps the old text everywhere else", function()
  H.eq(2, #review.hunks(OLD, NEW))
  H.eq("ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n", review.merge_hunks(OLD, NEW, { [1] = true }))
  H.eq("one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n", review.merge_hunks(OLD, NEW, { [2] = true }))
  H.eq(NEW, review.merge_hunks(OLD, NEW, { [1] = true, [2] = true }))
  H.eq(OLD, review.merge_hunks(OLD, NEW, {}))
end)

H.test("insertions, deletions, a missing last line break and empty texts merge exactly", function()
  local old, new = "a\nb\nc\nd\n", "a\nx\ny\nb\nd\nz"
  -- Hunks: insert x,y after a; delete c; d\n -> d\nz (last line changed).
  local n = #review.hunks(old, new)
  local all = {}
  for i = 1, n do
    all[i] = true
  end
  H.eq(new, review.merge_hunks(old, new, all))
  H.eq(old, review.merge_hunks(old, new, {}))
  H.eq("a\nx\ny\nb\nc\nd\n", review.merge_hunks(old, new, { [1] = true }))
  H.eq("a\nb\nd\n", review.merge_hunks(old, new, { [2] = true }))
  H.eq("new\n", review.merge_hunks("", "new\n", { [1] = true }))
  H.eq("", review.merge_hunks("gone\n", "", { [1] = true }))
  H.eq("é\n😀 x\n", review.merge_hunks("é\n😀\n", "é\n😀 x\n", { [1] = true }))
end)

H.test("the hunk under a line of the proposed text", function()
  H.eq(1, review.hunk_at(OLD, NEW, 1))
  H.eq(nil, review.hunk_at(OLD, NEW, 4))
  H.eq(2, review.hunk_at(OLD, NEW, 7))
  -- A deletion covers the lines around the place it left.
  H.eq(1, review.hunk_at("a\nb\nc\n", "a\nc\n", 1))
  H.eq(1, review.hunk_at("a\nb\nc\n", "a\nc\n", 2))
end)

local function proposal()
  return {
    tool = "apply_patch",
    caller = "assistant",
    summary = vim.NIL,
    files = {
      { uri = "file:///w/a.txt", path = "a.txt", kind = "edit", oldText = OLD, newText = NEW },
      { uri = "file:///w/b.txt", path = "b.txt", kind = "edit", oldText = "beta\n", newText = "BETA\n" },
      { uri = "file:///w/c.txt", path = "c.txt", kind = "delete", oldText = vim.NIL, newText = vim.NIL },
    },
  }
end

---Runs the handler in a coroutine as Neovim does for a server's request; returns a function
---that gives its result once it ended.
local function run_handler(p)
  local out
  local co = coroutine.create(function()
    out = { review.handler(nil, p, { client_id = nil }) }
  end)
  assert(coroutine.resume(co))
  return function()
    return out
  end
end

local function keys(k)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "mx", false)
end

H.test("the review tab: a file accepted as edited, a hunk, a file rejected with a reason", function()
  local tabs = #vim.api.nvim_list_tabpages()
  local result = run_handler(proposal())
  H.eq(tabs + 1, #vim.api.nvim_list_tabpages(), "the review tab")
  H.eq(1, #review.pending)
  H.truthy(vim.wo.winbar:find("apply_patch by assistant", 1, true), vim.wo.winbar)
  H.eq("tether://review/", vim.api.nvim_buf_get_name(0):match("^tether://review/"))
  -- a.txt: only the hunk on line 7.
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  keys("gh")
  -- b.txt, edited, then accepted.
  H.truthy(vim.api.nvim_buf_get_name(0):find("b.txt$"), vim.api.nvim_buf_get_name(0))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "Beta, by hand" })
  keys("fa")
  -- c.txt: rejected, with a reason.
  local ui_input = vim.ui.input
  vim.ui.input = function(_, k)
    k("keep it")
  end
  keys("fr")
  vim.ui.input = ui_input
  H.wait(function()
    return result() ~= nil
  end, "the answer")
  H.eq({
    decision = "partial",
    reason = "keep it",
    files = {
      { uri = "file:///w/a.txt", decision = "accept", text = "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n" },
      { uri = "file:///w/b.txt", decision = "accept", text = "Beta, by hand\n" },
      { uri = "file:///w/c.txt", decision = "reject" },
    },
  }, result()[1])
  H.eq(tabs, #vim.api.nvim_list_tabpages(), "the tab is closed")
  H.eq(0, #review.pending)
end)

H.test("ga accepts everything unchanged; gr rejects everything with the reason", function()
  local result = run_handler(proposal())
  keys("ga")
  H.wait(function()
    return result() ~= nil
  end, "the answer")
  H.eq("accept", result()[1].decision)
  H.eq(3, #result()[1].files)
  H.eq(nil, result()[1].files[1].text)

  result = run_handler(proposal())
  vim.ui.input = function(_, k)
    k("not now")
  end
  keys("gr")
  H.wait(function()
    return result() ~= nil
  end, "the answer")
  H.eq({ decision = "reject", reason = "not now" }, result()[1])
end)

H.test("ga keeps what was typed in a file shown before, and JSON nulls read as absent", function()
  local p = proposal()
  p.files[2].oldText = vim.NIL
  p.files[2].kind = "create"
  local result = run_handler(p)
  keys("]f")
  H.truthy(vim.api.nvim_buf_get_name(0):find("b.txt$"), vim.api.nvim_buf_get_name(0))
  H.eq({ "" }, vim.api.nvim_buf_get_lines(vim.fn.bufnr("tether://review/*/old/b.txt"), 0, -1, false))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "typed" })
  keys("]f")
  H.eq("delete c.txt", vim.api.nvim_get_current_line())
  keys("ga")
  H.wait(function()
    return result() ~= nil
  end, "the answer")
  H.eq({
    { uri = "file:///w/a.txt", decision = "accept" },
    { uri = "file:///w/b.txt", decision = "accept", text = "typed\n" },
    { uri = "file:///w/c.txt", decision = "accept" },
  }, result()[1].files)
end)

H.test(":Tether review shows a pending review again after its tab was closed", function()
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg)
    table.insert(notes, msg)
  end
  require("tether.commands").run("review")
  H.eq({ "tether: no change waits for review" }, notes)
  vim.notify = notify
  local tabs = #vim.api.nvim_list_tabpages()
  local result = run_handler(proposal())
  vim.cmd("tabclose")
  H.eq(tabs, #vim.api.nvim_list_tabpages())
  require("tether.commands").run("review")
  H.eq(tabs + 1, #vim.api.nvim_list_tabpages())
  H.truthy(vim.api.nvim_buf_get_name(0):find("a.txt$"), vim.api.nvim_buf_get_name(0))
  keys("ga")
  H.wait(function()
    return result() ~= nil
  end, "the answer")
  H.eq("accept", result()[1].decision)
  H.eq(tabs, #vim.api.nvim_list_tabpages())
end)

H.test("the review option becomes initializationOptions.review", function()
  H.eq(nil, config.overrides(config.resolve({})).init_options.review)
  H.eq(nil, config.overrides(config.resolve({ review = "off" })).init_options.review)
  H.eq(
    { mode = "ask", timeout = 1000, rules = { { path = "src/**", review = "off" } } },
    config.overrides(config.resolve({ review = { timeout = 1000, rules = { { path = "src/**", review = "off" } } } })).init_options.review
  )
  H.eq(false, pcall(config.resolve, { review = "sometimes" }))
  H.eq(false, pcall(config.resolve, { review = { mode = "always" } }))
end)

H.finish()
