"""Claude Code's IDE protocol, for real: interactive Claude Code (the npm CLI, pinned, in tmux: only
its interactive mode connects to an IDE) beside a real Neovim whose tether lsp serves the protocol.
Claude Code finds tether through the lock file in its `ide/` folder, asks it for the diagnostics
around each edit, and shows an edit waiting for permission with `openDiff`: tether shows it in its
review tab, on top of the buffer's unsaved text, and the text accepted lands in both the file and
the buffer."""

import base64
import hashlib
import json
import os
import shlex
import socket
import struct
import subprocess
import time

import pytest

from conftest import Editor, no_prompt, ruff_bin, text_of, wait_for_ruffs_first_pull, wait_until
from model_stub import ModelStub
from test_assistants import MAIN, assistant_bin

PROMPT = "Change main to return 2."
KEY = "sk-ant-api03-tether-test-key-0123456789abcdef"


@pytest.fixture
def claude_home(tmp_path):
    home = tmp_path / "claude"
    (home / "ide").mkdir(parents=True)
    return home


@pytest.fixture
def editor(workspace, tmp_path, claude_home):
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(workspace, home, "src/main.py", plugin=True, env={"CLAUDE_CONFIG_DIR": str(claude_home)})
    yield e
    e.close()


def buffer_text(editor, path) -> str:
    return editor.lua(
        "local b = vim.fn.bufnr(...) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n') .. '\\n'",
        str(path),
    )


def lock_of(claude_home) -> tuple[int, dict]:
    """tether lsp's lock file: its port and fields."""
    locks = wait_until("tether's IDE lock file", lambda: list((claude_home / "ide").glob("*.lock")) or None)
    assert len(locks) == 1, locks
    return int(locks[0].stem), json.loads(locks[0].read_text())


def accepted_with_the_unsaved_text(editor, merged: str):
    """The accepted change is in the buffer with the unsaved line, the buffer still modified, no
    "changed on disk" prompt, and one undo step takes the change back, and only it."""
    assert editor.text() == merged and editor.modified()
    editor.nvim.command("checktime", async_=True)
    time.sleep(0.3)
    assert no_prompt(editor), "no 'changed on disk' prompt"
    editor.nvim.command("normal! u")
    assert editor.text() == "# unsaved\n" + MAIN, "one undo step takes the accepted change back, and only it"


class Tmux:
    """Interactive Claude Code in a detached tmux session of its own server."""

    def __init__(self, name: str, cwd, env: dict, argv: list[str]):
        self.base = ["tmux", "-L", name]
        command = " ".join(shlex.quote(a) for a in ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv)
        subprocess.run(self.base + ["new-session", "-d", "-x", "160", "-y", "50", "-c", str(cwd), command], check=True)

    def screen(self) -> str:
        done = subprocess.run(self.base + ["capture-pane", "-p"], capture_output=True, text=True)
        return done.stdout

    def keys(self, *keys: str):
        subprocess.run(self.base + ["send-keys", *keys], check=True)

    def close(self):
        subprocess.run(self.base + ["kill-server"], capture_output=True)


def start_claude(editor, claude_home, tmp_path, port: int, stub: ModelStub) -> Tmux:
    claude_home.joinpath(".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "2.1.332",
        "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {str(editor.root): {"hasTrustDialogAccepted": True}},
    }))
    env = {
        "HOME": str(tmp_path),
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "CLAUDE_CONFIG_DIR": str(claude_home),
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": stub.url,
        "CLAUDE_CODE_SSE_PORT": str(port),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
    }
    argv = [assistant_bin("claude-code", "TETHER_CLAUDE"), "--model", "claude-sonnet-4-5",
            "--permission-mode", "default"]
    return Tmux(f"tether-claude-{os.getpid()}", editor.root, env, argv)


