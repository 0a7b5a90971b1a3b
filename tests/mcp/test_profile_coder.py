"""The `coder` profile (seed 001) over MCP with the official Python SDK client.

Each test quotes, in its docstring, the sentence of seed 001 that it checks.
"""

import json
import os
import time

import pytest
from mcp.shared.exceptions import MCPError

import subprocess

from conftest import session, snapshot, tether_bin, text_of

PROFILE = ("--profile", "coder")
READ_TOOLS = {"read_file", "list_dir", "glob", "grep"}
ALL_TOOLS = READ_TOOLS | {"write_file", "edit_file", "multi_edit", "apply_patch", "bash"}


async def ok(s, tool, args):
    r = await s.call_tool(tool, args)
    assert not r.is_error, f"{tool} {args}: {text_of(r)}"
    return text_of(r)


async def fail(s, tool, args):
    """The error envelope of a failing call."""
    r = await s.call_tool(tool, args)
    assert r.is_error, f"{tool} {args} should fail: {text_of(r)}"
    env = json.loads(text_of(r))
    assert isinstance(env["message"], str) and env["message"], env
    return env


@pytest.mark.anyio
async def test_lists_the_nine_tools(tree):
    """The nine tools, their inputs, outputs, and error codes. Four are read-only; five mutate."""
    async with session(tree / "root", *PROFILE) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == ALL_TOOLS
        for name, t in tools.items():
            assert t.annotations.read_only_hint == (name in READ_TOOLS), name
            assert t.input_schema["type"] == "object"
        props = lambda n: set(tools[n].input_schema["properties"])  # noqa: E731
        assert props("read_file") == {"path", "offset", "limit"}
        assert tools["read_file"].input_schema["required"] == ["path"]
        assert props("list_dir") == {"path"}
        assert props("glob") == {"pattern", "path", "respect_gitignore"}
        assert props("grep") == {
            "pattern", "path", "glob", "output_mode", "ignore_case", "multiline", "context",
            "before_context", "after_context", "head_limit", "offset",
        }
        assert props("write_file") == {"path", "content"}
        assert props("edit_file") == {"path", "old_string", "new_string", "replace_all"}
        assert props("multi_edit") == {"path", "edits"}
        assert props("apply_patch") == {"patch"}
        assert props("bash") == {"command", "cwd", "timeout_ms"}
        assert tools["bash"].input_schema["properties"]["timeout_ms"]["default"] == 120000
        assert tools["read_file"].input_schema["properties"]["limit"]["default"] == 2000


@pytest.mark.anyio
async def test_read_only_registers_only_the_read_tools(tree):
    """In read-only mode only the read tools are registered."""
    root = tree / "root"
    before = snapshot(root)
    async with session(root, *PROFILE, "--read-only") as s:
        assert {t.name for t in (await s.list_tools()).tools} == READ_TOOLS
        for tool, args in [("write_file", {"path": "x.txt", "content": "x"}), ("bash", {"command": "touch y"})]:
            with pytest.raises(MCPError) as e:
                await s.call_tool(tool, args)
            assert "unknown tool" in str(e.value)
        assert "def main" in await ok(s, "read_file", {"path": "src/main.py"})
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_read_file_numbers_lines(tree):
    """Output. Lines prefixed with right-aligned line numbers and a tab."""
    async with session(tree / "root", *PROFILE) as s:
        assert await ok(s, "read_file", {"path": "src/util.py"}) == "     1\timport os\n     2\t\n     3\tVALUE = 42"
        assert await ok(s, "read_file", {"path": "crlf.txt"}) == "     1\tone\n     2\ttwo"


