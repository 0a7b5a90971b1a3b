//! Carrying a replacement into the file's own form after a tolerant match.
//!
//! A tolerant level found `old_string` in a region that differs from it in what the level ignores
//! (indentation, trailing whitespace, blank lines, Unicode normalization, typographic
//! punctuation). `new_string` is written in the model's form, so writing it as sent would change
//! text the model did not mean to change. A line diff of `old_string` against `new_string` says
//! which lines the model kept: those are written as the file has them, byte for byte. Changed and
//! added lines are re-indented to the file's indentation ([`reindent`]) and lose trailing
//! whitespace when the model's old lines had some and the file's have none. The file's blank
//! lines around kept lines stay where they are; blank lines inside a replaced run go with it.

use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::reindent::reindent;

/// How the lines of `old_string` correspond to the lines of the region found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// Line for line: the level matched as many lines as `old_string` has.
    Lines,
    /// Non-blank line for non-blank line: the level ignored blank and whitespace-only lines.
    NonBlank,
}

/// What a level's match allows to be carried.
#[derive(Debug, Clone, Copy)]
pub struct Carry {
    /// How lines correspond.
    pub pairing: Pairing,
    /// Whether changed lines are re-indented to the file's indentation.
    pub reindent: bool,
}

/// `new` written into `found`, the region a tolerant level matched for `old` (all three with `\n`
/// breaks). Falls back to the re-indented `new` when the lines do not correspond as `how` says.
pub fn carry(old: &str, new: &str, found: &str, how: Carry) -> String {
    // One final break shared by all three is set aside, so that it is neither a line of its own
    // nor lost.
    let eol = old.ends_with('\n') && new.ends_with('\n') && found.ends_with('\n');
    let cut = |s: &'_ str| -> String {
        if eol {
            s[..s.len() - 1].to_owned()
        } else {
            s.to_owned()
        }
    };
    let (old, new, found) = (cut(old), cut(new), cut(found));
    let olds: Vec<&str> = old.split('\n').collect();
    let news: Vec<&str> = new.split('\n').collect();
    let founds: Vec<&str> = found.split('\n').collect();
    let Some(pair) = pairs(&olds, &founds, how.pairing) else {
        return reindented(&old, &new, &found, how, eol);
    };
    // The paired lines alone, for re-indenting: `reindent` reads them side by side.
    let (mut old_paired, mut found_paired) = (Vec::new(), Vec::new());
    for (i, p) in pair.iter().enumerate() {
        if let Some(p) = *p {
            old_paired.push(olds[i]);
            found_paired.push(founds[p]);
        }
    }
    let changed: Vec<String> = if how.reindent {
        reindent(&old_paired.join("\n"), &new, &found_paired.join("\n")).split('\n').map(str::to_owned).collect()
    } else {
        news.iter().map(|l| (*l).to_owned()).collect()
    };
    let has_trailing = |l: &&str| l.len() != l.trim_end().len();
    let trim = old_paired.iter().any(has_trailing) && !found_paired.iter().any(has_trailing);
    let changed_line = |j: usize| if trim { changed[j].trim_end() } else { changed[j].as_str() };

    let mut out: Vec<&str> = Vec::with_capacity(news.len() + 4);
    let mut next = 0; // The first line of `found` not yet written or dropped.
    for op in capture_diff_slices(Algorithm::Myers, &olds, &news) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for p in pair[old_index..old_index + len].iter().flatten() {
                    out.extend_from_slice(&founds[next..=*p]);
                    next = p + 1;
                }
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                drop_run(&pair[old_index..old_index + old_len], &founds, &mut next, &mut out);
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                out.extend((new_index..new_index + new_len).map(changed_line));
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                drop_run(&pair[old_index..old_index + old_len], &founds, &mut next, &mut out);
                out.extend((new_index..new_index + new_len).map(changed_line));
            }
        }
    }
    out.extend_from_slice(&founds[next..]);
    let mut text = out.join("\n");
    if eol {
        text.push('\n');
    }
    text
}

