//! Applying one file's hunks to its text.
//!
//! Each hunk's old lines (context and removed) are looked for with decreasing strictness
//! ([`Fuzz`]): exactly, then ignoring trailing whitespace, then ignoring leading and trailing
//! whitespace, then also treating typographic dashes, quotes and odd spaces as their ASCII forms
//! (as Codex's `apply_patch` does). A stricter match anywhere wins over a looser one nearby. Within
//! one level, a hunk with line numbers is looked for at its stated line first and then outward
//! (shifted by how far the previous hunk was found from its own stated line), so a repeated block
//! is resolved by position; a hunk without line numbers must match exactly one place after the
//! previous hunk (at the strictest level that matches at all), or the patch is refused with every
//! candidate, since taking the first of several copies edits a place the model may not have
//! meant. Hunks with the same lines that change every copy, one each in order, apply in order; a
//! first `@@` line that occurs more than once is refused the same way. Hunks apply in order and
//! never overlap: each is looked for after the previous one. When a hunk is not found there,
//! [`apply_hunks_noting`] places it anyway where that is certain, and says so: before the previous
//! hunk when it matches one place in the whole file clear of the other hunks (hunks out of file
//! order, or a file's second section), or in the text the hunks before it make (a hunk written
//! against their result). The
//! one exception is a pure insertion with neither line numbers nor an `@@` anchor: it goes at the
//! end of the file (as in Codex) and the next hunk is still looked for from where the one before
//! it ended.
//!
//! Lines are compared without their line breaks, so a patch typed with `\n` applies to a CRLF
//! file. Context lines keep the file's text (a fuzzy match does not rewrite them), and added lines
//! get the file's line break. The file's final newline is kept unless a hunk reaching the end of
//! the file says otherwise with `\ No newline at end of file`. Lines never join: a lone `\r` that
//! would come to stand before an empty line's `\n` is written `\r\n`.

use std::borrow::Cow;
use std::fmt::Write as _;

pub use super::seek::Fuzz;
use super::seek::Text;
use super::{quote, Hunk, HunkLine, LineKind, Placement};
use crate::text::{ends_with_newline, keep_breaks_apart, LineEnding};
use unicode_normalization::{is_nfc, is_nfd, UnicodeNormalization};

/// Why a hunk did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkFailure {
    /// 0-based index of the hunk in its file.
    pub index: usize,
    /// The hunk's header as written.
    pub header: String,
    /// What was expected and where, with the expected lines.
    pub reason: String,
}

impl HunkFailure {
    /// The full message for the file shown as `path`:
    /// `src/a.rs: hunk 2 (@@ -10,4 +10,5 @@) did not apply: expected context ...`.
    pub fn message(&self, path: &str) -> String {
        format!("{path}: hunk {} ({}) did not apply: {}", self.index + 1, self.header, self.reason)
    }
}

/// Where one hunk landed: its first old line, and the lines applied (the hunk's, perhaps without
/// trailing blank context that the file does not have).
struct Placed<'h> {
    start: usize,
    hunk: &'h Hunk,
    lines: Cow<'h, [HunkLine]>,
}

/// Applies `hunks`, in order, to `base`. Fails with the first hunk that cannot be placed.
pub fn apply_hunks(base: &str, hunks: &[Hunk]) -> Result<String, HunkFailure> {
    apply_hunks_noting(base, hunks, &mut Vec::new())
}

