//! The change journal inside `tether lsp`: a change the editor asked for is recorded as the
//! editor's, and undoing it reaches the open buffer as one versioned edit, keeping what the user
//! typed since; typing over the same lines makes the undo refuse, naming them.

use serde_json::{json, Value};

use crate::lsp_support::{error_kind, test_options, text, Session, Setup};

async fn start(state: &std::path::Path) -> Session {
    let mut options = test_options(Default::default(), Default::default());
    options.config.journal =
        Some(tether::config::JournalSettings { dir: state.to_owned(), max_bytes: 64 * 1024 * 1024 });
    let s = Session::start(Setup { files: "//- a.txt\nalpha\nbeta\ngamma\n", options, ..Setup::default() }).await;
    s.open_from_disk("a.txt");
    s.sync().await;
    s
}

async fn standard(s: &Session, tool: &str, arguments: Value) -> Value {
    s.execute("tether.callTool", vec![json!({"tool": tool, "arguments": arguments, "profile": "standard"})])
        .await
        .expect("result")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_change_is_recorded_and_undone_into_the_buffer_keeping_later_typing() {
    let state = tempfile::tempdir().expect("state");
    let s = start(state.path()).await;
    let r = standard(&s, "edit_file", json!({"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"})).await;
    assert!(error_kind(&r).is_none(), "{r}");
    let listed = standard(&s, "history", json!({})).await;
    let c = &listed["structuredContent"]["changesets"][0];
    assert_eq!((c["tool"].clone(), c["client"].clone()), (json!("edit_file"), json!("editor")), "{listed}");
    let id = c["id"].as_str().expect("id").to_owned();

    // The user types on the last line (bytes 11..16 are "gamma") after the change.
    s.type_text("a.txt", 11, 16, "GAMMA!");
    s.sync().await;
    let edits_before = s.client.server_requests("workspace/applyEdit").len();
    let r = standard(&s, "undo", json!({"id": id})).await;
    assert!(error_kind(&r).is_none(), "{r}");
    assert!(text(&r).starts_with(&format!("undid changeset {id} (edit_file by editor): a.txt")), "{}", text(&r));
    let (_, buffer, _) = s.server_copy("a.txt").await.expect("open");
    assert_eq!(buffer, "alpha\nbeta\nGAMMA!\n");
    // One versioned edit, labelled as the undo, reached the buffer.
    let sent = s.client.server_requests("workspace/applyEdit");
    assert_eq!(sent.len(), edits_before + 1);
    let edit = sent.last().expect("edit");
    assert_eq!(edit["label"], "tether: undo");
    assert!(edit["edit"]["documentChanges"][0]["textDocument"]["version"].is_number(), "{edit}");
    let listed = standard(&s, "history", json!({})).await;
    assert_eq!(listed["structuredContent"]["changesets"][0]["undoes"], json!([id]));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_over_the_changed_line_makes_the_undo_refuse_naming_it() {
    let state = tempfile::tempdir().expect("state");
    let s = start(state.path()).await;
    standard(&s, "edit_file", json!({"path": "a.txt", "old_string": "beta", "new_string": "BETA"})).await;
    s.type_text("a.txt", 6, 10, "BETA?");
    s.sync().await;
    let r = standard(&s, "undo", json!({"last": 1})).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("a.txt: line 2 changed after changeset 1 (edit_file by editor)"), "{}", text(&r));
    let (_, buffer, _) = s.server_copy("a.txt").await.expect("open");
    assert_eq!(buffer, "alpha\nBETA?\ngamma\n", "nothing changed");
    s.shutdown().await;
}

/// The hash each file record of changeset `n` gives its two sides, read from the journal's files.
fn recorded_sides(state: &std::path::Path, n: u64) -> (String, String) {
    let root = std::fs::read_dir(state).expect("journal").next().expect("a root").expect("dir").path();
    let c: Value =
        serde_json::from_slice(&std::fs::read(root.join(format!("changes/{n}.json"))).expect("record")).expect("json");
    let side = |s: &str| c["files"][0][s]["hash"].as_str().expect("hash").to_owned();
    (side("before"), side("after"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_change_to_a_buffer_records_the_hashes_of_its_texts() {
    // Large enough that the sides are worked out while the edit is delivered; the second and
    // third changes start from a text this process recorded, and the third from one the user
    // changed since.
    let state = tempfile::tempdir().expect("state");
    let s = start(state.path()).await;
    let big: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
    s.open("big.txt", &big);
    s.sync().await;
    let hash = |text: &str| blake3::hash(text.as_bytes()).to_hex().to_string();
    let mut texts = vec![big.clone()];
    for (n, (old, new)) in
        [("line 10\n", "ten\n"), ("line 20\n", "twenty\n"), ("line 30\n", "thirty\n")].iter().enumerate()
    {
        if n == 2 {
            s.type_text("big.txt", 0, 0, "typed ");
            s.sync().await;
            texts.push(s.server_copy("big.txt").await.expect("open").1);
        }
        let r = standard(&s, "edit_file", json!({"path": "big.txt", "old_string": old, "new_string": new})).await;
        assert!(error_kind(&r).is_none(), "{r}");
        let before = texts.last().expect("a text").clone();
        let after = s.server_copy("big.txt").await.expect("open").1;
        assert_eq!(after, before.replacen(old, new, 1));
        assert_eq!(recorded_sides(state.path(), n as u64 + 1), (hash(&before), hash(&after)), "change {}", n + 1);
        texts.push(after);
    }
    s.shutdown().await;
}
