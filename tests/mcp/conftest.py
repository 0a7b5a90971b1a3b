"""Shared fixtures: the built tether binary, a workspace with an outside neighbour, and an MCP
session driven by the official MCP Python SDK client."""

import contextlib
import hashlib
import json
import os
import pathlib
import shutil

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = pathlib.Path(__file__).resolve().parents[2]


def tether_bin() -> str:
    path = os.environ.get("TETHER_BIN") or str(REPO / "target" / "release" / "tether")
    if not os.access(path, os.X_OK):
        pytest.fail(f"tether binary not found at {path}; build it with cargo build --release or set TETHER_BIN")
    return path


@pytest.fixture
def tree(tmp_path):
    """A workspace root with a few files, and an `outside/` directory next to it holding a secret,
    reachable only through symlinks planted inside the root."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    outside.mkdir()
    (root / "src" / "main.py").write_text("def main():\n    return 1\n")
    (root / "src" / "util.py").write_text("import os\n\nVALUE = 42\n")
    (root / "docs" / "guide.md").write_text("# Guide\n\nHello tether.\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (tmp_path / "root_evil").mkdir()
    (tmp_path / "root_evil" / "x.txt").write_text("TOP SECRET\n")
    os.symlink(outside / "secret.txt", root / "link_file")
    os.symlink(outside, root / "link_dir")
    os.symlink(outside / "new.txt", root / "dangling")
    os.symlink(outside, root / "src" / "parent_link")
    return tmp_path


def snapshot(path: pathlib.Path) -> dict:
    """Every entry under `path` with its type, content hash and mtime, to prove nothing changed."""
    out = {}
    for p in sorted(path.rglob("*")):
        st = p.lstat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else None
        out[str(p.relative_to(path))] = (st.st_mode, digest, st.st_mtime_ns)
    return out


@contextlib.asynccontextmanager
async def session(root: pathlib.Path, *args: str):
    # The whole environment, so that the state directory a test run chose (the change journal's)
    # reaches the server; the SDK passes only a few variables by default.
    params = StdioServerParameters(command=tether_bin(), args=["mcp", "--root", str(root), *args], env=dict(os.environ))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def error_of(result) -> dict:
    """The standard profile's error object from an isError result."""
    assert result.is_error, f"expected an error result, got: {text_of(result)}"
    return json.loads(text_of(result))


@pytest.fixture
def anyio_backend():
    return "asyncio"
