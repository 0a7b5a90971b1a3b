//! The editor sink in-process: edits to open documents travel as `workspace/applyEdit` to a
//! scripted editor, are verified by the `didChange` that follows, retried when a buffer moved on,
//! saved or not, and the disk part of a mixed plan written only once the editor took its part.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::lsp_support::editor::Editor;
use crate::lsp_support::{
    editor_script, error_kind, neovim_capabilities, test_options, text, ChangeOrder, FsSink, Hooks, Reply, Script,
    Session, Setup, Strictness,
};
use serde_json::{json, Value};
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, DocumentChanges};

mod saving;

const FILES: &str = "
//- a.txt
one
two \u{1F600} tr\u{EA}s
//- b.txt
bee
//- closed.txt
closed on disk
";

struct Env {
    s: Session,
    hooks: Arc<Hooks>,
    disk: Arc<FsSink>,
}

async fn start(capabilities: Value, script: Script) -> Env {
    let (hooks, disk) = (Arc::new(Hooks::default()), Arc::new(FsSink::default()));
    let options = test_options(hooks.clone(), disk.clone());
    let s = Session::start(Setup { files: FILES, capabilities, options, script, ..Setup::default() }).await;
    Env { s, hooks, disk }
}

async fn plan(s: &Session, ops: Value) -> Value {
    s.call("plan", json!({ "ops": ops })).await.expect("a tool result")
}

