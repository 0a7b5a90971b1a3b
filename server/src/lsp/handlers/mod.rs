//! One file per LSP request or notification; `server.rs` is the one dispatch to them.

pub(crate) mod debug_document;
pub(crate) mod did_change;
pub(crate) mod did_change_configuration;
pub(crate) mod did_change_watched_files;
pub(crate) mod did_change_workspace_folders;
pub(crate) mod did_close;
pub(crate) mod did_open;
pub(crate) mod did_save;
pub(crate) mod execute_command;
pub(crate) mod initialize;
pub(crate) mod publish_diagnostics;
