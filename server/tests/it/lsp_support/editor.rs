//! A pretend editor: its own copy of every open document, changed the way an editor changes
//! buffers, and the notifications an editor would send for that.
//!
//! Positions are converted here independently of `tether::text`, so that the tests check the
//! server's conversions against a second implementation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{json, Value};
use tether::text::PositionEncoding;
use tower_lsp::lsp_types::{
    ApplyWorkspaceEditResponse, DocumentChangeOperation, DocumentChanges, OneOf, Position, Range, ResourceOp, TextEdit,
    Url, WorkspaceEdit,
};

/// How the pretend editor treats a workspace edit whose versions do not match its buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// Refuse the whole edit (`applied: false`), as the LSP specification asks.
    Strict,
    /// Skip stale documents and still answer `applied: true`.
    Lenient,
    /// Neovim's default handler: only the first document's version is checked, and only when it
    /// is above 0; a stale first document is skipped with `applied: true`; every other edit is
    /// applied at its positions as sent, whatever the buffer holds.
    Neovim,
    /// Apply every edit at its positions as sent, checking nothing.
    Blind,
}

#[derive(Debug, Clone)]
struct Buffer {
    version: i32,
    text: String,
}

/// The editor's buffers.
#[derive(Debug)]
pub struct Editor {
    buffers: Mutex<HashMap<Url, Buffer>>,
    encoding: Mutex<PositionEncoding>,
    /// Insert at the position after the last line as Neovim does: `nvim_buf_set_lines` adds the
    /// new text's lines plus a line break, so `"x\n"` there becomes `"x\n\n"`.
    pub neovim_end_of_file: std::sync::atomic::AtomicBool,
}

