// Settings and what they become: lsp arguments, initialization options, mcp arguments.

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  clientCapabilities,
  DEFAULTS,
  initializationOptions,
  lspArgs,
  mcpArgs,
  needsRestart,
  readSettings,
  reviewChange,
  type Settings,
} from "../../src/settings";

const from = (values: Record<string, unknown>): Settings => readSettings((key) => values[key]);

describe("readSettings", () => {
  it("gives the defaults when nothing is set", () => {
    assert.deepEqual(from({}), DEFAULTS);
    assert.deepEqual(DEFAULTS, {
      serverPath: "",
      profile: "standard",
      readOnly: false,
      save: "clean",
      logLevel: "warn",
      shareDiagnostics: true,
      shareEditorContext: true,
      shareLanguageFeatures: true,
      deny: [],
      denySecrets: false,
      review: { mode: "off" },
    });
  });

  it("reads every setting", () => {
    assert.deepEqual(
      from({
        "server.path": " /opt/tether ",
        profile: "coder",
        readOnly: true,
        save: "never",
        "server.logLevel": "debug",
        shareDiagnostics: false,
        shareEditorContext: false,
        shareLanguageFeatures: false,
        deny: ["*.pem"],
        denySecrets: true,
        review: { mode: "ask", rules: [{ path: "docs/**", review: "off" }], timeout: 1500 },
      }),
      {
        serverPath: "/opt/tether",
        profile: "coder",
        readOnly: true,
        save: "never",
        logLevel: "debug",
        shareDiagnostics: false,
        shareEditorContext: false,
        shareLanguageFeatures: false,
        deny: ["*.pem"],
        denySecrets: true,
        review: { mode: "ask", rules: [{ path: "docs/**", review: "off" }], timeout: 1500 },
      },
    );
  });

  it("falls back to the default for a value of the wrong type or outside its choices", () => {
    assert.deepEqual(
      from({
        "server.path": 3,
        profile: "",
        readOnly: "yes",
        save: "always",
        "server.logLevel": "loud",
        shareDiagnostics: "no",
        shareEditorContext: 0,
        shareLanguageFeatures: null,
        deny: ".env",
        denySecrets: "yes",
        review: ["ask"],
      }),
      DEFAULTS,
    );
  });
});

describe("server arguments", () => {
  it("maps profile, read-only and log level to tether lsp's flags", () => {
    assert.deepEqual(lspArgs(DEFAULTS), ["lsp", "--profile", "standard", "--log-level", "warn"]);
    assert.deepEqual(lspArgs({ ...DEFAULTS, profile: "coder", readOnly: true, logLevel: "trace" }), [
      "lsp",
      "--profile",
      "coder",
      "--read-only",
      "--log-level",
      "trace",
    ]);
  });

  it("passes the save policy as initializationOptions", () => {
    assert.deepEqual(initializationOptions(DEFAULTS), { save: "clean" });
    assert.deepEqual(initializationOptions({ ...DEFAULTS, save: "never" }), { save: "never" });
  });

  it("passes the deny list only when it hides something", () => {
    const read = readSettings((key) => ({ deny: [".env", 3, " ", "*.pem"], denySecrets: true })[key]);
    assert.deepEqual(read.deny, [".env", "*.pem"]);
    assert.deepEqual(initializationOptions(read), {
      save: "clean",
      deny: { patterns: [".env", "*.pem"], secrets: true },
    });
    assert.deepEqual(initializationOptions({ ...DEFAULTS, denySecrets: true }), {
      save: "clean",
      deny: { patterns: [], secrets: true },
    });
  });

  it("reads review as a word or an object, leaving out what the server would not read", () => {
    const review = (v: unknown) => readSettings((key) => (key === "review" ? v : undefined)).review;
    assert.deepEqual(review("ask"), { mode: "ask" });
    assert.deepEqual(review("off"), { mode: "off" });
    assert.deepEqual(review({ mode: "ask", rules: "src/**", timeout: -1 }), { mode: "ask" });
    assert.deepEqual(review({ mode: "sometimes" }), { mode: "off" });
    assert.deepEqual(review(null), { mode: "off" });
  });

  it("passes review only when it asks for something, and sends changes as didChangeConfiguration", () => {
    assert.equal(initializationOptions(DEFAULTS).review, undefined);
    const asking = { ...DEFAULTS, review: { mode: "ask" as const, timeout: 1500 } };
    assert.deepEqual(initializationOptions(asking), { save: "clean", review: { mode: "ask", timeout: 1500 } });
    const ruled = { ...DEFAULTS, review: { mode: "off" as const, rules: [{ tool: "apply_patch", review: "ask" }] } };
    assert.deepEqual(initializationOptions(ruled).review, ruled.review);
    assert.deepEqual(reviewChange(asking), { settings: { tether: { review: { mode: "ask", timeout: 1500 } } } });
    assert.deepEqual(reviewChange(DEFAULTS), { settings: { tether: { review: { mode: "off" } } } });
    assert.equal(needsRestart(DEFAULTS, asking), false, "review changes at run time");
  });

  it("announces the capabilities whose sharing is on, and always saveDocuments, review and diskChanges", () => {
    assert.deepEqual(clientCapabilities(DEFAULTS), {
      saveDocuments: true,
      review: true,
      diskChanges: true,
      diagnostics: true,
      editorContext: true,
      languageRequests: true,
    });
    assert.deepEqual(clientCapabilities({ ...DEFAULTS, shareDiagnostics: false }), {
      saveDocuments: true,
      review: true,
      diskChanges: true,
      editorContext: true,
      languageRequests: true,
    });
    assert.deepEqual(
      clientCapabilities({ ...DEFAULTS, shareDiagnostics: false, shareEditorContext: false, shareLanguageFeatures: false }),
      { saveDocuments: true, review: true, diskChanges: true },
    );
  });

  it("serves one folder over MCP with the same profile and mode", () => {
    assert.deepEqual(mcpArgs(DEFAULTS, "/w/app"), ["mcp", "--root", "/w/app", "--profile", "standard"]);
    assert.deepEqual(mcpArgs({ ...DEFAULTS, readOnly: true }, "/w"), [
      "mcp",
      "--root",
      "/w",
      "--profile",
      "standard",
      "--read-only",
    ]);
  });
});

describe("needsRestart", () => {
  it("restarts for every setting the server is started with", () => {
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS }), false);
    for (const change of [
      { serverPath: "/x" },
      { profile: "coder" },
      { readOnly: true },
      { save: "never" as const },
      { logLevel: "info" as const },
      { shareDiagnostics: false },
      { shareEditorContext: false },
      { shareLanguageFeatures: false },
      { deny: [".env"] },
      { denySecrets: true },
    ]) {
      assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, ...change }), true, JSON.stringify(change));
    }
  });
});
