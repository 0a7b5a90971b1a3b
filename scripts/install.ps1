# Installs the tether release binary for this Windows machine, checksum verified:
#
#   irm https://raw.githubusercontent.com/tether-dev/tether/main/scripts/install.ps1 | iex
#
# Environment (all optional), as scripts/install.sh reads them:
#   TETHER_VERSION      the version to install, e.g. 0.1.0 (default: the latest release)
#   TETHER_INSTALL_DIR  where tether.exe goes (default: %LOCALAPPDATA%\Programs\tether)
#   TETHER_RELEASE_URL  where releases are (default: https://github.com/tether-dev/tether/releases/download)
#
# It downloads tether-vVERSION-TARGET.zip and its .sha256 file, refuses an archive whose SHA-256
# differs, checks that the binary runs and prints `tether VERSION`, and only then moves it into
# place (a failed install leaves the previous binary as it was). Windows x64 and arm64 have
# release binaries.
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$repoUrl = 'https://github.com/tether-dev/tether'
$base = if ($env:TETHER_RELEASE_URL) { $env:TETHER_RELEASE_URL.TrimEnd('/') } else { "$repoUrl/releases/download" }
$dir = if ($env:TETHER_INSTALL_DIR) { $env:TETHER_INSTALL_DIR } else { Join-Path $env:LOCALAPPDATA 'Programs\tether' }

function Fail([string]$message) {
    [Console]::Error.WriteLine("tether install: $message")
    exit 1
}

$arch = if ($env:PROCESSOR_ARCHITEW6432) { $env:PROCESSOR_ARCHITEW6432 } else { $env:PROCESSOR_ARCHITECTURE }
$target = switch ($arch) {
    'AMD64' { 'x86_64-pc-windows-msvc' }
    'ARM64' { 'aarch64-pc-windows-msvc' }
    default { $null }
}
if (-not $target) {
    Fail "no release binary for Windows $arch; build it with a Rust toolchain: cargo install --locked tether-bridge"
}

$version = $env:TETHER_VERSION
if (-not $version) {
    # GitHub redirects /releases/latest to /releases/tag/vX.Y.Z.
    try {
        $latest = Invoke-WebRequest -Uri "$repoUrl/releases/latest" -Method Head -UseBasicParsing -MaximumRedirection 5
        # Windows PowerShell 5.1 says where the redirects ended in ResponseUri, PowerShell 7 in
        # RequestMessage.RequestUri.
        $response = $latest.BaseResponse
        $final = if ($response.PSObject.Properties['ResponseUri']) { $response.ResponseUri } else { $response.RequestMessage.RequestUri }
        $version = $final.AbsoluteUri.Split('/')[-1]
    } catch {
        Fail "cannot reach $repoUrl/releases/latest to find the latest version; set TETHER_VERSION"
    }
}
$version = $version.TrimStart('v')
$name = "tether-v$version-$target"
$url = "$base/v$version/$name.zip"

New-Item -ItemType Directory -Force -Path $dir | Out-Null
$work = Join-Path $dir (".tether-install." + [Guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Path $work | Out-Null
try {
    [Console]::Error.WriteLine("tether install: downloading $url")
    $zip = Join-Path $work "$name.zip"
    try {
        Invoke-WebRequest -Uri $url -OutFile $zip -UseBasicParsing
        $sum = (Invoke-WebRequest -Uri "$url.sha256" -UseBasicParsing).Content
    } catch {
        Fail "download failed: $url ($($_.Exception.Message))"
    }
    if ($sum -is [byte[]]) { $sum = [Text.Encoding]::UTF8.GetString($sum) }
    $want = ($sum.Trim() -split '\s+')[0].ToLowerInvariant()
    $got = (Get-FileHash -Algorithm SHA256 -Path $zip).Hash.ToLowerInvariant()
    if ($want -ne $got) {
        Fail "checksum mismatch for ${url}: expected $want, got $got; nothing installed"
    }
    try {
        Expand-Archive -Path $zip -DestinationPath $work -Force
    } catch {
        Fail "cannot unpack $name.zip"
    }
    $bin = Join-Path $work "$name\tether.exe"
    if (-not (Test-Path -PathType Leaf $bin)) {
        Fail "$name.zip holds no $name\tether.exe"
    }
    $said = (& $bin --version 2>&1 | Out-String).Trim()
    if ($LASTEXITCODE -ne 0) {
        Fail "the downloaded tether does not run here: $said"
    }
    if ($said -ne "tether $version") {
        Fail "the downloaded tether says '$said', expected 'tether $version'"
    }
    # A rename within one folder replaces the old binary in one step; a running tether.exe cannot
    # be replaced on Windows, which the error then says.
    Move-Item -Force -Path $bin -Destination (Join-Path $dir 'tether.exe')
    [Console]::Error.WriteLine("tether install: installed $said at $(Join-Path $dir 'tether.exe')")
    $onPath = ($env:PATH -split ';') | Where-Object { $_.TrimEnd('\') -ieq $dir.TrimEnd('\') }
    if (-not $onPath) {
        [Console]::Error.WriteLine("tether install: $dir is not on PATH; add it (Settings > Environment variables), or run $(Join-Path $dir 'tether.exe')")
    }
} finally {
    Remove-Item -Recurse -Force -Path $work -ErrorAction SilentlyContinue
}
