"""The assistants people run, for real, beside a real Neovim running tether: Claude Code, Gemini
CLI and Codex CLI (from npm, pinned by scripts/install-assistants), headless, against a scripted
model on loopback (tests/model_stub.py). Without tether's hooks its built-in tools write the disk behind the
editor's dirty buffer, and tether merges what they wrote into the buffer; with the hooks `tether
setup claude-code` installs, its Read sees the buffer and its Edit lands in the buffer, the disk
untouched."""

import json
import os
import subprocess
import time

import pytest

from conftest import HERE, merge_told, no_prompt, wait_until
from model_stub import ModelStub

MAIN = "def main():\n    return 1\n"


def assistant_bin(name: str, variable: str) -> str:
    """The CLI `name` (`claude-code`, `gemini-cli`): `variable`, else the one scripts/install-assistants
    installs into the cache (once)."""
    path = os.environ.get(variable)
    if not path:
        script = HERE.parents[1] / "scripts" / "install-assistants"
        try:
            out = subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout
        except subprocess.CalledProcessError as e:
            pytest.fail(f"could not install the assistant CLIs: {e.stderr}")
        path = dict(line.split(" ", 1) for line in out.splitlines())[name]
    if not os.access(path, os.X_OK):
        pytest.fail(f"no {name} at {path}; run scripts/install-assistants or set {variable}")
    return path


def run_claude(editor, home, turns: list[dict]) -> ModelStub:
    """`claude -p` in the workspace with only its built-in tools, the model scripted by `turns`;
    it reaches the editor's tether lsp (for its hooks) through the editor's runtime folder."""
    stub = ModelStub(turns)
    (home / "claude").mkdir(exist_ok=True)
    env = dict(
        os.environ,
        ANTHROPIC_BASE_URL=stub.url,
        ANTHROPIC_API_KEY="sk-tether-test",
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        HOME=str(home),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        XDG_RUNTIME_DIR=str(editor.runtime),
    )
    args = [assistant_bin("claude-code", "TETHER_CLAUDE"), "-p", "Change main to return 2.", "--model", "claude-sonnet-4-5",
            "--permission-mode", "acceptEdits", "--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}']
    done = subprocess.run(args, cwd=editor.root, env=env, capture_output=True, text=True, timeout=180)
    stub.close()
    assert done.returncode == 0, done.stderr
    return stub


def in_the_buffer_only(editor, client: str):
    """The assistant's edit of src/main.py (return 1 to 2) is in the buffer, after the unsaved
    line, as one undo step, recorded as `client`'s; the file on disk is untouched."""
    assert editor.text() == "# unsaved\ndef main():\n    return 2\n"
    assert editor.modified()
    assert (editor.root / "src" / "main.py").read_text() == MAIN, "the file on disk is untouched"
    editor.nvim.command("normal! u")
    assert editor.text() == "# unsaved\n" + MAIN, "one undo step takes the assistant's change back, and only it"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert changes[0]["tool"] == "edit_file" and changes[0]["client"] == client, changes


def test_claude_codes_built_in_edit_lands_in_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    editor.type_at(1, 0, "# unsaved\n")
    typed = "# unsaved\n" + MAIN
    time.sleep(1.1)  # the CLI's write gets a modification time of its own
    stub = run_claude(editor, tmp_path, [
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Edit", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                   "replace_all": False}},
        {"text": "main returns 2 now"},
    ])
    results = stub.tool_results()
    assert len(results) == 2 and "updated successfully" in results[1], results
    merged = "# unsaved\ndef main():\n    return 2\n"
    wait_until("the edit in the buffer", lambda: editor.text() == merged)
    assert editor.modified(), "the unsaved line is still unsaved"
    editor.nvim.command("checktime", async_=True)
    time.sleep(0.3)
    assert no_prompt(editor), "no 'changed on disk' prompt"
    editor.nvim.command("normal! u")
    assert editor.text() == typed, "one undo step takes the assistant's change back, and only it"
    editor.nvim.command("normal! \x12")
    assert editor.text() == merged
    wait_until("tether to say it merged", lambda: merge_told(editor))
    editor.nvim.command("write", async_=True)
    wait_until("the write", lambda: no_prompt(editor) and not editor.modified())
    assert main.read_text() == merged, "saving keeps both the unsaved line and the assistant's change"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert any(c["tool"] == "merge_from_disk" for c in changes), changes


def test_with_tether_setup_claude_codes_read_and_edit_meet_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    env = dict(os.environ, HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    setup = subprocess.run([editor.tether, "setup", "claude-code"], cwd=editor.root, env=env,
                           capture_output=True, text=True, check=True)
    assert "settings.json: added tether's hooks" in setup.stdout, setup.stdout
    editor.type_at(1, 0, "# unsaved\n")
    stub = run_claude(editor, tmp_path, [
        {"tool": "Read", "input": {"file_path": str(main)}},
        {"tool": "Edit", "input": {"file_path": str(main), "old_string": "return 1", "new_string": "return 2",
                                   "replace_all": False}},
        {"text": "main returns 2 now"},
    ])
    read, edit = stub.tool_results()
    assert read.startswith("1\t# unsaved\n2\tdef main():"), read
    assert "tether made this change in the editor's buffer" in edit and "do not make it again" in edit, edit
    in_the_buffer_only(editor, "claude-code")


def run_gemini(editor, home, turns: list[dict]) -> ModelStub:
    """`gemini -p` in the workspace, edits approved, the model scripted by `turns`; the user's
    settings use an API key with the scripted model's address, trust every folder (so that the
    project's settings, where `tether setup` put its hooks, are read) and send no usage data."""
    stub = ModelStub(turns)
    gemini_home = home / "gemini"
    (gemini_home / ".gemini").mkdir(parents=True, exist_ok=True)
    (gemini_home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }))
    env = dict(os.environ, GEMINI_CLI_HOME=str(gemini_home), GEMINI_API_KEY="tether-test",
               GOOGLE_GEMINI_BASE_URL=stub.url, HOME=str(home), XDG_RUNTIME_DIR=str(editor.runtime))
    args = [assistant_bin("gemini-cli", "TETHER_GEMINI"), "-m", "gemini-2.5-pro", "-p", "Change main to return 2.",
            "--approval-mode", "yolo", "--output-format", "json"]
    done = subprocess.run(args, cwd=editor.root, env=env, capture_output=True, text=True, timeout=180)
    stub.close()
    assert done.returncode == 0, done.stderr
    return stub


