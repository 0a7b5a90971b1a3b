"""The `toolkit` profile (seed 004_c57b29198482113f.txt) over MCP, driven by the official MCP
Python SDK client. Each test quotes, in its docstring, the sentence of the seed it checks, and
asserts the arguments sent, the text on the wire, and the files on disk afterwards."""

import contextlib
import json
import os
import subprocess

import pytest

from conftest import session, snapshot, tether_bin, text_of

TOOLS = [
    "set_workspace",
    "read_files",
    "write_files",
    "apply_diffs",
    "insert_contents",
    "search_and_replace",
    "list_files",
]


@pytest.fixture
def root(tmp_path):
    """An allowed root holding a project (the workspace the tests choose) and a neighbour, plus a
    secret outside the root reachable only through a symlink planted in the project."""
    root = tmp_path / "root"
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "other" / "neighbour.txt").write_text("neighbour\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP SECRET\n")
    os.symlink(tmp_path / "outside" / "secret.txt", project / "link_out")
    return root


@contextlib.asynccontextmanager
async def toolkit(root, workspace="project", *args):
    """A toolkit session whose workspace is `root/workspace` (none when `workspace` is None)."""
    async with session(root, "--profile", "toolkit", *args) as s:
        if workspace is not None:
            r = await s.call_tool("set_workspace", {"path": str(root / workspace)})
            assert not r.is_error, text_of(r)
        yield s


def lines_file(path, n, at=None):
    """Writes `n` filler lines to `path`, with `at` ({line: text}) replacing some of them."""
    at = at or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(at.get(i, f"// filler {i}") + "\n" for i in range(1, n + 1)))


async def ok(s, name, args):
    r = await s.call_tool(name, args)
    assert not r.is_error, text_of(r)
    return text_of(r)


async def err(s, name, args):
    r = await s.call_tool(name, args)
    assert r.is_error, text_of(r)
    return text_of(r)


# -- workspace -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_every_tool_is_refused_before_set_workspace(root):
    """"You must call the `set_workspace` tool to set the workspace root directory before
    performing any file operations, otherwise all operations will be rejected." """
    (root / "project" / "a.txt").write_text("one\n")
    before = snapshot(root)
    async with toolkit(root, None) as s:
        calls = {
            "read_files": {"path": "project/a.txt"},
            "list_files": {"path": "."},
            "write_files": {"path": "project/new.txt", "content": "x", "line_count": 1},
            "apply_diffs": {"path": "project/a.txt", "search_content": "one", "replace_content": "two", "start_line": 1},
            "insert_contents": {"path": "project/a.txt", "line": 1, "content": "zero"},
            "search_and_replace": {"path": "project/a.txt", "search": "one", "replace": "two"},
        }
        for name, args in calls.items():
            text = await err(s, name, args)
            assert text.startswith("Error: Workspace not set. Call set_workspace"), (name, text)
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_set_workspace_reports_the_root(root):
    """Return example of `set_workspace`: "Successfully set workspace root to:
    /Users/username/projects/my-project" """
    async with toolkit(root, None) as s:
        text = await ok(s, "set_workspace", {"path": str(root / "project")})
        assert text == f"Successfully set workspace root to: {(root / 'project').resolve()}"
        # Calling it again switches the workspace.
        text = await ok(s, "set_workspace", {"path": str(root / "other")})
        assert text == f"Successfully set workspace root to: {(root / 'other').resolve()}"
        assert await ok(s, "read_files", {"path": "neighbour.txt"}) == "1 | neighbour"


@pytest.mark.anyio
async def test_set_workspace_accepts_only_a_directory_inside_the_allowed_roots(root, tmp_path):
    """"Workspace Isolation: You must call `set_workspace` to set the workspace root directory
    first" (settled: it accepts only a directory inside an allowed root)."""
    (root / "project" / "a.txt").write_text("x\n")
    async with toolkit(root, None) as s:
        text = await err(s, "set_workspace", {"path": str(tmp_path / "outside")})
        assert text.startswith(f"Error: Access denied: {tmp_path / 'outside'} is outside the allowed directories")
        assert await err(s, "set_workspace", {"path": str(root / "nope")}) == f"Error: Directory not found: {root / 'nope'}"
        assert await err(s, "set_workspace", {"path": str(root / "project" / "a.txt")}) == (
            f"Error: Not a directory: {root / 'project' / 'a.txt'}"
        )
        # Refused attempts leave the session without a workspace.
        assert (await err(s, "read_files", {"path": "a.txt"})).startswith("Error: Workspace not set.")


