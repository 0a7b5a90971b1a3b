-- `tether/review`: with review on (the `review` option), tether asks before it applies a tool's
-- change. The proposal is shown in a tab of its own, one file at a time, the proposed text diffed
-- against the text it was computed from; the user accepts or rejects it whole, per file, or per
-- hunk, and may edit the proposed text first. The answer goes back when every file is decided.
--
-- The handler runs in the coroutine Neovim 0.11 gives each server request (see `tether.await`):
-- it yields until the user has decided, so the editor stays usable meanwhile.

local await = require("tether.await")

local M = {}

---How long the server waits when the review setup names no `timeout` (protocol.md).
M.server_timeout = 300000
---How much longer than the server the plugin waits: the server withdraws a review it stopped
---waiting for (`$/cancelRequest`), and this ends one it did not (an older server).
M.withdraw_grace = 30000

---The reviews shown and not yet answered, oldest first.
---@type tether.Review[]
M.pending = {}

local next_id = 0

---@class tether.ReviewFile
---@field uri string
---@field path string
---@field kind "edit"|"create"|"delete"|"rename"|"mkdir"
---@field oldText? string
---@field newText? string
---@field newUri? string
---@field newPath? string
---@field recursive? boolean

---@class tether.Review
---@field id integer
---@field proposal {id?: integer|string, tool: string, caller: string, summary?: string, files: tether.ReviewFile[]}
---@field decisions table<integer, {decision: "accept"|"reject", text?: string, reason?: string}>
---@field current integer the file shown
---@field tab? integer
---@field bufs integer[]
---@field done fun(result: table?)
---@field late boolean the server stopped waiting
---@field withdrawn? boolean the server said it stopped waiting, and the review closed
---@field client_id? integer the client whose server asked
---@field proposed_buf? integer the buffer of the current file's proposed text
---@field file_bufs? table<integer, integer[]> each file's old and proposed buffers

-- Text and lines ------------------------------------------------------------------------------

---The lines of a text, each with its line break (the last one may have none).
---@param text string
---@return string[]
function M.lines_with_breaks(text)
  local out = {}
  local pos = 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    local stop = nl or #text
    table.insert(out, text:sub(pos, stop))
    pos = stop + 1
  end
  return out
end

---The hunks between two texts, as `vim.diff` gives them: `{start_a, count_a, start_b, count_b}`,
---1-based lines; a count of 0 means the hunk sits after that start line.
---@param old string
---@param new string
---@return integer[][]
function M.hunks(old, new)
  local diff = vim.diff or vim.text.diff
  return diff(old, new, { result_type = "indices" }) --[[@as integer[][] ]]
end

---The text `old` becomes when only the hunks of `old`→`new` whose index is in `take` are taken:
---the proposed lines of those hunks, the old lines everywhere else.
---@param old string
---@param new string
---@param take table<integer, boolean> hunk indices (1-based, in `M.hunks` order)
---@return string
function M.merge_hunks(old, new, take)
  local a, b = M.lines_with_breaks(old), M.lines_with_breaks(new)
  local out = {} ---@type string[]
  local next_a = 1 -- the first old line not yet copied or replaced
  for i, h in ipairs(M.hunks(old, new)) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local first = ca == 0 and sa + 1 or sa -- the first old line the hunk replaces (or its place)
    for l = next_a, first - 1 do
      table.insert(out, a[l])
    end
    if take[i] then
      for l = sb, sb + cb - 1 do
        table.insert(out, b[l])
      end
    else
      for l = first, first + ca - 1 do
        table.insert(out, a[l])
      end
    end
    next_a = first + ca
  end
  for l = next_a, #a do
    table.insert(out, a[l])
  end
  return table.concat(out)
end

---The index of the hunk of `old`→`new` that covers line `line` (1-based) of `new`: a hunk that
---deletes lines covers the line after which they went, and the next one.
---@param old string
---@param new string
---@param line integer
---@return integer?
function M.hunk_at(old, new, line)
  for i, h in ipairs(M.hunks(old, new)) do
    local sb, cb = h[3], h[4]
    if cb > 0 and line >= sb and line < sb + cb then
      return i
    elseif cb == 0 and (line == sb or line == sb + 1) then
      return i
    end
  end
  return nil
end

---Buffer lines for a text, and whether it ended with a line break.
---@param text string
---@return string[] lines
---@return boolean eol
local function to_lines(text)
  local eol = text:sub(-1) == "\n"
  local lines = vim.split(eol and text:sub(1, -2) or text, "\n", { plain = true })
  if text == "" then
    lines = {}
  end
  return lines, eol
end

