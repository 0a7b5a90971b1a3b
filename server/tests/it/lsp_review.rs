//! Review before apply through `tether lsp`, with a scripted editor answering `tether/review` as
//! `editors/protocol.md` says: what the proposal shows, and that exactly what the user lets
//! through is applied, atomically, or nothing at all.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::lsp_support::editor::notification;
use crate::lsp_support::{
    editor_script, error_kind, neovim_capabilities, text, ChangeOrder, Reply, Script, Session, Setup, Strictness,
};

const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch\n";

fn reviewing() -> Value {
    let mut caps = neovim_capabilities();
    caps["experimental"]["tether"]["review"] = json!(true);
    caps
}

/// The usual editor, answering every `tether/review` with `answer(proposal)` (after `delay`),
/// and keeping the proposals it was shown.
fn answering(
    shown: Arc<Mutex<Vec<Value>>>,
    delay: Duration,
    answer: impl Fn(&Value) -> Value + Send + Sync + 'static,
) -> Script {
    let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
    Arc::new(move |editor, client, method, params| {
        if method != "tether/review" {
            return usual(editor, client, method, params);
        }
        shown.lock().expect("lock").push(params.clone());
        std::thread::sleep(delay);
        Reply::ok(answer(&params))
    })
}

async fn start(script: Script, review: Value, caps: Value) -> Session {
    let s = Session::start(Setup {
        files: "//- a.txt\nalpha\n//- b.txt\nbeta\n//- src/c.txt\ngamma\n",
        capabilities: caps,
        script,
        initialization_options: json!({ "review": review }),
        ..Setup::default()
    })
    .await;
    s.open_from_disk("a.txt");
    s.sync().await;
    s
}

async fn patch(s: &Session) -> Value {
    s.execute(
        "tether.callTool",
        vec![json!({"tool": "apply_patch", "arguments": {"patch": PATCH}, "profile": "standard"})],
    )
    .await
    .expect("result")
}