/// [`apply_hunks`], also placing a hunk that is not where the patch's order says when its place
/// is certain, and saying so in `accepted`: a hunk before the previous one that matches exactly
/// one place in the whole file clear of the other hunks (hunks out of file order, or a file's
/// second section), and a hunk written against the text the hunks before it make.
pub fn apply_hunks_noting(base: &str, hunks: &[Hunk], accepted: &mut Vec<String>) -> Result<String, HunkFailure> {
    let mut text = Text::new(base);
    let brk = LineEnding::detect(base).break_for(base);
    let mut cursor = 0usize;
    let mut drift = 0isize;
    let mut placed: Vec<Placed<'_>> = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        let fail = |reason: String| HunkFailure { index, header: hunk.header.clone(), reason };
        let spot = match place(&mut text, hunks, index, cursor, drift) {
            Ok(spot) => spot,
            Err(reason) => {
                // Before the previous hunk: certain when it names one place in the whole file,
                // clear of every hunk placed so far.
                let anywhere = if cursor > 0 { place(&mut text, hunks, index, 0, drift).ok() } else { None };
                let old: Vec<&str> = hunk.old_lines().map(|l| l.text.as_str()).collect();
                let found_anywhere = anywhere.is_some()
                    || !text.candidates(&old, 0, 1).is_empty()
                    || text.seek_blank(&old, 0, 0).is_some();
                let earlier =
                    anywhere.filter(|s| !placed.iter().any(|p| overlaps(p.start, &p.lines, s.start, &s.lines)));
                if let Some(spot) = earlier {
                    accepted.push(format!(
                        "hunk {} ({}) applied at line {}, before the hunk ahead of it in the patch (hunks out of file order)",
                        index + 1,
                        hunk.header,
                        spot.start + 1
                    ));
                    placed.push(Placed { start: spot.start, hunk, lines: spot.lines });
                    drift = spot.drift;
                    continue;
                }
                // Written against the text the hunks before it make: found nowhere in the file, and
                // in that text.
                if index > 0 && !found_anywhere {
                    placed.sort_by_key(|p| p.start);
                    let between = build(&text.lines, &placed, base, brk);
                    let mut notes = Vec::new();
                    match apply_hunks_noting(&between, &hunks[index..], &mut notes) {
                        Ok(done) => {
                            accepted.push(format!(
                                "hunk {} ({}) matched the text after hunk {index}, not the file as it was",
                                index + 1,
                                hunk.header
                            ));
                            accepted.extend(notes);
                            return Ok(done);
                        }
                        Err(f) if f.index > 0 => return Err(HunkFailure { index: f.index + index, ..f }),
                        Err(_) => {}
                    }
                }
                return Err(fail(reason));
            }
        };
        cursor = spot.cursor;
        drift = spot.drift;
        placed.push(Placed { start: spot.start, hunk, lines: spot.lines });
    }
    // Stable, so insertions at one place keep the patch's order.
    placed.sort_by_key(|p| p.start);
    Ok(build(&text.lines, &placed, base, brk))
}

/// The end (exclusive) of the block that line `i` opens: the lines after it indented deeper than
/// it, and the first line after them when it closes the block (`}`, `]`, `)`, `end`); `None`
/// when the next non-blank line is not indented deeper (the line opens no block).
fn block_end(file: &[(&str, &str)], i: usize) -> Option<usize> {
    let indent = |s: &str| s.len() - s.trim_start().len();
    let base = indent(file[i].0);
    let mut inside = false;
    for (j, (line, _)) in file.iter().enumerate().skip(i + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) > base {
            inside = true;
            continue;
        }
        let t = line.trim();
        let closes = t.starts_with(['}', ']', ')']) || t == "end" || t.starts_with("end ");
        return inside.then_some(if closes { j + 1 } else { j });
    }
    inside.then_some(file.len())
}

/// Whether a hunk placed at `b` with `b_lines` touches the old lines of one placed at `a`.
fn overlaps(a: usize, a_lines: &[HunkLine], b: usize, b_lines: &[HunkLine]) -> bool {
    let old = |lines: &[HunkLine]| lines.iter().filter(|l| l.kind != LineKind::Add).count();
    let (a_end, b_end) = (a + old(a_lines), b + old(b_lines));
    // Two insertions at one place, or an insertion at a hunk's edge, do not overlap.
    a < b_end && b < a_end
}

/// Where a hunk goes, and where the next one is looked for.
struct Spot<'h> {
    /// Its first old line.
    start: usize,
    /// Its lines as applied.
    lines: Cow<'h, [HunkLine]>,
    /// Where the next hunk is looked for from.
    cursor: usize,
    /// How far from their stated lines the hunks were found.
    drift: isize,
}

