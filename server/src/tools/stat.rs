//! `stat`: what a path is, as JSON: kind, size, times, mode, and the text's shape for a file.

use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::list_dir::workspace_path;
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{ErrorKind, Result};
use crate::text::{ends_with_newline, LineFacts};
use crate::vfs::{EntryKind, Metadata, Origin};
use crate::workspace::SandboxPath;

/// Arguments of `stat`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatArgs {
    /// Path to describe: absolute inside a workspace root, or relative to the first root.
    pub path: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "stat",
    description: "Describe a file or directory as JSON without reading it out: `type` (file, \
directory, symlink for a dangling link, other), `size` in bytes, `modified` (RFC 3339, UTC), \
`permissions` (octal, like \"0644\"), and `symlink` (true when the path itself is a symlink; the \
fields then describe its target, named in `target`). A directory adds `entries` (its number of \
entries). A file adds `open` (whether an editor has it open; if so `dirty` and `version`, and size \
and text fields come from the unsaved buffer) and `binary`; a text file adds `lines`, `encoding`, \
`bom`, `line_ending` (lf, crlf, cr, mixed, or none for text without line breaks) and \
`final_newline`. Files over 50 MiB get `text_skipped` with the reason instead of text fields. \
Use it to check a file's size before reading it, or its encoding and line endings before editing.",
    schema: schema_of::<StatArgs>,
    effects: Effects::READ,
    quick: true,
    run: |ctx, args: Value| stat(ctx, parse_args(args)?).map(Output::Json),
};

/// Describes the path of `args`.
pub fn stat(ctx: &Context<'_>, args: StatArgs) -> Result<Value> {
    let path = ctx.vfs.resolve(&args.path)?;
    // Resolution keeps a final symlink as named in `path()` and follows it in `real()`.
    let is_link = path.path() != path.real();
    let mut out = Map::new();
    out.insert("path".into(), json!(path.given()));
    let meta = match ctx.vfs.metadata(&path) {
        Ok(m) => m,
        Err(e) if is_link && e.kind() == ErrorKind::NotFound => {
            // A dangling link inside the workspace: describe the link itself.
            let link = ctx.vfs.symlink_metadata(&path)?;
            common(&mut out, &link);
            out.insert("symlink".into(), json!(true));
            out.insert("target".into(), json!(workspace_path(ctx.vfs, &path)));
            out.insert("dangling".into(), json!(true));
            return Ok(Value::Object(out));
        }
        Err(e) => return Err(e),
    };
    common(&mut out, &meta);
    out.insert("symlink".into(), json!(is_link));
    if is_link {
        out.insert("target".into(), json!(workspace_path(ctx.vfs, &path)));
    }
    match meta.kind {
        EntryKind::Dir => {
            // An unreadable directory is still described; only its entry count is unknown.
            if let Ok(entries) = ctx.vfs.read_dir(&path) {
                out.insert("entries".into(), json!(entries.len()));
            }
        }
        EntryKind::File => file_fields(ctx, &path, &meta, &mut out),
        EntryKind::Symlink | EntryKind::Other => {}
    }
    Ok(Value::Object(out))
}

/// The fields every kind has: type, size, modified time and permissions.
fn common(out: &mut Map<String, Value>, meta: &Metadata) {
    let kind = match meta.kind {
        EntryKind::File => "file",
        EntryKind::Dir => "directory",
        EntryKind::Symlink => "symlink",
        EntryKind::Other => "other",
    };
    out.insert("type".into(), json!(kind));
    out.insert("size".into(), json!(meta.len));
    // A buffer never saved has neither; the fields are left out rather than invented.
    if let Some(t) = meta.modified.and_then(rfc3339) {
        out.insert("modified".into(), json!(t));
    }
    if let Some(mode) = meta.mode {
        out.insert("permissions".into(), json!(format!("{mode:04o}")));
    }
}

/// `t` in RFC 3339, UTC, to the second; `None` for a time humantime cannot show (before 1970 or
/// after 9999), which it would otherwise panic on.
fn rfc3339(t: SystemTime) -> Option<String> {
    use std::fmt::Write as _;
    t.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    let mut s = String::new();
    write!(s, "{}", humantime::format_rfc3339_seconds(t)).ok()?;
    Some(s)
}

