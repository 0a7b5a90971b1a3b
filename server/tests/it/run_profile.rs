//! The `run` tool as the `standard` profile serves it: listed and callable normally, hidden and
//! refused in read-only mode, and reachable from `tether call`.

use std::process::Command;
use std::sync::Arc;

use crate::lsp_support::WineSafe as _;
use serde_json::json;
use tether::config::{Cancel, Config};
use tether::profiles::{CallError, Profile, Standard};
use tether::sink::DiskSink;
use tether::tools::Context;
use tether::vfs::Vfs;
use tether::workspace::Workspace;

#[test]
fn served_unless_read_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vfs = Vfs::disk(Arc::new(Workspace::new([dir.path()]).expect("workspace")));
    for read_only in [false, true] {
        let config = Config { read_only, ..Config::default() };
        let listed = Standard.tools(&config).iter().any(|t| t.name == "run");
        assert_eq!(listed, !read_only, "read_only={read_only}");
        let ctx = Context { vfs: &vfs, config: &config, cancel: &Cancel::default(), editor: None };
        let result = Standard.call(&ctx, &DiskSink, "run", json!({"command": "echo hi > marker"}));
        match result {
            Ok(r) => {
                assert!(!read_only && !r.is_error, "{r:?}");
                assert_eq!(r.structured.expect("structured")["exit_code"], 0);
            }
            Err(e) => assert!(read_only && e == CallError::UnknownTool("run".into()), "{e}"),
        }
        assert_eq!(dir.path().join("marker").exists(), !read_only, "read_only={read_only}");
        let _ = std::fs::remove_file(dir.path().join("marker"));
    }
}

#[test]
fn tether_call_runs_a_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The same in POSIX sh and in cmd.exe, whose lines end in CRLF.
    let (command, eol) = if cfg!(windows) {
        ("echo out& echo err>&2& exit 4", "\r\n")
    } else {
        ("echo out; echo err >&2; exit 4", "\n")
    };
    let args = json!({ "command": command }).to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
        .args(["call", "run", &args, "--root"])
        .arg(dir.path())
        .wine_safe_output()
        .expect("tether call");
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON result");
    let (stdout, stderr) = (format!("out{eol}"), format!("err{eol}"));
    assert_eq!((&v["exit_code"], &v["stdout"], &v["stderr"]), (&json!(4), &json!(stdout), &json!(stderr)), "{v}");
}
