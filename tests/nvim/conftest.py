"""A real Neovim, headless, with tether lsp attached through tests/nvim/init.lua, driven over
its msgpack-rpc socket with pynvim."""

import os
import pathlib
import subprocess
import sys

import pynvim
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/assistant.py, tests/editor_support.py
from editor_support import PATIENCE, tether_bin, wait_until  # noqa: E402  (after the path)


def nvim_bin() -> str:
    path = os.environ.get("TETHER_NVIM", "nvim")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail(f"no Neovim at {path} ({e}); scripts/test installs one, or set TETHER_NVIM")
    if not out.startswith("NVIM v0.1") and not out.startswith("NVIM v1"):
        pytest.fail(f"Neovim 0.10 or newer is needed, {path} is {out.splitlines()[0]}")
    return path


class Editor:
    """One Neovim process with tether attached to its buffers."""

    def __init__(
        self, root: pathlib.Path, home: pathlib.Path, first_file: str, plugin: bool = False, env: dict | None = None
    ):
        self.root = root
        self.home = home
        self.tether = tether_bin()
        sock = home / "nvim.sock"
        # tether lsp's discovery file for Gemini CLI's IDE companion (`$TMPDIR/gemini/ide`) goes
        # to the test's own folder, unless the test names one.
        (home / "tmp").mkdir(exist_ok=True)
        env = {"TMPDIR": str(home / "tmp"), **(env or {})}
        env = dict(
            os.environ,
            TETHER_BIN=tether_bin(),
            TETHER_ROOT=str(root),
            TETHER_LOG="warn",
            TETHER_PLUGIN=str(int(plugin)),
            # tether lsp's lock file for Claude Code's IDE protocol goes to the test's own folder.
            **{"CLAUDE_CONFIG_DIR": str(home / "claude"), **env},
        )
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            (home / var).mkdir()
            env[var] = str(home / var)
        # tether lsp keeps its change journal under XDG_STATE_HOME; a `tether mcp` started by the
        # test is given the same folder, so that the test's journal is its own.
        self.state_home = home / "XDG_STATE_HOME"
        # tether lsp's bridge socket and discovery file live here: one private directory per test,
        # which a `tether mcp` started by the test must be given too.
        self.runtime = home / "runtime"
        self.runtime.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(self.runtime)
        self.log = open(home / "nvim.stderr", "w")
        self.proc = subprocess.Popen(
            [nvim_bin(), "--headless", "-u", str(HERE / "init.lua"), "-i", "NONE", "--listen", str(sock), first_file],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.nvim = wait_until("Neovim's socket", lambda: self._attach(sock))
        self.calls = 0
        self.wait_attached()

    def _attach(self, sock: pathlib.Path):
        if self.proc.poll() is not None:
            pytest.fail(f"Neovim exited with {self.proc.returncode}; see {self.log.name}")
        if not sock.exists():
            return None
        try:
            return pynvim.attach("socket", path=str(sock))
        except OSError:
            return None  # the file exists before Neovim listens on it

    def lua(self, code: str, *args):
        return self.nvim.exec_lua(code, *args)

    def wait_attached(self):
        wait_until(
            "tether to attach to the buffer",
            lambda: self.lua(
                "local c = vim.lsp.get_clients({bufnr = 0, name = 'tether'})[1]"
                " return c ~= nil and c.initialized == true"
            ),
        )

    def start_call(self, tool: str, arguments: dict) -> int:
        self.calls += 1
        self.lua("_G.tether_call(...)", self.calls, tool, arguments)
        return self.calls

    def result(self, call_id: int) -> dict:
        answer = wait_until(
            f"the answer to tool call {call_id}", lambda: self.lua("return _G.tether_results[...]", call_id)
        )
        assert answer.get("err") is None, f"JSON-RPC error: {answer['err']}"
        return answer["result"]

    def call(self, tool: str, **arguments) -> dict:
        return self.result(self.start_call(tool, arguments))

    def lines(self) -> list[str]:
        return self.nvim.current.buffer[:]

    def text(self) -> str:
        return "\n".join(self.lines()) + "\n"

    def modified(self) -> bool:
        return bool(self.nvim.current.buffer.options["modified"])

    def type_at(self, row: int, col: int, chars: str):
        """Types `chars` in insert mode at 1-based `row`, 0-based byte `col`, as keystrokes."""
        line = self.nvim.current.buffer[row - 1].encode()
        if line and col >= len(line):
            # Normal mode cannot rest after the last character: append after it instead.
            last = len(line.decode()[:-1].encode())
            self.nvim.current.window.cursor = (row, last)
            keys = "a" + chars + "<Esc>"
        else:
            self.nvim.current.window.cursor = (row, col)
            keys = "i" + chars + "<Esc>"
        self.nvim.feedkeys(self.nvim.replace_termcodes(keys), "nx", False)

    def close(self):
        try:
            self.nvim.command("qa!")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def ruff_bin() -> str:
    """Ruff (its language server is `ruff server`): TETHER_RUFF, else the one tests/requirements.txt
    installs beside this Python."""
    path = os.environ.get("TETHER_RUFF") or str(pathlib.Path(sys.executable).parent / "ruff")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no ruff at {path}; install tests/requirements.txt or set TETHER_RUFF")
    return path


def wait_for_ruffs_first_pull(editor):
    """Waits until Neovim pulled Ruff's diagnostics of the current buffer once (the plugin keeps
    which servers' parts of a buffer's report were pulled)."""
    wait_until("Neovim's first pull of Ruff's diagnostics", lambda: editor.lua(
        "local b = vim.api.nvim_get_current_buf()"
        " local c = vim.lsp.get_clients({bufnr = b, name = 'ruff'})[1]"
        " local pulled = require('tether.diagnostics').pulled[b]"
        " return c ~= nil and pulled ~= nil and pulled[c.id] == true"
    ), timeout=60)


def basedpyright_bin() -> str:
    """basedpyright's language server: TETHER_BASEDPYRIGHT, else the one scripts/install-basedpyright
    installs into the cache (once)."""
    path = os.environ.get("TETHER_BASEDPYRIGHT")
    if not path:
        script = HERE.parents[1] / "scripts" / "install-basedpyright"
        try:
            folder = subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout.strip()
        except subprocess.CalledProcessError as e:
            pytest.fail(f"could not install basedpyright: {e.stderr}")
        path = str(pathlib.Path(folder) / "basedpyright-langserver")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no basedpyright-langserver at {path}; run scripts/install-basedpyright or set TETHER_BASEDPYRIGHT")
    return path


def text_of(result: dict) -> str:
    return "".join(c["text"] for c in result["content"] if c["type"] == "text")


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("def main():\n    return 1\n")
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return root


@pytest.fixture
def editor(workspace, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(workspace, home, "src/main.py")
    yield e
    e.close()


@pytest.fixture
def plugin_editor(workspace, tmp_path):
    """The same Neovim with tether's own plugin (neovim/) instead of the smallest config."""
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(workspace, home, "src/main.py", plugin=True)
    yield e
    e.close()


def no_prompt(editor) -> bool:
    """Neovim is not waiting at a prompt: a yes/no or confirm prompt is mode `r?`, a hit-enter or
    more prompt `r`/`rm` (with `blocking` false while it waits)."""
    mode = editor.nvim.api.get_mode()
    return not mode["blocking"] and not mode["mode"].startswith("r")


def merge_told(editor) -> bool:
    """tether said it merged a change on disk into the current buffer (after verifying the edit):
    the plugin's one-shot write is in place."""
    return editor.lua(
        "local ok, cmds = pcall(vim.api.nvim_get_autocmds,"
        " {group = 'tether.disk.' .. vim.api.nvim_get_current_buf(), event = 'BufWriteCmd'})"
        " return ok and #cmds > 0"
    )
