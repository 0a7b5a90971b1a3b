"""The `explorer` profile (seed 002) over MCP with the official Python SDK client.

Each test quotes, in its docstring, the sentence of seed 002 that it checks.
"""

import base64
import datetime
import json
import os

import pytest
from mcp.shared.exceptions import MCPError

import subprocess

from conftest import session, snapshot, tether_bin, text_of

PROFILE = ("--profile", "explorer")
TOOLS = {"list_files", "read_file", "search_files", "get_repo_overview"}


async def ok(s, tool, args):
    r = await s.call_tool(tool, args)
    assert not r.is_error, f"{tool} {args}: {text_of(r)}"
    v = json.loads(text_of(r))
    assert r.structured_content == v
    return v


async def rpc_error(s, tool, args):
    """The JSON-RPC error of a failing call: (code, message, data)."""
    with pytest.raises(MCPError) as e:
        await s.call_tool(tool, args)
    return e.value.code, e.value.message, e.value.data


def iso(ts: str) -> datetime.datetime:
    assert ts.endswith("Z") and len(ts) == 24, ts
    return datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


@pytest.fixture
def repo(tree):
    """The shared tree plus what the explorer contract cares about: a package tree with nested
    sources, excluded folders, minified files, binaries and a hidden file."""
    root = tree / "root"
    (root / "src" / "utils").mkdir()
    (root / "src" / "index.ts").write_text("import { App } from './app';\nexport function main() {}\n")
    (root / "src" / "utils" / "helpers.ts").write_text("export const helper = 1;\n")
    (root / "src" / "app.tsx").write_text("export const App = () => null;\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.ts").write_text("function authenticate() {}\n")
    (root / "dist").mkdir()
    (root / "dist" / "bundle.ts").write_text("function authenticate() {}\n")
    (root / "app.min.js").write_text("function authenticate(){}\n")
    (root / "package-lock.json").write_text('{"authenticate": 1}\n')
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (root / ".env").write_text("SECRET=1\n")
    return root


@pytest.mark.anyio
async def test_lists_the_four_read_only_tools(repo):
    """The v1 MCP server provides only read operations"""
    async with session(repo, *PROFILE) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(t.annotations.read_only_hint for t in tools.values())
        props = lambda n: tools[n].input_schema["properties"]  # noqa: E731
        assert set(props("list_files")) == {"directory", "pattern", "max_depth", "include_hidden"}
        assert set(props("read_file")) == {"path", "max_bytes", "encoding"}
        assert set(props("search_files")) == {"pattern", "is_regex", "glob", "max_results", "context_lines", "case_sensitive"}
        assert set(props("get_repo_overview")) == {"max_depth", "include_stats"}
        assert props("list_files")["max_depth"]["default"] == 3
        assert props("read_file")["max_bytes"]["default"] == 100000
        assert props("search_files")["max_results"]["default"] == 50
        assert props("search_files")["context_lines"]["default"] == 2
        assert props("get_repo_overview")["max_depth"]["default"] == 2


@pytest.mark.anyio
async def test_read_only_mode_serves_the_same_tools(repo):
    """Read-only No write, delete, or modify operations"""
    before = snapshot(repo)
    async with session(repo, *PROFILE, "--read-only") as s:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        await ok(s, "get_repo_overview", {})
        await ok(s, "search_files", {"pattern": "main"})
        with pytest.raises(MCPError):
            await s.call_tool("write_file", {"path": "x", "content": "y"})
    assert snapshot(repo) == before


@pytest.mark.anyio
async def test_list_files_entries_with_metadata(repo):
    """Returns file paths, types, sizes, and modification dates."""
    os.utime(repo / "src" / "index.ts", (1768125600, 1768125600))
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "list_files", {"directory": "src"})
        assert set(v) == {"files", "total_count", "truncated"}
        by_path = {f["path"]: f for f in v["files"]}
        assert by_path["src/utils"] == {"path": "src/utils", "type": "directory"}
        idx = by_path["src/index.ts"]
        assert idx["type"] == "file" and idx["size"] == (repo / "src" / "index.ts").stat().st_size
        assert idx["modified_at"] == "2026-01-11T10:00:00.000Z"
        assert "src/utils/helpers.ts" in by_path
        assert v["total_count"] == len(v["files"]) and v["truncated"] is False


