//! tether's own LSP extensions: command names, custom methods and their shapes.
//!
//! Every name here is documented in `editors/protocol.md`, and a test keeps the two in step:
//! add a name here and its section there together.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp::lsp_types::{Diagnostic, Range, Url};

/// `workspace/executeCommand` command that runs one tool.
pub const CALL_TOOL: &str = "tether.callTool";
/// `workspace/executeCommand` command that lists the tools of a profile.
pub const LIST_TOOLS: &str = "tether.listTools";
/// Every command the server announces in `executeCommandProvider`.
pub const COMMANDS: &[&str] = &[CALL_TOOL, LIST_TOOLS];

/// Server-to-client request: save these documents.
pub const SAVE_DOCUMENTS: &str = "tether/saveDocuments";
/// Server-to-client request: what the user is looking at.
pub const EDITOR_CONTEXT: &str = "tether/editorContext";
/// Server-to-client request: show a change to the user and wait for their decision.
pub const REVIEW: &str = "tether/review";
/// Server-to-client request: ask the editor's other language servers.
pub const LANGUAGE_REQUEST: &str = "tether/languageRequest";
/// Server-to-client notification: another process changed the file of an open document with
/// unsaved changes, and tether merged that change into the buffer or could not.
pub const DISK_CHANGE: &str = "tether/diskChange";
/// Server-to-client notification: another process changed the file of an open document without
/// unsaved changes; the client reloads it now.
pub const DISK_RELOAD: &str = "tether/diskReload";
/// Client-to-server request (debugging and tests only): a document as the server holds it.
pub const DEBUG_DOCUMENT: &str = "tether/debugDocument";
/// Client-to-server notification: one document's diagnostics from the editor's language servers.
pub const PUBLISH_DIAGNOSTICS: &str = "tether/publishDiagnostics";
/// The custom methods the server handles (client to server).
pub const SERVER_METHODS: &[&str] = &[PUBLISH_DIAGNOSTICS, DEBUG_DOCUMENT];
/// The custom methods the server sends (server to client).
pub const CLIENT_METHODS: &[&str] =
    &[SAVE_DOCUMENTS, EDITOR_CONTEXT, LANGUAGE_REQUEST, REVIEW, DISK_CHANGE, DISK_RELOAD];

/// `initializationOptions` key: the save policy, `"clean"` or `"never"`.
pub const SAVE_OPTION: &str = "save";
/// `initializationOptions` key: the diagnostics a change reports (`afterChange`, `wait`).
pub const DIAGNOSTICS_OPTION: &str = "diagnostics";
/// `initializationOptions` key: paths no tool may touch (`patterns`, `secrets`).
pub const DENY_OPTION: &str = "deny";
/// `initializationOptions` key (and `workspace/didChangeConfiguration` setting under `tether`):
/// review before apply (`mode`, `rules`, `timeout`).
pub const REVIEW_OPTION: &str = "review";
/// Every `initializationOptions` key the server reads.
pub const INIT_OPTIONS: &[&str] = &[DENY_OPTION, DIAGNOSTICS_OPTION, REVIEW_OPTION, SAVE_OPTION];

/// The key under `experimental` (in client and server capabilities) where tether's own
/// capabilities live.
pub const CAPABILITY_KEY: &str = "tether";
/// The client capability, under `experimental.tether`, announcing `tether/saveDocuments`.
pub const SAVE_DOCUMENTS_CAPABILITY: &str = "saveDocuments";
/// The client capability, under `experimental.tether`, announcing `tether/publishDiagnostics`.
pub const DIAGNOSTICS_CAPABILITY: &str = "diagnostics";
/// The client capability, under `experimental.tether`, announcing `tether/editorContext`.
pub const EDITOR_CONTEXT_CAPABILITY: &str = "editorContext";
/// The client capability, under `experimental.tether`, announcing `tether/languageRequest`.
pub const LANGUAGE_REQUESTS_CAPABILITY: &str = "languageRequests";
/// The client capability, under `experimental.tether`, announcing `tether/review`.
pub const REVIEW_CAPABILITY: &str = "review";
/// `experimental.tether` key: the client handles `tether/diskChange`.
pub const DISK_CHANGES_CAPABILITY: &str = "diskChanges";
/// `experimental.tether` key: the client handles `tether/diskReload`.
pub const DISK_RELOADS_CAPABILITY: &str = "diskReloads";
/// The capability, under `experimental.tether`, giving the protocol version a side speaks: the
/// server's in its capabilities, the client's in its own.
pub const PROTOCOL_VERSION_CAPABILITY: &str = "protocolVersion";
/// The version of this protocol, announced in `experimental.tether.protocolVersion`. It grows
/// when a command, method or shape is added; what an older peer does not know it never sees.
pub const PROTOCOL_VERSION: u32 = 3;
/// The server capability, under `experimental.tether`, giving the oldest protocol version a
/// client may speak to this server.
pub const MIN_PROTOCOL_VERSION_CAPABILITY: &str = "minProtocolVersion";
/// The oldest protocol version this server still serves: every version so far only added, so 1.
/// A client speaking less is told so at `initialize`, and a client whose server announces a
/// minimum above its own version stops with a message instead of failing call by call.
pub const MIN_PROTOCOL_VERSION: u32 = 1;

