-- Another program changed the file of a buffer with unsaved changes (a shell's `sed -i`, a
-- formatter, an assistant's own file tools). tether merges that change into the buffer, three
-- ways, as one edit with its own undo step, and says so with `tether/diskChange`; this module keeps
-- Neovim's "changed on disk" prompts away for such a buffer, and gives the user the choice when the
-- change could not be merged.
--
-- - `FileChangedShell` (`:checktime`, focus): for a modified buffer tether serves, nothing is asked
--   (`v:fcs_choice` is empty) and tether is told to look at the file now
--   (`workspace/didChangeWatchedFiles`), in case its own watch has not yet; any other buffer gets
--   Neovim's usual behaviour (`ask`).
-- - After a merge, the next `:write` of the buffer would still warn that the file changed since it
--   was read (Neovim keeps the time it read the file, and no API moves it). While the file is
--   exactly as tether merged it (its size and time), that write is made with `:write!`, through a
--   one-shot `BufWriteCmd` that lets the usual write autocommands run. A file changed again since
--   gets the usual warning.
-- - A change over the unsaved lines is not merged: the user picks, with `vim.ui.select`, to keep
--   the buffer, to load the file, or to see tether's diff first.
-- - A buffer without unsaved changes whose file another program changed (`tether/diskReload`) is
--   checked at once (`:checktime`), so that it shows the file's new text now, not when Neovim next
--   looks (focus, a shell command): with 'autoread' (Neovim's default) it reloads, as one undo
--   step ('undoreload'); without it Neovim asks, as usual.

local M = {}

---@param bufnr integer
---@return string
local function group_name(bufnr)
  return "tether.disk." .. bufnr
end

---Whether the file at `path` is still as tether read it.
---@param path string
---@param params {size: integer, mtime?: integer[]}
---@return boolean
local function unchanged_since(path, params)
  local st = vim.uv.fs_stat(path)
  local mtime = params.mtime
  return st ~= nil
    and type(mtime) == "table"
    and st.size == params.size
    and st.mtime.sec == mtime[1]
    and st.mtime.nsec == mtime[2]
end

---Writes the buffer over a file whose change it already holds (see the module's comment).
---@param bufnr integer
---@param params {size: integer, mtime?: integer[]}
local function write_over_merged(bufnr, params)
  local group = vim.api.nvim_create_augroup(group_name(bufnr), { clear = true })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = bufnr,
    once = true,
    nested = true,
    desc = "tether: write over the file whose change the buffer took",
    callback = function(args)
      local target = vim.fn.fnamemodify(args.file, ":p")
      local own = vim.api.nvim_buf_get_name(bufnr)
      if target ~= own then
        -- Writing elsewhere: as usual, and the next write of the file itself is still covered.
        vim.cmd.write(vim.fn.fnameescape(target))
        write_over_merged(bufnr, params)
        return
      end
      vim.cmd(unchanged_since(own, params) and "write!" or "write")
    end,
  })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufDelete" }, {
    group = group,
    buffer = bufnr,
    once = true,
    callback = function()
      pcall(vim.api.nvim_del_augroup_by_name, group_name(bufnr))
    end,
  })
end

---Asks the user what to do with a change on disk that overlaps the unsaved lines.
---@param bufnr integer
---@param params {overlaps?: string, diff?: string}
local function choose(bufnr, params)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:.")
  local keep, load, diff =
    "Keep the buffer (saving it replaces the file)", "Load the file (drops the unsaved changes)", "Show the diff"
  local choices = { keep, load }
  if type(params.diff) == "string" then
    table.insert(choices, diff)
  end
  local prompt = ("tether: %s changed on disk where it has unsaved changes (%s); nothing was merged"):format(
    name,
    params.overlaps or "?"
  )
  vim.ui.select(choices, { prompt = prompt, kind = "tether.disk_change" }, function(choice)
    if choice == load and vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_call(bufnr, function()
        vim.cmd("edit!")
      end)
    elseif choice == diff then
      vim.cmd("new")
      local scratch = vim.api.nvim_get_current_buf()
      vim.bo[scratch].buftype = "nofile"
      vim.bo[scratch].bufhidden = "wipe"
      vim.api.nvim_buf_set_lines(scratch, 0, -1, false, vim.split(params.diff, "\n", { trimempty = true }))
      vim.bo[scratch].filetype = "diff"
      vim.bo[scratch].modifiable = false
      vim.notify(("tether: the diff from the buffer of %s to its file"):format(name), vim.log.levels.INFO)
    end
  end)
end

---The loaded buffer a notification's `uri` names, if any.
---@param params any
---@return integer?
local function loaded_buffer(params)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return nil
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  return vim.api.nvim_buf_is_loaded(bufnr) and bufnr or nil
end

---The `tether/diskChange` handler.
---@param params {uri: string, merged: boolean, size: integer, mtime?: integer[], overlaps?: string, diff?: string}
function M.handler(_, params)
  local bufnr = loaded_buffer(params)
  if not bufnr then
    return
  end
  if params.merged then
    write_over_merged(bufnr, params)
  else
    vim.schedule(function()
      choose(bufnr, params)
    end)
  end
end

---The `tether/diskReload` handler.
---@param params {uri: string}
function M.reload(_, params)
  local bufnr = loaded_buffer(params)
  if not bufnr then
    return
  end
  vim.schedule(function()
    -- Typed into since tether looked: Neovim's own check asks, as for any changed file.
    if vim.api.nvim_buf_is_valid(bufnr) and not vim.bo[bufnr].modified then
      vim.cmd.checktime(bufnr)
    end
  end)
end

---Whether `path` is under one of `client`'s workspace folders.
---@param client vim.lsp.Client
---@param path string
---@return boolean
local function in_workspace(client, path)
  for _, folder in ipairs(client.workspace_folders or {}) do
    local root = vim.uri_to_fname(folder.uri)
    if path == root or vim.startswith(path, root .. "/") then
      return true
    end
  end
  return false
end

---`LspAttach`: keeps the "changed on disk" prompt away for a buffer a tether client serves, when
---that client handles `tether/diskChange`.
---@param args {buf: integer, data: {client_id: integer}}
function M.on_attach(args)
  local client = vim.lsp.get_client_by_id(args.data.client_id)
  if
    not client
    or not require("tether.language_request").is_tether(client)
    or vim.tbl_get(client.capabilities or {}, "experimental", "tether", "diskChanges") ~= true
  then
    return
  end
  local bufnr = args.buf
  vim.api.nvim_create_autocmd("FileChangedShell", {
    group = vim.api.nvim_create_augroup("tether.disk_prompt." .. bufnr, { clear = true }),
    buffer = bufnr,
    desc = "tether: merge a change on disk into the unsaved buffer instead of asking",
    callback = function(args)
      local reason = vim.v.fcs_reason
      local path = vim.api.nvim_buf_get_name(args.buf)
      if
        (reason == "changed" or reason == "conflict")
        and vim.bo[args.buf].modified
        and not client.is_stopped()
        and (in_workspace(client, path) or in_workspace(client, vim.fn.resolve(path)))
      then
        vim.v.fcs_choice = ""
        require("tether.compat").notify(client, "workspace/didChangeWatchedFiles", {
          changes = { { uri = vim.uri_from_bufnr(args.buf), type = vim.lsp.protocol.FileChangeType.Changed } },
        })
      else
        vim.v.fcs_choice = "ask"
      end
    end,
  })
end

return M
