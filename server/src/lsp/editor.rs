//! The editor as the knowledge tools see it ([`Editor`]): diagnostics from what the client
//! forwarded, the view and the language servers' answers by asking it (`tether/editorContext`,
//! `tether/languageRequest`), converted from LSP shapes into plain values.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::runtime::Handle;
use tower_lsp::lsp_types as lsp;

use super::capabilities::ClientCaps;
use super::convert::{canonical, from_lsp, path_of, to_lsp, uri_of};
use super::protocol::{self, EditorContext, LanguageRequest, LanguageRequestParams};
use super::shared::{request_within, Shared};
use crate::error::{Error, ErrorKind, Result};
use crate::text::PositionEncoding;
use crate::tools::knowledge::{
    not_forwarded, Answer, At, Editor, FileEdits, Found, Problem, Question, Reported, Severity, Shown, Span, Spot,
    Symbol, View,
};

/// How long the editor has to say what the user is looking at.
const CONTEXT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the editor's language servers have to answer.
const LANGUAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// The editor behind one tool call (the call runs on the blocking pool; each question blocks it
/// until the editor answers).
pub(crate) struct LspEditor {
    shared: Arc<Shared>,
    handle: Handle,
}

impl LspEditor {
    /// The editor of `shared`'s connection.
    pub fn new(shared: Arc<Shared>, handle: Handle) -> LspEditor {
        LspEditor { shared, handle }
    }

    fn caps(&self) -> ClientCaps {
        self.shared.caps()
    }

    /// Sends request `R` and waits at most `timeout` for the answer.
    fn request<R>(&self, params: R::Params, timeout: Duration, what: &str) -> Result<R::Result>
    where
        R: lsp::request::Request,
        R::Params: Send + 'static,
        R::Result: Send + 'static,
    {
        let answer = self.handle.block_on(request_within::<R>(&self.shared.client, params, timeout));
        match answer {
            Some(Ok(result)) => Ok(result),
            Some(Err(e)) => Err(Error::new(ErrorKind::IoError, format!("the editor could not {what}: {}", e.message))),
            None => {
                Err(Error::new(ErrorKind::Timeout, format!("the editor did not {what} within {} s", timeout.as_secs())))
            }
        }
    }
}

/// The encoding an answer names, else the connection's.
pub fn encoding_named(name: Option<&str>, connection: PositionEncoding) -> PositionEncoding {
    match name {
        Some("utf-8") => PositionEncoding::Utf8,
        Some("utf-16") => PositionEncoding::Utf16,
        Some("utf-32") => PositionEncoding::Utf32,
        _ => connection,
    }
}

fn span(r: lsp::Range) -> Span {
    Span { start: from_lsp(r.start), end: from_lsp(r.end) }
}

fn lsp_position(at: &At) -> Result<lsp::TextDocumentPositionParams> {
    let uri = uri_of(&at.path).ok_or_else(|| Error::invalid(format!("{} has no file URI", at.path.display())))?;
    Ok(lsp::TextDocumentPositionParams {
        text_document: lsp::TextDocumentIdentifier { uri },
        position: to_lsp(at.position),
    })
}

/// A problem from an LSP diagnostic.
pub fn problem(d: &lsp::Diagnostic) -> Problem {
    let severity = match d.severity {
        Some(lsp::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(lsp::DiagnosticSeverity::INFORMATION) => Severity::Information,
        Some(lsp::DiagnosticSeverity::HINT) => Severity::Hint,
        // LSP leaves a missing severity to the client; editors show it as an error.
        _ => Severity::Error,
    };
    let code = d.code.as_ref().map(|c| match c {
        lsp::NumberOrString::Number(n) => n.to_string(),
        lsp::NumberOrString::String(s) => s.clone(),
    });
    Problem { span: span(d.range), severity, code, source: d.source.clone(), message: d.message.clone() }
}

/// A forwarded report in plain values.
pub fn reported(params: protocol::PublishDiagnosticsParams, connection: PositionEncoding) -> Option<Reported> {
    let path = canonical(&path_of(&params.uri)?);
    Some(Reported {
        path,
        version: params.version,
        encoding: encoding_named(params.position_encoding.as_deref(), connection),
        problems: params.diagnostics.iter().map(problem).collect(),
    })
}

/// Reads `value` as `T`, or says the editor answered in the wrong shape.
fn shape<T: DeserializeOwned>(value: Value, what: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|e| {
        Error::new(ErrorKind::IoError, format!("the editor answered {what} in a shape tether cannot read: {e}"))
    })
}

