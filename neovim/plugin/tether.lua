-- tether's user command. Everything else loads on first use.

if vim.g.loaded_tether then
  return
end
vim.g.loaded_tether = true

vim.api.nvim_create_user_command("Tether", function(cmd)
  require("tether.commands").run(cmd.args)
end, {
  nargs = "+",
  desc = "tether: tools, call {tool} {json}, grep {pattern}, status, log",
  complete = function(arglead, cmdline)
    return require("tether.commands").complete(arglead, cmdline)
  end,
})
