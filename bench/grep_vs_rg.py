#!/usr/bin/env python3
"""Compare `tether call grep` with ripgrep on a generated source tree.

Both tools run as whole processes (start-up included), with the same ignore semantics: tether's
default walk (gitignore honoured even outside a git repository, hidden files searched, `.git/`
skipped) is ripgrep's `--hidden -g '!.git' --no-require-git`. Each query runs N times per tool,
the two tools alternating (and swapping who goes first every round), after a warm-up run that
fills the page cache. The script checks that both tools report the same number of files (or
lines, for the content query) before it prints anything.

Usage: python3 bench/grep_vs_rg.py [--runs N] [--files N] [--mib N] [--build] [--rg PATH]

Python 3 standard library only. The tree is cached in $TETHER_CACHE/bench-tree
(TETHER_CACHE defaults to ~/.cache/tether) and regenerated when its parameters change.
"""

import argparse
import json
import os
import platform
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GENERATOR_VERSION = 1
SEED = 20240613

# Identifiers the generated code is made of.
WORDS = (
    "user account order item cart price stock queue event token session cache index buffer "
    "config client server request response handler parser writer reader stream packet frame "
    "socket channel worker thread task job batch record entry table column schema query result "
    "error status state context scope module package import export value field method object "
    "array vector matrix graph node edge path route signal metric counter timer window layout"
).split()

NEEDLE_LITERAL = "ConnectionPool"  # in roughly a quarter of the files
NEEDLE_CASE = "deadline_exceeded"  # written in several cases
NEEDLE_NONE = "qzxv_never_present_9731"


def ident(rng, n=2):
    return "_".join(rng.choice(WORDS) for _ in range(n))


def camel(rng, n=2):
    return "".join(rng.choice(WORDS).capitalize() for _ in range(n))


def line_rust(rng):
    r = rng.random()
    if r < 0.08:
        return f"pub fn {ident(rng)}(&self, {ident(rng, 1)}: &{camel(rng)}) -> Result<{camel(rng)}> {{"
    if r < 0.16:
        return f"    let {ident(rng)} = self.{ident(rng)}.get(&{ident(rng, 1)})?;"
    if r < 0.22:
        return f"    // {ident(rng, 1)} the {ident(rng, 1)} before the {ident(rng, 1)} is {ident(rng, 1)}"
    if r < 0.28:
        return f"    match {ident(rng, 1)} {{ Some(v) => v.{ident(rng)}(), None => return Err(Error::{camel(rng)}) }}"
    if r < 0.32:
        return "}"
    if r < 0.36:
        return f"#[derive(Debug, Clone)] pub struct {camel(rng)} {{ {ident(rng)}: u64, {ident(rng)}: String }}"
    return f"    self.{ident(rng)}.{ident(rng, 1)}({ident(rng, 1)}, {rng.randint(0, 9999)});"


def line_python(rng):
    r = rng.random()
    if r < 0.1:
        return f"def {ident(rng)}(self, {ident(rng, 1)}, {ident(rng, 1)}=None):"
    if r < 0.2:
        return f"    {ident(rng)} = self.{ident(rng)}[{ident(rng, 1)}]"
    if r < 0.26:
        return f"    # {ident(rng, 1)} {ident(rng, 1)} {ident(rng, 1)} {ident(rng, 1)}"
    if r < 0.3:
        return f"class {camel(rng)}({camel(rng)}):"
    if r < 0.36:
        return f"        raise {camel(rng)}Error(f\"{{{ident(rng, 1)}}} is {ident(rng, 1)}\")"
    return f"    return {ident(rng)}.{ident(rng, 1)}({ident(rng, 1)}, {rng.randint(0, 9999)})"


def line_js(rng):
    r = rng.random()
    if r < 0.1:
        return f"export function {camel(rng)}({ident(rng, 1)}, {ident(rng, 1)}) {{"
    if r < 0.2:
        return f"  const {ident(rng, 1)} = await this.{ident(rng, 1)}.{ident(rng, 1)}({ident(rng, 1)});"
    if r < 0.26:
        return f"  // {ident(rng, 1)} {ident(rng, 1)} {ident(rng, 1)}"
    if r < 0.3:
        return "}"
    return f"  if ({ident(rng, 1)}.{ident(rng, 1)} > {rng.randint(0, 999)}) {{ return {ident(rng, 1)}; }}"


