"""Another program changes the file of a buffer with unsaved changes, in a real Neovim with tether's
plugin: the change is merged into the buffer as one undo step, the unsaved text kept, the disk left
as the other program wrote it; neither `:checktime` nor the next `:write` asks about the file
changed on disk; a change over the unsaved lines is not merged and the user is given the choice."""

import os
import time

from conftest import merge_told, no_prompt, wait_until

MAIN = "def main():\n    return 1\n"


def write_like_sed(path, text: str):
    """A new file renamed over the old one, as `sed -i` writes."""
    tmp = path.with_name("." + path.name + ".sed")
    tmp.write_text(text)
    os.replace(tmp, path)



def test_a_change_on_disk_is_merged_into_the_unsaved_buffer_without_a_prompt(plugin_editor):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    editor.type_at(1, 0, "# unsaved\n")
    assert editor.modified()
    typed = "# unsaved\n" + MAIN
    time.sleep(1.1)  # a new modification time, whole seconds apart on any file system
    write_like_sed(main, "def main():\n    return 2  # from sed\n")
    merged = "# unsaved\ndef main():\n    return 2  # from sed\n"
    wait_until("the merged buffer", lambda: editor.text() == merged)
    assert editor.modified(), "the unsaved change is still unsaved"
    assert main.read_text() == "def main():\n    return 2  # from sed\n", "the file is as sed left it"

    # Neovim's own check of the file asks nothing.
    editor.nvim.command("checktime", async_=True)
    time.sleep(0.3)
    assert no_prompt(editor), "no 'changed on disk' prompt at :checktime"
    assert editor.text() == merged

    # One undo step takes the merge back, and only it.
    editor.nvim.command("normal! u")
    assert editor.text() == typed
    editor.nvim.command("normal! \x12")  # <C-r>
    assert editor.text() == merged

    # The next :write asks nothing either, and writes the merged text (once tether said it merged;
    # a write before that gets Neovim's usual warning).
    wait_until("tether to say it merged", lambda: merge_told(editor))
    editor.nvim.command("write", async_=True)
    wait_until("the write", lambda: no_prompt(editor) and not editor.modified())
    assert main.read_text() == merged

    # The journal lists the change under the program on disk.
    history = editor.call("history")
    assert history["isError"] is False, history
    changes = history["structuredContent"]["changesets"]
    assert any(c["tool"] == "merge_from_disk" and c["client"] == "another program (on disk)" for c in changes), changes


def record_choices(editor):
    """vim.ui.select records what it was asked and picks nothing."""
    editor.lua(
        "_G.tether_choices = {}"
        " vim.ui.select = function(items, opts, on_choice)"
        "   table.insert(_G.tether_choices, {items = items, prompt = opts.prompt})"
        "   on_choice(nil)"
        " end"
    )


def test_a_write_after_a_merge_still_warns_when_the_file_changed_again_unmerged(plugin_editor):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    record_choices(editor)
    editor.type_at(1, 0, "# unsaved\n")
    time.sleep(1.1)
    write_like_sed(main, "def main():\n    return 2\n")
    wait_until("the merged buffer", lambda: editor.text() == "# unsaved\ndef main():\n    return 2\n")
    # The file changes again, at the very place of the unsaved line: not merged.
    time.sleep(1.1)
    write_like_sed(main, "# theirs\ndef main():\n    return 2\n")
    wait_until("the choice", lambda: editor.lua("return _G.tether_choices[1]"))
    editor.nvim.command("write", async_=True)
    wait_until("Neovim's own warning", lambda: not no_prompt(editor))
    editor.nvim.input("n")
    wait_until("the answer", lambda: no_prompt(editor))
    assert main.read_text() == "# theirs\ndef main():\n    return 2\n", "the file the buffer lacks is kept"


def test_a_change_over_the_unsaved_lines_is_not_merged_and_the_user_chooses(plugin_editor):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    record_choices(editor)
    editor.type_at(2, 12, " + 40")  # "    return 1 + 40"
    time.sleep(1.1)
    write_like_sed(main, "def main():\n    return 1 + 1\n")
    choices = wait_until("the choice", lambda: editor.lua("return _G.tether_choices[1]"))
    assert "main.py changed on disk" in choices["prompt"] and "line 2" in choices["prompt"], choices
    assert choices["items"][0].startswith("Keep the buffer") and choices["items"][1].startswith("Load the file")
    assert "Show the diff" in choices["items"]
    assert editor.text() == "def main():\n    return 1 + 40\n", "nothing merged"
    editor.nvim.command("checktime", async_=True)
    time.sleep(0.3)
    assert no_prompt(editor)


def test_a_buffer_without_unsaved_changes_shows_the_files_new_text_at_once(plugin_editor):
    """Neovim reloads a changed file only when it next looks (focus, `:checktime`): told by tether,
    the plugin looks at once, so that a clean buffer never shows text the file no longer has."""
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    assert not editor.modified()
    time.sleep(1.1)
    write_like_sed(main, "def main():\n    return 2  # from sed\n")
    wait_until("the buffer to show the file's new text", lambda: editor.text() == "def main():\n    return 2  # from sed\n")
    assert not editor.modified() and no_prompt(editor)
    # Neovim's reload is one undo step ('undoreload').
    editor.nvim.command("normal! u")
    assert editor.text() == MAIN