---The text of a buffer, ending with a line break as `eol` says.
---@param bufnr integer
---@param eol boolean
---@return string
local function buffer_text(bufnr, eol)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if #lines == 1 and lines[1] == "" and not eol then
    return ""
  end
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

-- The answer ----------------------------------------------------------------------------------

---The answer for a review whose files are all decided.
---@param review tether.Review
---@return table
function M.answer(review)
  local files, accepted, rejected, reasons = {}, 0, 0, {}
  for i, file in ipairs(review.proposal.files) do
    local d = review.decisions[i]
    table.insert(files, { uri = file.uri, decision = d.decision, text = d.text })
    if d.decision == "accept" then
      accepted = accepted + 1
    else
      rejected = rejected + 1
      if d.reason and d.reason ~= "" and not vim.tbl_contains(reasons, d.reason) then
        table.insert(reasons, d.reason)
      end
    end
  end
  local reason = #reasons > 0 and table.concat(reasons, "; ") or nil
  if rejected == 0 then
    return { decision = "accept", files = files }
  elseif accepted == 0 then
    return { decision = "reject", reason = reason }
  end
  return { decision = "partial", files = files, reason = reason }
end

-- The tab -------------------------------------------------------------------------------------

---@param review tether.Review
local function close(review)
  for i, r in ipairs(M.pending) do
    if r == review then
      table.remove(M.pending, i)
      break
    end
  end
  if review.tab and vim.api.nvim_tabpage_is_valid(review.tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      vim.cmd.tabclose({ args = { vim.api.nvim_tabpage_get_number(review.tab) }, bang = true })
    end
  end
  for _, b in ipairs(review.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
  review.bufs = {}
end

---Sends the answer once every file is decided, and closes the tab.
---@param review tether.Review
local function maybe_finish(review)
  for i = 1, #review.proposal.files do
    if not review.decisions[i] then
      return false
    end
  end
  local answer = M.answer(review)
  close(review)
  if review.late then
    vim.notify("tether: the review was answered after tether stopped waiting; nothing was changed", vim.log.levels.WARN)
  end
  review.done(answer)
  return true
end

local show -- forward

---The next undecided file after the current one (wrapping), or nil.
---@param review tether.Review
---@return integer?
local function next_undecided(review)
  local n = #review.proposal.files
  for k = 1, n do
    local i = (review.current - 1 + k) % n + 1
    if not review.decisions[i] then
      return i
    end
  end
  return nil
end

---Decides the current file, then shows the next undecided one or answers.
---@param review tether.Review
---@param decision {decision: "accept"|"reject", text?: string, reason?: string}
local function decide(review, decision)
  review.decisions[review.current] = decision
  if not maybe_finish(review) then
    review.current = next_undecided(review) or review.current
    show(review)
  end
end

---The text the user lets through for file `i` (default: the current one): its proposed buffer's,
---`nil` when that is the proposal unchanged or was never shown.
---@param review tether.Review
---@param i? integer
---@return string?
local function edited_text(review, i)
  i = i or review.current
  local file = review.proposal.files[i]
  local bufs = review.file_bufs and review.file_bufs[i]
  local bufnr = bufs and bufs[2]
  if not file.newText or not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  local _, eol = to_lines(file.newText)
  local text = buffer_text(bufnr, eol or file.newText == "")
  if text ~= file.newText then
    return text
  end
  return nil
end

---Asks for an optional reason, then calls `k` with it (nil when none was given).
---@param prompt string
---@param k fun(reason?: string)
local function ask_reason(prompt, k)
  vim.ui.input({ prompt = prompt }, function(input)
    k((input and input ~= "") and input or nil)
  end)
end

---The review actions, by name; the keymaps call them.
M.actions = {
  accept_all = function(review)
    for i = 1, #review.proposal.files do
      review.decisions[i] = review.decisions[i] or { decision = "accept", text = edited_text(review, i) }
    end
    maybe_finish(review)
  end,
  reject_all = function(review)
    ask_reason("Reject the rest of the change, reason (optional): ", function(reason)
      for i = 1, #review.proposal.files do
        review.decisions[i] = review.decisions[i] or { decision = "reject", reason = reason }
      end
      maybe_finish(review)
    end)
  end,
  accept_file = function(review)
    decide(review, { decision = "accept", text = edited_text(review) })
  end,
  reject_file = function(review)
    local path = review.proposal.files[review.current].path
    ask_reason(("Reject %s, reason (optional): "):format(path), function(reason)
      decide(review, { decision = "reject", reason = reason })
    end)
  end,
  accept_hunk = function(review)
    local file = review.proposal.files[review.current]
    local bufnr = review.proposed_buf
    if not file.newText or vim.api.nvim_get_current_buf() ~= bufnr then
      vim.notify("tether: put the cursor on a hunk of the proposed text", vim.log.levels.WARN)
      return
    end
    local old = file.oldText or ""
    local _, eol = to_lines(file.newText)
    local new = buffer_text(bufnr, eol or file.newText == "")
    local line = vim.api.nvim_win_get_cursor(0)[1]
    local i = M.hunk_at(old, new, line)
    if not i then
      vim.notify("tether: no change under the cursor", vim.log.levels.WARN)
      return
    end
    decide(review, { decision = "accept", text = M.merge_hunks(old, new, { [i] = true }) })
  end,
  next_file = function(review)
    review.current = review.current % #review.proposal.files + 1
    show(review)
  end,
  prev_file = function(review)
    review.current = (review.current - 2) % #review.proposal.files + 1
    show(review)
  end,
}

---The keymaps of a review buffer: `{lhs, action, description}`.
M.keymaps = {
  { "ga", "accept_all", "accept the whole change" },
  { "gr", "reject_all", "reject the whole change" },
  { "fa", "accept_file", "accept this file (as edited)" },
  { "fr", "reject_file", "reject this file" },
  { "gh", "accept_hunk", "accept only the hunk under the cursor" },
  { "]f", "next_file", "next file" },
  { "[f", "prev_file", "previous file" },
}

---A scratch buffer of the review.
---@param review tether.Review
---@param name string
---@param lines string[]
---@param modifiable boolean
---@param path string
---@return integer
local function scratch(review, name, lines, modifiable, path)
  local bufnr = vim.api.nvim_create_buf(false, true)
  table.insert(review.bufs, bufnr)
  pcall(vim.api.nvim_buf_set_name, bufnr, ("tether://review/%d/%s"):format(review.id, name))
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = modifiable
  vim.bo[bufnr].modified = false
  -- Syntax only: a filetype would start its language servers and ftplugins on a scratch buffer.
  local ft = vim.filetype.match({ filename = path })
  if ft then
    vim.bo[bufnr].syntax = ft
  end
  for _, map in ipairs(M.keymaps) do
    vim.keymap.set("n", map[1], function()
      M.actions[map[2]](review)
    end, { buffer = bufnr, nowait = true, desc = "tether review: " .. map[3] })
  end
  return bufnr
end

---What a file's change does, in words, for changes without text to diff.
---@param file tether.ReviewFile
---@return string[]
local function describe(file)
  if file.kind == "rename" then
    return { ("rename %s -> %s"):format(file.path, file.newPath or file.newUri or "?") }
  elseif file.kind == "delete" then
    return { ("delete %s%s"):format(file.path, file.recursive and " (and everything in it)" or "") }
  elseif file.kind == "mkdir" then
    return { ("create the folder %s"):format(file.path) }
  end
  return { ("%s %s"):format(file.kind, file.path) }
end

---The header of the review: tool, caller, file, keys.
---@param review tether.Review
---@return string
local function header(review)
  local p = review.proposal
  local file = p.files[review.current]
  local decided = 0
  for i = 1, #p.files do
    decided = decided + (review.decisions[i] and 1 or 0)
  end
  local summary = type(p.summary) == "string" and (" — " .. p.summary) or ""
  local text = ("tether review: %s by %s%s | %d/%d %s [%s] | ga/gr all, fa/fr file, gh hunk, ]f next"):format(
    p.tool,
    p.caller,
    summary,
    review.current,
    #p.files,
    file.path,
    file.kind
  )
  return text:gsub("%%", "%%%%")
end

---Shows the current file of a review in its tab (made anew when it was closed).
---@param review tether.Review
show = function(review)
  if not (review.tab and vim.api.nvim_tabpage_is_valid(review.tab)) then
    vim.cmd("tabnew")
    review.tab = vim.api.nvim_get_current_tabpage()
    vim.bo.bufhidden = "wipe"
  else
    vim.api.nvim_set_current_tabpage(review.tab)
  end
  local file = review.proposal.files[review.current]
  -- One window, then the old text beside the proposed one.
  vim.cmd("silent! only")
  vim.cmd("diffoff!")
  local first = vim.api.nvim_get_current_win()
  -- Each file's buffers are made once, so that what the user typed in one survives a look at
  -- another file.
  review.file_bufs = review.file_bufs or {}
  local cached = review.file_bufs[review.current]
  if cached and not (vim.api.nvim_buf_is_valid(cached[1]) and vim.api.nvim_buf_is_valid(cached[2])) then
    cached = nil
  end
  if file.newText then
    if not cached then
      local old_lines = to_lines(file.oldText or "")
      local new_lines = to_lines(file.newText)
      cached = {
        scratch(review, "old/" .. file.path, old_lines, false, file.path),
        scratch(review, file.path, new_lines, true, file.path),
      }
      review.file_bufs[review.current] = cached
    end
    local old, new = cached[1], cached[2]
    review.proposed_buf = new
    vim.api.nvim_win_set_buf(first, old)
    vim.cmd("diffthis")
    vim.cmd("rightbelow vsplit")
    local right = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(right, new)
    vim.cmd("diffthis")
    for _, w in ipairs({ first, right }) do
      vim.wo[w].winbar = header(review)
      vim.wo[w].foldenable = false
    end
    vim.api.nvim_set_current_win(right)
    pcall(vim.api.nvim_win_set_cursor, right, { 1, 0 })
  else
    review.proposed_buf = nil
    local buf = scratch(review, file.path, describe(file), false, "")
    vim.api.nvim_win_set_buf(first, buf)
    vim.wo[first].winbar = header(review)
  end
end

---Shows a proposal and calls `done(answer)` once the user has decided every file.
---@param proposal table
---@param done fun(answer: table)
---@return tether.Review
function M.open(proposal, done)
  -- JSON nulls (`vim.NIL`) read as absent: `oldText` of a new file, the texts of a rename.
  for _, file in ipairs(proposal.files) do
    for key, value in pairs(file) do
      if value == vim.NIL then
        file[key] = nil
      end
    end
  end
  if proposal.summary == vim.NIL then
    proposal.summary = nil
  end
  next_id = next_id + 1
  ---@type tether.Review
  local review = {
    id = next_id,
    proposal = proposal,
    decisions = {},
    current = 1,
    bufs = {},
    done = done,
    late = false,
  }
  table.insert(M.pending, review)
  if #proposal.files == 0 then
    close(review)
    done({ decision = "accept" })
    return review
  end
  show(review)
  return review
end

---How long the server waits for this client's answer.
---@param client_id? integer
---@return integer
local function server_timeout(client_id)
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  local t = client and vim.tbl_get(client.config or {}, "init_options", "review", "timeout")
  return type(t) == "number" and t or M.server_timeout
end

---The `tether/review` handler.
---@param params table
---@param ctx lsp.HandlerContext
---@return table? result
---@return lsp.ResponseError? err
function M.handler(_, params, ctx)
  if type(params) ~= "table" or not vim.islist(params.files or {}) then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, "params.files is missing")
  end
  local review
  local answer = await.run(function(done)
    review = M.open(params, done)
    review.client_id = ctx and ctx.client_id
  end, server_timeout(ctx and ctx.client_id) + M.withdraw_grace)
  if answer == nil then
    -- The server has stopped waiting and applies nothing. It says so (`$/cancelRequest`, which
    -- closed the tab); one that does not leaves the tab, and answering closes it.
    if review and not review.withdrawn then
      review.late = true
      vim.notify(
        ("tether: %s waited too long for your review; nothing was applied"):format(params.tool or "the tool"),
        vim.log.levels.WARN
      )
    end
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestFailed, "no answer in time")
  end
  return answer