/// Where hunk `index` goes when looked for from `cursor` (with the previous hunks' `drift` from
/// their stated lines): its first old line, its lines as applied, and the cursor and drift for
/// the next hunk; or why it cannot be placed.
fn place<'h>(
    text: &mut Text<'_>,
    hunks: &'h [Hunk],
    index: usize,
    cursor: usize,
    drift: isize,
) -> Result<Spot<'h>, String> {
    let found = place_in_scope(text, hunks, index, cursor, drift);
    text.max_start = None;
    found
}

/// [`place`], with [`Text::max_start`] left set when an `@@` line confined the search.
fn place_in_scope<'h>(
    text: &mut Text<'_>,
    hunks: &'h [Hunk],
    index: usize,
    cursor: usize,
    mut drift: isize,
) -> Result<Spot<'h>, String> {
    let hunk = &hunks[index];
    let n = text.lines.len();
    let mut next_cursor = cursor;
    let mut from = cursor;
    let mut anchor_at = None;
    // A stated line inside the file breaks a tie between places; an absent one, or one past
    // the end of the file, says nothing.
    let stated_line = matches!(hunk.placement, Placement::Near { start, .. } if start < n);
    // The first anchor, when no line number says where, must name one place: taking the
    // first of several would edit a place the patch may not mean.
    if let (Some(anchor), false) = (hunk.anchors.first(), stated_line) {
        if text.candidates(&[anchor.as_str()], from, 2).len() > 1 {
            let places = text.candidates(&[anchor.as_str()], from, usize::MAX);
            return Err(format!(
                "the `@@` line {} occurs {} times {}, at lines {}; nothing was changed: add a context line or a \
                 further `@@` line that names one place",
                quote(anchor),
                places.len(),
                after_line(from),
                line_list(&places)
            ));
        }
    }
    for anchor in &hunk.anchors {
        let Some(i) = text.seek(&[anchor.as_str()], from, from, false) else {
            return Err(format!("could not find the line {} named by `@@` {}", quote(anchor), after_line(from)));
        };
        anchor_at = Some(i);
        from = i + 1;
    }
    // The last `@@` line names a scope when it opens a block: the hunk must start inside it (its
    // context may run past the block's end), so that lines found only in another function are
    // not changed there.
    if let Some(end) = anchor_at.and_then(|i| block_end(&text.lines, i)) {
        text.max_start = Some(end.saturating_sub(1));
    }
    let near = |start: usize| start.saturating_add_signed(drift);
    // The body may repeat the anchor line as its first context line, so it is looked for
    // from the anchor itself, preferring the line after it.
    let (lo, hint) = match (anchor_at, hunk.placement) {
        (Some(i), _) => (i, i + 1),
        (None, Placement::Near { start, .. }) => (cursor, near(start)),
        (None, Placement::Forward) => (cursor, cursor),
    };
    let mut body: Cow<'_, [HunkLine]> = Cow::Borrowed(&hunk.lines);
    let old: Vec<&str> = hunk.old_lines().map(|l| l.text.as_str()).collect();
    let start = if old.is_empty() {
        // A pure insertion: at its stated line, after its anchor, or (as Codex does for a
        // hunk without either) at the end of the file.
        match (hunk.at_eof, anchor_at, hunk.placement) {
            (true, _, _) => n,
            (false, Some(i), _) => i + 1,
            (false, None, Placement::Near { start, .. }) => near(start).clamp(cursor, n),
            (false, None, Placement::Forward) => n,
        }
    } else if let Some(i) = text.seek(&old, lo, hint, hunk.at_eof) {
        // Without a line number or an anchor, context that occurs more than once names no
        // one place: refuse rather than change the first.
        // Hunks that change every copy, one each in order, name their places together.
        if anchor_at.is_none() && !stated_line && !hunk.at_eof {
            let unplaced = |h: &Hunk| h.anchors.is_empty() && !h.at_eof && h.placement == Placement::Forward;
            // This hunk is one of them, whatever its (uninformative) line number.
            let same = 1 + hunks[index + 1..]
                .iter()
                .filter(|h| unplaced(h) && h.old_lines().map(|l| l.text.as_str()).eq(old.iter().copied()))
                .count();
            if text.candidates(&old, lo, same + 1).len() > same {
                let places = text.candidates(&old, lo, usize::MAX);
                return Err(format!(
                    "the hunk's lines occur {} times {}, at lines {}; nothing was changed: add a context line \
                     that occurs only at the place you mean, or an `@@` line naming its function or section",
                    places.len(),
                    after_line(lo),
                    line_list(&places)
                ));
            }
        }
        i
    } else {
        // Models often end a hunk with a blank context line the file does not have (at the
        // end of the file, typically): try once more without trailing blank context.
        let keep = hunk.lines.iter().rposition(|l| !(l.kind == LineKind::Context && l.text.trim().is_empty()));
        let trimmed = &hunk.lines[..keep.map_or(0, |k| k + 1)];
        let trimmed_old: Vec<&str> =
            trimmed.iter().filter(|l| l.kind != LineKind::Add).map(|l| l.text.as_str()).collect();
        let found = if trimmed.len() < hunk.lines.len() && !trimmed_old.is_empty() {
            text.seek(&trimmed_old, lo, hint, hunk.at_eof)
        } else {
            None
        };
        // Then, as `edit_file` does, with blank lines left out on both sides: the hunk is
        // aligned to the file's blank lines, which stay as context.
        if let Some(i) = found {
            body = Cow::Borrowed(trimmed);
            i
        } else if let Some(i) = (!hunk.at_eof).then(|| text.seek_blank(&old, lo, hint)).flatten() {
            body = Cow::Owned(align_to_blank_lines(&text.lines, i, &hunk.lines));
            i
        } else {
            return Err(not_found(text, hunk, &old, lo, hint, anchor_at));
        }
    };
    if !old.is_empty() {
        if let Some(lines) = in_file_indent(&text.lines, start, &body) {
            body = Cow::Owned(lines);
        }
        if let Some(lines) = in_file_form(&text.lines, start, &body) {
            body = Cow::Owned(lines);
        }
    }
    if let (None, Placement::Near { start: stated, .. }) = (anchor_at, hunk.placement) {
        drift = start as isize - stated as isize;
    }
    // A pure insertion sent to the end of the file for want of any position says nothing
    // about where the next hunk is: like Codex, keep looking from where the previous hunk
    // ended. The insertion then lands after every later hunk, all of which end by the end
    // of the file, so the result is the same whichever order they are applied in.
    let at_end_by_default = old.is_empty() && anchor_at.is_none() && hunk.placement == Placement::Forward;
    if !at_end_by_default {
        next_cursor = start + body.iter().filter(|l| l.kind != LineKind::Add).count();
    }
    Ok(Spot { start, lines: body, cursor: next_cursor, drift })
}