def test_claude_codes_edit_is_reviewed_in_neovim_and_lands_with_the_unsaved_text(editor, claude_home, tmp_path):
    main = editor.root / "src" / "main.py"
    port, lock = lock_of(claude_home)
    assert lock["ideName"] == "tether" and lock["transport"] == "ws" and lock["workspaceFolders"] == [str(editor.root)]
    assert len(lock["authToken"]) == 64
    assert (claude_home / "ide" / f"{port}.lock").stat().st_mode & 0o777 == 0o600
    editor.type_at(1, 0, "# unsaved\n")
    stub = ModelStub([
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Edit", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                   "replace_all": False}},
        {"text": "main returns 2 now"},
    ], prompt=PROMPT)
    claude = start_claude(editor, claude_home, tmp_path, port, stub)
    try:
        wait_until("Claude Code's prompt", lambda: "? for shortcuts" in claude.screen() or "│ >" in claude.screen()
                   or "❯" in claude.screen(), timeout=60)
        time.sleep(2)  # the IDE connection comes about a second after start
        claude.keys(PROMPT)
        claude.keys("Enter")
        # The edit waits for permission: Claude Code shows it in the editor, through tether's review.
        wait_until("the review tab", lambda: editor.lua(
            "return #require('tether.review').pending > 0 and vim.api.nvim_buf_get_name(0):match('^tether://review/') ~= nil"
        ), timeout=90)
        proposed = editor.nvim.current.buffer[:]
        assert proposed == ["# unsaved", "def main():", "    return 2"], "the proposal on top of the unsaved text"
        editor.nvim.input("fa")
        merged = "# unsaved\ndef main():\n    return 2\n"
        wait_until("Claude Code's write", lambda: main.read_text() == merged, timeout=30)
        wait_until("the write merged into the buffer", lambda: buffer_text(editor, main) == merged)
        wait_until("the turn's end", lambda: "main returns 2 now" in claude.screen(), timeout=30)
        results = stub.tool_results()
        assert any("updated successfully" in r or "has been updated" in r for r in results), results
        assert (claude_home / "ide" / f"{port}.lock").exists()
        accepted_with_the_unsaved_text(editor, merged)
    finally:
        screen = claude.screen()
        claude.close()
        stub.close()
        print(screen)
    editor.close()
    wait_until("the lock file to go with tether lsp", lambda: not (claude_home / "ide" / f"{port}.lock").exists())


