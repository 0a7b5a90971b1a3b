//! `tether call` from a shell: results on stdout, and how each kind of failure exits.

use crate::lsp_support::WineSafe as _;
use std::process::Command;

fn call(root: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
        .arg("call")
        .arg("--root")
        .arg(root)
        .args(args)
        .wine_safe_output()
        .expect("run tether call");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn results_tool_failures_and_unknown_tools_exit_differently() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "alpha\n").expect("write");

    let (code, out, _) = call(dir.path(), &["read_file", r#"{"path": "a.txt"}"#]);
    assert_eq!((code, out.contains("alpha")), (Some(0), true), "{out}");

    // A tool failure in the standard profile: its error object, exit 1.
    let (code, out, _) = call(dir.path(), &["read_file", r#"{"path": "missing.txt"}"#]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["error"], "not_found", "{out}");

    // A failure a contract answers as a JSON-RPC error: that error object, exit 1.
    let (code, out, _) = call(dir.path(), &["--profile", "explorer", "read_file", r#"{"path": "missing.ts"}"#]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!((v["code"].as_i64(), v["data"]["error_code"].as_str()), (Some(-32001), Some("file_not_found")), "{out}");

    // No such tool: exit 2 and the profile's tool names on stderr.
    let (code, out, err) = call(dir.path(), &["no_such_tool", "{}"]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert!(err.contains("unknown tool: no_such_tool") && err.contains("read_file"), "{err}");
}

#[test]
fn a_profile_that_starts_with_set_workspace_gets_it_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("proj")).expect("mkdir");
    std::fs::write(dir.path().join("proj/a.txt"), "alpha\nbeta\n").expect("write");
    let (code, out, _) = call(dir.path(), &["--profile", "toolkit", "read_files", r#"{"path": "a.txt"}"#]);
    assert_eq!(code, Some(1), "refused until a workspace is chosen: {out}");
    let (code, out, _) =
        call(dir.path(), &["--profile", "toolkit", "--workspace", "proj", "read_files", r#"{"path": "a.txt"}"#]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("1 | alpha") && out.contains("2 | beta"), "{out}");
    let (code, _, err) = call(dir.path(), &["--workspace", "proj", "read_file", r#"{"path": "proj/a.txt"}"#]);
    assert_eq!(code, Some(2), "the standard profile has no set_workspace");
    assert!(err.contains("--workspace"), "{err}");
}

#[test]
fn without_an_editor_the_knowledge_tools_are_not_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
        .args(["tools", "--json", "--root"])
        .arg(dir.path())
        .wine_safe_output()
        .expect("tether tools");
    assert!(out.status.success(), "{out:?}");
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> = tools.as_array().expect("list").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"edit_file"), "{names:?}");
    for knowledge in ["diagnostics", "editor_context", "symbols", "definition", "references", "hover", "rename_symbol"]
    {
        assert!(!names.contains(&knowledge), "{knowledge} listed without an editor: {names:?}");
    }
    let (code, _, err) = call(dir.path(), &["hover", r#"{"path": "a", "line": 1, "column": 1}"#]);
    assert_eq!(code, Some(2), "an unknown tool without an editor: {err}");
}

/// `tether setup` from a shell: each assistant's file gets tether's entry once, with this binary
/// as the command, and `--remove` takes it back; a scope the assistant does not read fails.
#[test]
fn setup_registers_tether_once_and_removes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (project, home) = (dir.path().join("proj"), dir.path().join("home"));
    std::fs::create_dir_all(&project).expect("mkdir");
    let setup = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tether"))
            .env("HOME", &home)
            .env("USERPROFILE", &home)
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .current_dir(&project)
            .arg("setup")
            .args(args)
            .wine_safe_output()
            .expect("run tether setup");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = setup(&["claude-code"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(".mcp.json: added the MCP server `tether`"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".mcp.json")).expect("written")).expect("json");
    let entry = &v["mcpServers"]["tether"];
    assert_eq!((entry["type"].as_str(), entry["args"].clone()), (Some("stdio"), serde_json::json!(["mcp"])), "{v}");
    let command = entry["command"].as_str().expect("a command");
    assert!(command == "tether" || std::path::Path::new(command).is_absolute(), "{command}");

    assert!(out.contains("settings.json: added tether's hooks"), "{out}");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".claude/settings.json")).expect("hooks written"))
            .expect("json");
    let hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str().expect("a hook");
    assert!(hook.ends_with(" hook claude-code"), "{hook}");

    let (code, out, _) = setup(&["claude-code"]);
    assert_eq!((code, out.matches("unchanged").count()), (Some(0), 2), "{out}");
    let (code, out, _) = setup(&["codex"]);
    assert_eq!(code, Some(0));
    assert!(out.contains(&format!(".codex{}config.toml: added", std::path::MAIN_SEPARATOR)), "{out}");
    assert!(std::fs::read_to_string(home.join(".codex/config.toml"))
        .expect("written")
        .contains("[mcp_servers.tether]"));
    let (code, _, err) = setup(&["codex", "--scope", "project"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("use `--scope user`"), "{err}");
    let (code, out, _) = setup(&["claude-code", "--remove"]);
    assert_eq!((code, out.contains("removed the MCP server `tether`")), (Some(0), true), "{out}");
}
