//! Structured, read-only exploration of a repository: listings with metadata, byte-capped reads
//! (text or base64), line search with context, and an overview with per-extension statistics.
//!
//! Every function returns a JSON value in a fixed shape (documented on each) rather than text,
//! for surfaces whose contract is JSON. Paths in results are relative to the first workspace
//! root, the repository. Reads go through the [`Vfs`](crate::vfs::Vfs), so open editor buffers
//! are seen; walks never follow symlinks.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use ignore::DirEntry;
use regex::Regex;
use serde_json::{json, Value};

use super::search::PathGlob;
use super::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;
use crate::workspace::{SandboxPath, WalkOptions};

/// The most entries a listing returns.
pub const MAX_LIST_ENTRIES: usize = 500;
/// The largest file that is read or searched.
pub const MAX_FILE_SIZE_BYTES: u64 = 1024 * 1024;
/// How long a search may run.
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(30);
/// The most matches a search returns, whatever it asks for.
pub const MAX_SEARCH_RESULTS: usize = 100;
/// Extensions listed in overview statistics.
pub const TOP_LANGUAGES: usize = 15;

/// Extensions of binary formats: refused for UTF-8 reads, skipped by search.
pub const BLOCKED_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "ico", "webp", "bmp", // images
    "zip", "tar", "gz", "bz2", "7z", "rar", // archives
    "exe", "dll", "so", "dylib", "wasm", // executables
    "pyc", "class", "o", "obj", // compiled
    "woff", "woff2", "ttf", "otf", "eot", // fonts
    "mp3", "mp4", "wav", "avi", "mov", // media
    "sqlite", "db", "pdf", // data
];
/// Directories search never enters.
pub const SEARCH_EXCLUDED_DIRS: &[&str] = &["node_modules", ".git", "dist", "build"];
/// Directories the overview never enters.
pub const OVERVIEW_EXCLUDED_DIRS: &[&str] =
    &["node_modules", ".git", ".next", "dist", "build", "__pycache__", ".cache", "coverage", ".nyc_output"];

/// Whether search skips a file by its name: minified bundles, lock files and source maps.
pub fn search_excluded_file(name: &str) -> bool {
    name.ends_with(".min.js")
        || name.ends_with(".min.css")
        || name.ends_with(".map")
        || name == "package-lock.json"
        || name == "yarn.lock"
}

/// Whether `path`'s extension is one of [`BLOCKED_EXTENSIONS`] (compared without case).
pub fn is_blocked(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BLOCKED_EXTENSIONS.iter().any(|b| b.eq_ignore_ascii_case(e)))
}

/// An ISO 8601 UTC timestamp with milliseconds: `2026-01-11T10:00:00.000Z`.
pub fn iso8601(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Resolves `given` and checks it is a directory (`not_found` or `not_a_directory` otherwise).
fn resolve_dir(ctx: &Context<'_>, given: &str) -> Result<SandboxPath> {
    let dir = ctx.vfs.resolve(given)?;
    if ctx.vfs.metadata(&dir)?.kind != EntryKind::Dir {
        return Err(Error::new(ErrorKind::NotADirectory, format!("{dir}: not a directory")).with_path(dir.given()));
    }
    Ok(dir)
}

/// The kind of a walked entry; symlinks are reported as such, never followed.
fn kind_of(e: &DirEntry) -> EntryKind {
    match e.file_type() {
        Some(t) if t.is_symlink() => EntryKind::Symlink,
        Some(t) if t.is_dir() => EntryKind::Dir,
        Some(t) if t.is_file() => EntryKind::File,
        _ => EntryKind::Other,
    }
}

/// What [`list_files`] lists.
#[derive(Debug, Clone)]
pub struct ListQuery<'a> {
    /// Directory to list.
    pub directory: &'a str,
    /// Only entries matching this glob (names at any depth without `/`, else paths below
    /// `directory`).
    pub pattern: Option<&'a PathGlob>,
    /// Levels below `directory` (1 = its direct entries).
    pub max_depth: usize,
    /// Include entries whose name starts with a dot.
    pub include_hidden: bool,
}

