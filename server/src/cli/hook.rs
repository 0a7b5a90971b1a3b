//! `tether hook claude-code|gemini|codex`: the assistants' hooks, so that their built-in file
//! tools meet the editor's buffers (`tether setup` installs them).
//!
//! The assistant runs the hook with one event as JSON on stdin and reads a decision from stdout.
//! Only files whose buffer has unsaved changes in an editor running `tether lsp` are touched; for
//! every other file the hook prints nothing and the assistant goes on as it would:
//! - a read (Claude Code's `Read`, after it ran): Claude Code's result is replaced by the buffer's
//!   lines (the same page); Gemini CLI cannot replace a result, so the buffer's lines are added to
//!   it, said to be the unsaved buffer's;
//! - an edit or a write (Claude Code's `Edit` and `Write`, Gemini CLI's `replace` and
//!   `write_file`, Codex CLI's `apply_patch` when one of its files has unsaved changes, before
//!   they run): tether makes the change in the buffer (one versioned edit,
//!   one undo step, the unsaved text kept, recorded in the journal as the assistant's), and the
//!   built-in tool is stopped before it writes the file, with a reason that says what happened:
//!   the model reads it as the tool's (error) result.
//!
//! What it cannot cover: Claude Code checks an `Edit` against the file on disk before any hook
//! runs, so an edit of text that exists only in the unsaved buffer fails there ("String to
//! replace not found in file"); the model is told at its read to use tether's `edit_file` for
//! such text.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestMetaObject};
use rmcp::ServiceExt as _;
use serde_json::{json, Value};

use crate::mcp::remote::Connector;

/// The profile whose tools the hook calls.
pub const PROFILE: &str = "standard";

/// The assistants whose hooks tether answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Assistant {
    /// Claude Code: `PostToolUse` of Read, `PreToolUse` of Edit and Write.
    ClaudeCode,
    /// Gemini CLI: `AfterTool` of read_file, `BeforeTool` of replace and write_file.
    Gemini,
    /// Codex CLI: `PreToolUse` of apply_patch.
    Codex,
}

impl Assistant {
    /// The journal's name for changes made through its hook.
    pub fn client(self) -> &'static str {
        match self {
            Assistant::ClaudeCode => "claude-code",
            Assistant::Gemini => "gemini-cli",
            Assistant::Codex => "codex",
        }
    }
}

/// What one hook event asks for.
enum Asked<'a> {
    Read { offset: Option<i64>, limit: Option<i64> },
    Edit { old: &'a Value, new: &'a Value, all: bool },
    Write { content: &'a Value },
}

