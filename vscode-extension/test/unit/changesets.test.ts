// The change journal's answers (`history`, `undo`) as Show Assistant Changes shows them.

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  type Changeset,
  changesetItem,
  changesetItems,
  describeFile,
  errorMessage,
  fileDiffs,
  filesWithoutDiff,
  parseDetail,
  parseHistory,
  relativeTime,
  type ToolAnswer,
  undoOutcome,
} from "../../src/changesets";

const NOW = Date.parse("2026-11-25T12:00:00.000Z");

/** A tool result as `tether.callTool` answers: the JSON as structured content and as text. */
const answer = (json: unknown, structured = true): ToolAnswer => ({
  content: [{ type: "text", text: JSON.stringify(json, null, 2) }],
  isError: false,
  ...(structured ? { structuredContent: json } : {}),
});

const error = (kind: string, message: string): ToolAnswer => ({
  content: [{ type: "text", text: JSON.stringify({ error: kind, message }) }],
  isError: true,
});

// The spec's example, and an undo of it.
const EDIT: Changeset = {
  id: "12",
  time: "2026-11-25T10:00:00.123Z",
  tool: "edit_file",
  summary: "edited src/a.py: 1 replacement",
  client: "claude-code 1.0.3",
  files: [{ path: "src/a.py", op: "edit", added: 1, removed: 1 }],
  undone_by: "14",
};
const UNDO: Changeset = {
  id: "14",
  time: "2026-11-25T11:59:30Z",
  tool: "undo",
  summary: "undid #12",
  client: "editor",
  files: [{ path: "src/a.py", op: "edit", added: 1, removed: 1 }],
  undoes: ["12"],
};

describe("parseHistory", () => {
  it("reads the structured content, else the text", () => {
    const list = { changesets: [UNDO, EDIT], more: true };
    assert.deepEqual(parseHistory(answer(list)), list);
    assert.deepEqual(parseHistory(answer(list, false)), list);
    assert.deepEqual(parseHistory(answer({ changesets: [] })), { changesets: [], more: false });
  });

  it("throws the server's message for an error result, and says what it could not read", () => {
    assert.throws(() => parseHistory(error("invalid_input", "since: not a time")), /history failed: since: not a time/);
    assert.throws(() => parseHistory({ content: [{ type: "text", text: "oops" }] }), /not JSON: oops/);
    assert.throws(() => parseHistory(answer({ changes: [] })), /without a list of changesets/);
    assert.throws(() => parseHistory(answer({ changesets: [{ id: 12 }] })), /cannot read: \{"id":12\}/);
  });
});

describe("parseDetail", () => {
  it("reads one changeset with its diff", () => {
    const detail = parseDetail(answer({ changeset: EDIT, diff: "--- a/src/a.py\n+++ b/src/a.py\n" }));
    assert.equal(detail.changeset.id, "12");
    assert.equal(detail.diff, "--- a/src/a.py\n+++ b/src/a.py\n");
  });

  it("throws for an unknown id with the server's message", () => {
    assert.throws(() => parseDetail(error("not_found", "no changeset 99")), /history failed: no changeset 99/);
  });
});

describe("relativeTime", () => {
  const ago = (ms: number): string => relativeTime(new Date(NOW - ms).toISOString(), NOW);
  const table: [number, string][] = [
    [0, "just now"],
    [-60_000, "just now"], // a clock ahead of ours
    [9_999, "just now"],
    [10_000, "10 s ago"],
    [59_999, "59 s ago"],
    [60_000, "1 min ago"],
    [59 * 60_000, "59 min ago"],
    [60 * 60_000, "1 h ago"],
    [23 * 3_600_000 + 59 * 60_000, "23 h ago"],
    [24 * 3_600_000, "yesterday"],
    [2 * 86_400_000, "2 days ago"],
    [29 * 86_400_000, "29 days ago"],
    [30 * 86_400_000, "2026-10-26"],
  ];
  for (const [ms, want] of table) {
    it(`${ms} ms ago is ${want}`, () => {
      assert.equal(ago(ms), want);
    });
  }

  it("shows a time it cannot read as it is", () => {
    assert.equal(relativeTime("yesterday-ish", NOW), "yesterday-ish");
  });
});

describe("describeFile", () => {
  const table: [Changeset["files"][number], string][] = [
    [{ path: "a.py", op: "edit", added: 2, removed: 1 }, "a.py +2 −1"],
    [{ path: "a.py", op: "edit", added: 0, removed: 3 }, "a.py −3"],
    [{ path: "a.py", op: "edit" }, "a.py"],
    [{ path: "new.txt", op: "create", added: 4, removed: 0 }, "new.txt (created)"],
    [{ path: "a.py", op: "overwrite", added: 1, removed: 1 }, "a.py (rewritten +1 −1)"],
    [{ path: "old.txt", op: "delete", added: 0, removed: 2 }, "old.txt (deleted)"],
    [{ path: "b.py", op: "rename", from: "a.py" }, "a.py → b.py (renamed)"],
    [{ path: "pkg", op: "mkdir" }, "pkg/ (new folder)"],
    [{ path: "x", op: "chmod" }, "x (chmod)"],
  ];
  for (const [file, want] of table) {
    it(want, () => {
      assert.equal(describeFile(file), want);
    });
  }
});

