//! `tether mcp` on real stdio pipes: large requests, and the memory of large calls.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::time::{Duration, Instant};

use crate::lsp_support::WineSafe as _;
use serde_json::{json, Value};

/// A `tether mcp` serving `root`, initialized, with a way to ask it things.
pub(crate) struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    pub(crate) fn start(root: &std::path::Path) -> Server {
        let (server, _) = Server::start_with(root, "2025-06-18");
        server
    }

    /// A server initialized by a client asking for protocol `version`, and the answer.
    fn start_with(root: &std::path::Path, version: &str) -> (Server, Value) {
        Server::start_with_env(root, version, &[])
    }

    /// A server as [`Server::start_with`] gives, with `env` added to its environment.
    fn start_with_env(root: &std::path::Path, version: &str, env: &[(&str, &str)]) -> (Server, Value) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
            .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
            .envs(env.iter().copied())
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .wine_safe_spawn()
            .expect("spawn tether mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server { child, stdin, stdout, next_id: 0 };
        let init = s.ask(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        (s, init)
    }

    pub(crate) fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").expect("send");
        self.reply(method)
    }

    /// The next line tether writes, the answer to `what`.
    fn reply(&mut self, what: &str) -> Value {
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).expect("reply");
        assert!(!reply.is_empty(), "tether mcp closed stdout instead of answering {what}");
        serde_json::from_str(&reply).expect("JSON reply")
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let reply = self.ask("tools/call", json!({"name": tool, "arguments": arguments}));
        let head: String = reply.to_string().chars().take(300).collect();
        assert_eq!(reply["result"]["isError"], false, "{head}");
        reply
    }

    pub(crate) fn stop(self) {
        drop(self.stdin);
        let mut child = self.child;
        child.wait().expect("exit");
    }
}

#[test]
fn a_request_larger_than_16_mib_is_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path());
    let text = "seventeen mebibytes of text, one line at a time\n".repeat((17 << 20) / 48);
    server.call("write_file", json!({"path": "big.txt", "content": text}));
    assert_eq!(std::fs::read_to_string(dir.path().join("big.txt")).expect("written"), text);
    server.stop();
}

/// Requests that are JSON but not valid get a JSON-RPC error under their own id, saying what is
/// wrong, and the server goes on serving.
#[test]
fn malformed_requests_get_errors_that_say_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path());
    let cases = [
        (
            "tools/call",
            json!({"name": "read_file", "arguments": [1]}),
            -32602,
            "invalid params for tools/call: arguments: invalid type: sequence",
        ),
        ("tools/call", json!({"arguments": {}}), -32602, "invalid params for tools/call: missing field `name`"),
        ("tools/call", json!(7), -32600, "Invalid request: tools/call"),
        ("logging/setLevel", json!({"level": 5}), -32602, "invalid params for logging/setLevel"),
        ("no/such/method", json!({}), -32601, "method not found: no/such/method"),
    ];
    for (method, params, code, message) in cases {
        let reply = server.ask(method, params.clone());
        assert_eq!(reply["id"], server.next_id, "{method} {params}: {reply}");
        assert_eq!(reply["error"]["code"], code, "{method} {params}: {reply}");
        let text = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(text.starts_with(message), "{method} {params}: {text}");
    }
    writeln!(server.stdin, "not JSON at all").expect("send");
    let parse_error = server.reply("a line that is not JSON");
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    assert_eq!(parse_error["id"], Value::Null, "{parse_error}");
    assert_eq!(server.ask("ping", json!({}))["result"], json!({}), "still serving");
    server.stop();
}

