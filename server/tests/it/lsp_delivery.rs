//! Delivery in every LSP client's rhythm: editors that debounce their change notifications, that
//! hold them while a request of their own waits, that check no version (or only some), and that
//! take no versioned edits at all. Each test asserts the final buffer, the tool result, and how
//! many workspace edits the call sent (the tool's edit is never sent twice).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::lsp_support::editor::Editor;
use crate::lsp_support::{
    editor_script, error_kind, neovim_capabilities, test_options, text, ChangeOrder, Reply, Script, Session, Setup,
    Strictness,
};
use serde_json::{json, Value};
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, DocumentChanges, Url};

const FILE: &str = "//- a.txt\ntyping:\nold line\ntail\n";

/// Starts a session with `script`, `capabilities` and a verification window of `window`.
async fn start(capabilities: Value, script: Script, window: Duration) -> Session {
    let mut options = test_options(Arc::default(), Arc::default());
    options.limits.verify_timeout = window;
    Session::start(Setup { files: FILE, capabilities, options, script, ..Setup::default() }).await
}

/// `edit_file` in the standard profile, through `tether.callTool`.
async fn edit(s: &Session, old: &str, new: &str) -> Value {
    let args = json!({"tool": "edit_file", "profile": "standard",
                      "arguments": {"path": "a.txt", "old_string": old, "new_string": new}});
    s.execute("tether.callTool", vec![args]).await.expect("a tool result")
}

fn uri_of_edit(params: &Value) -> Url {
    let p: ApplyWorkspaceEditParams = serde_json::from_value(params.clone()).expect("params");
    match (p.edit.document_changes, p.edit.changes) {
        (Some(DocumentChanges::Edits(e)), _) => e[0].text_document.uri.clone(),
        (_, Some(changes)) => changes.keys().next().expect("a document").clone(),
        other => panic!("expected text edits: {other:?}"),
    }
}

