"""Contract tests of the `filesystem` profile (seed 000_6e4591001abd2863.txt), over MCP with the
official Python SDK client. Each test quotes, in its docstring, the sentence of the seed it checks,
and asserts what goes over the wire, what is on disk afterwards, and the JSON-RPC error codes."""

import json
import os
import subprocess
import time

import pytest
from mcp.shared.exceptions import MCPError

from conftest import session, snapshot, tether_bin, text_of

READ_TOOLS = {
    "read_file",
    "read_text_file",
    "read_multiple_files",
    "list_directory",
    "directory_tree",
    "get_file_info",
    "list_allowed_directories",
    "search_files",
    "grep_files",
    "glob_search",
}
WRITE_TOOLS = {"write_file", "create_directory", "move_file", "delete", "edit_file", "edit_files", "run_command"}


def fs(root, *args):
    return session(root, "--profile", "filesystem", *args)


async def ok(s, tool, args):
    r = await s.call_tool(tool, args)
    assert not r.is_error, f"{tool}: {text_of(r)}"
    return text_of(r)


async def rpc_error(s, tool, args):
    """The JSON-RPC error a call answers with: (code, message)."""
    with pytest.raises(MCPError) as e:
        await s.call_tool(tool, args)
    return e.value.code, e.value.message


@pytest.fixture
def root(tree):
    return (tree / "root").resolve()


# --- listing and modes -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_every_tool_is_listed(root):
    """Detailed JSON parameter reference for all tools exposed by replay --mcp-server."""
    async with fs(root) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for name, t in tools.items():
        assert t.annotations.read_only_hint == (name in READ_TOOLS), name
    assert set(tools["edit_file"].input_schema["required"]) == {"path", "edits"}
    item = tools["edit_file"].input_schema["properties"]["edits"]["items"]["properties"]
    assert {"oldText", "newText", "limit", "isRegex", "caseInsensitive"} <= set(item)
    assert set(tools["grep_files"].input_schema["properties"]) == {
        "regex", "directory", "globs", "excludeGlobs", "caseInsensitive", "contextLines", "maxResults"
    }
    # Legacy aliases are accepted silently, not advertised.
    assert set(tools["search_files"].input_schema["properties"]) == {"directory", "nameContains", "excludeGlobs"}


@pytest.mark.anyio
async def test_read_only_mode_registers_only_read_tools(root):
    """One line per configured directory: <path> (read-write|read-only)."""
    before = snapshot(root)
    async with fs(root, "--read-only") as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == READ_TOOLS
        assert await ok(s, "list_allowed_directories", {}) == f"{root} (read-only)"
        code, _ = await rpc_error(s, "write_file", {"path": "x.txt", "content": "x"})
        assert code == -32602
        assert await ok(s, "read_file", {"path": "src/main.py"}) == "def main():\n    return 1\n"
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_list_allowed_directories(root):
    """{}Response: One line per configured directory: <path> (read-write|read-only)."""
    async with fs(root) as s:
        assert await ok(s, "list_allowed_directories", {}) == f"{root} (read-write)"


# --- reads -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_read_file_returns_text_and_binary_as_blob(root):
    """Standard: Returns text content. [ext]: Binary files return blob type instead of an error."""
    (root / "img.png").write_bytes(b"\x89PNG\x00\x01\x02")
    async with fs(root) as s:
        assert await ok(s, "read_file", {"path": str(root / "src/main.py")}) == "def main():\n    return 1\n"
        assert await ok(s, "read_text_file", {"path": "docs/guide.md"}) == "# Guide\n\nHello tether.\n"
        r = await s.call_tool("read_file", {"path": "img.png"})
        assert not r.is_error
        assert len(r.content) == 1 and r.content[0].type == "resource", r.content
        blob = r.content[0].resource
        assert (blob.blob, blob.mime_type) == ("iVBORwABAg==", "image/png")
        assert str(blob.uri) == f"file://{root}/img.png"


@pytest.mark.anyio
async def test_read_file_errors(root):
    """Errors: -32001 path not allowed · -32002 not found · -32603 read failed"""
    async with fs(root) as s:
        assert (await rpc_error(s, "read_file", {"path": "/etc/passwd"}))[0] == -32001
        code, message = await rpc_error(s, "read_file", {"path": "link_file"})
        assert code == -32001 and "TOP SECRET" not in message
        assert (await rpc_error(s, "read_file", {"path": "nope.txt"}))[0] == -32002
        assert (await rpc_error(s, "read_file", {"path": "src"}))[0] == -32603
        assert (await rpc_error(s, "read_file", {}))[0] == -32602


