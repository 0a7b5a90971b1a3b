//! `edit_file`: replace one exact (or tolerantly matched) piece of a file.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::editable::{check_editable, Wording};
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::matcher::{self, Replaced};
use crate::edit::view::Mapped;
use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, Result};
use crate::text::SharedText;
use crate::vfs::FileText;
use crate::workspace::SandboxPath;

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of the file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// The text to replace, copied from the file: enough lines to match exactly one place.
    /// Write line breaks as `\n` whatever the file uses.
    pub old_string: String,
    /// The text to put in its place (empty deletes `old_string`). Must differ from `old_string`.
    pub new_string: String,
    /// Replace every exact occurrence instead of requiring exactly one. Tolerant matching is not
    /// used with it.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub replace_all: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "edit_file",
    description: "Replace `old_string` with `new_string` in a text file. `old_string` must match exactly \
one place: copy it from the file (without read_file's line-number prefixes) with enough surrounding \
lines to be unique, or set `replace_all` to replace every exact occurrence. When there is no exact \
match, tolerant matching is tried, strictest first: flexible indentation, trimmed lines, collapsed \
whitespace, `old_string` with its surrounding whitespace trimmed, then typographic quotes, dashes and \
Unicode spaces read as ASCII. A tolerant match is used only when it finds exactly one place; \
`new_string` is then re-indented to the file's indentation, and the result says which level matched. \
Write line breaks as `\\n`: the file keeps its own line endings, BOM and final newline. Fails with \
no_match (showing the file's most similar lines with their numbers), ambiguous_match (with the line \
of every match), or invalid_input; nothing is changed on failure. Use multi_edit for several edits to \
one file, replace for regex or line-range replacements, write_file to create or rewrite a file.",
    schema: schema_of::<EditFileArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: true,
    run: |ctx, args: Value| edit_file(ctx, parse_args(args)?),
};

/// Computes the plan for one `edit_file` call.
pub fn edit_file(ctx: &Context<'_>, args: EditFileArgs) -> Result<Output> {
    check_strings(&args.old_string, &args.new_string, "")?;
    // The buffer's rope is shared, not copied: on a large open document the exact match is
    // found in place (see `replace_shared`).
    let path = ctx.vfs.resolve(&args.path)?;
    let file = check_editable(&path, ctx.vfs.read_shared(&path), Wording::Edit)?;
    let replaced = matcher::replace_shared(&file.text, &args.old_string, &args.new_string, args.replace_all)
        .map_err(|m| m.to_error(path.given(), "old_string"))?;
    let summary = format!("edited {}: {}", path.given(), replaced.describe());
    Ok(change(path, file, replaced, summary))
}

/// The plan for `replaced` in `file`, with a note when the replacement left the text as it was
/// (a tolerant match whose re-indented replacement equals what it matched).
fn change(path: SandboxPath, file: FileText<SharedText>, replaced: Replaced, mut summary: String) -> Output {
    let changes = matcher::refine(&file.text, replaced.changes);
    if changes.is_empty() {
        summary.push_str(", which left the text unchanged");
        return Output::Change { plan: EditPlan::default(), summary };
    }
    let plan = EditPlan::one(FileOp::Edit { path, base: Base::from(file), changes });
    Output::Change { plan, summary }
}

