"""tether lsp in a real Kakoune (Debian's `kakoune` 2022.10.31) through kakoune-lsp (`kak-lsp`,
built from crates.io by scripts/test), configured as editors/kakoune.md prints it. Kakoune runs
inside tmux, so that typing is real keystrokes and its idle hooks (which send kak-lsp's
`didChange`) fire as they do for a user; the test reads the buffer back with `kak -p`, which
sends commands to the running session, and an MCP SDK client attached through `tether mcp`
plays the assistant.

Environment: TETHER_BIN (the tether binary), TETHER_KAK_LSP (the kak-lsp binary; else `kak-lsp`
on PATH)."""

import itertools
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/assistant.py, tests/editor_support.py
from assistant import text_of_sdk  # noqa: E402
from editor_support import PATIENCE, attach_assistant, tether_bin  # noqa: E402

SESSIONS = itertools.count()
NOTES = "alpha\nbeta\ngamma\n"


def kak_lsp() -> str | None:
    path = os.environ.get("TETHER_KAK_LSP") or shutil.which("kak-lsp")
    return path if path and os.access(path, os.X_OK) else None


def missing() -> str:
    """Why the suite cannot run here, or "" (scripts/test installs kakoune and tmux from Debian
    and kak-lsp from crates.io)."""
    lacking = [tool for tool in ("kak", "tmux") if shutil.which(tool) is None]
    if kak_lsp() is None:
        lacking.append("kak-lsp")
    if not lacking:
        return ""
    hint = " (set TETHER_KAK_LSP to the binary, or put it on PATH)" if "kak-lsp" in lacking else ""
    return f"kak-lsp suite skipped: {', '.join(lacking)} not found{hint}"


pytestmark = pytest.mark.skipif(bool(missing()), reason=missing())


def recipe(args: str) -> str:
    """editors/kakoune.md's kakrc block, and its hook that gives `.txt` files a filetype; `args`
    replaces the block's `args = ['lsp']` line (the page gives the one for `--save never`)."""
    page = (HERE.parents[1] / "editors" / "kakoune.md").read_text()
    block = re.search(r"```kak\n(.*?)```", page, re.S).group(1)
    assert "echo \"args = ['lsp']\"" in block, block
    assert args in page, f"{args} is not on the page"
    block = block.replace("args = ['lsp']", args)
    plain = re.search(r"`(hook global BufCreate [^`]*)`", page).group(1)
    return block + "\n" + plain + "\n"


