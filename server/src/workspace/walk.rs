//! Directory walks inside the sandbox, with the gitignore stack.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};

use super::{SandboxPath, Workspace};

/// Dependency and build folders that summaries (such as `overview`) skip even without a
/// gitignore saying so.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    "dist",
    "build",
    "out",
    "vendor",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    ".gradle",
    ".idea",
    ".next",
    ".nuxt",
    ".cache",
    ".tether",
];

/// The names of the temporary files tether writes a file's new text into before renaming them
/// over it (`.tether-XXXXXX.tmp`, in the file's directory). Walks skip them: one exists only while
/// a write is under way (or after a killed one), and a search or listing that showed it would
/// show a second copy of a file that is not there.
pub const TEMP_PREFIX: &str = ".tether-";
/// See [`TEMP_PREFIX`].
pub const TEMP_SUFFIX: &str = ".tmp";

/// How a walk filters what it visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkOptions {
    /// Visit hidden (dot) files and directories.
    pub hidden: bool,
    /// Honour `.gitignore`, `.ignore`, `.git/info/exclude` and the global gitignore.
    pub gitignore: bool,
    /// Descend at most this many levels below the start (1 = its direct children).
    pub max_depth: Option<usize>,
    /// Also skip the folders in [`SKIPPED_DIRS`].
    pub skip_build_dirs: bool,
}

impl Default for WalkOptions {
    fn default() -> WalkOptions {
        WalkOptions { hidden: true, gitignore: true, max_depth: None, skip_build_dirs: false }
    }
}

