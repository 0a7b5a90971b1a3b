//! Tool surfaces: which tools a server offers, under which names, and in which words.
//!
//! A profile maps a tool name and JSON arguments to a core operation and formats the result or
//! the error as its contract says. Frontends (CLI, MCP, LSP) only ever talk to a [`Profile`].

mod coder;
mod explorer;
mod filesystem;
mod guarded;
mod standard;
mod toolkit;

use std::fmt;

use serde_json::{json, Value};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::sink::Sink;
use crate::tools::{Context, Effects};

pub use coder::Coder;
pub use explorer::Explorer;
pub use guarded::Guarded;
pub use standard::{Standard, DIAGNOSTICS_ARGUMENT};
pub use toolkit::Toolkit;

/// A tool as a profile lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The tool's name in this profile.
    pub name: &'static str,
    /// Its description, written for a model.
    pub description: &'static str,
    /// Its argument schema.
    pub input_schema: Value,
    /// Its effects.
    pub effects: Effects,
    /// Whether its work is bounded by one file or directory (see [`crate::tools::Tool::quick`]).
    pub quick: bool,
}

impl ToolInfo {
    /// The tool as JSON, in the shape of an MCP `Tool`.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "readOnlyHint": self.effects.read_only,
                "destructiveHint": self.effects.destructive,
                "idempotentHint": self.effects.idempotent,
                "openWorldHint": self.effects.open_world,
            },
        })
    }
}

/// One tool of a contract profile's table: how it is listed, and `run`, how that profile runs it
/// (each profile has its own entry-point signature).
pub(crate) struct Entry<R> {
    /// The tool's name in the profile.
    pub name: &'static str,
    /// Its description, written for a model.
    pub description: &'static str,
    /// Its argument schema.
    pub schema: fn() -> Value,
    /// Its effects.
    pub effects: Effects,
    /// Whether its work is bounded by one file or directory (see [`crate::tools::Tool::quick`]).
    pub quick: bool,
    /// How the profile runs it.
    pub run: R,
}

impl<R> Entry<R> {
    /// The tool as a profile lists it.
    pub fn info(&self) -> ToolInfo {
        ToolInfo {
            name: self.name,
            description: self.description,
            input_schema: (self.schema)(),
            effects: self.effects,
            quick: self.quick,
        }
    }

    /// Whether the tool is served under `config` (read-only mode serves only tools that change
    /// nothing).
    pub fn served(&self, config: &Config) -> bool {
        self.effects.read_only || !config.read_only
    }
}

/// The tools of `table` served under `config`, as listed.
pub(crate) fn listed<R>(table: &[Entry<R>], config: &Config) -> Vec<ToolInfo> {
    table.iter().filter(|t| t.served(config)).map(Entry::info).collect()
}

/// The entry of tool `name` in `table` if it is served under `config`, else an unknown tool.
pub(crate) fn served<'t, R>(table: &'t [Entry<R>], name: &str, config: &Config) -> Result<&'t Entry<R>, CallError> {
    table.iter().find(|t| t.name == name && t.served(config)).ok_or_else(|| CallError::UnknownTool(name.to_owned()))
}

/// The result of a tool call, in the shape every frontend can carry.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// Text for the model.
    pub text: String,
    /// Structured content, when the tool has some.
    pub structured: Option<Value>,
    /// Whether the call failed (the text then explains why, in the contract's words).
    pub is_error: bool,
    /// The result's content items in order, when the contract answers with several (or with a
    /// binary blob); empty means one text item, `text`. When present, `text` holds them joined,
    /// for frontends that carry a single text (the CLI).
    pub items: Vec<Item>,
}

/// One content item of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Text for the model.
    Text(String),
    /// Binary data, base64-encoded, with its MIME type and the URI of the file it came from.
    Blob {
        /// The `file:` URI of the data's file.
        uri: String,
        /// The base64 data.
        data: String,
        /// The MIME type.
        mime_type: String,
    },
}

