"""A real, interactive Emacs (emacs-nox 28 with Debian's eglot) running tether lsp through eglot,
inside tmux so that idle timers fire and prompts show as they do for a user. The tests type and
answer prompts with tmux keystrokes, and set up and read state through emacsclient."""

import itertools
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/assistant.py, tests/editor_support.py
from editor_support import PATIENCE, attach_assistant, tether_bin, wait_until  # noqa: E402  (after the path)
ELPA = pathlib.Path("/usr/share/emacs/site-lisp/elpa")
SESSIONS = itertools.count()


def missing() -> list[str]:
    """What this suite needs and the machine lacks (scripts/test installs them with apt-get)."""
    lacking = [tool for tool in ("emacs", "emacsclient", "tmux") if shutil.which(tool) is None]
    if not list(ELPA.glob("eglot-*")):
        lacking.append("elpa-eglot")
    return lacking


def pytest_collection_modifyitems(items):
    lacking = missing()
    if lacking:
        skip = pytest.mark.skip(reason=f"Emacs suite skipped: {', '.join(lacking)} not installed")
        for item in items:
            item.add_marker(skip)


class Emacs:
    """One `emacs -nw` in its own tmux server, with eglot running tether lsp."""

    def __init__(
        self,
        root: pathlib.Path,
        home: pathlib.Path,
        confirm: bool,
        client: str,
        setup: pathlib.Path = HERE / "setup.el",
        env: dict | None = None,
    ):
        self.root = root
        self.out = home / "out"
        self.out.mkdir(mode=0o700)  # Emacs keeps its server socket here and wants it private
        self.runtime = home / "runtime"
        self.runtime.mkdir(mode=0o700)
        env = {
            "HOME": str(home),
            "TETHER_BIN": tether_bin(),
            "TETHER_TEST_OUT": str(self.out),
            "TETHER_TEST_CONFIRM": "1" if confirm else "0",
            "TETHER_TEST_CLIENT": client,
            # editors/emacs: tether.el, which tether-mode-setup.el loads.
            "TETHER_EL_DIR": str(HERE.parents[1] / "editors" / "emacs"),
            "TETHER_LOG": "warn",
            # tether lsp's bridge socket and discovery file: private to this test.
            "XDG_RUNTIME_DIR": str(self.runtime),
            **(env or {}),
        }
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            (home / var).mkdir()
            env[var] = str(home / var)
        self.tmux = ["tmux", "-L", f"tether-test-{os.getpid()}-{next(SESSIONS)}"]
        command = ["env", *(f"{k}={v}" for k, v in env.items()), "emacs", "-nw", "-Q", "-l", str(setup)]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", "emacs", "-x", "150", "-y", "40", "-c", str(root), *command],
            check=True,
            env=dict(os.environ, **env),
        )
        self.server = self.out / "emacs"
        wait_until("Emacs's server socket", lambda: self.server.exists() or self._died())
        # The socket file exists a moment before Emacs listens on it, so the first emacsclient can
        # be refused: start only once one gets through.
        ping = ["emacsclient", "-s", str(self.server), "--eval", "t"]
        wait_until(
            "Emacs's server to answer",
            lambda: subprocess.run(ping, capture_output=True, timeout=PATIENCE).returncode == 0 or self._died(),
        )
        self.calls = 0

    def _died(self):
        if subprocess.run([*self.tmux, "has-session"], capture_output=True).returncode != 0:
            pytest.fail("Emacs exited during startup")
        return False

    def eval(self, expr: str) -> str:
        """Evaluates `expr` in Emacs; returns what it printed."""
        done = subprocess.run(
            ["emacsclient", "-s", str(self.server), "--eval", expr], capture_output=True, text=True, timeout=PATIENCE
        )
        if done.returncode != 0:
            pytest.fail(f"emacsclient --eval {expr}: {done.stderr.strip()}\nscreen:\n{self.screen()}")
        return done.stdout.strip()

    def open(self, rel: str):
        self.rel = rel
        self.path = self.root / rel
        self.eval(f"(tether-test-open {json.dumps(str(self.path))})")

    def goto(self, line: int, column: int):
        self.eval(f"(tether-test-goto {line} {column})")

    def type(self, text: str):
        """Types `text` as keystrokes (Emacs reports them to tether after 0.5 s idle)."""
        subprocess.run([*self.tmux, "send-keys", "-t", "emacs", "-l", text], check=True)

    def keys(self, *keys: str):
        subprocess.run([*self.tmux, "send-keys", "-t", "emacs", *keys], check=True)

    def screen(self) -> str:
        done = subprocess.run([*self.tmux, "capture-pane", "-t", "emacs", "-p"], capture_output=True, text=True)
        return done.stdout

    def state(self) -> dict:
        self.eval(f"(tether-test-state {json.dumps(str(self.path))})")
        return json.loads((self.out / "state.json").read_text())

    def text(self) -> str:
        return self.state()["text"]

    def start_call(self, tool: str, arguments: dict) -> int:
        """Runs a tool call as the user's command (`C-c t`); the answer comes with `result`."""
        self.calls += 1
        request = {"id": self.calls, "tool": tool, "arguments": arguments}
        (self.out / "request.json").write_text(json.dumps(request))
        self.keys("C-c", "t")
        return self.calls

    def result(self, call_id: int) -> dict:
        path = self.out / f"result-{call_id}.json"
        wait_until(f"the answer to tool call {call_id}", path.exists)
        return json.loads(path.read_text())

    def call(self, tool: str, **arguments) -> dict:
        return self.result(self.start_call(tool, arguments))

    def peek(self, tool: str, **arguments) -> dict:
        """Runs a tool call through emacsclient rather than a keystroke: for looking at tether's
        state without ending Emacs's idleness, which its idle timer (the one that reports typing)
        waits for."""
        self.calls += 1
        self.eval(f"(tether-test--call {self.calls} {json.dumps(tool)} {json.dumps(json.dumps(arguments))})")
        return self.result(self.calls)

    def sees(self, fragment: str) -> bool:
        """Whether tether's mirror of the buffer holds `fragment` (eglot reports typing when idle)."""
        return fragment in text_of(self.peek("read_file", path=self.rel))

    def settled(self, expected: str) -> dict:
        """Waits until Emacs's buffer and tether's mirror of it both hold `expected`; returns the
        Emacs state. eglot reports an edit's change only after the command that asked returns."""

        def same():
            state = self.state()
            mirrored = text_of(self.peek("read_file", path=self.rel))
            return state if state["text"] == expected and all(l in mirrored for l in expected.splitlines()) else None

        return wait_until(f"Emacs and tether to agree on {expected!r}", same)

    def shown(self) -> dict:
        """The buffer of the selected window (`buffer`, `mode`, `text`, `line`) and what the
        minibuffer asks (`prompt`, or None)."""
        self.eval("(tether-test-shown)")
        return json.loads((self.out / "shown.json").read_text())

    def close(self):
        try:
            subprocess.run(
                ["emacsclient", "-s", str(self.server), "--eval", "(kill-emacs)"], capture_output=True, timeout=10
            )
        except subprocess.TimeoutExpired:
            pass
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def text_of(answer: dict) -> str:
    assert "error" not in answer, f"JSON-RPC error: {answer['error']}"
    return "".join(c["text"] for c in answer["result"]["content"] if c["type"] == "text")


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    # eglot finds the project, and so tether's root, through project.el: a git repository.
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def start(workspace, tmp_path, confirm: bool, client: str = "eglot"):
    home = tmp_path / "home"
    home.mkdir()
    e = Emacs(workspace, home, confirm, client)
    e.open("notes.txt")
    return e


