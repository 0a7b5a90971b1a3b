//! A change that another writer overlapped between the call's read and its write: the call runs
//! again on the newer text (`sink::on_fresh_text`), and when its change no longer applies there,
//! the answer is a `conflict` that says what changed and who changed it. A change the other
//! writer did not overlap lands. The other writer acts inside the call's first write, so every
//! case is exact, with no timing involved.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tether::config::{Cancel, Config, JournalSettings};
use tether::edit::EditPlan;
use tether::journal::{CallInfo, Journal, Recording};
use tether::profiles::{self, CallResult, Profile, Standard};
use tether::sink::{Applied, DiskSink, Sink};
use tether::tools::Context;
use tether::vfs::Vfs;
use tether::workspace::Workspace;

const NOTES: &str = "alpha\nbeta\ngamma\ndelta\n";

/// A sink that lets another writer act once, just before the call's first write.
struct Interloper<'a> {
    once: AtomicBool,
    other: &'a (dyn Fn() + Sync),
}

impl Sink for Interloper<'_> {
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> tether::Result<Applied> {
        if !self.once.swap(true, Ordering::SeqCst) {
            (self.other)();
        }
        DiskSink.apply(vfs, plan)
    }
}

struct Project {
    dir: tempfile::TempDir,
    _state: tempfile::TempDir,
    vfs: Vfs,
    config: Config,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = tempfile::tempdir().expect("state dir");
        fs::write(dir.path().join("notes.txt"), NOTES).expect("write");
        let ws = Workspace::new([dir.path()]).expect("workspace");
        let journal = JournalSettings { dir: state.path().to_owned(), max_bytes: JournalSettings::DEFAULT_MAX_BYTES };
        Project {
            dir,
            _state: state,
            vfs: Vfs::disk(Arc::new(ws)),
            config: Config { journal: Some(journal), ..Config::default() },
        }
    }

    fn journal(&self) -> Journal {
        Journal::open(self.config.journal.as_ref().expect("journal on"), self.vfs.workspace().roots())
    }

    /// A call of `tool` by `client` straight through the journal to disk.
    fn call(&self, profile: &dyn Profile, client: &str, tool: &str, args: &Value) -> CallResult {
        let ctx = Context { vfs: &self.vfs, config: &self.config, cancel: &Cancel::default(), editor: None };
        let info = CallInfo::new(tool, profile.name(), client, args);
        profile.call(&ctx, &Recording::new(&DiskSink, self.journal(), info), tool, args.clone()).expect("a known tool")
    }

    /// A call the way `tether mcp` and `tether call` run one (`profiles::call_on_fresh_text`),
    /// with `other` acting inside its first write.
    fn raced(&self, profile: &dyn Profile, tool: &str, args: &Value, other: &(dyn Fn() + Sync)) -> CallResult {
        let ctx = Context { vfs: &self.vfs, config: &self.config, cancel: &Cancel::default(), editor: None };
        let info = CallInfo::new(tool, profile.name(), "assistant-a 1.0", args);
        let interloper = Interloper { once: AtomicBool::new(false), other };
        let journal = self.config.journal.as_ref();
        profiles::call_on_fresh_text(profile, &ctx, &interloper, journal, &info, tool, args).expect("a known tool")
    }

    fn notes(&self) -> String {
        fs::read_to_string(self.dir.path().join("notes.txt")).expect("read")
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn edit(old: &str, new: &str) -> Value {
    json!({"path": "notes.txt", "old_string": old, "new_string": new})
}

#[test]
fn a_change_another_assistant_overlapped_is_a_conflict_naming_that_change() {
    let p = Project::new();
    let other = || {
        let r = p.call(&Standard, "assistant-b 2.0", "edit_file", &edit("beta", "BETA from b"));
        assert!(!r.is_error, "{}", r.text);
    };
    let result = p.raced(&Standard, "edit_file", &edit("beta", "BETA from a"), &other);

    assert!(result.is_error, "{}", result.text);
    let v: Value = serde_json::from_str(&result.text).expect("tether's error shape");
    assert_eq!(v["error"], "conflict", "{v}");
    let message = v["message"].as_str().expect("message");
    let id = p.journal().list().expect("list")[0].id.clone();
    let named = format!(
        "notes.txt changed after this call read it: changeset {id} (edit_file by assistant-b 2.0) at notes.txt line 2"
    );
    assert!(message.starts_with(&named), "{message}");
    assert!(message.contains("no longer applies to the new text (no_match:"), "{message}");
    assert_eq!(p.notes(), "alpha\nBETA from b\ngamma\ndelta\n", "the other change stands, nothing else");
    assert_eq!(p.journal().list().expect("list").len(), 1, "the refused change recorded nothing");
}

#[test]
fn a_change_nobody_overlapped_lands_on_the_newer_text() {
    let p = Project::new();
    let other = || assert!(!p.call(&Standard, "assistant-b 2.0", "edit_file", &edit("delta", "DELTA")).is_error);
    let result = p.raced(&Standard, "edit_file", &edit("beta", "BETA"), &other);

    assert!(!result.is_error, "{}", result.text);
    assert_eq!(p.notes(), "alpha\nBETA\ngamma\nDELTA\n");
    let clients: Vec<String> = p.journal().list().expect("list").into_iter().map(|c| c.client).collect();
    assert_eq!(clients, ["assistant-a 1.0", "assistant-b 2.0"], "newest first");
}

#[test]
fn an_overlap_by_a_program_other_than_tether_says_so() {
    let p = Project::new();
    let other =
        || fs::write(p.path().join("notes.txt"), "alpha\nbeta changed in an editor\ngamma\ndelta\n").expect("write");
    let result = p.raced(&Standard, "edit_file", &edit("beta\ngamma", "B\nG"), &other);

    let v: Value = serde_json::from_str(&result.text).expect("tether's error shape");
    assert_eq!(v["error"], "conflict", "{v}");
    let message = v["message"].as_str().expect("message");
    assert!(
        message.starts_with("notes.txt changed after this call read it, and no tether tool changed it meanwhile"),
        "{message}"
    );
    assert_eq!(p.notes(), "alpha\nbeta changed in an editor\ngamma\ndelta\n");
}

#[test]
fn a_contract_that_names_conflicts_as_tether_does_answers_conflict() {
    let p = Project::new();
    let guarded = profiles::by_name("guarded").expect("guarded");
    let patch =
        json!({"path": "notes.txt", "patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -2,2 +2,2 @@\n beta\n-gamma\n+G\n"});
    let other = || assert!(!p.call(&Standard, "assistant-b 2.0", "edit_file", &edit("gamma", "GAMMA")).is_error);
    let result = p.raced(guarded.as_ref(), "apply_patch", &patch, &other);

    let v: Value = serde_json::from_str(&result.text).expect("the contract's error shape");
    assert_eq!(v["error"], "conflict", "{v}");
    let message = v["message"].as_str().expect("message");
    assert!(message.contains("(edit_file by assistant-b 2.0) at notes.txt line 3"), "{message}");
    assert!(message.contains("(PatchFailed: notes.txt: hunk 1"), "the contract's own words follow: {message}");
    assert_eq!(p.notes(), "alpha\nbeta\nGAMMA\ndelta\n");
}

#[test]
fn a_contract_with_words_of_its_own_keeps_them_and_gains_the_overlap() {
    let filesystem = profiles::by_name("filesystem").expect("filesystem");
    let own = filesystem.error_result(&tether::Error::new(tether::ErrorKind::NoMatch, "notes.txt: oldText not found"));
    let mut result = Ok(own.clone());
    profiles::as_overlap(&mut result, filesystem.as_ref(), "notes.txt changed after this call read it: changeset 4");
    let result = result.expect("a result");
    assert_eq!(result.items.len(), 2, "{}", result.text);
    assert_eq!(result.items[0], profiles::Item::Text(own.text), "the contract's own words come first");
    assert_eq!(
        result.items[1],
        profiles::Item::Text(
            "conflict: notes.txt changed after this call read it: changeset 4; this call's change no longer applies \
             to the new text"
                .to_owned()
        )
    );
}
