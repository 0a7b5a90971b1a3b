//! Following one sent edit through the editor's `didChange` stream, to tell what really happened
//! to it.
//!
//! An editor's `applied: true` says the edit was taken, not where it landed: a lenient editor
//! (Neovim's default handler with a version-0 buffer, any client sent unversioned edits) applies
//! it at the positions as sent even when the user typed first, and Neovim's handler answers
//! `applied: true` for an edit it skipped as stale. The stream of content changes after the
//! version the edit was computed on tells the cases apart:
//!
//! - **Landed.** Some state of the stream equals an earlier state with the edit applied where it
//!   was meant (its ranges carried through the user's changes in between): the user merely typed
//!   around it.
//! - **Misplaced.** Some state equals an earlier state with the edit applied at the positions as
//!   sent, which no longer pointed at the text the edit was computed on. The tracker then keeps
//!   carrying both the misplaced text and the intended place through later typing, so that a
//!   repair can be computed against whatever version the buffer is at by then ([`Track::repair`]).
//! - **Skipped.** A change the editor sent *after* answering shows no sign of the edit. Editors
//!   send each document's pending changes together, so an edit applied before the answer would
//!   be in it or before it.
//!
//! Every state is a rope sharing its unchanged leaves with the others, and comparisons skip shared
//! leaves, so following an edit in a large document copies nothing.

use std::ops::Range;

use ropey::Rope;

use crate::text::{position_to_offset, Position, PositionEncoding};

/// The most states followed before the tracker stops looking (a user typing for a long time
/// before the editor reports the edit); the verdict then stays open.
const MAX_STEPS: usize = 128;

/// One document's part of an edit as it was sent.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// The text the edit was computed on.
    pub base: Rope,
    /// The changes: byte ranges of `base` (sorted, disjoint) and their new text.
    pub changes: Vec<(Range<usize>, String)>,
    /// The same ranges as the LSP positions that were sent.
    pub positions: Vec<(Position, Position)>,
    /// The negotiated position encoding.
    pub enc: PositionEncoding,
    /// Whether the editor checks the edit's version before applying it: sent versioned, with a
    /// version above 0, as the first entry of the workspace edit (Neovim's handler checks only
    /// that one, and never version 0). The editor's buffer then cannot have moved past the
    /// base when it took the edit, so a change past the base without the edit means it was
    /// skipped.
    pub checked: bool,
}

/// What the stream has shown so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing decisive yet.
    Open,
    /// The edit landed where it was meant, in the change that produced `version`; `typed` when
    /// the user's keystrokes came before it or after it, so the buffer holds more than the edit.
    Landed { version: i32, typed: bool },
    /// The edit landed at the positions as sent, on a text that had changed meanwhile.
    Misplaced,
    /// A change sent after the editor's answer shows no sign of the edit.
    Skipped,
}

/// A state of the document in the stream.
#[derive(Debug)]
struct Step {
    /// The edit's ranges carried to this state (`None` once the user changed the text they cover).
    target: Option<Vec<Range<usize>>>,
    /// This state with the edit applied where it was meant.
    landed: Option<Rope>,
    /// This state with the edit applied at the sent positions, when that differs, and the
    /// regions it would replace.
    misplaced: Option<(Rope, Vec<Region>)>,
}

/// A region the misplaced edit wrote: where its text now stands and what it replaced.
#[derive(Debug, Clone)]
struct Region {
    start: usize,
    len: usize,
    old: String,
}

/// The misplaced edit and the place it was meant for, carried through the changes after it.
#[derive(Debug)]
struct Misplacement {
    /// Where the misplaced text stands in the current text.
    regions: Vec<Region>,
    /// Where the edit belongs in the current text with the misplaced text taken back.
    target: Option<Vec<Range<usize>>>,
}

