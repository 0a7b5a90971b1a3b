"""The change journal in a real Emacs 28 under tmux: `M-x tether-history` lists an assistant's
changes (a `tabulated-list-mode` buffer), RET shows one as a diff, `u` takes it back, and
`tether-undo` takes back the newest one; an undo lands in the open buffer as one undo step."""

import json

import pytest

from assistant import text_of_sdk
from conftest import start_tether_mode
from editor_support import wait_until

LINES = "".join(f"line {i}\n" for i in range(1, 6))


@pytest.fixture
def emacs(workspace, tmp_path):
    (workspace / "a.txt").write_text(LINES)
    (workspace / "b.txt").write_text("beta\n")
    e = start_tether_mode(workspace, tmp_path)
    e.open("a.txt")
    yield e
    e.close()


def test_the_history_lists_shows_and_takes_back_an_assistants_changes(emacs, assistant):
    r = assistant.call("edit_file", path="a.txt", old_string="line 1\n", new_string="LINE 1\n")
    assert not r.is_error, text_of_sdk(r)
    r = assistant.call("edit_file", path="b.txt", old_string="beta", new_string="BETA")
    assert not r.is_error, text_of_sdk(r)
    edited = LINES.replace("line 1", "LINE 1")
    wait_until("the edit in the buffer", lambda: emacs.state()["text"] == edited)

    emacs.eval("(tether-test-history)")
    listing = wait_until("the history", lambda: (s := emacs.shown())["mode"] == "tether-history-mode" and s)
    rows = [line for line in listing["text"].splitlines() if "edit_file" in line]
    assert len(rows) == 2, listing["text"]
    assert "b.txt +1 -1" in rows[0] and "a.txt +1 -1" in rows[1], rows  # newest first

    emacs.keys("n", "Enter")  # the a.txt change
    diff = wait_until("the change's diff", lambda: (s := emacs.shown())["mode"] == "diff-mode" and s)
    assert "-line 1\n+LINE 1" in diff["text"], diff["text"]
    emacs.keys("q")
    wait_until("back in the history", lambda: emacs.shown()["mode"] == "tether-history-mode")
    emacs.keys("u")
    wait_until("the question", lambda: (emacs.shown()["prompt"] or "").startswith("Take back tether change"))
    emacs.keys("y")

    wait_until("the undo in the buffer", lambda: emacs.state()["text"] == LINES)
    assert (emacs.root / "b.txt").read_text() == "BETA\n", "only the change picked is taken back"
    listing = wait_until("the history listed again", lambda: "undone by" in emacs.shown()["text"] and emacs.shown())
    # The undo landed as one undo step of the buffer: one `undo` brings the edit back.
    emacs.eval(f"(tether-test-undo {json.dumps(str(emacs.path))})")
    assert emacs.state()["text"] == edited

    # `tether-undo`: the newest change not taken back yet (b.txt's), after asking.
    emacs.eval("(select-window (get-buffer-window tether-test-buffer t))")
    emacs.keys("M-x")
    emacs.type("tether-undo")
    emacs.keys("Enter")
    wait_until("the question", lambda: "edit_file (b.txt +1 -1)" in (emacs.shown()["prompt"] or ""))
    emacs.keys("y")
    wait_until("b.txt taken back on disk", lambda: (emacs.root / "b.txt").read_text() == "beta\n")
