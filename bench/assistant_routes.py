#!/usr/bin/env python3
"""The same edit through each route an assistant's change takes to a buffer with unsaved changes.

Usage: bench/assistant_routes.py [--rounds N] [--bin TETHER] [--pause SECONDS]

A headless Neovim 0.11 with tether's plugin (tests/nvim) holds src/main.py with an unsaved line.
Each round changes a line of it (`value = N` to `N+1`; the disk route `other = N`, so that its
change never overlaps the buffer's unsaved ones) three ways, in turn:

    mcp    tether's own edit_file, from an attached `tether mcp` (the official MCP Python SDK
           client), timed from the call to its answer;
    hook   Claude Code's route: `tether hook claude-code` started with a PreToolUse event of its
           built-in Edit on stdin, timed from the start of the process to its exit (process start,
           finding and reaching the editor's tether lsp over the bridge, the buffer check, the
           edit, its verification);
    disk   any other writer: the file written on disk (a new file renamed over the old, as
           `sed -i` does), timed until Neovim's buffer holds the change (a Lua `on_lines`
           callback stamps it with the same monotonic clock).

Each route starts --pause (0.3) s after the last change settled. Neovim sends a buffer's change
at once when it sent none in the last 150 ms, and otherwise holds it until 150 ms have passed
since the last; tether's plugin sends the change an edit of tether's makes at once. `--pause 0`
sends the routes back to back, as an assistant making several edits does. Prints each route's median, p90 and the median's difference from
`mcp`. The machine is shared: compare routes within one run, not across runs.
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
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "nvim"))

from assistant import Assistant  # noqa: E402
from conftest import Editor  # noqa: E402

MAIN = "def main():\n    value = 0\n    other = 0\n    return value + other\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "tether"))
    ap.add_argument("--pause", type=float, default=0.3,
                    help="seconds between a change settling and the next route's (0: back to back)")
    args = ap.parse_args()
    os.environ["TETHER_BIN"] = args.bin
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = tmp / "root"
        (root / "src").mkdir(parents=True)
        main_py = root / "src" / "main.py"
        main_py.write_text(MAIN)
        home = tmp / "home"
        home.mkdir()
        os.environ.setdefault("XDG_STATE_HOME", str(tmp / "state"))
        editor = Editor(root, home, "src/main.py", plugin=True)
        try:
            run(editor, root, main_py, args)
        finally:
            editor.close()


def run(editor, root: pathlib.Path, main_py: pathlib.Path, args) -> None:
    editor.type_at(1, 0, "# unsaved\n")
    # Neovim stamps each line's first appearance on CLOCK_MONOTONIC (Python's time.monotonic_ns).
    editor.lua(
        "_G.bench_changed = {}"
        " vim.api.nvim_buf_attach(0, false, {on_lines = function(_, buf)"
        "   local now = vim.uv.hrtime()"
        "   for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do"
        "     _G.bench_changed[line] = _G.bench_changed[line] or now"
        "   end"
        " end})"
    )
    assistant = Assistant(args.bin, root, editor.runtime)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(editor.runtime))
    times: dict[str, list[float]] = {"mcp": [], "hook": [], "disk": []}
    value = other = 0
    try:
        for _ in range(args.rounds):
            for route in times:
                if route == "disk":
                    old, new = f"    other = {other}", f"    other = {other + 1}"
                    other += 1
                else:
                    old, new = f"    value = {value}", f"    value = {value + 1}"
                    value += 1
                if route == "mcp":
                    t0 = time.monotonic()
                    r = assistant.call("edit_file", path="src/main.py", old_string=old, new_string=new)
                    times[route].append((time.monotonic() - t0) * 1000)
                    assert not r.is_error, r
                elif route == "hook":
                    event = {"hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": str(root),
                             "tool_input": {"file_path": str(main_py), "old_string": old, "new_string": new,
                                            "replace_all": False}}
                    t0 = time.monotonic()
                    done = subprocess.run([args.bin, "hook", "claude-code"], input=json.dumps(event), env=env,
                                          capture_output=True, text=True, check=True)
                    times[route].append((time.monotonic() - t0) * 1000)
                    assert "tether made this change" in done.stdout, done.stdout
                else:
                    disk = main_py.read_text().replace(old + "\n", new + "\n")
                    assert new in disk
                    tmp = main_py.with_name(".main.py.bench")
                    tmp.write_text(disk)
                    t0 = time.monotonic_ns()
                    os.replace(tmp, main_py)
                    stamp = None
                    deadline = time.monotonic() + 10
                    while stamp is None and time.monotonic() < deadline:
                        stamp = editor.lua("return _G.bench_changed[...]", new)
                        if stamp is None:
                            time.sleep(0.002)
                    assert stamp is not None, f"the buffer never took {new!r}"
                    times[route].append((stamp - t0) / 1e6)
                # Each route starts from a settled buffer, by default --pause after it (Neovim
                # sends a change at once when it sent none in the last 150 ms, else when 150 ms
                # have passed since the last; `--pause 0` sends the routes back to back).
                deadline = time.monotonic() + 10
                while new not in editor.text() and time.monotonic() < deadline:
                    time.sleep(0.002)
                time.sleep(args.pause)
    finally:
        assistant.close()
    base = statistics.median(times["mcp"])
    print(f"{args.rounds} rounds, medians and p90 in ms; difference of the median from mcp")
    for route, samples in times.items():
        samples.sort()
        med = statistics.median(samples)
        p90 = samples[int(0.9 * (len(samples) - 1))]
        print(f"  {route:5} median {med:7.2f}  p90 {p90:7.2f}  {med - base:+7.2f}")


if __name__ == "__main__":
    main()