impl Default for Editor {
    fn default() -> Editor {
        Editor {
            buffers: Mutex::new(HashMap::new()),
            encoding: Mutex::new(PositionEncoding::Utf16),
            neovim_end_of_file: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Editor {
    /// Sets the negotiated encoding.
    pub fn set_encoding(&self, enc: PositionEncoding) {
        *self.encoding.lock().expect("lock") = enc;
    }

    /// The negotiated encoding.
    pub fn encoding(&self) -> PositionEncoding {
        *self.encoding.lock().expect("lock")
    }

    /// Opens a buffer and returns its `didOpen`.
    pub fn open(&self, uri: &Url, text: &str, version: i32) -> Value {
        self.buffers.lock().expect("lock").insert(uri.clone(), Buffer { version, text: text.to_owned() });
        did_open(uri, text, version)
    }

    /// The open buffers' URIs.
    pub fn uris(&self) -> Vec<Url> {
        self.buffers.lock().expect("lock").keys().cloned().collect()
    }

    /// Closes a buffer and returns its `didClose`.
    pub fn close(&self, uri: &Url) -> Value {
        self.buffers.lock().expect("lock").remove(uri);
        notification("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
    }

    /// The buffer's text and version.
    pub fn buffer(&self, uri: &Url) -> Option<(i32, String)> {
        self.buffers.lock().expect("lock").get(uri).map(|b| (b.version, b.text.clone()))
    }

    /// Merges `didChange` notifications for one document into one, as an editor that debounces
    /// sends them: every content change in order, under the last version.
    pub fn merge(notes: &[Value]) -> Value {
        let mut merged = notes[0].clone();
        let mut changes = Vec::new();
        for n in notes {
            changes.extend(n["params"]["contentChanges"].as_array().cloned().unwrap_or_default());
            merged["params"]["textDocument"]["version"] = n["params"]["textDocument"]["version"].clone();
        }
        merged["params"]["contentChanges"] = Value::Array(changes);
        merged
    }

    /// The user types: replaces bytes `start..end` with `text` and returns the `didChange`.
    pub fn type_text(&self, uri: &Url, start: usize, end: usize, text: &str) -> Value {
        let enc = self.encoding();
        let mut buffers = self.buffers.lock().expect("lock");
        let b = buffers.get_mut(uri).expect("open buffer");
        let range = Range::new(offset_to_pos(&b.text, start, enc), offset_to_pos(&b.text, end, enc));
        b.text.replace_range(start..end, text);
        b.version += 1;
        did_change(uri, b.version, &[(Some(range), text.to_owned())])
    }

    /// Saves a buffer to disk and returns its `didSave`.
    pub fn save(&self, uri: &Url) -> Option<Value> {
        let (_, text) = self.buffer(uri)?;
        std::fs::write(uri.to_file_path().ok()?, text).ok()?;
        Some(notification("textDocument/didSave", json!({"textDocument": {"uri": uri}})))
    }

    /// Applies a workspace edit as an editor would; returns the answer and the notifications the
    /// change causes (one `didChange` per changed buffer, `didClose`/`didOpen` for renames).
    pub fn apply(&self, edit: &WorkspaceEdit, strictness: Strictness) -> (ApplyWorkspaceEditResponse, Vec<Value>) {
        let enc = self.encoding();
        let mut out = Vec::new();
        let mut buffers = self.buffers.lock().expect("lock");
        let ops: Vec<DocumentChangeOperation> = match (&edit.document_changes, &edit.changes) {
            (Some(DocumentChanges::Edits(e)), _) => e.iter().cloned().map(DocumentChangeOperation::Edit).collect(),
            (Some(DocumentChanges::Operations(o)), _) => o.clone(),
            (None, Some(changes)) => changes
                .iter()
                .map(|(uri, edits)| {
                    DocumentChangeOperation::Edit(tower_lsp::lsp_types::TextDocumentEdit {
                        text_document: tower_lsp::lsp_types::OptionalVersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version: None,
                        },
                        edits: edits.iter().cloned().map(OneOf::Left).collect(),
                    })
                })
                .collect(),
            (None, None) => Vec::new(),
        };
        if strictness == Strictness::Strict {
            for op in &ops {
                if let DocumentChangeOperation::Edit(e) = op {
                    let current = buffers.get(&e.text_document.uri).map(|b| b.version);
                    if e.text_document.version.is_some() && e.text_document.version != current {
                        let response = ApplyWorkspaceEditResponse {
                            applied: false,
                            failure_reason: Some("document version changed".into()),
                            failed_change: None,
                        };
                        return (response, Vec::new());
                    }
                }
            }
        }
        for (index, op) in ops.into_iter().enumerate() {
            match op {
                DocumentChangeOperation::Edit(e) => {
                    let Some(b) = buffers.get_mut(&e.text_document.uri) else { continue };
                    let stale = e.text_document.version.is_some_and(|v| v != b.version);
                    let skip = match strictness {
                        Strictness::Strict | Strictness::Lenient => stale,
                        Strictness::Neovim => stale && index == 0 && e.text_document.version.is_some_and(|v| v > 0),
                        Strictness::Blind => false,
                    };
                    if skip {
                        continue; // Lenient: a stale edit is skipped, silently.
                    }
                    let mut edits: Vec<TextEdit> = e
                        .edits
                        .into_iter()
                        .map(|e| match e {
                            OneOf::Left(t) => t,
                            OneOf::Right(a) => a.text_edit,
                        })
                        .collect();
                    // From the end, so that each edit's range is still valid when it is applied.
                    edits.sort_by_key(|e| std::cmp::Reverse((e.range.start.line, e.range.start.character)));
                    let mut changes = Vec::new();
                    for te in edits {
                        let start = pos_to_offset(&b.text, te.range.start, enc);
                        let end = pos_to_offset(&b.text, te.range.end, enc).max(start);
                        let after_last_line = b.text.ends_with('\n') && start == b.text.len();
                        let mut new_text = te.new_text;
                        if after_last_line && self.neovim_end_of_file.load(std::sync::atomic::Ordering::SeqCst) {
                            new_text.push('\n');
                        }
                        b.text.replace_range(start..end, &new_text);
                        changes.push((Some(te.range), new_text));
                    }
                    b.version += 1;
                    out.push(did_change(&e.text_document.uri, b.version, &changes));
                }
                DocumentChangeOperation::Op(ResourceOp::Rename(r)) => {
                    let (from, to) = (path(&r.old_uri), path(&r.new_uri));
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent).expect("mkdir");
                    }
                    std::fs::rename(&from, &to).expect("rename");
                    if let Some(b) = buffers.remove(&r.old_uri) {
                        out.push(notification("textDocument/didClose", json!({"textDocument": {"uri": r.old_uri}})));
                        out.push(did_open(&r.new_uri, &b.text, b.version));
                        buffers.insert(r.new_uri.clone(), b);
                    }
                }
                DocumentChangeOperation::Op(ResourceOp::Delete(d)) => {
                    let p = path(&d.uri);
                    if p.is_dir() {
                        std::fs::remove_dir_all(&p).expect("delete dir");
                    } else {
                        std::fs::remove_file(&p).expect("delete");
                    }
                    if buffers.remove(&d.uri).is_some() {
                        out.push(notification("textDocument/didClose", json!({"textDocument": {"uri": d.uri}})));
                    }
                }
                DocumentChangeOperation::Op(ResourceOp::Create(c)) => {
                    std::fs::write(path(&c.uri), "").expect("create");
                }
            }
        }
        (ApplyWorkspaceEditResponse { applied: true, failure_reason: None, failed_change: None }, out)
    }
}

fn path(uri: &Url) -> PathBuf {
    uri.to_file_path().expect("file uri")
}

/// A notification message.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A `didOpen` notification.
pub fn did_open(uri: &Url, text: &str, version: i32) -> Value {
    notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": version, "text": text}}),
    )
}

