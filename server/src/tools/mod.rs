//! The core operations, one file each, pure over the read view.
//!
//! A tool takes a [`Context`] and typed arguments and returns an [`Output`] or a core
//! [`Error`]. It never writes: changes come back as plans for a sink.
//! Every tool is described once by a [`Tool`] value; profiles choose which to serve and how.

pub mod append;
pub mod apply_patch;
pub mod changes_since;
pub mod contract;
pub mod delete;
pub mod edit_file;
pub mod editable;
pub mod explore;
pub mod glob;
pub mod grep;
pub mod history;
pub mod insert;
pub mod knowledge;
pub mod list_dir;
pub mod mkdir;
pub mod r#move;
pub mod multi_edit;
pub mod overview;
pub mod read_file;
pub mod read_files;
pub mod replace;
pub mod run;
pub mod run_allowed;
pub mod search;
pub mod stat;
pub mod undo;
pub mod write_file;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::{Cancel, Config};
use crate::edit::EditPlan;
use crate::error::{Error, Result};
use crate::vfs::Vfs;

/// What a tool call sees: the read view, the run's configuration, and its cancellation signal.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The read view (buffers over disk) of this call.
    pub vfs: &'a Vfs,
    /// Limits and switches.
    pub config: &'a Config,
    /// Set when the caller gives up on the call; long tools poll it and stop early.
    pub cancel: &'a Cancel,
    /// The editor running tether, when one does: what its language servers know
    /// ([`knowledge`]'s tools ask it).
    pub editor: Option<&'a dyn knowledge::Editor>,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("config", self.config)
            .field("editor", &self.editor.is_some())
            .finish_non_exhaustive()
    }
}

/// A successful tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Plain text for the model.
    Text(String),
    /// A JSON value (also shown as text, pretty-printed).
    Json(Value),
    /// Changes for a sink to apply, and the text to show once they are applied.
    Change {
        /// The changes.
        plan: EditPlan,
        /// What the tool did, for the model (for example `edited a.rs: 1 replacement`).
        summary: String,
    },
}

impl Output {
    /// The text a client shows.
    pub fn text(&self) -> String {
        match self {
            Output::Text(t) => t.clone(),
            Output::Json(v) => Output::json_text(v),
            Output::Change { summary, .. } => summary.clone(),
        }
    }

    /// How a JSON result is shown as text: pretty-printed.
    pub fn json_text(v: &Value) -> String {
        serde_json::to_string_pretty(v).unwrap_or_default()
    }
}

/// What a tool promises about its effects (MCP tool annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// The tool changes nothing.
    pub read_only: bool,
    /// The tool may overwrite or delete existing data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool may reach beyond the workspace (a command can use the network or any file the
    /// user can); the file tools cannot.
    pub open_world: bool,
}

impl Effects {
    /// A read-only tool.
    pub const READ: Effects = Effects { read_only: true, destructive: false, idempotent: true, open_world: false };
}

/// One core operation as a value: its name, description, schema, effects and entry point.
#[derive(Clone, Copy)]
pub struct Tool {
    /// The name in the `standard` profile.
    pub name: &'static str,
    /// What it does, when to prefer it, its limits: written for a model.
    pub description: &'static str,
    /// Its JSON schema for arguments.
    pub schema: fn() -> Value,
    /// Its effects.
    pub effects: Effects,
    /// Its work is bounded by one file or one directory listing (a read, a stat, an edit), so a
    /// server may run it on its protocol thread instead of handing it to a worker; tools that
    /// walk trees, touch many files or run commands say `false` and run on the blocking pool,
    /// where cancellation and progress reach them.
    pub quick: bool,
    /// Runs it on JSON arguments.
    pub run: fn(&Context<'_>, Value) -> Result<Output>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Every core tool, in the order they are listed.
#[rustfmt::skip] // One tool per line, so that adding a tool is a one-line change.
pub const ALL: &[Tool] = &[
    read_file::TOOL,
    read_files::TOOL,
    list_dir::TOOL,
    glob::TOOL,
    grep::TOOL,
    stat::TOOL,
    overview::TOOL,
    write_file::TOOL,
    edit_file::TOOL,
    multi_edit::TOOL,
    replace::TOOL,
    insert::TOOL,
    append::TOOL,
    apply_patch::TOOL,
    r#move::TOOL,
    delete::TOOL,
    mkdir::TOOL,
    run::TOOL,
];

/// The tools that answer from the change journal, served when it is on.
#[rustfmt::skip]
pub const JOURNAL: &[Tool] = &[
    history::TOOL,
    undo::TOOL,
    changes_since::TOOL,
];

/// The core tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    ALL.iter().find(|t| t.name == name)
}

/// The JSON schema of an arguments type, with every subschema inlined.
///
/// Only the call for `A` is generic: the generator and the finishing are built once, not once
/// per arguments type (there are dozens).
pub fn schema_of<A: JsonSchema>() -> Value {
    finish_schema(schema_generator().into_root_schema_for::<A>())
}

#[inline(never)]
fn schema_generator() -> schemars::generate::SchemaGenerator {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    settings.into_generator()
}

#[inline(never)]
fn finish_schema(schema: schemars::Schema) -> Value {
    let mut v = serde_json::to_value(schema).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    v
}

/// Parses JSON arguments into `A`, turning every failure into `invalid_input` naming the field.
pub fn parse_args<A: DeserializeOwned>(args: Value) -> Result<A> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        v @ Value::Object(_) => v,
        other => {
            return Err(Error::invalid(format!("arguments must be a JSON object, got {}", json_type(&other))));
        }
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." {
            Error::invalid(inner)
        } else {
            Error::invalid(format!("`{path}`: {inner}"))
        }
    })
}

/// The JSON type name of `v`, for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks that `value` of argument `field` lies in `min..=max`.
pub fn check_range(field: &str, value: i64, min: i64, max: i64) -> Result<()> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(format!("`{field}` must be between {min} and {max}, got {value}")))
    }
}

#[cfg(test)]
pub(crate) mod testing;
