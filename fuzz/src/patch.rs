//! `apply_patch`: the unified-diff and `*** Begin Patch` parsers and the applier, through the
//! tool over open buffers.
//!
//! A case is a few files (mixed line breaks, with or without a final newline, lines drawn from a
//! small alphabet so that they repeat) and a patch written from them: hunks at random places
//! with some context, removed and added lines, in unified form (with line numbers, or bare `@@`)
//! or in the envelope (anchors, `*** End of File`, `*** Move to:`), plus files added and deleted.
//! The expected text of every file is computed by a model that places each hunk by the documented
//! rule at the exact level (a numbered hunk at its line; a hunk without numbers at its one
//! occurrence after the previous hunk, after its anchor, or, a pure insertion, at the end; a hunk
//! whose lines or first anchor occur more than once there refuses the whole patch), keeps
//! untouched and context lines byte for byte, gives added lines the file's break, and follows
//! `\ No newline at end of file`. The tool's plan, applied to the buffers, must give exactly those
//! texts. Then one hunk is made impossible (or an added file made to exist already): the tool
//! must fail with `patch_failed` naming that file, and return no plan at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tether::config::{Cancel, Config};
use tether::edit::{apply_changes, FileOp};
use tether::text::{Document, LineEnding};
use tether::tools::apply_patch::{apply_patch, ApplyPatchArgs};
use tether::tools::{Context, Output};
use tether::vfs::{OpenDocument, Overlay, Vfs};
use tether::workspace::Workspace;
use tether::ErrorKind;

use crate::input::Input;
use crate::model::split_lines;

/// Line contents: repeated, blank, indented, trailing spaces, typographic punctuation, and
/// lines that look like patch syntax.
const LINES: &[&str] = &[
    "a",
    "b",
    "a",
    "b",
    "c",
    "",
    "",
    " ",
    "  a",
    "a  ",
    "\ta",
    "fn f() {",
    "}",
    "x = 1;",
    "é",
    "😀",
    "“q”",
    "a—b",
    "-- a",
    "++ b",
    "--- x",
    "+++ y",
    "@@",
    "@@ -1 +1 @@",
    "*** End Patch",
    "*** Update File: f0.txt",
    "\\ x",
    "```",
];

/// Line breaks of generated files.
const BREAKS: &[&str] = &["\n", "\n", "\n", "\r\n", "\r\n", "\r"];

/// A line no file ever contains: a hunk expecting it cannot apply at any tolerance.
const MISSING: &str = "§ not in any file §";

/// One hunk of a generated patch: `cb` context lines from `start`, `rm` removed lines, the added
/// lines, `ca` context lines.
#[derive(Debug, Clone)]
struct Region {
    start: usize,
    cb: usize,
    rm: usize,
    ca: usize,
    added: Vec<String>,
    /// A unified hunk with line numbers (otherwise a bare `@@`: found forward).
    numbered: bool,
    /// The envelope's `@@ anchor`.
    anchor: Option<String>,
    /// The envelope's `*** End of File`.
    eof: bool,
}

impl Region {
    fn old_len(&self) -> usize {
        self.cb + self.rm + self.ca
    }

    /// The hunk's lines against `old`: (' ', '-' or '+', text). The old line `broken`, if the
    /// hunk has it, reads [`MISSING`].
    fn lines(&self, old: &[(&str, &str)], broken: Option<usize>) -> Vec<(char, String)> {
        let at = |i: usize| {
            let k = self.start + i;
            if broken == Some(k) {
                MISSING.to_owned()
            } else {
                old[k].0.to_owned()
            }
        };
        let mut out = Vec::new();
        out.extend((0..self.cb).map(|i| (' ', at(i))));
        out.extend((self.cb..self.cb + self.rm).map(|i| ('-', at(i))));
        out.extend(self.added.iter().map(|t| ('+', t.clone())));
        out.extend((self.cb + self.rm..self.old_len()).map(|i| (' ', at(i))));
        out
    }
}

