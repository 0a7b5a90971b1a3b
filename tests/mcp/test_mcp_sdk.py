"""tether mcp driven by the official MCP Python SDK client: initialize, list, call."""

import json

import pytest

from conftest import error_of, session, text_of

READ_TOOLS = {"read_file", "read_files", "list_dir", "glob", "grep", "stat", "overview"}


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
            assert t.annotations.open_world_hint is False


@pytest.mark.anyio
async def test_read_only_lists_only_read_tools(tree):
    async with session(tree / "root", "--read-only") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == READ_TOOLS


@pytest.mark.anyio
async def test_read_tools(tree):
    async with session(tree / "root") as s:
        r = await s.call_tool("read_file", {"path": "src/main.py"})
        assert text_of(r) == "     1\tdef main():\n     2\t    return 1"
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
