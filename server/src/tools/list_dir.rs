//! `list_dir`: a directory's entries, one per line, optionally a few levels deep.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::{EntryKind, Vfs};
use crate::workspace::SandboxPath;

/// Levels listed when no `depth` is given.
pub const DEFAULT_DEPTH: i64 = 1;
/// The deepest listing allowed.
pub const MAX_DEPTH: i64 = 10;
/// The most entries one listing shows.
pub const MAX_ENTRIES: usize = 2000;

/// A directory's entries as [`Vfs::read_dir`] gives them: name, real path, kind.
type Entries = Vec<(String, PathBuf, EntryKind)>;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list: absolute inside a workspace root, or relative to the first root.
    /// Defaults to the first root.
    #[serde(default)]
    pub path: Option<String>,
    /// How many levels to list: 1 lists the directory's own entries, 2 also the entries of its
    /// subdirectories, and so on, up to 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10), extend("default" = DEFAULT_DEPTH))]
    pub depth: Option<i64>,
    /// Whether to show entries whose name starts with a dot.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub include_hidden: Option<bool>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "list_dir",
    description: "List a directory's entries, one per line, sorted by name, with paths relative to \
the listed directory. Directories end in `/`; symlinks are shown as `name@ -> target`, where the \
target is a workspace path (ending in `/` for a directory, followed by `(missing)` when it does not \
exist) or `(outside the workspace)`. With `depth` above 1 (at most 10) each directory's entries \
follow it (`src/`, `src/main.rs`, ...); symlinks and `.git/` are shown but never descended into. \
Everything is listed, gitignored files included; set `include_hidden` to false to leave out \
dot-entries. An empty directory gives `(empty directory)`. At most 2000 entries are shown, with a \
notice when more remain. Prefer `glob` to find files by name pattern and `overview` for a summary \
of a large tree.",
    schema: schema_of::<ListDirArgs>,
    effects: Effects::READ,
    quick: true,
    run: |ctx, args: Value| list_dir(ctx, parse_args(args)?).map(Output::Text),
};

/// Lists the directory of `args`.
pub fn list_dir(ctx: &Context<'_>, args: ListDirArgs) -> Result<String> {
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH);
    check_range("depth", depth, 1, MAX_DEPTH)?;
    let dir = ctx.vfs.resolve(args.path.as_deref().unwrap_or("."))?;
    let entries = read_dir_checked(ctx.vfs, &dir)?;
    let mut lister = Lister {
        vfs: ctx.vfs,
        depth: usize::try_from(depth).unwrap_or(1),
        hidden: args.include_hidden.unwrap_or(true),
        out: String::new(),
        count: 0,
        skipped_hidden: 0,
        truncated: false,
    };
    lister.list(entries, "", 1);
    let mut out = lister.out;
    if lister.count == 0 {
        return Ok(match lister.skipped_hidden {
            0 => "(empty directory)".to_owned(),
            n => format!(
                "(no entries shown: {n} hidden entr{} left out; set `include_hidden` to true to see {})",
                if n == 1 { "y" } else { "ies" },
                if n == 1 { "it" } else { "them" }
            ),
        });
    }
    out.pop();
    if lister.truncated {
        out.push_str(&format!(
            "\n\n(listing stopped at {MAX_ENTRIES} entries and more remain; list a subdirectory, \
             or use a smaller depth, to see the rest)"
        ));
    }
    Ok(out)
}

/// The entries of the directory `dir`, with a `not_a_directory` error that says what to use
/// instead when it is a file.
fn read_dir_checked(vfs: &Vfs, dir: &SandboxPath) -> Result<Entries> {
    let meta = vfs.metadata(dir)?;
    if meta.kind != EntryKind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{dir}: not a directory; use read_file to read a file, or stat to see what it is"),
        )
        .with_path(dir.given()));
    }
    vfs.read_dir(dir)
}

/// The state of one listing.
struct Lister<'a> {
    vfs: &'a Vfs,
    depth: usize,
    hidden: bool,
    out: String,
    count: usize,
    skipped_hidden: usize,
    truncated: bool,
}

