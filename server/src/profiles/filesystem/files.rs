//! The file tools: reads, writes, listings, the tree, moves, deletes and file information.

use serde::Serialize;
use serde_json::{json, Value};

use super::args::{invalid, Args};
use super::{core, object_schema, ok, rpc, Call, INTERNAL, NOT_FOUND};
use crate::error::ErrorKind;
use crate::profiles::{CallError, CallResult};
use crate::tools::contract::dir_tree::{dir_tree, DirTree, TreeNode};
use crate::tools::contract::overwrite::{overwrite, Overwrite};
use crate::tools::contract::text_or_bytes::{read_content, Content};
use crate::tools::{delete as core_delete, mkdir, r#move};
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// How the items of a result that the contract shows as several content items are joined into
/// the one text item tether's frontends carry.
pub const ITEM_SEPARATOR: &str = "\n---\n";
/// The most paths `read_multiple_files` takes.
pub const MAX_PATHS: usize = 50;

pub(super) const READ_FILE: &str =
    "Read a file's complete contents. `path` is absolute inside an allowed directory (or \
relative to the first one). Text comes back as UTF-8 text; a binary file comes back as base64 with its MIME type \
instead of failing. Errors: -32001 path not allowed, -32002 not found, -32603 read failed.";
pub(super) const READ_TEXT_FILE: &str = "Same as read_file (the name newer MCP filesystem clients use): a file's \
complete contents as text, or base64 with its MIME type for a binary file.";
pub(super) const READ_MULTIPLE: &str = "Read up to 50 files at once. `paths` are literal paths (globs are not \
expanded). Each file's part starts with `path:` and a newline, then its content; a file that cannot be read shows \
`[error: ...]` in its place, and the call itself never fails for one file. Parts are separated by a `---` line.";
pub(super) const WRITE_FILE: &str =
    "Create a file or overwrite it completely with `content` (UTF-8), creating missing \
parent directories. Answers `Successfully wrote <path>`.";
pub(super) const CREATE_DIRECTORY: &str = "Create a directory and any missing parents (mkdir -p); an existing \
directory is fine.";
pub(super) const LIST_DIRECTORY: &str = "List a directory's entries, one per line, each prefixed `[FILE]` or `[DIR]`, \
sorted by name.";
pub(super) const DIRECTORY_TREE: &str = "A directory's tree as JSON: one root object `{name, type, children}` where \
type is `file` or `directory` and directories have `children`. `depth` caps the recursion like find -maxdepth: \
omitted = unlimited, 0 = the root only, 1 = the root and its entries, N = N levels; a directory whose entries were \
cut off by `depth` has no `children` key.";
pub(super) const MOVE_FILE: &str = "Move or rename a file or directory, creating the destination's missing parents. \
An existing destination is refused.";
pub(super) const DELETE: &str = "Delete a file, or a directory with everything in it.";
pub(super) const GET_FILE_INFO: &str = "A file's or directory's metadata as lines: `type: file|directory`, `size: \
<bytes>`, `modified: <ISO 8601>`, `permissions: <octal>`.";
pub(super) const LIST_ALLOWED: &str = "The directories this server may access, one per line: `<path> (read-write)` \
or `<path> (read-only)`.";

pub(super) fn path_schema() -> Value {
    object_schema(
        json!({"path": {"type": "string", "description": "Absolute path (or relative to the first allowed directory)"}}),
        &["path"],
    )
}

pub(super) fn paths_schema() -> Value {
    object_schema(
        json!({"paths": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_PATHS,
            "description": "Literal file paths (at most 50; globs are not expanded)"}}),
        &["paths"],
    )
}

pub(super) fn write_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "description": "Path of the file to write (missing parents are created)"},
            "content": {"type": "string", "description": "The complete new content, UTF-8"},
        }),
        &["path", "content"],
    )
}

pub(super) fn tree_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "description": "Root directory of the tree"},
            "depth": {"type": "integer", "minimum": 0,
                "description": "Max recursion depth: omit for unlimited, 0 = root only, 1 = root and its entries"},
        }),
        &["path"],
    )
}

pub(super) fn move_schema() -> Value {
    object_schema(
        json!({
            "source": {"type": "string", "description": "Path to move"},
            "destination": {"type": "string", "description": "New path (missing parents are created)"},
        }),
        &["source", "destination"],
    )
}

pub(super) fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Resolves the path parameter `key`.
fn resolve(call: &Call<'_>, args: &Args, key: &str) -> Result<SandboxPath, CallError> {
    let given = args.req_str(key)?;
    call.ctx.vfs.resolve(&given).map_err(core)
}

pub(super) fn read_file(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let path = resolve(call, args, "path")?;
    match read(call, &path)? {
        Content::Text(text) => Ok(ok(text)),
        Content::Binary { bytes, mime } => {
            let blob = base64(&bytes);
            let text = format!("[binary file {}: {} bytes, {mime}, base64]\n{blob}", path.given(), bytes.len());
            let uri = format!("file://{}", path.path().display());
            let items = vec![super::super::Item::Blob { uri, data: blob, mime_type: mime.to_string() }];
            Ok(CallResult { text, structured: None, items, is_error: false })
        }
    }
}

/// Reads `path`: the open buffer or the decoded file, or its bytes when it is binary. A
/// directory or another failure to read is -32603, a missing file -32002.
fn read(call: &Call<'_>, path: &SandboxPath) -> Result<Content, CallError> {
    read_content(call.ctx, path).map_err(|e| match e.kind() {
        ErrorKind::NotFound | ErrorKind::PathEscape => core(e),
        _ => rpc(INTERNAL, format!("read failed: {}", e.message())),
    })
}

