"""tether mcp driven by the official MCP Python SDK client: initialize, list, call."""

import json
import re

import pytest

from conftest import error_of, session, text_of

# With the change journal on (the default), `history` and `changes_since` are read tools too.
READ_TOOLS = {"read_file", "read_files", "list_dir", "glob", "grep", "stat", "overview", "history", "changes_since"}


@pytest.mark.anyio
async def test_initialize_and_list(tree):
    async with session(tree / "root") as s:
        tools = (await s.list_tools()).tools
        names = {t.name for t in tools}
        assert READ_TOOLS <= names
        assert {"write_file", "edit_file", "apply_patch", "run"} <= names
        for t in tools:
            assert t.description and len(t.description) > 40, t.name
            assert t.input_schema["type"] == "object", t.name
            for field, schema in t.input_schema.get("properties", {}).items():
                assert schema.get("description"), f"{t.name}.{field} has no description"
            assert t.annotations.read_only_hint == (t.name in READ_TOOLS), t.name
            assert t.annotations.open_world_hint == (t.name == "run"), t.name


@pytest.mark.anyio
async def test_read_only_lists_only_read_tools(tree):
    async with session(tree / "root", "--read-only") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == READ_TOOLS


@pytest.mark.anyio
async def test_read_tools(tree):
    async with session(tree / "root") as s:
        r = await s.call_tool("read_file", {"path": "src/main.py"})
        assert re.fullmatch(r"     1\tdef main\(\):\n     2\t    return 1\n\[version: [0-9a-f]{12}\]", text_of(r)), text_of(r)
        r = await s.call_tool("grep", {"pattern": "VALUE", "output_mode": "content"})
        assert "src/util.py:3:VALUE = 42" in text_of(r)
        r = await s.call_tool("glob", {"pattern": "**/*.py"})
        assert set(text_of(r).splitlines()) == {"src/main.py", "src/util.py"}
        r = await s.call_tool("list_dir", {"path": "src"})
        assert "main.py" in text_of(r) and "util.py" in text_of(r)
        r = await s.call_tool("stat", {"path": "crlf.txt"})
        info = json.loads(text_of(r))
        assert info["line_ending"] == "crlf" and info["lines"] == 2
        assert r.structured_content["line_ending"] == "crlf"
        r = await s.call_tool("read_files", {"paths": ["src/main.py", "missing.txt"]})
        assert not r.is_error and "not_found" in text_of(r)
        r = await s.call_tool("overview", {})
        assert "src/" in text_of(r)


@pytest.mark.anyio
async def test_errors(tree):
    async with session(tree / "root") as s:
        assert error_of(await s.call_tool("read_file", {"path": "nope.txt"}))["error"] == "not_found"
        assert error_of(await s.call_tool("read_file", {"path": 3}))["error"] == "invalid_input"
        assert error_of(await s.call_tool("grep", {"pattern": "("}))["error"] == "invalid_input"
        with pytest.raises(Exception) as e:
            await s.call_tool("no_such_tool", {})
        assert "unknown tool" in str(e.value)


@pytest.mark.anyio
async def test_change_tools_land_on_disk(tree):
    root = tree / "root"
    async with session(root) as s:
        async def ok(tool, args):
            r = await s.call_tool(tool, args)
            assert not r.is_error, f"{tool}: {text_of(r)}"
            return r

        r = await ok("write_file", {"path": "new/notes.md", "content": "first\n"})
        assert "created" in text_of(r)
        assert (root / "new" / "notes.md").read_text() == "first\n"

        # A tolerant match: the model's indentation differs from the file's.
        r = await ok("edit_file", {"path": "src/main.py", "old_string": "def main():\n  return 1",
                                   "new_string": "def main():\n  return 2"})
        assert (root / "src" / "main.py").read_text() == "def main():\n    return 2\n"

        await ok("multi_edit", {"path": "src/util.py", "edits": [
            {"old_string": "VALUE = 42", "new_string": "VALUE = 43"},
            {"old_string": "import os", "new_string": "import sys"}]})
        assert (root / "src" / "util.py").read_text() == "import sys\n\nVALUE = 43\n"

        r = await ok("replace", {"path": "crlf.txt", "pattern": "t(w)o", "replacement": "T$1O", "regex": True})
        assert (root / "crlf.txt").read_bytes() == b"one\r\nTwO\r\n", "CRLF kept"

        await ok("insert", {"path": "crlf.txt", "line": 1, "content": "zero\n"})
        await ok("append", {"path": "crlf.txt", "content": "three\n"})
        assert (root / "crlf.txt").read_bytes() == b"zero\r\none\r\nTwO\r\nthree\r\n"

        patch = ("--- a/docs/guide.md\n+++ b/docs/guide.md\n@@ -1,3 +1,3 @@\n # Guide\n \n-Hello tether.\n"
                 "+Hello, tether.\n--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+new page\n")
        r = await ok("apply_patch", {"patch": patch})
        assert (root / "docs" / "guide.md").read_text() == "# Guide\n\nHello, tether.\n"
        assert (root / "docs" / "new.md").read_text() == "new page\n"

        await ok("mkdir", {"path": "a/b/c"})
        assert (root / "a" / "b" / "c").is_dir()
        await ok("move", {"source": "docs/new.md", "destination": "a/b/c/moved.md"})
        assert (root / "a" / "b" / "c" / "moved.md").read_text() == "new page\n"
        await ok("delete", {"path": "a", "recursive": True})
        assert not (root / "a").exists()

        r = await ok("run", {"command": "echo hi; echo oops >&2; exit 3", "cwd": "src"})
        assert r.structured_content["exit_code"] == 3
        assert r.structured_content["stdout"] == "hi\n"
        assert r.structured_content["stderr"] == "oops\n"


@pytest.mark.anyio
async def test_failed_patch_changes_nothing(tree):
    root = tree / "root"
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    async with session(root) as s:
        patch = ("--- a/src/main.py\n+++ b/src/main.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 9\n"
                 "--- a/src/util.py\n+++ b/src/util.py\n@@ -1 +1 @@\n-import os\n+import re\n"
                 "--- a/docs/guide.md\n+++ b/docs/guide.md\n@@ -1 +1 @@\n-# Not the title\n+# Title\n")
        err = error_of(await s.call_tool("apply_patch", {"patch": patch}))
        assert err["error"] == "patch_failed" and "docs/guide.md" in err["message"]
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    assert after == before


@pytest.mark.anyio
async def test_history_names_the_client_and_undo_takes_the_change_back(tree):
    root = tree / "root"
    async with session(root) as s:
        r = await s.call_tool("edit_file", {"path": "src/main.py", "old_string": "return 1", "new_string": "return 2"})
        assert not r.is_error, text_of(r)
        listed = (await s.call_tool("history", {})).structured_content["changesets"]
        # The official SDK introduces itself as "mcp" with its own version.
        assert listed[0]["client"].startswith("mcp "), listed[0]
        assert listed[0]["tool"] == "edit_file" and listed[0]["files"][0]["path"] == "src/main.py"
        r = await s.call_tool("undo", {"id": listed[0]["id"]})
        assert not r.is_error, text_of(r)
        assert (root / "src" / "main.py").read_text() == "def main():\n    return 1\n"
        r = await s.call_tool("undo", {"id": listed[0]["id"]})
        assert error_of(r)["error"] == "invalid_input" and "already undone" in error_of(r)["message"]
