"""`tether mcp --http`: MCP over streamable HTTP, driven by the official MCP Python SDK's streamable
HTTP client for working sessions and by raw HTTP requests (httpx2, the SDK's own HTTP library) for
what must be refused: no token, a wrong token, a foreign Origin or Host, and a non-loopback bind
without the flag that allows it."""

import contextlib
import json
import re
import subprocess
import threading

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import error_of, tether_bin, text_of

pytestmark = pytest.mark.anyio

TOKEN = "t0k3n-" + "x" * 40
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def token_file(tmp_path):
    p = tmp_path / "token"
    p.write_text(TOKEN + "\n")
    p.chmod(0o600)
    return p


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "root"
    r.mkdir()
    (r / "hello.txt").write_text("hello\n")
    return r


@contextlib.contextmanager
def server(root, token_file, *args, addr="127.0.0.1:0"):
    """Starts `tether mcp --http` and yields its endpoint URL, read from the line it prints."""
    cmd = [tether_bin(), "mcp", "--root", str(root), "--http", addr, "--token-file", str(token_file), *args]
    m = None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        seen = ""
        for line in proc.stderr:  # warnings may come first
            seen += line
            m = re.search(r"serving MCP over HTTP at (http://\S+/mcp)", line)
            if m:
                break
        assert m, f"no address line; stderr: {seen}"
        # Keep reading, so that the server never blocks on a full stderr pipe.
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        yield m.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def post(url, headers=None, body=INIT):
    h = {"Content-Type": "application/json", "Accept": ACCEPT}
    h.update(headers or {})
    return httpx2.post(url, headers=h, content=json.dumps(body), timeout=10)


def bearer(token=TOKEN):
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def sdk_session(url, headers):
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


async def test_sdk_session_with_the_right_token(root, token_file):
    """The right token opens a working MCP session: tools listed, a call changes the disk."""
    with server(root, token_file, "--profile", "guarded") as url:
        async with sdk_session(url, bearer()) as s:
            names = sorted(t.name for t in (await s.list_tools()).tools)
            r = await s.call_tool("write_file", {"path": "made/new.txt", "content": "over http\n"})
            assert not r.is_error, text_of(r)
            e = error_of(await s.call_tool("write_file", {"path": "/etc/x", "content": "x"}))
            out = await s.call_tool("run_command", {"command": "cat", "args": ["made/new.txt"]})
    assert names == ["append_file", "apply_patch", "create_directory", "move_file", "run_command", "write_file"]
    assert (root / "made" / "new.txt").read_text() == "over http\n"
    assert e["error"] == "OutsideRoot"
    assert text_of(out) == "exit_code: 0\nstdout:\nover http\nstderr:\n"


async def test_http_serves_any_profile(root, token_file):
    """The transport is not tied to one profile: the default (`standard`) is served too."""
    with server(root, token_file) as url:
        async with sdk_session(url, bearer()) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            r = await s.call_tool("read_file", {"path": "hello.txt"})
    assert {"read_file", "grep", "edit_file"} <= names
    assert "hello" in text_of(r)


async def test_sdk_session_with_a_wrong_token_fails(root, token_file):
    """The SDK client cannot even initialize without the right token, and nothing runs."""
    with server(root, token_file, "--profile", "guarded") as url:
        # The SDK surfaces the 401 as a failed initialize (an exception group from its tasks).
        with pytest.raises(Exception):
            async with sdk_session(url, bearer("wrong")) as s:
                await s.call_tool("write_file", {"path": "pwned.txt", "content": "x"})
    assert not (root / "pwned.txt").exists()


def test_no_token_is_refused(root, token_file):
    with server(root, token_file) as url:
        r = post(url)
        r_get = httpx2.get(url, headers={"Accept": "text/event-stream"}, timeout=10)
        r_delete = httpx2.delete(url, timeout=10)
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert "Mcp-Session-Id" not in r.headers
    assert r_get.status_code == 401 and r_delete.status_code == 401


def test_wrong_token_is_refused(root, token_file):
    with server(root, token_file) as url:
        statuses = [
            post(url, {"Authorization": value}).status_code
            for value in [
                "Bearer wrong",
                f"Bearer {TOKEN[:-1]}",
                f"Bearer {TOKEN}x",
                f"Basic {TOKEN}",
                TOKEN,
                "Bearer",
            ]
        ]
        right = post(url, bearer())
        lower = post(url, {"Authorization": f"bearer {TOKEN}"})
    assert statuses == [401] * 6
    assert right.status_code == 200, right.text
    assert lower.status_code == 200
    assert "Mcp-Session-Id" in right.headers


