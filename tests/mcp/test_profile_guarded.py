"""Contract tests for the `guarded` profile (seed 003_8bcfe00dfa758457.txt), over MCP with the
official Python SDK client. Each test quotes, in its docstring, the sentence of the contract it
checks, and asserts what crosses the wire and what is on disk afterwards."""

import os
import shutil
import subprocess

import pytest

from conftest import error_of, session, snapshot, text_of

pytestmark = pytest.mark.anyio

GUARDED = ("--profile", "guarded")
MUTATING = ["apply_patch", "append_file", "write_file", "create_directory", "move_file"]
ALLOWED = "grep, sed, awk, find, cat, head, tail, wc, sort, uniq, cut, tr, diff, file, stat, ls, du, rg"


def root_of(tree):
    return tree / "root"


async def err(s, tool, args):
    """Calls `tool` and returns its error object, checking the result is a tool error."""
    return error_of(await s.call_tool(tool, args))


async def ok(s, tool, args) -> str:
    r = await s.call_tool(tool, args)
    assert not r.is_error, text_of(r)
    return text_of(r)


# The tool list.


async def test_tools_are_the_contracts_six(tree):
    """'Apply a unified diff to an existing file, or create a new file from a /dev/null source
    header.' 'Append content to the end of an existing file.' 'Write content to a file' 'Create a
    directory and any missing parent directories.' 'Move or rename a file within the root.'
    'Execute a whitelisted shell command.'"""
    async with session(root_of(tree), *GUARDED) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert sorted(tools) == sorted(MUTATING + ["run_command"])
    props = {name: set(t.input_schema["properties"]) for name, t in tools.items()}
    assert props["apply_patch"] == {"path", "patch"}
    assert props["append_file"] == {"path", "content"}
    assert props["write_file"] == {"path", "content"}
    assert props["create_directory"] == {"path"}
    assert props["move_file"] == {"source", "destination"}
    assert props["run_command"] == {"command", "args"}
    assert tools["run_command"].input_schema["properties"]["args"]["items"] == {"type": "string"}


# apply_patch


async def test_apply_patch_applies_all_hunks(tree):
    """'Otherwise, reads the existing file and applies all hunks.'"""
    root = root_of(tree)
    (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
        "@@ -17,3 +17,4 @@\n line 17\n line 18\n+inserted\n line 19\n"
    )
    async with session(root, *GUARDED) as s:
        text = await ok(s, "apply_patch", {"path": str(root / "f.txt"), "patch": patch})
    assert "2 hunks" in text
    lines = (root / "f.txt").read_text().splitlines()
    assert lines[2] == "LINE THREE" and lines[18] == "inserted" and len(lines) == 21


async def test_apply_patch_strips_markdown_fence(tree):
    """'Strips markdown code fences before parsing.' 'May be wrapped in a markdown code fence
    (```diff … ```)'"""
    root = root_of(tree)
    patch = "```diff\n--- a/src/main.py\n+++ b/src/main.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n```\n"
    async with session(root, *GUARDED) as s:
        await ok(s, "apply_patch", {"path": "src/main.py", "patch": patch})
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 2\n"


async def test_apply_patch_creates_file_from_dev_null(tree):
    """'If the diff's source line is --- /dev/null, the file is created with the+lines as
    content'"""
    root = root_of(tree)
    patch = "--- /dev/null\n+++ b/notes/new.md\n@@ -0,0 +1,3 @@\n+# New\n+\n+body\n"
    async with session(root, *GUARDED) as s:
        text = await ok(s, "apply_patch", {"path": str(root / "notes" / "new.md"), "patch": patch})
    assert "created" in text
    assert (root / "notes" / "new.md").read_text() == "# New\n\nbody\n"


