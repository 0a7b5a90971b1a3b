"""The MCP tools of tether.exe (under Wine on Linux), on disk: reads, grep, edit_file,
apply_patch, write, CRLF and BOM kept, the journal's history and undo, commands in a job, and
every path attack, the Windows-only ones included."""

import json
import os
import stat
import subprocess

import pytest
from mcp.shared.exceptions import MCPError
from conftest import call, error_of, helper, host_argv, local_app_data, session, text_of, win, wine_argv, wine_env

pytestmark = pytest.mark.anyio


async def test_reads_and_searches_see_the_files(tree):
    root = tree / "root"
    async with session(root) as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"read_file", "grep", "glob", "edit_file", "apply_patch", "write_file", "run"} <= names
        read = await s.call_tool("read_file", {"path": "src/main.py"})
        assert "def main():" in text_of(read) and not read.is_error
        grep = await s.call_tool("grep", {"pattern": "return 1"})
        assert "main.py" in text_of(grep), text_of(grep)
        glob = await s.call_tool("glob", {"pattern": "**/*.py"})
        assert "main.py" in text_of(glob), text_of(glob)
        absolute = await s.call_tool("read_file", {"path": win(root / "src" / "main.py")})
        assert "def main():" in text_of(absolute), text_of(absolute)
        # A Windows path in another case and with forward slashes is the same file.
        other_case = win(root / "SRC" / "Main.py").replace("\\", "/")
        assert "def main():" in text_of(await s.call_tool("read_file", {"path": other_case}))


async def test_edits_keep_crlf_and_bom_and_land_on_disk(tree):
    root = tree / "root"
    async with session(root) as s:
        edited = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "two", "new_string": "TWO"})
        assert not edited.is_error, text_of(edited)
        assert (root / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"
        edited = await s.call_tool("edit_file", {"path": "bom.txt", "old_string": "beta", "new_string": "gamma"})
        assert not edited.is_error, text_of(edited)
        assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfalpha\ngamma\n"
        patch = "*** Begin Patch\n*** Update File: src/main.py\n@@ def main():\n-    return 1\n+    return 2\n*** End Patch\n"
        patched = await s.call_tool("apply_patch", {"patch": patch})
        assert not patched.is_error, text_of(patched)
        assert (root / "src" / "main.py").read_text() == "def main():\n    return 2\n"
        written = await s.call_tool("write_file", {"path": "notes/new.md", "content": "# new\n"})
        assert not written.is_error, text_of(written)
        assert (root / "notes" / "new.md").read_text() == "# new\n"


async def test_a_failed_patch_over_two_files_leaves_both_as_they_were(tree):
    root = tree / "root"
    before = {p: (root / p).read_bytes() for p in ("crlf.txt", "src/main.py")}
    patch = (
        "*** Begin Patch\n*** Update File: src/main.py\n@@\n-    return 1\n+    return 3\n"
        "*** Update File: crlf.txt\n@@\n-no such line\n+x\n*** End Patch\n"
    )
    async with session(root) as s:
        failed = await s.call_tool("apply_patch", {"patch": patch})
        assert failed.is_error, text_of(failed)
    assert {p: (root / p).read_bytes() for p in before} == before


async def test_a_read_only_file_is_edited_and_stays_read_only(tree):
    """As on Linux, where a 0444 file is replaced and keeps its mode: the read-only attribute is
    lifted for the replace and put back."""
    root = tree / "root"
    target = root / "crlf.txt"
    os.chmod(target, stat.S_IREAD)
    try:
        async with session(root) as s:
            edited = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "one", "new_string": "ONE"})
            assert not edited.is_error, text_of(edited)
        assert target.read_bytes() == b"ONE\r\ntwo\r\nthree\r\n"
        # The mode bits, not os.access: the suite may run as root, whom no mode stops.
        assert not target.stat().st_mode & 0o222, f"the file is read-only again: {oct(target.stat().st_mode)}"
    finally:
        os.chmod(target, stat.S_IREAD | stat.S_IWRITE)


async def test_a_hidden_file_is_edited_and_stays_hidden(tree):
    """The hidden and system attributes are the file's, not the folder's: the new file tether
    renames over the old one gets them before its contents."""
    root = tree / "root"
    target = root / "crlf.txt"

    def attrib(*args: str) -> str:
        done = subprocess.run(host_argv("attrib", *args, win(target)), env=wine_env(), capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def flags() -> str:
        # attrib lists the letters before the name: "A  SH   C:\\...".
        return attrib().split(win(target))[0]

    attrib("+h")
    attrib("+s")  # one at a time: Wine's attrib takes the last of several
    assert {"H", "S"} <= set(flags()), flags()
    async with session(root) as s:
        edited = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "two", "new_string": "TWO"})
        assert not edited.is_error, text_of(edited)
    assert target.read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    assert {"H", "S"} <= set(flags()), f"hidden and system again: {flags()!r}"


@pytest.mark.parametrize("own", ["D:P(A;;FA;;;SY)(A;;FA;;;{me})(A;;0x1200a9;;;BU)", "D:(A;;0x1200a9;;;BU)"],
                         ids=["protected", "entries-of-its-own"])