@pytest.fixture
def emacs(workspace, tmp_path):
    e = start(workspace, tmp_path, confirm=False)
    yield e
    e.close()


@pytest.fixture
def confirming_emacs(workspace, tmp_path):
    """eglot as it comes: every server-initiated edit asks "Proceed?" first."""
    e = start(workspace, tmp_path, confirm=True)
    yield e
    e.close()


@pytest.fixture
def lsp_mode(workspace, tmp_path):
    """lsp-mode 8.0 running tether as an add-on server."""
    if not list(ELPA.glob("lsp-mode-*")):
        pytest.skip("lsp-mode tests skipped: elpa-lsp-mode not installed")
    e = start(workspace, tmp_path, confirm=False, client="lsp-mode")
    yield e
    e.close()


@pytest.fixture(autouse=True)
def state_home(tmp_path, monkeypatch):
    """Every tether process keeps its change journal under XDG_STATE_HOME: scripts/test exports
    a temporary one; run alone, the tests make their own, so that no journal lands in the home
    directory. (Emacs, and the tether lsp it starts, get one of their own from `Emacs`.)"""
    if not os.environ.get("XDG_STATE_HOME"):
        (tmp_path / "state").mkdir()
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def start_tether_mode(root: pathlib.Path, tmp_path, env: dict | None = None) -> Emacs:
    """Emacs with only tether.el loaded (tether-mode-setup.el), `env` added to its environment."""
    home = tmp_path / "home"
    home.mkdir()
    return Emacs(root, home, confirm=False, client="tether-mode", setup=HERE / "tether-mode-setup.el", env=env)


@pytest.fixture
def assistant(emacs):
    """An assistant's `tether mcp`, attached to the tether lsp of the test's `emacs`."""
    a = attach_assistant(emacs.root, emacs.runtime)
    yield a
    a.close()
