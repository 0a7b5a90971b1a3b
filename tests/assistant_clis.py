"""The assistant CLIs people run (Claude Code, Gemini CLI, Codex CLI; from npm, pinned by
scripts/install-assistants), headless against a scripted model on loopback (tests/model_stub.py),
in a project folder: shared by the Neovim suite and, run as a script, by VS Code's (its tests run in
VS Code's extension host, in Node):

    python3 tests/assistant_clis.py CLI --root DIR --home DIR --turns JSON [--setup TETHER]

(CLI `gemini-ide`: Gemini CLI with its IDE integration on, connected to the editor's `tether lsp`)

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
import tempfile
import threading

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


IDE_READY = "Discovered 2 tools from IDE"


class Gemini:
    """A running `gemini -p`, its stderr read as it comes (`--debug` says when the IDE's tools are
    known, and so its context: tether sends `ide/contextUpdate` ahead of the tool list). When they
    are, the file `ready` is made, which the BeforeAgent hook waits for."""

    def __init__(self, proc: subprocess.Popen, ready: pathlib.Path):
        self.proc = proc
        self.err: list[str] = []

        def read():
            for line in proc.stderr:
                self.err.append(line)
                if IDE_READY in line:
                    ready.touch()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def ide_ready(self) -> bool:
        return any(IDE_READY in line for line in self.err)

    def finish(self, timeout: float) -> tuple[str, str]:
        out = self.proc.stdout.read() if self.proc.wait(timeout=timeout) is not None else ""
        self.reader.join(5)
        return out, "".join(self.err)


def start_gemini_ide(root: pathlib.Path, home: pathlib.Path, pid: int, stub: ModelStub,
                     tmpdir: pathlib.Path | None = None) -> Gemini:
    """`gemini -p` in `root` with the IDE integration on, started, not awaited. In `-p` an edit is
    approved without asking (`yolo`) or refused, and only an edit that asks is shown in the IDE: a
    BeforeTool hook answers "ask", and the IDE's answer is the only one that comes.
    `GEMINI_CLI_IDE_PID` names tether's process (`pid`), which the CLI otherwise looks for among
    its ancestors. `-p` connects to the IDE beside its first request, not before it, and the IDE's
    context goes only with a prompt: a BeforeAgent hook holds the prompt until the CLI knows the
    IDE's tools (at most 60 s), as an interactive session has long connected when the user types.
    `tmpdir`: where the CLI looks for the discovery file (`$TMPDIR/gemini/ide`)."""
    gemini_home = home / "gemini-home"
    (gemini_home / ".gemini").mkdir(parents=True, exist_ok=True)
    ask = home / "ask.sh"
    ask.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"ask\"}'\n")
    ask.chmod(0o755)
    ready = home / "gemini-ide-ready"
    ready.unlink(missing_ok=True)
    wait = home / "wait-for-ide.sh"
    wait.write_text(f"#!/bin/sh\ncat >/dev/null\ni=0\nwhile [ ! -e '{ready}' ] && [ $i -lt 590 ]; do\n"
                    "  sleep 0.1; i=$((i + 1))\ndone\necho '{}'\n")
    wait.chmod(0o755)
    (gemini_home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "ide": {"enabled": True},
        "hooks": {"BeforeTool": [{"matcher": "replace|write_file",
                                  "hooks": [{"type": "command", "command": str(ask)}]}],
                  "BeforeAgent": [{"hooks": [{"type": "command", "command": str(wait), "timeout": 60_000}]}]},
    }))
    env = dict(os.environ, GEMINI_CLI_HOME=str(gemini_home), GEMINI_API_KEY="tether-test",
               GOOGLE_GEMINI_BASE_URL=stub.url, HOME=str(home), GEMINI_CLI_IDE_PID=str(pid),
               # The CLI takes a container (`/.dockerenv`) for one without loopback to the IDE.
               REMOTE_CONTAINERS="1")
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    args = [assistant_bin("gemini-cli", "TETHER_GEMINI"), "-m", "gemini-2.5-pro", "-p", PROMPT,
            "--approval-mode", "yolo", "--output-format", "json", "--debug"]
    return Gemini(subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True), ready)


def gemini_companion_pid(root: pathlib.Path) -> int:
    """The pid of the `tether lsp` whose Gemini CLI discovery file (in `$TMPDIR/gemini/ide`) names
    `root`."""
    folder = pathlib.Path(tempfile.gettempdir()) / "gemini" / "ide"
    for file in folder.glob("gemini-ide-server-*.json"):
        if json.loads(file.read_text()).get("workspacePath") == str(root):
            return int(file.stem.removeprefix("gemini-ide-server-").split("-")[0])
    raise NoAssistant(f"no Gemini CLI discovery file in {folder} names {root}")


def run_gemini_ide(root: pathlib.Path, runtime: pathlib.Path | None, home: pathlib.Path,
                   turns: list[dict]) -> ModelStub:
    """`gemini -p` with the IDE integration on, beside the editor whose `tether lsp` serves `root`,
    to its end (the editor answers the edit's review meanwhile)."""
    stub = ModelStub(turns)
    gemini = start_gemini_ide(root, home, gemini_companion_pid(root), stub)
    try:
        out, err = gemini.finish(180)
    finally:
        if gemini.proc.poll() is None:
            gemini.proc.kill()
        stub.close()
    stub.done = subprocess.CompletedProcess(gemini.proc.args, gemini.proc.returncode, out, err)
    assert gemini.ide_ready(), "the CLI found tether's openDiff and closeDiff"
    assert gemini.proc.returncode == 0, err
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


RUNS = {"claude-code": (claude_env, run_claude), "gemini": (gemini_env, run_gemini), "codex": (codex_env, run_codex),
        "gemini-ide": (gemini_env, run_gemini_ide)}


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
