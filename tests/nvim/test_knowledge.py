"""What tether learns from the editor, in a real Neovim with tether's plugin and a real language
server (basedpyright): the problems a change introduces, the problems of the workspace, the
language server's definitions, references, symbols and hovers, a rename across an open dirty
buffer and a file that was not open, and the user's Visual selection; the same through an
assistant's `tether mcp` attached to the editor."""

import json
import re

import pytest

from assistant import text_of_sdk
from conftest import Editor, basedpyright_bin, ruff_bin, text_of, wait_for_ruffs_first_pull, wait_until
from editor_support import attach_assistant

UTIL = 'def greet(name: str) -> str:\n    """Return a greeting."""\n    return "hello " + name\n'
MAIN = 'from util import greet\n\n\ndef main() -> str:\n    return greet("world")\n'


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    (root / "util.py").write_text(UTIL)
    (root / "main.py").write_text(MAIN)
    return root


@pytest.fixture
def editor(project, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(project, home, "main.py", plugin=True, env={"TETHER_BASEDPYRIGHT": basedpyright_bin()})
    wait_for_language_server(e)
    yield e
    e.close()


def wait_for_language_server(editor: Editor):
    """Until basedpyright is attached to the current buffer and has reported on it, and tether has
    been sent that report."""
    wait_until(
        "basedpyright's first report on the buffer",
        lambda: editor.lua(
            "local b = vim.api.nvim_get_current_buf()"
            " local c = vim.lsp.get_clients({bufnr = b, name = 'basedpyright'})[1]"
            " local stamps = require('tether.diagnostics').stamps[b]"
            " return c ~= nil and stamps ~= nil and stamps[c.id] ~= nil"
        ),
        timeout=60,
    )


def ok_json(result: dict):
    assert result["isError"] is False, text_of(result)
    return json.loads(result["content"][0]["text"])


def after_change(content: list) -> list:
    """The diagnostics_after_change item of a change's result."""
    for item in content[1:]:
        text = item["text"] if isinstance(item, dict) else item.text
        if "diagnostics_after_change" in text:
            return json.loads(text)["diagnostics_after_change"]
    raise AssertionError(f"no diagnostics_after_change in {content}")


SENT = (
    "_G.sent = {}"
    " local compat = require('tether.compat')"
    " local notify = compat.notify"
    " compat.notify = function(client, method, params)"
    "   if method == 'tether/publishDiagnostics' then table.insert(_G.sent, params) end"
    "   return notify(client, method, params)"
    " end"
)

BASEDPYRIGHT = "vim.lsp.get_clients({bufnr = vim.api.nvim_get_current_buf(), name = 'basedpyright'})[1]"


def test_an_edit_is_answered_with_the_diagnostics_neovim_pulled_for_its_version(tmp_path):
    """Ruff's language server answers Neovim's pulls (`textDocument/diagnostic`), each whole for
    the version it was asked at: the plugin says so (`complete`), and tether takes the report of
    the edit's version as it comes, without waiting for it to stay unchanged."""
    root = tmp_path / "lint"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "lint.py").write_text("x = 1\n")
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(root, home, "lint.py", plugin=True, env={"TETHER_RUFF": ruff_bin()})
    try:
        wait_for_ruffs_first_pull(e)
        e.lua(SENT)
        r = e.call("edit_file", path="lint.py", old_string="x = 1", new_string="x = y")
        (report,) = after_change(r["content"])
        assert report["status"] == "settled" and report["errors"] == 1, report
        (problem,) = report["introduced"]
        assert problem["code"] == "F821" and problem["source"] == "Ruff", problem
        sent = [p for p in e.lua("return _G.sent") if p["version"] == report["version"]]
        assert sent and all(p["complete"] is True for p in sent), sent
    finally:
        e.close()


def test_basedpyright_is_offered_pulls_and_each_report_is_whole_for_its_version(editor):
    """basedpyright offers `textDocument/diagnostic` only through dynamic registration, which
    Neovim 0.11 does not announce; the plugin announces it (`pull_diagnostics`), so Neovim pulls,
    and each report is marked whole (`complete`) for the version it was asked at."""
    assert editor.lua(f"local c = {BASEDPYRIGHT} return c.registrations['textDocument/diagnostic'] ~= nil")
    editor.lua(SENT)
    r = editor.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(42)")
    (report,) = after_change(r["content"])
    assert report["status"] == "settled" and report["errors"] == 1, report
    assert editor.lua(
        f"local c = {BASEDPYRIGHT} return require('tether.diagnostics').pulled[vim.api.nvim_get_current_buf()][c.id]"
    )
    sent = [p for p in editor.lua("return _G.sent") if p["version"] == report["version"]]
    assert sent and all(p["complete"] is True for p in sent), sent


