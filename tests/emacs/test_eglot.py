"""tether lsp in a real Emacs through eglot 1.9, the client whose rhythm is hardest for a server
that edits buffers: it reports typing from a 0.5 s idle timer, sends nothing while a request of
its own waits, checks the version of every edit, and by default asks before applying one.

Each test counts the `workspace/applyEdit` requests eglot handled (an edit is never sent twice)
and the prompts it showed."""

import time

from assistant import text_of_sdk
from conftest import text_of, wait_until
from editor_support import attach_assistant

NOTES = "alpha\nbeta\ngamma\n"


def test_an_edit_run_from_emacs_lands_once_and_reports_success(emacs):
    emacs.goto(2, 4)
    emacs.type(" typed")
    wait_until("eglot to report the typing", lambda: emacs.sees("beta typed"))

    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    # eglot applied the edit and cannot report the change while its own request waits: tether
    # says exactly that, and checks the change when it arrives.
    assert answer["result"].get("isError") is not True, answer
    assert "notes.txt: sent to the open editor buffer; the editor reports it applied" in text_of(answer)
    state = emacs.settled("alpha\nbeta typed\nGAMMA\n")
    assert state["applied"] == 1, "one tool call, one workspace edit"
    assert state["prompts"] == []
    assert state["modified"] is True
    assert (emacs.root / "notes.txt").read_text() == NOTES, "the dirty buffer's file is untouched"

    # tether has learnt that this editor reports changes only after its command returns, and
    # answers the next command at once instead of waiting for them.
    started = time.monotonic()
    answer = emacs.call("edit_file", path="notes.txt", old_string="alpha", new_string="ALPHA")
    took = time.monotonic() - started
    assert answer["result"].get("isError") is not True, answer
    assert took < 1.0, f"the answer took {took:.2f} s"
    assert emacs.settled("ALPHA\nbeta typed\nGAMMA\n")["applied"] == 2


def test_a_call_run_before_eglot_reported_the_typing_changes_nothing_and_says_why(emacs):
    emacs.goto(1, 5)
    # Typed and run in one go: eglot's idle timer has not fired, and it will not while the
    # command's request waits, so tether sees an older version than Emacs has.
    emacs.type(" one")
    call = emacs.start_call("edit_file", {"path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"})
    answer = emacs.result(call)

    assert answer["result"].get("isError") is True, answer
    message = text_of(answer)
    assert "conflict" in message and "nothing was changed" in message and "again" in message, message
    state = emacs.settled("alpha one\nbeta\ngamma\n")
    assert state["applied"] == 1, "refused once, not sent again"

    # Run again once eglot has reported the typing: it lands.
    answer = emacs.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")
    assert answer["result"].get("isError") is not True, answer
    assert emacs.settled("alpha one\nbeta\nGAMMA\n")["applied"] == 2


def test_an_edit_through_an_attached_tether_mcp_lands_once_and_reports_success(emacs, assistant):
    emacs.goto(1, 5)
    emacs.type(" typed")
    wait_until("eglot to report the typing", lambda: emacs.sees("alpha typed"))

    result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer, which has unsaved changes" in text_of_sdk(result)
    state = emacs.settled("alpha typed\nBETA\ngamma\n")
    assert state["applied"] == 1
    assert state["prompts"] == []
    assert (emacs.root / "notes.txt").read_text() == NOTES


def test_read_file_and_grep_through_tether_mcp_see_the_unsaved_buffer(emacs, assistant):
    emacs.goto(3, 5)
    emacs.type(" unsaved words")
    wait_until("eglot to report the typing", lambda: emacs.sees("unsaved words"))

    read = assistant.call("read_file", path="notes.txt")
    assert not read.is_error, text_of_sdk(read)
    assert "gamma unsaved words" in text_of_sdk(read)
    found = assistant.call("grep", pattern="unsaved", output_mode="content")
    assert not found.is_error, text_of_sdk(found)
    assert "notes.txt" in text_of_sdk(found) and "gamma unsaved words" in text_of_sdk(found)
    assert (emacs.root / "notes.txt").read_text() == NOTES


def test_a_declined_confirmation_is_rejected_after_one_prompt(confirming_emacs):
    emacs = confirming_emacs
    assistant = attach_assistant(emacs.root, emacs.runtime)
    try:
        answer = assistant.call_async("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
        wait_until("eglot's prompt", lambda: "Proceed?" in emacs.screen())
        emacs.keys("n")
        result = answer.result(30)
    finally:
        assistant.close()

    assert result.is_error
    message = text_of_sdk(result)
    assert "rejected" in message and "User cancelled server edit" in message, message
    assert "nothing was changed" in message
    time.sleep(1.0)  # a second prompt, were one coming, would show by now
    state = emacs.state()
    assert len(state["prompts"]) == 1, state["prompts"]
    assert state["applied"] == 1
    assert state["text"] == NOTES
    assert state["minibuffer"] is False


def test_an_accepted_confirmation_lands_once(confirming_emacs):
    emacs = confirming_emacs
    call = emacs.start_call("edit_file", {"path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA"})
    wait_until("eglot's prompt", lambda: "Proceed?" in emacs.screen())
    emacs.keys("y")
    answer = emacs.result(call)

    assert answer["result"].get("isError") is not True, answer
    state = emacs.settled("ALPHA\nbeta\ngamma\n")
    assert len(state["prompts"]) == 1
    assert state["applied"] == 1
    # The buffer was clean, so tether writes the new text to the file too (eglot cannot save
    # on request); Emacs sees the file equal to its buffer and does not ask about it.
    wait_until("the file to be saved", lambda: (emacs.root / "notes.txt").read_text() == "ALPHA\nbeta\ngamma\n")
    emacs.goto(3, 5)
    emacs.type("!")
    state = emacs.settled("ALPHA\nbeta\ngamma!\n")
    assert "changed on disk" not in emacs.screen()
    assert len(state["prompts"]) == 1
