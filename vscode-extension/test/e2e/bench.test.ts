// Measurements for BENCHMARKS.md, in a real VS Code with its built-in TypeScript support: how long
// an edit takes to answer with the problems it introduced or resolved, and what asking
// TypeScript's definitions and references through tether costs over asking VS Code directly.
// Run by `node scripts/run-e2e.mjs --bench` (not part of scripts/test), which prints the table
// this suite writes to $TETHER_BENCH_RESULTS.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import type { CallToolResult } from "../../src/protocol";
import { callTool, openTypeScriptProject, text, waitFor } from "./util";

const RUNS = 20;
const WARMUP = 3;

interface Stats {
  runs: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

/** Median and 95th percentile (nearest rank) of durations in milliseconds, rounded to 0.1 ms. */
function stats(ms: number[]): Stats {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  const mid = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? at(0.5) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
  const round = (v: number): number => Math.round(v * 10) / 10;
  return { runs: ms.length, median: round(median), p95: round(at(0.95)), min: round(sorted[0] ?? NaN), max: round(sorted.at(-1) ?? NaN) };
}

/**
 * A pause before each measured run. An assistant's edits come a model's turn apart; run back to
 * back, each would also wait for the editor's work after the one before (TypeScript's analysis,
 * the diagnostics it forwards, the status bar), which measured 20 ms of a 33 ms edit.
 */
const SPACING_MS = 300;

/** Runs `op` WARMUP times unmeasured, then RUNS times, each after SPACING_MS, and gives the durations. */
async function measure(op: (i: number) => Promise<void>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) {
    await op(i);
  }
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await new Promise((r) => setTimeout(r, SPACING_MS));
    const start = performance.now();
    await op(WARMUP + i);
    ms.push(performance.now() - start);
  }
  return ms;
}

/** A change's report: `settled` with what it introduced and resolved, or `pending` with the latest report's. */
interface Change {
  status: string;
  introduced?: unknown[];
  resolved?: unknown[];
  latest_report?: { new: unknown[]; gone: unknown[] };
}

function afterChange(result: CallToolResult): Change | undefined {
  for (const item of result.content) {
    if (item.text?.startsWith('{"diagnostics_after_change"') === true) {
      return (JSON.parse(item.text) as { diagnostics_after_change: Change[] }).diagnostics_after_change[0];
    }
  }
  return undefined;
}

