//! `read_file`: a file's lines, numbered, paged.

use std::borrow::Cow;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::text::lines;
use crate::workspace::SandboxPath;

/// Lines returned when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// First line to return, 1-based. A negative value counts from the end (-1 is the last
    /// line). 0 is invalid.
    #[serde(default)]
    pub offset: Option<i64>,
    /// Number of lines to return.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<i64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "read_file",
    description: "Read a text file with numbered lines (`cat -n` style: line number, tab, text). \
Sees unsaved editor buffers when tether runs beside an editor. Returns at most `limit` lines \
(default 2000) starting at `offset` (1-based; negative counts from the end), and says which offset \
to use next when more remain. Lines longer than 2000 characters are cut with a marker. Binary \
files are refused; files over 10 MiB must be paged with `offset`/`limit`. Prefer `grep` to find \
where something is, then `read_file` with an offset around it.",
    schema: schema_of::<ReadFileArgs>,
    effects: Effects::READ,
    quick: true,
    run: |ctx, args: Value| read_file(ctx, parse_args(args)?).map(Output::Text),
};

/// A validated page request: which lines of a file to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// 1-based first line; negative counts from the end.
    pub offset: Option<i64>,
    /// Number of lines.
    pub limit: usize,
}

impl Page {
    /// Validates `offset` and `limit` arguments.
    pub fn new(offset: Option<i64>, limit: Option<i64>) -> Result<Page> {
        if offset == Some(0) {
            return Err(Error::invalid(
                "`offset` is 1-based: use 1 for the first line, or a negative number to count from the end",
            ));
        }
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
            Some(n) => return Err(Error::invalid(format!("`limit` must be at least 1, got {n}"))),
        };
        Ok(Page { offset, limit })
    }
}

/// Reads `path` and formats the requested page.
pub fn read_file(ctx: &Context<'_>, args: ReadFileArgs) -> Result<String> {
    let page = Page::new(args.offset, args.limit)?;
    let path = ctx.vfs.resolve(&args.path)?;
    let paged = args.offset.is_some() || args.limit.is_some();
    read_page(ctx, &path, page, paged)
}

/// Reads one resolved file and formats a page of it: shared by `read_file` and `read_files`.
pub fn read_page(ctx: &Context<'_>, path: &SandboxPath, page: Page, paged: bool) -> Result<String> {
    let meta = ctx.vfs.metadata(path)?;
    if meta.kind == crate::vfs::EntryKind::Dir {
        return Err(Error::new(
            ErrorKind::NotAFile,
            format!("{path}: is a directory; use list_dir to see its entries"),
        )
        .with_path(path.given()));
    }
    if !paged && meta.len > ctx.config.max_read_bytes {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "{path}: file is {} bytes, over the {}-byte limit for a whole read; \
                 read it in pages with `offset` and `limit` (for example offset=1, limit={DEFAULT_LIMIT}), \
                 or find the part you need with grep first",
                meta.len, ctx.config.max_read_bytes
            ),
        )
        .with_path(path.given()));
    }
    // An open buffer is paged from its rope in place: a whole read of a large buffer would
    // otherwise copy it into one string first.
    let (mut out, version) = match ctx.vfs.overlay().get(path.real()) {
        Some(open) => {
            let version = ctx.config.journal.as_ref().map(|j| keep_read(ctx, j, path, &[&open.bytes()]));
            (format_document(path.given(), &open.doc, page), version)
        }
        None => {
            let file = ctx.vfs.read_text(path)?;
            let bom: &[u8] = if file.bom { b"\xEF\xBB\xBF" } else { b"" };
            let version = ctx.config.journal.as_ref().map(|j| keep_read(ctx, j, path, &[bom, file.text.as_bytes()]));
            (format_page(path.given(), &file.text, page), version)
        }
    };
    // The model must know that the text is not what the file on disk holds.
    if let crate::vfs::Origin::Buffer { dirty: true, .. } = meta.origin {
        out.push_str(UNSAVED_NOTE);
    }
    if let Some(version) = version {
        let _ = write!(out, "\n{VERSION_PREFIX}{version}]");
    }
    Ok(out)
}

/// How a read ends when the journal is on: `[version: 3f9a0c12b7e1]`, the token an edit may pass
/// back as `version` to be told when the file changed since.
pub const VERSION_PREFIX: &str = "[version: ";

/// The version of `bytes` (what the read showed), kept by the journal so a later stale edit can
/// be shown what changed since.
fn keep_read(
    ctx: &Context<'_>,
    settings: &crate::config::JournalSettings,
    path: &SandboxPath,
    bytes: &[&[u8]],
) -> String {
    let version = crate::journal::version_of(bytes);
    crate::journal::Journal::open(settings, ctx.vfs.workspace().roots()).keep_read(path.real(), &version, bytes);
    version
}