impl Lister<'_> {
    /// Appends `entries` (of a directory at `level`, 1 for the listed one) under `prefix`,
    /// descending into subdirectories while `level` is below the depth.
    fn list(&mut self, entries: Entries, prefix: &str, level: usize) {
        for (name, real, kind) in entries {
            if !self.hidden && name.starts_with('.') {
                self.skipped_hidden += 1;
                continue;
            }
            if self.count == MAX_ENTRIES {
                self.truncated = true;
                return;
            }
            self.count += 1;
            self.out.push_str(prefix);
            self.out.push_str(&name);
            match kind {
                EntryKind::Dir => {
                    self.out.push('/');
                    // `.git` holds git's own data, never what a listing is after.
                    if level < self.depth && name != ".git" {
                        match self.subdir(&real) {
                            Ok(sub) => {
                                self.out.push('\n');
                                self.list(sub, &format!("{prefix}{name}/"), level + 1);
                                if self.truncated {
                                    return;
                                }
                                continue;
                            }
                            Err(why) => {
                                self.out.push_str(" (not listed: ");
                                self.out.push_str(&why);
                                self.out.push(')');
                            }
                        }
                    }
                }
                EntryKind::Symlink => {
                    self.out.push_str("@ -> ");
                    self.out.push_str(&link_target(self.vfs, &real));
                }
                EntryKind::File | EntryKind::Other => {}
            }
            self.out.push('\n');
        }
    }

    /// The entries of a subdirectory found by a listing, through the sandbox again (the entry
    /// may have changed since it was listed). On failure, the reason to show.
    fn subdir(&self, real: &Path) -> std::result::Result<Entries, String> {
        let given = real.to_str().ok_or_else(|| "its name is not valid UTF-8".to_owned())?;
        let dir = self.vfs.resolve(given).map_err(|e| reason(&e, given))?;
        self.vfs.read_dir(&dir).map_err(|e| reason(&e, given))
    }
}

/// The message of `e` without the leading `path: ` its messages start with.
fn reason(e: &Error, given: &str) -> String {
    let msg = e.message();
    msg.strip_prefix(given).and_then(|m| m.strip_prefix(": ")).unwrap_or(msg).to_owned()
}

/// Where the symlink at the real path `link` points, for display: a workspace path (with `/` for
/// a directory and ` (missing)` for a dangling link), `(outside the workspace)`, or
/// `(unresolvable)` (a loop, or a name that is not UTF-8). A target outside the roots is never
/// named, not even by its link text.
pub fn link_target(vfs: &Vfs, link: &Path) -> String {
    let Some(given) = link.to_str() else {
        return "(unresolvable)".to_owned();
    };
    match vfs.resolve(given) {
        Ok(target) => {
            let shown = workspace_path(vfs, &target);
            match vfs.metadata(&target) {
                Ok(m) if m.kind == EntryKind::Dir => format!("{shown}/"),
                Ok(_) => shown,
                Err(_) => format!("{shown} (missing)"),
            }
        }
        Err(e) if e.kind() == ErrorKind::PathEscape => "(outside the workspace)".to_owned(),
        Err(_) => "(unresolvable)".to_owned(),
    }
}

