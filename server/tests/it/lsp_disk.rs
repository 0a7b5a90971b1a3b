//! Another program changes the file of an open document: the change is merged into a buffer
//! with unsaved changes as one versioned edit, recorded as a change on disk, and the editor is
//! told; a change over the unsaved lines is not merged, and the editor is told with the diff; a
//! buffer without unsaved changes is left to the editor.

use std::time::Duration;

use serde_json::{json, Value};

use crate::lsp_support::{neovim_capabilities, test_options, Session, Setup, PATIENCE};

const FILE: &str = "alpha\nbeta\ngamma\ndelta\n";

async fn start(state: &std::path::Path, disk_changes: bool) -> Session {
    start_with(state, disk_changes, false).await
}

/// A session on a.txt (open, as on disk) whose client announces `diskChanges` and `diskReloads`
/// as given.
async fn start_with(state: &std::path::Path, disk_changes: bool, disk_reloads: bool) -> Session {
    let mut options = test_options(Default::default(), Default::default());
    options.config.journal =
        Some(tether::config::JournalSettings { dir: state.to_owned(), max_bytes: 64 * 1024 * 1024 });
    let mut capabilities = neovim_capabilities();
    capabilities["experimental"]["tether"]["diskChanges"] = json!(disk_changes);
    capabilities["experimental"]["tether"]["diskReloads"] = json!(disk_reloads);
    let s = Session::start(Setup {
        files: "//- a.txt\nalpha\nbeta\ngamma\ndelta\n",
        options,
        capabilities,
        ..Setup::default()
    })
    .await;
    s.open_from_disk("a.txt");
    s.sync().await;
    s
}

