//! `diagnostics`: the problems the editor's language servers report, for a file, a folder or the
//! whole workspace, as the editor sees them now.

use std::collections::HashMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{editor, Places, Problem, Reported, Severity};
use crate::error::{Error, Result};
use crate::tools::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};

/// Problems listed in one call unless `limit` says otherwise.
const DEFAULT_LIMIT: u64 = 200;

/// Arguments of `diagnostics`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsArgs {
    /// A file or folder (absolute inside a workspace root, or relative to the first root);
    /// absent: the whole workspace.
    #[serde(default)]
    pub path: Option<String>,
    /// The least severe problems to include: `error`, `warning`, `information` or `hint`
    /// (default: all).
    #[serde(default)]
    pub severity: Option<String>,
    /// Problems to skip, for paging (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Problems to list at most (default 200, at most 2000).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "diagnostics",
    description: "The problems (errors, warnings, hints) the editor's language servers report now, \
for one file, a folder or the whole workspace (`path` absent), on the editor's unsaved text. JSON: \
`files`, each with `path`, `version` (the document version the problems were computed for) and \
`problems` (`severity`, 1-based `line`/`column` to `end_line`/`end_column`, `source`, `code`, \
`message`), most severe first; `total` problems matched, `truncated` when `offset`/`limit` left \
some out. Only files the language servers analysed are listed (usually the open ones). Filter \
with `severity` (the least severe to include). Use it to check the code after changing it, or to \
find what to fix; a change to an open file already reports the problems it introduced and \
resolved.",
    schema: schema_of::<DiagnosticsArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| diagnostics(ctx, parse_args(args)?).map(Output::Json),
};

/// Lists the problems `args` asks for.
pub fn diagnostics(ctx: &Context<'_>, args: DiagnosticsArgs) -> Result<Value> {
    let editor = editor(ctx)?;
    let least = match args.severity.as_deref() {
        None => super::Severity::Hint,
        Some(name) => Severity::parse(name).ok_or_else(|| {
            Error::invalid(format!("`severity` must be error, warning, information or hint, got {name:?}"))
        })?,
    };
    let offset = args.offset.unwrap_or(0);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    check_range("limit", i64::try_from(limit).unwrap_or(i64::MAX), 1, 2000)?;
    let scope = match &args.path {
        Some(p) => Some(ctx.vfs.resolve(p)?.real().to_path_buf()),
        None => None,
    };
    let mut reports = editor.diagnostics()?;
    reports.retain(|r| scope.as_deref().is_none_or(|s| r.path.starts_with(s)) && inside(ctx, &r.path));
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    let mut total = 0u64;
    let mut files = Vec::new();
    let mut places: HashMap<_, Places<'_, '_>> = HashMap::new();
    for report in &reports {
        let mut problems: Vec<&Problem> = report.problems.iter().filter(|p| p.severity <= least).collect();
        problems.sort_by_key(|p| (p.severity, p.span.start));
        let mut listed = Vec::new();
        for p in problems {
            total += 1;
            if total <= offset || total > offset + limit {
                continue;
            }
            let places = places.entry(report.encoding).or_insert_with(|| Places::new(ctx, report.encoding));
            listed.push(problem_json(places, &report.path, p));
        }
        if !listed.is_empty() {
            files.push(file_json(ctx, report, listed));
        }
    }
    Ok(json!({
        "files": files,
        "total": total,
        "offset": offset,
        "truncated": total > offset + limit,
    }))
}

/// Whether `path` is inside the workspace (the editor may know files elsewhere).
fn inside(ctx: &Context<'_>, path: &Path) -> bool {
    ctx.vfs.resolve(&path.to_string_lossy()).is_ok()
}

/// One file's entry.
fn file_json(ctx: &Context<'_>, report: &Reported, problems: Vec<Value>) -> Value {
    json!({"path": ctx.vfs.display(&report.path), "version": report.version, "problems": problems})
}

/// One problem in tether's terms.
pub fn problem_json(places: &mut Places<'_, '_>, path: &Path, p: &Problem) -> Value {
    let at = places.place(path, p.span);
    let mut out = Map::new();
    out.insert("severity".into(), json!(p.severity.as_str()));
    out.insert("line".into(), json!(at.line));
    out.insert("column".into(), json!(at.column));
    out.insert("end_line".into(), json!(at.end_line));
    out.insert("end_column".into(), json!(at.end_column));
    if let Some(source) = &p.source {
        out.insert("source".into(), json!(source));
    }
    if let Some(code) = &p.code {
        out.insert("code".into(), json!(code));
    }
    out.insert("message".into(), json!(p.message));
    Value::Object(out)
}
