// Review before apply in VS Code: `tether/review` shows a tool call's change as diff editors
// (the current text, read-only, against the proposed text, which the user may edit), and answers
// with what the user decided, per file or per hunk, through the `tether.review.*` commands that
// the diff editors' title buttons and context menu, the notification and the Quick Pick run.
//
// The original side is a `tether-review:` document from a content provider; the proposed side is
// a file of the in-memory `tether-proposal:` file system, so that it is an ordinary editable
// document whose text (saved or not) is what an accepted file carries when the user changed it.
// A document has one kind of line break: the lines the user leaves alone keep the proposal's own
// (`withLineBreaks`), so a proposal with mixed ones does not come back as edited.

import * as vscode from "vscode";

import { hunkAt, hunks, merge, splitLines, withLineBreaks } from "./hunks";
import {
  buildAnswer,
  describeFile,
  describeProposal,
  type FileDecision,
  hasText,
  type Proposal,
  type ProposalFile,
  type ReviewAnswer,
} from "./reviewAnswer";

/** The scheme of the current text (left side of a diff). */
export const ORIGINAL_SCHEME = "tether-review";
/** The scheme of the proposed text (right side, editable). */
export const PROPOSAL_SCHEME = "tether-proposal";

/** One proposal waiting for the user. */
export class PendingReview {
  /** The decisions so far, by the proposal's file URI. */
  readonly decisions = new Map<string, FileDecision>();
  /** The reasons the user gave when rejecting, joined into the answer's reason. */
  readonly reasons: string[] = [];
  /**
   * A file's proposed text once the user took hunks back, by its URI: what its document shows,
   * with each line's own line break (the proposal's, or the current text's for a hunk taken back).
   */
  readonly proposed = new Map<string, string>();
  private resolveAnswer: ((answer: ReviewAnswer | undefined) => void) | undefined;
  /** The answer sent, or `undefined` when the review ended unanswered (timeout, cancellation). */
  readonly answered: Promise<ReviewAnswer | undefined>;

  constructor(
    /** The review's number in this window; it names its documents. */
    readonly id: number,
    readonly proposal: Proposal,
  ) {
    this.answered = new Promise((resolve) => {
      this.resolveAnswer = resolve;
    });
  }

  /** The URI of a file's original text (left side). */
  originalUri(file: ProposalFile): vscode.Uri {
    return vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: this.name(file) });
  }

  /** The URI of a file's proposed, editable text (right side). */
  proposalUri(file: ProposalFile): vscode.Uri {
    return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: this.name(file) });
  }

  /**
   * A file's name among the review documents: the review, the file's place in the proposal (two
   * workspace folders may hold the same relative path), and its path, whose name picks the language.
   */
  private name(file: ProposalFile): string {
    return `/${this.id}/${this.proposal.files.indexOf(file)}/${file.path}`;
  }

  /** The file a URI names: the proposal's own `file:` URI, or either side of its diff. */
  fileOf(uri: vscode.Uri | string): ProposalFile | undefined {
    const key = uri.toString();
    return this.proposal.files.find(
      (f) => f.uri === key || this.originalUri(f).toString() === key || this.proposalUri(f).toString() === key,
    );
  }

  /** The files the user has not decided on yet. */
  get undecided(): ProposalFile[] {
    return this.proposal.files.filter((f) => !this.decisions.has(f.uri));
  }

  /** Whether it is still waiting. */
  isOpen(): boolean {
    return this.resolveAnswer !== undefined;
  }

  /** Ends the review with an answer (or none); later calls do nothing. */
  finish(answer: ReviewAnswer | undefined): void {
    const resolve = this.resolveAnswer;
    this.resolveAnswer = undefined;
    resolve?.(answer);
  }
}

/** A read-only document per original text, and a writable in-memory file per proposed text. */
class ReviewDocuments implements vscode.TextDocumentContentProvider, vscode.FileSystemProvider {
  private readonly originals = new Map<string, string>();
  private readonly proposals = new Map<string, { data: Uint8Array; mtime: number; ctime: number }>();
  private readonly changedFiles = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changedFiles.event;