/// What the patch does to one file.
#[derive(Debug, Clone)]
enum Change {
    Update { regions: Vec<Region>, new_final: bool, move_to: Option<String> },
    Add { lines: Vec<String>, final_newline: bool },
    Delete { with_hunks: bool },
}

/// One file section.
#[derive(Debug, Clone)]
struct Section {
    name: String,
    change: Change,
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let envelope = input.chance(1, 2);
    let git = input.chance(1, 2);
    let count = input.range(1, 3);
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for k in 0..count {
        files.insert(format!("f{k}.txt"), file_text(&mut input));
    }
    let mut sections = Vec::new();
    for (k, (name, text)) in files.iter().enumerate() {
        let change = match input.below(8) {
            0 if k > 0 => Change::Delete { with_hunks: !envelope && input.chance(1, 2) },
            1 => continue,
            _ => match update(&mut input, text, envelope, k) {
                Some(change) => change,
                None => continue,
            },
        };
        sections.push(Section { name: name.clone(), change });
    }
    if input.chance(1, 3) {
        let n = input.below(4);
        let lines = (0..n).map(|_| input.pick(LINES).to_owned()).collect();
        let final_newline = envelope || n == 0 || !input.chance(1, 3);
        sections.push(Section { name: "n0.txt".into(), change: Change::Add { lines, final_newline } });
    }
    if sections.is_empty() {
        return;
    }
    if std::env::var_os("TETHER_FUZZ_DEBUG").is_some() {
        eprintln!("{files:#?}\n{sections:#?}");
    }
    let patch = render(&files, &sections, envelope, git, None);
    let Some(expected) = expected(&files, &sections, envelope) else {
        // A hunk names no one place: the whole patch is refused, whichever copy it may mean.
        match run(&files, &patch) {
            Err((ErrorKind::PatchFailed, message)) => assert!(message.contains("nothing was changed"), "{message}"),
            other => panic!("a patch whose context names no one place was not refused: {other:?}\n{patch}"),
        }
        return;
    };
    match run(&files, &patch) {
        Ok(got) => assert_eq!(got, expected, "the patch's result\n{patch}"),
        Err(e) => panic!("a patch written from the files did not apply: {e:?}\n{patch}"),
    }
    let mut failing = "f0.txt".to_owned();

    // The same patch made to fail in one place fails whole.
    let patch = if input.chance(1, 4) {
        // A section that creates an existing file, the only one naming it.
        let mut broken: Vec<Section> = sections.into_iter().filter(|s| s.name != "f0.txt").collect();
        broken.push(Section {
            name: "f0.txt".into(),
            change: Change::Add { lines: vec!["x".into()], final_newline: true },
        });
        render(&files, &broken, envelope, git, None)
    } else {
        let Some((name, line)) = corrupt(&mut input, &sections) else { return };
        failing = name;
        render(&files, &sections, envelope, git, Some((&failing, line)))
    };
    match run(&files, &patch) {
        Ok(got) => panic!("a patch with an impossible section applied: {got:?}\n{patch}"),
        Err((kind, message)) => {
            assert_eq!(kind, ErrorKind::PatchFailed, "{message}\n{patch}");
            assert!(message.contains(&failing), "the error names {failing}: {message}\n{patch}");
        }
    }
}

/// A file's text: lines from [`LINES`] with breaks from [`BREAKS`] (one style, or mixed), with
/// or without a final break.
fn file_text(input: &mut Input<'_>) -> String {
    let n = input.below(14);
    let mixed = input.chance(1, 4);
    let style = input.pick(BREAKS);
    let mut text = String::new();
    for i in 0..n {
        text.push_str(input.pick(LINES));
        if i + 1 < n || input.chance(3, 4) {
            text.push_str(if mixed { input.pick(BREAKS) } else { style });
        }
    }
    text
}