/// `(path, destination)` of a successful `plan` result.
fn destinations(r: &Value) -> Vec<(String, String)> {
    assert_eq!(r["isError"], false, "{r}");
    r["structuredContent"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or_default().to_owned(),
                f["destination"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

const EDITED: &str = "one\n2 \u{1F389} tr\u{EA}s\n";

fn replace_two() -> Value {
    json!([{"op": "replace", "path": "a.txt", "old": "two \u{1F600}", "new": "2 \u{1F389}"}])
}

/// An editor that answers every applyEdit with `applied: false` and `reason`.
fn refusing(reason: &'static str) -> Script {
    Arc::new(move |_, _, method, _| match method {
        "workspace/applyEdit" => Reply::ok(json!({"applied": false, "failureReason": reason})),
        _ => Reply::ok(Value::Null),
    })
}

/// An editor whose user types into every document an edit names just before it arrives: the
/// typing is reported first, then the edit is refused for its version (as VS Code does).
fn typing_then_refusing() -> Script {
    Arc::new(move |editor: &Editor, client, method, params| match method {
        "workspace/applyEdit" => {
            let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
            if let Some(DocumentChanges::Edits(edits)) = p.edit.document_changes {
                for e in edits {
                    client.send(editor.type_text(&e.text_document.uri, 0, 0, "x"));
                }
            }
            Reply::ok(json!({"applied": false, "failureReason": "document version changed"}))
        }
        _ => Reply::ok(Value::Null),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_refused_for_their_version_are_retried_then_conflict() {
    let e = start(neovim_capabilities(), typing_then_refusing()).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("refused") && text(&r).contains("after 3 attempts"), "{r}");
    assert_eq!(s.client.server_requests("workspace/applyEdit").len(), 3);
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 3);
    s.sync().await;
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), s.editor.buffer(&s.uri("a.txt")).map(|b| b.1));
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_refusal_with_no_newer_text_coming_is_not_retried() {
    // Running the tool again would read the same text and be refused the same way.
    let e = start(neovim_capabilities(), refusing("document version changed")).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("nothing was changed: run the command again"), "{r}");
    assert_eq!(s.client.server_requests("workspace/applyEdit").len(), 1);
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 1);
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_edit_is_rejected_at_once_with_the_reason() {
    // As eglot when the user answers "no" to "Server wants to edit": a JSON-RPC error; as VS Code
    // when a refactor preview is cancelled: `applied: false` with a reason.
    let error: Script = Arc::new(|_, _, method, _| match method {
        "workspace/applyEdit" => {
            Reply { result: Err(json!({"code": -32603, "message": "User cancelled server edit"})), then: Vec::new() }
        }
        _ => Reply::ok(Value::Null),
    });
    for script in [error, refusing("the user cancelled the refactoring preview")] {
        let e = start(neovim_capabilities(), script).await;
        let s = &e.s;
        s.open_from_disk("a.txt");
        let r = plan(s, replace_two()).await;
        assert_eq!(error_kind(&r).as_deref(), Some("rejected"), "{r}");
        assert!(text(&r).contains("cancelled"), "the reason is quoted: {r}");
        assert_eq!(s.client.server_requests("workspace/applyEdit").len(), 1, "asked once");
        assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 1, "no retry");
        e.s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_reported_applied_but_not_seen_is_a_conflict() {
    // The editor says applied, but the text it reports is something else: the user's keystroke.
    let script: Script = Arc::new(|editor, client, method, params| match method {
        "workspace/applyEdit" => {
            let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
            let uri = match p.edit.document_changes {
                Some(tower_lsp::lsp_types::DocumentChanges::Edits(e)) => e[0].text_document.uri.clone(),
                other => panic!("expected text edits: {other:?}"),
            };
            client.send(editor.type_text(&uri, 0, 0, "x"));
            Reply::ok(json!({"applied": true}))
        }
        _ => Reply::ok(Value::Null),
    });
    let e = start(neovim_capabilities(), script).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("skipped it") && text(&r).contains("after 3 attempts"), "{r}");
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 3);
    let (_, buffer) = s.editor.buffer(&s.uri("a.txt")).expect("open");
    assert_eq!(buffer, format!("xxx{}", s.disk("a.txt")), "only the user's keystrokes");
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lenient_editor_skipping_a_stale_edit_is_caught_and_retried() {
    // As Neovim: the user types just before the edit arrives; the edit is skipped as stale, yet
    // the answer is `applied: true`. The retry runs on the new text and lands.
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = editor_script(Strictness::Lenient, ChangeOrder::AfterAnswer);
    let counter = calls.clone();
    let script: Script = Arc::new(move |editor, client, method, params| {
        if method == "workspace/applyEdit" && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            let uri = url_in(&params);
            client.send(editor.type_text(&uri, 0, 0, "typed "));
        }
        inner(editor, client, method, params)
    });
    let e = start(neovim_capabilities(), script).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_unsaved")]), "dirty after the user typed");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 2);
    let want = format!("typed {EDITED}");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(want.clone()));
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some(want));
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_waits_for_the_late_change_that_caused_it() {
    // A strict editor (the Neovim plugin's handler) refuses an edit because the user typed just
    // before it arrived, and reports that keystroke only later (Neovim's 150 ms debounce). The
    // retry must read the buffer after the keystroke, not the same stale text again.
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let counter = calls.clone();
    let script: Script = Arc::new(move |editor, client, method, params| {
        if method == "workspace/applyEdit" && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            let note = editor.type_text(&url_in(&params), 0, 0, "typed ");
            let client = client.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                client.send(note);
            });
            return Reply::ok(json!({"applied": false, "failureReason": "the buffer is newer than the edit"}));
        }
        inner(editor, client, method, params)
    });
    let e = start(neovim_capabilities(), script).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_unsaved")]), "{r}");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "refused once, then applied");
    let want = format!("typed {EDITED}");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(want.clone()));
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some(want));
    e.s.shutdown().await;
}

