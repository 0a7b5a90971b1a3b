//! `tether mcp` keeps the buffers of a large call for the next one while it is busy, and gives
//! the memory back once it has been idle for a few seconds.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

#[test]
fn an_idle_server_returns_the_memory_of_a_large_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = "a line of text that is neither short nor long, as most lines are\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat((20 << 20) / line.len())).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["mcp", "--root"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tether mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{msg}").expect("send");
        let mut reply = String::new();
        stdout.read_line(&mut reply).expect("reply");
        serde_json::from_str(&reply).expect("JSON reply")
    };
    ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let before = rss_kib(child.id());
    let read = ask(
        2,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "big.txt", "offset": 1, "limit": 1_000_000}}),
    );
    assert_eq!(read["result"]["isError"], false, "{}", &read.to_string()[..300.min(read.to_string().len())]);
    let busy = rss_kib(child.id());
    assert!(busy > before + 40 * 1024, "the read's buffers are kept: {before} KiB before, {busy} KiB after");

    let started = Instant::now();
    let idle = loop {
        let now = rss_kib(child.id());
        if now + 30 * 1024 < busy || started.elapsed() > Duration::from_secs(15) {
            break now;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(idle + 30 * 1024 < busy, "idle for {:?}, still {idle} KiB resident (busy: {busy} KiB)", started.elapsed());
    drop(stdin);
    child.wait().expect("exit");
}
