//! The editor's knowledge through `tether lsp`: forwarded diagnostics, the user's view, the
//! editor's language servers, and the diagnostics a change reports, with a scripted editor
//! speaking `editors/protocol.md` (the real editors are tested in `tests/nvim/` and
//! `vscode-extension/test/e2e/`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, Url};

use crate::lsp_support::editor::notification;
use crate::lsp_support::{
    editor_script, error_kind, neovim_capabilities, text, ChangeOrder, Reply, Script, Session, Setup, Strictness,
};

/// The URI of `path` (written `/usr/lib/x.d.ts`), a file outside the workspace, as this
/// platform's editors write one (on Windows on drive C:, in VS Code's spelling).
fn outside(path: &str) -> String {
    if cfg!(windows) {
        format!("file:///c%3A{path}")
    } else {
        format!("file://{path}")
    }
}

/// The path tether shows for [`outside`]'s file.
fn outside_path(path: &str) -> String {
    if cfg!(windows) {
        format!("c:{}", path.replace('/', "\\"))
    } else {
        path.to_owned()
    }
}

/// A workspace path (written with `/`) as tether shows it on this platform.
fn shown(path: &str) -> String {
    if cfg!(windows) {
        path.replace('/', "\\")
    } else {
        path.to_owned()
    }
}

/// Capabilities of an editor that forwards everything.
fn knowing() -> Value {
    let mut caps = neovim_capabilities();
    caps["experimental"]["tether"] =
        json!({"saveDocuments": true, "diagnostics": true, "editorContext": true, "languageRequests": true});
    caps
}

/// `tether.callTool` in the standard profile.
async fn call(s: &Session, tool: &str, arguments: Value) -> Value {
    s.execute("tether.callTool", vec![json!({"tool": tool, "arguments": arguments, "profile": "standard"})])
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The JSON of a successful result's first item.
fn json_of(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    serde_json::from_str(&text(result)).unwrap_or_else(|e| panic!("{e}: {result}"))
}

/// A `tether/publishDiagnostics` notification.
fn publish(uri: &Url, version: Option<i32>, encoding: &str, diagnostics: Value) -> Value {
    notification(
        "tether/publishDiagnostics",
        json!({"uri": uri, "version": version, "positionEncoding": encoding, "diagnostics": diagnostics}),
    )
}

fn range(line: u32, start: usize, end: usize) -> Value {
    json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}})
}