/// What the assistant should do with one hook event: the JSON to print, or `None` to let it go on.
pub async fn answer(assistant: Assistant, input: &Value, connector: &dyn Connector) -> Option<Value> {
    let event = input.get("hook_event_name")?.as_str()?;
    let tool = input.get("tool_name")?.as_str()?;
    let args = input.get("tool_input")?;
    let asked = match (assistant, event, tool) {
        (Assistant::ClaudeCode, "PostToolUse", "Read") => Asked::Read {
            offset: args.get("offset").and_then(Value::as_i64),
            limit: args.get("limit").and_then(Value::as_i64),
        },
        (Assistant::Gemini, "AfterTool", "read_file") => {
            let start = args.get("start_line").and_then(Value::as_i64);
            let end = args.get("end_line").and_then(Value::as_i64);
            Asked::Read { offset: start, limit: end.map(|e| e - start.unwrap_or(1) + 1) }
        }
        (Assistant::ClaudeCode, "PreToolUse", "Edit") => Asked::Edit {
            old: args.get("old_string")?,
            new: args.get("new_string")?,
            all: args.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
        },
        (Assistant::Gemini, "BeforeTool", "replace") => Asked::Edit {
            old: args.get("old_string")?,
            new: args.get("new_string")?,
            all: args.get("allow_multiple").and_then(Value::as_bool).unwrap_or(false),
        },
        (Assistant::ClaudeCode, "PreToolUse", "Write") | (Assistant::Gemini, "BeforeTool", "write_file") => {
            Asked::Write { content: args.get("content")? }
        }
        (Assistant::Codex, "PreToolUse", "apply_patch") => {
            let patch = args.get("command")?.as_str()?;
            let cwd = PathBuf::from(input.get("cwd")?.as_str()?);
            return patch_answer(assistant, patch, &cwd, connector).await;
        }
        _ => return None,
    };
    // Gemini CLI names files relative to its working folder.
    let given = PathBuf::from(args.get("file_path")?.as_str()?);
    let path = if given.is_absolute() { given } else { PathBuf::from(input.get("cwd")?.as_str()?).join(given) };
    let Some(editor) = Editor::reach(&path, connector, assistant.client()).await else {
        let why = connector.unreachable()?;
        // Never on disk silently while an editor's tether lsp serves the file.
        return Some(context(
            assistant,
            event,
            &format!(
                "tether: the editor's tether lsp serves {} but could not be reached ({why}); this {tool} used the \
                 file on disk, not the editor's buffer, which may hold unsaved changes",
                path.display()
            ),
        ));
    };
    let stat = editor.unsaved(&path).await?;
    let name = path.display().to_string();
    match asked {
        Asked::Read { offset, limit } => {
            let total = stat.get("lines").cloned().unwrap_or(Value::Null);
            editor.read(assistant, &path, offset, limit, total, input.get("tool_response")).await
        }
        Asked::Edit { old, new, all } => {
            let args = json!({ "path": name, "old_string": old, "new_string": new, "replace_all": all });
            Some(editor.change(assistant, "edit_file", args, &path).await)
        }
        Asked::Write { content } => {
            let args = json!({ "path": name, "content": content });
            Some(editor.change(assistant, "write_file", args, &path).await)
        }
    }
}

/// The header lines of a patch that name a file, and their prefix.
const PATCH_HEADERS: [&str; 4] = ["*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "];

/// Codex CLI's `apply_patch`: when a file it changes has unsaved changes in the editor, the
/// whole patch is applied through tether (buffers and files together, all or nothing), its paths
/// made absolute from the working folder `cwd`; else Codex CLI applies it itself.
async fn patch_answer(assistant: Assistant, patch: &str, cwd: &Path, connector: &dyn Connector) -> Option<Value> {
    let mut paths = Vec::new();
    let mut absolute = String::with_capacity(patch.len());
    for line in patch.split_inclusive('\n') {
        match PATCH_HEADERS.iter().find_map(|h| line.strip_prefix(h).map(|rest| (h, rest))) {
            Some((header, rest)) => {
                let path = cwd.join(rest.trim_end_matches(['\n', '\r']));
                absolute.push_str(&format!("{header}{}\n", path.display()));
                paths.push(path);
            }
            None => absolute.push_str(line),
        }
    }
    let first = paths.first()?;
    let Some(editor) = Editor::reach(first, connector, assistant.client()).await else {
        let why = connector.unreachable()?;
        return Some(context(
            assistant,
            "PreToolUse",
            &format!(
                "tether: the editor's tether lsp serves {} but could not be reached ({why}); this patch was applied to \
                 the files on disk, not the editor's buffers, which may hold unsaved changes",
                cwd.display()
            ),
        ));
    };
    let mut unsaved = Vec::new();
    for path in &paths {
        if editor.unsaved(path).await.is_some() {
            unsaved.push(path.display().to_string());
        }
    }
    if unsaved.is_empty() {
        return None;
    }
    let what = unsaved.join(", ");
    let reason = match editor.call("apply_patch", json!({ "patch": absolute })).await {
        Some(Answer { error: false, text }) => format!(
            "tether applied this patch, because the editor has unsaved changes in {what}: those buffers now hold \
             it (one undo step each; their files on disk were not written, so that the unsaved changes are kept), \
             and any other file was written. The patch is done; do not apply it again. tether said: {}",
            text.trim()
        ),
        Some(Answer { error: true, text }) => format!(
            "the editor has unsaved changes in {what}, so tether applied this patch there, and it failed; nothing \
             was changed: {}",
            text.trim()
        ),
        None => format!(
            "the editor has unsaved changes in {what}, and tether lost its connection to the editor before it \
             could say whether this patch was applied; read the files again before redoing it"
        ),
    };
    Some(deny(assistant, reason))
}