describe("benchmarks", () => {
  it("edits with diagnostics, and definitions and references through tether or directly", async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    const api = await ext.activate();
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(root);
    await waitFor("the server to run", () => api.server.state === "running", 60_000);
    const { main } = await openTypeScriptProject(root);
    const out: Record<string, unknown> = { vscode: vscode.version, runs: RUNS, warmup: WARMUP };

    // Each edit toggles a type error: even edits introduce it, odd ones resolve it.
    const statuses: Record<string, number> = {};
    let wrong = 0;
    const toggle = (i: number, diagnostics: boolean) => async (): Promise<CallToolResult> => {
      const [from, to] = i % 2 === 0 ? ["message: string", "message: number"] : ["message: number", "message: string"];
      const r = await callTool("edit_file", { path: "ts/main.ts", old_string: from, new_string: to, ...(diagnostics ? {} : { diagnostics: false }) });
      assert.equal(r.isError, false, text(r));
      return r;
    };
    out.editWithDiagnostics = stats(
      await measure(async (i) => {
        const change = afterChange(await toggle(i, true)());
        const status = change?.status ?? "none";
        statuses[status] = (statuses[status] ?? 0) + 1;
        // `settled` when the extension's ask of TypeScript (knowledge.ts `pull`) answered for the
        // edit's version; else `pending`, with the latest report's new and gone problems.
        const added = change?.introduced ?? change?.latest_report?.new;
        const removed = change?.resolved ?? change?.latest_report?.gone;
        if ((i % 2 === 0 ? added?.length : removed?.length) !== 1) {
          wrong++;
          ((out.wrongSamples ??= []) as unknown[]).push({ i, change });
        }
      }),
    );
    out.editStatuses = statuses;
    out.editsWithoutTheExpectedProblem = wrong;
    // Back to the error-free text (an odd number of measured edits would leave the error in).
    if (main.getText().includes("message: number")) {
      await toggle(1, false)();
    }
    out.editWithoutDiagnostics = stats(
      await measure(async (i) => {
        await toggle(i, false)();
      }),
    );
    if (main.getText().includes("message: number")) {
      await toggle(1, false)();
    }
    // The same edits on a document with unsaved changes: nothing is saved, so the difference is
    // the save of a clean document after each edit.
    {
      const dirty = new vscode.WorkspaceEdit();
      dirty.insert(main.uri, new vscode.Position(0, 0), "// unsaved\n");
      await vscode.workspace.applyEdit(dirty);
      out.editWithoutDiagnosticsUnsaved = stats(
        await measure(async (i) => {
          await toggle(i, false)();
        }),
      );
      if (main.getText().includes("message: number")) {
        await toggle(1, false)();
      }
      // The editor's own part, measured straight from the extension host: the same replacement
      // through `workspace.applyEdit` on the unsaved document, and (below) with the save a clean
      // document gets after it. What tether adds is the difference.
      const direct = async (i: number, save: boolean): Promise<void> => {
        const [from, to] = i % 2 === 0 ? ["message: string", "message: number"] : ["message: number", "message: string"];
        const at = main.getText().indexOf(from);
        assert.ok(at >= 0);
        const change = new vscode.WorkspaceEdit();
        change.replace(main.uri, new vscode.Range(main.positionAt(at), main.positionAt(at + from.length)), to);
        assert.ok(await vscode.workspace.applyEdit(change));
        if (save) {
          assert.ok(await main.save());
        }
      };
      out.applyEditDirectUnsaved = stats(await measure((i) => direct(i, false)));
      if (main.getText().includes("message: number")) {
        await direct(1, false);
      }
      const undo = new vscode.WorkspaceEdit();
      undo.delete(main.uri, new vscode.Range(0, 0, 1, 0));
      await vscode.workspace.applyEdit(undo);
      await main.save();
      out.applyEditAndSaveDirect = stats(await measure((i) => direct(i, true)));
      if (main.getText().includes("message: number")) {
        await direct(1, true);
      }
    }

    // A 1 MiB and a 20 MiB document with unsaved changes, no language server for them: one line
    // in the middle replaced through tether (diagnostics off), and the same replacement straight
    // through `workspace.applyEdit`. Lines of 128 bytes keep 20 MiB under VS Code's 300,000-line
    // bound for large files.
    //
    // After each change of a visible document, VS Code's built-in merge-conflict extension reads
    // the whole document (`getText()`) on a zero-delay timer in the extension host: about 34 ms
    // for 20 MiB, during which the host runs nothing else, the answer of a `tether.callTool`
    // started there included. A straight apply resolves before that timer runs, so it is also
    // timed until the host is free again (`...Settled`, the apply and one timer turn); and the
    // 20 MiB pair is timed once more with merge-conflict's decorations and code lenses off.
    const settled = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
    const bigDocument = async (mib: number, suffix: string): Promise<void> => {
      const name = `big${mib}.txt`;
      const count = mib * 8192;
      const uri = vscode.Uri.file(`${root}/${name}`);
      if (!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) {
        const lines = Array.from({ length: count }, (_, n) => `line ${String(n).padStart(6, "0")} of a ${mib} MiB text, ${"x".repeat(99 - String(mib).length)}\n`);
        fs.writeFileSync(`${root}/${name}`, lines.join(""));
      }
      const big: vscode.TextDocument = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(big);
      if (!big.isDirty) {
        assert.equal(big.getText().length, mib << 20, `${name} is ${big.getText().length} characters`);
        const dirty = new vscode.WorkspaceEdit();
        dirty.insert(big.uri, new vscode.Position(0, 0), "unsaved\n");
        assert.ok(await vscode.workspace.applyEdit(dirty));
      }
      const middle = String(count / 2).padStart(6, "0");
      const [plain, shouted] = [`line ${middle} of`, `line ${middle} OF`];
      const pair = (i: number): [string, string] => (i % 2 === 0 ? [plain, shouted] : [shouted, plain]);
      out[`editUnsaved${mib}MiB${suffix}`] = stats(
        await measure(async (i) => {
          const [from, to] = pair(i);
          const r = await callTool("edit_file", { path: name, old_string: from, new_string: to, diagnostics: false });
          assert.equal(r.isError, false, text(r));
        }),
      );
      if (big.getText().includes(shouted)) {
        await callTool("edit_file", { path: name, old_string: shouted, new_string: plain, diagnostics: false });
      }
      // The line is known (the unsaved line is above it): VS Code's apply alone is timed.
      const line = count / 2 + 1;
      const apply = async (i: number): Promise<void> => {
        const [from, to] = pair(i);
        const change = new vscode.WorkspaceEdit();
        change.replace(big.uri, new vscode.Range(line, 0, line, from.length), to);
        assert.ok(await vscode.workspace.applyEdit(change));
      };
      out[`applyEditDirectUnsaved${mib}MiB${suffix}`] = stats(await measure(apply));
      out[`applyEditDirectUnsaved${mib}MiB${suffix}Settled`] = stats(
        await measure(async (i) => {
          await apply(i + 1);
          await settled();
        }),
      );
      // The edits landed on the line meant (an odd count leaves it shouted).
      const after = big.lineAt(line).text;
      assert.ok(after.startsWith(plain) || after.startsWith(shouted), `line ${line} is now ${after.slice(0, 40)}`);
      if (after.startsWith(shouted)) {
        await apply(1);
      }
    };
    for (const mib of [1, 20]) {
      await bigDocument(mib, "");
    }
    const mergeConflict = vscode.workspace.getConfiguration("merge-conflict");
    await mergeConflict.update("decorators.enabled", false, vscode.ConfigurationTarget.Global);
    await mergeConflict.update("codeLens.enabled", false, vscode.ConfigurationTarget.Global);
    try {
      await bigDocument(20, "MergeConflictOff");
    } finally {
      await mergeConflict.update("decorators.enabled", undefined, vscode.ConfigurationTarget.Global);
      await mergeConflict.update("codeLens.enabled", undefined, vscode.ConfigurationTarget.Global);
    }

    // A file that had a problem and has none: an edit that keeps it free of problems. VS Code's
    // TypeScript support reports nothing when a file's problems stay none.
    const edit = async (path: string, from: string, to: string): Promise<CallToolResult> => {
      const r = await callTool("edit_file", { path, old_string: from, new_string: to });
      assert.equal(r.isError, false, text(r));
      return r;
    };
    const greetUri = vscode.Uri.file(`${root}/ts/greet.ts`);
    const problems = (): number => vscode.languages.getDiagnostics(greetUri).length;
    await edit("ts/greet.ts", "name: string): string", "name: string): number");
    await waitFor("TypeScript to report greet.ts's error", () => problems() > 0);
    await edit("ts/greet.ts", "name: string): number", "name: string): string");
    await waitFor("TypeScript to report greet.ts free of problems", () => problems() === 0);
    const cleanStatuses: Record<string, number> = {};
    out.editKeepingNoProblems = stats(
      await measure(async (i) => {
        const [from, to] = i % 2 === 0 ? ['"hello, "', '"hi, "'] : ['"hi, "', '"hello, "'];
        const status = afterChange(await edit("ts/greet.ts", from, to))?.status ?? "none";
        cleanStatuses[status] = (cleanStatuses[status] ?? 0) + 1;
      }),
    );
    out.editKeepingNoProblemsStatuses = cleanStatuses;
    // The language server's own analysis, for the edits above: the three diagnostics requests
    // the extension makes of TypeScript for a changed document, on an unchanged main.ts.
    out.typeScriptDiagnosticsDirect = stats(
      await measure(async () => {
        const ask = (command: string) =>
          vscode.commands.executeCommand<{ success?: boolean }>("typescript.tsserverRequest", command, { file: main.uri });
        const answers = await Promise.all(
          ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"].map(ask),
        );
        assert.ok(answers.every((a) => a.success === true));
      }),
    );

    const mainUri = main.uri;
    // `greet` in `greet("tether")` (main.ts line 3) and in its declaration (greet.ts line 1).
    const call = new vscode.Position(2, 31);
    const declaration = new vscode.Position(0, 16);
    const tool = (name: string, args: Record<string, unknown>) => async (): Promise<void> => {
      const r = await callTool(name, args);
      assert.equal(r.isError, false, text(r));
    };
    out.definitionThroughTether = stats(await measure(tool("definition", { path: "ts/main.ts", line: 3, column: 32 })));
    out.definitionDirect = stats(
      await measure(async () => {
        const r = await vscode.commands.executeCommand<unknown[]>("vscode.executeDefinitionProvider", mainUri, call);
        assert.equal(r.length, 1);
      }),
    );
    out.referencesThroughTether = stats(await measure(tool("references", { path: "ts/greet.ts", line: 1, column: 17 })));
    out.referencesDirect = stats(
      await measure(async () => {
        const r = await vscode.commands.executeCommand<unknown[]>("vscode.executeReferenceProvider", greetUri, declaration);
        assert.equal(r.length, 3);
      }),
    );
    const file = process.env.TETHER_BENCH_RESULTS;
    if (file !== undefined) {
      fs.writeFileSync(file, JSON.stringify(out, null, 2));
    }
  });
});
