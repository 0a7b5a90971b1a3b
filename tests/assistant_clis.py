"""The assistant CLIs people run (Claude Code, Gemini CLI, Codex CLI; from npm, pinned by
scripts/install-assistants), headless against a scripted model on loopback (tests/model_stub.py),
in a project folder: shared by the Neovim suite and, run as a script, by VS Code's (its tests run in
VS Code's extension host, in Node):

    python3 tests/assistant_clis.py CLI --root DIR --home DIR --turns JSON [--setup TETHER]

prints one JSON object: `setup` (what `tether setup CLI` printed, with `--setup`), `returncode`,
`stderr` and `results` (the tool results the CLI sent the model, in order). The CLI finds the
editor's `tether lsp` the way a user's does, through the environment it is given (its
XDG_RUNTIME_DIR, or the fallback folder)."""

import argparse
import json
import os
import pathlib
import subprocess
import sys

from model_stub import ModelStub

REPO = pathlib.Path(__file__).resolve().parents[1]
PROMPT = "Change main to return 2."


class NoAssistant(RuntimeError):
    """The CLI could not be installed or found."""


def assistant_bin(name: str, variable: str) -> str:
    """The CLI `name` (`claude-code`, `gemini-cli`, `codex`): `variable`, else the one
    scripts/install-assistants installs into the cache (once)."""
    path = os.environ.get(variable)
    if not path:
        script = REPO / "scripts" / "install-assistants"
        try:
            out = subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout
        except subprocess.CalledProcessError as e:
            raise NoAssistant(f"could not install the assistant CLIs: {e.stderr}") from e
        path = dict(line.split(" ", 1) for line in out.splitlines())[name]
    if not os.access(path, os.X_OK):
        raise NoAssistant(f"no {name} at {path}; run scripts/install-assistants or set {variable}")
    return path


def claude_env(home: pathlib.Path, runtime: pathlib.Path | None, url: str = "") -> dict:
    """Claude Code's environment: its configuration under `home`, the scripted model at `url`."""
    (home / "claude").mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="sk-tether-test",
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        HOME=str(home),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
    )
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def run_claude(root: pathlib.Path, runtime: pathlib.Path | None, home: pathlib.Path, turns: list[dict]) -> ModelStub:
    """`claude -p` in `root` with only its built-in tools, the model scripted by `turns`."""
    stub = ModelStub(turns)
    args = [assistant_bin("claude-code", "TETHER_CLAUDE"), "-p", PROMPT, "--model", "claude-sonnet-4-5",
            "--permission-mode", "acceptEdits", "--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}']
    done = subprocess.run(args, cwd=root, env=claude_env(home, runtime, stub.url), capture_output=True, text=True,
                          timeout=180)
    stub.close()
    stub.done = done
    assert done.returncode == 0, done.stderr
    return stub


def gemini_env(home: pathlib.Path, runtime: pathlib.Path | None, url: str = "") -> dict:
    """Gemini CLI's environment: the user's settings under `home` use an API key with the scripted
    model's address, trust every folder (so that the project's settings, where `tether setup` put
    its hooks, are read) and send no usage data."""
    gemini_home = home / "gemini"
    (gemini_home / ".gemini").mkdir(parents=True, exist_ok=True)
    (gemini_home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }))
    env = dict(os.environ, GEMINI_CLI_HOME=str(gemini_home), GEMINI_API_KEY="tether-test",
               GOOGLE_GEMINI_BASE_URL=url, HOME=str(home))
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def run_gemini(root: pathlib.Path, runtime: pathlib.Path | None, home: pathlib.Path, turns: list[dict]) -> ModelStub:
    """`gemini -p` in `root`, edits approved, the model scripted by `turns`."""
    stub = ModelStub(turns)
    args = [assistant_bin("gemini-cli", "TETHER_GEMINI"), "-m", "gemini-2.5-pro", "-p", PROMPT,
            "--approval-mode", "yolo", "--output-format", "json"]
    done = subprocess.run(args, cwd=root, env=gemini_env(home, runtime, stub.url), capture_output=True, text=True,
                          timeout=180)
    stub.close()
    stub.done = done
    assert done.returncode == 0, done.stderr
    return stub


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


def codex_env(home: pathlib.Path, runtime: pathlib.Path | None) -> dict:
    """Codex CLI's environment: its home (configuration, hooks) under `home`."""
    codex_home = home / "codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="tether-test")
    if runtime is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def run_codex(root: pathlib.Path, runtime: pathlib.Path | None, home: pathlib.Path, turns: list[dict]) -> ModelStub:
    """`codex exec` in `root`, with a model the CLI knows (it offers apply_patch only to those),
    served by the scripted model; nothing else reaches the network."""
    stub = ModelStub(turns)
    env = codex_env(home, runtime)
    (home / "codex" / "config.toml").write_text(CODEX_CONFIG.format(url=stub.url))
    # Codex runs hooks only once the user trusted them; the flag stands for that review.
    args = [assistant_bin("codex", "TETHER_CODEX"), "exec", "--ephemeral", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "-C", str(root),
            "Change main to return 2 and call it start."]
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    stub.close()
    stub.done = done
    assert done.returncode == 0, done.stderr
    return stub


RUNS = {"claude-code": (claude_env, run_claude), "gemini": (gemini_env, run_gemini), "codex": (codex_env, run_codex)}


def setup(tether: str, cli: str, root: pathlib.Path, runtime: pathlib.Path | None, home: pathlib.Path) -> str:
    """`tether setup CLI` in `root`, with the CLI's environment: what it printed."""
    env_of, _ = RUNS[cli]
    done = subprocess.run([tether, "setup", cli], cwd=root, env=env_of(home, runtime), capture_output=True, text=True,
                          check=True)
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli", choices=sorted(RUNS))
    parser.add_argument("--root", type=pathlib.Path, required=True)
    parser.add_argument("--home", type=pathlib.Path, required=True)
    parser.add_argument("--turns", required=True, help="the model's turns, as JSON")
    parser.add_argument("--setup", metavar="TETHER", help="run `TETHER setup CLI` first")
    args = parser.parse_args()
    runtime = pathlib.Path(os.environ["XDG_RUNTIME_DIR"]) if os.environ.get("XDG_RUNTIME_DIR") else None
    out = {"setup": None}
    if args.setup:
        out["setup"] = setup(args.setup, args.cli, args.root, runtime, args.home)
    _, run = RUNS[args.cli]
    try:
        stub = run(args.root, runtime, args.home, json.loads(args.turns))
    except AssertionError as e:
        out.update(returncode=1, stderr=str(e), results=[])
    else:
        out.update(returncode=stub.done.returncode, stderr=stub.done.stderr[-4000:], results=stub.tool_results())
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
