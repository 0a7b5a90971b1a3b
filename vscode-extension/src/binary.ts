// Finding the `tether` binary. Pure Node code (no `vscode` import) so that unit tests can run it.
//
// The lookup order, documented in the README: the `tether.server.path` setting, the binary
// bundled in the VSIX, the binary downloaded for the extension's version (install.ts), then every
// `tether` on PATH in PATH's order. Each candidate must run and
// print `tether VERSION` for `--version`; the first that does is used.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** Where a candidate binary came from, in lookup order. */
export type Source = "setting" | "bundled" | "downloaded" | "PATH";

/** One place the binary may be. */
export interface Candidate {
  readonly path: string;
  readonly source: Source;
}

/** What the lookup needs to know about the machine, so that tests can give their own. */
export interface LookupEnv {
  /** The `tether.server.path` setting, as the user wrote it (may be empty). */
  readonly setting: string;
  /** The extension's folder (the bundled binary is `server/tether` in it). */
  readonly extensionPath: string;
  /** Where a downloaded binary of the extension's version is (`STORAGE/bin/VERSION/tether`), if anywhere. */
  readonly downloaded?: string;
  /** The PATH environment variable. */
  readonly envPath: string | undefined;
  readonly platform: NodeJS.Platform;
  readonly home: string;
  /** The first workspace folder, where a relative setting starts. */
  readonly workspaceFolder: string | undefined;
  /** Whether a file exists at a path. */
  readonly isFile: (p: string) => boolean;
}

/** The binary's file name on a platform. */
export function binaryName(platform: NodeJS.Platform): string {
  return platform === "win32" ? "tether.exe" : "tether";
}

/** Where the VSIX carries its binary, relative to the extension's folder. */
export function bundledPath(extensionPath: string, platform: NodeJS.Platform): string {
  return path.join(extensionPath, "server", binaryName(platform));
}

/** The setting's path made absolute: `~` is the home folder, relative paths start at the folder. */
export function expandSetting(setting: string, env: Pick<LookupEnv, "home" | "workspaceFolder">): string | undefined {
  const trimmed = setting.trim();
  if (trimmed === "") {
    return undefined;
  }
  if (trimmed === "~") {
    return env.home;
  }
  if (trimmed.startsWith("~/") || trimmed.startsWith("~\\")) {
    return path.join(env.home, trimmed.slice(2));
  }
  if (path.isAbsolute(trimmed)) {
    return trimmed;
  }
  return path.resolve(env.workspaceFolder ?? env.home, trimmed);
}

/**
 * The candidates in lookup order. The setting is always listed when set (so that a wrong path is
 * reported); the bundled binary and PATH entries only when a file is there.
 */
export function candidates(env: LookupEnv): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const add = (p: string, source: Source): void => {
    if (!seen.has(p)) {
      seen.add(p);
      out.push({ path: p, source });
    }
  };
  const fromSetting = expandSetting(env.setting, env);
  if (fromSetting !== undefined) {
    add(fromSetting, "setting");
  }
  const bundled = bundledPath(env.extensionPath, env.platform);
  if (env.isFile(bundled)) {
    add(bundled, "bundled");
  }
  if (env.downloaded !== undefined && env.isFile(env.downloaded)) {
    add(env.downloaded, "downloaded");
  }
  const delimiter = env.platform === "win32" ? ";" : ":";
  const name = binaryName(env.platform);
  for (const dir of (env.envPath ?? "").split(delimiter)) {
    // An empty PATH entry means the current directory, which is no place to find a server.
    if (dir === "") {
      continue;
    }
    const p = path.join(dir, name);
    if (env.isFile(p)) {
      add(p, "PATH");
    }
  }
  return out;
}

/** Runs a binary's `--version` and returns the version, or throws with the reason it is unusable. */
export type Probe = (binary: string) => Promise<string>;

/** A candidate that failed, and why. */
export interface Failure {
  readonly candidate: Candidate;
  readonly reason: string;
}

/** The outcome of a lookup. */
export interface Lookup {
  /** The first candidate that works, with its version. */
  readonly found?: { readonly candidate: Candidate; readonly version: string };
  /** Every candidate tried before it (all of them when none works). */
  readonly failures: Failure[];
}

/** Tries the candidates in order and stops at the first that works. */
export async function findServer(list: readonly Candidate[], probe: Probe): Promise<Lookup> {
  const failures: Failure[] = [];
  for (const candidate of list) {
    try {
      const version = await probe(candidate.path);
      return { found: { candidate, version }, failures };
    } catch (e) {
      failures.push({ candidate, reason: e instanceof Error ? e.message : String(e) });
    }
  }
  return { failures };
}

/** Reads the version out of `tether --version` output (`tether 0.1.0`), or throws. */
export function parseVersion(stdout: string): string {
  const match = /^tether (\S+)\s*$/.exec(stdout.trim());
  if (match === null) {
    const shown = stdout.trim().split("\n")[0]?.slice(0, 80) ?? "";
    throw new Error(`not tether: \`--version\` printed ${shown === "" ? "nothing" : `\`${shown}\``}`);
  }
  return match[1] ?? "";
}

/** The real probe: runs `BINARY --version` with a time limit. */
export function probeVersion(timeoutMs = 10_000): Probe {
  return (binary) =>
    new Promise((resolve, reject) => {
      fs.stat(binary, (statError, st) => {
        if (statError !== null) {
          reject(new Error(statError.code === "ENOENT" ? "no such file" : statError.message));
          return;
        }
        if (!st.isFile()) {
          reject(new Error("not a file"));
          return;
        }
        execFile(binary, ["--version"], { timeout: timeoutMs, windowsHide: true }, (error, stdout) => {
          if (error !== null) {
            const code = (error as NodeJS.ErrnoException).code;
            reject(
              new Error(
                code === "EACCES"
                  ? "not executable (chmod +x it)"
                  : error.killed
                    ? `\`--version\` did not answer within ${timeoutMs / 1000} s`
                    : `\`--version\` failed: ${error.message.split("\n")[0] ?? ""}`,
              ),
            );
            return;
          }
          try {
            resolve(parseVersion(stdout));
          } catch (e) {
            reject(e instanceof Error ? e : new Error(String(e)));
          }
        });
      });
    });
}

/** Whether a regular file exists at a path. */
export function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** What the failure message can offer besides the setting. */
export interface Remedy {
  /** The extension's version: the binary to install. */
  readonly version: string;
  /** Whether a release binary exists for this platform (the "Download" action is offered). */
  readonly canDownload: boolean;
}

/** The text of the notification shown when no candidate works: what was tried and how to fix it. */
export function describeFailure(lookup: Lookup, remedy?: Remedy): string {
  const tried =
    lookup.failures.length === 0
      ? "no `tether.server.path` setting, no bundled binary, no downloaded binary, and no `tether` on PATH"
      : lookup.failures.map((f) => `${f.candidate.path} (${f.candidate.source}): ${f.reason}`).join("; ");
  const version = remedy?.version;
  const cargo = `\`cargo install --locked tether-bridge${version === undefined ? "" : ` --version ${version}`}\``;
  return (
    `tether: no working tether binary found (tried ${tried}). ` +
    (remedy?.canDownload === true ? `Download tether ${remedy.version} (the command "tether: Download Server"), install it with ${cargo}, ` : `Install it with ${cargo}, `) +
    "or set `tether.server.path` to the binary."
  );
}