end

---`$/cancelRequest`: the server stopped waiting for the review of request `params.id` (its
---timeout passed, or the call was cancelled), and applies nothing: the review closes, saying so.
---@param params table
---@param ctx lsp.HandlerContext
function M.withdraw(_, params, ctx)
  local id = type(params) == "table" and params.id or nil
  for _, review in ipairs(M.pending) do
    local same_client = not (ctx and review.client_id) or review.client_id == ctx.client_id
    if id ~= nil and review.proposal.id == id and same_client then
      review.withdrawn = true
      close(review)
      vim.notify(
        ("tether: %s stopped waiting for your review; nothing was applied"):format(review.proposal.tool or "the tool"),
        vim.log.levels.WARN
      )
      review.done(nil)
      return
    end
  end
end

---`:Tether review`: goes to the pending review (choosing when there are several).
function M.focus()
  if #M.pending == 0 then
    vim.notify("tether: no change waits for review", vim.log.levels.INFO)
    return
  end
  if #M.pending == 1 then
    return show(M.pending[1])
  end
  vim.ui.select(M.pending, {
    prompt = "tether: changes waiting for review",
    format_item = function(r)
      return ("%s by %s (%d files)"):format(r.proposal.tool, r.proposal.caller, #r.proposal.files)
    end,
  }, function(r)
    if r then
      show(r)
    end
  end)
end

return M
