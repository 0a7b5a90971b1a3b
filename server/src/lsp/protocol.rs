//! tether's own LSP extensions: command names, custom methods and their shapes.
//!
//! Every name here is documented in `editors/protocol.md`, and a test keeps the two in step:
//! add a name here and its section there together.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp::lsp_types::Url;

/// `workspace/executeCommand` command that runs one tool.
pub const CALL_TOOL: &str = "tether.callTool";
/// `workspace/executeCommand` command that lists the tools of a profile.
pub const LIST_TOOLS: &str = "tether.listTools";
/// Every command the server announces in `executeCommandProvider`.
pub const COMMANDS: &[&str] = &[CALL_TOOL, LIST_TOOLS];

/// Server-to-client request: save these documents.
pub const SAVE_DOCUMENTS: &str = "tether/saveDocuments";
/// Client-to-server request (debugging and tests only): a document as the server holds it.
pub const DEBUG_DOCUMENT: &str = "tether/debugDocument";
/// The custom methods the server handles (client to server).
pub const SERVER_METHODS: &[&str] = &[DEBUG_DOCUMENT];
/// The custom methods the server sends (server to client).
pub const CLIENT_METHODS: &[&str] = &[SAVE_DOCUMENTS];

/// `initializationOptions` key: the save policy, `"clean"` or `"never"`.
pub const SAVE_OPTION: &str = "save";
/// Every `initializationOptions` key the server reads.
pub const INIT_OPTIONS: &[&str] = &[SAVE_OPTION];

/// The key under `experimental` (in client and server capabilities) where tether's own
/// capabilities live.
pub const CAPABILITY_KEY: &str = "tether";
/// The client capability, under `experimental.tether`, announcing `tether/saveDocuments`.
pub const SAVE_DOCUMENTS_CAPABILITY: &str = "saveDocuments";
/// The server capability, under `experimental.tether`, giving this protocol's version.
pub const PROTOCOL_VERSION_CAPABILITY: &str = "protocolVersion";
/// The version of this protocol, announced in `experimental.tether.protocolVersion`.
pub const PROTOCOL_VERSION: u32 = 1;

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
