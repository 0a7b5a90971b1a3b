// VS Code's values as the LSP shapes tether reads: diagnostics, locations, hovers, symbols and
// workspace edits. The inputs are plain objects of the shapes `vscode` classes have; URIs are
// strings that the converters name through `uri`.

import * as assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  asDiagnostic,
  asDocumentSymbols,
  asHover,
  asLocations,
  asRange,
  asSeverity,
  asSymbolInformations,
  asWorkspaceEdit,
  type CodeRange,
  diagnosticsParams,
  fromTsServer,
  isEmptyAnswer,
  withoutDeclarations,
  withoutOwn,
} from "../../src/convert";

const uri = (path: string): string => `file:///w/${path}`;
/** A range on one line, from column `a` to `b` (0-based, UTF-16). */
const on = (line: number, a: number, b: number): CodeRange => ({ start: { line, character: a }, end: { line, character: b } });

/** A position whose fields are getters, as `vscode.Position`'s are: spreading it gives nothing. */
class Getters {
  constructor(
    private readonly l: number,
    private readonly c: number,
  ) {}
  get line(): number {
    return this.l;
  }
  get character(): number {
    return this.c;
  }
}

describe("asRange", () => {
  it("copies positions whose fields are getters", () => {
    const r = { start: new Getters(1, 2), end: new Getters(3, 4) };
    assert.deepEqual(asRange(r), { start: { line: 1, character: 2 }, end: { line: 3, character: 4 } });
  });
});

describe("fromTsServer", () => {
  it("gives tsserver's diagnostics as VS Code shows them: 0-based, style checks as warnings, suggestions as hints", () => {
    const at = (line: number, offset: number) => ({ line, offset });
    assert.deepEqual(
      fromTsServer([
        { start: at(3, 7), end: at(3, 8), text: "Type 'string' is not assignable to type 'number'.", code: 2322, category: "error" },
        { start: at(4, 10), end: at(4, 16), text: "'unused' is declared but its value is never read.", code: 6133, category: "error", reportsUnnecessary: {} },
        { start: at(1, 1), end: at(1, 5), text: "deprecated", code: 6385, category: "suggestion", reportsDeprecated: {} },
        { start: at(2, 1), end: at(2, 2), text: "lint", code: 1, category: "warning", source: "ts-plugin" },
      ]),
      [
        {
          range: { start: { line: 2, character: 6 }, end: { line: 2, character: 7 } },
          message: "Type 'string' is not assignable to type 'number'.",
          severity: 1,
          source: "ts",
          code: 2322,
        },
        {
          range: { start: { line: 3, character: 9 }, end: { line: 3, character: 15 } },
          message: "'unused' is declared but its value is never read.",
          severity: 2,
          source: "ts",
          code: 6133,
          tags: [1],
        },
        {
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } },
          message: "deprecated",
          severity: 4,
          source: "ts",
          code: 6385,
          tags: [2],
        },
        {
          range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } },
          message: "lint",
          severity: 2,
          source: "ts-plugin",
          code: 1,
        },
      ],
    );
  });
});

describe("asDiagnostic", () => {
  it("maps VS Code's severities (Error = 0) to LSP's (Error = 1)", () => {
    assert.deepEqual([0, 1, 2, 3, 4].map(asSeverity), [1, 2, 3, 4, undefined]);
  });

  const cases: [string, Parameters<typeof asDiagnostic>[0], ReturnType<typeof asDiagnostic>][] = [
    [
      "a TypeScript error with a numeric code",
      { range: on(2, 6, 7), severity: 0, code: 2322, source: "ts", message: "Type 'string' is not assignable to type 'number'." },
      {
        range: asRange(on(2, 6, 7)),
        severity: 1,
        code: 2322,
        source: "ts",
        message: "Type 'string' is not assignable to type 'number'.",
      },
    ],
    [
      "a code with a target gives its value",
      { range: on(0, 0, 1), severity: 1, code: { value: "no-unused-vars", target: "https://eslint.org" }, source: "eslint", message: "m" },
      { range: asRange(on(0, 0, 1)), severity: 2, code: "no-unused-vars", source: "eslint", message: "m" },
    ],
    [
      "no code and an empty source are left out",
      { range: on(0, 0, 0), severity: 3, source: "", message: "hint" },
      { range: asRange(on(0, 0, 0)), severity: 4, message: "hint" },
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      assert.deepEqual(asDiagnostic(input), expected);
    });
  }

  it("leaves out the client's own diagnostics, each once", () => {
    const a = { range: on(0, 0, 1), severity: 0, message: "a" };
    const b = { range: on(1, 0, 1), severity: 0, message: "b" };
    assert.deepEqual(withoutOwn([a, b, a], [{ ...a }]), [b, a]);
    assert.deepEqual(withoutOwn([a, b], []), [a, b]);
  });

  // Issue 33: a report on the text before a change, handed over just after it, was stamped with
  // the changed version and taken for the change's result.
  it("sends a report without a version: VS Code cannot tell which text it covers", () => {
    const error = { range: on(3, 14, 20), severity: 0, code: 2322, source: "ts", message: "Type" };
    assert.deepEqual(diagnosticsParams(uri("main.ts"), [error]), {
      uri: uri("main.ts"),
      version: null,
      positionEncoding: "utf-16",
      diagnostics: [asDiagnostic(error)],
    });
    assert.equal(diagnosticsParams(uri("main.ts"), []).version, null, "an empty report neither");
  });
});

