//! Work-done progress for tool calls.
//!
//! When the client passes a `workDoneToken` with `workspace/executeCommand`, the call reports
//! `begin` and `end` on it at once (the LSP rule for client-initiated progress). Otherwise, when
//! the client supports `window.workDoneProgress`, a call still running after
//! [`Limits::progress_delay`](super::options::Limits) gets a server-created token
//! (`window/workDoneProgress/create`), so that quick calls never flash a progress bar.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower_lsp::lsp_types::notification::Progress as ProgressNotification;
use tower_lsp::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, ProgressToken, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd,
};
use tower_lsp::Client;

use super::shared::{request_within, Shared};

/// How long the client has to answer `window/workDoneProgress/create`.
const CREATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The progress of one call.
#[derive(Debug)]
pub(crate) struct Progress {
    client: Client,
    /// The client's token, already begun.
    given: Option<ProgressToken>,
    /// The task that creates and begins a server token after the delay.
    delayed: Option<(oneshot::Sender<()>, JoinHandle<Option<ProgressToken>>)>,
}

impl Progress {
    /// Starts reporting progress for a call titled `title`.
    pub async fn start(shared: &Arc<Shared>, given: Option<ProgressToken>, title: String) -> Progress {
        let client = shared.client.clone();
        if let Some(token) = given {
            begin(&client, token.clone(), title).await;
            return Progress { client, given: Some(token), delayed: None };
        }
        if !shared.caps().work_done_progress {
            return Progress { client, given: None, delayed: None };
        }
        let delay = shared.options.limits.progress_delay;
        let (done_tx, done_rx) = oneshot::channel();
        let task_client = client.clone();
        let task = tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = done_rx => return None,
            }
            let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
            let token = NumberOrString::String(format!("tether/{}/{n}", std::process::id()));
            let params = WorkDoneProgressCreateParams { token: token.clone() };
            match request_within::<WorkDoneProgressCreate>(&task_client, params, CREATE_TIMEOUT).await {
                Some(Ok(())) => {
                    begin(&task_client, token.clone(), title).await;
                    Some(token)
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "the client refused a progress token");
                    None
                }
                None => None,
            }
        });
        Progress { client, given: None, delayed: Some((done_tx, task)) }
    }

    /// Ends the progress (if it began) with `message`.
    pub async fn finish(self, message: &str) {
        let token = match (self.given, self.delayed) {
            (Some(token), _) => Some(token),
            (None, Some((done, task))) => {
                let _ = done.send(());
                // The task is bounded by CREATE_TIMEOUT; waiting for it (rather than aborting)
                // guarantees that a `begin` it sent is always followed by an `end`.
                task.await.ok().flatten()
            }
            (None, None) => None,
        };
        if let Some(token) = token {
            let end = WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(message.to_owned()) });
            self.client
                .send_notification::<ProgressNotification>(ProgressParams {
                    token,
                    value: ProgressParamsValue::WorkDone(end),
                })
                .await;
        }
    }
}

async fn begin(client: &Client, token: ProgressToken, title: String) {
    let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title,
        cancellable: Some(false),
        message: None,
        percentage: None,
    });
    client
        .send_notification::<ProgressNotification>(ProgressParams {
            token,
            value: ProgressParamsValue::WorkDone(begin),
        })
        .await;
}
