// The change journal as the extension shows it: the answers of the `history` and `undo` tools
// (issue 22) turned into Quick Pick items, diff sides and messages. Pure (no `vscode` import) so
// that unit tests can run it.

/** One file of a changeset. */
export interface ChangesetFile {
  /** Relative to its root; absolute when the workspace has several roots and it is not in the first. */
  readonly path: string;
  /** `edit`, `create`, `overwrite`, `delete`, `rename` or `mkdir` (another is shown by its name). */
  readonly op: string;
  /** For a rename: where the file was. */
  readonly from?: string;
  /** Lines added and removed. */
  readonly added?: number;
  readonly removed?: number;
  /** With `texts: true`: the whole text before the change (`null` where the file did not exist). */
  readonly before?: string | null;
  /** With `texts: true`: the whole text after the change (`null` where the file does not exist). */
  readonly after?: string | null;
  /** The file is not text: `before` and `after` are both `null`. */
  readonly binary?: boolean;
}

/** One changeset of the journal: everything one tool call changed. */
export interface Changeset {
  readonly id: string;
  /** RFC 3339. */
  readonly time: string;
  readonly tool: string;
  readonly summary: string;
  /** The MCP client's `name version`, `editor` or `cli`. */
  readonly client: string;
  readonly files: readonly ChangesetFile[];
  /** On an undo: the changesets it reversed. */
  readonly undoes?: readonly string[];
  /** When it was undone: the undo's id. */
  readonly undone_by?: string;
}

/** `history` without `id`. */
export interface HistoryList {
  readonly changesets: readonly Changeset[];
  readonly more: boolean;
}

/** `history` with `id`. */
export interface HistoryDetail {
  readonly changeset: Changeset;
  readonly diff: string;
}

/** The part of a tool result this module reads (an MCP `CallToolResult`). */
export interface ToolAnswer {
  readonly content: readonly { readonly type: string; readonly text?: string }[];
  readonly isError?: boolean;
  readonly structuredContent?: unknown;
}

/** The text of a result, its text items joined. */
function textOf(result: ToolAnswer): string {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

/** The standard profile's error text `{"error": KIND, "message": "..."}` read, else the text as it is. */
export function errorMessage(result: ToolAnswer): { kind?: string; message: string } {
  const text = textOf(result).trim();
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof parsed.message === "string") {
      return { ...(typeof parsed.error === "string" ? { kind: parsed.error } : {}), message: parsed.message };
    }
  } catch {
    // Not JSON: the whole text is the message.
  }
  return { message: text === "" ? "the server gave no reason" : text };
}

/** The JSON a result carries: `structuredContent`, else its text parsed. Throws on an error result. */
function answerOf(result: ToolAnswer, tool: string): unknown {
  if (result.isError === true) {
    throw new Error(`${tool} failed: ${errorMessage(result).message}`);
  }
  if (typeof result.structuredContent === "object" && result.structuredContent !== null) {
    return result.structuredContent;
  }
  const text = textOf(result);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${tool} answered text that is not JSON: ${text.slice(0, 200)}`);
  }
}

function isChangeset(v: unknown): v is Changeset {
  if (typeof v !== "object" || v === null) {
    return false;
  }
  const c = v as Record<string, unknown>;
  return (
    typeof c.id === "string" &&
    typeof c.time === "string" &&
    typeof c.tool === "string" &&
    typeof c.client === "string" &&
    Array.isArray(c.files) &&
    c.files.every((f) => typeof f === "object" && f !== null && typeof (f as { path?: unknown }).path === "string")
  );
}

/** Reads `history`'s answer without `id`; throws with what was wrong. */
export function parseHistory(result: ToolAnswer): HistoryList {
  const v = answerOf(result, "history") as { changesets?: unknown; more?: unknown };
  if (!Array.isArray(v.changesets)) {
    throw new Error(`history answered without a list of changesets: ${JSON.stringify(v).slice(0, 200)}`);
  }
  const bad = (v.changesets as unknown[]).find((c) => !isChangeset(c));
  if (bad !== undefined) {
    throw new Error(`history answered a changeset this extension cannot read: ${JSON.stringify(bad).slice(0, 200)}`);
  }
  return { changesets: v.changesets as Changeset[], more: v.more === true };
}

/** Reads `history {id}`'s answer; throws with what was wrong. */
export function parseDetail(result: ToolAnswer): HistoryDetail {
  const v = answerOf(result, "history") as { changeset?: unknown; diff?: unknown };
  if (!isChangeset(v.changeset)) {
    throw new Error(`history answered no changeset this extension can read: ${JSON.stringify(v).slice(0, 200)}`);
  }
  return { changeset: v.changeset, diff: typeof v.diff === "string" ? v.diff : "" };
}

/**
 * How long ago a time was, in words: `just now`, `42 s ago`, `5 min ago`, `3 h ago`,
 * `yesterday`, `4 days ago`, then the date (`2026-10-02`). A time in the future (another
 * machine's clock) is `just now`; one that does not parse is shown as it is.
 */
export function relativeTime(time: string, now: number): string {
  const then = Date.parse(time);
  if (Number.isNaN(then)) {
    return time;
  }
  const seconds = Math.floor((now - then) / 1000);
  if (seconds < 10) {
    return "just now";
  }
  if (seconds < 60) {
    return `${seconds} s ago`;
  }
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.floor(hours / 24);
  if (days === 1) {
    return "yesterday";
  }
  if (days < 30) {
    return `${days} days ago`;
  }
  return new Date(then).toISOString().slice(0, 10);
}

/** One file of a changeset in a few words: `src/a.py +1 −2`, `new.txt (created)`, `a → b (renamed)`. */
export function describeFile(f: ChangesetFile): string {
  const counts = (): string => {
    const parts = [
      ...(f.added !== undefined && f.added > 0 ? [`+${f.added}`] : []),
      ...(f.removed !== undefined && f.removed > 0 ? [`−${f.removed}`] : []),
    ];
    return parts.length > 0 ? ` ${parts.join(" ")}` : "";
  };
  switch (f.op) {
    case "edit":
      return `${f.path}${counts()}`;
    case "create":
      return `${f.path} (created)`;
    case "overwrite":
      return `${f.path} (rewritten${counts()})`;
    case "delete":
      return `${f.path} (deleted)`;
    case "rename":
      return `${f.from ?? "?"} → ${f.path} (renamed)`;
    case "mkdir":
      return `${f.path}/ (new folder)`;
    default:
      return `${f.path} (${f.op})`;
  }
}

/** Whether a changeset can be undone now: one that was undone already cannot. */
export function canUndo(c: Changeset): boolean {
  return c.undone_by === undefined;
}

/** A Quick Pick item's texts for one changeset (the UI adds its buttons). */
export interface ChangesetItem {
  /** `#12 edit_file: edited src/a.py: 1 replacement`. */
  readonly label: string;
  /** The client and how long ago, and whether it was undone or undoes others. */
  readonly description: string;
  /** The files. */
  readonly detail: string;
  readonly changeset: Changeset;
}

