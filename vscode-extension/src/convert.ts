// What VS Code's API gives, as the LSP shapes tether reads (editors/protocol.md): diagnostics for
// `tether/publishDiagnostics`, ranges for `tether/editorContext`, and the answers of VS Code's
// `vscode.execute*Provider` commands for `tether/languageRequest`.
//
// Pure (no `vscode` import) so that unit tests can run it: the inputs are described by their
// shape, which the `vscode` classes have. Positions pass through unchanged: VS Code counts
// UTF-16 code units, and the extension offers tether only `utf-16`. Two enums differ from LSP's:
// VS Code's `DiagnosticSeverity` and `SymbolKind` count from 0, LSP's from 1.

import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  Position,
  Range,
  SymbolInformation,
  TextEdit,
  WorkspaceEdit,
} from "vscode-languageclient";

/** A `vscode.Position` (its `line` and `character` are getters: copy them, never spread). */
export interface CodePosition {
  readonly line: number;
  readonly character: number;
}

/** A `vscode.Range`. */
export interface CodeRange {
  readonly start: CodePosition;
  readonly end: CodePosition;
}

/** A `vscode.Diagnostic`; `severity` is VS Code's (Error = 0 ... Hint = 3). */
export interface CodeDiagnostic {
  readonly range: CodeRange;
  readonly severity: number;
  readonly code?: string | number | { readonly value: string | number; readonly target: unknown } | undefined;
  readonly source?: string | undefined;
  readonly message: string;
}

/** A `vscode.Location`, with the URI type left open. */
export interface CodeLocation<U> {
  readonly uri: U;
  readonly range: CodeRange;
}

/** A `vscode.LocationLink`. */
export interface CodeLocationLink<U> {
  readonly targetUri: U;
  readonly targetRange: CodeRange;
  readonly targetSelectionRange?: CodeRange | undefined;
}

/** A part of a `vscode.Hover`: a `MarkdownString`, or a deprecated `MarkedString`. */
export type CodeMarked = string | { readonly value: string; readonly language?: string };

/** A `vscode.Hover`. */
export interface CodeHover {
  readonly contents: readonly CodeMarked[];
  readonly range?: CodeRange | undefined;
}

/** A `vscode.DocumentSymbol`; `kind` is VS Code's (File = 0). */
export interface CodeDocumentSymbol {
  readonly name: string;
  readonly detail?: string | undefined;
  readonly kind: number;
  readonly tags?: readonly number[] | undefined;
  readonly range: CodeRange;
  readonly selectionRange: CodeRange;
  readonly children?: readonly CodeDocumentSymbol[] | undefined;
}

/** A `vscode.SymbolInformation`; `kind` is VS Code's (File = 0). */
export interface CodeSymbolInformation<U> {
  readonly name: string;
  readonly kind: number;
  readonly containerName?: string | undefined;
  readonly tags?: readonly number[] | undefined;
  readonly location: CodeLocation<U>;
}

/** A `vscode.TextEdit`. */
export interface CodeTextEdit {
  readonly range: CodeRange;
  readonly newText: string;
}

/** Turns a URI of VS Code's into the string tether knows the document by. */
export type UriToString<U> = (uri: U) => string;

/** An LSP position. */
export function asPosition(p: CodePosition): Position {
  return { line: p.line, character: p.character };
}

/** An LSP range. */
export function asRange(r: CodeRange): Range {
  return { start: asPosition(r.start), end: asPosition(r.end) };
}

/** LSP's `DiagnosticSeverity` (Error = 1 ... Hint = 4) for VS Code's (Error = 0 ... Hint = 3). */
export function asSeverity(severity: number): 1 | 2 | 3 | 4 | undefined {
  switch (severity) {
    case 0:
      return 1;
    case 1:
      return 2;
    case 2:
      return 3;
    case 3:
      return 4;
    default:
      return undefined;
  }
}

/** An LSP diagnostic with the fields tether reads; a `{value, target}` code gives its value. */
export function asDiagnostic(d: CodeDiagnostic): Diagnostic {
  const out: Diagnostic = { range: asRange(d.range), message: d.message };
  const severity = asSeverity(d.severity);
  if (severity !== undefined) {
    out.severity = severity;
  }
  const code = typeof d.code === "object" ? d.code.value : d.code;
  if (code !== undefined) {
    out.code = code;
  }
  if (d.source !== undefined && d.source !== "") {
    out.source = d.source;
  }
  return out;
}

/** The unit of every `character` the extension sends tether. */
export const POSITION_ENCODING = "utf-16";

/** Params of `tether/publishDiagnostics`. */
export interface PublishDiagnosticsParams {
  readonly uri: string;
  readonly version: number | null;
  readonly positionEncoding: string;
  readonly diagnostics: Diagnostic[];
  /** No later part comes for `version`: the report was asked for, whole. */
  readonly complete?: boolean;
}

