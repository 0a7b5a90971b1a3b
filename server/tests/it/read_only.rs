//! Read-only mode, from the outside: the tools that change files are neither listed nor callable,
//! and a plan that reaches the sink anyway is refused.

use std::fs;
use std::sync::Arc;

use serde_json::{json, Value};
use tether::config::{Cancel, Config};
use tether::profiles::{CallError, Profile, Standard};
use tether::sink::{self, DiskSink};
use tether::tools::{self, Context, Output};
use tether::vfs::Vfs;
use tether::workspace::Workspace;
use tether::ErrorKind;

/// Every tool that changes files, with arguments that would succeed, and its promised effects
/// (destructive, idempotent).
fn write_calls() -> Vec<(&'static str, Value, bool, bool)> {
    vec![
        ("write_file", json!({"path": "a.txt", "content": "changed\n"}), true, true),
        ("append", json!({"path": "a.txt", "content": "more"}), false, false),
        ("insert", json!({"path": "a.txt", "line": 1, "content": "first"}), false, false),
        ("move", json!({"source": "a.txt", "destination": "b.txt"}), true, false),
        ("delete", json!({"path": "a.txt"}), true, true),
        ("mkdir", json!({"path": "new_dir"}), false, true),
    ]
}

fn workspace() -> (tempfile::TempDir, Vfs) {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("a.txt"), "original\n").expect("write");
    let ws = Workspace::new([dir.path()]).expect("workspace");
    (dir, Vfs::disk(Arc::new(ws)))
}

#[test]
fn write_tools_are_hidden_and_uncallable_when_read_only() {
    let (dir, vfs) = workspace();
    let read_only = Config { read_only: true, ..Config::default() };
    let listed: Vec<_> = Standard.tools(&read_only).into_iter().map(|t| t.name).collect();
    let all: Vec<_> = Standard.tools(&Config::default()).into_iter().map(|t| t.name).collect();
    let ctx = Context { vfs: &vfs, config: &read_only, cancel: &Cancel::default(), editor: None };
    for (name, args, _, _) in write_calls() {
        assert!(all.contains(&name), "{name} is listed when writable");
        assert!(!listed.contains(&name), "{name} is listed when read-only");
        let got = Standard.call(&ctx, &DiskSink, name, args);
        assert_eq!(got, Err(CallError::UnknownTool(name.to_owned())), "{name}");
    }
    // Every tool still listed promises to change nothing.
    assert!(Standard.tools(&read_only).iter().all(|t| t.effects.read_only));
    assert_eq!(fs::read(dir.path().join("a.txt")).expect("read"), b"original\n");
    assert!(!dir.path().join("new_dir").exists());
}

#[test]
fn sink_refuses_plans_when_read_only_however_they_arrive() {
    let read_only = Config { read_only: true, ..Config::default() };
    for (name, args, _, _) in write_calls() {
        let (dir, vfs) = workspace();
        // Plan with a writable configuration, then hand the plan to the sink of a read-only run.
        let writable = Config::default();
        let tool = tools::find(name).expect("registered");
        let out = (tool.run)(&Context { vfs: &vfs, config: &writable, cancel: &Cancel::default(), editor: None }, args)
            .expect("planned");
        let Output::Change { plan, .. } = out else { panic!("{name} returned no change") };
        let err = sink::apply(&DiskSink, &read_only, &vfs, &plan).expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::ReadOnly, "{name}: {err}");
        assert_eq!(fs::read(dir.path().join("a.txt")).expect("read"), b"original\n", "{name}");
        assert_eq!(fs::read_dir(dir.path()).expect("list").count(), 1, "{name}: something was created");
    }
}

#[test]
fn write_tools_annotate_their_effects_truthfully() {
    let listed = Standard.tools(&Config::default());
    for (name, _, destructive, idempotent) in write_calls() {
        let info = listed.iter().find(|t| t.name == name).expect("listed");
        let annotations = &info.to_json()["annotations"];
        assert_eq!(annotations["readOnlyHint"], false, "{name}");
        assert_eq!(annotations["destructiveHint"], destructive, "{name}");
        assert_eq!(annotations["idempotentHint"], idempotent, "{name}");
        assert_eq!(annotations["openWorldHint"], false, "{name}");
    }
}