/// The `review` item of a result.
fn review_of(r: &Value) -> Value {
    let last = r["content"].as_array().and_then(|c| c.last()).and_then(|i| i["text"].as_str()).unwrap_or_default();
    serde_json::from_str::<Value>(last).ok().map(|v| v["review"].clone()).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partly_accepted_change_applies_exactly_the_accepted_file_and_returns_the_reason() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let script = answering(shown.clone(), Duration::ZERO, |p| {
        let a = p["files"][0]["uri"].clone();
        let b = p["files"][1]["uri"].clone();
        json!({"decision": "partial", "reason": "b.txt is generated; edit its template",
               "files": [{"uri": a, "decision": "accept"}, {"uri": b, "decision": "reject"}]})
    });
    let s = start(script, json!({"mode": "ask"}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).expect("open").1, "ALPHA\n");
    assert_eq!(s.disk("b.txt"), "beta\n", "the rejected file is left as it was");
    assert_eq!(
        review_of(&r),
        json!({"decision": "partly accepted", "accepted": ["a.txt"], "rejected": ["b.txt"],
               "reason": "b.txt is generated; edit its template"}),
        "{r}"
    );
    let proposal = shown.lock().expect("lock")[0].clone();
    assert_eq!(proposal["tool"], "apply_patch");
    assert_eq!(proposal["caller"], "editor");
    assert!(proposal["summary"].as_str().is_some_and(|s| s.contains("a.txt") && s.contains("b.txt")), "{proposal}");
    assert_eq!(proposal["files"][0]["kind"], "edit");
    assert_eq!(
        (proposal["files"][0]["oldText"].as_str(), proposal["files"][0]["newText"].as_str()),
        (Some("alpha\n"), Some("ALPHA\n"))
    );
    assert_eq!(proposal["files"][1]["path"], "b.txt");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_the_user_edited_before_accepting_is_what_lands() {
    let script = answering(Arc::default(), Duration::ZERO, |p| {
        let a = p["files"][0]["uri"].clone();
        let b = p["files"][1]["uri"].clone();
        json!({"decision": "accept", "files": [{"uri": a, "decision": "accept", "text": "Alpha, reviewed\n"},
                                               {"uri": b, "decision": "accept"}]})
    });
    let s = start(script, json!({"mode": "ask"}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).expect("open").1, "Alpha, reviewed\n");
    assert_eq!(s.disk("b.txt"), "BETA\n");
    assert_eq!(review_of(&r)["edited_by_the_user"], json!(["a.txt"]), "{r}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_or_no_answer_in_time_changes_nothing() {
    let reject = answering(Arc::default(), Duration::ZERO, |_| json!({"decision": "reject", "reason": "not now"}));
    let s = start(reject, json!({"mode": "ask"}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(error_kind(&r).as_deref(), Some("rejected"), "{r}");
    assert!(text(&r).contains("not now"), "{r}");
    assert_eq!(
        (s.editor.buffer(&s.uri("a.txt")).expect("open").1, s.disk("a.txt"), s.disk("b.txt")),
        ("alpha\n".to_owned(), "alpha\n".to_owned(), "beta\n".to_owned())
    );
    assert!(s.client.server_requests("workspace/applyEdit").is_empty());
    s.shutdown().await;

    let late = answering(Arc::default(), Duration::from_millis(800), |_| json!({"decision": "accept"}));
    let s = start(late, json!({"mode": "ask", "timeout": 200}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(error_kind(&r).as_deref(), Some("timeout"), "{r}");
    assert!(text(&r).contains("nothing was changed"), "{r}");
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(
        (s.editor.buffer(&s.uri("a.txt")).expect("open").1, s.disk("b.txt")),
        ("alpha\n".to_owned(), "beta\n".to_owned())
    );
    s.shutdown().await;
}

/// Whether the client got `$/cancelRequest` for `id`.
fn withdrawn(notes: &[Value], id: &Value) -> bool {
    notes.iter().any(|n| n["method"] == "$/cancelRequest" && n["params"]["id"] == *id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_nobody_waits_for_any_more_is_withdrawn_in_the_editor() {
    // The answer does not come in time.
    let shown = Arc::new(Mutex::new(Vec::new()));
    let late = answering(shown.clone(), Duration::from_millis(800), |_| json!({"decision": "accept"}));
    let s = start(late, json!({"mode": "ask", "timeout": 200}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(error_kind(&r).as_deref(), Some("timeout"), "{r}");
    let id = shown.lock().expect("lock")[0]["id"].clone();
    assert!(id.is_number(), "the proposal names its request: {id}");
    s.client.wait_for("the review withdrawn", |n| withdrawn(n, &id)).await;
    s.shutdown().await;

    // The call is cancelled while the user looks at it.
    let shown = Arc::new(Mutex::new(Vec::new()));
    let slow = answering(shown.clone(), Duration::from_millis(1500), |_| json!({"decision": "accept"}));
    let s = start(slow, json!({"mode": "ask"}), reviewing()).await;
    let call = 1_000_000;
    s.client.send(json!({"jsonrpc": "2.0", "id": call, "method": "workspace/executeCommand",
                         "params": {"command": "tether.callTool",
                                    "arguments": [{"tool": "apply_patch", "arguments": {"patch": PATCH}}]}}));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while shown.lock().expect("lock").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no proposal");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.client.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": call}}));
    let id = shown.lock().expect("lock")[0]["id"].clone();
    s.client.wait_for("the review withdrawn", |n| withdrawn(n, &id)).await;
    // The answer that comes after changes nothing.
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(
        (s.editor.buffer(&s.uri("a.txt")).expect("open").1, s.disk("b.txt")),
        ("alpha\n".to_owned(), "beta\n".to_owned())
    );
    assert!(s.client.server_requests("workspace/applyEdit").is_empty());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_decide_per_path_and_tool_and_the_setting_changes_at_run_time() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let script = answering(shown.clone(), Duration::ZERO, |_| json!({"decision": "accept"}));
    let rules = json!({"mode": "ask", "rules": [{"path": "src/**", "review": "off"}, {"tool": "write_file", "creates": true, "review": "off"}]});
    let s = start(script, rules, reviewing()).await;
    let call = |tool: &str, args: Value| {
        s.execute("tether.callTool", vec![json!({"tool": tool, "arguments": args, "profile": "standard"})])
    };
    let r =
        call("edit_file", json!({"path": "src/c.txt", "old_string": "gamma", "new_string": "GAMMA"})).await.expect("r");
    assert_eq!(r["isError"], false, "{r}");
    let r = call("write_file", json!({"path": "new.txt", "content": "n\n"})).await.expect("r");
    assert_eq!(r["isError"], false, "{r}");
    assert!(shown.lock().expect("lock").is_empty(), "no rule asked");
    let r = call("edit_file", json!({"path": "b.txt", "old_string": "beta", "new_string": "BETA"})).await.expect("r");
    assert_eq!(review_of(&r)["decision"], "accepted", "{r}");
    assert_eq!(shown.lock().expect("lock").len(), 1);
    // Turned off from the editor's settings: no more proposals.
    s.client.send(notification(
        "workspace/didChangeConfiguration",
        json!({"settings": {"tether": {"review": {"mode": "off"}}}}),
    ));
    s.sync().await;
    let r = call("edit_file", json!({"path": "b.txt", "old_string": "BETA", "new_string": "beta"})).await.expect("r");
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(shown.lock().expect("lock").len(), 1);
    assert_eq!(review_of(&r), Value::Null);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_on_in_an_editor_that_cannot_show_it_changes_nothing() {
    let script = answering(Arc::default(), Duration::ZERO, |_| json!({"decision": "accept"}));
    let s = start(script, json!({"mode": "ask"}), neovim_capabilities()).await;
    let r = patch(&s).await;
    assert_eq!(error_kind(&r).as_deref(), Some("unsupported"), "{r}");
    assert!(text(&r).contains("experimental.tether.review"), "{r}");
    assert_eq!((s.disk("a.txt"), s.disk("b.txt")), ("alpha\n".to_owned(), "beta\n".to_owned()));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buffer_that_changed_while_the_user_reviewed_is_a_conflict_not_a_second_review() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let seen = shown.clone();
    let usual = editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer);
    let script: Script = Arc::new(move |editor, client, method, params| {
        if method != "tether/review" {
            return usual(editor, client, method, params);
        }
        seen.lock().expect("lock").push(params.clone());
        // The user types into the buffer while the proposal is open, then accepts.
        let uri = editor.uris().into_iter().next().expect("a.txt is open");
        client.send(editor.type_text(&uri, 0, 0, "typed "));
        std::thread::sleep(Duration::from_millis(100));
        Reply::ok(json!({"decision": "accept"}))
    });
    let s = start(script, json!({"mode": "ask"}), reviewing()).await;
    let r = patch(&s).await;
    assert_eq!(error_kind(&r).as_deref(), Some("conflict"), "{r}");
    assert!(text(&r).contains("waited for review"), "{r}");
    assert_eq!(shown.lock().expect("lock").len(), 1, "the user is not asked again");
    assert_eq!(s.editor.buffer(&s.uri("a.txt")).expect("open").1, "typed alpha\n", "the user's typing stays");
    assert_eq!(s.disk("b.txt"), "beta\n", "nothing of the change lands");
    s.shutdown().await;
}
