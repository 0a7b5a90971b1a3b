//! Saving after an edit: a clean buffer is saved (through `tether/saveDocuments`, or written by
//! the server with the same bytes), a dirty one stays dirty, `save: never` turns saving off, and
//! an editor that writes what it applied is answered from its write.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_land_in_buffers_and_clean_buffers_are_saved() {
    // (positionEncodings, documentChanges, when the editor reports the change)
    let table = [
        (json!(["utf-8", "utf-16"]), true, ChangeOrder::AfterAnswer),
        (json!(["utf-8", "utf-16"]), true, ChangeOrder::BeforeAnswer),
        (json!(["utf-16"]), true, ChangeOrder::AfterAnswer),
        (json!(["utf-32"]), false, ChangeOrder::BeforeAnswer),
        (json!(["utf-16"]), false, ChangeOrder::AfterAnswer),
    ];
    for (encodings, document_changes, order) in table {
        let mut caps = neovim_capabilities();
        caps["general"]["positionEncodings"] = encodings.clone();
        caps["workspace"]["workspaceEdit"] =
            if document_changes { json!({"documentChanges": true}) } else { json!({}) };
        let e = start(caps, editor_script(Strictness::Strict, order)).await;
        let s = &e.s;
        s.open_from_disk("a.txt");
        let r = plan(s, replace_two()).await;
        let case = format!("{encodings} documentChanges={document_changes} {order:?}");
        assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_saved")]), "{case}");
        assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1).as_deref(), Some(EDITED), "{case}");
        assert_eq!(s.disk("a.txt"), EDITED, "saved through tether/saveDocuments: {case}");
        let edit = &s.client.server_requests("workspace/applyEdit")[0]["edit"];
        assert_eq!(edit.get("documentChanges").is_some(), document_changes, "{case}: {edit}");
        assert_eq!(edit.get("changes").is_some(), !document_changes, "{case}: {edit}");
        assert_eq!(s.client.server_requests("tether/saveDocuments").len(), 1, "{case}");
        let (_, server_text, dirty) = s.server_copy("a.txt").await.expect("open");
        assert_eq!((server_text.as_str(), dirty), (EDITED, false), "{case}");
        assert_eq!(e.disk.applied.load(Ordering::SeqCst), 0, "the disk sink is not involved: {case}");
        e.s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dirty_buffers_stay_dirty() {
    let e = start(neovim_capabilities(), editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    let unsaved = "one\ntwo \u{1F600} tr\u{EA}s\nunsaved line\n";
    s.open("a.txt", unsaved);
    let r = plan(s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_unsaved")]));
    let want = format!("{EDITED}unsaved line\n");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1), Some(want.clone()));
    assert_eq!(s.disk("a.txt"), "one\ntwo \u{1F600} tr\u{EA}s\n", "the file is untouched");
    assert!(s.client.server_requests("tether/saveDocuments").is_empty());
    assert_eq!(s.server_copy("a.txt").await.map(|d| (d.1, d.2)), Some((want, true)));
    e.s.shutdown().await;
}

/// Saving can be turned off by the editor (`initializationOptions.save`) or the server's option;
/// the edit still lands, the buffer and file differ, and the result says so. Every edit is
/// labelled with the tool that made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_can_be_turned_off_and_edits_name_their_tool() {
    for by_editor in [true, false] {
        let (hooks, disk) = (Arc::new(Hooks::default()), Arc::new(FsSink::default()));
        let mut options = test_options(hooks, disk);
        let initialization_options = if by_editor {
            json!({"save": "never"})
        } else {
            options.save = tether::lsp::SavePolicy::Never;
            Value::Null
        };
        let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
        let setup = Setup { files: FILES, options, script, initialization_options, ..Setup::default() };
        let s = Session::start(setup).await;
        s.open_from_disk("a.txt");
        let r = plan(&s, replace_two()).await;
        assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_not_saved")]), "by_editor={by_editor}");
        assert_eq!(s.editor.buffer(&s.uri("a.txt")).map(|b| b.1).as_deref(), Some(EDITED));
        assert_eq!(s.disk("a.txt"), "one\ntwo \u{1F600} tr\u{EA}s\n", "not saved");
        assert!(s.client.server_requests("tether/saveDocuments").is_empty());
        assert_eq!(s.client.server_requests("workspace/applyEdit")[0]["label"], "tether: plan");
        s.shutdown().await;
    }
}

