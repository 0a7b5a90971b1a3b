//! `symbols`, `definition`, `references` and `hover`: what the editor's language servers know
//! about the code, on the editor's unsaved text.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{editor, locate, Answer, Editor, Found, Located, Place, Places, Question, Spot, Symbol};
use crate::error::{Error, ErrorKind, Result};
use crate::tools::{parse_args, schema_of, Context, Effects, Output, Tool};

/// Places or symbols listed at most in one answer.
const MAX_LISTED: usize = 500;

/// What a place argument says, for every symbol tool's description.
macro_rules! place_doc {
    () => {
        "Address the symbol by `path`, 1-based `line` and `symbol` (its name as written on that \
line; tether finds the column, also on a nearby line), or by `column` (1-based, in characters)."
    };
}

/// Arguments of `symbols`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsArgs {
    /// A file whose outline to list.
    #[serde(default)]
    pub path: Option<String>,
    /// Without `path`: a workspace symbol search (a name or part of one).
    #[serde(default)]
    pub query: Option<String>,
}

/// `symbols`.
pub const SYMBOLS: Tool = Tool {
    name: "symbols",
    description: "Symbols from the editor's language servers. With `path`: that file's outline \
(classes, functions, methods, variables, nested as `children`). With `query` (and no `path`): \
the workspace's symbols whose name matches it. Each has `name`, `kind`, `path`, 1-based `line`/\
`column` to `end_line`/`end_column`, and `detail` or `container` when known. `complete` is false \
while a language server is still indexing (ask again for more). Cheaper than reading a file to \
find where things are.",
    schema: schema_of::<SymbolsArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| symbols(ctx, parse_args(args)?).map(Output::Json),
};

/// `definition`.
pub const DEFINITION: Tool = Tool {
    name: "definition",
    description: concat!(
        "Where a symbol is defined, from the editor's language servers: `locations`, each with \
`path`, 1-based `line`/`column` to `end_line`/`end_column` and that line's `text`. ",
        place_doc!(),
        " `complete` is false while a language server is still indexing."
    ),
    schema: schema_of::<Place>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| spots(ctx, &parse_args(args)?, Question::Definition).map(Output::Json),
};

/// Arguments of `references`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    /// The file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in characters. Optional when `symbol` is given.
    #[serde(default)]
    pub column: Option<u64>,
    /// The symbol's name as written on that line: tether finds its column (on a nearby line
    /// when it is not on `line`). With `column` too, the occurrence nearest that column.
    #[serde(default)]
    pub symbol: Option<String>,
    /// List the declaration too (default true).
    #[serde(default)]
    pub include_declaration: Option<bool>,
}

/// `references`.
pub const REFERENCES: Tool = Tool {
    name: "references",
    description: concat!(
        "Every use of a symbol in the workspace, from the editor's language servers (so only the \
real uses, not other things of the same name): `locations`, each with `path`, 1-based `line`/\
`column` to `end_line`/`end_column` and that line's `text`; the declaration too unless \
`include_declaration` is false. ",
        place_doc!(),
        " `complete` is false while a language server is still indexing."
    ),
    schema: schema_of::<ReferencesArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| {
        let ReferencesArgs { path, line, column, symbol, include_declaration } = parse_args(args)?;
        spots(ctx, &Place { path, line, column, symbol }, |at| {
            Question::References(at, include_declaration.unwrap_or(true))
        })
        .map(Output::Json)
    },
};

/// `hover`.
pub const HOVER: Tool = Tool {
    name: "hover",
    description: concat!(
        "The type and documentation of a symbol, as the editor shows on hover: `contents` \
(markdown). ",
        place_doc!(),
        " `complete` is false while a language server is still indexing."
    ),
    schema: schema_of::<Place>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| hover(ctx, &parse_args(args)?).map(Output::Json),
};

/// Asks `question` and fails with `unsupported` when no language server serves the document.
pub fn ask(editor: &dyn Editor, question: Question, about: &str) -> Result<Answer> {
    let answer = editor.ask(question)?;
    if answer.servers.is_empty() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("no language server in the editor serves {about}, so there is nothing to ask"),
        ));
    }
    Ok(answer)
}