describe("changesetItem", () => {
  it("labels with the id, tool and summary; describes client, time and undo state; details the files", () => {
    assert.deepEqual(
      changesetItems({ changesets: [UNDO, EDIT], more: false }, NOW).map(({ label, description, detail }) => ({
        label,
        description,
        detail,
      })),
      [
        { label: "#14 undo: undid #12", description: "editor · 30 s ago · undoes #12", detail: "src/a.py +1 −1" },
        {
          label: "#12 edit_file: edited src/a.py: 1 replacement",
          description: "claude-code 1.0.3 · 1 h ago · undone by #14",
          detail: "src/a.py +1 −1",
        },
      ],
    );
  });

  it("lists every file, and says when there is none", () => {
    const c: Changeset = {
      ...EDIT,
      undone_by: undefined,
      files: [
        { path: "a", op: "delete" },
        { path: "b", op: "create" },
      ],
    };
    assert.equal(changesetItem(c, NOW).detail, "a (deleted), b (created)");
    assert.equal(changesetItem({ ...c, files: [] }, NOW).detail, "no files");
    assert.equal(changesetItem(c, NOW).description, "claude-code 1.0.3 · 1 h ago");
  });
});

describe("fileDiffs", () => {
  it("pairs each text file's before and after, an absent side null, a rename from its old path", () => {
    const c: Changeset = {
      ...EDIT,
      files: [
        { path: "a.py", op: "edit", before: "x\n", after: "y\n" },
        { path: "new.txt", op: "create", before: null, after: "hi\n" },
        { path: "gone.txt", op: "delete", before: "bye\n", after: null },
        { path: "b.py", op: "rename", from: "old/b.py", before: "b\n", after: "b\n" },
        { path: "logo.png", op: "edit", before: null, after: null, binary: true },
        { path: "pkg", op: "mkdir", before: null, after: null },
      ],
    };
    assert.deepEqual(
      fileDiffs(c).map((d) => [d.beforePath, d.path, d.before, d.after, d.title]),
      [
        ["a.py", "a.py", "x\n", "y\n", "a.py (#12 edit_file, claude-code 1.0.3)"],
        ["new.txt", "new.txt", null, "hi\n", "new.txt (#12 edit_file, claude-code 1.0.3)"],
        ["gone.txt", "gone.txt", "bye\n", null, "gone.txt (#12 edit_file, claude-code 1.0.3)"],
        ["old/b.py", "b.py", "b\n", "b\n", "old/b.py → b.py (#12 edit_file, claude-code 1.0.3)"],
      ],
    );
    assert.deepEqual(filesWithoutDiff(c), ["logo.png (binary)", "pkg (folder)"]);
  });

  it("has nothing for a changeset read without texts", () => {
    assert.deepEqual(fileDiffs(EDIT), []);
    assert.deepEqual(filesWithoutDiff(EDIT), ["src/a.py (no text)"]);
  });

  it("names a rename that came without texts by where it came from", () => {
    const moved: Changeset = { ...EDIT, files: [{ path: "b.txt", op: "rename", from: "a.txt", before: null, after: null }] };
    assert.deepEqual(fileDiffs(moved), []);
    assert.deepEqual(filesWithoutDiff(moved), ["b.txt (renamed from a.txt)"]);
  });
});

describe("undoOutcome", () => {
  it("is the success text", () => {
    const text = "undid changeset 12 (edit_file by claude-code 1.0.3): src/a.py\napplied to the open editor buffer";
    assert.deepEqual(undoOutcome({ content: [{ type: "text", text: `${text}\n` }], isError: false }), { ok: true, text });
  });

  it("is the error's kind and message, which for a conflict names the file and lines", () => {
    const message = "src/a.py: lines 3-4 changed since changeset 12 (by changeset 13)";
    assert.deepEqual(undoOutcome(error("conflict", message)), { ok: false, kind: "conflict", text: message });
  });

  it("is the whole text of an error that is not the standard profile's JSON", () => {
    assert.deepEqual(undoOutcome({ content: [{ type: "text", text: "unknown tool: undo" }], isError: true }), {
      ok: false,
      text: "unknown tool: undo",
    });
    assert.deepEqual(errorMessage({ content: [], isError: true }), { message: "the server gave no reason" });
  });
});
