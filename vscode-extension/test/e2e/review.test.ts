// End-to-end tests of review before apply (`tether.review`, `tether/review`) in a real VS Code:
// an apply_patch over two files waits for the user, shows diff editors, and lands exactly what
// the user accepted, through the same commands the diff editors' buttons run. They run after
// extension.test.ts, in the same window.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import * as vscode from "vscode";

import type { TetherApi } from "../../src/extension";
import type { CallToolResult } from "../../src/protocol";
import { PendingReview, PROPOSAL_SCHEME } from "../../src/review";
import type { ReviewSetup } from "../../src/settings";
import { callTool, screenshot, text, waitFor } from "./util";

/** What a reviewed change's result ends with. */
interface ReviewOutcome {
  decision: string;
  accepted: string[];
  rejected: string[];
  edited_by_the_user?: string[];
  reason?: string;
}

/** The `review` item a reviewed change's result ends with. */
function outcome(result: CallToolResult): ReviewOutcome {
  const last = result.content.at(-1)?.text ?? "";
  const parsed = JSON.parse(last) as { review?: ReviewOutcome };
  assert.ok(parsed.review, `no review item at the end of ${JSON.stringify(result.content)}`);
  return parsed.review;
}

/** A patch that changes `a` and `b` from lower to upper case. */
function patch(a: string, b: string): string {
  return `*** Begin Patch\n*** Update File: ${a}\n@@\n-alpha\n+ALPHA\n*** Update File: ${b}\n@@\n-beta\n+BETA\n*** End Patch\n`;
}

/** The tabs showing a proposed text (the right side of a review's diff). */
function proposalTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSAL_SCHEME);
}