/// The locations a definition or references question finds.
fn spots(ctx: &Context<'_>, place: &Place, question: impl FnOnce(super::At) -> Question) -> Result<Value> {
    let editor = editor(ctx)?;
    let Located { at, .. } = locate(ctx, editor, place)?;
    let answer = ask(editor, question(at), &place.path)?;
    let Found::Spots(found) = answer.found else {
        return Err(Error::new(ErrorKind::IoError, "the editor answered with something other than locations"));
    };
    let mut places = Places::new(ctx, answer.encoding);
    let found: Vec<&Spot> = found.iter().filter(|s| !places.hidden(&s.path)).collect();
    let total = found.len();
    let locations: Vec<Value> = found
        .into_iter()
        .take(MAX_LISTED)
        .map(|Spot { path, span }| {
            let mut o = places.json(path, *span);
            let line = o.get("line").and_then(Value::as_u64).unwrap_or(0);
            if let Some(text) = usize::try_from(line).ok().and_then(|l| places.line_text(path, l)) {
                o.insert("text".into(), json!(text));
            }
            Value::Object(o)
        })
        .collect();
    let mut out = json!({"locations": locations, "complete": answer.complete});
    if total > MAX_LISTED {
        out["truncated"] = json!(format!("{total} found, the first {MAX_LISTED} listed"));
    }
    Ok(out)
}

/// The hover text at a place.
fn hover(ctx: &Context<'_>, place: &Place) -> Result<Value> {
    let editor = editor(ctx)?;
    let Located { at, .. } = locate(ctx, editor, place)?;
    let answer = ask(editor, Question::Hover(at), &place.path)?;
    let Found::Hover(contents) = answer.found else {
        return Err(Error::new(ErrorKind::IoError, "the editor answered with something other than hover text"));
    };
    Ok(json!({"contents": contents, "complete": answer.complete}))
}

/// An outline or a workspace search.
fn symbols(ctx: &Context<'_>, args: SymbolsArgs) -> Result<Value> {
    let editor = editor(ctx)?;
    let (question, about) = match (&args.path, &args.query) {
        (Some(path), _) => {
            let p = ctx.vfs.resolve(path)?;
            // Fails here, in tether's words, for a missing file or a directory.
            ctx.vfs.read_text(&p)?;
            (Question::Outline(p.real().to_path_buf()), path.clone())
        }
        (None, Some(query)) => (Question::Workspace(query.clone()), "the workspace".to_owned()),
        (None, None) => return Err(Error::invalid("give `path` (a file's outline) or `query` (a workspace search)")),
    };
    let answer = ask(editor, question, &about)?;
    let Found::Symbols(found) = answer.found else {
        return Err(Error::new(ErrorKind::IoError, "the editor answered with something other than symbols"));
    };
    let mut places = Places::new(ctx, answer.encoding);
    let mut count = 0;
    let listed = list(&mut places, &found, &mut count, args.path.is_none());
    let mut out = json!({"symbols": listed, "complete": answer.complete});
    if count > MAX_LISTED {
        out["truncated"] = json!(format!("{count} symbols, the first {MAX_LISTED} listed"));
    }
    Ok(out)
}

/// Symbols as JSON, nested, at most [`MAX_LISTED`] in all (`count` counts every one). A search
/// leaves out symbols outside the workspace (libraries).
fn list(places: &mut Places<'_, '_>, symbols: &[Symbol], count: &mut usize, search: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for s in symbols {
        if places.hidden(&s.spot.path) {
            continue;
        }
        let mut o = places.json(&s.spot.path, s.spot.span);
        if search && o.contains_key("outside_workspace") {
            continue;
        }
        *count += 1;
        if *count > MAX_LISTED {
            continue;
        }
        if !search {
            o.remove("path");
        }
        o.insert("name".into(), json!(s.name));
        o.insert("kind".into(), json!(s.kind));
        if let Some(d) = s.detail.as_deref().filter(|d| !d.is_empty()) {
            o.insert("detail".into(), json!(d));
        }
        if let Some(c) = s.container.as_deref().filter(|c| !c.is_empty()) {
            o.insert("container".into(), json!(c));
        }
        let children = list(places, &s.children, count, search);
        if !children.is_empty() {
            o.insert("children".into(), Value::Array(children));
        }
        out.push(Value::Object(o));
    }
    out
}
