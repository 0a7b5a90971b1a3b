// Helpers the end-to-end suites share.

import * as assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
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

/** Asks the runner for a screenshot of the window and waits until it is taken. */
export async function screenshot(name: string): Promise<void> {
  const dir = process.env.TETHER_TEST_HANDSHAKE;
  if (dir === undefined) {
    throw new Error("TETHER_TEST_HANDSHAKE is not set: the runner sets it");
  }
  fs.writeFileSync(path.join(dir, `${name}.request`), "");
  await waitFor(`screenshot ${name}`, () => fs.existsSync(path.join(dir, `${name}.png`)), 60_000);
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

/** A small TypeScript project in `ts/`: one module and one that imports it. */
const TSCONFIG = `{ "compilerOptions": { "strict": true, "target": "ES2020", "module": "commonjs" }, "include": ["*.ts"] }\n`;
/** `ts/greet.ts`. */
export const GREET = `export function greet(name: string): string {
  return "hello, " + name;
}
`;
/**
 * `ts/main.ts`, which imports `greet`. TypeScript reports its unused function (a hint), so that
 * tether has heard of the file before a test changes it: VS Code's TypeScript support reports
 * nothing for a file that has never had a problem.
 */
export const MAIN = `import { greet } from "./greet";

export const message: string = greet("tether");
function unused(): void {}
`;

/**
 * Writes the TypeScript project under `root/ts`, opens both files in editors (main.ts in front)
 * and waits until VS Code's TypeScript support has loaded the project: it reports main.ts's hint
 * and answers a hover on `greet` in main.ts, which needs greet.ts.
 */
export async function openTypeScriptProject(root: string): Promise<{ greet: vscode.TextDocument; main: vscode.TextDocument }> {
  const dir = path.join(root, "ts");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "tsconfig.json"), TSCONFIG);
  fs.writeFileSync(path.join(dir, "greet.ts"), GREET);
  fs.writeFileSync(path.join(dir, "main.ts"), MAIN);
  const greet = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, "greet.ts")));
  const main = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, "main.ts")));
  await vscode.window.showTextDocument(greet, { viewColumn: vscode.ViewColumn.One, preview: false });
  await vscode.window.showTextDocument(main, { viewColumn: vscode.ViewColumn.One, preview: false });
  await waitFor("TypeScript's hint about main.ts", () => vscode.languages.getDiagnostics(main.uri).length > 0, 120_000);
  await waitFor(
    "TypeScript to answer a hover",
    async () => {
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", main.uri, new vscode.Position(2, 32));
      return hovers.length > 0;
    },
    120_000,
  );
  return { greet, main };
}

/** A JSON-RPC answer. */
interface RpcAnswer {
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/**
 * An assistant: MCP over the stdio of a `tether mcp` it started for `root`, as Claude Code or
 * Codex talk to it. The child inherits this process's environment (XDG_STATE_HOME included), so
 * it attaches to the window's `tether lsp` the way a user's assistant would.
 */
export class McpSession {
  private readonly pending = new Map<number, (answer: RpcAnswer) => void>();
  private nextId = 1;
  private stderr = "";

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line) as RpcAnswer & { id?: number };
      if (msg.id !== undefined) {
        this.pending.get(msg.id)?.(msg);
        this.pending.delete(msg.id);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
  }

  /** Starts `BINARY mcp --root ROOT` and initializes it as the client `name version`. */
  static async start(binary: string, root: string, name: string, version: string): Promise<McpSession> {
    const child = spawn(binary, ["mcp", "--root", root], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    const session = new McpSession(child);
    const init = await session.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name, version },
    });
    if (init.result === undefined) {
      throw new Error(`initialize failed: ${JSON.stringify(init)}; stderr: ${session.stderr}`);
    }
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    return session;
  }

  private request(method: string, params: unknown, ms = 60_000): Promise<RpcAnswer> {
    const id = this.nextId++;
    const answer = new Promise<RpcAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no answer to ${method} within ${ms / 1000} s; stderr: ${this.stderr}`));
      }, ms);
      this.pending.set(id, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
    });
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return answer;
  }

  /** `tools/call`: the tool's result (an error result is a result too). */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const answer = await this.request("tools/call", { name, arguments: args });
    if (answer.result === undefined) {
      throw new Error(`tools/call ${name} failed: ${JSON.stringify(answer.error)}`);
    }
    return answer.result as CallToolResult;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/**
 * Writes `content` to `rel` under `root`, opens it and types `typed` at its top, leaving it unsaved,
 * and waits until tether has the typing (its view of the buffer is what it merges into).
 */
export async function openUnsaved(root: string, rel: string, content: string, typed: string): Promise<vscode.TextDocument> {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const editor = await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
  assert.ok(
    await editor.edit((b) => {
      b.insert(new vscode.Position(0, 0), typed);
    }),
  );
  assert.ok(doc.isDirty);
  await waitFor("tether to see the unsaved text", async () => {
    const read = await callTool("read_file", { path: rel });
    return read.isError === false && text(read).includes(typed.trimEnd());
  });
  // VS Code compares modification times in milliseconds: another program's write comes later.
  await new Promise((r) => setTimeout(r, 20));
  return doc;
}

/** The extension, activated, once its server runs, and the window's first workspace folder. */
export async function runningExtension(): Promise<{ api: TetherApi; root: string }> {
  const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
  assert.ok(ext, "the extension is loaded");
  const api = await ext.activate();
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  await waitFor("the server to run", () => api.server.state === "running" || undefined, 120_000);
  return { api, root };
}