@pytest.mark.anyio
async def test_read_multiple_files_inline_errors(root):
    """Each item text is prefixed path:\\ncontent. Errors appear inline as path:\\n[error: ...]; the whole call never
    fails."""
    async with fs(root) as s:
        r = await s.call_tool("read_multiple_files", {"paths": ["src/util.py", "nope.txt", "src/*.py", "/etc/passwd"]})
    assert not r.is_error
    parts = [c.text for c in r.content]
    assert len(parts) == 4, "one content item per file"
    assert parts[0] == "src/util.py:\nimport os\n\nVALUE = 42\n"
    assert parts[1].startswith("nope.txt:\n[error: ")
    # Globs are not expanded: a literal path that does not exist.
    assert parts[2].startswith("src/*.py:\n[error: ")
    assert parts[3].startswith("/etc/passwd:\n[error: Access denied") and "root:" not in parts[3]


@pytest.mark.anyio
async def test_read_multiple_files_params(root):
    """Errors: -32602 missing paths"""
    async with fs(root) as s:
        assert (await rpc_error(s, "read_multiple_files", {}))[0] == -32602
        assert (await rpc_error(s, "read_multiple_files", {"paths": "src/util.py"}))[0] == -32602
        too_many = [f"f{i}.txt" for i in range(51)]
        assert (await rpc_error(s, "read_multiple_files", {"paths": too_many}))[0] == -32602


@pytest.mark.anyio
async def test_list_directory_prefixes(root):
    """Response: One entry per line, prefixed [FILE] or [DIR]."""
    async with fs(root) as s:
        out = await ok(s, "list_directory", {"path": str(root)})
        assert (await rpc_error(s, "list_directory", {"path": "missing"}))[0] == -32002
        assert (await rpc_error(s, "list_directory", {"path": "link_dir"}))[0] == -32001
    lines = out.splitlines()
    assert "[DIR] src" in lines and "[DIR] docs" in lines and "[FILE] crlf.txt" in lines
    assert all(line.startswith(("[FILE] ", "[DIR] ")) for line in lines)


@pytest.mark.anyio
async def test_directory_tree_depth(root):
    """depth semantics (find -maxdepth convention): Omitted -> unlimited (full recursive tree, standard MCP
    behavior) 0-> root node only, no children 1-> root + immediate children N-> N levels deep"""
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "deep.txt").write_text("x")
    async with fs(root) as s:
        zero = json.loads(await ok(s, "directory_tree", {"path": "a", "depth": 0}))
        one = json.loads(await ok(s, "directory_tree", {"path": "a", "depth": 1}))
        full = json.loads(await ok(s, "directory_tree", {"path": "a"}))
        assert (await rpc_error(s, "directory_tree", {"path": "nope"}))[0] == -32002
        assert (await rpc_error(s, "directory_tree", {"path": "/"}))[0] == -32001
    assert zero == {"name": "a", "type": "directory"}
    assert one == {"name": "a", "type": "directory", "children": [{"name": "b", "type": "directory"}]}
    assert full == {"name": "a", "type": "directory", "children": [
        {"name": "b", "type": "directory", "children": [
            {"name": "c", "type": "directory", "children": [{"name": "deep.txt", "type": "file"}]}]}]}


