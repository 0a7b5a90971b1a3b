#!/usr/bin/env python3
"""A workspace of a million files: start-up, grep and glob against ripgrep, memory, cancellation.

Usage: bench/million_files.py [--files N] [--rounds N] [--bin TETHER] [--tree DIR]

Generates N small files (default 1,000,000, about 120 bytes each, in 1,000 directories of 1,000;
one in a thousand holds the word `needle`) under --tree (default $TETHER_CACHE/bench-million,
kept between runs and regenerated when N changes), then measures, the machine's noise falling on
both sides alike (alternating, medians of --rounds):

- `tether lsp` start-up: spawn to the `initialize` answer, against spawn to exit of
  `tether --version` (a bare start): tether walks nothing at start, so the workspace's size must
  not show;
- `grep` (`files_with_matches`) and `glob` (`**/*.rs`) as whole `tether call` processes, against
  `rg -l needle` and `rg --files -g '*.rs'` (the same ignore semantics: `--hidden -g '!.git'
  --no-require-git`), each checked to find the same number of files;
- `tether mcp`: its RSS after a grep and a glob over every file, in one session, and 3 s later;
- cancellation: a grep that takes seconds (a regex that matches nothing), cancelled
  (`notifications/cancelled`) 300 ms after it was sent: the time until the process's CPU time
  stops growing (read from /proc every 5 ms; the kernel counts it in 10 ms ticks), and that the
  session answers the next request.

The machine is shared: quote the ratios, measured in one run.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from stdio_clients import Mcp  # noqa: E402
RG_FLAGS = ["--hidden", "-g", "!.git", "--no-require-git"]


def generate(tree: pathlib.Path, files: int) -> None:
    stamp = tree / ".generated"
    if stamp.exists() and stamp.read_text() == str(files):
        return
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    per_dir = 1000
    exts = [".rs", ".py", ".ts", ".go", ".md"]
    t = time.perf_counter()
    for i in range(files):
        d = tree / f"d{i // per_dir:04d}"
        if i % per_dir == 0:
            d.mkdir()
        word = "needle" if i % 1000 == 7 else "hay"
        body = f"// file {i}\nfn item_{i}() -> u32 {{ {i} }}\n// {word} and more words on this line\n"
        fd = os.open(d / f"f{i:07d}{exts[i % len(exts)]}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, body.encode())
        os.close(fd)
    stamp.write_text(str(files))
    print(f"generated {files} files in {time.perf_counter() - t:.0f} s", file=sys.stderr)


def cpu_ticks(pid: int) -> int:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def timed(argv: list[str], cwd: pathlib.Path, env: dict) -> tuple[float, bytes]:
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} failed: {p.stderr[:300]!r}")
    return dt * 1000, p.stdout


def lsp_start(binary: str, tree: pathlib.Path, env: dict) -> float:
    """Spawn to the `initialize` answer of a `tether lsp` on `tree` (then shut down)."""
    t = time.perf_counter()
    proc = subprocess.Popen([binary, "lsp", "--no-ide"], cwd=tree, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": os.getpid(), "rootUri": tree.as_uri(), "capabilities": {},
        "workspaceFolders": [{"uri": tree.as_uri(), "name": "tree"}]}}).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()
    length = 0
    while True:
        line = proc.stdout.readline().strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    proc.stdout.read(length)
    dt = (time.perf_counter() - t) * 1000
    proc.kill()
    proc.wait()
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "tether"))
    cache = pathlib.Path(os.environ.get("TETHER_CACHE", pathlib.Path.home() / ".cache" / "tether"))
    ap.add_argument("--tree", default=str(cache / "bench-million"))
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("bench/million_files.py: ripgrep (rg) is not on PATH: apt-get install ripgrep")
    tree = pathlib.Path(args.tree)
    generate(tree, args.files)
    state = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"million-state-{os.getpid()}"
    env = dict(os.environ, XDG_STATE_HOME=str(state), XDG_RUNTIME_DIR=str(state / "run"), TETHER_LOG="warn")
    (state / "run").mkdir(parents=True, mode=0o700)
    try:
        # A warm-up pass over the tree for each tool: both then read from the page cache.
        timed([rg, "-l", "needle", *RG_FLAGS], tree, env)
        timed([binary, "call", "glob", json.dumps({"pattern": "**/*.rs", "limit": 10**9}), "--root", str(tree)], tree, env)

        rows = {}
        starts, bare = [], []
        for _ in range(args.rounds):
            starts.append(lsp_start(binary, tree, env))
            bare.append(timed([binary, "--version"], tree, env)[0])
        rows["tether lsp start-up (spawn to initialize answer) vs tether --version"] = (starts, bare)

        grep_call = [binary, "call", "grep", json.dumps({"pattern": "needle", "output_mode": "files_with_matches",
                                                          "head_limit": 0}), "--root", str(tree)]
        glob_call = [binary, "call", "glob", json.dumps({"pattern": "**/*.rs", "limit": 10**9}), "--root", str(tree)]
        queries = {
            "grep needle (files)": (grep_call, [rg, "-l", "needle", *RG_FLAGS]),
            "glob **/*.rs": (glob_call, [rg, "--files", "-g", "*.rs", *RG_FLAGS]),
        }
        for name, (ours, theirs) in queries.items():
            a, b = [], []
            counts = set()
            for i in range(args.rounds):
                for who in ((0, 1) if i % 2 == 0 else (1, 0)):
                    dt, out = timed(ours if who == 0 else theirs, tree, env)
                    (a if who == 0 else b).append(dt)
                    if who == 1:
                        counts.add(("rg", len(out.splitlines())))
                    else:
                        counts.add(("tether", out.decode().count(".rs") if "glob" in name else
                                    sum(1 for line in out.decode().splitlines() if line.startswith("d"))))
            rows[name] = (a, b)
            print(f"{name}: files found {sorted(counts)}", file=sys.stderr)

        mcp = Mcp([binary, "mcp", "--root", str(tree)], env)
        rss_start = rss_mib(mcp.proc.pid)
        mcp.request("tools/call", {"name": "grep", "arguments": {"pattern": "needle", "output_mode": "files_with_matches"}})
        mcp.request("tools/call", {"name": "glob", "arguments": {"pattern": "**/*.rs", "limit": 10**9}})
        rss_after = rss_mib(mcp.proc.pid)
        # tether gives free memory back after 2 s without activity.
        time.sleep(3)
        rss_idle = rss_mib(mcp.proc.pid)
        stops, busy = [], []
        for _ in range(args.rounds):
            key = mcp.start("tools/call", {"name": "grep", "arguments": {
                "pattern": r"(\w+\s+){6}zzz_no_such_word", "output_mode": "count"}})
            sent_ticks = cpu_ticks(mcp.proc.pid)
            time.sleep(0.3)
            before = cpu_ticks(mcp.proc.pid)
            mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": key, "reason": "bench"}})
            sent = time.perf_counter()
            last_change, last = sent, before
            while time.perf_counter() - sent < 3:
                time.sleep(0.005)
                now = cpu_ticks(mcp.proc.pid)
                if now != last:
                    last, last_change = now, time.perf_counter()
            stops.append((last_change - sent) * 1000)
            # CPU ticks in the 300 ms before the cancel: the grep was running (not done already).
            busy.append(before - sent_ticks)
            # The session goes on; a cancelled request gets no answer.
            ping = mcp.start("ping", {})
            while True:
                message = json.loads(mcp.proc.stdout.readline())
                if message.get("id") == key:
                    sys.exit("the cancelled grep was answered: it had finished, or was not cancelled")
                if message.get("id") == ping:
                    break
        mcp.proc.stdin.close()
        mcp.proc.wait(timeout=30)
    finally:
        shutil.rmtree(state, ignore_errors=True)

    print(f"{args.files} files; medians of {args.rounds} (ms)")
    for name, (a, b) in rows.items():
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{name:<70} {ma:>9.1f} {mb:>9.1f}  ratio {ma / mb:.2f}")
    print(f"tether mcp RSS: {rss_start:.1f} MiB at start, {rss_after:.1f} MiB after a grep and a glob over every file, "
          f"{rss_idle:.1f} MiB 3 s later")
    print(f"cancelled grep (CPU ticks in the 300 ms before the cancel: {busy}): CPU stopped growing "
          f"{statistics.median(stops):.0f} ms after the cancel (median; max {max(stops):.0f}; 10 ms ticks); "
          f"no answer to it, the session answered the next request")


if __name__ == "__main__":
    main()
