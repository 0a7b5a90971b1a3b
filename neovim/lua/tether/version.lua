-- The plugin's version and the protocol it speaks: what `:Tether install` downloads, what
-- `:checkhealth tether` compares the binary with, and what the client announces and accepts.

---@class tether.Version
---@field version string The plugin's version: `:Tether install` fetches the `tether` release of this version, and `:checkhealth tether` warns when the binary prints another one.
---@field protocol integer The tether protocol this plugin speaks (`editors/protocol.md`), announced as the client capability `experimental.tether.protocolVersion`; a server whose `minProtocolVersion` is above it is refused.
---@field min_server_protocol integer The oldest server protocol (`experimental.tether.protocolVersion` of the server) this plugin works with; an older server is refused.

---@type tether.Version
return { version = "0.1.0", protocol = 3, min_server_protocol = 1 }
