// End-to-end tests of the editor's knowledge for the assistant, in a real VS Code with its
// built-in TypeScript support (the `vscode.typescript-language-features` extension that
// code-server ships, with its own tsserver): the problems TypeScript reports reach tether's
// `diagnostics` tool and the results of changes; `definition`, `references`, `symbols`, `hover`
// and `rename_symbol` are answered by TypeScript through VS Code; `editor_context` sees a
// selection made through the API. They run after extension.test.ts, in the same window.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import { editorContext, languageRequest, type LanguageRequestResult } from "../../src/knowledge";
import type { CallToolResult } from "../../src/protocol";
import { callTool, GREET, MAIN, openTypeScriptProject, text, waitFor } from "./util";

interface Problem {
  severity: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  source?: string;
  code?: string;
  message: string;
}

interface FileChange {
  path: string;
  version?: number;
  status: string;
  introduced?: Problem[];
  resolved?: Problem[];
  errors?: number;
  warnings?: number;
  /** A `pending` change's latest report, which may predate the change. */
  latest_report?: { may_predate_the_change: boolean; errors: number; warnings: number; new: Problem[]; gone: Problem[] };
}

interface Place {
  path: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  text: string;
}

interface SymbolItem {
  name: string;
  kind: string;
  path: string;
  line: number;
  children?: SymbolItem[];
}

/** The JSON a tool answered with (its first text item). */
function json(result: CallToolResult): unknown {
  assert.equal(result.isError, false, text(result));
  return JSON.parse(result.content[0]?.text ?? "");
}

/** The `diagnostics_after_change` item of a change's result. */
function afterChange(result: CallToolResult): FileChange[] {
  for (const item of result.content) {
    if (item.text?.startsWith('{"diagnostics_after_change"') === true) {
      return (JSON.parse(item.text) as { diagnostics_after_change: FileChange[] }).diagnostics_after_change;
    }
  }
  assert.fail(`no diagnostics_after_change in ${JSON.stringify(result.content)}`);
}