def test_a_refresh_from_basedpyright_pulls_the_buffers_it_changed(editor, project):
    """A change in util.py changes main.py's problems without an edit of main.py: basedpyright
    sends `workspace/diagnostic/refresh`, which Neovim 0.11 has no handler for (basedpyright stops
    on the error); the plugin's handler pulls main.py again."""
    editor.lua(f"vim.cmd.edit('{project / 'util.py'}')")
    wait_until(
        "basedpyright attached to util.py",
        lambda: editor.lua(f"return {BASEDPYRIGHT} ~= nil"),
        timeout=30,
    )
    editor.lua(
        "local b = vim.api.nvim_get_current_buf()"
        " vim.api.nvim_buf_set_text(b, 0, 16, 0, 19, {'int'})"  # def greet(name: int) -> str:
    )
    main = project / "main.py"
    wait_until(
        "main.py's new type error",
        lambda: editor.lua(
            f"return #vim.diagnostic.get(vim.fn.bufnr('{main}'), {{severity = vim.diagnostic.severity.ERROR}})"
        )
        >= 1,
        timeout=30,
    )
    assert editor.lua(f"return {BASEDPYRIGHT} ~= nil"), "basedpyright stopped"


def test_with_pulls_not_offered_basedpyright_pushes_versioned_reports(project, tmp_path):
    """`pull_diagnostics = false`: basedpyright pushes, stating the version of each report, and
    an edit still settles with the problem it introduced (after the report is quiet), never
    marked whole."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"TETHER_BASEDPYRIGHT": basedpyright_bin(), "TETHER_PLUGIN_OPTIONS": '{"pull_diagnostics": false}'}
    e = Editor(project, home, "main.py", plugin=True, env=env)
    try:
        wait_for_language_server(e)
        assert e.lua(f"local c = {BASEDPYRIGHT} return c.registrations['textDocument/diagnostic'] == nil")
        e.lua(SENT)
        r = e.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(42)")
        (report,) = after_change(r["content"])
        assert report["status"] == "settled" and report["errors"] == 1, report
        sent = [p for p in e.lua("return _G.sent") if p["version"] == report["version"]]
        assert sent and all(p["complete"] is False for p in sent), sent
    finally:
        e.close()


def test_an_edit_reports_the_type_error_it_introduces_and_diagnostics_lists_it(editor):
    r = editor.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(42)")
    assert r["isError"] is False, text_of(r)
    (report,) = after_change(r["content"])
    assert report["path"] == "main.py"
    assert report["status"] == "settled", report
    assert report["errors"] == 1, report
    (problem,) = report["introduced"]
    assert problem["severity"] == "error" and problem["line"] == 5, problem
    assert problem["column"] == 18 and problem["end_column"] == 20, problem  # `42`
    assert "str" in problem["message"], problem
    version = editor.lua("return vim.lsp.util.buf_versions[vim.api.nvim_get_current_buf()]")
    assert report["version"] == version

    listed = ok_json(editor.call("diagnostics", path="main.py"))
    (entry,) = listed["files"]
    assert entry["path"] == "main.py" and entry["version"] == version, listed
    assert [(p["line"], p["severity"]) for p in entry["problems"]] == [(5, "error")], listed

    fixed = editor.call("edit_file", path="main.py", old_string="greet(42)", new_string='greet("again")')
    (report,) = after_change(fixed["content"])
    assert report["errors"] == 0 and len(report["resolved"]) == 1, report


def test_definition_references_symbols_and_hover_answer_from_the_language_server(editor):
    found = ok_json(editor.call("definition", path="main.py", line=5, symbol="greet"))
    assert [(loc["path"], loc["line"], loc["column"]) for loc in found["locations"]] == [("util.py", 1, 5)], found
    assert found["locations"][0]["text"].startswith("def greet(")

    refs = ok_json(editor.call("references", path="util.py", line=1, symbol="greet"))
    places = sorted((loc["path"], loc["line"]) for loc in refs["locations"])
    assert places == [("main.py", 1), ("main.py", 5), ("util.py", 1)], refs

    outline = ok_json(editor.call("symbols", path="util.py"))
    assert [(s["name"], s["kind"]) for s in outline["symbols"]] == [("greet", "function")], outline

    search = ok_json(editor.call("symbols", query="greet"))
    assert any(s["name"] == "greet" and s["path"] == "util.py" for s in search["symbols"]), search

    hover = ok_json(editor.call("hover", path="main.py", line=5, symbol="greet"))
    assert "def greet(name: str) -> str" in hover["contents"], hover
    assert "Return a greeting." in hover["contents"], hover


def renamed(text: str) -> str:
    return re.sub(r"\bgreet\b", "welcome", text)


def test_rename_reaches_a_dirty_open_buffer_and_a_file_that_was_not_open(editor):
    editor.type_at(1, 0, "# typed\n")
    typed = editor.text()
    wait_until("the typed text to reach tether", lambda: "# typed" in text_of(editor.call("read_file", path="main.py")))
    r = editor.call("rename_symbol", path="util.py", line=1, symbol="greet", new_name="welcome")
    assert r["isError"] is False, text_of(r)
    assert "renamed `greet` to `welcome`" in text_of(r), text_of(r)
    assert editor.text() == renamed(typed)
    assert editor.modified(), "the dirty buffer stays unsaved"
    assert (editor.root / "main.py").read_text() == MAIN, "a dirty buffer's file is untouched"
    wait_until(
        "util.py renamed on disk",
        lambda: (editor.root / "util.py").read_text() == renamed(UTIL),
    )
    editor.nvim.command("normal! u")
    assert editor.text() == typed, "one `u` takes the rename back in the buffer"


def test_editor_context_returns_the_visual_selection(editor):
    editor.nvim.current.window.cursor = (5, 11)  # on `greet` in `    return greet("world")`
    editor.nvim.input("v4l")
    wait_until("Visual mode", lambda: editor.nvim.api.get_mode()["mode"] == "v")
    context = ok_json(editor.call("editor_context"))
    assert context["active"] == "main.py", context
    (shown,) = context["editors"]
    assert shown["active"] is True and shown["version"] is not None, shown
    (selection,) = shown["selections"]
    assert selection["text"] == "greet", selection
    assert (selection["line"], selection["column"], selection["end_line"], selection["end_column"]) == (5, 12, 5, 17)
    assert shown["visible"] == [{"line": 1, "end_line": 5}], shown
    editor.nvim.input("<Esc>")


@pytest.mark.parametrize(
    "row, keys, mode, want",
    [
        # Linewise: whole lines, line breaks included...
        (1, "Vj", "V", [(1, 1, 3, 1, "from util import greet\n\n")]),
        # ...but at the end of the buffer, the last line ends the selection.
        (4, "Vj", "V", [(4, 1, 5, 26, 'def main() -> str:\n    return greet("world")')]),
        # A block: one selection per line, the same screen columns on each.
        (4, "<C-v>j2l", "\x16", [(4, 1, 4, 4, "def"), (5, 1, 5, 4, "   ")]),
    ],
)
def test_editor_context_returns_linewise_and_block_selections(editor, row, keys, mode, want):
    editor.nvim.current.window.cursor = (row, 0)
    editor.nvim.input(keys)
    wait_until(f"Visual mode {mode!r}", lambda: editor.nvim.api.get_mode()["mode"] == mode)
    context = ok_json(editor.call("editor_context"))
    selections = context["editors"][0]["selections"]
    got = [(s["line"], s["column"], s["end_line"], s["end_column"], s["text"]) for s in selections]
    assert got == want, context
    editor.nvim.input("<Esc>")


def test_through_an_attached_tether_mcp(editor):
    assistant = attach_assistant(editor.root, editor.runtime)
    try:
        r = assistant.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(None)")
        assert not r.is_error, text_of_sdk(r)
        (report,) = after_change(r.content)
        assert report["status"] == "settled" and report["errors"] == 1, report
        assert report["introduced"][0]["line"] == 5, report

        d = assistant.call("definition", path="main.py", line=5, symbol="greet")
        assert not d.is_error, text_of_sdk(d)
        found = json.loads(text_of_sdk(d))
        assert [(loc["path"], loc["line"]) for loc in found["locations"]] == [("util.py", 1)], found
    finally:
        assistant.close()
