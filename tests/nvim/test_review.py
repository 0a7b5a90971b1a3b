"""Review before apply in a real Neovim with tether's plugin (`review = {mode = "ask"}`): a tool's
change, the editor's or an assistant's over the bridge, waits in a review tab, and exactly what the
user lets through lands, one undo step per file, while what they reject stays byte for byte."""

import json

import pytest

from assistant import text_of_sdk
from conftest import Editor, text_of, wait_until
from editor_support import attach_assistant

A = "alpha\nsame\n"
B = "beta\nsame\n"
SEVEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
PATCH = (
    "*** Begin Patch\n"
    "*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n"
    "*** Update File: b.txt\n@@\n-beta\n+BETA\n"
    "*** End Patch\n"
)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "a.txt").write_text(A)
    (root / "b.txt").write_text(B)
    (root / "c.txt").write_text(SEVEN)
    return root


def reviewing_editor(project, tmp_path, timeout: int) -> Editor:
    home = tmp_path / "home"
    home.mkdir()
    options = json.dumps({"review": {"mode": "ask", "timeout": timeout}})
    return Editor(project, home, "a.txt", plugin=True, env={"TETHER_PLUGIN_OPTIONS": options})


@pytest.fixture
def editor(project, tmp_path):
    e = reviewing_editor(project, tmp_path, 60000)
    yield e
    e.close()


@pytest.fixture
def impatient_editor(project, tmp_path):
    e = reviewing_editor(project, tmp_path, 300)
    yield e
    e.close()


def review_tab(editor: Editor, path: str):
    """Waits until the review tab shows the proposed text of `path`, and returns its lines."""
    wait_until(
        f"the review tab showing {path}",
        lambda: editor.lua(
            "return #require('tether.review').pending > 0"
            " and vim.api.nvim_buf_get_name(0):match('^tether://review/.*/' .. ...) ~= nil",
            path,
        ),
    )
    return editor.nvim.current.buffer[:]


def review_of(result: dict) -> dict:
    return json.loads(result["content"][-1]["text"])["review"]


def buffer_text(editor: Editor, path: str) -> str:
    return editor.lua(
        "local b = vim.fn.bufnr(...) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n') .. '\\n'",
        str(editor.root / path),
    )


def answer_prompt(editor: Editor, keys: str, reply: str):
    """Types `keys`, waits for the prompt they open, and answers it with `reply`. Apart: typed at
    once, `grn` would be Neovim's own rename mapping, longer than the review's `gr`."""
    editor.nvim.input(keys)
    wait_until(f"the prompt of {keys}", lambda: editor.nvim.api.get_mode()["mode"] == "c")
    editor.nvim.input(reply + "<CR>")


def undo_in(editor: Editor, path: str):
    editor.nvim.command("buffer " + str(editor.root / path))
    editor.nvim.feedkeys("u", "nx", False)


def test_one_file_accepted_the_other_rejected_with_a_reason(editor):
    call = editor.start_call("apply_patch", {"patch": PATCH})
    assert review_tab(editor, "a.txt") == ["ALPHA", "same"]
    winbar = editor.lua("return vim.wo.winbar")
    assert "apply_patch by editor" in winbar, winbar
    editor.nvim.input("fa")
    review_tab(editor, "b.txt")
    answer_prompt(editor, "fr", "generated file")
    r = editor.result(call)
    assert r["isError"] is False, text_of(r)
    assert review_of(r) == {
        "decision": "partly accepted",
        "accepted": ["a.txt"],
        "rejected": ["b.txt"],
        "reason": "generated file",
    }
    wait_until("the review tab to close", lambda: len(editor.nvim.tabpages) == 1)
    assert buffer_text(editor, "a.txt") == "ALPHA\nsame\n"
    assert (editor.root / "a.txt").read_text() == "ALPHA\nsame\n"  # a clean buffer is saved
    assert (editor.root / "b.txt").read_bytes() == B.encode()
    assert editor.lua("return #require('tether.review').pending") == 0
    undo_in(editor, "a.txt")
    assert buffer_text(editor, "a.txt") == A, "one undo step takes the whole change back"