@pytest.mark.anyio
async def test_relative_paths_resolve_in_the_workspace_and_absolute_paths_must_be_inside(root):
    """"Relative paths will be automatically resolved within the workspace, and absolute paths must
    be within the workspace." """
    (root / "project" / "src" / "a.txt").write_text("alpha\n")
    async with toolkit(root) as s:
        assert await ok(s, "read_files", {"path": "src/a.txt"}) == "1 | alpha"
        assert await ok(s, "read_files", {"path": str(root / "project" / "src" / "a.txt")}) == "1 | alpha"
        # Inside the allowed root, but outside the workspace.
        outside_ws = str(root / "other" / "neighbour.txt")
        assert await err(s, "read_files", {"path": outside_ws}) == (
            f"Error: Access denied: {outside_ws} is outside the workspace"
        )
        await ok(s, "write_files", {"path": "src/b.txt", "content": "beta", "line_count": 1})
    assert (root / "project" / "src" / "b.txt").read_text() == "beta"


@pytest.mark.anyio
async def test_no_path_leaves_the_workspace(root, tmp_path):
    """"Path Security: All file operations are strictly limited to the set workspace, preventing
    directory traversal attacks" """
    before = snapshot(tmp_path)
    async with toolkit(root) as s:
        for name, args in [
            ("read_files", {"path": "../other/neighbour.txt"}),
            ("read_files", {"path": "link_out"}),
            ("list_files", {"path": ".."}),
            ("write_files", {"path": "../evil.txt", "content": "x", "line_count": 1}),
            ("write_files", {"path": "link_out", "content": "x", "line_count": 1}),
            ("insert_contents", {"path": "link_out", "line": 1, "content": "x"}),
            ("search_and_replace", {"path": "link_out", "search": "TOP", "replace": "x"}),
        ]:
            text = await err(s, name, args)
            assert text.startswith("Error: Access denied:"), (name, text)
            assert "TOP SECRET" not in text
    assert snapshot(tmp_path) == before


# -- read_files ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_read_files_numbers_lines(root):
    """"The returned content includes line numbers (format: `line | content`) for easy line
    reference in other tools." """
    (root / "project" / "MemTable.java").write_bytes(b"package com.example.lsmtree;\r\n\r\nclass MemTable {}")
    async with toolkit(root) as s:
        text = await ok(s, "read_files", {"path": "MemTable.java"})
        assert text == "1 | package com.example.lsmtree;\n2 | \n3 | class MemTable {}"


@pytest.mark.anyio
async def test_read_files_line_range(root):
    """"line_range": "Optional line range, format 'start-end' (only for single file)" """
    lines_file(root / "project" / "config.properties", 30)
    async with toolkit(root) as s:
        text = await ok(s, "read_files", {"path": "config.properties", "line_range": "5-7"})
        assert text == "5 | // filler 5\n6 | // filler 6\n7 | // filler 7"
        # An end past the last line stops there.
        assert await ok(s, "read_files", {"path": "config.properties", "line_range": "29-40"}) == (
            "29 | // filler 29\n30 | // filler 30"
        )
        text = await err(s, "read_files", {"path": ["config.properties"], "line_range": "1-2"})
        assert text.startswith("Error: line_range is only supported when path names a single file")
        assert (await err(s, "read_files", {"path": "config.properties", "line_range": "7"})).startswith(
            "Error: Invalid line_range: '7'."
        )


@pytest.mark.anyio
async def test_read_files_line_out_of_range(root):
    """Common error "Line number out of range": "Error: Line number 50 exceeds file length
    (20 lines)" """
    lines_file(root / "project" / "twenty.txt", 20)
    async with toolkit(root) as s:
        text = await err(s, "read_files", {"path": "twenty.txt", "line_range": "50-60"})
        assert text == "Error: Line number 50 exceeds file length (20 lines)"


@pytest.mark.anyio
async def test_read_files_several(root):
    """Multiple files: "Successfully read 2 file(s):\\n\\n=== package.json (25 lines) ===\\n{...}
    \\n\\n=== README.md (15 lines) ===\\n# FileEditor MCP\\n..." """
    (root / "project" / "package.json").write_text('{\n  "name": "x"\n}\n')
    (root / "project" / "README.md").write_text("# FileEditor MCP\n")
    async with toolkit(root) as s:
        text = await ok(s, "read_files", {"path": ["package.json", "README.md"]})
        assert text == (
            "Successfully read 2 file(s):\n\n"
            '=== package.json (3 lines) ===\n1 | {\n2 |   "name": "x"\n3 | }\n\n'
            "=== README.md (1 line) ===\n1 | # FileEditor MCP"
        )
        # A file that cannot be read is reported in its own section.
        r = await s.call_tool("read_files", {"path": ["README.md", "nonexistent_file.txt"]})
        assert not r.is_error
        assert text_of(r) == (
            "Read 1 of 2 file(s); 1 could not be read:\n\n=== README.md (1 line) ===\n1 | # FileEditor MCP\n\n"
            "=== nonexistent_file.txt ===\nError: File not found: nonexistent_file.txt"
        )


