// End-to-end: the download of the matching release ("tether: Download Server") and the protocol
// check, in the real VS Code. Runs last: it moves the bundled binary aside for a moment, points
// tether.server.downloadUrl at a local HTTP server serving a release made of $TETHER_BIN, and
// puts a fake server in tether.server.path; it restores all of that before it ends.

import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import { releaseTarget } from "../../src/install";
import { callTool, text, waitFor } from "./util";

const tetherBin = process.env.TETHER_BIN ?? "";
const expectedSource = process.env.TETHER_TEST_SOURCE === "bundled" ? "bundled" : "setting";
const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("tether");

/**
 * A fake `tether` that says what OUT.hello says: `--version` prints `tether VERSION`; as `lsp` it
 * answers `initialize` with that version, protocolVersion and minProtocolVersion, and keeps the
 * client's experimental capabilities in OUT.client and its pid in OUT.pid.
 */
const FAKE_SERVER = String.raw`
const fs = require("fs");
const [, , out, ...args] = process.argv;
const hello = JSON.parse(fs.readFileSync(out + ".hello", "utf8"));
if (args.includes("--version")) {
  console.log("tether " + hello.version);
  process.exit(0);
}
fs.writeFileSync(out + ".pid", String(process.pid));
let buf = Buffer.alloc(0);
const send = (o) => {
  const s = JSON.stringify(o);
  process.stdout.write("Content-Length: " + Buffer.byteLength(s) + "\r\n\r\n" + s);
};
const handle = (m) => {
  if (m.method === "initialize") {
    fs.writeFileSync(out + ".client", JSON.stringify(m.params.capabilities.experimental ?? null));
    send({ jsonrpc: "2.0", id: m.id, result: {
      capabilities: { experimental: { tether: { protocolVersion: hello.protocolVersion, minProtocolVersion: hello.minProtocolVersion } } },
      serverInfo: { name: "tether", version: hello.version },
    } });
  } else if (m.method === "shutdown") {
    send({ jsonrpc: "2.0", id: m.id, result: null });
  } else if (m.method === "exit") {
    process.exit(0);
  } else if (m.id !== undefined && m.method !== undefined) {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "the fake knows only initialize" } });
  }
};
process.stdin.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) break;
    const n = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString())[1]);
    if (buf.length < end + 4 + n) break;
    const msg = JSON.parse(buf.subarray(end + 4, end + 4 + n).toString());
    buf = buf.subarray(end + 4 + n);
    handle(msg);
  }
});
process.stdin.on("end", () => process.exit(0));
`;

