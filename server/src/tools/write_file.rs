//! `write_file`: create a file, or replace a text file's whole contents.
//!
//! Line endings follow the file, the final newline follows the content: an existing file's
//! line-ending style and BOM are kept (content typed with `\n` is written with the file's own
//! break), while the file ends with a line break exactly when `content` does, since the content
//! is the whole new file. A new file is written as given: UTF-8, no BOM, breaks untouched.

use schemars::JsonSchema;
use serde::Deserialize;

use super::editable::{read_editable, Wording};
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::text::{convert_breaks, LineEnding};

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file: absolute inside a workspace root, or relative to the first root.
    /// Missing parent directories are created.
    pub path: String,
    /// The complete new contents of the file. Write line breaks as `\n`: an existing file keeps
    /// its own line endings (CRLF stays CRLF) and its BOM.
    pub content: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "write_file",
    description: "Create a file, or replace the whole contents of an existing text file. Missing \
parent directories are created. For an existing file, line breaks in `content` take the file's own \
style (a CRLF file stays CRLF) and a UTF-8 BOM is kept; the file ends with a line break exactly when \
`content` does. Only the lines that differ are changed, so beside an editor a small change stays a \
small edit. To change part of a file, prefer edit_file: it does not need the whole text. Binary \
files, and text files tether cannot write back exactly (UTF-16, invalid UTF-8), are refused: delete \
such a file first to replace it.",
    schema: schema_of::<WriteFileArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: true, open_world: false },
    quick: true,
    run: |ctx, args| write_file(ctx, parse_args(args)?),
};

/// Plans writing `args.content` to `args.path`.
pub fn write_file(ctx: &Context<'_>, args: WriteFileArgs) -> Result<Output> {
    if args.path.ends_with('/') {
        return Err(Error::invalid(format!(
            "`path` {} ends with `/`, which names a directory; write_file writes files (use mkdir for directories)",
            args.path
        )));
    }
    let path = ctx.vfs.resolve(&args.path)?;
    match ctx.vfs.metadata(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let summary = format!("created {path} ({})", byte_count(args.content.len()));
            let plan = EditPlan::one(FileOp::Create { path, text: args.content, overwrite: false, mode: None });
            Ok(Output::Change { plan, summary })
        }
        Err(e) => Err(e),
        Ok(_) => {
            let file = read_editable(ctx, &path, Wording::Write).map_err(|e| match e.kind() {
                ErrorKind::IsBinary => Error::new(
                    ErrorKind::IsBinary,
                    format!("{}; to replace it with text, delete it first, then write it", e.message()),
                )
                .with_path(path.given()),
                _ => e,
            })?;
            let style = LineEnding::detect(&file.text);
            let brk = style.break_for(&file.text);
            let new = convert_breaks(&args.content, brk).into_owned();
            let size = new.len() + if file.bom { 3 } else { 0 };
            let notes = kept_notes(style, brk, file.bom);
            let plan = EditPlan::edit_to(path.clone(), Base::from(file), &new);
            let summary = if plan.is_empty() {
                format!("{path} already has this content ({}); nothing changed", byte_count(size))
            } else {
                format!("overwrote {path} ({}{notes})", byte_count(size))
            };
            Ok(Output::Change { plan, summary })
        }
    }
}

/// What the summary says about the formatting kept, when there is anything unusual to say:
/// `; crlf line endings kept, BOM kept`.
fn kept_notes(style: LineEnding, brk: &str, bom: bool) -> String {
    let mut notes = Vec::new();
    match style {
        LineEnding::Lf => {}
        LineEnding::Crlf | LineEnding::Cr => notes.push(format!("{style} line endings kept")),
        LineEnding::Mixed => notes.push(format!("mixed line endings made {}", LineEnding::detect(brk))),
    }
    if bom {
        notes.push("BOM kept".to_owned());
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join(", "))
    }
}

