"""Gemini CLI's IDE companion spec, for real: Gemini CLI (the npm CLI, pinned) beside a real Neovim
whose tether lsp serves the companion. The CLI finds tether through its discovery file in
`$TMPDIR/gemini/ide`, is told the open files, the cursor and the selection (`ide/contextUpdate`),
and shows an edit waiting for permission with `openDiff`: tether shows it in its review tab, on top
of the buffer's unsaved text, and the text accepted goes back in `ide/diffAccepted`, which the CLI
writes and tether merges into the buffer."""

import http.client
import json
import os
import queue
import subprocess
import threading
import time

import pytest

import assistant_clis
from conftest import Editor, wait_until
from model_stub import ModelStub
from test_assistants import MAIN
from test_claude_ide import accepted_with_the_unsaved_text

PROMPT = "Change main to return 2."


@pytest.fixture
def editor(workspace, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (workspace / ".env").write_text("TOKEN=secret\n")
    e = Editor(workspace, home, "src/main.py", plugin=True,
               env={"TETHER_PLUGIN_OPTIONS": json.dumps({"deny_secrets": True})})
    yield e
    e.close()


def discovery(editor) -> tuple[int, int, dict]:
    """tether lsp's discovery file: the pid its name gives, its port, its fields."""
    folder = editor.home / "tmp" / "gemini" / "ide"
    files = wait_until("tether's Gemini discovery file", lambda: list(folder.glob("gemini-ide-server-*.json")) or None)
    assert len(files) == 1, files
    pid, port = files[0].stem.removeprefix("gemini-ide-server-").split("-")
    fields = json.loads(files[0].read_text())
    assert files[0].stat().st_mode & 0o777 == 0o600 and folder.stat().st_mode & 0o777 == 0o700
    assert fields["port"] == int(port)
    return int(pid), int(port), fields


def buffer_text(editor, path) -> str:
    return editor.lua(
        "local b = vim.fn.bufnr(...) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n') .. '\\n'",
        str(path),
    )


def review_shown(editor) -> bool:
    return editor.lua(
        "return #require('tether.review').pending > 0 and vim.api.nvim_buf_get_name(0):match('^tether://review/') ~= nil"
    )


def run_gemini(editor, tmp_path, pid: int, stub: ModelStub) -> assistant_clis.Gemini:
    """`gemini -p` with the IDE integration on, beside the editor (its discovery file under the
    editor's TMPDIR)."""
    return assistant_clis.start_gemini_ide(editor.root, tmp_path, pid, stub, tmpdir=editor.home / "tmp")


def test_gemini_clis_edit_is_reviewed_in_neovim_and_lands_with_the_unsaved_text(editor, tmp_path):
    main = editor.root / "src" / "main.py"
    pid, port, fields = discovery(editor)
    assert fields["workspacePath"] == str(editor.root) and fields["ideInfo"]["name"] == "tether"
    assert len(fields["authToken"]) == 64
    editor.type_at(1, 0, "# unsaved\n")
    stub = ModelStub([
        {"tool": "replace", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                      "instruction": "Return 2."}},
        {"text": "main returns 2 now"},
    ])
    gemini = run_gemini(editor, tmp_path, pid, stub)
    try:
        wait_until("the review tab", lambda: review_shown(editor) or gemini.proc.poll() is not None, timeout=90)
        assert gemini.proc.poll() is None, gemini.finish(10)
        assert editor.nvim.current.buffer[:] == ["# unsaved", "def main():", "    return 2"], \
            "the proposal on top of the unsaved text"
        editor.nvim.input("fa")
        out, err = gemini.finish(60)
    finally:
        if gemini.proc.poll() is None:
            gemini.proc.kill()
        stub.close()
    assert gemini.proc.returncode == 0, err
    assert gemini.ide_ready(), "the CLI found tether's openDiff and closeDiff"
    merged = "# unsaved\ndef main():\n    return 2\n"
    assert main.read_text() == merged, "Gemini CLI wrote the accepted text"
    wait_until("the write merged into the buffer", lambda: buffer_text(editor, main) == merged)
    results = stub.tool_results()
    assert any("Successfully modified" in r for r in results), results
    # The editor's context reached the model with the prompt: the open file, focused, its cursor.
    context = [part["text"] for request in stub.requests for content in request.get("contents", [])
               for part in content.get("parts", []) if "editor context" in part.get("text", "")]
    assert context, stub.requests
    told = json.loads(context[0].split("```json")[1].split("```")[0])
    assert told["activeFile"]["path"] == str(main) and told["activeFile"]["cursor"]["line"] == 2, told
    accepted_with_the_unsaved_text(editor, merged)
    editor.close()
    folder = editor.home / "tmp" / "gemini" / "ide"
    wait_until("the discovery file to go with tether lsp", lambda: not list(folder.glob("*.json")))


