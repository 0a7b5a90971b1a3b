//! `tether lsp` commands in-process: initialize, the tool list, tool calls over unsaved
//! buffers, protocol errors, workspace folders, progress, admission.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::lsp_support::{error_kind, neovim_capabilities, test_options, text, Hooks, Session, Setup};
use serde_json::{json, Value};
use tether::config::Config;
use tether::lsp::{Limits, Options};

const FILES: &str = r#"
//- a.txt
alpha on disk
//- sub/b.rs
fn beta() {}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_negotiates_encoding_and_announces_commands() {
    let table = [
        (json!(["utf-8", "utf-16", "utf-32"]), "utf-8"),
        (json!(["utf-16"]), "utf-16"),
        (json!(["utf-32"]), "utf-32"),
        (Value::Null, "utf-16"),
    ];
    for (offered, want) in table {
        let mut caps = neovim_capabilities();
        caps["general"]["positionEncodings"] = offered.clone();
        let s = Session::start(Setup { capabilities: caps, ..Setup::default() }).await;
        let c = &s.init["capabilities"];
        assert_eq!(c["positionEncoding"], want, "{offered}");
        assert_eq!(c["textDocumentSync"]["change"], 2, "incremental");
        assert_eq!(c["textDocumentSync"]["openClose"], true);
        assert_eq!(c["executeCommandProvider"]["commands"], json!(["tether.callTool", "tether.listTools"]));
        assert_eq!(c["workspace"]["workspaceFolders"]["changeNotifications"], true);
        assert_eq!(c["experimental"]["tether"]["protocolVersion"], 3);
        assert_eq!(c["experimental"]["tether"]["minProtocolVersion"], 1);
        assert_eq!(s.init["serverInfo"]["name"], "tether");
        // The crate's version: the one the VSIX, the Neovim plugin and `tether --version` carry.
        assert_eq!(s.init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_sees_unsaved_buffer_text() {
    let s = Session::start(Setup { files: FILES, ..Setup::default() }).await;
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert!(text(&r).contains("alpha on disk"), "{r}");

    s.open("a.txt", "alpha in the buffer\nsecond line\n");
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert_eq!(r["isError"], false);
    assert!(text(&r).contains("alpha in the buffer") && text(&r).contains("second line"), "{r}");
    assert!(!text(&r).contains("on disk"), "{r}");

    // Typing is seen at once; closing the buffer goes back to the disk.
    s.type_text("a.txt", 0, 5, "ALPHA");
    let r = s.call("read_file", json!({"path": "a.txt", "limit": 1})).await.expect("result");
    assert!(text(&r).contains("ALPHA in the buffer"), "{r}");
    s.client.send(s.editor.close(&s.uri("a.txt")));
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert!(text(&r).contains("alpha on disk"), "{r}");
    s.shutdown().await;
}

/// The real grep searches an open buffer's unsaved text instead of its file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_sees_unsaved_buffer_text() {
    let options = Options::default(); // The standard profile, with the real grep.
    let s = Session::start(Setup { files: FILES, options, ..Setup::default() }).await;
    s.open("sub/b.rs", "fn beta() {}\nfn only_in_the_buffer() {}\n");
    let r = s.call("grep", json!({"pattern": "only_in_the_buffer"})).await.expect("result");
    assert_eq!(r["isError"], false, "{r}");
    assert!(text(&r).contains("b.rs"), "{r}");
    let r = s.call("grep", json!({"pattern": "alpha on disk"})).await.expect("result");
    assert!(text(&r).contains("a.txt"), "closed files are searched on disk: {r}");
    s.client.send(s.editor.open(&s.uri("a.txt"), "nothing here\n", 1));
    let r = s.call("grep", json!({"pattern": "alpha on disk"})).await.expect("result");
    assert!(!text(&r).contains("a.txt"), "an open buffer hides its file's disk text: {r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tools_follows_profile_and_mode() {
    let s = Session::start(Setup { options: Options::default(), ..Setup::default() }).await;
    let r = s.execute("tether.listTools", vec![]).await.expect("list");
    let names: Vec<&str> = r["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"read_file") && names.contains(&"write_file"), "{names:?}");
    assert!(r["tools"][0]["inputSchema"].is_object());
    let r = s.execute("tether.listTools", vec![json!({"profile": "standard"})]).await.expect("list");
    assert_eq!(r["tools"].as_array().map(Vec::len), Some(names.len()));
    let e = s.execute("tether.listTools", vec![json!({"profile": "nope"})]).await.expect_err("unknown profile");
    assert_eq!(e["code"], -32602, "{e}");
    s.shutdown().await;

    let options = Options { config: Config { read_only: true, ..Config::default() }, ..Options::default() };
    let s = Session::start(Setup { options, ..Setup::default() }).await;
    let r = s.execute("tether.listTools", vec![]).await.expect("list");
    let names: Vec<&str> = r["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"read_file") && !names.contains(&"write_file"), "{names:?}");
    let e = s.call("write_file", json!({"path": "x", "content": "y"})).await.expect_err("hidden in read-only mode");
    assert_eq!(e["code"], -32602, "{e}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_are_json_rpc_errors() {
    let s = Session::start(Setup { files: FILES, ..Setup::default() }).await;
    let cases = [
        ("tether.callTool", vec![json!({"tool": "no_such_tool", "arguments": {}})], "unknown tool"),
        ("tether.callTool", vec![], "one argument"),
        ("tether.callTool", vec![json!({"tool": "read_file"}), json!({})], "one argument"),
        ("tether.callTool", vec![json!({"tool": "read_file", "extra": 1})], "invalid argument"),
        ("tether.callTool", vec![json!({"tool": "read_file", "profile": "nope"})], "unknown profile"),
        ("tether.nothing", vec![], "unknown command"),
    ];
    for (command, args, message) in cases {
        let e = s.execute(command, args.clone()).await.expect_err("protocol error");
        assert_eq!(e["code"], -32602, "{command} {args:?}: {e}");
        assert!(e["message"].as_str().is_some_and(|m| m.contains(message)), "{command} {args:?}: {e}");
    }
    // A tool failure is a result with isError, in the standard error format.
    let r = s.call("read_file", json!({"path": "../outside"})).await.expect("result");
    assert_eq!(error_kind(&r).as_deref(), Some("path_escape"), "{r}");
    let r = s.call("read_file", json!({"path": "a.txt", "offset": "x"})).await.expect("result");
    assert_eq!(error_kind(&r).as_deref(), Some("invalid_input"), "{r}");
    // The server keeps serving.
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert_eq!(r["isError"], false);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_folders_are_the_roots() {
    let s = Session::start(Setup { files: FILES, workspace_folder: false, ..Setup::default() }).await;
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert_eq!(error_kind(&r).as_deref(), Some("invalid_input"), "no folder, no tools: {r}");
    assert!(text(&r).contains("no workspace folder"), "{r}");

    let folder = |rel: &str| json!([{"uri": s.uri(rel), "name": rel}]);
    let change = |added: Value, removed: Value| {
        json!({"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders",
               "params": {"event": {"added": added, "removed": removed}}})
    };
    s.client.send(change(folder("sub"), json!([])));
    let r = s.call("read_file", json!({"path": "b.rs"})).await.expect("result");
    assert!(text(&r).contains("fn beta"), "relative paths start at the first folder: {r}");
    let r = s.call("read_file", json!({"path": s.path("a.txt")})).await.expect("result");
    assert_eq!(error_kind(&r).as_deref(), Some("path_escape"), "outside the folders: {r}");

    s.client.send(change(folder(""), folder("sub")));
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert!(text(&r).contains("alpha on disk"), "{r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_on_the_clients_token_and_on_a_created_one() {
    let hooks = Arc::new(Hooks::default());
    let s = Session::start(Setup {
        files: FILES,
        options: test_options(hooks.clone(), Arc::default()),
        ..Setup::default()
    })
    .await;
    // The client's token: begin and end, no create.
    let params = json!({"command": "tether.callTool", "arguments": [{"tool": "read_file", "arguments": {"path": "a.txt"}}],
                        "workDoneToken": "client-token"});
    let r = s.client.request("workspace/executeCommand", params).await.expect("result");
    assert_eq!(r["isError"], false);
    let kinds = |token: &Value| -> Vec<String> {
        s.client
            .notifications("$/progress")
            .iter()
            .filter(|p| p["token"] == *token)
            .map(|p| p["value"]["kind"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(kinds(&json!("client-token")), ["begin", "end"]);
    assert!(s.client.server_requests("window/workDoneProgress/create").is_empty());

    // No token, a long call: the server creates one after a delay, then begins and ends it.
    let call = s.call("gate", json!({}));
    let opener = async {
        s.client
            .wait_for("progress begin", |n| {
                n.iter().any(|n| n["params"]["value"]["kind"] == "begin" && n["params"]["token"] != "client-token")
            })
            .await;
        hooks.open_gate();
    };
    let (r, ()) = tokio::join!(call, opener);
    assert_eq!(r.expect("result")["isError"], false);
    let created = s.client.server_requests("window/workDoneProgress/create");
    assert_eq!(created.len(), 1, "{created:?}");
    s.client.wait_for("progress end", |n| n.iter().filter(|n| n["method"] == "$/progress").count() == 4).await;
    assert_eq!(kinds(&created[0]["token"]), ["begin", "end"]);
    let begin = s.client.notifications("$/progress").into_iter().find(|p| p["token"] == created[0]["token"]);
    assert_eq!(begin.expect("begin")["value"]["title"], "tether: gate");

    // A quick call gets no server token.
    s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert_eq!(s.client.server_requests("window/workDoneProgress/create").len(), 1);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_calls_in_flight_are_refused() {
    let hooks = Arc::new(Hooks::default());
    let mut options = test_options(hooks.clone(), Arc::default());
    options.limits = Limits { max_admitted: 3, max_running: 2, ..Limits::default() };
    let s = Session::start(Setup { files: FILES, options, ..Setup::default() }).await;
    let waiting: Vec<_> = (0..3)
        .map(|_| {
            s.client.send_request(
                "workspace/executeCommand",
                json!({"command": "tether.callTool", "arguments": [{"tool": "gate"}]}),
            )
        })
        .collect();
    // Two run, one waits for a turn: all three hold admission.
    let wait = async {
        while hooks.at_gate.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await
        }
    };
    tokio::time::timeout(crate::lsp_support::PATIENCE, wait).await.expect("two calls at the gate");
    let e = s.call("read_file", json!({"path": "a.txt"})).await.expect_err("refused");
    assert_eq!(e["code"], -32803, "{e}");
    // Document sync still flows while calls wait.
    s.open("a.txt", "buffer\n");
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1), Some("buffer\n".to_owned()));
    hooks.open_gate();
    for rx in waiting {
        let msg = tokio::time::timeout(crate::lsp_support::PATIENCE, rx).await.expect("in time").expect("answer");
        assert_eq!(msg["result"]["isError"], false, "{msg}");
    }
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("admitted again");
    assert!(text(&r).contains("buffer"));
    s.shutdown().await;
}

/// A failure interrupts the user (`window/showMessage`) only when they ran the call themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_shown_only_for_calls_the_user_made() {
    let s = Session::start(Setup { files: FILES, options: Options::default(), ..Setup::default() }).await;
    let missing = json!({"path": "missing.txt"});
    let call = |interactive: Option<bool>| {
        let mut arg = json!({"tool": "read_file", "arguments": missing});
        if let Some(i) = interactive {
            arg["interactive"] = json!(i);
        }
        s.execute("tether.callTool", vec![arg])
    };
    for interactive in [None, Some(false)] {
        let r = call(interactive).await.expect("result");
        assert_eq!(error_kind(&r).as_deref(), Some("not_found"), "{r}");
    }
    let ok = s.execute(
        "tether.callTool",
        vec![json!({"tool": "read_file", "arguments": {"path": "a.txt"}, "interactive": true})],
    );
    assert_eq!(ok.await.expect("result")["isError"], false);
    s.sync().await;
    assert!(s.client.notifications("window/showMessage").is_empty(), "no message for an assistant's call or a success");

    let r = call(Some(true)).await.expect("result");
    assert_eq!(error_kind(&r).as_deref(), Some("not_found"), "the result is the same: {r}");
    s.client.wait_for("a showMessage", |n| n.iter().any(|m| m["method"] == "window/showMessage")).await;
    let shown = s.client.notifications("window/showMessage");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["type"], 1, "an error");
    let message = shown[0]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("tether read_file: ") && message.contains("missing.txt"), "{message}");
    s.shutdown().await;
}