@pytest.mark.anyio
async def test_get_file_info(root):
    """Response: Multi-line text: type: file|directory, size: <bytes>, modified: <ISO8601>, permissions: <octal>."""
    os.chmod(root / "src" / "main.py", 0o640)
    async with fs(root) as s:
        out = await ok(s, "get_file_info", {"path": "src/main.py"})
        d = await ok(s, "get_file_info", {"path": "src"})
        assert (await rpc_error(s, "get_file_info", {"path": "nope"}))[0] == -32002
    info = dict(line.split(": ", 1) for line in out.splitlines())
    assert info["type"] == "file" and info["size"] == str((root / "src/main.py").stat().st_size)
    assert info["permissions"] == "640"
    assert time.strptime(info["modified"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert d.startswith("type: directory\n")


# --- writes ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_write_file_creates_parents(root):
    """Response: result.content[0].text = "Successfully wrote <path>"."""
    target = root / "new" / "deep" / "notes.md"
    async with fs(root) as s:
        assert await ok(s, "write_file", {"path": str(target), "content": "héllo\n"}) == f"Successfully wrote {target}"
        assert await ok(s, "write_file", {"path": "src/util.py", "content": "X = 1\n"}) == "Successfully wrote src/util.py"
        assert (await rpc_error(s, "write_file", {"path": "a.txt"}))[0] == -32602
        assert (await rpc_error(s, "write_file", {"path": "link_dir/x.txt", "content": "x"}))[0] == -32001
        assert (await rpc_error(s, "write_file", {"path": "src", "content": "x"}))[0] == -32603
    assert target.read_text() == "héllo\n"
    assert (root / "src" / "util.py").read_text() == "X = 1\n"
    assert not (root.parent / "outside" / "x.txt").exists()


@pytest.mark.anyio
async def test_create_directory_mkdir_p(root):
    """"path": "<string>" // [std] Absolute path (mkdir -p semantics)"""
    async with fs(root) as s:
        await ok(s, "create_directory", {"path": "x/y/z"})
        await ok(s, "create_directory", {"path": "x/y/z"})
        assert (await rpc_error(s, "create_directory", {"path": "src/main.py"}))[0] == -32603
        assert (await rpc_error(s, "create_directory", {"path": "link_dir/new"}))[0] == -32001
    assert (root / "x" / "y" / "z").is_dir()
    assert not (root.parent / "outside" / "new").exists()


@pytest.mark.anyio
async def test_move_file_creates_parents(root):
    """"destination": "<string>" // [std] Absolute destination path (creates parents)"""
    async with fs(root) as s:
        await ok(s, "move_file", {"source": "docs/guide.md", "destination": "archive/2024/guide.md"})
        assert (await rpc_error(s, "move_file", {"source": "nope", "destination": "x"}))[0] == -32002
        assert (await rpc_error(s, "move_file", {"source": "src/main.py", "destination": "/tmp/stolen.py"}))[0] == -32001
        # An existing destination is refused, not overwritten.
        assert (await rpc_error(s, "move_file", {"source": "src/main.py", "destination": "src/util.py"}))[0] == -32603
    assert (root / "archive" / "2024" / "guide.md").read_text() == "# Guide\n\nHello tether.\n"
    assert not (root / "docs" / "guide.md").exists()
    assert (root / "src" / "util.py").read_text() == "import os\n\nVALUE = 42\n"


@pytest.mark.anyio
async def test_delete_recursive(root):
    """"path": "<string>" // [std] Absolute path (file or directory, recursive)"""
    async with fs(root) as s:
        assert await ok(s, "delete", {"path": "src"}) == "Successfully deleted src"
        await ok(s, "delete", {"path": "crlf.txt"})
        assert (await rpc_error(s, "delete", {"path": "src"}))[0] == -32002
        assert (await rpc_error(s, "delete", {"path": str(root.parent / "outside")}))[0] == -32001
    assert not (root / "src").exists() and not (root / "crlf.txt").exists()
    assert (root.parent / "outside" / "secret.txt").exists()


# --- edit_file -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_edit_literal_uniqueness_guard(root):
    """If it occurs 2+ times the edit is ambiguous and fails with-32603(oldText is not unique: found N occurrences …)
    without writing — add surrounding context so it matches one place, or setlimit: 0(all) /limit: N."""
    f = root / "dup.txt"
    f.write_text("x = 1\ny = 1\nz = 1\n")
    async with fs(root) as s:
        code, message = await rpc_error(s, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "= 1", "newText": "= 2"}]})
        assert code == -32603 and "oldText is not unique: found 3 occurrences" in message
        assert f.read_text() == "x = 1\ny = 1\nz = 1\n"
        await ok(s, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "= 1", "newText": "= 2", "limit": 2}]})
        assert f.read_text() == "x = 2\ny = 2\nz = 1\n"
        out = await ok(s, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "= ", "newText": ": ", "limit": 0}]})
        assert out == "Successfully edited dup.txt"
    assert f.read_text() == "x : 2\ny : 2\nz : 1\n"


@pytest.mark.anyio
async def test_edit_whitespace_normalized_fallback(root):
    """This letsoldTextbe copied from a differently-indented context. On replacement: the original indentation of the
    matched block is preserved and applied tonewText."""
    f = root / "block.py"
    f.write_text("class A:\n    def f(self):\n        if x:\n            go()\n")
    async with fs(root) as s:
        edit = {"oldText": "if x:\n    go()", "newText": "if y:\n    stop()\n    go()"}
        await ok(s, "edit_file", {"path": "block.py", "edits": [edit]})
        assert f.read_text() == "class A:\n    def f(self):\n        if y:\n            stop()\n            go()\n"
        f.write_text("a:\n  k: 1\nb:\n    k: 1\n")
        code, message = await rpc_error(s, "edit_file", {"path": "block.py", "edits": [{"oldText": "k: 1\n", "newText": ""}]})
    # Exact substring matches twice: the literal guard fires before any fallback.
    assert code == -32603 and "not unique" in message
    assert f.read_text() == "a:\n  k: 1\nb:\n    k: 1\n"


