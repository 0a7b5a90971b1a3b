//! The `run` tool end to end on a real workspace: exit codes, output, working directories, time
//! limits, process groups, output caps and refusals.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether::config::{Cancel, Config};
use tether::tools::{run, Context, Effects, Output};
use tether::vfs::Vfs;
use tether::workspace::Workspace;
use tether::ErrorKind;

/// A workspace root (with `sub/`, `file.txt`, and symlinks `link_in` to `sub` and `link_out`
/// to a directory outside), a second root, and that outside directory.
struct Ws {
    root: tempfile::TempDir,
    second: tempfile::TempDir,
    outside: tempfile::TempDir,
    vfs: Vfs,
    config: Config,
}

fn ws() -> Ws {
    let root = tempfile::tempdir().expect("tempdir");
    let second = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    fs::create_dir(root.path().join("sub")).expect("mkdir");
    fs::write(root.path().join("file.txt"), "x\n").expect("write");
    symlink(root.path().join("sub"), root.path().join("link_in")).expect("symlink");
    symlink(outside.path(), root.path().join("link_out")).expect("symlink");
    let workspace = Workspace::new([root.path(), second.path()]).expect("workspace");
    Ws { vfs: Vfs::disk(Arc::new(workspace)), root, second, outside, config: Config::default() }
}

impl Ws {
    /// The real (canonical) path of the first root.
    fn root(&self) -> PathBuf {
        self.vfs.workspace().roots()[0].clone()
    }

    fn call(&self, args: Value) -> Result<Value, (ErrorKind, String)> {
        let ctx = Context { vfs: &self.vfs, config: &self.config, cancel: &Cancel::default(), editor: None };
        match (run::TOOL.run)(&ctx, args) {
            Ok(Output::Json(v)) => Ok(v),
            Ok(other) => panic!("expected JSON, got {other:?}"),
            Err(e) => Err((e.kind(), e.message().to_owned())),
        }
    }

    fn ok(&self, args: Value) -> Value {
        self.call(args.clone()).unwrap_or_else(|e| panic!("{args}: {e:?}"))
    }

    fn err(&self, args: Value) -> ErrorKind {
        match self.call(args.clone()) {
            Ok(v) => panic!("{args} succeeded: {v}"),
            Err((kind, _)) => kind,
        }
    }
}

