// Another program changed the file of a document with unsaved changes (a shell's `sed -i`, a
// formatter, an assistant's own file tools). tether merges that change into the document, three
// ways, as one edit with its own undo step, and says so with `tether/diskChange`
// (editors/protocol.md); this module keeps VS Code's save conflict away for such a document, and
// gives the user the choice when the change could not be merged.
//
// - VS Code asks nothing when a dirty document's file changes; its question comes at the next
//   save ("The content of the file is newer"), because the file's time moved since it read it, and
//   no API lets an extension move the time VS Code read. It lets a save through, though, when the
//   file already holds exactly what the save writes. So when the document is saved while the file
//   is still exactly as tether merged it (its size and time), the document's text is written to
//   the file first, from the save's `onWillSaveTextDocument`; VS Code's own write then finds the
//   file equal and saves as usual. A file changed again since gets VS Code's usual question, and so
//   does a save that another participant (a formatter) changes after this one: nothing is lost.
// - A change over the unsaved lines is not merged: the user is told, and picks to compare the
//   document with the file, to load the file, or to keep the document.

import { promises as fs } from "node:fs";
import * as path from "node:path";

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

/** Notification from the server: another program changed the file of a document with unsaved changes. */
export const DISK_CHANGE = "tether/diskChange";

/** Params of `tether/diskChange`. */
export interface DiskChangeParams {
  readonly uri: string;
  /** Whether the file's change is in the document now (its unsaved changes kept). */
  readonly merged: boolean;
  /** The document's version the change was merged into. */
  readonly version?: number;
  /** The file's size as tether read it. */
  readonly size: number;
  /** The file's modification time as tether read it: `[seconds, nanoseconds]`, or null. */
  readonly mtime: readonly [number, number] | null;
  /** The document's lines both sides changed (when not merged). */
  readonly overlaps?: string;
  /** The unified diff from the document to the file (when not merged). */
  readonly diff?: string;
}

/** The file as tether merged it: its size and modification time. */
interface FileState {
  readonly size: number;
  readonly mtime: readonly [number, number];
}

/** The scheme of the read-only view of a file on disk that "Compare" shows. */
const ON_DISK_SCHEME = "tether-disk";

/** Whether the file at `file` still has the size and time tether merged. */
async function unchangedSince(file: string, merged: FileState): Promise<boolean> {
  try {
    const st = await fs.stat(file, { bigint: true });
    return (
      st.size === BigInt(merged.size) &&
      st.mtimeNs / 1_000_000_000n === BigInt(merged.mtime[0]) &&
      st.mtimeNs % 1_000_000_000n === BigInt(merged.mtime[1])
    );
  } catch {
    return false;
  }
}

/** The bytes VS Code writes for `doc`: its text in UTF-8, after a byte order mark if the file has one. */
async function bytesToWrite(doc: vscode.TextDocument, file: string): Promise<Buffer | undefined> {
  const head = Buffer.alloc(3);
  const handle = await fs.open(file, "r");
  let read: number;
  try {
    ({ bytesRead: read } = await handle.read(head, 0, 3, 0));
  } finally {
    await handle.close();
  }
  const bom = read === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  // UTF-16 files: VS Code writes them in their own encoding, which is not rebuilt here; the save
  // then gets VS Code's usual question.
  if (read >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
    return undefined;
  }
  const text = Buffer.from(doc.getText(), "utf8");
  return bom ? Buffer.concat([head, text]) : text;
}

/** Handles `tether/diskChange` for the running client, and the saves it concerns. */
export class DiskChanges implements vscode.Disposable {
  /** Documents whose file's change tether merged, by URI: the file as it was merged. */
  private readonly merged = new Map<string, FileState>();
  /** The last `tether/diskChange` for each document, by URI. */
  private readonly last = new Map<string, DiskChangeParams>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: vscode.OutputChannel) {
    this.disposables.push(
      vscode.workspace.onWillSaveTextDocument((e) => {
        const state = this.merged.get(e.document.uri.toString());
        if (state !== undefined && e.document.uri.scheme === "file") {
          e.waitUntil(this.writeOverMerged(e.document, state).then(() => []));
        }
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => this.merged.delete(doc.uri.toString())),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        this.merged.delete(doc.uri.toString());
        this.last.delete(doc.uri.toString());
      }),
      vscode.workspace.registerTextDocumentContentProvider(ON_DISK_SCHEME, {
        // Only the files of the workspace's folders, as everything tether reads.
        provideTextDocumentContent: async (uri) => {
          if (vscode.workspace.getWorkspaceFolder(uri.with({ scheme: "file" })) === undefined) {
            throw new Error(`${uri.fsPath} is outside the workspace folders`);
          }
          return fs.readFile(uri.fsPath, "utf8");
        },
      }),
    );
  }

  /** Registers the handler on a client, before it starts. */
  register(client: LanguageClient): void {
    client.onNotification(DISK_CHANGE, (params: DiskChangeParams) => {
      this.onDiskChange(client, params);
    });
  }

  /** Whether a save of the document would be let through over the merged file (for the tests). */
  isMerged(uri: vscode.Uri): boolean {
    return this.merged.has(uri.toString());
  }

  /** The last `tether/diskChange` for the document (for the tests). */
  lastNotice(uri: vscode.Uri): DiskChangeParams | undefined {
    return this.last.get(uri.toString());
  }

  private onDiskChange(client: LanguageClient, params: DiskChangeParams): void {
    const uri = client.protocol2CodeConverter.asUri(params.uri);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc === undefined) {
      return;
    }
    this.last.set(uri.toString(), params);
    if (params.merged) {
      if (params.mtime !== null) {
        this.merged.set(uri.toString(), { size: params.size, mtime: params.mtime });
      }
      this.log.appendLine(`[tether] merged the change on disk of ${uri.fsPath} into its unsaved document`);
      return;
    }
    this.merged.delete(uri.toString());
    void this.choose(doc, params);
  }

  /** Writes the document's text over its file while the file is as tether merged it. */
  private async writeOverMerged(doc: vscode.TextDocument, state: FileState): Promise<void> {
    this.merged.delete(doc.uri.toString());
    const file = doc.uri.fsPath;
    try {
      if (!(await unchangedSince(file, state))) {
        return;
      }
      const bytes = await bytesToWrite(doc, file);
      if (bytes !== undefined && (await unchangedSince(file, state))) {
        await fs.writeFile(file, bytes);
      }
    } catch (e) {
      // VS Code's own save goes on, and asks as usual.
      this.log.appendLine(`[tether] could not write ${file} over its merged change: ${String(e)}`);
    }
  }

  /** Tells the user of a change on disk that overlaps the unsaved lines, and does what they pick. */
  private async choose(doc: vscode.TextDocument, params: DiskChangeParams): Promise<void> {
    const name = path.basename(doc.uri.fsPath);
    const compare = "Compare";
    const load = "Load the File";
    const keep = "Keep the Document";
    const choice = await vscode.window.showWarningMessage(
      `tether: ${name} changed on disk where it has unsaved changes (${params.overlaps ?? "?"}); nothing was merged. ` +
        "Saving the document replaces the file.",
      compare,
      load,
      keep,
    );
    if (choice === compare) {
      const onDisk = doc.uri.with({ scheme: ON_DISK_SCHEME });
      await vscode.commands.executeCommand("vscode.diff", onDisk, doc.uri, `${name} (on disk) ↔ ${name} (unsaved)`);
    } else if (choice === load) {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand("workbench.action.files.revert");
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
