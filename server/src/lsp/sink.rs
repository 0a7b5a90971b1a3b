//! The editor sink: a plan's changes to open documents go to the editor as one
//! `workspace/applyEdit`; everything else goes to the disk sink.
//!
//! - **Routing.** A text edit computed against a buffer goes to the editor, as versioned
//!   `TextDocumentEdit`s when the client supports `documentChanges` and plain `changes`
//!   otherwise, converted against the very text it was computed on (the store's rope at that
//!   version). If the buffer moved on, or was opened or closed since the tool read it, the plan is
//!   stale: `conflict`, and the call is retried on a fresh snapshot ([`super::calls`]). Renames and
//!   deletes touching open documents are resource operations when the client supports them.
//!   Creating a file that is open replaces the buffer's text. Everything else goes to disk.
//! - **Mixed plans.** The disk part is begun first and held pending ([`crate::sink::Pending`]),
//!   then the editor part is sent; the disk part is committed when the editor part landed and
//!   rolled back from its undo log when it failed, so the plan stays all or nothing.
//! - **Verification.** An editor may answer `applied: true` and yet skip a stale edit (Neovim's
//!   default handler does), so the answer alone proves nothing: before sending, the sink asks the
//!   store to watch for each document to pass through its expected text, and after the answer it
//!   waits (bounded) for the `didChange` that shows it. An edit that never shows up is a
//!   `conflict`; edits that did land in other documents are reverted, best effort. Because Neovim
//!   keeps a file's final line break as a buffer property, edits never name the position after
//!   the last line (they are anchored before the final break), and an expected text without a
//!   final break also matches the same text with one.
//! - **Saving.** A buffer that was clean before the edit (at the version the edit applies to,
//!   as the store knows it when the edit lands: another call's edit may have made it dirty when
//!   the tool read it and been saved since) is saved after it: through
//!   `tether/saveDocuments` when the client supports it, else by writing the same text to disk
//!   through the disk sink. A dirty buffer stays dirty, and the result says so.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::runtime::Handle;
use tower_lsp::lsp_types::Url;

use super::capabilities::ClientCaps;
use super::convert::uri_of;
use super::delivery::{about_versions, doc_edit, Delivery, Landing, Refusal};
use super::ops::EditorOp;
use super::shared::{review_or_withdraw, Shared};
use super::track::Verdict;
use crate::config::Cancel;
use crate::edit::{minimal_changes, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::sink::{Applied, Destination, Sink};
use crate::text::SharedText;
use crate::vfs::{Origin, Vfs};
use crate::workspace::SandboxPath;

/// What became of one attempt's changes, as the editor sink found out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Delivered {
    /// Where each change of the applied plan went, when one was applied.
    pub applied: Option<Applied>,
    /// Whether the plan met a buffer that changed meanwhile, so that running the tool again on a
    /// fresh snapshot may succeed.
    pub retry: bool,
    /// The real paths of the plan that met a buffer or file changed meanwhile: the next attempt
    /// holds them all from its read to its write, so that it cannot meet them changed again.
    pub hold: Vec<std::path::PathBuf>,
    /// Each open document the plan sent the editor an edit for (its real path), with the version
    /// the edit was made against: its diagnostics must be for a later one.
    pub edited: Vec<(std::path::PathBuf, i32)>,
    /// What the user decided, when the change waited for their review.
    pub review: Option<super::review::Outcome>,
}

/// The sink of one attempt of one tool call inside `tether lsp`.
pub(crate) struct EditorSink {
    shared: Arc<Shared>,
    delivery: Delivery,
    handle: Handle,
    /// The `label` of the workspace edits: says which tool made them.
    label: String,
    /// The tool's name.
    tool: String,
    /// What the plan does, in the tool's words, when the profile said (for a review).
    summary: std::sync::Mutex<Option<String>>,
    last_attempt: bool,
    /// Whether the call came from the editor's own request (`workspace/executeCommand`), which
    /// some editors must see answered before they report the edit's change.
    from_editor: bool,
    /// What became of the changes, read by the call path once the tool returns.
    delivered: std::sync::Mutex<Delivered>,
    /// Whether review before apply may hold the change (not for a change that already happened
    /// elsewhere, such as a file's change merged into its buffer).
    reviewable: bool,
    /// The call's cancellation: a review it waits for is withdrawn when it is set.
    cancel: Cancel,
}

