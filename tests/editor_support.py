"""What the editor suites (tests/nvim, tests/emacs) share: the tether binary under test and
polling with a deadline."""

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
