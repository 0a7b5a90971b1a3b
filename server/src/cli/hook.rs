//! `tether hook claude-code`: Claude Code's hooks, so that its built-in file tools meet the
//! editor's buffers (`tether setup claude-code` installs them).
//!
//! Claude Code runs the hook with one event as JSON on stdin and reads a decision from stdout.
//! Only files whose buffer has unsaved changes in an editor running `tether lsp` are touched; for
//! every other file the hook prints nothing and Claude Code goes on as it would:
//! - `PostToolUse` of `Read`: the result is replaced by the buffer's lines (the same page), and
//!   the model is told they are the unsaved buffer;
//! - `PreToolUse` of `Edit` and `Write`: tether makes the change in the buffer (one versioned
//!   edit, one undo step, the unsaved text kept, recorded in the journal as Claude Code's), and
//!   the built-in tool is stopped before it writes the file, with a reason that says what
//!   happened: the model reads it as the tool's (error) result.
//!
//! What it cannot cover: Claude Code checks an `Edit` against the file on disk before any hook
//! runs, so an edit of text that exists only in the unsaved buffer fails there ("String to
//! replace not found in file"); the model is told at its `Read` to use tether's `edit_file` for
//! such text.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestMetaObject};
use rmcp::ServiceExt as _;
use serde_json::{json, Value};

use crate::mcp::remote::Connector;

/// The journal's name for changes made through the hook.
pub const CLIENT: &str = "claude-code";

/// The profile whose tools the hook calls.
pub const PROFILE: &str = "standard";

/// What Claude Code should do with one hook event: the JSON to print, or `None` to let it go on.
pub async fn claude_code(input: &Value, connector: &dyn Connector) -> Option<Value> {
    let event = input.get("hook_event_name")?.as_str()?;
    let tool = input.get("tool_name")?.as_str()?;
    let tool_input = input.get("tool_input")?;
    let path = PathBuf::from(tool_input.get("file_path")?.as_str()?);
    if !path.is_absolute() || !matches!((event, tool), ("PostToolUse", "Read") | ("PreToolUse", "Edit" | "Write")) {
        return None;
    }
    let Some(editor) = Editor::reach(&path, connector).await else {
        let why = connector.unreachable()?;
        // Never on disk silently while an editor's tether lsp serves the file.
        return Some(context(
            event,
            &format!(
                "tether: the editor's tether lsp serves {} but could not be reached ({why}); this {tool} used the \
                 file on disk, not the editor's buffer, which may hold unsaved changes",
                path.display()
            ),
        ));
    };
    if !editor.has_unsaved(&path).await {
        return None;
    }
    let name = path.display().to_string();
    match tool {
        "Read" => editor.read(&path, tool_input, input.get("tool_response")?).await,
        "Edit" => {
            let args = json!({
                "path": name,
                "old_string": tool_input.get("old_string")?,
                "new_string": tool_input.get("new_string")?,
                "replace_all": tool_input.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
            });
            Some(editor.change("edit_file", args, &path).await)
        }
        _ => {
            let args = json!({ "path": name, "content": tool_input.get("content")? });
            Some(editor.change("write_file", args, &path).await)
        }
    }
}

/// A `PreToolUse` or `PostToolUse` answer that only adds `text` for the model.
fn context(event: &str, text: &str) -> Value {
    json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } })
}

/// A session with the editor's `tether lsp`, over its bridge socket.
struct Editor {
    session: rmcp::service::RunningService<rmcp::RoleClient, ()>,
}

/// A tool's answer: its text, and whether it is an error.
struct Answer {
    text: String,
    error: bool,
}

impl Editor {
    /// The `tether lsp` serving the folder of `path`, if one is live and answers.
    async fn reach(path: &Path, connector: &dyn Connector) -> Option<Editor> {
        let conn = connector.connect(path.parent()?).await?;
        let session = ().serve(crate::mcp::LineTransport::new(conn.reader, conn.writer)).await.ok()?;
        Some(Editor { session })
    }

    async fn call(&self, tool: &str, args: Value) -> Option<Answer> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        let mut meta = RequestMetaObject::default();
        meta.insert(crate::mcp::CLIENT_META.to_owned(), Value::String(CLIENT.to_owned()));
        params.meta = Some(meta);
        let CallToolResponse::Complete(result) = self.session.peer().call_tool_once(params).await.ok()? else {
            return None;
        };
        let text = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
        Some(Answer { text, error: result.is_error == Some(true) })
    }

    /// Whether the editor has `path` open with unsaved changes.
    async fn has_unsaved(&self, path: &Path) -> bool {
        let Some(stat) = self.call("stat", json!({ "path": path.display().to_string() })).await else { return false };
        let stat: Value = serde_json::from_str(&stat.text).unwrap_or_default();
        stat["open"] == json!(true) && stat["dirty"] == json!(true)
    }

    /// The `Read` result with the buffer's lines in place of the file's.
    async fn read(&self, path: &Path, input: &Value, response: &Value) -> Option<Value> {
        let mut args = json!({ "path": path.display().to_string() });
        for key in ["offset", "limit"] {
            if let Some(n) = input.get(key).filter(|v| v.is_i64()) {
                args[key] = n.clone();
            }
        }
        let page = self.call("read_file", args).await.filter(|a| !a.error)?;
        let lines: Vec<&str> = page.text.lines().map_while(numbered).collect();
        let stat = self.call("stat", json!({ "path": path.display().to_string() })).await?;
        let total = serde_json::from_str::<Value>(&stat.text).ok()?.get("lines").cloned().unwrap_or(Value::Null);
        let mut updated = response.clone();
        let file = updated.get_mut("file")?;
        file["content"] = Value::String(lines.join("\n"));
        file["numLines"] = json!(lines.len());
        file["totalLines"] = total;
        Some(json!({ "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": updated,
            "additionalContext": format!(
                "tether: these lines are the editor's buffer of {}, which has unsaved changes (the file on disk \
                 differs). Edit and Write of this file go to that buffer through tether; to replace text that is only \
                 in the buffer, use tether's edit_file (the built-in Edit checks the file on disk first).",
                path.display()
            ),
        }}))
    }

    /// Makes a change in the buffer through `tool`, and stops the built-in tool, saying what
    /// happened.
    async fn change(&self, tool: &str, args: Value, path: &Path) -> Value {
        let reason = match self.call(tool, args).await {
            Some(Answer { error: false, .. }) => format!(
                "tether made this change in the editor's buffer of {}, which has unsaved changes: the buffer now holds \
                 it (one undo step), and the file on disk was not written, so that the unsaved changes are kept. The \
                 change is done; do not make it again.",
                path.display()
            ),
            Some(Answer { error: true, text }) => format!(
                "tether could not make this change in the editor's buffer of {}, which has unsaved changes; nothing \
                 was changed: {}",
                path.display(),
                text.trim()
            ),
            None => format!(
                "the editor's buffer of {} has unsaved changes, and tether lost its connection to the editor before \
                 it could say whether this change was made there; read the file again before redoing it",
                path.display()
            ),
        };
        json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }})
    }
}

/// The text of one `read_file` line (`     12\ttext`), or `None` past the numbered lines.
fn numbered(line: &str) -> Option<&str> {
    let (number, text) = line.split_once('\t')?;
    number.trim_start().parse::<u64>().ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines_are_read_until_the_first_other_line() {
        let page = "     1\talpha\n     2\t\tindented\n\n[version: 1]";
        let lines: Vec<&str> = page.lines().map_while(numbered).collect();
        assert_eq!(lines, ["alpha", "\tindented"]);
    }
}
