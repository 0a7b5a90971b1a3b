//! The `edit_file` cascade on a miss: how long a request that matches nothing takes on a 20 MiB
//! file, where every level of the cascade runs and then the closest region is searched for the
//! message. Run with `cargo bench --bench matcher`; BENCHMARKS.md quotes its output.
//!
//! The peer, measured in the same run, is the exact level alone (`replace_all`, which tries only
//! the exact level and then looks for the closest region too), so the ratio is the cost of the
//! tolerant levels.

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::time::{Duration, Instant};

use tether::edit::matcher;

const MIB: usize = 1024 * 1024;
const RUNS: usize = 7;

/// A source-like document of about `size` bytes: numbered lines, every tenth blank, some with
/// non-ASCII text and escaped string literals, each line unique.
fn document(size: usize) -> String {
    let mut s = String::with_capacity(size + 128);
    let mut i = 0;
    while s.len() < size {
        match i % 10 {
            0 => s.push('\n'),
            3 => {
                s.push_str(&format!("    let s{i} = \"caf\u{e9} \u{1F600} \u{4E2D}\\n\"; // \u{201C}quoted\u{201D}\n"))
            }
            _ => s.push_str(&format!("    let value_{i} = compute({i}, \"lorem ipsum dolor sit amet\");\n")),
        }
        i += 1;
    }
    s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let text = document(20 * MIB);
    println!("edit_file cascade on a miss in a {} MiB file (median of {RUNS} runs)\n", text.len() / MIB);
    // Requests that match nothing, each shaped to reach a different tolerant level.
    let misses = [
        ("three lines", "let value_7 = compute(7, \"x\");\nlet value_8 = compute(8, \"y\");\nlet value_9 = z;"),
        ("blank lines", "let value_11 = compute(11, \"a\");\n\n\nlet value_12 = compute(12, \"b\");"),
        ("escaped", "let value_21 = compute(21, \\\"q\\\");\\n    let value_22"),
        ("non-ASCII", "let s13 = \"cafe\u{301} \u{1F600}\"; // \u{201C}nothing\u{201D}"),
    ];
    println!("{:<12} {:>12} {:>12} {:>7}", "request", "cascade", "exact only", "ratio");
    let mut levels: Vec<(&str, Vec<Duration>)> = matcher::STRATEGIES.iter().map(|s| (s.name, Vec::new())).collect();
    for (name, old) in misses {
        let mut full = Vec::with_capacity(RUNS);
        let mut exact = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            assert!(matcher::replace(&text, old, "new", false).is_err(), "{name} must miss");
            full.push(t.elapsed());
            let t = Instant::now();
            assert!(matcher::replace(&text, old, "new", true).is_err(), "{name} must miss");
            exact.push(t.elapsed());
        }
        let (f, e) = (median(full), median(exact));
        println!(
            "{name:<12} {:>9.1} ms {:>9.1} ms {:>6.2}x",
            f.as_secs_f64() * 1e3,
            e.as_secs_f64() * 1e3,
            f.as_secs_f64() / e.as_secs_f64()
        );
        // Each level on its own, the median over the runs, summed over the requests below.
        for (strategy, times) in matcher::STRATEGIES.iter().zip(levels.iter_mut()) {
            let mut runs = Vec::with_capacity(RUNS);
            for _ in 0..RUNS {
                let t = Instant::now();
                assert!(strategy.find(&text, old).is_empty(), "{name} must miss at {}", strategy.name);
                runs.push(t.elapsed());
            }
            times.1.push(median(runs));
        }
    }
    println!("\neach level alone, median per request ({} requests):", misses.len());
    for (name, times) in levels {
        let ms: Vec<String> = times.iter().map(|d| format!("{:5.1}", d.as_secs_f64() * 1e3)).collect();
        println!("  {name:<22} {} ms", ms.join("  "));
    }
}