/**
 * One document's diagnostics as `tether/publishDiagnostics` sends them: with no version, whatever
 * version the document has when VS Code hands them over. VS Code's API does not say which version
 * a provider checked, and a provider can hand over what it found in the text before a change
 * after the change was made; stamped with the document's version then, that report would be
 * taken for the change's result ("settled, nothing introduced" while the real report, with the
 * error, is still on its way). Without a version tether never takes a report for a change's
 * result: the change's diagnostics are `pending`, the latest report shown as one that may predate
 * it (editors/protocol.md).
 */
export function diagnosticsParams(uri: string, diagnostics: readonly CodeDiagnostic[]): PublishDiagnosticsParams {
  return { uri, version: null, positionEncoding: POSITION_ENCODING, diagnostics: diagnostics.map(asDiagnostic) };
}

/** A diagnostic as TypeScript's server answers `semanticDiagnosticsSync` (protocol.ts `Diagnostic`). */
export interface TsServerDiagnostic {
  /** 1-based line, 1-based UTF-16 offset. */
  readonly start: { readonly line: number; readonly offset: number };
  readonly end: { readonly line: number; readonly offset: number };
  readonly text: string;
  readonly code?: number;
  readonly category: string;
  readonly source?: string;
  readonly reportsUnnecessary?: unknown;
  readonly reportsDeprecated?: unknown;
}

/**
 * TypeScript's error codes of style checks (unused locals and parameters, unreachable code,
 * implicit returns, fallthrough): VS Code shows them as warnings when the compiler reports them as
 * errors (`reportStyleChecksAsWarnings`, on by default).
 */
const STYLE_CHECKS = new Set([6133, 6138, 6192, 6196, 6198, 6199, 6205, 7027, 7028, 7029, 7030]);

/**
 * tsserver's diagnostics as VS Code's TypeScript support shows them (and so as the other
 * diagnostics of the document read): 0-based positions, error, warning or hint, source `ts` (or
 * the one tsserver names), the code, and the text. A style check reported as an error is a
 * warning, as VS Code's default has it.
 */
export function fromTsServer(diagnostics: readonly TsServerDiagnostic[]): Diagnostic[] {
  return diagnostics.map((d) => {
    const style = d.code !== undefined && STYLE_CHECKS.has(d.code) && d.category === "error";
    const severity = style ? 2 : d.category === "warning" ? 2 : d.category === "suggestion" ? 4 : 1;
    const out: Diagnostic = {
      range: {
        start: { line: d.start.line - 1, character: d.start.offset - 1 },
        end: { line: d.end.line - 1, character: d.end.offset - 1 },
      },
      message: d.text,
      severity: severity,
      source: d.source ?? "ts",
    };
    if (d.code !== undefined) {
      out.code = d.code;
    }
    const tags = [...(d.reportsUnnecessary ? [1] : []), ...(d.reportsDeprecated ? [2] : [])];
    if (tags.length > 0) {
      out.tags = tags as Diagnostic["tags"];
    }
    return out;
  });
}

/** Whether two diagnostics say the same thing at the same place. */
export function sameDiagnostic(a: CodeDiagnostic, b: CodeDiagnostic): boolean {
  return JSON.stringify(asDiagnostic(a)) === JSON.stringify(asDiagnostic(b));
}

/**
 * The diagnostics of `all` that are not in `own` (the client's own collection, which
 * `vscode.languages.getDiagnostics` merges with every other), each removed once.
 */
export function withoutOwn<D extends CodeDiagnostic>(all: readonly D[], own: readonly CodeDiagnostic[]): D[] {
  const left = [...own];
  return all.filter((d) => {
    const i = left.findIndex((o) => sameDiagnostic(o, d));
    if (i < 0) {
      return true;
    }
    left.splice(i, 1);
    return false;
  });
}

function isLink<U>(l: CodeLocation<U> | CodeLocationLink<U>): l is CodeLocationLink<U> {
  return "targetUri" in l;
}

/**
 * LSP `Location`s for the answer of a definition or reference provider: a `LocationLink` is its
 * target selection range (the name), else its target range. Duplicates (two providers giving the
 * same place) are dropped.
 */
export function asLocations<U>(
  items: readonly (CodeLocation<U> | CodeLocationLink<U>)[] | null | undefined,
  uri: UriToString<U>,
): Location[] {
  const seen = new Set<string>();
  const out: Location[] = [];
  for (const item of items ?? []) {
    const location = isLink(item)
      ? { uri: uri(item.targetUri), range: asRange(item.targetSelectionRange ?? item.targetRange) }
      : { uri: uri(item.uri), range: asRange(item.range) };
    const key = JSON.stringify(location);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(location);
    }
  }
  return out;
}

/** The references that are not one of the declarations (for `includeDeclaration: false`). */
export function withoutDeclarations(references: readonly Location[], declarations: readonly Location[]): Location[] {
  const keys = new Set(declarations.map((d) => JSON.stringify(d)));
  return references.filter((r) => !keys.has(JSON.stringify(r)));
}