@pytest.mark.anyio
async def test_file_not_found(root):
    """Common error "File not found": {"isError": true, "content": [{"type": "text", "text":
    "Error: File not found: nonexistent_file.txt"}]} """
    async with toolkit(root) as s:
        r = await s.call_tool("read_files", {"path": "nonexistent_file.txt"})
        assert r.is_error
        assert [(c.type, c.text) for c in r.content] == [("text", "Error: File not found: nonexistent_file.txt")]
        args = {"path": "nonexistent_file.txt", "search_content": "a", "replace_content": "b", "start_line": 1}
        assert await err(s, "apply_diffs", args) == "Error: File not found: nonexistent_file.txt"


# -- write_files -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_write_files_single(root):
    """Single file: "File written successfully: config/database.js (4 lines)" """
    content = "export const config = {\n  host: 'localhost',\n  port: 3306\n};"
    async with toolkit(root) as s:
        text = await ok(s, "write_files", {"path": "config/database.js", "content": content, "line_count": 4})
        assert text == "File written successfully: config/database.js (4 lines)"
        # Overwriting an existing file replaces it completely.
        text = await ok(s, "write_files", {"path": "config/database.js", "content": "x\n", "line_count": 1})
        assert text == "File written successfully: config/database.js (1 line)"
        # A final line break does not count as a line, though the split count is accepted too.
        for count in [2, 3]:
            args = {"path": "two.txt", "content": "a\nb\n", "line_count": count}
            assert await ok(s, "write_files", args) == "File written successfully: two.txt (2 lines)"
    assert (root / "project" / "config" / "database.js").read_text() == "x\n"
    assert (root / "project" / "two.txt").read_text() == "a\nb\n"


@pytest.mark.anyio
async def test_write_files_different_content(root):
    """Multiple files, different content: "Successfully wrote 3 files (10 total lines):\\n
    - package.json (4 lines)\\n  - README.md (3 lines)\\n  - .gitignore (3 lines)" """
    contents = [
        '{\n  "name": "my-project",\n  "version": "1.0.0"\n}',
        "# My Project\n\nA sample project",
        "node_modules/\n*.log\n.env",
    ]
    async with toolkit(root) as s:
        text = await ok(
            s,
            "write_files",
            {"path": ["package.json", "README.md", ".gitignore"], "content": contents, "line_count": [4, 3, 3]},
        )
        assert text == (
            "Successfully wrote 3 files (10 total lines):\n"
            "  - package.json (4 lines)\n  - README.md (3 lines)\n  - .gitignore (3 lines)"
        )
    for name, content in zip(["package.json", "README.md", ".gitignore"], contents):
        assert (root / "project" / name).read_text() == content


@pytest.mark.anyio
async def test_write_files_same_content(root):
    """Multiple files, same content: "path": ["config/dev.env", "config/test.env"], "content":
    "NODE_ENV=development\\nDEBUG=true", "line_count": 2"""
    async with toolkit(root) as s:
        args = {"path": ["config/dev.env", "config/test.env"], "content": "NODE_ENV=development\nDEBUG=true", "line_count": 2}
        text = await ok(s, "write_files", args)
        assert text == "Successfully wrote 2 files (4 total lines):\n  - config/dev.env (2 lines)\n  - config/test.env (2 lines)"
    for name in ["dev.env", "test.env"]:
        assert (root / "project" / "config" / name).read_text() == "NODE_ENV=development\nDEBUG=true"


@pytest.mark.anyio
async def test_write_files_line_count_mismatch_writes_nothing(root):
    """"line_count": "Total number of lines in the file, for single file or same for all files"
    (a content whose lines do not add up is refused, and nothing is written)."""
    (root / "project" / "keep.txt").write_text("old\n")
    before = snapshot(root)
    async with toolkit(root) as s:
        text = await err(s, "write_files", {"path": "keep.txt", "content": "a\nb\nc", "line_count": 4})
        assert text == (
            "Error: Line count mismatch, so the file was not written (the content may have been cut short):\n"
            "  - keep.txt: line_count is 4, but the content has 3 lines"
        )
        # One bad count among several: no file is written, not even the good ones.
        text = await err(
            s,
            "write_files",
            {"path": ["new1.txt", "keep.txt"], "content": ["one", "a\nb"], "line_count": [1, 5]},
        )
        assert text == (
            "Error: Line count mismatch, so no file was written (the content may have been cut short):\n"
            "  - keep.txt: line_count is 5, but the content has 2 lines"
        )
    assert snapshot(root) == before
    assert not (root / "project" / "new1.txt").exists()