/// Checks an `old_string`/`new_string` pair; `prefix` locates it in a multi-edit (`edits[2].`).
pub(crate) fn check_strings(old: &str, new: &str, prefix: &str) -> Result<()> {
    if old.is_empty() {
        return Err(Error::invalid(format!(
            "`{prefix}old_string` is empty: give the text to replace; to create a file or rewrite a whole \
             file use write_file, to add text use insert or append"
        )));
    }
    if Mapped::lf(old).text() == Mapped::lf(new).text() {
        return Err(Error::invalid(format!(
            "`{prefix}old_string` and `{prefix}new_string` are the same, so there is nothing to change"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing {
    //! Running an editing tool and applying its plan in memory.

    use serde_json::Value;

    use crate::edit::{apply_changes, FileOp};
    use crate::error::ErrorKind;
    use crate::tools::testing::Fixture;
    use crate::tools::{Output, Tool};

    /// Runs `tool` on `args` in `f`.
    pub fn run(f: &Fixture, tool: &Tool, args: Value) -> Result<Output, (ErrorKind, String)> {
        let ctx = f.ctx();
        (tool.run)(&ctx, args).map_err(|e| (e.kind(), e.message().to_owned()))
    }

    /// Runs `tool` and applies its plan to the text it was computed against: the file's new text
    /// (prefixed with U+FEFF when the file keeps a BOM) and the summary. The plan must be valid,
    /// computed against the file's current text, and edit only `path`.
    pub fn edited(f: &Fixture, tool: &Tool, path: &str, args: Value) -> Result<(String, String), (ErrorKind, String)> {
        let (plan, summary) = match run(f, tool, args.clone())? {
            Output::Change { plan, summary } => (plan, summary),
            other => panic!("{args}: expected a change, got {other:?}"),
        };
        plan.validate().expect("valid plan");
        let p = f.vfs.resolve(path).expect("inside");
        let now = f.vfs.read_text(&p).expect("readable");
        let bom = if now.bom { "\u{feff}" } else { "" };
        match plan.ops.as_slice() {
            [] => Ok((format!("{bom}{}", now.text), summary)),
            [FileOp::Edit { path: edited, base, changes }] => {
                assert_eq!(edited.real(), p.real(), "{args}");
                assert!(base.text == *now.text, "{args}: plan computed against another text");
                let bom = if base.bom { "\u{feff}" } else { "" };
                Ok((format!("{bom}{}", apply_changes(&base.text.to_str(), changes)), summary))
            }
            ops => panic!("{args}: expected one edit, got {ops:?}"),
        }
    }

    /// What a case expects: the file's new text and the summary, or the error kind and a
    /// fragment of the error message.
    pub type Expect = Result<(&'static str, &'static str), (ErrorKind, &'static str)>;

    /// Runs `tool` on `args` in `f` (see [`edited`]) and checks the outcome against `want`.
    pub fn check_case(f: &Fixture, tool: &Tool, path: &str, args: Value, want: &Expect) {
        match (edited(f, tool, path, args.clone()), want) {
            (Ok(got), Ok((text, summary))) => {
                assert_eq!(got, ((*text).to_owned(), (*summary).to_owned()), "{args}");
            }
            (Err((kind, msg)), Err((want_kind, fragment))) => {
                assert_eq!(kind, *want_kind, "{args}: {msg}");
                assert!(msg.contains(fragment), "{args}: {msg:?} lacks {fragment:?}");
            }
            (got, want) => panic!("{args}: got {got:?}, want {want:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::testing::{check_case, Expect};
    use super::TOOL;
    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    const FILES: &str = r#"
//- app.py
def f():
    return 1

def g():
    return 1
//- dup.txt
x = 1
y = 2
x = 1
"#;

    /// Runs every case on fresh files: `(path, args without the path, expected outcome)`.
    fn check(table: &[(&str, serde_json::Value, Expect)]) {
        for (path, args, want) in table {
            let f = fixture(FILES);
            f.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
            f.write("bom.txt", "\u{feff}alpha\nbeta\n");
            f.write("nofinal.txt", "a\nb");
            f.write("trail.txt", "x = 1   \n");
            f.write("utf16.txt", b"\xFF\xFEh\x00i\x00\n\x00");
            f.write("lossy.txt", b"caf\xE9\n");
            f.write("bin", b"\x7fELF\x00\x00");
            let mut args = args.clone();
            args["path"] = json!(path);
            check_case(&f, &TOOL, path, args, want);
        }
    }

    #[test]
    fn edits() {
        let one = |s: &'static str| Ok((s, "edited app.py: 1 replacement"));
        check(&[
            (
                "app.py",
                json!({"old_string": "def g():\n    return 1", "new_string": "def g():\n    return 2"}),
                one("def f():\n    return 1\n\ndef g():\n    return 2\n"),
            ),
            // The brief's example: the model's two-space indentation is re-indented to four.
            (
                "app.py",
                json!({"old_string": "def f():\n  return 1", "new_string": "def f():\n  return 2"}),
                Ok((
                    "def f():\n    return 2\n\ndef g():\n    return 1\n",
                    "edited app.py: 1 replacement (matched with flexible indentation)",
                )),
            ),
            (
                "dup.txt",
                json!({"old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
                Ok(("x = 9\ny = 2\nx = 9\n", "edited dup.txt: 2 replacements")),
            ),
            (
                "dup.txt",
                json!({"old_string": "x = 1\ny", "new_string": "x = 0\ny"}),
                Ok(("x = 0\ny = 2\nx = 1\n", "edited dup.txt: 1 replacement")),
            ),
            // Deleting: an empty `new_string`.
            (
                "dup.txt",
                json!({"old_string": "y = 2\n", "new_string": ""}),
                Ok(("x = 1\nx = 1\n", "edited dup.txt: 1 replacement")),
            ),
            // CRLF kept; `old_string` typed with `\n` matches.
            (
                "crlf.txt",
                json!({"old_string": "one\ntwo\n", "new_string": "1\n2\n2.5\n"}),
                Ok(("1\r\n2\r\n2.5\r\nthree\r\n", "edited crlf.txt: 1 replacement")),
            ),
            (
                "bom.txt",
                json!({"old_string": "beta", "new_string": "gamma"}),
                Ok(("\u{feff}alpha\ngamma\n", "edited bom.txt: 1 replacement")),
            ),
            (
                "nofinal.txt",
                json!({"old_string": "b", "new_string": "c"}),
                Ok(("a\nc", "edited nofinal.txt: 1 replacement")),
            ),
            (
                "nofinal.txt",
                json!({"old_string": "b\n", "new_string": "c\n"}),
                Ok(("a\nc", "edited nofinal.txt: 1 replacement (matched with surrounding whitespace trimmed)")),
            ),
            // A tolerant match whose re-indented replacement is the text already there.
            (
                "trail.txt",
                json!({"old_string": " x = 1", "new_string": "x = 1   "}),
                Ok((
                    "x = 1   \n",
                    "edited trail.txt: 1 replacement (matched with trimmed lines), which left the text unchanged",
                )),
            ),
        ]);
    }

    #[test]
    fn errors() {
        use ErrorKind::*;
        check(&[
            (
                "app.py",
                json!({"old_string": "return 1", "new_string": "return 2"}),
                Err((AmbiguousMatch, "matches 2 places: line 2, line 5")),
            ),
            (
                "dup.txt",
                json!({"old_string": "x  =  1", "new_string": "x = 2"}),
                Err((AmbiguousMatch, "2 places after no exact match with collapsed whitespace: line 1, line 3")),
            ),
            (
                "app.py",
                json!({"old_string": "def g():\n    return 7", "new_string": "z"}),
                Err((
                    NoMatch,
                    "the most similar text is at lines 4-5 (93% alike):\n     4\tdef g():\n     5\t    return 1\ncopy",
                )),
            ),
            (
                "app.py",
                json!({"old_string": "return 3", "new_string": "x", "replace_all": true}),
                Err((NoMatch, "`replace_all` matches exact text only")),
            ),
            ("app.py", json!({"old_string": "", "new_string": "x"}), Err((InvalidInput, "`old_string` is empty"))),
            ("app.py", json!({"old_string": "a\nb", "new_string": "a\r\nb"}), Err((InvalidInput, "are the same"))),
            ("app.py", json!({"old_string": "a"}), Err((InvalidInput, "new_string"))),
            (
                "app.py",
                json!({"old_string": "a", "new_string": "b", "replace_all": "yes"}),
                Err((InvalidInput, "`replace_all`")),
            ),
            ("app.py", json!({"old_string": "a", "new_string": "b", "bogus": 1}), Err((InvalidInput, "bogus"))),
            (
                "missing.py",
                json!({"old_string": "a", "new_string": "b"}),
                Err((NotFound, "missing.py: no such file or directory; use write_file")),
            ),
            ("../out.py", json!({"old_string": "a", "new_string": "b"}), Err((PathEscape, ""))),
            (
                "utf16.txt",
                json!({"old_string": "hi", "new_string": "yo"}),
                Err((IsBinary, "utf16.txt: file is utf-16le; tether reads it but does not edit it")),
            ),
            ("lossy.txt", json!({"old_string": "caf", "new_string": "tea"}), Err((IsBinary, "is not valid utf-8"))),
            ("bin", json!({"old_string": "ELF", "new_string": "FLE"}), Err((IsBinary, "binary"))),
        ]);
    }

    /// Found by the `edit_file` fuzz target: in a file with both lone `\r` and `\n` breaks, a
    /// break written in the file's style next to a break of the other kind joined it into one
    /// `\r\n`, and the line `new_string` added vanished.
    #[test]
    fn a_written_break_never_joins_the_break_next_to_it() {
        let f = fixture("");
        // Mostly lone `\r`: a break written as `\r` before the `\n` after `x`.
        f.write("cr.txt", "a\rb\rc\rx\ny\r");
        let args = json!({"path": "cr.txt", "old_string": "x", "new_string": "x\n"});
        check_case(&f, &TOOL, "cr.txt", args, &Ok(("a\rb\rc\rx\r\n\ny\r", "edited cr.txt: 1 replacement")));
        // Mostly `\n`: a break written as `\n` after the lone `\r` before `x`.
        f.write("lf.txt", "a\nb\nc\rx\ny\n");
        let args = json!({"path": "lf.txt", "old_string": "x", "new_string": "\nx"});
        check_case(&f, &TOOL, "lf.txt", args, &Ok(("a\nb\nc\r\r\nx\ny\n", "edited lf.txt: 1 replacement")));
    }
}
