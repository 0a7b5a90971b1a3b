//! `write_files` and `insert_contents`.

use super::args::{no_duplicates, Args, OneOrMany};
use super::{describe, lines_word, Answer, Reply, Target};
use crate::sink::{self, Sink};
use crate::tools::contract::counted_write::{write_counted, CountedFile, CountedWrite};
use crate::tools::contract::line_insert::{line_insert, LineInsert, LineInserted};
use crate::tools::read_files::MAX_PATHS;
use crate::tools::Context;

/// `write_files`: every file checked against its `line_count` first, then all written as one
/// plan, so a mismatch or a failure writes nothing.
pub(super) fn write_files(ctx: &Context<'_>, sink: &dyn Sink, args: &Args) -> Answer {
    let single = !args.is_array("path");
    let paths = spread_paths(args.strings("path")?)?;
    if single && (args.is_array("content") || args.is_array("line_count")) {
        return Err("path names a single file, so content must be a string and line_count an integer".to_owned());
    }
    let n = paths.len();
    let contents = args.strings("content")?.spread(n, "content")?;
    let counts = args.ints("line_count", 0)?.spread(n, "line_count")?;
    no_duplicates(&paths)?;
    if let Some(dir) = paths.iter().find(|p| p.ends_with('/')) {
        return Err(format!("{dir} ends with `/`, so it names a directory; write_files writes files"));
    }

    let files = paths
        .iter()
        .zip(contents)
        .zip(&counts)
        .map(|((path, content), &expected)| CountedFile {
            path: path.clone(),
            content,
            line_count: expected.unsigned_abs(),
        })
        .collect();
    let lines = match write_counted(ctx, files).map_err(|e| describe(&e, Target::File))? {
        CountedWrite::Planned { plan, lines } => {
            sink::apply(sink, ctx.config, ctx.vfs, &plan).map_err(|e| describe(&e, Target::File))?;
            lines
        }
        CountedWrite::Mismatched(mismatches) => {
            let mismatches: Vec<String> = mismatches
                .iter()
                .map(|(i, m)| {
                    format!("{}: line_count is {}, but the content has {}", paths[*i], m.expected, lines_word(m.actual))
                })
                .collect();
            let what = if single { "the file was not" } else { "no file was" };
            return Err(format!(
                "Line count mismatch, so {what} written (the content may have been cut short):\n  - {}",
                mismatches.join("\n  - ")
            ));
        }
    };

    if single {
        return Ok(Reply::ok(format!("File written successfully: {} ({})", paths[0], lines_word(lines[0]))));
    }
    let total: usize = lines.iter().sum();
    let plural = |k: usize| if k == 1 { "" } else { "s" };
    let mut text = format!("Successfully wrote {n} file{} ({total} total line{}):", plural(n), plural(total));
    for (path, l) in paths.iter().zip(&lines) {
        text.push_str(&format!("\n  - {path} ({})", lines_word(*l)));
    }
    Ok(Reply::ok(text))
}

/// The paths of a multi-file call, at most [`MAX_PATHS`].
fn spread_paths(paths: OneOrMany<String>) -> Result<Vec<String>, String> {
    let paths = match paths {
        OneOrMany::One(p) => vec![p],
        OneOrMany::Many(v) => v,
    };
    if paths.len() > MAX_PATHS {
        return Err(format!("path names {} files; give at most {MAX_PATHS} per call", paths.len()));
    }
    Ok(paths)
}

/// `insert_contents`: each file changed on its own, so one file's failure leaves the others'
/// insertions in place and is reported beside them.
pub(super) fn insert_contents(ctx: &Context<'_>, sink: &dyn Sink, args: &Args) -> Answer {
    let single = !args.is_array("path");
    let paths = spread_paths(args.strings("path")?)?;
    if single && (args.is_array("line") || args.is_array("content")) {
        return Err("path names a single file, so line must be an integer and content a string".to_owned());
    }
    let n = paths.len();
    let positions = args.ints("line", i64::MIN)?.spread(n, "line")?;
    let contents = args.strings("content")?.spread(n, "content")?;
    no_duplicates(&paths)?;

    if single {
        let message = insert_one(ctx, sink, &paths[0], positions[0], contents[0].clone())?;
        return Ok(Reply::ok(message));
    }
    let mut done = 0;
    let mut report = Vec::with_capacity(n);
    for ((path, &line), content) in paths.iter().zip(&positions).zip(contents) {
        match insert_one(ctx, sink, path, line, content) {
            Ok(message) => {
                done += 1;
                report.push(format!("\u{2705} {path}: {message}"));
            }
            Err(message) => report.push(format!("\u{274C} {path}: Error: {message}")),
        }
    }
    let head = if done == n {
        format!("Successfully processed {n} file(s):")
    } else {
        format!("Processed {n} file(s): {done} succeeded, {} failed:", n - done)
    };
    Ok(Reply { text: format!("{head}\n\n{}", report.join("\n")), is_error: done == 0 })
}

/// Inserts `content` into one file at `line` and applies it; returns the contract's message.
fn insert_one(ctx: &Context<'_>, sink: &dyn Sink, given: &str, line: i64, content: String) -> Result<String, String> {
    if content.is_empty() {
        return Err("content is empty; there is nothing to insert".to_owned());
    }
    let op = LineInsert { path: given.to_owned(), line, content };
    let (at, added, total) = match line_insert(ctx, op).map_err(|e| describe(&e, Target::File))? {
        LineInserted::OutOfRange { lines } => {
            return Err(format!("Line number {line} exceeds file length ({})", lines_word(lines)));
        }
        LineInserted::Planned { plan, at, added, lines } => {
            sink::apply(sink, ctx.config, ctx.vfs, &plan).map_err(|e| describe(&e, Target::File))?;
            (at, added, lines)
        }
    };
    let position = match line {
        0 => "end of file".to_owned(),
        l if l < 0 => format!("{l} (now line {at})"),
        l => l.to_string(),
    };
    Ok(format!(
        "Successfully inserted {added} line(s) at position {position} in {given}. File now has {}.",
        lines_word(total + added)
    ))
}
