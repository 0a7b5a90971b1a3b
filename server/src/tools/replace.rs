//! `replace`: every occurrence of a literal string or a regex in a file, optionally within a line
//! range, optionally as a dry run.

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::editable::{read_editable, Wording};
use super::knowledge::rename_hint;
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::closest::line_span;
use crate::edit::replace::Template;
use crate::edit::view::Mapped;
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::text::convert_breaks;
use crate::text::{LineEnding, LineIndex};
use crate::workspace::SandboxPath;

/// Arguments of `replace`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceArgs {
    /// Path of the file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// What to find: literal text, or a regular expression (Rust `regex` syntax) when `regex` is
    /// set. `^` and `$` match at line starts and ends; line breaks read as `\n` in every file.
    pub pattern: String,
    /// What to put in place of each match. With `regex`, `$1`/`\1`/`${1}` insert a group,
    /// `${name}` a named group, `$0`/`\0`/`$&` the whole match, `$$` a literal `$`. Without
    /// `regex` it is inserted literally.
    pub replacement: String,
    /// Treat `pattern` as a regular expression.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub regex: bool,
    /// Match letters regardless of case.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub ignore_case: bool,
    /// Only replace matches lying within lines `start_line` to `end_line` (1-based, inclusive);
    /// defaults to the first line.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<i64>,
    /// Last line of the range (inclusive); defaults to the last line, and is capped to it.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
    /// Replace at most this many matches, the first ones in file order; 0 means all.
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0))]
    pub limit: i64,
    /// Show the unified diff of what would change, and change nothing.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub dry_run: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "replace",
    description: "Replace every occurrence of `pattern` with `replacement` in one text file: literal text \
by default, a regular expression (Rust regex syntax, `^`/`$` at line bounds) with `regex`. \
In regex mode `replacement` may use `$1`, `\\1`, `${name}`, `$0` or `$&` (whole match), and `$$` for a \
literal `$`; a reference to a group the pattern lacks is an error. In literal mode `replacement` is \
inserted as is. Restrict matches to lines `start_line`..`end_line` (1-based, inclusive), cap them with \
`limit` (the first N in file order), or set `dry_run` to get the unified diff without changing \
anything. Line breaks read as `\\n` whatever the file uses, and written ones take the file's own. \
Fails with no_match when nothing matches. For one specific change with context use edit_file.",
    schema: schema_of::<ReplaceArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: false,
    run: |ctx, args: Value| replace(ctx, parse_args(args)?),
};

/// Computes the plan (or, for a dry run, the diff) of one `replace` call.
pub fn replace(ctx: &Context<'_>, args: ReplaceArgs) -> Result<Output> {
    if args.pattern.is_empty() {
        return Err(Error::invalid("`pattern` is empty: give the text or regex to find"));
    }
    let limit = usize::try_from(args.limit)
        .map_err(|_| Error::invalid(format!("`limit` must be 0 (all) or more, got {}", args.limit)))?;
    for (field, v) in [("start_line", args.start_line), ("end_line", args.end_line)] {
        if let Some(n) = v.filter(|&n| n < 1) {
            return Err(Error::invalid(format!("`{field}` is 1-based and must be at least 1, got {n}")));
        }
    }
    if let (Some(s), Some(e)) = (args.start_line, args.end_line) {
        if e < s {
            return Err(Error::invalid(format!("`end_line` ({e}) is before `start_line` ({s})")));
        }
    }
    let re = build(&args, args.ignore_case)?;
    let template = if args.regex {
        let t = Template::parse(&args.replacement).map_err(|m| Error::invalid(format!("`replacement`: {m}")))?;
        t.check(&re).map_err(|m| Error::invalid(format!("`replacement` {m}")))?;
        Some(t)
    } else {
        None
    };
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Edit)?;
    let view = Mapped::lf(&file.text);
    let hay = view.text();
    let range = line_bounds(&path, hay, args.start_line, args.end_line)?;
    let brk = LineEnding::detect(&file.text).break_for(&file.text);

    // Matches inside the bounds, counted; the first `limit` of them (all when 0) are replaced.
    let mut matched = 0;
    let mut count = 0;
    let mut changes = Vec::new();
    let mut take = |s: usize, e: usize, text: &dyn Fn() -> String| {
        if !range.admits(s, e) {
            return;
        }
        matched += 1;
        if limit != 0 && count == limit {
            return;
        }
        count += 1;
        let text = convert_breaks(&text(), brk).into_owned();
        let (start, end) = (view.to_orig(s).unwrap_or(0), view.to_orig(e).unwrap_or(0));
        // A replacement equal to its match counts, but changes nothing.
        if file.text[start..end] != text {
            changes.push(TextChange::new(start, end, text));
        }
    };
    match template.as_ref().filter(|t| t.as_literal().is_none()) {
        Some(t) => {
            for caps in re.captures_iter(hay) {
                let m = caps.get_match();
                take(m.start(), m.end(), &|| {
                    let mut out = String::new();
                    t.expand(&caps, &mut out);
                    out
                });
            }
        }
        None => {
            // The same text for every match: no captures needed, so the faster search serves.
            let fixed = template.as_ref().and_then(Template::as_literal).unwrap_or_else(|| args.replacement.clone());
            re.find_iter(hay).for_each(|m| take(m.start(), m.end(), &|| fixed.clone()));
        }
    }
    if matched == 0 {
        return Err(no_match(&args, &path, hay, &range));
    }
    let shown = path.given().to_owned();
    let what = if count < matched {
        format!("{count} of {matched} occurrences in {shown} (`limit` is {limit})")
    } else {
        format!("{count} occurrence{} in {shown}", plural(count))
    };
    let plan = if changes.is_empty() {
        EditPlan::default()
    } else {
        EditPlan::one(FileOp::Edit { path, base: Base::from(file), changes })
    };
    let unchanged = if plan.is_empty() { "; the replacements equal the matches, so nothing changes" } else { "" };
    if args.dry_run {
        let diff = plan.render_diff();
        return Ok(Output::Text(format!("{diff}(dry run: would replace {what}{unchanged}; nothing was written)")));
    }
    let literal = !args.regex || regex::escape(&args.pattern) == args.pattern;
    let pairs = literal.then_some((args.pattern.as_str(), args.replacement.as_str()));
    let hint = rename_hint(ctx.config, pairs, count);
    Ok(Output::Change { plan, summary: format!("replaced {what}{unchanged}{hint}") })
}