class Companion:
    """An MCP client of the companion over HTTP, as Gemini CLI's: requests POSTed, notifications
    read from the event stream a GET opens."""

    def __init__(self, port: int, token: str):
        self.port, self.token, self.next_id = port, token, 0
        self.events: queue.Queue = queue.Queue()

    def post(self, message: dict, token: str | None = "", headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        auth = {"Authorization": f"Bearer {self.token if token == '' else token}"} if token is not None else {}
        conn.request("POST", "/mcp", json.dumps(message), {"Content-Type": "application/json",
                                                           "Accept": "application/json, text/event-stream",
                                                           **auth, **(headers or {})})
        response = conn.getresponse()
        body = response.read().decode()
        return response.status, response.getheader("Content-Type") or "", body

    def request(self, method: str, params: dict) -> tuple[list[dict], dict]:
        """The notifications sent before the answer (in an event stream), and the result."""
        self.next_id += 1
        status, kind, body = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert status == 200, (status, body)
        messages = ([json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
                    if kind.startswith("text/event-stream") else [json.loads(body)])
        answer = messages[-1]
        assert answer["id"] == self.next_id and "result" in answer, answer
        return messages[:-1], answer["result"]

    def tool(self, name: str, args: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": args})[1]

    def listen(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("GET", "/mcp", headers={"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"})
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"

        def read():
            try:
                for line in response:
                    if line.startswith(b"data: "):
                        self.events.put(json.loads(line[6:]))
            except OSError:
                pass

        threading.Thread(target=read, daemon=True).start()

    def next_event(self, method: str, timeout: float = 10) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            if event.get("method") == method:
                return event["params"]


def open_files(context: dict) -> list[dict]:
    return context["workspaceState"]["openFiles"]


def test_the_companion_answers_with_the_token_only_and_tells_what_the_user_sees(editor):
    main = editor.root / "src" / "main.py"
    _, port, fields = discovery(editor)
    client = Companion(port, fields["authToken"])
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "streamable-http-client", "version": "0.61.0"}}}
    assert client.post(init, token=None)[0] == 401
    assert client.post(init, token="0" * 64)[0] == 401
    assert client.post(init, headers={"Origin": "http://evil.example"})[0] == 403
    _, result = client.request("initialize", init["params"])
    assert result["protocolVersion"] == "2025-06-18" and result["serverInfo"]["name"] == "tether"
    assert client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
    client.listen()
    editor.nvim.command("call cursor(2, 5)")
    # tools/list carries the context first, so that the CLI's first prompt has it.
    before, tools = client.request("tools/list", {})
    assert {t["name"] for t in tools["tools"]} == {"openDiff", "closeDiff"}
    assert before and before[0]["method"] == "ide/contextUpdate", before
    [shown] = open_files(before[0]["params"])
    assert shown["path"] == str(main) and shown["isActive"] is True and shown["cursor"] == {"line": 2, "character": 5}
    # A selection is pushed when it changes.
    editor.nvim.command("normal! ggVj")
    selected = wait_until("the selection pushed", lambda: (
        lambda c: c if open_files(c)[0].get("selectedText") else None)(client.next_event("ide/contextUpdate")))
    assert open_files(selected)[0]["selectedText"].startswith("def main():\n"), selected
    editor.nvim.input("<Esc>")
    # A denied file is never named, even focused.
    editor.nvim.command(f"split {editor.root / '.env'}")
    time.sleep(2.5)
    while not client.events.empty():
        event = client.events.get()
        assert ".env" not in json.dumps(event), event
    editor.nvim.command("close")
    refused = client.tool("openDiff", {"filePath": str(editor.root / ".env"), "newContent": "TOKEN=x\n"})
    assert refused["isError"] is True, refused
    outside = client.tool("openDiff", {"filePath": "/etc/passwd", "newContent": "x\n"})
    assert outside["isError"] is True, outside
    # A proposal rejected in the review is answered with ide/diffRejected.
    assert client.tool("openDiff", {"filePath": str(main), "newContent": "def main():\n    return 3\n"}) == {"content": []}
    wait_until("the review tab", lambda: review_shown(editor))
    editor.nvim.input("fr")
    time.sleep(0.3)
    editor.nvim.input("<CR>")  # no reason
    assert client.next_event("ide/diffRejected") == {"filePath": str(main)}
    assert main.read_text() == MAIN, "nothing written"
    # A proposal the CLI closes answers with the text it showed.
    client.tool("openDiff", {"filePath": str(main), "newContent": "def main():\n    return 4\n"})
    wait_until("the second review", lambda: review_shown(editor))
    closed = client.tool("closeDiff", {"filePath": str(main), "suppressNotification": True})
    assert json.loads(closed["content"][0]["text"]) == {"content": "def main():\n    return 4\n"}


def status(editor) -> dict:
    env = dict(os.environ, XDG_RUNTIME_DIR=str(editor.runtime), TMPDIR=str(editor.home / "tmp"),
               CLAUDE_CONFIG_DIR=str(editor.home / "claude"))
    done = subprocess.run([editor.tether, "status", "--json"], capture_output=True, text=True, env=env, check=True)
    [instance] = json.loads(done.stdout)["instances"]
    return instance["ide"]


def test_tether_stands_aside_for_another_companion_of_the_project_and_says_so(editor):
    pid, port, _ = discovery(editor)
    served = status(editor)
    assert served["gemini-cli"]["state"] == "serving" and served["claude-code"]["state"] == "serving", served
    # An editor's own companion (the official one writes no ideInfo) serves the project too; this
    # test's process stands in for it.
    folder = editor.home / "tmp" / "gemini" / "ide"
    other = folder / f"gemini-ide-server-{os.getpid()}-1.json"
    other.write_text(json.dumps({"port": 1, "workspacePath": str(editor.root), "authToken": "t"}))
    ours = folder / f"gemini-ide-server-{pid}-{port}.json"
    wait_until("tether to withdraw its discovery file", lambda: not ours.exists(), timeout=10)
    aside = status(editor)["gemini-cli"]
    assert aside["state"] == "standing aside" and aside["pid"] == os.getpid(), aside
    editor.nvim.command("checkhealth tether")
    health = "\n".join(editor.nvim.current.buffer[:])
    assert f"Gemini CLI's IDE protocol: standing aside, an IDE companion (pid {os.getpid()})" in health, health
    assert "Claude Code's IDE protocol: served" in health, health
    other.unlink()
    wait_until("tether to serve again", lambda: ours.exists(), timeout=10)
    assert status(editor)["gemini-cli"]["state"] == "serving"
