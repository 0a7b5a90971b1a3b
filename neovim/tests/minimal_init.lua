-- The init file of every spec: the plugin on the runtime path, nothing else of the user's.
local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin = vim.fn.fnamemodify(tests, ":h")
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
package.path = tests .. "/?.lua;" .. package.path
