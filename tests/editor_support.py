"""What the editor suites (tests/nvim, tests/emacs) share: the tether binary under test, polling
with a deadline, and an assistant attached to the editor's tether lsp."""

import os
import pathlib
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
PATIENCE = 30.0


def tether_bin() -> str:
    path = os.environ.get("TETHER_BIN") or str(REPO / "target" / "release" / "tether")
    if not os.access(path, os.X_OK):
        pytest.fail(f"tether binary not found at {path}; build it with cargo build --release or set TETHER_BIN")
    return path


def wait_until(what: str, check, timeout: float = PATIENCE):
    """Polls `check` until it returns something truthy; fails naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def attach_assistant(root: pathlib.Path, runtime: pathlib.Path):
    """An MCP SDK client session with a `tether mcp` that attaches to the editor's tether lsp
    (started with the same XDG_RUNTIME_DIR `runtime`); the caller closes it."""
    from assistant import Assistant

    # The lsp publishes its discovery file once it has the editor's folder.
    wait_until("tether lsp's discovery file", lambda: list((runtime / "tether").glob("*.json")))
    return Assistant(tether_bin(), root, runtime)
