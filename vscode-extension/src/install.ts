// Downloading the release binary that matches the extension. Pure Node code (no `vscode` import)
// so that unit tests can run it against a local HTTP server.
//
// The release assets (the contract every editor follows): `BASE/vVERSION/tether-vVERSION-TARGET.tar.gz`
// and beside it `….tar.gz.sha256` (`shasum -a 256` output). The archive holds one folder
// `tether-vVERSION-TARGET/` with `tether` and `README.md`; for Windows it is a `.zip` holding
// `tether.exe` (unpacked by the `tar` Windows 10 and later ship, which reads zip files). An install downloads into a temporary
// folder inside the destination, verifies the SHA-256, extracts with the system `tar`, checks that
// `tether --version` prints `tether VERSION`, and only then renames the binary into place: a failure
// at any step installs nothing and leaves a previous binary as it was.

import { execFile } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

import { probeVersion } from "./binary";

/** Where the releases are unless `tether.server.downloadUrl` says otherwise (GitHub redirects to another host). */
export const DEFAULT_DOWNLOAD_BASE = "https://github.com/tether-dev/tether/releases/download";

/** The crate on crates.io that installs the `tether` binary (the name `tether` is taken). */
export const CRATE = "tether-bridge";

/** The release target of a platform, or undefined when no release binary is built for it. */
export function releaseTarget(platform: NodeJS.Platform, arch: string): string | undefined {
  const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : undefined;
  if (cpu === undefined) {
    return undefined;
  }
  if (platform === "linux") {
    return `${cpu}-unknown-linux-musl`;
  }
  if (platform === "darwin") {
    return `${cpu}-apple-darwin`;
  }
  if (platform === "win32") {
    return `${cpu}-pc-windows-msvc`;
  }
  return undefined;
}

/** Whether a release target is a Windows one (a `.zip` holding `tether.exe`). */
function isWindows(target: string): boolean {
  return target.includes("-windows-");
}

/** The command that builds the binary from crates.io, for platforms without a release binary. */
export function cargoCommand(version: string): string {
  return `cargo install --locked ${CRATE} --version ${version}`;
}

/** The URLs of a release's archive and checksum. */
export function releaseUrls(base: string, version: string, target: string): { archive: string; checksum: string; name: string } {
  const name = `tether-v${version}-${target}${isWindows(target) ? ".zip" : ".tar.gz"}`;
  const archive = `${base.replace(/\/+$/, "")}/v${version}/${name}`;
  return { archive, checksum: `${archive}.sha256`, name };
}

/** Where a downloaded binary of a version lives: `STORAGE/bin/VERSION/tether` (`tether.exe` on Windows). */
export function installedPath(storage: string, version: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(storage, "bin", version, platform === "win32" ? "tether.exe" : "tether");
}

/** What an install needs. */
export interface InstallOptions {
  /** The release base URL (`tether.server.downloadUrl`). */
  readonly base: string;
  /** The version to install: the extension's. */
  readonly version: string;
  /** The extension's global storage folder. */
  readonly storage: string;
  readonly platform: NodeJS.Platform;
  readonly arch: string;
  /** The time limit of the whole install (default 5 minutes). */
  readonly timeoutMs?: number;
  /** The time limit of a silent connection (default 30 s). */
  readonly idleMs?: number;
  /** Told what happens: a line of text and, while downloading, the fraction done (0..1) when known. */
  readonly onProgress?: (message: string, fraction?: number) => void;
}

const MAX_REDIRECTS = 10;

/** One GET, redirects followed; resolves with the final response (status 200) and its URL. */
function get(url: string, deadline: number, idleMs: number, redirects = 0): Promise<{ res: http.IncomingMessage; url: string }> {
  return new Promise((resolve, reject) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      reject(new Error(`not a URL: ${url}`));
      return;
    }
    const client = parsed.protocol === "https:" ? https : parsed.protocol === "http:" ? http : undefined;
    if (client === undefined) {
      reject(new Error(`unsupported URL scheme ${parsed.protocol} in ${url} (http or https)`));
      return;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      reject(new Error(`timed out before downloading ${url}`));
      return;
    }
    const req = client.get(parsed, { headers: { "user-agent": "tether-vscode" }, timeout: Math.min(idleMs, left) }, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location !== undefined) {
        res.resume();
        if (redirects >= MAX_REDIRECTS) {
          reject(new Error(`too many redirects downloading ${url}`));
          return;
        }
        get(new URL(location, url).toString(), deadline, idleMs, redirects + 1).then(resolve, reject);
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(new Error(`HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""} for ${url}`));
        return;
      }
      resolve({ res, url });
    });
    req.on("timeout", () => {
      req.destroy(new Error(`no answer within ${Math.round(Math.min(idleMs, left) / 1000)} s from ${url}`));
    });
    req.on("error", (e) => {
      reject(new Error(e.message.includes(url) ? e.message : `${e.message} (${url})`));
    });
  });
}

