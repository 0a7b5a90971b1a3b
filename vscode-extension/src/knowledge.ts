// The editor's knowledge for the assistant (editors/protocol.md, protocol version 3): the problems
// VS Code knows, pushed to tether as `tether/publishDiagnostics`; and, only when tether asks, what
// the visible editors show (`tether/editorContext`) and what VS Code's language providers answer
// (`tether/languageRequest`).
//
// VS Code's own API is the source throughout: `vscode.languages.getDiagnostics` merges every
// extension's diagnostics, and the `vscode.execute*Provider` commands ask every provider
// registered for a document's language and merge their answers, as the protocol asks the client
// to. Positions are UTF-16 on both sides: VS Code counts UTF-16 code units and the language
// client offers tether no other encoding.

import * as vscode from "vscode";
import {
  ErrorCodes,
  type LanguageClient,
  LSPErrorCodes,
  type Location,
  type Position,
  ResponseError,
  State,
} from "vscode-languageclient/node";

import {
  asDocumentSymbols,
  asHover,
  asLocations,
  asRange,
  asSymbolInformations,
  asWorkspaceEdit,
  diagnosticsParams,
  fromTsServer,
  isEmptyAnswer,
  POSITION_ENCODING,
  type PublishDiagnosticsParams,
  type TsServerDiagnostic,
  withoutDeclarations,
  withoutOwn,
} from "./convert";
import { EDITOR_CONTEXT, LANGUAGE_REQUEST, PUBLISH_DIAGNOSTICS } from "./protocol";

/** The name `tether/languageRequest` gives for VS Code's providers, which have no names in the API. */
export const PROVIDERS_NAME = "vscode";

/** One editor in the result of `tether/editorContext`. */
export interface EditorState {
  readonly uri: string;
  readonly version: number | null;
  readonly active: boolean;
  readonly selections: { readonly range: ReturnType<typeof asRange>; readonly text: string }[];
  readonly visibleRanges: ReturnType<typeof asRange>[];
}

/** The result of `tether/editorContext`. */
export interface EditorContextResult {
  readonly positionEncoding: string;
  readonly editors: EditorState[];
}

/** Params of `tether/languageRequest`. */
export interface LanguageRequestParams {
  readonly method: string;
  readonly params: unknown;
}

/** The result of `tether/languageRequest`. */
export interface LanguageRequestResult {
  readonly positionEncoding: string;
  readonly servers: string[];
  readonly complete: boolean;
  readonly result: unknown;
}

/** The languages VS Code's TypeScript support checks, whose diagnostics tsserver answers on request. */
const TYPESCRIPT_LANGUAGES = new Set(["typescript", "typescriptreact", "javascript", "javascriptreact"]);

/** How many times a pull asks TypeScript before leaving the document to its versionless reports. */
const PULL_ATTEMPTS = 4;

/**
 * Pushes VS Code's diagnostics to tether: for every `file:` document in the workspace whose
 * diagnostics change, all of them (but the language client's own collection, tether's); and
 * every document's once each time the client (re)starts. A document tsserver can be asked about
 * (`pull`) goes stamped with the version it was asked at; any other without a version (VS Code's
 * API does not say which version a provider computed them for, see `diagnosticsParams`).
 */
export class DiagnosticsForwarder implements vscode.Disposable {
  private readonly subscriptions: { dispose(): void }[] = [];

