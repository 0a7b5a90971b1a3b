// tether's own LSP protocol as the extension uses it (the reference is editors/protocol.md).

/** `workspace/executeCommand` command that runs one tool. */
export const CALL_TOOL = "tether.callTool";
/** `workspace/executeCommand` command that lists a profile's tools. */
export const LIST_TOOLS = "tether.listTools";
/** Request from the server: save documents it changed that were clean before. */
export const SAVE_DOCUMENTS = "tether/saveDocuments";

/** Request from the server: what the visible editors show (`editor_context`). */
export const EDITOR_CONTEXT = "tether/editorContext";
/** Request from the server: ask the editor's other language providers (`definition`, `symbols`, ...). */
export const LANGUAGE_REQUEST = "tether/languageRequest";
/** Notification to the server: the problems VS Code knows for one document, whole. */
export const PUBLISH_DIAGNOSTICS = "tether/publishDiagnostics";
/** The protocol version (`experimental.tether.protocolVersion`) that added the three above. */
export const EDITOR_KNOWLEDGE_VERSION = 3;

/** The protocol this extension speaks, announced as `experimental.tether.protocolVersion`. */
export const PROTOCOL_VERSION = 3;
/** The oldest server protocol the extension works with (it degrades for 1 and 2). */
export const MIN_SERVER_PROTOCOL = 1;

/** What a server says about itself in its `initialize` answer. */
export interface ServerHello {
  /** `serverInfo.name`. */
  readonly name?: string;
  /** `serverInfo.version`. */
  readonly version?: string;
  /** `capabilities.experimental.tether.protocolVersion`: undefined when the server lacks it. */
  readonly protocolVersion?: number;
  /** `capabilities.experimental.tether.minProtocolVersion`: 1 when the server lacks it. */
  readonly minProtocolVersion: number;
}

/** Reads the hello out of an `InitializeResult`. */
export function serverHello(result: unknown): ServerHello {
  const r = (result ?? {}) as {
    serverInfo?: { name?: unknown; version?: unknown };
    capabilities?: { experimental?: { tether?: { protocolVersion?: unknown; minProtocolVersion?: unknown } } };
  };
  const tether = r.capabilities?.experimental?.tether;
  const int = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) ? v : undefined);
  return {
    name: typeof r.serverInfo?.name === "string" ? r.serverInfo.name : undefined,
    version: typeof r.serverInfo?.version === "string" ? r.serverInfo.version : undefined,
    protocolVersion: int(tether?.protocolVersion),
    minProtocolVersion: int(tether?.minProtocolVersion) ?? 1,
  };
}

/** What the extension knows when it judges a server. */
export interface Judge {
  /** The binary that answered. */
  readonly binary: string;
  /** The extension's version (package.json). */
  readonly extensionVersion: string;
  /** Whether a release binary can be downloaded for this platform. */
  readonly canDownload: boolean;
}

/** The verdict on a server: run it, run it and say the versions differ, or stop it. */
export type Verdict =
  | { readonly kind: "compatible" }
  | { readonly kind: "versionMismatch"; readonly message: string }
  | { readonly kind: "incompatible"; readonly message: string; readonly updateExtension: boolean };

/**
 * The compatibility rules (editors/protocol.md): no tether protocol version at all, a protocol older
 * than MIN_SERVER_PROTOCOL, or a server whose minProtocolVersion is newer than PROTOCOL_VERSION is
 * incompatible; a compatible server of another version than the extension's runs, and that is said.
 */