/// Lists files and directories below a directory, depth-first in name order:
/// `{files: [{path, type, size?, modified_at?}], total_count, truncated}`. Files have `size` and
/// `modified_at`; directories `path` and `type` only. A symlink is listed as what it points to
/// when that lies inside the workspace (and is not entered), and left out otherwise.
pub fn list_files(ctx: &Context<'_>, q: &ListQuery<'_>) -> Result<Value> {
    let dir = resolve_dir(ctx, q.directory)?;
    let opts = WalkOptions {
        hidden: q.include_hidden,
        gitignore: false,
        max_depth: Some(q.max_depth),
        skip_build_dirs: false,
    };
    let mut walk = ctx.vfs.workspace().walker(&dir, opts);
    walk.sort_by_file_name(|a, b| a.cmp(b));
    let mut files = Vec::new();
    let mut total = 0usize;
    for entry in walk.build() {
        ctx.cancel.check()?;
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        if let Some(p) = q.pattern {
            if !p.is_match(entry.path().strip_prefix(dir.real()).unwrap_or(entry.path())) {
                continue;
            }
        }
        let kind = match kind_of(&entry) {
            EntryKind::Symlink => match link_kind(ctx, entry.path()) {
                Some(k) => k,
                None => continue,
            },
            k => k,
        };
        if !matches!(kind, EntryKind::File | EntryKind::Dir) {
            continue;
        }
        total += 1;
        if files.len() == MAX_LIST_ENTRIES {
            continue;
        }
        let path = ctx.vfs.display(entry.path());
        if kind == EntryKind::Dir {
            files.push(json!({"path": path, "type": "directory"}));
        } else {
            let meta =
                entry.path().to_str().and_then(|p| ctx.vfs.resolve(p).ok()).and_then(|p| ctx.vfs.metadata(&p).ok());
            let (size, modified) = meta.map(|m| (m.len, m.modified)).unwrap_or((0, None));
            let mut f = json!({"path": path, "type": "file", "size": size});
            if let Some(t) = modified {
                f["modified_at"] = iso8601(t).into();
            }
            files.push(f);
        }
    }
    Ok(json!({"files": files, "total_count": total, "truncated": total > MAX_LIST_ENTRIES}))
}

/// What the symlink at `link` names, when that is inside the workspace.
fn link_kind(ctx: &Context<'_>, link: &Path) -> Option<EntryKind> {
    let target = ctx.vfs.resolve(link.to_str()?).ok()?;
    ctx.vfs.metadata(&target).ok().map(|m| m.kind)
}

/// How [`read_file`] returns content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadEncoding {
    /// Text, decoded (UTF-8, or UTF-16 with a BOM); binary files are refused.
    Utf8,
    /// The raw bytes, base64-encoded.
    Base64,
}

/// Reads at most `max_bytes` of a file: `{path, content, size, modified_at, encoding,
/// truncated}`. `size` is the whole file's size in bytes; in UTF-8 mode the content is cut on a
/// character boundary at or below `max_bytes` bytes of UTF-8, in base64 mode the raw bytes are
/// cut at `max_bytes` before encoding. Fails with `too_large` over [`MAX_FILE_SIZE_BYTES`], and
/// in UTF-8 mode with `is_binary` for a blocked extension or binary content.
pub fn read_file(ctx: &Context<'_>, given: &str, max_bytes: usize, encoding: ReadEncoding) -> Result<Value> {
    let path = ctx.vfs.resolve(given)?;
    let meta = ctx.vfs.metadata(&path)?;
    if meta.kind == EntryKind::Dir {
        return Err(
            Error::new(ErrorKind::NotAFile, format!("{path}: is a directory, not a file")).with_path(path.given())
        );
    }
    if meta.len > MAX_FILE_SIZE_BYTES {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("{path}: file is {} bytes, over the {MAX_FILE_SIZE_BYTES}-byte limit", meta.len),
        )
        .with_path(path.given()));
    }
    let (content, truncated, label) = match encoding {
        ReadEncoding::Utf8 => {
            if is_blocked(path.real()) {
                return Err(Error::new(
                    ErrorKind::IsBinary,
                    format!("{path}: binary file type; read it with encoding \"base64\""),
                )
                .with_path(path.given()));
            }
            let text = ctx.vfs.read_text(&path).map_err(|e| match e.kind() {
                ErrorKind::IsBinary => {
                    Error::new(ErrorKind::IsBinary, format!("{path}: file is binary; read it with encoding \"base64\""))
                        .with_path(path.given())
                }
                _ => e,
            })?;
            let mut text = text.text;
            let truncated = text.len() > max_bytes;
            if truncated {
                let mut cut = max_bytes;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            (text, truncated, "utf-8")
        }
        ReadEncoding::Base64 => {
            let mut bytes = match ctx.vfs.overlay().get(path.real()) {
                Some(open) => {
                    let mut b = if open.doc.has_bom() { vec![0xEF, 0xBB, 0xBF] } else { Vec::new() };
                    b.extend_from_slice(open.doc.text().as_bytes());
                    b
                }
                None => ctx.vfs.read_bytes(&path)?,
            };
            let truncated = bytes.len() > max_bytes;
            bytes.truncate(max_bytes);
            (base64(&bytes), truncated, "base64")
        }
    };
    let mut out = json!({
        "path": given,
        "content": content,
        "size": meta.len,
        "encoding": label,
        "truncated": truncated,
    });
    if let Some(t) = meta.modified {
        out["modified_at"] = iso8601(t).into();
    }
    Ok(out)
}