describe("review before apply", () => {
  let api: TetherApi;
  let root: string;
  const config = () => vscode.workspace.getConfiguration("tether");

  /** Sets `tether.review` and waits until the extension has sent it to the server. */
  async function setReview(review: ReviewSetup | undefined): Promise<void> {
    await config().update("review", review, vscode.ConfigurationTarget.Global);
    const want = JSON.stringify(review ?? { mode: "off" });
    await waitFor(`the review setup ${want} sent to the server`, () => JSON.stringify(api.server.review) === want, 10_000);
  }

  /** Writes `alpha\n` to `a` (open in an editor) and `beta\n` to `b` (on disk only). */
  async function files(a: string, b: string): Promise<vscode.TextDocument> {
    fs.writeFileSync(path.join(root, a), "alpha\n");
    fs.writeFileSync(path.join(root, b), "beta\n");
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(root, a)));
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
    return doc;
  }

  /** Starts the patch without waiting (it waits for the review) and returns it with its proposal. */
  async function propose(a: string, b: string): Promise<{ result: Thenable<CallToolResult>; review: PendingReview }> {
    const before = new Set(api.review.pending);
    const result = callTool("apply_patch", { patch: patch(a, b) });
    const review = await waitFor("the proposal", () => api.review.pending.find((r) => !before.has(r)));
    return { result, review };
  }

  /** The URI the diff editor of a file of the proposal shows on its right: its title buttons pass it. */
  function shown(review: PendingReview, rel: string): vscode.Uri {
    const file = review.proposal.files.find((f) => f.path === rel);
    assert.ok(file, `${rel} is in the proposal`);
    return review.proposalUri(file);
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<TetherApi>("tether.tether");
    assert.ok(ext);
    api = await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    root = folder.uri.fsPath;
    await waitFor("the server to run", () => api.server.state === "running");
    await setReview({ mode: "ask" });
  });

  after(async () => {
    await setReview(undefined);
  });

  it("shows both files as diffs, and applies only the accepted one with the rejection's reason", async () => {
    const a = await files("review-a.txt", "review-b.txt");
    const { result, review } = await propose("review-a.txt", "review-b.txt");
    assert.equal(review.proposal.tool, "apply_patch");
    assert.equal(review.proposal.caller, "editor");
    assert.deepEqual(
      review.proposal.files.map((f) => [f.path, f.kind, f.oldText, f.newText]),
      [
        ["review-a.txt", "edit", "alpha\n", "ALPHA\n"],
        ["review-b.txt", "edit", "beta\n", "BETA\n"],
      ],
    );
    await waitFor("a diff editor per file", () => proposalTabs().length === 2);
    // For the eye: the diff with its Accept and Reject buttons in the title bar.
    await screenshot("review");
    assert.equal(a.getText(), "alpha\n", "nothing is applied before the user decides");

    await vscode.commands.executeCommand("tether.review.acceptFile", shown(review, "review-a.txt"));
    assert.equal(review.isOpen(), true, "one file is still undecided");
    await vscode.commands.executeCommand("tether.review.rejectFile", shown(review, "review-b.txt"), "b is generated; edit its template");

    const r = await result;
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(outcome(r), {
      decision: "partly accepted",
      accepted: ["review-a.txt"],
      rejected: ["review-b.txt"],
      reason: "b is generated; edit its template",
    });
    await waitFor("the accepted change in the document", () => a.getText() === "ALPHA\n");
    assert.equal(fs.readFileSync(path.join(root, "review-b.txt"), "utf8"), "beta\n", "the rejected file is untouched");
    await waitFor("the review's diff editors to close", () => proposalTabs().length === 0);
    assert.equal(api.review.pending.length, 0);

    // The accepted change is one undo step.
    await vscode.window.showTextDocument(a, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("one undo to restore the text", () => a.getText() === "alpha\n");
  });

  it("lands the proposal as the user edited it before accepting", async () => {
    const a = await files("review-c.txt", "review-d.txt");
    const { result, review } = await propose("review-c.txt", "review-d.txt");
    const proposed = shown(review, "review-c.txt");
    const doc = await waitFor("the proposal's document", () =>
      vscode.workspace.textDocuments.find((d) => d.uri.toString() === proposed.toString()),
    );
    const edit = new vscode.WorkspaceEdit();
    edit.replace(proposed, new vscode.Range(0, 0, doc.lineCount, 0), "Alpha, reviewed\n");
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.equal(doc.getText(), "Alpha, reviewed\n");

    await vscode.commands.executeCommand("tether.review.acceptAll", proposed);
    const r = await result;
    assert.equal(r.isError, false, text(r));
    const o = outcome(r);
    assert.deepEqual(o.edited_by_the_user, ["review-c.txt"]);
    assert.deepEqual(o.rejected, []);
    await waitFor("the edited text in the document", () => a.getText() === "Alpha, reviewed\n");
    await waitFor("the other file changed as proposed", () => fs.readFileSync(path.join(root, "review-d.txt"), "utf8") === "BETA\n");
    await waitFor("the review's diff editors to close without asking to save", () => proposalTabs().length === 0);

    await vscode.window.showTextDocument(a, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("one undo to restore the text", () => a.getText() === "alpha\n");
  });

  it("rejects everything with a reason: the tool fails and nothing changes", async () => {
    const a = await files("review-e.txt", "review-f.txt");
    const { result, review } = await propose("review-e.txt", "review-f.txt");
    await vscode.commands.executeCommand("tether.review.rejectAll", review, "not now");
    const r = await result;
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /rejected.*not now/);
    assert.equal(a.getText(), "alpha\n");
    assert.equal(fs.readFileSync(path.join(root, "review-f.txt"), "utf8"), "beta\n");
    await waitFor("the review's diff editors to close", () => proposalTabs().length === 0);
  });

  it("shows a new file as a diff from nothing, and decides a deletion, which has no diff, by its URI", async () => {
    fs.writeFileSync(path.join(root, "review-old.txt"), "old\n");
    const before = new Set(api.review.pending);
    const result = callTool("apply_patch", {
      patch: "*** Begin Patch\n*** Add File: review-new.txt\n+new\n*** Delete File: review-old.txt\n*** End Patch\n",
    });
    const review = await waitFor("the proposal", () => api.review.pending.find((r) => !before.has(r)));
    assert.deepEqual(
      review.proposal.files.map((f) => [f.path, f.kind, f.newText]),
      [
        ["review-new.txt", "create", "new\n"],
        ["review-old.txt", "delete", null],
      ],
    );
    await waitFor("one diff editor, for the new file", () => proposalTabs().length === 1);
    const deleted = review.proposal.files[1];
    assert.ok(deleted);
    await vscode.commands.executeCommand("tether.review.rejectFile", vscode.Uri.parse(deleted.uri), "keep it");
    await vscode.commands.executeCommand("tether.review.acceptFile", shown(review, "review-new.txt"));
    const r = await result;
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(outcome(r), {
      decision: "partly accepted",
      accepted: ["review-new.txt"],
      rejected: ["review-old.txt"],
      reason: "keep it",
    });
    await waitFor("the new file", () => fs.existsSync(path.join(root, "review-new.txt")));
    assert.equal(fs.readFileSync(path.join(root, "review-new.txt"), "utf8"), "new\n");
    assert.equal(fs.readFileSync(path.join(root, "review-old.txt"), "utf8"), "old\n", "the rejected deletion left the file");
  });

  /**
   * Writes `rel` holding `text`, opens it unless `open` is false, and starts a patch of it
   * (`change`: the patch's hunks) waiting for review.
   */
  async function proposeOne(rel: string, text: string, change: string, open = true) {
    fs.writeFileSync(path.join(root, rel), text);
    const doc = open ? await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(root, rel))) : undefined;
    if (doc !== undefined) {
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
    }
    const before = new Set(api.review.pending);
    const result = callTool("apply_patch", { patch: `*** Begin Patch\n*** Update File: ${rel}\n${change}*** End Patch\n` });
    const review = await waitFor("the proposal", () => api.review.pending.find((r) => !before.has(r)));
    const proposed = shown(review, rel);
    const editor = await waitFor("the diff editor of the proposed text", () =>
      vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === proposed.toString()),
    );
    return { doc, result, review, proposed, editor };
  }

  /** Puts the cursor of `editor` on 0-based `line`, as the user does before a hunk command. */
  async function cursorOn(editor: vscode.TextEditor, line: number): Promise<void> {
    await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
    const active = vscode.window.activeTextEditor;
    assert.equal(active?.document.uri.toString(), editor.document.uri.toString(), "the proposed text has the focus");
    active.selection = new vscode.Selection(line, 0, line, 0);
  }

  it("takes back one hunk with a reason and accepts only another, as one undo step", async () => {
    const old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    const body = "@@\n-one\n+ONE\n@@\n four\n-five\n+FIVE\n@@\n-seven\n+SEVEN\n";
    const { doc, result, review, proposed, editor } = await proposeOne("review-k.txt", old, body);
    assert.ok(doc);
    assert.equal(editor.document.getText(), "ONE\ntwo\nthree\nfour\nFIVE\nsix\nSEVEN\n");

    // The first hunk goes back in the proposed text, and the review waits on.
    await cursorOn(editor, 0);
    await vscode.commands.executeCommand("tether.review.rejectHunk", proposed, "keep one in lower case");
    assert.equal(editor.document.getText(), "one\ntwo\nthree\nfour\nFIVE\nsix\nSEVEN\n");
    assert.equal(review.isOpen(), true, "two hunks are still proposed");
    assert.equal(doc.getText(), old, "nothing is applied before the user decides");

    // Accepting the hunk under the cursor accepts the file with that hunk only.
    await cursorOn(editor, 6);
    await vscode.commands.executeCommand("tether.review.acceptHunk", proposed);
    const r = await result;
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(outcome(r), {
      decision: "accepted",
      accepted: [],
      rejected: [],
      edited_by_the_user: ["review-k.txt"],
      reason: "keep one in lower case",
    });
    const want = "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n";
    await waitFor("only the accepted hunk in the document", () => doc.getText() === want);
    await waitFor("the review's diff editors to close", () => proposalTabs().length === 0);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand("undo");
    await waitFor("one undo to restore the text", () => doc.getText() === old);
  });

  it("rejects the file when every hunk was taken back", async () => {
    const old = "alpha\nbeta\n";
    const { doc, result, proposed, editor } = await proposeOne("review-l.txt", old, "@@\n-beta\n+BETA\n");
    assert.ok(doc);
    await cursorOn(editor, 1);
    await vscode.commands.executeCommand("tether.review.rejectHunk", proposed, "beta stays");
    const r = await result;
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /rejected.*beta stays/);
    assert.equal(doc.getText(), old);
    assert.equal(fs.readFileSync(path.join(root, "review-l.txt"), "utf8"), old);
  });

  it("keeps a file's mixed line breaks: accepted as proposed, it is not edited by the user", async () => {
    // A file on disk only: an open document would have made its line breaks alike itself.
    // The lines the patch leaves alone keep their breaks.
    const want = "a\r\nb\nC\r\n";
    const { result, review, proposed, editor } = await proposeOne("review-m.txt", "a\r\nb\nc\r\n", "@@\n-c\n+C\n", false);
    assert.equal(review.proposal.files[0]?.newText, want);
    assert.notEqual(editor.document.getText(), want, "VS Code gives a document one kind of line break");
    await vscode.commands.executeCommand("tether.review.acceptFile", proposed);
    const r = await result;
    assert.equal(r.isError, false, text(r));
    assert.deepEqual(outcome(r), { decision: "accepted", accepted: ["review-m.txt"], rejected: [] });
    await waitFor("the change on disk with its line breaks", () => fs.readFileSync(path.join(root, "review-m.txt"), "utf8") === want);
  });

  it("names two files of the same relative path apart", () => {
    const files = ["file:///one/same.txt", "file:///two/same.txt"].map((uri) => ({
      uri, path: "same.txt", kind: "edit" as const, oldText: "a\n", newText: "b\n",
    }));
    const review = new PendingReview(999, { tool: "apply_patch", caller: "assistant", summary: null, files });
    const [one, two] = files;
    assert.ok(one && two);
    assert.notEqual(review.proposalUri(one).toString(), review.proposalUri(two).toString());
    assert.notEqual(review.originalUri(one).toString(), review.originalUri(two).toString());
    assert.equal(review.fileOf(review.proposalUri(two)), two);
    assert.equal(review.fileOf(review.originalUri(one)), one);
    assert.ok(review.proposalUri(two).path.endsWith("/same.txt"), "the name keeps the file's, for its language");
  });

  it("applies nothing when nobody answers in time, and closes the review", async () => {
    await setReview({ mode: "ask", timeout: 1500 });
    try {
      const a = await files("review-g.txt", "review-h.txt");
      const { result, review } = await propose("review-g.txt", "review-h.txt");
      const r = await result;
      assert.equal(r.isError, true, text(r));
      assert.match(text(r), /time/i);
      assert.equal(a.getText(), "alpha\n");
      assert.equal(fs.readFileSync(path.join(root, "review-h.txt"), "utf8"), "beta\n");
      await waitFor("the review to close", () => !review.isOpen() && api.review.pending.length === 0 && proposalTabs().length === 0, 10_000);
    } finally {
      await setReview({ mode: "ask" });
    }
  });

  it("applies at once again when review is turned off, without a restart", async () => {
    await setReview(undefined);
    const a = await files("review-i.txt", "review-j.txt");
    const r = await callTool("apply_patch", { patch: patch("review-i.txt", "review-j.txt") });
    assert.equal(r.isError, false, text(r));
    await waitFor("the change in the document", () => a.getText() === "ALPHA\n");
    assert.equal(api.review.pending.length, 0, "nothing was proposed");
  });
});