describe("the editor's knowledge for the assistant", () => {
  let api: TetherApi;
  let root: string;
  let greet: vscode.TextDocument;
  let main: vscode.TextDocument;

  const file = (rel: string): string => path.join(root, rel);

  before(async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    api = await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    root = folder.uri.fsPath;
    await waitFor("the server to run", () => api.server.state === "running", 60_000);
    ({ greet, main } = await openTypeScriptProject(root));
  });

  it("answers tether/languageRequest and tether/editorContext in LSP's shapes", async () => {
    // The handlers as the server reaches them, called directly: what the extension sends tether.
    const client = api.server.languageClient;
    assert.ok(client);
    const uri = (rel: string): string => client.code2ProtocolConverter.asUri(vscode.Uri.file(file(rel)));
    const ask = (method: string, params: unknown): Promise<LanguageRequestResult> => languageRequest(client, { method, params });
    const at = (rel: string, line: number, character: number) => ({ textDocument: { uri: uri(rel) }, position: { line, character } });
    const range = (line: number, a: number, b: number) => ({ start: { line, character: a }, end: { line, character: b } });

    const definition = await ask("textDocument/definition", at("ts/main.ts", 2, 32));
    assert.deepEqual(definition, {
      positionEncoding: "utf-16",
      servers: ["vscode"],
      complete: true,
      result: [{ uri: uri("ts/greet.ts"), range: range(0, 16, 21) }],
    });
    const references = await ask("textDocument/references", { ...at("ts/greet.ts", 0, 16), context: { includeDeclaration: false } });
    assert.deepEqual(
      (references.result as { uri: string; range: unknown }[]).map((l) => [l.uri, l.range]),
      [
        [uri("ts/main.ts"), range(0, 9, 14)],
        [uri("ts/main.ts"), range(2, 31, 36)],
      ],
    );
    const hover = await ask("textDocument/hover", at("ts/main.ts", 2, 32));
    const contents = (hover.result as { contents: { kind: string; value: string } }).contents;
    assert.equal(contents.kind, "markdown");
    assert.match(contents.value, /^```typescript\n\(alias\) greet\(name: string\): string\n/);
    const outline = await ask("textDocument/documentSymbol", { textDocument: { uri: uri("ts/greet.ts") } });
    assert.deepEqual(outline.result, [
      { name: "greet", kind: 12, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 1 } }, selectionRange: range(0, 16, 21) },
    ]);
    const search = await ask("workspace/symbol", { query: "greet" });
    assert.ok(
      (search.result as { name: string; kind: number; location: { uri: string } }[]).some(
        // TypeScript names a function `greet()` in a workspace search.
        (s) => s.name === "greet()" && s.kind === 12 && s.location.uri === uri("ts/greet.ts"),
      ),
      JSON.stringify(search.result),
    );
    const rename = await ask("textDocument/rename", { ...at("ts/greet.ts", 0, 16), newName: "welcome" });
    const changes = (rename.result as { changes: Record<string, { range: unknown; newText: string }[]> }).changes;
    assert.deepEqual(Object.keys(changes).sort(), [uri("ts/greet.ts"), uri("ts/main.ts")].sort());
    assert.equal(changes[uri("ts/main.ts")]?.length, 2);
    // TypeScript refuses to rename the standard library's `string`: an error with its message.
    await assert.rejects(ask("textDocument/rename", { ...at("ts/greet.ts", 0, 30), newName: "x" }), /cannot rename/i);
    // A language nobody serves: no server, rather than "nothing found".
    fs.writeFileSync(file("ts/notes.txt"), "greet\n");
    const none = await ask("textDocument/definition", at("ts/notes.txt", 0, 1));
    assert.deepEqual([none.servers, none.result], [[], []]);

    const editor = await vscode.window.showTextDocument(main, { viewColumn: vscode.ViewColumn.One });
    editor.selection = new vscode.Selection(2, 38, 2, 31);
    const context = editorContext(client);
    const shown = context.editors.find((e) => e.uri === uri("ts/main.ts"));
    assert.deepEqual(shown?.selections, [{ range: range(2, 31, 38), text: "greet(\"" }]);
    assert.equal(shown.active, true);
    assert.equal(shown.version, main.version);
  });

  it("an edit that introduces a type error answers with it, and diagnostics lists it", async () => {
    // The hint VS Code had before tether started (pushed at start) or since.
    const hints = await waitFor("diagnostics to list main.ts's hint", async () => {
      const r = json(await callTool("diagnostics", { path: "ts/main.ts" })) as { files: { path: string; problems: Problem[] }[] };
      return r.files[0]?.problems.length === 1 ? r.files[0] : undefined;
    });
    assert.equal(hints.path, "ts/main.ts");
    assert.deepEqual(
      hints.problems.map((p) => [p.severity, p.line, p.code, p.source]),
      [["hint", 4, "6133", "ts"]],
    );

    const broken = await callTool("edit_file", {
      path: "ts/main.ts",
      old_string: "message: string",
      new_string: "message: number",
    });
    assert.equal(broken.isError, false, text(broken));
    const [change] = afterChange(broken);
    assert.ok(change, JSON.stringify(broken.content));
    assert.equal(change.path, "ts/main.ts");
    // VS Code's API does not say which version a report is for; the extension asks TypeScript for
    // the edited text's diagnostics, whole for its version: the change's report is `settled`.
    assert.equal(change.status, "settled", JSON.stringify(change));
    assert.equal(change.errors, 1, JSON.stringify(change));
    const introduced = change.introduced?.find((p) => p.code === "2322");
    assert.ok(introduced, JSON.stringify(change));
    assert.equal(introduced.severity, "error");
    assert.equal(introduced.source, "ts");
    assert.equal(introduced.line, 3);
    assert.equal(introduced.column, 14);
    assert.match(introduced.message, /Type 'string' is not assignable to type 'number'/);
    assert.equal(change.introduced?.length, 1, "the hint VS Code showed before is not taken for a new problem");

    const listed = json(await callTool("diagnostics", { path: "ts", severity: "error" })) as {
      files: { path: string; problems: Problem[] }[];
    };
    assert.deepEqual(
      listed.files.map((f) => [f.path, f.problems.map((p) => `${p.line}:${p.column} ${p.code ?? ""}`)]),
      [["ts/main.ts", ["3:14 2322"]]],
    );

    const fixed = await callTool("edit_file", {
      path: "ts/main.ts",
      old_string: "message: number",
      new_string: "message: string",
    });
    const [after] = afterChange(fixed);
    assert.ok(after);
    assert.equal(after.status, "settled", JSON.stringify(after));
    assert.equal(after.errors, 0, JSON.stringify(after));
    assert.deepEqual(
      after.resolved?.map((p) => p.code),
      ["2322"],
    );
  });

  it("edits a turn apart each answer with what they introduced or resolved, whatever VS Code reported between them", async () => {
    // Between an assistant's edits, VS Code's own TypeScript reports come in parts (the syntax of
    // the new text beside the semantics of the old, for a moment). None of those may stand for the
    // text the next edit starts from: each edit's answer names its own problem exactly.
    // The pauses step across the time VS Code's reports take to come, so that some edits land
    // while one is still arriving in parts.
    for (let i = 0; i < 12; i++) {
      await new Promise((r) => setTimeout(r, 150 + 30 * i));
      const introducing = i % 2 === 0;
      const [from, to] = introducing ? ["message: string", "message: number"] : ["message: number", "message: string"];
      const r = await callTool("edit_file", { path: "ts/main.ts", old_string: from, new_string: to });
      assert.equal(r.isError, false, text(r));
      const [change] = afterChange(r);
      assert.ok(change, JSON.stringify(r.content));
      assert.equal(change.status, "settled", `edit ${i}: ${JSON.stringify(change)}`);
      assert.deepEqual(
        [change.introduced?.map((p) => p.code), change.resolved?.map((p) => p.code)],
        introducing ? [["2322"], []] : [[], ["2322"]],
        `edit ${i}: ${JSON.stringify(change)}`,
      );
    }
  });

  it("definition, references, symbols and hover are TypeScript's answers", async () => {
    const definition = json(await callTool("definition", { path: "ts/main.ts", line: 3, symbol: "greet" })) as { locations: Place[] };
    assert.deepEqual(
      definition.locations.map((l) => [l.path, l.line, l.column, l.end_column]),
      [["ts/greet.ts", 1, 17, 22]],
    );
    assert.equal(definition.locations[0]?.text, "export function greet(name: string): string {");

    const references = json(await callTool("references", { path: "ts/greet.ts", line: 1, symbol: "greet" })) as { locations: Place[] };
    assert.deepEqual(references.locations.map((l) => `${l.path}:${l.line}:${l.column}`).sort(), [
      "ts/greet.ts:1:17",
      "ts/main.ts:1:10",
      "ts/main.ts:3:32",
    ]);
    const withoutDeclaration = json(
      await callTool("references", { path: "ts/greet.ts", line: 1, symbol: "greet", include_declaration: false }),
    ) as { locations: Place[] };
    assert.ok(
      !withoutDeclaration.locations.some((l) => l.path === "ts/greet.ts"),
      JSON.stringify(withoutDeclaration.locations),
    );

    const outline = json(await callTool("symbols", { path: "ts/greet.ts" })) as { symbols: SymbolItem[] };
    assert.deepEqual(
      outline.symbols.map((s) => [s.name, s.kind, s.line]),
      [["greet", "function", 1]],
    );
    const search = json(await callTool("symbols", { query: "greet" })) as { symbols: SymbolItem[] };
    assert.ok(
      search.symbols.some((s) => s.name === "greet()" && s.path === "ts/greet.ts" && s.kind === "function"),
      JSON.stringify(search.symbols),
    );

    const hover = json(await callTool("hover", { path: "ts/main.ts", line: 3, symbol: "greet" })) as { contents: string };
    assert.match(hover.contents, /greet\(name: string\): string/);
  });

  it("rename_symbol renames across two files, one of them dirty, one undo step in each", async () => {
    const editor = await vscode.window.showTextDocument(main, { viewColumn: vscode.ViewColumn.One });
    assert.ok(
      await editor.edit((b) => {
        b.insert(new vscode.Position(3, 0), "// typed, not saved\n");
      }),
    );
    const dirty = main.getText();
    assert.ok(main.isDirty && !greet.isDirty);
    const result = await callTool("rename_symbol", { path: "ts/greet.ts", line: 1, symbol: "greet", new_name: "welcome" });
    assert.equal(result.isError, false, text(result));
    assert.match(text(result), /renamed `greet` to `welcome`: 3 edits in 2 files/);
    await waitFor("the rename in both documents", () => greet.getText().includes("function welcome(") && main.getText().includes('welcome("tether")'));
    assert.equal(greet.getText(), GREET.replace("greet", "welcome"));
    assert.equal(main.getText(), dirty.replaceAll("greet }", "welcome }").replace('greet("', 'welcome("'));
    await waitFor("the clean document to be saved", () => !greet.isDirty);
    assert.ok(main.isDirty, "the dirty document stays unsaved");

    await vscode.window.showTextDocument(main, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("undo to restore main.ts", () => main.getText() === dirty);
    await vscode.window.showTextDocument(greet, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("undo to restore greet.ts", () => greet.getText() === GREET);
    // Back to the files as they were, for the tests that follow.
    await greet.save();
    await vscode.window.showTextDocument(main, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("undo to take the typing back", () => !main.isDirty && main.getText() === MAIN);
  });

  it("a rename TypeScript refuses is an error with its message", async () => {
    const result = await callTool("rename_symbol", { path: "ts/greet.ts", line: 1, symbol: "string", new_name: "x" });
    assert.equal(result.isError, true, text(result));
    assert.match(text(result), /cannot rename/i);
  });

  it("editor_context returns a selection made through the VS Code API", async () => {
    const editor = await vscode.window.showTextDocument(greet, { viewColumn: vscode.ViewColumn.One });
    editor.selection = new vscode.Selection(0, 16, 0, 21);
    const context = json(await callTool("editor_context", {})) as {
      active: string | null;
      open: { path: string; dirty: boolean }[];
      editors: {
        path: string;
        active: boolean;
        version: number;
        selections: { line: number; column: number; end_line: number; end_column: number; text: string }[];
        visible: { line: number; end_line: number }[];
      }[];
    };
    assert.equal(context.active, "ts/greet.ts", JSON.stringify(context));
    const shown = context.editors.find((e) => e.path === "ts/greet.ts");
    assert.ok(shown, JSON.stringify(context));
    assert.equal(shown.active, true);
    assert.equal(shown.version, greet.version);
    assert.deepEqual(shown.selections, [{ line: 1, column: 17, end_line: 1, end_column: 22, text: "greet" }]);
    assert.equal(shown.visible[0]?.line, 1);
    assert.ok(context.open.some((o) => o.path === "ts/main.ts"), JSON.stringify(context.open));
  });

  it("with tether.shareEditorContext off, the capability is not announced and editor_context says so; a new server gets every problem at its start", async () => {
    const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("tether");
    const restarted = async (share: boolean, old: unknown): Promise<void> => {
      await waitFor(
        `a restart with shareEditorContext ${String(share)}`,
        () =>
          api.server.state === "running" &&
          api.server.settings.shareEditorContext === share &&
          api.server.languageClient !== old,
        60_000,
      );
    };
    let old = api.server.languageClient;
    await config().update("shareEditorContext", false, vscode.ConfigurationTarget.Global);
    try {
      await restarted(false, old);
      const result = await callTool("editor_context", {});
      assert.equal(result.isError, true, text(result));
      assert.equal((JSON.parse(text(result)) as { error: string }).error, "unsupported");
      // The other capabilities are still there, and the new server has every problem VS Code
      // knows, pushed at its start (TypeScript reports main.ts's hint only once).
      const outline = await callTool("symbols", { path: "ts/greet.ts" });
      assert.equal(outline.isError, false, text(outline));
      const listed = json(await callTool("diagnostics", { path: "ts/main.ts" })) as { files: { problems: Problem[] }[] };
      assert.deepEqual(
        listed.files.flatMap((f) => f.problems.map((p) => p.code)),
        ["6133"],
      );
    } finally {
      old = api.server.languageClient;
      await config().update("shareEditorContext", undefined, vscode.ConfigurationTarget.Global);
      await restarted(true, old);
    }
  });
});
