// Downloading the release binary (src/install.ts) from a local HTTP server that serves a fake
// release tree: the real tether ($TETHER_BIN) packed as the release workflow packs it. Without
// TETHER_BIN each download test is skipped (and reported so), not passed.

import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { cargoCommand, installedPath, installServer, releaseTarget, releaseUrls } from "../../src/install";

describe("releaseTarget", () => {
  it("maps each platform with a release binary to its target, and the rest to none", () => {
    const table: [NodeJS.Platform, string, string | undefined][] = [
      ["linux", "x64", "x86_64-unknown-linux-musl"],
      ["linux", "arm64", "aarch64-unknown-linux-musl"],
      ["darwin", "x64", "x86_64-apple-darwin"],
      ["darwin", "arm64", "aarch64-apple-darwin"],
      ["win32", "x64", "x86_64-pc-windows-msvc"],
      ["win32", "arm64", "aarch64-pc-windows-msvc"],
      ["win32", "ia32", undefined],
      ["linux", "arm", undefined],
      ["linux", "ia32", undefined],
      ["freebsd", "x64", undefined],
    ];
    for (const [platform, arch, target] of table) {
      assert.equal(releaseTarget(platform, arch), target, `${platform} ${arch}`);
    }
  });

  it("names the release's URLs and the install path by the contract", () => {
    assert.deepEqual(releaseUrls("https://h/r/", "1.2.3", "x86_64-apple-darwin"), {
      name: "tether-v1.2.3-x86_64-apple-darwin.tar.gz",
      archive: "https://h/r/v1.2.3/tether-v1.2.3-x86_64-apple-darwin.tar.gz",
      checksum: "https://h/r/v1.2.3/tether-v1.2.3-x86_64-apple-darwin.tar.gz.sha256",
    });
    assert.deepEqual(releaseUrls("https://h/r", "1.2.3", "x86_64-pc-windows-msvc"), {
      name: "tether-v1.2.3-x86_64-pc-windows-msvc.zip",
      archive: "https://h/r/v1.2.3/tether-v1.2.3-x86_64-pc-windows-msvc.zip",
      checksum: "https://h/r/v1.2.3/tether-v1.2.3-x86_64-pc-windows-msvc.zip.sha256",
    });
    assert.equal(installedPath("/s", "1.2.3", "linux"), path.join("/s", "bin", "1.2.3", "tether"));
    assert.equal(installedPath("/s", "1.2.3", "win32"), path.join("/s", "bin", "1.2.3", "tether.exe"));
    assert.equal(cargoCommand("1.2.3"), "cargo install --locked tether-bridge --version 1.2.3");
  });

  it("refuses a platform without a release binary and names the cargo command", async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    await assert.rejects(
      installServer({ base: "http://127.0.0.1:9", version: "0.1.0", storage, platform: "freebsd", arch: "x64" }),
      /no tether release binary for freebsd x64 .*`cargo install --locked tether-bridge --version 0\.1\.0`/,
    );
    assert.deepEqual(fs.readdirSync(storage), [], "nothing is created");
  });
});

const tetherBin = process.env.TETHER_BIN ?? "";
const target = releaseTarget(process.platform, process.arch);
const skip =
  tetherBin === "" ? "TETHER_BIN is not set" : target === undefined ? `no release target for ${process.platform} ${process.arch}` : false;

