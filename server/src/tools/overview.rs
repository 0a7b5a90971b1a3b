//! `overview`: a project at a glance: a shallow tree, then sizes over the whole subtree.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;
use crate::workspace::WalkOptions;

/// Tree levels shown when no `depth` is given.
pub const DEFAULT_DEPTH: i64 = 2;
/// The deepest tree allowed.
pub const MAX_DEPTH: i64 = 10;
/// Entries shown per directory before `… N more`.
pub const MAX_PER_DIR: usize = 20;
/// Entries the whole tree shows; a deeper level that would pass it is left out.
pub const MAX_TREE_ENTRIES: usize = 300;
/// Extensions listed in the statistics.
pub const TOP_EXTENSIONS: usize = 15;

/// Arguments of `overview`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverviewArgs {
    /// Directory to summarise: absolute inside a workspace root, or relative to the first root.
    /// Defaults to the first root.
    #[serde(default)]
    pub path: Option<String>,
    /// Levels of the tree to show, 1 to 10. The statistics always cover the whole subtree.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10), extend("default" = DEFAULT_DEPTH))]
    pub depth: Option<i64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "overview",
    description: "Summarise a directory (default: the workspace root): first a tree, indented two \
spaces per level, to `depth` levels (default 2): directories end in `/`, symlinks in `@`, a \
directory at the last level shows how many files it holds (`src/ (42 files)`), and each directory \
shows at most 20 entries and then `… N more`. A level that would take the tree past 300 entries is \
left out, with a notice. Then statistics over the whole subtree, however deep: files, directories, \
total size, and the 15 file extensions taking the most bytes (with file counts). Gitignored \
entries, `.git`, and dependency or build folders (node_modules, target, dist, build, vendor, \
.venv, ...) are skipped in both parts; symlinks are shown but not followed. Use it first in an \
unfamiliar project; use `list_dir` for a complete listing of one directory and `glob` to find files.",
    schema: schema_of::<OverviewArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| overview(ctx, parse_args(args)?).map(Output::Text),
};

/// One entry of the tree.
#[derive(Debug)]
struct Node {
    name: String,
    kind: EntryKind,
    /// Shown entries, in name order.
    children: Vec<usize>,
    /// Direct entries not shown because of [`MAX_PER_DIR`].
    more: usize,
    /// Direct entries of any kind.
    entries: usize,
    /// Files anywhere below.
    files: u64,
}

impl Node {
    fn new(name: String, kind: EntryKind) -> Node {
        Node { name, kind, children: Vec::new(), more: 0, entries: 0, files: 0 }
    }
}

/// Files and bytes of one extension.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    files: u64,
    bytes: u64,
}

/// Everything one walk gathers.
#[derive(Debug, Default)]
struct Summary {
    /// The tree; node 0 is the summarised directory.
    nodes: Vec<Node>,
    /// Node index of every directory in the tree, by path relative to the start.
    dirs: HashMap<PathBuf, usize>,
    /// Entries at each tree level (index 0 is level 1), counted while below the tree budget.
    per_level: Vec<usize>,
    files: u64,
    directories: u64,
    bytes: u64,
    symlinks: u64,
    unreadable: u64,
    by_ext: HashMap<String, Tally>,
}

/// Summarises the directory of `args`.
pub fn overview(ctx: &Context<'_>, args: OverviewArgs) -> Result<String> {
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH);
    check_range("depth", depth, 1, MAX_DEPTH)?;
    let depth = usize::try_from(depth).unwrap_or(1);
    let dir = ctx.vfs.resolve(args.path.as_deref().unwrap_or("."))?;
    if ctx.vfs.metadata(&dir)?.kind != EntryKind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{dir}: not a directory; use stat or read_file for a file"),
        )
        .with_path(dir.given()));
    }
    let opts = WalkOptions { skip_build_dirs: true, ..WalkOptions::default() };
    let mut walk = ctx.vfs.workspace().walker(&dir, opts);
    walk.sort_by_file_name(|a, b| a.cmp(b));
    let mut s = Summary { nodes: vec![Node::new(String::new(), EntryKind::Dir)], ..Summary::default() };
    s.dirs.insert(PathBuf::new(), 0);
    s.per_level = vec![0; depth];
    for entry in walk.build() {
        let Ok(entry) = entry else {
            s.unreadable += 1;
            continue;
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir.real()) else { continue };
        let kind = match entry.file_type() {
            Some(t) if t.is_symlink() => EntryKind::Symlink,
            Some(t) if t.is_dir() => EntryKind::Dir,
            Some(t) if t.is_file() => EntryKind::File,
            _ => EntryKind::Other,
        };
        match kind {
            EntryKind::Dir => s.directories += 1,
            EntryKind::Symlink => s.symlinks += 1,
            EntryKind::File => {
                // An open document counts with its buffer's size, as every read sees it.
                let size = match ctx.vfs.overlay().get(entry.path()) {
                    Some(open) => open.doc.len() as u64 + if open.doc.has_bom() { 3 } else { 0 },
                    None => match entry.metadata() {
                        Ok(m) => m.len(),
                        Err(_) => {
                            s.unreadable += 1;
                            0
                        }
                    },
                };
                s.add_file(rel, size);
            }
            EntryKind::Other => {}
        }
        s.add_to_tree(rel, entry.depth(), kind);
    }
    Ok(s.render(depth))
}

