// End-to-end tests in a real VS Code with the freshly built tether ($TETHER_BIN). They run in
// order, in one window; each polls with a timeout for what it waits on, never a fixed sleep.
//
// Two setups run them (scripts/run-e2e.mjs): the extension under development with
// `tether.server.path` set to $TETHER_BIN, and the VSIX installed as a user would, with no
// setting, so that its bundled copy of $TETHER_BIN runs ($TETHER_TEST_SOURCE=bundled). scripts/test
// runs both in the newest VS Code and the first also in the oldest that `engines.vscode` admits.

import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";

import * as vscode from "vscode";

import type { GrepOutcome } from "../../src/commands";
import type { TetherApi } from "../../src/extension";
import type { CallToolResult, ToolInfo } from "../../src/protocol";
import { callTool, screenshot, text, waitFor } from "./util";

const tetherBin = process.env.TETHER_BIN ?? "";
/** Where the binary in use is expected to come from: the setting, or the VSIX's bundle. */
const expectedSource = process.env.TETHER_TEST_SOURCE === "bundled" ? "bundled" : "setting";
let api: TetherApi;
let root: string;
/** The binary the extension bundles, and the one it is expected to run. */
let bundled: string;
let expectedPath: string;

async function openFile(rel: string, content: string): Promise<vscode.TextEditor> {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  return vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
}

/** The GNU build ID of an ELF binary: it names the build, and stripping debug info keeps it. */
function buildId(file: string): string {
  const notes = execFileSync("readelf", ["-n", file], { encoding: "utf8" });
  const id = /Build ID: ([0-9a-f]+)/.exec(notes)?.[1];
  assert.ok(id, `${file} has a build ID`);
  return id;
}