/// What [`search_files`] looks for.
#[derive(Debug, Clone)]
pub struct SearchQuery<'a> {
    /// The compiled pattern, matched against each line.
    pub regex: &'a Regex,
    /// Only files whose path (relative to the repository) matches.
    pub glob: Option<&'a PathGlob>,
    /// The most matches to return (capped at [`MAX_SEARCH_RESULTS`]).
    pub max_results: usize,
    /// Lines of context on each side of a match.
    pub context_lines: usize,
    /// When the search gives up with `timeout`.
    pub timeout: Duration,
}

/// Searches the repository's text files line by line: `{matches: [{path, line_number,
/// line_content, context: {before, after}}], total_matches, files_searched, truncated,
/// duration_ms}`. Gitignored files, [`SEARCH_EXCLUDED_DIRS`], minified bundles, lock files, source
/// maps, blocked extensions, binary files and files over [`MAX_FILE_SIZE_BYTES`] are skipped.
/// `total_matches` counts every matching line; `truncated` says that more matched than were
/// returned. Fails with `timeout` after `q.timeout`.
pub fn search_files(ctx: &Context<'_>, q: &SearchQuery<'_>) -> Result<Value> {
    let started = Instant::now();
    let root = ctx.vfs.resolve(".")?;
    let mut walk = ctx.vfs.workspace().walker(&root, WalkOptions::default());
    walk.sort_by_file_name(|a, b| a.cmp(b));
    walk.filter_entry(|e| {
        let name = e.file_name().to_string_lossy();
        if e.file_type().is_some_and(|t| t.is_dir()) {
            !SEARCH_EXCLUDED_DIRS.contains(&name.as_ref())
        } else {
            !search_excluded_file(&name)
        }
    });
    let cap = q.max_results.min(MAX_SEARCH_RESULTS);
    let (mut matches, mut total, mut searched) = (Vec::new(), 0usize, 0usize);
    for entry in walk.build() {
        ctx.cancel.check()?;
        if started.elapsed() > q.timeout {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!("the search ran past its {} ms limit; narrow it with `glob`", q.timeout.as_millis()),
            ));
        }
        let Ok(entry) = entry else { continue };
        if kind_of(&entry) != EntryKind::File || is_blocked(entry.path()) {
            continue;
        }
        let rel = entry.path().strip_prefix(root.real()).unwrap_or(entry.path());
        if q.glob.is_some_and(|g| !g.is_match(rel)) {
            continue;
        }
        let Some(text) = searchable_text(ctx, entry.path()) else { continue };
        searched += 1;
        let lines: Vec<&str> = text.lines().collect();
        let path = ctx.vfs.display(entry.path());
        for (i, line) in lines.iter().enumerate() {
            if !q.regex.is_match(line) {
                continue;
            }
            total += 1;
            if matches.len() == cap {
                continue;
            }
            let before = &lines[i.saturating_sub(q.context_lines)..i];
            let after = &lines[i + 1..(i + 1 + q.context_lines).min(lines.len())];
            matches.push(json!({
                "path": path,
                "line_number": i + 1,
                "line_content": line,
                "context": {"before": before, "after": after},
            }));
        }
    }
    Ok(json!({
        "matches": matches,
        "total_matches": total,
        "files_searched": searched,
        "truncated": total > matches.len(),
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }))
}

