"""tether lsp in a real Emacs through lsp-mode 8.0, as an add-on server beside the buffer's own
language server. lsp-mode reports each change at once, checks the version of an edit unless it
is 0, and answers a refused edit `applied: false` with no reason."""

from assistant import Assistant, text_of_sdk
from conftest import tether_bin, text_of, wait_until

NOTES = "alpha\nbeta\ngamma\n"


def settled(emacs, expected: str) -> dict:
    def same():
        state = emacs.state()
        mirrored = text_of(emacs.peek("read_file", path="notes.txt"))
        return state if state["text"] == expected and all(l in mirrored for l in expected.splitlines()) else None

    return wait_until(f"Emacs and tether to agree on {expected!r}", same)


def test_an_edit_run_from_emacs_lands_once_and_reports_success(lsp_mode):
    emacs = lsp_mode
    emacs.goto(2, 4)
    emacs.type(" typed")
    wait_until("lsp-mode to report the typing", lambda: "beta typed" in text_of(emacs.peek("read_file", path="notes.txt")))

    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    assert answer["result"].get("isError") is not True, answer
    assert "applied to the open editor buffer, which has unsaved changes" in text_of(answer)
    state = settled(emacs, "alpha\nbeta typed\nGAMMA\n")
    assert state["applied"] == 1
    assert (emacs.root / "notes.txt").read_text() == NOTES


def test_typing_then_an_edit_at_once_lands_both_once(lsp_mode):
    emacs = lsp_mode
    emacs.goto(1, 5)
    emacs.type(" one")
    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    assert answer["result"].get("isError") is not True, answer
    state = settled(emacs, "alpha one\nbeta\nGAMMA\n")
    assert state["applied"] == 1


def test_an_edit_through_an_attached_tether_mcp_lands_once_and_reports_success(lsp_mode):
    emacs = lsp_mode
    emacs.goto(1, 5)
    emacs.type(" typed")
    wait_until("lsp-mode to report the typing", lambda: "alpha typed" in text_of(emacs.peek("read_file", path="notes.txt")))
    wait_until("tether lsp's discovery file", lambda: list((emacs.runtime / "tether").glob("*.json")))
    assistant = Assistant(tether_bin(), emacs.root, emacs.runtime)
    try:
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
        read = assistant.call("read_file", path="notes.txt")
    finally:
        assistant.close()

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer, which has unsaved changes" in text_of_sdk(result)
    assert "alpha typed" in text_of_sdk(read) and "BETA" in text_of_sdk(read), text_of_sdk(read)
    state = settled(emacs, "alpha typed\nBETA\ngamma\n")
    assert state["applied"] == 1
    assert (emacs.root / "notes.txt").read_text() == NOTES
