"""Review before apply in a real Emacs 28 under tmux (tether-mode with `tether-review' set to
`ask'): an assistant's change waits in a `tether-review-mode' buffer, and the user decides with
keystrokes there, per hunk, per file or for all of it, edits a proposed text, and gives reasons.
What lands is exactly what was accepted; the tool's result says so."""

import json
import subprocess

import pytest

from assistant import text_of_sdk
from conftest import HERE, start_tether_mode
from editor_support import attach_assistant, wait_until

EDITORS_EMACS = HERE.parents[1] / "editors" / "emacs"
LINES = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture
def emacs(workspace, tmp_path):
    (workspace / "a.txt").write_text(LINES)
    (workspace / "b.txt").write_text("beta\n")
    e = start_tether_mode(workspace, tmp_path, env={"TETHER_TEST_REVIEW": "ask"})
    e.open("a.txt")
    yield e
    e.close()


PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-line 1\n+LINE 1\n@@\n-line 10\n+LINE 10\n"
    "*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch\n"
)


def review_shown(emacs) -> dict:
    return wait_until("the review buffer", lambda: (s := emacs.shown())["mode"] == "tether-review-mode" and s)


def outcome(result) -> dict:
    return json.loads(result.content[-1].text)["review"]


def answer_prompt(emacs, text: str):
    wait_until("the minibuffer to ask", lambda: emacs.shown()["prompt"] is not None)
    emacs.type(text)
    emacs.keys("Enter")


def test_one_hunk_accepted_one_rejected_with_a_reason_and_a_file_accepted(emacs, assistant):
    pending = assistant.call_async("apply_patch", patch=PATCH)
    review = review_shown(emacs)
    assert "An assistant (apply_patch) wants to change a.txt, b.txt" in review["text"], review["text"]
    assert "-line 10\n+LINE 10" in review["text"] and "-beta\n+BETA" in review["text"]
    assert emacs.state()["text"] == LINES, "nothing is applied before the user decides"

    emacs.keys("a")  # point starts on a.txt's first hunk
    emacs.keys("r")  # then it moves to the next one undecided
    answer_prompt(emacs, "keep line 10")
    emacs.keys("A")  # b.txt, whole

    r = pending.result(30)
    assert not r.is_error, text_of_sdk(r)
    o = outcome(r)
    # a.txt with only some of its hunks: accepted as a text the user made.
    assert o["accepted"] == ["b.txt"] and o["edited_by_the_user"] == ["a.txt"] and o["rejected"] == [], o
    assert o["reason"] == "keep line 10", o
    want = LINES.replace("line 1\n", "LINE 1\n", 1)
    wait_until("the accepted hunk in the buffer", lambda: emacs.state()["text"] == want)
    wait_until("b.txt changed on disk", lambda: (emacs.root / "b.txt").read_text() == "BETA\n")
    assert emacs.shown()["mode"] != "tether-review-mode", "the review buffer is gone"
    # One undo step in the buffer.
    emacs.eval(f"(tether-test-undo {json.dumps(str(emacs.path))})")
    assert emacs.state()["text"] == LINES


def test_a_proposal_edited_before_accepting_lands_as_edited_and_the_rest_rejected(emacs, assistant):
    pending = assistant.call_async("apply_patch", patch=PATCH)
    review_shown(emacs)
    emacs.keys("e")
    wait_until("the proposal's text to edit", lambda: emacs.shown()["text"].startswith("LINE 1\n"))
    emacs.keys("M->")
    emacs.type("added in review")
    emacs.keys("Enter", "C-c", "C-c")
    wait_until("back in the review", lambda: emacs.shown()["mode"] == "tether-review-mode")
    emacs.keys("C-c", "C-k")
    answer_prompt(emacs, "not b")

    r = pending.result(30)
    assert not r.is_error, text_of_sdk(r)
    o = outcome(r)
    assert o["accepted"] == [] and o["edited_by_the_user"] == ["a.txt"] and o["rejected"] == ["b.txt"], o
    assert o["reason"] == "not b", o
    want = LINES.replace("line 1\n", "LINE 1\n", 1).replace("line 10\n", "LINE 10\n") + "added in review\n"
    wait_until("the edited text in the buffer", lambda: emacs.state()["text"] == want)
    assert (emacs.root / "b.txt").read_text() == "beta\n"


