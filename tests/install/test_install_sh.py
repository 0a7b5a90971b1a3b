"""scripts/install.sh (the one-line install of the release binary) against a local file server
holding a release as scripts/package-release makes it: checksum verified, the binary checked, a
failed install leaving the previous binary as it was.

The binary packed is $TETHER_BIN (scripts/test exports the release build), else
target/release/tether; without one the tests are skipped."""

import hashlib
import http.server
import os
import pathlib
import subprocess
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install.sh"
PACKAGE = ROOT / "scripts" / "package-release"
HOST_TARGET = {"x86_64": "x86_64-unknown-linux-musl", "aarch64": "aarch64-unknown-linux-musl"}


def tether_bin() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("TETHER_BIN") or ROOT / "target" / "release" / "tether")
    if not path.is_file():
        pytest.skip(f"no tether binary at {path}: build it or set TETHER_BIN")
    return path


def binary_version(binary: pathlib.Path) -> str:
    return subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]


@pytest.fixture
def release(tmp_path):
    """A release tree served over HTTP: `/v{version}/...` as GitHub's download URLs, and
    `/redirect/...` answering 302 to the same path without the prefix (as GitHub redirects to
    its storage host). Yields (base URL, tree folder, version)."""
    binary = tether_bin()
    version = binary_version(binary)
    target = HOST_TARGET[os.uname().machine]
    tree = tmp_path / "releases"
    subprocess.run([PACKAGE, version, target, binary, tree / f"v{version}"], check=True, capture_output=True)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tree), **kwargs)

        def do_GET(self):
            if self.path.startswith("/redirect/"):
                self.send_response(302)
                self.send_header("Location", self.path.removeprefix("/redirect"))
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tree, version, target
    server.shutdown()


def install(tmp_path, base, version, **env):
    dest = tmp_path / "bin"
    run_env = dict(os.environ, TETHER_RELEASE_URL=base, TETHER_VERSION=version, TETHER_INSTALL_DIR=str(dest), **env)
    done = subprocess.run(["sh", INSTALL], capture_output=True, text=True, env=run_env, timeout=120)
    return done, dest


def leftovers(dest: pathlib.Path) -> list[str]:
    return [p.name for p in dest.iterdir() if p.name.startswith(".tether-install")] if dest.exists() else []


