//! The MCP requests of Claude Code's IDE protocol and its tools, answered from tether's view of
//! the editor: the store's buffers, the diagnostics as the editor forwarded them (only reports
//! known to cover the buffer's current version), the editor's view (`tether/editorContext`), its
//! saves (`tether/saveDocuments`) and its review (`tether/review`).
//!
//! `openDiff` carries the whole new file, computed by Claude Code from the file on disk. When the
//! buffer has unsaved changes, the proposal is carried onto the buffer three ways, so that the
//! review shows the assistant's change on top of the user's text, and the text accepted is that
//! merge: Claude Code writes it to the file, and tether merges that write into the buffer (it holds
//! both sides' changes already, so the buffer ends as the file). Nothing is written before the
//! answer: Claude Code refuses to write a file that changed since it read it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tower_lsp::lsp_types::{self as lsp, ShowDocumentParams};

use super::{Decided, Ide};
use crate::lsp::convert::{path_of, uri_of};
use crate::lsp::editor::LspEditor;
use crate::lsp::protocol::{SaveDocuments, SaveDocumentsParams};
use crate::lsp::shared::request_within;
use crate::tools::knowledge::{Editor as _, Severity, Span};
use crate::vfs::Vfs;
use crate::workspace::SandboxPath;

/// The MCP revisions this server answers in; a client asking for another gets the first.
const REVISIONS: &[&str] = &["2025-06-18", "2025-11-25", "2025-03-26", "2024-11-05"];

/// How long `getDiagnostics` waits for a report of the buffer's current version: Claude Code
/// gives a call naming one file 500 ms, and one for every file 2 s.
const ONE_FILE_WAIT: Duration = Duration::from_millis(400);
const ALL_FILES_WAIT: Duration = Duration::from_millis(1_800);

type Answer = Result<Value, (i64, String)>;

