"""The Windows build: `tether.exe` (TETHER_EXE) driven by the MCP Python SDK client and a
scripted language client. On Linux it runs under Debian's Wine in a prefix of its own
(TETHER_WINEPREFIX); on Windows (the release workflow's runner) it runs as it is.

Under Wine, paths cross as drive paths: Wine's `Z:` drive is the Unix root, so `/tmp/x` is
`Z:\\tmp\\x` to tether.exe (`winepath -w`)."""

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = pathlib.Path(__file__).resolve().parents[2]
# On Windows itself nothing stands in between.
NATIVE = sys.platform == "win32"


def exe() -> str:
    path = os.environ.get("TETHER_EXE", "")
    if not path or not os.path.isfile(path):
        pytest.skip("no tether.exe: scripts/windows-build builds it (TETHER_EXE names it)")
    if not NATIVE and not shutil.which("wine"):
        pytest.skip("no Wine: scripts/windows-build installs Debian's wine")
    return path


def wine_env() -> dict:
    env = dict(os.environ)
    if not NATIVE:
        env.setdefault("WINEPREFIX", os.environ.get("TETHER_WINEPREFIX", str(pathlib.Path.home() / ".cache/tether/wine")))
        # Wine's own diagnostics (fixme lines) would drown tether's stderr.
        env["WINEDEBUG"] = "-all"
    return env


def win(path: pathlib.Path) -> str:
    """The Windows path of `path`: under Wine, `Z:` is the Unix root."""
    return str(path) if NATIVE else "Z:" + str(path).replace("/", "\\")


def host_argv(program: str, *args: str) -> list[str]:
    """The command line that runs the Windows program `program` here."""
    return [program, *args] if NATIVE else ["wine", program, *args]


def wine_argv(*args: str) -> list[str]:
    """The command line of `tether.exe ARGS...`."""
    return host_argv(exe(), *args)


def helper(name: str, out_dir: pathlib.Path) -> str:
    """The helper program helpers/NAME.c, built with mingw into `out_dir`."""
    gcc = "gcc" if NATIVE else "x86_64-w64-mingw32-gcc"
    if not shutil.which(gcc):
        pytest.skip(f"no {gcc} to build helpers/{name}.c (scripts/windows-build installs Debian's mingw)")
    out = out_dir / f"{name}.exe"
    here = pathlib.Path(__file__).resolve().parent
    subprocess.run([gcc, "-O2", "-o", str(out), str(here / "helpers" / f"{name}.c")], check=True)
    return str(out)


def local_app_data(env: dict) -> pathlib.Path:
    """%LOCALAPPDATA% as this side sees it (inside the Wine prefix under Wine)."""
    if NATIVE:
        return pathlib.Path(env["LOCALAPPDATA"])
    found = sorted((pathlib.Path(env["WINEPREFIX"]) / "drive_c" / "users").glob("*/AppData/Local"))
    assert found, "the Wine prefix has no user profile"
    return found[0]


@contextlib.asynccontextmanager
async def session(root: pathlib.Path, *args: str):
    argv = wine_argv("mcp", "--root", win(root), *args)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=wine_env())
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def error_of(result) -> dict:
    assert result.is_error, f"expected an error result, got: {text_of(result)}"
    return json.loads(text_of(result))


def call(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`wine tether.exe ARGS...`, its output as text."""
    return subprocess.run(wine_argv(*args), env=wine_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def tree(tmp_path):
    """A workspace root with LF, CRLF and BOM files, and a secret beside it."""
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("def main():\n    return 1\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfalpha\nbeta\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP SECRET\n")
    (tmp_path / "root_evil").mkdir()
    (tmp_path / "root_evil" / "x.txt").write_text("TOP SECRET\n")
    return tmp_path


@pytest.fixture
def anyio_backend():
    return "asyncio"
