//! `apply_diffs` and `search_and_replace`.

use regex::RegexBuilder;

use super::args::{Args, OneOrMany};
use super::{describe, lines_word, Answer, Reply, Target};
use crate::edit::anchored::{self, Block, Found, Miss, WINDOW};
use crate::edit::closest::closest;
use crate::edit::replace::Template;
use crate::edit::{Base, EditPlan};
use crate::error::ErrorKind;
use crate::sink::{self, Sink};
use crate::text::LineIndex;
use crate::tools::editable::{read_editable, Wording};
use crate::tools::replace::{replace, ReplaceArgs};
use crate::tools::{Context, Output};

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
    let path = ctx.vfs.resolve(&given).map_err(|e| describe(&e, Target::File))?;
    let file = read_editable(ctx, &path, Wording::Write).map_err(|e| describe(&e, Target::File))?;
    let blocks: Vec<Block<'_>> = search
        .iter()
        .zip(&replace)
        .zip(&start)
        .map(|((s, r), &l)| Block { search: s, replace: r, start_line: usize::try_from(l).unwrap_or(usize::MAX) })
        .collect();
    let outcome = anchored::apply(&file.text, &blocks, trim);
    let miss_text = |i: usize, m: &Miss| miss_message(m, &blocks[i], &file.text, &given, trim);

    if !batch {
        return match &outcome.results[0] {
            Ok(found) => {
                let plan = EditPlan::edit_to(path, Base::from(file.clone()), &outcome.text);
                sink::apply(sink, ctx.config, ctx.vfs, &plan).map_err(|e| describe(&e, Target::File))?;
                Ok(Reply::ok(format!(
                    "Successfully applied diff to {given}: {}. File now has {}.",
                    replaced(found),
                    lines_word(outcome.line_count)
                )))
            }
            Err(m) => Err(miss_text(0, m)),
        };
    }

    let n = blocks.len();
    let found = outcome.found_count();
    let mode = if atomic { "atomic" } else { "non-atomic" };
    let apply_now = found > 0 && (!atomic || found == n);
    let mut details = Vec::with_capacity(n);
    for (i, r) in outcome.results.iter().enumerate() {
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
    let plan = EditPlan::edit_to(path, Base::from(file.clone()), &outcome.text);
    sink::apply(sink, ctx.config, ctx.vfs, &plan).map_err(|e| describe(&e, Target::File))?;
    Ok(Reply::ok(format!(
        "Batch diff operation ({mode}) completed: {found}/{n} diffs applied successfully to {given}. File now has \
         {}.\n\nDetailed results:\n\n{details}",
        lines_word(outcome.line_count)
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
fn miss_message(m: &Miss, b: &Block<'_>, text: &str, given: &str, trim: bool) -> String {
    match m {
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
            } else if !trim && anchored::apply(text, &[*b], true).all_found() {
                msg.push_str("; it matches when whitespace at line ends is ignored: set trim to true");
            } else if let Some(c) = closest(crate::edit::view::Mapped::lf(text).text(), b.search) {
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
    let path = ctx.vfs.resolve(&given).map_err(|e| describe(&e, Target::File))?;
    let file = read_editable(ctx, &path, Wording::Write).map_err(|e| describe(&e, Target::File))?;
    let total = LineIndex::new(&file.text).line_count();
    if let Some(s) = start_line.and_then(|s| usize::try_from(s).ok()).filter(|&s| s > total) {
        return Err(format!("Line number {s} exceeds file length ({})", lines_word(total)));
    }
    let range = (start_line.is_some() || end_line.is_some())
        .then(|| format!(" (lines {}-{})", start_line.unwrap_or(1), end_line.map_or(total as i64, |e| e)));
    let core = ReplaceArgs {
        path: given.clone(),
        pattern: search.clone(),
        replacement,
        regex: use_regex,
        ignore_case,
        start_line,
        end_line,
        limit: 0,
        dry_run: false,
    };
    let out = replace(ctx, core).map_err(|e| match e.kind() {
        ErrorKind::NoMatch => {
            format!("No matches found for '{search}' in {given}{}", range.clone().unwrap_or_default())
        }
        _ => describe(&e, Target::File),
    })?;
    let Output::Change { plan, summary } = out else {
        return Err("the replacement produced no change plan".to_owned());
    };
    let count = replaced_count(&summary);
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

/// The number of replacements in the core `replace` summary (`replaced 3 occurrences in ...`).
fn replaced_count(summary: &str) -> usize {
    summary
        .strip_prefix("replaced ")
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect::<String>())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::testing::fixture;

    #[test]
    fn counts_from_the_core_summary() {
        for (pattern, want) in [("foo", 2), ("bar", 1), ("o", 4)] {
            let f = fixture("//- a.txt\nfoo\nbar\nfoo\n");
            let out = f.call("replace", json!({"path": "a.txt", "pattern": pattern, "replacement": "x"}));
            assert_eq!(super::replaced_count(&out.expect("replaced")), want, "{pattern}");
        }
    }
}
