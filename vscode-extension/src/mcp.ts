// tether as an MCP server for VS Code's agent mode: one `tether mcp --root FOLDER` per workspace
// folder, run with the same binary and settings as the window's `tether lsp`.

import * as vscode from "vscode";

import { type Binary, currentSettings, type TetherServer } from "./server";
import { mcpArgs } from "./settings";

/** The id in `contributes.mcpServerDefinitionProviders`. */
export const PROVIDER_ID = "tether.mcp";

/** Provides the MCP server definitions. */
export class TetherMcpProvider implements vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> {
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly listeners: vscode.Disposable[];
  /** The binary last offered, and whether it was incompatible: a change of either changes the definitions. */
  private lastBinary: string | undefined;

  readonly onDidChangeMcpServerDefinitions = this.changed.event;

  constructor(private readonly server: TetherServer) {
    this.listeners = [
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.changed.fire();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("tether")) {
          this.changed.fire();
        }
      }),
      server.onDidChange(() => {
        const now = `${server.binary?.path ?? ""}|${String(server.incompatible)}`;
        if (now !== this.lastBinary) {
          this.lastBinary = now;
          this.changed.fire();
        }
      }),
    ];
  }

  async provideMcpServerDefinitions(): Promise<vscode.McpStdioServerDefinition[]> {
    const settings = currentSettings();
    if (this.server.incompatible) {
      // The binary speaks no protocol this extension works with: offer no MCP server with it either.
      return [];
    }
    let binary: Binary | undefined = this.server.binary;
    if (binary === undefined) {
      const found = (await this.server.findBinary(settings)).found;
      binary = found && { path: found.candidate.path, version: found.version, source: found.candidate.source };
    }
    if (binary === undefined) {
      return [];
    }
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
    return folders.map((folder) => {
      const label = folders.length === 1 ? "tether" : `tether: ${folder.name}`;
      const definition = new vscode.McpStdioServerDefinition(
        label,
        binary.path,
        mcpArgs(settings, folder.uri.fsPath),
        {},
        binary.version,
      );
      definition.cwd = folder.uri;
      return definition;
    });
  }

  dispose(): void {
    for (const d of this.listeners) {
      d.dispose();
    }
    this.changed.dispose();
  }
}

/** Registers the provider (the API exists from VS Code 1.101; `engines` asks for 1.103, the oldest tested). */
export function registerMcpProvider(provider: TetherMcpProvider): vscode.Disposable {
  return vscode.lm.registerMcpServerDefinitionProvider(PROVIDER_ID, provider);
}
