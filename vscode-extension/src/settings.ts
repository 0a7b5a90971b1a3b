// The extension's settings and what they become: `tether lsp` arguments, initialization options
// and `tether mcp` arguments. Pure (no `vscode` import) so that unit tests can run it.

/** When tether saves the documents it changed (`initializationOptions.save`). */
export type SavePolicy = "clean" | "never";

/** The server's stderr log level (`--log-level`). */
export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";

/** `tether.review`: review before apply, sent to the server as it is (editors/protocol.md, `review`). */
export interface ReviewSetup {
  /** `off`: changes apply at once; `ask`: each change waits for the user. */
  readonly mode: "off" | "ask";
  /** The server's rules (`{tool?, path?, creates?, review}`), passed on unread. */
  readonly rules?: readonly unknown[];
  /** How long, in milliseconds, the server waits for an answer. */
  readonly timeout?: number;
}

/** How long the server waits for a review when the setting does not say (its default). */
export const REVIEW_TIMEOUT_MS = 300_000;

const SAVE_POLICIES: readonly SavePolicy[] = ["clean", "never"];
const LOG_LEVELS: readonly LogLevel[] = ["error", "warn", "info", "debug", "trace"];

/** The settings under `tether.`, read and checked. */
export interface Settings {
  /** `tether.server.path`: empty for the bundled binary, then PATH. */
  readonly serverPath: string;
  /** `tether.profile`. */
  readonly profile: string;
  /** `tether.readOnly`. */
  readonly readOnly: boolean;
  /** `tether.save`. */
  readonly save: SavePolicy;
  /** `tether.server.logLevel`. */
  readonly logLevel: LogLevel;
  /** `tether.shareDiagnostics`: push the problems VS Code knows to tether. */
  readonly shareDiagnostics: boolean;
  /** `tether.shareEditorContext`: answer tether's questions about the visible editors. */
  readonly shareEditorContext: boolean;
  /** `tether.shareLanguageFeatures`: answer tether's symbol, definition, reference, hover and rename questions. */
  readonly shareLanguageFeatures: boolean;
  /** `tether.deny`: globs of paths no tool may touch. */
  readonly deny: readonly string[];
  /** `tether.denySecrets`: hide the usual secrets files too. */
  readonly denySecrets: boolean;
  /** `tether.review`: review before apply. */
  readonly review: ReviewSetup;
}

/** The defaults, as `package.json` declares them. */
export const DEFAULTS: Settings = {
  serverPath: "",
  profile: "standard",
  readOnly: false,
  save: "clean",
  logLevel: "warn",
  shareDiagnostics: true,
  shareEditorContext: true,
  shareLanguageFeatures: true,
  deny: [],
  denySecrets: false,
  review: { mode: "off" },
};

/** Reads one setting by its key under `tether.` (`server.path`, `profile`, ...). */
export type Get = (key: string) => unknown;

/** Reads the settings; a value of the wrong type or outside its choices falls back to the default. */
export function readSettings(get: Get): Settings {
  const text = (key: string, fallback: string): string => {
    const v = get(key);
    return typeof v === "string" && v.trim() !== "" ? v.trim() : fallback;
  };
  const oneOf = <T extends string>(key: string, choices: readonly T[], fallback: T): T => {
    const v = get(key);
    return choices.find((c) => c === v) ?? fallback;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const v = get(key);
    return typeof v === "boolean" ? v : fallback;
  };
  return {
    serverPath: text("server.path", DEFAULTS.serverPath),
    profile: text("profile", DEFAULTS.profile),
    readOnly: flag("readOnly", DEFAULTS.readOnly),
    save: oneOf("save", SAVE_POLICIES, DEFAULTS.save),
    logLevel: oneOf("server.logLevel", LOG_LEVELS, DEFAULTS.logLevel),
    shareDiagnostics: flag("shareDiagnostics", DEFAULTS.shareDiagnostics),
    shareEditorContext: flag("shareEditorContext", DEFAULTS.shareEditorContext),
    shareLanguageFeatures: flag("shareLanguageFeatures", DEFAULTS.shareLanguageFeatures),
    deny: globs(get("deny")),
    denySecrets: flag("denySecrets", DEFAULTS.denySecrets),
    review: reviewSetup(get("review")),
  };
}

