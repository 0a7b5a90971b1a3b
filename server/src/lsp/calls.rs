//! Running a tool call: admission, a turn on the blocking pool, and the retry loop.
//!
//! This is the one place that retries a call whose edit met a buffer that changed meanwhile:
//! the tool runs again on a fresh snapshot, up to [`Limits::max_attempts`](super::Limits) times.
//! `tether.callTool` and calls arriving over the bridge socket both come through
//! [`Shared::call_tool`].

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::server::Shared;
use super::sink::EditorSink;
use super::Limits;
use crate::error::{Error, ErrorKind};
use crate::profiles::{CallError, CallResult, Profile};
use crate::sink::Applied;
use crate::tools::{Cancel, Context};

/// Admission and concurrency of tool calls.
#[derive(Debug)]
pub(crate) struct Calls {
    admitted: Arc<Semaphore>,
    running: Semaphore,
}

impl Calls {
    /// Caps from `limits`.
    pub fn new(limits: &Limits) -> Calls {
        Calls {
            admitted: Arc::new(Semaphore::new(limits.max_admitted.max(1))),
            running: Semaphore::new(limits.max_running.max(1)),
        }
    }

    /// Admits one call arriving through an LSP request, or `None` when too many are in flight.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        self.admitted.clone().try_acquire_owned().ok()
    }
}

impl Shared {
    /// Runs tool `name` of `profile`, retrying on a fresh snapshot while its edit conflicts with
    /// a buffer that changed meanwhile. Failures outside the tool (no workspace, no turn in time,
    /// a panic) are error results in the profile's words; only an unknown tool is a `CallError`.
    pub async fn call_tool(
        self: &Arc<Self>,
        profile: Arc<dyn Profile>,
        name: String,
        args: Value,
        cancel: Cancel,
        from_editor: bool,
    ) -> Result<CallResult, CallError> {
        self.call_tool_applied(profile, name, args, cancel, from_editor).await.0
    }

    /// [`Shared::call_tool`], also saying where the changes of the attempt that counted went.
    /// `from_editor` when the editor's own request started the call.
    pub async fn call_tool_applied(
        self: &Arc<Self>,
        profile: Arc<dyn Profile>,
        name: String,
        args: Value,
        cancel: Cancel,
        from_editor: bool,
    ) -> (Result<CallResult, CallError>, Option<Applied>) {
        let limits = &self.options.limits;
        let _turn = match tokio::time::timeout(limits.queue_timeout, self.calls.running.acquire()).await {
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
                return (Ok(profile.error_result(&e)), None);
            }
        };
        let max = limits.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let (result, retry, applied) = self
                .attempt(profile.clone(), name.clone(), args.clone(), cancel.clone(), attempt == max, from_editor)
                .await;
            if !retry || attempt >= max || cancel.is_cancelled() {
                return (result, applied);
            }
            tracing::info!(tool = %name, attempt, "a buffer changed while the edit was applied; running the tool again");
            attempt += 1;
        }
    }

    /// One run of the tool on the blocking pool, against its own snapshot; also says whether the
    /// sink asked for a retry.
    async fn attempt(
        self: &Arc<Self>,
        profile: Arc<dyn Profile>,
        name: String,
        args: Value,
        cancel: Cancel,
        last: bool,
        from_editor: bool,
    ) -> (Result<CallResult, CallError>, bool, Option<Applied>) {
        let shared = self.clone();
        let handle = tokio::runtime::Handle::current();
        let fallback = profile.clone();
        let task = tokio::task::spawn_blocking(move || {
            let Some(vfs) = shared.snapshot() else {
                let e = Error::invalid(
                    "the editor has no workspace folder open; tether's tools work inside workspace folders",
                );
                return (Ok(profile.error_result(&e)), false, None);
            };
            let sink = EditorSink::new(shared.clone(), handle, &name, last, from_editor);
            let ctx = Context { vfs: &vfs, config: &shared.options.config, cancel: &cancel };
            let result = profile.call(&ctx, &sink, &name, args);
            (result, sink.wants_retry(), sink.applied())
        });
        match task.await {
            Ok(out) => out,
            Err(e) => {
                let what = if e.is_panic() { "the tool panicked" } else { "the tool was cancelled" };
                tracing::error!(error = %e, "tool call failed");
                let e = Error::new(ErrorKind::IoError, format!("internal error: {what}"));
                (Ok(fallback.error_result(&e)), false, None)
            }
        }
    }
}
