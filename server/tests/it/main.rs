//! tether's integration tests, in one binary so that the crate and the shared support module
//! are compiled once (each file under `tests/` used to be a binary of its own). One module per
//! area; `lsp_support` is the scripted editor and the in-process LSP session they share.

mod lsp_support;

// Unix-only areas: the bridge over a Unix socket (the named pipe's is tests/windows'), kills by
// signal, and the command runner's process groups and `/bin/sh`.

#[cfg(unix)]
mod bridge;
mod bridge_inprocess;
mod cli_call;
mod contention;
#[cfg(unix)]
mod crash_safety;
mod edit_fidelity;
mod journal;
mod lsp_binary;
mod lsp_commands;
mod lsp_delivery;
mod lsp_disk;
mod lsp_edits;
mod lsp_journal;
mod lsp_knowledge;
mod lsp_protocol_doc;
mod lsp_review;
mod lsp_sync;
mod mcp_inprocess;
mod mcp_stdio;
mod overlap;
mod patch_fidelity;
mod read_only;
#[cfg(unix)]
mod run_exec;
mod run_profile;
#[cfg(unix)]
mod run_tool;
