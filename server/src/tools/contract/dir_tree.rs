//! A directory's tree, to a depth (the filesystem profile's `directory_tree`).
//!
//! Entries are not followed: a symlink is a leaf, whatever it points to.

use crate::error::Result;
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::{file_name, SandboxPath};

/// The tree to build.
#[derive(Debug, Clone)]
pub struct DirTree {
    /// Its root: a directory, or a file (a tree of one leaf).
    pub path: SandboxPath,
    /// How many levels of entries to list: `None` for all, 0 for the root alone.
    pub depth: Option<usize>,
}

/// One node of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    /// The entry's name.
    pub name: String,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// A directory's entries, sorted by name; `None` for a file, and for a directory whose
    /// entries lie past the depth.
    pub children: Option<Vec<TreeNode>>,
}

/// The tree of `args.path`.
pub fn dir_tree(ctx: &Context<'_>, args: DirTree) -> Result<TreeNode> {
    let meta = ctx.vfs.metadata(&args.path)?;
    let name = file_name(args.path.real()).to_string_lossy().into_owned();
    if meta.kind == EntryKind::Dir {
        node(ctx, &args.path, name, args.depth)
    } else {
        Ok(TreeNode { name, is_dir: false, children: None })
    }
}

/// The tree node of directory `dir`, its entries `depth` levels deep (all when `None`).
fn node(ctx: &Context<'_>, dir: &SandboxPath, name: String, depth: Option<usize>) -> Result<TreeNode> {
    if depth == Some(0) {
        return Ok(TreeNode { name, is_dir: true, children: None });
    }
    let mut children = Vec::new();
    for (child, real, kind) in ctx.vfs.read_dir(dir)? {
        ctx.cancel.check()?;
        if kind != EntryKind::Dir {
            children.push(TreeNode { name: child, is_dir: false, children: None });
            continue;
        }
        // Entries are not followed, so a directory entry is a real directory below `dir`.
        let sub = ctx.vfs.resolve(&real.to_string_lossy())?;
        children.push(node(ctx, &sub, child, depth.map(|d| d - 1))?);
    }
    Ok(TreeNode { name, is_dir: true, children: Some(children) })
}