/// MCP 2025-03-26 is the one revision with JSON-RPC batches: a session on it gets the answers to
/// a batch's requests as one array (in any order, each under its request's id), and nothing for a
/// batch of notifications; a session on a later revision gets `-32600` for a batch, and both go on
/// serving.
#[test]
fn a_batch_is_answered_in_a_2025_03_26_session_and_refused_in_later_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "alpha\n").expect("write");
    let (mut server, init) = Server::start_with(dir.path(), "2025-03-26");
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "{init}");
    let read = json!({"name": "read_file", "arguments": {"path": "a.txt"}});
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": read},
        {"jsonrpc": "2.0", "id": "fifty-one", "method": "ping"},
        {"jsonrpc": "2.0", "id": 52, "method": "no/such/method"},
    ]);
    writeln!(server.stdin, "{batch}").expect("send");
    let answers = server.reply("a batch");
    let mut answers: Vec<Value> = answers.as_array().unwrap_or_else(|| panic!("an array: {answers}")).clone();
    // Sorted by id as JSON text: "fifty-one" (quoted) first, then 50 and 52.
    answers.sort_by_key(|a| a["id"].to_string());
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!((answers[0]["id"].clone(), answers[0]["result"].clone()), (json!("fifty-one"), json!({})));
    assert_eq!(answers[1]["id"], 50, "{answers:?}");
    assert!(answers[1]["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("alpha"), "{answers:?}");
    assert_eq!((answers[2]["id"].clone(), answers[2]["error"]["code"].clone()), (json!(52), json!(-32601)));
    // Notifications alone get no answer: the next line is the ping's.
    writeln!(server.stdin, "{}", json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}])).expect("send");
    assert_eq!(server.ask("ping", json!({}))["id"], server.next_id, "still serving, nothing in between");
    server.stop();

    let (mut server, init) = Server::start_with(dir.path(), "2025-06-18");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    writeln!(server.stdin, "{}", json!([{"jsonrpc": "2.0", "id": 50, "method": "ping"}])).expect("send");
    let refused = server.reply("a batch");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let reason = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(reason.contains("only in a session on MCP 2025-03-26"), "{reason}");
    assert_eq!(server.ask("ping", json!({}))["result"], json!({}), "still serving");
    server.stop();
}

/// `tether mcp` keeps the buffers of large calls for the next one while it is busy (glibc
/// only). The release after an idle period is held off here (`TETHER_IDLE_RELEASE_MS`), so a
/// loaded machine that is slow between the answer and the measurement cannot release them first.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_busy_server_keeps_the_buffers_of_a_large_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = "a line of text that is neither short nor long, as most lines are\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat((20 << 20) / line.len())).expect("write");
    let (mut server, _) = Server::start_with_env(dir.path(), "2025-06-18", &[("TETHER_IDLE_RELEASE_MS", "3600000")]);
    let pid = server.child.id();
    let before = rss_kib(pid);
    server.call("read_file", json!({"path": "big.txt", "offset": 1, "limit": 1_000_000}));
    let busy = rss_kib(pid);
    assert!(busy > before + 40 * 1024, "the read's buffers are kept: {before} KiB before, {busy} KiB after");
    server.stop();
}

/// `tether mcp` gives all of the memory of large calls back once it has been idle (glibc only):
/// nothing keeps a buffer the size of the largest reply or request (rmcp's writer kept 32 MiB
/// after this read). The idle period is short here (`TETHER_IDLE_RELEASE_MS`) and the wait for
/// the release long: the release comes a period after the last reply was written, however slowly
/// a loaded machine writes it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn an_idle_server_returns_the_memory_of_a_large_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = "a line of text that is neither short nor long, as most lines are\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat((20 << 20) / line.len())).expect("write");
    let (mut server, _) = Server::start_with_env(dir.path(), "2025-06-18", &[("TETHER_IDLE_RELEASE_MS", "300")]);
    let pid = server.child.id();
    let before = rss_kib(pid);
    server.call("read_file", json!({"path": "big.txt", "offset": 1, "limit": 1_000_000}));
    let busy = rss_kib(pid);
    // A large request too: 20 MiB to write.
    server.call("write_file", json!({"path": "copy.txt", "content": line.repeat((20 << 20) / line.len())}));

    let started = Instant::now();
    let idle = loop {
        let now = rss_kib(pid);
        if now < before + 10 * 1024 || started.elapsed() > Duration::from_secs(60) {
            break now;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        idle < before + 10 * 1024,
        "idle for {:?}, still {idle} KiB resident (before the read: {before} KiB, after: {busy} KiB)",
        started.elapsed()
    );
    server.stop();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}
