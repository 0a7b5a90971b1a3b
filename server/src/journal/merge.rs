//! Reversing a change over later ones: a three-way merge by lines.
//!
//! The change turned `before` into `after`; the file is now `current` (later changes by the
//! user or another tool). The reverse (`after` → `before`) is applied to `current` where the
//! later changes left its lines alone. Where a later change touched lines the reverse changes
//! (or inserted at the very place the reverse inserts), nothing is merged and the overlaps are
//! returned, so the caller can name the lines. Lines keep their own breaks, so CRLF, a lone CR
//! and a missing final newline come back byte for byte.

use std::ops::Range;

use similar::{Algorithm, DiffOp, TextDiff};

/// Lines a later change touched where the undo would change them too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The lines in the current text (1-based, inclusive; `first > last` for a place where
    /// lines were removed: the line after it).
    pub current: (usize, usize),
}

impl Overlap {
    /// `lines 4-5`, `line 4`, or `at line 4` for a removal.
    pub fn describe(&self) -> String {
        match self.current {
            (a, b) if a == b => format!("line {a}"),
            (a, b) if a < b => format!("lines {a}-{b}"),
            (a, _) => format!("the lines removed before line {a}"),
        }
    }
}

/// Changed regions of a diff, in line indices of each side.
type Changed = Vec<(Range<usize>, Range<usize>)>;

/// Runs of equal lines of a diff: index in the old text, index in the new, length.
type Runs = Vec<(usize, usize, usize)>;

/// The changed regions of a diff of `old` against `new` (in line indices of each), its runs of
/// equal lines (`old index, new index, length`), and the lines of `new`. Lines end at `\n`, `\r\n`
/// or a lone `\r`, as tether's lines do.
fn hunks<'a>(old: &'a str, new: &'a str) -> (Changed, Runs, Vec<&'a str>) {
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, new);
    let mut changed = Vec::new();
    let mut equal: Runs = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, new_index, len } => match equal.last_mut() {
                Some(last) if last.0 + last.2 == old_index && last.1 + last.2 == new_index => last.2 += len,
                _ => equal.push((old_index, new_index, len)),
            },
            _ => changed.push((op.old_range(), op.new_range())),
        }
    }
    (changed, equal, diff.new_slices().to_vec())
}

/// Whether the reverse's region `ours` and a later change's region `theirs` (both in lines of
/// the text after the change) touch the same lines.
fn overlaps(ours: &Range<usize>, theirs: &Range<usize>) -> bool {
    match (ours.is_empty(), theirs.is_empty()) {
        (false, false) => ours.start < theirs.end && theirs.start < ours.end,
        (true, false) => theirs.start < ours.start && ours.start < theirs.end,
        (false, true) => ours.start < theirs.start && theirs.start < ours.end,
        (true, true) => ours.start == theirs.start,
    }
}

/// `current` with the change from `before` to `after` taken back, keeping every later change
/// that does not overlap it; else the overlaps.
pub fn reverse(after: &str, current: &str, before: &str) -> Result<String, Vec<Overlap>> {
    carry(after, before, current)
}

