//! Delivering edits to the editor and finding out what became of them.
//!
//! The editor's answer to `workspace/applyEdit` is the truth about *whether* it took an edit: an
//! edit answered `applied: true` is never sent again. Where it landed is read from the editor's
//! own change notifications ([`super::track`]): landed as meant (with the user's typing around
//! it, perhaps), landed at positions that had gone stale (repaired here: taken back and applied
//! where it belongs, in one versioned edit against the buffer as it is then), or skipped. An edit
//! whose notification has not come when the call must answer (an editor that holds its
//! notifications while its own request waits, as eglot does) is reported as the editor answered
//! and followed on in the background, where the same repair applies.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, ApplyWorkspaceEditResponse, WorkspaceEdit};

use super::capabilities::ClientCaps;
use super::convert::{anchor_before_final_break, from_lsp, text_edits, workspace_edit};
use super::ops::{DocEdit, EditorOp};
use super::options::SavePolicy;
use super::protocol::{SaveDocuments, SaveDocumentsParams};
use super::shared::{request_within, Shared};
use super::store::{DocState, Following};
use super::track::{replace_all, Sent, Verdict};
use crate::edit::{minimal_changes, Base, EditPlan, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::sink::Destination;
use crate::text::SharedText;
use crate::vfs::Vfs;
use crate::workspace::SandboxPath;

/// How long an edit the editor took but has not reported yet is followed after the call
/// answered.
const FOLLOW_UP: Duration = Duration::from_secs(60);

/// How many times a repair is computed again when the buffer keeps moving under it.
const REPAIR_ATTEMPTS: usize = 3;

/// What became of one operation the editor took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Landing {
    /// A text edit that changed nothing, so nothing was sent.
    Unchanged,
    /// Landed as meant, in the change that produced `version`; `typed` when the user's own
    /// keystrokes came around it.
    Landed { version: i32, typed: bool },
    /// Landed where the text had shifted, then moved where it belongs.
    Repaired,
    /// Taken by the editor, not reported yet: followed on after the call answers.
    Unconfirmed,
}

/// Why the editor did not take an edit.
pub(super) enum Refusal<'a> {
    /// A document moved on before the edit could be sent; nothing was sent.
    Moved(&'a SandboxPath),
    /// No answer in time.
    NoAnswer,
    /// The editor answered no (or with an error): its reason, and the failed change's index.
    Refused { reason: String, failed: Option<usize> },
}

/// Sends edits to the editor and follows them: what the sink of every attempt shares, and what a
/// follow-up outliving the call holds.
#[derive(Clone)]
pub(super) struct Delivery {
    pub shared: Arc<Shared>,
}

