//! `apply_diffs` and `search_and_replace`.

use regex::RegexBuilder;

use super::args::{Args, OneOrMany};
use super::{describe, lines_word, Answer, Reply, Target};
use crate::edit::anchored::{Block, Found, Miss, WINDOW};
use crate::edit::replace::Template;
use crate::sink::{self, Sink};
use crate::tools::contract::anchored_edit::{anchored_edit, AnchoredEdit, Hint, Missed};
use crate::tools::contract::ranged_replace::{ranged_replace, RangeReplaced, RangedReplace};
use crate::tools::Context;

/// `apply_diffs`: search/replace blocks located in the original file by their `start_line`,
/// applied as one plan: all or nothing when atomic, the found ones otherwise.
pub(super) fn apply_diffs(ctx: &Context<'_>, sink: &dyn Sink, args: &Args) -> Answer {
    let given = args.string("path")?;
    let search = args.strings("search_content")?;
    let replace = args.strings("replace_content")?;
    let start = args.ints("start_line", 1)?;
    let atomic = args.flag("atomic", true)?;
    let trim = args.flag("trim", false)?;
    let (batch, search, replace, start) = match (search, replace, start) {
        (OneOrMany::One(s), OneOrMany::One(r), OneOrMany::One(l)) => (false, vec![s], vec![r], vec![l]),
        (OneOrMany::Many(s), OneOrMany::Many(r), OneOrMany::Many(l)) if s.len() == r.len() && r.len() == l.len() => {
            (true, s, r, l)
        }
        _ => {
            return Err("search_content, replace_content and start_line must all be single values, or all arrays \
                        of the same length"
                .to_owned());
        }
    };
    let blocks: Vec<Block<'_>> = search
        .iter()
        .zip(&replace)
        .zip(&start)
        .map(|((s, r), &l)| Block { search: s, replace: r, start_line: usize::try_from(l).unwrap_or(usize::MAX) })
        .collect();
    let done = anchored_edit(ctx, AnchoredEdit { path: &given, blocks: &blocks, trim, atomic })
        .map_err(|e| describe(&e, Target::File))?;
    let miss_text = |i: usize, m: &Missed| miss_message(m, &blocks[i], &given);

    if !batch {
        return match &done.results[0] {
            Ok(found) => {
                sink::apply(sink, ctx.config, ctx.vfs, &done.plan).map_err(|e| describe(&e, Target::File))?;
                Ok(Reply::ok(format!(
                    "Successfully applied diff to {given}: {}. File now has {}.",
                    replaced(found),
                    lines_word(done.line_count)
                )))
            }
            Err(m) => Err(miss_text(0, m)),
        };
    }

    let n = blocks.len();
    let found = done.results.iter().filter(|r| r.is_ok()).count();
    let mode = if atomic { "atomic" } else { "non-atomic" };
    let apply_now = done.applied;
    let mut details = Vec::with_capacity(n);
    for (i, r) in done.results.iter().enumerate() {
        let (status, message) = match r {
            Ok(f) if apply_now => ("success", capitalize(&replaced(f))),
            Ok(f) => (
                "not applied",
                format!("Matched {} line(s) at line {}; not applied because another diff failed", f.removed, f.line),
            ),
            Err(m) => ("failed", miss_text(i, m)),
        };
        details.push(format!(
            "Diff {}:\n  Status: {status}\n  Start Line: {}\n  Message: {}",
            i + 1,
            start[i],
            message.replace('\n', "\n    ")
        ));
    }
    let details = details.join("\n\n");
    if !apply_now {
        let head = if atomic {
            format!("Batch diff operation (atomic) failed: {}/{n} diffs could not be applied to {given}", n - found)
        } else {
            format!("Batch diff operation (non-atomic) failed: 0/{n} diffs could be applied to {given}")
        };
        return Err(format!("{head}. No changes were made.\n\nDetailed results:\n\n{details}"));
    }
    sink::apply(sink, ctx.config, ctx.vfs, &done.plan).map_err(|e| describe(&e, Target::File))?;
    Ok(Reply::ok(format!(
        "Batch diff operation ({mode}) completed: {found}/{n} diffs applied successfully to {given}. File now has \
         {}.\n\nDetailed results:\n\n{details}",
        lines_word(done.line_count)
    )))
}