/// Appended to a page read from an editor buffer with unsaved changes.
pub const UNSAVED_NOTE: &str = "\n(from the open editor buffer, which has unsaved changes)";

/// Numbers and pages `text`.
pub fn format_page(shown: &str, text: &str, page: Page) -> String {
    let total = crate::text::LineFacts::of(text).lines;
    format_lines(
        shown,
        total,
        text.len(),
        |first| lines(text).skip(first).map(|(content, _)| Cow::Borrowed(content)),
        page,
    )
}

/// Numbers and pages an open document, reading its lines from the rope in place.
pub fn format_document(shown: &str, doc: &crate::text::Document, page: Page) -> String {
    format_lines(shown, doc.line_count(), doc.len(), |first| doc.lines_from(first), page)
}

/// Numbers and pages a text of `total` lines and `size` bytes whose line contents (without
/// breaks) from the 0-based line `n` on are `lines_from(n)`.
fn format_lines<'t, I>(
    shown: &str,
    total: usize,
    size: usize,
    lines_from: impl FnOnce(usize) -> I,
    page: Page,
) -> String
where
    I: Iterator<Item = Cow<'t, str>>,
{
    if total == 0 {
        return "(empty file)".to_owned();
    }
    let first = match page.offset {
        None => 1,
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
        // Negative: -1 is the last line; past the start clamps to line 1.
        Some(n) => total.saturating_sub(usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX) - 1).max(1),
    };
    if first > total {
        return format!(
            "(offset {first} is past the end of {shown}, which has {total} line{}; \
             use an offset from 1 to {total}, or a negative offset to count from the end)",
            if total == 1 { "" } else { "s" }
        );
    }
    let last = first.saturating_add(page.limit - 1).min(total);
    let width = last.to_string().len().max(6);
    // Sized for the page and its number column at once: growing a page of a large file by
    // doubling would briefly hold twice its size.
    let shown = last + 1 - first;
    let mut out = String::with_capacity(size.min(page.limit.saturating_mul(80)) + shown * (width + 1) + 128);
    for (i, content) in lines_from(first - 1).take(shown).enumerate() {
        push_line_number(&mut out, first + i, width);
        push_truncated(&mut out, &content);
        out.push('\n');
    }
    if last < total {
        let _ =
            write!(out, "\n(showing lines {first}-{last} of {total}; call again with offset={} to continue)", last + 1);
    } else {
        out.pop();
    }
    out
}

/// Appends `n` right-aligned in `width` columns and a tab (`format!` costs more than the line
/// itself on a page of short lines).
fn push_line_number(out: &mut String, n: usize, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(&digits[at..]).unwrap_or_default();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(digits.len())));
    out.push_str(digits);
    out.push('\t');
}

