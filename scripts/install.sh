#!/bin/sh
# Installs the tether release binary for this machine, checksum verified:
#
#   curl -fsSL https://raw.githubusercontent.com/tether-dev/tether/main/scripts/install.sh | sh
#
# Environment (all optional):
#   TETHER_VERSION      the version to install, e.g. 0.1.0 (default: the latest release)
#   TETHER_INSTALL_DIR  where `tether` goes (default: ~/.local/bin)
#   TETHER_RELEASE_URL  where releases are (default: https://github.com/tether-dev/tether/releases/download)
#
# It downloads tether-vVERSION-TARGET.tar.gz and its .sha256 file, refuses an archive whose
# SHA-256 differs, checks that the binary runs and prints `tether VERSION`, and only then moves
# it into place (a failed install leaves the previous binary as it was). Linux x86_64/aarch64
# (static musl) and macOS x86_64/arm64 have release binaries; elsewhere it says how to build one.
set -eu

repo_url=https://github.com/tether-dev/tether
base=${TETHER_RELEASE_URL:-$repo_url/releases/download}
dir=${TETHER_INSTALL_DIR:-$HOME/.local/bin}

fail() {
  echo "tether install: $*" >&2
  exit 1
}

need() {
  command -v "$1" >/dev/null 2>&1 || fail "needs \`$1\`, which is not on PATH"
}

# The release target of this machine, or nothing.
target() {
  case "$(uname -s) $(uname -m)" in
  "Linux x86_64" | "Linux amd64") echo x86_64-unknown-linux-musl ;;
  "Linux aarch64" | "Linux arm64") echo aarch64-unknown-linux-musl ;;
  "Darwin x86_64") echo x86_64-apple-darwin ;;
  "Darwin arm64" | "Darwin aarch64") echo aarch64-apple-darwin ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    fail "needs \`sha256sum\` or \`shasum\` to verify the download"
  fi
}

need curl
need tar
t=$(target)
case "$(uname -s)" in
MINGW* | MSYS* | CYGWIN*) fail "on Windows, install with PowerShell: irm https://raw.githubusercontent.com/tether-dev/tether/main/scripts/install.ps1 | iex" ;;
esac
if [ -z "$t" ]; then
  fail "no release binary for $(uname -s) $(uname -m); build it with a Rust toolchain: cargo install --locked tether-bridge"
fi

version=${TETHER_VERSION:-}
if [ -z "$version" ]; then
  # GitHub redirects /releases/latest to /releases/tag/vX.Y.Z.
  latest=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "$repo_url/releases/latest") ||
    fail "cannot reach $repo_url/releases/latest to find the latest version; set TETHER_VERSION"
  version=${latest##*/}
fi
version=${version#v}
name="tether-v$version-$t"
url="$base/v$version/$name.tar.gz"

mkdir -p "$dir"
work=$(mktemp -d "$dir/.tether-install.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "tether install: downloading $url" >&2
curl -fsSL -o "$work/$name.tar.gz" "$url" || fail "download failed: $url"
curl -fsSL -o "$work/sum" "$url.sha256" || fail "download failed: $url.sha256"
want=$(cut -d' ' -f1 < "$work/sum" | tr 'A-F' 'a-f')
got=$(sha256 "$work/$name.tar.gz")
[ "$want" = "$got" ] || fail "checksum mismatch for $url: expected $want, got $got; nothing installed"

tar -C "$work" -xzf "$work/$name.tar.gz" || fail "cannot unpack $name.tar.gz"
bin="$work/$name/tether"
[ -f "$bin" ] || fail "$name.tar.gz holds no $name/tether"
chmod 0755 "$bin"
said=$("$bin" --version 2>&1) || fail "the downloaded tether does not run here: $said"
[ "$said" = "tether $version" ] || fail "the downloaded tether says \`$said\`, expected \`tether $version\`"
mv -f "$bin" "$dir/tether"
echo "tether install: installed $said at $dir/tether" >&2
case ":$PATH:" in
*":$dir:"*) ;;
*) echo "tether install: $dir is not on PATH; add it, or run $dir/tether" >&2 ;;
esac
