// Another program changes the file of a document with unsaved changes, in a real VS Code: tether
// merges the change into the document as one undo step, the unsaved text kept and the disk left as
// the other program wrote it, and the next save asks nothing (VS Code's "the content of the file is
// newer" question stays away); a change over the unsaved lines is not merged, and the save then
// gets VS Code's usual question.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import { callTool, openUnsaved, runningExtension, screenshot, text, waitFor } from "./util";

let api: TetherApi;
let root: string;

/** A new file renamed over the old one, as `sed -i` writes. */
function writeLikeSed(file: string, content: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.sed`);
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

describe("changes on disk", () => {
  before(async () => {
    ({ api, root } = await runningExtension());
  });

  it("a change on disk is merged into the unsaved document as one undo step, and the save asks nothing", async () => {
    const original = "def main():\n    return 1\n";
    const doc = await openUnsaved(root, "disk/main.py", original, "# unsaved\n");
    const typed = "# unsaved\n" + original;
    const theirs = "def main():\n    return 2  # from sed\n";
    writeLikeSed(doc.uri.fsPath, theirs);

    const merged = "# unsaved\n" + theirs;
    await waitFor("the merged document", () => doc.getText() === merged);
    assert.ok(doc.isDirty, "the unsaved change is still unsaved");
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), theirs, "the file is as sed left it");
    await waitFor("tether to say it merged", () => api.server.diskChanges.isMerged(doc.uri));
    assert.equal(api.server.lastChange, "tether: merged from disk");

    // One undo step takes the merge back, and only it.
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("undo to take the merge back", () => doc.getText() === typed);
    await vscode.commands.executeCommand("redo");
    await waitFor("redo to bring it again", () => doc.getText() === merged);

    // The save is let through: VS Code does not ask about the file that changed since it read it.
    assert.equal(await doc.save(), true, "the save went through without VS Code's save conflict");
    assert.ok(!doc.isDirty);
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), merged);
    await screenshot("disk-merged-and-saved");

    const history = await callTool("history", {});
    assert.equal(history.isError, false, text(history));
    const changes = (history.structuredContent as { changesets: { tool: string; client: string }[] }).changesets;
    assert.ok(
      changes.some((c) => c.tool === "merge_from_disk" && c.client === "another program (on disk)"),
      JSON.stringify(changes),
    );
  });

  it("a change over the unsaved lines is not merged, and the save gets VS Code's usual question", async () => {
    const original = "alpha\nbeta\n";
    const doc = await openUnsaved(root, "disk/notes.txt", original, "mine\n");
    // The other program changes the first line too, so the two changes overlap.
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
    assert.ok(editor);
    assert.ok(
      await editor.edit((b) => {
        b.replace(new vscode.Range(1, 0, 1, 5), "ALPHA");
      }),
    );
    await waitFor("tether to see the second change", async () => {
      const read = await callTool("read_file", { path: "disk/notes.txt" });
      return read.isError === false && text(read).includes("ALPHA");
    });
    await new Promise((r) => setTimeout(r, 20));
    writeLikeSed(doc.uri.fsPath, "alpha, theirs\nbeta\n");

    // tether tells the extension it did not merge (it shows the user the choice).
    const notice = await waitFor("tether to say it did not merge", () => {
      const n = api.server.diskChanges.lastNotice(doc.uri);
      return n?.merged === false ? n : undefined;
    });
    assert.equal(notice.overlaps, "lines 1-2");
    assert.match(notice.diff ?? "", /-ALPHA\n\+alpha, theirs/);
    assert.equal(doc.getText(), "mine\nALPHA\nbeta\n", "nothing was merged");
    assert.ok(!api.server.diskChanges.isMerged(doc.uri));
    await screenshot("disk-overlap");
    assert.equal(await doc.save(), false, "VS Code asks before replacing the file that changed");
    assert.equal(fs.readFileSync(doc.uri.fsPath, "utf8"), "alpha, theirs\nbeta\n", "the file is as the other program left it");

    // Leave the window as it was: the document back to its file, the notifications closed.
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("workbench.action.files.revert");
    await waitFor("the document back to its file", () => !doc.isDirty);
    await vscode.commands.executeCommand("notifications.clearAll");
  });
});
