//! The diagnostics the editor forwards (`tether/publishDiagnostics`), kept per document, and the
//! report a change's result ends with: the problems it introduced and resolved, once the
//! editor's language servers have analysed the changed version.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::tools::knowledge::diagnostics::problem_json;
use crate::tools::knowledge::{Places, Problem, Reported, Severity};
use crate::tools::Context;

/// How long a document's diagnostics must stay unchanged, once fresh, to be taken as settled:
/// servers publish in parts (syntax first, then types), a few milliseconds to a few hundred apart.
pub const QUIET: Duration = Duration::from_millis(300);

/// The diagnostics a change reports, as the editor set them up (`initializationOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterChange {
    /// Whether a change's result reports them.
    pub enabled: bool,
    /// How long a change waits for them at most.
    pub wait: Duration,
}

impl Default for AfterChange {
    fn default() -> AfterChange {
        AfterChange { enabled: true, wait: Duration::from_secs(3) }
    }
}

/// The longest wait the editor may ask for.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// One document's last report and when it came.
#[derive(Debug, Clone)]
struct Entry {
    report: Reported,
    at: Instant,
}

/// Every document's diagnostics as last forwarded, by real path.
#[derive(Debug)]
pub struct Diagnostics {
    reports: Mutex<HashMap<PathBuf, Entry>>,
    /// Ticks on every report, for waiters.
    ticks: watch::Sender<u64>,
}

impl Default for Diagnostics {
    fn default() -> Diagnostics {
        Diagnostics { reports: Mutex::default(), ticks: watch::Sender::new(0) }
    }
}

impl Diagnostics {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Entry>> {
        self.reports.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces a document's diagnostics.
    pub fn publish(&self, report: Reported) {
        self.lock().insert(report.path.clone(), Entry { report, at: Instant::now() });
        self.ticks.send_modify(|t| *t += 1);
    }

    /// Every document's last report.
    pub fn all(&self) -> Vec<Reported> {
        self.lock().values().map(|e| e.report.clone()).collect()
    }