fn url_in(params: &Value) -> tower_lsp::lsp_types::Url {
    let p: ApplyWorkspaceEditParams = serde_json::from_value(params.clone()).expect("params");
    match p.edit.document_changes {
        Some(tower_lsp::lsp_types::DocumentChanges::Edits(e)) => e[0].text_document.uri.clone(),
        other => panic!("expected text edits: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_edit_between_read_and_apply_is_retried_on_the_new_text() {
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = Arc::new(e.s);
    s.open_from_disk("a.txt");
    let (handle, session) = (tokio::runtime::Handle::current(), s.clone());
    e.hooks.before_apply.lock().expect("lock").push(Box::new(move || {
        // On the blocking pool, after the tool read the buffer: the user types, and the server
        // has seen it before the plan is applied.
        session.type_text("a.txt", 0, 3, "ONE");
        handle.block_on(session.sync());
    }));
    let r = plan(&s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_unsaved")]));
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 2);
    assert_eq!(s.client.server_requests("workspace/applyEdit").len(), 1, "the stale plan was never sent");
    let want = EDITED.replacen("one", "ONE", 1);
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(want.clone()));
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some(want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buffer_reopened_at_the_same_version_is_not_mistaken_for_the_one_read() {
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = Arc::new(e.s);
    s.open_from_disk("a.txt");
    let (handle, session) = (tokio::runtime::Handle::current(), s.clone());
    let reopened = "one\ntwo \u{1F600} tr\u{EA}s\nreopened\n";
    e.hooks.before_apply.lock().expect("lock").push(Box::new(move || {
        // After the tool read version 1: the editor closes the buffer and opens it again, with
        // other text and the same version number.
        session.client.send(session.editor.close(&session.uri("a.txt")));
        session.open("a.txt", reopened);
        handle.block_on(session.sync());
    }));
    let r = plan(&s, replace_two()).await;
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 2, "the first plan was stale: {r}");
    let want = format!("{EDITED}reopened\n");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(want.clone()));
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some(want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partly_applied_edits_are_taken_back_before_the_retry() {
    // Two buffers in one edit; the user types in b.txt just before, so a lenient editor applies
    // a.txt's part and skips b.txt's. tether takes a.txt's back, then retries both.
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = editor_script(Strictness::Lenient, ChangeOrder::AfterAnswer);
    let counter = calls.clone();
    let script: Script = Arc::new(move |editor, client, method, params| {
        if method == "workspace/applyEdit" && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            let b = editor_uri(&params, "b.txt");
            client.send(editor.type_text(&b, 3, 3, "!"));
        }
        inner(editor, client, method, params)
    });
    let e = start(neovim_capabilities(), script).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    s.open_from_disk("b.txt");
    let r = plan(
        s,
        json!([{"op": "append", "path": "a.txt", "text": "appended\n"},
               {"op": "append", "path": "b.txt", "text": "appended\n"}]),
    )
    .await;
    // The take-back is itself a change: like the editor's own modified flag, tether counts
    // a.txt as changed since its last save, so it is no longer saved automatically.
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_unsaved"), ("b.txt", "buffer_unsaved")]));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "edit, take-back, retry");
    let buffer = |p: &str| s.editor.buffer(&s.uri(p)).map(|b| b.1).unwrap_or_default();
    assert_eq!(buffer("a.txt"), "one\ntwo \u{1F600} tr\u{EA}s\nappended\n", "appended once");
    assert_eq!(buffer("b.txt"), "bee!\nappended\n");
    e.s.shutdown().await;
}

fn editor_uri(params: &Value, name: &str) -> tower_lsp::lsp_types::Url {
    let p: ApplyWorkspaceEditParams = serde_json::from_value(params.clone()).expect("params");
    let Some(tower_lsp::lsp_types::DocumentChanges::Edits(edits)) = p.edit.document_changes else {
        panic!("expected text edits")
    };
    edits.into_iter().map(|e| e.text_document.uri).find(|u| u.path().ends_with(name)).expect("the document")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renames_and_deletes_of_open_documents_are_resource_operations() {
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    s.open_from_disk("b.txt");
    let r = plan(
        s,
        json!([{"op": "rename", "from": "a.txt", "to": "moved/a2.txt"}, {"op": "delete", "path": "b.txt"},
               {"op": "rename", "from": "closed.txt", "to": "closed2.txt"}]),
    )
    .await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_saved"), ("b.txt", "disk"), ("closed.txt", "disk")]));
    let edit = &s.client.server_requests("workspace/applyEdit")[0]["edit"];
    let kinds: Vec<&str> =
        edit["documentChanges"].as_array().expect("ops").iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["rename", "delete"], "{edit}");
    assert!(!s.path("a.txt").exists() && s.path("moved/a2.txt").exists());
    assert!(!s.path("b.txt").exists());
    assert!(!s.path("closed.txt").exists() && s.path("closed2.txt").exists(), "closed files move on disk");
    assert_eq!(e.disk.applied.load(Ordering::SeqCst), 1);
    e.s.shutdown().await;

    // Without resource operations, the disk sink moves them.
    let mut caps = neovim_capabilities();
    caps["workspace"]["workspaceEdit"]["resourceOperations"] = json!([]);
    let e = start(caps, editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, json!([{"op": "rename", "from": "a.txt", "to": "a2.txt"}])).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "disk")]));
    assert!(s.client.server_requests("workspace/applyEdit").is_empty());
    assert!(s.path("a2.txt").exists());
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_an_open_file_replaces_its_buffer_text() {
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open("new.txt", "typed in a new buffer\n");
    let r = plan(s, json!([{"op": "create", "path": "new.txt", "text": "created\n"}])).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "not without overwrite: {r}");
    let r = plan(s, json!([{"op": "create", "path": "new.txt", "text": "created\n", "overwrite": true}])).await;
    assert_eq!(destinations(&r), pairs(&[("new.txt", "buffer_unsaved")]), "a buffer with no file is dirty");
    assert_eq!(s.editor.buffer(&s.uri("new.txt")).map(|b| b.1).as_deref(), Some("created\n"));
    assert!(!s.path("new.txt").exists());
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_plans_are_all_or_nothing() {
    let ops = json!([
        {"op": "create", "path": "made/new.txt", "text": "new\n"},
        {"op": "replace", "path": "closed.txt", "old": "closed", "new": "CLOSED"},
        {"op": "replace", "path": "a.txt", "old": "one", "new": "ONE"},
    ]);
    // Both parts succeed: the disk part on disk, the buffer part in the buffer.
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, ops.clone()).await;
    assert_eq!(destinations(&r), pairs(&[("made/new.txt", "disk"), ("closed.txt", "disk"), ("a.txt", "buffer_saved")]));
    assert_eq!(s.disk("closed.txt"), "CLOSED on disk\n");
    assert_eq!(s.disk("made/new.txt"), "new\n");
    assert!(s.disk("a.txt").starts_with("ONE\n"));
    e.s.shutdown().await;

    // The disk part fails: nothing is sent to the editor, nothing changes.
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    *e.disk.fail_on.lock().expect("lock") = Some("closed.txt".into());
    let r = plan(s, ops.clone()).await;
    assert_eq!(error_kind(&r).as_deref(), Some("io_error"), "{r}");
    assert!(s.client.server_requests("workspace/applyEdit").is_empty());
    assert_eq!(s.disk("closed.txt"), "closed on disk\n");
    assert!(!s.path("made").exists());
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(s.disk("a.txt")));
    e.s.shutdown().await;

    // The editor part fails: the disk part is never written, every attempt (the same inode: no
    // reader saw it changed and changed back).
    let e = start(neovim_capabilities(), typing_then_refusing()).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let inode = || {
        let meta = std::fs::metadata(s.path("closed.txt")).expect("meta");
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(windows)]
        let ino = 0; // std has no stable file index on Windows: the modification time stands in
        (ino, meta.modified().expect("mtime"))
    };
    let before = inode();
    let r = plan(s, ops.clone()).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert_eq!(e.disk.applied.load(Ordering::SeqCst), 3, "prepared three times");
    assert_eq!(inode(), before, "never written");
    assert_eq!(s.disk("closed.txt"), "closed on disk\n");
    assert!(!s.path("made").exists(), "created directories are removed too");
    e.s.shutdown().await;

    // The user declines the editor part: rolled back once, not retried.
    let e = start(neovim_capabilities(), refusing("no")).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, ops).await;
    assert_eq!(error_kind(&r).as_deref(), Some("rejected"), "{r}");
    assert_eq!(e.disk.applied.load(Ordering::SeqCst), 1, "prepared once, never written");
    assert_eq!(s.disk("closed.txt"), "closed on disk\n");
    assert!(!s.path("made").exists());
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_calls_each_waiting_for_its_did_change_all_finish() {
    // Each call holds a tower-lsp handler slot until the didChange for its edit arrives; with
    // as many calls as are admitted, the didChanges must still find free slots.
    let n = tether::lsp::Limits::default().max_admitted;
    let files: String = (0..n).map(|i| format!("//- f{i}.txt\nfile {i}\n")).collect();
    let (hooks, disk) = (Arc::new(Hooks::default()), Arc::new(FsSink::default()));
    let mut options = test_options(hooks.clone(), disk);
    options.limits.verify_timeout = std::time::Duration::from_secs(10);
    let s = Session::start(Setup {
        files: Box::leak(files.into_boxed_str()),
        options,
        script: editor_script(Strictness::Strict, ChangeOrder::AfterAnswer),
        ..Setup::default()
    })
    .await;
    for i in 0..n {
        s.open_from_disk(&format!("f{i}.txt"));
    }
    let calls = (0..n).map(|i| {
        let p = format!("f{i}.txt");
        let s = &s;
        async move { plan(s, json!([{"op": "replace", "path": p, "old": "file", "new": "edited"}])).await }
    });
    let results = futures_join_all(calls).await;
    for (i, r) in results.iter().enumerate() {
        assert_eq!(destinations(r), pairs(&[(format!("f{i}.txt").as_str(), "buffer_saved")]));
        assert_eq!(s.disk(&format!("f{i}.txt")), format!("edited {i}\n"));
    }
    assert_eq!(hooks.plan_runs.load(Ordering::SeqCst), n, "no call needed a retry");
    s.shutdown().await;
}