@pytest.mark.anyio
async def test_list_files_pattern_and_depth(repo):
    """directory string No "." Directory path relative to repository root ... max_depth number No 3 Maximum directory depth (1-10)"""
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "list_files", {"directory": "src", "pattern": "*.ts", "max_depth": 2})
        assert [f["path"] for f in v["files"]] == ["src/index.ts", "src/utils/helpers.ts"]
        assert v["total_count"] == 2
        v = await ok(s, "list_files", {"directory": "src", "pattern": "*.ts", "max_depth": 1})
        assert [f["path"] for f in v["files"]] == ["src/index.ts"]
        top = {f["path"] for f in (await ok(s, "list_files", {}))["files"]}
        assert "src/utils/helpers.ts" in top and "docs/guide.md" in top
        for bad in [0, 11, "3"]:
            code, _, data = await rpc_error(s, "list_files", {"max_depth": bad})
            assert (code, data["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_list_files_hidden_entries(repo):
    """include_hidden boolean No false Include hidden files and directories"""
    async with session(repo, *PROFILE) as s:
        paths = {f["path"] for f in (await ok(s, "list_files", {"max_depth": 1}))["files"]}
        assert ".env" not in paths and "src" in paths
        paths = {f["path"] for f in (await ok(s, "list_files", {"max_depth": 1, "include_hidden": True}))["files"]}
        assert ".env" in paths


@pytest.mark.anyio
async def test_list_files_truncates_at_500(repo):
    """truncated boolean True if results were limited (max 500)"""
    many = repo / "many"
    many.mkdir()
    for i in range(520):
        (many / f"f{i:04}.txt").write_text("x")
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "list_files", {"directory": "many"})
        assert len(v["files"]) == 500 and v["total_count"] == 520 and v["truncated"] is True
        assert v["files"][0]["path"] == "many/f0000.txt"


@pytest.mark.anyio
async def test_list_files_errors(repo):
    """directory_not_found Directory does not exist Typo in path, deleted directory"""
    async with session(repo, *PROFILE) as s:
        code, msg, data = await rpc_error(s, "list_files", {"directory": "nope"})
        assert (code, data) == (-32001, {"error_code": "directory_not_found", "path": "nope"})
        assert msg == "Directory not found: nope"
        code, _, data = await rpc_error(s, "list_files", {"directory": "link_dir"})
        assert (code, data["error_code"]) == (-32002, "access_denied")
        code, _, data = await rpc_error(s, "list_files", {"pattern": "a["})
        assert (code, data["error_code"]) == (-32005, "invalid_pattern")


@pytest.mark.anyio
async def test_read_file_utf8_response(repo):
    """Response ... path ... content ... size ... modified_at ... encoding ... truncated"""
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "read_file", {"path": "src/index.ts"})
        text = (repo / "src" / "index.ts").read_text()
        assert set(v) == {"path", "content", "size", "modified_at", "encoding", "truncated"}
        assert v["path"] == "src/index.ts" and v["content"] == text and v["size"] == len(text.encode())
        assert v["encoding"] == "utf-8" and v["truncated"] is False
        mtime = datetime.datetime.fromtimestamp((repo / "src" / "index.ts").stat().st_mtime, datetime.timezone.utc)
        assert abs((iso(v["modified_at"]) - mtime).total_seconds()) < 0.01


