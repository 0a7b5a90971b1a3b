//! `read_files` and `list_files`.

use super::args::{Args, OneOrMany};
use super::{describe, lines_word, Answer, Reply, Target};
use crate::text::lines;
use crate::tools::list_dir::MAX_ENTRIES;
use crate::tools::read_files::MAX_PATHS;
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// `read_files`: one file with numbered lines, or several, each under a `=== path (N lines) ===`
/// header.
pub(super) fn read_files(ctx: &Context<'_>, args: &Args) -> Answer {
    let paths = args.strings("path")?;
    let range = args.opt_string("line_range")?;
    match paths {
        OneOrMany::One(path) => {
            let range = range.as_deref().map(parse_range).transpose()?;
            read_one(ctx, &path, range).map(|(text, _)| Reply::ok(text))
        }
        OneOrMany::Many(paths) => {
            if range.is_some() {
                return Err("line_range is only supported when path names a single file (a string)".to_owned());
            }
            if paths.len() > MAX_PATHS {
                return Err(format!(
                    "path names {} files; read at most {MAX_PATHS} per call and split the rest over more calls",
                    paths.len()
                ));
            }
            let mut sections = Vec::with_capacity(paths.len());
            let mut read = 0;
            for path in &paths {
                ctx.cancel.check().map_err(|e| describe(&e, Target::File))?;
                match read_one(ctx, path, None) {
                    Ok((text, n)) => {
                        read += 1;
                        sections.push(format!("=== {path} ({}) ===\n{text}", lines_word(n)));
                    }
                    Err(message) => sections.push(format!("=== {path} ===\nError: {message}")),
                }
            }
            let n = paths.len();
            let head = if read == n {
                format!("Successfully read {n} file(s):")
            } else {
                format!("Read {read} of {n} file(s); {} could not be read:", n - read)
            };
            let text = format!("{head}\n\n{}", sections.join("\n\n"));
            Ok(Reply { text, is_error: read == 0 })
        }
    }
}

/// A `start-end` line range, 1-based and inclusive.
fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("Invalid line_range: '{s}'. Use 'start-end' with 1-based line numbers, e.g. '1-50'");
    let (a, b) = s.trim().split_once('-').ok_or_else(bad)?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    if !digits(a) || !digits(b) {
        return Err(bad());
    }
    let (start, end) = (a.parse::<usize>().map_err(|_| bad())?, b.parse::<usize>().map_err(|_| bad())?);
    if start == 0 {
        return Err(format!("Invalid line_range: '{s}'. Line numbers start at 1"));
    }
    if end < start {
        return Err(format!("Invalid line_range: '{s}'. The end ({end}) is before the start ({start})"));
    }
    Ok((start, end))
}

/// The numbered lines of `given` (all, or those of `range`) and the file's line count.
fn read_one(ctx: &Context<'_>, given: &str, range: Option<(usize, usize)>) -> Result<(String, usize), String> {
    let path = ctx.vfs.resolve(given).map_err(|e| describe(&e, Target::File))?;
    let meta = ctx.vfs.metadata(&path).map_err(|e| describe(&e, Target::File))?;
    match meta.kind {
        EntryKind::File => {}
        EntryKind::Dir => return Err(format!("Path is a directory, not a file: {given}")),
        _ => return Err(format!("Not a regular file: {given}")),
    }
    let limit = ctx.config.max_read_bytes;
    if range.is_none() && meta.len > limit {
        return Err(format!(
            "File too large: {given} ({} bytes; the limit is {limit} bytes). Read it in parts with line_range",
            meta.len
        ));
    }
    let file = ctx.vfs.read_text(&path).map_err(|e| match e.kind() {
        crate::error::ErrorKind::IsBinary => format!("Cannot read binary file: {given}"),
        _ => describe(&e, Target::File),
    })?;
    let all: Vec<&str> = lines(&file.text).map(|(content, _)| content).collect();
    let total = all.len();
    let (first, last) = match range {
        None => (1, total),
        Some((start, _)) if start > total => {
            return Err(format!("Line number {start} exceeds file length ({total} lines)"));
        }
        Some((start, end)) => (start, end.min(total)),
    };
    let mut out = String::new();
    for (i, line) in all.iter().enumerate().take(last).skip(first.saturating_sub(1)) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{} | {line}", i + 1));
    }
    Ok((out, total))
}

/// `list_files`: `directory: NAME` and `file: NAME` lines, sorted by name, depth first.
pub(super) fn list_files(ctx: &Context<'_>, args: &Args) -> Answer {
    let given = args.string("path")?;
    let given = if given.is_empty() { ".".to_owned() } else { given };
    let recursive = args.flag("recursive", false)?;
    let dir = ctx.vfs.resolve(&given).map_err(|e| describe(&e, Target::Dir))?;
    let meta = ctx.vfs.metadata(&dir).map_err(|e| describe(&e, Target::Dir))?;
    if meta.kind != EntryKind::Dir {
        return Err(format!("Not a directory: {given}"));
    }
    let mut lister = Lister { ctx, recursive, out: Vec::new(), truncated: false };
    lister.list(&dir, "")?;
    let mut text = lister.out.join("\n");
    if lister.truncated {
        text.push_str(&format!("\n(listing stopped after {MAX_ENTRIES} entries; list a subdirectory to see the rest)"));
    }
    Ok(Reply::ok(text))
}

struct Lister<'a, 'b> {
    ctx: &'a Context<'b>,
    recursive: bool,
    out: Vec<String>,
    truncated: bool,
}

impl Lister<'_, '_> {
    fn list(&mut self, dir: &SandboxPath, prefix: &str) -> Result<(), String> {
        let entries = self.ctx.vfs.read_dir(dir).map_err(|e| describe(&e, Target::Dir))?;
        for (name, real, kind) in entries {
            if self.out.len() >= MAX_ENTRIES {
                self.truncated = true;
                return Ok(());
            }
            self.ctx.cancel.check().map_err(|e| describe(&e, Target::Dir))?;
            let shown = format!("{prefix}{name}");
            let is_dir = match kind {
                EntryKind::Dir => true,
                // A link is labelled by what it points to when that lies inside the workspace,
                // and is never descended into.
                EntryKind::Symlink => self.link_is_dir(&real),
                EntryKind::File | EntryKind::Other => false,
            };
            self.out.push(format!("{}: {shown}", if is_dir { "directory" } else { "file" }));
            if is_dir && kind == EntryKind::Dir && self.recursive && name != ".git" {
                let rel = self.ctx.vfs.display(&real);
                let sub = self.ctx.vfs.resolve(&rel).map_err(|e| describe(&e, Target::Dir))?;
                self.list(&sub, &format!("{shown}/"))?;
            }
        }
        Ok(())
    }

    fn link_is_dir(&self, real: &std::path::Path) -> bool {
        let rel = self.ctx.vfs.display(real);
        self.ctx.vfs.resolve(&rel).and_then(|p| self.ctx.vfs.metadata(&p)).is_ok_and(|m| m.kind == EntryKind::Dir)
    }
}
