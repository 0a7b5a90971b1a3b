// Runs the extension's end-to-end tests in a real VS Code: the VS Code server bundled in
// code-server, started with the smoke-test driver, its workbench opened in headless Chromium.
//
// Environment: VSCODE_NODE and CODE_SERVER (from scripts/setup: which VS Code, and the Node it runs
// on), TETHER_BIN (the binary under test), TETHER_ARTIFACTS (where the screenshot and logs go;
// default .vscode-test/artifacts). The VS Code server, and every tether it starts, runs with
// XDG_STATE_HOME in the run's temporary folder.
//
//   node scripts/run-e2e.mjs               the extension under development, with tether.server.path
//                                          set to $TETHER_BIN
//   node scripts/run-e2e.mjs --vsix FILE   the VSIX installed as a user would, no setting: its
//                                          bundled binary runs
//   node scripts/run-e2e.mjs --bench       the measurements (test/e2e/bench.test.ts) instead of
//                                          the tests; prints them and keeps them in bench.json
// The tests run inside VS Code's extension host (test/e2e/index.ts), write their results to a
// file, and ask for a screenshot through a handshake folder; this script prints the VS Code
// version the tests ran in and `N passed, N failed, N skipped`, and exits non-zero unless every
// test passed in the VS Code that $CODE_SERVER bundles.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const need = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`run-e2e: ${name} is not set`);
    process.exit(2);
  }
  return v;
};
const vscodeNode = need("VSCODE_NODE");
const codeServer = need("CODE_SERVER");
const tetherBin = fs.realpathSync(need("TETHER_BIN"));
const artifacts = path.resolve(process.env.TETHER_ARTIFACTS || path.join(here, ".vscode-test", "artifacts"));
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
const vsixAt = process.argv.indexOf("--vsix");
const vsix = vsixAt > 0 ? path.resolve(process.argv[vsixAt + 1] ?? "") : undefined;
const bench = process.argv.includes("--bench");
const benchFile = path.join(artifacts, "bench.json");
if (bench) {
  fs.rmSync(benchFile, { force: true });
}
// The VS Code that code-server bundles, as its own manifest names it.
const vscodeVersion = JSON.parse(fs.readFileSync(path.join(codeServer, "lib", "vscode", "package.json"), "utf8")).version;
const started = Date.now();
const startTimeoutMs = 240_000;
const runTimeoutMs = 900_000;

