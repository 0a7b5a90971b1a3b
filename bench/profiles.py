#!/usr/bin/env python3
"""Release profiles against each other: the size of each binary, and its speed on the workloads
the other benchmarks measure, all binaries alternating in one run.

Usage: bench/profiles.py NAME=BINARY [NAME=BINARY ...] [--runs N]

The first binary is the baseline; every other is reported as a ratio of its median to the
baseline's. Workloads (each timed from spawn to exit, `tether call`, process start included):

- grep: a regex with content output over a generated tree of 2,000 files (40 MiB);
- edit 20 MiB: `edit_file` with one exact replacement in a 20 MiB file (read, match, atomic write);
- miss 20 MiB: `edit_file` that matches nothing in the 20 MiB file, so the whole tolerant
  cascade runs and the closest lines are searched (the CPU-heaviest path);
- patch 50 files: `apply_patch` over 50 files, then `undo` (the journal's path);
- read 20 MiB: `read_file` of the 20 MiB file, paged whole.

Environment: none; the trees are generated under a temp directory.
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time


def tree(root: pathlib.Path) -> None:
    rnd = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "compute", "value", "render", "parse", "token", "buffer"]
    for i in range(2000):
        d = root / "src" / f"m{i % 40}"
        d.mkdir(parents=True, exist_ok=True)
        lines = [f"fn {rnd.choice(words)}_{i}_{l}(x: u32) -> u32 {{ {rnd.choice(words)}(x) + {l} }}" for l in range(400)]
        (d / f"f{i}.rs").write_text("\n".join(lines) + "\n")


def big(path: pathlib.Path) -> None:
    line = "    let value = compute(42, \"lorem ipsum dolor sit amet, consectetur\"); // {}\n"
    with path.open("w") as f:
        n = 0
        while f.tell() < 20 * 1024 * 1024:
            f.write(line.format(n))
            n += 1


def run(binary: str, root: pathlib.Path, env: dict, args: list, ok_codes=(0,)) -> float:
    start = time.perf_counter()
    p = subprocess.run([binary, *args, "--root", str(root)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = (time.perf_counter() - start) * 1000
    if p.returncode not in ok_codes:
        raise SystemExit(f"{binary} {args[:2]} exited {p.returncode}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+", help="NAME=PATH, the baseline first")
    ap.add_argument("--runs", type=int, default=11)
    a = ap.parse_args()
    bins = [tuple(b.split("=", 1)) for b in a.binaries]
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp, "w")
        root.mkdir()
        env = dict(os.environ, XDG_STATE_HOME=str(pathlib.Path(tmp, "state")))
        tree(root)
        big(root / "big.txt")
        for i in range(50):
            (root / "p" / f"f{i}.txt").parent.mkdir(exist_ok=True)
            (root / "p" / f"f{i}.txt").write_text("".join(f"line {l}\n" for l in range(200)))
        patch = "*** Begin Patch\n" + "".join(f"*** Update File: p/f{i}.txt\n@@\n-line 100\n+line one hundred\n" for i in range(50)) + "*** End Patch\n"
        flip = [0]

        def edit(b):
            flip[0] ^= 1
            old, new = ("compute(42", "compute(43") if flip[0] else ("compute(43", "compute(42")
            # The first line only: exactly one replacement, in place each round.
            return run(b, root, env, ["call", "edit_file", json.dumps({"path": "big.txt", "old_string": f"let value = {old}, \"lorem ipsum dolor sit amet, consectetur\"); // 0\n", "new_string": f"let value = {new}, \"lorem ipsum dolor sit amet, consectetur\"); // 0\n"})])

        def patch_and_undo(b):
            t = run(b, root, env, ["call", "apply_patch", json.dumps({"patch": patch})])
            return t + run(b, root, env, ["undo", "--last", "1"])

        workloads = {
            "grep": lambda b: run(b, root, env, ["call", "grep", json.dumps({"pattern": r"render_\d+_1\d\b", "output_mode": "content", "head_limit": 100000})]),
            "edit 20 MiB": edit,
            "miss 20 MiB": lambda b: run(b, root, env, ["call", "edit_file", json.dumps({"path": "big.txt", "old_string": "let  valu = compute(42,\n  \"nowhere\")", "new_string": "x"})], ok_codes=(1,)),
            "patch+undo 50 files": patch_and_undo,
            "read 20 MiB": lambda b: run(b, root, env, ["call", "read_file", json.dumps({"path": "big.txt", "offset": 1, "limit": 10000000})]),
        }
        times = {(w, n): [] for w in workloads for n, _ in bins}
        for r in range(a.runs + 1):
            order = bins if r % 2 == 0 else list(reversed(bins))
            for w, f in workloads.items():
                for n, b in order:
                    t = f(b)
                    if r > 0:  # the first round warms the page cache
                        times[(w, n)].append(t)
        print(f"{a.runs} runs each, binaries alternating; median ms (ratio to {bins[0][0]})")
        print("size: " + ", ".join(f"{n} {os.path.getsize(b) / 1e6:.1f} MB" for n, b in bins))
        for w in workloads:
            base = statistics.median(times[(w, bins[0][0])])
            cells = [f"{n} {statistics.median(times[(w, n)]):8.1f} ({statistics.median(times[(w, n)]) / base:.2f})" for n, _ in bins]
            print(f"  {w:<22}" + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