/// UTF-16 units in `s`.
fn utf16(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The usual editor, answering `tether/languageRequest` with `answer(method, params)`.
fn answering(answer: impl Fn(&str, &Value) -> Value + Send + Sync + 'static) -> Script {
    let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
    Arc::new(move |editor, client, method, params| {
        if method == "tether/languageRequest" {
            let m = params["method"].as_str().unwrap_or_default().to_owned();
            return Reply::ok(answer(&m, &params["params"]));
        }
        usual(editor, client, method, params)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_capabilities_each_tool_says_what_the_editor_lacks() {
    let s = Session::start(Setup { files: "//- a.py\nx = 1\n", ..Setup::default() }).await;
    let listed = s.execute("tether.listTools", vec![json!({"profile": "standard"})]).await.expect("list");
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    for tool in ["diagnostics", "editor_context", "symbols", "definition", "references", "hover", "rename_symbol"] {
        assert!(names.contains(&tool), "{tool} listed in tether lsp: {names:?}");
    }
    let edit = listed["tools"].as_array().expect("tools").iter().find(|t| t["name"] == "edit_file").expect("edit_file");
    assert_eq!(edit["inputSchema"]["properties"]["diagnostics"]["type"], "boolean", "{edit}");
    let cases = [
        ("diagnostics", json!({}), "experimental.tether.diagnostics"),
        ("editor_context", json!({}), "experimental.tether.editorContext"),
        ("hover", json!({"path": "a.py", "line": 1, "symbol": "x"}), "experimental.tether.languageRequests"),
        ("rename_symbol", json!({"path": "a.py", "line": 1, "symbol": "x", "new_name": "y"}), "languageRequests"),
    ];
    for (tool, args, names) in cases {
        let r = call(&s, tool, args).await;
        assert_eq!(error_kind(&r).as_deref(), Some("unsupported"), "{tool}: {r}");
        assert!(text(&r).contains(names), "{tool}: {r}");
    }
    assert_eq!(s.disk("a.py"), "x = 1\n");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_lists_forwarded_problems_in_lines_and_characters() {
    let s = Session::start(Setup {
        files: "//- src/a.ts\nlet s = '😀'; let n: number = s;\n//- src/b.ts\nok\n//- c.ts\nc\n",
        capabilities: knowing(),
        ..Setup::default()
    })
    .await;
    let line = "let s = '😀'; let n: number = s;";
    let at = line.rfind("s;").expect("s");
    s.client.send(publish(
        &s.uri("src/a.ts"),
        Some(4),
        "utf-16",
        json!([
            {"range": range(0, utf16(&line[..at]), utf16(&line[..at]) + 1), "severity": 1, "code": 2322, "source": "ts",
             "message": "Type 'string' is not assignable to type 'number'."},
            {"range": range(0, 4, 5), "severity": 4, "source": "ts", "message": "'s' is declared but never read."}
        ]),
    ));
    s.client.send(publish(
        &s.uri("c.ts"),
        None,
        "utf-8",
        json!([{"range": range(0, 0, 1), "severity": 2, "message": "w"}]),
    ));
    // A file outside the workspace is the editor's business, not the assistant's.
    s.client.send(publish(
        &Url::parse(&outside("/elsewhere/x.ts")).expect("uri"),
        None,
        "utf-16",
        json!([{"range": range(0, 0, 1), "message": "outside"}]),
    ));
    s.sync().await;
    let all = json_of(&call(&s, "diagnostics", json!({})).await);
    assert_eq!(all["total"], 3, "{all}");
    assert!(!all.to_string().contains("outside"), "{all}");
    let col = line[..at].chars().count() + 1;
    assert_eq!(
        all["files"][1],
        json!({"path": shown("src/a.ts"), "version": 4, "problems": [
            {"severity": "error", "line": 1, "column": col, "end_line": 1, "end_column": col + 1, "source": "ts",
             "code": "2322", "message": "Type 'string' is not assignable to type 'number'."},
            {"severity": "hint", "line": 1, "column": 5, "end_line": 1, "end_column": 6, "source": "ts",
             "message": "'s' is declared but never read."}]}),
        "{all}"
    );
    let errors = json_of(&call(&s, "diagnostics", json!({"path": "src", "severity": "warning"})).await);
    assert_eq!(errors["total"], 1, "{errors}");
    assert_eq!(errors["files"][0]["problems"][0]["code"], "2322");
    let paged = json_of(&call(&s, "diagnostics", json!({"offset": 1, "limit": 1})).await);
    assert_eq!((paged["total"].as_u64(), paged["truncated"].as_bool()), (Some(3), Some(true)), "{paged}");
    let bad = call(&s, "diagnostics", json!({"severity": "fatal"})).await;
    assert_eq!(error_kind(&bad).as_deref(), Some("invalid_input"), "{bad}");
    // A newer report replaces the document's whole list.
    s.client.send(publish(&s.uri("src/a.ts"), Some(5), "utf-16", json!([])));
    s.sync().await;
    let now = json_of(&call(&s, "diagnostics", json!({"path": "src/a.ts"})).await);
    assert_eq!(now["total"], 0, "{now}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editor_context_gives_the_selection_in_lines_and_characters() {
    let line0 = "é = 1";
    let line1 = "total = é + 2  # 😀 done";
    let files = format!("//- m.py\n{line0}\n{line1}\n");
    let script = {
        let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
        Arc::new(
            move |editor: &crate::lsp_support::Editor,
                  client: &crate::lsp_support::Client,
                  method: &str,
                  params: Value| {
                if method != "tether/editorContext" {
                    return usual(editor, client, method, params);
                }
                let dir = editor.uris().into_iter().next().expect("an open buffer");
                let start = utf16(&line1[..line1.find('é').expect("é")]);
                let end = utf16(&line1[..line1.find(" done").expect("done")]);
                Reply::ok(json!({"positionEncoding": "utf-16", "editors": [
                    {"uri": dir, "version": 2, "active": true,
                     "selections": [{"range": range(1, start, end), "text": "é + 2  # 😀"}],
                     "visibleRanges": [range(0, 0, 0)]},
                    {"uri": "file:///elsewhere/y.py", "active": false, "selections": [], "visibleRanges": []}
                ]}))
            },
        ) as Script
    };
    let s = Session::start(Setup {
        files: Box::leak(files.into_boxed_str()),
        capabilities: knowing(),
        script,
        ..Setup::default()
    })
    .await;
    s.open_from_disk("m.py");
    s.type_text("m.py", 0, 0, "");
    s.sync().await;
    let ctx = json_of(&call(&s, "editor_context", json!({})).await);
    let col = line1[..line1.find('é').expect("é")].chars().count() + 1;
    assert_eq!(
        ctx,
        json!({"active": "m.py", "open": [{"path": "m.py", "dirty": true}], "editors": [
            {"path": "m.py", "active": true, "version": 2,
             "selections": [{"line": 2, "column": col, "end_line": 2, "end_column": col + 10, "text": "é + 2  # 😀"}],
             "visible": [{"line": 1, "end_line": 1}]}]}),
        "{ctx}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symbol_tools_find_the_column_and_answer_in_tether_terms() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let script = answering(move |method, params| {
        seen.lock().expect("lock").push((method.to_owned(), params.clone()));
        let def = json!({"targetUri": params["textDocument"]["uri"], "targetRange": range(0, 0, 16),
                         "targetSelectionRange": range(0, 6, 11)});
        let result = match method {
            "textDocument/definition" => json!([def]),
            "textDocument/references" => json!([{"uri": params["textDocument"]["uri"], "range": range(0, 6, 11)},
                                                {"uri": params["textDocument"]["uri"], "range": range(1, 12, 17)},
                                                {"uri": outside("/usr/lib/x.d.ts"), "range": range(3, 2, 7)}]),
            "textDocument/hover" => json!({"contents": {"kind": "markdown", "value": "```ts\nconst total: 1\n```"}}),
            "textDocument/documentSymbol" => json!([{"name": "total", "kind": 14, "range": range(0, 0, 16),
                "selectionRange": range(0, 6, 11), "children": []}]),
            _ => Value::Null,
        };
        json!({"positionEncoding": "utf-8", "servers": ["tsserver"], "complete": method != "textDocument/hover", "result": result})
    });
    let s = Session::start(Setup {
        files: "//- a.ts\nconst total = 1;\nconsole.log(total);\n",
        capabilities: knowing(),
        script,
        ..Setup::default()
    })
    .await;
    // A model's line is off by one and it gives no column: tether finds `total` on a nearby line.
    let def = json_of(&call(&s, "definition", json!({"path": "a.ts", "line": 2, "symbol": "total"})).await);
    assert_eq!(
        def,
        json!({"locations": [{"path": "a.ts", "line": 1, "column": 7, "end_line": 1, "end_column": 12,
                              "text": "const total = 1;"}], "complete": true}),
        "{def}"
    );
    assert_eq!(asked.lock().expect("lock")[0].1["position"], json!({"line": 1, "character": 12}));
    let refs = json_of(
        &call(&s, "references", json!({"path": "a.ts", "line": 1, "column": 8, "include_declaration": false})).await,
    );
    let locations = refs["locations"].as_array().expect("locations");
    assert_eq!(locations.len(), 3, "{refs}");
    assert_eq!(locations[1]["text"], "console.log(total);");
    assert_eq!(
        locations[2],
        json!({"path": outside_path("/usr/lib/x.d.ts"), "line": 4, "column": 3, "end_line": 4, "end_column": 8,
                                    "outside_workspace": true})
    );
    assert_eq!(asked.lock().expect("lock")[1].1["context"], json!({"includeDeclaration": false}));
    assert_eq!(asked.lock().expect("lock")[1].1["position"], json!({"line": 0, "character": 7}));
    let hover = json_of(&call(&s, "hover", json!({"path": "a.ts", "line": 1, "symbol": "total"})).await);
    assert_eq!(hover, json!({"contents": "```ts\nconst total: 1\n```", "complete": false}));
    let outline = json_of(&call(&s, "symbols", json!({"path": "a.ts"})).await);
    assert_eq!(
        outline["symbols"],
        json!([{"name": "total", "kind": "constant", "line": 1, "column": 7, "end_line": 1, "end_column": 12}])
    );
    let missing = call(&s, "definition", json!({"path": "a.ts", "line": 1, "symbol": "nothing"})).await;
    assert_eq!(error_kind(&missing).as_deref(), Some("no_match"), "{missing}");
    assert!(text(&missing).contains("const total = 1;"), "{missing}");
    let neither = call(&s, "definition", json!({"path": "a.ts", "line": 1})).await;
    assert_eq!(error_kind(&neither).as_deref(), Some("invalid_input"), "{neither}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_language_server_is_unsupported_not_nothing_found() {
    let s = Session::start(Setup { files: "//- a.txt\nword\n", capabilities: knowing(), ..Setup::default() }).await;
    let r = call(&s, "references", json!({"path": "a.txt", "line": 1, "symbol": "word"})).await;
    assert_eq!(error_kind(&r).as_deref(), Some("unsupported"), "{r}");
    assert!(text(&r).contains("no language server"), "{r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_symbol_changes_an_open_dirty_buffer_and_a_closed_file_together() {
    let answer: Arc<Mutex<Value>> = Arc::new(Mutex::new(Value::Null));
    let given = answer.clone();
    let script = answering(move |method, _| {
        assert_eq!(method, "textDocument/rename");
        json!({"servers": ["pyright"], "result": given.lock().expect("lock").clone()})
    });
    let s = Session::start(Setup {
        files: "//- lib.py\ndef area(w):\n    return w\n//- main.py\nfrom lib import area\nprint(area(2))\n",
        capabilities: knowing(),
        script,
        ..Setup::default()
    })
    .await;
    s.open_from_disk("lib.py");
    s.type_text("lib.py", 0, 0, "# unsaved\n");
    s.sync().await;
    let (lib, main) = (s.uri("lib.py"), s.uri("main.py"));
    *answer.lock().expect("lock") = json!({"changes": {
        lib.as_str(): [{"range": range(1, 4, 8), "newText": "surface"}],
        main.as_str(): [{"range": range(0, 16, 20), "newText": "surface"}, {"range": range(1, 6, 10), "newText": "surface"}]
    }});
    let r =
        call(&s, "rename_symbol", json!({"path": "lib.py", "line": 2, "symbol": "area", "new_name": "surface"})).await;
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).starts_with("renamed `area` to `surface`: 3 edits in 2 files"), "{r}");
    // Each file named as the user names it, as every change tool does.
    assert!(text(&r).contains("\nlib.py: applied to the open editor buffer"), "{r}");
    assert_eq!(s.editor.buffer(&lib).expect("open").1, "# unsaved\ndef surface(w):\n    return w\n");
    assert_eq!(s.disk("lib.py"), "def area(w):\n    return w\n", "the dirty buffer stays unsaved");
    assert_eq!(s.disk("main.py"), "from lib import surface\nprint(surface(2))\n");
    let edits = s.client.server_requests("workspace/applyEdit");
    assert_eq!(edits.len(), 1, "one edit for the open buffer: {edits:?}");
    let sent: ApplyWorkspaceEditParams = serde_json::from_value(edits[0].clone()).expect("params");
    assert_eq!(sent.label.as_deref(), Some("tether: rename_symbol"));
    // A rename whose edits change nothing is an error, and so is no rename at all.
    *answer.lock().expect("lock") =
        json!({"changes": {main.as_str(): [{"range": range(0, 16, 23), "newText": "surface"}]}});
    let same =
        call(&s, "rename_symbol", json!({"path": "main.py", "line": 1, "symbol": "surface", "new_name": "area2"}))
            .await;
    assert_eq!(error_kind(&same).as_deref(), Some("no_match"), "{same}");
    assert!(text(&same).contains("changes nothing"), "{same}");
    *answer.lock().expect("lock") = Value::Null;
    let none =
        call(&s, "rename_symbol", json!({"path": "main.py", "line": 1, "symbol": "surface", "new_name": "x"})).await;
    assert_eq!(error_kind(&none).as_deref(), Some("no_match"), "{none}");
    // A rename reaching outside the workspace changes nothing at all.
    *answer.lock().expect("lock") = json!({"changes": {
        main.as_str(): [{"range": range(0, 16, 23), "newText": "x"}],
        outside("/elsewhere/lib.py"): [{"range": range(0, 0, 1), "newText": "x"}]}});
    let outside =
        call(&s, "rename_symbol", json!({"path": "main.py", "line": 1, "symbol": "surface", "new_name": "x"})).await;
    assert_eq!(error_kind(&outside).as_deref(), Some("path_escape"), "{outside}");
    assert_eq!(s.disk("main.py"), "from lib import surface\nprint(surface(2))\n");
    s.shutdown().await;
}

/// An editor whose language server reports on each version after `delay`; before the fresh
/// report it sends a stale one (for the version the edit was made against) when `stale`.
fn analysing(delay: Duration, stale: bool, fresh: bool) -> Script {
    let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
    Arc::new(move |editor, client, method, params| {
        let reply = usual(editor, client, method, params.clone());
        if method == "workspace/applyEdit" {
            let edit: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("params");
            let uri = edit.edit.document_changes.as_ref().and_then(|d| match d {
                tower_lsp::lsp_types::DocumentChanges::Edits(e) => e.first().map(|e| e.text_document.uri.clone()),
                tower_lsp::lsp_types::DocumentChanges::Operations(_) => None,
            });
            let uri = uri.expect("a versioned edit");
            let (version, text) = editor.buffer(&uri).expect("open");
            let client = client.clone();
            tokio::spawn(async move {
                if stale {
                    let old = json!([{"range": range(0, 0, 1), "severity": 1, "message": "stale: for the old text"}]);
                    client.send(publish(&uri, Some(version - 1), "utf-8", old));
                }
                tokio::time::sleep(delay).await;
                if fresh {
                    let line = text.lines().position(|l| l.contains("\"x\"")).unwrap_or(0);
                    let problems = if text.contains("\"x\"") {
                        json!([{"range": range(u32::try_from(line).expect("line"), 4, 5), "severity": 1, "code": "reportAssignmentType",
                                "source": "Pyright", "message": "\"str\" is not assignable to \"int\""}])
                    } else {
                        json!([])
                    };
                    client.send(publish(&uri, Some(version), "utf-8", problems));
                }
            });
        }
        reply
    })
}

/// The `diagnostics_after_change` item of a result.
fn after_change(result: &Value) -> Option<Value> {
    let items = result["content"].as_array()?;
    let last = items.last()?["text"].as_str()?;
    let v: Value = serde_json::from_str(last).ok()?;
    v.get("diagnostics_after_change").cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_reports_the_problems_its_version_has_not_an_older_ones() {
    let s = Session::start(Setup {
        files: "//- a.py\nn: int = 1\nm: int = 2\n",
        capabilities: knowing(),
        script: analysing(Duration::from_millis(150), true, true),
        ..Setup::default()
    })
    .await;
    s.open_from_disk("a.py");
    s.client.send(publish(&s.uri("a.py"), Some(1), "utf-8", json!([])));
    s.sync().await;
    let r = call(&s, "edit_file", json!({"path": "a.py", "old_string": "m: int = 2", "new_string": "m: int = \"x\""}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["content"].as_array().map(Vec::len), Some(2), "the tool's own text stays one item: {r}");
    let report = after_change(&r).unwrap_or_else(|| panic!("no diagnostics: {r}"));
    assert_eq!(report[0]["status"], "settled", "{report}");
    assert_eq!(report[0]["version"], 2, "{report}");
    assert_eq!(report[0]["changed_from_version"], 1, "{report}");
    assert_eq!(
        report[0]["introduced"],
        json!([{"severity": "error", "line": 2, "column": 5, "end_line": 2, "end_column": 6, "source": "Pyright",
                "code": "reportAssignmentType", "message": "\"str\" is not assignable to \"int\""}]),
        "{report}"
    );
    assert!(!report.to_string().contains("stale"), "a report for the old version is not the change's: {report}");
    // Fixing it reports the error resolved.
    let r = call(&s, "edit_file", json!({"path": "a.py", "old_string": "\"x\"", "new_string": "3"})).await;
    let report = after_change(&r).unwrap_or_else(|| panic!("no diagnostics: {r}"));
    assert_eq!(report[0]["introduced"], json!([]), "{report}");
    assert_eq!(report[0]["resolved"][0]["message"], "\"str\" is not assignable to \"int\"", "{report}");
    assert_eq!(report[0]["errors"], 0, "{report}");
    // The per-call switch: no wait, no item.
    let r = call(
        &s,
        "edit_file",
        json!({"path": "a.py", "old_string": "m: int = 3", "new_string": "m: int = 4", "diagnostics": false}),
    )
    .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["content"].as_array().map(Vec::len), Some(1), "{r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_says_pending_when_no_report_for_its_version_comes_in_time() {
    let s = Session::start(Setup {
        files: "//- a.py\nn = 1\n",
        capabilities: knowing(),
        script: analysing(Duration::ZERO, true, false),
        initialization_options: json!({"diagnostics": {"wait": 400}}),
        ..Setup::default()
    })
    .await;
    s.open_from_disk("a.py");
    s.client.send(publish(&s.uri("a.py"), Some(1), "utf-8", json!([])));
    s.sync().await;
    let started = Instant::now();
    let r = call(&s, "edit_file", json!({"path": "a.py", "old_string": "n = 1", "new_string": "n = 2"})).await;
    let took = started.elapsed();
    let report = after_change(&r).unwrap_or_else(|| panic!("no diagnostics: {r}"));
    assert_eq!(report[0]["status"], "pending", "{report}");
    assert!(!report.to_string().contains("stale"), "{report}");
    assert_eq!(report[0]["before_the_change"], json!({"version": 1, "errors": 0, "warnings": 0}), "{report}");
    assert!(took >= Duration::from_millis(400) && took < Duration::from_secs(5), "waited {took:?}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_no_server_reported_on_is_not_waited_for_and_the_setting_turns_it_off() {
    for (options, reported) in [(Value::Null, false), (json!({"diagnostics": {"afterChange": false}}), true)] {
        let s = Session::start(Setup {
            files: "//- notes.md\nhello\n",
            capabilities: knowing(),
            script: analysing(Duration::from_secs(2), false, true),
            initialization_options: options,
            ..Setup::default()
        })
        .await;
        s.open_from_disk("notes.md");
        if reported {
            s.client.send(publish(&s.uri("notes.md"), Some(1), "utf-8", json!([])));
        }
        s.sync().await;
        let started = Instant::now();
        let r = call(&s, "edit_file", json!({"path": "notes.md", "old_string": "hello", "new_string": "bye"})).await;
        assert_eq!(r["isError"], false, "{r}");
        assert_eq!(after_change(&r), None, "{r}");
        assert!(started.elapsed() < Duration::from_millis(1500), "took {:?}", started.elapsed());
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renaming_by_text_replacement_points_to_rename_symbol() {
    let s = Session::start(Setup {
        files: "//- a.py\ntotal = 1\nprint(total)\n",
        capabilities: knowing(),
        ..Setup::default()
    })
    .await;
    let r = call(&s, "replace", json!({"path": "a.py", "pattern": "total", "replacement": "amount"})).await;
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("`rename_symbol` renames its real uses"), "{r}");
    let r = call(&s, "replace", json!({"path": "a.py", "pattern": "print(", "replacement": "log("})).await;
    assert!(!text(&r).contains("rename_symbol"), "{r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_deny_list_hides_buffers_and_files_from_every_tool() {
    let script = {
        let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
        Arc::new(
            move |editor: &crate::lsp_support::Editor,
                  client: &crate::lsp_support::Client,
                  method: &str,
                  params: Value| {
                if method != "tether/editorContext" {
                    return usual(editor, client, method, params);
                }
                let editors: Vec<Value> = editor
                    .uris()
                    .into_iter()
                    .map(|uri| {
                        let secret = uri.path().ends_with(".env");
                        let text = if secret { "TOKEN=" } else { "import" };
                        json!({"uri": uri, "active": secret, "selections": [{"range": range(0, 0, 6), "text": text}]})
                    })
                    .collect();
                Reply::ok(json!({"editors": editors}))
            },
        ) as Script
    };
    let s = Session::start(Setup {
        files: "//- .env\nTOKEN=hunter2\n//- app.py\nimport os\n",
        capabilities: knowing(),
        script,
        initialization_options: json!({"deny": {"secrets": true}}),
        ..Setup::default()
    })
    .await;
    s.open_from_disk(".env");
    s.open_from_disk("app.py");
    s.client.send(publish(
        &s.uri(".env"),
        Some(1),
        "utf-8",
        json!([{"range": range(0, 0, 5), "message": "TOKEN unused"}]),
    ));
    s.sync().await;
    let ctx = json_of(&call(&s, "editor_context", json!({})).await);
    assert!(!ctx.to_string().contains("TOKEN") && !ctx.to_string().contains(".env"), "{ctx}");
    assert_eq!(ctx["open"], json!([{"path": "app.py", "dirty": false}]), "{ctx}");
    let diags = json_of(&call(&s, "diagnostics", json!({})).await);
    assert_eq!(diags["total"], 0, "{diags}");
    let read = call(&s, "read_file", json!({"path": ".env"})).await;
    assert_eq!(error_kind(&read).as_deref(), Some("path_escape"), "{read}");
    assert!(text(&read).contains("deny list"), "{read}");
    let grep = call(&s, "grep", json!({"pattern": "hunter2"})).await;
    assert!(!text(&grep).contains("hunter2"), "{grep}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_never_reported_on_is_waited_for_when_its_kind_has_a_server() {
    // VS Code's TypeScript support sends nothing for a file that has no problem and had none:
    // the first edit that breaks such a file must still report what it broke.
    let s = Session::start(Setup {
        files: "//- clean.py\nm: int = 2\n//- other.py\nx = 1\n",
        capabilities: knowing(),
        script: analysing(Duration::from_millis(100), false, true),
        ..Setup::default()
    })
    .await;
    s.open_from_disk("clean.py");
    s.client.send(publish(
        &s.uri("other.py"),
        None,
        "utf-8",
        json!([{"range": range(0, 0, 1), "severity": 4, "message": "h"}]),
    ));
    s.sync().await;
    let r = call(&s, "edit_file", json!({"path": "clean.py", "old_string": "= 2", "new_string": "= \"x\""})).await;
    let report = after_change(&r).unwrap_or_else(|| panic!("no diagnostics: {r}"));
    assert_eq!(report[0]["status"], "settled", "{report}");
    assert_eq!(report[0]["introduced"][0]["code"], "reportAssignmentType", "{report}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn places_in_hidden_files_are_left_out_of_answers() {
    let script = answering(|_, params| {
        let here = params["textDocument"]["uri"].as_str().unwrap_or_default().to_owned();
        let hidden = here.replace("a.ts", "keys/secret.ts");
        json!({"servers": ["tsserver"], "result": [{"uri": here, "range": range(0, 6, 11)}, {"uri": hidden, "range": range(0, 0, 3)}]})
    });
    let s = Session::start(Setup {
        files: "//- a.ts\nconst total = 1;\n//- keys/secret.ts\nkey\n",
        capabilities: knowing(),
        script,
        initialization_options: json!({"deny": {"patterns": ["keys"]}}),
        ..Setup::default()
    })
    .await;
    let refs = json_of(&call(&s, "references", json!({"path": "a.ts", "line": 1, "symbol": "total"})).await);
    assert_eq!(refs["locations"].as_array().map(Vec::len), Some(1), "{refs}");
    assert!(!refs.to_string().contains("secret"), "{refs}");
    s.shutdown().await;
}

/// A rename whose edit also touches a hidden file is refused without naming that file, in the
/// answer or anywhere else the assistant sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_reaching_a_hidden_file_is_refused_without_naming_it() {
    let answer: Arc<Mutex<Value>> = Arc::new(Mutex::new(Value::Null));
    let given = answer.clone();
    let script = answering(move |_, _| json!({"servers": ["pyright"], "result": given.lock().expect("lock").clone()}));
    let s = Session::start(Setup {
        files: "//- main.py\nTOKEN = 1\n//- keys/secret.py\nfrom main import TOKEN\n",
        capabilities: knowing(),
        script,
        initialization_options: json!({"deny": {"patterns": ["keys"]}}),
        ..Setup::default()
    })
    .await;
    let (main, hidden) = (s.uri("main.py"), s.uri("main.py").as_str().replace("main.py", "keys/secret.py"));
    *answer.lock().expect("lock") = json!({"changes": {
        main.as_str(): [{"range": range(0, 0, 5), "newText": "KEY"}],
        hidden.as_str(): [{"range": range(0, 16, 21), "newText": "KEY"}]}});
    let r =
        call(&s, "rename_symbol", json!({"path": "main.py", "line": 1, "symbol": "TOKEN", "new_name": "KEY"})).await;
    assert_eq!(error_kind(&r).as_deref(), Some("path_escape"), "{r}");
    assert!(text(&r).contains("hidden from tools by tether's deny list"), "{r}");
    assert!(!r.to_string().contains("secret") && !r.to_string().contains("keys"), "the hidden file is named: {r}");
    assert_eq!(s.disk("main.py"), "TOKEN = 1\n", "nothing was changed");
    s.shutdown().await;
}
