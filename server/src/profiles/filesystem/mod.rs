//! The `filesystem` profile: the MCP filesystem server's tools and its extensions.
//!
//! Tool names, parameters (with the legacy aliases it accepts silently), output formats and
//! JSON-RPC error codes follow that contract: -32001 for a path outside the allowed
//! directories, -32002 for a missing file or a glob that matched nothing, -32602 for a missing
//! or mistyped parameter, -32603 for everything else (an edit that did not match, an invalid
//! regex, an I/O failure). A command's failure is not an error: `run_command` answers with
//! `isError` and the output. The work is done by tether's core: paths go through the sandbox,
//! reads through the read view (so an editor's unsaved buffers are seen) and changes through
//! the sink, as one all-or-nothing plan per call.
//!
//! `docs/profiles/filesystem.md` lists the tools and every choice made where the contract is
//! vague.

mod args;
mod edit;
mod files;
mod run;
mod search;

use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::sink::{self, Sink};
use crate::tools::{Context, Effects};

pub use args::Args;

/// JSON-RPC code: the path is outside the allowed directories.
pub const PATH_NOT_ALLOWED: i32 = -32001;
/// JSON-RPC code: the file does not exist, or a glob matched no files.
pub const NOT_FOUND: i32 = -32002;
/// JSON-RPC code: a parameter is missing or of the wrong type.
pub const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC code: an edit that did not apply, an invalid regex, an I/O failure.
pub const INTERNAL: i32 = -32603;

/// The `filesystem` profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filesystem;

/// What a tool does to the world.
const WRITE: Effects = Effects { read_only: false, destructive: true, idempotent: false, open_world: false };
const WRITE_IDEMPOTENT: Effects = Effects { read_only: false, destructive: false, idempotent: true, open_world: false };
const COMMAND: Effects = Effects { read_only: false, destructive: true, idempotent: false, open_world: true };

/// A tool of this profile: its listing and its entry point.
type Entry = super::Entry<fn(&Call<'_>, &Args) -> Result<CallResult, CallError>>;

/// One call's context and sink.
pub(crate) struct Call<'a> {
    ctx: &'a Context<'a>,
    sink: &'a dyn Sink,
}

#[rustfmt::skip] // One tool per entry, in the contract's order.
const TOOLS: &[Entry] = &[
    Entry { name: "read_file", description: files::READ_FILE, schema: files::path_schema, effects: Effects::READ, quick: true, run: files::read_file },
    Entry { name: "read_text_file", description: files::READ_TEXT_FILE, schema: files::path_schema, effects: Effects::READ, quick: true, run: files::read_file },
    Entry { name: "read_multiple_files", description: files::READ_MULTIPLE, schema: files::paths_schema, effects: Effects::READ, quick: false, run: files::read_multiple_files },
    Entry { name: "write_file", description: files::WRITE_FILE, schema: files::write_schema, effects: WRITE, quick: true, run: files::write_file },
    Entry { name: "create_directory", description: files::CREATE_DIRECTORY, schema: files::path_schema, effects: WRITE_IDEMPOTENT, quick: true, run: files::create_directory },
    Entry { name: "list_directory", description: files::LIST_DIRECTORY, schema: files::path_schema, effects: Effects::READ, quick: true, run: files::list_directory },
    Entry { name: "directory_tree", description: files::DIRECTORY_TREE, schema: files::tree_schema, effects: Effects::READ, quick: false, run: files::directory_tree },
    Entry { name: "move_file", description: files::MOVE_FILE, schema: files::move_schema, effects: WRITE, quick: false, run: files::move_file },
    Entry { name: "delete", description: files::DELETE, schema: files::path_schema, effects: WRITE, quick: false, run: files::delete },
    Entry { name: "get_file_info", description: files::GET_FILE_INFO, schema: files::path_schema, effects: Effects::READ, quick: true, run: files::get_file_info },
    Entry { name: "list_allowed_directories", description: files::LIST_ALLOWED, schema: files::empty_schema, effects: Effects::READ, quick: true, run: files::list_allowed_directories },
    Entry { name: "edit_file", description: edit::EDIT_FILE, schema: edit::edit_file_schema, effects: WRITE, quick: true, run: edit::edit_file },
    Entry { name: "edit_files", description: edit::EDIT_FILES, schema: edit::edit_files_schema, effects: WRITE, quick: false, run: edit::edit_files },
    Entry { name: "search_files", description: search::SEARCH_FILES, schema: search::search_files_schema, effects: Effects::READ, quick: false, run: search::search_files },
    Entry { name: "grep_files", description: search::GREP_FILES, schema: search::grep_files_schema, effects: Effects::READ, quick: false, run: search::grep_files },
    Entry { name: "glob_search", description: search::GLOB_SEARCH, schema: search::glob_search_schema, effects: Effects::READ, quick: false, run: search::glob_search },
    Entry { name: "run_command", description: run::RUN_COMMAND, schema: run::schema, effects: COMMAND, quick: false, run: run::run_command },
];

impl Profile for Filesystem {
    fn name(&self) -> &'static str {
        "filesystem"
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        super::listed(TOOLS, config)
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let tool = super::served(TOOLS, name, ctx.config)?;
        let args = Args::new(args)?;
        (tool.run)(&Call { ctx, sink }, &args)
    }

    fn error_result(&self, e: &Error) -> CallResult {
        CallResult { text: format!("Error: {}", e.message()), structured: None, items: Vec::new(), is_error: true }
    }
}

impl Call<'_> {
    /// Applies `plan` through the sink, all or nothing.
    fn apply(&self, plan: &crate::edit::EditPlan) -> Result<(), CallError> {
        sink::apply(self.sink, self.ctx.config, self.ctx.vfs, plan).map(|_| ()).map_err(core)
    }
}

/// A JSON-RPC error with `code` and `message`.
pub(crate) fn rpc(code: i32, message: impl Into<String>) -> CallError {
    CallError::Rpc { code, message: message.into(), data: None }
}

/// The JSON-RPC code of a core error kind.
pub(crate) fn code_of(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::PathEscape => PATH_NOT_ALLOWED,
        ErrorKind::NotFound => NOT_FOUND,
        _ => INTERNAL,
    }
}

/// A core error in the contract's codes. Parameters are checked by the profile before the core
/// sees them, so what the core still refuses (a file in the way, a root that cannot be moved)
/// is an operation that failed: -32603.
pub(crate) fn core(e: Error) -> CallError {
    let code = code_of(e.kind());
    let message = match e.kind() {
        ErrorKind::PathEscape => {
            format!("Access denied - path outside allowed directories: {}", e.path().unwrap_or(e.message()))
        }
        _ => e.message().to_owned(),
    };
    rpc(code, message)
}

/// A successful text result.
pub(crate) fn ok(text: impl Into<String>) -> CallResult {
    CallResult { text: text.into(), structured: None, items: Vec::new(), is_error: false }
}

/// A JSON schema object with `properties` and `required`.
pub(crate) fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

#[cfg(all(test, unix))]
mod tests;