# -- apply_diffs -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_apply_diffs_single(root):
    """Return example: "Successfully applied diff to pom.xml: replaced 1 line(s) at line 25.
    File now has 45 lines." """
    pom = root / "project" / "pom.xml"
    lines_file(pom, 45, {25: "        <version>1.2.0</version>"})
    async with toolkit(root) as s:
        args = {
            "path": "pom.xml",
            "search_content": "        <version>1.2.0</version>",
            "replace_content": "        <version>1.3.1</version>",
            "start_line": 25,
        }
        text = await ok(s, "apply_diffs", args)
        assert text == "Successfully applied diff to pom.xml: replaced 1 line(s) at line 25. File now has 45 lines."
    lines = pom.read_text().splitlines()
    assert lines[24] == "        <version>1.3.1</version>" and len(lines) == 45
    assert lines[23] == "// filler 24" and lines[25] == "// filler 26"


@pytest.mark.anyio
async def test_apply_diffs_multi_line(root):
    """Multi-line replace: "Successfully applied diff to config.js: replaced 4 line(s) at line 10
    (added 1 line(s)). File now has 26 lines." """
    old = "const config = {\n  port: 3000,\n  host: 'localhost'\n};"
    new = (
        "const config = {\n  port: process.env.PORT || 8080,\n  host: process.env.HOST || '0.0.0.0',\n"
        "  ssl: process.env.SSL || false\n};"
    )
    path = root / "project" / "config.js"
    lines_file(path, 25, dict(zip(range(10, 14), old.split("\n"))))
    async with toolkit(root) as s:
        args = {"path": "config.js", "search_content": old, "replace_content": new, "start_line": 10}
        text = await ok(s, "apply_diffs", args)
        assert text == (
            "Successfully applied diff to config.js: replaced 4 line(s) at line 10 (added 1 line(s)). "
            "File now has 26 lines."
        )
    lines = path.read_text().splitlines()
    assert lines[9:14] == new.split("\n") and lines[14] == "// filler 14" and len(lines) == 26


@pytest.mark.anyio
async def test_apply_diffs_trim(root):
    """"trim": "Whether to trim whitespace from the beginning and end of each line when comparing
    search_content with file content. Only affects search and matching - replace_content is
    inserted exactly as provided." """
    path = root / "project" / "config.js"
    lines_file(path, 25, {5: "    console.log('Hello World');"})
    args = {
        "path": "config.js",
        "search_content": "console.log('Hello World');",
        "replace_content": "    console.log('Hello Universe');",
        "start_line": 5,
    }
    async with toolkit(root) as s:
        text = await err(s, "apply_diffs", args)
        assert text.startswith("Error: No match for search_content in config.js at line 5")
        assert text.endswith("set trim to true")
        assert path.read_text().splitlines()[4] == "    console.log('Hello World');"
        text = await ok(s, "apply_diffs", {**args, "trim": True})
        assert text == "Successfully applied diff to config.js: replaced 1 line(s) at line 5. File now has 25 lines."
    assert path.read_text().splitlines()[4] == "    console.log('Hello Universe');"


@pytest.mark.anyio
async def test_apply_diffs_batch_atomic(root):
    """Batch operations (atomic mode): "Batch diff operation (atomic) completed: 3/3 diffs applied
    successfully to main.js. File now has 30 lines.\\n\\nDetailed results:\\n\\nDiff 1:\\n  Status:
    success\\n  Start Line: 2\\n  Message: Replaced 1 line(s) at line 2 ..." """
    path = root / "project" / "main.js"
    lines_file(path, 30, {2: "    console.log('start');", 15: "    return false;", 28: "    console.log('end');"})
    async with toolkit(root) as s:
        args = {
            "path": "main.js",
            "search_content": ["    console.log('start');", "    return false;", "    console.log('end');"],
            "replace_content": [
                "    console.log('application started');",
                "    return true;",
                "    console.log('application ended');",
            ],
            "start_line": [2, 15, 28],
            "atomic": True,
        }
        text = await ok(s, "apply_diffs", args)
        assert text == (
            "Batch diff operation (atomic) completed: 3/3 diffs applied successfully to main.js. File now has 30 lines."
            "\n\nDetailed results:\n\n"
            "Diff 1:\n  Status: success\n  Start Line: 2\n  Message: Replaced 1 line(s) at line 2\n\n"
            "Diff 2:\n  Status: success\n  Start Line: 15\n  Message: Replaced 1 line(s) at line 15\n\n"
            "Diff 3:\n  Status: success\n  Start Line: 28\n  Message: Replaced 1 line(s) at line 28"
        )
    lines = path.read_text().splitlines()
    assert (lines[1], lines[14], lines[27]) == (
        "    console.log('application started');",
        "    return true;",
        "    console.log('application ended');",
    )


