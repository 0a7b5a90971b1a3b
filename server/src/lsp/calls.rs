//! Running a tool call: admission, a turn on the blocking pool, and the retry loop.
//!
//! This is the one place that retries a call whose edit met a buffer that changed meanwhile:
//! the tool runs again on a fresh snapshot, up to [`Limits::max_attempts`](super::options::Limits) times.
//! `tether.callTool` and calls arriving over the bridge socket both come through
//! [`Shared::call_tool`].

use std::sync::Arc;

use serde_json::Value;

use super::editor::LspEditor;
use super::knowledge::report_json;
use super::shared::Shared;
use super::sink::{Delivered, EditorSink};
use crate::config::Cancel;
use crate::error::{Error, ErrorKind};
use crate::journal::{CallInfo, Journal, Recording};
use crate::profiles::{CallError, CallResult, Profile, DIAGNOSTICS_ARGUMENT};
use crate::sink::Applied;
use crate::tools::Context;

/// Who started a tool call inside `tether lsp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// The editor's own request (`tether.callTool`): some editors report the edit's change only
    /// once that request is answered.
    Editor,
    /// An assistant attached over the bridge socket, which is also told which files went
    /// straight to disk.
    Bridge,
}

/// Counts a call as answered when dropped.
struct Answered;

impl Drop for Answered {
    fn drop(&mut self) {
        crate::mcp::memory::note_activity();
    }
}

impl Shared {
    /// Runs tool `name` of `profile`, retrying on a fresh snapshot while its edit conflicts with
    /// a buffer that changed meanwhile, and says where the changes went. Failures outside the
    /// tool (no workspace, no turn in time, a panic) are error results in the profile's words;
    /// only an unknown tool is a `CallError`.
    pub async fn call_tool(
        self: &Arc<Self>,
        profile: Arc<dyn Profile>,
        name: String,
        args: Value,
        cancel: Cancel,
        caller: Caller,
        client: String,
    ) -> Result<CallResult, CallError> {
        // Counted when answered, whichever way: the server gives back memory once none came for a while.
        let _answered = Answered;
        let limits = &self.options.limits;
        let _turn = match tokio::time::timeout(limits.queue_timeout, self.calls.turn()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                let e = Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "tether is busy: no turn for this call within {} s ({} calls run at once); try again",
                        limits.queue_timeout.as_secs(),
                        limits.max_running
                    ),
                );
                return Ok(profile.error_result(&e));
            }
        };
        let max = limits.max_attempts.max(1);
        let mut attempt = 1;
        // The problems known before the change, to tell what it introduced and resolved.
        let wants_diagnostics = self.caps().diagnostics
            && self.after_change().enabled
            && args.get(DIAGNOSTICS_ARGUMENT) != Some(&Value::Bool(false));
        let before = if wants_diagnostics { self.diagnostics.all() } else { Vec::new() };
        // Reports that come from now on are news about the change (or may be: see `unversioned_since`).
        let since = tokio::time::Instant::now();
        let rerun = crate::journal::Rerun::starting_now();
        let mut met: Vec<std::path::PathBuf> = Vec::new();
        let mut hold = Vec::new();
        loop {
            let (mut result, delivered) = self
                .attempt(
                    profile.clone(),
                    name.clone(),
                    args.clone(),
                    cancel.clone(),
                    attempt == max,
                    caller,
                    &client,
                    hold,
                )
                .await;
            if !delivered.retry || attempt >= max || cancel.is_cancelled() {
                if let (Ok(r), Some(applied)) = (&mut result, &delivered.applied) {
                    say_where(r, applied, profile.as_ref(), caller);
                    if let Some(outcome) = delivered.review.as_ref().filter(|_| !r.is_error) {
                        r.push_item(outcome.to_json().to_string());
                    }
                    if wants_diagnostics && !r.is_error && !delivered.edited.is_empty() {
                        self.add_diagnostics(r, &delivered.edited, &before, since, &cancel).await;
                    }
                }
                met.extend(delivered.hold);
                if let Some(vfs) = self.snapshot().filter(|_| !met.is_empty()) {
                    let journal = self.options.config.journal.as_ref();
                    crate::profiles::name_the_overlap(
                        &mut result,
                        profile.as_ref(),
                        journal,
                        vfs.workspace().roots(),
                        rerun,
                        met,
                    );
                }
                return result;
            }
            tracing::info!(tool = %name, attempt, "a buffer changed while the edit was applied; running the tool again");
            // The next attempt holds what changed from its read to its write.
            met.extend(delivered.hold.iter().cloned());
            hold = delivered.hold;
            attempt += 1;
        }
    }

    /// One run of the tool on the blocking pool, against its own snapshot, with what became of
    /// its changes.
    // The call's parts travel apart: each retry takes fresh clones of the ones it consumes.
    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        self: &Arc<Self>,
        profile: Arc<dyn Profile>,
        name: String,
        args: Value,
        cancel: Cancel,
        last: bool,
        caller: Caller,
        client: &str,
        hold: Vec<std::path::PathBuf>,
    ) -> (Result<CallResult, CallError>, Delivered) {
        let shared = self.clone();
        let client = client.to_owned();
        let handle = tokio::runtime::Handle::current();
        let fallback = profile.clone();
        let task = tokio::task::spawn_blocking(move || {
            // Taken before the snapshot, on the thread that runs the tool and its sink.
            let _held = (!hold.is_empty()).then(|| crate::sink::hold_all(&hold));
            let Some(vfs) = shared.snapshot() else {
                let e = Error::invalid(
                    "the editor has no workspace folder open; tether's tools work inside workspace folders",
                );
                return (Ok(profile.error_result(&e)), Delivered::default());
            };
            let sink = EditorSink::new(shared.clone(), handle.clone(), &name, last, caller == Caller::Editor)
                .cancelled_by(&cancel);
            let editor = LspEditor::new(shared.clone(), handle);
            let ctx = Context { vfs: &vfs, config: &shared.options.config, cancel: &cancel, editor: Some(&editor) };
            let result = match &shared.options.config.journal {
                Some(settings) => {
                    let journal = Journal::open(settings, vfs.workspace().roots());
                    let info = CallInfo::new(&name, profile.name(), &client, &args);
                    profile.call(&ctx, &Recording::new(&sink, journal, info), &name, args)
                }
                None => profile.call(&ctx, &sink, &name, args),
            };
            (result, sink.delivered())
        });
        match task.await {
            Ok(out) => out,
            Err(e) => {
                let what = if e.is_panic() { "the tool panicked" } else { "the tool was cancelled" };
                tracing::error!(error = %e, "tool call failed");
                let e = Error::new(ErrorKind::IoError, format!("internal error: {what}"));
                (Ok(fallback.error_result(&e)), Delivered::default())
            }
        }
    }
}