/// How to put a misplaced edit right: the buffer's text at `version`, and the text it should hold.
#[derive(Debug)]
pub(crate) struct Repair {
    /// The version the repair is computed against.
    pub version: i32,
    /// The buffer's text at that version.
    pub current: Rope,
    /// The text with the misplaced edit taken back and the edit applied where it was meant.
    pub wanted: String,
}

/// The tracker of one sent edit in one document.
#[derive(Debug)]
pub(crate) struct Track {
    sent: Sent,
    steps: Vec<Step>,
    verdict: Verdict,
    misplacement: Option<Misplacement>,
    /// The arrival number of the last message read before the editor's answer, once it came.
    answered: Option<u64>,
    /// The arrival number of the last change seen.
    last_arrival: u64,
    /// Whether any change was seen since the base.
    moved: bool,
    /// The latest version and text seen.
    version: i32,
    current: Rope,
}

impl Track {
    /// Starts following `sent`, whose base is the document's text at `version`.
    pub fn new(sent: Sent, version: i32) -> Track {
        let current = sent.base.clone();
        let target = Some(sent.changes.iter().map(|(r, _)| r.clone()).collect());
        let mut track = Track {
            sent,
            steps: Vec::new(),
            verdict: Verdict::Open,
            misplacement: None,
            answered: None,
            last_arrival: 0,
            moved: false,
            version,
            current: current.clone(),
        };
        let step = track.step(current, target);
        track.steps.push(step);
        track
    }

    /// The verdict so far.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Follows one content change: bytes `range` of the previous text were replaced by `text`,
    /// giving `rope`, in a notification for `version` that arrived as message number `arrival`.
    pub fn observe(&mut self, range: Range<usize>, text: &str, rope: &Rope, version: i32, arrival: u64) {
        self.version = version;
        let previous = std::mem::replace(&mut self.current, rope.clone());
        self.last_arrival = arrival;
        self.moved = true;
        let inserted = text.len();
        match self.verdict {
            Verdict::Landed { version, .. } => self.verdict = Verdict::Landed { version, typed: true },
            Verdict::Skipped => {}
            Verdict::Misplaced => {
                if let Some(m) = &mut self.misplacement {
                    m.follow(&range, inserted);
                }
            }
            Verdict::Open => {
                if self.steps.len() >= MAX_STEPS {
                    return;
                }
                let target = self.steps.last().and_then(|s| s.target.as_ref()).and_then(|t| carry(t, &range, inserted));
                for (j, step) in self.steps.iter().enumerate() {
                    if step.landed.as_ref().is_some_and(|l| same_text(rope, l)) {
                        self.verdict = Verdict::Landed { version, typed: j > 0 };
                        return;
                    }
                    if let Some((m, regions)) = &step.misplaced {
                        if same_text(rope, m) {
                            self.verdict = Verdict::Misplaced;
                            self.misplacement =
                                Some(Misplacement { regions: regions.clone(), target: step.target.clone() });
                            return;
                        }
                    }
                }
                // An editor that sends the whole text at each sync (kak-lsp) never shows the
                // state with the user's typing and without the edit: work it out.
                let whole = range.start == 0 && range.end == previous.len_bytes();
                if whole && self.explain_by_unseen_state(&previous, rope, version) {
                    return;
                }
                let step = self.step(rope.clone(), target);
                self.steps.push(step);
            }
        }
    }

