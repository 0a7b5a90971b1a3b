// The `tether lsp` client: finds the binary (or downloads the release that matches the extension),
// starts and restarts the language client, checks that the server speaks a protocol the extension
// works with, answers tether's requests (`tether/saveDocuments`, and those of knowledge.ts and
// disk.ts), pushes diagnostics to it and counts the changes tether applies.

import * as os from "node:os";

import * as vscode from "vscode";
import {
  ApplyWorkspaceEditRequest,
  DidChangeConfigurationNotification,
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditResult,
  type ClientCapabilities,
  ExecuteCommandRequest,
  type FeatureState,
  LanguageClient,
  type StaticFeature,
  State,
  TextDocumentEdit,
} from "vscode-languageclient/node";

import { candidates, describeFailure, findServer, isFile, type Lookup, probeVersion, type Source } from "./binary";
import { DEFAULT_DOWNLOAD_BASE, installedPath, installServer, releaseTarget } from "./install";
import {
  CALL_TOOL,
  type CallToolParams,
  type CallToolResult,
  countChange,
  EDITOR_KNOWLEDGE_VERSION,
  judgeServer,
  LIST_TOOLS,
  type ListToolsResult,
  PROTOCOL_VERSION,
  SAVE_DOCUMENTS,
  type SaveDocumentsParams,
  type SaveDocumentsResult,
  serverHello,
  type ToolInfo,
} from "./protocol";
import { DiskChanges } from "./disk";
import { DiagnosticsForwarder, registerKnowledgeHandlers } from "./knowledge";
import type { ReviewController } from "./review";
import { type Proposal, REVIEW } from "./reviewAnswer";
import {
  clientCapabilities,
  initializationOptions,
  lspArgs,
  readSettings,
  reviewChange,
  type ReviewSetup,
  type Settings,
} from "./settings";

/** What the status bar shows. */
export type ServerState = "starting" | "running" | "stopped" | "failed" | "notFound";

/** The binary in use. */
export interface Binary {
  readonly path: string;
  readonly version: string;
  readonly source: Source;
}

/** Reads the `tether.*` settings. */
export function currentSettings(): Settings {
  const config = vscode.workspace.getConfiguration("tether");
  return readSettings((key) => config.get(key));
}

/** Announces tether's client capabilities (`experimental.tether`) that the settings allow. */
class TetherCapabilities implements StaticFeature {
  constructor(private readonly settings: Settings) {}
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = {
      ...experimental,
      tether: { ...clientCapabilities(this.settings), protocolVersion: PROTOCOL_VERSION },
    };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

/** `tether.server.downloadUrl`: the base URL of the releases (machine scope, so no workspace sets it). */
export function downloadBase(): string {
  const v = vscode.workspace.getConfiguration("tether").get<unknown>("server.downloadUrl");
  return typeof v === "string" && v.trim() !== "" ? v.trim() : DEFAULT_DOWNLOAD_BASE;
}

/** Whether a release binary exists for this machine. */
export function canDownload(): boolean {
  return releaseTarget(process.platform, process.arch) !== undefined;
}

/** One `tether lsp` for this window, restartable. */
export class TetherServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientListeners: { dispose(): void }[] = [];
  private _state: ServerState = "stopped";
  private _binary: Binary | undefined;
  private _lookup: Lookup | undefined;
  private _settings: Settings = currentSettings();
  private _appliedChanges = 0;
  private _lastChange: string | undefined;
  /** Edits are applied one after the other, in the order the server sent them. */
  private editQueue: Promise<unknown> = Promise.resolve();
  private starting: Promise<void> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private _review: ReviewSetup | undefined;
  private _problem: string | undefined;
  private _versionNote: string | undefined;
  private _incompatible = false;
  private downloading: Promise<string | undefined> | undefined;
  private readonly disks: DiskChanges;
  /** Sends VS Code's diagnostics to the running client, when it reads them. */
  private forwarder: DiagnosticsForwarder | undefined;

