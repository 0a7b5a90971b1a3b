//! `delete`: remove a file, a symlink or a directory.

use schemars::JsonSchema;
use serde::Deserialize;

use super::r#move::refuse_root;
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, Result};
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// Arguments of `delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The file, symlink or directory to delete. A symlink is deleted itself; what it points to
    /// is kept.
    pub path: String,
    /// Delete a non-empty directory with everything in it.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub recursive: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "delete",
    description: "Delete a file, a symlink (the link itself, never what it points to) or a \
directory. A directory must be empty unless `recursive` is true, which deletes it with everything \
in it; the result says how many files and directories went. Workspace roots cannot be deleted. \
Outside an editor there is no undo: check the path first.",
    schema: schema_of::<DeleteArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: true, open_world: false },
    quick: false,
    run: |ctx, args| delete(ctx, parse_args(args)?),
};

/// Plans deleting `args.path`.
pub fn delete(ctx: &Context<'_>, args: DeleteArgs) -> Result<Output> {
    let path = ctx.vfs.resolve(&args.path)?;
    refuse_root(ctx, &path)?;
    let meta = ctx.vfs.symlink_metadata(&path)?;
    let summary = match meta.kind {
        EntryKind::Dir => {
            let (files, dirs) = count(ctx, &path);
            match (files, dirs) {
                (Some(0), Some(0)) => format!("deleted empty directory {path}"),
                _ if !args.recursive => {
                    let what = match (files, dirs) {
                        (Some(f), Some(d)) => format!("it holds {}", entries(f, d)),
                        _ => "it is not empty".to_owned(),
                    };
                    return Err(Error::invalid(format!(
                        "{path}: directory is not empty ({what}); pass `recursive: true` to delete it with \
                         everything in it"
                    ))
                    .with_path(path.given()));
                }
                (Some(f), Some(d)) => format!("deleted directory {path} with {} in it", entries(f, d)),
                _ => format!("deleted directory {path} and everything in it"),
            }
        }
        EntryKind::Symlink => format!("deleted symlink {path} (what it pointed to is kept)"),
        EntryKind::File | EntryKind::Other => format!("deleted {path}"),
    };
    let plan = EditPlan::one(FileOp::Delete { path, recursive: args.recursive });
    Ok(Output::Change { plan, summary })
}

/// The number of files (symlinks included) and directories below `dir`; `None`s when some part
/// could not be listed.
fn count(ctx: &Context<'_>, dir: &SandboxPath) -> (Option<usize>, Option<usize>) {
    let (mut files, mut dirs) = (0, 0);
    let mut todo = vec![dir.clone()];
    while let Some(d) = todo.pop() {
        let Ok(list) = ctx.vfs.read_dir(&d) else { return (None, None) };
        for (_, real, kind) in list {
            if kind != EntryKind::Dir {
                files += 1;
                continue;
            }
            dirs += 1;
            // Entries are not followed (a symlink is counted as a file), so each directory is
            // below `dir` and resolves inside the sandbox.
            match real.to_str().map(|p| ctx.vfs.resolve(p)) {
                Some(Ok(sub)) => todo.push(sub),
                _ => return (None, None),
            }
        }
    }
    (Some(files), Some(dirs))
}

/// `3 files and 1 directory`.
fn entries(files: usize, dirs: usize) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!("{} and {}", plural(files, "file", "files"), plural(dirs, "directory", "directories"))
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    const TREE: &str = "//- a.txt\na\n//- empty/\n//- full/x.txt\nx\n//- full/sub/y.txt\ny\n//- full/sub/deeper/\n";

    #[test]
    fn deletes() {
        // Path, recursive, summary; afterwards the path is gone and a.txt still exists unless
        // it was the one deleted.
        let table: &[(&str, bool, &str)] = &[
            ("a.txt", false, "deleted a.txt"),
            ("empty", false, "deleted empty directory empty"),
            ("empty", true, "deleted empty directory empty"),
            ("full", true, "deleted directory full with 2 files and 2 directories in it"),
            ("link", false, "deleted symlink link (what it pointed to is kept)"),
            ("dir_link", false, "deleted symlink dir_link (what it pointed to is kept)"),
        ];
        for (p, recursive, summary) in table {
            let f = fixture(TREE);
            symlink("a.txt", f.dir.path().join("link")).expect("symlink");
            symlink("full", f.dir.path().join("dir_link")).expect("symlink");
            let got = f.apply("delete", json!({"path": p, "recursive": recursive}));
            assert_eq!(got.as_deref(), Ok(*summary), "{p}");
            assert!(std::fs::symlink_metadata(f.dir.path().join(p)).is_err(), "{p} still exists");
            assert_eq!(f.read("a.txt").is_some(), *p != "a.txt", "{p}");
            assert_eq!(f.read("full/x.txt").is_some(), *p != "full", "{p}");
        }
    }

    #[test]
    fn errors() {
        let f = fixture(TREE);
        let table = [
            (json!({"path": "missing"}), ErrorKind::NotFound),
            (json!({"path": "full"}), ErrorKind::InvalidInput),
            (json!({"path": "full", "recursive": false}), ErrorKind::InvalidInput),
            (json!({"path": "."}), ErrorKind::InvalidInput),
            (json!({"path": "", "recursive": true}), ErrorKind::InvalidInput),
            (json!({"path": "../x"}), ErrorKind::PathEscape),
            (json!({"path": "a.txt", "recursive": 1}), ErrorKind::InvalidInput),
            (json!({"path": "a.txt", "force": true}), ErrorKind::InvalidInput),
            (json!({}), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("delete", args.clone()), want, "{args}");
        }
        assert!(f.read("full/sub/y.txt").is_some());
        let (_, msg) = f.call("delete", json!({"path": "full"})).expect_err("not empty");
        assert_eq!(
            msg,
            "full: directory is not empty (it holds 2 files and 2 directories); pass `recursive: true` to delete \
             it with everything in it"
        );
    }
}
