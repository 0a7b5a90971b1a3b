"""tether-mode (editors/emacs/tether.el) in a real Emacs 28 under tmux: tether lsp started by the
package itself on Emacs's own jsonrpc.el, no eglot or lsp-mode loaded (tether-mode-setup.el).
It sends every change at once and checks every edit's version, so an assistant attached through
`tether mcp` reads unsaved text, its edits land once as one undo step, and typing racing them is
never lost.

Each test counts the `workspace/applyEdit` requests tether.el answered and the ones it refused."""

import json
import os
import random
import signal
import subprocess
import time

import pytest

from assistant import text_of_sdk
from conftest import HERE, start_tether_mode
from editor_support import PATIENCE, attach_assistant, tether_bin, wait_until

NOTES = "alpha\nbeta\ngamma\n"
EDITORS_EMACS = HERE.parents[1] / "editors" / "emacs"


@pytest.fixture
def emacs(workspace, tmp_path):
    e = start_tether_mode(workspace, tmp_path)
    e.open("notes.txt")
    yield e
    e.close()


def goto(emacs, line: int, column: int):
    """Point to 1-based `line`, 0-based `column` counted in characters."""
    emacs.eval(f"(tether-test-goto {line} {column})")


def type_text(emacs, text: str):
    """Types `text` through tmux, which reads an argument ending in `;` as the end of a command
    unless the `;` is escaped."""
    emacs.type(text[:-1] + "\\;" if text.endswith(";") else text)


def wait_for_text(emacs, expected: str, what: str = "the buffer") -> dict:
    return wait_until(f"{what} to read {expected!r}", lambda: (s := emacs.state())["text"] == expected and s)


def read_lines(assistant, rel: str, limit: int = 2000) -> list[str]:
    read = assistant.call("read_file", path=rel, limit=limit)
    assert not read.is_error, text_of_sdk(read)
    return [line.split("\t", 1)[1] for line in text_of_sdk(read).splitlines() if "\t" in line]


