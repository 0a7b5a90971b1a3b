//! A patch written against a random unique region, perturbed in each tolerated way, applies
//! exactly as the clean patch does; with a copy of the region in the file it is refused. The
//! perturbations: the envelope's slips, trailing spaces, the indentation written in the other
//! unit (tabs for spaces, spaces for tabs), and a second hunk put before the first.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::super::{apply_hunks_noting, parse_noting};

#[derive(Debug, Clone, Copy)]
enum Slip {
    StarredMarkers,
    MissingBegin,
    MissingEndBeforeFence,
    UnifiedHeaders,
    ContextWithoutSpace,
    TrailingSpaces,
    OtherIndentUnit,
    HunksOutOfOrder,
}

#[derive(Debug, Clone, Copy)]
enum Change {
    Rewrite,
    InsertAfter,
    Delete,
}

fn slip() -> impl Strategy<Value = Slip> {
    prop_oneof![
        Just(Slip::StarredMarkers),
        Just(Slip::MissingBegin),
        Just(Slip::MissingEndBeforeFence),
        Just(Slip::UnifiedHeaders),
        Just(Slip::ContextWithoutSpace),
        Just(Slip::TrailingSpaces),
        Just(Slip::OtherIndentUnit),
        Just(Slip::HunksOutOfOrder),
    ]
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![Just(Change::Rewrite), Just(Change::InsertAfter), Just(Change::Delete)]
}

/// The hunk's lines with their prefixes, for the region `before`, `line`, `after` and `change`.
fn hunk(before: &[String], line: &str, after: &[String], change: Change) -> Vec<String> {
    let mut out: Vec<String> = before.iter().map(|l| format!(" {l}")).collect();
    match change {
        Change::Rewrite => {
            out.push(format!("-{line}"));
            out.push(format!("+{}changed();", &line[..line.len() - line.trim_start().len()]));
        }
        Change::InsertAfter => {
            out.push(format!(" {line}"));
            out.push(format!("+{}inserted();", &line[..line.len() - line.trim_start().len()]));
        }
        Change::Delete => out.push(format!("-{line}")),
    }
    out.extend(after.iter().map(|l| format!(" {l}")));
    out
}

fn envelope(lines: &[String], slip: Option<Slip>) -> String {
    let body = lines.join("\n");
    match slip {
        None
        | Some(Slip::ContextWithoutSpace | Slip::TrailingSpaces | Slip::OtherIndentUnit | Slip::HunksOutOfOrder) => {
            format!("*** Begin Patch\n*** Update File: f\n@@\n{body}\n*** End Patch\n")
        }
        Some(Slip::StarredMarkers) => {
            format!("*** Begin Patch ***\n*** Update File: f\n@@\n{body}\n*** End Patch ***\n")
        }
        Some(Slip::MissingBegin) => format!("*** Update File: f\n@@\n{body}\n*** End Patch\n"),
        Some(Slip::MissingEndBeforeFence) => format!("```\n*** Begin Patch\n*** Update File: f\n@@\n{body}\n```\n"),
        Some(Slip::UnifiedHeaders) => {
            format!("*** Begin Patch\n*** Update File: f\n--- a/f\n+++ b/f\n@@\n{body}\n*** End Patch\n")
        }
    }
}

fn apply(file: &str, patch: &str) -> Result<(String, Vec<String>), String> {
    let mut accepted = Vec::new();
    let files = parse_noting(patch, &mut accepted).map_err(|e| e.message().to_owned())?;
    let text = apply_hunks_noting(file, &files[0].hunks, &mut accepted).map_err(|f| f.message("f"))?;
    Ok((text, accepted))
}

