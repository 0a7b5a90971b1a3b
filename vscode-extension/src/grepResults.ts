// Reading tether's grep output (`output_mode: "content"`) into matches the Grep command can show.
// Pure (no `vscode` import) so that unit tests can run it.

/** One matching line. */
export interface GrepMatch {
  /** The path as grep printed it: relative to the first workspace root, or absolute. */
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  readonly text: string;
}

/**
 * The matches in grep's `content` output: `path:line:text` lines. Context lines
 * (`path-line-text`), group separators, notes and the paging footer are skipped.
 */
export function parseGrepContent(output: string): GrepMatch[] {
  const matches: GrepMatch[] = [];
  for (const line of output.split("\n")) {
    // The path is the shortest prefix followed by `:DIGITS:`, so a colon later in the text is
    // kept in the text.
    const m = /^(.+?):(\d+):(.*)$/.exec(line);
    if (m !== null && m[1] !== undefined && m[2] !== undefined && m[3] !== undefined) {
      matches.push({ path: m[1], line: Number(m[2]), text: m[3] });
    }
  }
  return matches;
}