@pytest.mark.anyio
async def test_edit_whitespace_normalized_ambiguity(root):
    """The same uniqueness guard applies here: a block that normalizes to 2+ locations fails with-32603(oldText is not
    unique: found N whitespace-normalized matches …) rather than editing the first."""
    f = root / "two.py"
    f.write_text("  if a:\n    b()\n\n      if a:\n        b()\n")
    async with fs(root) as s:
        code, message = await rpc_error(s, "edit_file", {"path": "two.py", "edits": [{"oldText": "if a:\n  b()", "newText": "pass"}]})
    assert code == -32603 and "found 2 whitespace-normalized matches" in message
    assert f.read_text() == "  if a:\n    b()\n\n      if a:\n        b()\n"


@pytest.mark.anyio
async def test_edit_regex_backreferences(root):
    """e.g. wrap a line in quotes witholdText: "(.*)",newText: "\\"\\1\\""(or"\\"$1\\""). ^and$match at every line
    boundary (e.g.^(.*)$wraps the first line, or every line withlimit: 0), and.does not cross newlines."""
    f = root / "words.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    async with fs(root) as s:
        await ok(s, "edit_file", {"path": "words.txt", "edits": [{"oldText": "(.*)", "newText": '"\\1"', "isRegex": True}]})
        assert f.read_text() == '"alpha"\nbeta\ngamma\n'
        edit = {"oldText": "^(\\w+)$", "newText": '"$1"', "isRegex": True, "limit": 0}
        await ok(s, "edit_file", {"path": "words.txt", "edits": [edit]})
        assert f.read_text() == '"alpha"\n"beta"\n"gamma"\n'
        # Lookahead and sed-style whole-match references, ECMAScript style.
        edit = {"oldText": '"(?=g)', "newText": "\\0>", "isRegex": True}
        await ok(s, "edit_file", {"path": "words.txt", "edits": [edit]})
    assert f.read_text() == '"alpha"\n"beta"\n">gamma"\n'


@pytest.mark.anyio
async def test_edit_regex_missing_group_is_an_error(root):
    """A reference to a group the pattern does not have (e.g.\\1/$1against.*) is a hard-32603error and the file is
    left unchanged; it is not silently expanded to an empty string."""
    f = root / "words.txt"
    f.write_text("alpha\n")
    async with fs(root) as s:
        for new in ["\\1", "$1"]:
            code, message = await rpc_error(s, "edit_file", {"path": "words.txt", "edits": [{"oldText": ".*", "newText": new, "isRegex": True}]})
            assert code == -32603 and "group 1" in message
        code, message = await rpc_error(s, "edit_file", {"path": "words.txt", "edits": [{"oldText": "(", "isRegex": True}]})
        assert code == -32603 and "invalid regex" in message
        code, message = await rpc_error(s, "edit_file", {"path": "words.txt", "edits": [{"oldText": "zz+", "isRegex": True}]})
        assert code == -32603 and "pattern not found" in message
    assert f.read_text() == "alpha\n"


@pytest.mark.anyio
async def test_edit_regex_whole_match_and_dollar(root):
    """\\0,$0, and$&all insert the whole match (no capture group required) and$$inserts a literal$."""
    f = root / "prices.txt"
    f.write_text("a 5\nb 7\nc 9\n")
    async with fs(root) as s:
        edits = [
            {"oldText": "\\d", "newText": "$$$&", "isRegex": True},
            {"oldText": "7", "newText": "[\\0]", "isRegex": True},
            {"oldText": "9", "newText": "<$0>", "isRegex": True},
        ]
        await ok(s, "edit_file", {"path": "prices.txt", "edits": edits})
    assert f.read_text() == "a $5\nb [7]\nc <9>\n"


@pytest.mark.anyio
async def test_edit_case_insensitive(root):
    """Extended — case-insensitive (caseInsensitive: true): case-insensitive literal or (combined withisRegex) regex
    match."""
    f = root / "ci.txt"
    f.write_text("Hello\nHELLO world\n")
    async with fs(root) as s:
        await ok(s, "edit_file", {"path": "ci.txt", "edits": [{"oldText": "hello", "newText": "bye", "caseInsensitive": True, "limit": 0}]})
        assert f.read_text() == "bye\nbye world\n"
        edit = {"oldText": "^BYE (W)", "newText": "ciao $1", "caseInsensitive": True, "isRegex": True}
        await ok(s, "edit_file", {"path": "ci.txt", "edits": [edit]})
    assert f.read_text() == "bye\nciao world\n"


