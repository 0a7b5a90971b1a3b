-- The build step of plugin managers: installs the `tether` binary matching this plugin (see
-- `:help tether-install`). lazy.nvim runs it with `build = "neovim/build.lua"` when the plugin
-- is tether's repository, and on its own when the plugin is this folder. Errors are raised, so
-- that the plugin manager shows the build as failed, with the message.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
-- The modules are found without this folder on 'runtimepath', which the plugin manager may add
-- only later.
package.path = ("%s/lua/?.lua;%s/lua/?/init.lua;%s"):format(here, here, package.path)
local path, err = require("tether.install").install()
if not path then
  error(err, 0)
end
