// The assistants people run, for real, beside a real VS Code running tether: Claude Code, Gemini
// CLI and Codex CLI (from npm, pinned by scripts/install-assistants), headless against a scripted
// model on loopback (tests/assistant_clis.py runs them, with tests/model_stub.py). With the hooks
// `tether setup` installs, their built-in read sees the unsaved document and their edit lands in it,
// the disk untouched, one undo step, the journal naming the CLI; a write to the disk they make
// without a hook (a shell's `sed -i`, Claude Code's Edit without tether's hooks) is merged into the
// document, and the next save asks nothing.

import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import { callTool, openUnsaved, runningExtension, text, waitFor } from "./util";

const MAIN = "def main():\n    return 1\n";
const UNSAVED = "# unsaved\n";

let api: TetherApi;
let root: string;
const homes: string[] = [];

interface Run {
  /** What `tether setup CLI` printed (with `setup`). */
  readonly setup: string | null;
  readonly returncode: number;
  readonly stderr: string;
  /** The tool results the CLI sent the model, in order. */
  readonly results: string[];
}

/**
 * Runs `cli` in the workspace against the scripted model's `turns` (after `tether setup CLI` when
 * `setup`), without blocking the extension host: it answers tether's edits meanwhile.
 */
async function runCli(cli: "claude-code" | "gemini" | "gemini-ide" | "codex", turns: unknown[], setup: boolean): Promise<Run> {
  const repo = process.env.TETHER_TEST_REPO ?? "";
  const script = path.join(repo, "tests", "assistant_clis.py");
  assert.ok(fs.existsSync(script), `${script} exists (TETHER_TEST_REPO names the repository)`);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `tether-${cli}-`));
  homes.push(home);
  const args = [script, cli, "--root", root, "--home", home, "--turns", JSON.stringify(turns)];
  if (setup) {
    args.push("--setup", process.env.TETHER_BIN ?? "");
  }
  const child = spawn("python3", args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 0, `tests/assistant_clis.py ${cli} failed: ${err}`);
  const run = JSON.parse(out) as Run;
  assert.equal(run.returncode, 0, `${cli} failed: ${run.stderr}`);
  return run;
}

/** Opens `rel` (MAIN on disk) with an unsaved first line, known to tether. */
function openMain(rel: string): Promise<vscode.TextDocument> {
  return openUnsaved(root, rel, MAIN, UNSAVED);
}

/** The scripted model's turns for Claude Code: Read `file`, then Edit its `return 1` to `return 2`. */
function claudeReadsAndEdits(file: string): unknown[] {
  return [
    { tool: "Read", input: { file_path: file } },
    { tool: "Edit", input: { file_path: file, old_string: "return 1", new_string: "return 2", replace_all: false } },
    { text: "main returns 2 now" },
  ];
}

/** The journal's changesets, newest first. */
async function changesets(): Promise<{ tool: string; client: string }[]> {
  const history = await callTool("history", {});
  assert.equal(history.isError, false, text(history));
  return (history.structuredContent as { changesets: { tool: string; client: string }[] }).changesets;
}

/** One undo step in the document's editor takes its last change back, and redo brings it again. */
async function oneUndoStep(doc: vscode.TextDocument, before: string): Promise<void> {
  const after = doc.getText();
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
  await vscode.commands.executeCommand("undo");
  await waitFor("one undo step to take the change back", () => doc.getText() === before);
  await vscode.commands.executeCommand("redo");
  await waitFor("redo to bring it again", () => doc.getText() === after);
}

/** The CLI's edit of `rel` (return 1 to 2) is in the document only, as one undo step, as `client`'s. */
async function inTheDocumentOnly(doc: vscode.TextDocument, client: string): Promise<void> {
  const changed = UNSAVED + "def main():\n    return 2\n";
  await waitFor("the edit in the document", () => doc.getText() === changed);
  assert.ok(doc.isDirty, "the unsaved line is still unsaved");
  assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), MAIN, "the file on disk is untouched");
  await oneUndoStep(doc, UNSAVED + MAIN);
  const changes = await changesets();
  const last = changes[0];
  assert.ok(last, "the journal has the change");
  assert.deepEqual([last.tool, last.client], ["edit_file", client], JSON.stringify(changes));
}