/// `1 byte`, `120 bytes`.
pub fn byte_count(n: usize) -> String {
    if n == 1 {
        "1 byte".to_owned()
    } else {
        format!("{n} bytes")
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt as _};

    use serde_json::json;

    use crate::edit::FileOp;
    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;
    use crate::tools::Output;

    #[test]
    fn writes() {
        // The file before (None: absent), the content written, the summary, the bytes after.
        type Case = (Option<&'static [u8]>, &'static str, &'static str, &'static [u8]);
        let table: &[Case] = &[
            (None, "new\n", "created a.txt (4 bytes)", b"new\n"),
            (None, "typed\r\nas is", "created a.txt (12 bytes)", b"typed\r\nas is"),
            (None, "", "created a.txt (0 bytes)", b""),
            (Some(b"old\n"), "new\n", "overwrote a.txt (4 bytes)", b"new\n"),
            (Some(b"one\r\ntwo\r\n"), "one\n2\n", "overwrote a.txt (8 bytes; crlf line endings kept)", b"one\r\n2\r\n"),
            (Some(b"a\rb\r"), "a\nc\n", "overwrote a.txt (4 bytes; cr line endings kept)", b"a\rc\r"),
            (Some(b"\xEF\xBB\xBFbom\n"), "b\n", "overwrote a.txt (5 bytes; BOM kept)", b"\xEF\xBB\xBFb\n"),
            (
                Some(b"\xEF\xBB\xBFx\r\n"),
                "y\n",
                "overwrote a.txt (6 bytes; crlf line endings kept, BOM kept)",
                b"\xEF\xBB\xBFy\r\n",
            ),
            (Some(b"a\r\nb\n"), "x\ny\n", "overwrote a.txt (6 bytes; mixed line endings made crlf)", b"x\r\ny\r\n"),
            // The final newline follows the content, the line endings follow the file.
            (Some(b"no final"), "still none", "overwrote a.txt (10 bytes)", b"still none"),
            (
                Some(b"no final\r\nx"),
                "a\nnow one\n",
                "overwrote a.txt (12 bytes; crlf line endings kept)",
                b"a\r\nnow one\r\n",
            ),
            (Some(b"has\n"), "gone", "overwrote a.txt (4 bytes)", b"gone"),
            (Some(b"lf\n"), "crlf typed\r\n", "overwrote a.txt (11 bytes)", b"crlf typed\n"),
            (Some(b"same\n"), "same\n", "a.txt already has this content (5 bytes); nothing changed", b"same\n"),
            (Some(b"x\r\n"), "x\n", "a.txt already has this content (3 bytes); nothing changed", b"x\r\n"),
            (Some(b""), "", "a.txt already has this content (0 bytes); nothing changed", b""),
        ];
        for (before, content, summary, after) in table {
            let f = fixture("");
            if let Some(b) = before {
                f.write("a.txt", b);
            }
            let got = f.apply("write_file", json!({"path": "a.txt", "content": content}));
            assert_eq!(got.as_deref(), Ok(*summary), "{before:?} <- {content:?}");
            assert_eq!(f.read("a.txt").as_deref(), Some(*after), "{before:?} <- {content:?}");
        }
    }

    #[test]
    fn creates_parents_keeps_mode_and_writes_through_symlinks() {
        let f = fixture("//- real/target.txt\nold\n//- run.sh\necho old\n");
        fs::set_permissions(f.dir.path().join("run.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
        symlink("real/target.txt", f.dir.path().join("link.txt")).expect("symlink");
        let write = |p: &str, c: &str| f.apply("write_file", json!({"path": p, "content": c})).expect("written");
        assert_eq!(write("deep/new/dir/a.md", "# hi\n"), "created deep/new/dir/a.md (5 bytes)");
        assert_eq!(f.read("deep/new/dir/a.md").as_deref(), Some(&b"# hi\n"[..]));
        write("run.sh", "echo new\n");
        let mode = fs::metadata(f.dir.path().join("run.sh")).expect("meta").permissions().mode();
        assert_eq!(mode & 0o7777, 0o755);
        write("link.txt", "new\n");
        assert!(fs::symlink_metadata(f.dir.path().join("link.txt")).expect("meta").file_type().is_symlink());
        assert_eq!(f.read("real/target.txt").as_deref(), Some(&b"new\n"[..]));
    }

    #[test]
    fn overwriting_is_a_minimal_edit() {
        let f = fixture("");
        let old: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        f.write("big.txt", &old);
        let new = old.replace("line 500\n", "line five hundred\n");
        let ctx = f.ctx();
        let out = (super::TOOL.run)(&ctx, json!({"path": "big.txt", "content": new})).expect("planned");
        let Output::Change { plan, .. } = out else { panic!("not a change: {out:?}") };
        match plan.ops.as_slice() {
            [FileOp::Edit { base, changes, .. }] => {
                assert_eq!(changes.len(), 1, "{changes:?}");
                assert!(changes[0].text.len() < 32, "{changes:?}");
                assert_eq!(crate::edit::apply_changes(&base.text.to_str(), changes), new);
            }
            other => panic!("expected one edit, got {other:?}"),
        }
    }

    #[test]
    fn errors() {
        let f = fixture("//- dir/x.txt\nx\n//- file\nx\n");
        f.write("bin", b"\x7fELF\x00\x00");
        f.write("utf16.txt", b"\xFF\xFEh\x00i\x00");
        f.write("lossy.txt", b"caf\xE9\n");
        let table = [
            (json!({"path": "dir", "content": "x"}), ErrorKind::NotAFile),
            (json!({"path": "new/", "content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "bin", "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "utf16.txt", "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "lossy.txt", "content": "x"}), ErrorKind::IsBinary),
            (json!({"path": "file/below.txt", "content": "x"}), ErrorKind::NotADirectory),
            (json!({"path": "../x", "content": "x"}), ErrorKind::PathEscape),
            (json!({"path": "a.txt"}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "content": 7}), ErrorKind::InvalidInput),
            (json!({"content": "x"}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "content": "x", "mode": "append"}), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("write_file", args.clone()), want, "{args}");
        }
        // Nothing was written or created by any of them.
        assert_eq!(f.read("bin").as_deref(), Some(&b"\x7fELF\x00\x00"[..]));
        assert_eq!(f.read("lossy.txt").as_deref(), Some(&b"caf\xE9\n"[..]));
        assert!(!f.dir.path().join("a.txt").exists());
        let (_, msg) = f.call("write_file", json!({"path": "utf16.txt", "content": "x"})).expect_err("utf-16");
        assert_eq!(msg, "utf16.txt: file is utf-16le, which tether reads but does not write back; to replace it with text, delete it first, then write it");
    }

    /// CRLF, a BOM, a missing final newline and the mode bits of a script survive every tool
    /// that changes or moves a file.
    #[test]
    fn formatting_survives_every_tool() {
        let f = fixture("");
        f.write("s.sh", "\u{feff}#!/bin/sh\r\necho a\r\necho b");
        fs::set_permissions(f.dir.path().join("s.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
        let steps: &[(&str, serde_json::Value, &str, &str)] = &[
            (
                "write_file",
                json!({"path": "s.sh", "content": "#!/bin/sh\necho a\necho B"}),
                "s.sh",
                "#!/bin/sh\r\necho a\r\necho B",
            ),
            (
                "append",
                json!({"path": "s.sh", "content": "echo c\n"}),
                "s.sh",
                "#!/bin/sh\r\necho a\r\necho B\r\necho c",
            ),
            (
                "insert",
                json!({"path": "s.sh", "line": 2, "content": "# comment"}),
                "s.sh",
                "#!/bin/sh\r\n# comment\r\necho a\r\necho B\r\necho c",
            ),
            (
                "insert",
                json!({"path": "s.sh", "line": 0, "content": "echo d\n"}),
                "s.sh",
                "#!/bin/sh\r\n# comment\r\necho a\r\necho B\r\necho c\r\necho d",
            ),
            (
                "edit_file",
                json!({"path": "s.sh", "old_string": "echo a\necho B", "new_string": "echo A\necho B"}),
                "s.sh",
                "#!/bin/sh\r\n# comment\r\necho A\r\necho B\r\necho c\r\necho d",
            ),
            (
                "multi_edit",
                json!({"path": "s.sh", "edits": [
                    {"old_string": "echo c", "new_string": "echo C"},
                    {"old_string": "# comment", "new_string": "# note\n# more"},
                ]}),
                "s.sh",
                "#!/bin/sh\r\n# note\r\n# more\r\necho A\r\necho B\r\necho C\r\necho d",
            ),
            (
                "replace",
                json!({"path": "s.sh", "pattern": "echo ([A-Z])$", "replacement": "echo '$1'", "regex": true}),
                "s.sh",
                "#!/bin/sh\r\n# note\r\n# more\r\necho 'A'\r\necho 'B'\r\necho 'C'\r\necho d",
            ),
            (
                "apply_patch",
                json!({"patch": "--- a/s.sh\n+++ b/s.sh\n@@ -6,2 +6,2 @@\n echo 'C'\n-echo d\n\\ No newline at end of file\n+echo e\n\\ No newline at end of file\n"}),
                "s.sh",
                "#!/bin/sh\r\n# note\r\n# more\r\necho 'A'\r\necho 'B'\r\necho 'C'\r\necho e",
            ),
            (
                "move",
                json!({"source": "s.sh", "destination": "bin/s.sh"}),
                "bin/s.sh",
                "#!/bin/sh\r\n# note\r\n# more\r\necho 'A'\r\necho 'B'\r\necho 'C'\r\necho e",
            ),
        ];
        for (tool, args, at, want) in steps {
            f.apply(tool, args.clone()).unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
            let bytes = f.read(at).expect("exists");
            assert_eq!(String::from_utf8(bytes).expect("utf-8"), format!("\u{feff}{want}"), "{tool} {args}");
            let mode = fs::metadata(f.dir.path().join(at)).expect("meta").permissions().mode();
            assert_eq!(mode & 0o7777, 0o755, "{tool} {args}");
        }
    }
}