  /** Fires when the state, the binary or the change count changes. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly extensionPath: string,
    /** The `tether` output channel: the extension's messages and the server's log. */
    readonly log: vscode.OutputChannel,
    private readonly trace: vscode.OutputChannel,
    /** Shows `tether/review` proposals and answers them. */
    private readonly reviews: ReviewController,
    /** The extension's global storage folder: downloaded binaries go to `bin/VERSION/tether` in it. */
    private readonly storage: string,
    /** The extension's version: the tether release it matches. */
    readonly extensionVersion: string,
  ) {
    this.disks = new DiskChanges(log);
  }

  /** Changes on disk tether merged into unsaved documents (`tether/diskChange`). */
  get diskChanges(): DiskChanges {
    return this.disks;
  }

  /** Why the server is not running (not found, incompatible, failed), when it is not. */
  get problem(): string | undefined {
    return this._problem;
  }

  /** Whether the binary found speaks no protocol the extension works with (so it was stopped). */
  get incompatible(): boolean {
    return this._incompatible;
  }

  /** Set when the running server is compatible but of another version than the extension's. */
  get versionNote(): string | undefined {
    return this._versionNote;
  }

  /** Where the binary downloaded for this extension's version is (or would be). */
  get downloadedPath(): string {
    return installedPath(this.storage, this.extensionVersion);
  }

  /** The label of the action that downloads the matching binary. */
  get downloadAction(): string {
    return `Download tether ${this.extensionVersion}`;
  }

  get state(): ServerState {
    return this._state;
  }

  /** The binary found by the last start, if any. */
  get binary(): Binary | undefined {
    return this._binary;
  }

  /** The last binary lookup: what was found and every candidate that failed before it. */
  get lookup(): Lookup | undefined {
    return this._lookup;
  }

  /** The settings the server was started with. */
  get settings(): Settings {
    return this._settings;
  }

  /**
   * How many changes from tether stand in this session: workspace edits applied, less those the
   * server took back (it takes back an edit that never showed up as expected, then retries).
   */
  get appliedChanges(): number {
    return this._appliedChanges;
  }

  /** The label of the last applied edit (`tether: edit_file`). */
  get lastChange(): string | undefined {
    return this._lastChange;
  }

  /** The review setup the server has now: sent in `initialize`, then in `workspace/didChangeConfiguration`. */
  get review(): ReviewSetup | undefined {
    return this._review;
  }

  /** The language client while one exists (for tests and diagnostics). */
  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  private setState(state: ServerState): void {
    this._state = state;
    this.changed.fire();
  }

  /** Looks the binary up in the documented order (setting, bundled, downloaded, PATH). */
  async findBinary(settings: Settings = currentSettings()): Promise<Lookup> {
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
    const list = candidates({
      setting: settings.serverPath,
      extensionPath: this.extensionPath,
      downloaded: this.downloadedPath,
      envPath: process.env.PATH,
      platform: process.platform,
      home: os.homedir(),
      workspaceFolder: folder?.uri.fsPath,
      isFile,
    });
    return findServer(list, probeVersion());
  }

  /** Starts the server unless it is running or starting. */
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) {
      return;
    }
    this._problem = undefined;
    this._versionNote = undefined;
    this._incompatible = false;
    this.setState("starting");
    const settings = currentSettings();
    this._settings = settings;
    const lookup = await this.findBinary(settings);
    this._lookup = lookup;
    for (const f of lookup.failures) {
      this.log.appendLine(`[tether] skipped ${f.candidate.path} (${f.candidate.source}): ${f.reason}`);
    }
    if (lookup.found === undefined) {
      this._binary = undefined;
      const message = describeFailure(lookup, { version: this.extensionVersion, canDownload: canDownload() });
      this._problem = message;
      this.setState("notFound");
      this.log.appendLine(`[tether] ${message}`);
      void this.notify("error", message, ...(canDownload() ? [this.downloadAction] : []), "Open Settings", "Show Log");
      return;
    }
    const { candidate, version } = lookup.found;
    this._binary = { path: candidate.path, version, source: candidate.source };
    const badSetting = lookup.failures.find((f) => f.candidate.source === "setting");
    if (badSetting !== undefined) {
      void this.notify(
        "warning",
        `tether: tether.server.path (${badSetting.candidate.path}) does not work: ${badSetting.reason}. ` +
          `Using ${candidate.path} instead.`,
        "Open Settings",
      );
    }
    const args = lspArgs(settings);
    this.log.appendLine(`[tether] starting ${candidate.path} ${args.join(" ")} (tether ${version}, ${candidate.source})`);

    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
    const client = new LanguageClient(
      "tether",
      "tether",
      {
        // No `transport`: stdio, without the `--stdio` argument the client would add.
        command: candidate.path,
        args,
        options: { cwd: folder?.uri.fsPath ?? os.homedir() },
      },
      {
        // Every file: tools read any open document's unsaved text.
        documentSelector: [{ scheme: "file" }],
        outputChannel: this.log,
        traceOutputChannel: this.trace,
        initializationOptions: initializationOptions(settings),
      },
    );
    client.registerFeature(new TetherCapabilities(settings));
    // Registered before start, these replace the client's own handlers once it is initialized.
    client.onRequest(SAVE_DOCUMENTS, (params: SaveDocumentsParams) => this.saveDocuments(client, params));
    client.onRequest(ApplyWorkspaceEditRequest.type, (params) => this.applyEdit(client, params));
    client.onRequest(REVIEW, (params: Proposal, token: vscode.CancellationToken) => this.reviews.review(params, token));
    this.disks.register(client);
    registerKnowledgeHandlers(client, {
      editorContext: settings.shareEditorContext,
      languageFeatures: settings.shareLanguageFeatures,
    });
    // Running only once its protocol is checked (after `start`), so that no one calls a server
    // that is about to be stopped, or sees it running before its version note is known.
    let checked = false;
    this.clientListeners.push(
      client.onDidChangeState((e) => {
        if (this.client !== client) {
          return;
        }
        if (e.newState === State.Running) {
          if (checked) {
            this.setState("running");
          }
        } else if (e.newState === State.Starting) {
          this.setState("starting");
        } else {
          this.setState("stopped");
        }
      }),
    );
    this.client = client;
    try {
      await client.start();
      const verdict = judgeServer(serverHello(client.initializeResult), {
        binary: candidate.path,
        extensionVersion: this.extensionVersion,
        canDownload: canDownload(),
      });
      if (verdict.kind === "incompatible") {
        // Never leave running a client that would fail oddly.
        this.log.appendLine(`[tether] ${verdict.message}`);
        await this.discard(client);
        this._problem = verdict.message;
        this._incompatible = true;
        this.setState("failed");
        void this.notify("error", verdict.message, ...(canDownload() ? [this.downloadAction] : []), "Show Log");
        return;
      }
      if (verdict.kind === "versionMismatch") {
        this._versionNote = verdict.message;
        this.log.appendLine(`[tether] ${verdict.message}`);
      }
      this._review = settings.review;
      checked = true;
      this.setState("running");
      // A server older than protocol version 3 reads no diagnostics.
      const caps = client.initializeResult?.capabilities as { experimental?: { tether?: { protocolVersion?: unknown } } } | undefined;
      const version = caps?.experimental?.tether?.protocolVersion;
      if (settings.shareDiagnostics && typeof version === "number" && version >= EDITOR_KNOWLEDGE_VERSION) {
        const forwarder = new DiagnosticsForwarder(client, this.log);
        this.clientListeners.push(forwarder);
        this.forwarder = forwarder;
        forwarder.sendAll();
      }
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      this.log.appendLine(`[tether] the server did not start: ${reason}`);
      this._problem = `the server did not start: ${reason}`;
      this.setState("failed");
      void this.notify("error", "tether: the server did not start; see the log.", "Show Log");
    }
  }

  /** Forgets a client and stops it, its listeners first so that its stop changes no state. */
  private async discard(client: LanguageClient): Promise<void> {
    if (this.client === client) {
      this.client = undefined;
    }
    this.forwarder = undefined;
    for (const d of this.clientListeners.splice(0)) {
      d.dispose();
    }
    try {
      await client.dispose(5_000);
    } catch (e) {
      this.log.appendLine(`[tether] stopping the server: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * Downloads the release binary of the extension's version into the global storage, with a
   * progress notification, then restarts the server (the lookup finds it unless the setting or a
   * bundled binary comes first). Resolves with the installed path, or undefined after showing
   * the error.
   */
  downloadServer(): Promise<string | undefined> {
    this.downloading ??= this.doDownload().finally(() => {
      this.downloading = undefined;
    });
    return this.downloading;
  }

  private async doDownload(): Promise<string | undefined> {
    const base = downloadBase();
    const title = `tether: downloading tether ${this.extensionVersion}`;
    this.log.appendLine(`[tether] downloading tether ${this.extensionVersion} from ${base}`);
    let installed: string;
    try {
      installed = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: false },
        (progress) => {
          let last = 0;
          return installServer({
            base,
            version: this.extensionVersion,
            storage: this.storage,
            platform: process.platform,
            arch: process.arch,
            onProgress: (message, fraction) => {
              const now = fraction === undefined ? undefined : Math.round(fraction * 100);
              const increment = now === undefined ? undefined : Math.max(0, now - last);
              last = now ?? last;
              progress.report({ message, increment });
            },
          });
        },
      );
    } catch (e) {
      const message = `tether: the download failed: ${e instanceof Error ? e.message : String(e)}`;
      this.log.appendLine(`[tether] ${message}`);
      void this.notify("error", message, "Show Log");
      return undefined;
    }
    this.log.appendLine(`[tether] installed ${installed}`);
    await this.restart();
    if (this._binary?.path !== installed && this._state === "running") {
      this.log.appendLine(
        `[tether] ${installed} is installed, but ${this._binary?.path ?? "another binary"} (${this._binary?.source ?? "?"}) comes first in the lookup order`,
      );
    }
    return installed;
  }

  /** Stops the server (and forgets the client). */
  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    this.forwarder = undefined;
    for (const d of this.clientListeners.splice(0)) {
      d.dispose();
    }
    if (client !== undefined) {
      try {
        await client.dispose(5_000);
      } catch (e) {
        this.log.appendLine(`[tether] stopping the server: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.setState("stopped");
  }

  /** Stops and starts again with the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private runningClient(): LanguageClient {
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      throw new Error(
        this._state === "notFound"
          ? "tether is not running: no working tether binary was found"
          : `tether is not running (${this._state})`,
      );
    }
    return client;
  }

  /**
   * Sends the server the review setup of the current settings, if it changed: the server replaces
   * its own at once, so that turning review on or off needs no restart.
   */
  async sendReview(settings: Settings = currentSettings()): Promise<void> {
    const client = this.client;
    if (client === undefined || !client.isRunning() || JSON.stringify(settings.review) === JSON.stringify(this._review)) {
      return;
    }
    await client.sendNotification(DidChangeConfigurationNotification.type, reviewChange(settings));
    this._review = settings.review;
    this.log.appendLine(`[tether] review setup sent: ${JSON.stringify(settings.review)}`);
  }

  /** Runs one tool through `tether.callTool`. */
  async callTool(params: CallToolParams): Promise<CallToolResult> {
    const client = this.runningClient();
    return (await client.sendRequest(ExecuteCommandRequest.type, {
      command: CALL_TOOL,
      arguments: [params],
    })) as CallToolResult;
  }

  /** The tools of the server's profile, through `tether.listTools`. */
  async listTools(): Promise<ToolInfo[]> {
    const client = this.runningClient();
    const result = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: LIST_TOOLS,
      arguments: [],
    })) as ListToolsResult;
    return result.tools;
  }

  /**
   * `workspace/applyEdit`, as the client's own handler does it (with its version check), plus
   * the count of applied changes the status bar shows.
   */
  private applyEdit(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    const run = async (): Promise<ApplyWorkspaceEditResult> => {
      const edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
      for (const change of params.edit.documentChanges ?? []) {
        if (!TextDocumentEdit.is(change) || change.textDocument.version === null) {
          continue;
        }
        const uri = client.protocol2CodeConverter.asUri(change.textDocument.uri).toString();
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
        if (doc !== undefined && doc.version !== change.textDocument.version) {
          return {
            applied: false,
            failureReason: `${uri} is at version ${doc.version}, the edit is for version ${change.textDocument.version}`,
          };
        }
      }
      const applied = await vscode.workspace.applyEdit(edit);
      if (applied) {
        this._appliedChanges = countChange(this._appliedChanges, params.label);
        this._lastChange = params.label;
        this.changed.fire();
        // The diagnostics of the changed text, stamped with its version, where they can be asked.
        for (const uri of edit.entries().map(([u]) => u.toString())) {
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
          if (doc !== undefined) {
            void this.forwarder?.pull(doc);
          }
        }
      }
      return { applied };
    };
    const result = this.editQueue.then(run, run);
    this.editQueue = result.catch(() => undefined);
    return result;
  }

  /** `tether/saveDocuments`: saves the listed documents, unless the save policy is `never`. */
  private async saveDocuments(client: LanguageClient, params: SaveDocumentsParams): Promise<SaveDocumentsResult> {
    if (currentSettings().save === "never") {
      return { saved: [] };
    }
    const saved: string[] = [];
    for (const uri of params.uris) {
      const doc = vscode.workspace.textDocuments.find(
        (d) => client.code2ProtocolConverter.asUri(d.uri) === uri || d.uri.toString() === uri,
      );
      if (doc === undefined) {
        continue;
      }
      // A document that is not dirty already matches its file.
      if (!doc.isDirty || (await doc.save())) {
        saved.push(uri);
      }
    }
    return { saved };
  }

  private async notify(kind: "error" | "warning", message: string, ...actions: string[]): Promise<void> {
    const show = kind === "error" ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    const choice = await show(message, ...actions);
    if (choice === this.downloadAction) {
      await this.downloadServer();
    } else if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "tether.server.path");
    } else if (choice === "Show Log") {
      this.log.show(true);
    }
  }

  dispose(): void {
    void this.stop();
    this.changed.dispose();
    this.disks.dispose();
  }
}