@pytest.mark.anyio
async def test_read_file_max_bytes_truncates(repo):
    """max_bytes number No 100000 Maximum bytes to read ... size number Original file size in bytes"""
    (repo / "big.txt").write_text("é" * 60000)  # 120000 bytes
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "read_file", {"path": "big.txt"})
        assert v["truncated"] is True and v["size"] == 120000 and len(v["content"].encode()) == 100000
        v = await ok(s, "read_file", {"path": "big.txt", "max_bytes": 5})
        assert v["content"] == "éé" and v["truncated"] is True
        code, _, data = await rpc_error(s, "read_file", {"path": "big.txt", "max_bytes": 0})
        assert (code, data["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_read_file_base64(repo):
    """Binary files must use base64 encoding"""
    data = (repo / "logo.png").read_bytes()
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "read_file", {"path": "logo.png", "encoding": "base64"})
        assert v["encoding"] == "base64" and base64.b64decode(v["content"]) == data
        assert v["size"] == len(data) and v["truncated"] is False
        v = await ok(s, "read_file", {"path": "logo.png", "encoding": "base64", "max_bytes": 4})
        assert base64.b64decode(v["content"]) == data[:4] and v["truncated"] is True
        v = await ok(s, "read_file", {"path": "src/index.ts", "encoding": "base64"})
        assert base64.b64decode(v["content"]) == (repo / "src" / "index.ts").read_bytes()
        code, _, d = await rpc_error(s, "read_file", {"path": "logo.png", "encoding": "latin-1"})
        assert (code, d["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_read_file_blocked_extensions(repo):
    """The following extensions are blocked for UTF-8 encoding"""
    blocked = ["a.png", "b.jpg", "c.zip", "d.exe", "e.pyc", "f.woff2", "g.mp3", "h.sqlite", "i.pdf", "j.WASM"]
    for name in blocked:
        (repo / name).write_text("plain text really\n")
    async with session(repo, *PROFILE) as s:
        for name in blocked:
            code, _, data = await rpc_error(s, "read_file", {"path": name})
            assert (code, data) == (-32004, {"error_code": "binary_file", "path": name}), name
            v = await ok(s, "read_file", {"path": name, "encoding": "base64"})
            assert base64.b64decode(v["content"]) == b"plain text really\n"


@pytest.mark.anyio
async def test_read_file_binary_content(repo):
    """binary_file Binary file with UTF-8 encoding Image, executable, archive"""
    (repo / "blob.bin").write_bytes(b"abc\x00\x01\x02")
    async with session(repo, *PROFILE) as s:
        code, _, data = await rpc_error(s, "read_file", {"path": "blob.bin"})
        assert (code, data["error_code"]) == (-32004, "binary_file")


@pytest.mark.anyio
async def test_read_file_too_large(repo):
    """MAX_FILE_SIZE_BYTES Maximum file size to read (bytes) 1048576 (1MB)"""
    (repo / "huge.txt").write_bytes(b"x" * (1048576 + 1))
    (repo / "edge.txt").write_bytes(b"y" * 1048576)
    async with session(repo, *PROFILE) as s:
        code, _, data = await rpc_error(s, "read_file", {"path": "huge.txt"})
        assert (code, data) == (-32003, {"error_code": "file_too_large", "path": "huge.txt"})
        v = await ok(s, "read_file", {"path": "edge.txt", "max_bytes": 10})
        assert v["size"] == 1048576 and v["content"] == "y" * 10


@pytest.mark.anyio
async def test_error_response_format(repo):
    """{ "code": -32001, "message": "File not found: src/missing.ts", "data": { "error_code": "file_not_found", "path": "src/missing.ts" } }"""
    async with session(repo, *PROFILE) as s:
        code, msg, data = await rpc_error(s, "read_file", {"path": "src/missing.ts"})
        assert (code, msg, data) == (-32001, "File not found: src/missing.ts", {"error_code": "file_not_found", "path": "src/missing.ts"})
        code, _, data = await rpc_error(s, "read_file", {"path": "src"})
        assert (code, data["error_code"]) == (-32001, "file_not_found")
        code, _, data = await rpc_error(s, "read_file", {})
        assert (code, data["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_access_denied_outside_the_sandbox(repo, tree):
    """Symlink Resolution: Symlinks pointing outside the sandbox are denied"""
    async with session(repo, *PROFILE) as s:
        for path in ["../outside/secret.txt", "link_file", "link_dir/secret.txt", str(tree / "outside" / "secret.txt")]:
            code, msg, data = await rpc_error(s, "read_file", {"path": path})
            assert (code, data["error_code"]) == (-32002, "access_denied"), path
            assert "TOP SECRET" not in msg
        listed = json.dumps(await ok(s, "list_files", {"max_depth": 10, "include_hidden": True}))
        assert "secret" not in listed
        found = await ok(s, "search_files", {"pattern": "TOP SECRET"})
        assert found["matches"] == [] and found["total_matches"] == 0


@pytest.mark.anyio
async def test_search_files_matches_with_context(repo):
    """Search for text patterns across repository files. Returns matching lines with context."""
    (repo / "src" / "auth.ts").write_text("a\nb\nconst token = login();\nc\nd\ne\n")
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "search_files", {"pattern": "LOGIN("})
        assert set(v) == {"matches", "total_matches", "files_searched", "truncated", "duration_ms"}
        assert v["matches"] == [{
            "path": "src/auth.ts",
            "line_number": 3,
            "line_content": "const token = login();",
            "context": {"before": ["a", "b"], "after": ["c", "d"]},
        }]
        assert v["total_matches"] == 1 and v["truncated"] is False
        assert isinstance(v["duration_ms"], int) and v["duration_ms"] >= 0
        v = await ok(s, "search_files", {"pattern": "login", "context_lines": 0})
        assert v["matches"][0]["context"] == {"before": [], "after": []}
        code, _, data = await rpc_error(s, "search_files", {"pattern": "x", "context_lines": 11})
        assert (code, data["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_search_files_plain_text_and_case(repo):
    """is_regex boolean No false Treat pattern as regular expression ... case_sensitive boolean No false Case-sensitive search"""
    (repo / "re.txt").write_text("a.b\naxb\nA.B\n")
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "search_files", {"pattern": "a.b", "glob": "*.txt"})
        assert [m["line_content"] for m in v["matches"]] == ["a.b", "A.B"]
        v = await ok(s, "search_files", {"pattern": "a.b", "glob": "*.txt", "case_sensitive": True})
        assert [m["line_content"] for m in v["matches"]] == ["a.b"]
        v = await ok(s, "search_files", {"pattern": "a.b", "glob": "*.txt", "is_regex": True, "case_sensitive": True})
        assert [m["line_content"] for m in v["matches"]] == ["a.b", "axb"]
        code, msg, data = await rpc_error(s, "search_files", {"pattern": "function\\s+(", "is_regex": True})
        assert (code, data["error_code"]) == (-32005, "invalid_pattern")


@pytest.mark.anyio
async def test_search_files_glob_and_statistics(repo):
    """files_searched number Number of files searched"""
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "search_files", {"pattern": "function\\s+\\w+", "is_regex": True, "glob": "src/**/*.ts"})
        assert [(m["path"], m["line_number"]) for m in v["matches"]] == [("src/index.ts", 2)]
        assert v["files_searched"] == 2  # src/index.ts and src/utils/helpers.ts
        code, _, data = await rpc_error(s, "search_files", {"pattern": "x", "glob": "src/[*.ts"})
        assert (code, data["error_code"]) == (-32005, "invalid_pattern")


@pytest.mark.anyio
async def test_search_files_excluded_directories(repo):
    """Search automatically excludes: • node_modules/ • .git/ • dist/ • build/ • *.min.js, *.min.css • package-lock.json, yarn.lock • *.map"""
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("authenticate\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.js").write_text("authenticate\n")
    (repo / "x.min.css").write_text("authenticate\n")
    (repo / "yarn.lock").write_text("authenticate\n")
    (repo / "app.js.map").write_text("authenticate\n")
    (repo / "src" / "real.ts").write_text("authenticate()\n")
    (repo / "logo2.png").write_text("authenticate\n")
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "search_files", {"pattern": "authenticate"})
        assert [m["path"] for m in v["matches"]] == ["src/real.ts"]


@pytest.mark.anyio
async def test_search_files_result_limits(repo):
    """max_results number No 50 Maximum matches to return (1-1000) ... MAX_SEARCH_RESULTS Maximum search matches 100"""
    (repo / "hits.txt").write_text("hit\n" * 150)
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "search_files", {"pattern": "hit", "glob": "hits.txt"})
        assert len(v["matches"]) == 50 and v["total_matches"] == 150 and v["truncated"] is True
        v = await ok(s, "search_files", {"pattern": "hit", "glob": "hits.txt", "max_results": 1000})
        assert len(v["matches"]) == 100 and v["truncated"] is True
        v = await ok(s, "search_files", {"pattern": "hit", "glob": "hits.txt", "max_results": 3, "context_lines": 1})
        assert [m["line_number"] for m in v["matches"]] == [1, 2, 3]
        assert v["matches"][1]["context"] == {"before": ["hit"], "after": ["hit"]}
        code, _, data = await rpc_error(s, "search_files", {"pattern": "hit", "max_results": 1001})
        assert (code, data["error_code"]) == (-32602, "invalid_arguments")


@pytest.mark.anyio
async def test_repo_overview_structure(repo):
    """Get a high-level overview of the repository structure and statistics including file counts and language breakdown."""
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "get_repo_overview", {"max_depth": 2})
        assert v["root"] == "root" and v["structure"]["name"] == "root" and v["structure"]["type"] == "directory"
        top = {c["name"]: c for c in v["structure"]["children"]}
        assert "node_modules" not in top and "dist" not in top
        kinds = [c["type"] for c in v["structure"]["children"]]
        assert kinds == sorted(kinds, key=lambda k: k != "directory"), "directories first"
        src = {c["name"]: c for c in top["src"]["children"]}
        assert src["index.ts"] == {"name": "index.ts", "type": "file", "size": (repo / "src" / "index.ts").stat().st_size}
        assert src["utils"] == {"name": "utils", "type": "directory"}  # at the depth limit: not expanded
        assert top["crlf.txt"] == {"name": "crlf.txt", "type": "file", "size": 10}
        deeper = await ok(s, "get_repo_overview", {"max_depth": 3})
        utils = next(c for c in next(c for c in deeper["structure"]["children"] if c["name"] == "src")["children"] if c["name"] == "utils")
        assert utils["children"] == [{"name": "helpers.ts", "type": "file", "size": 25}]


@pytest.mark.anyio
async def test_repo_overview_statistics(repo):
    """stats.languages LanguageStats[] Top 15 file extensions by size"""
    for i in range(17):
        (repo / f"f.e{i:02}").write_bytes(b"z" * (i + 1))
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "get_repo_overview", {})
        stats = v["stats"]
        files = [p for p in repo.rglob("*") if p.is_file() and not p.is_symlink()
                 and not ({"node_modules", "dist"} & set(p.relative_to(repo).parts))]
        assert stats["total_files"] == len(files)
        assert stats["total_size"] == sum(p.stat().st_size for p in files)
        dirs = [p for p in repo.rglob("*") if p.is_dir() and not p.is_symlink()
                and not ({"node_modules", "dist"} & set(p.relative_to(repo).parts))]
        assert stats["total_directories"] == len(dirs)
        langs = stats["languages"]
        assert len(langs) == 15
        assert [l["bytes"] for l in langs] == sorted((l["bytes"] for l in langs), reverse=True)
        ts = next(l for l in langs if l["extension"] == ".ts")
        assert ts == {"extension": ".ts", "count": 2, "bytes": sum((repo / p).stat().st_size for p in ["src/index.ts", "src/utils/helpers.ts"])}
        assert ".e00" not in {l["extension"] for l in langs}  # the smallest extensions drop out
        v = await ok(s, "get_repo_overview", {"include_stats": False})
        assert "stats" not in v and v["structure"]["name"] == "root"