/// The regex for `pattern` (escaped unless `regex`), multi-line so that `^`/`$` match at lines.
fn build(args: &ReplaceArgs, ignore_case: bool) -> Result<Regex> {
    let source = if args.regex { args.pattern.clone() } else { regex::escape(Mapped::lf(&args.pattern).text()) };
    RegexBuilder::new(&source)
        .case_insensitive(ignore_case)
        .multi_line(true)
        .build()
        .map_err(|e| Error::invalid(format!("`pattern` is not a valid regular expression: {e}")))
}

/// The part of the `\n` view where matches count.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    start: usize,
    end: usize,
    /// The lines, when a range was given (for messages).
    lines: Option<(usize, usize)>,
    /// The view's length, and whether it ends with a line break.
    len: usize,
    final_break: bool,
}

impl Bounds {
    /// Whether a match `s..e` lies in the bounds. An empty match right after a final line break
    /// (where a regex `^` matches, though no line starts there) is not in any line.
    fn admits(&self, s: usize, e: usize) -> bool {
        if s == self.len && self.final_break {
            return false;
        }
        let at_end = s == self.end && self.end == self.len;
        self.start <= s && (s < self.end || at_end) && e <= self.end
    }
}

/// The byte bounds of lines `start_line..=end_line` of the view `hay`.
fn line_bounds(path: &SandboxPath, hay: &str, first: Option<i64>, last: Option<i64>) -> Result<Bounds> {
    let index = LineIndex::new(hay);
    let count = index.line_count();
    let final_break = hay.ends_with('\n');
    let mut bounds = Bounds { start: 0, end: hay.len(), lines: None, len: hay.len(), final_break };
    if first.is_none() && last.is_none() {
        return Ok(bounds);
    }
    let first = usize::try_from(first.unwrap_or(1)).unwrap_or(usize::MAX);
    if first > count {
        return Err(Error::invalid(format!(
            "`start_line` is {first}, past the end of {}, which has {count} line{}",
            path.given(),
            if count == 1 { "" } else { "s" }
        )));
    }
    let last = last.map_or(count, |l| usize::try_from(l).unwrap_or(usize::MAX).min(count));
    bounds.start = index.line_start(first).map_or(0, |o| o.get());
    bounds.end = index.line_start(last + 1).map_or(hay.len(), |o| o.get());
    bounds.lines = Some((first, last));
    Ok(bounds)
}

