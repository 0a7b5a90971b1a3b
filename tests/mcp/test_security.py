"""Path attacks over MCP: every one is refused with path_escape or invalid_input, the server keeps
serving, and nothing outside the root is read, created or changed."""

import pytest

from conftest import error_of, session, snapshot, text_of

LONG_NAME = "a" * 300
LONG_PATH = "d/" * 2100 + "x"

# (tool, arguments, expected error kind). {out} is the outside directory, {root} the root.
ATTACKS = [
    ("read_file", {"path": "../outside/secret.txt"}, "path_escape"),
    ("read_file", {"path": "src/../../outside/secret.txt"}, "path_escape"),
    ("read_file", {"path": "{out}/secret.txt"}, "path_escape"),
    ("read_file", {"path": "/etc/passwd"}, "path_escape"),
    ("read_file", {"path": "{root}_evil/x.txt"}, "path_escape"),
    ("read_file", {"path": "{root}/../outside/secret.txt"}, "path_escape"),
    ("read_file", {"path": "link_file"}, "path_escape"),
    ("read_file", {"path": "link_dir/secret.txt"}, "path_escape"),
    ("read_file", {"path": "src/parent_link/secret.txt"}, "path_escape"),
    ("read_file", {"path": "src/main.py\u0000"}, "invalid_input"),
    ("read_file", {"path": "~/.bashrc"}, "invalid_input"),
    ("read_file", {"path": LONG_NAME}, "invalid_input"),
    ("read_file", {"path": LONG_PATH}, "invalid_input"),
    ("read_files", {"paths": ["link_file"]}, None),  # per-file error inline, checked below
    ("stat", {"path": "link_file"}, "path_escape"),
    ("list_dir", {"path": "link_dir"}, "path_escape"),
    ("list_dir", {"path": ".."}, "path_escape"),
    ("glob", {"pattern": "*", "path": "link_dir"}, "path_escape"),
    ("grep", {"pattern": "SECRET", "path": "link_dir"}, "path_escape"),
    ("grep", {"pattern": "SECRET", "path": "{out}"}, "path_escape"),
    ("overview", {"path": "../outside"}, "path_escape"),
    ("write_file", {"path": "../outside/new.txt", "content": "x"}, "path_escape"),
    ("write_file", {"path": "link_file", "content": "x"}, "path_escape"),
    ("write_file", {"path": "link_dir/new.txt", "content": "x"}, "path_escape"),
    ("write_file", {"path": "dangling", "content": "x"}, "path_escape"),
    ("write_file", {"path": "{out}/new.txt", "content": "x"}, "path_escape"),
    ("write_file", {"path": "~/new.txt", "content": "x"}, "invalid_input"),
    ("append", {"path": "link_file", "content": "x"}, "path_escape"),
    ("edit_file", {"path": "link_file", "old_string": "TOP", "new_string": "x"}, "path_escape"),
    ("mkdir", {"path": "link_dir/sub"}, "path_escape"),
    ("delete", {"path": "../outside/secret.txt"}, "path_escape"),
    ("move", {"source": "src/main.py", "destination": "../outside/main.py"}, "path_escape"),
    ("move", {"source": "link_dir/secret.txt", "destination": "stolen.txt"}, "path_escape"),
    ("run", {"command": "touch pwned", "cwd": "link_dir"}, "path_escape"),
    ("run", {"command": "touch pwned", "cwd": ".."}, "path_escape"),
    (
        "apply_patch",
        {"patch": "--- /dev/null\n+++ b/../outside/p.txt\n@@ -0,0 +1 @@\n+x\n"},
        "path_escape",
    ),
]


def fill(value, tree):
    if isinstance(value, str):
        return value.replace("{out}", str(tree / "outside")).replace("{root}", str(tree / "root"))
    if isinstance(value, list):
        return [fill(v, tree) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, tree) for k, v in value.items()}
    return value


@pytest.mark.anyio
async def test_path_attacks_are_refused(tree):
    assert len(ATTACKS) >= 25
    before = snapshot(tree / "outside")
    evil_before = snapshot(tree / "root_evil")
    async with session(tree / "root") as s:
        for tool, args, want in ATTACKS:
            result = await s.call_tool(tool, fill(args, tree))
            text = text_of(result)
            assert "TOP SECRET" not in text, f"{tool} {args} leaked outside content"
            if want is None:
                assert "path_escape" in text, f"{tool} {args}: {text}"
                continue
            err = error_of(result)
            assert err["error"] == want, f"{tool} {args}: {err}"
            if "{out}" not in str(args):
                # The message names the path as given, never the real target outside.
                assert str(tree / "outside") not in err["message"], f"message names the outside target: {err}"
        # The server is still serving after every refusal.
        ok = await s.call_tool("read_file", {"path": "src/main.py"})
        assert not ok.is_error and "def main" in text_of(ok)
    assert snapshot(tree / "outside") == before
    assert snapshot(tree / "root_evil") == evil_before
    assert not (tree / "root" / "pwned").exists()
    assert not (tree / "pwned").exists()