impl Delivery {
    /// Sends `ops` as one workspace edit labelled `label`, following each text edit from before
    /// it is sent. Returns the followers (one per operation, `None` for those that are not text
    /// edits) once the editor answered `applied: true`, or `None` when there was nothing to send.
    pub async fn send<'a>(
        &self,
        caps: &ClientCaps,
        ops: &[&'a EditorOp],
        label: &str,
    ) -> std::result::Result<Option<Vec<Option<Following>>>, Refusal<'a>> {
        let store = &self.shared.store;
        let Some((edit, order)) = workspace_edit(caps, ops) else { return Ok(None) };
        let mut following = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            following.push(match op {
                EditorOp::Edit(e) if !e.changes.is_empty() => {
                    let checked = caps.document_changes && e.version > 0 && order.first() == Some(&i);
                    let sent = sent(e, caps, checked);
                    let f = store.follow(e.path.real(), e.version, e.last_change, sent);
                    Some(f.ok_or(Refusal::Moved(&e.path))?)
                }
                _ => None,
            });
        }
        let limits = &self.shared.options.limits;
        match self.send_edit(edit, label, limits.apply_timeout).await {
            None => Err(Refusal::NoAnswer),
            Some(Err(e)) => Err(Refusal::Refused { reason: e.message.to_string(), failed: None }),
            Some(Ok(r)) if !r.applied => Err(Refusal::Refused {
                reason: r.failure_reason.unwrap_or_default(),
                failed: r.failed_change.and_then(|i| order.get(i as usize).copied()),
            }),
            Some(Ok(_)) => {
                // Every change notification read after this point was sent after the answer.
                let arrived = self.shared.arrivals.read();
                following.iter().flatten().for_each(|f| f.answered(arrived));
                Ok(Some(following))
            }
        }
    }

    /// Sends one operation and waits, bounded, for what its change notifications show; `None`
    /// when there was nothing to send. An operation that is not a text edit counts as landed.
    async fn send_and_wait<'a>(
        &self,
        caps: &ClientCaps,
        op: &'a EditorOp,
        label: &str,
    ) -> std::result::Result<Option<Verdict>, Refusal<'a>> {
        let Some(mut following) = self.send(caps, &[op], label).await? else { return Ok(None) };
        let deadline = tokio::time::Instant::now() + self.shared.options.limits.verify_timeout;
        Ok(Some(match following[0].as_mut() {
            Some(f) => f.decided(deadline).await,
            None => Verdict::Landed { version: 0, typed: false },
        }))
    }

    /// Sends one `workspace/applyEdit` labelled `label` and waits at most `timeout` for the
    /// answer (`None`: none came in time).
    async fn send_edit(
        &self,
        edit: WorkspaceEdit,
        label: &str,
        timeout: Duration,
    ) -> Option<tower_lsp::jsonrpc::Result<ApplyWorkspaceEditResponse>> {
        let params = ApplyWorkspaceEditParams { label: Some(label.to_owned()), edit };
        request_within::<tower_lsp::lsp_types::request::ApplyWorkspaceEdit>(&self.shared.client, params, timeout).await
    }

    /// Moves an edit that landed at stale positions where it belongs: one versioned edit against
    /// the buffer as it is now takes the misplaced text back and applies the edit in its place.
    /// Computed again (bounded) when the buffer moves on under it.
    pub async fn repair(&self, caps: &ClientCaps, e: &DocEdit, misplaced: Following, label: &str) -> Result<Landing> {
        for _ in 0..REPAIR_ATTEMPTS {
            let Some(repair) = misplaced.repair() else { break };
            let Some(doc) = self.shared.store.get(e.path.real()) else { break };
            if doc.version != repair.version {
                // The buffer moved on since the follower last saw it; it will catch up.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            let current = SharedText::Rope(repair.current.clone());
            let changes = minimal_changes(&current.to_str(), &repair.wanted);
            let fix = EditorOp::Edit(doc_edit(&e.path, doc, current, changes));
            let label = format!("{label} (moved to its place)");
            match self.send_and_wait(caps, &fix, &label).await {
                Ok(None | Some(Verdict::Landed { .. } | Verdict::Open)) => return Ok(Landing::Repaired),
                Ok(Some(_)) => break,
                Err(Refusal::Moved(_)) => continue,
                Err(Refusal::Refused { reason, .. }) if about_versions(&reason) => continue,
                Err(_) => break,
            }
        }
        Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "{}: the edit landed, but not where it was meant: the buffer changed while the edit was on its way \
                 and the editor applied it at the old positions, and tether could not move it (the text there has \
                 been changed since). The buffer holds the edit at the wrong place: undo it in the editor, or read \
                 the file again and fix it",
                e.path.given()
            ),
        )
        .with_path(e.path.given()))
    }

    /// Takes back, best effort, the text edits that did land (`landed` holds the version that
    /// showed each) when another part of the same edit did not, so that the plan stays all or
    /// nothing.
    pub async fn take_back(&self, caps: &ClientCaps, ops: &[&EditorOp], landed: &[Option<i32>], label: &str) {
        for (op, version) in ops.iter().zip(landed) {
            let (EditorOp::Edit(e), Some(version)) = (op, version) else { continue };
            let Some(doc) = self.shared.store.get(e.path.real()) else { continue };
            if doc.version != *version {
                tracing::warn!(path = %e.path.given(), "an edit that landed could not be taken back: the buffer changed since");
                continue;
            }
            // The buffer's own text: it may hold the expected text with a final break added.
            let current = SharedText::Rope(doc.rope.clone());
            let changes = minimal_changes(&current.to_str(), &e.base_text.to_str());
            let undo = EditorOp::Edit(doc_edit(&e.path, doc, current, changes));
            let label = format!("{label} (taken back)");
            // Wait for the take-back to show, as for any edit, so that the retry reads the
            // buffer as it is after it.
            if !matches!(self.send_and_wait(caps, &undo, &label).await, Ok(Some(Verdict::Landed { .. }))) {
                tracing::warn!(path = %e.path.given(), "the editor did not take back an edit that landed");
            }
        }
    }

    /// Follows edits the editor took but had not reported when the call answered: saves a clean
    /// buffer once its edit shows, repairs a misplaced one, and warns when one never shows.
    pub fn follow_up(&self, caps: ClientCaps, edits: Vec<(DocEdit, Following)>, from_editor: bool, label: String) {
        let delivery = self.clone();
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + FOLLOW_UP;
            for (e, mut f) in edits {
                match f.decided(deadline).await {
                    Verdict::Landed { version, typed } => {
                        if from_editor {
                            // Its change came only after the call answered: this editor holds
                            // its notifications while its own request waits.
                            delivery.shared.holds_changes.store(true, Ordering::Relaxed);
                        }
                        let landing = Landing::Landed { version, typed };
                        let _ = delivery.save(&caps, &[&EditorOp::Edit(e)], &[landing]).await;
                    }
                    Verdict::Misplaced => {
                        if let Err(err) = delivery.repair(&caps, &e, f, &label).await {
                            tracing::warn!(path = %e.path.given(), "{}", err.message());
                        }
                    }
                    Verdict::Skipped | Verdict::Open => tracing::warn!(
                        path = %e.path.given(),
                        "the editor answered that it applied an edit of {label}, but its buffer has not shown it"
                    ),
                }
            }
        });
    }

    /// Saves the buffers that were clean before the edit and hold exactly the edited text; returns
    /// where each operation went.
    pub async fn save(&self, caps: &ClientCaps, ops: &[&EditorOp], landings: &[Landing]) -> Vec<Destination> {
        // Dirty when the tool read it, unless it was saved at that same version before the edit
        // landed (another call's edit, saved meanwhile, had made it dirty): then only this edit
        // is unsaved, and a buffer clean before the edit is saved after it.
        let was_dirty = |e: &DocEdit| e.was_dirty && !self.shared.store.clean_at(e.path.real(), e.version);
        let mut dests: Vec<Destination> = ops
            .iter()
            .zip(landings)
            .map(|(op, landing)| match (op, landing) {
                (EditorOp::Edit(_), Landing::Unconfirmed) => Destination::BufferUnconfirmed,
                (EditorOp::Edit(_), Landing::Repaired) => Destination::BufferRepaired,
                (EditorOp::Edit(e), Landing::Landed { typed, .. }) if was_dirty(e) || *typed => {
                    Destination::BufferUnsaved
                }
                (EditorOp::Edit(e), Landing::Unchanged) if was_dirty(e) => Destination::BufferUnsaved,
                (EditorOp::Edit(_), _) => Destination::BufferSaved,
                (EditorOp::Rename { dirty: true, .. }, _) => Destination::BufferUnsaved,
                (EditorOp::Rename { .. }, _) => Destination::BufferSaved,
                (EditorOp::Delete { .. }, _) => Destination::Disk,
            })
            .collect();
        let to_save: Vec<(usize, &DocEdit, i32)> = ops
            .iter()
            .zip(landings)
            .enumerate()
            .filter_map(|(i, (op, landing))| match (op, landing) {
                (EditorOp::Edit(e), Landing::Landed { version, typed: false }) if !was_dirty(e) => {
                    Some((i, e, *version))
                }
                _ => None,
            })
            .collect();
        if to_save.is_empty() {
            return dests;
        }
        if self.shared.save_policy() == SavePolicy::Never {
            // tether saves nothing, but some editors write a buffer they applied a server's edit
            // to themselves (kak-lsp does, for every buffer whose text matched its file): the
            // result says what the disk holds, not only what tether's policy is. Such an editor
            // writes after it answered: wait for its write (its `didSave`, or the file holding
            // the text) as long as a save may take.
            let disk = self.shared.workspace().map(Vfs::disk);
            let on_disk = |e: &DocEdit| {
                disk.as_ref().and_then(|d| d.read_text(&e.path).ok()).is_some_and(|f| e.expected == f.text.as_str())
            };
            let deadline = tokio::time::Instant::now() + self.shared.options.limits.save_timeout;
            for (i, e, version) in &to_save {
                let written = if caps.writes_clean_buffers {
                    self.shared.store.wait_saved(e.path.real(), *version, || on_disk(e), deadline).await
                } else {
                    on_disk(e)
                };
                dests[*i] = if written { Destination::BufferSaved } else { Destination::BufferNotSaved };
            }
            return dests;
        }
        if caps.save_documents {
            let params = SaveDocumentsParams { uris: to_save.iter().map(|(_, e, _)| e.uri.clone()).collect() };
            let timeout = self.shared.options.limits.save_timeout;
            let saved = match request_within::<SaveDocuments>(&self.shared.client, params, timeout).await {
                Some(Ok(r)) => r.saved,
                Some(Err(e)) => {
                    tracing::warn!(error = %e.message, "tether/saveDocuments failed; the edited buffers stay unsaved");
                    Vec::new()
                }
                None => {
                    tracing::warn!("tether/saveDocuments got no answer in time; the edited buffers stay unsaved");
                    Vec::new()
                }
            };
            for (i, e, _) in &to_save {
                if !saved.contains(&e.uri) {
                    dests[*i] = Destination::BufferUnsaved;
                }
            }
        } else if let Some(ws) = self.shared.workspace() {
            let disk = Vfs::disk(ws);
            // An editor that writes a clean buffer a server edited itself (kak-lsp) may do so
            // while tether writes it: tether's write then meets a file changed since it read
            // it, and the file holds the edited text all the same.
            let on_disk = |e: &DocEdit| disk.read_text(&e.path).is_ok_and(|f| e.expected == f.text.as_str());
            for (i, e, version) in &to_save {
                match self.write_through(&disk, e) {
                    Ok(()) => self.shared.store.mark_clean(e.path.real(), *version),
                    Err(_) if on_disk(e) => self.shared.store.mark_clean(e.path.real(), *version),
                    Err(err) => {
                        tracing::warn!(path = %e.path.given(), error = %err, "writing an edited buffer's text to disk failed; it stays unsaved");
                        dests[*i] = Destination::BufferUnsaved;
                    }
                }
            }
        }
        dests
    }

    /// Writes the edited text of a buffer to its file, through the disk sink, keeping the
    /// file's encoding and BOM.
    fn write_through(&self, disk: &Vfs, e: &DocEdit) -> Result<()> {
        let file = disk.read_text(&e.path)?;
        let plan = EditPlan::edit_to(e.path.clone(), Base::from(file), &String::from(&e.expected));
        crate::sink::apply(self.shared.options.disk.as_ref(), &self.shared.options.config, disk, &plan).map(|_| ())
    }
}