/// The hunk's lines with its added lines moved into the file's indentation, when it was found
/// only after indentation was ignored (spaces where the file has tabs, a block shifted): an added
/// line written at the indent of one of the hunk's old lines takes that line's indent in the file,
/// so that a tab-indented file gets tabs (a Makefile recipe stays a recipe); an added line at
/// an indent no old line has keeps it, as the model chose it. `None`
/// when the hunk's indentation is the file's, or when one indent of the hunk stands for several
/// of the file's (ragged whitespace: no translation is certain, so the lines stay as written).
fn in_file_indent(file: &[(&str, &str)], start: usize, body: &[HunkLine]) -> Option<Vec<HunkLine>> {
    let old: Vec<&str> = body.iter().filter(|l| l.kind != LineKind::Add).map(|l| l.text.as_str()).collect();
    let found: Vec<&str> = file.get(start..start + old.len())?.iter().map(|(c, _)| *c).collect();
    let indent = crate::edit::reindent::indent_of;
    let pairs: Vec<(&str, &str)> =
        old.iter().zip(&found).filter(|(o, _)| !o.trim().is_empty()).map(|(o, f)| (indent(o), indent(f))).collect();
    if pairs.iter().all(|(o, f)| o == f) || !body.iter().any(|l| l.kind == LineKind::Add) {
        return None;
    }
    // Only a consistent translation is certain: one indent of the hunk read as two of the file's
    // (ragged whitespace) says nothing about where new lines belong, so they stay as written.
    if pairs.iter().any(|(o, f)| pairs.iter().any(|(o2, f2)| o == o2 && f != f2)) {
        return None;
    }
    // An added line whose indent some old line of the hunk had takes that line's indent in the
    // file; any other indent is the model's own choice and stays as written.
    Some(
        body.iter()
            .map(|l| {
                match pairs
                    .iter()
                    .find(|(o, _)| l.kind == LineKind::Add && !l.text.trim().is_empty() && indent(&l.text) == *o)
                {
                    Some((o, f)) => HunkLine { kind: LineKind::Add, text: format!("{f}{}", &l.text[o.len()..]) },
                    None => l.clone(),
                }
            })
            .collect(),
    )
}

