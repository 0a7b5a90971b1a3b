//! `read_files`: several files' pages in one call, one section each.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::read_file::{read_page, Page, DEFAULT_LIMIT};
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};

/// The most paths one call may name.
pub const MAX_PATHS: usize = 50;

/// Arguments of `read_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFilesArgs {
    /// Paths of the files, 1 to 50: absolute inside a workspace root, or relative to the first
    /// root. Sections come back in this order.
    #[schemars(length(min = 1, max = 50))]
    pub paths: Vec<String>,
    /// First line to return from each file, 1-based. A negative value counts from the end (-1 is
    /// the last line). 0 is invalid.
    #[serde(default)]
    pub offset: Option<i64>,
    /// Number of lines to return from each file.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<i64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "read_files",
    description: "Read several text files (1 to 50) in one call. Each file gets a section headed \
`==> PATH <==` (the path as given) followed by its lines exactly as `read_file` shows them \
(line number, tab, text; `offset`/`limit` apply to every file); sections are separated by a blank \
line. A file that cannot be read (missing, a directory, binary, too large) does not fail the call: \
its section holds `error: KIND: message` instead. Files over 10 MiB must be paged with \
`offset`/`limit`, and once the sections hold more than 10 MiB the remaining files are skipped \
with an `output_limit` error to read them in another call. Prefer this over several `read_file` \
calls when you already know which files you need.",
    schema: schema_of::<ReadFilesArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| read_files(ctx, parse_args(args)?).map(Output::Text),
};