/// An update of `text`: non-overlapping hunks in file order, perhaps a move. `None` when no hunk
/// fits.
fn update(input: &mut Input<'_>, text: &str, envelope: bool, k: usize) -> Option<Change> {
    let old = split_lines(text);
    let n = old.len();
    let old_final = n == 0 || !old[n - 1].1.is_empty();
    let mut regions: Vec<Region> = Vec::new();
    let mut cursor = 0;
    let hunks = input.range(1, 4);
    while regions.len() < hunks {
        let start = cursor + input.below(4);
        if start > n {
            break;
        }
        let room = n - start;
        let cb = input.below(3).min(room);
        let rm = input.below(3).min(room - cb);
        let ca = input.below(3).min(room - cb - rm);
        let mut ca = ca;
        let k_added = input.below(3);
        let mut added: Vec<String> = (0..k_added).map(|_| input.pick(LINES).to_owned()).collect();
        if rm == 0 && added.is_empty() {
            // Every hunk changes something.
            added.push("inserted".into());
        }
        let numbered = !input.chance(1, 8);
        if !envelope && !numbered {
            // A patch's trailing whitespace-only lines are dropped, and after a hunk without
            // numbers nothing says they were its context: such a hunk ends otherwise.
            while ca > 0 && old[start + cb + rm + ca - 1].0.trim().is_empty() {
                ca -= 1;
            }
        }
        let mut region = Region { start, cb, rm, ca, added, numbered, anchor: None, eof: false };
        let end = start + region.old_len();
        if envelope {
            // An anchor: the line before the hunk, when it is after the previous hunk and reads
            // the same once `@@ ` and trailing whitespace are taken off.
            if start > cursor && input.chance(1, 3) {
                let line = old[start - 1].0;
                if !line.trim().is_empty() && line.trim_end() == line && !line.starts_with('-') {
                    region.anchor = Some(line.to_owned());
                }
            }
            region.eof = end == n && input.chance(1, 2);
        }
        regions.push(region);
        cursor = end;
        if end == n {
            // Nothing comes after a hunk that reaches the end.
            break;
        }
    }
    // A removed `-- x` then an added `++ y` read `--- x` and `+++ y`: only counts tell them from
    // the next file's headers, so such a hunk, and the one after it, have numbers.
    for i in 0..regions.len() {
        let lines = regions[i].lines(&old, None);
        let headers = lines
            .windows(2)
            .any(|w| w[0].0 == '-' && w[0].1.starts_with("-- ") && w[1].0 == '+' && w[1].1.starts_with("++ "));
        if headers {
            regions[i].numbered = true;
            if let Some(next) = regions.get_mut(i + 1) {
                next.numbered = true;
            }
        }
    }
    // The new final newline, and whether it can differ from the old one (see `markers`).
    let mut new_final = old_final;
    if let Some(last) = regions.last() {
        if !envelope && last.start + last.old_len() == n && last.ca == 0 && !last.added.is_empty() {
            new_final = if !old_final && last.rm == 0 { false } else { input.chance(1, 2) };
        } else if !envelope && last.start + last.old_len() == n && n > 0 && !old_final && last.ca == 0 && last.rm > 0 {
            new_final = true;
        }
    }
    let move_to = (input.chance(1, 6)).then(|| format!("m{k}.txt"));
    (!regions.is_empty()).then_some(Change::Update { regions, new_final, move_to })
}

/// Where `\ No newline at end of file` goes in a unified hunk that reaches the end of a file:
/// after which hunk line (index into `Region::lines`) for the old side and for the new side.
fn markers(region: &Region, n: usize, old_final: bool, new_final: bool) -> (Option<usize>, Option<usize>) {
    if region.start + region.old_len() != n {
        return (None, None);
    }
    let len = region.cb + region.rm + region.added.len() + region.ca;
    if region.ca > 0 || (region.added.is_empty() && region.rm == 0) {
        // Ends with a context line: one marker for both sides (they agree, see `update`).
        return if old_final || len == 0 { (None, None) } else { (Some(len - 1), None) };
    }
    let last_removed = (region.rm > 0).then(|| region.cb + region.rm - 1);
    let old = if old_final || n == 0 { None } else { last_removed };
    let new = if new_final || region.added.is_empty() { None } else { Some(len - 1) };
    (old, new)
}

