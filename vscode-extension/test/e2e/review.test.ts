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
import { PROPOSAL_SCHEME, type PendingReview } from "../../src/review";
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
