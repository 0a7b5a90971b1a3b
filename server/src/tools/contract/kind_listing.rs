//! A directory's entries labelled file or directory, depth first in name order, optionally
//! recursive (the toolkit profile's `list_files`).
//!
//! A symlink is labelled by what it points to when that lies inside the workspace, and is never
//! descended into; `.git` is listed but not descended into. A listing stops after
//! [`MAX_ENTRIES`] entries.

use std::path::Path;

use crate::error::Result;
use crate::tools::list_dir::MAX_ENTRIES;
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// What to list.
#[derive(Debug, Clone)]
pub struct KindListing<'a> {
    /// The directory, as the user gave it.
    pub path: &'a str,
    /// Whether subdirectories are listed too.
    pub recursive: bool,
}

/// What the listing found.
#[derive(Debug)]
pub enum KindListed {
    /// The path is not a directory.
    NotADirectory,
    /// The entries.
    Entries {
        /// Each entry's path below the listed directory (`sub/name`), and whether it is a
        /// directory, in listing order.
        entries: Vec<(String, bool)>,
        /// Whether the listing stopped at [`MAX_ENTRIES`].
        truncated: bool,
    },
}

/// Lists `args.path`.
pub fn list_kinds(ctx: &Context<'_>, args: KindListing<'_>) -> Result<KindListed> {
    let dir = ctx.vfs.resolve(args.path)?;
    let meta = ctx.vfs.metadata(&dir)?;
    if meta.kind != EntryKind::Dir {
        return Ok(KindListed::NotADirectory);
    }
    let mut lister = Lister { ctx, recursive: args.recursive, out: Vec::new(), truncated: false };
    lister.list(&dir, "")?;
    Ok(KindListed::Entries { entries: lister.out, truncated: lister.truncated })
}

struct Lister<'a, 'b> {
    ctx: &'a Context<'b>,
    recursive: bool,
    out: Vec<(String, bool)>,
    truncated: bool,
}

impl Lister<'_, '_> {
    fn list(&mut self, dir: &SandboxPath, prefix: &str) -> Result<()> {
        let entries = self.ctx.vfs.read_dir(dir)?;
        for (name, real, kind) in entries {
            if self.out.len() >= MAX_ENTRIES {
                self.truncated = true;
                return Ok(());
            }
            self.ctx.cancel.check()?;
            let shown = format!("{prefix}{name}");
            let is_dir = match kind {
                EntryKind::Dir => true,
                // A link is labelled by what it points to when that lies inside the workspace,
                // and is never descended into.
                EntryKind::Symlink => self.link_is_dir(&real),
                EntryKind::File | EntryKind::Other => false,
            };
            self.out.push((shown.clone(), is_dir));
            if is_dir && kind == EntryKind::Dir && self.recursive && name != ".git" {
                let rel = self.ctx.vfs.display(&real);
                let sub = self.ctx.vfs.resolve(&rel)?;
                self.list(&sub, &format!("{shown}/"))?;
            }
        }
        Ok(())
    }

    fn link_is_dir(&self, real: &Path) -> bool {
        let rel = self.ctx.vfs.display(real);
        self.ctx.vfs.resolve(&rel).and_then(|p| self.ctx.vfs.metadata(&p)).is_ok_and(|m| m.kind == EntryKind::Dir)
    }
}