impl CallResult {
    /// Ends the result with `text` in a content item of its own, so that a contract's own text
    /// stays its first item (`text` is then the items joined by a blank line).
    pub fn push_item(&mut self, text: String) {
        if self.items.is_empty() {
            self.items.push(Item::Text(self.text.clone()));
        }
        self.text.push_str("\n\n");
        self.text.push_str(&text);
        self.items.push(Item::Text(text));
    }

    /// A result of several text items: `text` is them joined with `separator`.
    pub fn texts(items: Vec<String>, separator: &str, is_error: bool) -> CallResult {
        let text = items.join(separator);
        let items = if items.len() > 1 { items.into_iter().map(Item::Text).collect() } else { Vec::new() };
        CallResult { text, structured: None, is_error, items }
    }
}

/// A call answered with a JSON-RPC error rather than a tool result: an unknown tool, or a
/// failure a contract documents as a JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No tool of that name in this profile (and mode).
    UnknownTool(String),
    /// A JSON-RPC error in the contract's own code, message and data.
    Rpc {
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
        /// The error's `data` member, when the contract has one.
        data: Option<Value>,
    },
}

impl CallError {
    /// The JSON-RPC error code of this failure (unknown tools are invalid params, -32602).
    pub fn code(&self) -> i32 {
        match self {
            CallError::UnknownTool(_) => -32602,
            CallError::Rpc { code, .. } => *code,
        }
    }

    /// The `data` member of the JSON-RPC error, if any.
    pub fn data(&self) -> Option<&Value> {
        match self {
            CallError::UnknownTool(_) => None,
            CallError::Rpc { data, .. } => data.as_ref(),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool(name) => write!(f, "unknown tool: {name}"),
            CallError::Rpc { message, .. } => f.write_str(message),
        }
    }
}

/// A tool surface.
pub trait Profile: Send + Sync {
    /// The profile's name, as given to `--profile`.
    fn name(&self) -> &'static str;

    /// The tools offered under `config` (read-only mode may hide some).
    fn tools(&self, config: &Config) -> Vec<ToolInfo>;

    /// Calls tool `name` with `args`; a change the tool computes is applied through `sink`.
    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError>;

    /// The error result for a failure around a call rather than inside the tool (no turn in
    /// time, a panic, no workspace), in this profile's words. Frontends use it so that such
    /// failures read like any other.
    fn error_result(&self, e: &Error) -> CallResult {
        standard::error_result(e)
    }

    /// Whether a successful result may end with where each change went when it did not simply
    /// go to disk (an open editor buffer, saved or not). Contracts that fix their result text
    /// say no.
    fn reports_destinations(&self) -> bool {
        false
    }

    /// Whether the client's MCP roots replace the server's. A profile whose contract confines
    /// it to the root the operator configured says no.
    fn follows_client_roots(&self) -> bool {
        true
    }
}

/// Every profile: its name as given to `--profile` and how to make a fresh instance (a profile
/// may keep per-session state, such as a chosen workspace, so each server makes its own).
#[rustfmt::skip]
const ALL: &[(&str, MakeProfile)] = &[
    ("standard", || Box::new(Standard)),
    ("filesystem", || Box::new(filesystem::Filesystem)),
    ("coder", || Box::new(Coder)),
    ("explorer", || Box::new(Explorer)),
    ("toolkit", || Box::new(Toolkit::default())),
    ("guarded", || Box::new(Guarded)),
];

type MakeProfile = fn() -> Box<dyn Profile>;

/// The names `--profile` accepts.
pub const NAMES: &[&str] = &names::<{ ALL.len() }>();

const fn names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = ALL[i].0;
        i += 1;
    }
    out
}

/// A new instance of the profile called `name`.
pub fn by_name(name: &str) -> Result<Box<dyn Profile>> {
    match ALL.iter().find(|(n, _)| *n == name) {
        Some((_, make)) => Ok(make()),
        None => Err(Error::invalid(format!("unknown profile `{name}`; known profiles: {}", NAMES.join(", ")))),
    }
}