async def test_a_files_own_dacl_is_kept_across_an_edit(tree, tmp_path, own):
    """As on Linux, where a rewritten file keeps its mode: a DACL set on the file itself, one that
    takes nothing from the folder or one with entries of its own besides the folder's, is what
    the file has after tether replaced it with a new one."""
    root = tree / "root"
    target = root / "crlf.txt"
    acl = helper("acl", tmp_path)

    def run(*args: str) -> str:
        done = subprocess.run(host_argv(acl, *args), env=wine_env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    me = run("sid")
    before = run("get", win(target))
    run("set", win(target), own.format(me=me))
    given = run("get", win(target))
    if given == before:
        pytest.skip(f"Wine keeps no DACL as set (its file security is a projection of Unix modes: {given}); "
                    "the release workflow's Windows jobs run this")
    async with session(root) as s:
        edited = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "two", "new_string": "TWO"})
        assert not edited.is_error, text_of(edited)
    assert target.read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    assert run("get", win(target)) == given


async def test_a_file_another_program_holds_is_a_conflict_and_nothing_changes(tree, tmp_path):
    """A program holding a file open without FILE_SHARE_DELETE (an indexer, a scanner, an editor)
    blocks its replace: the sink waits a moment, then answers `conflict`, and a patch over it and
    another file leaves both as they were."""
    root = tree / "root"
    holder = subprocess.Popen(host_argv(helper("hold", tmp_path), win(root / "crlf.txt"), "6000"), env=wine_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held", holder.stderr.read()
        before = {p: (root / p).read_bytes() for p in ("crlf.txt", "src/main.py")}
        async with session(root) as s:
            held = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "two", "new_string": "TWO"})
            error = error_of(held)
            assert error["error"] == "conflict" and "open in another program" in error["message"], error
            patch = (
                "*** Begin Patch\n*** Update File: src/main.py\n@@\n-    return 1\n+    return 3\n"
                "*** Update File: crlf.txt\n@@\n-three\n+THREE\n*** End Patch\n"
            )
            failed = await s.call_tool("apply_patch", {"patch": patch})
            assert error_of(failed)["error"] == "conflict", text_of(failed)
            assert {p: (root / p).read_bytes() for p in before} == before
            holder.wait(timeout=30)
            # Once the other program lets go, the same edit lands.
            again = await s.call_tool("edit_file", {"path": "crlf.txt", "old_string": "two", "new_string": "TWO"})
            assert not again.is_error, text_of(again)
        assert (root / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    finally:
        holder.kill()


async def test_history_and_undo_through_the_journal_in_localappdata(tree):
    root = tree / "root"
    async with session(root) as s:
        await s.call_tool("edit_file", {"path": "src/main.py", "old_string": "return 1", "new_string": "return 9"})
        history = text_of(await s.call_tool("history", {}))
        assert "src" in history and "main.py" in history, history
        undone = await s.call_tool("undo", {"last": 1})
        assert not undone.is_error, text_of(undone)
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 1\n"
    journals = list((local_app_data(wine_env()) / "tether" / "journal").iterdir())
    assert journals, "the journal lives under %LOCALAPPDATA%\\tether\\journal"


async def test_commands_run_in_cmd_and_a_timeout_kills_the_whole_job(tree):
    root = tree / "root"
    async with session(root) as s:
        ran = json.loads(text_of(await s.call_tool("run", {"command": "echo hi"})))
        assert (ran["exit_code"], ran["stdout"]) == (0, "hi\r\n"), ran
        # A child of the shell that would outlive it: the job takes it down with the shell.
        slow = await s.call_tool("run", {"command": "ping -n 30 127.0.0.1 > nul", "timeout_ms": 1500})
        outcome = json.loads(text_of(slow))
        assert outcome["timed_out"] and outcome["duration_ms"] < 10_000, outcome
    listing = subprocess.run(host_argv("tasklist"), env=wine_env(), capture_output=True, text=True, timeout=60)
    assert "ping" not in listing.stdout.lower(), listing.stdout


@pytest.mark.parametrize(
    "path,kind",
    [
        ("../outside/secret.txt", "path_escape"),
        ("src/../../outside/secret.txt", "path_escape"),
        ("{outside}", "path_escape"),
        ("{evil}", "path_escape"),
        ("CON", "invalid_input"),
        ("nul.txt", "invalid_input"),
        ("src/com1.log", "invalid_input"),
        ("crlf.txt:secret", "invalid_input"),
        ("crlf.txt::$DATA", "invalid_input"),
        ("crlf.txt.", "invalid_input"),
        ("crlf.txt ", "invalid_input"),
        ("\\\\.\\PhysicalDrive0", "invalid_input"),
        ("\\\\?\\GLOBALROOT\\Device\\Null", "invalid_input"),
    ],
)
async def test_path_attacks_are_refused_and_nothing_changes(tree, path, kind):
    root = tree / "root"
    path = path.format(outside=win(tree / "outside" / "secret.txt"), evil=win(tree / "root_evil" / "x.txt"))
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    async with session(root) as s:
        read = await s.call_tool("read_file", {"path": path})
        assert error_of(read)["error"] == kind, text_of(read)
        assert "TOP SECRET" not in text_of(read)
        wrote = await s.call_tool("write_file", {"path": path, "content": "owned\n"})
        assert error_of(wrote)["error"] == kind, text_of(wrote)
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before
    assert (tree / "outside" / "secret.txt").read_text() == "TOP SECRET\n"


def test_the_deny_list_holds_for_every_spelling_of_a_name(tree, tmp_path):
    """Windows opens a file by any case of its name and by its 8.3 short name: each must be hidden
    as the name itself is."""
    root = tree / "root"
    (root / "secret-settings.json").write_text('{"token": "TOP SECRET"}\n')
    short = subprocess.run(host_argv(helper("short_name", tmp_path), win(root / "secret-settings.json")),
                           env=wine_env(), capture_output=True, text=True, timeout=60)
    assert short.returncode == 0, short.stderr
    short_name = short.stdout.strip().split("\\")[-1]
    if short_name.lower() == "secret-settings.json":
        pytest.skip("this file system gives no 8.3 short names")
    for spelling in ("secret-settings.json", "SECRET-SETTINGS.JSON", "Secret-Settings.Json", short_name):
        done = call("call", "--root", win(root), "--deny", "secret-*.json", "--no-journal", "read_file",
                    json.dumps({"path": spelling}))
        assert "TOP SECRET" not in done.stdout, f"{spelling} read a denied file: {done.stdout}"
        assert json.loads(done.stdout)["error"] == "path_escape", (spelling, done.stdout)
    # The short name of a file that is not denied reads it.
    short_main = subprocess.run(host_argv(helper("short_name", tmp_path), win(root / "crlf.txt")),
                                env=wine_env(), capture_output=True, text=True, timeout=60)
    done = call("call", "--root", win(root), "--no-journal", "read_file",
                json.dumps({"path": short_main.stdout.strip()}))
    assert "two" in done.stdout, done.stdout


def test_a_link_is_not_a_way_out(tree):
    """A link inside the root to a file outside it. Under Wine the link is a Unix symlink, which
    Wine shows to Windows programs as it can; on Windows it is a symbolic link (creating one
    needs Developer Mode or the privilege)."""
    root = tree / "root"
    try:
        (root / "link_out").symlink_to(tree / "outside" / "secret.txt")
    except OSError as e:
        pytest.skip(f"this account may not create symbolic links here ({e})")
    done = call("call", "--root", win(root), "read_file", json.dumps({"path": "link_out"}))
    if "TOP SECRET" in done.stdout:
        pytest.skip("Wine 8 presents a Unix symlink as a plain file, so containment through links "
                    "cannot be shown under Wine: a Windows runner proves junctions and symlinks")
    assert done.returncode != 0 or "path_escape" in done.stdout, done


async def test_two_processes_editing_one_file_lose_nothing(tree):
    root = tree / "root"
    lines = [f"line {i}\n" for i in range(12)]
    (root / "shared.txt").write_text("".join(lines))

    def edit(i: int) -> subprocess.Popen:
        args = {"path": "shared.txt", "old_string": f"line {i}\n", "new_string": f"LINE {i} by {i}\n"}
        return subprocess.Popen(wine_argv("call", "--root", win(root), "edit_file", json.dumps(args)),
                                env=wine_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # Twelve writers at once, each changing its own line of one file.
    procs = [edit(i) for i in range(12)]
    outs = [p.communicate(timeout=180) for p in procs]
    text = (root / "shared.txt").read_text()
    for i, (p, (out, err)) in enumerate(zip(procs, outs)):
        # Each writer re-reads under the lock, so none is even told to retry.
        assert p.returncode == 0, f"edit {i} failed: {out} {err}"
        assert f"LINE {i} by {i}\n" in text, f"edit {i} was answered applied but lost:\n{text}"
    assert text.count("\n") == 12


def test_setup_writes_a_command_windows_can_start(tmp_path):
    """`tether setup gemini` names this tether.exe as Windows writes paths (no `\\\\?\\` prefix), and
    its hooks with the path double-quoted, which cmd.exe and Git Bash both take."""
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run(wine_argv("setup", "gemini"), cwd=project, env=wine_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    command = settings["mcpServers"]["tether"]["command"]
    assert command.lower().endswith("tether.exe") and not command.startswith("\\\\?\\"), command
    hooks = [h["command"] for group in settings["hooks"].values() for entry in group for h in entry["hooks"]]
    assert hooks and all(h == f'"{command}" hook gemini' for h in hooks), hooks


async def test_the_server_keeps_running_after_bad_input(tree):
    root = tree / "root"
    async with session(root) as s:
        bad = await s.call_tool("read_file", {"path": 42})
        assert bad.is_error
        # An unknown tool is a malformed request: a JSON-RPC error, and the session goes on.
        with pytest.raises(MCPError, match="unknown tool"):
            await s.call_tool("no_such_tool", {})
        ok = await s.call_tool("read_file", {"path": "src/main.py"})
        assert not ok.is_error
