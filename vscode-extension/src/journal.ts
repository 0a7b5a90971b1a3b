// The change journal in VS Code (issue 22): Show Assistant Changes lists what tether changed
// (`history`), shows a changeset as diffs of read-only `tether-journal:` documents, and Undo
// Assistant Change reverses one (`undo`), all through `tether.callTool` like every other tool.
// The server does the work: an undo arrives as one workspace edit, one Ctrl+Z in the editor.

import * as path from "node:path";

import * as vscode from "vscode";

import {
  type Changeset,
  canUndo,
  changesetItem,
  type ChangesetItem,
  fileDiffs,
  filesWithoutDiff,
  parseDetail,
  parseHistory,
  relativeTime,
  undoOutcome,
  type UndoOutcome,
} from "./changesets";
import type { TetherServer } from "./server";

/** The scheme of the read-only texts before and after a change. */
export const JOURNAL_SCHEME = "tether-journal";

/** How many changesets Show Assistant Changes lists. */
const HISTORY_LIMIT = 50;

/** How many changesets' texts are kept for their open diff editors. */
const KEPT_CHANGESETS = 20;

/** What Show Assistant Changes answers when driven from `executeCommand`. */
export interface ShowChangesOutcome {
  /** The changesets listed, newest first. */
  readonly changesets: readonly Changeset[];
  /** The changeset picked, whose diffs were opened, with the texts the server gave. */
  readonly opened?: Changeset;
  /** What undoing the changeset whose button was pressed answered. */
  readonly undone?: UndoOutcome;
}

/** The texts before and after each change shown, as read-only documents. */
class JournalDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  /** The changesets whose texts are kept, oldest first. */
  private readonly kept: string[] = [];

  /**
   * The URI of one side of a file of a changeset: `tether-journal://12/src/a.py?before`. The
   * path is the file's, so that the editor picks its language from its name and the multi-diff
   * editor shows a rename only where the paths differ.
   */
  uri(id: string, side: "before" | "after", file: string): vscode.Uri {
    return vscode.Uri.from({ scheme: JOURNAL_SCHEME, authority: id, path: `/${file.replace(/^[/\\]+/, "")}`, query: side });
  }

  /** Keeps a changeset's texts; the oldest changeset's go when too many are kept. */
  keep(id: string, texts: [vscode.Uri, string][]): void {
    if (!this.kept.includes(id)) {
      this.kept.push(id);
    }
    for (const [uri, text] of texts) {
      this.texts.set(uri.toString(), text);
    }
    while (this.kept.length > KEPT_CHANGESETS) {
      const gone = `${JOURNAL_SCHEME}://${this.kept.shift() ?? ""}/`;
      for (const key of [...this.texts.keys()]) {
        if (key.startsWith(gone)) {
          this.texts.delete(key);
        }
      }
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}

/** Item of the Show Assistant Changes Quick Pick. */
type PickItem = vscode.QuickPickItem & { readonly changeset: Changeset };

const UNDO_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("discard"), tooltip: "Undo this change" };