def line_go(rng):
    r = rng.random()
    if r < 0.1:
        return f"func (s *{camel(rng)}) {camel(rng)}(ctx context.Context, {ident(rng, 1)} string) error {{"
    if r < 0.25:
        return f"\tif err := s.{camel(rng)}(ctx); err != nil {{ return fmt.Errorf(\"{ident(rng, 1)}: %w\", err) }}"
    if r < 0.3:
        return "}"
    return f"\t{ident(rng, 1)} := s.{camel(rng)}[{rng.randint(0, 99)}]"


def line_c(rng):
    r = rng.random()
    if r < 0.1:
        return f"static int {ident(rng)}(struct {ident(rng, 1)} *{ident(rng, 1)}, size_t n) {{"
    if r < 0.2:
        return f"    /* {ident(rng, 1)} {ident(rng, 1)} {ident(rng, 1)} */"
    if r < 0.25:
        return "}"
    return f"    {ident(rng, 1)}->{ident(rng, 1)} = {ident(rng)}({ident(rng, 1)}, {rng.randint(0, 4096)});"


def line_java(rng):
    r = rng.random()
    if r < 0.1:
        return f"    public {camel(rng)} {ident(rng, 1)}{camel(rng, 1)}(final {camel(rng)} {ident(rng, 1)}) {{"
    if r < 0.2:
        return f"        final var {ident(rng, 1)} = this.{ident(rng, 1)}.get{camel(rng, 1)}();"
    if r < 0.25:
        return "    }"
    return f"        {ident(rng, 1)}.set{camel(rng, 1)}({ident(rng, 1)} + {rng.randint(0, 99)});"


