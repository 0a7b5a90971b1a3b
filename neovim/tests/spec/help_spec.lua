-- :help tether opens the vimdoc, and its tags are unique.
local H = require("helpers")

H.test(":help tether opens doc/tether.txt", function()
  -- A copy of the docs comes first on the runtime path, so that setup() makes its tags there, as
  -- it does for a user whose plugin manager skipped them, and the repository gets no tags file.
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy .. "/doc", "p")
  H.write(copy .. "/doc/tether.txt", H.read(vim.api.nvim_get_runtime_file("doc/tether.txt", false)[1]))
  vim.opt.runtimepath:prepend(copy)
  require("tether").setup({ binary = "/nonexistent/tether" })
  H.truthy(vim.uv.fs_stat(copy .. "/doc/tags"), "setup() made the tags")
  vim.cmd.helptags(vim.fn.fnameescape(copy .. "/doc")) -- raises on a duplicate tag
  vim.cmd("help tether")
  H.eq("help", vim.bo.buftype, "buftype")
  H.truthy(vim.api.nvim_buf_get_name(0):find("doc/tether.txt$"), vim.api.nvim_buf_get_name(0))
  for _, tag in ipairs({
    "tether-setup",
    ":Tether",
    "tether.mcp_server()",
    "tether-lazy.nvim",
    "tether-vim.pack",
    "tether-mcphub",
    "tether-avante",
    "tether-codecompanion",
    "TetherChanged",
    "tether-knowledge",
    "tether-diagnostics",
    "tether-context",
    "tether-language-requests",
    "tether-review",
    ":Tether-review",
    "tether-history",
    ":Tether-history",
    ":Tether-undo",
    ":Tether-install",
    "tether-binary",
    "tether-protocol",
    "tether.install.install()",
  }) do
    local ok, err = pcall(vim.cmd.help, tag)
    H.truthy(ok, ("tag %s: %s"):format(tag, tostring(err)))
  end
end)

H.finish()