    /// Explains `now`, which replaced `previous` whole, as a state the editor never sent (the
    /// user's typing on `previous`) with the edit applied to it: where it was meant (landed), or
    /// at the positions as sent (misplaced). A state is only worked out where it is certain: the
    /// typing left the edit's own lines as they were and was all after them, or all on whole lines
    /// before them, and the edit's text stands at the sent positions of `now`. Sets the verdict
    /// and says whether it did.
    fn explain_by_unseen_state(&mut self, previous: &Rope, now: &Rope, version: i32) -> bool {
        let ([(sent_start, sent_end)], [(_, new)]) = (self.sent.positions.as_slice(), self.sent.changes.as_slice())
        else {
            return false;
        };
        let enc = self.sent.enc;
        let at = position_to_offset(now, *sent_start, enc).get();
        if now.len_bytes() < at + new.len() || now.byte_slice(at..at + new.len()) != new.as_str() {
            return false;
        }
        let (before, prev) = (String::from(now.byte_slice(..at)), String::from(previous));
        let after = String::from(now.byte_slice(at + new.len()..));
        let lines = |s: &str| s.bytes().filter(|&b| b == b'\n').count() as i64;
        let spans = i64::from(sent_end.line) - i64::from(sent_start.line);
        // Lines the typing added before the edit, if all of it was there.
        let shift = lines(&before) + spans + lines(&after) - lines(&prev);
        let mut candidates: Vec<String> = Vec::new();
        // The typing all after the edit's text, not touching it: that text is where it was. (Typing
        // right at its end reads the same as typing at its start with the edit misplaced.)
        let (s0, e0) =
            (position_to_offset(previous, *sent_start, enc).get(), position_to_offset(previous, *sent_end, enc).get());
        if prev.get(..s0) == Some(before.as_str()) {
            let unseen = format!("{before}{}{after}", &prev[s0..e0.max(s0)]);
            if single_change(&prev, &unseen).0.start > e0 {
                candidates.push(unseen);
            }
        }
        // The typing all on whole lines before the edit's: its lines moved by `shift`.
        let moved = |p: &Position| {
            let line = i64::from(p.line) - shift;
            u32::try_from(line).ok().map(|line| Position { line, character: p.character })
        };
        if let (Some(s), Some(e)) = (moved(sent_start), moved(sent_end)) {
            let (s1, e1) = (position_to_offset(previous, s, enc).get(), position_to_offset(previous, e, enc).get());
            let line_start = prev[..s1].rfind('\n').map_or(0, |i| i + 1);
            if shift != 0 && prev.get(e1.max(s1)..) == Some(after.as_str()) {
                let unseen = format!("{before}{}{after}", &prev[s1..e1.max(s1)]);
                if single_change(&prev, &unseen).0.end <= line_start {
                    candidates.push(unseen);
                }
            }
        }
        let target = self.steps.last().and_then(|s| s.target.clone());
        for unseen in candidates {
            let change = single_change(&prev, &unseen);
            let carried = target.as_ref().and_then(|t| carry(t, &change.0, change.1));
            let step = self.step(Rope::from_str(&unseen), carried);
            if step.landed.as_ref().is_some_and(|l| same_text(now, l)) {
                self.verdict = Verdict::Landed { version, typed: true };
                return true;
            }
            if let Some((m, regions)) = &step.misplaced {
                if same_text(now, m) {
                    self.verdict = Verdict::Misplaced;
                    self.misplacement = Some(Misplacement { regions: regions.clone(), target: step.target.clone() });
                    return true;
                }
            }
        }
        false
    }

    /// Marks the end of a notification: one sent after the answer that shows no sign of the edit
    /// means the editor skipped it, and so does any for an edit the editor checks the version of
    /// ([`Sent::checked`]). (Changes after a landing, in the same notification or later
    /// ones, are the user's: [`Track::observe`] marks the landing `typed`.)
    pub fn end_of_notification(&mut self) {
        self.check_skipped();
    }

    /// Records that the editor answered `applied: true` when `arrived` messages had been read.
    pub fn answered(&mut self, arrived: u64) {
        self.answered = Some(arrived);
        self.check_skipped();
    }

    fn check_skipped(&mut self) {
        let moved = self.moved;
        let after_answer = self.answered.is_some_and(|a| self.last_arrival > a);
        if self.verdict == Verdict::Open && (after_answer || (self.sent.checked && moved)) {
            self.verdict = Verdict::Skipped;
        }
    }

