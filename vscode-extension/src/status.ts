// The status bar item: the server's state and the number of changes tether applied in this
// session. Clicking it shows the log.

import * as vscode from "vscode";

import type { TetherServer } from "./server";

const ICONS = {
  starting: "$(loading~spin)",
  running: "$(check)",
  stopped: "$(circle-slash)",
  failed: "$(error)",
  notFound: "$(error)",
} as const;

const WORDS = {
  starting: "starting",
  running: "running",
  stopped: "stopped",
  failed: "failed to start",
  notFound: "no tether binary found",
} as const;

/** Creates the item and keeps it in step with the server. */
export function createStatusItem(server: TetherServer): { item: vscode.StatusBarItem; disposable: vscode.Disposable } {
  const item = vscode.window.createStatusBarItem("tether.status", vscode.StatusBarAlignment.Left, 0);
  item.name = "tether";
  item.command = "tether.showLog";
  const update = (): void => {
    const state = server.state;
    const n = server.appliedChanges;
    item.text = `${ICONS[state]} tether${state === "running" || n > 0 ? ` $(edit) ${n}` : ""}`;
    const lines = [`tether lsp: ${server.incompatible ? "stopped, the binary is incompatible" : WORDS[state]}`];
    if (server.binary !== undefined) {
      lines.push(`${server.binary.path} (tether ${server.binary.version}, ${server.binary.source})`);
    }
    if (server.problem !== undefined && state !== "running") {
      lines.push(server.problem);
    }
    if (server.versionNote !== undefined && state === "running") {
      lines.push(`Version mismatch: ${server.versionNote}`);
    }
    const s = server.settings;
    lines.push(`profile ${s.profile}${s.readOnly ? ", read-only" : ""}, save ${s.save}`);
    lines.push(`${n} ${n === 1 ? "change" : "changes"} applied in this session`);
    if (server.lastChange !== undefined) {
      lines.push(`last: ${server.lastChange}`);
    }
    lines.push("", "Click to show the log");
    item.tooltip = lines.join("\n");
    item.backgroundColor =
      state === "failed" || state === "notFound" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    item.show();
  };
  update();
  const listener = server.onDidChange(update);
  return { item, disposable: vscode.Disposable.from(item, listener) };
}
