//! `apply_patch` against `patch_fidelity.cases`: patches as models write them, each with the one
//! right result, and each with its twin that must not apply. Every case runs twice through a
//! `tether lsp` session: once on files that are closed (the text read from disk as a string) and
//! once with every file open in the editor (the text of the open buffer's rope, the change
//! delivered as a workspace edit).
//!
//! The format, one case per block:
//!
//! ```text
//! === category: name          a twin is named `category: name (twin)`
//! ### file PATH               a file before the patch (any number of them)
//! ...
//! ### patch
//! ...
//! ### want PATH               a file after the patch (files not named must be unchanged)
//! ...
//! ### gone PATH               a file the patch deletes
//! ### says                    lines the result must contain (`accepted: ...`)
//! ...
//! ### refuse                  or: the patch is refused, every file left as it was, and each
//! ...                         line below appears in the message
//! ```
//!
//! Section heads start with `###` (a patch's own lines may start with `---`). Sections are written as in `edit_fidelity.cases` (`«noeol»`, `«tab»`, `«cr»`, `«bom»`,
//! `«U+0301»`, ...).

use serde_json::json;

use crate::edit_fidelity::{text as section, unmark};
use crate::lsp_support::{text, Session, Setup};

const CASES: &str = include_str!("patch_fidelity.cases");

const BOM: char = '\u{FEFF}';

/// The categories of the table, each with at least eight cases and their twins.
const CATEGORIES: [&str; 5] = ["place", "form", "envelope", "hunks", "paths"];

#[derive(Debug)]
enum Expect {
    Applies { want: Vec<(String, String)>, gone: Vec<String>, says: Vec<String> },
    Refused { says: Vec<String> },
}

#[derive(Debug)]
struct Case {
    name: String,
    files: Vec<(String, String)>,
    patch: String,
    expect: Expect,
}

fn parse(src: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in src.split("\n=== ").skip(1) {
        let (name, body) = block.split_once('\n').expect("a case name line");
        let name = name.trim().to_owned();
        let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
        for line in body.lines() {
            match line.strip_prefix("### ") {
                Some(head) => sections.push((head, Vec::new())),
                None => sections.last_mut().unwrap_or_else(|| panic!("{name}: text before a section")).1.push(line),
            }
        }
        let named = |key: &str| -> Vec<(String, String)> {
            sections
                .iter()
                .filter_map(|(h, lines)| h.strip_prefix(key).map(|p| (p.trim().to_owned(), section(lines))))
                .collect()
        };
        let lines = |key: &str| -> Vec<String> {
            sections.iter().filter(|(h, _)| *h == key).flat_map(|(_, l)| l.iter().map(|l| unmark(l))).collect()
        };
        let patch = sections
            .iter()
            .find(|(h, _)| *h == "patch")
            .map(|(_, l)| section(l))
            .unwrap_or_else(|| panic!("{name}: no patch"));
        let refused = sections.iter().any(|(h, _)| *h == "refuse");
        let expect = if refused {
            Expect::Refused { says: lines("refuse") }
        } else {
            let gone = named("gone ").into_iter().map(|(p, _)| p).collect();
            Expect::Applies { want: named("want "), gone, says: lines("says") }
        };
        cases.push(Case { name, files: named("file "), patch, expect });
    }
    cases
}