class Kakoune:
    """One `kak` session in its own tmux server; HOME, XDG_* and PATH (with `tether` and
    `kak-lsp`) are the test's own, so kak-lsp and the tether lsp it starts share them."""

    def __init__(self, root: pathlib.Path, home: pathlib.Path, filename: str, args: str, kakrc: str = ""):
        self.root = root
        self.home = home
        self.runtime = home / "runtime"
        self.runtime.mkdir(mode=0o700)
        bin_dir = home / "bin"
        bin_dir.mkdir()
        # The recipe names the server `tether` and gives no `command`: kak-lsp runs `tether` from PATH.
        (bin_dir / "tether").symlink_to(tether_bin())
        (bin_dir / "kak-lsp").symlink_to(kak_lsp())
        env = {
            "HOME": str(home),
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "TETHER_LOG": "warn",  # warnings reach the *debug* buffer, which failures print
            # tether lsp's bridge socket and discovery file, kak-lsp's session directory and
            # Kakoune's session socket: private to this test.
            "XDG_RUNTIME_DIR": str(self.runtime),
            "TMPDIR": str(home / "tmp"),
        }
        (home / "tmp").mkdir()
        # tether keeps its change journal under XDG_STATE_HOME: the test's own.
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            (home / var).mkdir()
            env[var] = str(home / var)
        (home / "XDG_CONFIG_HOME" / "kak").mkdir()
        (home / "XDG_CONFIG_HOME" / "kak" / "kakrc").write_text(recipe(args) + kakrc)
        self.env = dict(os.environ, **env)
        self.session = f"tether-kak-{os.getpid()}-{next(SESSIONS)}"
        self.tmux = ["tmux", "-L", self.session]
        self.answers = itertools.count()
        command = ["env", *(f"{k}={v}" for k, v in env.items()), "kak", "-s", self.session, filename]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", "kak", "-x", "120", "-y", "30", "-c", str(root), *command],
            check=True,
            env=self.env,
        )
        self.wait_until("Kakoune's session", lambda: self.ask("%val{client_list}", timeout=2))

    def send(self, commands: str):
        """Runs Kakoune commands in the session (`kak -p`: they are queued, not waited for)."""
        subprocess.run(
            ["kak", "-p", self.session], input=commands, text=True, env=self.env, check=True, capture_output=True
        )

    def ask(self, expansion: str, context: str = "-client client0", before: str = "", timeout: float = PATIENCE):
        """The value of a Kakoune expansion, e.g. `%val{modified}`, evaluated in `context` after
        the commands `before`; None if Kakoune did not answer within `timeout`."""
        n = next(self.answers)
        answer, done = self.home / f"answer-{n}", self.home / f"answer-{n}.done"
        try:
            self.send(
                f"evaluate-commands {context} %{{ {before} echo -to-file '{answer}' -- {expansion} }}\n"
                f"echo -to-file '{done}' done\n"
            )
        except subprocess.CalledProcessError:
            return None
        deadline = time.monotonic() + timeout
        while not done.exists():
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)
        return answer.read_text() if answer.exists() else None

    def text(self, buffer: str) -> str:
        """The buffer's whole text, as Kakoune holds it."""
        return self.ask("%val{selection}", context=f"-buffer {buffer}", before="execute-keys '%';")

    def keys(self, *keys: str):
        subprocess.run([*self.tmux, "send-keys", "-t", "kak", *keys], check=True)

    def type(self, text: str):
        subprocess.run([*self.tmux, "send-keys", "-t", "kak", "-l", text], check=True)

    def screen(self) -> str:
        done = subprocess.run([*self.tmux, "capture-pane", "-t", "kak", "-p"], capture_output=True, text=True)
        return done.stdout

    def wait_until(self, what: str, check, timeout: float = PATIENCE):
        """As editor_support.wait_until, with Kakoune's *debug* buffer and screen in the failure."""
        deadline = time.monotonic() + timeout
        while not (value := check()):
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}\n{self.debug()}")
            time.sleep(0.01)
        return value

    def debug(self) -> str:
        """Kakoune's *debug* buffer (kak-lsp reports its errors there) and the screen, for failures."""
        debug = self.ask("%val{selection}", context="-buffer *debug*", before="execute-keys '%';", timeout=5)
        return f"*debug*:\n{debug}\nscreen:\n{self.screen()}"

    def close(self):
        """Ends the session as a user's `:kill!` would: Kakoune's KakEnd hook tells kak-lsp to exit
        (and it ends tether lsp); kak-lsp is ended by its pid if it is still there after that."""
        pid_file = self.ask("%opt{lsp_pid_file}", timeout=5)
        pid = None
        if pid_file and pathlib.Path(pid_file).exists():
            pid = int(pathlib.Path(pid_file).read_text().strip())
        try:
            self.send("kill!\n")  # `kill` refuses while a buffer is modified
            deadline = time.monotonic() + PATIENCE
            while (self.runtime / "kakoune" / self.session).exists() or (pid and running(pid)):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        finally:
            subprocess.run([*self.tmux, "kill-server"], capture_output=True)
            if pid and running(pid):
                os.kill(pid, signal.SIGTERM)


def running(pid: int) -> bool:
    """Whether the process is alive (a zombie nobody reaped yet counts as ended)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def start(workspace, tmp_path, monkeypatch, args: str):
    # The assistant's tether mcp: its own state directory too.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "assistant-state"))
    home = tmp_path / "home"
    home.mkdir()
    k = Kakoune(workspace, home, "notes.txt", args)
    try:
        # kak-lsp starts tether lsp for the buffer; tether publishes its discovery file once it
        # has the root.
        k.wait_until("tether lsp's discovery file", lambda: list((k.runtime / "tether").glob("*.json")))
    except BaseException:
        k.close()
        raise
    return k


@pytest.fixture
def kak(workspace, tmp_path, monkeypatch):
    """Kakoune editing notes.txt, with kak-lsp running tether lsp as the recipe sets it up."""
    k = start(workspace, tmp_path, monkeypatch, "args = ['lsp']")
    yield k
    k.close()


@pytest.fixture
def kak_save_never(workspace, tmp_path, monkeypatch):
    """The same with the page's `args = ['lsp', '--save', 'never']`."""
    k = start(workspace, tmp_path, monkeypatch, "args = ['lsp', '--save', 'never']")
    yield k
    k.close()


