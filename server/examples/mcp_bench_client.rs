//! The client `bench/mcp_vs_reference.py` drives both MCP servers with.
//!
//! A benchmark of two servers should measure the servers, so this client does as little as a
//! client can: it writes one JSON-RPC message per line, reads the reply line into a reused
//! buffer and parses it without copying its text (the content is validated, not unescaped). The
//! same binary drives both servers, so whatever it costs is the same on both sides.
//!
//! Usage: `mcp_bench_client PLAN.json`, where the plan is
//! `{"cmd": [...], "runs": N, "init_runs": M, "ops": [{"label", "method", "params": [...]}]}`.
//! Each operation cycles through its `params` list (an edit flips a marker back and forth). It
//! prints one JSON object: the median milliseconds per label (as `[label, value]` pairs), `"spawn to initialize"`, the
//! server's peak RSS in MiB (`VmHWM` after its last call), and the reply size per label.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
struct Plan {
    cmd: Vec<String>,
    runs: usize,
    init_runs: usize,
    ops: Vec<Op>,
}

#[derive(Deserialize)]
struct Op {
    label: String,
    method: String,
    params: Vec<Value>,
    /// Overrides the plan's `runs` for this operation.
    runs: Option<usize>,
}

/// What the client reads of a reply: the envelope and whether a tool call failed. Everything
/// else (the content) is skipped by serde, which still checks that it is well-formed JSON.
#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    result: Option<ResultHead>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ResultHead {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    out: Vec<u8>,
    line: Vec<u8>,
}

impl Client {
    fn spawn(cmd: &[String]) -> anyhow::Result<Client> {
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("spawning {cmd:?}"))?;
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
        Ok(Client { child, stdin, stdout, next_id: 0, out: Vec::new(), line: Vec::new() })
    }

    /// Sends one request and waits for its reply; returns the reply's size in bytes. The params
    /// are already JSON (serialised once, when the plan was read), so a large request costs the
    /// client a copy, not a serialisation.
    fn request(&mut self, method: &str, params: Option<&str>) -> anyhow::Result<usize> {
        self.next_id += 1;
        self.out.clear();
        write!(self.out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":", self.next_id)?;
        serde_json::to_writer(&mut self.out, method)?;
        if let Some(p) = params {
            self.out.extend_from_slice(b",\"params\":");
            self.out.extend_from_slice(p.as_bytes());
        }
        self.out.extend_from_slice(b"}\n");
        self.stdin.write_all(&self.out)?;
        self.stdin.flush()?;
        loop {
            self.line.clear();
            if self.stdout.read_until(b'\n', &mut self.line)? == 0 {
                bail!("the server closed the connection during {method}");
            }
            let reply: Reply = serde_json::from_slice(&self.line).context("reply is not JSON-RPC")?;
            if reply.id != Some(self.next_id) {
                continue; // a notification or a request of the server's
            }
            if let Some(error) = reply.error {
                bail!("{method}: {error}");
            }
            if reply.result.is_some_and(|r| r.is_error) {
                let whole: Value = serde_json::from_slice(&self.line)?;
                let text = whole["result"]["content"][0]["text"].as_str().unwrap_or_default();
                bail!("{method} failed: {}", text.chars().take(300).collect::<String>());
            }
            return Ok(self.line.len());
        }
    }

    fn initialize(&mut self) -> anyhow::Result<()> {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "tether-bench", "version": "1"}});
        self.request("initialize", Some(&params.to_string()))?;
        self.stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
        self.stdin.flush()?;
        Ok(())
    }

    fn close(mut self) -> anyhow::Result<()> {
        drop(self.stdin);
        self.child.wait()?;
        Ok(())
    }

    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    }
}

/// The median of `runs` calls after three warm-up calls; calls under 5 ms are sampled 20 times
/// as often, since a median of a handful of sub-millisecond samples on a shared machine says
/// more about the neighbours than about the server.
fn timed(client: &mut Client, op: &Op, runs: usize) -> anyhow::Result<(f64, usize)> {
    let params: Vec<String> = op.params.iter().map(Value::to_string).collect();
    let mut turn = 0;
    let mut call = |client: &mut Client| -> anyhow::Result<(f64, usize)> {
        let params = params.get(turn % params.len().max(1)).map(String::as_str);
        turn += 1;
        let t0 = Instant::now();
        let bytes = client.request(&op.method, params)?;
        Ok((t0.elapsed().as_secs_f64() * 1000.0, bytes))
    };
    for _ in 0..3 {
        call(client)?;
    }
    let (probe, bytes) = call(client)?;
    let n = if probe < 5.0 { runs * 20 } else { runs };
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(call(client)?.0);
    }
    Ok((median(samples), bytes))
}

fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).context("usage: mcp_bench_client PLAN.json")?;
    let plan: Plan = serde_json::from_str(&std::fs::read_to_string(&path)?)?;

    let mut init = Vec::new();
    for _ in 0..plan.init_runs {
        let t0 = Instant::now();
        let mut c = Client::spawn(&plan.cmd)?;
        c.initialize()?;
        init.push(t0.elapsed().as_secs_f64() * 1000.0);
        c.close()?;
    }

    // Lists of [label, value] pairs, in the plan's order.
    let mut times = Vec::new();
    let mut sizes = Vec::new();
    if !init.is_empty() {
        times.push(json!(["spawn to initialize", median(init)]));
    }
    let mut client = Client::spawn(&plan.cmd)?;
    client.initialize()?;
    for op in &plan.ops {
        let (ms, bytes) = timed(&mut client, op, op.runs.unwrap_or(plan.runs)).with_context(|| op.label.clone())?;
        times.push(json!([op.label, ms]));
        sizes.push(json!([op.label, bytes]));
    }
    let rss = client.peak_rss_mib();
    client.close()?;
    println!("{}", json!({"times": times, "reply_bytes": sizes, "peak_rss_mib": rss}));
    Ok(())
}