/// Runs `case` on closed files, or on files open in the editor; says what went wrong, if anything.
async fn run(case: &Case, open: bool) -> Option<String> {
    let s = Session::start(Setup::default()).await;
    for (path, body) in &case.files {
        let full = s.path(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(&full, body).expect("write");
        if open {
            // As editors do, the buffer's text leaves out the byte order mark (Neovim's 'bomb',
            // VS Code's encoding): the file keeps it.
            s.open(path, body.strip_prefix(BOM).unwrap_or(body));
        }
    }
    let result = s.call("apply_patch", json!({ "patch": case.patch })).await;
    // The text of a file after the call: its buffer's when it is open, with the file's byte
    // order mark (the editor writes it back on save), else the file's.
    let current = |path: &str| -> Option<String> {
        match s.editor.buffer(&s.uri(path)) {
            Some((_, text)) => {
                let bom = case.files.iter().any(|(p, t)| p == path && t.starts_with(BOM));
                Some(if bom { format!("{BOM}{text}") } else { text })
            }
            None => std::fs::read_to_string(s.path(path)).ok(),
        }
    };
    let said = match &result {
        Ok(r) => text(r),
        Err(e) => e.to_string(),
    };
    let is_error = result.as_ref().map_or(true, |r| r["isError"] == true);
    let mut problems = Vec::new();
    match &case.expect {
        Expect::Applies { want, gone, says } => {
            if is_error {
                problems.push(format!("refused: {said}"));
            }
            for (path, before) in &case.files {
                let after = want.iter().find(|(p, _)| p == path).map(|(_, t)| t).unwrap_or(before);
                if !gone.contains(path) && current(path).as_ref() != Some(after) {
                    problems.push(format!("{path} is {:?}, want {after:?}", current(path)));
                }
            }
            for (path, after) in want.iter().filter(|(p, _)| !case.files.iter().any(|(f, _)| f == p)) {
                if current(path).as_ref() != Some(after) {
                    problems.push(format!("{path} is {:?}, want {after:?}", current(path)));
                }
            }
            for path in gone {
                if s.path(path).exists() {
                    problems.push(format!("{path} is still there"));
                }
            }
            problems.extend(says.iter().filter(|w| !said.contains(w.as_str())).map(|w| format!("does not say {w:?}")));
        }
        Expect::Refused { says } => {
            if !is_error {
                problems.push(format!("applied: {said}"));
            }
            for (path, before) in &case.files {
                if current(path).as_ref() != Some(before)
                    || std::fs::read_to_string(s.path(path)).ok().as_ref() != Some(before)
                {
                    problems.push(format!("{path} changed to {:?}", current(path)));
                }
            }
            problems.extend(says.iter().filter(|w| !said.contains(w.as_str())).map(|w| format!("does not say {w:?}")));
        }
    }
    s.shutdown().await;
    (!problems.is_empty())
        .then(|| format!("{}{}: {}", case.name, if open { " (open)" } else { "" }, problems.join("; ")))
}

/// Every case, on closed files and on open buffers; failures are collected so that one run
/// shows them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case() {
    let mut cases = parse(CASES);
    if cfg!(windows) {
        // On a disk that ignores case another case names the file itself (no slip), and twins
        // differing only in case cannot both exist.
        let before = cases.len();
        cases.retain(|c| !c.name.contains("letter case"));
        eprintln!("skipped {} letter-case cases: the disk ignores case", before - cases.len());
    }
    let mut failures = Vec::new();
    for case in &cases {
        for open in [false, true] {
            failures.extend(run(case, open).await);
        }
    }
    assert!(failures.is_empty(), "{} of {} runs failed:\n{}", failures.len(), cases.len() * 2, failures.join("\n"));
}

/// The table has at least eight cases of each category, and each case has its twin, which must
/// not apply.
#[test]
fn eight_cases_per_category_each_with_its_twin() {
    let cases = parse(CASES);
    for category in CATEGORIES {
        let prefix = format!("{category}: ");
        let own: Vec<&Case> =
            cases.iter().filter(|c| c.name.starts_with(&prefix) && !c.name.ends_with(" (twin)")).collect();
        assert!(own.len() >= 8, "{category}: {} cases", own.len());
        for case in own {
            let twin = format!("{} (twin)", case.name);
            let found = cases.iter().find(|c| c.name == twin).unwrap_or_else(|| panic!("{}: no twin", case.name));
            assert!(matches!(found.expect, Expect::Refused { .. }), "{twin} must be refused");
        }
    }
    let stray: Vec<&str> = cases
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| !CATEGORIES.iter().any(|c| n.starts_with(&format!("{c}: "))))
        .collect();
    assert!(stray.is_empty(), "cases of no category: {stray:?}");
}