/// Reads every file of `args` and joins their sections.
pub fn read_files(ctx: &Context<'_>, args: ReadFilesArgs) -> Result<String> {
    if args.paths.is_empty() {
        return Err(Error::invalid("`paths` must name at least one file"));
    }
    if args.paths.len() > MAX_PATHS {
        return Err(Error::invalid(format!(
            "`paths` names {} files, over the limit of {MAX_PATHS}; split them over several calls",
            args.paths.len()
        )));
    }
    let page = Page::new(args.offset, args.limit)?;
    // As in `read_file`, asking for a page lifts the whole-file size limit, file by file.
    let paged = args.offset.is_some() || args.limit.is_some();
    let mut out = String::new();
    // Bytes of file text shown so far; headers and error lines do not count.
    let mut shown: u64 = 0;
    for given in &args.paths {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("==> ");
        out.push_str(given);
        out.push_str(" <==\n");
        // The budget is checked before each file, so the output stays below twice the limit
        // however many large files are named.
        let section = if shown > ctx.config.max_read_bytes {
            Err(Error::new(
                ErrorKind::OutputLimit,
                format!(
                    "{given}: skipped, the sections before it already hold over {} bytes; \
                     read it in another call",
                    ctx.config.max_read_bytes
                ),
            ))
        } else {
            ctx.vfs.resolve(given).and_then(|path| read_page(ctx, &path, page, paged))
        };
        match section {
            Ok(text) => {
                shown += text.len() as u64;
                out.push_str(&text);
            }
            Err(e) => {
                out.push_str("error: ");
                out.push_str(&e.to_string());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    #[cfg(unix)]
    #[test]
    fn formats_sections() {
        let mut f = fixture(
            r#"
//- a.txt
one
two
three
//- b.txt
bee
//- dir/
"#,
        );
        f.write("empty.txt", "");
        f.write("bin", b"\x7fELF\x00\x00");
        f.write("big.txt", "0123456789\n".repeat(20));
        f.config.max_read_bytes = 100;
        let table = [
            (
                json!({"paths": ["a.txt", "b.txt"]}),
                "==> a.txt <==\n     1\tone\n     2\ttwo\n     3\tthree\n\n==> b.txt <==\n     1\tbee",
            ),
            // Order is the order given, duplicates included.
            (
                json!({"paths": ["b.txt", "a.txt", "b.txt"], "limit": 1}),
                "==> b.txt <==\n     1\tbee\n\n\
                 ==> a.txt <==\n     1\tone\n\n(showing lines 1-1 of 3; call again with offset=2 to continue)\n\n\
                 ==> b.txt <==\n     1\tbee",
            ),
            (
                json!({"paths": ["a.txt", "b.txt"], "offset": -1}),
                "==> a.txt <==\n     3\tthree\n\n==> b.txt <==\n     1\tbee",
            ),
            (
                json!({"paths": ["b.txt"], "offset": 3}),
                "==> b.txt <==\n(offset 3 is past the end of b.txt, which has 1 line; use an offset from 1 to 1, \
                 or a negative offset to count from the end)",
            ),
            (json!({"paths": ["empty.txt"]}), "==> empty.txt <==\n(empty file)"),
            // One bad path does not fail the call: its error sits in its section.
            (
                json!({"paths": ["missing.txt", "a.txt"], "limit": 1}),
                "==> missing.txt <==\nerror: not_found: missing.txt: no such file or directory\n\n\
                 ==> a.txt <==\n     1\tone\n\n(showing lines 1-1 of 3; call again with offset=2 to continue)",
            ),
            (
                json!({"paths": ["dir"]}),
                "==> dir <==\nerror: not_a_file: dir: is a directory; use list_dir to see its entries",
            ),
            (json!({"paths": ["bin"]}), "==> bin <==\nerror: is_binary: bin: file is binary, not text"),
            (
                json!({"paths": ["../x", "~/x"]}),
                "==> ../x <==\nerror: path_escape: ../x: path is outside the workspace roots\n\n\
                 ==> ~/x <==\nerror: invalid_input: ~/x: `~` is not expanded; give a path inside the \
                 workspace, absolute or relative to ROOT",
            ),
        ];
        let _sock = std::os::unix::net::UnixListener::bind(f.dir.path().join("sock")).expect("bind");
        let sock = f.call("read_files", json!({"paths": ["sock"]})).expect("read");
        assert_eq!(sock, "==> sock <==\nerror: not_a_file: sock: is not a regular file");
        let root = f.vfs.workspace().roots()[0].display().to_string();
        for (args, want) in table {
            assert_eq!(f.call("read_files", args.clone()).expect("read"), want.replace("ROOT", &root), "{args}");
        }
    }

    #[test]
    fn size_limits_apply_per_file() {
        let mut f = fixture("//- small.txt\nsmall\n");
        f.write("big.txt", "0123456789\n".repeat(20));
        f.write("big2.txt", "abcdefghij\n".repeat(20));
        f.config.max_read_bytes = 100;
        // A whole read of a large file fails in its own section only.
        let out = f.call("read_files", json!({"paths": ["big.txt", "small.txt"]})).expect("read");
        assert!(out.starts_with("==> big.txt <==\nerror: too_large: big.txt: file is 220 bytes"), "{out}");
        assert!(out.ends_with("==> small.txt <==\n     1\tsmall"), "{out}");
        // Paging lifts the limit per file; once the output passes the budget the rest is skipped.
        let out =
            f.call("read_files", json!({"paths": ["big.txt", "big2.txt", "small.txt"], "limit": 20})).expect("read");
        let sections: Vec<&str> = out.split("\n\n==> ").collect();
        assert_eq!(sections.len(), 3, "{out}");
        assert!(sections[0].starts_with("==> big.txt <==\n     1\t0123456789"), "{out}");
        assert!(sections[1].starts_with("big2.txt <==\nerror: output_limit: big2.txt: skipped"), "{out}");
        assert!(sections[2].starts_with("small.txt <==\nerror: output_limit: small.txt: skipped"), "{out}");
    }

    #[test]
    fn bad_arguments_fail_the_call() {
        let f = fixture("//- a.txt\nx\n");
        let many: Vec<String> = (0..51).map(|i| format!("f{i}")).collect();
        let table = [
            (json!({"paths": []}), "`paths` must name at least one file"),
            (json!({"paths": many}), "`paths` names 51 files, over the limit of 50; split them over several calls"),
            (json!({"paths": ["a.txt"], "offset": 0}), "`offset` is 1-based"),
            (json!({"paths": ["a.txt"], "limit": 0}), "`limit` must be at least 1, got 0"),
            (json!({"paths": ["a.txt"], "limit": "ten"}), "`limit`"),
            (json!({"paths": "a.txt"}), "`paths`"),
            (json!({"paths": [1]}), "`paths[0]`"),
            (json!({}), "missing field `paths`"),
            (json!({"paths": ["a.txt"], "path": "a.txt"}), "unknown field `path`"),
        ];
        for (args, want) in table {
            let (kind, msg) = f.call("read_files", args.clone()).expect_err("bad arguments");
            assert_eq!(kind, ErrorKind::InvalidInput, "{args}");
            assert!(msg.contains(want), "{args}: {msg}");
        }
        // Fifty is allowed.
        let fifty = vec!["a.txt"; 50];
        assert_eq!(f.call("read_files", json!({"paths": fifty})).expect("read").matches("==> a.txt <==").count(), 50);
    }
}
