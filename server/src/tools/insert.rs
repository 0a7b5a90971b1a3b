//! `insert`: add whole lines to an existing file before a given line.
//!
//! The content goes in as whole lines (a line break is added at its end if it lacks one), with
//! the file's line-ending style. Inserting at the end of a file that does not end with a line
//! break keeps it that way, as `append` does: the break goes before the new lines instead.

use schemars::JsonSchema;
use serde::Deserialize;

use super::append::appended_text;
use super::editable::{read_editable, Wording};
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, Result};
use crate::text::{convert_breaks, ends_with_newline, lines, LineEnding, LineIndex};

/// Arguments of `insert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsertArgs {
    /// Path of an existing file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// The 1-based line (as `read_file` numbers them) to insert before. 0, or one past the last
    /// line, adds at the end; a negative value counts from the end (-1 inserts before the last
    /// line).
    pub line: i64,
    /// The lines to insert. Write line breaks as `\n`; they take the file's own style, and one is
    /// added at the end if missing.
    pub content: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "insert",
    description: "Insert lines into an existing text file before line `line` (1-based, as \
read_file numbers them). `line: 0`, or one past the last line, adds them at the end; a negative \
`line` counts from the end (-1 inserts before the last line). `content` goes in as whole lines: a \
line break is added at its end if missing. Line breaks take the file's style (a CRLF file stays \
CRLF), and the BOM and the file's final-newline state are kept. Use it to add code at a known line \
without matching any text; to change existing lines, use edit_file.",
    schema: schema_of::<InsertArgs>,
    effects: Effects { read_only: false, destructive: false, idempotent: false, open_world: false },
    quick: true,
    run: |ctx, args| insert(ctx, parse_args(args)?),
};

/// Plans inserting `args.content` into `args.path` before `args.line`.
pub fn insert(ctx: &Context<'_>, args: InsertArgs) -> Result<Output> {
    if args.content.is_empty() {
        return Err(Error::invalid("`content` is empty; there is nothing to insert"));
    }
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Write)?;
    let index = LineIndex::new(&file.text);
    let total = index.line_count();
    let before = target_line(args.line, total).ok_or_else(|| out_of_range(args.line, total, path.given()))?;
    let brk = LineEnding::detect(&file.text).break_for(&file.text);
    let mut body = convert_breaks(&args.content, brk).into_owned();
    if !ends_with_newline(&body) {
        body.push_str(brk);
    }
    let n = lines(&body).count();
    let (at, text) = if before <= total {
        let at = index.line_start(before).map_or(0, |o| o.get());
        (at, body)
    } else {
        // At the end: the same rule as `append`, which keeps a missing final newline missing.
        (file.text.len(), appended_text(&file.text, &body, brk))
    };
    let last = before + n - 1;
    let summary = format!(
        "inserted {n} line{} into {path} (now line{} of {})",
        if n == 1 { "" } else { "s" },
        if n == 1 { format!(" {before}") } else { format!("s {before}-{last}") },
        total + n,
    );
    let plan =
        EditPlan::one(FileOp::Edit { path, base: Base::from(file), changes: vec![TextChange::new(at, at, text)] });
    Ok(Output::Change { plan, summary })
}

/// The 1-based line to insert before (`total + 1` for the end), or `None` when out of range.
pub(crate) fn target_line(line: i64, total: usize) -> Option<usize> {
    let total_i = i64::try_from(total).ok()?;
    let n = match line {
        0 => total_i + 1,
        l if l > 0 => l,
        l => total_i + 1 + l,
    };
    (1..=total_i + 1).contains(&n).then(|| usize::try_from(n).ok()).flatten()
}

