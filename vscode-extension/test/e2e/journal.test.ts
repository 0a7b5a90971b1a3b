// End-to-end tests of the change journal (issue 22) in a real VS Code: an assistant edits through
// a `tether mcp` attached to the window's `tether lsp`; Show Assistant Changes lists the change
// with the assistant's name and shows it as a diff; Undo Assistant Change takes it back in the
// buffer as one editor undo step, keeps later changes elsewhere, and refuses when a later change
// overlaps. They run after review.test.ts, in the same window, with the journal in the run's own
// XDG_STATE_HOME (scripts/run-e2e.mjs).

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import * as vscode from "vscode";

import type { Changeset, UndoOutcome } from "../../src/changesets";
import type { TetherApi } from "../../src/extension";
import { JOURNAL_SCHEME, type ShowChangesOutcome } from "../../src/journal";
import { callTool, McpSession, screenshot, text, waitFor } from "./util";

const CLIENT = "e2e-assistant 1.0";

describe("the change journal", () => {
  let api: TetherApi;
  let root: string;
  let assistant: McpSession;

  async function openFile(rel: string, content: string): Promise<vscode.TextDocument> {
    const file = path.join(root, rel);
    fs.writeFileSync(file, content);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
    return doc;
  }

  /** An assistant's edit_file through the attached `tether mcp`; it must land in the open buffer. */
  async function assistantEdit(doc: vscode.TextDocument, oldString: string, newString: string): Promise<void> {
    const rel = path.relative(root, doc.uri.fsPath);
    const want = doc.getText().replace(oldString, newString);
    const r = await assistant.call("edit_file", { path: rel, old_string: oldString, new_string: newString });
    assert.equal(r.isError, false, text(r));
    // Through the window's tether lsp, not to the disk: the mcp attached.
    assert.match(text(r), /applied to the open editor buffer/);
    await waitFor(`the assistant's edit in ${rel}`, () => doc.getText() === want);
    await waitFor(`${rel} saved`, () => !doc.isDirty);
  }

  /** Runs Show Assistant Changes and, once its Quick Pick is open, runs `then` (accept or close). */
  async function showChanges(then: "workbench.action.acceptSelectedQuickOpenItem" | "workbench.action.closeQuickOpen"): Promise<ShowChangesOutcome> {
    let done: ShowChangesOutcome | undefined;
    void vscode.commands.executeCommand<ShowChangesOutcome | undefined>("tether.showChanges").then((o) => {
      done = o;
    });
    return waitFor("Show Assistant Changes to finish", async () => {
      await vscode.commands.executeCommand(then);
      return done;
    });
  }

  /** The newest changeset of the assistant's on a file, as Show Assistant Changes lists it. */
  async function listed(rel: string, tool = "edit_file"): Promise<Changeset> {
    const { changesets } = await showChanges("workbench.action.closeQuickOpen");
    const found = changesets.find((c) => c.client === CLIENT && c.tool === tool && c.files.some((f) => f.path === rel));
    assert.ok(found, `a ${tool} of ${rel} by ${CLIENT} in ${JSON.stringify(changesets.slice(0, 5))}`);
    return found;
  }

  function undo(id: string): Promise<UndoOutcome | undefined> {
    return Promise.resolve(vscode.commands.executeCommand<UndoOutcome | undefined>("tether.undoChange", id));
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    api = await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    root = folder.uri.fsPath;
    await waitFor("the server to run", () => api.server.state === "running", 60_000);
    // Every tether of the run keeps its journal in the run's own state folder.
    const state = process.env.XDG_STATE_HOME;
    assert.ok(state !== undefined && state.startsWith(os.tmpdir()), `XDG_STATE_HOME is a temporary folder: ${String(state)}`);
    const binary = api.server.binary;
    assert.ok(binary);
    assistant = await McpSession.start(binary.path, root, "e2e-assistant", "1.0");
  });

  after(() => {
    assistant.close();
  });

  const original = "def answer():\n    return 41\n";
  const changed = "def answer():\n    return 42\n";
  let doc: vscode.TextDocument;
  let change: Changeset;

  it("lists an assistant's edit through an attached tether mcp with the assistant's name, and shows its diff", async () => {
    doc = await openFile("journal-answer.py", original);
    await assistantEdit(doc, "return 41", "return 42");
    const state = process.env.XDG_STATE_HOME ?? "";
    assert.ok(fs.readdirSync(path.join(state, "tether", "journal")).length > 0, "the journal is in XDG_STATE_HOME");

    // Show Assistant Changes: the newest is the assistant's; accepting it opens its diff.
    const outcome = await showChanges("workbench.action.acceptSelectedQuickOpenItem");
    const newest = outcome.changesets[0];
    assert.ok(newest);
    assert.equal(newest.client, CLIENT);
    assert.equal(newest.tool, "edit_file");
    assert.deepEqual(newest.files, [{ path: "journal-answer.py", op: "edit", added: 1, removed: 1 }]);
    assert.equal(newest.undone_by, undefined);
    change = newest;
    assert.ok(outcome.opened, "the picked changeset was opened");
    assert.equal(outcome.opened.id, newest.id);
    assert.deepEqual(
      outcome.opened.files.map((f) => [f.path, f.before, f.after]),
      [["journal-answer.py", original, changed]],
    );
    const tab = await waitFor("the changeset's diff editor", () =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.original.scheme === JOURNAL_SCHEME),
    );
    assert.ok(tab.input instanceof vscode.TabInputTextDiff);
    assert.equal(tab.label, `journal-answer.py (#${newest.id} edit_file, ${CLIENT})`);
    const before = await vscode.workspace.openTextDocument(tab.input.original);
    const after = await vscode.workspace.openTextDocument(tab.input.modified);
    assert.equal(before.getText(), original);
    assert.equal(after.getText(), changed);
    assert.equal(after.languageId, "python", "the diff is highlighted as the file's language");
    await screenshot("journal-diff");
    await vscode.window.tabGroups.close(tab);
  });

  it("undoes it in the buffer, and one editor undo brings the change back", async () => {
    const outcome = await undo(change.id);
    assert.ok(outcome);
    assert.equal(outcome.ok, true, outcome.text);
    assert.match(outcome.text, new RegExp(`^undid changeset ${change.id} \\(edit_file by ${CLIENT}\\): journal-answer\\.py`));
    await waitFor("the undo in the buffer", () => doc.getText() === original);

    const history = await callTool("history", { limit: 5 });
    const { changesets } = history.structuredContent as { changesets: Changeset[] };
    const undoing = changesets[0];
    assert.ok(undoing);
    assert.equal(undoing.tool, "undo");
    assert.deepEqual(undoing.undoes, [change.id]);
    assert.equal(undoing.client, "editor", "the editor's own tool call");
    assert.equal(changesets.find((c) => c.id === change.id)?.undone_by, undoing.id);

    // The undo was one workspace edit: one editor undo step takes it back.
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("one editor undo to bring the change back", () => doc.getText() === changed);
    await doc.save();

    const again = await undo(change.id);
    assert.equal(again?.ok, false, "an undone changeset cannot be undone twice");
    assert.equal(again.kind, "invalid_input", again.text);
    const unknown = await undo("999999");
    assert.equal(unknown?.ok, false);
    assert.equal(unknown.kind, "not_found", unknown.text);
  });

  it("keeps a later change to other lines of the file", async () => {
    const file = await openFile("journal-merge.txt", "one\ntwo\nthree\n");
    await assistantEdit(file, "one", "ONE");
    const first = await listed("journal-merge.txt");
    await assistantEdit(file, "three", "THREE");
    const outcome = await undo(first.id);
    assert.equal(outcome?.ok, true, outcome?.text);
    await waitFor("the first change undone, the later one kept", () => file.getText() === "one\ntwo\nTHREE\n");
  });

  it("refuses to undo a change that a later change overlaps, naming the file and the lines", async () => {
    const file = await openFile("journal-conflict.txt", "one\ntwo\nthree\n");
    await assistantEdit(file, "two", "TWO");
    const first = await listed("journal-conflict.txt");
    await assistantEdit(file, "TWO", "TWO, again");
    const outcome = await undo(first.id);
    assert.ok(outcome);
    assert.equal(outcome.ok, false, outcome.text);
    assert.equal(outcome.kind, "conflict");
    assert.match(outcome.text, /journal-conflict\.txt/);
    assert.match(outcome.text, /line/);
    assert.match(outcome.text, /\b2\b/);
    assert.equal(file.getText(), "one\nTWO, again\nthree\n", "nothing changed");
  });

  it("shows a changeset of several files in one multi-diff editor", async () => {
    fs.writeFileSync(path.join(root, "journal-x.txt"), "x\n");
    fs.writeFileSync(path.join(root, "journal-y.txt"), "y\n");
    const r = await assistant.call("apply_patch", {
      patch:
        "*** Begin Patch\n*** Update File: journal-x.txt\n@@\n-x\n+X\n*** Add File: journal-z.txt\n+z\n" +
        "*** Delete File: journal-y.txt\n*** End Patch\n",
    });
    assert.equal(r.isError, false, text(r));
    const outcome = await showChanges("workbench.action.acceptSelectedQuickOpenItem");
    const opened = outcome.opened;
    assert.ok(opened);
    assert.equal(opened.tool, "apply_patch");
    assert.equal(opened.client, CLIENT);
    assert.deepEqual(
      opened.files.map((f) => [f.path, f.op, f.before, f.after]),
      [
        ["journal-x.txt", "edit", "x\n", "X\n"],
        ["journal-z.txt", "create", null, "z\n"],
        ["journal-y.txt", "delete", "y\n", null],
      ],
    );
    // The multi-diff editor loads every side there is (a new file has no before, a deleted one
    // no after) from the journal's documents.
    const sides = opened.files.flatMap((f) =>
      (["before", "after"] as const).flatMap((side) => {
        const want = f[side];
        return typeof want === "string" ? [{ uri: `${JOURNAL_SCHEME}://${opened.id}/${f.path}?${side}`, want }] : [];
      }),
    );
    assert.equal(sides.length, 4);
    const loaded = (uri: string): string | undefined =>
      vscode.workspace.textDocuments.find((d) => d.uri.toString(true) === uri)?.getText();
    await waitFor("the multi-diff editor to load every side", () => sides.every(({ uri, want }) => loaded(uri) === want));
    const tab = await waitFor("the multi-diff editor's tab", () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.label.startsWith(`#${opened.id} apply_patch`)),
    );
    await screenshot("journal-changes");
    await vscode.window.tabGroups.close(tab);
  });

  it("without an id, asks which change to undo, newest first, and undoes it in every file", async () => {
    let done: UndoOutcome | undefined;
    void vscode.commands.executeCommand<UndoOutcome | undefined>("tether.undoChange").then((o) => {
      done = o;
    });
    // The newest change not undone yet is the three-file patch above.
    const outcome = await waitFor("Undo Assistant Change to finish", async () => {
      await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
      return done;
    });
    assert.equal(outcome.ok, true, outcome.text);
    assert.match(outcome.text, /^undid changeset \d+ \(apply_patch by e2e-assistant 1\.0\)/);
    await waitFor("the files as they were", () => {
      const read = (rel: string): string | undefined => {
        const file = path.join(root, rel);
        return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
      };
      return read("journal-x.txt") === "x\n" && read("journal-y.txt") === "y\n" && read("journal-z.txt") === undefined;
    });
  });
});