@pytest.mark.anyio
async def test_repo_overview_excluded_directories(repo):
    """Overview automatically skips: • node_modules/ • .git/ • .next/ • dist/ • build/ • __pycache__/ • .cache/ • coverage/ • .nyc_output/"""
    for d in [".git", ".next", "build", "__pycache__", ".cache", "coverage", ".nyc_output"]:
        (repo / d).mkdir(exist_ok=True)
        (repo / d / "junk.js").write_text("x" * 1000)
    async with session(repo, *PROFILE) as s:
        v = await ok(s, "get_repo_overview", {"max_depth": 5})
        dump = json.dumps(v["structure"])
        for d in ["node_modules", ".git", ".next", "dist", "build", "__pycache__", ".cache", "coverage", ".nyc_output"]:
            assert f'"{d}"' not in dump, d
        js = next(l for l in v["stats"]["languages"] if l["extension"] == ".js")
        assert js == {"extension": ".js", "count": 1, "bytes": (repo / "app.min.js").stat().st_size}
        for bad in [0, 6]:
            code, _, data = await rpc_error(s, "get_repo_overview", {"max_depth": bad})
            assert (code, data["error_code"]) == (-32602, "invalid_arguments")


def test_tether_tools_prints_the_contract_list(repo):
    """Name: list_files ... Name: read_file ... Name: search_files ... Name: get_repo_overview"""
    out = subprocess.run([tether_bin(), "tools", "--profile", "explorer", "--json"], capture_output=True, text=True, check=True)
    tools = json.loads(out.stdout)
    assert [t["name"] for t in tools] == ["list_files", "read_file", "search_files", "get_repo_overview"]
    assert all(t["annotations"]["readOnlyHint"] for t in tools)