def test_a_rejected_change_leaves_buffers_and_disk_as_they_were(editor):
    call = editor.start_call("apply_patch", {"patch": PATCH})
    review_tab(editor, "a.txt")
    answer_prompt(editor, "gr", "not now")
    r = editor.result(call)
    assert r["isError"] is True, text_of(r)
    assert "not now" in text_of(r), text_of(r)
    assert buffer_text(editor, "a.txt") == A
    assert editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(editor.root / "a.txt")) is False
    assert (editor.root / "a.txt").read_bytes() == A.encode()
    assert (editor.root / "b.txt").read_bytes() == B.encode()
    assert editor.lua("return _G.tether_apply_edits") == 0


def test_text_edited_in_the_review_is_what_lands(editor):
    call = editor.start_call("apply_patch", {"patch": PATCH})
    review_tab(editor, "a.txt")
    # Typed in the proposed text, as the user would, then everything accepted.
    editor.nvim.feedkeys(editor.nvim.replace_termcodes("ggA, reviewed<Esc>"), "nx", False)
    editor.nvim.input("ga")
    r = editor.result(call)
    assert r["isError"] is False, text_of(r)
    review = review_of(r)
    # The server lists a file the user edited apart from the ones accepted as proposed.
    assert (review["accepted"], review["edited_by_the_user"], review["rejected"]) == (["b.txt"], ["a.txt"], []), review
    assert buffer_text(editor, "a.txt") == "ALPHA, reviewed\nsame\n"
    assert (editor.root / "a.txt").read_text() == "ALPHA, reviewed\nsame\n"
    assert (editor.root / "b.txt").read_text() == "BETA\nsame\n"


def test_accepting_one_hunk_lands_exactly_that_hunk_as_one_undo_step(editor):
    editor.nvim.command("edit " + str(editor.root / "c.txt"))
    editor.wait_attached()
    patch = "*** Begin Patch\n*** Update File: c.txt\n@@\n-one\n+ONE\n@@\n-seven\n+SEVEN\n*** End Patch\n"
    call = editor.start_call("apply_patch", {"patch": patch})
    assert review_tab(editor, "c.txt") == ["ONE", "two", "three", "four", "five", "six", "SEVEN"]
    editor.nvim.current.window.cursor = (7, 0)
    editor.nvim.input("gh")
    r = editor.result(call)
    assert r["isError"] is False, text_of(r)
    assert review_of(r)["edited_by_the_user"] == ["c.txt"], r
    want = "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"
    assert buffer_text(editor, "c.txt") == want
    assert (editor.root / "c.txt").read_text() == want
    wait_until("the review tab to close", lambda: len(editor.nvim.tabpages) == 1)
    undo_in(editor, "c.txt")
    assert buffer_text(editor, "c.txt") == SEVEN


def test_a_review_the_server_stopped_waiting_for_is_withdrawn_and_changes_nothing(impatient_editor):
    editor = impatient_editor
    call = editor.start_call("apply_patch", {"patch": PATCH})
    review_tab(editor, "a.txt")
    r = editor.result(call)
    assert r["isError"] is True, text_of(r)
    assert "nothing was changed" in text_of(r), text_of(r)
    # Nobody answered: the server's `$/cancelRequest` takes the review down.
    wait_until("the review tab to close", lambda: len(editor.nvim.tabpages) == 1)
    assert editor.lua("return #require('tether.review').pending") == 0
    assert "stopped waiting for your review" in editor.lua("return vim.api.nvim_exec2('messages', {output = true}).output")
    assert buffer_text(editor, "a.txt") == A
    assert (editor.root / "a.txt").read_bytes() == A.encode()
    assert (editor.root / "b.txt").read_bytes() == B.encode()
    assert editor.lua("return _G.tether_apply_edits") == 0


def test_an_assistants_change_waits_for_the_same_review(editor):
    assistant = attach_assistant(editor.root, editor.runtime)
    try:
        pending = assistant.call_async("apply_patch", patch=PATCH)
        review_tab(editor, "a.txt")
        winbar = editor.lua("return vim.wo.winbar")
        assert "apply_patch by assistant" in winbar, winbar
        assert not pending.done(), "the assistant waits for the answer"
        # While the user decides, the assistant hears that the call is still running.
        wait_until("progress while the review waits", lambda: assistant.progress)
        assert not pending.done()
        answer_prompt(editor, "gr", "use the template")
        r = pending.result(timeout=30)
        assert r.is_error, text_of_sdk(r)
        assert "use the template" in text_of_sdk(r), text_of_sdk(r)
    finally:
        assistant.close()
    assert buffer_text(editor, "a.txt") == A
    assert (editor.root / "a.txt").read_bytes() == A.encode()
    assert (editor.root / "b.txt").read_bytes() == B.encode()