    /// How to move a misplaced edit to its place in the buffer as it is now, or `None` when the
    /// user has since changed the misplaced text or the text the edit was meant for.
    pub fn repair(&self) -> Option<Repair> {
        let m = self.misplacement.as_ref()?;
        let target = m.target.as_ref()?;
        let mut text = String::from(&self.current);
        // Take back the misplaced text (from the end, so earlier offsets stay valid)...
        for r in m.regions.iter().rev() {
            text.replace_range(r.start..r.start + r.len, &r.old);
        }
        // ...then apply the edit where it was meant.
        for (range, (_, new)) in target.iter().zip(&self.sent.changes).rev() {
            if range.end > text.len() || !text.is_char_boundary(range.start) || !text.is_char_boundary(range.end) {
                return None;
            }
            text.replace_range(range.clone(), new);
        }
        Some(Repair { version: self.version, current: self.current.clone(), wanted: text })
    }

    /// A state of the stream, with the texts the edit would make of it.
    fn step(&self, rope: Rope, target: Option<Vec<Range<usize>>>) -> Step {
        let landed = target.as_ref().map(|t| {
            let mut r = rope.clone();
            replace_all(&mut r, t.iter().cloned().zip(self.sent.changes.iter().map(|(_, s)| s.as_str())));
            r
        });
        let sent: Vec<Range<usize>> = self
            .sent
            .positions
            .iter()
            .map(|(s, e)| {
                let start = position_to_offset(&rope, *s, self.sent.enc).get();
                start..position_to_offset(&rope, *e, self.sent.enc).get().max(start)
            })
            .collect();
        let misplaced = (target.as_ref() != Some(&sent)).then(|| {
            let mut r = rope.clone();
            let mut regions = Vec::with_capacity(sent.len());
            let mut shift: isize = 0;
            for (range, (_, new)) in sent.iter().zip(&self.sent.changes) {
                let old = String::from(rope.byte_slice(range.clone()));
                regions.push(Region { start: range.start.saturating_add_signed(shift), len: new.len(), old });
                shift += new.len() as isize - range.len() as isize;
            }
            replace_all(&mut r, sent.iter().cloned().zip(self.sent.changes.iter().map(|(_, s)| s.as_str())));
            (r, regions)
        });
        Step { target, landed, misplaced }
    }
}

impl Misplacement {
    /// Carries the misplaced regions and the intended place through one change of the buffer.
    fn follow(&mut self, range: &Range<usize>, inserted: usize) {
        let delta = inserted as isize - range.len() as isize;
        if self.regions.iter().any(|r| range.start < r.start + r.len && range.end > r.start) {
            // The user changed the misplaced text itself: it can no longer be taken back exactly.
            self.target = None;
            return;
        }
        // The change's place in the text without the misplaced edit.
        let before = |p: usize| -> isize {
            self.regions.iter().filter(|r| r.start + r.len <= p).map(|r| r.len as isize - r.old.len() as isize).sum()
        };
        let (start, end) = (
            range.start.saturating_add_signed(-before(range.start)),
            range.end.saturating_add_signed(-before(range.end)),
        );
        self.target = self.target.take().and_then(|t| carry(&t, &(start..end), inserted));
        for r in &mut self.regions {
            if range.end <= r.start {
                r.start = r.start.saturating_add_signed(delta);
            }
        }
    }
}

/// The one change that turns `from` into `to`: the byte range of `from` between their common
/// prefix and suffix, and how many bytes replace it.
fn single_change(from: &str, to: &str) -> (Range<usize>, usize) {
    let prefix = from.bytes().zip(to.bytes()).take_while(|(a, b)| a == b).count();
    let room = from.len().min(to.len()) - prefix;
    let suffix = from.bytes().rev().zip(to.bytes().rev()).take(room).take_while(|(a, b)| a == b).count();
    (prefix..from.len() - suffix, to.len() - suffix - prefix)
}