async def test_apply_patch_dev_null_onto_existing_file_is_refused(tree):
    """'(file must not already exist, or will be overwritten)': settled as refused, so the
    existing file keeps its text."""
    root = root_of(tree)
    before = (root / "docs" / "guide.md").read_bytes()
    patch = "--- /dev/null\n+++ b/docs/guide.md\n@@ -0,0 +1 @@\n+replaced\n"
    async with session(root, *GUARDED) as s:
        e = await err(s, "apply_patch", {"path": "docs/guide.md", "patch": patch})
    assert e["error"] == "PatchFailed"
    assert "already exists" in e["message"]
    assert (root / "docs" / "guide.md").read_bytes() == before


async def test_apply_patch_drifted_file_is_patch_failed_and_untouched(tree):
    """'If any hunk context does not match (file has drifted), returns PatchFailed and the file is
    not modified (atomic rename ensures no partial write).'"""
    root = root_of(tree)
    (root / "f.txt").write_text("alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n")
    before = (root / "f.txt").read_bytes()
    # The first hunk matches; the second expects lines the file no longer has.
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta\n"
        "@@ -6,2 +6,2 @@\n zeta\n-something else\n+ETA\n"
    )
    async with session(root, *GUARDED) as s:
        e = await err(s, "apply_patch", {"path": "f.txt", "patch": patch})
    assert e["error"] == "PatchFailed"
    assert "hunk 2" in e["message"]
    assert (root / "f.txt").read_bytes() == before
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == []


async def test_apply_patch_malformed_diff_is_patch_failed(tree):
    """'PatchFailed | Hunk mismatch or malformed diff'"""
    root = root_of(tree)
    before = snapshot(root)
    async with session(root, *GUARDED) as s:
        for patch in ["this is not a diff", "", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n?what\n",
                      "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n"]:
            e = await err(s, "apply_patch", {"path": "src/util.py", "patch": patch})
            assert e["error"] == "PatchFailed", (patch, e)
    assert snapshot(root) == before


async def test_apply_patch_missing_file_is_not_found(tree):
    """'NotFound | File does not exist (non-/dev/null source)'"""
    root = root_of(tree)
    patch = "--- a/missing.txt\n+++ b/missing.txt\n@@ -0,0 +1 @@\n+x\n"
    async with session(root, *GUARDED) as s:
        e = await err(s, "apply_patch", {"path": "missing.txt", "patch": patch})
    assert e["error"] == "NotFound"
    assert not (root / "missing.txt").exists()


async def test_apply_patch_outside_root(tree):
    """'OutsideRoot | Path resolves outside the configured root'"""
    root = root_of(tree)
    secret = tree / "outside" / "secret.txt"
    patch = "--- a/s\n+++ b/s\n@@ -1 +1 @@\n-TOP SECRET\n+pwned\n"
    async with session(root, *GUARDED) as s:
        for path in [str(secret), "../outside/secret.txt", str(tree / "root_evil" / "x.txt")]:
            e = await err(s, "apply_patch", {"path": path, "patch": patch})
            assert e["error"] == "OutsideRoot", (path, e)
            assert set(e) == {"error", "message"}
    assert secret.read_text() == "TOP SECRET\n"
    assert (tree / "root_evil" / "x.txt").read_text() == "TOP SECRET\n"


async def test_symlinks_are_followed_to_their_real_path(tree):
    """'All path arguments are resolved and validated against the configured root directory before
    any I/O — symlinks are followed to their real path.'"""
    root = root_of(tree)
    os.symlink(root / "src" / "util.py", root / "inside_link")
    patch = "--- a/s\n+++ b/s\n@@ -1 +1 @@\n-TOP SECRET\n+pwned\n"
    async with session(root, *GUARDED) as s:
        for path in ["link_file", "link_dir/secret.txt", "src/parent_link/secret.txt"]:
            e = await err(s, "apply_patch", {"path": path, "patch": patch})
            assert e["error"] == "OutsideRoot", (path, e)
        e = await err(s, "write_file", {"path": "dangling", "content": "x"})
        assert e["error"] == "OutsideRoot"
        # A link that stays inside the root edits its target.
        await ok(s, "append_file", {"path": "inside_link", "content": "EXTRA = 1\n"})
    assert (tree / "outside" / "secret.txt").read_text() == "TOP SECRET\n"
    assert not (tree / "outside" / "new.txt").exists()
    assert (root / "src" / "util.py").read_text() == "import os\n\nVALUE = 42\nEXTRA = 1\n"
    assert os.path.islink(root / "inside_link")