/// An answer that only adds `text` for the model.
fn context(assistant: Assistant, event: &str, text: &str) -> Value {
    match assistant {
        Assistant::ClaudeCode => json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }),
        Assistant::Gemini => json!({ "hookSpecificOutput": { "additionalContext": text } }),
        Assistant::Codex => json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }),
    }
}

/// An answer that stops the built-in tool, telling the model `reason`.
fn deny(assistant: Assistant, reason: String) -> Value {
    match assistant {
        Assistant::ClaudeCode | Assistant::Codex => json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
        Assistant::Gemini => json!({ "decision": "deny", "reason": reason }),
    }
}

/// A session with the editor's `tether lsp`, over its bridge socket.
struct Editor {
    session: rmcp::service::RunningService<rmcp::RoleClient, ()>,
    /// Who the changes are recorded as.
    client: &'static str,
}

/// A tool's answer: its text, and whether it is an error.
struct Answer {
    text: String,
    error: bool,
}

impl Editor {
    /// The `tether lsp` serving the folder of `path`, if one is live and answers.
    async fn reach(path: &Path, connector: &dyn Connector, client: &'static str) -> Option<Editor> {
        let conn = connector.connect(path.parent()?).await?;
        let session = ().serve(crate::mcp::LineTransport::new(conn.reader, conn.writer)).await.ok()?;
        Some(Editor { session, client })
    }

    async fn call(&self, tool: &str, args: Value) -> Option<Answer> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        let mut meta = RequestMetaObject::default();
        meta.insert(crate::mcp::CLIENT_META.to_owned(), Value::String(self.client.to_owned()));
        params.meta = Some(meta);
        let CallToolResponse::Complete(result) = self.session.peer().call_tool_once(params).await.ok()? else {
            return None;
        };
        let text = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
        Some(Answer { text, error: result.is_error == Some(true) })
    }

    /// The `stat` of `path` when the editor has it open with unsaved changes.
    async fn unsaved(&self, path: &Path) -> Option<Value> {
        let stat = self.call("stat", json!({ "path": path.display().to_string() })).await?;
        let stat: Value = serde_json::from_str(&stat.text).ok()?;
        (stat["open"] == json!(true) && stat["dirty"] == json!(true)).then_some(stat)
    }

    /// The read's answer from the buffer (of `total` lines): Claude Code's result with the
    /// buffer's lines in place of the file's; for Gemini CLI, the buffer's lines added to the file's.
    async fn read(
        &self,
        assistant: Assistant,
        path: &Path,
        offset: Option<i64>,
        limit: Option<i64>,
        total: Value,
        response: Option<&Value>,
    ) -> Option<Value> {
        let mut args = json!({ "path": path.display().to_string() });
        if let Some(offset) = offset {
            args["offset"] = json!(offset);
        }
        if let Some(limit) = limit.filter(|l| *l > 0) {
            args["limit"] = json!(limit);
        }
        let page = self.call("read_file", args).await.filter(|a| !a.error)?;
        let lines: Vec<&str> = page.text.lines().map_while(numbered).collect();
        let said = format!(
            "tether: the editor's buffer of {} has unsaved changes (the file on disk differs). Edits and writes of \
             this file go to that buffer through tether; to replace text that is only in the buffer, use tether's \
             edit_file (a built-in edit checks the file on disk first).",
            path.display()
        );
        if assistant == Assistant::Gemini {
            let text = format!("{said} The buffer's lines, where the file's are above:\n{}", lines.join("\n"));
            return Some(context(assistant, "AfterTool", &text));
        }
        let mut updated = response?.clone();
        let file = updated.get_mut("file")?;
        file["content"] = Value::String(lines.join("\n"));
        file["numLines"] = json!(lines.len());
        file["totalLines"] = total;
        Some(json!({ "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": updated,
            "additionalContext": said,
        }}))
    }

    /// Makes a change in the buffer through `tool`, and stops the built-in tool, saying what
    /// happened.
    async fn change(&self, assistant: Assistant, tool: &str, args: Value, path: &Path) -> Value {
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
        deny(assistant, reason)
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
