"""Diagnostics after a change from a language server that publishes them without a version
(Debian's pylsp with pyflakes), in a real Neovim with tether's plugin: a report computed for the
text before an assistant's edit, arriving just after it, must never be taken for the edit's.

pylsp lints 0.5 s after a change, in a thread that reads the text when it starts; on a file of
4,000 lines pyflakes takes about a second. Each round types a line (the user's change, which
starts a lint) and lands a tool edit that introduces an undefined name while that lint runs, at
a different moment each round. The old lint's report (no error) then arrives after the edit. The
answer must be the introduced error or `pending`, never `settled` without it."""

import os
import shutil
import time

import pytest

from conftest import Editor, wait_until
from test_knowledge import after_change

FUNCTIONS = 1000  # four lines each


def pylsp_bin() -> str:
    path = os.environ.get("TETHER_PYLSP") or shutil.which("pylsp")
    if not path:
        pytest.skip("pylsp not installed (scripts/test installs Debian's python3-pylsp and python3-pyflakes)")
    return path


@pytest.fixture
def editor(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    body = "".join(f"def f{i}(a, b):\n    c = a + b * {i}\n    return c  # slot {i}\n\n" for i in range(FUNCTIONS))
    (root / "big.py").write_text(body)
    home = tmp_path / "home"
    home.mkdir()
    # pylsp only: no basedpyright, which scripts/test names for the other suites.
    e = Editor(root, home, "big.py", plugin=True, env={"TETHER_PYLSP": pylsp_bin(), "TETHER_BASEDPYRIGHT": ""})
    wait_until("pylsp's first report on the buffer", lambda: pylsp_reported(e), timeout=60)
    yield e
    e.close()


def pylsp_reported(editor: Editor) -> bool:
    return editor.lua(
        "local b = vim.api.nvim_get_current_buf()"
        " local c = vim.lsp.get_clients({bufnr = b, name = 'pylsp'})[1]"
        " local stamps = require('tether.diagnostics').stamps[b]"
        " return c ~= nil and stamps ~= nil and stamps[c.id] ~= nil"
    )


def pylsp_messages(editor: Editor) -> list[str]:
    return editor.lua(
        "local b = vim.api.nvim_get_current_buf()"
        " local c = vim.lsp.get_clients({bufnr = b, name = 'pylsp'})[1]"
        " local ns = vim.lsp.diagnostic.get_namespace(c.id, false)"
        " return vim.tbl_map(function(d) return d.message end, vim.diagnostic.get(b, {namespace = ns}))"
    )


# Seconds from the user's keystroke to the tool call: pylsp hears of the keystroke 150 ms after it
# (Neovim's debounce) and starts linting 0.5 s later, for about a second.
DELAYS = [0.7, 0.85, 1.0, 1.15, 1.3, 1.45, 1.6, 1.75]


def test_a_report_on_the_text_before_an_edit_is_never_the_edits(editor):
    wrong = []
    statuses = []
    seen = 0  # pending answers whose latest report (which may predate the edit) lists the new error
    for i, delay in enumerate(DELAYS):
        # Start from quiet: pylsp has reported every name introduced so far.
        wait_until(
            f"pylsp to report missing_{i - 1}",
            lambda: i == 0 or any(f"missing_{i - 1}'" in m for m in pylsp_messages(editor)),
            timeout=30,
        )
        time.sleep(1.0)
        # The user's change: a comment at the end, which starts a lint of the whole file.
        editor.lua(
            "local n = vim.api.nvim_buf_line_count(0)"
            " vim.api.nvim_buf_set_lines(0, n, n, false, {'# typed ' .. ...})",
            i,
        )
        time.sleep(delay)
        r = editor.call(
            "edit_file", path="big.py", old_string=f"    return c  # slot {i * 97}\n", new_string=f"    return missing_{i}\n"
        )
        assert r["isError"] is False, r
        (report,) = after_change(r["content"])
        statuses.append(report["status"])
        names = [p["message"] for p in report.get("introduced", [])]
        if report["status"] == "settled" and not any(f"missing_{i}'" in m for m in names):
            wrong.append((delay, report))
        if report["status"] == "pending" and "latest_report" in report:
            # What is known is said as what it is.
            assert report["latest_report"]["may_predate_the_change"] is True, report
            seen += any(f"missing_{i}'" in p["message"] for p in report["latest_report"]["new"])
    assert not wrong, f"settled without the introduced error (a stale report credited to the edit): {wrong}"
    print("statuses:", statuses, f"latest report with the new error: {seen} of {len(DELAYS)}")
