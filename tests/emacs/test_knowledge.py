"""What tether learns from Emacs, in a real Emacs 28 under tmux with tether-mode and a real
language server beside it through eglot (Debian's eglot 1.9): the problems a change introduces,
stamped with the version they were computed for; the server's definitions, references, symbols and
hovers; a rename across two open buffers, one undo step each; the region and what the window
shows. Each call comes from an assistant's `tether mcp` attached to the tether lsp tether-mode
started, as it would in use.

basedpyright states the version of each report; Debian's pylsp states none, and its reports are
never taken for an edit's result."""

import json
import re
import shutil
import time

import pytest

from assistant import text_of_sdk
from conftest import Emacs, start_tether_mode
from editor_support import attach_assistant, wait_until

UTIL = 'def greet(name: str) -> str:\n    """Return a greeting."""\n    return "hello " + name\n'
MAIN = 'from util import greet\n\n\ndef main() -> str:\n    return greet("world")\n'


def basedpyright() -> list[str]:
    import os

    path = os.environ.get("TETHER_BASEDPYRIGHT")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("basedpyright not installed (scripts/test installs it and exports TETHER_BASEDPYRIGHT)")
    return [path, "--stdio"]


def pylsp() -> list[str]:
    path = shutil.which("pylsp")
    if not path:
        pytest.skip("pylsp not installed (scripts/test installs Debian's python3-pylsp and python3-pyflakes)")
    return [path]


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    import subprocess

    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    (root / "util.py").write_text(UTIL)
    (root / "main.py").write_text(MAIN)
    return root


def start(project, tmp_path, server: list[str], client: str = "eglot", options: dict | None = None) -> Emacs:
    """Emacs with tether-mode (`options` its initialization options), and `client` (eglot or
    lsp-mode) running `server` for main.py."""
    e = start_tether_mode(
        project,
        tmp_path,
        env={"TETHER_TEST_PYTHON_LS": json.dumps(server), "TETHER_TEST_LSP_MODE": "1" if client == "lsp-mode" else "",
             "TETHER_TEST_INIT_OPTIONS": json.dumps(options) if options else ""},
    )
    e.rel = "main.py"
    e.path = project / "main.py"
    e.eval(f"(tether-test-{'lsp' if client == 'lsp-mode' else 'eglot'} {json.dumps(str(e.path))})")
    return e


@pytest.fixture
def emacs(project, tmp_path):
    e = start(project, tmp_path, basedpyright())
    yield e
    e.close()


def ok_json(result) -> dict:
    assert not result.is_error, text_of_sdk(result)
    return json.loads(result.content[0].text)


def after_change(result) -> list:
    """The diagnostics_after_change item of a change's result."""
    for item in result.content[1:]:
        if "diagnostics_after_change" in item.text:
            return json.loads(item.text)["diagnostics_after_change"]
    raise AssertionError(f"no diagnostics_after_change in {result.content}")


def test_an_edit_is_answered_with_the_type_error_reported_for_its_version(emacs, assistant):
    started = time.monotonic()
    r = assistant.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(42)")
    took = time.monotonic() - started
    assert not r.is_error, text_of_sdk(r)
    (report,) = after_change(r)
    assert report["path"] == "main.py"
    assert report["status"] == "settled", report
    assert report["errors"] == 1, report
    (problem,) = report["introduced"]
    assert problem["severity"] == "error" and problem["line"] == 5, problem
    assert problem["column"] == 18 and problem["end_column"] == 20, problem  # `42`
    assert "str" in problem["message"], problem
    # The version tether-mode sent the edited text as: the report was known to be for it.
    state = emacs.state()
    assert state["text"] == MAIN.replace('greet("world")', "greet(42)")
    assert report["version"] == state["version"], (report, state)
    print(f"edit answered with its diagnostics in {took * 1000:.0f} ms")

    listed = ok_json(assistant.call("diagnostics", path="main.py"))
    (entry,) = listed["files"]
    assert entry["path"] == "main.py" and entry["version"] == state["version"], listed
    assert [(p["line"], p["severity"]) for p in entry["problems"]] == [(5, "error")], listed

    fixed = assistant.call("edit_file", path="main.py", old_string="greet(42)", new_string='greet("again")')
    (report,) = after_change(fixed)
    assert report["status"] == "settled" and report["errors"] == 0, report
    assert len(report["resolved"]) == 1, report


def test_definition_references_symbols_and_hover_answer_from_eglots_server(emacs, assistant):
    found = ok_json(assistant.call("definition", path="main.py", line=5, symbol="greet"))
    assert [(loc["path"], loc["line"], loc["column"]) for loc in found["locations"]] == [("util.py", 1, 5)], found
    assert found["locations"][0]["text"].startswith("def greet(")

    # util.py is in no buffer: it is visited, and eglot (serving the project) takes it.
    refs = ok_json(assistant.call("references", path="util.py", line=1, symbol="greet"))
    places = sorted((loc["path"], loc["line"]) for loc in refs["locations"])
    assert places == [("main.py", 1), ("main.py", 5), ("util.py", 1)], refs

    outline = ok_json(assistant.call("symbols", path="util.py"))
    assert [(s["name"], s["kind"]) for s in outline["symbols"]] == [("greet", "function")], outline

    search = ok_json(assistant.call("symbols", query="greet"))
    assert any(s["name"] == "greet" and s["path"] == "util.py" for s in search["symbols"]), search

    hover = ok_json(assistant.call("hover", path="main.py", line=5, symbol="greet"))
    assert "def greet(name: str) -> str" in hover["contents"], hover
    assert "Return a greeting." in hover["contents"], hover


def renamed(text: str) -> str:
    return re.sub(r"\bgreet\b", "welcome", text)