@pytest.mark.anyio
async def test_apply_diffs_start_lines_refer_to_the_original_file(root):
    """"When processing multiple diffs, the tool automatically handles line number offsets - all
    start_line values should be based on the original file structure." """
    path = root / "project" / "a.py"
    lines_file(path, 10, {1: "import os", 5: "x = 1", 9: "y = 2"})
    async with toolkit(root) as s:
        args = {
            "path": "a.py",
            # The first diff adds two lines and the second removes one; the third still says 9.
            "search_content": ["import os", "x = 1", "y = 2"],
            "replace_content": ["import os\nimport re\nimport sys", "", "y = 3"],
            "start_line": [1, 5, 9],
        }
        text = await ok(s, "apply_diffs", args)
        assert text.startswith("Batch diff operation (atomic) completed: 3/3 diffs applied successfully to a.py. File now has 11 lines.")
        assert "Message: Replaced 1 line(s) at line 1 (added 2 line(s))" in text
        assert "Message: Replaced 1 line(s) at line 5 (removed 1 line(s))" in text
    assert path.read_text() == (
        "import os\nimport re\nimport sys\n// filler 2\n// filler 3\n// filler 4\n// filler 6\n// filler 7\n"
        "// filler 8\ny = 3\n// filler 10\n"
    )


@pytest.mark.anyio
async def test_apply_diffs_atomic_failure_changes_nothing(root):
    """"atomic": "When true (default), validates all diffs before applying any." """
    path = root / "project" / "main.js"
    lines_file(path, 30, {2: "    console.log('start');"})
    before = path.read_bytes()
    async with toolkit(root) as s:
        args = {
            "path": "main.js",
            "search_content": ["    console.log('start');", "    return false;"],
            "replace_content": ["    console.log('go');", "    return true;"],
            "start_line": [2, 15],
        }
        r = await s.call_tool("apply_diffs", args)
        assert r.is_error
        text = text_of(r)
        assert text.startswith(
            "Error: Batch diff operation (atomic) failed: 1/2 diffs could not be applied to main.js. No changes were made."
        )
        assert "Diff 1:\n  Status: not applied\n  Start Line: 2\n" in text
        assert "Diff 2:\n  Status: failed\n  Start Line: 15\n  Message: No match for search_content in main.js at line 15" in text
    assert path.read_bytes() == before


@pytest.mark.anyio
async def test_apply_diffs_non_atomic_continues(root):
    """"atomic": "When false, applies diffs one by one, continuing on failures." """
    path = root / "project" / "main.js"
    lines_file(path, 30, {2: "    console.log('start');", 28: "    console.log('end');"})
    async with toolkit(root) as s:
        args = {
            "path": "main.js",
            "search_content": ["    console.log('start');", "    return false;", "    console.log('end');"],
            "replace_content": ["    console.log('go');", "    return true;", "    console.log('stop');"],
            "start_line": [2, 15, 28],
            "atomic": False,
        }
        text = await ok(s, "apply_diffs", args)
        assert text.startswith(
            "Batch diff operation (non-atomic) completed: 2/3 diffs applied successfully to main.js. File now has 30 lines."
        )
        assert "Diff 2:\n  Status: failed\n  Start Line: 15\n" in text
        assert "Diff 3:\n  Status: success\n  Start Line: 28\n  Message: Replaced 1 line(s) at line 28" in text
    lines = path.read_text().splitlines()
    assert (lines[1], lines[14], lines[27]) == ("    console.log('go');", "// filler 15", "    console.log('stop');")


@pytest.mark.anyio
async def test_apply_diffs_start_line_past_the_end(root):
    """"start_line": "The starting line number for searching content (for single diff, 1-based
    line number from original file)"; past the end it is "Error: Line number 50 exceeds file
    length (20 lines)" """
    lines_file(root / "project" / "twenty.txt", 20)
    async with toolkit(root) as s:
        args = {"path": "twenty.txt", "search_content": "// filler 1", "replace_content": "x", "start_line": 50}
        assert await err(s, "apply_diffs", args) == "Error: Line number 50 exceeds file length (20 lines)"


