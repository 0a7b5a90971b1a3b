//! `append`: add text at the end of an existing file.
//!
//! The text starts on a line of its own: a file that does not end with a line break gets one
//! first. Line breaks in the text take the file's style, and the file keeps its final-newline
//! state, since the text is a fragment and not the whole file: a file that ended with a line
//! break still does (one is added after the text if it lacks one), and a file without one stays
//! without (a trailing break in the text is dropped). An empty file takes the text as given.

use schemars::JsonSchema;
use serde::Deserialize;

use super::editable::{read_editable, Wording};
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::text::{convert_breaks, ends_with_newline, lines, LineEnding};

/// Arguments of `append`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendArgs {
    /// Path of an existing file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// The text to add at the end. Write line breaks as `\n`; they take the file's own style.
    pub content: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "append",
    description: "Add text at the end of an existing text file (use write_file to create a \
file). The text starts on a new line: if the file does not end with a line break, one is added \
first. Line breaks in `content` take the file's style (a CRLF file stays CRLF), the BOM is kept, and \
so is the file's final-newline state: a file that ended with a line break still does, one that did \
not still does not. Nothing else in the file is touched, so this suits logs, lists and changelogs \
better than rewriting the whole file.",
    schema: schema_of::<AppendArgs>,
    effects: Effects { read_only: false, destructive: false, idempotent: false, open_world: false },
    quick: true,
    run: |ctx, args| append(ctx, parse_args(args)?),
};

/// Plans appending `args.content` to `args.path`.
pub fn append(ctx: &Context<'_>, args: AppendArgs) -> Result<Output> {
    if args.content.is_empty() {
        return Err(Error::invalid("`content` is empty; there is nothing to append"));
    }
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Write).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Error::new(
            ErrorKind::NotFound,
            format!("{path}: no such file; append adds to an existing file, use write_file to create one"),
        )
        .with_path(path.given()),
        _ => e,
    })?;
    let brk = LineEnding::detect(&file.text).break_for(&file.text);
    let content = convert_breaks(&args.content, brk);
    let added = appended_text(&file.text, &content, brk);
    let n = lines(&content).count();
    let summary = format!("appended {n} line{} to {path}", if n == 1 { "" } else { "s" });
    let at = file.text.len();
    let plan =
        EditPlan::one(FileOp::Edit { path, base: Base::from(file), changes: vec![TextChange::new(at, at, added)] });
    Ok(Output::Change { plan, summary })
}

/// What goes at the end of `text` to append `content` (already in the file's line break `brk`),
/// keeping `text`'s final-newline state.
pub fn appended_text(text: &str, content: &str, brk: &str) -> String {
    if text.is_empty() {
        return content.to_owned();
    }
    let body = content.strip_suffix(brk).unwrap_or(content);
    if ends_with_newline(text) {
        format!("{body}{brk}")
    } else {
        format!("{brk}{body}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    #[test]
    fn appends() {
        // The file before, the content, the summary, the file after.
        let table: &[(&[u8], &str, &str, &[u8])] = &[
            (b"x\n", "y", "appended 1 line to a.txt", b"x\ny\n"),
            (b"x\n", "y\n", "appended 1 line to a.txt", b"x\ny\n"),
            (b"x\n", "y\nz\n", "appended 2 lines to a.txt", b"x\ny\nz\n"),
            (b"x\n", "\n", "appended 1 line to a.txt", b"x\n\n"),
            (b"x\n", "y\n\n", "appended 2 lines to a.txt", b"x\ny\n\n"),
            (b"x", "y", "appended 1 line to a.txt", b"x\ny"),
            (b"x", "y\n", "appended 1 line to a.txt", b"x\ny"),
            (b"x\r\n", "y\nz", "appended 2 lines to a.txt", b"x\r\ny\r\nz\r\n"),
            (b"x\r\ny", "z\n", "appended 1 line to a.txt", b"x\r\ny\r\nz"),
            (b"\xEF\xBB\xBFx\n", "y", "appended 1 line to a.txt", b"\xEF\xBB\xBFx\ny\n"),
            (b"", "y", "appended 1 line to a.txt", b"y"),
            (b"", "y\n", "appended 1 line to a.txt", b"y\n"),
            (b"a\r\nb\n", "c\n", "appended 1 line to a.txt", b"a\r\nb\nc\r\n"),
        ];
        for (before, content, summary, after) in table {
            let f = fixture("");
            f.write("a.txt", before);
            let got = f.apply("append", json!({"path": "a.txt", "content": content}));
            assert_eq!(got.as_deref(), Ok(*summary), "{before:?} + {content:?}");
            assert_eq!(f.read("a.txt").as_deref(), Some(*after), "{before:?} + {content:?}");
        }
    }

    #[test]
    fn errors() {
        let f = fixture("//- a.txt\nx\n//- dir/\n");
        f.write("bin", b"\x7fELF\x00\x00");
        f.write("utf16.txt", b"\xFF\xFEh\x00i\x00");
        let table = [
            (json!({"path": "missing.txt", "content": "x"}), ErrorKind::NotFound),
            (json!({"path": "dir", "content": "x"}), ErrorKind::NotAFile),
            (json!({"path": "bin", "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "utf16.txt", "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "../x", "content": "x"}), ErrorKind::PathEscape),
            (json!({"path": "a.txt", "content": ""}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt"}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "content": ["x"]}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "content": "x", "line": 1}), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("append", args.clone()), want, "{args}");
        }
        assert_eq!(f.read("a.txt").as_deref(), Some(&b"x\n"[..]));
        assert!(f.read("missing.txt").is_none());
        let (_, msg) = f.call("append", json!({"path": "missing.txt", "content": "x"})).expect_err("missing");
        assert!(msg.contains("use write_file to create one"), "{msg}");
    }
}