/// Turns the failed result of a call that ran again on newer text (a file it changes changed
/// after its first read, [`crate::sink::on_fresh_text`]) into the `conflict` it is: its change
/// overlaps what `who` names ([`crate::journal::who_changed`]). In a profile that words errors as
/// tether does, the error becomes a `conflict` whose message says so before the tool's own words
/// (`no_match` on the new text, say); a contract with words of its own keeps its text and gains
/// an item saying it. A result that went through stays as it is.
pub fn as_overlap(result: &mut Result<CallResult, CallError>, profile: &dyn Profile, who: &str) {
    let Ok(r) = result else { return };
    if !r.is_error {
        return;
    }
    let conflict = crate::ErrorKind::Conflict.as_str();
    let tethers_words = |text: &str| {
        serde_json::from_str::<Value>(text)
            .ok()
            .filter(|v| v.get("error").is_some_and(Value::is_string) && v.get("message").is_some_and(Value::is_string))
    };
    let speaks_tethers = tethers_words(&profile.error_result(&Error::new(crate::ErrorKind::Conflict, "")).text)
        .is_some_and(|v| v["error"] == conflict);
    let own =
        (speaks_tethers && r.structured.is_none() && r.items.is_empty()).then(|| tethers_words(&r.text)).flatten();
    match own {
        Some(mut v) => {
            let kind = v["error"].as_str().unwrap_or_default().to_owned();
            let message = v["message"].as_str().unwrap_or_default();
            let message = if kind == conflict {
                format!("{who}. {message}")
            } else {
                format!("{who}; this call's change no longer applies to the new text ({kind}: {message})")
            };
            v["error"] = Value::from(conflict);
            v["message"] = Value::from(message);
            r.text = v.to_string();
        }
        None => r.push_item(format!("conflict: {who}; this call's change no longer applies to the new text")),
    }
}

/// Runs tool `name` of `profile` through `sink`, each applied plan recorded in the journal when
/// `journal` is set (as `info` says who asked), again on the newer text while its change meets a
/// file changed since its read ([`crate::sink::on_fresh_text`]), and, when it still fails, as the
/// `conflict` that names what it overlapped ([`name_the_overlap`]): how a call runs on disk, for
/// every frontend but `tether lsp` (which has its own retry loop).
pub fn call_on_fresh_text(
    profile: &dyn Profile,
    ctx: &Context<'_>,
    sink: &dyn Sink,
    journal: Option<&crate::config::JournalSettings>,
    info: &crate::journal::CallInfo,
    name: &str,
    args: &Value,
) -> Result<CallResult, CallError> {
    let roots = ctx.vfs.workspace().roots();
    let rerun = crate::journal::Rerun::starting_now();
    let (mut result, stale) = crate::sink::on_fresh_text(sink, |sink| match journal {
        Some(settings) => {
            let recording =
                crate::journal::Recording::new(sink, crate::journal::Journal::open(settings, roots), info.clone());
            profile.call(ctx, &recording, name, args.clone())
        }
        None => profile.call(ctx, sink, name, args.clone()),
    });
    name_the_overlap(&mut result, profile, journal, roots, rerun, stale);
    result
}

/// [`as_overlap`] for a call of `profile` run on `roots` under `journal` (when it is on) that
/// started at `rerun.since_ms` and met `stale` files changed ([`crate::sink::on_fresh_text`]'s
/// answer).
pub fn name_the_overlap(
    result: &mut Result<CallResult, CallError>,
    profile: &dyn Profile,
    journal: Option<&crate::config::JournalSettings>,
    roots: &[std::path::PathBuf],
    mut rerun: crate::journal::Rerun,
    stale: Vec<std::path::PathBuf>,
) {
    if stale.is_empty() || !matches!(result, Ok(r) if r.is_error) {
        return;
    }
    rerun.add(stale);
    let journal = journal.map(|s| crate::journal::Journal::open(s, roots));
    as_overlap(result, profile, &crate::journal::who_changed(journal.as_ref(), roots, &rerun));
}
