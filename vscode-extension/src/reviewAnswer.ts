// `tether/review` (editors/protocol.md): the proposal the server sends and the answer the user's
// decisions make. Pure (no `vscode` import) so that unit tests can run it.

/** Request from the server: review one tool call's change before it is applied. */
export const REVIEW = "tether/review";

/** What one operation of a proposal does to its file. */
export type ReviewKind = "edit" | "create" | "delete" | "rename" | "mkdir";

/** One file of a proposal. */
export interface ProposalFile {
  readonly uri: string;
  readonly path: string;
  readonly kind: ReviewKind;
  /** The text the change was computed against; `null` where there is none. */
  readonly oldText: string | null;
  /** The text the change would leave; `null` where there is none. */
  readonly newText: string | null;
  readonly newUri?: string;
  readonly newPath?: string;
  readonly recursive?: boolean;
}

/** Params of `tether/review`. */
export interface Proposal {
  readonly tool: string;
  /** `editor` for a call the editor started, `assistant` for one over the bridge. */
  readonly caller: string;
  readonly summary: string | null;
  readonly files: readonly ProposalFile[];
}

/** One file of an answer. */
export interface FileAnswer {
  readonly uri: string;
  readonly decision: "accept" | "reject";
  /** The user's own text for an accepted `edit` or `create`, in place of the proposed text. */
  readonly text?: string;
}

/** Result of `tether/review`. */
export interface ReviewAnswer {
  readonly decision: "accept" | "reject" | "partial";
  readonly reason?: string;
  readonly files?: FileAnswer[];
}

/** The user's decision on one file; `text` is the proposal document's text when it was accepted. */
export interface FileDecision {
  readonly decision: "accept" | "reject";
  readonly text?: string;
}

/** Whether the user can see and edit a file's proposed text (a diff editor), or only decide on it. */
export function hasText(file: ProposalFile): boolean {
  return (file.kind === "edit" || file.kind === "create") && file.newText !== null;
}

/**
 * The answer to a proposal once the user decided on its files (`decisions` by URI; a file left
 * out is rejected, as the protocol reads it). An accepted file carries `text` only where the user
 * changed the proposed text. Every file accepted unchanged is a plain `accept`; every file
 * rejected a `reject`; anything else lists the files. An empty or blank reason is left out.
 */
export function buildAnswer(
  proposal: Proposal,
  decisions: ReadonlyMap<string, FileDecision>,
  reason?: string,
): ReviewAnswer {
  const why = reason !== undefined && reason.trim() !== "" ? { reason: reason.trim() } : {};
  const files: FileAnswer[] = proposal.files.map((f) => {
    const d = decisions.get(f.uri);
    if (d?.decision !== "accept") {
      return { uri: f.uri, decision: "reject" };
    }
    const edited = hasText(f) && d.text !== undefined && d.text !== f.newText;
    return edited ? { uri: f.uri, decision: "accept", text: d.text } : { uri: f.uri, decision: "accept" };
  });
  if (files.every((f) => f.decision === "reject")) {
    return { decision: "reject", ...why };
  }
  if (files.every((f) => f.decision === "accept")) {
    const edited = files.filter((f) => f.text !== undefined);
    return { decision: "accept", ...why, ...(edited.length > 0 ? { files } : {}) };
  }
  return { decision: "partial", ...why, files };
}

/** A short line for the notification: what the tool wants to change. */
export function describeProposal(proposal: Proposal): string {
  const who = proposal.caller === "assistant" ? "An assistant" : "A tool call";
  const names = proposal.files.map((f) => describeFile(f));
  const list = names.length <= 3 ? names.join(", ") : `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`;
  return `${who} (${proposal.tool}) wants to change ${list}${proposal.summary ? `: ${proposal.summary}` : ""}`;
}

/** One file of a proposal in words: `a.txt`, `new n.txt`, `delete old/`, `old.txt → new.txt`. */
export function describeFile(file: ProposalFile): string {
  switch (file.kind) {
    case "create":
      return `new ${file.path}`;
    case "delete":
      return `delete ${file.path}${file.recursive === true ? "/" : ""}`;
    case "rename":
      return `${file.path} → ${file.newPath ?? file.newUri ?? "?"}`;
    case "mkdir":
      return `new folder ${file.path}`;
    default:
      return file.path;
  }
}