/// The hunk's lines with its added lines in the file's Unicode normalization form, when its old
/// lines matched only in another form (accents composed in the patch and decomposed in the file,
/// or the other way): `None` when the forms agree, or the file's lines are in neither form.
fn in_file_form(file: &[(&str, &str)], start: usize, body: &[HunkLine]) -> Option<Vec<HunkLine>> {
    let old: Vec<&str> = body.iter().filter(|l| l.kind != LineKind::Add).map(|l| l.text.as_str()).collect();
    let found: Vec<&str> = file.get(start..start + old.len())?.iter().map(|(c, _)| *c).collect();
    if old == found || found.iter().all(|f| f.is_ascii()) {
        return None;
    }
    let nfc = found.iter().all(|f| is_nfc(f));
    if !nfc && !found.iter().all(|f| is_nfd(f)) {
        return None;
    }
    let form = |t: &str| -> String {
        if nfc {
            t.nfc().collect()
        } else {
            t.nfd().collect()
        }
    };
    let changes = body.iter().any(|l| l.kind == LineKind::Add && form(&l.text) != l.text);
    changes.then(|| {
        body.iter()
            .map(|l| match l.kind {
                LineKind::Add => HunkLine { kind: LineKind::Add, text: form(&l.text) },
                _ => l.clone(),
            })
            .collect()
    })
}

/// `lines`, a hunk found at `start` with blank lines left out, aligned line for line to the file:
/// a blank old line the file does not have there is left out, and the file's blank lines the hunk
/// lacks are added as context (or as removed lines, between two removed lines).
fn align_to_blank_lines(file: &[(&str, &str)], start: usize, lines: &[HunkLine]) -> Vec<HunkLine> {
    let blank = |i: usize| i < file.len() && file[i].0.trim().is_empty();
    let mut out = Vec::with_capacity(lines.len() + 4);
    let mut at = start;
    let mut previous = None;
    for l in lines {
        if l.kind == LineKind::Add {
            out.push(l.clone());
            continue;
        }
        if l.text.trim().is_empty() {
            if blank(at) {
                out.push(l.clone());
                at += 1;
                previous = Some(l.kind);
            }
            continue;
        }
        while blank(at) {
            let removed = l.kind == LineKind::Remove && previous == Some(LineKind::Remove);
            let kind = if removed { LineKind::Remove } else { LineKind::Context };
            out.push(HunkLine { kind, text: file[at].0.to_owned() });
            at += 1;
        }
        out.push(l.clone());
        at += 1;
        previous = Some(l.kind);
    }
    out
}

/// `after line N`, or `in the file` from the top.
/// 0-based line indexes as the 1-based numbers a reader sees: `3 and 17`, `3, 9 and 17`.
fn line_list(places: &[usize]) -> String {
    let numbers: Vec<String> = places.iter().take(10).map(|i| (i + 1).to_string()).collect();
    let more = if places.len() > 10 { format!(" and {} more", places.len() - 10) } else { String::new() };
    match numbers.split_last() {
        Some((last, rest)) if !rest.is_empty() && more.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => format!("{}{more}", numbers.join(", ")),
    }
}

fn after_line(from: usize) -> String {
    if from == 0 {
        "in the file".to_owned()
    } else {
        format!("after line {from}")
    }
}