/// A `didChange` notification with these content changes (a `None` range replaces the text).
pub fn did_change(uri: &Url, version: i32, changes: &[(Option<Range>, String)]) -> Value {
    let changes: Vec<Value> = changes
        .iter()
        .map(|(range, text)| match range {
            Some(r) => json!({"range": r, "text": text}),
            None => json!({"text": text}),
        })
        .collect();
    notification(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
    )
}

/// The LSP lines of `text`: (start, end of content, start of the next line).
fn lines(text: &str) -> Vec<(usize, usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                out.push((start, i, i + 2));
                i += 2;
                start = i;
            }
            b'\r' | b'\n' => {
                out.push((start, i, i + 1));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push((start, b.len(), b.len()));
    out
}

fn units(c: char, enc: PositionEncoding) -> usize {
    match enc {
        PositionEncoding::Utf8 => c.len_utf8(),
        PositionEncoding::Utf16 => c.len_utf16(),
        PositionEncoding::Utf32 => 1,
    }
}

/// The position of byte `offset` (a char boundary, not inside a CRLF).
pub fn offset_to_pos(text: &str, offset: usize, enc: PositionEncoding) -> Position {
    let ls = lines(text);
    let line = ls.iter().rposition(|(s, _, _)| *s <= offset).unwrap_or(0);
    let (start, end, _) = ls[line];
    let col: usize = text[start..offset.min(end)].chars().map(|c| units(c, enc)).sum();
    Position::new(line as u32, col as u32)
}

/// The byte offset of `pos`, clamped as LSP says.
pub fn pos_to_offset(text: &str, pos: Position, enc: PositionEncoding) -> usize {
    let ls = lines(text);
    let Some(&(start, end, _)) = ls.get(pos.line as usize) else { return text.len() };
    let mut col = 0;
    for (i, c) in text[start..end].char_indices() {
        let next = col + units(c, enc);
        if next > pos.character as usize {
            return start + i;
        }
        col = next;
    }
    end
}
