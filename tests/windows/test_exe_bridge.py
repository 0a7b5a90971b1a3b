"""The bridge of tether.exe (under Wine on Linux): `tether.exe lsp` driven by a scripted
language client holding an unsaved buffer, and `tether.exe mcp` attaching to it over its named
pipe. A read sees the unsaved text; an edit goes to the editor as a versioned workspace edit and
lands in the buffer, never on disk."""

import json
import pathlib
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO, helper, host_argv, local_app_data, session, text_of, win, wine_argv, wine_env

sys.path.insert(0, str(REPO / "bench"))
from stdio_clients import Lsp  # noqa: E402  (the benches' language client, standard library only)

pytestmark = pytest.mark.anyio


def uri_of(path) -> str:
    """The URI VS Code sends for a Windows path: the drive letter lower-cased, its colon encoded."""
    drive_path = win(path)
    return "file:///" + drive_path[0].lower() + "%3A" + drive_path[2:].replace("\\", "/")


class Editor:
    """A language client with documents open: applies the server's workspace edits to its own
    copy of each buffer and reports them back with `didChange`, as an editor does."""

    def __init__(self, root, env):
        self.buffers: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.lock = threading.Lock()
        self.lsp = Lsp(wine_argv("lsp"), root, env, on_request=self.on_request)
        uri = uri_of(root)
        self.lsp.request("initialize", {"processId": None, "rootUri": uri, "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}},
            "workspaceFolders": [{"uri": uri, "name": "root"}]})
        self.lsp.notify("initialized", {})

    def open(self, path, text: str) -> str:
        uri = uri_of(path)
        with self.lock:
            self.buffers[uri], self.versions[uri] = text, 1
        self.lsp.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}})
        self.lsp.round_trip()
        return uri

    def on_request(self, message: dict):
        if message["method"] != "workspace/applyEdit":
            return None
        with self.lock:
            for change in message["params"]["edit"].get("documentChanges", []):
                uri = change["textDocument"]["uri"].replace("%3a", "%3A")
                uri = next((u for u in self.buffers if u.lower() == uri.lower()), uri)
                if change["textDocument"].get("version") not in (None, self.versions.get(uri)):
                    return {"applied": False, "failureReason": "stale version"}
                text = self.buffers[uri]
                edits = sorted(change["edits"], key=lambda e: (e["range"]["start"]["line"],
                                                               e["range"]["start"]["character"]), reverse=True)
                for e in edits:
                    text = splice(text, e["range"], e["newText"])
                self.buffers[uri] = text
                self.versions[uri] += 1
                self.lsp.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": self.versions[uri]},
                    "contentChanges": [{"text": text}]})
        return {"applied": True}

    def close(self):
        self.lsp.close()


def splice(text: str, rng: dict, new: str) -> str:
    """`text` with the LSP range `rng` (ASCII, so UTF-16 units are characters) replaced."""
    lines = text.splitlines(keepends=True)

    def offset(pos):
        return sum(len(line) for line in lines[:pos["line"]]) + pos["character"]

    return text[:offset(rng["start"])] + new + text[offset(rng["end"]):]


def discovery_files(env) -> list[pathlib.Path]:
    """The discovery files in %LOCALAPPDATA%\\tether\\run inside the Wine prefix."""
    return sorted((local_app_data(env) / "tether" / "run").glob("*.json"))


def running_lsp(env) -> None:
    """Waits until an lsp's discovery file is in %LOCALAPPDATA%\\tether\\run."""
    until = time.time() + 60
    while time.time() < until:
        if discovery_files(env):
            return
        time.sleep(0.2)
    raise AssertionError("no discovery file appeared")


async def test_mcp_attaches_over_the_named_pipe_and_edits_the_live_buffer(tree):
    root = tree / "root"
    env = wine_env()
    on_disk = (root / "src" / "main.py").read_text()
    editor = Editor(root, env)
    try:
        uri = editor.open(root / "src" / "main.py", on_disk + "UNSAVED = True\n")
        running_lsp(env)
        async with session(root) as s:
            read = await s.call_tool("read_file", {"path": "src/main.py"})
            assert "UNSAVED = True" in text_of(read), f"the read did not see the buffer: {text_of(read)}"
            # Windows opens a name in any case: so does the buffer lookup.
            upper = await s.call_tool("read_file", {"path": "SRC/MAIN.PY"})
            assert "UNSAVED = True" in text_of(upper), f"another case missed the buffer: {text_of(upper)}"
            edited = await s.call_tool("edit_file", {"path": "src/main.py", "old_string": "UNSAVED = True",
                                                      "new_string": "UNSAVED = False"})
            assert not edited.is_error, text_of(edited)
        with editor.lock:
            assert editor.buffers[uri] == on_disk + "UNSAVED = False\n", editor.buffers[uri]
            assert editor.versions[uri] == 2
        assert (root / "src" / "main.py").read_text() == on_disk, "the edit went to disk, not the buffer"
        status = subprocess.run(wine_argv("status"), env=env, capture_output=True, text=True, timeout=60)
        assert "\\\\.\\pipe\\tether-" in status.stdout and "missing" not in status.stdout, status.stdout
    finally:
        editor.close()


def test_a_client_without_the_token_is_closed_without_a_reply(tree, tmp_path):
    root = tree / "root"
    env = wine_env()
    client = helper("pipe_client", tmp_path)
    editor = Editor(root, env)
    try:
        editor.open(root / "src" / "main.py", "x = 1\n")
        running_lsp(env)
        pipe = json.loads(discovery_files(env)[0].read_text())["socket"]
        # A client of the same user that knows the pipe's name but not the token: the lsp reads
        # its first line, finds the wrong token and hangs up without a word.
        wrong = json.dumps({"token": "00" * 32, "profile": "standard"})
        done = subprocess.run(host_argv(client, pipe, wrong), env=env, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "read 0 bytes", done
        garbage = subprocess.run(host_argv(client, pipe, "hello"), env=env, capture_output=True, text=True, timeout=60)
        assert garbage.stdout.strip() == "read 0 bytes", garbage
        # The lsp still serves the bridge afterwards.
        status = subprocess.run(wine_argv("status"), env=env, capture_output=True, text=True, timeout=60)
        assert "missing" not in status.stdout and pipe in status.stdout, status.stdout
    finally:
        editor.close()


def test_a_client_of_another_user_is_refused():
    pytest.skip("Wine runs every process as one user with one SID, so the peer SID check and the pipe's "
                "DACL cannot be exercised here: a Windows runner with a second account proves them")