/**
 * `tether.review`, read: `"off"` or `"ask"` alone, or `{mode, rules, timeout}`. A mode other than
 * the two, rules that are not a list and a timeout that is not a positive number are left out.
 */
function reviewSetup(v: unknown): ReviewSetup {
  if (v === "ask" || v === "off") {
    return { mode: v };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return DEFAULTS.review;
  }
  const o = v as { mode?: unknown; rules?: unknown; timeout?: unknown };
  return {
    mode: o.mode === "ask" ? "ask" : "off",
    ...(Array.isArray(o.rules) ? { rules: o.rules as unknown[] } : {}),
    ...(typeof o.timeout === "number" && o.timeout > 0 ? { timeout: o.timeout } : {}),
  };
}

/** The non-empty strings of a list setting (anything else is left out). */
function globs(v: unknown): readonly string[] {
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === "string" && g.trim() !== "") : [];
}

/** The arguments of `tether lsp`. */
export function lspArgs(s: Settings): string[] {
  return ["lsp", "--profile", s.profile, ...(s.readOnly ? ["--read-only"] : []), "--log-level", s.logLevel];
}

/** The `initializationOptions` sent in `initialize`. */
export function initializationOptions(s: Settings): {
  save: SavePolicy;
  deny?: { patterns: readonly string[]; secrets: boolean };
  review?: ReviewSetup;
} {
  const hides = s.deny.length > 0 || s.denySecrets;
  const reviews = s.review.mode !== "off" || (s.review.rules?.length ?? 0) > 0;
  return {
    save: s.save,
    ...(hides ? { deny: { patterns: s.deny, secrets: s.denySecrets } } : {}),
    ...(reviews ? { review: s.review } : {}),
  };
}

/**
 * The `workspace/didChangeConfiguration` params that replace the server's review setup at run
 * time, so that turning review on or off needs no restart.
 */
export function reviewChange(s: Settings): { settings: { tether: { review: ReviewSetup } } } {
  return { settings: { tether: { review: s.review } } };
}

/**
 * The client capabilities tether reads under `experimental.tether`: what the extension answers
 * and sends. A capability whose sharing setting is off is not announced, so the server never asks
 * (its tools then say the editor does not share that).
 */
export function clientCapabilities(s: Settings): Record<string, boolean> {
  return {
    saveDocuments: true,
    // Always: the extension answers `tether/review` whatever the setting, which may change later.
    review: true,
    // Always: the extension handles `tether/diskChange` (disk.ts).
    diskChanges: true,
    ...(s.shareDiagnostics ? { diagnostics: true } : {}),
    ...(s.shareEditorContext ? { editorContext: true } : {}),
    ...(s.shareLanguageFeatures ? { languageRequests: true } : {}),
  };
}

/** The arguments of `tether mcp` serving one workspace folder. */
export function mcpArgs(s: Settings, folder: string): string[] {
  return ["mcp", "--root", folder, "--profile", s.profile, ...(s.readOnly ? ["--read-only"] : [])];
}

/** Whether a change from one set of settings to another needs the server restarted. */
export function needsRestart(before: Settings, after: Settings): boolean {
  return (
    before.serverPath !== after.serverPath ||
    before.profile !== after.profile ||
    before.readOnly !== after.readOnly ||
    before.save !== after.save ||
    before.logLevel !== after.logLevel ||
    // The capabilities are announced once, in `initialize`.
    before.shareDiagnostics !== after.shareDiagnostics ||
    before.shareEditorContext !== after.shareEditorContext ||
    before.shareLanguageFeatures !== after.shareLanguageFeatures ||
    // The deny list is an initialization option.
    before.denySecrets !== after.denySecrets ||
    before.deny.join("\n") !== after.deny.join("\n")
  );
}
