#!/usr/bin/env python3
"""1,000 open buffers in one `tether lsp`: memory, document sync, and grep across them.

Usage: bench/open_buffers.py [--docs N] [--kib K] [--changes N] [--rounds N] [--bin TETHER]

Writes N files of about K KiB each (default 1,000 x 100 KiB, about 100 MiB of text) in a temporary
workspace, starts `tether lsp` over stdio with a small scripted LSP client (this file), and opens
every file with a real `didOpen`. Then, in this order:

- RSS (VmRSS) after `initialize` and after the opens, against the text's size: the target is the
  text x 1.2 + 40 MiB;
- `didChange`: N single-line edits spread over the buffers, sent in batches of 100 (encoded first,
  written at once), each batch followed by a round trip (`tether.listTools`); the cost of one
  change is the batch's time less the round trip's, over 100 (its median and p99 over the
  batches: the p99 of a batch's mean, not of single changes, which no client can time from
  outside);
- `grep` for a word in every buffer through `tether.callTool` (the open buffers are read, not the
  files) against ripgrep on the same files on disk (`rg -c`), alternating, --rounds each: medians;
- RSS after every document is closed (`didClose`), 3 s later (tether returns free memory to the
  system after 2 s without activity).

The machine is shared: quote the ratios, measured in one run.
"""

import argparse
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from stdio_clients import Lsp  # noqa: E402


def write_workspace(root: pathlib.Path, docs: int, kib: int) -> list[pathlib.Path]:
    rng = random.Random(36)
    words = ["alpha", "beta", "gamma", "delta", "tether", "rope", "buffer", "editor", "change", "version"]
    files = []
    for i in range(docs):
        path = root / "src" / f"d{i // 100:02d}" / f"f{i:04d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines, size = [], 0
        while size < kib * 1024:
            line = " ".join(rng.choice(words) for _ in range(8)) + f" {i}:{len(lines)}"
            if rng.random() < 0.01:
                line += " needle"
            lines.append(line)
            size += len(line) + 1
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--kib", type=int, default=100)
    ap.add_argument("--changes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "tether"))
    args = ap.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("bench/open_buffers.py: ripgrep (rg) is not on PATH: apt-get install ripgrep")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = tmp / "root"
        files = write_workspace(root, args.docs, args.kib)
        texts = [f.read_text() for f in files]
        text_mib = sum(len(t.encode()) for t in texts) / 2**20
        env = dict(os.environ, XDG_STATE_HOME=str(tmp / "state"), XDG_RUNTIME_DIR=str(tmp / "run"),
                   TETHER_LOG="warn")
        (tmp / "run").mkdir(mode=0o700)
        lsp = Lsp([args.bin, "lsp", "--no-ide"], root, env)
        uri = root.as_uri()
        lsp.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": {
            "general": {"positionEncodings": ["utf-8"]},
            "workspace": {"workspaceEdit": {"documentChanges": True}, "workspaceFolders": True}},
            "workspaceFolders": [{"uri": uri, "name": "root"}]})
        lsp.notify("initialized", {})
        lsp.round_trip()
        rss_start = lsp.rss_mib()

        start = time.perf_counter()
        for f, text in zip(files, texts):
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": f.as_uri(), "languageId": "plaintext", "version": 0, "text": text}})
        lsp.round_trip()
        open_s = time.perf_counter() - start
        rss_open = lsp.rss_mib()

        # Round trips alone, then batches of 100 changes each followed by one.
        trips = []
        for _ in range(50):
            t = time.perf_counter()
            lsp.round_trip()
            trips.append(time.perf_counter() - t)
        trip = statistics.median(trips)
        rng = random.Random(7)
        versions = [0] * len(files)
        per_change = []
        for _ in range(max(1, args.changes // 100)):
            # Encoded first, sent in one write: the time is the server's, not this client's.
            batch = []
            for _ in range(100):
                i = rng.randrange(len(files))
                versions[i] += 1
                line = rng.randrange(200)
                batch.append(Lsp.encode("textDocument/didChange", {
                    "textDocument": {"uri": files[i].as_uri(), "version": versions[i]},
                    "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                                  "end": {"line": line, "character": 0}}, "text": "x"}]}))
            data = b"".join(batch)
            t = time.perf_counter()
            lsp.write(data)
            lsp.round_trip()
            per_change.append(max(0.0, time.perf_counter() - t - trip) / 100)
        per_change.sort()
        p99 = per_change[min(len(per_change) - 1, int(len(per_change) * 0.99))]

        grep_args = {"command": "tether.callTool", "arguments": [
            {"tool": "grep", "arguments": {"pattern": "needle", "output_mode": "count"}}]}
        ours, theirs = [], []
        for _ in range(args.rounds):
            t = time.perf_counter()
            result = lsp.request("workspace/executeCommand", grep_args)
            ours.append(time.perf_counter() - t)
            assert result.get("isError") is False, result
            t = time.perf_counter()
            subprocess.run([rg, "-c", "needle", "src"], cwd=root, stdout=subprocess.DEVNULL, check=True)
            theirs.append(time.perf_counter() - t)

        for f in files:
            lsp.notify("textDocument/didClose", {"textDocument": {"uri": f.as_uri()}})
        lsp.round_trip()
        # tether gives free memory back after 2 s without activity (mcp/memory.rs).
        time.sleep(3)
        rss_closed = lsp.rss_mib()
        lsp.close()

    ms = lambda s: s * 1000  # noqa: E731
    print(f"{args.docs} buffers, {text_mib:.1f} MiB of text, opened in {open_s:.2f} s")
    print(f"RSS: {rss_start:.1f} MiB at start, {rss_open:.1f} MiB open "
          f"(target {text_mib * 1.2 + 40:.1f}: text x 1.2 + 40; {rss_open / text_mib:.2f}x the text), "
          f"{rss_closed:.1f} MiB after closing them all")
    print(f"didChange: {statistics.median(per_change) * 1e6:.1f} us median, {p99 * 1e6:.1f} us p99 "
          f"(per change, over batches of 100; round trip {ms(trip):.2f} ms taken off)")
    print(f"grep across the open buffers: tether {ms(statistics.median(ours)):.1f} ms, "
          f"rg on the same files {ms(statistics.median(theirs)):.1f} ms, "
          f"ratio {statistics.median(ours) / statistics.median(theirs):.2f} (medians of {args.rounds})")


if __name__ == "__main__":
    main()