/** Whether a process is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("downloading tether, and servers the extension cannot speak to", () => {
  let api: TetherApi;
  let tmp: string;
  let base: string;
  let version: string;
  let releases: http.Server;
  /** The URLs the release server was asked for. */
  const asked: string[] = [];

  /**
   * Waits for the restart a settings change causes, to the binary under test: of the given
   * source, and not one of the fakes (also named by the setting, in `tmp`).
   */
  const backToNormal = async (old: unknown): Promise<void> => {
    await waitFor(
      "a restart with the binary under test",
      () =>
        api.server.state === "running" &&
        api.server.binary?.source === expectedSource &&
        !api.server.binary.path.startsWith(tmp) &&
        api.server.languageClient !== old,
      60_000,
    );
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    api = await ext.activate();
    await waitFor("the server to run", () => api.server.state === "running", 60_000);
    version = api.server.extensionVersion;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tether-e2e-release-"));
    // The release as the workflow makes it, served under /files; /releases answers 302 to it, as GitHub does.
    const target = releaseTarget(process.platform, process.arch);
    assert.ok(target !== undefined, `a release target for ${process.platform} ${process.arch}`);
    const folder = `tether-v${version}-${target}`;
    fs.mkdirSync(path.join(tmp, "files", `v${version}`, folder), { recursive: true });
    fs.copyFileSync(tetherBin, path.join(tmp, "files", `v${version}`, folder, "tether"));
    fs.writeFileSync(path.join(tmp, "files", `v${version}`, folder, "README.md"), "# tether\n");
    const dir = path.join(tmp, "files", `v${version}`);
    execFileSync("tar", ["-czf", `${folder}.tar.gz`, folder], { cwd: dir });
    const sum = crypto.createHash("sha256").update(fs.readFileSync(path.join(dir, `${folder}.tar.gz`))).digest("hex");
    fs.writeFileSync(path.join(dir, `${folder}.tar.gz.sha256`), `${sum}  ${folder}.tar.gz\n`);
    releases = http.createServer((req, res) => {
      const url = req.url ?? "/";
      asked.push(url);
      if (url.startsWith("/releases/")) {
        res.writeHead(302, { location: `/files/${url.slice("/releases/".length)}` }).end();
        return;
      }
      const file = path.join(tmp, ...url.split("/").filter((p) => p !== "" && p !== ".."));
      if (url.startsWith("/files/") && fs.existsSync(file) && fs.statSync(file).isFile()) {
        res.writeHead(200).end(fs.readFileSync(file));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => releases.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(releases.address() as AddressInfo).port}/releases`;
  });

  after(() => {
    releases.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("with no binary found, tether: Download Server installs the matching release and the tools work", async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    const bundled = path.join(ext.extensionPath, "server", "tether");
    const aside = `${bundled}.aside`;
    const hadBundled = fs.existsSync(bundled);
    let old = api.server.languageClient;
    // Machine scope: only the user's (here the remote machine's) settings may set it.
    await config().update("server.downloadUrl", base, vscode.ConfigurationTarget.Global);
    try {
      await waitFor("the download URL setting", () => config().get("server.downloadUrl") === base, 10_000);
      if (hadBundled) {
        fs.renameSync(bundled, aside);
      }
      // A workspace value overrides the machine settings the runner wrote: no setting. (The
      // VSIX run has none to override, so the restart that finds nothing is asked for.)
      await config().update("server.path", "", vscode.ConfigurationTarget.Workspace);
      await waitFor("the empty setting", () => config().get("server.path") === "", 10_000);
      await vscode.commands.executeCommand("tether.restartServer");
      await waitFor(
        "a restart without the setting",
        () => api.server.settings.serverPath === "" && api.server.languageClient !== old && (api.server.state === "notFound" || api.server.state === "running"),
        60_000,
      );
      const onPath = (process.env.PATH ?? "").split(path.delimiter).some((d) => d !== "" && fs.existsSync(path.join(d, "tether")));
      if (onPath) {
        // Only a tether on the extension host's PATH can run now.
        assert.equal(api.server.binary?.source, "PATH");
      } else {
        assert.equal(api.server.state, "notFound");
        assert.match(api.server.problem ?? "", new RegExp(`Download tether ${version.replace(/\./g, "\\.")}`));
      }
      const installed = await vscode.commands.executeCommand<string | undefined>("tether.installServer");
      assert.equal(installed, api.server.downloadedPath);
      assert.ok(asked.some((u) => u.startsWith("/releases/")) && asked.some((u) => u.startsWith("/files/")), asked.join(", "));
      assert.equal(execFileSync(api.server.downloadedPath, ["--version"], { encoding: "utf8" }).trim(), `tether ${version}`);
      await waitFor(
        "the downloaded binary to run",
        () => api.server.state === "running" && api.server.binary?.source === "downloaded",
        60_000,
      );
      assert.equal(api.server.binary?.path, api.server.downloadedPath);
      assert.equal(api.server.versionNote, undefined, "the versions match");
      fs.writeFileSync(path.join(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "", "downloaded.txt"), "from the download\n");
      const result = await callTool("read_file", { path: "downloaded.txt" });
      assert.equal(result.isError, false, text(result));
      assert.match(text(result), /from the download/);
    } finally {
      if (hadBundled && fs.existsSync(aside)) {
        fs.renameSync(aside, bundled);
      }
      old = api.server.languageClient;
      await config().update("server.downloadUrl", undefined, vscode.ConfigurationTarget.Global);
      await config().update("server.path", undefined, vscode.ConfigurationTarget.Workspace);
      // The VSIX run had no setting before either: no settings change restarts it.
      await vscode.commands.executeCommand("tether.restartServer");
      await backToNormal(old);
    }
  });

  /** Writes a fake tether that says `hello`; returns its path and where it keeps what it saw. */
  const fakeServer = (name: string, hello: { version: string; protocolVersion: number; minProtocolVersion: number }): { fake: string; out: string } => {
    const script = path.join(tmp, "fake-server.js");
    const out = path.join(tmp, name);
    fs.writeFileSync(script, FAKE_SERVER);
    fs.writeFileSync(`${out}.hello`, JSON.stringify(hello));
    const fake = path.join(tmp, `${name}-tether`);
    fs.writeFileSync(fake, `#!/bin/sh\nexec '${process.execPath}' '${script}' '${out}' "$@"\n`, { mode: 0o755 });
    return { fake, out };
  };

  /** The status item's tooltip as text. */
  const tooltip = (): string => {
    const t = api.status.tooltip;
    return typeof t === "string" ? t : (t?.value ?? "");
  };

  it("a server whose protocol the extension cannot speak is stopped and the reason shown", async () => {
    const { fake, out } = fakeServer("new", { version: "9.0.0", protocolVersion: 9, minProtocolVersion: 9 });
    let old = api.server.languageClient;
    await config().update("server.path", fake, vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor(
        "the fake server to be refused",
        () => api.server.settings.serverPath === fake && api.server.state === "failed",
        60_000,
      );
      assert.equal(api.server.languageClient, undefined, "no client is left running");
      assert.deepEqual(api.server.binary, { path: fake, version: "9.0.0", source: "setting" });
      const problem = api.server.problem ?? "";
      assert.ok(problem.includes(`${fake} (tether 9.0.0, protocol 9) needs a client of protocol 9 or newer`), problem);
      assert.ok(problem.includes(`this extension (tether ${version}) speaks protocol 3`), problem);
      assert.match(problem, /update the tether extension/);
      assert.match(tooltip(), /needs a client of protocol 9/);
      assert.ok(api.server.incompatible);
      assert.deepEqual(await api.mcp.provideMcpServerDefinitions(), [], "no MCP server with that binary either");
      // The extension announced its protocol in initialize.
      const announced = JSON.parse(fs.readFileSync(`${out}.client`, "utf8")) as { tether?: { protocolVersion?: number } };
      assert.equal(announced.tether?.protocolVersion, 3);
      const pid = Number(fs.readFileSync(`${out}.pid`, "utf8"));
      await waitFor("the fake server to exit", () => !alive(pid), 15_000);
      await assert.rejects(callTool("read_file", { path: "README.md" }));
    } finally {
      old = api.server.languageClient;
      await config().update("server.path", undefined, vscode.ConfigurationTarget.Workspace);
      await backToNormal(old);
    }
  });

  it("a compatible server of another version runs, and the status tooltip says how to get the matching one", async () => {
    const { fake } = fakeServer("other", { version: "0.2.0", protocolVersion: 4, minProtocolVersion: 1 });
    let old = api.server.languageClient;
    await config().update("server.path", fake, vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor(
        "the fake server to run",
        () => api.server.settings.serverPath === fake && api.server.state === "running" && api.server.languageClient !== old,
        60_000,
      );
      const note = api.server.versionNote ?? "";
      assert.ok(note.includes(`${fake} is tether 0.2.0 (protocol 4), the extension is tether ${version} (protocol 3)`), note);
      assert.match(note, /Download Server|cargo install --locked tether-bridge/);
      assert.ok(tooltip().includes(`Version mismatch: ${note}`), tooltip());
      assert.ok(!api.server.incompatible);
    } finally {
      old = api.server.languageClient;
      await config().update("server.path", undefined, vscode.ConfigurationTarget.Workspace);
      await backToNormal(old);
      assert.equal(api.server.versionNote, undefined);
    }
  });
});