fn labels(s: &Session) -> Vec<String> {
    s.client
        .server_requests("workspace/applyEdit")
        .iter()
        .map(|p| p["label"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn buffer(s: &Session) -> String {
    s.editor.buffer(&s.uri("a.txt")).map(|b| b.1).expect("open")
}

/// An editor that applies edits (checking versions) and reports them `delay` later.
fn debounced(delay: Duration) -> Script {
    Arc::new(move |editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, notes) = editor.apply(&p.edit, Strictness::Strict);
        let client = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            notes.into_iter().for_each(|n| client.send(n));
        });
        Reply::ok(serde_json::to_value(response).expect("json"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debounced_change_notifications_are_waited_for() {
    for delay in [200, 600, 1500] {
        let s = start(neovim_capabilities(), debounced(Duration::from_millis(delay)), Duration::from_secs(3)).await;
        s.open_from_disk("a.txt");
        let r = edit(&s, "old line", "new line").await;
        assert_eq!(r["isError"], false, "{delay} ms: {r}");
        assert!(text(&r).contains("a.txt: applied to the open editor buffer and saved"), "{delay} ms: {r}");
        assert_eq!(buffer(&s), "typing:\nnew line\ntail\n");
        assert_eq!(s.disk("a.txt"), "typing:\nnew line\ntail\n", "saved once its change showed");
        assert_eq!(labels(&s).len(), 1, "{delay} ms: sent once");
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_holding_its_notifications_during_its_request_is_answered_from_its_word() {
    // As eglot: during its own executeCommand it sends no didChange at all; they come after.
    let held: Arc<Mutex<Vec<Value>>> = Arc::default();
    let queue = held.clone();
    let script: Script = Arc::new(move |editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, notes) = editor.apply(&p.edit, Strictness::Strict);
        queue.lock().expect("lock").extend(notes);
        Reply::ok(serde_json::to_value(response).expect("json"))
    });
    let window = Duration::from_secs(2);
    let s = start(neovim_capabilities(), script, window).await;
    s.open_from_disk("a.txt");
    let flush = |s: &Session| held.lock().expect("lock").drain(..).for_each(|n| s.client.send(n));

    let r = edit(&s, "old line", "new line").await;
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("the editor reports it applied"), "answered from the editor's word: {r}");
    flush(&s);
    // The follow-up sees the change and saves the buffer, which was clean.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.disk("a.txt") != "typing:\nnew line\ntail\n" {
        assert!(Instant::now() < deadline, "the follow-up never saved the buffer");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some("typing:\nnew line\ntail\n".to_owned()));

    // Learned: the next call from the editor is answered without waiting out the window.
    let started = Instant::now();
    let r = edit(&s, "tail", "end").await;
    assert!(started.elapsed() < window / 2, "waited {:?}", started.elapsed());
    assert_eq!(r["isError"], false, "{r}");
    flush(&s);
    s.sync().await;
    assert_eq!(buffer(&s), "typing:\nnew line\nend\n");
    assert_eq!(labels(&s).len(), 2, "each edit sent once");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_holding_unreported_typing_is_told_at_once_to_run_the_command_again() {
    // As eglot: the user typed and ran the command before the idle timer reported the typing;
    // the editor refuses the edit on its version, and reports the typing only after the command.
    let held: Arc<Mutex<Vec<Value>>> = Arc::default();
    let queue = held.clone();
    let first = std::sync::atomic::AtomicBool::new(true);
    let script: Script = Arc::new(move |editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let uri = uri_of_edit(&params);
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            queue.lock().expect("lock").push(editor.type_text(&uri, 0, 0, "typed "));
        }
        let (version, _) = editor.buffer(&uri).expect("open");
        let message = format!("Edits on `a.txt' require version 1, you have {version}");
        Reply { result: Err(json!({"code": -32603, "message": message})), then: Vec::new() }
    });
    let window = Duration::from_secs(1);
    let s = start(neovim_capabilities(), script, window).await;
    s.open_from_disk("a.txt");
    let flush = |s: &Session| held.lock().expect("lock").drain(..).for_each(|n| s.client.send(n));

    let r = edit(&s, "old line", "new line").await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("require version 1, you have 2"), "quotes the editor: {r}");
    assert!(text(&r).contains("nothing was changed: run the command again"), "{r}");
    assert_eq!(labels(&s).len(), 1, "not sent again: the editor would refuse the same text again");
    flush(&s);
    s.sync().await;
    assert_eq!(buffer(&s), "typed typing:\nold line\ntail\n");

    // Learned: the next refusal of this kind is told at once.
    s.client.send(s.editor.type_text(&s.uri("a.txt"), 0, 0, "x"));
    s.sync().await;
    let started = Instant::now();
    let r = edit(&s, "old line", "new line").await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(started.elapsed() < window / 2, "waited {:?}", started.elapsed());
    assert_eq!(labels(&s).len(), 2);
    s.shutdown().await;
}

/// A Neovim-like editor whose user types `typed` (byte range and text) just before the edit
/// arrives; both changes are reported together after the answer, as Neovim's debounce does.
fn typing_first(strictness: Strictness, typed: (usize, usize, &'static str)) -> Script {
    let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
    Arc::new(move |editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(strictness, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let uri = uri_of_edit(&params);
        let mut notes = Vec::new();
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            notes.push(editor.type_text(&uri, typed.0, typed.1, typed.2));
        }
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, applied) = editor.apply(&p.edit, strictness);
        notes.extend(applied);
        Reply { result: Ok(serde_json::to_value(response).expect("json")), then: vec![Editor::merge(&notes)] }
    })
}

