"""tether lsp in a real Vim 9 through Debian's ALE 3.3.0, one of the two Vim LSP clients in
Debian's archive (YouCompleteMe, the other, refuses every edit a server sends). ALE reports every
buffer change to its LSP linters, so an attached `tether mcp` reads the unsaved text; ALE never
answers a request a server sends, so tether's edits cannot reach its buffers. editors/vim.md
therefore runs tether read-only under ALE; the last test pins why."""

import re
import time

import pytest
from mcp.shared.exceptions import MCPError

from assistant import text_of_sdk
from conftest import HERE, NOTES, wait_until
from editor_support import attach_assistant


def test_read_file_and_grep_through_tether_mcp_see_what_is_being_typed(vim):
    assistant = attach_assistant(vim.root, vim.runtime)
    try:
        vim.ex("call cursor(3, 1)")
        vim.keys("A")
        vim.type(" unsaved words")
        # Still in Insert mode: ALE reports the change while typing ('always').
        wait_until(
            "the typed text to reach tether",
            lambda: "gamma unsaved words" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        found = assistant.call("grep", pattern="unsaved", output_mode="content")
        vim.keys("Escape")
    finally:
        assistant.close()

    assert not found.is_error, text_of_sdk(found)
    assert "notes.txt" in text_of_sdk(found) and "gamma unsaved words" in text_of_sdk(found)
    assert vim.text() == "alpha\nbeta\ngamma unsaved words\n"
    assert vim.modified()
    assert (vim.root / "notes.txt").read_text() == NOTES, "the file on disk is untouched"


def test_a_python_buffer_is_mirrored_too(vim):
    """ALE runs a default set of linters for Python; the recipe adds tether to it."""
    (vim.root / "main.py").write_text("def main():\n    return 1\n")
    assistant = attach_assistant(vim.root, vim.runtime)
    try:
        vim.ex("edit main.py")
        assert vim.expr("&filetype") == "python"
        vim.ex("call cursor(2, 1)")
        vim.keys("A")
        vim.type("  # unsaved")
        vim.keys("Escape")
        wait_until(
            "the typed text to reach tether",
            lambda: "return 1  # unsaved" in text_of_sdk(assistant.call("read_file", path="main.py")),
        )
    finally:
        assistant.close()

    assert (vim.root / "main.py").read_text() == "def main():\n    return 1\n"


def test_read_only_tether_offers_the_assistant_no_edit(vim):
    assistant = attach_assistant(vim.root, vim.runtime)
    try:
        vim.ex("call cursor(1, 1)")
        vim.keys("A")
        vim.type(" typed")
        vim.keys("Escape")
        wait_until(
            "the typed text to reach tether",
            lambda: "alpha typed" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        # The read-only lsp lists no tool that changes anything, and refuses to run one.
        with pytest.raises(MCPError, match="unknown tool: edit_file"):
            assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    finally:
        assistant.close()

    assert vim.text() == "alpha typed\nbeta\ngamma\n"
    assert (vim.root / "notes.txt").read_text() == NOTES


def test_an_edit_under_ale_waits_for_an_answer_that_never_comes(vim_editing):
    """Why the recipe is read-only: ALE leaves `workspace/applyEdit` unanswered, so an edit to a
    buffer it has open fails with `timeout` after tether's 10 s, and nothing changes."""
    vim = vim_editing
    assistant = attach_assistant(vim.root, vim.runtime)
    try:
        vim.ex("call cursor(1, 1)")
        vim.keys("A")
        vim.type(" typed")
        vim.keys("Escape")
        wait_until(
            "the typed text to reach tether",
            lambda: "alpha typed" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        started = time.monotonic()
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
        took = time.monotonic() - started
    finally:
        assistant.close()

    assert result.is_error, text_of_sdk(result)
    assert "timeout" in text_of_sdk(result), text_of_sdk(result)
    assert took >= 9.5, f"answered after {took:.1f} s"
    assert vim.text() == "alpha typed\nbeta\ngamma\n"
    assert (vim.root / "notes.txt").read_text() == NOTES


def test_the_vimrc_runs_the_setup_editors_vim_md_gives():
    """The tests above run the recipe as the page prints it, but for the tether binary and its
    arguments, which the test chooses."""
    page = (HERE.parents[1] / "editors" / "vim.md").read_text()
    section = page[page.index("## The plugins Debian has") :]
    printed = re.search(r"```vim\n(.*?)```", section, re.S).group(1)
    printed = printed.replace('filetype plugin on                          " if your vimrc does not already\n', "")
    vimrc = (HERE / "vimrc").read_text()
    run = vimrc[vimrc.index('" ---- editors/vim.md') : vimrc.index('" ---- end of the recipe')]
    run = run.split("\n", 1)[1]  # the marker line
    run = run.replace("'executable': $TETHER_BIN", "'executable': 'tether'")
    run = run.replace("'command': '%e ' . $TETHER_ARGS", "'command': '%e lsp --read-only'")
    assert run == printed
