// Grep output, tool argument templates and MCP configuration snippets.

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { parseGrepContent } from "../../src/grepResults";
import { mcpConfiguration, shellQuote } from "../../src/mcpConfig";
import { argumentsTemplate, countChange, resultText } from "../../src/protocol";
import { DEFAULTS } from "../../src/settings";

describe("parseGrepContent", () => {
  it("reads matches and skips context lines, separators, notes and the footer", () => {
    const output = [
      "src/a.rs-1-use x;",
      "src/a.rs:2:fn main() { let t = \"a:1:b\"; }",
      "--",
      "dir with space/b.txt:10:hello",
      "",
      "(showing lines 1-2 of 9; call again with offset=2 for more)",
    ].join("\n");
    assert.deepEqual(parseGrepContent(output), [
      { path: "src/a.rs", line: 2, text: 'fn main() { let t = "a:1:b"; }' },
      { path: "dir with space/b.txt", line: 10, text: "hello" },
    ]);
    assert.deepEqual(parseGrepContent("(no matches)"), []);
  });
});

describe("argumentsTemplate", () => {
  it("fills the required properties with placeholders of their type", () => {
    const tool = {
      name: "t",
      inputSchema: {
        properties: {
          path: { type: "string" },
          limit: { type: ["integer", "null"] },
          all: { type: "boolean" },
          edits: { type: "array" },
          optional: { type: "string" },
        },
        required: ["path", "limit", "all", "edits"],
      },
    };
    assert.equal(argumentsTemplate(tool), '{"path":"","limit":0,"all":false,"edits":[]}');
    assert.equal(argumentsTemplate({ name: "none" }), "{}");
  });
});

describe("countChange", () => {
  it("counts an edit and takes a take-back off, never below zero", () => {
    assert.equal(countChange(0, "tether: edit_file"), 1);
    assert.equal(countChange(2, undefined), 3);
    assert.equal(countChange(3, "tether: edit_file (taken back)"), 2);
    assert.equal(countChange(0, "tether: edit_file (taken back)"), 0);
  });
});

describe("resultText", () => {
  it("joins the text blocks", () => {
    assert.equal(
      resultText({ content: [{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }] }),
      "a\nb",
    );
  });
});

describe("mcpConfiguration", () => {
  it("quotes only what a shell needs quoted", () => {
    assert.equal(shellQuote("/usr/bin/tether"), "/usr/bin/tether");
    assert.equal(shellQuote("/w/my project"), "'/w/my project'");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
  });

  it("gives Claude Code, Codex, Cursor and VS Code the same command and arguments", () => {
    const text = mcpConfiguration("/opt/tether", "/w/my app", { ...DEFAULTS, readOnly: true });
    assert.ok(text.includes("claude mcp add tether -- /opt/tether mcp --root '/w/my app' --profile standard --read-only"));
    assert.ok(text.includes('[mcp_servers.tether]\ncommand = "/opt/tether"\nargs = ["mcp", "--root", "/w/my app", "--profile", "standard", "--read-only"]'));
    const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? "") as unknown);
    const args = ["mcp", "--root", "/w/my app", "--profile", "standard", "--read-only"];
    assert.deepEqual(blocks, [
      { mcpServers: { tether: { command: "/opt/tether", args } } },
      { servers: { tether: { type: "stdio", command: "/opt/tether", args } } },
    ]);
  });
});
