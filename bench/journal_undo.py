#!/usr/bin/env python3
"""The change journal: what recording costs a change, and how long an undo of a 50-file patch takes.

Usage: bench/journal_undo.py [--rounds N] [--files N]

A workspace of --files (50) text files in five directories (a third with CRLF breaks, every
seventh with a BOM, every fourth executable) is a git repository with everything committed. Each
round applies one `apply_patch` that changes all of them (one deleted, one moved, one created, the
rest edited) with `tether call`, then takes it back, alternately:

- `tether undo --last 1` (the journal's three-way undo, byte for byte), and
- `git checkout -- . && git clean -fdq` (git's restore of the committed state: the peer),

checking after each that every file is byte for byte as committed (bytes and modes). Every time
is the whole command, process start included, as a user runs it. The patch itself is timed with
the journal on and with `--no-journal`, so what recording adds to a change shows too.

Reads: --reads (300) `read_file` calls of a 1 MiB file over one `tether mcp` stdio session each,
journal on (every read hashed for its `[version: ...]`, its text kept once) and `--no-journal`,
alternating sessions; the time is one request's round trip on the open session.

Environment: TETHER_BIN (default target/release/tether).
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
BIN = os.environ.get("TETHER_BIN", str(REPO / "target" / "release" / "tether"))


def workspace(root: pathlib.Path, n: int) -> str:
    patch = ["*** Begin Patch"]
    for i in range(n):
        rel = f"pkg{i % 5}/f{i}.txt"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        sep = "\r\n" if i % 3 == 0 else "\n"
        body = sep.join(f"line {l} of file {i}" for l in range(40)) + "\n"
        data = ("\ufeff" if i % 7 == 0 else "") + body
        path.write_bytes(data.encode())
        if i % 4 == 0:
            path.chmod(0o755)
        if i == 1:
            patch.append(f"*** Delete File: {rel}")
        elif i == 2:
            patch += [f"*** Update File: {rel}", "*** Move to: moved/f2.txt", "@@", "-line 5 of file 2", "+line five of file 2"]
        else:
            patch += [f"*** Update File: {rel}", "@@", f"-line 10 of file {i}", f"+line ten of file {i}"]
    patch += ["*** Add File: brand/new.txt", "+a new file", "*** End Patch"]
    return "\n".join(patch) + "\n"


def snapshot(root: pathlib.Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        if ".git" in p.relative_to(root).parts:
            continue
        st = p.lstat()
        out[str(p.relative_to(root))] = (p.is_dir(), b"" if p.is_dir() else p.read_bytes(), st.st_mode & 0o7777)
    return out


def timed(args, cwd, env=None) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def read_rounds(root: pathlib.Path, env: dict, n: int, journal: bool) -> list:
    """Round trips of `n` read_file calls of big.txt over one tether mcp session, in ms."""
    args = [BIN, "mcp", "--root", str(root)] + ([] if journal else ["--no-journal"])
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def ask(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        return json.loads(p.stdout.readline()) if "id" in msg else None

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    out = []
    for i in range(n):
        start = time.perf_counter()
        r = ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "big.txt"}}})
        out.append((time.perf_counter() - start) * 1000)
        assert not r["result"].get("isError"), r
        assert ("[version: " in r["result"]["content"][0]["text"]) == journal
    p.stdin.close()
    p.wait()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--reads", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp, "w")
        root.mkdir()
        env = dict(os.environ, XDG_STATE_HOME=str(pathlib.Path(tmp, "state")))
        patch = workspace(root, a.files)
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "core.autocrlf=false"]
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(git + ["add", "-A"], cwd=root, check=True)
        subprocess.run(git + ["commit", "-qm", "base"], cwd=root, check=True)
        committed = snapshot(root)
        args = json.dumps({"patch": patch})
        call = [BIN, "call", "apply_patch", args, "--root", str(root)]
        times = {"patch (journal on)": [], "patch (--no-journal)": [], "tether undo": [], "git restore": []}
        for r in range(a.rounds):
            journal = r % 2 == 0
            t = timed(call if journal else call + ["--no-journal"], root, env)
            times["patch (journal on)" if journal else "patch (--no-journal)"].append(t)
            if journal:
                times["tether undo"].append(timed([BIN, "undo", "--last", "1", "--root", str(root)], root, env))
            else:
                times["git restore"].append(timed(["sh", "-c", "git checkout -q -- . && git clean -fdq"], root, env))
            if snapshot(root) != committed:
                print(f"round {r}: the workspace is not as committed after the undo", file=sys.stderr)
                return 1
        print(f"{a.files} files, {a.rounds} rounds; median and p90 in ms (whole command, process start included)")
        for name, ts in times.items():
            ts.sort()
            print(f"  {name:<22} median {statistics.median(ts):7.1f}  p90 {ts[int(len(ts) * 0.9) - 1 if len(ts) > 1 else 0]:7.1f}  (n={len(ts)})")
        undo, git_ = statistics.median(times["tether undo"]), statistics.median(times["git restore"])
        print(f"  tether undo / git restore: {undo / git_:.2f}")
        (root / "big.txt").write_text("".join(f"line {i} of a one-megabyte file to read, hash and keep\n" for i in range(19_000)))
        reads = {True: [], False: []}
        for k in range(6):
            reads[k % 2 == 0] += read_rounds(root, env, a.reads // 3, k % 2 == 0)
        print(f"read_file of {(root / 'big.txt').stat().st_size} bytes over tether mcp, {len(reads[True])} calls each")
        for journal, ts in reads.items():
            print(f"  {'journal on' if journal else '--no-journal':<22} median {statistics.median(ts):7.2f}  p90 {sorted(ts)[int(len(ts) * 0.9)]:7.2f}")
        print(f"  on / off: {statistics.median(reads[True]) / statistics.median(reads[False]):.2f}")
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
