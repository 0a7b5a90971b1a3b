-- luacheck (Debian's lua-check) settings for the plugin and its specs.
std = "luajit"
globals = { "vim" }
max_line_length = false
