#!/usr/bin/env python3
"""tether mcp against the reference MCP filesystem server, same client, same tree, one run.

Usage: bench/mcp_vs_reference.py [--runs N]   (run with the venv python: $TETHER_CACHE/venv)

Both servers are driven by the official MCP Python SDK client over stdio. Every operation is
timed from the client (request sent to response parsed) and reported as the median of --runs
calls; spawn-to-initialize is timed over fresh processes. Peak RSS is each server's VmHWM from
/proc after its last call. The reference server is installed from npm into $TETHER_CACHE.
"""

import argparse
import asyncio
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

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
    binary = REPO / "target" / "release" / "tether"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=REPO, check=True)
    return [str(binary), "mcp"]


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


def children_of(pid: int) -> list[int]:
    out = []
    for p in pathlib.Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                stat = (p / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out.append(int(p.name))
    return out


def peak_rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


async def timed(coro_fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = await coro_fn()
        samples.append((time.perf_counter() - t0) * 1000)
        if getattr(result, "is_error", False):
            text = "".join(c.text for c in result.content if c.type == "text")
            raise RuntimeError(f"call failed: {text[:300]}")
    return statistics.median(samples)


async def spawn_to_initialize(cmd: list[str], root: pathlib.Path, runs: int) -> float:
    samples = []
    for _ in range(runs):
        params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], *root_args(cmd, root)])
        t0 = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def root_args(cmd: list[str], root: pathlib.Path) -> list[str]:
    return ["--root", str(root)] if cmd[-1] == "mcp" else [str(root)]


def operations(is_tether: bool, root: pathlib.Path):
    """(label, tool, arguments builder) per operation; None where the server has no such tool."""
    d = root / "data"
    big_read = {"offset": 1, "limit": 10**9} if is_tether else {}
    flip = {"i": 0}

    def edit(name):
        def build():
            flip["i"] += 1
            old, new = ("UNIQUE_MARKER = 1", "UNIQUE_MARKER = 2") if flip["i"] % 2 else ("UNIQUE_MARKER = 2", "UNIQUE_MARKER = 1")
            if is_tether:
                return "edit_file", {"path": str(d / name), "old_string": old, "new_string": new}
            return "edit_file", {"path": str(d / name), "edits": [{"oldText": old, "newText": new}]}
        return build

    one_mib = "x" * 79 + "\n"
    one_mib = one_mib * ((1 << 20) // len(one_mib))
    return [
        ("read 50 KiB", lambda: ("read_file" if is_tether else "read_text_file", {"path": str(d / "small.txt")})),
        ("read 20 MiB", lambda: ("read_file" if is_tether else "read_text_file", {"path": str(d / "twenty_mib.txt"), **big_read})),
        ("list a directory", lambda: ("list_dir" if is_tether else "list_directory", {"path": str(root / "src" / "module01")})),
        ("tree of a subtree", lambda: ("list_dir", {"path": str(root / "src"), "depth": 10}) if is_tether else ("directory_tree", {"path": str(root / "src")})),
        ("name search", lambda: ("glob", {"pattern": "**/file07.rs"}) if is_tether else ("search_files", {"path": str(root), "pattern": "**/file07.rs"})),
        ("stat", lambda: ("stat" if is_tether else "get_file_info", {"path": str(d / "one_mib.txt")})),
        ("edit 1 MiB file", edit("one_mib.txt")),
        ("edit 20 MiB file", edit("twenty_mib.txt")),
        ("write 1 MiB", lambda: ("write_file", {"path": str(d / "written.txt"), "content": one_mib})),
        ("grep (tether only)", (lambda: ("grep", {"pattern": "f3_7_1\\b", "output_mode": "content"})) if is_tether else None),
    ]


async def bench_server(name: str, cmd: list[str], root: pathlib.Path, runs: int) -> dict:
    res = {"spawn to initialize": await spawn_to_initialize(cmd, root, max(5, runs // 2))}
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], *root_args(cmd, root)])
    before = set(children_of(os.getpid()))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                server_pids = [p for p in children_of(os.getpid()) if p not in before]
                res["tools/list"] = await timed(s.list_tools, runs)
                for label, build in operations(cmd[-1] == "mcp", root):
                    if build is None:
                        continue

                    async def call(build=build):
                        tool, args = build()
                        return await s.call_tool(tool, args)

                    res[label] = await timed(call, runs)
                res["peak RSS (MiB)"] = max((peak_rss_kib(p) for p in server_pids), default=0) / 1024
    return res


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    root = (CACHE / "bench-mcp-tree").resolve()
    make_tree(root)
    servers = {"tether": ensure_tether(), "reference": ensure_reference()}
    results = {}
    # Alternate whole passes so that neither server always runs on a warmer machine.
    for name in ("reference", "tether"):
        results[name] = await bench_server(name, servers[name], root, args.runs)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; runs={args.runs}")
    print()
    print("| operation | tether (ms) | reference (ms) | speed-up |")
    print("|---|---:|---:|---:|")
    for label in results["tether"]:
        t = results["tether"][label]
        ref = results["reference"].get(label)
        if label.startswith("peak RSS"):
            print(f"| {label} | {t:.1f} | {ref:.1f} | {ref / t:.1f}x smaller |")
        elif ref is None:
            print(f"| {label} | {t:.2f} | n/a | |")
        else:
            print(f"| {label} | {t:.2f} | {ref:.2f} | {ref / t:.1f}x |")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