def test_the_package_byte_compiles_without_warnings(tmp_path):
    """The lint the recipe gives for a package of our own: every warning is an error."""
    files = sorted(p.name for p in EDITORS_EMACS.glob("*.el"))
    assert "tether.el" in files and "tether-knowledge.el" in files, files
    for name in files:
        (tmp_path / name).write_bytes((EDITORS_EMACS / name).read_bytes())
    done = subprocess.run(
        ["emacs", "-Q", "--batch", "-L", str(tmp_path), "--eval", "(setq byte-compile-error-on-warn t)"]
        + ["-f", "batch-byte-compile", *(str(tmp_path / name) for name in files)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert all((tmp_path / (name + "c")).exists() for name in files)


def test_unsaved_typing_is_seen_at_once_by_read_file_and_grep(emacs, assistant):
    goto(emacs, 3, 5)
    emacs.type(" unsaved words")
    state = wait_for_text(emacs, "alpha\nbeta\ngamma unsaved words\n")
    assert state["modified"] is True

    # Sent as typed, not from an idle timer: tether has it as soon as Emacs has it.
    started = time.monotonic()
    wait_until("tether to see the typing", lambda: "gamma unsaved words" in read_lines(assistant, "notes.txt")[2], 2)
    assert time.monotonic() - started < 1.0
    found = assistant.call("grep", pattern="unsaved", output_mode="content")
    assert not found.is_error, text_of_sdk(found)
    assert "notes.txt:3:gamma unsaved words" in text_of_sdk(found)
    assert (emacs.root / "notes.txt").read_text() == NOTES, "nothing was written"


def test_an_edit_in_a_dirty_buffer_lands_once_as_one_undo_step_and_leaves_the_file_alone(emacs, assistant):
    goto(emacs, 1, 5)
    emacs.type(" typed")
    typed = "alpha typed\nbeta\ngamma\n"
    wait_for_text(emacs, typed)
    goto(emacs, 3, 5)

    result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    # Typed at once, with nothing between the edit and the key: consecutive keys are one undo
    # step in Emacs, and the edit, which came between two of them, must stay a step of its own.
    emacs.type("!")

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer, which has unsaved changes" in text_of_sdk(result)
    state = wait_for_text(emacs, "alpha typed\nBETA\ngamma!\n")
    assert state["applied"] == 1, "one tool call, one workspace edit"
    assert state["refusals"] == []
    assert state["modified"] is True
    assert (emacs.root / "notes.txt").read_text() == NOTES, "the dirty buffer's file is untouched"

    # One undo per step: the key, then the edit (and only it), then the typing before it.
    emacs.keys("C-_")
    wait_for_text(emacs, "alpha typed\nBETA\ngamma\n", "undoing the key")
    emacs.keys("C-_")
    wait_for_text(emacs, typed, "undoing the edit")
    emacs.keys("C-_")
    wait_for_text(emacs, NOTES, "undoing the typing")
    assert read_lines(assistant, "notes.txt") == ["alpha", "beta", "gamma"]


def test_a_change_on_disk_is_merged_into_the_unsaved_buffer_and_saving_asks_nothing(emacs):
    """Another program (here as `sed -i` writes: a new file renamed over the old) changes the file
    of a buffer with unsaved changes: the change lands in the buffer as one undo step, and
    saving does not ask whether to overwrite a file changed since it was visited."""
    goto(emacs, 1, 5)
    emacs.type(" typed")
    typed = "alpha typed\nbeta\ngamma\n"
    wait_for_text(emacs, typed)
    wait_until("tether to see the typing", lambda: emacs.sees("alpha typed"))
    time.sleep(1.1)  # a modification time of its own
    tmp = emacs.path.with_name(".notes.txt.sed")
    tmp.write_text("alpha\nbeta\nGAMMA from sed\n")
    os.replace(tmp, emacs.path)
    merged = "alpha typed\nbeta\nGAMMA from sed\n"
    state = wait_for_text(emacs, merged)
    assert state["modified"] is True and state["refusals"] == []
    assert emacs.path.read_text() == "alpha\nbeta\nGAMMA from sed\n", "the file is as the other program left it"
    # tether says it merged once the edit is verified (Emacs reports it when idle): from then on
    # Emacs takes the file's new time; a save before that gets Emacs's usual question.
    wait_until("Emacs to take the file's time", lambda: emacs.eval("(verify-visited-file-modtime tether-test-buffer)") == "t")
    emacs.keys("C-x", "C-s")
    wait_until("the save, unasked", lambda: emacs.path.read_text() == merged)
    assert "changed since visited" not in emacs.screen()
    emacs.keys("C-_")
    wait_for_text(emacs, typed, "undoing the merge, and only it")


def test_a_buffer_without_unsaved_changes_shows_the_files_new_text_at_once(emacs):
    """Emacs reverts a changed file only with auto-revert-mode (off by default): told by tether,
    tether-mode reverts a buffer without unsaved changes at once, and the revert is undoable."""
    assert emacs.state()["modified"] is False
    time.sleep(1.1)  # a modification time of its own
    tmp = emacs.path.with_name(".notes.txt.sed")
    tmp.write_text("alpha\nbeta\nGAMMA from sed\n")
    os.replace(tmp, emacs.path)
    state = wait_for_text(emacs, "alpha\nbeta\nGAMMA from sed\n")
    assert state["modified"] is False
    assert "changed on disk" not in emacs.screen()
    emacs.keys("C-_")
    wait_for_text(emacs, NOTES, "undoing the revert")


def test_an_edit_in_a_clean_buffer_is_saved_and_still_undoable(emacs, assistant):
    result = assistant.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer and saved" in text_of_sdk(result), text_of_sdk(result)
    state = wait_for_text(emacs, "alpha\nbeta\nGAMMA\n")
    assert state["modified"] is False, "saved through tether/saveDocuments"
    assert (emacs.root / "notes.txt").read_text() == "alpha\nbeta\nGAMMA\n"
    assert state["applied"] == 1

    emacs.keys("C-_")
    state = wait_for_text(emacs, NOTES, "undo")
    assert state["modified"] is True
    assert read_lines(assistant, "notes.txt") == ["alpha", "beta", "gamma"]


def test_each_edit_to_a_buffer_in_no_window_is_its_own_undo_step(emacs, assistant):
    """Issue 33: two tool edits to a visited buffer that no window shows are two undo steps, which
    `C-_` takes back one at a time once the user goes there."""
    other = emacs.root / "other.txt"
    other.write_text(NOTES)
    emacs.eval(f"(progn (find-file-noselect {json.dumps(str(other))}) t)")
    wait_until(
        "tether-mode to open other.txt",
        lambda: emacs.eval(
            f"(let ((b (find-buffer-visiting {json.dumps(str(other))})))"
            " (and (buffer-local-value 'tether--conn b) (null (get-buffer-window b t))))"
        )
        == "t",
    )
    for old, new in (("alpha", "ALPHA"), ("gamma", "GAMMA")):
        result = assistant.call("edit_file", path="other.txt", old_string=old, new_string=new)
        assert not result.is_error, text_of_sdk(result)
    emacs.open("other.txt")
    state = wait_for_text(emacs, "ALPHA\nbeta\nGAMMA\n")
    assert state["applied"] == 2 and state["refusals"] == []

    emacs.keys("C-_")
    wait_for_text(emacs, "ALPHA\nbeta\ngamma\n", "the first undo to take back the second edit only")
    emacs.keys("C-_")
    wait_for_text(emacs, NOTES, "the second undo to take back the first edit")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_multibyte_text_keeps_edits_in_place(emacs, encoding):
    """Columns are UTF-8 bytes between tether.el and tether (or UTF-16 units, when the server is
    offered nothing else): text before an edit on its own line that is wider than one byte per
    character, and than one UTF-16 unit (the emoji), must not shift it either way."""
    if encoding == "utf-16":
        assert emacs.eval("(tether-test-use-utf-16)") == '"utf-16"'
    wait_until("the discovery file", lambda: list((emacs.runtime / "tether").glob("*.json")))
    assistant = attach_assistant(emacs.root, emacs.runtime)
    try:
        multibyte_edits(emacs, assistant)
    finally:
        assistant.close()


def multibyte_edits(emacs, assistant):
    goto(emacs, 2, 0)
    emacs.type("é中😀 ")
    wait_for_text(emacs, "alpha\né中😀 beta\ngamma\n")
    result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    assert not result.is_error, text_of_sdk(result)
    wait_for_text(emacs, "alpha\né中😀 BETA\ngamma\n")
    goto(emacs, 2, 4)  # after the emoji and the space: the typing goes between them and BETA
    emacs.type("ß")
    wait_for_text(emacs, "alpha\né中😀 ßBETA\ngamma\n")
    assert read_lines(assistant, "notes.txt") == ["alpha", "é中😀 ßBETA", "gamma"]
    assert emacs.state()["refusals"] == []


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_commands_that_change_text_in_odd_ways_keep_tether_in_step(emacs, encoding):
    """Regexp replacements, case changes, transposed and sorted lines: tether's copy ends equal to
    the buffer, and an edit afterwards lands where it should. In UTF-16 the change hooks search
    each changed line for wide characters, between the command's own search and `replace-match`."""
    if encoding == "utf-16":
        assert emacs.eval("(tether-test-use-utf-16)") == '"utf-16"'
    wait_until("the discovery file", lambda: list((emacs.runtime / "tether").glob("*.json")))
    assistant = attach_assistant(emacs.root, emacs.runtime)
    try:
        odd_changes(emacs, assistant)
    finally:
        assistant.close()


def odd_changes(emacs, assistant):
    emacs.eval("(tether-test-odd-changes)")
    text = emacs.state()["text"]
    assert text != NOTES
    assert read_lines(assistant, "notes.txt") == text.splitlines()
    last = text.splitlines()[0]
    result = assistant.call("edit_file", path="notes.txt", old_string=last, new_string=last + " edited")
    assert not result.is_error, text_of_sdk(result)
    wait_for_text(emacs, text.replace(last, last + " edited", 1))
    assert emacs.state()["refusals"] == []


def test_typing_racing_tool_edits_loses_nothing(emacs, assistant):
    """100 rounds: an assistant's edit is on its way while keystrokes land in the buffer. Every
    fourth round Emacs is kept busy while both wait, so the keystrokes are read first and the edit
    arrives for a version the buffer has left: tether.el refuses it, tether reads the buffer again
    and resends. At the end every keystroke and every edit is there once, nothing else."""
    rng = random.Random(20261125)
    rounds = 100
    model = []
    for i in range(rounds):
        model += [f"typing {i}:", f"<<M{i}>>"]
    (emacs.root / "race.txt").write_text("\n".join(model) + "\n")
    emacs.open("race.txt")
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ,.;(){}=+-*/éß中😀"
    succeeded = 0
    failures = []
    latencies = []
    for i in range(rounds):
        busy = i % 4 == 0
        row = 2 * rng.randrange(rounds)  # a typing line, 0-based
        typed = []
        for _ in range(rng.randrange(1 if busy else 0, 4)):
            if not busy:
                row = 2 * rng.randrange(rounds)
            line = model[row]
            col = rng.randrange(len(line) + 1) if not (busy and typed) else typed[-1][1] + 1
            ch = rng.choice(alphabet)
            typed.append((row, col, ch))
            model[row] = line[:col] + ch + line[col:]
        arguments = {"path": "race.txt", "old_string": f"<<M{i}>>", "new_string": f"<<E{i}>>"}
        started = time.monotonic()
        if busy:
            row, col, _ = typed[0]
            hold = subprocess.Popen(
                ["emacsclient", "-s", str(emacs.server), "--eval", f"(tether-test-busy {row + 1} {col} 0.3)"],
                stdout=subprocess.DEVNULL,
            )
            time.sleep(0.05)
            answer = assistant.call_async("edit_file", **arguments)
            time.sleep(0.02)
            type_text(emacs, "".join(ch for _, _, ch in typed))
            assert hold.wait(PATIENCE) == 0
        else:
            answer = assistant.call_async("edit_file", **arguments)
            for k, (row, col, ch) in enumerate(typed):
                goto(emacs, row + 1, col)
                type_text(emacs, ch)
                # The next goto must not overtake this keystroke.
                expected = json.dumps(line_after(model, typed, k), ensure_ascii=False)
                wait_until(
                    f"round {i}: {ch!r} typed", lambda: emacs.eval(f"(tether-test-line-is {row + 1} {expected})") == "t"
                )
        result = answer.result(PATIENCE)
        latencies.append(time.monotonic() - started)
        if result.is_error:
            # Keystrokes arriving one by one can make each of tether's three attempts stale.
            assert '"conflict"' in text_of_sdk(result), text_of_sdk(result)
            failures.append(f"round {i}: {text_of_sdk(result)}")
        else:
            succeeded += 1
            model[2 * i + 1] = f"<<E{i}>>"
        expected = "\n".join(model) + "\n"
        wait_until(f"round {i}: the buffer to hold every keystroke and edit", lambda: emacs.state()["text"] == expected)

    state = emacs.state()
    latencies.sort()
    print(
        f"{rounds} tool edits took {state['applied']} workspace edits ({len(state['refusals'])} refused as stale); "
        f"median {1000 * latencies[len(latencies) // 2]:.0f} ms, p95 {1000 * latencies[int(0.95 * rounds)]:.0f} ms"
    )
    print("\n".join(failures))
    assert succeeded >= rounds - 3, f"only {succeeded} of {rounds} edits succeeded (each had 3 attempts)"
    assert state["refusals"], "no edit was ever overtaken by typing: the test did not exercise the race"
    assert all("changed since" in r for r in state["refusals"]), state["refusals"]
    assert state["applied"] == succeeded + len(state["refusals"]), "an edit applied is never sent again"
    assert read_lines(assistant, "race.txt", limit=2 * rounds + 5)[: len(model)] == model


def line_after(model, typed, k):
    """The line of keystroke `k` of a round once keystrokes 0..k are in: the model has the whole
    round, so the round's later keystrokes on the same line are taken out again, last first."""
    row = typed[k][0]
    line = model[row]
    for r, c, ch in reversed(typed[k + 1 :]):
        if r == row:
            line = line[:c] + line[c + len(ch) :]
    return line


def test_tether_grep_lists_unsaved_matches_for_next_error(emacs):
    goto(emacs, 3, 5)
    emacs.type(" needle")
    wait_for_text(emacs, "alpha\nbeta\ngamma needle\n")
    goto(emacs, 1, 0)
    emacs.eval('(tether-test-grep "needle")')
    grep = json.loads((emacs.out / "grep.json").read_text())
    assert grep["mode"] == "grep-mode"
    assert "notes.txt:3:gamma needle" in grep["results"], grep["results"]
    assert grep["file"] == str(emacs.path) and grep["line"] == 3, grep


def test_tether_call_runs_a_tool_and_shows_its_result(emacs):
    goto(emacs, 2, 4)
    emacs.type(" unsaved")
    wait_for_text(emacs, "alpha\nbeta unsaved\ngamma\n")
    emacs.eval('(tether-test-call "read_file" "{\\"path\\": \\"notes.txt\\"}")')
    shown = json.loads((emacs.out / "call.json").read_text())
    assert "beta unsaved" in shown["text"], shown
    assert "[failed]" not in shown["header"], shown
    emacs.eval('(tether-test-call "read_file" "{\\"path\\": \\"missing.txt\\"}")')
    shown = json.loads((emacs.out / "call.json").read_text())
    assert "not_found" in shown["text"] and "[failed]" in shown["header"], shown


def test_a_file_with_dos_line_breaks_is_clean_and_keeps_them(emacs, assistant):
    """Emacs shows CRLF lines with plain newlines; tether sees the file's own breaks, so the
    buffer counts as clean, an edit is saved, and the saved file keeps CRLF."""
    (emacs.root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    emacs.open("dos.txt")
    result = assistant.call("edit_file", path="dos.txt", old_string="two", new_string="TWO\nthree")
    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer and saved" in text_of_sdk(result), text_of_sdk(result)
    state = wait_for_text(emacs, "one\nTWO\nthree\n")
    assert state["modified"] is False
    assert (emacs.root / "dos.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"


def test_a_killed_buffer_is_closed_and_edits_go_to_disk(emacs, assistant):
    goto(emacs, 1, 0)
    emacs.type("unsaved ")
    wait_for_text(emacs, "unsaved alpha\nbeta\ngamma\n")
    emacs.eval(f"(tether-test-kill {json.dumps(str(emacs.path))})")
    wait_until("tether to drop the buffer", lambda: read_lines(assistant, "notes.txt")[0] == "alpha")
    result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    assert not result.is_error, text_of_sdk(result)
    assert (emacs.root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"


def test_tether_status_and_the_bridge_see_the_lsp_tether_mode_started(emacs, assistant):
    pid = int(emacs.eval("(tether-test-pid)"))
    env = dict(os.environ, XDG_RUNTIME_DIR=str(emacs.runtime))
    done = subprocess.run([tether_bin(), "status", "--json"], capture_output=True, text=True, env=env, check=True)
    instances = json.loads(done.stdout)["instances"]
    assert [i["pid"] for i in instances] == [pid], done.stdout
    assert str(emacs.root.resolve()) in instances[0]["roots"], done.stdout

    emacs.eval("(tether-test-status)")
    shown = (emacs.out / "status.txt").read_text()
    assert "tether-mode is on" in shown, shown
    assert f"tether lsp pid {pid}: ready, positions in utf-8, 1 buffer open" in shown, shown
    assert str(pid) in shown.split("status\n", 1)[1], "the `tether status` output follows"

    # The bridge: an attached assistant runs its calls in this lsp, on the buffer.
    goto(emacs, 1, 0)
    emacs.type("bridged ")
    wait_for_text(emacs, "bridged alpha\nbeta\ngamma\n")
    assert read_lines(assistant, "notes.txt")[0] == "bridged alpha"


def test_a_dead_server_is_reported_and_tether_restart_brings_it_back(emacs):
    pid = int(emacs.eval("(tether-test-pid)"))
    os.kill(pid, signal.SIGKILL)
    state = wait_until("Emacs to notice", lambda: (s := emacs.state())["connected"] is False and s)
    assert "exited" in state["messages"] and "tether-restart" in state["messages"], state["messages"]

    # Typing while no server runs is not lost: the restarted server opens the buffer as it is.
    goto(emacs, 2, 4)
    emacs.type(" offline")
    wait_for_text(emacs, "alpha\nbeta offline\ngamma\n")

    # A binary that is not there is reported, not tried again on every visit.
    emacs.eval('(setq tether-executable "/nonexistent/tether")')
    emacs.eval("(tether-test-restart)")
    state = emacs.state()
    assert "cannot start /nonexistent/tether" in state["messages"], state["messages"]
    assert state["connected"] is False
    emacs.eval(f"(setq tether-executable {json.dumps(tether_bin())})")
    emacs.eval("(tether-test-restart)")
    wait_until("the new server", lambda: emacs.eval("(tether-test-connected)") == "t")
    new_pid = int(emacs.eval("(tether-test-pid)"))
    assert new_pid != pid
    # The old server's discovery file stays after SIGKILL (a reader finds it dead); the new one
    # publishes its own once it has the folder.
    wait_until("the new server's discovery file", (emacs.runtime / "tether" / f"{new_pid}.json").exists)
    assistant = attach_assistant(emacs.root, emacs.runtime)
    try:
        assert read_lines(assistant, "notes.txt") == ["alpha", "beta offline", "gamma"]
        result = assistant.call("edit_file", path="notes.txt", old_string="gamma", new_string="GAMMA")
        assert not result.is_error, text_of_sdk(result)
    finally:
        assistant.close()
    wait_for_text(emacs, "alpha\nbeta offline\nGAMMA\n")


@pytest.mark.parametrize(
    ("protocol", "minimum", "said"),
    [
        ("9", "9", "tether 9.0.0 serves tether protocol 9 and newer; this package (0.1.0) speaks 3"),
        ("none", "1", "tether 9.0.0 announces no tether protocol: it is not tether, or a tether older than 0.1.0"),
        ("0", "0", "tether 9.0.0 speaks tether protocol 0; this package (0.1.0) needs 1 or newer"),
    ],
)
def test_an_incompatible_server_is_stopped_with_a_message(tmp_path, protocol, minimum, said):
    """A tether whose protocol this package cannot speak (tests/fixtures/future_tether.py) is
    asked to exit after `initialize`, before any document is opened on it, with one message naming
    the versions and what to update; the project is not retried on every visit."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "notes.txt").write_text(NOTES)
    log = tmp_path / "methods.log"
    fake = HERE.parent / "fixtures" / "future_tether.py"
    script = f"""(progn
      (require 'tether)
      (setq tether-executable {json.dumps(str(fake))})
      (tether-mode 1)
      (find-file {json.dumps(str(root / "notes.txt"))})
      (let ((deadline (+ (float-time) 20)))
        (while (and (< (float-time) deadline) (not tether--exited))
          (accept-process-output nil 0.1)))
      (accept-process-output nil 0.5)
      (princ (format "exited=%S conn=%S\\n" (length tether--exited) tether--conn)))"""
    env = dict(os.environ, FUTURE_TETHER_PROTOCOL=protocol, FUTURE_TETHER_MIN=minimum, FUTURE_TETHER_LOG=str(log))
    done = subprocess.run(
        ["emacs", "-Q", "--batch", "-L", str(EDITORS_EMACS), "--eval", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "exited=1 conn=nil" in done.stdout, (done.stdout, done.stderr)
    assert said in done.stderr.replace("\n", " "), done.stderr
    methods = log.read_text().split()
    assert methods[0] == "initialize", methods
    assert "initialized" not in methods and "textDocument/didOpen" not in methods, methods
