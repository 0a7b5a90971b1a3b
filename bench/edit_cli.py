#!/usr/bin/env python3
"""`tether call` edits end to end, process start included: edit_file with one exact replacement
on a 1 MiB and a 20 MiB file, and a 1 MiB write_file.

Usage: bench/edit_cli.py [--runs N]

Each call really changes the file (the replacement alternates), goes through the whole path
(argument parsing, sandbox, read, match, plan, atomic write with fsync and rename), and is timed
from spawn to exit. Prints medians and the spread.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    binary = REPO / "target" / "release" / "tether"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--locked"], cwd=REPO, check=True)
    line = "    let value = compute(alpha, beta, gamma); // a typical line of code here\n"
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for name, size in (("one.txt", 1 << 20), ("twenty.txt", 20 << 20)):
            text = (line * (size // len(line) + 1))[:size]
            mid = text.index("\n", len(text) // 2) + 1
            (root / name).write_text(text[:mid] + "MARKER = 0\n" + text[mid:])
        content = ("x" * 79 + "\n") * ((1 << 20) // 80)

        def call(tool: str, arguments: dict) -> float:
            t0 = time.perf_counter()
            p = subprocess.run([str(binary), "call", tool, "-", "--root", str(root)],
                               input=json.dumps(arguments).encode(), capture_output=True)
            dt = (time.perf_counter() - t0) * 1000
            if p.returncode != 0:
                sys.exit(f"{tool} failed: {p.stdout.decode()[:300]} {p.stderr.decode()[:300]}")
            return dt

        results = {}
        for label, name in (("edit_file, 1 MiB file", "one.txt"), ("edit_file, 20 MiB file", "twenty.txt")):
            samples = []
            for i in range(args.runs):
                old, new = f"MARKER = {i}", f"MARKER = {i + 1}"
                samples.append(call("edit_file", {"path": name, "old_string": old, "new_string": new}))
            results[label] = samples
        samples = []
        for i in range(args.runs):
            # Alternate two contents so every write changes the file.
            samples.append(call("write_file", {"path": "written.txt", "content": content if i % 2 else content.upper()}))
        results["write_file, 1 MiB (new content each time)"] = samples
        samples = [call("read_file", {"path": "one.txt", "limit": 1}) for _ in range(args.runs)]
        results["baseline: read_file, 1 line"] = samples
    print(f"{os.cpu_count()} cores; runs={args.runs}; times in ms, process start included")
    print()
    print("| operation | median | min | max |")
    print("|---|---:|---:|---:|")
    for label, s in results.items():
        print(f"| {label} | {statistics.median(s):.1f} | {min(s):.1f} | {max(s):.1f} |")


if __name__ == "__main__":
    main()