# -- insert_contents -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_insert_contents_single(root):
    """Return example: "Successfully inserted 1 line(s) at position 3 in
    src/main/java/com/example/App.java. File now has 25 lines." """
    path = root / "project" / "src" / "main" / "java" / "com" / "example" / "App.java"
    lines_file(path, 24)
    async with toolkit(root) as s:
        args = {"path": "src/main/java/com/example/App.java", "line": 3, "content": "import java.util.ArrayList;"}
        text = await ok(s, "insert_contents", args)
        assert text == (
            "Successfully inserted 1 line(s) at position 3 in src/main/java/com/example/App.java. File now has 25 lines."
        )
    lines = path.read_text().splitlines()
    assert lines[1:4] == ["// filler 2", "import java.util.ArrayList;", "// filler 3"] and len(lines) == 25


@pytest.mark.anyio
async def test_insert_contents_negative_positions(root):
    """"Negative line numbers are supported for insertion from the end (-1 means before the last
    line)." """
    path = root / "project" / "a.txt"
    path.write_text("a\nb\nc\n")
    async with toolkit(root) as s:
        text = await ok(s, "insert_contents", {"path": "a.txt", "line": -1, "content": "x"})
        assert text == "Successfully inserted 1 line(s) at position -1 (now line 3) in a.txt. File now has 4 lines."
        assert path.read_text() == "a\nb\nx\nc\n"
        text = await ok(s, "insert_contents", {"path": "a.txt", "line": 0, "content": "end1\nend2"})
        assert text == "Successfully inserted 2 line(s) at position end of file in a.txt. File now has 6 lines."
        assert path.read_text() == "a\nb\nx\nc\nend1\nend2\n"
        assert await err(s, "insert_contents", {"path": "a.txt", "line": -7, "content": "x"}) == (
            "Error: Line number -7 exceeds file length (6 lines)"
        )
        assert await err(s, "insert_contents", {"path": "a.txt", "line": 50, "content": "x"}) == (
            "Error: Line number 50 exceeds file length (6 lines)"
        )
    assert path.read_text() == "a\nb\nx\nc\nend1\nend2\n"


@pytest.mark.anyio
async def test_insert_contents_several_files_same_position(root):
    """Multiple files, same position and content: "Successfully processed 3 file(s):\\n\\n✅
    file1.js: Successfully inserted 1 line(s) at position 1 in file1.js. File now has 15 lines.
    ..." """
    for name, n in [("file1.js", 14), ("file2.js", 21), ("file3.js", 7)]:
        lines_file(root / "project" / name, n)
    async with toolkit(root) as s:
        args = {"path": ["file1.js", "file2.js", "file3.js"], "line": 1, "content": "// Added comment"}
        text = await ok(s, "insert_contents", args)
        assert text == (
            "Successfully processed 3 file(s):\n\n"
            "\u2705 file1.js: Successfully inserted 1 line(s) at position 1 in file1.js. File now has 15 lines.\n"
            "\u2705 file2.js: Successfully inserted 1 line(s) at position 1 in file2.js. File now has 22 lines.\n"
            "\u2705 file3.js: Successfully inserted 1 line(s) at position 1 in file3.js. File now has 8 lines."
        )
    for name in ["file1.js", "file2.js", "file3.js"]:
        assert (root / "project" / name).read_text().startswith("// Added comment\n// filler 1\n")


@pytest.mark.anyio
async def test_insert_contents_several_files_different_positions(root):
    """Multiple files, different positions and content: "✅ main.js: Successfully inserted 1
    line(s) at position end of file in main.js. File now has 45 lines." """
    for name, n in [("config.js", 19), ("utils.js", 34), ("main.js", 44)]:
        lines_file(root / "project" / name, n)
    async with toolkit(root) as s:
        args = {
            "path": ["config.js", "utils.js", "main.js", "missing.js"],
            "line": [1, 5, 0, 1],
            "content": ["// Config file", "// Utility functions", "// Main entry point", "// none"],
        }
        text = await ok(s, "insert_contents", args)
        assert text == (
            "Processed 4 file(s): 3 succeeded, 1 failed:\n\n"
            "\u2705 config.js: Successfully inserted 1 line(s) at position 1 in config.js. File now has 20 lines.\n"
            "\u2705 utils.js: Successfully inserted 1 line(s) at position 5 in utils.js. File now has 35 lines.\n"
            "\u2705 main.js: Successfully inserted 1 line(s) at position end of file in main.js. File now has 45 lines.\n"
            "\u274c missing.js: Error: File not found: missing.js"
        )
    assert (root / "project" / "utils.js").read_text().splitlines()[4] == "// Utility functions"
    assert (root / "project" / "main.js").read_text().endswith("// filler 44\n// Main entry point\n")
    assert not (root / "project" / "missing.js").exists()