/// Runs futures concurrently and collects their outputs in order.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut out = Vec::with_capacity(set.len());
    let mut polled: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in set.iter_mut().zip(polled.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.extend(polled.into_iter().flatten());
    out
}

/// The standard profile's own edit tools and the real disk sink.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_edit_tools_reach_buffers_and_the_real_disk_sink() {
    let mut caps = neovim_capabilities();
    caps["experimental"] = json!({}); // No tether/saveDocuments: the server saves through the disk sink.
    let s = Session::start(Setup {
        files: FILES,
        capabilities: caps,
        options: tether::lsp::Options::default(),
        script: editor_script(Strictness::Lenient, ChangeOrder::AfterAnswer),
        ..Setup::default()
    })
    .await;
    s.open_from_disk("a.txt");
    let r =
        s.call("edit_file", json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"})).await.expect("result");
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("applied to the open editor buffer and saved"), "{r}");
    let want = "ONE\ntwo \u{1F600} tr\u{EA}s\n";
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1).as_deref(), Some(want));
    assert_eq!(s.disk("a.txt"), want, "written by the server through the disk sink");
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.2), Some(false), "clean again");

    let r = s.call("write_file", json!({"path": "closed.txt", "content": "rewritten\n"})).await.expect("result");
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(s.disk("closed.txt"), "rewritten\n");
    assert!(s.client.server_requests("workspace/applyEdit").len() == 1, "closed files never go to the editor");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appending_at_the_end_suits_an_editor_with_a_final_newline_property() {
    // Neovim adds a stray line for an insertion after the last line; tether never sends one.
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.editor.neovim_end_of_file.store(true, Ordering::SeqCst);
    s.open_from_disk("a.txt");
    let r = plan(s, json!([{"op": "append", "path": "a.txt", "text": "four\n"}])).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_saved")]));
    assert_eq!(e.hooks.plan_runs.load(Ordering::SeqCst), 1);
    let want = "one\ntwo \u{1F600} tr\u{EA}s\nfour\n";
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1).as_deref(), Some(want));
    let edit = &s.client.server_requests("workspace/applyEdit")[0]["edit"];
    let range = &edit["documentChanges"][0]["edits"][0]["range"];
    assert_eq!(range["start"], json!({"line": 1, "character": 14}), "before the final line break (utf-8): {edit}");
    e.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_changed_last_comes_first() {
    // Neovim checks the version of the first text document edit only: put first the buffer the
    // user is most likely typing in.
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    s.open_from_disk("b.txt");
    s.type_text("a.txt", 0, 0, "typed ");
    let ops =
        json!([{"op": "append", "path": "b.txt", "text": "b\n"}, {"op": "append", "path": "a.txt", "text": "a\n"}]);
    let r = plan(s, ops).await;
    assert_eq!(destinations(&r), pairs(&[("b.txt", "buffer_saved"), ("a.txt", "buffer_unsaved")]));
    let edit = &s.client.server_requests("workspace/applyEdit")[0]["edit"];
    let uris: Vec<&str> = edit["documentChanges"]
        .as_array()
        .expect("edits")
        .iter()
        .filter_map(|d| d["textDocument"]["uri"].as_str())
        .collect();
    assert!(uris[0].ends_with("/a.txt") && uris[1].ends_with("/b.txt"), "{uris:?}");
    e.s.shutdown().await;
}