/// The text of a walked file for searching: the open buffer if any, else the file when it is
/// small enough and not binary (a NUL byte in its first 8 KiB).
fn searchable_text(ctx: &Context<'_>, real: &Path) -> Option<String> {
    if let Some(open) = ctx.vfs.overlay().get(real) {
        return Some(open.doc.text());
    }
    let file = ctx.vfs.open_real(real).ok()?;
    if file.metadata().ok()?.len() > MAX_FILE_SIZE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_SIZE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Summarises the repository: `{root, structure, stats?}`. `structure` is a tree of `{name,
/// type, size?, children?}` nodes to `max_depth` levels below the root: files carry `size`,
/// directories whose entries were read carry `children` (directories first, then files, each in
/// name order ignoring case); a directory at the depth limit has no `children`. `stats` (when
/// asked) covers the whole repository: `{total_files, total_directories, total_size, languages:
/// [{extension, count, bytes}]}`, the [`TOP_LANGUAGES`] extensions taking the most bytes.
/// Gitignored entries and [`OVERVIEW_EXCLUDED_DIRS`] are skipped; symlinks are not followed and
/// not shown.
pub fn repo_overview(ctx: &Context<'_>, max_depth: usize, include_stats: bool) -> Result<Value> {
    let root = ctx.vfs.resolve(".")?;
    let name = root.real().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "/".to_owned());
    let mut walk = ctx.vfs.workspace().walker(&root, WalkOptions::default());
    if !include_stats {
        walk.max_depth(Some(max_depth));
    }
    walk.filter_entry(|e| {
        !(e.file_type().is_some_and(|t| t.is_dir())
            && OVERVIEW_EXCLUDED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
    });
    // Entries of the shown tree, by parent directory (relative path).
    let mut children: HashMap<PathBuf, Vec<(String, EntryKind, u64)>> = HashMap::new();
    let (mut files, mut dirs, mut bytes) = (0u64, 0u64, 0u64);
    let mut langs: HashMap<String, (u64, u64)> = HashMap::new();
    for entry in walk.build() {
        ctx.cancel.check()?;
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let kind = kind_of(&entry);
        let size = match kind {
            EntryKind::File => entry.metadata().map(|m| m.len()).unwrap_or(0),
            EntryKind::Dir => 0,
            _ => continue,
        };
        if kind == EntryKind::Dir {
            dirs += 1;
        } else {
            files += 1;
            bytes += size;
            if let Some(ext) = entry.path().extension().and_then(|e| e.to_str()) {
                let t = langs.entry(format!(".{}", ext.to_lowercase())).or_default();
                t.0 += 1;
                t.1 += size;
            }
        }
        if entry.depth() <= max_depth {
            let rel = entry.path().strip_prefix(root.real()).unwrap_or(entry.path());
            let parent = rel.parent().unwrap_or(Path::new("")).to_path_buf();
            let name = entry.file_name().to_string_lossy().into_owned();
            children.entry(parent).or_default().push((name, kind, size));
        }
    }
    let structure = tree_node(&mut children, PathBuf::new(), name.clone(), 0, max_depth);
    let mut out = json!({"root": name, "structure": structure});
    if include_stats {
        let mut languages: Vec<(String, (u64, u64))> = langs.into_iter().collect();
        languages.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then_with(|| a.0.cmp(&b.0)));
        languages.truncate(TOP_LANGUAGES);
        let languages: Vec<Value> = languages
            .into_iter()
            .map(|(extension, (count, bytes))| json!({"extension": extension, "count": count, "bytes": bytes}))
            .collect();
        out["stats"] = json!({
            "total_files": files,
            "total_directories": dirs,
            "total_size": bytes,
            "languages": languages,
        });
    }
    Ok(out)
}