def line_md(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


LANGS = [
    ("rs", line_rust, 0.25),
    ("py", line_python, 0.2),
    ("js", line_js, 0.12),
    ("ts", line_js, 0.08),
    ("go", line_go, 0.12),
    ("c", line_c, 0.08),
    ("java", line_java, 0.1),
    ("md", line_md, 0.05),
]


def file_text(rng, gen, size):
    """Code-like text of about `size` bytes, with the needles sprinkled in."""
    out, n = [], 0
    has_literal = rng.random() < 0.25
    has_case = rng.random() < 0.15
    has_todo = rng.random() < 0.10
    while n < size:
        line = gen(rng)
        r = rng.random()
        if has_literal and r < 0.01:
            line = f"    let pool = {NEEDLE_LITERAL}::new({ident(rng, 1)});"
        elif has_case and r < 0.02:
            line = "    " + rng.choice(["DEADLINE_EXCEEDED", "Deadline_Exceeded", "deadline_exceeded"]) + " = 4"
        elif has_todo and r < 0.03:
            line = f"    // TODO({rng.choice(WORDS)}): fix the {ident(rng, 1)} when {ident(rng, 1)} is empty"
        out.append(line)
        n += len(line) + 1
    return "\n".join(out) + "\n"


def pick_lang(rng):
    r, acc = rng.random(), 0.0
    for ext, gen, weight in LANGS:
        acc += weight
        if r < acc:
            return ext, gen
    return LANGS[0][:2]


def generate(root, files, total_bytes):
    rng = random.Random(SEED)
    avg = total_bytes // files
    dirs = [Path(".")]
    for top in ["src", "lib", "pkg", "internal", "tests", "docs", "tools", "services", ".config"]:
        dirs.append(Path(top))
        for _ in range(rng.randint(4, 9)):
            sub = Path(top) / ident(rng, 1)
            dirs.append(sub)
            for _ in range(rng.randint(0, 5)):
                dirs.append(sub / ident(rng, 1))
    written = 0
    for i in range(files):
        ext, gen = pick_lang(rng)
        # Mostly small files, a few large ones, as in real projects.
        size = int(rng.lognormvariate(0, 0.9) * avg * 0.68)
        size = max(200, min(size, 1 << 20))
        d = root / rng.choice(dirs)
        d.mkdir(parents=True, exist_ok=True)
        name = f"{ident(rng, 1)}_{i}.{ext}"
        if rng.random() < 0.02:
            name = "." + name  # hidden files are searched by both tools
        text = file_text(rng, gen, size)
        (d / name).write_text(text)
        written += len(text)
    # An ignored build directory full of matches: both tools must skip it.
    (root / ".gitignore").write_text("build/\n*.log\n")
    build = root / "build" / "out"
    build.mkdir(parents=True, exist_ok=True)
    for i in range(300):
        (build / f"gen_{i}.rs").write_text(file_text(rng, line_rust, 8000) + f"{NEEDLE_LITERAL}\n")
        (root / f"trace_{i}.log").write_text(f"{NEEDLE_LITERAL} TODO(x): fix\n" * 50)
    # A .git directory with matches: skipped by both.
    git = root / ".git"
    git.mkdir(exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "COMMIT_EDITMSG").write_text(f"{NEEDLE_LITERAL} fix\n")
    # A few binary files that contain the needles: skipped by both.
    for i in range(12):
        blob = bytes(rng.randrange(256) for _ in range(4096)) + b"\0" + f"{NEEDLE_LITERAL}\n".encode() * 20
        (root / "src" / f"blob_{i}.bin").write_bytes(b"\0\0" + blob)
    return written


def ensure_tree(cache, files, mib):
    root = cache / "bench-tree"
    stamp = cache / "bench-tree.stamp"
    want = json.dumps({"version": GENERATOR_VERSION, "seed": SEED, "files": files, "mib": mib})
    if root.is_dir() and stamp.is_file() and stamp.read_text() == want:
        return root
    print(f"generating {files} files, ~{mib} MiB under {root} ...", file=sys.stderr)
    tmp = cache / "bench-tree.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    tmp.mkdir(parents=True)
    generate(tmp, files, mib << 20)
    tmp.rename(root)
    stamp.write_text(want)
    return root


def tree_stats(root):
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            files += 1
            size += os.path.getsize(os.path.join(dirpath, f))
    return files, size


def find_rg(cache):
    rg = shutil.which("rg")
    if rg:
        return rg
    local = cache / "tools" / "bin" / "rg"
    if local.exists():
        return str(local)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        for cmd in (["apt-get", "install", "-y", "ripgrep"], ["apt-get", "update"], ["apt-get", "install", "-y", "ripgrep"]):
            ok = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
            if ok and cmd[1] == "install":
                break
        rg = shutil.which("rg")
        if rg:
            return rg
    print("installing ripgrep with cargo ...", file=sys.stderr)
    subprocess.run(["cargo", "install", "ripgrep", "--root", str(cache / "tools")], check=True)
    return str(local)


def find_tether(build):
    exe = REPO / "target" / "release" / "tether"
    if build or not exe.exists():
        print("building tether (cargo build --release) ...", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-p", "tether"], cwd=REPO, check=True)
    return str(exe)


def run(cmd, cwd):
    """Runs `cmd`; returns its wall time and CPU time (user + system, all threads) in ms, and
    its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter_ns()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")
    return elapsed, cpu, p.stdout.decode(errors="replace")


def machine_info(rg, tether, root):
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    files, size = tree_stats(root)
    return [
        f"- machine: {platform.system()} {platform.release()} {platform.machine()}, {cpu}, {os.cpu_count()} CPUs",
        f"- ripgrep: {rg_version} ({rg})",
        f"- tether: {rev or '?'} ({tether})",
        f"- tree: {files} files, {size / (1 << 20):.1f} MiB on disk (including ignored, binary and .git files), {root}",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="timed runs per query and tool (default 15)")
    ap.add_argument("--files", type=int, default=6000, help="files in the generated tree (default 6000)")
    ap.add_argument("--mib", type=int, default=60, help="approximate size of the tree in MiB (default 60)")
    ap.add_argument("--build", action="store_true", help="run cargo build --release even if the binary exists")
    ap.add_argument("--rg", help="the ripgrep binary to compare with (default: rg on PATH, else installed)")
    args = ap.parse_args()

    cache = Path(os.environ.get("TETHER_CACHE") or Path.home() / ".cache" / "tether")
    root = ensure_tree(cache, args.files, args.mib)
    rg = args.rg or find_rg(cache)
    tether = find_tether(args.build)

    rg_common = [rg, "--hidden", "-g", "!.git", "--no-require-git"]
    # (name, tether arguments, ripgrep arguments, what the outputs' line counts count)
    everything = 1_000_000  # head_limit: print every result, as ripgrep does
    queries = [
        ("literal", {"pattern": NEEDLE_LITERAL}, ["-l", NEEDLE_LITERAL]),
        ("selective regex", {"pattern": r"fn\s+user_[a-z]+\(&self"}, ["-l", r"fn\s+user_[a-z]+\(&self"]),
        ("case-insensitive", {"pattern": NEEDLE_CASE, "ignore_case": True}, ["-l", "-i", NEEDLE_CASE]),
        ("no match", {"pattern": NEEDLE_NONE}, ["-l", NEEDLE_NONE]),
        ("content (-n)", {"pattern": r"TODO\(\w+\): fix", "output_mode": "content"}, ["-n", r"TODO\(\w+\): fix"]),
    ]

    rows = []
    for name, targs, rargs in queries:
        targs = dict(targs, head_limit=everything)
        tcmd = [tether, "call", "grep", json.dumps(targs), "--root", str(root)]
        rcmd = rg_common + rargs
        # Warm-up, and the check that both tools found the same thing.
        _, _, tout = run(tcmd, root)
        _, _, rout = run(rcmd, root)
        tlines = [l for l in tout.splitlines() if l and l != "(no matches)"]
        rlines = [l for l in rout.splitlines() if l]
        if len(tlines) != len(rlines):
            sys.exit(f"{name}: tether found {len(tlines)} entries, rg {len(rlines)}\n{tcmd}\n{rcmd}")
        if "-l" in rargs and sorted(tlines) != sorted(rlines):
            sys.exit(f"{name}: tether and rg list different files")
        wall = {"tether": [], "rg": []}
        cpu = {"tether": [], "rg": []}
        for i in range(args.runs):
            order = [("tether", tcmd), ("rg", rcmd)]
            if i % 2:
                order.reverse()
            for tool, cmd in order:
                w, c, _ = run(cmd, root)
                wall[tool].append(w)
                cpu[tool].append(c)
        t, r = statistics.median(wall["tether"]), statistics.median(wall["rg"])
        tc, rc = statistics.median(cpu["tether"]), statistics.median(cpu["rg"])
        rows.append((name, len(rlines), t, r, t / r, tc, rc, shlex.join(["rg"] + rcmd[1:]), json.dumps(targs)))

    print("| query | results | tether median ms | rg median ms | ratio | tether CPU ms | rg CPU ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, n, t, r, ratio, tc, rc, _, _ in rows:
        print(f"| {name} | {n} | {t:.1f} | {r:.1f} | {ratio:.2f} | {tc:.0f} | {rc:.0f} |")
    print()
    print(
        f"{args.runs} runs per tool and query, alternating; wall-clock medians, process start included "
        "on both sides; CPU = user + system time of all threads (median)."
    )
    for line in machine_info(rg, tether, root):
        print(line)
    load = os.getloadavg()
    print(f"- load average at the end (1, 5, 15 min; other users share this machine): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("- commands (run in the tree):")
    for name, _, _, _, _, _, _, rcmd, targs in rows:
        print(f"  - {name}: `{shlex.join(['tether', 'call', 'grep', targs, '--root', '.'])}` vs `{rcmd}`")
    worst = max(row[4] for row in rows)
    print(f"\nworst ratio: {worst:.2f} (target: 1.30 or less)")


if __name__ == "__main__":
    main()