def test_the_assistant_reads_unsaved_text_and_its_edit_lands_in_the_buffer(kak):
    assistant = attach_assistant(kak.root, kak.runtime)
    try:
        kak.keys("3", "g", "A")  # line 3, append at its end
        kak.type(" unsaved words")
        kak.keys("Escape")
        # Kakoune's NormalIdle hook (idle_timeout, 50 ms) has kak-lsp send the whole text.
        kak.wait_until(
            "the typed text to reach tether",
            lambda: "gamma unsaved words" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        found = assistant.call("grep", pattern="unsaved", output_mode="content")
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
        # kak-lsp sends didChange right after applying an edit (its edit commands end with
        # lsp-did-change), so tether knows where it landed without waiting for Kakoune to idle.
        after = text_of_sdk(assistant.call("read_file", path="notes.txt"))
    finally:
        assistant.close()

    assert "gamma unsaved words" in text_of_sdk(found), text_of_sdk(found)
    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer, which has unsaved changes (not saved)" in text_of_sdk(result)
    assert "2\tBETA" in after, after
    assert kak.text("notes.txt") == "alpha\nBETA\ngamma unsaved words\n"
    assert kak.ask("%val{modified}", context="-buffer notes.txt") == "true"
    assert (kak.root / "notes.txt").read_text() == NOTES, "the file on disk is untouched"
    # tether lsp, started by kak-lsp, kept its journal in the test's XDG_STATE_HOME.
    assert list((kak.home / "XDG_STATE_HOME" / "tether").iterdir())


def test_an_edit_to_a_clean_buffer_is_saved_and_kakoune_asks_nothing(kak):
    assistant = attach_assistant(kak.root, kak.runtime)
    try:
        kak.wait_until(
            "the buffer to reach tether",
            lambda: "1\talpha" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    finally:
        assistant.close()

    assert not result.is_error, text_of_sdk(result)
    assert "applied to the open editor buffer and saved" in text_of_sdk(result), text_of_sdk(result)
    assert kak.text("notes.txt") == "alpha\nBETA\ngamma\n"
    assert (kak.root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert kak.ask("%val{modified}", context="-buffer notes.txt") == "false"
    # Kakoune wrote the file itself (kak-lsp's `write`, below), so it has nothing to reload.
    kak.keys("j")  # a keystroke, after which Kakoune checks whether the file changed on disk
    time.sleep(0.3)
    assert "reload" not in kak.screen(), kak.screen()


def test_under_save_never_kak_lsp_still_writes_a_clean_buffer(kak_save_never):
    """A difference from the page's first draft: kak-lsp writes every buffer it edits for a server
    whose text matched the file (`apply_text_edits_try_deferred` means hidden buffers, but a
    server's request has no buffer of its own, so every buffer counts as hidden). tether's
    `--save never` cannot stop that, and tether's result says what the disk holds: saved (it said
    "not saved (saving is off)", from its own policy alone, until issue 33)."""
    kak = kak_save_never
    assistant = attach_assistant(kak.root, kak.runtime)
    try:
        kak.wait_until(
            "the buffer to reach tether",
            lambda: "1\talpha" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    finally:
        assistant.close()

    assert not result.is_error, text_of_sdk(result)
    assert kak.text("notes.txt") == "alpha\nBETA\ngamma\n"
    assert (kak.root / "notes.txt").read_text() == "alpha\nBETA\ngamma\n", "kak-lsp wrote it"
    assert kak.ask("%val{modified}", context="-buffer notes.txt") == "false"
    # What a truthful result would not say, since the file on disk has the change.
    assert "not saved (saving is off)" not in text_of_sdk(result), text_of_sdk(result)


def test_an_edit_that_arrives_before_kakoune_reported_the_typing_lands_once(kak):
    """kak-lsp checks no version: it converts the edit's positions against the text it last
    sent, applies it there and answers `applied: true`. Typing Kakoune has not reported yet (its
    idle hooks send `didChange` only after `idle_timeout`, raised here so the test can act inside
    it) shifts the text, so the edit lands at the old position. kak-lsp sends the whole text once
    per sync, so the state with the typing but without the edit is never seen: tether works it
    out (the typing was a whole line above the edit), sees the edit misplaced, and moves it to its
    place. Until issue 33 it read the sync as the edit skipped and ran the tool again, so the
    buffer ended with the edit twice."""
    assistant = attach_assistant(kak.root, kak.runtime)
    try:
        kak.keys("3", "g", "A")
        kak.type(" typed")
        kak.keys("Escape")
        kak.wait_until(
            "the typed text to reach tether",
            lambda: "gamma typed" in text_of_sdk(assistant.call("read_file", path="notes.txt")),
        )
        kak.send("set-option global idle_timeout 5000\n")
        assert kak.ask("%opt{idle_timeout}") == "5000"
        kak.keys("g", "g", "i")  # line 1, insert before it
        kak.type("new line")
        kak.keys("Enter", "Escape")
        kak.wait_until(
            "Kakoune to take the keystrokes", lambda: kak.text("notes.txt") == "new line\nalpha\nbeta\ngamma typed\n"
        )
        before = text_of_sdk(assistant.call("read_file", path="notes.txt"))
        result = assistant.call("edit_file", path="notes.txt", old_string="beta", new_string="BETA")
    finally:
        assistant.close()

    assert "new line" not in before, "the typing was reported before the edit: the test did not act in time"
    assert not result.is_error, text_of_sdk(result)
    assert "the editor put it at the old position and tether moved it to its place" in text_of_sdk(result), text_of_sdk(result)
    assert (kak.root / "notes.txt").read_text() == NOTES
    kak.wait_until("the repair to land", lambda: kak.text("notes.txt") == "new line\nalpha\nBETA\ngamma typed\n")


@pytest.mark.skipif(shutil.which("pylsp") is not None, reason="pylsp is installed here: nothing is missing")
def test_a_buffer_whose_default_server_is_missing_gets_no_tether(workspace, tmp_path, monkeypatch):
    """Pins a limit of the recipe: kak-lsp starts a buffer's servers together, and when one of
    them cannot be started (here the default for Python, pylsp, not installed) it blocks LSP in
    that buffer and initializes none of them, so tether, appended to the same table, is started
    but never initialized, and no `tether mcp` can attach (editors/kakoune.md says to remove
    the defaults you do not have)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "assistant-state"))
    (workspace / "main.py").write_text("def main():\n    return 1\n")
    home = tmp_path / "home"
    home.mkdir()
    kak = Kakoune(workspace, home, "main.py", "args = ['lsp']")
    try:
        servers = kak.ask("%opt{lsp_servers}", context="-buffer main.py")
        assert "[pylsp]" in servers and "[tether]" in servers, servers
        kak.wait_until("kak-lsp to try pylsp", lambda: "language server pylsp" in kak.debug())
        time.sleep(2)  # tether publishes its discovery file within milliseconds when initialized
        assert not list((kak.runtime / "tether").glob("*.json")), kak.debug()
    finally:
        kak.close()


def test_without_the_missing_default_the_buffer_gets_tether(workspace, tmp_path, monkeypatch):
    """The remedy editors/kakoune.md gives: remove the filetype's default servers you do not
    have (kak-lsp's README: `remove-hooks global lsp-filetype-...`)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "assistant-state"))
    (workspace / "main.py").write_text("def main():\n    return 1\n")
    home = tmp_path / "home"
    home.mkdir()
    kak = Kakoune(workspace, home, "main.py", "args = ['lsp']", kakrc="remove-hooks global lsp-filetype-python\n")
    try:
        servers = kak.ask("%opt{lsp_servers}", context="-buffer main.py")
        assert "[pylsp]" not in servers and "[tether]" in servers, servers
        kak.wait_until("tether lsp's discovery file", lambda: list((kak.runtime / "tether").glob("*.json")))
        assistant = attach_assistant(kak.root, kak.runtime)
        try:
            kak.keys("2", "g", "A")
            kak.type("  # unsaved")
            kak.keys("Escape")
            kak.wait_until(
                "the typed text to reach tether",
                lambda: "return 1  # unsaved" in text_of_sdk(assistant.call("read_file", path="main.py")),
            )
        finally:
            assistant.close()
    finally:
        kak.close()
