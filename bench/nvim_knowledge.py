#!/usr/bin/env python3
"""The editor's knowledge in a real Neovim beside basedpyright: how long an edit takes to answer
with its diagnostics, and what going through tether costs a definition or references request.

Usage: bench/nvim_knowledge.py [--edits N] [--lookups N] [--ruff RUFF]

A headless Neovim 0.11 with tether's plugin (tests/nvim/init.lua, TETHER_PLUGIN=1) and
basedpyright (scripts/install-basedpyright) opens a two-file Python project (util.py defines
`greet`, main.py calls it). Every time is measured inside Neovim, from the request to its answer
(`vim.uv.hrtime`), so the driver's polling is not in it.

- Edits: --edits (20) `edit_file` calls on main.py through `tether.callTool`, alternately putting
  a type error in (`greet(42)`) and taking it out: each answer waits for basedpyright's report on
  the new version and ends with the problems the edit introduced or resolved. The same number of
  edits with `"diagnostics": false` (tether answers once the edit is in the buffer) shows what the
  wait costs. Every edit with diagnostics must come back `settled` with the right error count.
- Lookups: --lookups (20) rounds of `definition` (main.py, the call of `greet`) and `references`
  (util.py, its definition) through tether, each against the same request sent straight to
  basedpyright from Neovim (`client:request_sync`, what `vim.lsp.buf_request_sync` does), in turn.

- With --ruff: --edits edits of a file that Ruff's language server lints, alternately using an
  undefined name and taking it out. Neovim pulls Ruff's diagnostics (`textDocument/diagnostic`),
  an answer whole for its version, so tether takes it at once; each edit must come back
  `settled` with the right error count. Against the same pull sent straight to Ruff.

Environment: TETHER_BIN (default target/release/tether), TETHER_NVIM (default nvim),
TETHER_BASEDPYRIGHT (default: installed by scripts/install-basedpyright).
"""

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "nvim"), str(REPO / "tests")]

from conftest import Editor, basedpyright_bin  # noqa: E402

UTIL = 'def greet(name: str) -> str:\n    """Return a greeting."""\n    return "hello " + name\n'
MAIN = 'from util import greet\n\n\ndef main() -> str:\n    return greet("world")\n'

TIMED = r"""
-- One tool call through tether, timed from the request to the answer; the answer lands in
-- _G.bench_out.
function _G.bench_tool(tool, args)
  _G.bench_out = nil
  local client = vim.lsp.get_clients({ name = "tether" })[1]
  local t0 = vim.uv.hrtime()
  client:request("workspace/executeCommand", {
    command = "tether.callTool",
    arguments = { { tool = tool, arguments = args } },
  }, function(err, result)
    _G.bench_out = { ms = (vim.uv.hrtime() - t0) / 1e6, err = err and err.message, result = result }
  end)
end

-- The same question straight to basedpyright, as vim.lsp.buf_request_sync asks it.
function _G.bench_direct(method, path, line, character)
  local bufnr = vim.fn.bufadd(path)
  vim.fn.bufload(bufnr)
  local client = vim.lsp.get_clients({ name = "basedpyright", bufnr = bufnr })[1]
  assert(client, "basedpyright is not attached to " .. path)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = character },
    context = { includeDeclaration = true },
  }
  local t0 = vim.uv.hrtime()
  local res = client:request_sync(method, params, 10000, bufnr)
  local ms = (vim.uv.hrtime() - t0) / 1e6
  return { ms = ms, count = res and res.result and #res.result or -1 }
end

-- A change made straight in the buffer (as typing would), timed from the change to
-- basedpyright's report stamped with its version (pulled by Neovim on the change, or pushed),
-- checked each millisecond; the time lands in _G.bench_report.
function _G.bench_straight(old, new)
  _G.bench_report = nil
  local b = vim.api.nvim_get_current_buf()
  local c = vim.lsp.get_clients({ name = "basedpyright", bufnr = b })[1]
  for i, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do
    local s, e = l:find(old, 1, true)
    if s then
      local t0 = vim.uv.hrtime()
      vim.api.nvim_buf_set_text(b, i - 1, s - 1, i - 1, e, { new })
      local v = vim.lsp.util.buf_versions[b]
      local timer = assert(vim.uv.new_timer())
      timer:start(1, 1, function()
        local stamp = (require("tether.diagnostics").stamps[b] or {})[c.id]
        if stamp and stamp >= v then
          _G.bench_report = { ms = (vim.uv.hrtime() - t0) / 1e6 }
          timer:stop()
          timer:close()
        end
      end)
      return
    end
  end
  error("no " .. old .. " in the buffer")
end
"""