describe("asLocations", () => {
  it("takes a link's target selection range, else its target range, and drops duplicates", () => {
    const locations = asLocations(
      [
        { uri: "b.ts", range: on(3, 9, 14) },
        { targetUri: "a.ts", targetRange: on(0, 0, 40), targetSelectionRange: on(0, 16, 21) },
        { targetUri: "c.ts", targetRange: on(5, 0, 9) },
        { uri: "b.ts", range: on(3, 9, 14) },
      ],
      uri,
    );
    assert.deepEqual(locations, [
      { uri: "file:///w/b.ts", range: asRange(on(3, 9, 14)) },
      { uri: "file:///w/a.ts", range: asRange(on(0, 16, 21)) },
      { uri: "file:///w/c.ts", range: asRange(on(5, 0, 9)) },
    ]);
    assert.deepEqual(asLocations(undefined, uri), []);
  });

  it("drops the declarations from references", () => {
    const decl = { uri: uri("a.ts"), range: asRange(on(0, 16, 21)) };
    const use = { uri: uri("b.ts"), range: asRange(on(2, 0, 5)) };
    assert.deepEqual(withoutDeclarations([decl, use], [decl]), [use]);
  });
});

describe("asHover", () => {
  it("joins every part as Markdown, code blocks for marked strings with a language", () => {
    const hover = asHover([
      {
        contents: [{ value: "```typescript\nfunction greet(): string\n```" }, { value: "" }, { value: "\nSays hello.\n" }],
        range: on(1, 9, 14),
      },
      { contents: ["plain text", { language: "python", value: "x = 1" }] },
    ]);
    assert.deepEqual(hover, {
      contents: {
        kind: "markdown",
        value: "```typescript\nfunction greet(): string\n```\n\nSays hello.\n\n---\n\nplain text\n\n```python\nx = 1\n```",
      },
      range: asRange(on(1, 9, 14)),
    });
  });

  it("is null without any text", () => {
    assert.equal(asHover([]), null);
    assert.equal(asHover(undefined), null);
    assert.equal(asHover([{ contents: [{ value: " " }] }]), null);
  });
});

describe("symbols", () => {
  it("keeps a document symbol tree, kinds counted from 1", () => {
    // What vscode.executeDocumentSymbolProvider returns: SymbolInformation with a tree's fields.
    const method = {
      name: "greet",
      kind: 5, // VS Code's Method
      containerName: "Greeter",
      location: { uri: "a.ts", range: on(1, 2, 30) },
      detail: "",
      range: on(1, 2, 30),
      selectionRange: on(1, 2, 7),
      children: [],
    };
    const cls = {
      name: "Greeter",
      kind: 4, // VS Code's Class
      location: { uri: "a.ts", range: on(0, 0, 40) },
      detail: "exported",
      tags: [1],
      range: on(0, 0, 40),
      selectionRange: on(0, 13, 20),
      children: [method],
    };
    assert.deepEqual(asDocumentSymbols([cls], uri), [
      {
        name: "Greeter",
        kind: 5,
        detail: "exported",
        tags: [1],
        range: asRange(on(0, 0, 40)),
        selectionRange: asRange(on(0, 13, 20)),
        children: [{ name: "greet", kind: 6, range: asRange(on(1, 2, 30)), selectionRange: asRange(on(1, 2, 7)) }],
      },
    ]);
    assert.deepEqual(asDocumentSymbols(undefined, uri), []);
  });

  it("gives flat symbol information as it is", () => {
    const info = { name: "greet", kind: 11, containerName: "", location: { uri: "a.ts", range: on(0, 16, 21) } };
    const expected = [{ name: "greet", kind: 12, location: { uri: "file:///w/a.ts", range: asRange(on(0, 16, 21)) } }];
    assert.deepEqual(asDocumentSymbols([info], uri), expected);
    assert.deepEqual(asSymbolInformations([info], uri), expected);
  });
});

describe("asWorkspaceEdit", () => {
  it("gives text edits by URI in changes", () => {
    const edit = asWorkspaceEdit(
      [
        ["a.ts", [{ range: on(0, 16, 21), newText: "welcome" }]],
        ["b.ts", [{ range: on(0, 9, 14), newText: "welcome" }, { range: on(2, 0, 5), newText: "welcome" }]],
      ],
      uri,
    );
    assert.deepEqual(edit, {
      changes: {
        "file:///w/a.ts": [{ range: asRange(on(0, 16, 21)), newText: "welcome" }],
        "file:///w/b.ts": [
          { range: asRange(on(0, 9, 14)), newText: "welcome" },
          { range: asRange(on(2, 0, 5)), newText: "welcome" },
        ],
      },
    });
    assert.equal(asWorkspaceEdit(undefined, uri), null);
  });
});

describe("isEmptyAnswer", () => {
  const cases: [unknown, boolean][] = [
    [null, true],
    [undefined, true],
    [[], true],
    [{ changes: {} }, true],
    [{ changes: { "file:///w/a.ts": [] } }, true],
    [[{ uri: "file:///w/a.ts" }], false],
    [{ contents: { kind: "markdown", value: "x" } }, false],
    [{ changes: { "file:///w/a.ts": [{}] } }, false],
  ];
  for (const [answer, empty] of cases) {
    it(`${JSON.stringify(answer)} is ${empty ? "" : "not "}empty`, () => {
      assert.equal(isEmptyAnswer(answer), empty);
    });
  }
});
