// The extension's entry point: starts `tether lsp` for the window, registers the commands, the
// status bar item and the MCP server definition provider.

import * as vscode from "vscode";

import { registerCommands } from "./commands";
import { registerMcpProvider, TetherMcpProvider } from "./mcp";
import { ReviewController } from "./review";
import { currentSettings, TetherServer } from "./server";
import { needsRestart, REVIEW_TIMEOUT_MS } from "./settings";
import { createStatusItem } from "./status";

/** What `activate` returns: the extension's parts, for other extensions and for the tests. */
export interface TetherApi {
  readonly server: TetherServer;
  readonly mcp: TetherMcpProvider;
  /** The status bar item. */
  readonly status: vscode.StatusBarItem;
  /** Review before apply: the proposals waiting for the user (the `tether.review.*` commands decide them). */
  readonly review: ReviewController;
}

export function activate(context: vscode.ExtensionContext): TetherApi {
  const log = vscode.window.createOutputChannel("tether");
  const trace = vscode.window.createOutputChannel("tether LSP trace");
  const review = new ReviewController(() => currentSettings().review.timeout ?? REVIEW_TIMEOUT_MS);
  const version = (context.extension.packageJSON as { version: string }).version;
  const server = new TetherServer(context.extensionPath, log, trace, review, context.globalStorageUri.fsPath, version);
  const mcp = new TetherMcpProvider(server);
  const status = createStatusItem(server);
  context.subscriptions.push(
    log,
    trace,
    review,
    server,
    mcp,
    status.disposable,
    registerCommands(server),
    registerMcpProvider(mcp),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("tether")) {
        return;
      }
      if (needsRestart(server.settings, currentSettings())) {
        log.appendLine("[tether] settings changed; restarting the server");
        void server.restart();
      } else if (e.affectsConfiguration("tether.review")) {
        void server.sendReview();
      }
    }),
  );
  void server.start();
  return { server, mcp, status: status.item, review };
}

export function deactivate(): void {
  // The subscriptions stop the server.
}