  constructor(
    private readonly client: LanguageClient,
    private readonly log: vscode.OutputChannel,
  ) {
    this.subscriptions.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          this.send(uri);
        }
      }),
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          this.sendAll();
        }
      }),
    );
  }

  /** Sends every document that has diagnostics. */
  sendAll(): void {
    for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
      if (diagnostics.length > 0) {
        this.send(uri);
      }
    }
  }

  /**
   * After tether changed a TypeScript or JavaScript document, and whenever VS Code's diagnostics
   * of one change: asks tsserver, through VS Code's
   * TypeScript support (`typescript.tsserverRequest`, which sends tsserver the document's pending
   * changes before any request), for the document's diagnostics now, and sends them stamped with
   * the version they were asked at, whole (`complete`): tether then takes them for the change's
   * result at once, where VS Code's own report would come without a version, or not at all when
   * nothing changed. Only when every diagnostic VS Code shows for the document is TypeScript's:
   * another provider's (a linter's) cannot be asked, so such a document's report stays
   * versionless. Resolves whether it sent a report.
   */
  async pull(doc: vscode.TextDocument): Promise<boolean> {
    const uri = doc.uri;
    if (!this.pullable(doc)) {
      return false;
    }
    const version = doc.version;
    const ask = async (command: string): Promise<TsServerDiagnostic[] | undefined> => {
      const r = await vscode.commands.executeCommand<{ success?: boolean; body?: TsServerDiagnostic[] } | undefined>(
        "typescript.tsserverRequest",
        command,
        { file: uri },
      );
      return r?.success === true && Array.isArray(r.body) ? r.body : undefined;
    };
    let parts: (TsServerDiagnostic[] | undefined)[] = [];
    // TypeScript answers `success: false` while its project is still loading or reloading: asked
    // again a few times, 150 ms apart, as long as the text is the one the answer is for.
    for (let attempt = 0; attempt < PULL_ATTEMPTS; attempt++) {
      if (attempt > 0) {
        await new Promise((r) => setTimeout(r, 150));
        if (doc.version !== version || !this.client.isRunning()) {
          return false;
        }
      }
      try {
        parts = await Promise.all(
          ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"].map(ask),
        );
      } catch (e) {
        this.log.appendLine(`[tether] asking TypeScript for ${uri.fsPath}'s diagnostics: ${e instanceof Error ? e.message : String(e)}`);
        return false;
      }
      if (parts.every((p) => p !== undefined)) {
        break;
      }
    }
    if (parts.some((p) => p === undefined)) {
      this.log.appendLine(`[tether] TypeScript gave no diagnostics for ${uri.fsPath} after ${PULL_ATTEMPTS} tries`);
      return false;
    }
    const params: PublishDiagnosticsParams = {
      uri: this.client.code2ProtocolConverter.asUri(uri),
      version,
      positionEncoding: POSITION_ENCODING,
      diagnostics: fromTsServer(parts.flatMap((p) => p ?? [])),
      complete: true,
    };
    this.client.sendNotification(PUBLISH_DIAGNOSTICS, params).catch((e: unknown) => {
      this.log.appendLine(`[tether] sending diagnostics for ${params.uri}: ${e instanceof Error ? e.message : String(e)}`);
    });
    return true;
  }

  /**
   * Whether tsserver can be asked for all of `doc`'s diagnostics: a TypeScript or JavaScript
   * `file:` document of the workspace, validated, whose every diagnostic is TypeScript's (another
   * provider's, a linter's, cannot be asked).
   */
  private pullable(doc: vscode.TextDocument): boolean {
    const uri = doc.uri;
    if (
      !TYPESCRIPT_LANGUAGES.has(doc.languageId) ||
      uri.scheme !== "file" ||
      vscode.workspace.getWorkspaceFolder(uri) === undefined ||
      !this.client.isRunning()
    ) {
      return false;
    }
    const language = doc.languageId.startsWith("javascript") ? "javascript" : "typescript";
    if (vscode.workspace.getConfiguration(language, uri).get<boolean>("validate.enable") === false) {
      return false;
    }
    const own = this.client.diagnostics?.get(uri) ?? [];
    return !withoutOwn(vscode.languages.getDiagnostics(uri), own).some((d) => d.source !== "ts");
  }

  /**
   * Sends one document's diagnostics, whole (none clears what was sent before). A document
   * tsserver can be asked about is asked, and the answer sent stamped with its version: VS Code's
   * own view of it mixes TypeScript's parts as they come (the syntax of the new text beside the
   * semantics of the old, for a moment), and a report without a version sent then could stand
   * for the text after a change made since. Any other is sent as VS Code shows it, without one.
   */
  private send(uri: vscode.Uri): void {
    if (uri.scheme !== "file" || vscode.workspace.getWorkspaceFolder(uri) === undefined || !this.client.isRunning()) {
      return;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc === undefined) {
      this.sendAsShown(uri);
      return;
    }
    // `pull` sends nothing for a document it cannot ask about, or when asking failed.
    void this.pull(doc).then((sent) => {
      if (!sent) {
        this.sendAsShown(uri);
      }
    });
  }

  /** Sends one document's diagnostics as VS Code shows them, without a version. */
  private sendAsShown(uri: vscode.Uri): void {
    if (!this.client.isRunning()) {
      return;
    }
    const own = this.client.diagnostics?.get(uri) ?? [];
    const params = diagnosticsParams(
      this.client.code2ProtocolConverter.asUri(uri),
      withoutOwn(vscode.languages.getDiagnostics(uri), own),
    );
    this.client.sendNotification(PUBLISH_DIAGNOSTICS, params).catch((e: unknown) => {
      this.log.appendLine(`[tether] sending diagnostics for ${params.uri}: ${e instanceof Error ? e.message : String(e)}`);
    });
  }

  dispose(): void {
    for (const d of this.subscriptions.splice(0)) {
      d.dispose();
    }
  }
}