/// The patch text. With `broken` (a file and an old line index), a hunk line standing for that
/// line of that file reads [`MISSING`] instead.
///
/// A unified patch has `diff --git` lines when `git` is set or a section has nothing but git's
/// headers (an empty new file, a deletion without hunks): after such a section, a plain `---`
/// line would read as its own.
fn render(
    files: &BTreeMap<String, String>,
    sections: &[Section],
    envelope: bool,
    git: bool,
    broken: Option<(&str, usize)>,
) -> String {
    let git = git
        || sections.iter().any(|s| match &s.change {
            Change::Add { lines, .. } => lines.is_empty(),
            Change::Delete { with_hunks } => !with_hunks || files[&s.name].is_empty(),
            Change::Update { .. } => false,
        });
    let mut out = String::new();
    if envelope {
        out.push_str("*** Begin Patch\n");
    }
    for s in sections {
        let base = files.get(&s.name).map_or("", String::as_str);
        let old = split_lines(base);
        let n = old.len();
        let old_final = n == 0 || !old[n - 1].1.is_empty();
        let broken_line = broken.filter(|(name, _)| *name == s.name).map(|(_, line)| line);
        let lines_of = |r: &Region| r.lines(&old, broken_line);
        if git && !envelope {
            let to = match &s.change {
                Change::Update { move_to: Some(to), .. } => to,
                _ => &s.name,
            };
            out.push_str(&format!("diff --git a/{} b/{to}\n", s.name));
            match &s.change {
                Change::Add { .. } => out.push_str("new file mode 100644\n"),
                Change::Delete { .. } => out.push_str("deleted file mode 100644\n"),
                Change::Update { .. } => {}
            }
        }
        match (&s.change, envelope) {
            (Change::Add { lines, .. }, true) => {
                out.push_str(&format!("*** Add File: {}\n", s.name));
                for l in lines {
                    out.push_str(&format!("+{l}\n"));
                }
            }
            (Change::Add { lines, final_newline }, false) => {
                // An empty new file has git's headers only.
                if !lines.is_empty() {
                    out.push_str(&format!("--- /dev/null\n+++ b/{}\n", s.name));
                    out.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
                    for l in lines {
                        out.push_str(&format!("+{l}\n"));
                    }
                    if !final_newline {
                        out.push_str("\\ No newline at end of file\n");
                    }
                }
            }
            (Change::Delete { .. }, true) => out.push_str(&format!("*** Delete File: {}\n", s.name)),
            (Change::Delete { with_hunks }, false) => {
                if *with_hunks && n > 0 {
                    out.push_str(&format!("--- a/{}\n+++ /dev/null\n@@ -1,{n} +0,0 @@\n", s.name));
                    for (content, _) in &old {
                        out.push_str(&format!("-{content}\n"));
                    }
                    if !old_final {
                        out.push_str("\\ No newline at end of file\n");
                    }
                }
            }
            (Change::Update { regions, move_to, .. }, true) => {
                out.push_str(&format!("*** Update File: {}\n", s.name));
                if let Some(to) = move_to {
                    out.push_str(&format!("*** Move to: {to}\n"));
                }
                for (i, r) in regions.iter().enumerate() {
                    let lines = lines_of(r);
                    let first_blank = lines.first().is_none_or(|(c, t)| format!("{c}{t}").trim().is_empty());
                    match &r.anchor {
                        Some(a) => out.push_str(&format!("@@ {a}\n")),
                        // The first hunk may leave out its `@@` (when its first line is not blank,
                        // which the parser would skip as a separator).
                        None if i == 0 && !first_blank && r.start % 2 == 1 => {}
                        None => out.push_str("@@\n"),
                    }
                    let last = lines.len().saturating_sub(1);
                    for (j, (c, t)) in lines.iter().enumerate() {
                        // An empty context line may be written as an empty line, except last.
                        if *c == ' ' && t.is_empty() && j < last && j % 2 == 0 {
                            out.push('\n');
                        } else {
                            out.push_str(&format!("{c}{t}\n"));
                        }
                    }
                    if r.eof {
                        out.push_str("*** End of File\n");
                    }
                }
            }
            (Change::Update { regions, move_to, new_final }, false) => {
                let to = move_to.as_deref().unwrap_or(&s.name);
                out.push_str(&format!("--- a/{}\n+++ b/{to}\n", s.name));
                let mut delta: isize = 0;
                for r in regions {
                    let lines = lines_of(r);
                    let (o, nw) = (r.old_len(), r.cb + r.added.len() + r.ca);
                    let new_at = r.start.saturating_add_signed(delta);
                    let range = |at: usize, len: usize| {
                        let first = if len > 0 { at + 1 } else { at };
                        if len == 1 && r.start % 3 == 0 {
                            format!("{first}")
                        } else {
                            format!("{first},{len}")
                        }
                    };
                    if r.numbered {
                        out.push_str(&format!("@@ -{} +{} @@\n", range(r.start, o), range(new_at, nw)));
                    } else {
                        out.push_str("@@\n");
                    }
                    delta += nw as isize - o as isize;
                    let (om, nm) = markers(r, n, old_final, *new_final);
                    let last = lines.len().saturating_sub(1);
                    for (j, (c, t)) in lines.iter().enumerate() {
                        if *c == ' ' && t.is_empty() && j < last && j % 2 == 1 && r.numbered {
                            out.push('\n');
                        } else {
                            out.push_str(&format!("{c}{t}\n"));
                        }
                        if om == Some(j) || nm == Some(j) {
                            out.push_str("\\ No newline at end of file\n");
                        }
                    }
                }
            }
        }
    }
    if envelope {
        out.push_str("*** End Patch\n");
    }
    out
}

