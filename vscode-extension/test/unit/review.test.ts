// The answer to `tether/review` that the user's per-file decisions make (editors/protocol.md).

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import { buildAnswer, describeFile, describeProposal, type FileDecision, type Proposal } from "../../src/reviewAnswer";

const A = "file:///w/a.txt";
const B = "file:///w/b.txt";
const GONE = "file:///w/old";

const proposal: Proposal = {
  tool: "apply_patch",
  caller: "assistant",
  summary: null,
  files: [
    { uri: A, path: "a.txt", kind: "edit", oldText: "alpha\n", newText: "ALPHA\n" },
    { uri: B, path: "b.txt", kind: "create", oldText: null, newText: "beta\n" },
    { uri: GONE, path: "old", kind: "delete", oldText: null, newText: null, recursive: true },
  ],
};

const decided = (entries: [string, FileDecision][]): Map<string, FileDecision> => new Map(entries);

describe("buildAnswer", () => {
  it("is a plain accept when every file is accepted as proposed", () => {
    const all = decided([
      [A, { decision: "accept", text: "ALPHA\n" }],
      [B, { decision: "accept", text: "beta\n" }],
      [GONE, { decision: "accept" }],
    ]);
    assert.deepEqual(buildAnswer(proposal, all), { decision: "accept" });
    assert.deepEqual(buildAnswer(proposal, all, "  "), { decision: "accept" }, "a blank reason is left out");
  });

  it("is a reject with the reason when every file is rejected, or nothing was decided", () => {
    const none = decided([
      [A, { decision: "reject" }],
      [B, { decision: "reject" }],
      [GONE, { decision: "reject" }],
    ]);
    assert.deepEqual(buildAnswer(proposal, none, " not now "), { decision: "reject", reason: "not now" });
    assert.deepEqual(buildAnswer(proposal, new Map()), { decision: "reject" });
  });

  it("lists every file when some are accepted and some rejected", () => {
    const some = decided([
      [A, { decision: "accept", text: "ALPHA\n" }],
      [B, { decision: "reject" }],
    ]);
    assert.deepEqual(buildAnswer(proposal, some, "b.txt is generated"), {
      decision: "partial",
      reason: "b.txt is generated",
      files: [
        { uri: A, decision: "accept" },
        { uri: B, decision: "reject" },
        { uri: GONE, decision: "reject" },
      ],
    });
  });

  it("carries the text of a file the user changed before accepting, and only of that one", () => {
    const edited = decided([
      [A, { decision: "accept", text: "Alpha, reviewed\n" }],
      [B, { decision: "accept", text: "beta\n" }],
      [GONE, { decision: "accept", text: "ignored: a delete has no text" }],
    ]);
    assert.deepEqual(buildAnswer(proposal, edited), {
      decision: "accept",
      files: [
        { uri: A, decision: "accept", text: "Alpha, reviewed\n" },
        { uri: B, decision: "accept" },
        { uri: GONE, decision: "accept" },
      ],
    });
  });
});

describe("describing a proposal", () => {
  it("names each file by what happens to it", () => {
    assert.deepEqual(proposal.files.map(describeFile), ["a.txt", "new b.txt", "delete old/"]);
    assert.equal(
      describeFile({ uri: A, path: "a.txt", kind: "rename", oldText: null, newText: null, newPath: "z.txt" }),
      "a.txt → z.txt",
    );
    assert.equal(describeProposal(proposal), "An assistant (apply_patch) wants to change a.txt, new b.txt, delete old/");
  });
});