impl Workspace {
    /// A walker over `dir` that stays inside the sandbox: it never follows symlinks (a walk
    /// yields a link as a link, which callers skip), always skips `.git/`, and applies `opts`.
    ///
    /// Ignore files are read only inside the roots: the user's global gitignore and the ignore
    /// files of directories above the root are not consulted (reading them would read outside
    /// the workspace), while those between the root and `dir` are applied as git would.
    pub fn walker(&self, dir: &SandboxPath, opts: WalkOptions) -> WalkBuilder {
        let mut b = WalkBuilder::new(dir.real());
        b.follow_links(false)
            .hidden(!opts.hidden)
            .git_ignore(opts.gitignore)
            .git_global(false)
            .git_exclude(opts.gitignore)
            .ignore(opts.gitignore)
            .parents(false)
            // Honour .gitignore files even outside a git repository, as users expect from a
            // project folder that is not (yet) a repository.
            .require_git(false)
            .max_depth(opts.max_depth);
        let inherited = if opts.gitignore { self.inherited_ignores(dir) } else { Vec::new() };
        let skip_build = opts.skip_build_dirs;
        let (deny, root) = (self.deny.clone(), self.root_of(dir.real()).map(|i| self.roots[i].clone()));
        b.filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if e.depth() == 0 {
                return true;
            }
            // The deepest ignore file that has an opinion decides, as in git. Each entry is matched
            // on its own path: a pruned directory is never entered, and the start directory itself
            // is searched even when ignored, as ripgrep does for a path it is given.
            for gi in &inherited {
                match gi.matched(e.path(), is_dir) {
                    Match::Ignore(_) => return false,
                    Match::Whitelist(_) => break,
                    Match::None => {}
                }
            }
            if let Some(rel) = root.as_deref().filter(|_| !deny.is_empty()).and_then(|r| super::below(e.path(), r)) {
                if deny.denies_entry(rel) {
                    return false;
                }
            }
            let name = e.file_name().to_string_lossy();
            if !is_dir {
                return !(name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX));
            }
            if name == ".git" {
                return false;
            }
            !(skip_build && SKIPPED_DIRS.contains(&name.as_ref()))
        });
        b
    }

    /// The ignore files of the directories from `dir`'s root down to `dir`'s parent, deepest
    /// first: the rules a walk that starts below the root still has to honour.
    fn inherited_ignores(&self, dir: &SandboxPath) -> Vec<Gitignore> {
        let root = &self.roots()[dir.root_index()];
        let mut out = Vec::new();
        let mut cur = dir.real().parent();
        while let Some(d) = cur {
            if !d.starts_with(root) {
                break;
            }
            let mut builder = GitignoreBuilder::new(d);
            let mut any = false;
            for name in [".gitignore", ".ignore"] {
                let f = d.join(name);
                if f.is_file() {
                    any = true;
                    if let Some(e) = builder.add(&f) {
                        tracing::debug!(file = %f.display(), error = %e, "ignore file partly unreadable");
                    }
                }
            }
            if any {
                match builder.build() {
                    Ok(gi) => out.push(gi),
                    Err(e) => tracing::debug!(dir = %d.display(), error = %e, "ignore rules not built"),
                }
            }
            cur = d.parent();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn names(ws: &Workspace, dir: &str, opts: WalkOptions) -> Vec<String> {
        let d = ws.resolve(dir).expect("inside");
        let mut out: Vec<String> = ws
            .walker(&d, opts)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| ws.relative(e.path()).replace('\\', "/"))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn ignore_files_apply_inside_the_roots_only() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("root");
        fs::create_dir_all(root.join("src/gen")).expect("mkdir");
        // Above the root: must not be read, so `kept.log` stays visible.
        fs::write(top.path().join(".gitignore"), "*.log\n").expect("write");
        fs::write(root.join(".gitignore"), "gen/\n*.tmp\n!keep.tmp\n").expect("write");
        for f in ["src/a.rs", "src/gen/b.rs", "src/x.tmp", "src/keep.tmp", "src/kept.log"] {
            fs::write(root.join(f), "x").expect("write");
        }
        let ws = Workspace::new([&root]).expect("workspace");
        let want = [".gitignore", "src/a.rs", "src/keep.tmp", "src/kept.log"];
        // Walking the root and walking a subdirectory honour the same rules.
        assert_eq!(names(&ws, ".", WalkOptions::default()), want.map(|s| s.to_owned()).to_vec());
        assert_eq!(
            names(&ws, "src", WalkOptions::default()),
            want[1..].iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()
        );
        let all = names(&ws, "src", WalkOptions { gitignore: false, ..WalkOptions::default() });
        assert_eq!(all.len(), 5, "{all:?}");
    }

    /// Found by bench/load.py: a grep running while another call wrote a file listed the write's
    /// temporary file beside it, with the old text.
    #[test]
    fn walks_skip_the_temporary_files_of_writes_under_way() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path();
        for f in ["a.rs", ".tether-Ab12Cd.tmp", ".tether-Ab12Cd.bak", ".hidden.tmp"] {
            fs::write(root.join(f), "x").expect("write");
        }
        let ws = Workspace::new([root]).expect("workspace");
        assert_eq!(names(&ws, ".", WalkOptions::default()), [".hidden.tmp", ".tether-Ab12Cd.bak", "a.rs"]);
    }

    #[cfg(unix)]
    #[test]
    fn walks_leave_out_what_the_deny_list_hides_and_resolving_it_fails() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path();
        fs::create_dir_all(root.join("keys")).expect("mkdir");
        fs::create_dir_all(root.join("web")).expect("mkdir");
        for f in [".env", ".env.example", "web/.env.local", "web/app.js", "keys/a.txt", "tls.pem", "main.rs"] {
            fs::write(root.join(f), "x").expect("write");
        }
        let deny = super::super::Deny::secrets_and(["keys".into()]).expect("deny");
        let ws = Workspace::new([root]).expect("workspace").with_deny(deny);
        let opts = WalkOptions { hidden: true, ..WalkOptions::default() };
        assert_eq!(names(&ws, ".", opts), [".env.example", "main.rs", "web/app.js"]);
        for hidden in [".env", "web/.env.local", "keys/a.txt", "keys", "tls.pem", "./web/../.env"] {
            let e = ws.resolve(hidden).expect_err(hidden);
            assert_eq!(e.kind(), crate::error::ErrorKind::PathEscape, "{hidden}");
            assert!(e.message().contains("deny list"), "{hidden}: {e:?}");
        }
        // A link to a hidden file is hidden too; without a list nothing is.
        std::os::unix::fs::symlink(root.join(".env"), root.join("env-link")).expect("symlink");
        assert!(ws.resolve("env-link").is_err());
        assert!(Workspace::new([root]).expect("workspace").resolve(".env").is_ok(), "nothing hidden by default");
    }
}