def test_rejecting_everything_changes_nothing_and_the_tool_says_why(emacs, assistant):
    pending = assistant.call_async("apply_patch", patch=PATCH)
    review_shown(emacs)
    emacs.keys("C-c", "C-k")
    answer_prompt(emacs, "wrong approach")
    r = pending.result(30)
    assert r.is_error
    assert "rejected" in text_of_sdk(r) and "wrong approach" in text_of_sdk(r), text_of_sdk(r)
    assert emacs.state()["text"] == LINES
    assert (emacs.root / "b.txt").read_text() == "beta\n"


def test_killing_the_review_buffer_rejects_the_change(emacs, assistant):
    pending = assistant.call_async("apply_patch", patch=PATCH)
    review_shown(emacs)
    emacs.eval("(kill-buffer (window-buffer (selected-window)))")
    r = pending.result(30)
    assert r.is_error and "the review was closed" in text_of_sdk(r), text_of_sdk(r)
    assert emacs.state()["text"] == LINES


def test_a_review_the_server_stopped_waiting_for_is_withdrawn(workspace, tmp_path):
    (workspace / "a.txt").write_text(LINES)
    (workspace / "b.txt").write_text("beta\n")
    emacs = start_tether_mode(workspace, tmp_path, env={"TETHER_TEST_REVIEW": "ask", "TETHER_TEST_REVIEW_TIMEOUT": "1500"})
    assistant = None
    try:
        emacs.open("a.txt")
        assistant = attach_assistant(emacs.root, emacs.runtime)
        pending = assistant.call_async("apply_patch", patch=PATCH)
        review_shown(emacs)
        r = pending.result(30)
        assert r.is_error and "nothing was changed" in text_of_sdk(r), text_of_sdk(r)
        # Nobody answered: the server's `$/cancelRequest` takes the review down.
        wait_until("the review buffer to go", lambda: emacs.shown()["mode"] != "tether-review-mode")
        assert emacs.eval("(seq-count (lambda (b) (string-prefix-p \"*tether review\" (buffer-name b))) (buffer-list))") == "0"
        assert "stopped waiting for your review" in emacs.eval("(with-current-buffer \"*Messages*\" (buffer-string))")
        assert emacs.state()["text"] == LINES
        assert (workspace / "b.txt").read_text() == "beta\n"
    finally:
        if assistant is not None:
            assistant.close()
        emacs.close()