def test_rename_reaches_two_buffers_as_one_undo_step_each(emacs, assistant):
    emacs.eval(f"(tether-test-visit {json.dumps(str(emacs.root / 'util.py'))})")
    emacs.eval(f"(tether-test-eglot {json.dumps(str(emacs.path))})")  # main.py again, in the window
    emacs.goto(1, 0)
    emacs.type("# typed")
    emacs.keys("Enter")
    typed = "# typed\n" + MAIN
    wait_until("the typing to land", lambda: emacs.state()["text"] == typed)
    wait_until(
        "the typing to reach tether",
        lambda: "2\tfrom util import greet" in text_of_sdk(assistant.call("read_file", path="main.py")),
    )

    r = assistant.call("rename_symbol", path="util.py", line=1, symbol="greet", new_name="welcome")
    assert not r.is_error, text_of_sdk(r)
    assert "renamed `greet` to `welcome`" in text_of_sdk(r), text_of_sdk(r)

    main = emacs.state()
    assert main["text"] == renamed(typed)
    assert main["modified"] is True, "the dirty buffer stays unsaved"
    assert (emacs.root / "main.py").read_text() == MAIN, "a dirty buffer's file is untouched"
    emacs.path = emacs.root / "util.py"
    util = emacs.state()
    assert util["text"] == renamed(UTIL)
    wait_until("util.py, clean before, saved", lambda: (emacs.root / "util.py").read_text() == renamed(UTIL))

    # One undo in each buffer takes the rename back there, whole.
    emacs.eval(f"(tether-test-undo {json.dumps(str(emacs.root / 'util.py'))})")
    assert emacs.state()["text"] == UTIL
    emacs.eval(f"(tether-test-undo {json.dumps(str(emacs.root / 'main.py'))})")
    emacs.path = emacs.root / "main.py"
    assert emacs.state()["text"] == typed
    wait_until("tether to see both undone", lambda: "greet" in text_of_sdk(assistant.call("read_file", path="util.py")))


def test_editor_context_gives_the_region_and_what_the_window_shows(emacs, assistant):
    assert emacs.eval("(tether-test-select 5 11 5 16)") == "t"  # `greet` in `    return greet("world")`
    context = ok_json(assistant.call("editor_context"))
    assert context["active"] == "main.py", context
    (shown,) = context["editors"]
    assert shown["active"] is True and shown["version"] == emacs.state()["version"], shown
    (selection,) = shown["selections"]
    assert selection["text"] == "greet", selection
    assert (selection["line"], selection["column"], selection["end_line"], selection["end_column"]) == (5, 12, 5, 17)
    assert shown["visible"] == [{"line": 1, "end_line": 5}], shown


def test_the_deny_list_keeps_a_secret_buffer_out_of_every_answer(project, tmp_path):
    (project / ".env").write_text("TOKEN=hunter2\n")
    e = start(project, tmp_path, basedpyright(), options={"deny": {"secrets": True}})
    a = attach_assistant(e.root, e.runtime)
    try:
        # The secret shown beside main.py, in a window of its own, with the point in it.
        e.eval(f"(progn (select-window (split-window)) (find-file {json.dumps(str(project / '.env'))}) t)")
        context = ok_json(a.call("editor_context"))
        assert "hunter2" not in json.dumps(context) and ".env" not in json.dumps(context), context
        assert [shown["path"] for shown in context["editors"]] == ["main.py"], context
        for call in (a.call("read_file", path=".env"), a.call("diagnostics", path=".env"),
                     a.call("grep", pattern="hunter2")):
            assert "hunter2" not in text_of_sdk(call), text_of_sdk(call)
    finally:
        a.close()
        e.close()


def test_a_report_without_a_version_is_never_taken_for_the_edits(project, tmp_path):
    """pylsp (Debian's) publishes no version: tether-mode stamps its reports null, and an edit's
    diagnostics stay `pending`, the latest report shown as one that may predate the change."""
    e = start(project, tmp_path, pylsp())
    a = attach_assistant(e.root, e.runtime)
    try:
        e.eval("(tether-test-sent-diagnostics (buffer-file-name tether-test-buffer))")
        assert json.loads((e.out / "sent.json").read_text())["version"] is None
        r = a.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(missing)")
        assert not r.is_error, text_of_sdk(r)
        (report,) = after_change(r)
        assert report["status"] == "pending", report
        if "latest_report" in report:
            assert report["latest_report"]["may_predate_the_change"] is True, report
        # pylsp's report does come, and tether shows it, versionless, in `diagnostics`.
        wait_until(
            "pylsp to report the undefined name",
            lambda: "missing" in json.dumps(ok_json(a.call("diagnostics", path="main.py"))),
            timeout=30,
        )
        (entry,) = ok_json(a.call("diagnostics", path="main.py"))["files"]
        assert entry["version"] is None, entry
    finally:
        a.close()
        e.close()


def test_lsp_modes_reports_reach_tether_with_their_version_too(project, tmp_path):
    """The same through lsp-mode (8.0, flycheck or flymake fed from its store): lsp-mode counts
    versions its own way, and the version its server states becomes tether's."""
    e = start(project, tmp_path, basedpyright(), client="lsp-mode")
    a = attach_assistant(e.root, e.runtime)
    try:
        r = a.call("edit_file", path="main.py", old_string='greet("world")', new_string="greet(42)")
        assert not r.is_error, text_of_sdk(r)
        (report,) = after_change(r)
        assert report["status"] == "settled" and report["errors"] == 1, report
        assert report["version"] == e.state()["version"], report
        found = ok_json(a.call("definition", path="main.py", line=5, symbol="greet"))
        assert [(loc["path"], loc["line"]) for loc in found["locations"]] == [("util.py", 1)], found
    finally:
        a.close()
        e.close()