/// Chooses one old line of one hunk of an updated file to break: the file and the line.
fn corrupt(input: &mut Input<'_>, sections: &[Section]) -> Option<(String, usize)> {
    let mut candidates = Vec::new();
    for s in sections {
        if let Change::Update { regions, .. } = &s.change {
            for r in regions {
                candidates.extend((r.start..r.start + r.old_len()).map(|line| (s.name.clone(), line)));
            }
        }
    }
    (!candidates.is_empty()).then(|| candidates.swap_remove(input.below(candidates.len())))
}

/// The text of each file after the patch, by the model.
fn expected(
    files: &BTreeMap<String, String>,
    sections: &[Section],
    envelope: bool,
) -> Option<BTreeMap<String, String>> {
    let mut out = files.clone();
    for s in sections {
        match &s.change {
            Change::Add { lines, final_newline } => {
                let mut text = lines.join("\n");
                if *final_newline && !lines.is_empty() {
                    text.push('\n');
                }
                out.insert(s.name.clone(), text);
            }
            Change::Delete { .. } => {
                out.remove(&s.name);
            }
            Change::Update { regions, new_final, move_to } => {
                let base = &files[&s.name];
                let text = apply_model(base, regions, *new_final, envelope)?;
                out.remove(&s.name);
                out.insert(move_to.clone().unwrap_or_else(|| s.name.clone()), text);
            }
        }
    }
    Some(out)
}

/// A hunk placed by the model: its first old line, its lines, and whether it says the old side
/// and the new side end without a newline.
type Placed = (usize, Vec<(char, String)>, bool, bool);