/** `tether/editorContext`: the visible `file:` editors, their selections and visible ranges. */
export function editorContext(client: LanguageClient): EditorContextResult {
  const active = vscode.window.activeTextEditor;
  const editors = vscode.window.visibleTextEditors
    .filter((e) => e.document.uri.scheme === "file")
    .map((e) => ({
      uri: client.code2ProtocolConverter.asUri(e.document.uri),
      version: e.document.version,
      active: active !== undefined && (e === active || (e.document === active.document && e.viewColumn === active.viewColumn)),
      // The primary selection is the first; a cursor is an empty selection.
      selections: e.selections.map((s) => ({ range: asRange(s), text: e.document.getText(s) })),
      visibleRanges: e.visibleRanges.map(asRange),
    }));
  return { positionEncoding: POSITION_ENCODING, editors };
}

function invalid(message: string): ResponseError {
  return new ResponseError(ErrorCodes.InvalidParams, message);
}

function isPosition(v: unknown): v is Position {
  const p = v as Partial<Position> | null | undefined;
  return typeof p?.line === "number" && typeof p.character === "number";
}

/** The document and position of a `TextDocumentPositionParams`, the document opened (loaded). */
async function documentPosition(
  client: LanguageClient,
  params: unknown,
  needPosition: boolean,
): Promise<{ doc: vscode.TextDocument; position: vscode.Position }> {
  const p = params as { textDocument?: { uri?: unknown }; position?: unknown } | null | undefined;
  const uri = p?.textDocument?.uri;
  if (typeof uri !== "string") {
    throw invalid("params.textDocument.uri is not a string");
  }
  if (needPosition && !isPosition(p?.position)) {
    throw invalid("params.position is not a position");
  }
  let doc: vscode.TextDocument;
  try {
    // Opening loads the document, so that the providers for its language can answer.
    doc = await vscode.workspace.openTextDocument(client.protocol2CodeConverter.asUri(uri));
  } catch (e) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, `cannot open ${uri}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const position = isPosition(p?.position) ? client.protocol2CodeConverter.asPosition(p.position) : new vscode.Position(0, 0);
  return { doc, position };
}

/** Runs a `vscode.execute*Provider` command; a provider's failure is an error response with its message. */
async function execute<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
  try {
    return await vscode.commands.executeCommand<T | undefined>(command, ...args);
  } catch (e) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, e instanceof Error ? e.message : String(e));
  }
}

type CodeSymbols = (vscode.SymbolInformation | vscode.DocumentSymbol)[];

/**
 * Whether some provider serves a document: VS Code's API does not say which providers exist for
 * a language, so an empty answer is told from "no provider" by the document's outline. A language
 * that has any provider has a document symbol provider in practice (TypeScript, Python, Rust, Go,
 * Markdown, JSON, ...); a document without symbols, or of a language nobody serves, has none.
 */
async function hasProviders(doc: vscode.TextDocument): Promise<boolean> {
  if (doc.languageId === "plaintext") {
    return false;
  }
  const symbols = await vscode.commands
    .executeCommand<CodeSymbols | undefined>("vscode.executeDocumentSymbolProvider", doc.uri)
    .then(undefined, () => undefined);
  return (symbols?.length ?? 0) > 0;
}

/**
 * `tether/languageRequest`: asks VS Code's providers for the document (every extension's, merged
 * by VS Code; tether registers none) and answers in LSP's shapes. `servers` is `["vscode"]` when
 * the answer is not empty, or when it is but the document has an outline (so a provider serves
 * it); else `[]`. `complete` is always `true`: the API says nothing of indexing.
 */
export async function languageRequest(client: LanguageClient, request: LanguageRequestParams): Promise<LanguageRequestResult> {
  const uriOf = (u: vscode.Uri): string => client.code2ProtocolConverter.asUri(u);
  const params = request.params;
  let result: unknown;
  let doc: vscode.TextDocument | undefined;
  switch (request.method) {
    case "textDocument/definition": {
      const at = await documentPosition(client, params, true);
      doc = at.doc;
      result = asLocations(
        await execute<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", doc.uri, at.position),
        uriOf,
      );
      break;
    }
    case "textDocument/references": {
      const at = await documentPosition(client, params, true);
      doc = at.doc;
      // VS Code's command always includes the declaration: drop it when asked to.
      let refs: Location[] = asLocations(
        await execute<vscode.Location[]>("vscode.executeReferenceProvider", doc.uri, at.position),
        uriOf,
      );
      const context = (params as { context?: { includeDeclaration?: unknown } }).context;
      if (context?.includeDeclaration === false) {
        const declarations = asLocations(
          await execute<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", doc.uri, at.position),
          uriOf,
        );
        refs = withoutDeclarations(refs, declarations);
      }
      result = refs;
      break;
    }
    case "textDocument/hover": {
      const at = await documentPosition(client, params, true);
      doc = at.doc;
      result = asHover(await execute<vscode.Hover[]>("vscode.executeHoverProvider", doc.uri, at.position));
      break;
    }
    case "textDocument/documentSymbol": {
      doc = (await documentPosition(client, params, false)).doc;
      result = asDocumentSymbols(await execute<CodeSymbols>("vscode.executeDocumentSymbolProvider", doc.uri), uriOf);
      break;
    }
    case "workspace/symbol": {
      const query = (params as { query?: unknown } | null | undefined)?.query;
      if (typeof query !== "string") {
        throw invalid("params.query is not a string");
      }
      result = asSymbolInformations(
        await execute<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", query),
        uriOf,
      );
      // No document names the language: an empty search asks the active editor's document.
      const active = vscode.window.activeTextEditor?.document;
      doc = active?.uri.scheme === "file" ? active : undefined;
      break;
    }
    case "textDocument/rename": {
      const at = await documentPosition(client, params, true);
      doc = at.doc;
      const newName = (params as { newName?: unknown }).newName;
      if (typeof newName !== "string") {
        throw invalid("params.newName is not a string");
      }
      const edit = await execute<vscode.WorkspaceEdit>("vscode.executeDocumentRenameProvider", doc.uri, at.position, newName);
      result = asWorkspaceEdit(edit?.entries(), uriOf);
      break;
    }
    default:
      throw invalid(`unknown method ${request.method}`);
  }
  const answered = !isEmptyAnswer(result) || (doc !== undefined && (await hasProviders(doc)));
  return { positionEncoding: POSITION_ENCODING, servers: answered ? [PROVIDERS_NAME] : [], complete: true, result };
}

/**
 * Registers the handlers of the requests the settings share, on a client not yet started (they
 * replace the client's own once it is initialized).
 */
export function registerKnowledgeHandlers(
  client: LanguageClient,
  share: { readonly editorContext: boolean; readonly languageFeatures: boolean },
): void {
  if (share.editorContext) {
    client.onRequest(EDITOR_CONTEXT, () => editorContext(client));
  }
  if (share.languageFeatures) {
    client.onRequest(LANGUAGE_REQUEST, (params: LanguageRequestParams) => languageRequest(client, params));
  }
}