pub(super) fn read_multiple_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let paths = args.req_strs("paths")?;
    if paths.len() > MAX_PATHS {
        return Err(invalid(format!("`paths` holds {} paths; at most {MAX_PATHS} are read at once", paths.len())));
    }
    let items: Vec<String> = paths
        .iter()
        .map(|given| {
            let content = call.ctx.vfs.resolve(given).map_err(core).and_then(|p| read(call, &p));
            match content {
                Ok(Content::Text(text)) => format!("{given}:\n{text}"),
                Ok(Content::Binary { bytes, mime }) => format!(
                    "{given}:\n[error: binary file ({} bytes, {mime}); read it alone with read_file]",
                    bytes.len()
                ),
                Err(e) => format!("{given}:\n[error: {e}]"),
            }
        })
        .collect();
    Ok(CallResult::texts(items, ITEM_SEPARATOR, false))
}

pub(super) fn write_file(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let given = args.req_str("path")?;
    let content = args.req_text("content")?;
    let path = call.ctx.vfs.resolve(&given).map_err(core)?;
    let write_failed = |e: crate::error::Error| match e.kind() {
        ErrorKind::PathEscape => core(e),
        _ => rpc(INTERNAL, format!("write failed: {}", e.message())),
    };
    let plan = overwrite(call.ctx, Overwrite { path, content }).map_err(write_failed)?;
    call.apply(&plan).map_err(|e| match e {
        CallError::Rpc { code: INTERNAL, message, data } => {
            CallError::Rpc { code: INTERNAL, message: format!("write failed: {message}"), data }
        }
        other => other,
    })?;
    Ok(ok(format!("Successfully wrote {given}")))
}

pub(super) fn create_directory(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let given = args.req_str("path")?;
    let out = mkdir::mkdir(call.ctx, mkdir::MkdirArgs { path: given.clone() }).map_err(core)?;
    apply_output(call, out)?;
    Ok(ok(format!("Successfully created directory {given}")))
}

/// Applies the plan of a core tool's output.
fn apply_output(call: &Call<'_>, out: crate::tools::Output) -> Result<(), CallError> {
    match out {
        crate::tools::Output::Change { plan, .. } => call.apply(&plan),
        _ => Ok(()),
    }
}

pub(super) fn list_directory(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let path = resolve(call, args, "path")?;
    let entries = call.ctx.vfs.read_dir(&path).map_err(core)?;
    let lines: Vec<String> = entries
        .iter()
        .map(|(name, _, kind)| format!("{} {name}", if *kind == EntryKind::Dir { "[DIR]" } else { "[FILE]" }))
        .collect();
    Ok(ok(lines.join("\n")))
}

pub(super) fn directory_tree(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let path = resolve(call, args, "path")?;
    let depth = args.int("depth", 0, i64::from(u32::MAX))?.map(|d| d as usize);
    let tree = dir_tree(call.ctx, DirTree { path, depth }).map_err(core)?;
    Ok(ok(serde_json::to_string_pretty(&Node::from(tree)).unwrap_or_default()))
}

/// A node of `directory_tree`, its fields in the contract's order.
#[derive(Debug, Serialize)]
struct Node {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    children: Option<Vec<Node>>,
}

impl From<TreeNode> for Node {
    fn from(t: TreeNode) -> Node {
        Node {
            name: t.name,
            kind: if t.is_dir { "directory" } else { "file" },
            children: t.children.map(|c| c.into_iter().map(Node::from).collect()),
        }
    }
}

pub(super) fn move_file(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let source = args.req_str("source")?;
    let destination = args.req_str("destination")?;
    let out = r#move::r#move(
        call.ctx,
        r#move::MoveArgs { source: source.clone(), destination: destination.clone(), overwrite: false },
    )
    .map_err(core)?;
    apply_output(call, out)?;
    Ok(ok(format!("Successfully moved {source} to {destination}")))
}

pub(super) fn delete(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let given = args.req_str("path")?;
    let out = core_delete::delete(call.ctx, core_delete::DeleteArgs { path: given.clone(), recursive: true })
        .map_err(core)?;
    apply_output(call, out)?;
    Ok(ok(format!("Successfully deleted {given}")))
}

pub(super) fn get_file_info(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let path = resolve(call, args, "path")?;
    let meta = call.ctx.vfs.metadata(&path).map_err(core)?;
    let kind = match meta.kind {
        EntryKind::Dir => "directory",
        EntryKind::File => "file",
        EntryKind::Symlink | EntryKind::Other => "other",
    };
    let modified = meta.modified.map(|t| humantime::format_rfc3339_millis(t).to_string()).unwrap_or_default();
    let permissions = meta.mode.map(|m| format!("{:03o}", m & 0o777)).unwrap_or_default();
    Ok(ok(format!("type: {kind}\nsize: {}\nmodified: {modified}\npermissions: {permissions}", meta.len)))
}

pub(super) fn list_allowed_directories(call: &Call<'_>, _args: &Args) -> Result<CallResult, CallError> {
    let mode = if call.ctx.config.read_only { "read-only" } else { "read-write" };
    let lines: Vec<String> =
        call.ctx.vfs.workspace().roots().iter().map(|r| format!("{} ({mode})", r.display())).collect();
    Ok(ok(lines.join("\n")))
}

/// A -32002 error.
pub(super) fn not_found(message: impl Into<String>) -> CallError {
    rpc(NOT_FOUND, message)
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