/// `base` with `regions` applied where the documented rules place them, at the exact level; `None`
/// when a hunk without line numbers names no one place (its lines, or its first `@@` line, occur
/// more than once after the previous hunk, beyond one copy for each hunk with the same lines), so
/// that the whole patch must be refused.
fn apply_model(base: &str, regions: &[Region], new_final: bool, envelope: bool) -> Option<String> {
    let old = split_lines(base);
    let n = old.len();
    let matches =
        |at: usize, pat: &[String]| at + pat.len() <= n && pat.iter().enumerate().all(|(k, p)| old[at + k].0 == p);
    let mut cursor = 0;
    let old_final = n == 0 || !old[n - 1].1.is_empty();
    // Each hunk with its lines and the flags its `\ No newline at end of file` markers set: after a
    // removed line the old side's, after an added line the new side's, after context both.
    let mut placed: Vec<Placed> = Vec::new();
    let pattern = |r: &Region| -> Vec<String> {
        r.lines(&old, None).into_iter().filter(|(c, _)| *c != '+').map(|(_, t)| t).collect()
    };
    let count = |from: usize, pat: &[String]| (from..n).filter(|&i| matches(i, pat)).count();
    for (index, r) in regions.iter().enumerate() {
        let lines = r.lines(&old, None);
        let (om, nm) = if envelope { (None, None) } else { markers(r, n, old_final, new_final) };
        let old_flag = om.is_some();
        let new_flag = nm.is_some() || om.is_some_and(|j| lines[j].0 == ' ');
        let pat: Vec<String> = lines.iter().filter(|(c, _)| *c != '+').map(|(_, t)| t.clone()).collect();
        let m = pat.len();
        let forward = envelope || !r.numbered;
        if forward {
            if let Some(a) = &r.anchor {
                if count(cursor, std::slice::from_ref(a)) > 1 {
                    return None;
                }
            } else if m > 0 && !r.eof {
                let unplaced = |q: &Region| (envelope || !q.numbered) && q.anchor.is_none() && !q.eof;
                let same = regions[index..].iter().filter(|q| unplaced(q) && pattern(q) == pat).count();
                if count(cursor, &pat) > same {
                    return None;
                }
            }
        }
        let pos = if !forward {
            // A numbered hunk is where its numbers say: the exact match at its stated line wins.
            assert!(m == 0 || matches(r.start, &pat), "the generator wrote a hunk that is not in the file");
            if m == 0 {
                r.start.clamp(cursor, n)
            } else {
                r.start
            }
        } else {
            let mut anchor_at = None;
            if let Some(a) = &r.anchor {
                let i = (cursor..n).find(|&i| old[i].0 == a).expect("the anchor is in the file");
                anchor_at = Some(i);
            }
            if m == 0 {
                match (r.eof, anchor_at) {
                    (true, _) => n,
                    (false, Some(i)) => i + 1,
                    (false, None) => {
                        // At the end, and the next hunk is looked for from the same place.
                        placed.push((n, lines, old_flag, new_flag));
                        continue;
                    }
                }
            } else if r.eof {
                n - m
            } else {
                let (lo, hint) = anchor_at.map_or((cursor, cursor), |i| (i, i + 1));
                outward(lo, n - m, hint, |i| matches(i, &pat)).expect("the hunk is in the file")
            }
        };
        cursor = pos + m;
        placed.push((pos, lines, old_flag, new_flag));
    }
    placed.sort_by_key(|p| p.0);
    let brk = LineEnding::detect(base).break_for(base);
    let mut out: Vec<(String, &str)> = Vec::new();
    let mut at = 0;
    let mut final_newline = old_final;
    for (pos, lines, old_flag, new_flag) in &placed {
        out.extend(old[at..*pos].iter().map(|(c, b)| ((*c).to_owned(), *b)));
        let mut fi = *pos;
        for (c, t) in lines {
            match c {
                ' ' => {
                    out.push((old[fi].0.to_owned(), old[fi].1));
                    fi += 1;
                }
                '-' => fi += 1,
                _ => out.push((t.clone(), brk)),
            }
        }
        at = fi;
        if fi == n {
            // A hunk that ends at the end of the file decides the final newline.
            if *new_flag {
                final_newline = false;
            } else if *old_flag {
                final_newline = true;
            }
        }
    }
    out.extend(old[at..].iter().map(|(c, b)| ((*c).to_owned(), *b)));
    let last = out.len().saturating_sub(1);
    let mut text = String::new();
    let mut written = 0;
    for (i, (content, b)) in out.iter().enumerate() {
        text.push_str(content);
        let b = if b.is_empty() { brk } else { b };
        if i < last || final_newline {
            // A lone `\r` before an empty line's `\n` is written `\r\n`: lines never join.
            let joins = b == "\r" && out.get(i + 1).is_some_and(|(c, nb)| c.is_empty() && nb.starts_with('\n'));
            text.push_str(if joins { "\r\n" } else { b });
            written += 1;
        }
    }
    assert_eq!(crate::model::breaks(&text), written, "lines joined in {text:?}");
    Some(text)
}

