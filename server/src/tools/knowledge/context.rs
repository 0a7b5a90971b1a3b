//! `editor_context`: what the user is looking at: the open documents, the visible editors, the
//! focused one, its cursor and selection with the selected text.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{editor, Places};
use crate::error::Result;
use crate::tools::{parse_args, schema_of, Context, Effects, Output, Tool};

/// Arguments of `editor_context` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "editor_context",
    description: "What the user is looking at in the editor, now: `active` (the focused file, or \
null), `open` (every open document, with `dirty` when it has unsaved changes), and `editors` (each \
visible editor: `path`, `active`, `version`, `selections` with 1-based `line`/`column` to \
`end_line`/`end_column` and the selected `text` — the first is the primary one, a cursor is an \
empty selection — and `visible` line ranges). Use it when the user says \"this\", \"the selected \
code\" or \"what I am looking at\". Nothing is sent to you unless you call it. Files outside the \
workspace are left out.",
    schema: schema_of::<ContextArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| {
        let ContextArgs {} = parse_args(args)?;
        editor_context(ctx).map(Output::Json)
    },
};

/// The editor's view, in tether's terms.
pub fn editor_context(ctx: &Context<'_>) -> Result<Value> {
    let view = editor(ctx)?.view()?;
    let mut places = Places::new(ctx, view.encoding);
    let mut active = None;
    let mut editors = Vec::new();
    for shown in &view.editors {
        if ctx.vfs.resolve(&shown.path.to_string_lossy()).is_err() {
            continue;
        }
        let path = ctx.vfs.display(&shown.path);
        if shown.active {
            active = Some(path.clone());
        }
        let selections: Vec<Value> = shown
            .selections
            .iter()
            .map(|(span, text)| {
                let mut o = places.json(&shown.path, *span);
                o.remove("path");
                o.insert("text".into(), json!(text));
                Value::Object(o)
            })
            .collect();
        let visible: Vec<Value> = shown
            .visible
            .iter()
            .map(|span| {
                let at = places.place(&shown.path, *span);
                json!({"line": at.line, "end_line": at.end_line})
            })
            .collect();
        editors.push(json!({
            "path": path,
            "active": shown.active,
            "version": shown.version,
            "selections": selections,
            "visible": visible,
        }));
    }
    let open: Vec<Value> = ctx
        .vfs
        .overlay()
        .iter()
        .filter(|(p, _)| ctx.vfs.resolve(&p.to_string_lossy()).is_ok())
        .map(|(p, d)| json!({"path": ctx.vfs.display(p), "dirty": d.dirty}))
        .collect();
    Ok(json!({"active": active, "open": open, "editors": editors}))
}
