#!/usr/bin/env python3
"""tether mcp against the reference MCP filesystem server, same client, same tree, one run.

Usage: bench/mcp_vs_reference.py [--runs N] [--pin CPU]

Both servers are driven by the same client, server/examples/mcp_bench_client.rs (built here in
release mode): one JSON-RPC message per line, requests serialised once up front, replies parsed
without copying their text, so that what is timed is the servers. Every operation runs on a fresh
server process, is timed from request written to reply parsed, and is reported as the median of
--runs calls after three warm-up calls (calls under 5 ms are sampled 20 times as often);
spawn-to-initialize is timed over fresh processes. Peak RSS is the largest VmHWM of the server's
processes. The reference server is installed from npm into $TETHER_CACHE. (tests/mcp/ is where
the official MCP Python SDK client proves compatibility.)
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
from statistics import median
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
CACHE = pathlib.Path(os.environ.get("TETHER_CACHE", pathlib.Path.home() / ".cache" / "tether"))
REF_PKG = "@modelcontextprotocol/server-filesystem"


def ensure_reference() -> list[str]:
    prefix = CACHE / "npm-ref"
    entry = prefix / "node_modules" / REF_PKG / "dist" / "index.js"
    if not entry.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix), REF_PKG],
                       check=True)
    return ["node", str(entry)]


def ensure_tether() -> list[str]:
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "tether"], cwd=REPO, check=True)
    return [str(REPO / "target" / "release" / "tether"), "mcp"]


def make_tree(root: pathlib.Path) -> None:
    """A small project: 40 directories of source files, plus the large files the edits need."""
    if root.exists():
        shutil.rmtree(root)
    line = "    let value = compute(alpha, beta, gamma); // a typical line of code here\n"
    for d in range(40):
        sub = root / "src" / f"module{d:02}"
        sub.mkdir(parents=True)
        for f in range(25):
            body = "".join(f"fn f{d}_{f}_{i}() {{\n{line}}}\n" for i in range(20))
            (sub / f"file{f:02}.rs").write_text(body)
    data = root / "data"
    data.mkdir()
    (data / "small.txt").write_text((line * 700)[: 50 * 1024])
    for name, size in (("one_mib.txt", 1 << 20), ("twenty_mib.txt", 20 << 20)):
        text = (line * (size // len(line) + 1))[:size]
        # One unique line in the middle is the edit target.
        mid = len(text) // 2
        mid = text.index("\n", mid) + 1
        text = text[:mid] + "UNIQUE_MARKER = 1\n" + text[mid:]
        (data / name).write_text(text)


def ensure_client() -> pathlib.Path:
    """The benchmark client (server/examples/mcp_bench_client.rs), built in release mode."""
    subprocess.run(["cargo", "build", "--release", "--locked", "--example", "mcp_bench_client"],
                   cwd=REPO, check=True)
    return REPO / "target" / "release" / "examples" / "mcp_bench_client"


def root_args(cmd: list[str], root: pathlib.Path) -> list[str]:
    return ["--root", str(root)] if cmd[-1] == "mcp" else [str(root)]


def call(tool: str, args: dict) -> dict:
    return {"name": tool, "arguments": args}


def operations(is_tether: bool, root: pathlib.Path) -> list[dict | None]:
    """The plan's operations: a label, a method and the params the calls cycle through."""
    d = root / "data"
    big_read = {"offset": 1, "limit": 10**9} if is_tether else {}

    def edit(name: str) -> list[dict]:
        # The calls flip the marker back and forth, starting from whatever the file holds now.
        n = 1 if "UNIQUE_MARKER = 1" in (d / name).read_text() else 2
        plans = []
        for a, b in ((n, 3 - n), (3 - n, n)):
            old, new = f"UNIQUE_MARKER = {a}", f"UNIQUE_MARKER = {b}"
            if is_tether:
                plans.append(call("edit_file", {"path": str(d / name), "old_string": old, "new_string": new}))
            else:
                plans.append(call("edit_file", {"path": str(d / name), "edits": [{"oldText": old, "newText": new}]}))
        return plans

    # Two different contents in turn, so that every call really writes (a write_file of the text
    # a file already holds changes nothing, and tether then writes nothing).
    one_mib = [(c * 79 + "\n") * ((1 << 20) // 80) for c in "xy"]
    read = "read_file" if is_tether else "read_text_file"
    ops = [
        # The round trip with no work on either side: the floor under every other call's time.
        ("ping (the round-trip floor)", "ping", []),
        ("tools/list", "tools/list", []),
        ("read 50 KiB", "tools/call", [call(read, {"path": str(d / "small.txt")})]),
        ("read 20 MiB", "tools/call", [call(read, {"path": str(d / "twenty_mib.txt"), **big_read})]),
        ("list a directory", "tools/call", [call("list_dir" if is_tether else "list_directory",
                                                 {"path": str(root / "src" / "module01")})]),
        ("tree of a subtree", "tools/call", [call("list_dir", {"path": str(root / "src"), "depth": 10})
                                             if is_tether else call("directory_tree", {"path": str(root / "src")})]),
        ("name search", "tools/call", [call("glob", {"pattern": "**/file07.rs"}) if is_tether
                                       else call("search_files", {"path": str(root), "pattern": "**/file07.rs"})]),
        ("stat of a source file", "tools/call", [call("stat" if is_tether else "get_file_info",
                                                      {"path": str(root / "src" / "module01" / "file01.rs")})]),
        ("edit 1 MiB file", "tools/call", edit("one_mib.txt")),
        ("edit 20 MiB file", "tools/call", edit("twenty_mib.txt")),
        ("write 1 MiB", "tools/call", [call("write_file", {"path": str(d / "written.txt"), "content": text})
                                       for text in one_mib]),
    ]
    ops.append(("grep (tether only)", "tools/call",
                [call("grep", {"pattern": "f3_7_1\\b", "output_mode": "content"})]) if is_tether else None)
    return [{"label": op[0], "method": op[1], "params": op[2]} if op else None for op in ops]


def run_plan(client: pathlib.Path, plan: dict) -> dict:
    plan_file = CACHE / "bench-mcp-plan.json"
    plan_file.write_text(json.dumps(plan))
    out = subprocess.run([str(client), str(plan_file)], check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    result["times"], result["reply_bytes"] = dict(result["times"]), dict(result["reply_bytes"])
    return result


def bench(client: pathlib.Path, servers: dict[str, list[str]], root: pathlib.Path, runs: int,
          passes: int) -> dict:
    """Every operation on a fresh server process, the two servers alternating, `passes` times.

    A fresh process per operation because on this 2-core VM, once a 23 MB reply has kept client
    and server busy at the same time, the scheduler leaves them on different cores and every later
    small call pays a cross-core wake-up (stat 0.035 ms before a 20 MiB read and 0.10 to 0.12 ms
    after it, in one process; 0.034 ms both times with both pinned to one core). Alternating, and
    several passes, because the machine's load changes from minute to minute.
    """
    res = {name: {"times": {}, "reply_bytes": {}, "peak_rss_mib": 0.0} for name in servers}
    n_ops = len(operations(True, root))
    for index in [None, *range(n_ops)]:  # None: spawn to initialize
        for p in range(passes):
            for name in (("reference", "tether") if p % 2 == 0 else ("tether", "reference")):
                cmd = servers[name]
                full = [*cmd, *root_args(cmd, root)]
                if index is None:
                    plan = {"cmd": full, "runs": runs, "init_runs": max(5, runs // 2), "ops": []}
                else:
                    op = operations(name == "tether", root)[index]
                    if op is None:
                        continue
                    plan = {"cmd": full, "runs": runs, "init_runs": 0, "ops": [op]}
                one = run_plan(client, plan)
                r = res[name]
                for label, ms in one["times"].items():
                    r["times"].setdefault(label, []).append(ms)
                r["reply_bytes"].update(one["reply_bytes"])
                r["peak_rss_mib"] = max(r["peak_rss_mib"], one["peak_rss_mib"])
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15, help="timed calls per operation and process")
    ap.add_argument("--passes", type=int, default=3, help="processes per operation and server")
    ap.add_argument("--pin", type=int, metavar="CPU",
                    help="run the client and both servers on this one core, so that no call pays a "
                         "cross-core wake-up (on a VM that is most of a small call's time)")
    args = ap.parse_args()
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    root = (CACHE / "bench-mcp-tree").resolve()
    make_tree(root)
    servers = {"tether": ensure_tether(), "reference": ensure_reference()}
    client = ensure_client()
    load = os.getloadavg()[0]
    results = bench(client, servers, root, args.runs, args.passes)
    pinned = f"pinned to core {args.pin}" if args.pin is not None else "not pinned"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; runs={args.runs}, "
          f"passes={args.passes}, {pinned}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print()
    print("| operation | tether (ms) | reference (ms) | speed-up | per pass | reply bytes (tether / reference) |")
    print("|---|---:|---:|---:|---:|---:|")
    tether, ref = results["tether"], results["reference"]
    for label, ts in tether["times"].items():
        t = median(ts)
        rs = ref["times"].get(label)
        if rs is None:
            print(f"| {label} | {t:.2f} | n/a | | | {tether['reply_bytes'].get(label, '')} |")
            continue
        r = median(rs)
        ratios = sorted(b / a for a, b in zip(ts, rs))
        spread = f"{ratios[0]:.1f} to {ratios[-1]:.1f}x"
        sizes = f"{tether['reply_bytes'].get(label, '')} / {ref['reply_bytes'].get(label, '')}"
        print(f"| {label} | {t:.2f} | {r:.2f} | {r / t:.1f}x | {spread} | {sizes} |")
    t, r = tether["peak_rss_mib"], ref["peak_rss_mib"]
    print(f"| peak RSS (MiB) | {t:.1f} | {r:.1f} | {r / t:.1f}x smaller | | |")

if __name__ == "__main__":
    sys.exit(main())