impl Shared {
    /// Ends `result` with the problems the change introduced in and resolved from each edited
    /// open document, as the editor's language servers report them for the changed version (or
    /// later), in a content item of its own so that a contract's own text stays as it is. A
    /// document is waited for when a language server serves it: it, or a document of the same
    /// kind (file extension), has had a report (some editors send none for a file that has no
    /// problem and had none); a Markdown file in a Rust project costs nothing. A document with no
    /// report known to cover the change is `pending`, with the latest report that came since
    /// `since` when the editor could not tell its version.
    async fn add_diagnostics(
        &self,
        result: &mut CallResult,
        edited: &[(std::path::PathBuf, i32)],
        before: &[crate::tools::knowledge::Reported],
        since: tokio::time::Instant,
        cancel: &Cancel,
    ) {
        let reported = self.diagnostics.all();
        let kind = |p: &std::path::Path| p.extension().map(std::ffi::OsStr::to_ascii_lowercase);
        let known = |p: &std::path::Path| {
            before.iter().chain(&reported).any(|r| r.path == p || (kind(p).is_some() && kind(&r.path) == kind(p)))
        };
        let mut docs: Vec<(std::path::PathBuf, i32)> = edited.iter().filter(|(p, _)| known(p)).cloned().collect();
        docs.sort();
        docs.dedup_by(|a, b| a.0 == b.0);
        if docs.is_empty() {
            return;
        }
        let wait = self.after_change().wait;
        let started = std::time::Instant::now();
        let settled = self.diagnostics.settle(&docs, wait).await;
        let Some(vfs) = self.snapshot() else { return };
        let ctx = Context { vfs: &vfs, config: &self.options.config, cancel, editor: None };
        let reports: Vec<Value> = docs
            .iter()
            .zip(&settled)
            .map(|((path, base), after)| {
                let old = before.iter().find(|r| &r.path == path).or_else(|| reported.iter().find(|r| &r.path == path));
                let unversioned = after.is_none().then(|| self.diagnostics.unversioned_since(path, since)).flatten();
                report_json(&ctx, path, *base, old, after.as_ref(), unversioned.as_ref(), started.elapsed())
            })
            .collect();
        result.push_item(serde_json::json!({ "diagnostics_after_change": reports }).to_string());
    }
}

/// The one place a result is told where its changes went: the buffers a change reached (saved,
/// unsaved, moved to its place, not yet confirmed), for profiles whose results have room for it,
/// and for a caller over the bridge, the files written straight to disk too. Failed results and
/// results with structured content (a contract's exact shape) stay as they are.
fn say_where(result: &mut CallResult, applied: &Applied, profile: &dyn Profile, caller: Caller) {
    if result.is_error || result.structured.is_some() {
        return;
    }
    if profile.reports_destinations() {
        result.text.push_str(&applied.report(false));
    }
    if caller == Caller::Bridge {
        result.text.push_str(&applied.report(true));
    }
}
