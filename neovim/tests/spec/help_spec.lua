-- :help tether opens the vimdoc, and its tags are unique.
local H = require("helpers")

H.test(":help tether opens doc/tether.txt", function()
  -- Tags are made in a copy, as a plugin manager would, so that the repository gets no tags file.
  local src = vim.api.nvim_get_runtime_file("doc/tether.txt", false)[1]
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy .. "/doc", "p")
  H.write(copy .. "/doc/tether.txt", H.read(src))
  vim.cmd.helptags(vim.fn.fnameescape(copy .. "/doc"))
  vim.opt.runtimepath:prepend(copy)
  vim.cmd("help tether")
  H.eq("help", vim.bo.buftype, "buftype")
  H.truthy(vim.api.nvim_buf_get_name(0):find("doc/tether.txt$"), vim.api.nvim_buf_get_name(0))
  for _, tag in ipairs({ "tether-setup", ":Tether", "tether.mcp_server()", "tether-lazy.nvim", "tether-vim.pack" }) do
    local ok, err = pcall(vim.cmd.help, tag)
    H.truthy(ok, ("tag %s: %s"):format(tag, tostring(err)))
  end
end)

H.finish()