def test_installs_the_release_binary_and_it_runs(tmp_path, release):
    base, _, version, _ = release
    done, dest = install(tmp_path, base, version)
    assert done.returncode == 0, done.stderr
    assert f"installed tether {version} at {dest / 'tether'}" in done.stderr
    out = subprocess.run([dest / "tether", "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"tether {version}"
    assert (dest / "tether").stat().st_mode & 0o777 == 0o755
    assert leftovers(dest) == []


def test_follows_a_redirect(tmp_path, release):
    base, _, version, _ = release
    done, dest = install(tmp_path, base + "/redirect", version)
    assert done.returncode == 0, done.stderr
    assert (dest / "tether").is_file()


def test_a_wrong_checksum_installs_nothing_and_keeps_the_old_binary(tmp_path, release):
    base, tree, version, target = release
    archive = tree / f"v{version}" / f"tether-v{version}-{target}.tar.gz"
    real = hashlib.sha256(archive.read_bytes()).hexdigest()
    wrong = "0" * 64
    (archive.parent / (archive.name + ".sha256")).write_text(f"{wrong}  {archive.name}\n")
    dest = tmp_path / "bin"
    dest.mkdir()
    (dest / "tether").write_text("the previous tether\n")
    done, dest = install(tmp_path, base, version)
    assert done.returncode == 1
    assert f"checksum mismatch for {base}/v{version}/{archive.name}: expected {wrong}, got {real}" in done.stderr
    assert "nothing installed" in done.stderr
    assert (dest / "tether").read_text() == "the previous tether\n"
    assert leftovers(dest) == []


def test_a_missing_release_names_the_url(tmp_path, release):
    base, _, _, target = release
    done, dest = install(tmp_path, base, "9.9.9")
    assert done.returncode == 1
    assert f"download failed: {base}/v9.9.9/tether-v9.9.9-{target}.tar.gz" in done.stderr
    assert not (dest / "tether").exists() and leftovers(dest) == []


def test_a_binary_of_another_version_is_refused(tmp_path, release):
    """An archive named for 0.0.1 holding this tether: the installer runs it and refuses it."""
    base, tree, version, target = release
    subprocess.run([PACKAGE, "0.0.1", target, tether_bin(), tree / "v0.0.1"], check=True, capture_output=True)
    done, dest = install(tmp_path, base, "0.0.1")
    assert done.returncode == 1
    assert f"the downloaded tether says `tether {version}`, expected `tether 0.0.1`" in done.stderr
    assert not (dest / "tether").exists()


def test_a_platform_without_release_names_cargo(tmp_path, release):
    """`uname` says FreeBSD: no release binary, and the message says how to build one."""
    base, _, version, _ = release
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "uname").write_text('#!/bin/sh\ncase "$1" in -s) echo FreeBSD ;; -m) echo amd64 ;; esac\n')
    (fake / "uname").chmod(0o755)
    done, dest = install(tmp_path, base, version, PATH=f"{fake}:{os.environ['PATH']}")
    assert done.returncode == 1
    assert "no release binary for FreeBSD amd64; build it with a Rust toolchain: cargo install --locked tether-bridge" in done.stderr
    assert not dest.exists() or not (dest / "tether").exists()


def test_the_release_workflow_packs_with_the_same_script():
    """The archives the installers expect are the ones the release workflow makes."""
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert 'scripts/package-release "$GITHUB_REF_NAME"' in workflow


def test_a_windows_target_is_packed_as_a_zip_holding_tether_exe(tmp_path):
    """The Windows archive scripts/install.ps1 and the VS Code download expect: `.zip`, one folder
    with `tether.exe` and README.md, its checksum beside it."""
    import zipfile

    exe = tmp_path / "tether.exe"
    exe.write_bytes(b"MZ not really a program")
    out = tmp_path / "out"
    done = subprocess.run([PACKAGE, "v1.2.3", "x86_64-pc-windows-msvc", exe, out], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    name = "tether-v1.2.3-x86_64-pc-windows-msvc"
    archive = out / f"{name}.zip"
    assert done.stdout.strip() == str(archive)
    with zipfile.ZipFile(archive) as z:
        assert sorted(z.namelist()) == [f"{name}/README.md", f"{name}/tether.exe"]
        assert z.read(f"{name}/tether.exe") == exe.read_bytes()
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (out / f"{name}.zip.sha256").read_text() == f"{digest}  {name}.zip\n"


CHECKED = [
    "Cargo.toml",
    "vscode-extension/package.json",
    "vscode-extension/package-lock.json",
    "vscode-extension/src/protocol.ts",
    "neovim/lua/tether/version.lua",
    "editors/emacs/tether.el",
    "server/src/lsp/protocol.rs",
    "scripts/check-versions",
]


def copy_checked(tmp_path) -> pathlib.Path:
    tree = tmp_path / "repo"
    for rel in CHECKED:
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes((ROOT / rel).read_bytes())
    return tree


def check_versions(tree, *args):
    return subprocess.run(["python3", tree / "scripts" / "check-versions", *args], capture_output=True, text=True)


def test_check_versions_passes_here_and_names_a_part_that_differs(tmp_path):
    tree = copy_checked(tmp_path)
    assert check_versions(tree).returncode == 0
    version = (tree / "neovim/lua/tether/version.lua")
    version.write_text(version.read_text().replace('version = "', 'version = "9.', 1))
    done = check_versions(tree)
    assert done.returncode == 1
    assert "neovim/lua/tether/version.lua 9." in done.stderr, done.stderr


def test_check_versions_refuses_an_editor_of_another_protocol_and_a_wrong_tag(tmp_path):
    tree = copy_checked(tmp_path)
    protocol = tree / "vscode-extension/src/protocol.ts"
    protocol.write_text(protocol.read_text().replace("export const PROTOCOL_VERSION = ", "export const PROTOCOL_VERSION = 1", 1))
    done = check_versions(tree)
    assert done.returncode == 1 and "vscode-extension/src/protocol.ts speaks protocol 13, the server 3" in done.stderr, done.stderr
    tree = copy_checked(tmp_path / "again")
    done = check_versions(tree, "--tag", "v9.9.9")
    assert done.returncode == 1 and "the tag 9.9.9" in done.stderr, done.stderr