fn spot(uri: &lsp::Url, range: lsp::Range) -> Option<Spot> {
    Some(Spot { path: canonical(&path_of(uri)?), span: span(range) })
}

/// Locations, whichever of the three shapes of a definition answer.
fn spots(value: Value) -> Result<Vec<Spot>> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let list = if value.is_array() { value } else { Value::Array(vec![value]) };
    let items: Vec<Value> = shape(list, "locations")?;
    let mut out = Vec::new();
    for item in items {
        if item.get("targetUri").is_some() {
            let link: lsp::LocationLink = shape(item, "a location link")?;
            out.extend(spot(&link.target_uri, link.target_selection_range));
        } else {
            let loc: lsp::Location = shape(item, "a location")?;
            out.extend(spot(&loc.uri, loc.range));
        }
    }
    Ok(out)
}

/// Hover contents as markdown.
fn hover(value: Value) -> Result<Option<String>> {
    if value.is_null() {
        return Ok(None);
    }
    let h: lsp::Hover = shape(value, "hover")?;
    let marked = |m: lsp::MarkedString| match m {
        lsp::MarkedString::String(s) => s,
        lsp::MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    let text = match h.contents {
        lsp::HoverContents::Scalar(m) => marked(m),
        lsp::HoverContents::Array(list) => list.into_iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        lsp::HoverContents::Markup(m) => m.value,
    };
    Ok(Some(text).filter(|t| !t.trim().is_empty()))
}

/// The name of a symbol kind.
pub fn kind_name(kind: lsp::SymbolKind) -> String {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum_member",
        "struct",
        "event",
        "operator",
        "type_parameter",
    ];
    let n: i32 =
        serde_json::to_value(kind).ok().and_then(|v| v.as_i64()).and_then(|n| i32::try_from(n).ok()).unwrap_or(0);
    usize::try_from(n - 1).ok().and_then(|i| NAMES.get(i)).map_or_else(|| format!("kind {n}"), |s| (*s).to_owned())
}

/// Symbols from a document's outline (nested or flat) or a workspace search.
fn symbols(value: Value, outline: Option<&PathBuf>) -> Result<Vec<Symbol>> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let items: Vec<Value> = shape(value, "symbols")?;
    let mut out = Vec::new();
    for item in items {
        if item.get("selectionRange").is_some() {
            let Some(path) = outline else { continue };
            let s: lsp::DocumentSymbol = shape(item, "a document symbol")?;
            out.push(nested(s, path));
        } else {
            // SymbolInformation, or a WorkspaceSymbol whose location may have no range.
            let name = item.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let kind: lsp::SymbolKind = shape(item.get("kind").cloned().unwrap_or(json!(0)), "a symbol kind")?;
            let container = item.get("containerName").and_then(Value::as_str).map(str::to_owned);
            let location = item.get("location").cloned().unwrap_or(Value::Null);
            let uri: Option<lsp::Url> = location.get("uri").cloned().and_then(|u| serde_json::from_value(u).ok());
            let range: lsp::Range =
                location.get("range").cloned().and_then(|r| serde_json::from_value(r).ok()).unwrap_or_default();
            let Some(spot) = uri.as_ref().and_then(|u| spot(u, range)) else { continue };
            out.push(Symbol { name, kind: kind_name(kind), detail: None, container, spot, children: Vec::new() });
        }
    }
    Ok(out)
}