/// `current` (a text that came from `from` by changes of its own) with the change from `from`
/// to `to` made too, where it leaves `current`'s own changes alone: the three-way merge of `to`
/// and `current` over their common ancestor `from`. Else the lines of `current` where both
/// changed. The same change made on both sides is no overlap: it is made once.
pub fn carry(from: &str, to: &str, current: &str) -> Result<String, Vec<Overlap>> {
    if current == from {
        return Ok(to.to_owned());
    }
    if current == to || from == to {
        return Ok(current.to_owned());
    }
    let (after, before) = (from, to);
    let (ours, _, before_lines) = hunks(after, before);
    let (theirs, equal, current_lines) = hunks(after, current);
    // A region both sides changed alike is already made in `current`.
    let same = |o: &Range<usize>, b: &Range<usize>| {
        theirs.iter().any(|(t, now)| t == o && current_lines[now.clone()] == before_lines[b.clone()])
    };
    let ours: Changed = ours.into_iter().filter(|(o, b)| !same(o, b)).collect();
    let mut overlaps_found = Vec::new();
    for (o, _) in &ours {
        for (t, now) in &theirs {
            if overlaps(o, t) {
                let o = Overlap { current: (now.start + 1, now.end) };
                if !overlaps_found.contains(&o) {
                    overlaps_found.push(o);
                }
            }
        }
    }
    if !overlaps_found.is_empty() {
        return Err(overlaps_found);
    }
    // Each region of the reverse, moved to the current text through the equal run holding it.
    let mut placed = Vec::with_capacity(ours.len());
    for (o, b) in &ours {
        let Some(&(old, new, _)) = equal.iter().find(|&&(old, _, len)| old <= o.start && o.end <= old + len) else {
            let at = theirs.iter().find(|(t, _)| t.end >= o.start).map_or(current_lines.len(), |(_, n)| n.start);
            return Err(vec![Overlap { current: (at + 1, at + 1) }]);
        };
        let start = new + (o.start - old);
        placed.push((start..start + o.len(), b.clone()));
    }
    let mut out = String::with_capacity(current.len());
    let mut at = 0;
    for (range, b) in placed {
        out.extend(current_lines[at..range.start].iter().copied());
        out.extend(before_lines[b].iter().copied());
        at = range.end;
    }
    out.extend(current_lines[at..].iter().copied());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_file_gets_its_old_text_back() {
        assert_eq!(reverse("a\nB\nc\n", "a\nB\nc\n", "a\nb\nc\n"), Ok("a\nb\nc\n".to_owned()));
    }

    #[test]
    fn a_later_change_elsewhere_is_kept() {
        // The change made line 2 upper case; the user then edited line 4 and added a line on top.
        let before = "a\nb\nc\nd\ne\n";
        let after = "a\nB\nc\nd\ne\n";
        let current = "top\na\nB\nc\nD!\ne\n";
        assert_eq!(reverse(after, current, before), Ok("top\na\nb\nc\nD!\ne\n".to_owned()));
    }

    #[test]
    fn a_later_change_to_the_same_lines_is_an_overlap() {
        let before = "a\nb\nc\n";
        let after = "a\nB\nc\n";
        let current = "a\nB2\nc\n";
        assert_eq!(reverse(after, current, before), Err(vec![Overlap { current: (2, 2) }]));
    }

    #[test]
    fn inserting_where_the_change_inserted_is_an_overlap() {
        let before = "a\nc\n";
        let after = "a\nb\nc\n";
        // The change inserted b; undoing removes it. The user inserted x right after b: that
        // touches nothing the undo changes (b's line), so b goes and x stays.
        assert_eq!(reverse(after, "a\nb\nx\nc\n", before), Ok("a\nx\nc\n".to_owned()));
        // A change that removed a line, with a user insertion at that very place, is ambiguous.
        assert!(reverse("a\nc\n", "a\ny\nc\n", "a\nb\nc\n").is_err());
    }

    #[test]
    fn line_breaks_and_a_missing_final_newline_come_back_exactly() {
        let before = "one\r\ntwo\r\nthree";
        let after = "one\r\nTWO\r\nthree";
        let current = "zero\r\none\r\nTWO\r\nthree";
        assert_eq!(reverse(after, current, before), Ok("zero\r\none\r\ntwo\r\nthree".to_owned()));
    }

    #[test]
    fn carry_makes_a_change_beside_other_changes_and_a_shared_change_once() {
        // The file changed lines 3 and 5 on disk; the buffer changed line 1 and made the same
        // change to line 3 as the file did.
        let from = "a\nb\nc\nd\ne\n";
        let to = "a\nb\nC\nd\nE\n";
        let buffer = "A\nb\nC\nd\ne\n";
        assert_eq!(carry(from, to, buffer), Ok("A\nb\nC\nd\nE\n".to_owned()));
        // Both changed line 3, differently: the buffer's line 3 is named.
        assert_eq!(carry(from, to, "a\nb\nc!\nd\ne\n"), Err(vec![Overlap { current: (3, 3) }]));
    }

    #[test]
    fn adjacent_lines_do_not_overlap() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nd\n";
        let current = "a\nB\nC\nd\n";
        assert_eq!(reverse(after, current, before), Ok("a\nb\nC\nd\n".to_owned()));
    }

    proptest::proptest! {
        // A fixed seed: a CI run must not depend on which inputs a random seed happens to draw.
        #![proptest_config(proptest::test_runner::Config {
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7e7e),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]
        /// A change to one line, then a later change to another line (or lines inserted or
        /// removed elsewhere): the undo gives the later change applied to the text before.
        #[test]
        fn the_undo_keeps_any_later_change_to_other_lines(
            n in 3usize..12,
            ours in 0usize..12,
            other in 1usize..12,
            kind in 0u8..3,
            crlf: bool,
        ) {
            // `theirs` is another line than `ours` by construction, so no input is rejected.
            let (ours, theirs) = (ours % n, (ours % n + 1 + other % (n - 1)) % n);
            let br = if crlf { "\r\n" } else { "\n" };
            let lines: Vec<String> = (0..n).map(|i| format!("line {i}{br}")).collect();
            let before: String = lines.concat();
            let mut after_lines = lines.clone();
            after_lines[ours] = format!("OURS {ours}{br}");
            let after: String = after_lines.concat();
            let later = |mut v: Vec<String>| {
                match kind {
                    0 => v[theirs] = format!("THEIRS {theirs}{br}"),
                    1 => v.insert(theirs + usize::from(theirs > ours), format!("NEW{br}")),
                    _ => {
                        v.remove(theirs);
                    }
                }
                v.concat()
            };
            // Inserting right after our line touches nothing the undo changes; inserting at our
            // line's own place would be before it, also fine. Removing a neighbour is fine too.
            let current = later(after_lines.clone());
            let expected = later(lines.clone());
            proptest::prop_assert_eq!(reverse(&after, &current, &before), Ok(expected));
        }
    }
}