/// Whether an editor's reason for refusing an edit is that a buffer moved on (so the edit can be
/// computed again on the new text), as opposed to a "no" from the user.
pub(super) fn about_versions(reason: &str) -> bool {
    let reason = reason.to_lowercase();
    ["version", "newer", "stale", "changed", "modified"].iter().any(|w| reason.contains(w))
}

/// What the editor is sent for one document, as the follower needs it.
fn sent(e: &DocEdit, caps: &ClientCaps, checked: bool) -> Sent {
    let positions = text_edits(&e.base, &e.changes, caps.encoding)
        .into_iter()
        .map(|t| (from_lsp(t.range.start), from_lsp(t.range.end)))
        .collect();
    Sent {
        base: e.base.clone(),
        changes: e.changes.iter().map(|c| (c.range.start.get()..c.range.end.get(), c.text.clone())).collect(),
        positions,
        enc: caps.encoding,
        checked,
    }
}

/// The edit of one open document: `changes` (byte ranges of `base_text`, the document's text).
pub(super) fn doc_edit(path: &SandboxPath, doc: DocState, base_text: SharedText, changes: Vec<TextChange>) -> DocEdit {
    // A change that changes nothing is not sent: the editor would report no didChange for it.
    let no_op = changes.iter().all(|c| base_text.slice(c.range.start.get()..c.range.end.get()) == c.text);
    let mut expected = doc.rope.clone();
    replace_all(&mut expected, changes.iter().map(|c| (c.range.start.get()..c.range.end.get(), c.text.as_str())));
    let changes = if no_op { Vec::new() } else { anchor_before_final_break(&base_text, changes) };
    DocEdit {
        path: path.clone(),
        uri: doc.uri,
        version: doc.version,
        base: doc.rope,
        base_text,
        changes,
        expected,
        was_dirty: doc.dirty,
        last_change: doc.last_change,
    }
}
