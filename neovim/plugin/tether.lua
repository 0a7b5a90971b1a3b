-- tether's user command, and the one autocommand that forwards diagnostics and keeps Neovim's
-- "changed on disk" prompt away where tether merges. Everything else loads on first use.

if vim.g.loaded_tether then
  return
end
vim.g.loaded_tether = true

vim.api.nvim_create_user_command("Tether", function(cmd)
  require("tether.commands").run(cmd.args)
end, {
  nargs = "+",
  desc = "tether: tools, call {tool} {json}, grep {pattern}, status, log, review, history [path], undo [id], install",
  complete = function(arglead, cmdline)
    return require("tether.commands").complete(arglead, cmdline)
  end,
})

-- The diagnostics tether's clients are sent (`tether/publishDiagnostics`): the versions the
-- language servers computed them for are recorded from their first attach on.
if vim.fn.has("nvim-0.10") == 1 then
  vim.api.nvim_create_autocmd("LspAttach", {
    group = vim.api.nvim_create_augroup("tether.attach", { clear = true }),
    desc = "tether: forward the language servers' diagnostics; merge changes on disk",
    callback = function(args)
      require("tether.diagnostics").on_attach(args)
      require("tether.disk").on_attach(args)
    end,
  })
end
