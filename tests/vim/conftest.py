"""A real Vim 9 (Debian's `vim`) with Debian's ALE (`vim-ale` 3.3.0) running tether lsp, inside
tmux so that typing is real keystrokes and ALE's timers fire as they do for a user. The test
reads Vim's state and sets the cursor over a channel Vim opens to it (JSON mode: the test sends
"expr" and "ex" messages), since Debian's Vim has no client-server without X."""

import itertools
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/assistant.py, tests/editor_support.py
from editor_support import PATIENCE, tether_bin, wait_until  # noqa: E402  (after the path)

ALE = pathlib.Path("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale")
SESSIONS = itertools.count()
NOTES = "alpha\nbeta\ngamma\n"


def missing() -> list[str]:
    """What this suite needs and the machine lacks (scripts/test installs them with apt-get)."""
    lacking = [tool for tool in ("vim", "tmux") if shutil.which(tool) is None]
    if not ALE.exists():
        lacking.append("vim-ale")
    return lacking


def pytest_collection_modifyitems(items):
    lacking = missing()
    if lacking:
        skip = pytest.mark.skip(reason=f"Vim suite skipped: {', '.join(lacking)} not installed")
        for item in items:
            item.add_marker(skip)


class Vim:
    """One `vim` in its own tmux server, with ALE running `tether ARGS` for text files."""

    def __init__(self, root: pathlib.Path, home: pathlib.Path, args: str):
        self.root = root
        self.runtime = home / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(PATIENCE)
        env = {
            "HOME": str(home),
            "TETHER_BIN": tether_bin(),
            "TETHER_ARGS": args,
            "TETHER_LOG": "warn",
            "TETHER_TEST_PORT": str(self.listener.getsockname()[1]),
            # tether lsp's bridge socket and discovery file: private to this test.
            "XDG_RUNTIME_DIR": str(self.runtime),
        }
        # tether keeps its change journal under XDG_STATE_HOME: the test's own.
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            (home / var).mkdir()
            env[var] = str(home / var)
        self.env = env
        self.tmux = ["tmux", "-L", f"tether-vim-{os.getpid()}-{next(SESSIONS)}"]
        command = ["env", *(f"{k}={v}" for k, v in env.items()), "vim", "-N", "-u", str(HERE / "vimrc"), "-i", "NONE"]
        command.append("notes.txt")
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", "vim", "-x", "120", "-y", "30", "-c", str(root), *command],
            check=True,
            env=dict(os.environ, **env),
        )
        try:
            self.channel, _ = self.listener.accept()
        except TimeoutError:
            pytest.fail(f"Vim did not open its channel to the test\nscreen:\n{self.screen()}")
        self.channel.settimeout(PATIENCE)
        self.pending = b""
        self.ids = itertools.count(1)

    def _receive(self):
        decoder = json.JSONDecoder()
        while True:
            text = self.pending.decode().lstrip()
            if text:
                try:
                    value, end = decoder.raw_decode(text)
                    self.pending = text[end:].encode()
                    return value
                except json.JSONDecodeError:
                    pass
            chunk = self.channel.recv(65536)
            if not chunk:
                pytest.fail(f"Vim closed its channel\nscreen:\n{self.screen()}")
            self.pending += chunk

    def expr(self, expression: str):
        """Evaluates `expression` in Vim; returns its value."""
        number = -next(self.ids)
        self.channel.sendall(json.dumps(["expr", expression, number]).encode() + b"\n")
        while True:
            message = self._receive()
            if isinstance(message, list) and message and message[0] == number:
                return message[1]

    def ex(self, command: str):
        """Runs an Ex command in Vim, and waits until it has (an expression after it answers)."""
        self.channel.sendall(json.dumps(["ex", command]).encode() + b"\n")
        self.expr("1")

    def keys(self, *keys: str):
        subprocess.run([*self.tmux, "send-keys", "-t", "vim", *keys], check=True)

    def type(self, text: str):
        subprocess.run([*self.tmux, "send-keys", "-t", "vim", "-l", text], check=True)

    def screen(self) -> str:
        done = subprocess.run([*self.tmux, "capture-pane", "-t", "vim", "-p"], capture_output=True, text=True)
        return done.stdout

    def text(self) -> str:
        return "\n".join(self.expr("getline(1, '$')")) + "\n"

    def modified(self) -> bool:
        return self.expr("&modified") == 1

    def close(self):
        try:
            self.channel.close()
        finally:
            self.listener.close()
            subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text(NOTES)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def start(workspace, tmp_path, args: str) -> Vim:
    home = tmp_path / "home"
    home.mkdir()
    vim = Vim(workspace, home, args)
    # ALE starts tether lsp when it first lints the buffer; tether publishes its discovery file
    # once it has the root.
    wait_until("tether lsp's discovery file", lambda: list((vim.runtime / "tether").glob("*.json")))
    return vim


@pytest.fixture
def vim(workspace, tmp_path, monkeypatch):
    """Vim with ALE running `tether lsp --read-only`, the setup editors/vim.md gives for ALE."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "assistant-state"))
    v = start(workspace, tmp_path, "lsp --read-only")
    yield v
    v.close()


@pytest.fixture
def vim_editing(workspace, tmp_path, monkeypatch):
    """Vim with ALE running plain `tether lsp`, which lets tools edit."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "assistant-state"))
    v = start(workspace, tmp_path, "lsp")
    yield v
    v.close()
