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
    /// The editor says no later part will come for its version (every server's diagnostics in it
    /// were pulled: an answer to `textDocument/diagnostic` is whole): it settles at once.
    complete: bool,
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

    /// Replaces a document's diagnostics; `complete` when no later part will come for the
    /// report's version.
    pub fn publish(&self, report: Reported, complete: bool) {
        self.lock().insert(report.path.clone(), Entry { report, at: Instant::now(), complete });
        self.ticks.send_modify(|t| *t += 1);
    }

    /// Every document's last report.
    pub fn all(&self) -> Vec<Reported> {
        self.lock().values().map(|e| e.report.clone()).collect()
    }

    /// A document's last report when it came after `since` and the editor could not tell
    /// which version it was computed for: it may cover a change made before it came, or predate
    /// it. A report stamped with a version is not one: that version says which it is.
    pub fn unversioned_since(&self, path: &Path, since: Instant) -> Option<Reported> {
        self.lock().get(path).filter(|e| e.at > since && e.report.version.is_none()).map(|e| e.report.clone())
    }

    /// Waits until each of `docs` (a real path and the version its change was made against) has
    /// a report for a later version that then stayed unchanged for [`QUIET`] (or that the editor
    /// said is whole: no quiet period then), or until `wait` ran out. Returns each document's fresh report, `None` when none came in time.
    ///
    /// Only a report stamped with a later version counts: the editor stamps a report with the
    /// version it is known to cover (the language server stated it, or the editor pulled the
    /// report after sending that version), and with no version when it cannot tell (a server
    /// that publishes without one may send a report computed before the change reached it, after
    /// the change). However late an unversioned report comes, it is not the change's result.
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
                        if late || e.complete || now >= e.at + QUIET {
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
///
/// `after` is the report known to cover the change, if one settled; otherwise the result is
/// `pending`, with what is known: the counts before the change and, when a report came during the
/// call whose version the editor could not tell (`unversioned`), what that report says, as a
/// report that may predate the change.
pub fn report_json(
    ctx: &Context<'_>,
    path: &Path,
    base: i32,
    before: Option<&Reported>,
    after: Option<&Reported>,
    unversioned: Option<&Reported>,
    waited: Duration,
) -> Value {
    let shown = ctx.vfs.display(path);
    let count = |r: &Reported, s: Severity| r.problems.iter().filter(|p| p.severity == s).count();
    let empty = Vec::new();
    let before_problems = before.map_or(&empty, |b| &b.problems);
    let Some(after) = after else {
        let note = match unversioned {
            None => format!(
                "the editor's language servers reported nothing for the changed text within {} ms (some \
                 report only when the problems change); call `diagnostics` later",
                waited.as_millis()
            ),
            Some(_) => format!(
                "no report known to cover the changed text within {} ms: the latest one carries no \
                 version (a language server that publishes none, or an editor whose API keeps none), so it \
                 may have been computed for the text before the change; `latest_report` says what it lists; \
                 call `diagnostics` later",
                waited.as_millis()
            ),
        };
        let mut out = json!({
            "path": shown,
            "status": "pending",
            "changed_from_version": base,
            "note": note,
        });
        if let Some(b) = before {
            // Said as what it is: the state before the change, not after it.
            out["before_the_change"] = json!({"version": b.version, "errors": count(b, Severity::Error), "warnings": count(b, Severity::Warning)});
        }
        if let Some(u) = unversioned {
            // Said as what it is too: a report that may or may not cover the change.
            let (new, gone) = delta(before_problems, &u.problems);
            let (new, gone) = problems_json(ctx, path, before, u, new, gone);
            out["latest_report"] = json!({
                "may_predate_the_change": true,
                "errors": count(u, Severity::Error),
                "warnings": count(u, Severity::Warning),
                "new": new,
                "gone": gone,
            });
        }
        return out;
    };
    let (introduced, resolved) = delta(before_problems, &after.problems);
    let (introduced, resolved) = problems_json(ctx, path, before, after, introduced, resolved);
    json!({
        "path": shown,
        "version": after.version,
        "status": "settled",
        "introduced": introduced,
        "resolved": resolved,
        "errors": count(after, Severity::Error),
        "warnings": count(after, Severity::Warning),
        "changed_from_version": base,
    })
}

/// The problems `after` has that `before` did not, placed in `after`'s text, and the ones it no
/// longer has, without places (the text has moved since).
fn problems_json(
    ctx: &Context<'_>,
    path: &Path,
    before: Option<&Reported>,
    after: &Reported,
    introduced: Vec<&Problem>,
    resolved: Vec<&Problem>,
) -> (Vec<Value>, Vec<Value>) {
    let mut places = Places::new(ctx, after.encoding);
    let introduced = introduced.into_iter().map(|p| problem_json(&mut places, path, p)).collect();
    let mut old_places = Places::new(ctx, before.map_or(after.encoding, |b| b.encoding));
    let resolved = resolved
        .into_iter()
        .map(|p| {
            let mut v = problem_json(&mut old_places, path, p);
            if let Some(o) = v.as_object_mut() {
                for k in ["line", "column", "end_line", "end_column"] {
                    o.remove(k);
                }
            }
            v
        })
        .collect();
    (introduced, resolved)
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
        d.publish(report(3), false);
        let docs = vec![(PathBuf::from("/w/a.py"), 3)];
        // A report for the version the change was made against is not the change's result.
        let got = d.settle(&docs, Duration::from_secs(1)).await;
        assert_eq!(got, vec![None]);
        let d2 = d.clone();
        let waiter =
            tokio::spawn(async move { d2.settle(&[(PathBuf::from("/w/a.py"), 3)], Duration::from_secs(3)).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        d.publish(report(4), false);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut later = report(4);
        later.problems.push(problem(0, Severity::Error, "late"));
        d.publish(later.clone(), false);
        let got = waiter.await.expect("join");
        assert_eq!(got, vec![Some(later)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_whole_report_of_a_later_version_settles_at_once() {
        let d = std::sync::Arc::new(Diagnostics::default());
        d.publish(report(3), true);
        let d2 = d.clone();
        let start = Instant::now();
        let waiter =
            tokio::spawn(async move { d2.settle(&[(PathBuf::from("/w/a.py"), 3)], Duration::from_secs(3)).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        d.publish(report(4), true);
        let got = waiter.await.expect("join");
        assert_eq!(got, vec![Some(report(4))]);
        assert!(start.elapsed() < Duration::from_millis(100) + QUIET, "no quiet period: {:?}", start.elapsed());
    }

    fn unversioned(problems: Vec<Problem>) -> Reported {
        Reported { version: None, problems, ..report(0) }
    }

    /// Issue 33: a language server that publishes without a version (pylsp) sent the report it
    /// computed for the text before the change just after the change; the editor cannot tell it
    /// from the change's own, so it is not taken for it, whether it lists the new error or not.
    #[tokio::test(start_paused = true)]
    async fn a_report_of_unknown_version_never_settles_however_late_it_comes() {
        let d = std::sync::Arc::new(Diagnostics::default());
        d.publish(unversioned(vec![]), false);
        let since = Instant::now();
        let path = PathBuf::from("/w/a.py");
        assert_eq!(d.unversioned_since(&path, since), None, "the report before the call is not news");
        let d2 = d.clone();
        let waiter =
            tokio::spawn(async move { d2.settle(&[(PathBuf::from("/w/a.py"), 3)], Duration::from_secs(3)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        d.publish(unversioned(vec![]), false);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let late = unversioned(vec![problem(7, Severity::Error, "undefined name 'x'")]);
        d.publish(late.clone(), false);
        assert_eq!(waiter.await.expect("join"), vec![None], "pending after the whole wait");
        assert_eq!(d.unversioned_since(&path, since), Some(late), "the latest report, for what it says");
        // A report stamped with a version says which text it covers: it is never "unversioned".
        d.publish(report(3), false);
        assert_eq!(d.unversioned_since(&path, since), None);
    }

    #[test]
    fn pending_shows_a_report_of_unknown_version_as_one_that_may_predate_the_change() {
        let f = crate::tools::testing::fixture("//- a.py\nx = 1\nprint(y)\n");
        let path = std::fs::canonicalize(f.dir.path().join("a.py")).expect("real path");
        let at = |r: Reported| Reported { path: path.clone(), ..r };
        let before = at(unversioned(vec![problem(0, Severity::Warning, "old")]));
        let latest = at(unversioned(vec![problem(1, Severity::Error, "undefined name 'y'")]));
        let ctx = f.ctx();
        let got = report_json(&ctx, &path, 3, Some(&before), None, Some(&latest), Duration::from_secs(3));
        assert_eq!(got["status"], "pending", "{got}");
        assert!(got.get("introduced").is_none(), "nothing is said to be the change's: {got}");
        assert!(
            got["note"].as_str().is_some_and(|n| n.contains("may have been computed for the text before")),
            "{got}"
        );
        let latest = &got["latest_report"];
        assert_eq!(latest["may_predate_the_change"], true, "{got}");
        assert_eq!((latest["errors"].as_u64(), latest["warnings"].as_u64()), (Some(1), Some(0)), "{got}");
        assert_eq!(latest["new"][0]["message"], "undefined name 'y'", "{got}");
        assert_eq!(latest["new"][0]["line"], 2, "{got}");
        assert_eq!(latest["gone"][0]["message"], "old", "{got}");
        assert_eq!(got["before_the_change"]["warnings"], 1, "{got}");

        // Without such a report, pending says only what was known before.
        let got = report_json(&ctx, &path, 3, Some(&before), None, None, Duration::from_secs(3));
        assert_eq!(got["status"], "pending", "{got}");
        assert!(got.get("latest_report").is_none(), "{got}");
    }
}
