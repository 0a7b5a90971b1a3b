//! The `standard` profile: tether's own unified tool set.
//!
//! Names and arguments are the core's own; a failure is an error result whose text is the JSON
//! object `{"error": KIND, "message": "..."}`.

use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::sink::{self, Sink};
use crate::tools::{self, Context, Output};

/// The `standard` profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Standard;

impl Profile for Standard {
    fn name(&self) -> &'static str {
        "standard"
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        served(config)
            .filter(|t| t.effects.read_only || !config.read_only)
            .map(|t| ToolInfo {
                name: t.name,
                description: t.description,
                input_schema: schema(t, config),
                effects: t.effects,
                quick: t.quick,
            })
            .collect()
    }

    fn reports_destinations(&self) -> bool {
        true
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, mut args: Value) -> Result<CallResult, CallError> {
        let tool = served(ctx.config)
            .find(|t| t.name == name)
            .filter(|t| t.effects.read_only || !ctx.config.read_only)
            .ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
        if ctx.config.editor && !tool.effects.read_only {
            // Read by the editor's call path (`lsp/calls.rs`), not by the tool.
            if let Some(o) = args.as_object_mut() {
                o.remove(DIAGNOSTICS_ARGUMENT);
            }
        }
        if let Err(e) = check_version(ctx, tool.name, &mut args) {
            return Ok(error_result(&e));
        }
        Ok(match (tool.run)(ctx, args) {
            Ok(Output::Text(text)) => CallResult { text, structured: None, items: Vec::new(), is_error: false },
            Ok(Output::Json(v)) => {
                CallResult { text: Output::json_text(&v), structured: Some(v), items: Vec::new(), is_error: false }
            }
            Ok(Output::Change { plan, summary }) => {
                sink.describe(&summary);
                match sink::apply(sink, ctx.config, ctx.vfs, &plan) {
                    Ok(_) => CallResult { text: summary, structured: None, items: Vec::new(), is_error: false },
                    Err(e) => error_result(&e),
                }
            }
            Err(e) => error_result(&e),
        })
    }
}

/// The argument that turns off the diagnostics a change reports, on every tool that changes files
/// when an editor runs tether.
pub const DIAGNOSTICS_ARGUMENT: &str = "diagnostics";

/// The argument an edit of one file takes: the version its read showed, so that an edit of a
/// file that changed since is refused with what changed.
pub const VERSION_ARGUMENT: &str = "version";

/// The tools that change one file named by `path`, which take [`VERSION_ARGUMENT`].
const VERSIONED: &[&str] = &["edit_file", "multi_edit", "replace", "insert", "append", "write_file"];

/// Takes `version` out of `args` and, when it is given and the file changed since, fails with
/// `conflict` saying what changed and who changed it.
fn check_version(ctx: &Context<'_>, tool: &str, args: &mut Value) -> Result<(), Error> {
    if ctx.config.journal.is_none() || !VERSIONED.contains(&tool) {
        return Ok(());
    }
    let Some(o) = args.as_object_mut() else { return Ok(()) };
    let Some(version) = o.remove(VERSION_ARGUMENT) else { return Ok(()) };
    let Value::String(version) = version else {
        return Err(Error::invalid("`version`: expected the string a read ended with ([version: ...])"));
    };
    let Some(Value::String(given)) = o.get("path") else { return Ok(()) };
    let path = ctx.vfs.resolve(given)?;
    if !ctx.vfs.exists(&path) {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("{path}: was deleted since you read it (version {version}); nothing was changed"),
        )
        .with_path(path.given()));
    }
    let since = tools::changes_since::since(ctx, &path, &version)?;
    if since.changed() {
        return Err(Error::new(ErrorKind::Conflict, since.describe()).with_path(path.given()));
    }
    Ok(())
}

/// The core tools, with an editor those that answer from its knowledge, and with the journal
/// those that answer from it.
fn served(config: &Config) -> impl Iterator<Item = &'static tools::Tool> + Clone {
    let knowledge: &[tools::Tool] = if config.editor { tools::knowledge::ALL } else { &[] };
    let journal: &[tools::Tool] = if config.journal.is_some() { tools::JOURNAL } else { &[] };
    tools::ALL.iter().chain(knowledge).chain(journal)
}

/// `tool`'s schema; with an editor, a tool that changes files also takes `diagnostics`.
fn schema(tool: &tools::Tool, config: &Config) -> Value {
    let mut schema = (tool.schema)();
    if config.journal.is_some() && VERSIONED.contains(&tool.name) {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(
                VERSION_ARGUMENT.to_owned(),
                json!({
                    "type": "string",
                    "description": "The version your read of the file ended with ([version: ...]). When the file \
                                    changed since, nothing is changed and the error shows what changed and who changed it."
                }),
            );
        }
    }
    if config.editor && !tool.effects.read_only {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert(
                DIAGNOSTICS_ARGUMENT.to_owned(),
                json!({
                    "type": "boolean",
                    "description": "Report the problems the editor's language servers find in the changed open \
                                    files after the change (default true); false answers without waiting for them."
                }),
            );
        }
    }
    schema
}

/// The standard error result for `e`.
pub fn error_result(e: &Error) -> CallResult {
    let v = json!({"error": e.kind().as_str(), "message": e.message()});
    CallResult { text: v.to_string(), structured: None, items: Vec::new(), is_error: true }
}