/// Answers one request.
pub(super) async fn request(ide: &Arc<Ide>, method: &str, params: Value) -> Answer {
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let revision = REVISIONS.iter().find(|r| Some(**r) == asked).unwrap_or(&REVISIONS[0]);
            Ok(json!({
                "protocolVersion": revision,
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "tether", "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools()})),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
            let args = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
            Ok(match call(ide, name, &args).await {
                Ok(content) => json!({"content": content}),
                Err(message) => json!({"content": [text(message)], "isError": true}),
            })
        }
        "resources/list" => Ok(json!({"resources": []})),
        "prompts/list" => Ok(json!({"prompts": []})),
        other => Err((-32601, format!("method not found: {other}"))),
    }
}

fn text(t: impl Into<String>) -> Value {
    json!({"type": "text", "text": t.into()})
}

fn as_json(v: &Value) -> Vec<Value> {
    vec![text(v.to_string())]
}

/// The tools, with the arguments Claude Code sends (parsed when asked for: a `json!` of the same
/// costs the binary far more than this text).
const TOOLS: &str = r#"[
{"name": "openFile", "description": "Open a file in the editor, optionally selecting text",
 "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}, "preview": {"type": "boolean"},
  "startText": {"type": "string"}, "endText": {"type": "string"}, "selectToEndOfLine": {"type": "boolean"},
  "makeFrontmost": {"type": "boolean"}}, "required": ["filePath"]}},
{"name": "openDiff", "description": "Show a proposed change to a file for review; answers once the user decides",
 "inputSchema": {"type": "object", "properties": {"old_file_path": {"type": "string"},
  "new_file_path": {"type": "string"}, "new_file_contents": {"type": "string"}, "tab_name": {"type": "string"}},
  "required": ["old_file_path", "new_file_path", "new_file_contents", "tab_name"]}},
{"name": "getCurrentSelection", "description": "The selection in the focused editor",
 "inputSchema": {"type": "object", "properties": {}}},
{"name": "getLatestSelection", "description": "The most recent selection",
 "inputSchema": {"type": "object", "properties": {}}},
{"name": "getOpenEditors", "description": "The open documents", "inputSchema": {"type": "object", "properties": {}}},
{"name": "getWorkspaceFolders", "description": "The workspace folders",
 "inputSchema": {"type": "object", "properties": {}}},
{"name": "getDiagnostics", "description": "Diagnostics known to cover the current text of the open documents",
 "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}}},
{"name": "checkDocumentDirty", "description": "Whether a document has unsaved changes",
 "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]}},
{"name": "saveDocument", "description": "Save a document",
 "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]}},
{"name": "close_tab", "description": "Close a diff tab",
 "inputSchema": {"type": "object", "properties": {"tab_name": {"type": "string"}}, "required": ["tab_name"]}},
{"name": "closeAllDiffTabs", "description": "Close every diff tab", "inputSchema": {"type": "object", "properties": {}}}
]"#;

fn tools() -> Value {
    serde_json::from_str(TOOLS).unwrap_or_default()
}

/// Runs tool `name`: its content, or an error message.
async fn call(ide: &Arc<Ide>, name: &str, args: &Value) -> Result<Vec<Value>, String> {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    match name {
        "getWorkspaceFolders" => Ok(as_json(&workspace_folders(ide))),
        "getOpenEditors" => Ok(as_json(&open_editors(ide).await)),
        "getCurrentSelection" | "getLatestSelection" => Ok(as_json(&selection(ide).await)),
        "checkDocumentDirty" => Ok(as_json(&dirty(ide, &arg("filePath")))),
        "saveDocument" => Ok(as_json(&save(ide, &arg("filePath")).await)),
        "getDiagnostics" => Ok(as_json(&diagnostics(ide, args.get("uri").and_then(Value::as_str)).await)),
        "openFile" => open_file(ide, args).await,
        "openDiff" => open_diff(ide, &arg("old_file_path"), &arg("new_file_contents"), &arg("tab_name")).await,
        "close_tab" => {
            ide.close_diff(&arg("tab_name"));
            Ok(vec![text("TAB_CLOSED")])
        }
        "closeAllDiffTabs" => {
            let tabs: Vec<String> = ide.diffs().keys().cloned().collect();
            for tab in &tabs {
                ide.close_diff(tab);
            }
            Ok(vec![text(format!("CLOSED_{}_DIFF_TABS", tabs.len()))])
        }
        other => Err(format!("unknown tool: {other}")),
    }
}

/// A path the CLI named (a path or a `file:` URI), inside the workspace and not denied.
pub(super) fn resolve(ide: &Ide, given: &str) -> Result<(Vfs, SandboxPath), String> {
    let vfs = ide.shared.snapshot().ok_or("the editor has no workspace folder open")?;
    let given = lsp::Url::parse(given)
        .ok()
        .and_then(|u| path_of(&u))
        .map_or_else(|| given.to_owned(), |p| p.to_string_lossy().into_owned());
    let p = vfs.resolve(&given).map_err(|e| e.message().to_owned())?;
    Ok((vfs, p))
}

fn workspace_folders(ide: &Ide) -> Value {
    let roots = ide.shared.roots();
    let folders: Vec<Value> = roots
        .iter()
        .map(|r| {
            let name = r.file_name().map_or_else(|| r.to_string_lossy(), |n| n.to_string_lossy());
            json!({"name": name, "uri": uri_of(r).map(|u| u.to_string()), "path": r})
        })
        .collect();
    json!({"success": true, "folders": folders, "rootPath": roots.first()})
}

/// What the user is looking at, when the editor says.
pub(super) async fn view(ide: &Arc<Ide>) -> Option<crate::tools::knowledge::View> {
    let shared = ide.shared.clone();
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || LspEditor::new(shared, handle).view().ok()).await.ok().flatten()
}

async fn open_editors(ide: &Arc<Ide>) -> Value {
    let active = view(ide).await.and_then(|v| v.editors.into_iter().find(|e| e.active)).map(|e| e.path);
    let mut docs = ide.shared.store.all();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    let tabs: Vec<Value> = docs
        .into_iter()
        .map(|(path, doc)| {
            let label = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            json!({"uri": doc.uri, "isActive": active.as_ref() == Some(&path), "label": label,
                   "fileName": path, "isDirty": doc.dirty, "isUntitled": false,
                   "lineCount": doc.rope.len_lines()})
        })
        .collect();
    json!({"tabs": tabs})
}

fn position(p: crate::text::Position) -> Value {
    json!({"line": p.line, "character": p.character})
}

fn range(s: Span) -> Value {
    json!({"start": position(s.start), "end": position(s.end)})
}

async fn selection(ide: &Arc<Ide>) -> Value {
    let shown = view(ide).await.and_then(|v| v.editors.into_iter().find(|e| e.active));
    // A denied file's selection is not shown, as if no editor had the focus.
    let shown = shown.filter(|e| resolve(ide, &e.path.to_string_lossy()).is_ok());
    let Some(editor) = shown else { return json!({"success": false, "message": "No active editor found"}) };
    let Some((span, selected)) = editor.selections.into_iter().next() else {
        return json!({"success": false, "message": "No selection in the active editor"});
    };
    json!({"success": true, "text": selected, "filePath": editor.path,
           "fileUrl": uri_of(&editor.path).map(|u| u.to_string()),
           "selection": {"start": position(span.start), "end": position(span.end), "isEmpty": span.start == span.end}})
}

/// The open document at the path Claude Code named, if it is inside the workspace and open.
fn open_doc(ide: &Ide, given: &str) -> Option<crate::lsp::store::DocState> {
    resolve(ide, given).ok().and_then(|(_, p)| ide.shared.store.get(p.real()))
}

fn dirty(ide: &Ide, given: &str) -> Value {
    match open_doc(ide, given) {
        Some(doc) => json!({"success": true, "filePath": given, "isDirty": doc.dirty, "isUntitled": false}),
        None => json!({"success": false, "message": format!("Document not open: {given}")}),
    }
}

async fn save(ide: &Arc<Ide>, given: &str) -> Value {
    let Some(doc) = open_doc(ide, given) else {
        return json!({"success": false, "message": format!("Document not open: {given}")});
    };
    if !ide.shared.caps().save_documents {
        return json!({"success": false, "message": "this editor does not let tether save its buffers"});
    }
    let params = SaveDocumentsParams { uris: vec![doc.uri.clone()] };
    let timeout = ide.shared.options.limits.save_timeout;
    match request_within::<SaveDocuments>(&ide.shared.client, params, timeout).await {
        Some(Ok(r)) if r.saved.contains(&doc.uri) => {
            json!({"success": true, "filePath": given, "saved": true, "message": "Document saved successfully"})
        }
        Some(Ok(_)) => json!({"success": false, "filePath": given, "message": "the editor did not save it"}),
        Some(Err(e)) => json!({"success": false, "filePath": given, "message": e.message}),
        None => json!({"success": false, "filePath": given, "message": "the editor did not answer in time"}),
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "Error",
        Severity::Warning => "Warning",
        Severity::Information => "Information",
        Severity::Hint => "Hint",
    }
}

/// The diagnostics of the open documents (or of the one `uri` names), each only from a report
/// of the buffer's current version; waits a little for reports of text changed just now.
async fn diagnostics(ide: &Arc<Ide>, uri: Option<&str>) -> Value {
    let shared = &ide.shared;
    if !shared.caps().diagnostics {
        return json!([]);
    }
    let wanted: Option<PathBuf> = match uri {
        Some(u) => match resolve(ide, u) {
            Ok((_, p)) => Some(p.real().to_owned()),
            Err(_) => return json!([]),
        },
        None => None,
    };
    let open: Vec<(PathBuf, i32)> = shared
        .store
        .all()
        .into_iter()
        .filter(|(p, _)| wanted.as_ref().is_none_or(|w| w == p))
        .map(|(p, d)| (p, d.version))
        .collect();
    // A report of version v covers the buffer at v: wait for one newer than v - 1.
    let waiting: Vec<(PathBuf, i32)> = open.iter().map(|(p, v)| (p.clone(), v - 1)).collect();
    let wait = if wanted.is_some() { ONE_FILE_WAIT } else { ALL_FILES_WAIT };
    let fresh = shared.diagnostics.settle(&waiting, wait).await;
    let mut files: Vec<Value> = Vec::new();
    for ((path, version), report) in open.iter().zip(fresh) {
        // A report for a later version than the one asked about is for text the buffer has
        // since moved past, as stale as an earlier one.
        let Some(report) = report.filter(|r| r.version == Some(*version)) else { continue };
        files.push(file_diagnostics(path, &report));
    }
    // Files not open: their last report is of the file on disk.
    for report in shared.diagnostics.all() {
        if shared.store.get(&report.path).is_none() && wanted.as_ref().is_none_or(|w| *w == report.path) {
            files.push(file_diagnostics(&report.path, &report));
        }
    }
    Value::Array(files)
}

fn file_diagnostics(path: &std::path::Path, report: &crate::tools::knowledge::Reported) -> Value {
    let diagnostics: Vec<Value> = report
        .problems
        .iter()
        .map(|p| {
            json!({"message": p.message, "severity": severity(p.severity), "source": p.source, "code": p.code,
                   "range": range(p.span)})
        })
        .collect();
    json!({"uri": uri_of(path).map(|u| u.to_string()), "diagnostics": diagnostics})
}

async fn open_file(ide: &Arc<Ide>, args: &Value) -> Result<Vec<Value>, String> {
    let given = args.get("filePath").and_then(Value::as_str).unwrap_or_default();
    let (vfs, p) = resolve(ide, given)?;
    let uri = uri_of(p.real()).ok_or_else(|| format!("{given} has no file URI"))?;
    let file = vfs.read_text(&p).map_err(|e| e.message().to_owned())?;
    let line_of = |needle: &str| file.text.lines().position(|l| !needle.is_empty() && l.contains(needle));
    let start = args.get("startText").and_then(Value::as_str).and_then(line_of);
    let end = args.get("endText").and_then(Value::as_str).and_then(line_of).or(start);
    let selection = start.map(|s| {
        let e = end.unwrap_or(s).max(s);
        let end_col = file.text.lines().nth(e).map_or(0, |l| l.encode_utf16().count());
        lsp::Range::new(lsp::Position::new(s as u32, 0), lsp::Position::new(e as u32, end_col as u32))
    });
    let front = args.get("makeFrontmost").and_then(Value::as_bool).unwrap_or(true);
    let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(front), selection };
    match ide.shared.client.show_document(params).await {
        Ok(true) if front => Ok(vec![text(format!("Opened file: {given}"))]),
        Ok(true) => Ok(as_json(&json!({"success": true, "filePath": given, "lineCount": file.text.lines().count()}))),
        Ok(false) => Err(format!("the editor did not open {given}")),
        Err(e) => Err(format!("the editor could not open {given}: {}", e.message)),
    }
}