# append_file


async def test_append_file_appends_to_the_end(tree):
    """'Append content to the end of an existing file.'"""
    root = root_of(tree)
    (root / "log.txt").write_text("first\n")
    (root / "partial.txt").write_text("no newline")
    async with session(root, *GUARDED) as s:
        await ok(s, "append_file", {"path": str(root / "log.txt"), "content": "second\n"})
        await ok(s, "append_file", {"path": "log.txt", "content": "third\n"})
        await ok(s, "append_file", {"path": "partial.txt", "content": " and more"})
    assert (root / "log.txt").read_text() == "first\nsecond\nthird\n"
    assert (root / "partial.txt").read_text() == "no newline and more"


async def test_append_file_never_creates(tree):
    """'Does not create the file if it is absent.' 'NotFound | File does not exist'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        e = await err(s, "append_file", {"path": "absent.txt", "content": "x"})
        e2 = await err(s, "append_file", {"path": "newdir/absent.txt", "content": "x"})
    assert e["error"] == "NotFound" and e2["error"] == "NotFound"
    assert not (root / "absent.txt").exists()
    assert not (root / "newdir").exists()


async def test_append_file_outside_root(tree):
    """'OutsideRoot | Path outside root'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        for path in [str(tree / "outside" / "secret.txt"), "../outside/secret.txt", "link_file"]:
            e = await err(s, "append_file", {"path": path, "content": "pwned\n"})
            assert e["error"] == "OutsideRoot", (path, e)
    assert (tree / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


# write_file


async def test_write_file_creates_with_parent_directories(tree):
    """'Write content to a file, creating it if it does not exist' 'Parent directories are created
    automatically.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        await ok(s, "write_file", {"path": str(root / "a" / "b" / "c.txt"), "content": "hello\n"})
    assert (root / "a" / "b" / "c.txt").read_text() == "hello\n"


async def test_write_file_overwrites_entirely(tree):
    """'or overwriting it entirely if it does.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        await ok(s, "write_file", {"path": "src/main.py", "content": "print('new')\n"})
    assert (root / "src" / "main.py").read_text() == "print('new')\n"


async def test_write_file_outside_root(tree):
    """'OutsideRoot | Path outside root'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        for path in [str(tree / "outside" / "x.txt"), "../outside/x.txt", "link_dir/x.txt",
                     str(tree / "root_evil" / "y.txt")]:
            e = await err(s, "write_file", {"path": path, "content": "x"})
            assert e["error"] == "OutsideRoot", (path, e)
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret.txt"]
    assert not (tree / "root_evil" / "y.txt").exists()


async def test_write_file_permission_denied(tree):
    """'PermissionDenied | OS-level permission denied'"""
    root = root_of(tree)
    locked = root / "locked"
    locked.mkdir()
    (locked / "keep.txt").write_text("keep\n")
    # Root ignores mode bits, so as root the directory is made immutable instead.
    as_root = os.geteuid() == 0
    if as_root:
        subprocess.run(["chattr", "+i", str(locked)], check=True)
    else:
        locked.chmod(0o555)
    try:
        async with session(root, *GUARDED) as s:
            e = await err(s, "write_file", {"path": "locked/new.txt", "content": "x"})
            e2 = await err(s, "write_file", {"path": "locked/keep.txt", "content": "changed\n"})
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
        else:
            locked.chmod(0o755)
    assert e["error"] == "PermissionDenied", e
    assert e2["error"] == "PermissionDenied", e2
    assert sorted(p.name for p in locked.iterdir()) == ["keep.txt"]
    assert (locked / "keep.txt").read_text() == "keep\n"


# create_directory


async def test_create_directory_with_missing_parents(tree):
    """'Create a directory and any missing parent directories.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        await ok(s, "create_directory", {"path": str(root / "x" / "y" / "z")})
        await ok(s, "create_directory", {"path": "x/y/z"})  # already there: not an error
    assert (root / "x" / "y" / "z").is_dir()


async def test_create_directory_outside_root(tree):
    """'OutsideRoot | Path outside root'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        for path in [str(tree / "made"), "../made", "link_dir/made"]:
            e = await err(s, "create_directory", {"path": path})
            assert e["error"] == "OutsideRoot", (path, e)
    assert not (tree / "made").exists()
    assert not (tree / "outside" / "made").exists()


# move_file


async def test_move_file_renames_within_root(tree):
    """'Move or rename a file within the root.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        await ok(s, "move_file", {"source": str(root / "src" / "util.py"), "destination": "lib/util.py"})
    assert not (root / "src" / "util.py").exists()
    assert (root / "lib" / "util.py").read_text() == "import os\n\nVALUE = 42\n"


async def test_move_file_validates_both_paths_before_moving(tree):
    """'Both source and destination are independently validated.' 'OutsideRoot | Either path
    outside root. Source is not moved if destination fails.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        e = await err(s, "move_file", {"source": "src/main.py", "destination": str(tree / "outside" / "main.py")})
        e2 = await err(s, "move_file", {"source": "src/main.py", "destination": "link_dir/main.py"})
        e3 = await err(s, "move_file", {"source": str(tree / "outside" / "secret.txt"), "destination": "stolen.txt"})
    assert e["error"] == e2["error"] == e3["error"] == "OutsideRoot"
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 1\n"
    assert not (tree / "outside" / "main.py").exists()
    assert (tree / "outside" / "secret.txt").exists() and not (root / "stolen.txt").exists()


async def test_move_file_missing_source_is_not_found(tree):
    """'NotFound | Source does not exist'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        e = await err(s, "move_file", {"source": "nope.txt", "destination": "still_nope.txt"})
    assert e["error"] == "NotFound"
    assert not (root / "still_nope.txt").exists()


# run_command


async def test_run_command_output_format(tree):
    """'Output exit_code: <N> stdout: <stdout text> stderr: <stderr text>'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        text = await ok(s, "run_command", {"command": "grep", "args": ["-n", "VALUE", "src/util.py"]})
        both = await ok(s, "run_command", {"command": "cat", "args": ["docs/guide.md", "no_such_file"]})
    assert text == "exit_code: 0\nstdout:\n3:VALUE = 42\nstderr:\n"
    head = "exit_code: 1\nstdout:\n# Guide\n\nHello tether.\nstderr:\n"
    assert both.startswith(head), both
    assert "no_such_file" in both[len(head):]


async def test_run_command_nonzero_exit_is_a_success_response(tree):
    """'A non-zero exit code is returned as a success response (not an MCP error) — it is the
    caller's responsibility to inspect exit_code.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        r = await s.call_tool("run_command", {"command": "grep", "args": ["no such text anywhere", "src/main.py"]})
    assert not r.is_error
    assert text_of(r).startswith("exit_code: 1\n")


async def test_run_command_shell_metacharacters_are_inert(tree):
    """'The command is invoked directly — no shell interpreter — so shell metacharacters in
    arguments are inert.'"""
    root = root_of(tree)
    marker = tree / "pwned"
    args = [f"x; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", "*.py", f"| touch {marker}"]
    async with session(root, *GUARDED) as s:
        text = await ok(s, "run_command", {"command": "cat", "args": args})
        echo = await ok(s, "run_command", {"command": "grep", "args": ["-c", "$HOME", "docs/guide.md"]})
    assert not marker.exists()
    assert text.startswith("exit_code: 1\n")
    # cat saw each argument as one literal file name.
    assert "x; touch" in text and "$(touch" in text and "*.py" in text
    assert echo.startswith("exit_code: 1\nstdout:\n0\n")


async def test_run_command_not_in_whitelist(tree):
    """'CommandNotAllowed | Command not in whitelist. Message lists permitted commands.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        for command in ["sh", "bash", "python3", "rm", "/bin/cat", "cat ", "", "env"]:
            e = await err(s, "run_command", {"command": command, "args": ["-c", "touch pwned"]})
            assert e["error"] == "CommandNotAllowed", (command, e)
            assert ALLOWED in e["message"]
    assert not (root / "pwned").exists()


async def test_run_command_excludes_mkdir_and_mv(tree):
    """'mkdir and mv are explicitly excluded from this list; use create_directory and move_file
    instead.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        e = await err(s, "run_command", {"command": "mkdir", "args": ["made"]})
        e2 = await err(s, "run_command", {"command": "mv", "args": ["src/main.py", "moved.py"]})
    assert e["error"] == e2["error"] == "CommandNotAllowed"
    assert "mkdir" not in e["message"].split(";")[1] and "mv" not in e2["message"].split(";")[1].split(", ")
    assert not (root / "made").exists() and (root / "src" / "main.py").exists()


async def test_run_command_every_listed_command_runs(tree):
    """'Allowed commands: grep, sed, awk, find, cat, head, tail, wc, sort, uniq, cut, tr, diff, file,
    stat, ls, du, rg'"""
    root = root_of(tree)
    calls = {
        "grep": ["-c", "def", "src/main.py"], "sed": ["-n", "1p", "src/main.py"], "awk": ["{print $1}", "src/main.py"],
        "find": ["src", "-name", "*.py"], "cat": ["src/main.py"], "head": ["-n1", "src/main.py"],
        "tail": ["-n1", "src/main.py"], "wc": ["-l", "src/main.py"], "sort": ["src/util.py"],
        "uniq": ["src/util.py"], "cut": ["-c1-3", "src/main.py"], "tr": ["a-z", "A-Z"],
        "diff": ["src/main.py", "src/main.py"], "file": ["src/main.py"], "stat": ["src/main.py"],
        "ls": ["src"], "du": ["-s", "src"], "rg": ["def", "src/main.py"],
    }
    assert ", ".join(calls) == ALLOWED
    async with session(root, *GUARDED) as s:
        for command, args in calls.items():
            if shutil.which(command) is None:
                e = await err(s, "run_command", {"command": command, "args": args})
                assert e["error"] == "NotFound", (command, e)
                continue
            text = await ok(s, "run_command", {"command": command, "args": args})
            assert text.startswith("exit_code: 0\nstdout:\n"), (command, text)
    assert not (root / "made").exists()


async def test_run_command_path_like_argument_outside_root_is_not_spawned(tree):
    """'OutsideRoot | A path-like argument resolves outside root. Process is not spawned.'"""
    root = root_of(tree)
    # `touch` is allowed here only so that a spawned process would leave a mark.
    async with session(root, *GUARDED, "--allow-command", "touch") as s:
        e = await err(s, "run_command", {"command": "touch", "args": ["spawned", str(tree / "outside" / "x")]})
        e2 = await err(s, "run_command", {"command": "touch", "args": ["spawned", "--reference=/etc/hostname"]})
    assert e["error"] == e2["error"] == "OutsideRoot"
    assert not (root / "spawned").exists()
    assert not (tree / "outside" / "x").exists()


async def test_run_command_validates_slash_and_dotdot_arguments(tree):
    """'Path-like args (starting with / or containing ..) are validated against root before the
    process is spawned.'"""
    root = root_of(tree)
    async with session(root, *GUARDED) as s:
        for args in [["/etc/passwd"], ["../outside/secret.txt"], ["src/../../outside/secret.txt"], ["/"]]:
            e = await err(s, "run_command", {"command": "cat", "args": args})
            assert e["error"] == "OutsideRoot", (args, e)
            assert "TOP SECRET" not in e["message"]
        inside = await ok(s, "run_command", {"command": "cat", "args": [str(root / "src" / ".." / "src" / "main.py")]})
        e = await err(s, "run_command", {"command": "cat", "args": ["link_file"]})
        e2 = await err(s, "run_command", {"command": "grep", "args": ["-r", "SECRET", "link_dir"]})
    assert inside == "exit_code: 0\nstdout:\ndef main():\n    return 1\nstderr:\n"
    assert e["error"] == e2["error"] == "OutsideRoot"


async def test_run_command_refuses_options_that_run_other_programs(tree):
    """'Execute a whitelisted shell command.': only listed programs run, so options that start
    another program (or write files) are refused."""
    root = root_of(tree)
    marker = root / "pwned"
    attempts = [
        ("find", [".", "-name", "main.py", "-exec", "touch", str(marker), ";"]),
        ("find", [".", "-name", "main.py", "-delete"]),
        ("sed", ["-i", "s/return/yield/", "src/main.py"]),
        ("sort", ["-o", "pwned", "src/util.py"]),
        ("rg", ["--pre", "touch", "x", "src"]),
        ("awk", ["BEGIN { system(\"touch pwned\") }"]),
        # File names read from a file would escape every argument check.
        ("wc", ["--files0-from=names"]),
        ("uniq", ["src/util.py", "pwned"]),
    ]
    (root / "names").write_bytes(str(tree / "outside" / "secret.txt").encode() + b"\0")
    async with session(root, *GUARDED) as s:
        for command, args in attempts:
            e = await err(s, "run_command", {"command": command, "args": args})
            assert e["error"] == "CommandNotAllowed", (command, e)
        # sed runs sandboxed: its `w` command cannot write a file.
        text = await ok(s, "run_command", {"command": "sed", "args": ["-n", "w pwned", "src/main.py"]})
    assert not text.startswith("exit_code: 0"), text
    assert not marker.exists()
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 1\n"


async def test_run_command_allow_list_is_configurable(tree):
    """'Allowed commands: grep, sed, awk, ...': `--allow-command` replaces the list."""
    root = root_of(tree)
    async with session(root, *GUARDED, "--allow-command", "wc", "--allow-command", "cat") as s:
        text = await ok(s, "run_command", {"command": "wc", "args": ["-l", "src/main.py"]})
        e = await err(s, "run_command", {"command": "grep", "args": ["x", "src/main.py"]})
    assert text == "exit_code: 0\nstdout:\n2 src/main.py\nstderr:\n"
    assert e["error"] == "CommandNotAllowed"
    assert e["message"].endswith("allowed commands: wc, cat")


# Read-only mode


async def test_read_only_mode(tree):
    """'ReadOnly | Server started with --read-only' 'Returns an error in read-only mode.'"""
    root = root_of(tree)
    before = snapshot(tree)
    calls = {
        "apply_patch": {"path": "src/main.py", "patch": "@@ -1 +1 @@\n-def main():\n+def start():\n"},
        "append_file": {"path": "src/main.py", "content": "x\n"},
        "write_file": {"path": "new.txt", "content": "x"},
        "create_directory": {"path": "newdir"},
        "move_file": {"source": "src/main.py", "destination": "moved.py"},
    }
    async with session(root, *GUARDED, "--read-only") as s:
        names = sorted(t.name for t in (await s.list_tools()).tools)
        errors = {tool: await err(s, tool, args) for tool, args in calls.items()}
        outside = await err(s, "write_file", {"path": str(tree / "outside" / "x"), "content": "x"})
        listing = await ok(s, "run_command", {"command": "ls", "args": ["src"]})
    # The mutating tools stay listed and answer ReadOnly.
    assert names == sorted(MUTATING + ["run_command"])
    assert {e["error"] for e in errors.values()} == {"ReadOnly"}
    assert all("--read-only" in e["message"] for e in errors.values())
    assert outside["error"] == "ReadOnly"
    assert listing == "exit_code: 0\nstdout:\nmain.py\nparent_link\nutil.py\nstderr:\n"
    assert snapshot(tree) == before