/// The node of the directory `rel` (named `name`, at `depth` below the root) with its children.
fn tree_node(
    children: &mut HashMap<PathBuf, Vec<(String, EntryKind, u64)>>,
    rel: PathBuf,
    name: String,
    depth: usize,
    max_depth: usize,
) -> Value {
    if depth >= max_depth {
        return json!({"name": name, "type": "directory"});
    }
    let mut entries = children.remove(&rel).unwrap_or_default();
    entries.sort_by(|a, b| {
        (a.1 != EntryKind::Dir)
            .cmp(&(b.1 != EntryKind::Dir))
            .then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase()))
            .then_with(|| a.0.cmp(&b.0))
    });
    let nodes: Vec<Value> = entries
        .into_iter()
        .map(|(child, kind, size)| match kind {
            EntryKind::Dir => tree_node(children, rel.join(&child), child, depth + 1, max_depth),
            _ => json!({"name": child, "type": "file", "size": size}),
        })
        .collect();
    json!({"name": name, "type": "directory", "children": nodes})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::fixture;

    #[test]
    fn base64_matches_rfc4648() {
        let table: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"\x89PNG\r\n\x1a\n\xff", "iVBORw0KGgr/"),
        ];
        for (bytes, want) in table {
            assert_eq!(base64(bytes), want, "{bytes:?}");
        }
    }

    #[test]
    fn blocked_extensions_and_excluded_files() {
        assert!(is_blocked(Path::new("a/logo.PNG")) && is_blocked(Path::new("x.woff2")));
        assert!(!is_blocked(Path::new("main.rs")) && !is_blocked(Path::new("png")));
        assert!(
            search_excluded_file("app.min.js") && search_excluded_file("yarn.lock") && search_excluded_file("a.js.map")
        );
        assert!(!search_excluded_file("app.js"));
    }

    #[test]
    fn reads_cut_on_char_boundaries_and_encode() {
        let f = fixture("//- a.txt\nhé\n");
        let ctx = f.ctx();
        let v = read_file(&ctx, "a.txt", 2, ReadEncoding::Utf8).expect("read");
        assert_eq!(
            (v["content"].as_str(), v["truncated"].as_bool(), v["size"].as_u64()),
            (Some("h"), Some(true), Some(4))
        );
        let v = read_file(&ctx, "a.txt", 100, ReadEncoding::Base64).expect("read");
        assert_eq!(v["content"], "aMOpCg==");
        assert!(v["modified_at"].as_str().is_some_and(|t| t.ends_with('Z') && t.len() == 24), "{v}");
    }

    #[test]
    fn search_counts_past_the_cap_and_gives_context() {
        let f = fixture("//- a.txt\nx1\nx2\nx3\n//- node_modules/m.txt\nx\n//- b.min.js\nx\n");
        let ctx = f.ctx();
        let re = Regex::new("x").expect("regex");
        let q = SearchQuery { regex: &re, glob: None, max_results: 2, context_lines: 1, timeout: SEARCH_TIMEOUT };
        let v = search_files(&ctx, &q).expect("search");
        assert_eq!((v["total_matches"].as_u64(), v["files_searched"].as_u64()), (Some(3), Some(1)));
        assert_eq!(v["truncated"], true);
        assert_eq!(v["matches"][1]["context"], json!({"before": ["x1"], "after": ["x3"]}));
    }

    #[test]
    fn search_gives_up_at_its_time_limit() {
        let f = fixture("//- a.txt\nx\n");
        let ctx = f.ctx();
        let re = Regex::new("x").expect("regex");
        let q = SearchQuery { regex: &re, glob: None, max_results: 2, context_lines: 0, timeout: Duration::ZERO };
        let e = search_files(&ctx, &q).expect_err("times out");
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    }

    #[test]
    fn overview_orders_directories_first_and_counts_everything() {
        let f = fixture(
            "//- src/b.rs\nbb\n//- src/deep/c.rs\nc\n//- README.md\nr\n//- a.json\n{}\n//- node_modules/x.js\nx\n",
        );
        let ctx = f.ctx();
        let v = repo_overview(&ctx, 1, true).expect("overview");
        let names: Vec<&str> = v["structure"]["children"]
            .as_array()
            .expect("children")
            .iter()
            .map(|c| c["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, ["src", "a.json", "README.md"]);
        assert!(v["structure"]["children"][0].get("children").is_none());
        assert_eq!(v["stats"]["total_files"], 4);
        assert_eq!(v["stats"]["total_directories"], 2);
        assert_eq!(v["stats"]["languages"][0], json!({"extension": ".rs", "count": 2, "bytes": 5}));
    }
}