# -- search_and_replace ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_and_replace_literal(root):
    """Return example: "Successfully replaced 3 occurrence(s) in
    src/main/resources/application.properties" """
    path = root / "project" / "src" / "main" / "resources" / "application.properties"
    path.parent.mkdir(parents=True)
    path.write_text("app.name=x\napp.name.short=y\n# app.name\nappXname=z\n")
    async with toolkit(root) as s:
        args = {"path": "src/main/resources/application.properties", "search": "app.name", "replace": "spring.application.name", "use_regex": False}
        text = await ok(s, "search_and_replace", args)
        assert text == "Successfully replaced 3 occurrence(s) in src/main/resources/application.properties"
    # The dot is literal: `appXname` is left alone.
    assert path.read_text() == (
        "spring.application.name=x\nspring.application.name.short=y\n# spring.application.name\nappXname=z\n"
    )


@pytest.mark.anyio
async def test_search_and_replace_regex(root):
    """Using regex: "Successfully replaced 5 occurrence(s) in config.js using regex pattern" """
    path = root / "project" / "config.js"
    path.write_text("".join(f"const m{i} = require('mod{i}')\n" for i in range(5)) + "let keep = 1\n")
    async with toolkit(root) as s:
        args = {
            "path": "config.js",
            "search": "const\\s+(\\w+)\\s*=\\s*require\\(['\"]([^'\"]+)['\"]\\)",
            "replace": "import $1 from '$2'",
            "use_regex": True,
        }
        text = await ok(s, "search_and_replace", args)
        assert text == "Successfully replaced 5 occurrence(s) in config.js using regex pattern"
    assert path.read_text() == "".join(f"import m{i} from 'mod{i}'\n" for i in range(5)) + "let keep = 1\n"


@pytest.mark.anyio
async def test_search_and_replace_line_range(root):
    """Specify line range: "Successfully replaced 1 occurrence(s) in package.json (lines 1-10)" """
    path = root / "project" / "package.json"
    lines_file(path, 20, {3: '  "version": "1.0.0",', 15: '    "dep": "1.0.0"'})
    async with toolkit(root) as s:
        args = {"path": "package.json", "search": "1.0.0", "replace": "1.1.0", "start_line": 1, "end_line": 10}
        text = await ok(s, "search_and_replace", args)
        assert text == "Successfully replaced 1 occurrence(s) in package.json (lines 1-10)"
        text = await err(s, "search_and_replace", {**args, "search": "1.1.0", "start_line": 11, "end_line": 20})
        assert text == "Error: No matches found for '1.1.0' in package.json (lines 11-20)"
    lines = path.read_text().splitlines()
    assert lines[2] == '  "version": "1.1.0",' and lines[14] == '    "dep": "1.0.0"'


@pytest.mark.anyio
async def test_search_and_replace_ignore_case(root):
    """Ignore case: "Successfully replaced 3 occurrence(s) in README.md (case-insensitive)" """
    path = root / "project" / "README.md"
    path.write_text("hello\nHello world\nsay HELLO\n")
    async with toolkit(root) as s:
        args = {"path": "README.md", "search": "hello", "replace": "Hi", "ignore_case": True}
        text = await ok(s, "search_and_replace", args)
        assert text == "Successfully replaced 3 occurrence(s) in README.md (case-insensitive)"
    assert path.read_text() == "Hi\nHi world\nsay Hi\n"


# -- list_files ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_list_files(root):
    """Return example: "directory: java\\nfile: resources\\nfile: webapp" """
    main = root / "project" / "src" / "main"
    (main / "java").mkdir(parents=True)
    (main / "java" / "App.java").write_text("class App {}\n")
    (main / "resources").write_text("")
    (main / "webapp").write_text("")
    async with toolkit(root) as s:
        text = await ok(s, "list_files", {"path": "src/main", "recursive": False})
        assert text == "directory: java\nfile: resources\nfile: webapp"


@pytest.mark.anyio
async def test_list_files_recursive(root):
    """Recursive list: "directory: main\\ndirectory: main/java\\nfile: main/java/App.java\\nfile:
    main/java/Utils.java\\ndirectory: main/resources\\nfile:
    main/resources/config.properties\\ndirectory: test\\nfile: test/AppTest.java" """
    src = root / "project" / "src"
    for f in ["main/java/App.java", "main/java/Utils.java", "main/resources/config.properties", "test/AppTest.java"]:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        (src / f).write_text("x\n")
    async with toolkit(root) as s:
        text = await ok(s, "list_files", {"path": "src", "recursive": True})
        assert text == (
            "directory: main\ndirectory: main/java\nfile: main/java/App.java\nfile: main/java/Utils.java\n"
            "directory: main/resources\nfile: main/resources/config.properties\ndirectory: test\n"
            "file: test/AppTest.java"
        )


@pytest.mark.anyio
async def test_list_files_directory_not_found(root):
    """Common error "Directory not found": "Error: Directory not found: /nonexistent/path" """
    async with toolkit(root) as s:
        assert await err(s, "list_files", {"path": "nonexistent/path"}) == "Error: Directory not found: nonexistent/path"