def test_with_ediff_a_hunk_taken_back_there_lands_as_the_user_left_the_text(workspace, tmp_path):
    (workspace / "a.txt").write_text(LINES)
    (workspace / "b.txt").write_text("beta\n")
    emacs = start_tether_mode(workspace, tmp_path, env={"TETHER_TEST_REVIEW": "ask", "TETHER_TEST_REVIEW_EDIFF": "1"})
    assistant = None

    def ediff_at(path: str) -> int:
        """Waits for the ediff session of `path`; returns its current difference (0-based)."""
        wait_until(f"ediff of {path}", lambda: emacs.eval(
            f'(if (get-buffer "*tether proposal {path}*") (and (get-buffer "*Ediff Control Panel*") t) nil)') == "t")
        return int(emacs.eval('(with-current-buffer "*Ediff Control Panel*" ediff-current-difference)'))

    def quit_ediff(path: str):
        emacs.keys("q")
        wait_until("ediff to ask", lambda: (emacs.shown()["prompt"] or "").startswith("Quit this Ediff session"))
        emacs.keys("y")
        wait_until("the proposed text", lambda: emacs.shown()["buffer"] == f"*tether proposal {path}*")

    try:
        emacs.open("a.txt")
        assistant = attach_assistant(emacs.root, emacs.runtime)
        pending = assistant.call_async("apply_patch", patch=PATCH)
        current = ediff_at("a.txt")
        for _ in range(1 - current):  # to the second difference: line 10
            emacs.keys("n")
        wait_until("the second difference", lambda: ediff_at("a.txt") == 1)
        emacs.keys("a")  # line 10's current text over the proposed one
        quit_ediff("a.txt")
        assert "LINE 1\n" in emacs.shown()["text"] and "line 10\n" in emacs.shown()["text"]
        emacs.keys("C-c", "C-c")
        ediff_at("b.txt")
        quit_ediff("b.txt")
        emacs.keys("C-c", "C-c")
        r = pending.result(30)
        assert not r.is_error, text_of_sdk(r)
        assert outcome(r) == {"decision": "accepted", "accepted": ["b.txt"], "rejected": [],
                              "edited_by_the_user": ["a.txt"]}, outcome(r)
        assert emacs.state()["text"] == LINES.replace("line 1\n", "LINE 1\n", 1)
        assert (workspace / "b.txt").read_text() == "BETA\n"
    finally:
        if assistant is not None:
            assistant.close()
        emacs.close()


@pytest.mark.parametrize(
    "old, new, take, want",
    [
        # Mixed line breaks: every line not taken keeps its own.
        ("a\r\nb\nc\r\n", "A\r\nb\nC\r\n", [True, False], "A\r\nb\nc\r\n"),
        ("a\r\nb\nc\r\n", "A\r\nb\nC\r\n", [False, True], "a\r\nb\nC\r\n"),
        # An insertion, a deletion, a last line without a break.
        ("x\ny\nz", "x\nnew\ny\n", [True, False], "x\nnew\ny\nz"),
        ("x\ny\nz", "x\nnew\ny\n", [False, True], "x\ny\n"),
    ],
)
def test_taking_some_hunks_keeps_every_other_line_as_it_was(tmp_path, old, new, take, want):
    """`tether--review-merge` on the hunks `diff` finds (zero lines of context, so each change is
    a hunk of its own), in a batch Emacs."""
    (tmp_path / "old").write_bytes(old.encode())
    (tmp_path / "new").write_bytes(new.encode())
    script = f"""
(let* ((coding-system-for-read 'utf-8-unix)
       (old (with-temp-buffer (insert-file-contents "{tmp_path / 'old'}") (buffer-string)))
       (new (with-temp-buffer (insert-file-contents "{tmp_path / 'new'}") (buffer-string)))
       (out (with-temp-buffer
              (call-process diff-command nil t nil "-U0" "{tmp_path / 'old'}" "{tmp_path / 'new'}")
              (buffer-string)))
       (hunks nil) (take '({" ".join("t" if t else "nil" for t in take)})))
  (with-temp-buffer
    (insert out)
    (goto-char (point-min))
    (while (re-search-forward "^@@ -\\\\([0-9]+\\\\)\\\\(?:,\\\\([0-9]+\\\\)\\\\)? \\\\+\\\\([0-9]+\\\\)\\\\(?:,\\\\([0-9]+\\\\)\\\\)? @@" nil t)
      (let ((num (lambda (i) (if (match-string i) (string-to-number (match-string i)) 1))))
        (push (tether--hunk-make :old-start (funcall num 1) :old-count (funcall num 2)
                                 :new-start (funcall num 3) :new-count (funcall num 4)
                                 :decision (if (pop take) 'accept 'reject))
              hunks))))
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region (tether--review-merge old new (nreverse hunks)) nil "{tmp_path / 'out'}")))
"""
    done = subprocess.run(
        ["emacs", "-Q", "--batch", "-L", str(EDITORS_EMACS), "-l", "tether-review", "--eval", script],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_bytes() == want.encode()
