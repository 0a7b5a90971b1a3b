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