/// The buffer state and the text's shape of the file `path`.
fn file_fields(ctx: &Context<'_>, path: &SandboxPath, meta: &Metadata, out: &mut Map<String, Value>) {
    match meta.origin {
        Origin::Buffer { version, dirty, .. } => {
            out.insert("open".into(), json!(true));
            out.insert("dirty".into(), json!(dirty));
            out.insert("version".into(), json!(version));
        }
        Origin::Disk => {
            out.insert("open".into(), json!(false));
        }
    }
    // An open buffer is already in memory; a file on disk is read whole only up to the size
    // `grep` also reads, so that a stat never costs more than a search would.
    let limit = ctx.config.max_grep_file_bytes;
    if meta.origin == Origin::Disk && meta.len > limit {
        out.insert(
            "text_skipped".into(),
            json!(format!("file is over the {limit}-byte limit for reading it whole; lines and encoding not computed")),
        );
        return;
    }
    let file = match ctx.vfs.read_text(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::IsBinary => {
            out.insert("binary".into(), json!(true));
            return;
        }
        Err(e) => {
            let msg = e.message();
            let why = msg.strip_prefix(path.given()).and_then(|m| m.strip_prefix(": ")).unwrap_or(msg);
            out.insert("text_skipped".into(), json!(format!("could not read the file: {why}")));
            return;
        }
    };
    let text = &file.text;
    let facts = LineFacts::of(text);
    let line_ending = if facts.breaks == 0 { "none" } else { facts.ending.as_str() };
    out.insert("binary".into(), json!(false));
    out.insert("lines".into(), json!(facts.lines));
    out.insert("encoding".into(), json!(file.encoding.as_str()));
    out.insert("bom".into(), json!(file.bom));
    out.insert("line_ending".into(), json!(line_ending));
    out.insert("final_newline".into(), json!(ends_with_newline(text)));
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::sync::Arc;

    use serde_json::{json, Value};

    use crate::error::ErrorKind;
    use crate::text::Document;
    use crate::tools::testing::fixture;
    use crate::vfs::{OpenDocument, Overlay, Vfs};

    /// The fields of a stat result that do not depend on when the test runs.
    fn stable(mut v: Value) -> Value {
        let o = v.as_object_mut().expect("object");
        let modified = o.remove("modified");
        if let Some(m) = modified {
            let m = m.as_str().expect("string").to_owned();
            assert!(humantime::parse_rfc3339(&m).is_ok() && m.ends_with('Z'), "{m}");
        }
        v
    }

    #[test]
    fn describes_text_shapes() {
        let f = fixture("//- lf.txt\na\nb\n//- dir/sub/\n//- dir/x\n");
        let files: &[(&str, &[u8])] = &[
            ("crlf.txt", b"a\r\nb\r\n"),
            ("cr.txt", b"a\rb\r"),
            ("mixed.txt", b"a\r\nb\nc"),
            ("bom.txt", b"\xEF\xBB\xBFbom\n"),
            ("utf16le.txt", b"\xFF\xFEh\x00i\x00\n\x00"),
            ("utf16be.txt", b"\xFE\xFF\x00h\x00i"),
            ("lossy.txt", b"caf\xE9\n"),
            ("bin", b"\x7fELF\x00\x00\x01"),
            ("empty.txt", b""),
            ("no_nl.txt", b"one\ntwo"),
            ("one_line.txt", b"just this"),
        ];
        for (name, bytes) in files {
            f.write(name, bytes);
        }
        std::fs::set_permissions(f.dir.path().join("lf.txt"), std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let text = |lines: usize, encoding: &str, bom: bool, ending: &str, nl: bool| {
            json!({"binary": false, "lines": lines, "encoding": encoding, "bom": bom, "line_ending": ending,
                   "final_newline": nl})
        };
        let table = [
            ("lf.txt", 4, text(2, "utf-8", false, "lf", true)),
            ("crlf.txt", 6, text(2, "utf-8", false, "crlf", true)),
            ("cr.txt", 4, text(2, "utf-8", false, "cr", true)),
            ("mixed.txt", 6, text(3, "utf-8", false, "mixed", false)),
            ("bom.txt", 7, text(1, "utf-8", true, "lf", true)),
            ("utf16le.txt", 8, text(1, "utf-16le", true, "lf", true)),
            ("utf16be.txt", 6, text(1, "utf-16be", true, "none", false)),
            ("lossy.txt", 5, text(1, "utf-8 (invalid sequences replaced)", false, "lf", true)),
            ("bin", 7, json!({"binary": true})),
            ("empty.txt", 0, text(0, "utf-8", false, "none", false)),
            ("no_nl.txt", 7, text(2, "utf-8", false, "lf", false)),
            ("one_line.txt", 9, text(1, "utf-8", false, "none", false)),
        ];
        for (path, size, fields) in table {
            let mut want = json!({"path": path, "type": "file", "size": size, "symlink": false, "open": false});
            want.as_object_mut().expect("object").extend(fields.as_object().expect("object").clone());
            let got = stable(f.call_json("stat", json!({"path": path})).expect("stat"));
            let mut got_perms = got.clone();
            let perms = got_perms.as_object_mut().expect("object").remove("permissions").expect("permissions");
            assert_eq!(got_perms, want, "{path}");
            assert_eq!(perms.as_str().map(str::len), Some(4), "{path}: {perms}");
        }
        let lf = f.call_json("stat", json!({"path": "lf.txt"})).expect("stat");
        assert_eq!(lf["permissions"], "0640");
        // A socket is described without being opened.
        let _sock = std::os::unix::net::UnixListener::bind(f.dir.path().join("sock")).expect("bind");
        let sock = stable(f.call_json("stat", json!({"path": "sock"})).expect("stat"));
        assert_eq!(sock.get("type"), Some(&json!("other")), "{sock}");
        assert!(sock.get("open").is_none() && sock.get("binary").is_none(), "{sock}");
        let dir = stable(f.call_json("stat", json!({"path": "dir"})).expect("stat"));
        assert_eq!(dir["type"], "directory");
        assert_eq!(dir["entries"], 2);
        assert_eq!(dir["symlink"], false);
        assert!(dir.get("open").is_none() && dir.get("lines").is_none(), "{dir}");
    }

    #[test]
    fn symlinks() {
        let f = fixture("//- src/main.rs\nfn main() {}\n");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret.txt"), "secret\n").expect("write");
        let root = f.dir.path();
        symlink("src/main.rs", root.join("link_file")).expect("symlink");
        symlink("src", root.join("link_dir")).expect("symlink");
        symlink("src/new.rs", root.join("dangling")).expect("symlink");
        symlink(outside.path().join("secret.txt"), root.join("link_out")).expect("symlink");

        let file = stable(f.call_json("stat", json!({"path": "link_file"})).expect("stat"));
        assert_eq!(file["type"], "file");
        assert_eq!(file["symlink"], true);
        assert_eq!(file["target"], "src/main.rs");
        assert_eq!(file["size"], 13);
        assert_eq!(file["lines"], 1);
        let dir = f.call_json("stat", json!({"path": "link_dir"})).expect("stat");
        assert_eq!((&dir["type"], &dir["symlink"], &dir["target"]), (&json!("directory"), &json!(true), &json!("src")));
        let dangling = f.call_json("stat", json!({"path": "dangling"})).expect("stat");
        assert_eq!(dangling["type"], "symlink");
        assert_eq!(dangling["target"], "src/new.rs");
        assert_eq!(dangling["dangling"], true);
        // A link leaving the workspace is refused, its target never named.
        let (kind, msg) = f.call_json("stat", json!({"path": "link_out"})).expect_err("escape");
        assert_eq!(kind, ErrorKind::PathEscape);
        assert!(!msg.contains("secret") && !msg.contains(&outside.path().display().to_string()), "{msg}");
    }

    #[test]
    fn open_buffer_overlay() {
        let mut f = fixture("//- a.txt\ndisk\n//- b.txt\nclosed\n");
        let ws = Arc::new(f.vfs.workspace().clone());
        let mut docs = BTreeMap::new();
        let a = ws.resolve("a.txt").expect("inside");
        let open = Document::from_bytes(b"\xEF\xBB\xBFone\r\ntwo\r\nthree".to_vec()).expect("text");
        docs.insert(a.real().to_path_buf(), OpenDocument { doc: open, version: 7, dirty: true, stamp: 0 });
        // A buffer never saved: no file on disk, so no time or mode.
        let new = ws.resolve("new.txt").expect("inside");
        docs.insert(
            new.real().to_path_buf(),
            OpenDocument { doc: Document::from_text("x\n"), version: 1, dirty: true, stamp: 0 },
        );
        f.vfs = Vfs::new(ws, Arc::new(Overlay::from_docs(docs)));

        let got = stable(f.call_json("stat", json!({"path": "a.txt"})).expect("stat"));
        let mut got_perms = got.clone();
        got_perms.as_object_mut().expect("object").remove("permissions").expect("permissions from disk");
        let want = json!({"path": "a.txt", "type": "file", "size": 3 + 15, "symlink": false, "open": true,
                          "dirty": true, "version": 7, "binary": false, "lines": 3, "encoding": "utf-8", "bom": true,
                          "line_ending": "crlf", "final_newline": false});
        assert_eq!(got_perms, want);
        let closed = f.call_json("stat", json!({"path": "b.txt"})).expect("stat");
        assert_eq!((&closed["open"], closed.get("dirty")), (&json!(false), None));
        let unsaved = f.call_json("stat", json!({"path": "new.txt"})).expect("stat");
        let want = json!({"path": "new.txt", "type": "file", "size": 2, "symlink": false, "open": true, "dirty": true,
                          "version": 1, "binary": false, "lines": 1, "encoding": "utf-8", "bom": false,
                          "line_ending": "lf", "final_newline": true});
        assert_eq!(unsaved, want);
    }

    #[test]
    fn skips_text_of_huge_files() {
        let mut f = fixture("//- big.txt\n0123456789\n");
        f.config.max_grep_file_bytes = 10;
        let got = f.call_json("stat", json!({"path": "big.txt"})).expect("stat");
        assert_eq!(got["size"], 11);
        assert_eq!(
            got["text_skipped"],
            "file is over the 10-byte limit for reading it whole; lines and encoding not computed"
        );
        assert!(got.get("lines").is_none() && got.get("binary").is_none(), "{got}");
    }

    #[test]
    fn times_out_of_range_are_left_out() {
        let f = fixture("//- old.txt\nx\n//- now.txt\nz\n");
        let epoch = std::time::SystemTime::UNIX_EPOCH;
        let set = |name: &str, t| {
            let file = std::fs::File::options().write(true).open(f.dir.path().join(name)).expect("open");
            file.set_modified(t).expect("set mtime");
        };
        set("old.txt", epoch - std::time::Duration::from_secs(10 * 365 * 86_400));
        set("now.txt", epoch + std::time::Duration::from_secs(1_700_000_000));
        let table = [("old.txt", None), ("now.txt", Some("2023-11-14T22:13:20Z"))];
        for (path, want) in table {
            let got = f.call_json("stat", json!({"path": path})).expect("stat");
            assert_eq!(got.get("modified").and_then(|m| m.as_str()), want, "{path}");
            assert_eq!(got["lines"], 1, "{path}");
        }
        // Disks clamp times far in the future, so past year 9999 is checked on the formatter.
        let far = epoch + std::time::Duration::from_secs(253_402_300_800 + 86_400);
        assert_eq!(super::rfc3339(far), None);
        assert_eq!(super::rfc3339(epoch).as_deref(), Some("1970-01-01T00:00:00Z"));
    }

    #[test]
    fn errors() {
        let f = fixture("//- a.txt\nx\n");
        let table = [
            (json!({"path": "missing.txt"}), ErrorKind::NotFound, "missing.txt: no such file or directory"),
            (json!({"path": "a.txt/x"}), ErrorKind::NotADirectory, "a.txt/x: not a directory"),
            (json!({"path": "../a.txt"}), ErrorKind::PathEscape, "../a.txt: path is outside the workspace roots"),
            (json!({"path": "/etc/passwd"}), ErrorKind::PathEscape, "/etc/passwd: path is outside"),
            (json!({}), ErrorKind::InvalidInput, "missing field `path`"),
            (json!({"path": ["a.txt"]}), ErrorKind::InvalidInput, "`path`"),
            (json!({"path": "a.txt", "follow": true}), ErrorKind::InvalidInput, "unknown field `follow`"),
            (json!("a.txt"), ErrorKind::InvalidInput, "arguments must be a JSON object"),
        ];
        for (args, kind, want) in table {
            let (got, msg) = f.call_json("stat", args.clone()).expect_err("error");
            assert_eq!(got, kind, "{args}: {msg}");
            assert!(msg.contains(want), "{args}: {msg}");
        }
    }
}