/** Reads a whole (small) response as text. */
async function getText(url: string, deadline: number, idleMs: number): Promise<string> {
  const { res } = await get(url, deadline, idleMs);
  const chunks: Buffer[] = [];
  for await (const chunk of res) {
    chunks.push(chunk as Buffer);
    if (chunks.reduce((n, c) => n + c.length, 0) > 64 * 1024) {
      res.destroy();
      throw new Error(`${url} is too large for a checksum file`);
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Streams a response into a file; returns the SHA-256 (lowercase hex) of what was written. */
async function download(
  url: string,
  file: string,
  deadline: number,
  idleMs: number,
  onProgress: ((fraction?: number) => void) | undefined,
): Promise<string> {
  const { res } = await get(url, deadline, idleMs);
  const total = Number(res.headers["content-length"] ?? NaN);
  const hash = crypto.createHash("sha256");
  let done = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      done += chunk.length;
      onProgress?.(Number.isFinite(total) && total > 0 ? done / total : undefined);
      callback(null, chunk);
    },
  });
  const timer = setTimeout(() => {
    res.destroy(new Error(`timed out downloading ${url}`));
  }, Math.max(0, deadline - Date.now()));
  res.setTimeout(idleMs, () => {
    res.destroy(new Error(`the download of ${url} stalled for ${idleMs / 1000} s`));
  });
  try {
    await pipeline(res, tap, fs.createWriteStream(file, { mode: 0o600 }));
  } finally {
    clearTimeout(timer);
  }
  if (Number.isFinite(total) && done !== total) {
    throw new Error(`the download of ${url} ended after ${done} of ${total} bytes`);
  }
  return hash.digest("hex");
}

/** Runs `tar -xzf ARCHIVE -C DIR` (`-xf` for a zip file, which bsdtar reads by its contents). */
function untar(archive: string, dir: string, timeoutMs: number): Promise<void> {
  const flags = archive.endsWith(".zip") ? "-xf" : "-xzf";
  return new Promise((resolve, reject) => {
    execFile("tar", [flags, archive, "-C", dir], { timeout: timeoutMs, windowsHide: true }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      reject(
        new Error(
          code === "ENOENT"
            ? "`tar` is not installed (it unpacks the release archive): install it, or install tether with cargo"
            : `tar ${flags} ${archive} failed: ${(stderr.trim() || error.message).split("\n")[0] ?? ""}`,
        ),
      );
    });
  });
}

/**
 * Downloads, verifies and installs the release binary of `version` for the platform; returns its
 * path (`installedPath`). Throws an error that says what went wrong, with the URL; nothing is
 * installed then, and a binary installed before stays.
 */
export async function installServer(opts: InstallOptions): Promise<string> {
  const target = releaseTarget(opts.platform, opts.arch);
  if (target === undefined) {
    throw new Error(
      `no tether release binary for ${opts.platform} ${opts.arch} (there are for Linux, macOS and Windows on x86_64 and arm64): ` +
        `build it with \`${cargoCommand(opts.version)}\` and set tether.server.path to it if it is not on PATH`,
    );
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  const idleMs = opts.idleMs ?? 30_000;
  const urls = releaseUrls(opts.base, opts.version, target);
  const dest = installedPath(opts.storage, opts.version, opts.platform);
  const destDir = path.dirname(dest);
  // The first folder this install creates, if any: a failed install removes what it made.
  const made = fs.mkdirSync(destDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(destDir, ".download-"));
  try {
    opts.onProgress?.(`checksum from ${urls.checksum}`);
    const sums = await getText(urls.checksum, deadline, idleMs);
    const expected = sums.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    if (!/^[0-9a-f]{64}$/.test(expected)) {
      throw new Error(`${urls.checksum} holds no SHA-256 (it starts with \`${sums.slice(0, 40).trim()}\`)`);
    }
    opts.onProgress?.(`downloading ${urls.archive}`, 0);
    const archive = path.join(tmp, urls.name);
    const actual = await download(urls.archive, archive, deadline, idleMs, (f) => {
      opts.onProgress?.(`downloading ${urls.archive}`, f);
    });
    if (actual !== expected) {
      throw new Error(
        `checksum mismatch for ${urls.archive}: its SHA-256 is ${actual} but ${urls.checksum} says ${expected}; nothing was installed`,
      );
    }
    opts.onProgress?.("unpacking");
    const unpacked = path.join(tmp, "unpacked");
    fs.mkdirSync(unpacked);
    await untar(archive, unpacked, Math.max(1_000, deadline - Date.now()));
    const folder = `tether-v${opts.version}-${target}`;
    const exe = isWindows(target) ? "tether.exe" : "tether";
    const binary = path.join(unpacked, folder, exe);
    if (!fs.existsSync(binary)) {
      throw new Error(`${urls.archive} has no ${folder}/${exe}`);
    }
    fs.chmodSync(binary, 0o755);
    opts.onProgress?.("checking the binary");
    let got: string;
    try {
      got = await probeVersion()(binary);
    } catch (e) {
      throw new Error(`the tether in ${urls.archive} does not run: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (got !== opts.version) {
      throw new Error(`the binary in ${urls.archive} is tether ${got}, not tether ${opts.version}`);
    }
    fs.renameSync(binary, dest);
    return dest;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (made !== undefined) {
      // rmdir refuses a folder that holds something: the installed binary, or what another put there.
      for (let dir = destDir; ; dir = path.dirname(dir)) {
        try {
          fs.rmdirSync(dir);
        } catch {
          break;
        }
        if (dir === made || dir === path.dirname(dir)) {
          break;
        }
      }
    }
  }
}
