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
//! - **Saving.** A buffer that was clean before the edit is saved after it: through
//!   `tether/saveDocuments` when the client supports it, else by writing the same text to disk
//!   through the disk sink. A dirty buffer stays dirty, and the result says so.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ropey::Rope;
use tokio::runtime::Handle;
use tower_lsp::lsp_types::{
    DeleteFile, DeleteFileOptions, DocumentChangeOperation, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, RenameFile, RenameFileOptions, ResourceOp, TextDocumentEdit, Url,
    WorkspaceEdit,
};

use super::capabilities::ClientCaps;
use super::convert::{anchor_before_final_break, text_edits, uri_of};
use super::protocol::{SaveDocuments, SaveDocumentsParams};
use super::server::Shared;
use super::store::{DocState, Expectation};
use super::SavePolicy;
use crate::edit::{minimal_changes, Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::sink::{Applied, Destination, Sink};
use crate::vfs::{Origin, Vfs};
use crate::workspace::SandboxPath;

/// The sink of one attempt of one tool call inside `tether lsp`.
pub(crate) struct EditorSink {
    shared: Arc<Shared>,
    handle: Handle,
    /// The `label` of the workspace edits: says which tool made them.
    label: String,
    last_attempt: bool,
    retry: AtomicBool,
    /// What the last successful `apply` did (the bridge reports disk destinations too).
    applied: std::sync::Mutex<Option<Applied>>,
}

/// A change to one open document.
struct DocEdit {
    path: SandboxPath,
    uri: Url,
    version: i32,
    /// The text the changes apply to (the store's rope at `version`).
    base: Rope,
    /// The same text as one string (shared with the plan's base: no copy).
    base_text: Arc<String>,
    changes: Vec<TextChange>,
    /// The text the document holds once the changes land: `base` with them applied, as a rope
    /// that shares every unchanged part with it.
    expected: Rope,
    was_dirty: bool,
    /// When the document last changed (the store's clock).
    last_change: u64,
}

/// An operation the editor carries out.
enum EditorOp {
    Edit(DocEdit),
    Rename { from: SandboxPath, old_uri: Url, new_uri: Url, to: SandboxPath, overwrite: bool, dirty: bool },
    Delete { path: SandboxPath, uri: Url, recursive: bool },
}

impl EditorOp {
    fn path(&self) -> &SandboxPath {
        match self {
            EditorOp::Edit(e) => &e.path,
            EditorOp::Rename { from, .. } => from,
            EditorOp::Delete { path, .. } => path,
        }
    }
}

impl EditorSink {
    /// A sink for one attempt of tool `tool`; `last_attempt` words a conflict as final.
    pub fn new(shared: Arc<Shared>, handle: Handle, tool: &str, last_attempt: bool) -> EditorSink {
        EditorSink {
            shared,
            handle,
            label: format!("tether: {tool}"),
            last_attempt,
            retry: AtomicBool::new(false),
            applied: std::sync::Mutex::new(None),
        }
    }

    /// Where each change of the last applied plan went, if one was applied.
    pub fn applied(&self) -> Option<Applied> {
        self.applied.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether the plan met a buffer that changed meanwhile, so that running the tool again on
    /// a fresh snapshot may succeed.
    pub fn wants_retry(&self) -> bool {
        self.retry.load(Ordering::Relaxed)
    }

    /// A `conflict` that a retry on a fresh snapshot can resolve.
    fn stale(&self, path: &SandboxPath, why: &str) -> Error {
        self.retry.store(true, Ordering::Relaxed);
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
                FileOp::Create { path, text, overwrite } => match store.get(path.real()) {
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
                        let base_text = Arc::new(String::from(&doc.rope));
                        let changes = minimal_changes(&base_text, text);
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

    /// Sends the editor's part as one workspace edit and checks that it landed. Returns, per
    /// operation, the document version that showed the edited text (for text edits).
    async fn apply_in_editor(&self, caps: &ClientCaps, ops: &[&EditorOp]) -> Result<Vec<Option<i32>>> {
        let store = &self.shared.store;
        let limits = &self.shared.options.limits;
        let mut watches: Vec<(usize, Expectation<'_>)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            if let EditorOp::Edit(e) = op {
                if !e.changes.is_empty() {
                    watches.push((i, store.expect(e.path.real(), e.expected.clone())));
                }
            }
        }
        let Some((edit, order)) = workspace_edit(caps, ops) else {
            return Ok(vec![None; ops.len()]);
        };
        let first = ops[0].path();
        match tokio::time::timeout(limits.apply_timeout, self.send_edit(edit, &self.label)).await {
            Err(_) => {
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
            Ok(Err(e)) => return Err(self.stale(first, &format!("the editor failed the edit ({})", e.message))),
            Ok(Ok(r)) if !r.applied => {
                let reason = r.failure_reason.map(|r| format!(": {r}")).unwrap_or_default();
                let failed = r.failed_change.and_then(|i| order.get(i as usize)).and_then(|&i| ops.get(i));
                let path = failed.map_or(first, |op| op.path());
                // The editor usually refuses because a buffer moved on, and it may report that
                // change only later (Neovim waits 150 ms): let it arrive, so that the retry reads
                // the buffer as the editor has it rather than failing on the same stale text.
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
                if !sent.is_empty() {
                    let deadline = tokio::time::Instant::now() + limits.verify_timeout;
                    store.wait_any_newer(&sent, deadline).await;
                }
                return Err(self.stale(path, &format!("the editor refused the edit{reason}")));
            }
            Ok(Ok(_)) => {}
        }
        // The answer alone proves nothing: wait for the didChange that shows each edited text.
        let deadline = tokio::time::Instant::now() + limits.verify_timeout;
        let mut reached = vec![None; ops.len()];
        let mut missing = None;
        for (i, watch) in &mut watches {
            match tokio::time::timeout_at(deadline, watch.reached()).await {
                Ok(Some(v)) => reached[*i] = Some(v),
                _ => {
                    missing.get_or_insert(*i);
                }
            }
        }
        drop(watches);
        if let Some(i) = missing {
            self.revert(caps, ops, &reached).await;
            return Err(self.stale(
                ops[i].path(),
                "the editor reported the edit applied, but the buffer never showed the edited text (it changed \
                 meanwhile, or the editor skipped the edit as stale)",
            ));
        }
        for op in ops {
            let landed = match op {
                EditorOp::Edit(_) => true,
                EditorOp::Rename { from, to, .. } => !exists(from.path()) && exists(to.path()),
                EditorOp::Delete { path, .. } => !exists(path.path()),
            };
            if !landed {
                let p = op.path();
                return Err(Error::new(
                    ErrorKind::IoError,
                    format!(
                        "{}: the editor reported the change applied, but the file system does not show it",
                        p.given()
                    ),
                )
                .with_path(p.given()));
            }
        }
        Ok(reached)
    }

    /// Takes back, best effort, the text edits that did land when another part of the same edit
    /// did not, so that the plan stays all or nothing.
    async fn revert(&self, caps: &ClientCaps, ops: &[&EditorOp], reached: &[Option<i32>]) {
        for (op, version) in ops.iter().zip(reached) {
            let (EditorOp::Edit(e), Some(version)) = (op, version) else { continue };
            let Some(doc) = self.shared.store.get(e.path.real()) else { continue };
            if doc.version != *version {
                tracing::warn!(path = %e.path.given(), "an edit that landed could not be taken back: the buffer changed since");
                continue;
            }
            // The buffer's own text: it may hold the expected text with a final break added.
            let current = Arc::new(String::from(&doc.rope));
            let undo = DocEdit {
                path: e.path.clone(),
                uri: e.uri.clone(),
                version: *version,
                base: doc.rope.clone(),
                changes: anchor_before_final_break(&current, minimal_changes(&current, &e.base_text)),
                base_text: current,
                expected: e.base.clone(),
                was_dirty: e.was_dirty,
                last_change: doc.last_change,
            };
            let Some((edit, _)) = workspace_edit(caps, &[&EditorOp::Edit(undo)]) else { continue };
            // Wait for the take-back to show, as for any edit, so that the retry reads the
            // buffer as it is after it.
            let mut watch = self.shared.store.expect(e.path.real(), e.base.clone());
            let limits = &self.shared.options.limits;
            let label = format!("{} (taken back)", self.label);
            let answer = tokio::time::timeout(limits.apply_timeout, self.send_edit(edit, &label)).await;
            let shown = match answer {
                Ok(Ok(r)) if r.applied => {
                    tokio::time::timeout(limits.verify_timeout, watch.reached()).await.ok().flatten()
                }
                _ => None,
            };
            if shown.is_none() {
                tracing::warn!(path = %e.path.given(), "the editor did not take back an edit that landed");
            }
        }
    }

    /// Sends one `workspace/applyEdit` labelled with the tool's name.
    async fn send_edit(
        &self,
        edit: WorkspaceEdit,
        label: &str,
    ) -> tower_lsp::jsonrpc::Result<tower_lsp::lsp_types::ApplyWorkspaceEditResponse> {
        let params = tower_lsp::lsp_types::ApplyWorkspaceEditParams { label: Some(label.to_owned()), edit };
        self.shared.client.send_request::<tower_lsp::lsp_types::request::ApplyWorkspaceEdit>(params).await
    }

    /// Saves the buffers that were clean before the edit; returns where each operation went.
    fn save(&self, caps: &ClientCaps, vfs: &Vfs, ops: &[&EditorOp], reached: &[Option<i32>]) -> Vec<Destination> {
        let mut dests: Vec<Destination> = ops
            .iter()
            .map(|op| match op {
                EditorOp::Edit(e) if e.was_dirty => Destination::BufferUnsaved,
                EditorOp::Edit(_) => Destination::BufferSaved,
                EditorOp::Rename { dirty: true, .. } => Destination::BufferUnsaved,
                EditorOp::Rename { .. } => Destination::BufferSaved,
                EditorOp::Delete { .. } => Destination::Disk,
            })
            .collect();
        let to_save: Vec<(usize, &DocEdit, i32)> = ops
            .iter()
            .zip(reached)
            .enumerate()
            .filter_map(|(i, (op, v))| match (op, v) {
                (EditorOp::Edit(e), Some(v)) if !e.was_dirty => Some((i, e, *v)),
                _ => None,
            })
            .collect();
        if to_save.is_empty() {
            return dests;
        }
        if self.shared.save_policy() == SavePolicy::Never {
            for (i, _, _) in &to_save {
                dests[*i] = Destination::BufferNotSaved;
            }
            return dests;
        }
        if caps.save_documents {
            let params = SaveDocumentsParams { uris: to_save.iter().map(|(_, e, _)| e.uri.clone()).collect() };
            let request = self.shared.client.send_request::<SaveDocuments>(params);
            let answer = self.handle.block_on(tokio::time::timeout(self.shared.options.limits.save_timeout, request));
            let saved = match answer {
                Ok(Ok(r)) => r.saved,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e.message, "tether/saveDocuments failed; the edited buffers stay unsaved");
                    Vec::new()
                }
                Err(_) => {
                    tracing::warn!("tether/saveDocuments got no answer in time; the edited buffers stay unsaved");
                    Vec::new()
                }
            };
            for (i, e, _) in &to_save {
                if !saved.contains(&e.uri) {
                    dests[*i] = Destination::BufferUnsaved;
                }
            }
        } else {
            let disk = Vfs::disk(Arc::new(vfs.workspace().clone()));
            for (i, e, version) in &to_save {
                match self.write_through(&disk, e) {
                    Ok(()) => self.shared.store.mark_clean(e.path.real(), *version),
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

impl Sink for EditorSink {
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let applied = self.apply_plan(vfs, plan)?;
        *self.applied.lock().unwrap_or_else(|e| e.into_inner()) = Some(applied.clone());
        Ok(applied)
    }
}

impl EditorSink {
    fn apply_plan(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let caps = self.shared.caps();
        let steps = self.route(plan, &caps)?;
        let editor: Vec<&EditorOp> = steps.iter().flatten().collect();
        if editor.is_empty() {
            return self.shared.options.disk.apply(vfs, plan);
        }
        let disk_plan = EditPlan {
            ops: plan.ops.iter().zip(&steps).filter(|(_, s)| s.is_none()).map(|(op, _)| op.clone()).collect(),
        };
        // The disk part first, kept pending: taking it back is exact, while an editor's edit
        // that landed can only be reverted by another edit.
        let pending = if disk_plan.is_empty() { None } else { Some(self.shared.options.disk.begin(vfs, &disk_plan)?) };
        let reached = match self.handle.block_on(self.apply_in_editor(&caps, &editor)) {
            Ok(reached) => reached,
            Err(e) => {
                if let Some(pending) = pending {
                    if let Err(re) = pending.rollback() {
                        return Err(Error::new(
                            ErrorKind::IoError,
                            format!(
                                "{}; rolling back the disk part of the change also failed: {}",
                                e.message(),
                                re.message()
                            ),
                        ));
                    }
                }
                return Err(e);
            }
        };
        if let Some(pending) = pending {
            pending.commit();
        }
        let mut dests = self.save(&caps, vfs, &editor, &reached).into_iter();
        let files = plan
            .ops
            .iter()
            .zip(&steps)
            .map(|(op, step)| {
                let dest = match step {
                    None => Destination::Disk,
                    Some(_) => dests.next().unwrap_or(Destination::Disk),
                };
                (op.path().given().to_owned(), dest)
            })
            .collect();
        Ok(Applied { files })
    }
}

fn doc_edit(path: &SandboxPath, doc: DocState, base_text: Arc<String>, changes: Vec<TextChange>) -> DocEdit {
    // A change that changes nothing is not sent: the editor would report no didChange for it.
    let no_op = changes.iter().all(|c| base_text[c.range.start.get()..c.range.end.get()] == c.text);
    let mut expected = doc.rope.clone();
    // From the last change back (a plan's changes are sorted and disjoint), so that each range
    // is still in the base's offsets.
    for c in changes.iter().rev() {
        let (start, end) = (expected.byte_to_char(c.range.start.get()), expected.byte_to_char(c.range.end.get()));
        expected.remove(start..end);
        expected.insert(start, &c.text);
    }
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

/// The workspace edit for the editor's operations, in the form the client supports, and for each
/// entry of `documentChanges` the index of its operation; `None` when there is nothing to send.
///
/// Text edits alone are ordered most recently changed document first: Neovim checks the version
/// of the first text document edit only, and the document the user is typing in is the one whose
/// version matters most.
fn workspace_edit(caps: &ClientCaps, ops: &[&EditorOp]) -> Option<(WorkspaceEdit, Vec<usize>)> {
    let enc = caps.encoding;
    if !caps.document_changes {
        let mut changes: HashMap<Url, Vec<tower_lsp::lsp_types::TextEdit>> = HashMap::new();
        for op in ops {
            if let EditorOp::Edit(e) = op {
                if !e.changes.is_empty() {
                    changes.entry(e.uri.clone()).or_default().extend(text_edits(&e.base, &e.changes, enc));
                }
            }
        }
        let edit = WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() };
        return edit.changes.as_ref().is_some_and(|c| !c.is_empty()).then_some((edit, Vec::new()));
    }
    let mut out: Vec<(usize, u64, DocumentChangeOperation)> = Vec::new();
    let mut resource_ops = false;
    for (i, op) in ops.iter().enumerate() {
        match op {
            EditorOp::Edit(e) if e.changes.is_empty() => {}
            EditorOp::Edit(e) => out.push((
                i,
                e.last_change,
                DocumentChangeOperation::Edit(TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: e.uri.clone(),
                        version: Some(e.version),
                    },
                    edits: text_edits(&e.base, &e.changes, enc).into_iter().map(OneOf::Left).collect(),
                }),
            )),
            EditorOp::Rename { old_uri, new_uri, overwrite, .. } => {
                resource_ops = true;
                let rename = RenameFile {
                    old_uri: old_uri.clone(),
                    new_uri: new_uri.clone(),
                    options: Some(RenameFileOptions { overwrite: Some(*overwrite), ignore_if_exists: Some(false) }),
                    annotation_id: None,
                };
                out.push((i, 0, DocumentChangeOperation::Op(ResourceOp::Rename(rename))));
            }
            EditorOp::Delete { uri, recursive, .. } => {
                resource_ops = true;
                let delete = DeleteFile {
                    uri: uri.clone(),
                    options: Some(DeleteFileOptions {
                        recursive: Some(*recursive),
                        ignore_if_not_exists: Some(false),
                        annotation_id: None,
                    }),
                };
                out.push((i, 0, DocumentChangeOperation::Op(ResourceOp::Delete(delete))));
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    if !resource_ops {
        // Stable, so documents changed at the same moment keep the plan's order.
        out.sort_by_key(|(_, last_change, _)| std::cmp::Reverse(*last_change));
    }
    let order = out.iter().map(|(i, _, _)| *i).collect();
    let ops: Vec<DocumentChangeOperation> = out.into_iter().map(|(_, _, op)| op).collect();
    let document_changes = if resource_ops {
        DocumentChanges::Operations(ops)
    } else {
        DocumentChanges::Edits(
            ops.into_iter()
                .filter_map(|o| match o {
                    DocumentChangeOperation::Edit(e) => Some(e),
                    DocumentChangeOperation::Op(_) => None,
                })
                .collect(),
        )
    };
    Some((WorkspaceEdit { document_changes: Some(document_changes), ..WorkspaceEdit::default() }, order))
}

fn exists(p: &std::path::Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}