@pytest.mark.anyio
async def test_edit_dry_run_diff(root):
    """Returns a unified diff (--- path / +++ path / @@ ... @@) without writing. Returns(no changes)if no edits produce
    a difference. A pattern that matches nothing returns the samepattern not found/oldText not founderror as a real
    write"""
    f = root / "src" / "main.py"
    async with fs(root) as s:
        diff = await ok(s, "edit_file", {"path": "src/main.py", "dryRun": True, "edits": [{"oldText": "return 1", "newText": "return 2"}]})
        same = await ok(s, "edit_file", {"path": "src/main.py", "dryRun": True, "edits": [{"oldText": "main", "newText": "main"}]})
        code, message = await rpc_error(s, "edit_file", {"path": "src/main.py", "dryRun": True, "edits": [{"oldText": "nothing here"}]})
        listing = await ok(s, "edit_file", {"path": "ghost.py", "dryRun": True, "edits": [{"oldText": "a", "newText": "b"}]})
    assert diff == "--- src/main.py\n+++ src/main.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n"
    assert same == "(no changes)"
    assert code == -32603 and "oldText not found" in message
    assert listing.startswith("ghost.py does not exist; intended edits:")
    assert f.read_text() == "def main():\n    return 1\n"


@pytest.mark.anyio
async def test_edit_sequence_is_all_or_nothing(root):
    """"edits": [ // [std] Array of edit operations applied in sequence"""
    f = root / "src" / "util.py"
    async with fs(root) as s:
        edits = [{"oldText": "VALUE = 42", "newText": "VALUE = 43"}, {"oldText": "VALUE = 43", "newText": "VALUE = 44"}]
        assert await ok(s, "edit_file", {"path": "src/util.py", "edits": edits}) == "Successfully edited src/util.py"
        assert f.read_text() == "import os\n\nVALUE = 44\n"
        edits = [{"oldText": "import os", "newText": "import sys"}, {"oldText": "absent"}]
        code, message = await rpc_error(s, "edit_file", {"path": "src/util.py", "edits": edits})
        assert code == -32603 and "edits[1]" in message
        assert (await rpc_error(s, "edit_file", {"path": "src/util.py", "edits": [{"newText": "x"}]}))[0] == -32602
        assert (await rpc_error(s, "edit_file", {"path": "nope.py", "edits": [{"oldText": "x"}]}))[0] == -32002
        assert (await rpc_error(s, "edit_file", {"path": "link_file", "edits": [{"oldText": "TOP"}]}))[0] == -32001
    assert f.read_text() == "import os\n\nVALUE = 44\n"
    assert (root.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


@pytest.mark.anyio
async def test_edit_keeps_crlf(root):
    """Matching strategy per edit item: - Standard mode ( isRegex: false,caseInsensitive: false,limit: 1):- Try exact
    substring match first."""
    async with fs(root) as s:
        await ok(s, "edit_file", {"path": "crlf.txt", "edits": [{"oldText": "one\ntwo", "newText": "uno\ndos"}]})
    assert (root / "crlf.txt").read_bytes() == b"uno\r\ndos\r\n"


# --- edit_files ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_edit_files_globs_and_inline_failures(root):
    """Per-file edit failures appear as path: [error CODE] message inline; the call does not error at JSON-RPC
    level."""
    (root / "src" / "other.py").write_text("pass\n")
    async with fs(root) as s:
        preview = await s.call_tool("edit_files", {"paths": ["src/*.py"], "dryRun": True, "edits": [{"oldText": "VALUE", "newText": "VAL"}]})
        assert (root / "src" / "util.py").read_text() == "import os\n\nVALUE = 42\n"
        out = await s.call_tool("edit_files", {"paths": [str(root / "src" / "*.py")], "edits": [{"oldText": "return 1", "newText": "return 7"}]})
    assert not preview.is_error and not out.is_error
    parts = [c.text for c in preview.content]
    assert len(parts) == 3
    assert parts[0].startswith(f"{root}/src/main.py: [error -32603]")
    assert parts[1].startswith(f"{root}/src/other.py: [error -32603]")
    assert parts[2].startswith(f"--- {root}/src/util.py\n+++ {root}/src/util.py\n@@")
    lines = [c.text for c in out.content]
    assert lines[0] == f"Successfully edited {root}/src/main.py"
    assert lines[1].startswith(f"{root}/src/other.py: [error -32603] oldText not found")
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 7\n"
    assert (root / "src" / "other.py").read_text() == "pass\n"


@pytest.mark.anyio
async def test_edit_files_glob_errors(root):
    """Glob pattern (contains*,?,{,}, or[) -> expanded at runtime. Error-32002if no files match. Error-32001if any
    match is outside allowed dirs."""
    async with fs(root) as s:
        assert (await rpc_error(s, "edit_files", {"paths": ["**/*.rs"], "edits": [{"oldText": "a"}]}))[0] == -32002
        assert (await rpc_error(s, "edit_files", {"paths": [str(root.parent / "outside" / "*.txt")], "edits": [{"oldText": "TOP"}]}))[0] == -32001
        # A glob matching a symlink that leads outside fails the whole call.
        code, message = await rpc_error(s, "edit_files", {"paths": ["link_*"], "edits": [{"oldText": "TOP", "newText": "x"}]})
        assert code == -32001 and "TOP SECRET" not in message
        assert (await rpc_error(s, "edit_files", {"paths": ["src/*.py"]}))[0] == -32602
        assert (await rpc_error(s, "edit_files", {"edits": [{"oldText": "a"}]}))[0] == -32602
        # A literal path and a glob naming the same file edit it once.
        out = await ok(s, "edit_files", {"paths": ["src/util.py", "src/u*.py"], "edits": [{"oldText": "42", "newText": "43"}]})
    assert out == "Successfully edited src/util.py"
    assert (root / "src" / "util.py").read_text() == "import os\n\nVALUE = 43\n"
    assert (root.parent / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


# --- searches --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_files_substring_and_aliases(root):
    """Legacy aliases: the MCP-spec names path / pattern / excludePatterns are accepted silently (not advertised in
    the schema) so agents that construct them from pre-training still work. Canonical names win when both are
    supplied."""
    async with fs(root) as s:
        canonical = await ok(s, "search_files", {"directory": str(root), "nameContains": "MAIN"})
        legacy = await ok(s, "search_files", {"path": str(root), "pattern": "main"})
        both = await ok(s, "search_files", {"directory": str(root), "nameContains": "main", "pattern": "zzz"})
        excluded = await ok(s, "search_files", {"path": str(root), "pattern": ".py", "excludePatterns": ["src"]})
        star = await ok(s, "search_files", {"directory": str(root), "nameContains": "*.py"})
        dirs = await ok(s, "search_files", {"directory": str(root), "nameContains": "DOC"})
        assert (await rpc_error(s, "search_files", {"directory": str(root)}))[0] == -32602
        assert (await rpc_error(s, "search_files", {"directory": "/etc", "nameContains": "passwd"}))[0] == -32001
    assert canonical == legacy == both == f"{root}/src/main.py"
    assert excluded == "(no matches found)"
    # nameContains is a literal, not a glob.
    assert star == "(no matches found)"
    assert dirs == f"{root}/docs"


@pytest.mark.anyio
async def test_grep_files_output_format(root):
    """Match lines use : separators; context lines use -. Groups are separated by --. Footer: [N matches]."""
    (root / "log.txt").write_text("a\nERROR one\nb\nc\nd\ne\nERROR two\nf\n")
    (root / "bin.dat").write_bytes(b"ERROR\x00binary")
    log = f"{root}/log.txt"
    async with fs(root) as s:
        out = await ok(s, "grep_files", {"regex": "ERROR \\w+", "directory": str(root), "contextLines": 1})
        ci = await ok(s, "grep_files", {"regex": "error", "directory": str(root), "caseInsensitive": True, "globs": ["*.txt"]})
        capped = await ok(s, "grep_files", {"regex": "ERROR", "directory": str(root), "maxResults": 1})
    # The four symlinks the fixture plants, leading outside, are skipped and counted.
    skipped = "\n[4 path(s) skipped: outside the allowed directories]"
    assert out == f"{log}-1-a\n{log}:2:ERROR one\n{log}-3-b\n--\n{log}-6-e\n{log}:7:ERROR two\n{log}-8-f\n[2 matches]{skipped}"
    assert ci == f"{log}:2:ERROR one\n{log}:7:ERROR two\n[2 matches]"
    assert capped.startswith("[results truncated") and capped.endswith(f"{log}:2:ERROR one\n[1 matches]{skipped}")


@pytest.mark.anyio
async def test_grep_files_globs_anchor_to_directory(root):
    """globswith adirectory-> relative globs (e.g.**/*.sh) resolve underdirectory; absolute globs (starting with/) are
    used as-is."""
    (root / "docs" / "VALUE.md").write_text("VALUE in docs\n")
    async with fs(root) as s:
        under_src = await ok(s, "grep_files", {"regex": "VALUE", "directory": str(root / "src"), "globs": ["**/*.py"]})
        absolute = await ok(s, "grep_files", {"regex": "VALUE", "globs": [str(root / "docs" / "*.md")]})
        project = await ok(s, "grep_files", {"regex": "VALUE", "globs": ["**/*"]})
        outside = await ok(s, "grep_files", {"regex": "SECRET", "globs": [str(root.parent / "outside" / "*.txt")]})
    assert under_src == f"{root}/src/util.py:3:VALUE = 42\n[1 matches]"
    assert absolute == f"{root}/docs/VALUE.md:1:VALUE in docs\n[1 matches]"
    assert project.endswith("[2 matches]\n[4 path(s) skipped: outside the allowed directories]")
    assert "TOP SECRET" not in outside and outside.endswith("[1 path(s) skipped: outside the allowed directories]")


@pytest.mark.anyio
async def test_grep_files_skips_paths_outside(root):
    """If any candidate path was outside the allowed directories it is skipped (not fatal) and a [N path(s) skipped …]
    note is appended. Binary files (containing null bytes in the first 4 KB) are skipped silently."""
    (root / "src" / "blob.bin").write_bytes(b"SECRET\x00")
    (root / "src" / "notes.txt").write_text("no SECRET here\n")
    async with fs(root) as s:
        out = await ok(s, "grep_files", {"regex": "SECRET", "directory": str(root / "src")})
    assert out == (
        f"{root}/src/notes.txt:1:no SECRET here\n[1 matches]\n[1 path(s) skipped: outside the allowed directories]"
    )


@pytest.mark.anyio
async def test_grep_files_errors(root):
    """Errors: -32001 directory outside allowed dirs · -32602 missing regex, or regex sent as the removed boolean
    flag, or neither directory nor globs given · -32603 invalid regex"""
    async with fs(root) as s:
        assert (await rpc_error(s, "grep_files", {"regex": "x", "directory": str(root.parent / "outside")}))[0] == -32001
        assert (await rpc_error(s, "grep_files", {"directory": str(root)}))[0] == -32602
        code, message = await rpc_error(s, "grep_files", {"regex": True, "directory": str(root)})
        assert code == -32602 and "boolean" in message
        assert (await rpc_error(s, "grep_files", {"regex": "x"}))[0] == -32602
        assert (await rpc_error(s, "grep_files", {"regex": "(", "directory": str(root)}))[0] == -32603
        assert (await rpc_error(s, "grep_files", {"regex": "x", "directory": str(root), "contextLines": -1}))[0] == -32602
        assert (await rpc_error(s, "grep_files", {"regex": "x", "directory": str(root), "maxResults": 0}))[0] == -32602
        # Above their maxima, contextLines and maxResults are held to them.
        held = await ok(s, "grep_files", {"regex": "VALUE", "directory": str(root), "contextLines": 500, "maxResults": 10**6})
        assert held.startswith(f"{root}/src/util.py-1-import os\n{root}/src/util.py-2-\n{root}/src/util.py:3:VALUE = 42\n[1 matches]")


@pytest.mark.anyio
async def test_glob_search_files_only_with_cap(root):
    """Finds files by filename glob (directories are not returned). Glob syntax: ** (recursive), ? (single char),
    {a,b} (alternation)."""
    async with fs(root) as s:
        py = await ok(s, "glob_search", {"directory": str(root), "globs": ["**/*.py"]})
        alt = await ok(s, "glob_search", {"directory": str(root), "globs": ["{src,docs}/*.??"]})
        dirs = await ok(s, "glob_search", {"directory": str(root), "globs": ["*"], "excludeGlobs": ["link_*", "dangling"]})
        capped = await ok(s, "glob_search", {"directory": str(root), "globs": ["**/*.py"], "max": 1})
        assert (await rpc_error(s, "glob_search", {"directory": str(root)}))[0] == -32602
        assert (await rpc_error(s, "glob_search", {"globs": ["*"]}))[0] == -32602
        assert (await rpc_error(s, "glob_search", {"directory": "/etc", "globs": ["*"]}))[0] == -32001
    assert py.splitlines() == [f"{root}/src/main.py", f"{root}/src/util.py"]
    assert alt.splitlines() == [f"{root}/docs/guide.md", f"{root}/src/main.py", f"{root}/src/util.py"]
    assert dirs.splitlines() == [f"{root}/crlf.txt"]
    assert capped.splitlines()[0] == f"{root}/src/main.py" and "truncated" in capped.splitlines()[1]


# --- run_command -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_run_command_result(root):
    """result.content[0]— stdout (or(no output)) with[exit code: N]footer. result.content[1]— stderr prefixed
    [stderr]\\n, present only when non-empty. result.isError: true— set on non-zero exit or timeout."""
    async with fs(root) as s:
        r = await s.call_tool("run_command", {"command": "pwd; echo oops >&2; exit 4", "workingDirectory": str(root / "src")})
        assert r.is_error
        assert [c.text for c in r.content] == [f"{root}/src\n[exit code: 4]", "[stderr]\noops\n"]
        r = await s.call_tool("run_command", {"command": "true"})
        assert not r.is_error and text_of(r) == "(no output)\n[exit code: 0]"
        r = await s.call_tool("run_command", {"command": "touch made.txt"})
        assert not r.is_error
    assert (root / "made.txt").exists()


@pytest.mark.anyio
async def test_run_command_timeout_and_errors(root):
    """Timeout: SIGTERM at deadline + SIGKILL after 3-second grace. Partial output included."""
    async with fs(root) as s:
        start = time.monotonic()
        r = await s.call_tool("run_command", {"command": "echo started; sleep 20", "timeout": 1})
        assert time.monotonic() - start < 10
        assert r.is_error
        assert text_of(r).startswith("started\n[timed out after 1s")
        assert "[exit code: " in text_of(r)
        assert (await rpc_error(s, "run_command", {"command": "ls", "workingDirectory": str(root.parent / "outside")}))[0] == -32001
        assert (await rpc_error(s, "run_command", {"workingDirectory": str(root)}))[0] == -32602


# --- the command line ------------------------------------------------------------------------


def test_cli_tools_and_call(root):
    """Detailed JSON parameter reference for all tools exposed by replay --mcp-server."""
    out = subprocess.run([tether_bin(), "tools", "--profile", "filesystem", "--json"], capture_output=True, text=True, check=True)
    names = {t["name"] for t in json.loads(out.stdout)}
    assert names == READ_TOOLS | WRITE_TOOLS
    run = subprocess.run(
        [tether_bin(), "call", "--root", str(root), "--profile", "filesystem", "list_directory", json.dumps({"path": "src"})],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    # A symlink is listed as it is, not followed: [FILE], as the reference server does.
    assert run.stdout.splitlines() == ["[FILE] main.py", "[FILE] parent_link", "[FILE] util.py"]
    bad = subprocess.run(
        [tether_bin(), "call", "--root", str(root), "--profile", "filesystem", "read_file", json.dumps({"path": "/etc/passwd"})],
        capture_output=True, text=True,
    )
    assert bad.returncode != 0 and "root:" not in bad.stdout + bad.stderr


# --- beside an editor ------------------------------------------------------------------------


class Lsp:
    """A minimal LSP client over `tether lsp`'s stdio: framed JSON-RPC, answering the server's own
    requests with null."""

    def __init__(self, root):
        self.proc = subprocess.Popen([tether_bin(), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.buf = b""
        uri = root.as_uri()
        self.request("initialize", {"processId": None, "rootUri": uri, "capabilities": {}, "workspaceFolders": [{"uri": uri, "name": "root"}]})
        self.notify("initialized", {})

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self, deadline):
        import select

        while b"\r\n\r\n" not in self.buf or len(self.buf) < self._frame_len():
            left = deadline - time.monotonic()
            assert left > 0, "no answer from tether lsp"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "tether lsp closed its output"
                self.buf += chunk
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        n = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
        self.buf = rest[n:]
        return json.loads(rest[:n])

    def _frame_len(self):
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        n = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
        return len(head) + 4 + n

    def request(self, method, params):
        self.next_id += 1
        my_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        deadline = time.monotonic() + 20
        while True:
            msg = self.read(deadline)
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif msg.get("id") == my_id:
                return msg

    def close(self):
        self.proc.kill()
        self.proc.wait()


def test_beside_an_editor_reads_the_unsaved_buffer(root):
    """Standard: Returns text content."""
    lsp = Lsp(root)
    try:
        uri = (root / "src" / "main.py").as_uri()
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "def main():\n    return UNSAVED\n"}})

        def call(tool, args):
            return lsp.request("workspace/executeCommand", {"command": "tether.callTool", "arguments": [{"tool": tool, "arguments": args, "profile": "filesystem"}]})

        r = call("read_file", {"path": "src/main.py"})["result"]
        assert r["content"][0]["text"] == "def main():\n    return UNSAVED\n" and not r.get("isError")
        r = call("grep_files", {"regex": "UNSAVED", "directory": str(root)})["result"]
        assert r["content"][0]["text"].startswith(f"{root}/src/main.py:2:    return UNSAVED\n[1 matches]")
        err = call("read_file", {"path": "/etc/passwd"})["error"]
        assert err["code"] == -32001
    finally:
        lsp.close()
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 1\n"
