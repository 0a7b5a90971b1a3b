"""tether lsp in a real Emacs through lsp-mode 8.0, as an add-on server beside the buffer's own
language server. lsp-mode reports each change at once, checks the version of an edit unless it
is 0, and answers a refused edit `applied: false` with no reason."""

from assistant import text_of_sdk
from conftest import text_of, wait_until
from editor_support import attach_assistant

NOTES = "alpha\nbeta\ngamma\n"


def test_an_edit_run_from_emacs_lands_once_and_reports_success(lsp_mode):
    emacs = lsp_mode
    emacs.goto(2, 4)
    emacs.type(" typed")
    wait_until("lsp-mode to report the typing", lambda: emacs.sees("beta typed"))

    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    assert answer["result"].get("isError") is not True, answer
    assert "applied to the open editor buffer, which has unsaved changes" in text_of(answer)
    state = emacs.settled("alpha\nbeta typed\nGAMMA\n")
    assert state["applied"] == 1
    assert (emacs.root / "notes.txt").read_text() == NOTES


def test_typing_then_an_edit_at_once_lands_both_once(lsp_mode):
    emacs = lsp_mode
    emacs.goto(1, 5)
    emacs.type(" one")
    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    assert answer["result"].get("isError") is not True, answer
    state = emacs.settled("alpha one\nbeta\nGAMMA\n")
    assert state["applied"] == 1


def test_an_edit_through_an_attached_tether_mcp_lands_once_and_reports_success(lsp_mode):
    emacs = lsp_mode
    emacs.goto(1, 5)
    emacs.type(" typed")
    wait_until("lsp-mode to report the typing", lambda: emacs.sees("alpha typed"))
    assistant = attach_assistant(emacs.root, emacs.runtime)
    try:
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
        read = assistant.call("read_file", path="notes.txt")
    finally:
        assistant.close()

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer, which has unsaved changes" in text_of_sdk(result)
    assert "alpha typed" in text_of_sdk(read) and "BETA" in text_of_sdk(read), text_of_sdk(read)
    state = emacs.settled("alpha typed\nBETA\ngamma\n")
    assert state["applied"] == 1
    assert (emacs.root / "notes.txt").read_text() == NOTES