/// The one argument of `tether.callTool`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CallToolParams {
    /// The tool's name in the profile.
    pub tool: String,
    /// The tool's arguments (a JSON object); absent means `{}`.
    #[serde(default)]
    pub arguments: Value,
    /// The profile to call it in; absent means the server's `--profile`.
    #[serde(default)]
    pub profile: Option<String>,
    /// The user invoked this call directly (a command they ran, not an assistant): a failure is
    /// then also shown to them with `window/showMessage`.
    #[serde(default)]
    pub interactive: bool,
}

/// The optional argument of `tether.listTools`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ListToolsParams {
    /// The profile to list; absent means the server's `--profile`.
    #[serde(default)]
    pub profile: Option<String>,
}

/// `tether/saveDocuments` (server to client).
#[derive(Debug)]
pub enum SaveDocuments {}

/// Parameters of `tether/saveDocuments`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SaveDocumentsParams {
    /// The documents to save, as the client named them in `didOpen`.
    pub uris: Vec<Url>,
}

/// Result of `tether/saveDocuments`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SaveDocumentsResult {
    /// The documents the client saved; any other was not saved.
    pub saved: Vec<Url>,
}

impl tower_lsp::lsp_types::request::Request for SaveDocuments {
    type Params = SaveDocumentsParams;
    type Result = SaveDocumentsResult;
    const METHOD: &'static str = SAVE_DOCUMENTS;
}

/// `tether/diskChange` (server to client).
#[derive(Debug)]
pub enum DiskChange {}

/// Parameters of `tether/diskChange`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DiskChangeParams {
    /// The document, as the client named it in `didOpen`.
    pub uri: Url,
    /// Whether the file's change is now in the buffer (with the buffer's unsaved changes kept).
    pub merged: bool,
    /// The buffer's version the change was merged into (when merged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// The file's size as tether read it: with `mtime`, a client may tell whether the file
    /// changed again since.
    pub size: u64,
    /// The file's modification time as tether read it: `[seconds, nanoseconds]` since the epoch.
    pub mtime: Option<(u64, u32)>,
    /// Where the file's change and the unsaved changes touch the same lines (when not merged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlaps: Option<String>,
    /// The unified diff from the buffer to the file (when not merged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl tower_lsp::lsp_types::notification::Notification for DiskChange {
    type Params = DiskChangeParams;
    const METHOD: &'static str = DISK_CHANGE;
}

/// `tether/diskReload` (server to client).
#[derive(Debug)]
pub enum DiskReload {}

/// Parameters of `tether/diskReload`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DiskReloadParams {
    /// The document, as the client named it in `didOpen`.
    pub uri: Url,
    /// The file's size as tether read it.
    pub size: u64,
    /// The file's modification time as tether read it: `[seconds, nanoseconds]` since the epoch.
    pub mtime: Option<(u64, u32)>,
}

impl tower_lsp::lsp_types::notification::Notification for DiskReload {
    type Params = DiskReloadParams;
    const METHOD: &'static str = DISK_RELOAD;
}

/// Parameters of `tether/debugDocument`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DebugDocumentParams {
    /// The document, as the client named it in `didOpen`.
    pub uri: Url,
}

/// Result of `tether/debugDocument`: the document as the server holds it (`null` when the
/// server does not hold it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DebugDocument {
    /// The document's version.
    pub version: i32,
    /// Its full text.
    pub text: String,
    /// Whether the server believes it has unsaved changes.
    pub dirty: bool,
}