/** Everything under a folder, relative paths sorted. */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) {
    return [];
  }
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe("installServer against a local release server", () => {
  let version = "";
  let tmp = "";
  let name = "";
  /** path -> [status, headers, body] */
  const routes = new Map<string, { status: number; headers?: Record<string, string>; body?: Buffer | string }>();
  const servers: http.Server[] = [];
  let base = "";
  let otherBase = "";

  const listen = async (): Promise<string> => {
    const server = http.createServer((req, res) => {
      const route = routes.get(req.url ?? "");
      if (route === undefined) {
        res.writeHead(404).end("not found");
        return;
      }
      res.writeHead(route.status, route.headers).end(route.body);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  before(async () => {
    if (skip !== false) {
      return;
    }
    version = /^tether (\S+)$/.exec(execFileSync(tetherBin, ["--version"], { encoding: "utf8" }).trim())?.[1] ?? "";
    assert.notEqual(version, "", "TETHER_BIN prints `tether VERSION`");
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tether-release-"));
    const folder = `tether-v${version}-${target ?? ""}`;
    name = `${folder}.tar.gz`;
    fs.mkdirSync(path.join(tmp, folder));
    fs.copyFileSync(tetherBin, path.join(tmp, folder, "tether"));
    fs.chmodSync(path.join(tmp, folder, "tether"), 0o755);
    fs.writeFileSync(path.join(tmp, folder, "README.md"), "# tether\n");
    execFileSync("tar", ["-czf", name, folder], { cwd: tmp });
    const archive = fs.readFileSync(path.join(tmp, name));
    const sum = crypto.createHash("sha256").update(archive).digest("hex");
    const zeros = "0".repeat(64);
    base = await listen();
    otherBase = await listen();
    const rel = `/v${version}/${name}`;
    // The good release; one whose checksum file disagrees; one whose archive is no archive.
    routes.set(`/good${rel}`, { status: 200, headers: { "content-length": String(archive.length) }, body: archive });
    routes.set(`/good${rel}.sha256`, { status: 200, body: `${sum}  ${name}\n` });
    routes.set(`/bad${rel}`, { status: 200, body: archive });
    routes.set(`/bad${rel}.sha256`, { status: 200, body: `${zeros}  ${name}\n` });
    const junk = Buffer.from("this is not a tar.gz\n");
    routes.set(`/junk${rel}`, { status: 200, body: junk });
    routes.set(`/junk${rel}.sha256`, { status: 200, body: `${crypto.createHash("sha256").update(junk).digest("hex")}  ${name}\n` });
    // GitHub answers 302 to another host: here, another port and another path.
    for (const file of [rel, `${rel}.sha256`]) {
      routes.set(`/moved${file}`, { status: 302, headers: { location: `${otherBase}/good${file}` } });
    }
  });

  after(() => {
    if (tmp === "") {
      return;
    }
    for (const s of servers) {
      s.close();
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const install = (where: string, storage: string): Promise<string> =>
    installServer({ base: `${base}/${where}`, version, storage, platform: process.platform, arch: process.arch, timeoutMs: 60_000 });

  it("installs the binary, executable, reporting the version", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    const messages: string[] = [];
    const installed = await installServer({
      base: `${base}/good`,
      version,
      storage,
      platform: process.platform,
      arch: process.arch,
      onProgress: (m) => messages.push(m),
    });
    assert.equal(installed, installedPath(storage, version));
    assert.ok((fs.statSync(installed).mode & 0o111) !== 0, "executable");
    assert.equal(execFileSync(installed, ["--version"], { encoding: "utf8" }).trim(), `tether ${version}`);
    assert.deepEqual(tree(storage), ["bin", path.join("bin", version), path.join("bin", version, "tether")], "no temporary files");
    assert.ok(messages.some((m) => m.includes(`${base}/good/v${version}/${name}`)), messages.join("\n"));
  });

  it("follows a redirect to another port and path", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    const installed = await install("moved", storage);
    assert.equal(execFileSync(installed, ["--version"], { encoding: "utf8" }).trim(), `tether ${version}`);
  });

  it("refuses an archive whose checksum differs: both hashes and the URL, nothing installed", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    const sum = crypto.createHash("sha256").update(fs.readFileSync(path.join(tmp, name))).digest("hex");
    await assert.rejects(install("bad", storage), (e: Error) => {
      assert.match(e.message, /checksum mismatch/);
      assert.ok(e.message.includes(sum), e.message);
      assert.ok(e.message.includes("0".repeat(64)), e.message);
      assert.ok(e.message.includes(`${base}/bad/v${version}/${name}`), e.message);
      return true;
    });
    assert.deepEqual(tree(storage), [], "nothing is left behind");
  });

  it("leaves a binary installed before as it was when a new download is refused", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    const installed = await install("good", storage);
    // Mark the installed binary so that a replacement would show.
    const marker = fs.statSync(installed);
    fs.utimesSync(installed, new Date(1_000_000_000_000), new Date(1_000_000_000_000));
    await assert.rejects(install("bad", storage), /checksum mismatch/);
    await assert.rejects(install("junk", storage), /tar -xzf .* failed/);
    const st = fs.statSync(installed);
    assert.equal(st.ino, marker.ino, "the same file");
    assert.equal(st.mtimeMs, 1_000_000_000_000);
    assert.deepEqual(tree(storage), ["bin", path.join("bin", version), path.join("bin", version, "tether")]);
  });

  it("reports an HTTP error with its status and URL", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    await assert.rejects(install("missing", storage), (e: Error) => {
      assert.ok(e.message.includes(`HTTP 404 Not Found for ${base}/missing/v${version}/${name}.sha256`), e.message);
      return true;
    });
    assert.deepEqual(tree(storage), []);
  });

  it("reports a server that does not answer", { skip }, async () => {
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "tether-install-"));
    // Nothing listens on a port just closed.
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => { r(); }));
    await assert.rejects(
      installServer({ base: `http://127.0.0.1:${port}/x`, version, storage, platform: process.platform, arch: process.arch }),
      (e: Error) => {
        assert.match(e.message, /ECONNREFUSED/);
        assert.ok(e.message.includes(`http://127.0.0.1:${port}/x/v${version}/`), e.message);
        return true;
      },
    );
  });
});