/// Shows Claude Code's proposed file through tether's review, merged with the buffer's unsaved
/// text; answers `FILE_SAVED` with the accepted text, `DIFF_REJECTED`, or nothing until the tab is
/// closed when the editor cannot show a review (Claude Code's own prompt in the terminal decides).
async fn open_diff(ide: &Arc<Ide>, given: &str, proposed: &str, tab: &str) -> Result<Vec<Value>, String> {
    let (vfs, p) = resolve(ide, given)?;
    let target = super::on_the_buffer(ide, &vfs, &p, proposed);
    let mut closed = ide.open_diff(tab, &target);
    let summary = format!("Claude Code proposes this change ({tab})");
    let decided = super::review(ide, &vfs, &p, &target, &summary, &mut closed).await;
    if !matches!(decided, Decided::Closed) {
        ide.diffs().remove(tab);
    }
    match decided {
        Decided::Accepted(text_accepted) => Ok(vec![text("FILE_SAVED"), text(text_accepted)]),
        Decided::Unchanged | Decided::NoReview => {
            let _ = closed.await;
            Ok(vec![text("DIFF_REJECTED"), text(tab)])
        }
        Decided::Rejected | Decided::Closed => Ok(vec![text("DIFF_REJECTED"), text(tab)]),
    }
}

/// The selection in the focused editor, when it changed: `selection_changed`.
pub(super) async fn selection_changed(ide: &Arc<Ide>) -> Option<(&'static str, Value)> {
    let mut current = selection(ide).await;
    if current["success"] != true {
        return None;
    }
    current.as_object_mut()?.remove("success");
    Some(("selection_changed", current))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tool_list_is_json() {
        let tools = super::tools();
        assert_eq!(tools.as_array().map(Vec::len), Some(11), "{tools}");
    }
}