impl EditorSink {
    /// A sink for one attempt of tool `tool`; `last_attempt` words a conflict as final;
    /// `from_editor` when the editor's own request started the call.
    pub fn new(shared: Arc<Shared>, handle: Handle, tool: &str, last_attempt: bool, from_editor: bool) -> EditorSink {
        EditorSink {
            delivery: Delivery { shared: shared.clone() },
            shared,
            handle,
            label: format!("tether: {tool}"),
            tool: tool.to_owned(),
            summary: std::sync::Mutex::default(),
            last_attempt,
            from_editor,
            delivered: std::sync::Mutex::default(),
            reviewable: true,
            cancel: Cancel::default(),
        }
    }

    /// The same sink, for a call that `cancel` stops.
    pub fn cancelled_by(mut self, cancel: &Cancel) -> EditorSink {
        self.cancel = cancel.clone();
        self
    }

    /// The same sink, never holding a change for review.
    pub fn unreviewed(mut self) -> EditorSink {
        self.reviewable = false;
        self
    }

    /// What became of the changes: where each went, or that a buffer changed meanwhile so
    /// that running the tool again on a fresh snapshot may succeed.
    pub fn delivered(self) -> Delivered {
        self.delivered.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn delivery_state(&self) -> std::sync::MutexGuard<'_, Delivered> {
        self.delivered.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long to wait for the change notifications an edit causes: not at all for a call an
    /// editor started that is known to hold them until the call returns.
    fn window(&self) -> std::time::Duration {
        if self.from_editor && self.shared.holds_changes.load(Ordering::Relaxed) {
            std::time::Duration::ZERO
        } else {
            self.shared.options.limits.verify_timeout
        }
    }

    /// `e`, from the disk part of a plan; a file changed on disk since the tool read it (another
    /// process wrote it) is a conflict that a retry on a fresh snapshot can resolve.
    fn disk_failed(&self, e: Error) -> Error {
        if let Some(real) = e.stale_path() {
            let mut state = self.delivery_state();
            state.retry = true;
            state.hold.push(real.to_owned());
        }
        e
    }

    /// A `conflict` that a retry on a fresh snapshot can resolve.
    fn stale(&self, path: &SandboxPath, why: &str) -> Error {
        {
            let mut state = self.delivery_state();
            state.retry = true;
            state.hold.push(path.real().to_owned());
        }
        let mut message = format!("{}: {why}", path.given());
        if self.last_attempt {
            let n = self.shared.options.limits.max_attempts;
            message.push_str(&format!(
                "; gave up after {n} attempts because the buffer keeps changing: read the file again and redo the change"
            ));
        }
        Error::new(ErrorKind::Conflict, message).with_path(path.given())
    }

    /// Decides, for each operation of the plan, whether the editor carries it out (`Some`) or the
    /// disk sink does (`None`).
    fn route(&self, plan: &EditPlan, caps: &ClientCaps) -> Result<Vec<Option<EditorOp>>> {
        let store = &self.shared.store;
        let mut steps = Vec::with_capacity(plan.ops.len());
        for op in &plan.ops {
            let step = match op {
                FileOp::Edit { path, base, changes } => match (base.origin, store.get(path.real())) {
                    // The store's clock ticks on every open and change: the same stamp is the same
                    // text, with no need to compare it.
                    (Origin::Buffer { version, stamp, .. }, Some(doc))
                        if doc.version == version && doc.last_change == stamp =>
                    {
                        self.delivery_state().edited.push((path.real().to_path_buf(), doc.version));
                        Some(EditorOp::Edit(doc_edit(path, doc, base.text.clone(), changes.clone())))
                    }
                    (Origin::Buffer { version, .. }, Some(doc)) => {
                        let why = format!(
                            "the editor buffer changed while the edit was prepared (version {version} is now {})",
                            doc.version
                        );
                        return Err(self.stale(path, &why));
                    }
                    (Origin::Buffer { .. }, None) => {
                        return Err(
                            self.stale(path, "the document was closed in the editor while the edit was prepared")
                        );
                    }
                    (Origin::Disk, Some(_)) => {
                        return Err(self.stale(path, "the file was opened in the editor while the edit was prepared"));
                    }
                    (Origin::Disk, None) => None,
                },
                FileOp::Create { path, text, overwrite, .. } => match store.get(path.real()) {
                    None => None,
                    Some(_) if !overwrite => {
                        return Err(Error::new(
                            ErrorKind::Conflict,
                            format!(
                                "{}: already exists (it is open in the editor), and the change was to create it",
                                path.given()
                            ),
                        )
                        .with_path(path.given()));
                    }
                    Some(doc) => {
                        self.delivery_state().edited.push((path.real().to_path_buf(), doc.version));
                        let base_text = SharedText::Rope(doc.rope.clone());
                        let changes = minimal_changes(&base_text.to_str(), text);
                        Some(EditorOp::Edit(doc_edit(path, doc, base_text, changes)))
                    }
                },
                FileOp::Rename { from, to, overwrite } if caps.rename && self.touches_open(from) => {
                    match (self.uri_for(from), uri_of(to.path())) {
                        (Some(old_uri), Some(new_uri)) => Some(EditorOp::Rename {
                            from: from.clone(),
                            old_uri,
                            new_uri,
                            to: to.clone(),
                            overwrite: *overwrite,
                            dirty: store.get(from.real()).is_some_and(|d| d.dirty),
                        }),
                        _ => None,
                    }
                }
                FileOp::Delete { path, recursive } if caps.delete && self.touches_open(path) => {
                    self.uri_for(path).map(|uri| EditorOp::Delete { path: path.clone(), uri, recursive: *recursive })
                }
                _ => None,
            };
            steps.push(step);
        }
        Ok(steps)
    }

    /// Whether `p` is an open document or a directory holding one.
    fn touches_open(&self, p: &SandboxPath) -> bool {
        self.shared.store.any_open_under(p.real()) || self.shared.store.any_open_under(p.path())
    }

    /// The URI to name `p` by: the client's own for an open document, else a `file:` URI.
    fn uri_for(&self, p: &SandboxPath) -> Option<Url> {
        match self.shared.store.get(p.real()) {
            Some(doc) if p.path() == p.real() => Some(doc.uri),
            _ => uri_of(p.path()),
        }
    }

    /// Sends the editor's part as one workspace edit and follows it until the editor's change
    /// notifications show what became of it (or the wait ends). Returns, per operation, how it
    /// landed.
    async fn apply_in_editor(&self, caps: &ClientCaps, ops: &[&EditorOp]) -> Result<Vec<Landing>> {
        let limits = &self.shared.options.limits;
        let first = ops[0].path();
        let mut following = match self.delivery.send(caps, ops, &self.label).await {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(vec![Landing::Unchanged; ops.len()]),
            Err(Refusal::Moved(path)) => {
                return Err(self.stale(path, "the editor buffer changed while the edit was prepared"));
            }
            Err(Refusal::NoAnswer) => {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "{}: the editor did not answer workspace/applyEdit within {} s; the change may still reach its \
                         buffers, so read the files again before redoing it",
                        first.given(),
                        limits.apply_timeout.as_secs()
                    ),
                )
                .with_path(first.given()));
            }
            Err(Refusal::Refused { reason, failed }) => return Err(self.refused(ops, failed, &reason).await),
        };
        // The editor took the edit: it is never sent again. What follows only finds out where it
        // landed, from the editor's own change notifications.
        let deadline = tokio::time::Instant::now() + self.window();
        let mut verdicts = Vec::with_capacity(ops.len());
        for f in &mut following {
            verdicts.push(match f {
                Some(f) => Some(f.decided(deadline).await),
                None => None,
            });
        }
        if let Some(i) = verdicts.iter().position(|v| *v == Some(Verdict::Skipped)) {
            // The editor said applied, yet a change it sent afterwards shows the edit missing: it
            // skipped it (Neovim's handler does so for a buffer that changed, and still answers
            // applied). Take back what did land elsewhere, then run the tool again on the text
            // the editor has now; a versioned edit cannot land twice.
            let landed: Vec<Option<i32>> = verdicts
                .iter()
                .map(|v| match v {
                    Some(Verdict::Landed { version, .. }) => Some(*version),
                    _ => None,
                })
                .collect();
            drop(following);
            self.delivery.take_back(caps, ops, &landed, &self.label).await;
            let e = ops[i].path();
            let why = "the editor answered that it applied the edit, but its next change notification shows it \
                       skipped it (the buffer had changed since the edit was prepared)";
            if caps.document_changes {
                return Err(self.stale(e, why));
            }
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("{}: {why}; read the file again and redo the change", e.given()),
            )
            .with_path(e.given()));
        }
        let mut landings = Vec::with_capacity(ops.len());
        let mut unconfirmed = Vec::new();
        for (i, (op, verdict)) in ops.iter().zip(verdicts).enumerate() {
            let landing = match (op, verdict) {
                (EditorOp::Edit(_), None) => Landing::Unchanged,
                (EditorOp::Edit(_), Some(Verdict::Landed { version, typed })) => Landing::Landed { version, typed },
                (EditorOp::Edit(e), Some(Verdict::Misplaced)) => {
                    let f = following[i].take().expect("followed");
                    self.delivery.repair(caps, e, f, &self.label).await?
                }
                (EditorOp::Edit(e), Some(_)) => {
                    unconfirmed.push((e.clone(), following[i].take().expect("followed")));
                    Landing::Unconfirmed
                }
                (EditorOp::Rename { from, to, .. }, _) if exists(from.path()) || !exists(to.path()) => {
                    return Err(fs_disagrees(from));
                }
                (EditorOp::Delete { path, .. }, _) if exists(path.path()) => return Err(fs_disagrees(path)),
                _ => Landing::Landed { version: 0, typed: false },
            };
            landings.push(landing);
        }
        if !unconfirmed.is_empty() {
            self.delivery.follow_up(*caps, unconfirmed, self.from_editor, self.label.clone());
        }
        Ok(landings)
    }

    /// The error for an edit the editor refused. A refusal because a buffer moved on is retried
    /// on the new text (after waiting, bounded, for the editor to report the change that caused
    /// it); any other "no" (the user declined, a preview was cancelled) ends the call.
    async fn refused(&self, ops: &[&EditorOp], failed: Option<usize>, reason: &str) -> Error {
        let store = &self.shared.store;
        let failed = failed.and_then(|i| ops.get(i)).copied();
        let path = failed.map_or(ops[0].path(), |op| op.path());
        let sent: Vec<(&std::path::Path, i32)> = match failed {
            Some(EditorOp::Edit(e)) => vec![(e.path.real(), e.version)],
            _ => ops
                .iter()
                .filter_map(|op| match op {
                    EditorOp::Edit(e) => Some((e.path.real(), e.version)),
                    _ => None,
                })
                .collect(),
        };
        let moved_now = sent.iter().any(|(p, v)| store.get(p).is_none_or(|d| d.version > *v));
        let about_versions = about_versions(reason);
        if reason.is_empty() || about_versions || moved_now {
            // The editor usually refuses because a buffer moved on, and it may report that
            // change only later (Neovim waits 150 ms): let it arrive, so that the retry reads the
            // buffer as the editor has it rather than failing on the same stale text. An editor
            // known to hold its reports while its own request waits will send nothing.
            let deadline = tokio::time::Instant::now() + self.window();
            let moved = moved_now || (!sent.is_empty() && store.wait_any_newer(&sent, deadline).await);
            if !moved && about_versions {
                // The editor has text it has not reported, so running the tool again would read
                // the same old text and be refused the same way. An editor that started this call
                // holds its reports until the call returns (eglot); any other has not sent them
                // within the window.
                let hint = if self.from_editor {
                    self.shared.holds_changes.store(true, Ordering::Relaxed);
                    "It has changes to this document that it had not reported when the command started, and \
                     reports them only after the command returns; nothing was changed: run the command again"
                } else {
                    "It has changes to this document that it has not reported yet; nothing was changed: read the \
                     file again and redo the change"
                };
                return Error::new(
                    ErrorKind::Conflict,
                    format!("{}: the editor refused the edit: {reason}. {hint}", path.given()),
                )
                .with_path(path.given());
            }
            if moved {
                let why = if reason.is_empty() {
                    "the editor refused the edit".to_owned()
                } else {
                    format!("the editor refused the edit: {reason}")
                };
                return self.stale(path, &why);
            }
        }
        let why = if reason.is_empty() { "no reason given" } else { reason };
        Error::new(
            ErrorKind::Rejected,
            format!("{}: the editor declined the change ({why}); nothing was changed", path.given()),
        )
        .with_path(path.given())
    }
}

