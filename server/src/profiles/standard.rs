//! The `standard` profile: tether's own unified tool set.
//!
//! Names and arguments are the core's own; a failure is an error result whose text is the JSON
//! object `{"error": KIND, "message": "..."}`.

use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::Error;
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
        tools::ALL
            .iter()
            .filter(|t| t.effects.read_only || !config.read_only)
            .map(|t| ToolInfo {
                name: t.name,
                description: t.description,
                input_schema: (t.schema)(),
                effects: t.effects,
                quick: t.quick,
            })
            .collect()
    }

    fn reports_destinations(&self) -> bool {
        true
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let tool = tools::find(name)
            .filter(|t| t.effects.read_only || !ctx.config.read_only)
            .ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
        Ok(match (tool.run)(ctx, args) {
            Ok(Output::Text(text)) => CallResult { text, structured: None, items: Vec::new(), is_error: false },
            Ok(Output::Json(v)) => {
                CallResult { text: Output::json_text(&v), structured: Some(v), items: Vec::new(), is_error: false }
            }
            Ok(Output::Change { plan, summary }) => match sink::apply(sink, ctx.config, ctx.vfs, &plan) {
                Ok(_) => CallResult { text: summary, structured: None, items: Vec::new(), is_error: false },
                Err(e) => error_result(&e),
            },
            Err(e) => error_result(&e),
        })
    }
}

/// The standard error result for `e`.
pub fn error_result(e: &Error) -> CallResult {
    let v = json!({"error": e.kind().as_str(), "message": e.message()});
    CallResult { text: v.to_string(), structured: None, items: Vec::new(), is_error: true }
}
