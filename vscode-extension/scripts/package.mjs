// `npm run package`: builds the bundle and a VSIX for this platform with the tether binary in it.
//
// The binary is $TETHER_BIN, else the repository's target/release/tether (build it with
// `cargo build --release`); the VSIX gets a copy without debug info. The VSIX is written to this
// folder as tether-PLATFORM-VERSION.vsix. $TETHER_VSIX_TARGET names the VS Code platform when the
// binary is built for another one (the release builds one per platform); $TETHER_VSIX_UNIVERSAL=1
// builds tether-universal-VERSION.vsix with no binary inside, for every platform: the extension
// then finds `tether` on PATH (or where `tether.path` says).

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const manifest = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"));
const universal = process.env.TETHER_VSIX_UNIVERSAL === "1";

fs.rmSync(path.join(here, "server"), { recursive: true, force: true });
const { target, version } = universal ? { target: "universal", version: "no binary inside" } : bundle();
const out = path.join(here, `tether-${target}-${manifest.version}.vsix`);

/** Copies the binary into server/ (without debug info); returns the VS Code platform and its version. */
function bundle() {
  const exe = process.platform === "win32" ? "tether.exe" : "tether";
  const binary = process.env.TETHER_BIN || path.join(here, "..", "target", "release", exe);
  if (!fs.existsSync(binary)) {
    console.error(`no tether binary at ${binary}: run \`cargo build --release\` first or set TETHER_BIN`);
    process.exit(1);
  }
  const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  if (!/^tether \S+$/.test(version)) {
    console.error(`${binary} is not tether: \`--version\` printed ${version}`);
    process.exit(1);
  }
  const arch = { x64: "x64", arm64: "arm64", arm: "armhf" }[process.arch] ?? process.arch;
  const target = process.env.TETHER_VSIX_TARGET || `${process.platform === "win32" ? "win32" : process.platform}-${arch}`;
  fs.mkdirSync(path.join(here, "server"));
  const bundled = path.join(here, "server", exe);
  fs.copyFileSync(binary, bundled);
  fs.chmodSync(bundled, 0o755);
  // A release binary is already stripped; a build with debug info (a development profile) gets
  // its copy stripped of it here. Where no `strip` is found the copy ships as built.
  if (process.platform !== "win32") {
    const flag = process.platform === "darwin" ? "-S" : "--strip-debug";
    try {
      execFileSync("strip", [flag, bundled], { stdio: "inherit" });
    } catch (e) {
      console.warn(`strip ${flag} failed (${e.message}); bundling the binary as built`);
    }
  }
  return { target, version };
}

const run = (cmd, args) => execFileSync(cmd, args, { cwd: here, stdio: "inherit" });
run(process.execPath, [path.join(here, "esbuild.mjs")]);
run(process.execPath, [
  path.join(here, "node_modules", "@vscode", "vsce", "vsce"),
  "package",
  ...(universal ? [] : ["--target", target]),
  "--no-dependencies",
  "--skip-license",
  "--allow-missing-repository",
  // The README's screenshot is in the VSIX; its link stays relative to the extension.
  "--no-rewrite-relative-links",
  "--out",
  out,
]);
console.log(`${out} (${version}, ${(fs.statSync(out).size / 1e6).toFixed(1)} MB)`);