function markdown(part: CodeMarked): string {
  if (typeof part === "string") {
    return part;
  }
  // A `MarkedString` with a language is a code block; a `MarkdownString` is Markdown already.
  return part.language !== undefined ? "```" + part.language + "\n" + part.value + "\n```" : part.value;
}

/**
 * One LSP `Hover` for the hovers of every provider: each provider's parts trimmed and joined by a
 * blank line, the providers by a rule; its range is the first one given. `null` when there is no text.
 */
export function asHover(hovers: readonly CodeHover[] | null | undefined): Hover | null {
  const texts: string[] = [];
  let range: CodeRange | undefined;
  for (const hover of hovers ?? []) {
    // Providers pad their parts with line breaks (TypeScript does): the joins give the spacing.
    const text = hover.contents
      .map((part) => markdown(part).trim())
      .filter((t) => t !== "")
      .join("\n\n");
    if (text !== "") {
      texts.push(text);
      range ??= hover.range;
    }
  }
  if (texts.length === 0) {
    return null;
  }
  const out: Hover = { contents: { kind: "markdown", value: texts.join("\n\n---\n\n") } };
  if (range !== undefined) {
    out.range = asRange(range);
  }
  return out;
}

/** LSP's `SymbolKind` (File = 1) for VS Code's (File = 0). */
export function asSymbolKind(kind: number): SymbolInformation["kind"] {
  return (kind + 1) as SymbolInformation["kind"];
}

function asDocumentSymbol(s: CodeDocumentSymbol): DocumentSymbol {
  const out: DocumentSymbol = {
    name: s.name,
    kind: asSymbolKind(s.kind),
    range: asRange(s.range),
    selectionRange: asRange(s.selectionRange),
  };
  if (s.detail !== undefined && s.detail !== "") {
    out.detail = s.detail;
  }
  if (s.tags !== undefined && s.tags.length > 0) {
    out.tags = [...s.tags] as DocumentSymbol["tags"];
  }
  if (s.children !== undefined && s.children.length > 0) {
    out.children = s.children.map(asDocumentSymbol);
  }
  return out;
}

function asSymbolInformation<U>(s: CodeSymbolInformation<U>, uri: UriToString<U>): SymbolInformation {
  const out: SymbolInformation = {
    name: s.name,
    kind: asSymbolKind(s.kind),
    location: { uri: uri(s.location.uri), range: asRange(s.location.range) },
  };
  if (s.containerName !== undefined && s.containerName !== "") {
    out.containerName = s.containerName;
  }
  if (s.tags !== undefined && s.tags.length > 0) {
    out.tags = [...s.tags] as SymbolInformation["tags"];
  }
  return out;
}

/**
 * A document's outline: `DocumentSymbol[]` (a tree) when the provider gave one, else
 * `SymbolInformation[]`. VS Code's `vscode.executeDocumentSymbolProvider` returns objects that
 * are both (a `SymbolInformation` with `selectionRange` and `children`): those are a tree.
 */
export function asDocumentSymbols<U>(
  items: readonly (CodeDocumentSymbol | CodeSymbolInformation<U>)[] | null | undefined,
  uri: UriToString<U>,
): DocumentSymbol[] | SymbolInformation[] {
  const list = items ?? [];
  if (list.every((s): s is CodeDocumentSymbol => "selectionRange" in s)) {
    return list.map(asDocumentSymbol);
  }
  // A mixed list does not come from one provider; its flat items are kept, flat.
  return list.filter((s): s is CodeSymbolInformation<U> => "location" in s).map((s) => asSymbolInformation(s, uri));
}

/** `SymbolInformation[]` for a workspace symbol search. */
export function asSymbolInformations<U>(
  items: readonly CodeSymbolInformation<U>[] | null | undefined,
  uri: UriToString<U>,
): SymbolInformation[] {
  return (items ?? []).map((s) => asSymbolInformation(s, uri));
}

/**
 * An LSP `WorkspaceEdit` in `changes` (text edits by URI) for the entries of a
 * `vscode.WorkspaceEdit` (`edit.entries()`). `null` for no edit at all.
 */
export function asWorkspaceEdit<U>(
  entries: readonly (readonly [U, readonly CodeTextEdit[]])[] | null | undefined,
  uri: UriToString<U>,
): WorkspaceEdit | null {
  if (entries === null || entries === undefined) {
    return null;
  }
  const changes: Record<string, TextEdit[]> = {};
  for (const [u, edits] of entries) {
    const key = uri(u);
    (changes[key] ??= []).push(...edits.map((e) => ({ range: asRange(e.range), newText: e.newText })));
  }
  return { changes };
}

/** Whether an LSP answer holds nothing: `null`, an empty list, or an edit that changes nothing. */
export function isEmptyAnswer(result: unknown): boolean {
  if (result === null || result === undefined) {
    return true;
  }
  if (Array.isArray(result)) {
    return result.length === 0;
  }
  const changes = (result as { changes?: Record<string, unknown[]> }).changes;
  if (changes !== undefined) {
    return Object.values(changes).every((edits) => edits.length === 0);
  }
  return false;
}