/// Carries byte ranges through a change that replaced `range` with `inserted` bytes; `None` when
/// the change touched the inside of one of them.
fn carry(ranges: &[Range<usize>], range: &Range<usize>, inserted: usize) -> Option<Vec<Range<usize>>> {
    let delta = inserted as isize - range.len() as isize;
    ranges
        .iter()
        .map(|r| {
            if r.end <= range.start && !(r.is_empty() && r.start == range.start && range.is_empty()) {
                Some(r.clone())
            } else if r.start >= range.end {
                Some(r.start.saturating_add_signed(delta)..r.end.saturating_add_signed(delta))
            } else {
                None
            }
        })
        .collect()
}

/// Replaces byte ranges (sorted, disjoint) of `rope`, from the last one back, so that each range
/// is still in the original text's offsets.
pub(super) fn replace_all<'t>(rope: &mut Rope, edits: impl DoubleEndedIterator<Item = (Range<usize>, &'t str)>) {
    for (range, text) in edits.rev() {
        crate::text::replace_bytes(rope, range, text);
    }
}

/// Whether the buffer text `seen` is `expected`, allowing the one difference an editor that
/// keeps the final line break as a buffer property (Neovim's 'eol') makes: a final break added
/// to a text that had none.
pub(crate) fn same_text(seen: &Rope, expected: &Rope) -> bool {
    if crate::text::ropes_eq(seen, expected) {
        return true;
    }
    let extra = seen.len_bytes().wrapping_sub(expected.len_bytes());
    if !(1..=2).contains(&extra) || !crate::text::rope_final_break(expected).is_empty() {
        return false;
    }
    let tail = seen.byte_slice(expected.len_bytes()..);
    matches!(String::from(tail).as_str(), "\n" | "\r\n" | "\r")
        && seen.byte_slice(..expected.len_bytes()) == expected.slice(..)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracker for replacing `old` with `new` in `base` (first occurrence), in utf-8 positions.
    fn track(base: &str, old: &str, new: &str) -> Track {
        let start = base.find(old).expect("old in base");
        let rope = Rope::from_str(base);
        let end = start + old.len();
        let pos = |o| crate::text::offset_to_position(&rope, crate::text::Offset::new(o), PositionEncoding::Utf8);
        let sent = Sent {
            base: rope.clone(),
            changes: vec![(start..end, new.to_owned())],
            positions: vec![(pos(start), pos(end))],
            enc: PositionEncoding::Utf8,
            checked: false,
        };
        Track::new(sent, 1)
    }

    /// The editor's side: a text and the changes it reports.
    struct Buffer {
        text: String,
        version: i32,
        arrival: u64,
    }

    impl Buffer {
        fn change(&mut self, t: &mut Track, at: Range<usize>, text: &str) {
            self.text.replace_range(at.clone(), text);
            self.arrival += 1;
            t.observe(at, text, &Rope::from_str(&self.text), self.version, self.arrival);
        }

        fn end(&mut self, t: &mut Track) {
            self.version += 1;
            t.end_of_notification();
        }
    }

    const BASE: &str = "one\ntwo\nthree\n";

    #[test]
    fn landing_with_typing_before_and_after_is_landed() {
        let mut t = track(BASE, "three", "THREE");
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 0 };
        b.change(&mut t, 0..0, "x");
        // The editor applied the edit where it belongs (in its text, one byte later).
        b.change(&mut t, 9..14, "THREE");
        b.change(&mut t, 1..1, "y");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Landed { version: 2, typed: true });
    }

    #[test]
    fn an_exact_landing_is_untyped() {
        let mut t = track(BASE, "two", "2");
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 0 };
        b.change(&mut t, 4..7, "2");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Landed { version: 2, typed: false });
    }

    #[test]
    fn a_landing_at_stale_positions_is_misplaced_and_repaired() {
        let mut t = track(BASE, "three", "THREE");
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 0 };
        // The user adds a line at the top; the editor applies the edit at line 2 as sent.
        b.change(&mut t, 0..0, "zero\n");
        b.change(&mut t, 9..12, "THREE");
        assert_eq!(b.text, "zero\none\nTHREE\nthree\n");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Misplaced);
        // More typing after it, on the first line.
        b.change(&mut t, 4..4, "!");
        b.end(&mut t);
        let r = t.repair().expect("repairable");
        assert_eq!(String::from(&r.current), "zero!\none\nTHREE\nthree\n");
        assert_eq!(r.wanted, "zero!\none\ntwo\nTHREE\n");
    }

    #[test]
    fn typing_into_the_misplaced_text_leaves_it_unrepairable() {
        let mut t = track("a\nb\nc\n", "b", "BBB");
        let mut b = Buffer { text: "a\nb\nc\n".into(), version: 2, arrival: 0 };
        b.change(&mut t, 0..0, "\n");
        b.change(&mut t, 1..2, "BBB");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Misplaced);
        b.change(&mut t, 2..2, "!");
        assert!(t.repair().is_none());
    }

    #[test]
    fn a_change_after_the_answer_without_the_edit_means_skipped() {
        let mut t = track(BASE, "two", "2");
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 5 };
        b.change(&mut t, 0..0, "x");
        b.end(&mut t);
        t.answered(5);
        assert_eq!(t.verdict(), Verdict::Skipped, "the change arrived after the answer");
        let mut t = track(BASE, "two", "2");
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 5 };
        b.change(&mut t, 0..0, "x");
        b.end(&mut t);
        t.answered(6);
        assert_eq!(t.verdict(), Verdict::Open, "read before the answer: the edit may follow");
        // An editor that checks the version cannot take the edit once its buffer moved on.
        let mut t = track(BASE, "two", "2");
        t.sent.checked = true;
        let mut b = Buffer { text: BASE.into(), version: 2, arrival: 5 };
        b.change(&mut t, 0..0, "x");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Skipped);
    }

    /// An editor that sends the whole text once per sync (kak-lsp): the state with the user's
    /// typing and without the edit is never seen, and is worked out where that is certain.
    #[test]
    fn a_whole_text_sync_is_explained_by_the_state_it_skipped() {
        let base = "alpha\nbeta\ngamma typed\n";
        let whole = |t: &mut Track, now: &str| {
            let len = String::from(&t.current).len();
            t.observe(0..len, now, &Rope::from_str(now), 3, 1);
            t.end_of_notification();
        };
        // A line typed above; the editor put the edit at the old line and column.
        let mut t = track(base, "beta", "BETA");
        t.sent.checked = true;
        whole(&mut t, "new line\nBETAa\nbeta\ngamma typed\n");
        assert_eq!(t.verdict(), Verdict::Misplaced);
        let r = t.repair().expect("repairable");
        assert_eq!(r.wanted, "new line\nalpha\nBETA\ngamma typed\n");
        // Typing after the edit's line, the edit where it was meant.
        let mut t = track(base, "beta", "BETA");
        t.sent.checked = true;
        whole(&mut t, "alpha\nBETA\ngamma typed more\n");
        assert_eq!(t.verdict(), Verdict::Landed { version: 3, typed: true });
        // `x` typed where the edit starts, and the edit misplaced onto it, reads the same as `a`
        // typed where it ends with the edit in place: nothing is certain, so the sync shows the
        // edit skipped, as before.
        let mut t = track(base, "beta", "BETA");
        t.sent.checked = true;
        whole(&mut t, "alpha\nBETAa\ngamma typed\n");
        assert_eq!(t.verdict(), Verdict::Skipped);
    }

    #[test]
    fn a_final_break_added_by_the_editor_still_counts() {
        let mut t = track("a\nb", "b", "c");
        let mut b = Buffer { text: "a\nb".into(), version: 2, arrival: 0 };
        b.change(&mut t, 2..3, "c\n");
        b.end(&mut t);
        assert_eq!(t.verdict(), Verdict::Landed { version: 2, typed: false });
    }
}