describe("tether in VS Code", () => {
  before(async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext, "the extension under development is loaded");
    api = await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, "the window has a workspace folder");
    root = folder.uri.fsPath;
    bundled = path.join(ext.extensionPath, "server", "tether");
    expectedPath = expectedSource === "bundled" ? bundled : tetherBin;
  });

  it("activates and runs tether lsp with the freshly built binary", async () => {
    assert.ok(tetherBin !== "", "TETHER_BIN is set");
    await waitFor("the server to run", () => api.server.state === "running" || undefined, 120_000);
    const binary = api.server.binary;
    assert.ok(binary);
    assert.equal(binary.path, expectedPath);
    assert.equal(binary.source, expectedSource);
    const expected = execFileSync(tetherBin, ["--version"], { encoding: "utf8" }).trim();
    assert.equal(`tether ${binary.version}`, expected);
    assert.equal(buildId(binary.path), buildId(tetherBin), "the binary is the one under test");
    const client = api.server.languageClient;
    assert.ok(client !== undefined && client.isRunning());
    const caps = client.initializeResult?.capabilities as { experimental?: { tether?: { protocolVersion?: number } } };
    assert.equal(caps.experimental?.tether?.protocolVersion, 3);
    // The extension host registers the server's commands as the client starts, and tells the
    // window about them asynchronously: getCommands may lag by a moment (seen once in CI).
    const wanted = ["tether.callTool", "tether.listTools", "tether.runTool", "tether.grep", "tether.showTools"];
    const missing = async () => {
      const commands = await vscode.commands.getCommands(true);
      return wanted.filter((c) => !commands.includes(c));
    };
    await waitFor("every command to be registered", async () => ((await missing()).length === 0 ? true : undefined), 10_000)
      .catch(async () => assert.fail(`commands not registered: ${(await missing()).join(", ")}`));
  });

  it("tether.callTool read_file and grep see text typed into an editor but not saved", async () => {
    const editor = await openFile("notes.txt", "first line\n");
    const typed = "unsaved marker 4242";
    const end = editor.document.lineAt(editor.document.lineCount - 1).range.end;
    assert.ok(
      await editor.edit((b) => {
        b.insert(end, typed);
      }),
    );
    assert.ok(editor.document.isDirty);
    assert.ok(!fs.readFileSync(path.join(root, "notes.txt"), "utf8").includes(typed), "the disk has no marker");

    const read = await waitFor("read_file to show the typed text", async () => {
      const r = await callTool("read_file", { path: "notes.txt" });
      return text(r).includes(typed) ? r : undefined;
    });
    assert.equal(read.isError, false);
    assert.match(text(read), /2\tunsaved marker 4242/);

    const grep = await callTool("grep", { pattern: "marker \\d+", output_mode: "content" });
    assert.equal(grep.isError, false);
    assert.ok(text(grep).includes(`notes.txt:2:${typed}`), text(grep));
  });

  it("an edit_file lands in the TextDocument, undo restores it, and the clean document is saved", async () => {
    const original = "def greet():\n    return 'hello'\n";
    const editor = await openFile("greet.py", original);
    const doc = editor.document;
    assert.ok(!doc.isDirty);
    const before = api.server.appliedChanges;

    const result = await callTool("edit_file", {
      path: "greet.py",
      old_string: "return 'hello'",
      new_string: "return 'hello, tether'",
    });
    assert.equal(result.isError, false, text(result));
    const changed = "def greet():\n    return 'hello, tether'\n";
    await waitFor("the edit in the document", () => doc.getText() === changed);
    assert.equal(api.server.appliedChanges, before + 1, "the change is counted");
    assert.equal(api.server.lastChange, "tether: edit_file", "the server labels its edit with the tool");
    assert.equal(api.status.text, `$(check) tether $(edit) ${before + 1}`);
    assert.match(typeof api.status.tooltip === "string" ? api.status.tooltip : "", /last: tether: edit_file/);
    await waitFor("the document to be saved", () => !doc.isDirty && fs.readFileSync(doc.uri.fsPath, "utf8") === changed);
    assert.match(text(result), /applied to the open editor buffer and saved/);

    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("undo to restore the text", () => doc.getText() === original);
    await vscode.commands.executeCommand("redo");
    await waitFor("redo to bring the edit back", () => doc.getText() === changed);
  });

  it("two edits to a document no editor shows are two undo steps (issue 33)", async () => {
    const original = "alpha\nbeta\ngamma\n";
    const file = path.join(root, "behind.txt");
    fs.writeFileSync(file, original);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    await openFile("front.txt", "in front\n");
    assert.ok(
      !vscode.window.visibleTextEditors.some((e) => e.document === doc),
      "behind.txt is open but in no visible editor",
    );
    for (const [old, now] of [
      ["alpha", "ALPHA"],
      ["gamma", "GAMMA"],
    ]) {
      const result = await callTool("edit_file", { path: "behind.txt", old_string: old, new_string: now });
      assert.equal(result.isError, false, text(result));
    }
    await waitFor("both edits in the document", () => doc.getText() === "ALPHA\nbeta\nGAMMA\n");

    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("the first undo to take back the second edit only", () => doc.getText() === "ALPHA\nbeta\ngamma\n");
    await vscode.commands.executeCommand("undo");
    await waitFor("the second undo to take back the first edit", () => doc.getText() === original);
  });

  it("an edit to a document with unsaved changes leaves it unsaved", async () => {
    const editor = await openFile("draft.md", "# Draft\n\nold words\n");
    const doc = editor.document;
    assert.ok(
      await editor.edit((b) => {
        b.insert(new vscode.Position(0, 0), "<!-- typed -->\n");
      }),
    );
    const result = await waitFor("edit_file on the unsaved text", async () => {
      const r = await callTool("edit_file", { path: "draft.md", old_string: "old words", new_string: "new words" });
      return r.isError === false ? r : undefined;
    });
    assert.match(text(result), /unsaved|not saved/);
    await waitFor("the edit in the document", () => doc.getText() === "<!-- typed -->\n# Draft\n\nnew words\n");
    assert.ok(doc.isDirty);
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), "# Draft\n\nold words\n", "the disk is untouched");
  });

  it("with tether.save set to never, the server restarts and a changed clean document stays unsaved", async () => {
    const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("tether");
    const restarted = async (save: string, old: unknown): Promise<void> => {
      await waitFor(
        `a restart with save ${save}`,
        () => api.server.state === "running" && api.server.settings.save === save && api.server.languageClient !== old,
        60_000,
      );
    };
    let old = api.server.languageClient;
    await config().update("save", "never", vscode.ConfigurationTarget.Global);
    try {
      await restarted("never", old);
      const editor = await openFile("policy.txt", "alpha\n");
      const doc = editor.document;
      const result = await callTool("edit_file", { path: "policy.txt", old_string: "alpha", new_string: "beta" });
      assert.equal(result.isError, false, text(result));
      // The server read the policy from initializationOptions: it says why it did not save.
      assert.match(text(result), /not saved \(saving is off\)/);
      await waitFor("the edit in the document", () => doc.getText() === "beta\n");
      assert.ok(doc.isDirty, "the document is left unsaved");
      assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), "alpha\n");
      await doc.save();
    } finally {
      old = api.server.languageClient;
      await config().update("save", undefined, vscode.ConfigurationTarget.Global);
      await restarted("clean", old);
    }
  });

  it("a tether.server.path that does not work is reported and the next binary in the order is used", async () => {
    const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("tether");
    const missing = path.join(root, "no-such-tether");
    let old = api.server.languageClient;
    // Machine-overridable: a workspace value overrides the machine settings the runner wrote.
    await config().update("server.path", missing, vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor(
        "a restart after the lookup",
        () => api.server.settings.serverPath === missing && (api.server.state === "running" || api.server.state === "notFound"),
        60_000,
      );
      assert.deepEqual(api.server.lookup?.failures[0], {
        candidate: { path: missing, source: "setting" },
        reason: "no such file",
      });
      if (fs.existsSync(bundled)) {
        // scripts/test packages the VSIX first, which puts the binary in the extension folder.
        await waitFor("the bundled binary to run", () => api.server.state === "running", 60_000);
        assert.equal(api.server.binary?.source, "bundled");
        assert.equal(api.server.binary.path, bundled);
      } else {
        assert.equal(api.server.state, "notFound");
        assert.equal(api.server.binary, undefined);
      }
    } finally {
      old = api.server.languageClient;
      await config().update("server.path", undefined, vscode.ConfigurationTarget.Workspace);
      await waitFor(
        "a restart with the binary under test",
        () =>
          api.server.state === "running" &&
          api.server.binary?.source === expectedSource &&
          api.server.languageClient !== old,
        60_000,
      );
    }
  });

  it("Copy MCP Configuration gives the snippets for this folder", async () => {
    const copied = await vscode.commands.executeCommand<string | undefined>("tether.copyMcpConfiguration");
    assert.ok(copied);
    assert.ok(copied.includes(`claude mcp add tether -- ${expectedPath} mcp --root ${root} --profile standard`), copied);
    assert.ok(copied.includes("[mcp_servers.tether]"), copied);
    assert.ok(copied.includes('"mcpServers"'), copied);
  });

  it("the MCP server definition starts tether mcp, which answers tools/list", async () => {
    const contributed = (
      vscode.extensions.getExtension("tether.tether")?.packageJSON as {
        contributes: { mcpServerDefinitionProviders: { id: string }[] };
      }
    ).contributes.mcpServerDefinitionProviders;
    assert.deepEqual(
      contributed.map((p) => p.id),
      ["tether.mcp"],
    );
    const definitions = await api.mcp.provideMcpServerDefinitions();
    assert.equal(definitions.length, 1);
    const def = definitions[0];
    assert.ok(def);
    assert.equal(def.label, "tether");
    assert.equal(def.command, expectedPath);
    assert.deepEqual(def.args.slice(0, 3), ["mcp", "--root", root]);
    assert.equal(def.cwd?.fsPath, root);

    const child = spawn(def.command, def.args, { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    try {
      const lines = readline.createInterface({ input: child.stdout });
      const pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
      lines.on("line", (line) => {
        const msg = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
        if (msg.id !== undefined) {
          pending.get(msg.id)?.(msg);
        }
      });
      let nextId = 1;
      const request = (method: string, params: unknown): Promise<{ result?: unknown; error?: unknown }> => {
        const id = nextId++;
        const answer = new Promise<{ result?: unknown; error?: unknown }>((resolve, reject) => {
          pending.set(id, resolve);
          setTimeout(() => {
            reject(new Error(`no answer to ${method} within 30 s`));
          }, 30_000);
        });
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
        return answer;
      };
      const init = await request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "tether-vscode-test", version: "0" },
      });
      assert.ok(init.result, JSON.stringify(init));
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
      const list = await request("tools/list", {});
      const names = (list.result as { tools: ToolInfo[] }).tools.map((t) => t.name);
      for (const name of ["read_file", "grep", "edit_file"]) {
        assert.ok(names.includes(name), `tools/list has ${name}: ${names.join(", ")}`);
      }
      const call = await request("tools/call", { name: "read_file", arguments: { path: "greet.py" } });
      assert.match(JSON.stringify(call.result), /hello, tether/);
    } finally {
      child.kill();
    }
  });

  it("Show Tools lists the server's tools", async () => {
    const shown = vscode.commands.executeCommand<ToolInfo[] | undefined>("tether.showTools");
    let listed: ToolInfo[] | undefined;
    void shown.then((t) => {
      listed = t;
    });
    // The quick pick waits for a choice: close it once it is open.
    const tools = await waitFor("Show Tools to finish", async () => {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      return listed;
    });
    assert.ok(tools.some((t) => t.name === "edit_file"));
  });

  it("Grep from executeCommand lists matches in unsaved buffers and opens the chosen one", async () => {
    const outcome = vscode.commands.executeCommand<GrepOutcome | undefined>("tether.grep", "marker \\d+");
    let done: GrepOutcome | undefined;
    void outcome.then((o) => {
      done = o;
    });
    // The quick pick opens once the search is back; accept its first item.
    const result = await waitFor("Grep to open the match", async () => {
      await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
      return done;
    });
    assert.deepEqual(
      result.matches.map((m) => `${m.path}:${m.line}`),
      ["notes.txt:2"],
    );
    assert.deepEqual(result.picked, { path: "notes.txt", line: 2, text: "unsaved marker 4242" });
    const editor = await waitFor("the match's editor", () => {
      const e = vscode.window.activeTextEditor;
      return e?.document.uri.fsPath === path.join(root, "notes.txt") ? e : undefined;
    });
    assert.equal(editor.document.getText(editor.selection), "marker 4242");
    assert.equal(editor.selection.start.line, 1);
  });

  it("Run Tool from executeCommand shows the result in an editor", async () => {
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(root, "greet.py")), {
      viewColumn: vscode.ViewColumn.One,
    });
    const result = await vscode.commands.executeCommand<CallToolResult | undefined>("tether.runTool", "grep", {
      pattern: "hello|marker",
      output_mode: "content",
    });
    assert.ok(result);
    assert.equal(result.isError, false);
    const editor = await waitFor("the result editor", () => {
      const e = vscode.window.activeTextEditor;
      return e?.document.uri.scheme === "tether-result" ? e : undefined;
    });
    const shown = editor.document.getText();
    assert.ok(shown.startsWith('tether grep {"pattern":"hello|marker","output_mode":"content"}'), shown);
    assert.ok(shown.includes("greet.py:2:    return 'hello, tether'"), shown);
    assert.ok(shown.includes("notes.txt:2:unsaved marker 4242"), shown);
    // The picture for the README: the changed file, the tool result, the status bar.
    await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar");
    await vscode.commands.executeCommand("workbench.action.closePanel");
    await screenshot("screenshot");
  });

  it("Restart Server starts a new tether lsp that serves the same buffers", async () => {
    const old = api.server.languageClient;
    await vscode.commands.executeCommand("tether.restartServer");
    await waitFor("the new server to run", () => api.server.state === "running" && api.server.languageClient !== old, 60_000);
    const read = await waitFor("read_file on the new server", async () => {
      const r = await callTool("read_file", { path: "notes.txt" });
      return text(r).includes("unsaved marker 4242") ? r : undefined;
    });
    assert.equal(read.isError, false);
  });
});