/// `replaced 4 line(s) at line 10 (added 1 line(s))`.
fn replaced(f: &Found) -> String {
    let delta = match f.added.cmp(&f.removed) {
        std::cmp::Ordering::Greater => format!(" (added {} line(s))", f.added - f.removed),
        std::cmp::Ordering::Less => format!(" (removed {} line(s))", f.removed - f.added),
        std::cmp::Ordering::Equal => String::new(),
    };
    format!("replaced {} line(s) at line {}{delta}", f.removed, f.line)
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Why a block missed, with what the file holds near its `start_line`.
fn miss_message(m: &Missed, b: &Block<'_>, given: &str) -> String {
    match &m.miss {
        Miss::EmptySearch => "search_content is empty; give the lines to replace".to_owned(),
        Miss::ZeroStart => "start_line must be at least 1 (lines are 1-based)".to_owned(),
        Miss::PastEnd { start_line, total } => {
            format!("Line number {start_line} exceeds file length ({})", lines_word(*total))
        }
        Miss::Overlaps { other, line } => {
            format!(
                "search_content matched at line {line}, inside the lines of diff {}; each line can change once",
                other + 1
            )
        }
        Miss::NotFound { elsewhere } => {
            let mut msg = format!(
                "No match for search_content in {given} at line {} or within {WINDOW} lines of it",
                b.start_line
            );
            if !elsewhere.is_empty() {
                let at: Vec<String> = elsewhere.iter().take(10).map(ToString::to_string).collect();
                msg.push_str(&format!("; it matches at line(s) {}: give that line as start_line", at.join(", ")));
            } else if let Some(Hint::Trim) = &m.hint {
                msg.push_str("; it matches when whitespace at line ends is ignored: set trim to true");
            } else if let Some(Hint::Closest(c)) = &m.hint {
                let shown: Vec<String> =
                    c.shown.iter().enumerate().map(|(i, l)| format!("{} | {l}", c.first + i)).collect();
                msg.push_str(&format!(". The most similar lines are:\n{}", shown.join("\n")));
            }
            msg
        }
    }
}

/// `search_and_replace`: the core `replace` over one file, within an optional line range.
pub(super) fn search_and_replace(ctx: &Context<'_>, sink: &dyn Sink, args: &Args) -> Answer {
    let given = args.string("path")?;
    let search = args.string("search")?;
    let replacement = args.string("replace")?;
    let use_regex = args.flag("use_regex", false)?;
    let ignore_case = args.flag("ignore_case", false)?;
    let start_line = args.opt_int("start_line", 1)?;
    let end_line = args.opt_int("end_line", 1)?;
    if search.is_empty() {
        return Err("search is empty; give the text or pattern to find".to_owned());
    }
    if let (Some(s), Some(e)) = (start_line, end_line) {
        if e < s {
            return Err(format!("end_line ({e}) is before start_line ({s})"));
        }
    }
    if use_regex {
        let re = RegexBuilder::new(&search)
            .multi_line(true)
            .build()
            .map_err(|e| format!("Invalid regular expression: {e}"))?;
        let t = Template::parse(&replacement).map_err(|m| format!("Invalid replace: {m}"))?;
        t.check(&re).map_err(|m| format!("Invalid replace: it {}", m.replace("`pattern`", "the search pattern")))?;
    }
    let op = RangedReplace {
        path: given.clone(),
        search: search.clone(),
        replacement,
        regex: use_regex,
        ignore_case,
        start_line,
        end_line,
    };
    let done = ranged_replace(ctx, op).map_err(|e| describe(&e, Target::File))?;
    // The range as the messages name it, its end defaulting to the file's last line.
    let range = |total: usize| {
        (start_line.is_some() || end_line.is_some())
            .then(|| format!(" (lines {}-{})", start_line.unwrap_or(1), end_line.map_or(total as i64, |e| e)))
    };
    let (plan, count, range) = match done {
        RangeReplaced::StartPastEnd { start_line, lines } => {
            return Err(format!("Line number {start_line} exceeds file length ({})", lines_word(lines)));
        }
        RangeReplaced::NoMatch { lines } => {
            return Err(format!("No matches found for '{search}' in {given}{}", range(lines).unwrap_or_default()));
        }
        RangeReplaced::Replaced { plan, count, lines } => (plan, count, range(lines)),
    };
    sink::apply(sink, ctx.config, ctx.vfs, &plan).map_err(|e| describe(&e, Target::File))?;
    let mut text = format!("Successfully replaced {count} occurrence(s) in {given}");
    if use_regex {
        text.push_str(" using regex pattern");
    }
    if let Some(r) = range {
        text.push_str(&r);
    }
    if ignore_case {
        text.push_str(" (case-insensitive)");
    }
    Ok(Reply::ok(text))
}