export function judgeServer(hello: ServerHello, j: Judge): Verdict {
  const ext = j.extensionVersion;
  const fixBinary =
    `install tether ${ext}: ` +
    (j.canDownload ? `run "tether: Download Server", or \`cargo install --locked tether-bridge --version ${ext}\`` : `\`cargo install --locked tether-bridge --version ${ext}\``) +
    " (and clear tether.server.path if it names this binary)";
  const mine = `this extension (tether ${ext}) speaks protocol ${PROTOCOL_VERSION} and works with servers of protocol ${MIN_SERVER_PROTOCOL} or newer`;
  const who = `${j.binary} (${hello.name ?? "no name"} ${hello.version ?? "of no version"}`;
  if (hello.protocolVersion === undefined) {
    return {
      kind: "incompatible",
      updateExtension: false,
      message: `tether: ${who}, announcing no tether protocol) is not tether, or a tether older than 0.1.0; ${mine}. To fix it, ${fixBinary}.`,
    };
  }
  if (hello.protocolVersion < MIN_SERVER_PROTOCOL) {
    return {
      kind: "incompatible",
      updateExtension: false,
      message: `tether: ${who}, protocol ${hello.protocolVersion}) is too old: ${mine}. To fix it, ${fixBinary}.`,
    };
  }
  if (hello.minProtocolVersion > PROTOCOL_VERSION) {
    return {
      kind: "incompatible",
      updateExtension: true,
      message:
        `tether: ${who}, protocol ${hello.protocolVersion}) needs a client of protocol ${hello.minProtocolVersion} or newer, ` +
        `but ${mine}. To fix it, update the tether extension, or ${fixBinary}.`,
    };
  }
  if (hello.version !== ext) {
    return {
      kind: "versionMismatch",
      message:
        `${j.binary} is tether ${hello.version ?? "of no version"} (protocol ${hello.protocolVersion}), the extension is tether ${ext} ` +
        `(protocol ${PROTOCOL_VERSION}): they work together, but for the matching binary ${fixBinary}.`,
    };
  }
  return { kind: "compatible" };
}

/** Params of `tether/saveDocuments`. */
export interface SaveDocumentsParams {
  readonly uris: string[];
}

/** Result of `tether/saveDocuments`. */
export interface SaveDocumentsResult {
  readonly saved: string[];
}

/** The argument of `tether.callTool`. */
export interface CallToolParams {
  readonly tool: string;
  readonly arguments?: Record<string, unknown>;
  readonly profile?: string;
  /** The user ran this call directly: the server also shows a failure with `window/showMessage`. */
  readonly interactive?: boolean;
}

/** The result of `tether.callTool`, shaped as an MCP `CallToolResult`. */
export interface CallToolResult {
  readonly content: { readonly type: string; readonly text?: string }[];
  readonly isError?: boolean;
  readonly structuredContent?: unknown;
}

/** A tool as `tether.listTools` lists it (an MCP `Tool`). */
export interface ToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: { readonly properties?: Record<string, unknown>; readonly required?: string[] };
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean };
}

/** The result of `tether.listTools`. */
export interface ListToolsResult {
  readonly tools: ToolInfo[];
}

/** The text of a tool result (its text blocks joined). */
export function resultText(result: CallToolResult): string {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

/**
 * The count of standing changes after one more applied edit: the server labels its edits
 * `tether: TOOL`, and `tether: TOOL (taken back)` the edit that undoes one that did not show up
 * as expected (before it retries the call).
 */
export function countChange(count: number, label: string | undefined): number {
  return label?.endsWith("(taken back)") === true ? Math.max(0, count - 1) : count + 1;
}


/**
 * A skeleton of a tool's arguments for the Run Tool input box: its required properties with
 * placeholder values of their type.
 */
export function argumentsTemplate(tool: ToolInfo): string {
  const props = tool.inputSchema?.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const name of tool.inputSchema?.required ?? []) {
    const schema = props[name] as { type?: unknown } | undefined;
    const type = Array.isArray(schema?.type) ? (schema.type as unknown[])[0] : schema?.type;
    out[name] =
      type === "integer" || type === "number"
        ? 0
        : type === "boolean"
          ? false
          : type === "array"
            ? []
            : type === "object"
              ? {}
              : "";
  }
  return JSON.stringify(out);
}