/// Parameters of `tether/publishDiagnostics` (client to server).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishDiagnosticsParams {
    /// The document.
    pub uri: Url,
    /// The document version the diagnostics were computed for, when known.
    #[serde(default)]
    pub version: Option<i32>,
    /// The unit of the ranges' characters (`utf-8`, `utf-16`, `utf-32`); absent: the
    /// connection's.
    #[serde(default)]
    pub position_encoding: Option<String>,
    /// The document's diagnostics, whole.
    pub diagnostics: Vec<Diagnostic>,
    /// No later part will come for `version`: every language server's diagnostics in it were
    /// pulled (`textDocument/diagnostic` answers whole), so tether takes the report at once
    /// instead of waiting for the document's diagnostics to stay unchanged.
    #[serde(default)]
    pub complete: bool,
}

/// `tether/editorContext` (server to client).
#[derive(Debug)]
pub enum EditorContext {}

/// Result of `tether/editorContext`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorContextResult {
    /// The unit of every range's characters; absent: the connection's.
    #[serde(default)]
    pub position_encoding: Option<String>,
    /// The visible editors.
    #[serde(default)]
    pub editors: Vec<VisibleEditor>,
}

/// One visible editor in `tether/editorContext`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VisibleEditor {
    /// Its document.
    pub uri: Url,
    /// The document's version, when the client knows it.
    #[serde(default)]
    pub version: Option<i32>,
    /// Whether it has the focus.
    #[serde(default)]
    pub active: bool,
    /// Its selections, primary first.
    #[serde(default)]
    pub selections: Vec<Selection>,
    /// The ranges on screen.
    #[serde(default)]
    pub visible_ranges: Vec<Range>,
}

/// A selection (a cursor when empty) and the text it holds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Selection {
    /// Where it is.
    pub range: Range,
    /// The selected text.
    #[serde(default)]
    pub text: String,
}

impl tower_lsp::lsp_types::request::Request for EditorContext {
    type Params = Value;
    type Result = EditorContextResult;
    const METHOD: &'static str = EDITOR_CONTEXT;
}

/// `tether/languageRequest` (server to client).
#[derive(Debug)]
pub enum LanguageRequest {}

/// Parameters of `tether/languageRequest`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct LanguageRequestParams {
    /// The LSP method to ask the editor's other language servers.
    pub method: String,
    /// That method's params.
    pub params: Value,
}

/// Result of `tether/languageRequest`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LanguageRequestResult {
    /// The unit of every position's character in `result`; absent: the connection's.
    #[serde(default)]
    pub position_encoding: Option<String>,
    /// The language servers that answered.
    #[serde(default)]
    pub servers: Vec<String>,
    /// `false` while a server is still indexing.
    #[serde(default = "yes")]
    pub complete: bool,
    /// The merged answer, in the method's result shape.
    #[serde(default)]
    pub result: Value,
}

fn yes() -> bool {
    true
}

impl tower_lsp::lsp_types::request::Request for LanguageRequest {
    type Params = LanguageRequestParams;
    type Result = LanguageRequestResult;
    const METHOD: &'static str = LANGUAGE_REQUEST;
}

/// The user's answer about one file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ReviewFileAnswer {
    /// The file, as the proposal named it.
    pub uri: String,
    /// `accept` or `reject`.
    pub decision: String,
    /// The text to write instead of the proposed one (edited by the user, or only some hunks).
    #[serde(default)]
    pub text: Option<String>,
}

/// The user's answer to a proposal.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ReviewAnswer {
    /// `accept` (all), `reject` (all) or `partial` (per file).
    pub decision: String,
    /// Why, when the user said.
    #[serde(default)]
    pub reason: Option<String>,
    /// Per file, for `partial` (and for `accept` with edited text).
    #[serde(default)]
    pub files: Vec<ReviewFileAnswer>,
}

/// `tether/review` (server to client): params are the proposal (`lsp/review.rs`), the result the
/// user's answer.
#[derive(Debug)]
pub enum Review {}

impl tower_lsp::lsp_types::request::Request for Review {
    type Params = Value;
    type Result = ReviewAnswer;
    const METHOD: &'static str = REVIEW;
}
