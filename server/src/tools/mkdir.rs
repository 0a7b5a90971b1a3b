//! `mkdir`: create a directory and its missing parents.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;

/// Arguments of `mkdir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MkdirArgs {
    /// The directory to create: absolute inside a workspace root, or relative to the first root.
    /// Missing parent directories are created too.
    pub path: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "mkdir",
    description: "Create a directory, with any missing parent directories. A directory that \
already exists is not an error (the result says so); a file at the path is. There is no need to \
call this before write_file or move, which create missing parents themselves.",
    schema: schema_of::<MkdirArgs>,
    effects: Effects { read_only: false, destructive: false, idempotent: true, open_world: false },
    quick: true,
    run: |ctx, args| mkdir(ctx, parse_args(args)?),
};

/// Plans creating the directory `args.path`.
pub fn mkdir(ctx: &Context<'_>, args: MkdirArgs) -> Result<Output> {
    let path = ctx.vfs.resolve(&args.path)?;
    match ctx.vfs.metadata(&path) {
        Ok(m) if m.kind == EntryKind::Dir => {
            Ok(Output::Change { plan: EditPlan::default(), summary: format!("directory {path} already exists") })
        }
        Ok(_) => Err(Error::new(ErrorKind::NotADirectory, format!("{path}: exists and is a file, not a directory"))
            .with_path(path.given())),
        // Unix says "not a directory" for a path below a file; Windows says "not found", so the
        // nearest existing parent is looked at, for one answer everywhere.
        Err(e)
            if e.kind() == ErrorKind::NotFound
                && path.real().ancestors().skip(1).find_map(|p| p.metadata().ok()).is_some_and(|m| !m.is_dir()) =>
        {
            Err(Error::new(
                ErrorKind::NotADirectory,
                format!("{path}: a parent of this path is a file, not a directory"),
            )
            .with_path(path.given()))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let summary = format!("created directory {path}");
            Ok(Output::Change { plan: EditPlan::one(FileOp::Mkdir { path }), summary })
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::error::ErrorKind;
    use crate::tools::testing::fixture;

    #[cfg(unix)]
    #[test]
    fn makes_directories() {
        let f = fixture("//- there/x.txt\nx\n");
        std::os::unix::fs::symlink("there", f.dir.path().join("link")).expect("symlink");
        let table = [
            ("new", "created directory new"),
            ("a/b/c", "created directory a/b/c"),
            ("there", "directory there already exists"),
            ("link", "directory link already exists"),
            (".", "directory . already exists"),
            ("new", "directory new already exists"),
        ];
        for (p, summary) in table {
            assert_eq!(f.apply("mkdir", json!({"path": p})).as_deref(), Ok(summary), "{p}");
            assert!(f.dir.path().join(p).is_dir(), "{p}");
        }
        assert_eq!(f.read("there/x.txt").as_deref(), Some(&b"x\n"[..]));
    }

    #[test]
    fn errors() {
        let f = fixture("//- file\nx\n");
        let table = [
            (json!({"path": "file"}), ErrorKind::NotADirectory),
            (json!({"path": "file/below"}), ErrorKind::NotADirectory),
            (json!({"path": "file/below/deeper"}), ErrorKind::NotADirectory),
            (json!({"path": "../x"}), ErrorKind::PathEscape),
            (json!({"path": 3}), ErrorKind::InvalidInput),
            (json!({}), ErrorKind::InvalidInput),
            (json!({"path": "x", "parents": true}), ErrorKind::InvalidInput),
        ];
        for (args, want) in table {
            assert_eq!(f.call_err("mkdir", args.clone()), want, "{args}");
        }
        assert_eq!(f.read("file").as_deref(), Some(&b"x\n"[..]));
    }
}