impl Summary {
    /// Counts a file of `size` bytes at `rel` in the totals, its extension, and every directory
    /// of the tree above it.
    fn add_file(&mut self, rel: &Path, size: u64) {
        self.files += 1;
        self.bytes += size;
        let ext = rel.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase()));
        let tally = self.by_ext.entry(ext.unwrap_or_else(|| "(no extension)".to_owned())).or_default();
        tally.files += 1;
        tally.bytes += size;
        for dir in rel.ancestors().skip(1) {
            if let Some(&i) = self.dirs.get(dir) {
                self.nodes[i].files += 1;
            }
        }
    }

    /// Adds the entry at `rel` (`level` below the start) to the tree, if its directory is in the
    /// tree and it is shallow enough.
    fn add_to_tree(&mut self, rel: &Path, level: usize, kind: EntryKind) {
        let Some(&parent) = rel.parent().and_then(|p| self.dirs.get(p)) else { return };
        self.nodes[parent].entries += 1;
        if level > self.per_level.len() {
            return;
        }
        if self.nodes[parent].children.len() == MAX_PER_DIR {
            self.nodes[parent].more += 1;
            return;
        }
        // A level past the budget is never shown, so its entries are counted but not kept:
        // memory stays bounded by the budget times the depth.
        self.per_level[level - 1] += 1;
        if self.per_level[level - 1] > MAX_TREE_ENTRIES {
            return;
        }
        let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let i = self.nodes.len();
        self.nodes.push(Node::new(name, kind));
        self.nodes[parent].children.push(i);
        if kind == EntryKind::Dir {
            self.dirs.insert(rel.to_path_buf(), i);
        }
    }

    /// The tree to `depth` levels (or fewer, to stay within the budget), then the statistics.
    fn render(&self, depth: usize) -> String {
        let mut shown = 0;
        let mut levels = 0;
        for &n in &self.per_level {
            if shown + n > MAX_TREE_ENTRIES {
                break;
            }
            shown += n;
            levels += 1;
        }
        // The first level holds at most MAX_PER_DIR entries, far below the budget.
        let levels = levels.max(1);
        let mut out = String::new();
        if self.nodes[0].entries == 0 {
            out.push_str("(empty directory)\n");
        } else {
            self.render_dir(0, 1, levels, &mut out);
        }
        if levels < depth {
            let _ = writeln!(
                out,
                "(tree shown to depth {levels} of the {depth} asked, to stay within {MAX_TREE_ENTRIES} entries; \
                 call overview on a subdirectory to see deeper)"
            );
        }
        out.push('\n');
        let _ = write!(
            out,
            "Totals: {}, {}, {}",
            plural(self.files, "file", "files"),
            plural(self.directories, "directory", "directories"),
            human_bytes(self.bytes)
        );
        if self.bytes >= 1024 {
            let _ = write!(out, " ({} bytes)", self.bytes);
        }
        out.push('\n');
        let mut exts: Vec<(&String, &Tally)> = self.by_ext.iter().collect();
        exts.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(b.1.files.cmp(&a.1.files)).then(a.0.cmp(b.0)));
        if !exts.is_empty() {
            out.push_str("Extensions by size:\n");
            for (ext, t) in exts.iter().take(TOP_EXTENSIONS) {
                let _ = writeln!(out, "  {ext}: {}, {}", plural(t.files, "file", "files"), human_bytes(t.bytes));
            }
            if exts.len() > TOP_EXTENSIONS {
                let rest = &exts[TOP_EXTENSIONS..];
                let files = rest.iter().map(|(_, t)| t.files).sum();
                let bytes = rest.iter().map(|(_, t)| t.bytes).sum();
                let _ = writeln!(
                    out,
                    "  {} other extensions: {}, {}",
                    rest.len(),
                    plural(files, "file", "files"),
                    human_bytes(bytes)
                );
            }
        }
        out.push_str(
            "Not counted: gitignored entries, .git, and dependency or build folders (node_modules, target, ...)",
        );
        if self.symlinks > 0 {
            let _ = write!(out, "; {} (not followed)", plural(self.symlinks, "symlink", "symlinks"));
        }
        if self.unreadable > 0 {
            let _ = write!(out, "; {} that could not be read", plural(self.unreadable, "entry", "entries"));
        }
        out
    }

    /// Appends the children of node `i` (at `level`), descending while `level < levels`.
    fn render_dir(&self, i: usize, level: usize, levels: usize, out: &mut String) {
        let indent = "  ".repeat(level - 1);
        for &c in &self.nodes[i].children {
            let node = &self.nodes[c];
            out.push_str(&indent);
            out.push_str(&node.name);
            match node.kind {
                EntryKind::Dir => {
                    out.push('/');
                    if level < levels {
                        out.push('\n');
                        self.render_dir(c, level + 1, levels, out);
                        continue;
                    }
                    if node.entries > 0 {
                        let _ = write!(out, " ({})", plural(node.files, "file", "files"));
                    }
                }
                EntryKind::Symlink => out.push('@'),
                EntryKind::File | EntryKind::Other => {}
            }
            out.push('\n');
        }
        if self.nodes[i].more > 0 {
            let _ = writeln!(out, "{indent}… {} more", self.nodes[i].more);
        }
    }
}