fn out_of_range(line: i64, total: usize, given: &str) -> Error {
    let ranges = if total == 0 {
        "it is empty, so use 1 or 0".to_owned()
    } else {
        format!("use 1 to {} ({} or 0 adds at the end), or -1 to -{total} to count from the end", total + 1, total + 1)
    };
    Error::invalid(format!(
        "`line` is {line}, but {given} has {total} line{}; {ranges}",
        if total == 1 { "" } else { "s" }
    ))
    .with_path(given)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    #[test]
    fn inserts() {
        // The file before, the line, the content, the summary, the file after.
        type Case = (&'static [u8], i64, &'static str, &'static str, &'static [u8]);
        let table: &[Case] = &[
            (b"a\nb\nc\n", 1, "x", "inserted 1 line into f.txt (now line 1 of 4)", b"x\na\nb\nc\n"),
            (b"a\nb\nc\n", 2, "x\ny\n", "inserted 2 lines into f.txt (now lines 2-3 of 5)", b"a\nx\ny\nb\nc\n"),
            (b"a\nb\nc\n", 4, "x", "inserted 1 line into f.txt (now line 4 of 4)", b"a\nb\nc\nx\n"),
            (b"a\nb\nc\n", 0, "x", "inserted 1 line into f.txt (now line 4 of 4)", b"a\nb\nc\nx\n"),
            (b"a\nb\nc\n", -1, "x", "inserted 1 line into f.txt (now line 3 of 4)", b"a\nb\nx\nc\n"),
            (b"a\nb\nc\n", -3, "x", "inserted 1 line into f.txt (now line 1 of 4)", b"x\na\nb\nc\n"),
            (b"a\nb\nc\n", 2, "\n", "inserted 1 line into f.txt (now line 2 of 4)", b"a\n\nb\nc\n"),
            (b"a\r\nb\r\n", 2, "x\ny", "inserted 2 lines into f.txt (now lines 2-3 of 4)", b"a\r\nx\r\ny\r\nb\r\n"),
            (b"a\nb", 0, "x", "inserted 1 line into f.txt (now line 3 of 3)", b"a\nb\nx"),
            (b"a\nb", 3, "x\n", "inserted 1 line into f.txt (now line 3 of 3)", b"a\nb\nx"),
            (b"a\nb", 2, "x", "inserted 1 line into f.txt (now line 2 of 3)", b"a\nx\nb"),
            (b"a\rb\r", 1, "x\n", "inserted 1 line into f.txt (now line 1 of 3)", b"x\ra\rb\r"),
            (b"\xEF\xBB\xBFa\n", 1, "x", "inserted 1 line into f.txt (now line 1 of 2)", b"\xEF\xBB\xBFx\na\n"),
            (b"", 1, "x", "inserted 1 line into f.txt (now line 1 of 1)", b"x\n"),
            (b"", 0, "x", "inserted 1 line into f.txt (now line 1 of 1)", b"x\n"),
        ];
        for (before, line, content, summary, after) in table {
            let f = fixture("");
            f.write("f.txt", before);
            let got = f.apply("insert", json!({"path": "f.txt", "line": line, "content": content}));
            assert_eq!(got.as_deref(), Ok(*summary), "{before:?} line {line} {content:?}");
            assert_eq!(f.read("f.txt").as_deref(), Some(*after), "{before:?} line {line} {content:?}");
        }
    }

    #[test]
    fn errors() {
        let f = fixture("//- f.txt\na\nb\nc\n//- dir/\n");
        f.write("empty.txt", "");
        f.write("bin", b"\x7fELF\x00\x00");
        let table = [
            (json!({"path": "f.txt", "line": 5, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": -4, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": i64::MIN, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": i64::MAX, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "empty.txt", "line": -1, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "empty.txt", "line": 2, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": 1, "content": ""}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": 1.5, "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "line": "1", "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "f.txt", "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "missing", "line": 1, "content": "x"}), ErrorKind::NotFound),
            (json!({"path": "dir", "line": 1, "content": "x"}), ErrorKind::NotAFile),
            (json!({"path": "bin", "line": 1, "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "../f.txt", "line": 1, "content": "x"}), ErrorKind::PathEscape),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("insert", args.clone()), want, "{args}");
        }
        assert_eq!(f.read("f.txt").as_deref(), Some(&b"a\nb\nc\n"[..]));
        let msg = |args| f.call("insert", args).expect_err("out of range").1;
        assert_eq!(
            msg(json!({"path": "f.txt", "line": 7, "content": "x"})),
            "`line` is 7, but f.txt has 3 lines; use 1 to 4 (4 or 0 adds at the end), or -1 to -3 to count from the end"
        );
        assert_eq!(
            msg(json!({"path": "empty.txt", "line": -1, "content": "x"})),
            "`line` is -1, but empty.txt has 0 lines; it is empty, so use 1 or 0"
        );
    }
}