/// An editor that applies an edit, answers, reports the change a moment later and writes the
/// buffer to its file later still, as Kakoune does for kakoune-lsp whatever the server's policy.
fn writing_late() -> Script {
    Arc::new(move |editor: &Editor, client, method, params| {
        if method != "workspace/applyEdit" {
            return editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)(editor, client, method, params);
        }
        let p: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
        let (response, notes) = editor.apply(&p.edit, Strictness::Strict);
        let uri = match p.edit.document_changes {
            Some(DocumentChanges::Edits(e)) => e[0].text_document.uri.clone(),
            other => panic!("expected versioned edits: {other:?}"),
        };
        let (_, text) = editor.buffer(&uri).expect("open");
        let client = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            notes.into_iter().for_each(|n| client.send(n));
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            std::fs::write(uri.to_file_path().expect("a file"), text).expect("write");
            let saved =
                json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}});
            client.send(saved);
        });
        Reply::ok(serde_json::to_value(response).expect("json"))
    })
}

/// Under `save: never`, an editor known to write what it applied (kakoune-lsp) is answered from
/// its write, however late it comes; any other editor is answered at once from the file as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_save_never_an_editor_that_writes_what_it_applied_is_answered_from_its_write() {
    for (name, dest) in [(Some("kakoune-lsp"), "buffer_saved"), (None, "buffer_not_saved")] {
        let options = test_options(Arc::default(), Arc::default());
        let setup = Setup {
            files: FILES,
            options,
            script: writing_late(),
            initialization_options: json!({"save": "never"}),
            client_name: name,
            ..Setup::default()
        };
        let s = Session::start(setup).await;
        s.open_from_disk("a.txt");
        let r = plan(&s, replace_two()).await;
        assert_eq!(destinations(&r), pairs(&[("a.txt", dest)]), "{name:?}: {r}");
        if name.is_some() {
            assert_eq!(s.disk("a.txt"), EDITED, "answered after the editor's write");
        } else {
            assert_eq!(s.disk("a.txt"), "one\ntwo \u{1F600} tr\u{EA}s\n", "answered before it");
        }
        assert!(s.client.server_requests("tether/saveDocuments").is_empty());
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_save_support_the_server_writes_the_same_text() {
    let mut caps = neovim_capabilities();
    caps["experimental"] = json!({});
    let e = start(caps, editor_script(Strictness::Strict, ChangeOrder::AfterAnswer)).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    let r = plan(s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_saved")]));
    assert_eq!(s.disk("a.txt"), EDITED);
    assert!(s.client.server_requests("tether/saveDocuments").is_empty());
    assert_eq!(e.disk.applied.load(Ordering::SeqCst), 1, "written through the disk sink");
    assert_eq!(s.server_copy("a.txt").await.map(|d| (d.1, d.2)), Some((EDITED.to_owned(), false)));
    e.s.shutdown().await;
}

/// Found by bench/load.py: two calls edit one clean buffer; the second edit is made while the
/// first has made the buffer dirty, and the editor carries out the first call's save before it
/// applies the second edit. The second edit is then the only unsaved change of a buffer that was
/// clean (saved) at the very version it edits, so it is saved too; it used to be left unsaved,
/// the buffer modified by tether alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_made_on_a_dirty_buffer_saved_before_it_landed_is_saved() {
    let usual = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let script: Script = Arc::new(move |editor, client, method, params| {
        if method == "workspace/applyEdit" {
            // The save the editor was asked for first (the first call's), then this edit.
            let uri = url_in(&params);
            client.send(editor.save(&uri).expect("open"));
        }
        usual(editor, client, method, params)
    });
    let e = start(neovim_capabilities(), script).await;
    let s = &e.s;
    s.open_from_disk("a.txt");
    // The first call's edit, as the editor reports it: the buffer is dirty when the tool reads it.
    s.type_text("a.txt", 0, 3, "ONE");
    s.sync().await;
    let r = plan(s, replace_two()).await;
    assert_eq!(destinations(&r), pairs(&[("a.txt", "buffer_saved")]));
    let want = EDITED.replacen("one", "ONE", 1);
    assert_eq!(s.disk("a.txt"), want);
    assert_eq!(s.server_copy("a.txt").await.map(|d| (d.1, d.2)), Some((want, false)));
}