/// `n` with the singular or plural noun.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A size for people: bytes below 1 KiB, else one decimal in the largest binary unit.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::symlink;
    use std::sync::Arc;

    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::text::Document;
    use crate::tools::testing::fixture;
    use crate::vfs::{OpenDocument, Overlay, Vfs};

    const NOT_COUNTED: &str =
        "Not counted: gitignored entries, .git, and dependency or build folders (node_modules, target, ...)";

    #[test]
    fn formats_tree_and_statistics() {
        let f = fixture(
            r#"
//- .gitignore
*.log
//- README.md
hello
//- debug.log
ignored
//- src/main.rs
fn main() {}
//- src/util/mod.rs
pub mod a;
//- src/util/a.rs
//- src/util/deep/b.rs
x
//- node_modules/pkg/index.js
module.exports = 1;
//- target/debug/app
bin
//- .git/HEAD
ref: refs/heads/main
//- docs/
"#,
        );
        symlink("src", f.dir.path().join("link")).expect("symlink");
        let table = [
            (
                json!({}),
                "\
.gitignore
README.md
docs/
link@
src/
  main.rs
  util/ (3 files)

Totals: 6 files, 4 directories, 38 B
Extensions by size:
  .rs: 4 files, 26 B
  (no extension): 1 file, 6 B
  .md: 1 file, 6 B
"
                .to_owned()
                    + NOT_COUNTED
                    + "; 1 symlink (not followed)",
            ),
            (
                json!({"path": "src", "depth": 1}),
                "\
main.rs
util/ (3 files)

Totals: 4 files, 2 directories, 26 B
Extensions by size:
  .rs: 4 files, 26 B
"
                .to_owned()
                    + NOT_COUNTED,
            ),
            (
                json!({"path": "src/util", "depth": 5}),
                "a.rs\ndeep/\n  b.rs\nmod.rs\n\nTotals: 3 files, 1 directory, 13 B\nExtensions by size:\n  .rs: 3 files, 13 B\n"
                    .to_owned()
                    + NOT_COUNTED,
            ),
            (json!({"path": "docs"}), "(empty directory)\n\nTotals: 0 files, 0 directories, 0 B\n".to_owned() + NOT_COUNTED),
        ];
        for (args, want) in table {
            assert_eq!(f.call("overview", args.clone()).expect("overview"), want, "{args}");
        }
    }

    #[test]
    fn caps_tree_and_extensions() {
        let f = fixture("");
        // 25 top-level directories of 25 files each: level 2 would pass the 300-entry budget.
        for d in 0..25 {
            for i in 0..25 {
                f.write(&format!("d{d:02}/f{i:02}.e{}", (d * 25 + i) % 17), "x".repeat(d * 25 + i));
            }
        }
        let out = f.call("overview", json!({"depth": 3})).expect("overview");
        let tree: Vec<&str> = out.split("\n\n").next().expect("tree").lines().collect();
        assert_eq!(tree.len(), 22, "{out}");
        assert_eq!(&tree[..2], ["d00/ (25 files)", "d01/ (25 files)"]);
        assert_eq!(tree[19], "d19/ (25 files)");
        assert_eq!(tree[20], "… 5 more");
        assert_eq!(
            tree[21],
            "(tree shown to depth 1 of the 3 asked, to stay within 300 entries; call overview on a subdirectory to \
             see deeper)"
        );
        // Statistics cover every file, including those the tree cut.
        let total: usize = (0..625).sum();
        assert!(out.contains(&format!("Totals: 625 files, 25 directories, 190.4 KiB ({total} bytes)\n")), "{out}");
        let exts: Vec<&str> = out.lines().skip_while(|l| *l != "Extensions by size:").skip(1).take(16).collect();
        assert_eq!(exts.len(), 16, "{out}");
        assert!(exts[..15].iter().all(|l| l.starts_with("  .e")), "{out}");
        assert!(exts[15].starts_with("  2 other extensions: 72 files, "), "{out}");
        // Within one directory the tree shows 20 entries, then how many more.
        let out = f.call("overview", json!({"path": "d03"})).expect("overview");
        assert!(out.starts_with("f00.e7\nf01.e8\n"), "{out}");
        assert!(out.contains("f19.e9\n… 5 more\n\nTotals: 25 files, 0 directories"), "{out}");
    }

    #[test]
    fn hidden_symlinks_and_open_buffers() {
        let mut f = fixture("//- .env/config\nk=v\n//- a.txt\ndisk\n");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(outside.path().join("secret_dir")).expect("mkdir");
        std::fs::write(outside.path().join("secret_dir/secret_name.rs"), "x".repeat(5000)).expect("write");
        symlink(outside.path().join("secret_dir"), f.dir.path().join("link_out")).expect("symlink");
        let ws = Arc::new(f.vfs.workspace().clone());
        let a = ws.resolve("a.txt").expect("inside");
        let open =
            OpenDocument { doc: Document::from_text("a much longer buffer\n"), version: 2, dirty: true, stamp: 0 };
        f.vfs = Vfs::new(ws, Arc::new(Overlay::from_docs(BTreeMap::from([(a.real().to_path_buf(), open)]))));
        let out = f.call("overview", json!({"depth": 3})).expect("overview");
        // Hidden entries count; the outside tree is neither followed nor named; the open buffer
        // counts with its own size.
        assert_eq!(
            out,
            ".env/\n  config\na.txt\nlink_out@\n\nTotals: 2 files, 1 directory, 25 B\nExtensions by size:\n  \
             .txt: 1 file, 21 B\n  (no extension): 1 file, 4 B\n"
                .to_owned()
                + NOT_COUNTED
                + "; 1 symlink (not followed)"
        );
        assert!(!out.contains("secret"));
    }

    #[test]
    fn human_sizes() {
        let table = [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (5 << 20, "5.0 MiB")];
        for (n, want) in table {
            assert_eq!(super::human_bytes(n), want);
        }
    }

    #[test]
    fn errors() {
        let f = fixture("//- a.txt\nx\n");
        symlink("/", f.dir.path().join("link_root")).expect("symlink");
        let table = [
            (json!({"path": "missing"}), ErrorKind::NotFound, "missing: no such file or directory"),
            (json!({"path": "a.txt"}), ErrorKind::NotADirectory, "a.txt: not a directory; use stat or read_file"),
            (json!({"path": ".."}), ErrorKind::PathEscape, "..: path is outside the workspace roots"),
            (json!({"path": "link_root"}), ErrorKind::PathEscape, "link_root: path is outside the workspace roots"),
            (json!({"depth": 0}), ErrorKind::InvalidInput, "`depth` must be between 1 and 10, got 0"),
            (json!({"depth": 11}), ErrorKind::InvalidInput, "`depth` must be between 1 and 10, got 11"),
            (json!({"depth": 1.5}), ErrorKind::InvalidInput, "`depth`"),
            (json!({"path": false}), ErrorKind::InvalidInput, "`path`"),
            (json!({"max_depth": 2}), ErrorKind::InvalidInput, "unknown field `max_depth`"),
        ];
        for (args, kind, want) in table {
            let (got, msg) = f.call("overview", args.clone()).expect_err("error");
            assert_eq!(got, kind, "{args}: {msg}");
            assert!(msg.contains(want), "{args}: {msg}");
        }
    }
}