# -- the tool list ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_tool_list(root):
    """"This document describes a set of file operation tools compliant with the Model Context
    Protocol (MCP), including 7 core tools for workspace management and file reading, writing,
    modification, and search operations." """
    async with toolkit(root, None) as s:
        tools = (await s.list_tools()).tools
        assert [t.name for t in tools] == TOOLS
        required = {t.name: t.input_schema.get("required") for t in tools}
        assert required == {
            "set_workspace": ["path"],
            "read_files": ["path"],
            "write_files": ["path", "content", "line_count"],
            "apply_diffs": ["path", "search_content", "replace_content", "start_line"],
            "insert_contents": ["path", "line", "content"],
            "search_and_replace": ["path", "search", "replace"],
            "list_files": ["path"],
        }
        props = {t.name: set(t.input_schema["properties"]) for t in tools}
        assert props["apply_diffs"] == {"path", "search_content", "replace_content", "start_line", "atomic", "trim"}
        assert props["search_and_replace"] == {"path", "search", "replace", "use_regex", "ignore_case", "start_line", "end_line"}
    out = subprocess.run(
        [tether_bin(), "tools", "--profile", "toolkit", "--json"], capture_output=True, text=True, check=True
    )
    assert [t["name"] for t in json.loads(out.stdout)] == TOOLS


@pytest.mark.anyio
async def test_read_only_registers_only_the_read_tools(root):
    """Issue 9: "Every profile works in read-only mode (only its read tools registered)"; for this
    seed the read tools are `set_workspace`, `read_files` and `list_files`."""
    (root / "project" / "a.txt").write_text("one\n")
    before = snapshot(root)
    async with toolkit(root, "project", "--read-only") as s:
        assert [t.name for t in (await s.list_tools()).tools] == ["set_workspace", "read_files", "list_files"]
        assert await ok(s, "read_files", {"path": "a.txt"}) == "1 | one"
        assert await ok(s, "list_files", {"path": "."}) == "file: a.txt\nfile: link_out\ndirectory: src"
        with pytest.raises(Exception) as refused:
            await s.call_tool("write_files", {"path": "a.txt", "content": "x", "line_count": 1})
        assert "unknown tool: write_files" in str(refused.value)
    out = subprocess.run(
        [tether_bin(), "tools", "--profile", "toolkit", "--read-only", "--json"], capture_output=True, text=True, check=True
    )
    assert [t["name"] for t in json.loads(out.stdout)] == ["set_workspace", "read_files", "list_files"]
    assert snapshot(root) == before


@pytest.mark.anyio
async def test_apply_diffs_keeps_the_files_line_endings(root):
    """"Perform precise block-based search and replace operations on existing files." (a CRLF file
    with a BOM matches lines typed with `\\n`, and keeps its CRLF, BOM and missing final break)."""
    path = root / "project" / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree")
    async with toolkit(root) as s:
        args = {"path": "win.txt", "search_content": "two\nthree", "replace_content": "2\n3\n4", "start_line": 2}
        text = await ok(s, "apply_diffs", args)
        assert text == "Successfully applied diff to win.txt: replaced 2 line(s) at line 2 (added 1 line(s)). File now has 4 lines."
        assert await ok(s, "read_files", {"path": "win.txt", "line_range": "3-4"}) == "3 | 3\n4 | 4"
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n3\r\n4"


@pytest.mark.anyio
async def test_binary_and_directory_paths_are_refused(root):
    """Error Response Format: {"isError": true, "content": [{"type": "text", "text": "Error: error
    message description"}]} """
    (root / "project" / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x01")
    before = snapshot(root)
    async with toolkit(root) as s:
        assert await err(s, "read_files", {"path": "blob.bin"}) == "Error: Cannot read binary file: blob.bin"
        assert await err(s, "read_files", {"path": "src"}) == "Error: Path is a directory, not a file: src"
        assert await err(s, "list_files", {"path": "blob.bin"}) == "Error: Not a directory: blob.bin"
        text = await err(s, "insert_contents", {"path": "blob.bin", "line": 1, "content": "x"})
        assert text.startswith("Error: blob.bin: file is binary")
        assert await err(s, "write_files", {"path": "src/", "content": "", "line_count": 0}) == (
            "Error: src/ ends with `/`, so it names a directory; write_files writes files"
        )
        # The files of one call are written together or not at all.
        args = {"path": ["fresh.txt", "blob.bin"], "content": "text", "line_count": 1}
        assert (await err(s, "write_files", args)).startswith("Error: blob.bin: file is binary")
    assert snapshot(root) == before