/// Whether process `pid` has exited (a zombie waiting for its parent counts as exited).
fn exited(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rfind(')').is_some_and(|i| stat[i + 1..].trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Polls `done` until it holds or `within` passes; returns whether it held.
fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn read_pid(path: &Path) -> i32 {
    fs::read_to_string(path).expect("pid file").trim().parse().expect("pid")
}

#[test]
fn reports_exit_codes_and_output() {
    let w = ws();
    let table = [
        ("echo out; echo err >&2", json!(0), "out\n", "err\n", Value::Null),
        ("exit 3", json!(3), "", "", Value::Null),
        ("false", json!(1), "", "", Value::Null),
        ("printf 'no newline'", json!(0), "no newline", "", Value::Null),
        ("echo $((1 + 2)) | tr 3 x", json!(0), "x\n", "", Value::Null),
        ("printf 'bad \\377 byte'", json!(0), "bad \u{fffd} byte", "", Value::Null),
        ("echo gone; kill -9 $$", Value::Null, "gone\n", "", json!("SIGKILL")),
        ("kill -SEGV $$", Value::Null, "", "", json!("SIGSEGV")),
        // stdin is closed: `cat` reads end of file at once instead of waiting for input.
        ("cat; echo after", json!(0), "after\n", "", Value::Null),
    ];
    for (command, code, stdout, stderr, signal) in table {
        let v = w.ok(json!({"command": command, "timeout_ms": 10_000}));
        assert_eq!(v["exit_code"], code, "{command}: {v}");
        assert_eq!(v["stdout"], stdout, "{command}: {v}");
        assert_eq!(v["stderr"], stderr, "{command}: {v}");
        assert_eq!(v["signal"], signal, "{command}: {v}");
        assert_eq!(
            (&v["timed_out"], &v["background_killed"], &v["stdout_truncated"], &v["stdout_spill"]),
            (&json!(false), &json!(false), &json!(false), &Value::Null),
            "{command}: {v}"
        );
        assert!(v["duration_ms"].as_u64().is_some_and(|ms| ms < 10_000), "{command}: {v}");
    }
}

#[test]
fn inherits_the_environment() {
    let w = ws();
    let v = w.ok(json!({"command": "printf %s \"$PATH\""}));
    assert_eq!(v["stdout"], std::env::var("PATH").unwrap_or_default());
}

#[test]
fn runs_in_a_directory_inside_the_roots() {
    let w = ws();
    let root = w.root();
    let second = w.vfs.workspace().roots()[1].clone();
    let table = [
        (json!(null), root.clone()),
        (json!("."), root.clone()),
        (json!("sub"), root.join("sub")),
        (json!("sub/../sub"), root.join("sub")),
        (json!("link_in"), root.join("sub")),
        (json!(root.join("sub")), root.join("sub")),
        (json!(w.root.path().join("sub")), root.join("sub")),
        (json!(w.second.path()), second),
    ];
    for (cwd, want) in table {
        let mut args = json!({"command": "pwd -P; printf %s \"$PWD\""});
        if !cwd.is_null() {
            args["cwd"] = cwd.clone();
        }
        let v = w.ok(args);
        let want = want.display().to_string();
        assert_eq!(v["stdout"], format!("{want}\n{want}"), "{cwd}: {v}");
    }
}

#[test]
fn refuses_directories_outside_and_runs_nothing() {
    let mut w = ws();
    let outside = w.outside.path().to_path_buf();
    let table = [
        (json!({"cwd": "missing"}), ErrorKind::NotFound),
        (json!({"cwd": "file.txt"}), ErrorKind::NotADirectory),
        (json!({"cwd": ".."}), ErrorKind::PathEscape),
        (json!({"cwd": "link_out"}), ErrorKind::PathEscape),
        (json!({"cwd": "link_out/deeper"}), ErrorKind::PathEscape),
        (json!({"cwd": outside}), ErrorKind::PathEscape),
    ];
    // Read-only mode refuses the tool itself, wherever it would run.
    let read_only = [(json!({}), ErrorKind::ReadOnly), (json!({"cwd": "sub"}), ErrorKind::ReadOnly)];
    for (mut args, want) in table {
        args["command"] = json!("touch marker");
        assert_eq!(w.err(args.clone()), want, "{args}");
    }
    w.config.read_only = true;
    for (mut args, want) in read_only {
        args["command"] = json!("touch marker");
        assert_eq!(w.err(args.clone()), want, "{args}");
    }
    for dir in [w.root(), w.root().join("sub"), outside] {
        assert!(!dir.join("marker").exists(), "a refused command ran in {}", dir.display());
    }
    let (_, msg) = w.call(json!({"command": "true"})).expect_err("read-only");
    assert!(msg.contains("read-only"), "{msg}");
}

#[test]
fn validates_arguments() {
    let w = ws();
    let table = [
        (json!({}), "`command`"),
        (json!({"command": ""}), "`command`"),
        (json!({"command": "  \n"}), "`command`"),
        (json!({"command": 5}), "`command`"),
        (json!({"command": "a\u{0}b"}), "`command`"),
        (json!({"command": "true", "timeout_ms": 0}), "`timeout_ms`"),
        (json!({"command": "true", "timeout_ms": -5}), "`timeout_ms`"),
        (json!({"command": "true", "timeout_ms": 600_001}), "`timeout_ms`"),
        (json!({"command": "true", "timeout_ms": "fast"}), "`timeout_ms`"),
        (json!({"command": "true", "timeout_ms": 1.5}), "`timeout_ms`"),
        (json!({"command": "true", "cwd": 7}), "`cwd`"),
        (json!({"command": "true", "shell": "bash"}), "shell"),
        (json!(["true"]), "object"),
    ];
    for (args, named) in table {
        let (kind, msg) = w.call(args.clone()).expect_err("invalid");
        assert_eq!(kind, ErrorKind::InvalidInput, "{args}: {msg}");
        assert!(msg.contains(named), "{args}: {msg}");
    }
    // The bounds themselves are accepted.
    assert_eq!(w.ok(json!({"command": "true", "timeout_ms": 600_000}))["exit_code"], 0);
}

#[test]
fn timeout_kills_and_returns_partial_output() {
    let w = ws();
    let started = Instant::now();
    let v = w.ok(json!({"command": "echo started; echo warming >&2; sleep 30; echo never", "timeout_ms": 300}));
    assert!(started.elapsed() < Duration::from_secs(5), "{v}");
    assert_eq!(v["timed_out"], true, "{v}");
    assert_eq!((&v["stdout"], &v["stderr"]), (&json!("started\n"), &json!("warming\n")), "{v}");
    assert_eq!((&v["exit_code"], &v["signal"]), (&Value::Null, &json!("SIGTERM")), "{v}");
    assert!(v["duration_ms"].as_u64().is_some_and(|ms| ms >= 300), "{v}");
}

#[test]
fn killed_process_group_leaves_no_orphan() {
    let w = ws();
    let table = [
        // Killed at the timeout: the shell and its background child together.
        ("sleep 300 & echo $! > pid; sleep 300", true),
        // The shell exits; its background child still holds stdout.
        ("sleep 300 & echo $! > pid; echo done", false),
        // The shell exits; its background child holds no pipe at all.
        ("sleep 300 >/dev/null 2>&1 & echo $! > pid; echo done", false),
        // A grandchild in a subshell is in the group too.
        ("(sleep 300 & echo $! > pid; wait) & echo done", false),
    ];
    for (command, timed_out) in table {
        let _ = fs::remove_file(w.root().join("pid"));
        let started = Instant::now();
        let v = w.ok(json!({"command": command, "timeout_ms": 300}));
        assert_eq!(v["timed_out"], timed_out, "{command}: {v}");
        assert_eq!(v["background_killed"], !timed_out, "{command}: {v}");
        if !timed_out {
            assert_eq!((&v["exit_code"], &v["stdout"]), (&json!(0), &json!("done\n")), "{command}: {v}");
        }
        // SIGTERM was enough: the SIGKILL grace period was not waited for.
        assert!(started.elapsed() < Duration::from_millis(1500), "{command}: {v}");
        let pid = read_pid(&w.root().join("pid"));
        assert!(eventually(Duration::from_secs(2), || exited(pid)), "{command}: process {pid} outlived the call");
    }
}

#[test]
fn output_over_the_cap_spills_to_a_file() {
    let w = ws();
    let cap = tether::exec::DEFAULT_CAPTURE_BYTES;
    // From `sub`, the spill file still goes to the `.tether` folder of the root.
    let v = w.ok(json!({
        "command": "head -c 700000 /dev/zero | tr '\\0' a; echo err >&2",
        "cwd": "sub",
        "timeout_ms": 20_000,
    }));
    assert_eq!(
        (&v["exit_code"], &v["stdout_truncated"], &v["stdout_bytes"]),
        (&json!(0), &json!(true), &json!(700_000))
    );
    let stdout = v["stdout"].as_str().expect("stdout");
    assert_eq!(stdout.len(), cap);
    assert!(stdout.bytes().all(|b| b == b'a'));
    assert_eq!(
        (&v["stderr"], &v["stderr_truncated"], &v["stderr_spill"]),
        (&json!("err\n"), &json!(false), &Value::Null)
    );
    let spill = v["stdout_spill"].as_str().expect("spill path");
    assert!(spill.starts_with(".tether/run/") && spill.ends_with("-stdout.log"), "{spill}");
    let saved = fs::read(w.root().join(spill)).expect("spill file");
    assert_eq!(saved.len(), 700_000);
    assert!(saved.iter().all(|&b| b == b'a'));
    // The folder keeps itself out of version control.
    assert_eq!(fs::read_to_string(w.root().join(".tether/run/.gitignore")).expect("gitignore"), "*\n");

    // The cap never splits a character: `é` straddling it is left out whole.
    let v = w.ok(json!({
        "command": format!("head -c {} /dev/zero | tr '\\0' a; printf '\\303\\251 and more'", cap - 1),
        "timeout_ms": 20_000,
    }));
    let stdout = v["stdout"].as_str().expect("stdout");
    assert_eq!((stdout.len(), stdout.ends_with('a')), (cap - 1, true));

    // A spill from the second root lands in that root, and is named by its absolute path.
    let v = w.ok(json!({
        "command": "head -c 600000 /dev/zero >&2",
        "cwd": w.second.path(),
        "timeout_ms": 20_000,
    }));
    let spill = PathBuf::from(v["stderr_spill"].as_str().expect("spill path"));
    assert!(spill.starts_with(w.vfs.workspace().roots()[1].join(".tether/run")), "{}", spill.display());
    assert_eq!(fs::metadata(&spill).expect("spill").len(), 600_000);
}

#[test]
fn spill_folder_leading_outside_is_refused() {
    let w = ws();
    symlink(w.outside.path(), w.root().join(".tether")).expect("symlink");
    let (kind, msg) = w.call(json!({"command": "touch marker"})).expect_err("escape");
    assert_eq!(kind, ErrorKind::PathEscape, "{msg}");
    assert!(msg.contains(".tether/run"), "{msg}");
    assert!(!w.root().join("marker").exists());
}

#[test]
fn describes_itself() {
    let schema = (run::TOOL.schema)();
    assert_eq!(schema["required"], json!(["command"]));
    assert_eq!(schema["properties"]["timeout_ms"]["default"], 120_000);
    assert_eq!(schema["properties"]["timeout_ms"]["maximum"], 600_000);
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(run::TOOL.effects, Effects { read_only: false, destructive: true, idempotent: false, open_world: true });
}