/// The `no_match` error, with whatever would have matched: outside the line range, with
/// `ignore_case`, or as a regex.
fn no_match(args: &ReplaceArgs, path: &SandboxPath, hay: &str, range: &Bounds) -> Error {
    let mode = if args.regex { "regex" } else { "text" };
    let mut msg = format!("{}: `pattern` ({mode}) matched nothing", path.given());
    if let Some((a, b)) = range.lines {
        msg.push_str(&format!(" in {}", line_span(a, b)));
        let whole = Bounds { start: 0, end: hay.len(), lines: None, ..*range };
        let elsewhere = build(args, args.ignore_case)
            .map(|re| re.find_iter(hay).filter(|m| whole.admits(m.start(), m.end())).count())
            .unwrap_or(0);
        if elsewhere > 0 {
            msg.push_str(&format!("; it matches {elsewhere} time{} elsewhere in the file", plural(elsewhere)));
        }
    }
    if !args.ignore_case {
        let folded = build(args, true)
            .map(|re| re.find_iter(hay).filter(|m| range.admits(m.start(), m.end())).count())
            .unwrap_or(0);
        if folded > 0 {
            msg.push_str(&format!("; it would match {folded} time{} with `ignore_case`", plural(folded)));
        }
    }
    if !args.regex && args.pattern.contains(['\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '^', '$']) {
        msg.push_str("; `regex` is false, so `pattern` was matched as literal text");
    }
    Error::new(ErrorKind::NoMatch, msg).with_path(path.given())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::TOOL;
    use crate::error::ErrorKind;
    use crate::tools::edit_file::testing::{check_case, run, Expect};
    use crate::tools::testing::fixture;

    const FILES: &str = "//- a.txt\nfoo = 1\nbar = 2\nfoo = 3\nFOO = 4\n";

    /// Runs every case on fresh files: `(path, args without the path, expected outcome)`.
    fn check(table: &[(&str, serde_json::Value, Expect)]) {
        for (path, args, want) in table {
            let f = fixture(FILES);
            f.write("crlf.txt", "\u{feff}k: v\r\nk: w\r\n");
            f.write("nofinal.txt", "x\ny");
            f.write("utf16.txt", b"\xFF\xFEh\x00i\x00\n\x00");
            let mut args = args.clone();
            args["path"] = json!(path);
            check_case(&f, &TOOL, path, args, want);
        }
    }

    #[test]
    fn replaces() {
        let a = |text: &'static str, n: &'static str| Ok((text, n));
        check(&[
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "baz"}),
                a("baz = 1\nbar = 2\nbaz = 3\nFOO = 4\n", "replaced 2 occurrences in a.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "baz", "ignore_case": true}),
                a("baz = 1\nbar = 2\nbaz = 3\nbaz = 4\n", "replaced 3 occurrences in a.txt"),
            ),
            // Literal mode is literal, both ways.
            (
                "a.txt",
                json!({"pattern": "= 1", "replacement": "= $1 \\1 $$"}),
                a("foo = $1 \\1 $$\nbar = 2\nfoo = 3\nFOO = 4\n", "replaced 1 occurrence in a.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": "2\nfoo", "replacement": "2\n\nfoo"}),
                a("foo = 1\nbar = 2\n\nfoo = 3\nFOO = 4\n", "replaced 1 occurrence in a.txt"),
            ),
            // Every reference form.
            (
                "a.txt",
                json!({"pattern": r"^(\w+) = (\d)$", "replacement": "$2 = $1", "regex": true}),
                a("1 = foo\n2 = bar\n3 = foo\n4 = FOO\n", "replaced 4 occurrences in a.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": r"^(\w+) = (\d)$", "replacement": r"\2:\1", "regex": true, "limit": 1}),
                a("1:foo\nbar = 2\nfoo = 3\nFOO = 4\n", "replaced 1 of 4 occurrences in a.txt (`limit` is 1)"),
            ),
            (
                "a.txt",
                json!({"pattern": r"(?<name>bar) = (?<n>\d)", "replacement": "${name}=${n}${2}", "regex": true}),
                a("foo = 1\nbar=22\nfoo = 3\nFOO = 4\n", "replaced 1 occurrence in a.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": r"\d", "replacement": "<$0|$&|\\0>", "regex": true, "start_line": 2, "end_line": 3}),
                a("foo = 1\nbar = <2|2|2>\nfoo = <3|3|3>\nFOO = 4\n", "replaced 2 occurrences in a.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": "o", "replacement": "$$", "regex": true, "limit": 3}),
                a("f$$ = 1\nbar = 2\nf$o = 3\nFOO = 4\n", "replaced 3 of 4 occurrences in a.txt (`limit` is 3)"),
            ),
            // `^` adds to every line, not to the end of the file after its final break.
            (
                "a.txt",
                json!({"pattern": "^", "replacement": "# ", "regex": true, "start_line": 3}),
                a("foo = 1\nbar = 2\n# foo = 3\n# FOO = 4\n", "replaced 2 occurrences in a.txt"),
            ),
            (
                "nofinal.txt",
                json!({"pattern": "$", "replacement": ";", "regex": true}),
                a("x;\ny;", "replaced 2 occurrences in nofinal.txt"),
            ),
            // `end_line` past the end is capped.
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "F", "start_line": 2, "end_line": 99}),
                a("foo = 1\nbar = 2\nF = 3\nFOO = 4\n", "replaced 1 occurrence in a.txt"),
            ),
            // CRLF and BOM kept; `\n` in a pattern and a replacement means the file's break.
            (
                "crlf.txt",
                json!({"pattern": "v\nk", "replacement": "v\nj: u\nk"}),
                a("\u{feff}k: v\r\nj: u\r\nk: w\r\n", "replaced 1 occurrence in crlf.txt"),
            ),
            (
                "crlf.txt",
                json!({"pattern": r"(\w)$", "replacement": "${1}1", "regex": true}),
                a("\u{feff}k: v1\r\nk: w1\r\n", "replaced 2 occurrences in crlf.txt"),
            ),
            (
                "a.txt",
                json!({"pattern": "bar", "replacement": "bar"}),
                a(
                    FILES.trim_start_matches("//- a.txt\n"),
                    "replaced 1 occurrence in a.txt; the replacements equal the matches, so nothing changes",
                ),
            ),
        ]);
    }

    #[test]
    fn errors() {
        use ErrorKind::*;
        check(&[
            (
                "a.txt",
                json!({"pattern": "qux", "replacement": "x"}),
                Err((NoMatch, "a.txt: `pattern` (text) matched nothing")),
            ),
            (
                "a.txt",
                json!({"pattern": "bar", "replacement": "x", "start_line": 3}),
                Err((NoMatch, "matched nothing in lines 3-4; it matches 1 time elsewhere in the file")),
            ),
            (
                "a.txt",
                json!({"pattern": "Bar", "replacement": "x"}),
                Err((NoMatch, "; it would match 1 time with `ignore_case`")),
            ),
            (
                "a.txt",
                json!({"pattern": "foo.*", "replacement": "x"}),
                Err((NoMatch, "; `regex` is false, so `pattern` was matched as literal text")),
            ),
            (
                "a.txt",
                json!({"pattern": "(", "replacement": "x", "regex": true}),
                Err((InvalidInput, "`pattern` is not a valid regular expression")),
            ),
            (
                "a.txt",
                json!({"pattern": "(f)oo", "replacement": "$2", "regex": true}),
                Err((InvalidInput, "`replacement` refers to group 2, but `pattern` has only 1 group")),
            ),
            (
                "a.txt",
                json!({"pattern": "(?<a>f)oo", "replacement": "${b}", "regex": true}),
                Err((InvalidInput, "`replacement` refers to group `b`, but `pattern` has only `a`")),
            ),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "$x", "regex": true}),
                Err((InvalidInput, "`replacement`: `$x` at character 1 is not a group reference")),
            ),
            ("a.txt", json!({"pattern": "", "replacement": "x"}), Err((InvalidInput, "`pattern` is empty"))),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "x", "limit": -1}),
                Err((InvalidInput, "`limit` must be 0 (all) or more, got -1")),
            ),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "x", "start_line": 0}),
                Err((InvalidInput, "`start_line` is 1-based")),
            ),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "x", "start_line": 3, "end_line": 2}),
                Err((InvalidInput, "`end_line` (2) is before `start_line` (3)")),
            ),
            (
                "a.txt",
                json!({"pattern": "foo", "replacement": "x", "start_line": 5}),
                Err((InvalidInput, "`start_line` is 5, past the end of a.txt, which has 4 lines")),
            ),
            ("a.txt", json!({"pattern": "foo", "replacement": "x", "limit": 1.5}), Err((InvalidInput, "`limit`"))),
            ("a.txt", json!({"pattern": "foo"}), Err((InvalidInput, "replacement"))),
            ("utf16.txt", json!({"pattern": "h", "replacement": "x"}), Err((IsBinary, "utf-16le"))),
        ]);
    }

    #[test]
    fn dry_run_shows_the_diff_and_plans_nothing() {
        let f = fixture(FILES);
        let args = json!({"path": "a.txt", "pattern": "= 3", "replacement": "= 30", "dry_run": true});
        let out = run(&f, &TOOL, args).expect("dry run").text();
        assert_eq!(
            out,
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n foo = 1\n bar = 2\n-foo = 3\n+foo = 30\n FOO = 4\n\
             (dry run: would replace 1 occurrence in a.txt; nothing was written)"
        );
        let (kind, _) = run(&f, &TOOL, json!({"path": "a.txt", "pattern": "zzz", "replacement": "", "dry_run": true}))
            .expect_err("no match");
        assert_eq!(kind, ErrorKind::NoMatch);
    }
}
