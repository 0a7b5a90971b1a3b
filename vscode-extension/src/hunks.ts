// Line hunks of a proposal, for deciding a review hunk by hunk, and the line breaks a document
// loses: VS Code gives every document one kind of line break, so a proposal with mixed ones
// shows with them made alike. Pure (no `vscode` import) so that unit tests can run it.

import { diffArrays } from "diff";

/** One hunk between two texts: 0-based first lines and line counts; a count may be 0. */
export interface Hunk {
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
}

/** The lines of a text, each with its line break (`\r\n`, `\n` or `\r`); the last may have none. */
export function splitLines(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
}

/** A line without its line break. */
function content(line: string): string {
  return line.replace(/(?:\r\n|\r|\n)$/, "");
}

/** A line's line break, or `""`. */
function lineBreak(line: string): string {
  return line.slice(content(line).length);
}

/** The hunks that turn `old` into `proposed`, line by line, line breaks included. */
export function hunks(old: string, proposed: string): Hunk[] {
  const out: Hunk[] = [];
  let o = 0;
  let n = 0;
  let open: { oldStart: number; newStart: number } | undefined;
  const close = () => {
    if (open !== undefined) {
      out.push({ ...open, oldCount: o - open.oldStart, newCount: n - open.newStart });
      open = undefined;
    }
  };
  for (const change of diffArrays(splitLines(old), splitLines(proposed))) {
    const count = change.count;
    if (!change.added && !change.removed) {
      close();
      o += count;
      n += count;
      continue;
    }
    open ??= { oldStart: o, newStart: n };
    if (change.removed) {
      o += count;
    } else {
      n += count;
    }
  }
  close();
  return out;
}

/**
 * `old` with only the hunks of `old`→`proposed` whose index is in `take`: the proposed lines of
 * those, the old lines everywhere else, every line with its own line break.
 */
export function merge(old: string, proposed: string, take: ReadonlySet<number>): string {
  const a = splitLines(old);
  const b = splitLines(proposed);
  const out: string[] = [];
  let next = 0;
  hunks(old, proposed).forEach((h, i) => {
    out.push(...a.slice(next, h.oldStart));
    out.push(...(take.has(i) ? b.slice(h.newStart, h.newStart + h.newCount) : a.slice(h.oldStart, h.oldStart + h.oldCount)));
    next = h.oldStart + h.oldCount;
  });
  out.push(...a.slice(next));
  return out.join("");
}

/**
 * The index of the hunk that covers line `line` (0-based) of the proposed text: a hunk that only
 * removes lines covers the lines either side of where they were.
 */
export function hunkAt(all: readonly Hunk[], line: number): number | undefined {
  const i = all.findIndex((h) =>
    h.newCount > 0 ? line >= h.newStart && line < h.newStart + h.newCount : line === h.newStart - 1 || line === h.newStart,
  );
  return i < 0 ? undefined : i;
}

/**
 * The text a document that showed `proposed` means, when it now holds `shown`: a line the user
 * left as it was keeps the line break `proposed` gave it; a line they wrote has the document's.
 * A document left alone gives `proposed` back exactly, whatever its line breaks.
 */
export function withLineBreaks(proposed: string, shown: string): string {
  const a = splitLines(proposed);
  const b = splitLines(shown);
  const out: string[] = [];
  let o = 0;
  let n = 0;
  for (const change of diffArrays(a.map(content), b.map(content))) {
    if (change.removed) {
      o += change.count;
    } else if (change.added) {
      out.push(...b.slice(n, n + change.count));
      n += change.count;
    } else {
      for (let k = 0; k < change.count; k++) {
        const mine = b[n + k] ?? "";
        const theirs = a[o + k] ?? "";
        // The break the proposal gave the line, where the document has one there too.
        const end = lineBreak(mine) === "" ? "" : lineBreak(theirs) || lineBreak(mine);
        out.push(content(mine) + end);
      }
      o += change.count;
      n += change.count;
    }
  }
  return out.join("");
}