fn nested(s: lsp::DocumentSymbol, path: &PathBuf) -> Symbol {
    Symbol {
        name: s.name,
        kind: kind_name(s.kind),
        detail: s.detail,
        container: None,
        spot: Spot { path: path.clone(), span: span(s.selection_range) },
        children: s.children.unwrap_or_default().into_iter().map(|c| nested(c, path)).collect(),
    }
}

/// A rename's edits, per file.
fn edits(value: Value) -> Result<Option<Vec<FileEdits>>> {
    if value.is_null() {
        return Ok(None);
    }
    let edit: lsp::WorkspaceEdit = shape(value, "a rename")?;
    let mut files: Vec<FileEdits> = Vec::new();
    let mut add = |uri: &lsp::Url, list: Vec<(Span, String)>| -> Result<()> {
        let path = path_of(uri)
            .ok_or_else(|| Error::new(ErrorKind::IoError, format!("the rename changes {uri}, not a file")))?;
        let path = canonical(&path);
        match files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.edits.extend(list),
            None => files.push(FileEdits { path, edits: list }),
        }
        Ok(())
    };
    let text = |e: lsp::TextEdit| (span(e.range), e.new_text);
    if let Some(changes) = edit.changes {
        for (uri, list) in changes {
            add(&uri, list.into_iter().map(text).collect())?;
        }
    }
    let one = |e: lsp::OneOf<lsp::TextEdit, lsp::AnnotatedTextEdit>| match e {
        lsp::OneOf::Left(e) => text(e),
        lsp::OneOf::Right(a) => text(a.text_edit),
    };
    match edit.document_changes {
        Some(lsp::DocumentChanges::Edits(list)) => {
            for d in list {
                add(&d.text_document.uri, d.edits.into_iter().map(one).collect())?;
            }
        }
        Some(lsp::DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    lsp::DocumentChangeOperation::Edit(d) => {
                        add(&d.text_document.uri, d.edits.into_iter().map(one).collect())?;
                    }
                    lsp::DocumentChangeOperation::Op(_) => {
                        return Err(Error::new(
                            ErrorKind::Unsupported,
                            "the language server's rename also creates, renames or deletes files, which \
                             rename_symbol does not do; nothing was changed",
                        ));
                    }
                }
            }
        }
        None => {}
    }
    Ok(Some(files))
}

impl Editor for LspEditor {
    fn encoding(&self) -> PositionEncoding {
        self.caps().encoding
    }

    fn diagnostics(&self) -> Result<Vec<Reported>> {
        if !self.caps().diagnostics {
            return Err(not_forwarded("its language servers' diagnostics", protocol::DIAGNOSTICS_CAPABILITY));
        }
        Ok(self.shared.diagnostics.all())
    }

    fn view(&self) -> Result<View> {
        if !self.caps().editor_context {
            return Err(not_forwarded("what the user is looking at", protocol::EDITOR_CONTEXT_CAPABILITY));
        }
        let result = self.request::<EditorContext>(json!({}), CONTEXT_TIMEOUT, "say what the user is looking at")?;
        let encoding = encoding_named(result.position_encoding.as_deref(), self.encoding());
        let editors = result
            .editors
            .into_iter()
            .filter_map(|e| {
                Some(Shown {
                    path: canonical(&path_of(&e.uri)?),
                    version: e.version,
                    active: e.active,
                    selections: e.selections.into_iter().map(|s| (span(s.range), s.text)).collect(),
                    visible: e.visible_ranges.into_iter().map(span).collect(),
                })
            })
            .collect();
        Ok(View { encoding, editors })
    }

