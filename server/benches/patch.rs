//! `apply_patch`'s matcher on a large file: a 50-hunk patch onto a 20 MiB file, as a unified diff
//! with line numbers and as a `*** Begin Patch` envelope without them (each hunk then must match
//! exactly one place after the previous one, so every hunk's context is looked for through the
//! rest of the file). Parsing and applying, no I/O. Run with `cargo bench --bench patch`;
//! BENCHMARKS.md quotes its output. To compare two versions of the matcher, run the same file in
//! both checkouts (it uses only `tether::edit::patch::{parse, apply_hunks}`).

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tether::edit::patch::{apply_hunks, parse};

const MIB: usize = 1024 * 1024;
const HUNKS: usize = 50;
const RUNS: usize = 9;

/// About `size` bytes of unique, source-like lines.
fn document(size: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut len = 0;
    let mut i = 0;
    while len < size {
        let line =
            if i % 10 == 0 { String::new() } else { format!("    let value_{i} = compute({i}, \"lorem ipsum\");") };
        len += line.len() + 1;
        lines.push(line);
        i += 1;
    }
    lines
}

/// A patch changing one line in each of `HUNKS` places spread over the file, three lines of
/// context on each side; `numbered` gives each hunk its `@@ -a,b +c,d @@` line.
fn patch(lines: &[String], numbered: bool) -> String {
    let mut out =
        if numbered { "--- a/f\n+++ b/f\n".to_owned() } else { "*** Begin Patch\n*** Update File: f\n".to_owned() };
    let step = lines.len() / (HUNKS + 1);
    for h in 1..=HUNKS {
        let at = h * step + 5; // never a blank line (every tenth line is one)
        let at = if lines[at].is_empty() { at + 1 } else { at };
        if numbered {
            let _ = writeln!(out, "@@ -{},7 +{},7 @@", at - 2, at - 2);
        } else {
            out.push_str("@@\n");
        }
        for l in &lines[at - 3..at] {
            let _ = writeln!(out, " {l}");
        }
        let _ = writeln!(out, "-{}", lines[at]);
        let _ = writeln!(out, "+{} // changed", lines[at]);
        for l in &lines[at + 1..at + 4] {
            let _ = writeln!(out, " {l}");
        }
    }
    if !numbered {
        out.push_str("*** End Patch\n");
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let lines = document(20 * MIB);
    let text = lines.join("\n") + "\n";
    println!(
        "{HUNKS}-hunk patch onto a {:.1} MiB file ({} lines), parse + apply, median of {RUNS}:",
        text.len() as f64 / MIB as f64,
        lines.len()
    );
    for (name, numbered) in [("unified diff, line numbers", true), ("envelope, no line numbers", false)] {
        let p = patch(&lines, numbered);
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let start = Instant::now();
            let files = parse(&p).expect("parses");
            let new = apply_hunks(&text, &files[0].hunks).expect("applies");
            times.push(start.elapsed());
            assert_eq!(new.len(), text.len() + HUNKS * " // changed".len());
        }
        println!("  {name:<30} {:>8.1} ms", median(times).as_secs_f64() * 1e3);
    }
}
