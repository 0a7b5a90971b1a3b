// Line hunks of a proposal, and the line breaks a VS Code document makes alike (src/hunks.ts).

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { hunkAt, hunks, merge, splitLines, withLineBreaks } from "../../src/hunks";

const OLD = "one\ntwo\nthree\nfour\nfive\n";
const NEW = "ONE\ntwo\nthree\nfive\nsix\n";

describe("splitLines", () => {
  it("keeps each line's own break, and a last line without one", () => {
    assert.deepEqual(splitLines("a\r\nb\nc\rd"), ["a\r\n", "b\n", "c\r", "d"]);
    assert.deepEqual(splitLines("\n\n"), ["\n", "\n"]);
    assert.deepEqual(splitLines(""), []);
  });
});

describe("hunks", () => {
  it("finds a changed line, a removed line and an added line apart", () => {
    assert.deepEqual(hunks(OLD, NEW), [
      { oldStart: 0, oldCount: 1, newStart: 0, newCount: 1 },
      { oldStart: 3, oldCount: 1, newStart: 3, newCount: 0 },
      { oldStart: 5, oldCount: 0, newStart: 4, newCount: 1 },
    ]);
  });

  it("counts a changed line break as a change", () => {
    assert.deepEqual(hunks("a\r\nb\n", "a\nb\n"), [{ oldStart: 0, oldCount: 1, newStart: 0, newCount: 1 }]);
    assert.deepEqual(hunks("a", "a\n"), [{ oldStart: 0, oldCount: 1, newStart: 0, newCount: 1 }]);
  });
});

describe("merge", () => {
  it("takes only the hunks asked for", () => {
    assert.equal(merge(OLD, NEW, new Set([0])), "ONE\ntwo\nthree\nfour\nfive\n");
    assert.equal(merge(OLD, NEW, new Set([1])), "one\ntwo\nthree\nfive\n");
    assert.equal(merge(OLD, NEW, new Set([2])), "one\ntwo\nthree\nfour\nfive\nsix\n");
    assert.equal(merge(OLD, NEW, new Set([0, 1, 2])), NEW);
    assert.equal(merge(OLD, NEW, new Set()), OLD);
  });

  it("keeps the old lines' breaks byte for byte", () => {
    assert.equal(merge("a\r\nb\nc\r\n", "a\r\nB\nc\r\nd\n", new Set([0])), "a\r\nB\nc\r\n");
  });
});

describe("hunkAt", () => {
  const all = hunks(OLD, NEW);
  it("names the hunk under a proposed line", () => {
    assert.equal(hunkAt(all, 0), 0);
    assert.equal(hunkAt(all, 4), 2);
    assert.equal(hunkAt(all, 1), undefined);
  });

  it("gives a removal the lines either side of it", () => {
    // "four" went from between "three" (line 2) and "five" (line 3).
    assert.equal(hunkAt(all, 2), 1);
    assert.equal(hunkAt(all, 3), 1);
  });
});

describe("withLineBreaks", () => {
  const mixed = "a\r\nb\nc\r\n";
  it("gives back a mixed proposal the document made alike", () => {
    assert.equal(withLineBreaks(mixed, "a\nb\nc\n"), mixed);
    assert.equal(withLineBreaks(mixed, "a\r\nb\r\nc\r\n"), mixed);
    assert.equal(withLineBreaks("a\nb", "a\r\nb"), "a\nb");
  });

  it("keeps the breaks of the lines left alone around what the user wrote", () => {
    assert.equal(withLineBreaks(mixed, "a\nB\nc\nd\n"), "a\r\nB\nc\r\nd\n");
    assert.equal(withLineBreaks(mixed, "a\nc\n"), "a\r\nc\r\n");
  });

  it("gives a last line a break only where the document has one", () => {
    assert.equal(withLineBreaks("x", "x\ny"), "x\ny");
    assert.equal(withLineBreaks("x\r\n", "x"), "x");
  });
});