/// The reason a hunk's old lines were not found: where they were looked for, the lines, and the
/// closest place in the file, so that a model can correct its patch.
fn not_found(
    text: &mut Text<'_>,
    hunk: &Hunk,
    old: &[&str],
    lo: usize,
    hint: usize,
    anchor_at: Option<usize>,
) -> String {
    let mut out = match (hunk.at_eof, anchor_at, hunk.placement) {
        (true, _, _) => "expected these lines at the end of the file:".to_owned(),
        (false, Some(i), _) => match text.max_start {
            Some(_) => format!(
                "expected these lines in the block the `@@` line opens (line {} to line {}):",
                i + 1,
                block_end(&text.lines, i).unwrap_or(text.lines.len())
            ),
            None => format!("expected these lines after line {} (the `@@` line):", i + 1),
        },
        (false, None, Placement::Near { stated, .. }) => format!("expected context at or near line {stated}:"),
        (false, None, Placement::Forward) => format!("expected these lines {}:", after_line(lo)),
    };
    const SHOWN: usize = 30;
    for l in hunk.old_lines().take(SHOWN) {
        let mark = if l.kind == LineKind::Remove { '-' } else { ' ' };
        let _ = write!(out, "\n{mark}{}", l.text);
    }
    if old.len() > SHOWN {
        let _ = write!(out, "\n(... {} more lines)", old.len() - SHOWN);
    }
    if let Some((at, score)) = text.closest(old, hint) {
        let diff = text.lines[at..].iter().zip(old).position(|((c, _), p)| c.trim() != p.trim());
        let _ = write!(out, "\nthe closest match starts at line {} ({score} of {} lines match)", at + 1, old.len());
        if let Some(d) = diff {
            let _ = write!(
                out,
                "; line {} there reads {} where the hunk has {}",
                at + d + 1,
                quote(text.lines[at + d].0),
                quote(old[d])
            );
        }
    }
    out
}

/// Builds the new text from the placed hunks: untouched lines and context lines keep their text
/// and breaks, added lines get `brk`, and the final line break follows the rules in the module
/// documentation.
fn build(file: &[(&str, &str)], placed: &[Placed<'_>], base: &str, brk: &str) -> String {
    let n = file.len();
    let mut out: Vec<(&str, &str)> = Vec::with_capacity(n + 16);
    let mut final_newline = base.is_empty() || ends_with_newline(base);
    let mut at = 0;
    for p in placed {
        out.extend_from_slice(&file[at..p.start]);
        let mut fi = p.start;
        for l in p.lines.iter() {
            match l.kind {
                LineKind::Context => {
                    out.push(file[fi]);
                    fi += 1;
                }
                LineKind::Remove => fi += 1,
                LineKind::Add => out.push((&l.text, brk)),
            }
        }
        at = fi;
        if fi == n {
            if p.hunk.new_no_newline {
                final_newline = false;
            } else if p.hunk.old_no_newline {
                final_newline = true;
            }
        }
    }
    out.extend_from_slice(&file[at..]);
    let last = out.len().saturating_sub(1);
    let mut s = String::with_capacity(base.len() + 64);
    // A byte order mark is the file's, not its first line's: a hunk that replaces the first line
    // (matched with the mark left out) keeps it, unless the line it removed spelled the mark out
    // and its replacement does not.
    let bom = '\u{FEFF}';
    let spelled = placed.first().is_some_and(|p| {
        p.start == 0 && p.lines.iter().find(|l| l.kind != LineKind::Add).is_some_and(|l| l.text.starts_with(bom))
    });
    if base.starts_with(bom) && !spelled && out.first().is_some_and(|(c, _)| !c.starts_with(bom)) {
        s.push(bom);
    }
    for (i, &(content, b)) in out.iter().enumerate() {
        s.push_str(content);
        let b = match (i == last, b.is_empty()) {
            (false, true) => brk,
            (false, false) => b,
            (true, _) if !final_newline => "",
            (true, true) => brk,
            (true, false) => b,
        };
        // A lone `\r` before an empty line's `\n` would make one break of two: the next line
        // would vanish.
        let next = out.get(i + 1).map_or("", |&(c, nb)| if c.is_empty() { nb } else { c });
        s.push_str(&keep_breaks_apart(Cow::Borrowed(b), "", next));
    }
    s
}