/// Writes `text` as `sed -i` does: a new file renamed over the old one.
fn replace_on_disk(s: &Session, text: &str) {
    let tmp = s.path(".a.txt.sed");
    std::fs::write(&tmp, text).expect("write");
    let mut tries = 0;
    // Wine refuses a rename over a file another handle has open at that moment (tether reading
    // it), where Windows and Unix do not: tried again for a second there.
    while let Err(e) = std::fs::rename(&tmp, s.path("a.txt")) {
        tries += 1;
        assert!(cfg!(windows) && tries < 100, "rename: {e}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits until the editor's buffer of a.txt is `want`.
async fn buffer_becomes(s: &Session, want: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let now = s.editor.buffer(&s.uri("a.txt")).map(|b| b.1);
        if now.as_deref() == Some(want) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "the buffer never became {want:?}; it is {now:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn history(s: &Session) -> Vec<Value> {
    let r = s
        .execute("tether.callTool", vec![json!({"tool": "history", "arguments": {}, "profile": "standard"})])
        .await
        .expect("history");
    r["structuredContent"]["changesets"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_disk_is_merged_into_the_unsaved_buffer_as_one_edit_and_recorded() {
    let state = tempfile::tempdir().expect("state");
    let s = start(state.path(), true).await;
    // The user's unsaved change on line 1 ("alpha" is bytes 0..5).
    s.type_text("a.txt", 0, 5, "ALPHA unsaved");
    s.sync().await;

    replace_on_disk(&s, "alpha\nbeta\ngamma\nDELTA from sed\n");
    buffer_becomes(&s, "ALPHA unsaved\nbeta\ngamma\nDELTA from sed\n").await;
    assert_eq!(s.disk("a.txt"), "alpha\nbeta\ngamma\nDELTA from sed\n", "the file is as the other program left it");
    let edits = s.client.server_requests("workspace/applyEdit");
    assert_eq!(edits.len(), 1, "one edit: {edits:?}");
    assert_eq!(edits[0]["label"], "tether: merged from disk");
    let (_, text, dirty) = s.server_copy("a.txt").await.expect("open");
    assert_eq!((text.as_str(), dirty), ("ALPHA unsaved\nbeta\ngamma\nDELTA from sed\n", true));
    s.client.wait_for("tether/diskChange", |n| n.iter().any(|n| n["method"] == "tether/diskChange")).await;
    let told = s.client.notifications("tether/diskChange");
    assert_eq!((told[0]["merged"].clone(), told[0]["uri"].clone()), (json!(true), json!(s.uri("a.txt"))), "{told:?}");
    assert_eq!(told[0]["size"], json!("alpha\nbeta\ngamma\nDELTA from sed\n".len()));
    let listed = history(&s).await;
    assert_eq!(listed[0]["tool"], "merge_from_disk", "{listed:?}");
    assert_eq!(listed[0]["client"], "another program (on disk)", "{listed:?}");

    // A second change, written in place this time, is merged against the text merged before
    // (the first change is not made twice).
    std::fs::write(s.path("a.txt"), "alpha\nBETA in place\ngamma\nDELTA from sed\n").expect("write");
    buffer_becomes(&s, "ALPHA unsaved\nBETA in place\ngamma\nDELTA from sed\n").await;
    assert_eq!(s.client.server_requests("workspace/applyEdit").len(), 2);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_disk_over_the_unsaved_lines_is_not_merged_and_the_editor_is_told() {
    for disk_changes in [true, false] {
        let state = tempfile::tempdir().expect("state");
        let s = start(state.path(), disk_changes).await;
        // The user changed line 4 ("delta" is bytes 17..22); the other program changes it too.
        s.type_text("a.txt", 17, 22, "delta, mine");
        s.sync().await;
        replace_on_disk(&s, "alpha\nbeta\ngamma\ndelta, theirs\n");
        let method = if disk_changes { "tether/diskChange" } else { "window/showMessage" };
        s.client.wait_for(method, |n| n.iter().any(|n| n["method"] == method)).await;
        let told = s.client.notifications(method);
        if disk_changes {
            assert_eq!((told[0]["merged"].clone(), told[0]["overlaps"].clone()), (json!(false), json!("line 4")));
            let diff = told[0]["diff"].as_str().expect("diff");
            assert!(diff.contains("-delta, mine\n+delta, theirs\n"), "{diff}");
        } else {
            let message = told[0]["message"].as_str().expect("message");
            assert!(message.contains("a.txt changed on disk") && message.contains("line 4"), "{message}");
            assert_eq!(told[0]["type"], 2, "a warning");
        }
        assert!(s.client.server_requests("workspace/applyEdit").is_empty(), "nothing merged");
        let (_, text, _) = s.server_copy("a.txt").await.expect("open");
        assert_eq!(text, "alpha\nbeta\ngamma\ndelta, mine\n", "disk_changes={disk_changes}");
        // Told once: the editor's own check of the same file finds the same overlap.
        s.client.send(json!({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
            "params": {"changes": [{"uri": s.uri("a.txt"), "type": 2}]}}));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(s.client.notifications(method).len(), 1, "disk_changes={disk_changes}");
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buffer_without_unsaved_changes_and_the_editors_own_save_are_left_alone() {
    let state = tempfile::tempdir().expect("state");
    let s = start(state.path(), true).await;
    // No unsaved change: the editor reloads the file itself.
    replace_on_disk(&s, "alpha\nbeta\ngamma\nDELTA\n");
    // The editor reloads, then the user types and saves: the save changes the file too.
    let reloaded = "alpha\nbeta\ngamma\nDELTA\n";
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.client.send(s.editor.type_text(&s.uri("a.txt"), 0, FILE.len(), reloaded));
    s.type_text("a.txt", 0, 0, "// ");
    if let Some(saved) = s.editor.save(&s.uri("a.txt")) {
        s.client.send(saved);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(s.client.server_requests("workspace/applyEdit").is_empty(), "nothing to merge");
    assert!(s.client.notifications("tether/diskChange").is_empty());
    assert!(s.client.notifications("window/showMessage").is_empty());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_takes_reloads_is_told_to_reload_a_buffer_without_unsaved_changes() {
    for disk_reloads in [true, false] {
        let state = tempfile::tempdir().expect("state");
        let s = start_with(state.path(), true, disk_reloads).await;
        replace_on_disk(&s, "alpha\nbeta\ngamma\nDELTA\n");
        if disk_reloads {
            s.client.wait_for("tether/diskReload", |n| n.iter().any(|n| n["method"] == "tether/diskReload")).await;
            let told = s.client.notifications("tether/diskReload");
            assert_eq!(told.len(), 1, "{told:?}");
            assert_eq!(told[0]["uri"], json!(s.uri("a.txt")));
            assert_eq!(told[0]["size"], json!("alpha\nbeta\ngamma\nDELTA\n".len()));
            assert!(told[0]["mtime"].is_array(), "{told:?}");
        } else {
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(s.client.notifications("tether/diskReload").is_empty(), "only a client that takes it is told");
        }
        assert!(s.client.server_requests("workspace/applyEdit").is_empty(), "nothing merged: the editor reloads");
        assert!(s.client.notifications("tether/diskChange").is_empty());
        s.shutdown().await;
    }
}