def test_with_tether_setup_gemini_clis_read_and_replace_meet_the_unsaved_buffer(plugin_editor, tmp_path):
    editor = plugin_editor
    env = dict(os.environ, HOME=str(tmp_path))
    setup = subprocess.run([editor.tether, "setup", "gemini"], cwd=editor.root, env=env,
                           capture_output=True, text=True, check=True)
    assert "settings.json: added tether's hooks" in setup.stdout, setup.stdout
    editor.type_at(1, 0, "# unsaved\n")
    stub = run_gemini(editor, tmp_path, [
        {"tool": "read_file", "input": {"file_path": "src/main.py"}},
        {"tool": "replace", "input": {"file_path": "src/main.py", "old_string": "return 1", "new_string": "return 2",
                                      "instruction": "Return 2."}},
        {"text": "main returns 2 now"},
    ])
    read, edit = stub.tool_results()
    assert "unsaved changes" in read and "# unsaved" in read, read
    assert edit.startswith("ERROR: Tool execution blocked: tether made this change in the editor's buffer"), edit
    in_the_buffer_only(editor, "gemini-cli")


CODEX_CONFIG = """model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
allow_login_shell = false

[model_providers.scripted]
name = "scripted"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
apps = false
remote_plugin = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"""


def test_with_tether_setup_codexs_apply_patch_meets_the_unsaved_buffer_and_its_sed_is_merged(plugin_editor, tmp_path):
    editor = plugin_editor
    main = editor.root / "src" / "main.py"
    stub = ModelStub([
        {"tool": "apply_patch", "input": "*** Begin Patch\n*** Update File: src/main.py\n@@\n def main():\n"
                                         "-    return 1\n+    return 2\n*** End Patch\n"},
        {"tool": "exec_command", "input": {"cmd": "sed -i 's/def main/def start/' src/main.py"}},
        {"text": "main returns 2 now, and is called start"},
    ])
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    # A model the CLI knows (it offers apply_patch only to those), served by the scripted model;
    # nothing else reaches the network.
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=stub.url))
    env = dict(os.environ, HOME=str(tmp_path), CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="tether-test",
               XDG_RUNTIME_DIR=str(editor.runtime))
    setup = subprocess.run([editor.tether, "setup", "codex"], cwd=editor.root, env=env,
                           capture_output=True, text=True, check=True)
    assert "hooks.json: added tether's hooks" in setup.stdout, setup.stdout
    editor.type_at(1, 0, "# unsaved\n")
    time.sleep(1.1)  # sed's write gets a modification time of its own
    # Codex runs hooks only once the user trusted them; the flag stands for that review.
    args = [assistant_bin("codex", "TETHER_CODEX"), "exec", "--ephemeral", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "-C", str(editor.root),
            "Change main to return 2 and call it start."]
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    stub.close()
    assert done.returncode == 0, done.stderr
    patched, sed = stub.tool_results()
    assert "Command blocked by PreToolUse hook: tether applied this patch" in patched, patched
    assert "Process exited with code 0" in sed, sed
    merged = "# unsaved\ndef start():\n    return 2\n"
    wait_until("the patch and sed's change in the buffer", lambda: editor.text() == merged)
    assert editor.modified()
    assert main.read_text() == "def start():\n    return 1\n", "the file holds sed's change only"
    history = editor.call("history")
    changes = history["structuredContent"]["changesets"]
    assert [(c["tool"], c["client"]) for c in changes[:2]] == [
        ("merge_from_disk", "another program (on disk)"), ("apply_patch", "codex")], changes