def test_the_right_token_initializes(root, token_file):
    with server(root, token_file, "--profile", "guarded") as url:
        r = post(url, bearer())
    assert r.status_code == 200
    body = r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        body = next(line[5:] for line in body.splitlines() if line.startswith("data:") and line[5:].strip())
    msg = json.loads(body)
    assert msg["id"] == 1 and msg["result"]["serverInfo"]["name"] == "tether"


def test_foreign_origin_is_refused(root, token_file):
    """DNS-rebinding protection: a browser page from another origin cannot use the server, even
    with the token; loopback origins can."""
    with server(root, token_file) as url:
        port = url.split(":")[2].split("/")[0]
        evil = post(url, {**bearer(), "Origin": "https://evil.example"})
        evil_port = post(url, {**bearer(), "Origin": "http://evil.example:" + port})
        null = post(url, {**bearer(), "Origin": "null"})
        local = post(url, {**bearer(), "Origin": "http://localhost:5173"})
        loop = post(url, {**bearer(), "Origin": f"http://127.0.0.1:{port}"})
    assert (evil.status_code, evil_port.status_code, null.status_code) == (403, 403, 403)
    assert "Origin" in evil.text
    assert local.status_code == 200 and loop.status_code == 200


def test_allow_origin_flag_admits_one_more_origin(root, token_file):
    with server(root, token_file, "--allow-origin", "https://app.example:8443") as url:
        allowed = post(url, {**bearer(), "Origin": "https://app.example:8443"})
        other_port = post(url, {**bearer(), "Origin": "https://app.example:9999"})
        other = post(url, {**bearer(), "Origin": "https://evil.example:8443"})
    assert allowed.status_code == 200
    assert other_port.status_code == 403 and other.status_code == 403


def test_foreign_host_header_is_refused(root, token_file):
    """A rebound DNS name reaches a loopback server with its own Host header: refused."""
    with server(root, token_file) as url:
        r = post(url, {**bearer(), "Host": "evil.example"})
    assert r.status_code == 403


def test_non_loopback_bind_is_refused_without_the_flag(root, token_file):
    for addr in ["0.0.0.0:0", "[::]:0"]:
        cmd = [tether_bin(), "mcp", "--root", str(root), "--http", addr, "--token-file", str(token_file)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        assert p.returncode != 0
        assert "not a loopback address" in p.stderr and "--http-allow-remote" in p.stderr, p.stderr


def test_non_loopback_bind_with_the_flag_still_needs_the_token(root, token_file):
    with server(root, token_file, "--http-allow-remote", addr="0.0.0.0:0") as url:
        port = url.split(":")[2].split("/")[0]
        local = f"http://127.0.0.1:{port}/mcp"
        assert post(local).status_code == 401
        assert post(local, bearer()).status_code == 200


def test_token_file_is_required_and_checked(root, tmp_path):
    p = subprocess.run([tether_bin(), "mcp", "--root", str(root), "--http", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and "--token-file" in p.stderr
    empty = tmp_path / "empty"
    empty.write_text("\n")
    for f in [empty, tmp_path / "missing"]:
        p = subprocess.run([tether_bin(), "mcp", "--root", str(root), "--http", "127.0.0.1:0", "--token-file", str(f)],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode != 0 and "token file" in p.stderr, p.stderr


def test_other_paths_are_not_served(root, token_file):
    with server(root, token_file) as url:
        r = httpx2.post(url.replace("/mcp", "/other"), headers=bearer(), timeout=10)
    assert r.status_code == 404


def test_a_2025_03_26_session_takes_a_batch(root, token_file):
    """MCP 2025-03-26, the one revision with JSON-RPC batches: the answers to a batch's requests
    come back as one JSON array, and a batch of notifications gets 202; a session on a later
    revision gets 400 and -32600 for a batch."""
    read = {"name": "read_file", "arguments": {"path": "hello.txt"}}
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": read},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    with server(root, token_file) as url:
        sessions = {}
        for version in ("2025-03-26", "2025-06-18"):
            init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
            r = post(url, bearer(), init)
            assert r.status_code == 200, r.text
            sessions[version] = {**bearer(), "Mcp-Session-Id": r.headers["Mcp-Session-Id"]}
        answered = post(url, sessions["2025-03-26"], batch)
        quiet = post(url, sessions["2025-03-26"], batch[:1])
        refused = post(url, sessions["2025-06-18"], batch)
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("application/json")
    answers = {a["id"]: a for a in answered.json()}
    assert sorted(answers) == [2, 3], answers
    assert "hello" in answers[2]["result"]["content"][0]["text"] and answers[3]["result"] == {}
    assert (quiet.status_code, quiet.text) == (202, "")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32600, refused.text
