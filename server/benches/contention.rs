//! Many writers on one project: what coordinating with other tether processes costs a change, and
//! how long an edit waits when eight processes edit one file at once.
//!
//! 1. Coordination: holding one file against other changes (the in-process claim plus the
//!    cross-process `flock` on its lock file, taken and let go) against a whole one-line
//!    `edit_file` on disk in the same process, alternately, in the same run. Target: under 1 ms.
//! 2. Contention: eight `tether mcp` processes each make `EDITS` `edit_file` calls to their own
//!    lines of one shared file, all at once; one process alone makes the same calls first, as the
//!    peer. Latency is request to answer as the client sees it. Target: p99 under 100 ms.
//!
//! Run with `cargo bench --bench contention` (`TETHER_BENCH_BIN` measures another build).

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether::config::{Cancel, Config};
use tether::profiles::{self, Profile as _};
use tether::sink::DiskSink;
use tether::tools::Context;
use tether::vfs::Vfs;
use tether::workspace::Workspace;

const SAMPLES: usize = 2001;
const PROCESSES: usize = 8;
const EDITS: usize = 100;

fn bin() -> std::ffi::OsString {
    std::env::var_os("TETHER_BENCH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_tether").into())
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_nanos() as f64 / 1e3)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_nanos() as f64 / 1e6)
}

fn main() {
    coordination();
    contention();
}

fn coordination() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let file = root.join("a.txt");
    std::fs::write(&file, "alpha\n").expect("write");
    let ws = Workspace::new(vec![root.clone()]).expect("workspace");
    let vfs = Vfs::disk(Arc::new(ws));
    let config = Config { journal: None, ..Config::default() };
    let ctx = Context { vfs: &vfs, config: &config, cancel: &Cancel::default(), editor: None };
    let (mut hold, mut edit) = (Vec::with_capacity(SAMPLES), Vec::with_capacity(SAMPLES));
    let words = ["alpha\n", "beta\n"];
    for i in 0..SAMPLES {
        let started = Instant::now();
        drop(tether::sink::hold(&file));
        hold.push(started.elapsed());
        let args = json!({"path": "a.txt", "old_string": words[i % 2], "new_string": words[(i + 1) % 2]});
        let started = Instant::now();
        let r = profiles::Standard.call(&ctx, &DiskSink, "edit_file", args).expect("call");
        edit.push(started.elapsed());
        assert!(!r.is_error, "{}", r.text);
    }
    let (h, e) = (percentile(&mut hold, 0.5), percentile(&mut edit, 0.5));
    println!("coordination, {SAMPLES} samples (median):");
    println!("  hold one file (claim + flock + release)   {}", us(h));
    println!("  one-line edit_file on disk, whole          {}", us(e));
    println!("  share of the edit                          {:.1}%", h.as_secs_f64() / e.as_secs_f64() * 100.0);
}

/// A `tether mcp` process over stdio.
struct Client {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Client {
    fn start(root: &std::path::Path, state: &std::path::Path) -> Client {
        let mut child = Command::new(bin())
            .env("XDG_STATE_HOME", state)
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tether mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = Client { child, stdin, stdout, id: 0 };
        c.ask("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}));
        c
    }

    fn ask(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}))
            .expect("send");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("answer");
        serde_json::from_str(&line).expect("JSON")
    }

    /// `EDITS` edits of writer `p`'s own lines, timed one by one.
    fn edits(&mut self, p: usize) -> Vec<Duration> {
        (0..EDITS)
            .map(|e| {
                let args =
                    json!({"path": "shared.txt", "old_string": line(p, e, "old"), "new_string": line(p, e, "new")});
                let started = Instant::now();
                let r = self.ask("tools/call", json!({"name": "edit_file", "arguments": args}));
                let took = started.elapsed();
                assert_eq!(r["result"]["isError"], false, "{r}");
                took
            })
            .collect()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn line(p: usize, e: usize, state: &str) -> String {
    format!("writer {p} edit {e}: {state}\n")
}

fn shared_file(root: &std::path::Path) {
    let text: String =
        (0..EDITS).flat_map(|e| (0..PROCESSES).map(move |p| (p, e))).map(|(p, e)| line(p, e, "old")).collect();
    std::fs::write(root.join("shared.txt"), text).expect("write");
}

fn contention() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("state");
    let root = dir.path().canonicalize().expect("canonical");
    // The peer: one process alone on the same file.
    shared_file(&root);
    let mut alone = Client::start(&root, state.path()).edits(0);
    // Eight at once, from a fresh file.
    shared_file(&root);
    let mut clients: Vec<Client> = (0..PROCESSES).map(|_| Client::start(&root, state.path())).collect();
    let started = Instant::now();
    let mut all: Vec<Duration> = std::thread::scope(|s| {
        let threads: Vec<_> = clients.iter_mut().enumerate().map(|(p, c)| s.spawn(move || c.edits(p))).collect();
        threads.into_iter().flat_map(|t| t.join().expect("writer")).collect()
    });
    let wall = started.elapsed();
    let text = std::fs::read_to_string(root.join("shared.txt")).expect("read");
    let landed = text.lines().filter(|l| l.ends_with(": new")).count();
    assert_eq!(landed, PROCESSES * EDITS, "every edit landed once");
    println!("\n{PROCESSES} tether mcp processes, {EDITS} edit_file calls each, one shared file (journal on):");
    println!(
        "  one process alone      p50 {}  p99 {}",
        ms(percentile(&mut alone, 0.5)),
        ms(percentile(&mut alone, 0.99))
    );
    println!(
        "  {PROCESSES} at once             p50 {}  p99 {}  ({} edits in {}, all landed)",
        ms(percentile(&mut all, 0.5)),
        ms(percentile(&mut all, 0.99)),
        all.len(),
        ms(wall)
    );
}