/// For each line of `olds`, the line of `founds` it corresponds to; `None` for a blank line the
/// other side does not have. `None` overall when the two do not correspond.
fn pairs(olds: &[&str], founds: &[&str], pairing: Pairing) -> Option<Vec<Option<usize>>> {
    match pairing {
        Pairing::Lines => (olds.len() == founds.len()).then(|| (0..olds.len()).map(Some).collect()),
        Pairing::NonBlank => {
            // When both end in a line break, the empty piece after it is that break, not a blank
            // line: it pairs with the other's.
            let ends = olds.len() > 1 && founds.len() > 1 && olds.last() == Some(&"") && founds.last() == Some(&"");
            let (olds_in, founds_in) =
                if ends { (&olds[..olds.len() - 1], &founds[..founds.len() - 1]) } else { (olds, founds) };
            let solid = |l: &str| !l.trim().is_empty();
            let mut file = (0..founds_in.len()).filter(|&p| solid(founds_in[p]));
            let mut pair: Vec<Option<usize>> =
                olds_in.iter().map(|l| if solid(l) { Some(file.next()) } else { None }).map(Option::flatten).collect();
            let paired = pair.iter().flatten().count();
            let wanted = olds_in.iter().filter(|l| solid(l)).count();
            if paired != wanted || file.next().is_some() {
                return None;
            }
            if ends {
                pair.push(Some(founds.len() - 1));
            }
            Some(pair)
        }
    }
}

/// A deleted run of `old_string` lines: the file's lines before its first paired line are kept
/// (blank lines outside the run), everything up to its last paired line is dropped.
fn drop_run<'a>(run: &[Option<usize>], founds: &[&'a str], next: &mut usize, out: &mut Vec<&'a str>) {
    let mut paired = run.iter().flatten();
    if let Some(&first) = paired.next() {
        let last = paired.last().copied().unwrap_or(first);
        out.extend_from_slice(&founds[*next..first]);
        *next = last + 1;
    }
}

/// The fallback: `new` re-indented as a block (or as sent), with the shared break put back.
fn reindented(old: &str, new: &str, found: &str, how: Carry, eol: bool) -> String {
    let mut text = if how.reindent { reindent(old, new, found) } else { new.to_owned() };
    if eol {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        let lines = Carry { pairing: Pairing::Lines, reindent: true };
        let blank = Carry { pairing: Pairing::NonBlank, reindent: true };
        // (old, new, found, how, expected).
        let table = [
            // Kept lines come out as the file has them: no trailing spaces written back.
            ("a()  \nb()", "a()  \nc()  ", "a()\nb()", lines, "a()\nc()"),
            // The file's trailing spaces on a kept line stay; a changed line is as sent.
            ("a()\nb()", "a()\nc()", "a()   \nb()", lines, "a()   \nc()"),
            // Re-indented changed lines, kept lines byte for byte.
            ("if a:\n  b()\n", "if a:\n  c()\n  d()\n", "if a:\n\tb()\n", lines, "if a:\n\tc()\n\td()\n"),
            // A blank line of the file between kept and changed lines stays.
            ("a\nb", "a\nB", "a\n\nb", blank, "a\n\nB"),
            // A blank line `old_string` has and the file does not is not written.
            ("a\n\nb", "a\n\nB", "a\nb", blank, "a\nB"),
            // Blank lines inside a replaced run go with it.
            ("a\nb", "X", "a\n\nb", blank, "X"),
            // Deleting a line keeps the file's blank line before it.
            ("a\nb\nc", "a\nc", "a\n\nb\nc", blank, "a\n\nc"),
            // A trailing break shared by all three is kept; whitespace-only lines are blank.
            ("a\n  \nb\n", "a\n  \nb\nc\n", "a\n\nb\n", blank, "a\n\nb\nc\n"),
            // The break ending both `old_string` and the region is kept apart from blank lines.
            ("a\n\nb\n", "a\nc", "a\nb\n", blank, "a\nc"),
            ("a\nb\n", "a\nc\n\n", "a\n\n\nb\n", blank, "a\n\n\nc\n\n"),
            // Lines that do not correspond fall back to the re-indented block.
            ("a\nb", "c", "a", lines, "c"),
        ];
        for (old, new, found, how, want) in table {
            assert_eq!(carry(old, new, found, how), want, "{old:?} -> {new:?} in {found:?}");
        }
    }
}