def tool(editor: Editor, name: str, **args) -> tuple[float, dict]:
    editor.lua("_G.bench_tool(...)", name, args)
    deadline = time.monotonic() + 60
    while True:
        out = editor.lua("return _G.bench_out")
        if out:
            assert out.get("err") is None, out
            return out["ms"], out["result"]
        if time.monotonic() > deadline:
            raise SystemExit(f"{name} did not answer in 60 s")
        time.sleep(0.002)


def after_change(result: dict) -> dict:
    for item in result["content"][1:]:
        if "diagnostics_after_change" in item["text"]:
            return json.loads(item["text"])["diagnostics_after_change"][0]
    raise SystemExit(f"no diagnostics_after_change in {result}")


def summary(name: str, times: list[float]):
    if not times:
        return
    times = sorted(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(f"{name:42} n={len(times):3}  median {statistics.median(times):7.1f} ms  p95 {p95:7.1f} ms")


def pulled(edits: int, ruff: str) -> None:
    """Edits answered with diagnostics a server whose diagnostics Neovim pulls (Ruff): each answer
    to `textDocument/diagnostic` is whole for its version, so tether takes it at once instead of
    waiting for the report to stay unchanged 300 ms. Against Ruff's own time for the same pull,
    asked straight from Neovim."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tether-bench-"))
    root = tmp / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "lint.py").write_text("x = 1\n")
    home = tmp / "home"
    home.mkdir()
    editor = Editor(root, home, "lint.py", plugin=True, env={"TETHER_RUFF": ruff})
    try:
        editor.lua(TIMED)
        deadline = time.monotonic() + 60
        while not editor.lua(
            "local b = vim.api.nvim_get_current_buf()"
            " local c = vim.lsp.get_clients({bufnr = b, name = 'ruff'})[1]"
            " local s = require('tether.diagnostics').pulled[b]"
            " return c ~= nil and s ~= nil and s[c.id] == true"
        ):
            if time.monotonic() > deadline:
                raise SystemExit("Neovim never pulled Ruff's diagnostics of lint.py")
            time.sleep(0.05)
        edited, direct = [], []
        for i in range(edits):
            old, new = ("x = 1", "x = y") if i % 2 == 0 else ("x = y", "x = 1")
            ms, result = tool(editor, "edit_file", path="lint.py", old_string=old, new_string=new)
            assert result["isError"] is False, result
            report = after_change(result)
            assert report["status"] == "settled" and report["errors"] == (1 if new == "x = y" else 0), report
            edited.append(ms)
            d = editor.lua(
                "local b = vim.api.nvim_get_current_buf()"
                " local c = vim.lsp.get_clients({bufnr = b, name = 'ruff'})[1]"
                " local t0 = vim.uv.hrtime()"
                " local r = c:request_sync('textDocument/diagnostic',"
                "   {textDocument = vim.lsp.util.make_text_document_params(b)}, 5000, b)"
                " return {ms = (vim.uv.hrtime() - t0) / 1e6, ok = r ~= nil and r.err == nil}"
            )
            assert d["ok"], d
            direct.append(d["ms"])
        summary("edit_file with Ruff's pulled diagnostics", edited)
        summary("Ruff's own pull, straight from Neovim", direct)
    finally:
        editor.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--lookups", type=int, default=20)
    ap.add_argument(
        "--push", action="store_true", help="the plugin with pull_diagnostics = false: basedpyright pushes"
    )
    ap.add_argument("--ruff", help="Ruff's `ruff` binary: also time edits answered with its pulled diagnostics")
    opts = ap.parse_args()
    if opts.ruff:
        pulled(opts.edits, opts.ruff)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="tether-bench-"))
    root = tmp / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    (root / "util.py").write_text(UTIL)
    (root / "main.py").write_text(MAIN)
    home = tmp / "home"
    home.mkdir()
    env = {"TETHER_BASEDPYRIGHT": basedpyright_bin()}
    if opts.push:
        env["TETHER_PLUGIN_OPTIONS"] = json.dumps({"pull_diagnostics": False})
    editor = Editor(root, home, "main.py", plugin=True, env=env)
    try:
        editor.lua(TIMED)
        deadline = time.monotonic() + 60
        while not editor.lua(
            "local b = vim.api.nvim_get_current_buf()"
            " local c = vim.lsp.get_clients({bufnr = b, name = 'basedpyright'})[1]"
            " local s = require('tether.diagnostics').stamps[b]"
            " return c ~= nil and s ~= nil and s[c.id] ~= nil"
        ):
            if time.monotonic() > deadline:
                raise SystemExit("basedpyright never reported on main.py")
            time.sleep(0.05)
        # Warm-up: one of each, so that both servers have analysed both files.
        tool(editor, "definition", path="main.py", line=5, symbol="greet")
        tool(editor, "references", path="util.py", line=1, symbol="greet")

        bad, good = "greet(42)", 'greet("world")'
        with_diag, without = [], []
        for i in range(2 * opts.edits):
            diagnostics = i < opts.edits
            old, new = (good, bad) if i % 2 == 0 else (bad, good)
            args = {"path": "main.py", "old_string": old, "new_string": new}
            if not diagnostics:
                args["diagnostics"] = False
            ms, result = tool(editor, "edit_file", **args)
            assert result["isError"] is False, result
            if diagnostics:
                report = after_change(result)
                want = 1 if new == bad else 0
                assert report["status"] == "settled" and report["errors"] == want, report
                with_diag.append(ms)
            else:
                without.append(ms)
        if opts.edits % 2:
            tool(editor, "edit_file", path="main.py", old_string=bad, new_string=good, diagnostics=False)

        # basedpyright's own time: the same changes made straight in the buffer, 0.3 s apart (past
        # Neovim's 150 ms debounce, so each is sent at once), timed to its report on the version.
        straight = []
        for i in range(opts.edits):
            old, new = (good, bad) if i % 2 == 0 else (bad, good)
            time.sleep(0.3)
            editor.lua("_G.bench_straight(...)", old, new)
            deadline = time.monotonic() + 30
            while not (out := editor.lua("return _G.bench_report")):
                if time.monotonic() > deadline:
                    raise SystemExit("basedpyright did not report on a change made in the buffer")
                time.sleep(0.005)
            straight.append(out["ms"])
        if opts.edits % 2:
            editor.lua("_G.bench_straight(...)", bad, good)

        via = {"definition": [], "references": []}
        direct = {"definition": [], "references": []}
        for _ in range(opts.lookups):
            ms, result = tool(editor, "definition", path="main.py", line=5, symbol="greet")
            assert result["isError"] is False and len(json.loads(result["content"][0]["text"])["locations"]) == 1
            via["definition"].append(ms)
            d = editor.lua("return _G.bench_direct(...)", "textDocument/definition", str(root / "main.py"), 4, 11)
            assert d["count"] == 1, d
            direct["definition"].append(d["ms"])
            ms, result = tool(editor, "references", path="util.py", line=1, symbol="greet")
            assert result["isError"] is False and len(json.loads(result["content"][0]["text"])["locations"]) == 3
            via["references"].append(ms)
            d = editor.lua("return _G.bench_direct(...)", "textDocument/references", str(root / "util.py"), 0, 4)
            assert d["count"] == 3, d
            direct["references"].append(d["ms"])

        version = editor.lua("return vim.version and tostring(vim.version())")
        how = "pushed" if opts.push else "pulled"
        print(f"Neovim {version}, basedpyright ({how}), tether {editor.lua('return vim.env.TETHER_BIN')}")
        summary("edit_file, answer with diagnostics", with_diag)
        summary('edit_file, "diagnostics": false', without)
        summary("a change in the buffer to its report", straight)
        for name in ("definition", "references"):
            summary(f"{name} through tether", via[name])
            summary(f"{name} straight to basedpyright", direct[name])
    finally:
        editor.close()


if __name__ == "__main__":
    main()
