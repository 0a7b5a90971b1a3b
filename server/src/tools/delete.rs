//! `delete`: placeholder until its implementation lands.

use super::{Effects, Output, Tool};
use crate::error::Error;

/// The tool.
pub const TOOL: Tool = Tool {
    name: "delete",
    description: "not yet implemented",
    schema: || serde_json::json!({"type": "object"}),
    effects: Effects { read_only: false, destructive: true, idempotent: false },
    run: |_, _| Err::<Output, _>(Error::invalid("not yet implemented")),
};