/// The first `i` in `lo..=hi` that `at` accepts, trying `hint`, `hint + 1`, `hint - 1`, ...
fn outward(lo: usize, hi: usize, hint: usize, at: impl Fn(usize) -> bool) -> Option<usize> {
    if lo > hi {
        return None;
    }
    let h = hint.clamp(lo, hi);
    (0..=hi - lo)
        .flat_map(|d| [h.checked_add(d), if d > 0 { h.checked_sub(d) } else { None }])
        .flatten()
        .find(|&i| (lo..=hi).contains(&i) && at(i))
}

/// A scratch workspace root. Nothing is ever written there: every file is an open buffer.
fn workspace() -> Arc<Workspace> {
    static WS: OnceLock<Arc<Workspace>> = OnceLock::new();
    WS.get_or_init(|| {
        let dir = std::env::temp_dir().join("tether-fuzz-patch");
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Arc::new(Workspace::new([&dir]).expect("a workspace"))
    })
    .clone()
}

/// Runs `apply_patch` on `patch` over `files` (open buffers) and applies its plan to them:
/// the texts after, or the error's kind and message.
fn run(files: &BTreeMap<String, String>, patch: &str) -> Result<BTreeMap<String, String>, (ErrorKind, String)> {
    let ws = workspace();
    let root: PathBuf = ws.roots()[0].clone();
    let docs = files
        .iter()
        .map(|(name, text)| {
            let doc = OpenDocument { doc: Document::from_text(text), version: 1, dirty: false, stamp: 0 };
            (root.join(name), doc)
        })
        .collect();
    let vfs = Vfs::new(ws, Arc::new(Overlay::from_docs(docs)));
    let (config, cancel) = (Config::default(), Cancel::default());
    let ctx = Context { vfs: &vfs, config: &config, cancel: &cancel, editor: None };
    let args = ApplyPatchArgs { patch: patch.to_owned(), dry_run: false, one_section_per_path: false };
    let plan = match apply_patch(&ctx, args) {
        Ok(Output::Change { plan, .. }) => plan,
        Ok(other) => panic!("apply_patch returned {other:?}"),
        Err(e) => return Err((e.kind(), e.message().to_owned())),
    };
    let mut out = files.clone();
    let mut touched = BTreeSet::new();
    let name =
        |p: &tether::workspace::SandboxPath| p.real().file_name().expect("a name").to_string_lossy().into_owned();
    for op in &plan.ops {
        match op {
            FileOp::Edit { path, base, changes } => {
                let name = name(path);
                assert_eq!(base.text.to_str(), out[&name].as_str(), "a plan computed against the buffer");
                let text = apply_changes(&base.text.to_str(), changes);
                out.insert(name.clone(), text);
                touched.insert(name);
            }
            FileOp::Create { path, text, overwrite, .. } => {
                assert!(!overwrite, "apply_patch never overwrites");
                assert!(out.insert(name(path), text.clone()).is_none(), "created an existing file");
            }
            FileOp::Delete { path, .. } => {
                assert!(out.remove(&name(path)).is_some(), "deleted a missing file");
            }
            FileOp::Rename { from, to, overwrite } => {
                assert!(!overwrite, "apply_patch never overwrites");
                let text = out.remove(&name(from)).expect("moved a missing file");
                assert!(out.insert(name(to), text).is_none(), "moved onto an existing file");
            }
            FileOp::Mkdir { .. } => panic!("apply_patch made a directory"),
        }
    }
    Ok(out)
}