describe("the assistants' CLIs", () => {
  before(async () => {
    ({ api, root } = await runningExtension());
  });

  after(async () => {
    // What `tether setup` wrote into the project, and the CLIs' homes.
    for (const p of [".claude", ".gemini", ".mcp.json", ...homes]) {
      fs.rmSync(path.isAbsolute(p) ? p : path.join(root, p), { recursive: true, force: true });
    }
    await vscode.commands.executeCommand("workbench.action.files.saveAll");
  });

  it("without tether's hooks, Claude Code's Edit writes the disk; tether merges it and the save asks nothing", async () => {
    const rel = "cli/claude_plain.py";
    const doc = await openMain(rel);
    const file = doc.uri.fsPath;
    const run = await runCli(
      "claude-code",
      claudeReadsAndEdits(file),
      false,
    );
    assert.match(run.results[1] ?? "", /updated successfully/, JSON.stringify(run.results));
    const merged = UNSAVED + "def main():\n    return 2\n";
    await waitFor("the CLI's write merged into the document", () => doc.getText() === merged);
    assert.ok(doc.isDirty);
    await oneUndoStep(doc, UNSAVED + MAIN);
    await waitFor("tether to say it merged", () => api.server.diskChanges.isMerged(doc.uri));
    assert.equal(await doc.save(), true, "the save went through without VS Code's save conflict");
    assert.equal(fs.readFileSync(file, "utf8"), merged, "saving keeps the unsaved line and the CLI's change");
    assert.ok((await changesets()).some((c) => c.tool === "merge_from_disk"));
  });

  it("with tether setup claude-code, Claude Code's Read and Edit meet the unsaved document", async () => {
    const rel = "cli/claude.py";
    const doc = await openMain(rel);
    const file = doc.uri.fsPath;
    const run = await runCli(
      "claude-code",
      claudeReadsAndEdits(file),
      true,
    );
    assert.match(run.setup ?? "", /settings\.json: added tether's hooks/);
    const [read, edit] = run.results;
    assert.ok(read?.startsWith("1\t# unsaved\n2\tdef main():"), read);
    assert.match(edit ?? "", /tether made this change in the editor's buffer/);
    await inTheDocumentOnly(doc, "claude-code");
  });

  it("with tether setup gemini, Gemini CLI's read_file and replace meet the unsaved document", async () => {
    const rel = "cli/gemini.py";
    const doc = await openMain(rel);
    const run = await runCli(
      "gemini",
      [
        { tool: "read_file", input: { file_path: rel } },
        { tool: "replace", input: { file_path: rel, old_string: "return 1", new_string: "return 2", instruction: "Return 2." } },
        { text: "main returns 2 now" },
      ],
      true,
    );
    assert.match(run.setup ?? "", /settings\.json: added tether's hooks/);
    const [read, edit] = run.results;
    assert.ok(read?.includes("unsaved changes") && read.includes("# unsaved"), read);
    assert.ok(edit?.startsWith("ERROR: Tool execution blocked: tether made this change in the editor's buffer"), edit);
    await inTheDocumentOnly(doc, "gemini-cli");
  });

  it("with tether setup claude-code, Claude Code's Write of the unsaved document lands in it", async () => {
    const rel = "cli/claude_write.py";
    const doc = await openMain(rel);
    const file = doc.uri.fsPath;
    const written = "def main():\n    return 3\n";
    const run = await runCli(
      "claude-code",
      [
        { tool: "Read", input: { file_path: file } },
        { tool: "Write", input: { file_path: file, content: written } },
        { text: "main returns 3 now" },
      ],
      true,
    );
    assert.match(run.results[1] ?? "", /tether made this change in the editor's buffer/, JSON.stringify(run.results));
    await waitFor("the written text in the document", () => doc.getText() === written);
    assert.equal(fs.readFileSync(file, "utf8"), MAIN, "the file on disk is untouched");
    await oneUndoStep(doc, UNSAVED + MAIN);
    const last = (await changesets())[0];
    assert.deepEqual([last?.tool, last?.client], ["write_file", "claude-code"]);
  });

  it("with tether setup gemini, Gemini CLI's write_file of the unsaved document lands in it", async () => {
    const rel = "cli/gemini_write.py";
    const doc = await openMain(rel);
    const written = "def main():\n    return 3\n";
    const run = await runCli(
      "gemini",
      [
        { tool: "read_file", input: { file_path: rel } },
        { tool: "write_file", input: { file_path: rel, content: written } },
        { text: "main returns 3 now" },
      ],
      true,
    );
    assert.ok(
      run.results[1]?.startsWith("ERROR: Tool execution blocked: tether made this change in the editor's buffer"),
      JSON.stringify(run.results),
    );
    await waitFor("the written text in the document", () => doc.getText() === written);
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), MAIN, "the file on disk is untouched");
    await oneUndoStep(doc, UNSAVED + MAIN);
    const last = (await changesets())[0];
    assert.deepEqual([last?.tool, last?.client], ["write_file", "gemini-cli"]);
  });

  it("with tether setup codex, Codex CLI's apply_patch lands in the document and its sed -i is merged", async () => {
    const rel = "cli/codex.py";
    const doc = await openMain(rel);
    const run = await runCli(
      "codex",
      [
        {
          tool: "apply_patch",
          input: `*** Begin Patch\n*** Update File: ${rel}\n@@\n def main():\n-    return 1\n+    return 2\n*** End Patch\n`,
        },
        { tool: "exec_command", input: { cmd: `sed -i 's/def main/def start/' ${rel}` } },
        { text: "main returns 2 now, and is called start" },
      ],
      true,
    );
    assert.match(run.setup ?? "", /hooks\.json: added tether's hooks/);
    const [patched, sed] = run.results;
    assert.match(patched ?? "", /Command blocked by PreToolUse hook: tether applied this patch/);
    assert.match(sed ?? "", /Process exited with code 0/);
    const merged = UNSAVED + "def start():\n    return 2\n";
    await waitFor("the patch and sed's change in the document", () => doc.getText() === merged);
    assert.ok(doc.isDirty);
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), "def start():\n    return 1\n", "the file holds sed's change only");
    const changes = await changesets();
    assert.deepEqual(
      changes.slice(0, 2).map((c) => [c.tool, c.client]),
      [
        ["merge_from_disk", "another program (on disk)"],
        ["apply_patch", "codex"],
      ],
    );
    await waitFor("tether to say it merged", () => api.server.diskChanges.isMerged(doc.uri));
    assert.equal(await doc.save(), true, "the save went through without VS Code's save conflict");
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), merged);
  });

  it("Gemini CLI's IDE diff is reviewed in VS Code on top of the unsaved text, and lands in the document and the file", async () => {
    // Without the hooks an earlier test's `tether setup gemini` put in the project: the edit then
    // asks, and the IDE answers.
    fs.rmSync(path.join(root, ".gemini"), { recursive: true, force: true });
    const rel = "cli/gemini_ide.py";
    const doc = await openMain(rel);
    const file = doc.uri.fsPath;
    const before = new Set(api.review.pending);
    const run = runCli(
      "gemini-ide",
      [
        { tool: "replace", input: { file_path: file, old_string: "return 1", new_string: "return 2", instruction: "Return 2." } },
        { text: "main returns 2 now" },
      ],
      false,
    );
    const review = await waitFor("the CLI's diff in VS Code's review", () => api.review.pending.find((r) => !before.has(r)), 90_000);
    const merged = UNSAVED + "def main():\n    return 2\n";
    assert.deepEqual(
      review.proposal.files.map((f) => [f.path, f.newText]),
      [[rel, merged]],
      "the proposal on top of the unsaved text",
    );
    await vscode.commands.executeCommand("tether.review.acceptAll");
    const done = await run;
    assert.ok(done.results.some((r) => r.includes("Successfully modified")), JSON.stringify(done.results));
    assert.equal(fs.readFileSync(file, "utf8"), merged, "Gemini CLI wrote the accepted text");
    await waitFor("the document to hold it, with the unsaved line", () => doc.getText() === merged);
    assert.ok(doc.isDirty);
    await oneUndoStep(doc, UNSAVED + MAIN);
    assert.equal(await doc.save(), true, "the save asks nothing");
  });

  it("with review on, Claude Code's Edit through the hook waits for the user's review: accepted, it lands; rejected, nothing does", async () => {
    const config = () => vscode.workspace.getConfiguration("tether");
    await config().update("review", { mode: "ask" }, vscode.ConfigurationTarget.Global);
    await waitFor("review on in the server", () => api.server.review?.mode === "ask", 10_000);
    try {
      for (const decision of ["accept", "reject"] as const) {
        const rel = `cli/claude_review_${decision}.py`;
        const doc = await openMain(rel);
        const file = doc.uri.fsPath;
        const before = new Set(api.review.pending);
        const run = runCli(
          "claude-code",
          claudeReadsAndEdits(file),
          true,
        );
        const review = await waitFor("the hook's edit in VS Code's review", () => api.review.pending.find((r) => !before.has(r)), 90_000);
        assert.deepEqual(
          review.proposal.files.map((f) => [f.path, f.newText]),
          [[rel, UNSAVED + "def main():\n    return 2\n"]],
        );
        await vscode.commands.executeCommand(decision === "accept" ? "tether.review.acceptAll" : "tether.review.rejectAll", "not now");
        const done = await run;
        assert.equal(fs.readFileSync(file, "utf8"), MAIN, "the file on disk is untouched");
        if (decision === "accept") {
          assert.match(done.results[1] ?? "", /tether made this change in the editor's buffer/, JSON.stringify(done.results));
          await inTheDocumentOnly(doc, "claude-code");
        } else {
          assert.match(done.results[1] ?? "", /reject/i, JSON.stringify(done.results));
          assert.equal(doc.getText(), UNSAVED + MAIN, "nothing changed");
        }
      }
    } finally {
      await config().update("review", undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