fs.mkdirSync(artifacts, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tether-vscode-"));
const dataDir = path.join(tmp, "data");
const extensionsDir = path.join(tmp, "extensions");
const workspace = path.join(tmp, "workspace");
const handshake = path.join(tmp, "handshake");
const resultsFile = path.join(tmp, "results.json");
// XDG_STATE_HOME for every tether of the run (the extension's `tether lsp`, the `tether mcp`s the
// tests start): tether keeps its change journal there, so a run neither reads nor adds to the
// user's journal, nor to another run's.
const stateHome = path.join(tmp, "state");
// XDG_RUNTIME_DIR likewise: the extension's `tether lsp` publishes its discovery file there, and
// the assistant CLIs the tests run (their hooks) find it there, as a user's would in theirs.
const runtimeDir = path.join(tmp, "runtime");
for (const d of [path.join(dataDir, "User"), path.join(dataDir, "Machine"), extensionsDir, workspace, handshake, stateHome]) {
  fs.mkdirSync(d, { recursive: true });
}
fs.mkdirSync(runtimeDir, { mode: 0o700 });
const settings = JSON.stringify(
  {
    "chat.disableAIFeatures": true,
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "window.restoreWindows": "none",
    "files.autoSave": "off",
    // The binary under test, through the first place the lookup order checks (the VSIX run
    // uses the binary it bundles instead).
    ...(vsix === undefined ? { "tether.server.path": tetherBin } : {}),
  },
  null,
  2,
);
// User settings, and the remote machine's, where a remote window reads machine-scoped settings.
fs.writeFileSync(path.join(dataDir, "User", "settings.json"), settings);
fs.writeFileSync(path.join(dataDir, "Machine", "settings.json"), settings);
fs.writeFileSync(path.join(workspace, "README.md"), "# A workspace for tether's VS Code tests\n");

// The VSIX run installs the extension as `code --install-extension` would, and loads the tests
// beside an empty extension under development (a test run needs one).
let developmentPath = here;
if (vsix !== undefined) {
  const install = spawnSync(
    path.join(vscodeNode, "bin", "node"),
    [path.join(codeServer, "out", "node", "entry.js"), "--install-extension", vsix, "--extensions-dir", extensionsDir,
      "--user-data-dir", dataDir],
    { encoding: "utf8", env: { ...process.env, XDG_CONFIG_HOME: tmp, XDG_DATA_HOME: tmp }, timeout: 300_000 },
  );
  if (install.status !== 0) {
    console.error(`run-e2e: installing ${vsix} failed:\n${install.stdout}${install.stderr}`);
    process.exit(1);
  }
  console.log(install.stdout.trim());
  developmentPath = path.join(tmp, "test-host");
  fs.mkdirSync(developmentPath);
  fs.writeFileSync(
    path.join(developmentPath, "package.json"),
    JSON.stringify({ name: "tether-test-host", publisher: "tether", version: "0.0.0", engines: { vscode: "*" } }),
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
async function waitFor(what, ms, check) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) {
      return v;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    }
    await sleep(200);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const serverLog = fs.openSync(path.join(artifacts, "vscode-server.log"), "w");
const server = spawn(
  path.join(vscodeNode, "bin", "node"),
  [
    path.join(codeServer, "lib", "vscode", "out", "server-main.js"),
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--without-connection-token",
    "--accept-server-license-terms",
    "--enable-smoke-test-driver",
    "--disable-telemetry",
    "--disable-workspace-trust",
    "--user-data-dir",
    dataDir,
    "--server-data-dir",
    dataDir,
    "--extensions-dir",
    extensionsDir,
  ],
  {
    // Its own process group, so that the extension host and tether go with it at the end.
    detached: true,
    stdio: ["ignore", serverLog, serverLog],
    env: {
      ...process.env,
      XDG_STATE_HOME: stateHome,
      XDG_RUNTIME_DIR: runtimeDir,
      TETHER_BIN: tetherBin,
      // The repository, whose tests/assistant_clis.py runs the assistant CLIs for the tests.
      TETHER_TEST_REPO: path.dirname(here),
      TETHER_TEST_RESULTS: resultsFile,
      TETHER_TEST_HANDSHAKE: handshake,
      TETHER_TEST_SOURCE: vsix === undefined ? "setting" : "bundled",
      ...(bench ? { TETHER_TEST_SUITE: "bench", TETHER_BENCH_RESULTS: benchFile } : {}),
    },
  },
);
let serverExited = false;
server.on("exit", () => {
  serverExited = true;
});

let browser;
async function cleanUp() {
  await browser?.close().catch(() => undefined);
  if (!serverExited) {
    try {
      process.kill(-server.pid, "SIGTERM");
      await waitFor("the VS Code server to stop", 10_000, () => (serverExited ? true : undefined)).catch(() => {
        process.kill(-server.pid, "SIGKILL");
      });
    } catch {
      // Already gone.
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}

let exitCode = 1;
try {
  const base = `http://127.0.0.1:${port}`;
  console.log(`VS Code ${vscodeVersion} server on ${base}, workspace ${workspace}`);
  await waitFor("the VS Code server to answer", startTimeoutMs, async () => {
    if (serverExited) {
      throw new Error(`the VS Code server exited; see ${path.join(artifacts, "vscode-server.log")}`);
    }
    try {
      const res = await fetch(`${base}/version`);
      return res.ok || res.status < 500 ? true : undefined;
    } catch {
      return undefined;
    }
  });

  browser = await chromium.launch({
    executablePath: browserPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  const consoleLog = fs.createWriteStream(path.join(artifacts, "browser-console.log"));
  page.on("console", (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
  let exited;
  await page.exposeFunction("codeAutomationExit", (code, logs) => {
    exited = { code, logs };
  });
  const remote = `vscode-remote://127.0.0.1:${port}`;
  const payload = [
    ["extensionDevelopmentPath", `${remote}${developmentPath}`],
    ["extensionTestsPath", `${remote}${path.join(here, "out", "test", "e2e", "index")}`],
  ];
  const url = `${base}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  await page.goto(url);

  // The tests ask for screenshots by writing NAME.request; each is answered with NAME.png.
  const shots = new Set();
  await waitFor("the tests to finish", runTimeoutMs, async () => {
    for (const f of fs.readdirSync(handshake)) {
      if (f.endsWith(".request") && !shots.has(f)) {
        shots.add(f);
        const name = f.slice(0, -".request".length);
        const file = path.join(artifacts, `${name}.png`);
        await page.screenshot({ path: file });
        fs.copyFileSync(file, path.join(handshake, `${name}.png`));
        console.log(`screenshot: ${file}`);
      }
    }
    if (serverExited) {
      throw new Error("the VS Code server exited during the tests");
    }
    return exited;
  });
  if (exited.logs) {
    fs.writeFileSync(path.join(artifacts, "workbench-exit.log"), JSON.stringify(exited.logs, null, 2));
  }

  const wroteResults = fs.existsSync(resultsFile);
  const results = wroteResults
    ? JSON.parse(fs.readFileSync(resultsFile, "utf8"))
    : { passed: [], failed: [{ title: "the test entry", error: "wrote no results" }], skipped: [] };
  // The extension host's vscode.version: the tests ran in the VS Code this run is about.
  if (wroteResults && results.vscode !== vscodeVersion) {
    results.failed.push({
      title: "the VS Code version",
      error: `the tests ran in VS Code ${results.vscode}, not in ${vscodeVersion} from ${codeServer}`,
    });
  }
  for (const t of results.passed) {
    console.log(`  ok   ${t.title} (${t.ms} ms)`);
  }
  for (const t of results.skipped) {
    console.log(`  skip ${t.title}`);
  }
  for (const t of results.failed) {
    console.log(`  FAIL ${t.title}\n${String(t.error).replace(/^/gm, "       ")}`);
  }
  if (bench && fs.existsSync(benchFile)) {
    console.log(fs.readFileSync(benchFile, "utf8"));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(
    `${results.passed.length} passed, ${results.failed.length} failed, ${results.skipped.length} skipped` +
      ` in VS Code ${results.vscode ?? vscodeVersion} (${seconds} s)`,
  );
  exitCode = exited.code === 0 && results.failed.length === 0 && results.passed.length > 0 ? 0 : 1;
} catch (e) {
  console.error(`run-e2e: ${e instanceof Error ? e.message : String(e)}`);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