proptest! {
    // A fixed seed: a CI run must not depend on which inputs a random seed happens to draw.
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7e7e),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_tolerated_slip_applies_as_the_clean_patch_does(
        depths in prop::collection::vec(prop::option::weighted(0.85, 0usize..4), 4..40),
        tabs in any::<bool>(),
        at in any::<prop::sample::Index>(),
        second in any::<prop::sample::Index>(),
        before in 0usize..3,
        after in 0usize..3,
        change in change(),
        slip in slip(),
    ) {
        // Unique lines (each names its index), some blank, indented by depth in spaces or tabs.
        let unit = if tabs { "\t" } else { "    " };
        let mut lines: Vec<String> = depths
            .iter()
            .enumerate()
            .map(|(i, d)| d.map_or_else(String::new, |d| format!("{}item_{i} = {i};", unit.repeat(d))))
            .collect();
        let solid: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
        if solid.is_empty() {
            lines[0] = "item_0 = 0;".to_owned();
        }
        let solid: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
        let region = |i: usize| (i.saturating_sub(before), (i + 1 + after).min(lines.len()));
        let i = solid[at.index(solid.len())];
        let (b, a) = region(i);
        let file = format!("{}\n", lines.join("\n"));
        let mut clean = hunk(&lines[b..i], &lines[i], &lines[i + 1..a], change);
        // Out of order: a second hunk, for a region at least a line away, in file order in the
        // clean patch and first in the slipped one.
        let mut reversed = Vec::new();
        if let Slip::HunksOutOfOrder = slip {
            let apart: Vec<usize> = solid.iter().copied().filter(|&j| { let (b2, a2) = region(j); a2 < b || a < b2 }).collect();
            if apart.is_empty() {
                return Ok(()); // no room for a second hunk
            }
            let j = apart[second.index(apart.len())];
            let (b2, a2) = region(j);
            let other = hunk(&lines[b2..j], &lines[j], &lines[j + 1..a2], change);
            let (first, last) = if j < i { (other, clean.clone()) } else { (clean.clone(), other) };
            clean = [first.clone(), vec!["@@".to_owned()], last.clone()].concat();
            reversed = [last, vec!["@@".to_owned()], first].concat();
        }
        let (want, notes) = apply(&file, &envelope(&clean, None)).map_err(TestCaseError::fail)?;
        prop_assert!(notes.is_empty(), "the clean patch has no slip: {:?}", notes);

        let slipped: Vec<String> = match slip {
            // Context lines that are not blank lose their leading space.
            Slip::ContextWithoutSpace => clean
                .iter()
                .map(|l| match l.strip_prefix(' ') {
                    Some(rest) if !rest.trim().is_empty() => rest.to_owned(),
                    _ => l.clone(),
                })
                .collect(),
            Slip::TrailingSpaces => clean.iter().map(|l| if l.starts_with(' ') { format!("{l}  ") } else { l.clone() }).collect(),
            Slip::OtherIndentUnit => clean.iter().map(|l| other_unit(l, tabs)).collect(),
            Slip::HunksOutOfOrder => reversed,
            _ => clean.clone(),
        };
        if slipped == clean && matches!(slip, Slip::ContextWithoutSpace | Slip::TrailingSpaces | Slip::OtherIndentUnit) {
            return Ok(()); // no line to slip on
        }
        let got = apply(&file, &envelope(&slipped, Some(slip)));
        let (text, _) = got.map_err(|e| TestCaseError::fail(format!("{slip:?} refused: {e}")))?;
        prop_assert_eq!(text, want.clone(), "{:?}", slip);

        // With a copy of the first region's old lines in the file (further down; for hunks out of
        // order, at the top, where neither order reading reaches only one), nothing says which
        // copy it means.
        let old: Vec<String> = lines[b..i].iter().chain([&lines[i]]).chain(&lines[i + 1..a]).cloned().collect();
        let twice = match slip {
            Slip::HunksOutOfOrder => format!("{}\n# again\n{file}", old.join("\n")),
            _ => format!("{file}# again\n{}\n", old.join("\n")),
        };
        let refused = apply(&twice, &envelope(&slipped, Some(slip)));
        prop_assert!(refused.is_err(), "{:?} applied in a file with the region twice: {:?}", slip, refused);
    }
}

/// A patch line (its one-character prefix, then the text) with its indentation in the other unit:
/// four spaces for each tab of a tab-indented file, a tab for each four spaces otherwise.
fn other_unit(line: &str, tabs: bool) -> String {
    let Some(prefix) = line.chars().next() else { return String::new() };
    let text = &line[prefix.len_utf8()..];
    let (from, to) = if tabs { ("\t", "    ") } else { ("    ", "\t") };
    let mut rest = text;
    let mut depth = 0;
    while let Some(r) = rest.strip_prefix(from) {
        rest = r;
        depth += 1;
    }
    format!("{prefix}{}{rest}", to.repeat(depth))
}
