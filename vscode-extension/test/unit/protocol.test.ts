// The compatibility rules between the extension and the server it started (protocol.ts).

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { judgeServer, MIN_SERVER_PROTOCOL, PROTOCOL_VERSION, serverHello, type Verdict } from "../../src/protocol";

const judge = { binary: "/opt/tether", extensionVersion: "0.1.0", canDownload: true };

/** The verdict on an `initialize` answer. */
function verdict(result: unknown, over: Partial<typeof judge> = {}): Verdict {
  return judgeServer(serverHello(result), { ...judge, ...over });
}

function answer(version: string | undefined, tether: Record<string, unknown> | undefined): unknown {
  return {
    ...(version === undefined ? {} : { serverInfo: { name: "tether", version } }),
    capabilities: tether === undefined ? {} : { experimental: { tether } },
  };
}

describe("the protocol versions", () => {
  it("are those of the contract", () => {
    assert.equal(PROTOCOL_VERSION, 3);
    assert.equal(MIN_SERVER_PROTOCOL, 1);
  });
});

describe("serverHello", () => {
  it("reads serverInfo and the tether capabilities; a missing minProtocolVersion is 1", () => {
    assert.deepEqual(serverHello(answer("0.1.0", { protocolVersion: 3, minProtocolVersion: 2 })), {
      name: "tether",
      version: "0.1.0",
      protocolVersion: 3,
      minProtocolVersion: 2,
    });
    assert.deepEqual(serverHello(answer(undefined, { protocolVersion: 2 })), {
      name: undefined,
      version: undefined,
      protocolVersion: 2,
      minProtocolVersion: 1,
    });
    assert.equal(serverHello(undefined).protocolVersion, undefined);
    assert.equal(serverHello(answer("0.1.0", { protocolVersion: "3" })).protocolVersion, undefined, "a string is no protocol");
  });
});

describe("judgeServer", () => {
  it("accepts the matching server, and older protocols down to MIN_SERVER_PROTOCOL", () => {
    assert.deepEqual(verdict(answer("0.1.0", { protocolVersion: 3, minProtocolVersion: 1 })), { kind: "compatible" });
    assert.deepEqual(verdict(answer("0.1.0", { protocolVersion: 1 })), { kind: "compatible" });
    // A newer server that still admits protocol 3 clients.
    assert.deepEqual(verdict(answer("0.1.0", { protocolVersion: 7, minProtocolVersion: 3 })), { kind: "compatible" });
  });

  it("refuses a server without a tether protocol version: not tether, or older than 0.1.0", () => {
    const v = verdict({ serverInfo: { name: "rust-analyzer", version: "1.0" }, capabilities: {} });
    assert.ok(v.kind === "incompatible");
    assert.ok(!v.updateExtension);
    const message = v.message;
    assert.match(message, /\/opt\/tether \(rust-analyzer 1\.0, announcing no tether protocol\) is not tether, or a tether older than 0\.1\.0/);
    assert.match(message, /this extension \(tether 0\.1\.0\) speaks protocol 3/);
    assert.match(message, /"tether: Download Server"/);
    assert.match(message, /cargo install --locked tether-bridge --version 0\.1\.0/);
  });

  it("refuses a server older than MIN_SERVER_PROTOCOL", () => {
    const v = verdict(answer("0.0.1", { protocolVersion: 0 }));
    assert.ok(v.kind === "incompatible");
    const message = v.message;
    assert.match(message, /\/opt\/tether \(tether 0\.0\.1, protocol 0\) is too old/);
    assert.match(message, /servers of protocol 1 or newer/);
  });

  it("refuses a server whose minProtocolVersion is newer than the extension's protocol", () => {
    const v = verdict(answer("9.0.0", { protocolVersion: 9, minProtocolVersion: 9 }), { canDownload: false });
    assert.ok(v.kind === "incompatible");
    assert.ok(v.updateExtension);
    assert.match(v.message, /\/opt\/tether \(tether 9\.0\.0, protocol 9\) needs a client of protocol 9 or newer/);
    assert.match(v.message, /this extension \(tether 0\.1\.0\) speaks protocol 3/);
    assert.match(v.message, /update the tether extension, or install tether 0\.1\.0: `cargo install --locked tether-bridge --version 0\.1\.0`/);
    assert.doesNotMatch(v.message, /Download Server/, "no download offered where there is none");
  });

  it("keeps a compatible server of another version, and says how to get the matching one", () => {
    const v = verdict(answer("0.2.0", { protocolVersion: 4, minProtocolVersion: 1 }));
    assert.ok(v.kind === "versionMismatch");
    assert.match(v.message, /\/opt\/tether is tether 0\.2\.0 \(protocol 4\), the extension is tether 0\.1\.0 \(protocol 3\)/);
    assert.match(v.message, /Download Server/);
    assert.equal(verdict(answer(undefined, { protocolVersion: 3 })).kind, "versionMismatch", "no serverInfo.version");
  });
});