    fn ask(&self, question: Question) -> Result<Answer> {
        if !self.caps().language_requests {
            return Err(not_forwarded("questions to its language servers", protocol::LANGUAGE_REQUESTS_CAPABILITY));
        }
        let (method, params, outline) = match &question {
            Question::Definition(at) => ("textDocument/definition", json!(lsp_position(at)?), None),
            Question::Hover(at) => ("textDocument/hover", json!(lsp_position(at)?), None),
            Question::References(at, declaration) => {
                let mut p = json!(lsp_position(at)?);
                p["context"] = json!({"includeDeclaration": declaration});
                ("textDocument/references", p, None)
            }
            Question::Outline(path) => {
                let uri = uri_of(path).ok_or_else(|| Error::invalid(format!("{} has no file URI", path.display())))?;
                ("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}), Some(path.clone()))
            }
            Question::Workspace(query) => ("workspace/symbol", json!({"query": query}), None),
            Question::Rename(at, new_name) => {
                let mut p = json!(lsp_position(at)?);
                p["newName"] = json!(new_name);
                ("textDocument/rename", p, None)
            }
        };
        let params = LanguageRequestParams { method: method.to_owned(), params };
        let result = self.request::<LanguageRequest>(params, LANGUAGE_TIMEOUT, &format!("answer {method}"))?;
        let found = match question {
            Question::Definition(_) | Question::References(..) => Found::Spots(spots(result.result)?),
            Question::Hover(_) => Found::Hover(hover(result.result)?),
            Question::Outline(_) | Question::Workspace(_) => Found::Symbols(symbols(result.result, outline.as_ref())?),
            Question::Rename(..) => Found::Edit(edits(result.result)?),
        };
        Ok(Answer {
            encoding: encoding_named(result.position_encoding.as_deref(), self.encoding()),
            servers: result.servers,
            complete: result.complete,
            found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder's URI as editors write it on this platform (VS Code's spelling on Windows).
    const W: &str = if cfg!(windows) { "file:///c%3A/w" } else { "file:///w" };

    #[test]
    fn reads_every_location_shape() {
        let loc = json!({"uri": format!("{W}/a.ts"), "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}}});
        let link = json!({"targetUri": format!("{W}/b.ts"),
            "targetRange": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
            "targetSelectionRange": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 7}}});
        let got = spots(json!([loc.clone(), link])).expect("spots");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].span.start, crate::text::Position::new(1, 2));
        let a = if cfg!(windows) { r"c:\w\a.ts" } else { "/w/a.ts" };
        assert_eq!(got[0].path, std::path::Path::new(a));
        assert_eq!(got[1].span.start, crate::text::Position::new(3, 4), "a link is its selection range");
        assert_eq!(spots(loc).expect("one").len(), 1);
        assert!(spots(Value::Null).expect("null").is_empty());
        assert!(spots(json!(7)).is_err());
    }

    #[test]
    fn reads_hover_in_each_form() {
        assert_eq!(
            hover(json!({"contents": {"kind": "markdown", "value": "x: int"}})).expect("h"),
            Some("x: int".into())
        );
        assert_eq!(
            hover(json!({"contents": [{"language": "py", "value": "x"}, "doc"]})).expect("h"),
            Some("```py\nx\n```\n\ndoc".into())
        );
        assert_eq!(hover(json!({"contents": ""})).expect("h"), None);
    }

    #[test]
    fn reads_renames_and_refuses_file_operations() {
        let edit = json!({"documentChanges": [{"textDocument": {"uri": format!("{W}/a.ts"), "version": 3},
            "edits": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 7}}, "newText": "bar"}]}]});
        let files = edits(edit).expect("edits").expect("some");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].edits[0].1, "bar");
        let op = json!({"documentChanges": [{"kind": "rename", "oldUri": format!("{W}/a.ts"), "newUri": format!("{W}/b.ts")}]});
        assert_eq!(edits(op).expect_err("refused").kind(), ErrorKind::Unsupported);
        assert_eq!(edits(Value::Null).expect("null"), None);
    }

    #[test]
    fn names_symbol_kinds() {
        assert_eq!(kind_name(lsp::SymbolKind::FUNCTION), "function");
        assert_eq!(kind_name(lsp::SymbolKind::TYPE_PARAMETER), "type_parameter");
    }
}
