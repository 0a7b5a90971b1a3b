// The commands: Show Tools, Run Tool, Grep, Restart Server, Download Server, Show Log, Copy MCP Configuration,
// and the change journal's (journal.ts). Run Tool and Grep take optional arguments so that they
// can be driven from `executeCommand`.

import * as path from "node:path";

import * as vscode from "vscode";

import { parseGrepContent, type GrepMatch } from "./grepResults";
import { registerJournal } from "./journal";
import { mcpConfiguration } from "./mcpConfig";
import { argumentsTemplate, type CallToolResult, resultText, type ToolInfo } from "./protocol";
import { currentSettings, type TetherServer } from "./server";

/** The scheme of the read-only documents that show tool results. */
export const RESULT_SCHEME = "tether-result";

/** Read-only documents holding tool results, so closing one never asks to save it. */
class ResultDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 1;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /** Opens a new result document beside the active editor. */
  async show(title: string, text: string): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${this.next++}/${title}` });
    this.texts.set(uri.toString(), text);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  }
}

/** What Grep answers when driven from `executeCommand`. */
export interface GrepOutcome {
  readonly matches: GrepMatch[];
  readonly picked?: GrepMatch;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Registers every command. */
export function registerCommands(server: TetherServer): vscode.Disposable {
  const results = new ResultDocuments();

  const showTools = async (): Promise<ToolInfo[] | undefined> => {
    const tools = await server.listTools();
    const pick = await vscode.window.showQuickPick(
      tools.map((t) => ({
        label: t.name,
        description: t.annotations?.readOnlyHint === true ? "read-only" : "changes files",
        detail: t.description,
        tool: t,
      })),
      { title: `tether tools (${server.settings.profile})`, placeHolder: "Pick a tool to run it", matchOnDetail: true },
    );
    if (pick !== undefined) {
      await runTool(pick.tool.name);
    }
    return tools;
  };

  const runTool = async (name?: string, args?: Record<string, unknown>): Promise<CallToolResult | undefined> => {
    let tool: ToolInfo | undefined;
    if (name === undefined || args === undefined) {
      const tools = await server.listTools();
      if (name === undefined) {
        const pick = await vscode.window.showQuickPick(
          tools.map((t) => ({ label: t.name, detail: t.description, tool: t })),
          { title: "tether: Run Tool", placeHolder: "Tool", matchOnDetail: true },
        );
        if (pick === undefined) {
          return undefined;
        }
        tool = pick.tool;
      } else {
        tool = tools.find((t) => t.name === name);
        if (tool === undefined) {
          void vscode.window.showErrorMessage(`tether: no tool named ${name}`);
          return undefined;
        }
      }
    }
    const toolName = name ?? tool?.name ?? "";
    if (args === undefined) {
      const input = await vscode.window.showInputBox({
        title: `tether: ${toolName} arguments (JSON)`,
        value: tool === undefined ? "{}" : argumentsTemplate(tool),
        prompt: tool?.description?.split("\n")[0],
        validateInput: (value) => {
          try {
            const parsed: unknown = JSON.parse(value);
            return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
              ? undefined
              : "a JSON object, like {\"path\": \"src/main.rs\"}";
          } catch (e) {
            return `not JSON: ${errorText(e)}`;
          }
        },
      });
      if (input === undefined) {
        return undefined;
      }
      args = JSON.parse(input) as Record<string, unknown>;
    }
    const result = await server.callTool({ tool: toolName, arguments: args, interactive: true });
    const header = `tether ${toolName} ${JSON.stringify(args)}${result.isError === true ? "  (error)" : ""}`;
    await results.show(`${toolName} result`, `${header}\n\n${resultText(result)}\n`);
    return result;
  };

  const grep = async (pattern?: string): Promise<GrepOutcome | undefined> => {
    if (pattern === undefined) {
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
      pattern = await vscode.window.showInputBox({
        title: "tether: Grep (unsaved buffers included)",
        prompt: "Regular expression (Rust regex syntax)",
        value: selected.includes("\n") ? "" : selected.replace(/[()[\]{}.*+?|\\^$]/g, "\\$&"),
      });
      if (pattern === undefined || pattern === "") {
        return undefined;
      }
    }
    // Interactive: the server shows a failure (a bad pattern) to the user itself.
    const result = await server.callTool({
      tool: "grep",
      arguments: { pattern, output_mode: "content" },
      interactive: true,
    });
    const text = resultText(result);
    if (result.isError === true) {
      return { matches: [] };
    }
    const matches = parseGrepContent(text);
    if (matches.length === 0) {
      void vscode.window.showInformationMessage(`tether grep: no matches for ${pattern}`);
      return { matches };
    }
    const pick = await vscode.window.showQuickPick(
      matches.map((m) => ({ label: `${m.path}:${m.line}`, description: m.text.trim(), match: m })),
      { title: `tether grep ${pattern}`, matchOnDescription: true },
    );
    if (pick === undefined) {
      return { matches };
    }
    await openMatch(pick.match, pattern);
    return { matches, picked: pick.match };
  };

  const copyMcpConfiguration = async (): Promise<string | undefined> => {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
    const folder =
      folders.length <= 1 ? folders[0] : await vscode.window.showWorkspaceFolderPick({ placeHolder: "For which folder?" });
    if (folder === undefined) {
      void vscode.window.showErrorMessage("tether: open a folder first; MCP servers serve a folder");
      return undefined;
    }
    const binary = server.binary;
    const command = binary === undefined || binary.source === "PATH" ? "tether" : binary.path;
    const text = mcpConfiguration(command, folder.uri.fsPath, currentSettings());
    await vscode.env.clipboard.writeText(text);
    // Not awaited: the message's promise settles only when the user closes it.
    void vscode.window
      .showInformationMessage("tether: MCP configuration for Claude Code, Codex and Cursor copied.", "Open")
      .then(async (choice) => {
        if (choice === "Open") {
          const doc = await vscode.workspace.openTextDocument({ content: text, language: "markdown" });
          await vscode.window.showTextDocument(doc);
        }
      });
    return text;
  };

  const guard =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R | undefined> => {
      try {
        return await f(...args);
      } catch (e) {
        server.log.appendLine(`[tether] ${errorText(e)}`);
        void vscode.window.showErrorMessage(`tether: ${errorText(e)}`);
        return undefined;
      }
    };

  return vscode.Disposable.from(
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, results),
    vscode.commands.registerCommand("tether.showTools", guard(showTools)),
    vscode.commands.registerCommand("tether.runTool", guard(runTool)),
    vscode.commands.registerCommand("tether.grep", guard(grep)),
    vscode.commands.registerCommand("tether.restartServer", guard(() => server.restart())),
    vscode.commands.registerCommand("tether.installServer", guard(() => server.downloadServer())),
    vscode.commands.registerCommand("tether.showLog", () => {
      server.log.show(true);
    }),
    vscode.commands.registerCommand("tether.copyMcpConfiguration", guard(copyMcpConfiguration)),
    registerJournal(server, guard),
  );
}

/** Opens a match's file (its open buffer, if any) with the match selected. */
async function openMatch(match: GrepMatch, pattern: string): Promise<void> {
  const root = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file")?.uri.fsPath ?? "";
  const file = path.isAbsolute(match.path) ? match.path : path.join(root, match.path);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const line = Math.min(match.line - 1, doc.lineCount - 1);
  const text = doc.lineAt(line).text;
  let start = 0;
  let end = 0;
  try {
    // Rust regex syntax is close enough to JavaScript's to find the match in most lines.
    const m = new RegExp(pattern).exec(text);
    if (m !== null) {
      start = m.index;
      end = m.index + m[0].length;
    }
  } catch {
    // A pattern JavaScript cannot read: the cursor goes to the start of the line.
  }
  const selection = new vscode.Selection(line, start, line, end);
  await vscode.window.showTextDocument(doc, { selection });
}