/** The Quick Pick item of a changeset. */
export function changesetItem(c: Changeset, now: number): ChangesetItem {
  const marks = [
    ...(c.undone_by !== undefined ? [`undone by #${c.undone_by}`] : []),
    ...(c.undoes !== undefined && c.undoes.length > 0 ? [`undoes ${c.undoes.map((id) => `#${id}`).join(", ")}`] : []),
  ];
  return {
    label: `#${c.id} ${c.tool}: ${c.summary}`,
    description: [c.client, relativeTime(c.time, now), ...marks].join(" · "),
    detail: c.files.length === 0 ? "no files" : c.files.map(describeFile).join(", "),
    changeset: c,
  };
}

/** The Quick Pick items of `history`'s list, newest first as the server sends them. */
export function changesetItems(list: HistoryList, now: number): ChangesetItem[] {
  return list.changesets.map((c) => changesetItem(c, now));
}

/** One side-by-side view of a file of a changeset: the texts before and after. */
export interface FileDiff {
  /** The file's path as the journal names it (after the change, for a rename). */
  readonly path: string;
  /** Where the text before was: `from` for a rename, else `path`. */
  readonly beforePath: string;
  /** `null` where the file did not exist before the change (it was created). */
  readonly before: string | null;
  /** `null` where the file does not exist after the change (it was deleted). */
  readonly after: string | null;
  /** The diff editor's title: `src/a.py (#12 edit_file, claude-code 1.0.3)`. */
  readonly title: string;
}

/**
 * The diffs of a changeset read with `texts: true`: its text files (binary files and folders
 * have none), in the changeset's order.
 */
export function fileDiffs(c: Changeset): FileDiff[] {
  return c.files
    .filter((f) => f.binary !== true && f.op !== "mkdir" && (typeof f.before === "string" || typeof f.after === "string"))
    .map((f) => {
      const shown = f.op === "rename" && f.from !== undefined ? `${f.from} → ${f.path}` : f.path;
      return {
        path: f.path,
        beforePath: f.op === "rename" && f.from !== undefined ? f.from : f.path,
        before: f.before ?? null,
        after: f.after ?? null,
        title: `${shown} (#${c.id} ${c.tool}, ${c.client})`,
      };
    });
}

/** The files of a changeset that no diff shows, and why: `logo.png (binary)`. */
export function filesWithoutDiff(c: Changeset): string[] {
  const why = (f: ChangesetFile): string =>
    f.binary === true
      ? "binary"
      : f.op === "mkdir"
        ? "folder"
        : f.op === "rename" && f.from !== undefined
          ? `renamed from ${f.from}`
          : "no text";
  return c.files
    .filter((f) => f.binary === true || f.op === "mkdir" || (typeof f.before !== "string" && typeof f.after !== "string"))
    .map((f) => `${f.path} (${why(f)})`);
}

/** What `undo` answered: its text on success, the server's message on failure. */
export interface UndoOutcome {
  readonly ok: boolean;
  /** The error kind on failure (`conflict`, `not_found`, `invalid_input`, ...). */
  readonly kind?: string;
  /** The success text, or the error's message (for a conflict it names the file and lines). */
  readonly text: string;
}

/** Reads `undo`'s result. */
export function undoOutcome(result: ToolAnswer): UndoOutcome {
  if (result.isError === true) {
    const { kind, message } = errorMessage(result);
    return { ok: false, ...(kind !== undefined ? { kind } : {}), text: message };
  }
  return { ok: true, text: textOf(result).trim() };
}
