// Helpers the end-to-end suites share.

import * as vscode from "vscode";

import type { CallToolResult } from "../../src/protocol";

/** Polls `check` until it returns something other than undefined or false. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) {
        return v;
      }
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what} (last: ${String(last)})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of a tool result, its text items joined. */
export function text(result: CallToolResult): string {
  return result.content.map((c) => c.text ?? "").join("\n");
}

/** Runs a tool through the language client, as an assistant's call through tether would. */
export async function callTool(tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
  // The command the language client registered for the server's `tether.callTool`.
  return vscode.commands.executeCommand<CallToolResult>("tether.callTool", { tool, arguments: args });
}
