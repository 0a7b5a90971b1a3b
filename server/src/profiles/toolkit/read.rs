//! `read_files` and `list_files`.

use super::args::{Args, OneOrMany};
use super::{describe, lines_word, Answer, Reply, Target};
use crate::text::lines;
use crate::tools::contract::kind_listing::{list_kinds, KindListed, KindListing};
use crate::tools::contract::line_range_read::{read_line_range, LineRangeRead, LinesRead};
use crate::tools::list_dir::MAX_ENTRIES;
use crate::tools::read_files::MAX_PATHS;
use crate::tools::Context;

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
    let read = read_line_range(ctx, LineRangeRead { path: given, range }).map_err(|e| describe(&e, Target::File))?;
    let (text, first, last, total) = match read {
        LinesRead::Lines { text, first, last, total } => (text, first, last, total),
        LinesRead::Directory => return Err(format!("Path is a directory, not a file: {given}")),
        LinesRead::NotRegular => return Err(format!("Not a regular file: {given}")),
        LinesRead::TooLarge { len, limit } => {
            return Err(format!(
                "File too large: {given} ({len} bytes; the limit is {limit} bytes). Read it in parts with line_range"
            ));
        }
        LinesRead::Binary => return Err(format!("Cannot read binary file: {given}")),
        LinesRead::PastEnd { start, total } => {
            return Err(format!("Line number {start} exceeds file length ({total} lines)"));
        }
    };
    let mut out = String::new();
    for (i, (line, _)) in lines(&text).enumerate().take(last).skip(first.saturating_sub(1)) {
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
    let listed = list_kinds(ctx, KindListing { path: &given, recursive }).map_err(|e| describe(&e, Target::Dir))?;
    let KindListed::Entries { entries, truncated } = listed else {
        return Err(format!("Not a directory: {given}"));
    };
    let lines: Vec<String> = entries
        .iter()
        .map(|(shown, is_dir)| format!("{}: {shown}", if *is_dir { "directory" } else { "file" }))
        .collect();
    let mut text = lines.join("\n");
    if truncated {
        text.push_str(&format!("\n(listing stopped after {MAX_ENTRIES} entries; list a subdirectory to see the rest)"));
    }
    Ok(Reply::ok(text))
}