@pytest.mark.anyio
async def test_read_file_negative_offset_reads_the_tail(tree):
    """offset ... 1-based start line. A negative value counts from the end (-N reads the last N lines); 0 is invalid."""
    root = tree / "root"
    (root / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    async with session(root, *PROFILE) as s:
        assert await ok(s, "read_file", {"path": "ten.txt", "offset": -2}) == "     9\tline 9\n    10\tline 10"
        assert (await fail(s, "read_file", {"path": "ten.txt", "offset": 0}))["error"] == "invalid_input"


@pytest.mark.anyio
async def test_read_file_pages_with_a_continuation_hint(tree):
    """When more lines remain, a continuation hint with the next offset is appended."""
    root = tree / "root"
    (root / "ten.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    async with session(root, *PROFILE) as s:
        out = await ok(s, "read_file", {"path": "ten.txt", "offset": 3, "limit": 2})
        body, hint = out.split("\n\n")
        assert body == "     3\tline 3\n     4\tline 4"
        assert "offset=5" in hint
        nxt = await ok(s, "read_file", {"path": "ten.txt", "offset": 5, "limit": 100})
        assert nxt.splitlines()[0] == "     5\tline 5" and "offset=" not in nxt


@pytest.mark.anyio
async def test_read_file_empty_and_past_eof(tree):
    """An empty file returns (empty file). ... invalid_input (offset 0, or a positive offset past EOF)."""
    root = tree / "root"
    (root / "empty.txt").write_text("")
    async with session(root, *PROFILE) as s:
        assert await ok(s, "read_file", {"path": "empty.txt"}) == "(empty file)"
        env = await fail(s, "read_file", {"path": "src/main.py", "offset": 3})
        assert env["error"] == "invalid_input" and "past the end" in env["message"]


@pytest.mark.anyio
async def test_read_file_truncates_long_lines(tree):
    """Over-long lines are truncated with a marker."""
    root = tree / "root"
    (root / "long.txt").write_text("x" * 5000 + "\nshort\n")
    async with session(root, *PROFILE) as s:
        first, second = (await ok(s, "read_file", {"path": "long.txt"})).split("\n")
        assert first.startswith("     1\t" + "x" * 2000) and "truncated" in first and "x" * 2001 not in first
        assert second == "     2\tshort"


@pytest.mark.anyio
async def test_read_file_decodes_utf16_that_edits_refuse(tree):
    """UTF-8 by default; a UTF-16 file with a byte-order mark (LE/BE) is detected and decoded (but the editing tools refuse it"""
    root = tree / "root"
    (root / "le.txt").write_bytes("\ufeffhello\nworld\n".encode("utf-16-le"))
    (root / "be.txt").write_bytes("\ufeffbig\n".encode("utf-16-be"))
    async with session(root, *PROFILE) as s:
        assert await ok(s, "read_file", {"path": "le.txt"}) == "     1\thello\n     2\tworld"
        assert await ok(s, "read_file", {"path": "be.txt"}) == "     1\tbig"
        env = await fail(s, "edit_file", {"path": "le.txt", "old_string": "hello", "new_string": "bye"})
        assert env["error"] == "is_binary"
    assert (root / "le.txt").read_bytes() == "\ufeffhello\nworld\n".encode("utf-16-le")


@pytest.mark.anyio
async def test_read_file_errors(tree):
    """Errors. not_found, not_a_file, is_binary, too_large, path_escape, invalid_input"""
    root = tree / "root"
    (root / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    async with session(root, *PROFILE) as s:
        for path, code in [
            ("missing.txt", "not_found"),
            ("src", "not_a_file"),
            ("bin.dat", "is_binary"),
            ("../outside/secret.txt", "path_escape"),
            ("link_file", "path_escape"),
            (str(tree / "outside" / "secret.txt"), "path_escape"),
        ]:
            env = await fail(s, "read_file", {"path": path})
            assert env["error"] == code, (path, env)
            assert "TOP SECRET" not in env["message"]
        assert (await fail(s, "read_file", {"path": "src/main.py", "limit": "many"}))["error"] == "invalid_input"


@pytest.mark.anyio
async def test_list_dir_marks_directories_and_empty(tree):
    """Output. One entry per line; directories are marked. An empty directory returns a sentinel line rather than an empty result."""
    root = tree / "root"
    (root / "empty").mkdir()
    (root / ".hidden").write_text("h")
    async with session(root, *PROFILE) as s:
        out = (await ok(s, "list_dir", {"path": "src"})).splitlines()
        assert out[0].startswith("main.py") or "main.py" in out
        assert "main.py" in out and "util.py" in out and any(l.startswith("parent_link@") for l in out)
        top = (await ok(s, "list_dir", {})).splitlines()
        assert "src/" in top and "docs/" in top and ".hidden" in top and "crlf.txt" in top
        assert not any("/" in l.rstrip("/") and "@" not in l for l in top), "not recursive"
        assert await ok(s, "list_dir", {"path": "empty"}) == "(empty directory)"
        assert (await fail(s, "list_dir", {"path": "crlf.txt"}))["error"] == "not_a_file"
        assert (await fail(s, "list_dir", {"path": "nope"}))["error"] == "not_found"
        assert (await fail(s, "list_dir", {"path": "link_dir"}))["error"] == "path_escape"


@pytest.mark.anyio
async def test_glob_newest_first_hidden_included(tree):
    """Output. Matching file paths, most-recently-modified first. Hidden files are included."""
    root = tree / "root"
    now = time.time()
    for i, name in enumerate(["old.py", "mid.py", ".hidden.py"]):
        (root / name).write_text("x\n")
        os.utime(root / name, (now - 1000 + i * 100, now - 1000 + i * 100))
    os.utime(root / "src" / "main.py", (now - 5000, now - 5000))
    os.utime(root / "src" / "util.py", (now - 4000, now - 4000))
    async with session(root, *PROFILE) as s:
        out = (await ok(s, "glob", {"pattern": "**/*.py"})).splitlines()
        assert out == [".hidden.py", "mid.py", "old.py", "src/util.py", "src/main.py"]
        assert await ok(s, "glob", {"pattern": "*.py", "path": "src"}) == "src/util.py\nsrc/main.py"


@pytest.mark.anyio
async def test_glob_no_matches_is_a_success(tree):
    """No matches returns (no matches) (a success, not an error)."""
    async with session(tree / "root", *PROFILE) as s:
        r = await s.call_tool("glob", {"pattern": "**/*.nothing"})
        assert not r.is_error and text_of(r) == "(no matches)"
        assert (await fail(s, "glob", {"pattern": "a[", "path": "src"}))["error"] == "invalid_input"
        assert (await fail(s, "glob", {"pattern": "*", "path": "nowhere"}))["error"] == "not_found"
        assert (await fail(s, "glob", {"pattern": "*", "path": "../outside"}))["error"] == "path_escape"


@pytest.mark.anyio
async def test_glob_respects_gitignore(tree):
    """respect_gitignore | boolean | no | true | Skip files ignored by the git ignore stack, and the .git/ dir."""
    root = tree / "root"
    (root / ".gitignore").write_text("*.log\n")
    (root / "app.log").write_text("x")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.log").write_text("ref")
    async with session(root, *PROFILE) as s:
        assert await ok(s, "glob", {"pattern": "**/*.log"}) == "(no matches)"
        assert await ok(s, "glob", {"pattern": "**/*.log", "respect_gitignore": False}) == "app.log"


@pytest.mark.anyio
async def test_grep_output_modes(tree):
    """files_with_matches prints one file path per line; content prints path:line:text (with context if requested); count prints path:N."""
    root = tree / "root"
    (root / "src" / "more.py").write_text("a = 1\nreturn 2\nb = 3\nreturn 4\n")
    async with session(root, *PROFILE) as s:
        assert await ok(s, "grep", {"pattern": "return"}) == "src/main.py\nsrc/more.py"
        assert await ok(s, "grep", {"pattern": "return", "output_mode": "count"}) == "src/main.py:1\nsrc/more.py:2"
        assert await ok(s, "grep", {"pattern": "return", "output_mode": "content"}) == (
            "src/main.py:2:    return 1\nsrc/more.py:2:return 2\nsrc/more.py:4:return 4"
        )
        out = await ok(s, "grep", {"pattern": "return 2", "output_mode": "content", "context": 1})
        assert out == "src/more.py-1-a = 1\nsrc/more.py:2:return 2\nsrc/more.py-3-b = 3"
        out = await ok(s, "grep", {"pattern": "return 2", "output_mode": "content", "before_context": 0, "after_context": 2})
        assert out == "src/more.py:2:return 2\nsrc/more.py-3-b = 3\nsrc/more.py-4-return 4"
        assert await ok(s, "grep", {"pattern": "VALUE|value", "ignore_case": True, "output_mode": "count"}) == "src/util.py:1"
        assert await ok(s, "grep", {"pattern": "nothing here"}) == "(no matches)"


@pytest.mark.anyio
async def test_grep_pages_with_an_honest_footer(tree):
    """head_limit/offset page over the collected results; a footer reports state honestly (showing A..B of N; call again with offset=B for more)"""
    root = tree / "root"
    (root / "many.txt").write_text("".join(f"hit {i}\n" for i in range(1, 8)))
    async with session(root, *PROFILE) as s:
        out = await ok(s, "grep", {"pattern": "hit", "output_mode": "content", "head_limit": 3})
        assert out == "many.txt:1:hit 1\nmany.txt:2:hit 2\nmany.txt:3:hit 3\n\n(showing 1..3 of 7; call again with offset=3 for more)"
        out = await ok(s, "grep", {"pattern": "hit", "output_mode": "content", "head_limit": 3, "offset": 3})
        assert out.endswith("(showing 4..6 of 7; call again with offset=6 for more)")
        assert out.startswith("many.txt:4:hit 4\n")
        assert await ok(s, "grep", {"pattern": "hit", "output_mode": "content", "offset": 6}) == "many.txt:7:hit 7"
        env = await fail(s, "grep", {"pattern": "hit", "head_limit": 0})
        assert env["error"] == "invalid_input" and "head_limit" in env["message"]


@pytest.mark.anyio
async def test_grep_multiline(tree):
    """multiline | boolean | no | false | Match across line boundaries (. spans \\n, ^/$ at line bounds)."""
    root = tree / "root"
    (root / "m.txt").write_text("start\nmiddle\nend\n")
    async with session(root, *PROFILE) as s:
        assert await ok(s, "grep", {"pattern": "start.middle"}) == "(no matches)"
        assert await ok(s, "grep", {"pattern": "start.middle", "multiline": True}) == "m.txt"
        assert await ok(s, "grep", {"pattern": "^middle$\\nend", "multiline": True, "output_mode": "content"}) == (
            "m.txt:2:middle\nm.txt:3:end"
        )


@pytest.mark.anyio
async def test_grep_policy_and_bad_regex(tree):
    """both apply one consistent policy (hidden files searched, .git/ skipped, the full git ignore stack respected, binary and oversized files skipped)."""
    root = tree / "root"
    (root / ".hidden.txt").write_text("needle\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle\n")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.txt").write_text("needle\n")
    (root / "bin.dat").write_bytes(b"needle\x00\x01")
    async with session(root, *PROFILE) as s:
        assert await ok(s, "grep", {"pattern": "needle"}) == ".hidden.txt"
        assert await ok(s, "grep", {"pattern": "needle", "glob": "*.dat"}) == "(no matches)"
        env = await fail(s, "grep", {"pattern": "(unclosed"})
        assert env["error"] == "invalid_input"
        assert (await fail(s, "grep", {"pattern": "x", "path": "nope"}))["error"] == "not_found"
        assert (await fail(s, "grep", {"pattern": "SECRET", "path": "link_dir"}))["error"] == "path_escape"


@pytest.mark.anyio
async def test_write_file_reports_bytes_and_created_or_overwritten(tree):
    """Output. A success message with the byte count and whether the file was created or overwritten."""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        assert await ok(s, "write_file", {"path": "new.txt", "content": "héllo"}) == "created new.txt (6 bytes)"
        assert (root / "new.txt").read_bytes() == "héllo".encode()
        # Content is written exactly: no line-ending conversion into the file's CRLF, no newline added.
        assert await ok(s, "write_file", {"path": "crlf.txt", "content": "a\nb"}) == "overwrote crlf.txt (3 bytes)"
        assert (root / "crlf.txt").read_bytes() == b"a\nb"


@pytest.mark.anyio
async def test_write_file_needs_the_parent(tree):
    """Parent directories must already exist. ... Errors. not_found (missing parent), not_a_file, path_escape, io_error."""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        env = await fail(s, "write_file", {"path": "no/such/dir/a.txt", "content": "x"})
        assert env["error"] == "not_found" and "parent" in env["message"]
        assert not (root / "no").exists()
        assert (await fail(s, "write_file", {"path": "src", "content": "x"}))["error"] == "not_a_file"
        assert (await fail(s, "write_file", {"path": "../evil.txt", "content": "x"}))["error"] == "path_escape"
        assert (await fail(s, "write_file", {"path": "link_dir/new.txt", "content": "x"}))["error"] == "path_escape"
    assert not (tree / "evil.txt").exists() and not (tree / "outside" / "new.txt").exists()


@pytest.mark.anyio
async def test_edit_file_unique_exact_match(tree):
    """old_string is matched literally and exactly first, and must be unique unless replace_all is set."""
    root = tree / "root"
    (root / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    async with session(root, *PROFILE) as s:
        env = await fail(s, "edit_file", {"path": "dup.py", "old_string": "x = 1", "new_string": "x = 9"})
        assert env["error"] == "ambiguous_match"
        assert (root / "dup.py").read_text() == "x = 1\ny = 2\nx = 1\n"
        await ok(s, "edit_file", {"path": "dup.py", "old_string": "x = 1", "new_string": "x = 9", "replace_all": True})
        assert (root / "dup.py").read_text() == "x = 9\ny = 2\nx = 9\n"
        await ok(s, "edit_file", {"path": "dup.py", "old_string": "y = 2", "new_string": "y = (2)"})
        assert (root / "dup.py").read_text() == "x = 9\ny = (2)\nx = 9\n"
        # Literal, not a regex.
        env = await fail(s, "edit_file", {"path": "dup.py", "old_string": "y = .2.", "new_string": "z"})
        assert env["error"] == "no_match"


@pytest.mark.anyio
async def test_edit_file_tolerant_match_is_disclosed(tree):
    """It applies only if it resolves to exactly one region (otherwise ambiguous_match, never a guess), and the success message discloses that a tolerant match was used."""
    root = tree / "root"
    (root / "f.py").write_text("def f():\n        if x:\n            return 1\n")
    async with session(root, *PROFILE) as s:
        out = await ok(s, "edit_file", {"path": "f.py", "old_string": "if x:\n    return 1", "new_string": "if y:\n    return 2"})
        assert "matched with" in out
        assert (root / "f.py").read_text() == "def f():\n        if y:\n            return 2\n"
        (root / "g.py").write_text("  a\n  b\n\n    a\n    b\n")
        env = await fail(s, "edit_file", {"path": "g.py", "old_string": "a\nb", "new_string": "c"})
        assert env["error"] == "ambiguous_match"
        assert (root / "g.py").read_text() == "  a\n  b\n\n    a\n    b\n"


@pytest.mark.anyio
async def test_edit_file_errors(tree):
    """Errors. no_match, ambiguous_match, invalid_input (identical strings), not_found, is_binary, too_large, path_escape."""
    root = tree / "root"
    (root / "bin.dat").write_bytes(b"abc\x00def")
    async with session(root, *PROFILE) as s:
        for args, code in [
            ({"path": "src/main.py", "old_string": "return 1", "new_string": "return 1"}, "invalid_input"),
            ({"path": "src/main.py", "old_string": "absent text", "new_string": "x"}, "no_match"),
            ({"path": "missing.py", "old_string": "a", "new_string": "b"}, "not_found"),
            ({"path": "bin.dat", "old_string": "abc", "new_string": "x"}, "is_binary"),
            ({"path": "link_file", "old_string": "TOP", "new_string": "x"}, "path_escape"),
        ]:
            assert (await fail(s, "edit_file", args))["error"] == code, args
    assert (tree / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


@pytest.mark.anyio
async def test_edit_file_keeps_line_endings_and_bom(tree):
    """Line endings and BOM are preserved."""
    root = tree / "root"
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\n")
    async with session(root, *PROFILE) as s:
        await ok(s, "edit_file", {"path": "bom.txt", "old_string": "alpha\nbeta", "new_string": "one\ntwo\nthree"})
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n"


@pytest.mark.anyio
async def test_multi_edit_in_order(tree):
    """Edits run in order, each operating on the result of the previous, and each inherits edit_file's exact-then-tolerant matching."""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        await ok(s, "multi_edit", {"path": "src/util.py", "edits": [
            {"old_string": "VALUE = 42", "new_string": "VALUE = 43"},
            {"old_string": "VALUE = 43", "new_string": "RESULT = 43"},
            {"old_string": "import os", "new_string": "import sys", "replace_all": True},
        ]})
    assert (root / "src" / "util.py").read_text() == "import sys\n\nRESULT = 43\n"


@pytest.mark.anyio
async def test_multi_edit_is_atomic_and_names_the_failing_index(tree):
    """The whole batch is applied atomically; any failing edit aborts the call — nothing is written — and the error names the failing edit index."""
    root = tree / "root"
    before = (root / "src" / "util.py").read_bytes()
    async with session(root, *PROFILE) as s:
        env = await fail(s, "multi_edit", {"path": "src/util.py", "edits": [
            {"old_string": "VALUE = 42", "new_string": "VALUE = 1"},
            {"old_string": "not there", "new_string": "x"},
        ]})
        assert env["error"] == "no_match" and env["message"].startswith("edits[1]")
        env = await fail(s, "multi_edit", {"path": "src/util.py", "edits": []})
        assert env["error"] == "invalid_input"
    assert (root / "src" / "util.py").read_bytes() == before


@pytest.mark.anyio
async def test_apply_patch_create_modify_delete(tree):
    """A /dev/null source (---) denotes a create; a /dev/null target (+++) a delete"""
    root = tree / "root"
    patch = (
        "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+print('new')\n+print('file')\n"
        "--- a/src/util.py\n+++ b/src/util.py\n@@ -1,3 +1,3 @@\n import os\n \n-VALUE = 42\n+VALUE = 7\n"
        "--- a/docs/guide.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-# Guide\n-\n-Hello tether.\n"
    )
    async with session(root, *PROFILE) as s:
        await ok(s, "apply_patch", {"patch": patch})
    assert (root / "src" / "new.py").read_bytes() == b"print('new')\nprint('file')\n"
    assert (root / "src" / "util.py").read_text() == "import os\n\nVALUE = 7\n"
    assert not (root / "docs" / "guide.md").exists()


@pytest.mark.anyio
async def test_apply_patch_pure_rename_keeps_bytes(tree):
    """a block whose old and new paths differ is a rename/move (with hunks it moves and edits in one step; without them it is a pure rename that preserves the exact bytes)."""
    root = tree / "root"
    before = (root / "crlf.txt").read_bytes()
    patch = (
        "diff --git a/crlf.txt b/moved/crlf.txt\nsimilarity index 100%\nrename from crlf.txt\nrename to moved/crlf.txt\n"
        "diff --git a/src/main.py b/src/entry.py\n--- a/src/main.py\n+++ b/src/entry.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n"
    )
    async with session(root, *PROFILE) as s:
        await ok(s, "apply_patch", {"patch": patch})
    assert (root / "moved" / "crlf.txt").read_bytes() == before and not (root / "crlf.txt").exists()
    assert (root / "src" / "entry.py").read_text() == "def main():\n    return 2\n"
    assert not (root / "src" / "main.py").exists()


@pytest.mark.anyio
async def test_apply_patch_all_or_nothing(tree):
    """Each file block is validated and applied; all changes commit together or roll back together."""
    root = tree / "root"
    before = snapshot(root)
    good = "--- a/src/util.py\n+++ b/src/util.py\n@@ -3 +3 @@\n-VALUE = 42\n+VALUE = 0\n"
    bad = "--- a/src/main.py\n+++ b/src/main.py\n@@ -1,2 +1,2 @@\n def nothing_like_this():\n-    return 99\n+    return 0\n"
    async with session(root, *PROFILE) as s:
        env = await fail(s, "apply_patch", {"patch": good + bad})
        assert env["error"] == "patch_failed" and "src/main.py" in env["message"]
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_apply_patch_refusals(tree):
    """Creating an existing path, renaming onto an existing destination, or naming the same path twice is rejected."""
    root = tree / "root"
    before = snapshot(root)
    create_existing = "--- /dev/null\n+++ b/src/main.py\n@@ -0,0 +1 @@\n+x\n"
    rename_onto = "diff --git a/src/main.py b/src/util.py\nrename from src/main.py\nrename to src/util.py\n"
    twice = (
        "--- a/src/util.py\n+++ b/src/util.py\n@@ -1 +1 @@\n-import os\n+import re\n"
        "--- a/src/util.py\n+++ b/src/util.py\n@@ -3 +3 @@\n-VALUE = 42\n+VALUE = 1\n"
    )
    async with session(root, *PROFILE) as s:
        for patch, code, named in [
            (create_existing, "patch_failed", "src/main.py"),
            (rename_onto, "patch_failed", "src/util.py"),
            (twice, "invalid_input", "src/util.py"),
        ]:
            env = await fail(s, "apply_patch", {"patch": patch})
            assert env["error"] == code and env["message"].startswith(named), env
        assert (await fail(s, "apply_patch", {"patch": "not a diff"}))["error"] == "invalid_input"
        escape = "--- /dev/null\n+++ b/../outside/x.txt\n@@ -0,0 +1 @@\n+x\n"
        assert (await fail(s, "apply_patch", {"patch": escape}))["error"] == "path_escape"
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_bash_returns_a_json_object(tree):
    """On success, a JSON object { exit_code, stdout, stderr, signal, timed_out }. ... A non-zero exit is a normal result, not an error (isError is false)."""
    async with session(tree / "root", *PROFILE) as s:
        r = await s.call_tool("bash", {"command": "echo out; echo err >&2; pwd; exit 3", "cwd": "src"})
        assert not r.is_error
        v = json.loads(text_of(r))
        assert v == {
            "exit_code": 3,
            "stdout": f"out\n{tree / 'root' / 'src'}\n",
            "stderr": "err\n",
            "signal": None,
            "timed_out": False,
        }
        assert r.structured_content == v
        v = json.loads(await ok(s, "bash", {"command": "read x; echo \"got:$x\""}))
        assert v["stdout"] == "got:\n" and v["exit_code"] == 0, "stdin is closed"


@pytest.mark.anyio
async def test_bash_timeout_envelope_keeps_partial_output(tree):
    """Errors. timeout (process group killed; partial output returned)"""
    async with session(tree / "root", *PROFILE) as s:
        start = time.monotonic()
        env = await fail(s, "bash", {"command": "echo partial; sleep 30 & sleep 30", "timeout_ms": 500})
        assert time.monotonic() - start < 10
        assert env["error"] == "timeout"
        assert env["timed_out"] is True and env["stdout"] == "partial\n" and env["signal"] == "SIGKILL"
        # A value over the ceiling clamps rather than failing.
        v = json.loads(await ok(s, "bash", {"command": "echo fine", "timeout_ms": 10**9}))
        assert v["stdout"] == "fine\n"


@pytest.mark.anyio
async def test_bash_background_process_keeps_running(tree):
    """The command runs to completion and blocks until it exits (stdin is closed) — a long-lived process must be backgrounded, e.g. npm start > /tmp/out.log 2>&1 &."""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        start = time.monotonic()
        v = json.loads(await ok(s, "bash", {"command": "(sleep 1; echo alive > bg.txt) > /dev/null 2>&1 & echo started"}))
        assert v["stdout"] == "started\n" and time.monotonic() - start < 1
        for _ in range(100):
            if (root / "bg.txt").exists():
                break
            time.sleep(0.05)
        assert (root / "bg.txt").read_text() == "alive\n"


@pytest.mark.anyio
async def test_bash_bad_cwd(tree):
    """not_found / not_a_file (bad cwd), path_escape (cwd outside the workspace), io_error (spawn failure)."""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        assert (await fail(s, "bash", {"command": "touch x", "cwd": "nowhere"}))["error"] == "not_found"
        assert (await fail(s, "bash", {"command": "touch x", "cwd": "crlf.txt"}))["error"] == "not_a_file"
        assert (await fail(s, "bash", {"command": "touch x", "cwd": "link_dir"}))["error"] == "path_escape"
        assert (await fail(s, "bash", {"command": "touch x", "cwd": str(tree)}))["error"] == "path_escape"
        assert (await fail(s, "bash", {"command": "   "}))["error"] == "invalid_input"
    assert not (tree / "outside" / "x").exists() and not (tree / "x").exists()


@pytest.mark.anyio
async def test_bash_spills_overflow(tree):
    """stdout/stderr are budgeted against a shared maxOutputBytes; overflow is written to a ... spill file referenced in the result"""
    root = tree / "root"
    async with session(root, *PROFILE) as s:
        v = json.loads(await ok(s, "bash", {"command": "seq 1 100000; echo small >&2"}))
        spill = v["stdout_spill"]
        assert spill.startswith(".tether/bash/")
        assert len(v["stdout"].encode()) < 140_000 and spill in v["stdout"]
        assert v["stderr"] == "small\n" and "stderr_spill" not in v
        full = (root / spill).read_text()
        assert full.splitlines()[-1] == "100000" and len(full.splitlines()) == 100000
        tail = await ok(s, "read_file", {"path": spill, "offset": -1})
        assert tail.endswith("\t100000")


@pytest.mark.anyio
async def test_bash_output_limit(tree):
    """output_limit (a hard per-stream in-memory ceiling was hit and the command was killed)"""
    async with session(tree / "root", *PROFILE) as s:
        start = time.monotonic()
        env = await fail(s, "bash", {"command": "yes", "timeout_ms": 60000})
        assert env["error"] == "output_limit" and env["timed_out"] is False
        assert time.monotonic() - start < 30


@pytest.mark.anyio
async def test_apply_patch_keeps_line_endings_and_bom(tree):
    """Modified files preserve line endings and BOM; created files use LF."""
    root = tree / "root"
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    patch = (
        "--- a/bom.txt\n+++ b/bom.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+2\n+three\n"
        "--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    )
    async with session(root, *PROFILE) as s:
        out = await ok(s, "apply_patch", {"patch": patch})
        assert "M bom.txt" in out and "A fresh.txt" in out
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\nthree\r\n"
    assert (root / "fresh.txt").read_bytes() == b"a\nb\n"


def test_tether_tools_prints_the_contract_list(tree):
    """read_file | no | Read a text file (UTF-8/UTF-16), with line numbers, paging, tail. ... bash | yes | Run a shell command (sh -c) and capture stdout/stderr/exit."""
    out = subprocess.run([tether_bin(), "tools", "--profile", "coder", "--json"], capture_output=True, text=True, check=True)
    tools = json.loads(out.stdout)
    assert [t["name"] for t in tools] == [
        "read_file", "list_dir", "glob", "grep", "write_file", "edit_file", "multi_edit", "apply_patch", "bash",
    ]
    assert {t["name"]: t["annotations"]["readOnlyHint"] for t in tools}["bash"] is False
    out = subprocess.run([tether_bin(), "tools", "--profile", "coder", "--json", "--read-only"], capture_output=True, text=True, check=True)
    assert [t["name"] for t in json.loads(out.stdout)] == ["read_file", "list_dir", "glob", "grep"]
