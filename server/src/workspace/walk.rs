//! Directory walks inside the sandbox, with the gitignore stack.

use ignore::WalkBuilder;

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
    pub fn walker(&self, dir: &SandboxPath, opts: WalkOptions) -> WalkBuilder {
        let mut b = WalkBuilder::new(dir.real());
        b.follow_links(false)
            .hidden(!opts.hidden)
            .git_ignore(opts.gitignore)
            .git_global(opts.gitignore)
            .git_exclude(opts.gitignore)
            .ignore(opts.gitignore)
            .parents(opts.gitignore)
            // Honour .gitignore files even outside a git repository, as users expect from a
            // project folder that is not (yet) a repository.
            .require_git(false)
            .max_depth(opts.max_depth);
        let skip_build = opts.skip_build_dirs;
        b.filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if !is_dir || e.depth() == 0 {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            if name == ".git" {
                return false;
            }
            !(skip_build && SKIPPED_DIRS.contains(&name.as_ref()))
        });
        b
    }
}