    /// Waits until each of `docs` (a real path and the version its change was made against) has
    /// a report for a later version that then stayed unchanged for [`QUIET`], or until `wait`
    /// ran out. Returns each document's fresh report, `None` when none came in time.
    pub async fn settle(&self, docs: &[(PathBuf, i32)], wait: Duration) -> Vec<Option<Reported>> {
        let deadline = Instant::now() + wait;
        let mut ticks = self.ticks.subscribe();
        loop {
            let now = Instant::now();
            let late = now >= deadline;
            // The earliest moment something may change: a fresh report's quiet period ending.
            let mut next = deadline;
            let fresh: Vec<Option<Reported>> = {
                let reports = self.lock();
                docs.iter()
                    .map(|(path, base)| {
                        let e = reports.get(path).filter(|e| e.report.version.is_some_and(|v| v > *base))?;
                        // At the deadline, a fresh report still within its quiet period is taken
                        // too: it is for the changed version, only perhaps not the last word.
                        if late || now >= e.at + QUIET {
                            Some(e.report.clone())
                        } else {
                            next = next.min(e.at + QUIET);
                            None
                        }
                    })
                    .collect()
            };
            if late || fresh.iter().all(Option::is_some) {
                return fresh;
            }
            ticks.borrow_and_update();
            let sleep = tokio::time::sleep_until(next);
            tokio::select! {
                _ = ticks.changed() => {}
                () = sleep => {}
            }
        }
    }
}

/// The key two reports of one problem share whatever moved: its text and origin, not its place.
fn key(p: &Problem) -> (Severity, &Option<String>, &Option<String>, &str) {
    (p.severity, &p.source, &p.code, p.message.as_str())
}

/// The problems of `after` that `before` did not have, and the other way round, counting
/// duplicates: errors and warnings only.
pub fn delta<'a>(before: &'a [Problem], after: &'a [Problem]) -> (Vec<&'a Problem>, Vec<&'a Problem>) {
    let serious = |p: &&Problem| p.severity <= Severity::Warning;
    let minus = |a: &'a [Problem], b: &'a [Problem]| -> Vec<&'a Problem> {
        let mut left: HashMap<_, usize> = HashMap::new();
        for p in b.iter().filter(serious) {
            *left.entry(key(p)).or_default() += 1;
        }
        a.iter()
            .filter(serious)
            .filter(|p| match left.get_mut(&key(p)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect()
    };
    (minus(after, before), minus(before, after))
}

/// The report of one changed document, as JSON for the result's own content item.
pub fn report_json(
    ctx: &Context<'_>,
    path: &Path,
    base: i32,
    before: Option<&Reported>,
    after: Option<&Reported>,
    waited: Duration,
) -> Value {
    let shown = ctx.vfs.display(path);
    let Some(after) = after else {
        let mut out = json!({
            "path": shown,
            "status": "pending",
            "changed_from_version": base,
            "note": format!(
                "the editor's language servers reported nothing for the changed text within {} ms (some \
                 report only when the problems change); call `diagnostics` later",
                waited.as_millis()
            ),
        });
        if let Some(b) = before {
            // Said as what it is: the state before the change, not after it.
            let count = |s: Severity| b.problems.iter().filter(|p| p.severity == s).count();
            out["before_the_change"] =
                json!({"version": b.version, "errors": count(Severity::Error), "warnings": count(Severity::Warning)});
        }
        return out;
    };
    let empty = Vec::new();
    let before_problems = before.map_or(&empty, |b| &b.problems);
    let (introduced, resolved) = delta(before_problems, &after.problems);
    let mut places = Places::new(ctx, after.encoding);
    let introduced: Vec<Value> = introduced.into_iter().map(|p| problem_json(&mut places, path, p)).collect();
    let mut old_places = Places::new(ctx, before.map_or(after.encoding, |b| b.encoding));
    let resolved: Vec<Value> = resolved
        .into_iter()
        .map(|p| {
            let mut v = problem_json(&mut old_places, path, p);
            // Where it was before the change: the text has moved since.
            if let Some(o) = v.as_object_mut() {
                for k in ["line", "column", "end_line", "end_column"] {
                    o.remove(k);
                }
            }
            v
        })
        .collect();
    let count = |s: Severity| after.problems.iter().filter(|p| p.severity == s).count();
    json!({
        "path": shown,
        "version": after.version,
        "status": "settled",
        "introduced": introduced,
        "resolved": resolved,
        "errors": count(Severity::Error),
        "warnings": count(Severity::Warning),
        "changed_from_version": base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{Position, PositionEncoding};
    use crate::tools::knowledge::Span;

    fn problem(line: u32, severity: Severity, message: &str) -> Problem {
        Problem {
            span: Span { start: Position::new(line, 0), end: Position::new(line, 1) },
            severity,
            code: None,
            source: Some("test".into()),
            message: message.into(),
        }
    }

    #[test]
    fn delta_ignores_moves_counts_duplicates_and_leaves_out_hints() {
        let before =
            vec![problem(1, Severity::Error, "a"), problem(2, Severity::Error, "dup"), problem(3, Severity::Hint, "h")];
        let after = vec![
            problem(5, Severity::Error, "a"),
            problem(6, Severity::Error, "dup"),
            problem(7, Severity::Error, "dup"),
            problem(8, Severity::Warning, "w"),
        ];
        let (introduced, resolved) = delta(&before, &after);
        let msgs = |v: Vec<&Problem>| v.into_iter().map(|p| (p.span.start.line, p.message.clone())).collect::<Vec<_>>();
        assert_eq!(msgs(introduced), vec![(7, "dup".to_owned()), (8, "w".to_owned())]);
        assert!(resolved.is_empty());
        let (introduced, resolved) = delta(&after, &before);
        assert!(introduced.is_empty());
        assert_eq!(msgs(resolved), vec![(7, "dup".to_owned()), (8, "w".to_owned())]);
    }

    fn report(version: i32) -> Reported {
        Reported { path: "/w/a.py".into(), version: Some(version), encoding: PositionEncoding::Utf16, problems: vec![] }
    }

    #[tokio::test(start_paused = true)]
    async fn settles_only_on_a_later_version_after_a_quiet_period() {
        let d = std::sync::Arc::new(Diagnostics::default());
        d.publish(report(3));
        let docs = vec![(PathBuf::from("/w/a.py"), 3)];
        // A report for the version the change was made against is not the change's result.
        let got = d.settle(&docs, Duration::from_secs(1)).await;
        assert_eq!(got, vec![None]);
        let d2 = d.clone();
        let waiter =
            tokio::spawn(async move { d2.settle(&[(PathBuf::from("/w/a.py"), 3)], Duration::from_secs(3)).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        d.publish(report(4));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut later = report(4);
        later.problems.push(problem(0, Severity::Error, "late"));
        d.publish(later.clone());
        let got = waiter.await.expect("join");
        assert_eq!(got, vec![Some(later)]);
    }
}