  setOriginal(uri: vscode.Uri, text: string): void {
    this.originals.set(uri.toString(), text);
  }

  setProposal(uri: vscode.Uri, text: string): void {
    const now = Date.now();
    this.proposals.set(uri.toString(), { data: new TextEncoder().encode(text), mtime: now, ctime: now });
  }

  /** The proposed text as last saved (to memory), for a proposal whose document is closed. */
  proposalText(uri: vscode.Uri): string | undefined {
    const file = this.proposals.get(uri.toString());
    return file === undefined ? undefined : new TextDecoder().decode(file.data);
  }

  forget(uris: vscode.Uri[]): void {
    for (const uri of uris) {
      this.originals.delete(uri.toString());
      this.proposals.delete(uri.toString());
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.originals.get(uri.toString()) ?? "";
  }

  // The in-memory file system: flat, one file per proposal, every folder implied.
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const file = this.proposals.get(uri.toString());
    if (file === undefined) {
      const prefix = uri.toString().replace(/\/?$/, "/");
      if ([...this.proposals.keys()].some((k) => k.startsWith(prefix))) {
        return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
      }
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return { type: vscode.FileType.File, ctime: file.ctime, mtime: file.mtime, size: file.data.byteLength };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {}

  readFile(uri: vscode.Uri): Uint8Array {
    const file = this.proposals.get(uri.toString());
    if (file === undefined) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return file.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const file = this.proposals.get(uri.toString());
    if (file === undefined) {
      // Only the proposals this extension made exist; the user cannot add files here.
      throw vscode.FileSystemError.NoPermissions(uri);
    }
    file.data = content;
    file.mtime = Date.now();
    this.changedFiles.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  dispose(): void {
    this.changedFiles.dispose();
  }
}

/** Shows the proposals of `tether/review` and answers them with the user's decisions. */
export class ReviewController implements vscode.Disposable {
  private readonly documents = new ReviewDocuments();
  private readonly disposables: { dispose(): unknown }[] = [];
  private readonly _pending: PendingReview[] = [];
  private nextId = 1;
  private readonly proposed = new vscode.EventEmitter<PendingReview>();

  /** Fires when a proposal is shown. */
  readonly onDidPropose = this.proposed.event;

  constructor(
    /** How long the server waits for an answer (the review setting's timeout, in ms). */
    private readonly timeout: () => number,
  ) {
    this.disposables.push(
      this.proposed,
      this.documents,
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, this.documents),
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this.documents, { isCaseSensitive: true }),
      vscode.commands.registerCommand("tether.review.acceptAll", (...args: unknown[]) => {
        this.acceptAll(args);
      }),
      vscode.commands.registerCommand("tether.review.rejectAll", (...args: unknown[]) => this.rejectAll(args)),
      vscode.commands.registerCommand("tether.review.acceptFile", (...args: unknown[]) => this.decideFile("accept", args)),
      vscode.commands.registerCommand("tether.review.rejectFile", (...args: unknown[]) => this.decideFile("reject", args)),
      vscode.commands.registerCommand("tether.review.acceptHunk", (...args: unknown[]) => this.decideHunk("accept", args)),
      vscode.commands.registerCommand("tether.review.rejectHunk", (...args: unknown[]) => this.decideHunk("reject", args)),
      vscode.commands.registerCommand("tether.review.show", () => this.pick(this.current())),
    );
  }

  /** The proposals waiting for the user, oldest first. */
  get pending(): readonly PendingReview[] {
    return this._pending;
  }

  /**
   * `tether/review`: shows the proposal and resolves with the user's answer. A review that ends
   * unanswered (the server's timeout passed, or it cancelled) rejects, which the server ignores.
   */
  async review(proposal: Proposal, token?: vscode.CancellationToken): Promise<ReviewAnswer> {
    const review = new PendingReview(this.nextId++, proposal);
    this._pending.push(review);
    this.updateContext();
    // The server withdraws a review it stopped waiting for (`$/cancelRequest`, the token); this
    // timer ends one a server did not withdraw (an older one), well after the server's timeout.
    const timer = setTimeout(() => {
      review.finish(undefined);
    }, this.timeout() + 30_000);
    const cancelled = token?.onCancellationRequested(() => {
      review.finish(undefined);
    });
    try {
      for (const file of proposal.files.filter(hasText)) {
        this.documents.setOriginal(review.originalUri(file), file.kind === "edit" ? (file.oldText ?? "") : "");
        this.documents.setProposal(review.proposalUri(file), file.newText ?? "");
      }
      await this.showDiffs(review);
      this.proposed.fire(review);
      void this.notify(review);
      const answer = await review.answered;
      if (answer === undefined) {
        throw new Error("the review ended without an answer");
      }
      return answer;
    } finally {
      clearTimeout(timer);
      cancelled?.dispose();
      this._pending.splice(this._pending.indexOf(review), 1);
      this.updateContext();
      await this.close(review);
    }
  }

  /** `tether.reviewPending`, which shows the commands in the Command Palette while a review waits. */
  private updateContext(): void {
    void vscode.commands.executeCommand("setContext", "tether.reviewPending", this._pending.length > 0);
  }

  private async showDiffs(review: PendingReview): Promise<void> {
    for (const file of review.proposal.files.filter(hasText)) {
      const title = `${file.path} (${file.kind === "create" ? "new file" : "proposed"} by ${review.proposal.tool}) — tether review`;
      await vscode.commands.executeCommand("vscode.diff", review.originalUri(file), review.proposalUri(file), title, {
        preview: false,
        preserveFocus: false,
      });
    }
  }

  /** The notification: accept or reject everything, or go through the files. */
  private async notify(review: PendingReview): Promise<void> {
    const choice = await vscode.window.showInformationMessage(
      `tether: ${describeProposal(review.proposal)}.`,
      "Accept All",
      "Reject All…",
      "Review Files…",
    );
    if (!review.isOpen()) {
      return;
    }
    if (choice === "Accept All") {
      this.acceptAll([review]);
    } else if (choice === "Reject All…") {
      await this.rejectAll([review]);
    } else if (choice === "Review Files…") {
      await this.pick(review);
    }
  }

  /** A Quick Pick over the undecided files: accept or reject the ones picked. */
  private async pick(review: PendingReview | undefined): Promise<void> {
    if (review === undefined || !review.isOpen()) {
      void vscode.window.showInformationMessage("tether: no change is waiting for review.");
      return;
    }
    const items = review.undecided.map((f) => ({ label: describeFile(f), description: f.kind, file: f }));
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: `tether: ${describeProposal(review.proposal)}`,
      placeHolder: "Pick the files to decide on",
    });
    if (picked === undefined || picked.length === 0 || !review.isOpen()) {
      return;
    }
    const action = await vscode.window.showQuickPick(["Accept", "Reject…"], { placeHolder: `${picked.length} file(s)` });
    if (action === "Accept") {
      for (const item of picked) {
        this.decide(review, item.file, "accept");
      }
    } else if (action === "Reject…") {
      const reason = await this.askReason();
      if (reason !== undefined) {
        for (const item of picked) {
          this.decide(review, item.file, "reject", reason);
        }
      }
    }
  }

  /**
   * The review a command acts on: one named in its arguments (a review, or a URI of one of its
   * files as an editor title button passes it), else the active editor's, else the oldest.
   */
  private current(args: readonly unknown[] = []): PendingReview | undefined {
    for (const arg of args) {
      if (arg instanceof PendingReview) {
        return arg;
      }
      if (arg instanceof vscode.Uri) {
        const review = this._pending.find((r) => r.fileOf(arg) !== undefined);
        if (review !== undefined) {
          return review;
        }
      }
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && this._pending.find((r) => r.fileOf(active) !== undefined)) ?? this._pending[0];
  }

  /** The file a command acts on: the URI in its arguments, else the active editor's. */
  private currentFile(review: PendingReview, args: readonly unknown[]): ProposalFile | undefined {
    for (const arg of args) {
      if (arg instanceof vscode.Uri || typeof arg === "string") {
        const file = review.fileOf(arg);
        if (file !== undefined) {
          return file;
        }
      }
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    return active === undefined ? undefined : review.fileOf(active);
  }

  /** `tether.review.acceptAll`: every undecided file accepted (with the user's text where edited). */
  private acceptAll(args: readonly unknown[]): void {
    const review = this.current(args);
    if (review === undefined) {
      return;
    }
    for (const file of review.undecided) {
      this.decide(review, file, "accept");
    }
  }

  /** `tether.review.rejectAll`: every undecided file rejected, with a reason (a string argument, or asked). */
  private async rejectAll(args: readonly unknown[]): Promise<void> {
    const review = this.current(args);
    if (review === undefined) {
      return;
    }
    const given = args.find((a): a is string => typeof a === "string");
    const reason = given ?? (await this.askReason());
    if (reason === undefined || !review.isOpen()) {
      return;
    }
    for (const file of review.undecided) {
      this.decide(review, file, "reject", reason);
    }
  }

  /**
   * `tether.review.acceptFile` and `tether.review.rejectFile`: the file of the diff editor whose
   * button was pressed (its URI is the argument), or of the active editor. A rejection asks for a
   * reason unless a string argument gives it.
   */
  private async decideFile(decision: "accept" | "reject", args: readonly unknown[]): Promise<void> {
    const review = this.current(args);
    const file = review === undefined ? undefined : this.currentFile(review, args);
    if (review === undefined || file === undefined) {
      void vscode.window.showInformationMessage("tether: this editor shows no change waiting for review.");
      return;
    }
    let reason: string | undefined;
    if (decision === "reject") {
      const given = args.find((a): a is string => typeof a === "string" && review.fileOf(a) === undefined);
      reason = given ?? (await this.askReason());
      if (reason === undefined) {
        return;
      }
    }
    this.decide(review, file, decision, reason);
    if (review.isOpen()) {
      // Close the decided file's diff, and show the next one.
      await this.closeFile(review, file);
    }
  }

  /**
   * `tether.review.acceptHunk` and `tether.review.rejectHunk`: the hunk under the cursor of a
   * proposed text (or at the 0-based line a number argument gives). Accepting it accepts the
   * file with only that hunk, as Neovim's `gh` does; rejecting it takes it back in the proposed
   * text (one undo step there), with a reason (a string argument, or asked), and rejects the
   * file when no hunk is left.
   */
  private async decideHunk(decision: "accept" | "reject", args: readonly unknown[]): Promise<void> {
    const review = this.current(args);
    const file = review === undefined ? undefined : this.currentFile(review, args);
    const uri = review !== undefined && file !== undefined ? review.proposalUri(file).toString() : undefined;
    const editor = [vscode.window.activeTextEditor, ...vscode.window.visibleTextEditors].find(
      (e) => e !== undefined && e.document.uri.toString() === uri,
    );
    if (review === undefined || file === undefined || !hasText(file) || review.decisions.has(file.uri)) {
      void vscode.window.showInformationMessage("tether: put the cursor on a hunk of a proposed text waiting for review.");
      return;
    }
    const line = args.find((a): a is number => typeof a === "number") ?? editor?.selection.active.line ?? 0;
    const old = file.kind === "edit" ? (file.oldText ?? "") : "";
    const proposed = this.proposedText(review, file);
    const all = hunks(old, proposed);
    const i = hunkAt(all, line);
    const hunk = i === undefined ? undefined : all[i];
    if (i === undefined || hunk === undefined) {
      void vscode.window.showInformationMessage(`tether: line ${line + 1} of ${file.path} is not part of a change.`);
      return;
    }
    if (decision === "accept") {
      this.decide(review, file, "accept", undefined, merge(old, proposed, new Set([i])));
      if (review.isOpen()) {
        await this.closeFile(review, file);
      }
      return;
    }
    const given = args.find((a): a is string => typeof a === "string" && review.fileOf(a) === undefined);
    const reason = given ?? (await this.askReason());
    if (reason === undefined || !review.isOpen() || review.decisions.has(file.uri)) {
      return;
    }
    const rest = merge(old, proposed, new Set(all.map((_, k) => k).filter((k) => k !== i)));
    const back = splitLines(old).slice(hunk.oldStart, hunk.oldStart + hunk.oldCount).join("");
    const edit = new vscode.WorkspaceEdit();
    edit.replace(review.proposalUri(file), new vscode.Range(hunk.newStart, 0, hunk.newStart + hunk.newCount, 0), back);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(`tether: could not take the change back in ${file.path}.`);
      return;
    }
    review.proposed.set(file.uri, rest);
    if (reason.trim() !== "") {
      review.reasons.push(reason.trim());
    }
    if (hunks(old, this.proposedText(review, file)).length === 0) {
      this.decide(review, file, "reject");
      if (review.isOpen()) {
        await this.closeFile(review, file);
      }
    }
  }

  /**
   * A file's proposed text as the user means it now: its document's text (saved or not), each
   * line the user left alone with the line break the proposal gave it.
   */
  private proposedText(review: PendingReview, file: ProposalFile): string {
    const base = review.proposed.get(file.uri) ?? file.newText ?? "";
    const shown = this.proposalDocument(review, file)?.getText() ?? this.documents.proposalText(review.proposalUri(file));
    return shown === undefined ? base : withLineBreaks(base, shown);
  }

  /** Records one decision; the last one sends the answer. An accepted file carries `text`, or its proposed text. */
  private decide(
    review: PendingReview,
    file: ProposalFile,
    decision: "accept" | "reject",
    reason?: string,
    text?: string,
  ): void {
    if (!review.isOpen() || review.decisions.has(file.uri)) {
      return;
    }
    if (decision === "accept") {
      const taken = text ?? (hasText(file) ? this.proposedText(review, file) : undefined);
      review.decisions.set(file.uri, { decision, ...(taken !== undefined ? { text: taken } : {}) });
    } else {
      review.decisions.set(file.uri, { decision });
      if (reason !== undefined && reason.trim() !== "") {
        review.reasons.push(reason.trim());
      }
    }
    if (review.undecided.length === 0) {
      review.finish(buildAnswer(review.proposal, review.decisions, review.reasons.join("; ")));
    }
  }

  /** The open document of a file's proposed text (with the user's unsaved edits), if open. */
  private proposalDocument(review: PendingReview, file: ProposalFile): vscode.TextDocument | undefined {
    const key = review.proposalUri(file).toString();
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
  }

  private askReason(): Thenable<string | undefined> {
    return vscode.window.showInputBox({
      title: "tether: reject",
      prompt: "Why? The assistant reads this (optional; Escape cancels the rejection)",
      placeHolder: "reason",
    });
  }

  /** Closes a file's diff editor without asking to save the proposed text (it lives in memory). */
  private async closeFile(review: PendingReview, file: ProposalFile): Promise<void> {
    await this.closeTabs([review.proposalUri(file).toString()]);
  }

  /** Closes every editor of a review and forgets its documents. */
  private async close(review: PendingReview): Promise<void> {
    const files = review.proposal.files.filter(hasText);
    await this.closeTabs(files.map((f) => review.proposalUri(f).toString()));
    this.documents.forget(files.flatMap((f) => [review.originalUri(f), review.proposalUri(f)]));
  }

  private async closeTabs(proposals: string[]): Promise<void> {
    // A proposal the user edited is dirty; saving it (to memory) lets its tab close without a prompt.
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.isDirty && proposals.includes(doc.uri.toString())) {
        await doc.save();
      }
    }
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
      const input = t.input;
      const uri =
        input instanceof vscode.TabInputTextDiff ? input.modified : input instanceof vscode.TabInputText ? input.uri : undefined;
      return uri !== undefined && proposals.includes(uri.toString());
    });
    if (tabs.length > 0) {
      await vscode.window.tabGroups.close(tabs, true);
    }
  }

  dispose(): void {
    for (const review of this._pending) {
      review.finish(undefined);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