/// `p` as a path a tool call accepts: relative to the first root when it lies there (`.` for the
/// root itself), absolute otherwise.
pub fn workspace_path(vfs: &Vfs, p: &SandboxPath) -> String {
    if p.root_index() == 0 {
        vfs.display(p.real())
    } else {
        p.real().display().to_string()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::{fixture, Fixture};

    /// A tree with hidden entries, a gitignore, nested and empty directories, `.git`, and
    /// symlinks pointing inside, outside and nowhere. `outside/` beside the root holds a secret.
    fn tree() -> (Fixture, tempfile::TempDir) {
        let f = fixture(
            r#"
//- .gitignore
ignored.log
//- .hidden/inner.txt
h
//- .git/HEAD
ref: refs/heads/main
//- README.md
readme
//- ignored.log
log
//- src/main.rs
fn main() {}
//- src/util/mod.rs
//- src/util/deep/leaf.rs
//- empty/
"#,
        );
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(outside.path().join("secret_dir")).expect("mkdir");
        std::fs::write(outside.path().join("secret_dir/secret_name.txt"), "secret contents\n").expect("write");
        let root = f.dir.path();
        symlink("src/main.rs", root.join("link_file")).expect("symlink");
        symlink("src", root.join("link_dir")).expect("symlink");
        symlink("src/nope.rs", root.join("link_dangling")).expect("symlink");
        symlink(outside.path().join("secret_dir"), root.join("link_out")).expect("symlink");
        symlink(outside.path().join("secret_dir/secret_name.txt"), root.join("src/link_out_file")).expect("symlink");
        symlink("link_loop", root.join("link_loop")).expect("symlink");
        (f, outside)
    }

    #[test]
    fn formats_listings() {
        let (f, _outside) = tree();
        let table = [
            (
                json!({}),
                "\
.git/
.gitignore
.hidden/
README.md
empty/
ignored.log
link_dangling@ -> src/nope.rs (missing)
link_dir@ -> src/
link_file@ -> src/main.rs
link_loop@ -> (unresolvable)
link_out@ -> (outside the workspace)
src/",
            ),
            (
                json!({"path": "src", "depth": 3}),
                "\
link_out_file@ -> (outside the workspace)
main.rs
util/
util/deep/
util/deep/leaf.rs
util/mod.rs",
            ),
            (
                json!({"path": "src", "depth": 2}),
                "link_out_file@ -> (outside the workspace)\nmain.rs\nutil/\nutil/deep/\nutil/mod.rs",
            ),
            // A symlinked directory is listed as what it names when it is the listed path.
            (json!({"path": "link_dir/util"}), "deep/\nmod.rs"),
            (json!({"path": "empty"}), "(empty directory)"),
            (json!({"path": "empty", "depth": 10}), "(empty directory)"),
            (json!({"path": ".hidden", "include_hidden": false}), "inner.txt"),
        ];
        for (args, want) in table {
            assert_eq!(f.call("list_dir", args.clone()).expect("list"), want, "{args}");
        }
    }

    #[test]
    fn depth_hidden_and_git() {
        let (f, outside) = tree();
        let deep = f.call("list_dir", json!({"depth": 10})).expect("list");
        let hidden_off = f.call("list_dir", json!({"depth": 10, "include_hidden": false})).expect("list");
        // `.git/` is shown but not entered; symlinked directories are not entered either.
        assert!(deep.contains(".git/\n.gitignore\n.hidden/\n.hidden/inner.txt\n"), "{deep}");
        assert!(!deep.contains("HEAD"), "{deep}");
        assert!(!deep.contains("link_dir/"), "{deep}");
        assert!(deep.contains("src/util/deep/leaf.rs\n"), "{deep}");
        // Gitignored files are listed; hidden ones go when asked.
        assert!(deep.contains("\nignored.log\n"), "{deep}");
        assert!(!hidden_off.contains(".git") && !hidden_off.contains(".hidden"), "{hidden_off}");
        assert!(hidden_off.starts_with("README.md\nempty/\nignored.log\n"), "{hidden_off}");
        // Nothing outside the root is ever named or listed.
        let outside_name = outside.path().display().to_string();
        for out in [&deep, &hidden_off] {
            for leak in ["secret", outside_name.as_str()] {
                assert!(!out.contains(leak), "{leak} leaked: {out}");
            }
        }
        // A directory holding only hidden entries says so when they are left out.
        f.write("dots/.a", "");
        f.write("dots/.b", "");
        assert_eq!(
            f.call("list_dir", json!({"path": "dots", "include_hidden": false})).expect("list"),
            "(no entries shown: 2 hidden entries left out; set `include_hidden` to true to see them)"
        );
    }

    #[test]
    fn caps_entries() {
        let f = fixture("");
        for d in 0..3 {
            for i in 0..1000 {
                f.write(&format!("d{d}/f{i:04}"), "");
            }
        }
        let out = f.call("list_dir", json!({"depth": 2})).expect("list");
        let (body, notice) = out.split_once("\n\n").expect("notice");
        assert_eq!(body.lines().count(), super::MAX_ENTRIES);
        assert_eq!(body.lines().last(), Some("d1/f0997"));
        assert_eq!(
            notice,
            "(listing stopped at 2000 entries and more remain; list a subdirectory, or use a smaller depth, to see \
             the rest)"
        );
        // Exactly at the cap there is no notice.
        let out = f.call("list_dir", json!({"path": "d0"})).expect("list");
        assert_eq!(out.lines().count(), 1000);
        assert!(!out.contains("(listing stopped"));
    }

    #[test]
    fn errors() {
        let (f, _outside) = tree();
        let table = [
            (json!({"path": "missing"}), ErrorKind::NotFound, "missing: no such file or directory"),
            (json!({"path": "README.md"}), ErrorKind::NotADirectory, "README.md: not a directory; use read_file"),
            (json!({"path": "link_file"}), ErrorKind::NotADirectory, "link_file: not a directory"),
            (json!({"path": "link_dangling"}), ErrorKind::NotFound, "link_dangling: no such file"),
            (json!({"path": "../"}), ErrorKind::PathEscape, "../: path is outside the workspace roots"),
            (json!({"path": "link_out"}), ErrorKind::PathEscape, "link_out: path is outside the workspace roots"),
            (json!({"path": "/"}), ErrorKind::PathEscape, "/: path is outside"),
            (json!({"depth": 0}), ErrorKind::InvalidInput, "`depth` must be between 1 and 10, got 0"),
            (json!({"depth": 11}), ErrorKind::InvalidInput, "`depth` must be between 1 and 10, got 11"),
            (json!({"depth": -1}), ErrorKind::InvalidInput, "`depth` must be between 1 and 10, got -1"),
            (json!({"depth": "2"}), ErrorKind::InvalidInput, "`depth`"),
            (json!({"include_hidden": "no"}), ErrorKind::InvalidInput, "`include_hidden`"),
            (json!({"path": 3}), ErrorKind::InvalidInput, "`path`"),
            (json!({"recursive": true}), ErrorKind::InvalidInput, "unknown field `recursive`"),
        ];
        for (args, kind, want) in table {
            let (got, msg) = f.call("list_dir", args.clone()).expect_err("error");
            assert_eq!(got, kind, "{args}: {msg}");
            assert!(msg.contains(want), "{args}: {msg}");
        }
    }
}