/// Appends `line`, cut at [`MAX_LINE_CHARS`] characters with a marker saying how much was left.
fn push_truncated(out: &mut String, line: &str) {
    // No more bytes than the limit means no more characters either.
    if line.len() <= MAX_LINE_CHARS {
        out.push_str(line);
        return;
    }
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            out.push_str(&line[..cut]);
            let _ = write!(out, " [... line truncated, {rest} more characters]");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    #[test]
    fn formats_and_pages() {
        let f = fixture(
            r#"
//- five.txt
one
two
three
four
five
//- empty.txt
"#,
        );
        f.write("empty.txt", "");
        f.write("crlf.txt", "a\r\nb\r\n");
        f.write("lone_cr.txt", "a\rb");
        f.write("utf16.txt", b"\xFF\xFEh\x00i\x00\n\x00");
        f.write("bom.txt", "\u{feff}bom\n");
        let read = |args: serde_json::Value| f.call("read_file", args).expect("read");
        let n = |lines: &[&str]| lines.iter().map(|l| format!("     {l}")).collect::<Vec<_>>().join("\n");
        let table = [
            (json!({"path": "five.txt"}), n(&["1\tone", "2\ttwo", "3\tthree", "4\tfour", "5\tfive"])),
            (
                json!({"path": "five.txt", "offset": 2, "limit": 2}),
                n(&["2\ttwo", "3\tthree\n"]) + "\n(showing lines 2-3 of 5; call again with offset=4 to continue)",
            ),
            (json!({"path": "five.txt", "offset": -2}), n(&["4\tfour", "5\tfive"])),
            (
                json!({"path": "five.txt", "offset": -99, "limit": 1}),
                n(&["1\tone\n"]) + "\n(showing lines 1-1 of 5; call again with offset=2 to continue)",
            ),
            (
                json!({"path": "five.txt", "offset": 9}),
                "(offset 9 is past the end of five.txt, which has 5 lines; use an offset from 1 to 5, \
                 or a negative offset to count from the end)"
                    .to_owned(),
            ),
            (json!({"path": "empty.txt"}), "(empty file)".to_owned()),
            (json!({"path": "crlf.txt"}), n(&["1\ta", "2\tb"])),
            (json!({"path": "lone_cr.txt"}), n(&["1\ta", "2\tb"])),
            (json!({"path": "utf16.txt"}), n(&["1\thi"])),
            (json!({"path": "bom.txt"}), n(&["1\tbom"])),
        ];
        for (args, want) in table {
            assert_eq!(read(args.clone()), want, "{args}");
        }
    }

    #[test]
    fn truncates_long_lines() {
        let f = fixture("");
        f.write("long.txt", format!("{}\nshort\n", "\u{4E2D}".repeat(2005)));
        let out = f.call("read_file", json!({"path": "long.txt"})).expect("read");
        let first = out.lines().next().expect("line");
        assert!(first.ends_with(" [... line truncated, 5 more characters]"), "{first}");
        assert_eq!(first.matches('\u{4E2D}').count(), 2000);
        assert!(out.ends_with("     2\tshort"));

        // At the limit exactly nothing is cut; one character more is.
        f.write("ascii.txt", format!("{}\n{}x\n", "a".repeat(2000), "b".repeat(2000)));
        let out = f.call("read_file", json!({"path": "ascii.txt"})).expect("read");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], format!("     1\t{}", "a".repeat(2000)));
        assert_eq!(lines[1], format!("     2\t{} [... line truncated, 1 more characters]", "b".repeat(2000)));
    }

    #[test]
    fn numbers_are_right_aligned_past_six_digits() {
        let f = fixture("");
        f.write("many.txt", "x\n".repeat(1_000_000));
        let out = f.call("read_file", json!({"path": "many.txt", "offset": 999_999, "limit": 5})).expect("read");
        assert_eq!(out, " 999999\tx\n1000000\tx");
        let out = f.call("read_file", json!({"path": "many.txt", "offset": 9, "limit": 2})).expect("read");
        assert_eq!(
            out,
            "     9\tx\n    10\tx\n\n(showing lines 9-10 of 1000000; call again with offset=11 to continue)"
        );
    }

    #[test]
    fn errors() {
        let mut f = fixture("//- a.txt\nx\n//- dir/\n");
        f.write("bin", b"\x7fELF\x00\x00");
        f.write("big.txt", "0123456789\n".repeat(20));
        f.config.max_read_bytes = 100;
        let table = [
            (json!({"path": "missing.txt"}), ErrorKind::NotFound),
            (json!({"path": "dir"}), ErrorKind::NotAFile),
            (json!({"path": "bin"}), ErrorKind::IsBinary),
            (json!({"path": "big.txt"}), ErrorKind::TooLarge),
            (json!({"path": "../x"}), ErrorKind::PathEscape),
            (json!({"path": "a.txt", "offset": 0}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "limit": 0}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "limit": "ten"}), ErrorKind::InvalidInput),
            (json!({"path": 7}), ErrorKind::InvalidInput),
            (json!({}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "bogus": 1}), ErrorKind::InvalidInput),
            (json!(["a.txt"]), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("read_file", args.clone()), want, "{args}");
        }
        // Paging makes a large file readable, and the too_large message says how.
        let (_, msg) = f.call("read_file", json!({"path": "big.txt"})).expect_err("too large");
        assert!(msg.contains("offset") && msg.contains("limit"), "{msg}");
        assert!(f.call("read_file", json!({"path": "big.txt", "limit": 3})).is_ok());
        // A bad field is named in the message.
        let (_, msg) = f.call("read_file", json!({"path": "a.txt", "limit": "ten"})).expect_err("bad");
        assert!(msg.contains("`limit`"), "{msg}");
    }

    /// A page of an open buffer, read from its rope in place, is the page of its text: line
    /// breaks of every kind, lines longer than one of the rope's leaves, pages at every edge.
    #[test]
    fn a_page_of_an_open_buffer_is_the_page_of_its_text() {
        use super::{format_document, format_page, Page};
        use crate::text::Document;

        let long = "é€🦀x".repeat(700);
        let texts = [
            String::new(),
            "a".to_owned(),
            "a\n".to_owned(),
            "\n\n".to_owned(),
            "a\r\nb\r\n".to_owned(),
            "a\rb\r".to_owned(),
            "a\r\n\rb\n\r".to_owned(),
            format!("{long}\n{long}\r\nshort\r{long}"),
            "line\r\n".repeat(3000),
            format!("{}tail", "x\n".repeat(5000)),
        ];
        let pages =
            [(None, 2000), (Some(1), 1), (Some(2), 3), (Some(2999), 5), (Some(-1), 1), (Some(-3), 10), (Some(7000), 1)];
        for text in &texts {
            let doc = Document::from_text(text);
            for &(offset, limit) in &pages {
                let page = Page { offset, limit };
                let (want, got) = (format_page("f", text, page), format_document("f", &doc, page));
                assert!(want == got, "{:?} at {offset:?}/{limit}: {got:?} != {want:?}", &text[..text.len().min(40)]);
            }
        }
    }
}
