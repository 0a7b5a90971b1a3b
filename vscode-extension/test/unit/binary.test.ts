// The binary lookup order: setting, bundled, PATH; each checked with `--version`.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";

import {
  bundledPath,
  candidates,
  describeFailure,
  expandSetting,
  findServer,
  type LookupEnv,
  parseVersion,
  probeVersion,
} from "../../src/binary";

function env(over: Partial<LookupEnv> & { files?: string[] }): LookupEnv {
  const files = new Set(over.files ?? []);
  return {
    setting: "",
    extensionPath: "/ext",
    envPath: "/usr/local/bin:/usr/bin",
    platform: "linux",
    home: "/home/u",
    workspaceFolder: "/w",
    isFile: (p) => files.has(p),
    ...over,
  };
}

describe("candidates", () => {
  it("lists the setting, then the bundled binary, then PATH in its order", () => {
    const list = candidates(
      env({ setting: "/opt/tether", files: ["/ext/server/tether", "/usr/bin/tether", "/usr/local/bin/tether"] }),
    );
    assert.deepEqual(list, [
      { path: "/opt/tether", source: "setting" },
      { path: "/ext/server/tether", source: "bundled" },
      { path: "/usr/local/bin/tether", source: "PATH" },
      { path: "/usr/bin/tether", source: "PATH" },
    ]);
  });

  it("lists the downloaded binary after the bundled one and before PATH", () => {
    const downloaded = "/storage/bin/0.1.0/tether";
    const list = candidates(env({ downloaded, files: ["/ext/server/tether", downloaded, "/usr/bin/tether"] }));
    assert.deepEqual(list, [
      { path: "/ext/server/tether", source: "bundled" },
      { path: downloaded, source: "downloaded" },
      { path: "/usr/bin/tether", source: "PATH" },
    ]);
    assert.deepEqual(candidates(env({ downloaded, envPath: undefined })), [], "not listed when nothing was downloaded");
  });

  it("lists a setting even when no file is there, so that the failure is reported", () => {
    assert.deepEqual(candidates(env({ setting: "/nowhere/tether" })), [{ path: "/nowhere/tether", source: "setting" }]);
  });

  it("skips a missing bundled binary, PATH entries without one, and empty PATH entries", () => {
    const list = candidates(env({ envPath: "::/usr/bin:", files: ["/usr/bin/tether", "tether"] }));
    assert.deepEqual(list, [{ path: "/usr/bin/tether", source: "PATH" }]);
  });

  it("lists a binary once when the setting names the bundled one", () => {
    const list = candidates(env({ setting: "/ext/server/tether", files: ["/ext/server/tether"] }));
    assert.deepEqual(list, [{ path: "/ext/server/tether", source: "setting" }]);
  });

  it("finds nothing without a setting, a bundle or PATH", () => {
    assert.deepEqual(candidates(env({ envPath: undefined })), []);
  });

  it("uses tether.exe and ; on Windows", () => {
    const list = candidates(
      env({ platform: "win32", envPath: "C:\\a;C:\\b", files: [path.join("C:\\b", "tether.exe")] }),
    );
    assert.deepEqual(list, [{ path: path.join("C:\\b", "tether.exe"), source: "PATH" }]);
    assert.equal(bundledPath("/ext", "win32"), path.join("/ext", "server", "tether.exe"));
  });
});

describe("expandSetting", () => {
  const where = { home: "/home/u", workspaceFolder: "/w" };
  it("reads ~, absolute and folder-relative paths, and treats blank as unset", () => {
    assert.equal(expandSetting("~/bin/tether", where), "/home/u/bin/tether");
    assert.equal(expandSetting("/opt/tether", where), "/opt/tether");
    assert.equal(expandSetting("target/release/tether", where), "/w/target/release/tether");
    assert.equal(expandSetting("  ", where), undefined);
    assert.equal(expandSetting("tether", { home: "/home/u", workspaceFolder: undefined }), "/home/u/tether");
  });
});

describe("findServer", () => {
  const list = [
    { path: "/bad", source: "setting" as const },
    { path: "/good", source: "bundled" as const },
    { path: "/also-good", source: "PATH" as const },
  ];

  it("takes the first candidate whose --version works and reports the ones before it", async () => {
    const probed: string[] = [];
    const lookup = await findServer(list, (p) => {
      probed.push(p);
      return p === "/bad" ? Promise.reject(new Error("no such file")) : Promise.resolve("0.1.0");
    });
    assert.deepEqual(lookup.found, { candidate: list[1], version: "0.1.0" });
    assert.deepEqual(lookup.failures, [{ candidate: list[0], reason: "no such file" }]);
    assert.deepEqual(probed, ["/bad", "/good"], "stops at the first that works");
  });

  it("reports every candidate when none works, with a fix", async () => {
    const lookup = await findServer(list, () => Promise.reject(new Error("boom")));
    assert.equal(lookup.found, undefined);
    assert.equal(lookup.failures.length, 3);
    const message = describeFailure(lookup);
    assert.match(message, /\/bad \(setting\): boom; \/good \(bundled\): boom; \/also-good \(PATH\): boom/);
    assert.match(message, /tether\.server\.path/);
    assert.match(describeFailure({ failures: [] }), /no downloaded binary, and no `tether` on PATH/);
    assert.match(describeFailure({ failures: [] }), /`cargo install --locked tether-bridge`/);
    const offer = describeFailure({ failures: [] }, { version: "0.1.0", canDownload: true });
    assert.match(offer, /Download tether 0\.1\.0 \(the command "tether: Download Server"\)/);
    assert.match(offer, /`cargo install --locked tether-bridge --version 0\.1\.0`/);
    assert.doesNotMatch(describeFailure({ failures: [] }, { version: "0.1.0", canDownload: false }), /Download/);
  });
});

describe("parseVersion", () => {
  it("reads tether's --version and refuses other programs", () => {
    assert.equal(parseVersion("tether 0.1.0\n"), "0.1.0");
    assert.throws(() => parseVersion("Python 3.11\n"), /not tether: `--version` printed `Python 3.11`/);
    assert.throws(() => parseVersion(""), /printed nothing/);
  });
});

describe("probeVersion (real processes)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tether-probe-"));
  const script = (name: string, body: string, mode = 0o755): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode });
    return p;
  };

  it("accepts a program that prints tether's version", async () => {
    assert.equal(await probeVersion()(script("ok", 'echo "tether 9.8.7"')), "9.8.7");
  });

  it("explains a missing file, a non-executable file, a directory, a failing and a foreign program", async () => {
    const probe = probeVersion();
    await assert.rejects(probe(path.join(dir, "missing")), /no such file/);
    await assert.rejects(probe(script("noexec", 'echo "tether 1"', 0o644)), /not executable/);
    await assert.rejects(probe(dir), /not a file/);
    await assert.rejects(probe(script("fails", "exit 3")), /`--version` failed/);
    await assert.rejects(probe(script("other", 'echo "other 1.0"')), /not tether/);
  });

  it("gives up on a program that never answers", async () => {
    await assert.rejects(probeVersion(300)(script("hangs", "exec sleep 30")), /did not answer within 0.3 s/);
  });
});