/** Registers `tether.showChanges` and `tether.undoChange`. */
export function registerJournal(
  server: TetherServer,
  guard: <A extends unknown[], R>(f: (...args: A) => Promise<R>) => (...args: A) => Promise<R | undefined>,
): vscode.Disposable {
  const documents = new JournalDocuments();

  const history = async (): Promise<{ changesets: readonly Changeset[]; more: boolean }> =>
    parseHistory(await server.callTool({ tool: "history", arguments: { limit: HISTORY_LIMIT } }));

  /** The file a journal path names, for the multi-diff editor's rows. */
  const fileUri = (file: string): vscode.Uri => {
    const root = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file")?.uri.fsPath ?? "";
    return vscode.Uri.file(path.isAbsolute(file) ? file : path.join(root, file));
  };

  /** Opens a changeset's diffs: one diff editor for one file, the multi-diff editor for several. */
  const openChangeset = async (id: string): Promise<Changeset> => {
    const { changeset } = parseDetail(await server.callTool({ tool: "history", arguments: { id, texts: true } }));
    const diffs = fileDiffs(changeset).map((d) => ({
      ...d,
      beforeUri: documents.uri(changeset.id, "before", d.beforePath),
      afterUri: documents.uri(changeset.id, "after", d.path),
    }));
    documents.keep(
      changeset.id,
      diffs.flatMap((d): [vscode.Uri, string][] => [
        [d.beforeUri, d.before ?? ""],
        [d.afterUri, d.after ?? ""],
      ]),
    );
    const first = diffs[0];
    if (diffs.length === 1 && first !== undefined) {
      // A created or deleted file is a diff with an empty side.
      await vscode.commands.executeCommand("vscode.diff", first.beforeUri, first.afterUri, first.title, { preview: false });
    } else if (diffs.length > 1) {
      // `vscode.changes` (the multi-diff editor) is in every VS Code that engines.vscode admits;
      // an absent side marks the file added or deleted there.
      await vscode.commands.executeCommand(
        "vscode.changes",
        `#${changeset.id} ${changeset.tool}: ${changeset.summary} (${changeset.client})`,
        diffs.map((d) => [fileUri(d.path), d.before === null ? undefined : d.beforeUri, d.after === null ? undefined : d.afterUri]),
      );
    }
    void offerUndo(changeset, diffs.length === 0);
    return changeset;
  };

  /** The notification after a changeset's diffs open: what it was, and its Undo button. */
  const offerUndo = async (changeset: Changeset, noDiff: boolean): Promise<void> => {
    const without = filesWithoutDiff(changeset);
    const message =
      `tether: #${changeset.id} ${changeset.tool} by ${changeset.client}, ${relativeTime(changeset.time, Date.now())}: ` +
      changeset.summary +
      (noDiff ? " (nothing to compare)" : without.length > 0 ? ` (no diff for ${without.join(", ")})` : "") +
      (changeset.undone_by !== undefined ? `; undone by #${changeset.undone_by}` : "");
    const choice = canUndo(changeset)
      ? await vscode.window.showInformationMessage(message, "Undo this change")
      : await vscode.window.showInformationMessage(message);
    if (choice === "Undo this change") {
      await guard(undoChange)(changeset.id);
    }
  };

  const showChanges = async (): Promise<ShowChangesOutcome> => {
    const { changesets, more } = await history();
    if (changesets.length === 0) {
      void vscode.window.showInformationMessage("tether: no changes recorded for this workspace yet.");
      return { changesets };
    }
    const now = Date.now();
    const items = changesets.map((c): PickItem => {
      const item: ChangesetItem = changesetItem(c, now);
      return {
        label: item.label,
        description: item.description,
        detail: item.detail,
        changeset: c,
        ...(canUndo(c) ? { buttons: [UNDO_BUTTON] } : {}),
      };
    });
    const quickPick = vscode.window.createQuickPick<PickItem>();
    quickPick.title = more ? `tether: the newest ${changesets.length} changes` : "tether: changes, newest first";
    quickPick.placeholder = "Pick a change to see its diff";
    quickPick.matchOnDescription = true;
    quickPick.matchOnDetail = true;
    quickPick.items = items;
    const choice = await new Promise<{ open: Changeset } | { undo: Changeset } | undefined>((resolve) => {
      quickPick.onDidAccept(() => {
        const picked = quickPick.selectedItems[0];
        resolve(picked === undefined ? undefined : { open: picked.changeset });
        quickPick.hide();
      });
      quickPick.onDidTriggerItemButton((e) => {
        resolve({ undo: e.item.changeset });
        quickPick.hide();
      });
      quickPick.onDidHide(() => {
        resolve(undefined);
      });
      quickPick.show();
    });
    quickPick.dispose();
    if (choice === undefined) {
      return { changesets };
    }
    if ("undo" in choice) {
      return { changesets, undone: await undoChange(choice.undo.id) };
    }
    return { changesets, opened: await openChangeset(choice.open.id) };
  };

  /**
   * Undoes a changeset (asks which, newest first, without an id) and says what became of it.
   * Anything but a string or a number (what a menu passes) counts as no id.
   */
  const undoChange = async (given?: unknown): Promise<UndoOutcome | undefined> => {
    let id = typeof given === "string" || typeof given === "number" ? String(given) : undefined;
    if (id === undefined) {
      const { changesets } = await history();
      const now = Date.now();
      const pick = await vscode.window.showQuickPick(
        changesets.filter(canUndo).map((c) => ({ ...changesetItem(c, now), changeset: c })),
        { title: "tether: Undo Assistant Change", placeHolder: "Pick the change to undo", matchOnDescription: true, matchOnDetail: true },
      );
      if (pick === undefined) {
        return undefined;
      }
      id = pick.changeset.id;
    }
    const outcome = undoOutcome(await server.callTool({ tool: "undo", arguments: { id } }));
    server.log.appendLine(`[tether] undo #${id}: ${outcome.ok ? "" : `${outcome.kind ?? "error"}: `}${outcome.text}`);
    if (outcome.ok) {
      void vscode.window.showInformationMessage(`tether: ${outcome.text}`);
    } else {
      void vscode.window.showErrorMessage(`tether: cannot undo #${id}: ${outcome.text}`);
    }
    return outcome;
  };

  return vscode.Disposable.from(
    vscode.workspace.registerTextDocumentContentProvider(JOURNAL_SCHEME, documents),
    vscode.commands.registerCommand("tether.showChanges", guard(showChanges)),
    vscode.commands.registerCommand("tether.undoChange", guard(undoChange)),
  );
}