impl Sink for EditorSink {
    fn describe(&self, summary: &str) {
        *self.summary.lock().unwrap_or_else(|e| e.into_inner()) = Some(summary.to_owned());
    }

    fn waits_on_another_process(&self) -> bool {
        true
    }

    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let Some((reviewed, outcome)) = self.review(vfs, plan)? else {
            let applied = self.apply_plan(vfs, plan)?;
            self.delivery_state().applied = Some(applied.clone());
            return Ok(applied);
        };
        let applied = self.apply_plan(vfs, &reviewed).map_err(|e| {
            let mut state = self.delivery_state();
            if !state.retry {
                return e;
            }
            // Running the tool again would ask the user again: the buffer moved while they
            // looked, so the change they answered for is stale.
            state.retry = false;
            Error::new(
                ErrorKind::Conflict,
                format!(
                    "{}; the buffer changed while the change waited for review, so nothing was changed: read the \
                     file again and redo the change",
                    e.message()
                ),
            )
        })?;
        let applied = Applied { reviewed: Some(reviewed), ..applied };
        let mut state = self.delivery_state();
        state.applied = Some(applied.clone());
        state.review = Some(outcome);
        Ok(applied)
    }
}

impl EditorSink {
    /// Shows `plan` to the user when the review setup asks for it, and returns what they let
    /// through; `None` when no review is asked for.
    fn review(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Option<(EditPlan, super::review::Outcome)>> {
        let settings = self.shared.review();
        if !self.reviewable || !settings.asks_for(&self.tool, plan, vfs) {
            return Ok(None);
        }
        if !self.shared.caps().review {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "review before apply is on, but this editor cannot show a change for review (it does not announce \
                 `experimental.tether.review`); nothing was changed",
            ));
        }
        let caller = if self.from_editor { "editor" } else { "assistant" };
        let summary = self.summary.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let params = super::review::proposal(&self.tool, caller, summary.as_deref(), plan, vfs);
        let wait = settings.timeout.unwrap_or(super::review::DEFAULT_TIMEOUT);
        let client = &self.shared.client;
        let cancel = &self.cancel;
        let answer = self.handle.block_on(async {
            tokio::select! {
                a = review_or_withdraw(client, params, wait) => Some(a),
                () = cancelled(cancel) => None,
            }
        });
        let Some(answer) = answer else { return Err(Error::new(ErrorKind::Cancelled, "the call was cancelled")) };
        let answer = match answer {
            Some(Ok(a)) => a,
            Some(Err(e)) => {
                return Err(Error::new(
                    ErrorKind::Rejected,
                    format!("the editor could not show the change for review ({}); nothing was changed", e.message),
                ))
            }
            None => {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!("no answer to the review within {} s; nothing was changed", wait.as_secs()),
                ))
            }
        };
        super::review::decide(plan, &answer).map(Some)
    }

    fn apply_plan(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let result = self.apply_routed(vfs, plan);
        let mut state = self.delivery_state();
        if result.is_err() && state.retry {
            // The next attempt holds every file of the plan, not only the one that moved: holding
            // one and only trying the others could meet another of them busy, attempt after attempt.
            state
                .hold
                .extend(plan.ops.iter().flat_map(|op| [op.path().path().to_owned(), op.path().real().to_owned()]));
            state.hold.sort();
            state.hold.dedup();
        }
        result
    }

    fn apply_routed(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let caps = self.shared.caps();
        let steps = self.route(plan, &caps)?;
        let editor: Vec<&EditorOp> = steps.iter().flatten().collect();
        if editor.is_empty() {
            return self.shared.options.disk.apply(vfs, plan).map_err(|e| self.disk_failed(e));
        }
        let disk_plan = EditPlan {
            ops: plan.ops.iter().zip(&steps).filter(|(_, s)| s.is_none()).map(|(op, _)| op.clone()).collect(),
        };
        // The disk part is held and checked first, and written only once the editor took its
        // part: a refusal by the editor (common: the user typed) then leaves the disk untouched,
        // and no reader ever sees a disk part that is taken back. Writing it can still fail
        // (another program changed the file meanwhile, or the disk did): then the buffer edits
        // that landed are taken back.
        // The buffers are held against this process's other calls until the edit landed: a call
        // that read one before this edit would be refused or skipped by the editor, and calls
        // racing for one buffer would keep failing each other. A call that already holds a
        // file (run again after a conflict) only tries, and a busy buffer is then a conflict
        // for the next attempt, which waits for it.
        let buffers: Vec<std::path::PathBuf> =
            editor.iter().flat_map(|op| [op.path().path().to_owned(), op.path().real().to_owned()]).collect();
        let _buffers = match crate::sink::hold_more(&buffers) {
            Ok(held) => held,
            Err(busy) => {
                let path = editor.iter().map(|op| op.path()).find(|p| p.real() == busy || p.path() == busy);
                let path = path.unwrap_or_else(|| editor[0].path());
                return Err(self.stale(path, "another call is changing this buffer"));
            }
        };
        let prepared = if disk_plan.is_empty() {
            None
        } else {
            Some(self.shared.options.disk.prepare(vfs, &disk_plan).map_err(|e| self.disk_failed(e))?)
        };
        let landings = self.handle.block_on(self.apply_in_editor(&caps, &editor))?;
        if let Some(prepared) = prepared {
            if let Err(e) = prepared.apply() {
                let landed: Vec<Option<i32>> = landings
                    .iter()
                    .map(|l| match l {
                        Landing::Landed { version, .. } => Some(*version),
                        _ => None,
                    })
                    .collect();
                self.handle.block_on(self.delivery.take_back(&caps, &editor, &landed, &self.label));
                let e = self.disk_failed(e);
                let message = format!("{}; the change's edits to open buffers were taken back", e.message());
                let path = e.path().map(str::to_owned);
                let again = Error::new(e.kind(), message);
                return Err(match path {
                    Some(p) => again.with_path(p),
                    None => again,
                });
            }
        }
        // A buffer where the edit landed alone (no keystrokes in the same change) holds exactly
        // the plan's new text, under the change stamp the store gave that version.
        let stamps: Vec<Option<u64>> = editor
            .iter()
            .zip(&landings)
            .map(|(op, landing)| match (op, landing) {
                (EditorOp::Edit(e), Landing::Landed { version, typed: false }) => {
                    self.shared.store.get(e.path.real()).filter(|d| d.version == *version).map(|d| d.last_change)
                }
                _ => None,
            })
            .collect();
        let mut dests = self.handle.block_on(self.delivery.save(&caps, &editor, &landings)).into_iter();
        let mut stamps = stamps.into_iter();
        let (files, buffer_stamps) = plan
            .ops
            .iter()
            .zip(&steps)
            .map(|(op, step)| {
                let (dest, stamp) = match step {
                    None => (Destination::Disk, None),
                    Some(_) => (dests.next().unwrap_or(Destination::Disk), stamps.next().flatten()),
                };
                ((op.path().given().to_owned(), dest), stamp)
            })
            .unzip();
        Ok(Applied { files, unversioned: !caps.document_changes, reviewed: None, buffer_stamps })
    }
}

/// The error for an operation the editor reported done that the file system does not show.
fn fs_disagrees(p: &SandboxPath) -> Error {
    Error::new(
        ErrorKind::IoError,
        format!("{}: the editor reported the change applied, but the file system does not show it", p.given()),
    )
    .with_path(p.given())
}

fn exists(p: &std::path::Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Resolves once `cancel` is set (polled: the flag is shared with code that cannot wake a task).
async fn cancelled(cancel: &Cancel) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
