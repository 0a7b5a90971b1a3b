#!/usr/bin/env python3
"""What the change journal costs an edit: the same `edit_file` with the journal and with
`--no-journal`, in `tether call`, `tether mcp` and `tether lsp`, on a 1 MiB and a 20 MiB file.

Usage: bench/journal_cost.py [--rounds N] [--bin TETHER] [--sizes 1,20]

Each of the twelve configurations (path x size x journal on/off) edits its own file in its own
workspace (the journal's own directory for the journal), so one configuration never sees
another's changes; a round times one edit of each, in turn, so that the machine's noise falls on
all of them alike. Every edit really changes the file (a marker line alternates).

- `call`: a whole `tether call edit_file` process, spawn to exit.
- `mcp`: one `tools/call` in a `tether mcp` session over stdio (newline-delimited JSON-RPC),
  request to answer.
- `lsp`: one `tether.callTool` in a `tether lsp` with the file open in a scripted editor (this
  file) that has an unsaved line in it: request to answer, the `workspace/applyEdit` answered and
  its `didChange` sent back at once (the editor's apply costs nothing here).

Prints each configuration's median and the journal's ratio over `--no-journal` (target 1.05).
The machine is shared: quote the ratios, measured in one run.
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

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from stdio_clients import Lsp, Mcp  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
LINE = "    let value = compute(alpha, beta, gamma); // a typical line of code here\n"


def write_file(path: pathlib.Path, mib: int) -> None:
    size = mib << 20
    text = (LINE * (size // len(LINE) + 1))[:size]
    mid = text.index("\n", len(text) // 2) + 1
    path.write_text(text[:mid] + "MARKER = 0\n" + text[mid:])


class Editor:
    """A `tether lsp` with the bench's files open, each with an unsaved line, so that a tool edit
    goes to this editor as a `workspace/applyEdit` (answered at once, its `didChange` sent back)."""

    def __init__(self, argv: list[str], root: pathlib.Path, env: dict, files: list[pathlib.Path]):
        self.versions: dict[str, int] = {}
        self.lsp = Lsp(argv, root, env, on_request=self.on_request)
        uri = root.as_uri()
        self.lsp.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": {
            "general": {"positionEncodings": ["utf-8"]},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}},
            "workspaceFolders": [{"uri": uri, "name": "root"}]})
        self.lsp.notify("initialized", {})
        for f in files:
            self.versions[f.as_uri()] = 1
            self.lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": f.as_uri(), "languageId": "plaintext", "version": 1, "text": f.read_text() + "unsaved\n"}})
        self.lsp.round_trip()

    def on_request(self, message: dict):
        if message["method"] != "workspace/applyEdit":
            return None
        for change in message["params"]["edit"].get("documentChanges", []):
            uri = change["textDocument"]["uri"]
            # Applied one after another, last first, each range is still where the edit put it.
            edits = sorted(change["edits"], key=lambda e: (e["range"]["start"]["line"],
                                                           e["range"]["start"]["character"]), reverse=True)
            self.versions[uri] += 1
            self.lsp.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in edits]})
        return {"applied": True}

    def call(self, arguments: dict) -> dict:
        return self.lsp.request("workspace/executeCommand", {"command": "tether.callTool", "arguments": [
            {"tool": "edit_file", "arguments": arguments}]})

    def close(self) -> None:
        self.lsp.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--sizes", default="1,20", help="file sizes in MiB, comma-separated")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "tether"))
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp / "run"), TETHER_LOG="warn")
        (tmp / "run").mkdir(mode=0o700)
        configs = []  # (path, size, journal, edit function)
        sessions = []
        for path in ("call", "mcp", "lsp"):
            for journal in (True, False):
                root = tmp / f"{path}-{'journal' if journal else 'none'}"
                root.mkdir()
                files = {mib: root / f"file-{mib}mib.txt" for mib in sizes}
                for mib, f in files.items():
                    write_file(f, mib)
                flags = ["--journal-dir", str(tmp / f"journal-{root.name}")] if journal else ["--no-journal"]
                if path == "call":
                    def edit(arguments, root=root, flags=flags):
                        p = subprocess.run([binary, "call", "edit_file", "-", "--root", str(root), *flags],
                                           input=json.dumps(arguments).encode(), capture_output=True, env=env)
                        if p.returncode != 0:
                            raise RuntimeError(f"tether call failed: {p.stdout[:300]!r} {p.stderr[:300]!r}")
                elif path == "mcp":
                    mcp = Mcp([binary, "mcp", "--root", str(root), *flags], env)
                    sessions.append(mcp)

                    def edit(arguments, mcp=mcp):
                        r = mcp.request("tools/call", {"name": "edit_file", "arguments": arguments})
                        if r.get("isError"):
                            raise RuntimeError(f"edit_file over MCP failed: {r}")
                else:
                    editor = Editor([binary, "lsp", "--no-ide", *flags], root, env, list(files.values()))
                    sessions.append(editor)

                    def edit(arguments, editor=editor):
                        r = editor.call(arguments)
                        if r.get("isError") or "unsaved" not in json.dumps(r):
                            raise RuntimeError(f"edit_file in tether lsp failed or missed the buffer: {r}")
                for mib, f in files.items():
                    configs.append((path, mib, journal, f.name, edit))
        samples: dict[tuple, list[float]] = {c[:3]: [] for c in configs}
        # Two rounds of warm-up (page cache, the journal's directories), then the measured ones.
        for i in range(args.rounds + 2):
            for path, mib, journal, name, edit in configs:
                arguments = {"path": name, "old_string": f"MARKER = {i}", "new_string": f"MARKER = {i + 1}"}
                t = time.perf_counter()
                edit(arguments)
                dt = time.perf_counter() - t
                if i >= 2:
                    samples[(path, mib, journal)].append(dt * 1000)
        for s in sessions:
            s.close()
    print(f"edit_file, one replacement, median of {args.rounds} rounds (ms); ratio = journal / --no-journal")
    print(f"{'path':<6} {'size':>7} {'journal':>9} {'no journal':>11} {'ratio':>7}")
    for path in ("call", "mcp", "lsp"):
        for mib in sizes:
            on = statistics.median(samples[(path, mib, True)])
            off = statistics.median(samples[(path, mib, False)])
            print(f"{path:<6} {mib:>4} MiB {on:>9.2f} {off:>11.2f} {on / off:>7.3f}")


if __name__ == "__main__":
    main()
