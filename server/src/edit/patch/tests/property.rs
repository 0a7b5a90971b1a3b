//! A patch written against a random unique region, perturbed in each tolerated way, applies
//! exactly as the clean patch does; with a copy of the region in the file it is refused.

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
        None | Some(Slip::ContextWithoutSpace | Slip::TrailingSpaces) => {
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
        at in any::<prop::sample::Index>(),
        before in 0usize..3,
        after in 0usize..3,
        change in change(),
        slip in slip(),
    ) {
        // Unique lines (each names its index), some blank, indented by depth.
        let mut lines: Vec<String> = depths
            .iter()
            .enumerate()
            .map(|(i, d)| d.map_or_else(String::new, |d| format!("{}item_{i} = {i};", "    ".repeat(d))))
            .collect();
        let solid: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
        if solid.is_empty() {
            lines[0] = "item_0 = 0;".to_owned();
        }
        let solid: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
        let i = solid[at.index(solid.len())];
        let (b, a) = (i.saturating_sub(before), (i + 1 + after).min(lines.len()));
        let file = format!("{}\n", lines.join("\n"));
        let clean = hunk(&lines[b..i], &lines[i], &lines[i + 1..a], change);
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
            _ => clean.clone(),
        };
        if slipped == clean && matches!(slip, Slip::ContextWithoutSpace | Slip::TrailingSpaces) {
            return Ok(()); // no context line to slip on
        }
        let got = apply(&file, &envelope(&slipped, Some(slip)));
        let (text, _) = got.map_err(|e| TestCaseError::fail(format!("{slip:?} refused: {e}")))?;
        prop_assert_eq!(text, want.clone(), "{:?}", slip);

        // With a copy of the hunk's old lines further down, nothing says which copy it means.
        let old: Vec<String> = lines[b..i].iter().chain([&lines[i]]).chain(&lines[i + 1..a]).cloned().collect();
        let twice = format!("{file}# again\n{}\n", old.join("\n"));
        let refused = apply(&twice, &envelope(&slipped, Some(slip)));
        prop_assert!(refused.is_err(), "{:?} applied in a file with the region twice: {:?}", slip, refused);
    }
}
