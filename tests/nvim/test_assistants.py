"""The assistants people run, for real, beside a real Neovim running tether: Claude Code, Gemini
CLI and Codex CLI (from npm, pinned by scripts/install-assistants), headless, against a scripted
model on loopback (tests/model_stub.py). Without tether's hooks its built-in tools write the disk behind the
editor's dirty buffer, and tether merges what they wrote into the buffer; with the hooks `tether
setup claude-code` installs, its Read sees the buffer and its Edit lands in the buffer, the disk
untouched."""

import time

import assistant_clis
from assistant_clis import assistant_bin  # noqa: F401  (the IDE suites take it from here)
from conftest import merge_told, no_prompt, wait_until
from model_stub import ModelStub

MAIN = "def main():\n    return 1\n"


def run_claude(editor, home, turns: list[dict]) -> ModelStub:
    """`claude -p` in the workspace; it reaches the editor's tether lsp (for its hooks) through the
    editor's runtime folder."""
    return assistant_clis.run_claude(editor.root, editor.runtime, home, turns)


def in_the_buffer_only(editor, client: str):
    """The assistant's edit of src/main.py (return 1 to 2) is in the buffer, after the unsaved
    line, as one undo step, recorded as `client`'s; the file on disk is untouched."""
    assert editor.text() == "# unsaved\ndef main():\n    return 2\n"
    assert editor.modified()
    assert (editor.root / "src" / "main.py").read_text() == MAIN, "the file on disk is untouched"
    editor.nvim.command("normal! u")
    assert editor.text() == "# unsaved\n" + MAIN, "one undo step takes the assistant's change back, and only it"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert changes[0]["tool"] == "edit_file" and changes[0]["client"] == client, changes


def test_claude_codes_built_in_edit_lands_in_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    editor.type_at(1, 0, "# unsaved\n")
    typed = "# unsaved\n" + MAIN
    time.sleep(1.1)  # the CLI's write gets a modification time of its own
    stub = run_claude(editor, tmp_path, [
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Edit", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                   "replace_all": False}},
        {"text": "main returns 2 now"},
    ])
    results = stub.tool_results()
    assert len(results) == 2 and "updated successfully" in results[1], results
    merged = "# unsaved\ndef main():\n    return 2\n"
    wait_until("the edit in the buffer", lambda: editor.text() == merged)
    assert editor.modified(), "the unsaved line is still unsaved"
    editor.nvim.command("checktime", async_=True)
    time.sleep(0.3)
    assert no_prompt(editor), "no 'changed on disk' prompt"
    editor.nvim.command("normal! u")
    assert editor.text() == typed, "one undo step takes the assistant's change back, and only it"
    editor.nvim.command("normal! \x12")
    assert editor.text() == merged
    wait_until("tether to say it merged", lambda: merge_told(editor))
    editor.nvim.command("write", async_=True)
    wait_until("the write", lambda: no_prompt(editor) and not editor.modified())
    assert main.read_text() == merged, "saving keeps both the unsaved line and the assistant's change"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert any(c["tool"] == "merge_from_disk" for c in changes), changes


def test_with_tether_setup_claude_codes_read_and_edit_meet_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    setup = assistant_clis.setup(editor.tether, "claude-code", editor.root, editor.runtime, tmp_path)
    assert "settings.json: added tether's hooks" in setup, setup
    editor.type_at(1, 0, "# unsaved\n")
    stub = run_claude(editor, tmp_path, [
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Edit", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                   "replace_all": False}},
        {"text": "main returns 2 now"},
    ])
    read, edit = stub.tool_results()
    assert read.startswith("1\t# unsaved\n2\tdef main():"), read
    assert "tether made this change in the editor's buffer" in edit and "do not make it again" in edit, edit
    in_the_buffer_only(editor, "claude-code")


def test_with_tether_setup_claude_codes_write_of_the_unsaved_buffer_lands_in_it(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    setup = assistant_clis.setup(editor.tether, "claude-code", editor.root, editor.runtime, tmp_path)
    assert "settings.json: added tether's hooks" in setup, setup
    editor.type_at(1, 0, "# unsaved\n")
    written = "def main():\n    return 3\n"
    stub = run_claude(editor, tmp_path, [
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Write", "input": {"file_path": str(main), "content": written}},
        {"text": "main returns 3 now"},
    ])
    _, write = stub.tool_results()
    assert "tether made this change in the editor's buffer" in write, write
    wait_until("the written text in the buffer", lambda: editor.text() == written)
    assert editor.modified()
    assert main.read_text() == MAIN, "the file on disk is untouched"
    editor.nvim.command("normal! u")
    assert editor.text() == "# unsaved\n" + MAIN, "one undo step takes the write back, and only it"
    changes = editor.call("history")["structuredContent"]["changesets"]
    assert (changes[0]["tool"], changes[0]["client"]) == ("write_file", "claude-code"), changes


def run_gemini(editor, home, turns: list[dict]) -> ModelStub:
    """`gemini -p` in the workspace, beside the editor."""
    return assistant_clis.run_gemini(editor.root, editor.runtime, home, turns)


def test_with_tether_setup_gemini_clis_read_and_replace_meet_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    setup = assistant_clis.setup(editor.tether, "gemini", editor.root, editor.runtime, tmp_path)
    assert "settings.json: added tether's hooks" in setup, setup
    editor.type_at(1, 0, "# unsaved\n")
    stub = run_gemini(editor, tmp_path, [
        {"tool": "read_file", "input": {"file_path": "src/main.py"}},
        {"tool": "replace", "input": {"file_path": "src/main.py", "old_string": "return 1", "new_string": "return 2",
                                      "instruction": "Return 2."}},
        {"text": "main returns 2 now"},
    ])
    read, edit = stub.tool_results()
    assert "unsaved changes" in read and "# unsaved" in read, read
    assert edit.startswith("ERROR: Tool execution blocked: tether made this change in the editor's buffer"), edit
    in_the_buffer_only(editor, "gemini-cli")


def test_with_tether_setup_codexs_apply_patch_meets_the_unsaved_buffer_and_its_sed_is_merged(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    setup = assistant_clis.setup(editor.tether, "codex", editor.root, editor.runtime, tmp_path)
    assert "hooks.json: added tether's hooks" in setup, setup
    editor.type_at(1, 0, "# unsaved\n")
    time.sleep(1.1)  # sed's write gets a modification time of its own
    stub = assistant_clis.run_codex(editor.root, editor.runtime, tmp_path, [
        {"tool": "apply_patch", "input": "*** Begin Patch\n*** Update File: src/main.py\n@@\n def main():\n"
                                         "-    return 1\n+    return 2\n*** End Patch\n"},
        {"tool": "exec_command", "input": {"cmd": "sed -i 's/def main/def start/' src/main.py"}},
        {"text": "main returns 2 now, and is called start"},
    ])
    patched, sed = stub.tool_results()
    assert "Command blocked by PreToolUse hook: tether applied this patch" in patched, patched
    assert "Process exited with code 0" in sed, sed
    merged = "# unsaved\ndef start():\n    return 2\n"
    wait_until("the patch and sed's change in the buffer", lambda: editor.text() == merged)
    assert editor.modified()
    assert main.read_text() == "def start():\n    return 1\n", "the file holds sed's change only"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert [(c["tool"], c["client"]) for c in changes[:2]] == [
        ("merge_from_disk", "another program (on disk)"), ("apply_patch", "codex")], changes