/// Opens a.txt at version 0, as Neovim does for a buffer it just opened.
fn open_at_version_0(s: &Session) {
    let text = s.disk("a.txt");
    s.client.send(s.editor.open(&s.uri("a.txt"), &text, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_around_an_edit_on_an_unchecked_buffer_lands_once_in_the_right_place() {
    // (typed change as byte range and text, the buffer after, whether the edit had to be moved)
    let cases = [
        ((21, 21, "!"), "typing:\nnew line\ntail!\n", false), // after the range
        ((16, 16, "X"), "typing:\nnew lineX\ntail\n", false), // same line, after the range
        ((8, 8, ">> "), "typing:\n>> new line\ntail\n", true), // same line, before the range
        ((0, 0, "first\n"), "first\ntyping:\nnew line\ntail\n", true), // an earlier line
        ((7, 7, " a\nb"), "typing: a\nb\nnew line\ntail\n", true), // a line break before
    ];
    for (typed, want, moved) in cases {
        let s = start(neovim_capabilities(), typing_first(Strictness::Neovim, typed), Duration::from_secs(2)).await;
        open_at_version_0(&s);
        let r = edit(&s, "old line", "new line").await;
        assert_eq!(r["isError"], false, "{typed:?}: {r}");
        assert_eq!(buffer(&s), want, "{typed:?}: keystroke and edit once each, in place");
        assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some(want.to_owned()));
        let labels = labels(&s);
        if moved {
            assert!(text(&r).contains("tether moved it to its place"), "{typed:?}: {r}");
            assert_eq!(labels, ["tether: edit_file", "tether: edit_file (moved to its place)"], "{typed:?}");
        } else {
            assert!(text(&r).contains("unsaved changes"), "{typed:?}: {r}");
            assert_eq!(labels, ["tether: edit_file"], "{typed:?}");
        }
        assert_eq!(s.disk("a.txt"), "typing:\nold line\ntail\n", "the user's typing is not saved for them");
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_edit_is_run_again_on_the_new_text() {
    // Neovim with a buffer past version 0: the stale edit is skipped, the answer is applied.
    let s =
        start(neovim_capabilities(), typing_first(Strictness::Neovim, (0, 0, "first\n")), Duration::from_secs(2)).await;
    s.open_from_disk("a.txt");
    let r = edit(&s, "old line", "new line").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(buffer(&s), "first\ntyping:\nnew line\ntail\n");
    assert_eq!(labels(&s).len(), 2, "skipped once, then landed");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_versioned_edits_gets_plain_changes_and_the_same_repair() {
    let caps = json!({"general": {"positionEncodings": ["utf-16"]}});
    let s = start(caps, typing_first(Strictness::Blind, (0, 0, "first\n")), Duration::from_secs(2)).await;
    s.open_from_disk("a.txt");
    let r = edit(&s, "old line", "new line").await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(buffer(&s), "first\ntyping:\nnew line\ntail\n");
    assert!(text(&r).contains("sent unversioned"), "{r}");
    let edits = s.client.server_requests("workspace/applyEdit");
    assert!(edits.iter().all(|e| e["edit"]["changes"].is_object() && e["edit"]["documentChanges"].is_null()));
    assert_eq!(edits.len(), 2, "the edit, then its move");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_into_a_misplaced_edit_is_reported_not_retried() {
    // The edit lands at stale positions, and the user's next keystroke lands inside it before
    // the editor reports anything: tether can take nothing back exactly, and says so.
    let script: Script = Arc::new(|editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Blind, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let uri = uri_of_edit(&params);
        let mut notes = vec![editor.type_text(&uri, 0, 0, "first\n")];
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, applied) = editor.apply(&p.edit, Strictness::Blind);
        notes.extend(applied);
        // "typing:" now holds "new line": type inside it.
        notes.push(editor.type_text(&uri, 8, 8, "Z"));
        Reply { result: Ok(serde_json::to_value(response).expect("json")), then: vec![Editor::merge(&notes)] }
    });
    let s = start(neovim_capabilities(), script, Duration::from_secs(2)).await;
    open_at_version_0(&s);
    let r = edit(&s, "old line", "new line").await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("not where it was meant"), "{r}");
    assert_eq!(labels(&s).len(), 1, "not sent again");
    assert_eq!(buffer(&s), "first\nneZwing:\nold line\ntail\n", "edit_file sent old -> new only");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_notification_before_the_answer_counts_for_a_checked_version() {
    // The editor reports the user's keystroke, then skips the stale edit and answers applied:
    // the version it checks had moved on, so the edit cannot have landed.
    let script: Script = Arc::new(|editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Neovim, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let uri = uri_of_edit(&params);
        let (version, _) = editor.buffer(&uri).expect("open");
        if version == 1 {
            client.send(editor.type_text(&uri, 0, 0, "x"));
        }
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, notes) = editor.apply(&p.edit, Strictness::Neovim);
        Reply { result: Ok(serde_json::to_value(response).expect("json")), then: notes }
    });
    let s = start(neovim_capabilities(), script, Duration::from_secs(10)).await;
    s.open_from_disk("a.txt");
    let started = Instant::now();
    let r = edit(&s, "old line", "new line").await;
    assert_eq!(r["isError"], false, "{r}");
    assert!(started.elapsed() < Duration::from_secs(5), "decided without waiting out the window");
    assert_eq!(buffer(&s), "xtyping:\nnew line\ntail\n");
    assert_eq!(labels(&s).len(), 2);
    s.shutdown().await;
}
