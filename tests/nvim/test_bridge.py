"""The bridge end to end: a real Neovim runs tether lsp, and the official MCP Python SDK client
drives a `tether mcp` that attaches to it. The assistant reads the unsaved buffer, its edits land
in Neovim's buffer (checked through Neovim's API) and not on disk while the buffer is dirty, and
when Neovim dies the next call runs standalone on disk."""

import re

import pytest

from assistant import text_of_sdk
from conftest import PATIENCE, text_of, wait_until
from editor_support import attach_assistant

MAIN = "def main():\n    return 1\n"


@pytest.fixture
def assistant(editor):
    a = attach_assistant(editor.root, editor.runtime)
    yield a
    a.close()


def disk(editor, rel: str) -> str:
    return (editor.root / rel).read_text()


def ok(result) -> str:
    assert not result.is_error, text_of_sdk(result)
    return text_of_sdk(result)


def test_read_file_and_grep_see_the_unsaved_buffer(editor, assistant):
    editor.type_at(2, 12, " + 41  # unsaved")
    assert editor.modified()
    # Neovim reports typing after a short debounce; tether reads what it has been told.
    wait_until("the typed text to reach tether", lambda: "# unsaved" in text_of(editor.call("read_file", path="src/main.py")))
    read = ok(assistant.call("read_file", path="src/main.py"))
    assert "return 1 + 41  # unsaved" in read
    # The note, then the version the read saw (the change journal is on).
    assert re.search(r"\(from the open editor buffer, which has unsaved changes\)\n\[version: [0-9a-f]{12}\]$", read), read
    found = ok(assistant.call("grep", pattern="unsaved", output_mode="content"))
    assert "src/main.py" in found and "41  # unsaved" in found, found
    assert disk(editor, "src/main.py") == MAIN


def test_edit_file_lands_in_the_dirty_buffer_and_not_on_disk(editor, assistant):
    editor.type_at(1, 0, "# typed\n")
    wait_until("the typed text to reach tether", lambda: "# typed" in text_of(editor.call("read_file", path="src/main.py")))
    r = ok(assistant.call("edit_file", path="src/main.py", old_string="return 1", new_string="return 2"))
    assert "src/main.py: applied to the open editor buffer, which has unsaved changes" in r, r
    assert editor.lines() == ["# typed", "def main():", "    return 2"]
    assert editor.modified()
    assert disk(editor, "src/main.py") == MAIN, "a dirty buffer's file is untouched"


def test_apply_patch_lands_in_the_open_buffer_and_on_disk_for_the_closed_file(editor, assistant):
    editor.type_at(1, 0, "# typed\n")
    wait_until("the typed text to reach tether", lambda: "# typed" in text_of(editor.call("read_file", path="src/main.py")))
    patch = (
        "*** Begin Patch\n"
        "*** Update File: src/main.py\n@@\n-    return 1\n+    return 3\n"
        "*** Update File: notes.txt\n@@\n-beta\n+BETA\n"
        "*** End Patch\n"
    )
    r = ok(assistant.call("apply_patch", patch=patch))
    assert "src/main.py: applied to the open editor buffer" in r, r
    assert "notes.txt: written to disk" in r, r
    assert editor.lines() == ["# typed", "def main():", "    return 3"]
    assert disk(editor, "src/main.py") == MAIN
    assert disk(editor, "notes.txt") == "alpha\nBETA\ngamma\n"


def test_killing_neovim_mid_session_falls_back_to_disk(editor, assistant):
    editor.type_at(2, 12, " # in the buffer")
    wait_until("the typed text to reach tether", lambda: "# in the buffer" in text_of(editor.call("read_file", path="src/main.py")))
    assert "# in the buffer" in ok(assistant.call("read_file", path="src/main.py"))

    editor.proc.kill()
    editor.proc.wait(timeout=PATIENCE)
    # tether lsp notices the editor is gone when its stdin closes, a moment after the kill; a read
    # in that moment still gets the last buffer text. Then the attached tether mcp runs on disk.
    wait_until(
        "the call to fall back to disk",
        lambda: "# in the buffer" not in ok(assistant.call("read_file", path="src/main.py")),
    )
    r = ok(assistant.call("read_file", path="src/main.py"))
    assert "# in the buffer" not in r and "return 1" in r, r
    ok(assistant.call("edit_file", path="src/main.py", old_string="return 1", new_string="return 4"))
    assert disk(editor, "src/main.py") == "def main():\n    return 4\n"