class Client:
    """The smallest WebSocket client (RFC 6455: masked text frames out, unmasked in), speaking
    MCP to tether's IDE server as Claude Code does."""

    def __init__(self, port: int, token: str | None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        auth = f"x-claude-code-ide-authorization: {token}\r\n" if token else ""
        self.sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: mcp\r\n{auth}\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ")[1])
        if self.status == 101:
            accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
            assert b"sec-websocket-accept: " + accept in head.lower().replace(accept.lower(), accept), head
        self.next_id = 0
        self.notifications: list[dict] = []

    def send(self, message: dict):
        data = json.dumps(message).encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            assert chunk, "the server closed the connection"
            out += chunk
        return out

    def receive(self) -> dict:
        first, second = self._exact(2)
        n = second & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._exact(8))[0]
        assert first & 0x0F == 1 and not second & 0x80, (first, second)
        return json.loads(self._exact(n))

    def request(self, method: str, params: dict) -> dict:
        """The result; notifications that come first are kept in `notifications`."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        answer = self.receive()
        while "id" not in answer:
            self.notifications.append(answer)
            answer = self.receive()
        assert answer["id"] == self.next_id, answer
        return answer["result"]

    def notification(self, method: str, timeout: float = 10) -> dict:
        """The next notification `method` (one kept, or one that comes within `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            for n in self.notifications:
                if n["method"] == method:
                    self.notifications.remove(n)
                    return n["params"]
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                self.notifications.append(self.receive())
            finally:
                self.sock.settimeout(10)

    def tool(self, name: str, args: dict):
        result = self.request("tools/call", {"name": name, "arguments": args})
        texts = [c["text"] for c in result["content"]]
        return json.loads(texts[0]) if len(texts) == 1 and texts[0][:1] in "[{" else texts


def test_the_ide_server_answers_from_the_buffers_and_only_with_the_token(editor, claude_home):
    port, lock = lock_of(claude_home)
    assert Client(port, None).status == 401
    assert Client(port, "0" * 64).status == 401
    client = Client(port, lock["authToken"])
    assert client.status == 101
    init = client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "claude-code", "version": "2.1.332"}})
    assert init["protocolVersion"] == "2025-11-25" and init["serverInfo"]["name"] == "tether"
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    names = {t["name"] for t in client.request("tools/list", {})["tools"]}
    assert {"openDiff", "getDiagnostics", "getOpenEditors", "checkDocumentDirty", "close_tab"} <= names
    main = editor.root / "src" / "main.py"
    folders = client.tool("getWorkspaceFolders", {})
    assert folders["folders"][0]["path"] == str(editor.root)
    assert client.tool("checkDocumentDirty", {"filePath": str(main)})["isDirty"] is False
    editor.type_at(1, 0, "# unsaved\n")
    wait_until("the change to reach tether",
               lambda: client.tool("checkDocumentDirty", {"filePath": str(main)})["isDirty"] is True)
    tabs = client.tool("getOpenEditors", {})["tabs"]
    assert [(t["fileName"], t["isDirty"], t["isActive"]) for t in tabs] == [(str(main), True, True)], tabs
    editor.nvim.command("normal! ggVj")
    selection = client.tool("getCurrentSelection", {})
    assert selection["filePath"] == str(main) and selection["text"].startswith("# unsaved\ndef main"), selection
    # ... and pushed as it changes.
    pushed = client.notification("selection_changed")
    while not pushed["text"].startswith("# unsaved\ndef main"):  # an earlier cursor may come first
        pushed = client.notification("selection_changed")
    assert pushed["filePath"] == str(main) and pushed["selection"]["isEmpty"] is False, pushed
    outside = client.tool("checkDocumentDirty", {"filePath": "/etc/passwd"})
    assert outside["success"] is False, outside
    assert client.tool("closeAllDiffTabs", {}) == ["CLOSED_0_DIFF_TABS"]


def test_get_diagnostics_after_an_edit_answers_for_the_new_text(tmp_path, claude_home):
    """Claude Code asks `getDiagnostics` right after each edit: the answer is the report of the
    buffer's new version (Ruff's, pulled by Neovim), never the one before the edit."""
    root = tmp_path / "lint"
    root.mkdir()
    (root / ".git").mkdir()
    lint = root / "lint.py"
    lint.write_text("x = 1\n")
    home = tmp_path / "home"
    home.mkdir()
    e = Editor(root, home, "lint.py", plugin=True,
               env={"TETHER_RUFF": ruff_bin(), "CLAUDE_CONFIG_DIR": str(claude_home)})
    try:
        wait_for_ruffs_first_pull(e)
        port, lock = lock_of(claude_home)
        client = Client(port, lock["authToken"])
        client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "claude-code", "version": "2.1.332"}})
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        uri = lint.as_uri()

        def codes() -> list[str]:
            files = client.tool("getDiagnostics", {"uri": uri})
            return [d["code"] for f in files for d in f["diagnostics"]]

        assert codes() == []
        # An edit the assistant makes (through tether), then the question at once.
        r = e.call("edit_file", path="lint.py", old_string="x = 1", new_string="x = y")
        assert r["isError"] is False, r
        assert codes() == ["F821"], "the report of the edited text, with its undefined name"
        # And one the user makes in the buffer: once tether has it, the report before it (F821) is
        # not the answer, though Ruff's report of the new text may not have come yet.
        e.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, {'x = 2'})")
        wait_until("the change to reach tether", lambda: "x = 2" in text_of(e.call("read_file", path="lint.py")))
        assert codes() == [], "the report of the fixed text, not the stale one"
    finally:
        e.close()
