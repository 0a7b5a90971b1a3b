//! `move`: rename or move a file or directory inside the workspace.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;
use crate::workspace::{file_name, SandboxPath};

/// Arguments of `move`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// The file or directory to move. A symlink is moved as the link itself.
    pub source: String,
    /// Its new path: the full path, not a directory to move it into. Missing parent directories
    /// are created.
    pub destination: String,
    /// Replace an existing file at `destination`. Directories are never replaced.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub overwrite: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "move",
    description: "Move or rename a file or directory inside the workspace. `destination` is the \
full new path (to move a.txt into dir/, give dir/a.txt); missing parent directories are created. \
An existing destination is refused unless `overwrite` is true, which replaces a file (never a \
directory). A symlink is moved as the link itself. Contents, line endings and permissions are kept \
as they are. Workspace roots cannot be moved.",
    schema: schema_of::<MoveArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: false,
    run: |ctx, args| r#move(ctx, parse_args(args)?),
};

/// Plans moving `args.source` to `args.destination`.
pub fn r#move(ctx: &Context<'_>, args: MoveArgs) -> Result<Output> {
    let from = ctx.vfs.resolve(&args.source)?;
    let to = ctx.vfs.resolve(&args.destination)?;
    refuse_root(ctx, &from)?;
    let source = ctx.vfs.symlink_metadata(&from)?;
    if from.path() == to.path() {
        return Err(Error::invalid(format!("`source` and `destination` are the same path ({from})")));
    }
    if source.kind == EntryKind::Dir && to.path().starts_with(from.path()) {
        return Err(Error::invalid(format!("{from}: cannot move a directory into itself ({to})")));
    }
    let replaced = match ctx.vfs.symlink_metadata(&to) {
        Ok(m) if m.kind == EntryKind::Dir => {
            let name = file_name(from.path()).to_string_lossy();
            return Err(Error::new(
                ErrorKind::NotAFile,
                format!(
                    "{to}: is an existing directory, which move never replaces; to move {from} into it, \
                     give the full new path, for example {}/{name}",
                    to.given().trim_end_matches('/')
                ),
            )
            .with_path(to.given()));
        }
        Ok(_) if !args.overwrite => {
            return Err(Error::invalid(format!(
                "{to}: already exists; pass `overwrite: true` to replace it, or choose another destination"
            ))
            .with_path(to.given()));
        }
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    let what = match source.kind {
        EntryKind::Dir => "directory ",
        EntryKind::Symlink => "symlink ",
        _ => "",
    };
    let note = if replaced { " (replacing the file that was there)" } else { "" };
    let summary = format!("moved {what}{from} to {to}{note}");
    let plan = EditPlan::one(FileOp::Rename { from, to, overwrite: args.overwrite });
    Ok(Output::Change { plan, summary })
}

/// Refuses a path that is a workspace root, or holds one: moving or deleting it would pull the
/// workspace out from under the server. Shared with `delete`.
pub fn refuse_root(ctx: &Context<'_>, path: &SandboxPath) -> Result<()> {
    if ctx.vfs.workspace().roots().iter().any(|r| r.starts_with(path.path())) {
        return Err(Error::invalid(format!(
            "{path}: is a workspace root (or contains one); tether does not move or delete roots"
        ))
        .with_path(path.given()));
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    const TREE: &str = "//- a.txt\na\n//- b.txt\nb\n//- d/x.txt\nx\n//- e/\n";

    #[test]
    fn moves() {
        // Source, destination, overwrite, summary; then the source is gone and the destination
        // holds what the source held.
        let table: &[(&str, &str, bool, &str)] = &[
            ("a.txt", "c.txt", false, "moved a.txt to c.txt"),
            ("a.txt", "new/deep/a.txt", false, "moved a.txt to new/deep/a.txt"),
            ("a.txt", "b.txt", true, "moved a.txt to b.txt (replacing the file that was there)"),
            ("a.txt", "c.txt", true, "moved a.txt to c.txt"),
            ("d", "e/d", false, "moved directory d to e/d"),
            ("link", "d/link", false, "moved symlink link to d/link"),
        ];
        for (from, to, overwrite, summary) in table {
            let f = fixture(TREE);
            symlink("a.txt", f.dir.path().join("link")).expect("symlink");
            let entry = |p: &str| {
                let full = f.dir.path().join(p);
                let m = fs::symlink_metadata(&full).ok()?;
                Some(if m.is_dir() {
                    format!("dir {:?}", fs::read_dir(&full).ok()?.count())
                } else if m.file_type().is_symlink() {
                    format!("link {:?}", fs::read_link(&full).ok()?)
                } else {
                    format!("file {:?}", fs::read(&full).ok()?)
                })
            };
            let was = entry(from);
            let got = f.apply("move", json!({"source": from, "destination": to, "overwrite": overwrite}));
            assert_eq!(got.as_deref(), Ok(*summary), "{from} -> {to}");
            assert_eq!(entry(from), None, "{from} -> {to}");
            assert_eq!(entry(to), was, "{from} -> {to}");
        }
    }

    #[test]
    fn errors() {
        let f = fixture(TREE);
        let table = [
            (json!({"source": "missing", "destination": "x"}), ErrorKind::NotFound),
            (json!({"source": "a.txt", "destination": "b.txt"}), ErrorKind::InvalidInput),
            (json!({"source": "a.txt", "destination": "e"}), ErrorKind::NotAFile),
            (json!({"source": "a.txt", "destination": "e", "overwrite": true}), ErrorKind::NotAFile),
            (json!({"source": "a.txt", "destination": "a.txt", "overwrite": true}), ErrorKind::InvalidInput),
            (json!({"source": "d", "destination": "d/sub/d"}), ErrorKind::InvalidInput),
            (json!({"source": ".", "destination": "x"}), ErrorKind::InvalidInput),
            (json!({"source": "a.txt", "destination": "../a.txt"}), ErrorKind::PathEscape),
            (json!({"source": "a.txt", "destination": "b.txt/c.txt"}), ErrorKind::NotADirectory),
            (json!({"source": "a.txt", "destination": "c.txt", "overwrite": "yes"}), ErrorKind::InvalidInput),
            (json!({"source": "a.txt"}), ErrorKind::InvalidInput),
            (json!({"destination": "a.txt"}), ErrorKind::InvalidInput),
            (json!({"source": "a.txt", "destination": "c.txt", "force": true}), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("move", args.clone()), want, "{args}");
        }
        assert_eq!(f.read("a.txt").as_deref(), Some(&b"a\n"[..]));
        assert_eq!(f.read("b.txt").as_deref(), Some(&b"b\n"[..]));
        let (_, msg) = f.call("move", json!({"source": "a.txt", "destination": "e"})).expect_err("dir");
        assert!(msg.ends_with("for example e/a.txt"), "{msg}");
    }
}
