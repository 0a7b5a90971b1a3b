"""The kakrc block of editors/kakoune.md, run in a real Kakoune (Debian's `kakoune`) without
kakoune-lsp: with a stand-in for kak-lsp's `lsp_servers` option and a filetype hook like those of
its `rc/servers.kak`, the block appends one `[tether]` table after the filetype's own servers, and
the result is valid TOML however often the hook fires. test_kak_lsp.py runs the block with the
real kak-lsp, where it is installed."""

import os
import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("kak") is None, reason="Kakoune check skipped: kakoune not installed")

# What kak-lsp declares (rc/lsp.kak) and one of its default filetype hooks (rc/servers.kak),
# registered before the recipe as `eval %sh{kak-lsp}` would.
STAND_IN = """\
declare-option str lsp_servers
hook -group lsp-filetype-rust global BufSetOption filetype=rust %{
    set-option buffer lsp_servers %{
        [rust-analyzer]
        root_globs = ["Cargo.toml"]
    }
}
"""


def recipe() -> str:
    """The recipe's kakrc block, without the two lines that need kak-lsp itself."""
    page = (REPO / "editors" / "kakoune.md").read_text()
    block = re.search(r"```kak\n(.*?)```", page, re.S).group(1)
    assert "eval %sh{kak-lsp}" in block and "lsp-enable" in block, block
    return "\n".join(l for l in block.splitlines() if l.strip() not in ("eval %sh{kak-lsp}", "lsp-enable")) + "\n"


def servers_after(tmp_path, filename: str, filetype: str, times: int) -> dict:
    """Opens `filename` in Kakoune, sets its filetype `times` times, and returns the buffer's
    `lsp_servers` read as TOML."""
    (tmp_path / "kakrc").write_text(STAND_IN + recipe())
    (tmp_path / filename).write_text("text\n")
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"))
    commands = ["source kakrc", f"edit {filename}"]
    commands += [f"set-option buffer filetype {filetype}"] * times
    commands += ["echo -to-file servers.toml %opt{lsp_servers}", "quit!"]
    subprocess.run(
        ["kak", "-n", "-ui", "dummy", "-e", "; ".join(commands)], cwd=tmp_path, env=env, check=True, timeout=30
    )
    return tomllib.loads((tmp_path / "servers.toml").read_text())


def test_tether_follows_the_filetypes_own_server(tmp_path):
    servers = servers_after(tmp_path, "main.rs", "rust", times=1)
    assert list(servers) == ["rust-analyzer", "tether"]
    assert servers["tether"]["args"] == ["lsp"]


def test_a_hook_that_fires_again_adds_nothing(tmp_path):
    servers = servers_after(tmp_path, "main.rs", "rust", times=3)
    assert list(servers) == ["rust-analyzer", "tether"]


def test_a_filetype_without_servers_gets_tether_alone(tmp_path):
    servers = servers_after(tmp_path, "notes.txt", "plain", times=2)
    assert list(servers) == ["tether"]
