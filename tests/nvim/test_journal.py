"""The change journal from Neovim (issue 22): an assistant's edit through an attached `tether mcp`
lands in the open buffer; `:Tether history`, through tether's plugin, lists it under the name the
assistant gave in `initialize`; `:Tether undo ID` takes it back as one edit, which one `u` in
Neovim reverses; a later edit of the user's elsewhere in the file survives the undo, and one over
the same lines makes the undo fail, naming them, with nothing changed.

Every tether process runs with the test's own XDG_STATE_HOME, so no test reads or writes another
test's journal (or the user's)."""

import functools
import re

import pytest
from mcp import ClientSession
from mcp.types import Implementation

import assistant as assistant_module
from assistant import text_of_sdk
from conftest import Editor, text_of, wait_until
from editor_support import attach_assistant

NOTES = "one\ntwo\nthree\nfour\nfive\n"
EDITED = "one\nTWO\nthree\nfour\nfive\n"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "notes.txt").write_text(NOTES)
    return root


@pytest.fixture
def editor(project, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(project, home, "notes.txt", plugin=True)
    # What the plugin reports (undo results, failures), and what `vim.ui.select` is offered.
    e.lua(
        "_G.notes = {}"
        " vim.notify = function(msg, level) table.insert(_G.notes, {msg = msg, level = level}) end"
        " vim.ui.select = function(items, opts, on_choice)"
        "   _G.offered = {lines = vim.tbl_map(opts.format_item, items), items = items, prompt = opts.prompt}"
        "   _G.choose = on_choice"
        " end"
    )
    yield e
    e.close()


@pytest.fixture
def assistant(editor, monkeypatch):
    """An MCP SDK client named `e2e-assistant 1.0` in `initialize`, attached to the editor's tether
    lsp, its `tether mcp` sharing the editor's XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(editor.state_home))
    named = functools.partial(ClientSession, client_info=Implementation(name="e2e-assistant", version="1.0"))
    monkeypatch.setattr(assistant_module, "ClientSession", named)
    a = attach_assistant(editor.root, editor.runtime)
    yield a
    a.close()


def buffer_text(editor: Editor) -> str:
    return editor.lua(
        "local b = vim.fn.bufnr(...) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n') .. '\\n'",
        str(editor.root / "notes.txt"),
    )


def assistant_edits_line_two(editor: Editor, assistant) -> None:
    r = assistant.call("edit_file", path="notes.txt", old_string="two", new_string="TWO")
    assert not r.is_error, text_of_sdk(r)
    assert buffer_text(editor) == EDITED, "the assistant's edit lands in the open buffer"


def history(editor: Editor, args: str = "") -> dict:
    """Runs `:Tether history ARGS` and returns what it offered to pick from."""
    editor.lua("_G.offered = nil")
    before = editor.lua("return #_G.notes")
    editor.nvim.command("Tether history " + args)
    offered = wait_until("the history list", lambda: editor.lua("return _G.offered or #_G.notes > ...", before))
    if offered is True:
        pytest.fail(f"no history list: {editor.lua('return _G.notes[#_G.notes]')}")
    return offered


def note(editor: Editor, index: int) -> dict:
    """The plugin's `index`-th message (1-based), once it came."""
    return wait_until(f"message {index} of the plugin", lambda: editor.lua("return _G.notes[...]", index))


def type_on_line(editor: Editor, row: int, text: str) -> None:
    """Appends `text` to line `row` as keystrokes, and waits until tether has the new text."""
    editor.nvim.command("buffer " + str(editor.root / "notes.txt"))
    editor.nvim.current.window.cursor = (row, 0)
    editor.nvim.feedkeys(editor.nvim.replace_termcodes("A" + text + "<Esc>"), "nx", False)
    wait_until("the typed text to reach tether", lambda: text in text_of(editor.call("read_file", path="notes.txt")))


def test_history_lists_the_assistants_edit_and_undo_takes_it_back_in_one_step(editor, assistant):
    assistant_edits_line_two(editor, assistant)

    offered = history(editor, "%")
    (changeset,) = offered["items"]
    assert changeset["client"] == "e2e-assistant 1.0", changeset
    assert changeset["tool"] == "edit_file", changeset
    assert [(f["path"], f["op"]) for f in changeset["files"]] == [("notes.txt", "edit")], changeset
    assert "undone_by" not in changeset, changeset
    cid = changeset["id"]
    (line,) = offered["lines"]
    assert re.fullmatch(rf"#{cid} edit_file: .+ — e2e-assistant 1\.0, (just now|\d+ s ago)", line), line
    assert offered["prompt"] == "tether history of notes.txt", offered["prompt"]

    # Picked: its tab shows the text before and after the change side by side.
    editor.lua("_G.choose(_G.offered.items[1])")
    wait_until("the changeset's tab", lambda: len(editor.nvim.tabpages) == 2)
    panes = editor.lua(
        "return vim.tbl_map(function(w) local b = vim.api.nvim_win_get_buf(w)"
        " return {vim.api.nvim_buf_get_name(b), vim.api.nvim_buf_get_lines(b, 0, -1, false), vim.wo[w].diff} end,"
        " vim.api.nvim_tabpage_list_wins(0))"
    )
    assert panes == [
        [f"tether://history/{cid}/before/notes.txt", NOTES.splitlines(), True],
        [f"tether://history/{cid}/after/notes.txt", EDITED.splitlines(), True],
    ], panes
    editor.nvim.input("q")
    wait_until("the tab to close", lambda: len(editor.nvim.tabpages) == 1)

    editor.nvim.command(f"Tether undo {cid}")
    done = note(editor, 1)
    assert done["level"] == 2, done  # vim.log.levels.INFO
    assert done["msg"].startswith(f"undid changeset {cid} (edit_file by e2e-assistant 1.0): notes.txt"), done
    assert buffer_text(editor) == NOTES
    wait_until("the undone text saved", lambda: (editor.root / "notes.txt").read_text() == NOTES)

    # The undo is in the history, and the edit is marked undone.
    offered = history(editor)
    undo, edit = offered["items"]
    assert undo["tool"] == "undo" and undo["undoes"] == [cid] and undo["client"] == "editor", undo
    assert edit["id"] == cid and edit["undone_by"] == undo["id"], edit
    assert offered["lines"][1].endswith(f"[undone by #{undo['id']}]"), offered["lines"]

    # One `u` takes the whole undo back: the assistant's change is there again.
    editor.nvim.command("buffer " + str(editor.root / "notes.txt"))
    editor.nvim.feedkeys("u", "nx", False)
    assert buffer_text(editor) == EDITED


def test_undo_keeps_a_later_user_edit_elsewhere_in_the_file(editor, assistant):
    assistant_edits_line_two(editor, assistant)
    type_on_line(editor, 5, " (mine)")
    cid = history(editor, "notes.txt")["items"][0]["id"]

    editor.nvim.command(f"Tether undo #{cid}")
    done = note(editor, 1)
    assert done["level"] == 2 and done["msg"].startswith(f"undid changeset {cid} "), done
    assert buffer_text(editor) == "one\ntwo\nthree\nfour\nfive (mine)\n"


def test_undo_over_lines_the_user_changed_since_fails_naming_them(editor, assistant):
    assistant_edits_line_two(editor, assistant)
    type_on_line(editor, 2, "!")
    cid = history(editor)["items"][0]["id"]
    apply_edits = editor.lua("return _G.tether_apply_edits")

    editor.nvim.command(f"Tether undo {cid}")
    failed = note(editor, 1)
    assert failed["level"] == 4, failed  # vim.log.levels.ERROR
    assert failed["msg"].startswith(f"tether: undo {cid} failed: "), failed
    assert "notes.txt" in failed["msg"] and re.search(r"\blines? 2\b", failed["msg"]), failed
    assert buffer_text(editor) == "one\nTWO!\nthree\nfour\nfive\n", "nothing was undone"
    assert editor.lua("return _G.tether_apply_edits") == apply_edits, "no edit was sent"
    assert "undone_by" not in history(editor)["items"][0]
