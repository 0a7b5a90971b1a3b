//! The `guarded` profile: a root-confined tool set for servers reachable over the network.
//!
//! Six tools: `apply_patch` (one unified diff onto one file, or a new file from a `/dev/null`
//! source), `append_file` (never creates), `write_file`, `create_directory`, `move_file`, and
//! `run_command`, which starts only allow-listed programs, directly, with no shell
//! ([`crate::tools::run_allowed`]). A failure is an error result whose text is the JSON object
//! `{"error": NAME, "message": "..."}` with the contract's names (`OutsideRoot`, `NotFound`,
//! `PatchFailed`, `ReadOnly`, `PermissionDenied`, `CommandNotAllowed`); failures the contract
//! does not name keep the `standard` profile's kind names.
//!
//! A regular file with more than one hard link is never changed, moved or replaced: another name
//! of it may be outside the root. Every plan passes [`sink::refuse_hard_links`] before the sink
//! (`OutsideRoot`, nothing written), where the other profiles write such files in place.
//!
//! In read-only mode every tool stays listed, as the contract documents, and the five that change
//! files answer `ReadOnly` without looking at their arguments. The client's MCP roots never
//! replace the server's: the root is the operator's choice.

use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::edit::EditPlan;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{signal_name, Captured, Outcome};
use crate::sink::{self, Sink};
use crate::tools::contract::append_as_given::{append_as_given, AppendAsGiven};
use crate::tools::contract::guarded_patch::{patch_one_file, OneFilePatch};
use crate::tools::run_allowed::{run_allowed, RunAllowedArgs};
use crate::tools::{self, parse_args, Context, Effects, Output};

/// The commands `run_command` may start unless the server is given its own list
/// (`--allow-command`). `mkdir` and `mv` are left out on purpose: `create_directory` and
/// `move_file` do that within the root.
pub const DEFAULT_COMMANDS: &[&str] = &[
    "grep", "sed", "awk", "find", "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "diff", "file", "stat",
    "ls", "du", "rg",
];

/// The `guarded` profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Guarded;

/// Effects of the tools that change files.
const WRITES: Effects = Effects { read_only: false, destructive: true, idempotent: false, open_world: false };

/// One tool of the profile; the profile dispatches on the name, so there is no entry point.
type Spec = super::Entry<()>;

const TOOLS: &[Spec] = &[
    Spec {
        name: "apply_patch",
        description: "Apply a unified diff to one existing file, or create a new file from a diff whose \
source is /dev/null. `path` names the file; the diff's own `---`/`+++` names are not used (a diff of \
bare `@@` hunks is fine). The diff may be wrapped in a markdown code fence (```diff ... ```). Every \
hunk must match the file's current text (context found exactly, or ignoring trailing and surrounding \
whitespace, at or near its stated line); if one does not, nothing is written and the error is \
PatchFailed. A `--- /dev/null` diff creates the file with its `+` lines and is refused if the file \
exists. Errors: OutsideRoot, NotFound (no such file for a non-/dev/null diff), PatchFailed (hunk \
mismatch or malformed diff), ReadOnly.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The target file: an absolute path inside the root, or relative to it."},
                    "patch": {"type": "string", "description": "A unified diff for this one file (`@@ -a,b +c,d @@` hunks; `--- /dev/null` to create it). A markdown code fence around it is ignored."},
                },
                "required": ["path", "patch"],
                "additionalProperties": false,
            })
        },
        effects: WRITES,
        quick: false,
        run: (),
    },
    Spec {
        name: "append_file",
        description: "Append content to the end of an existing file, exactly as given (no line break \
is added before or after it; line breaks in `content` take the file's own style). The file is never \
created: a missing file is NotFound (use write_file to create one). Errors: NotFound, OutsideRoot, \
ReadOnly.",
        schema: || {
            path_content_schema(
                "The file to append to: an absolute path inside the root, or relative to it.",
                "The text to add at the end of the file.",
            )
        },
        effects: Effects { read_only: false, destructive: false, idempotent: false, open_world: false },
        quick: true,
        run: (),
    },
    Spec {
        name: "write_file",
        description: "Write content to a file: create it if it does not exist, or replace its whole \
contents if it does. Missing parent directories are created. An existing file keeps its line-ending \
style (content written with \\n becomes \\r\\n in a CRLF file) and its BOM. Errors: OutsideRoot, \
PermissionDenied (the operating system refused), ReadOnly.",
        schema: || {
            path_content_schema(
                "The file to write: an absolute path inside the root, or relative to it.",
                "The complete new contents of the file.",
            )
        },
        effects: Effects { read_only: false, destructive: true, idempotent: true, open_world: false },
        quick: true,
        run: (),
    },
    Spec {
        name: "create_directory",
        description: "Create a directory and any missing parent directories. A directory that already \
exists is not an error. Errors: OutsideRoot, ReadOnly.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The directory to create: an absolute path inside the root, or relative to it."},
                },
                "required": ["path"],
                "additionalProperties": false,
            })
        },
        effects: Effects { read_only: false, destructive: false, idempotent: true, open_world: false },
        quick: true,
        run: (),
    },
    Spec {
        name: "move_file",
        description: "Move or rename a file (or directory) within the root. Both paths are checked \
before anything moves: if either is outside the root, nothing moves. Missing parent directories of \
the destination are created; an existing file at the destination is replaced, as a rename does, but \
an existing directory is never replaced. Errors: OutsideRoot (either path), NotFound (no source), \
ReadOnly.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "source": {"type": "string", "description": "What to move: an absolute path inside the root, or relative to it."},
                    "destination": {"type": "string", "description": "Its new full path (to move a.txt into dir/, give dir/a.txt)."},
                },
                "required": ["source", "destination"],
                "additionalProperties": false,
            })
        },
        effects: WRITES,
        quick: false,
        run: (),
    },
    Spec {
        name: "run_command",
        description: "Run an allowed command directly, with no shell: `;`, `|`, `>`, `$(...)`, `*` and \
quotes in `args` reach the program as plain text and do nothing. The working directory is the root. \
Allowed by default: grep, sed, awk, find, cat, head, tail, wc, sort, uniq, cut, tr, diff, file, stat, \
ls, du, rg (mkdir and mv are not: use create_directory and move_file). Arguments that look like paths \
(starting with / or containing ..) must resolve inside the root, and a name that exists must not be a \
symlink leading out of it; otherwise the error is OutsideRoot and nothing is started. Options that \
start other programs, change files or follow links out of the root (find -exec/-delete, sed -i, \
sort -o, rg --pre, grep -R, ...) are refused as CommandNotAllowed. The result is the text \
`exit_code: N`, `stdout:` and the output, `stderr:` and its output; a non-zero exit code is a normal \
result, not an error. A command is stopped after 120 s (exit code 128 + signal, with a note in \
stderr). Errors: CommandNotAllowed (the message lists the allowed commands), OutsideRoot.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The program's bare name; it must be an allowed command."},
                    "args": {"type": "array", "items": {"type": "string"}, "default": [], "description": "The arguments, passed as they are. Path-like arguments (starting with / or containing ..) are checked against the root before the program starts."},
                },
                "required": ["command"],
                "additionalProperties": false,
            })
        },
        effects: Effects { read_only: true, destructive: false, idempotent: false, open_world: false },
        quick: false,
        run: (),
    },
];

fn path_content_schema(path: &str, content: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": path},
            "content": {"type": "string", "description": content},
        },
        "required": ["path", "content"],
        "additionalProperties": false,
    })
}

impl Profile for Guarded {
    fn name(&self) -> &'static str {
        "guarded"
    }

    /// Every tool, in read-only mode too: the contract keeps the changing ones listed, and
    /// they answer `ReadOnly`.
    fn tools(&self, _config: &Config) -> Vec<ToolInfo> {
        TOOLS.iter().map(super::Entry::info).collect()
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let spec = TOOLS.iter().find(|t| t.name == name).ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
        if ctx.config.read_only && !spec.effects.read_only {
            let e = Error::new(
                ErrorKind::ReadOnly,
                format!("the server was started with --read-only; {name} changes files and is not available"),
            );
            return Ok(error_result(&e));
        }
        let result = match name {
            "apply_patch" => parse_args(args).and_then(|a| apply_patch(ctx, a)),
            "append_file" => parse_args(args).and_then(|a| append_file(ctx, a)),
            "write_file" => core(ctx, "write_file", args),
            "create_directory" => core(ctx, "mkdir", args),
            "move_file" => move_args(args).and_then(|a| core(ctx, "move", a)),
            "run_command" => {
                let allowed = allowed_commands(ctx.config);
                return Ok(match parse_args(args).and_then(|a: RunAllowedArgs| run_allowed(ctx, &a, &allowed)) {
                    Ok(outcome) => CallResult {
                        text: format_outcome(&outcome),
                        structured: None,
                        items: Vec::new(),
                        is_error: false,
                    },
                    Err(e) => error_result(&e),
                });
            }
            _ => return Err(CallError::UnknownTool(name.to_owned())),
        };
        Ok(match result {
            Ok(Output::Change { plan, summary }) => match apply(ctx, sink, &plan) {
                Ok(_) => CallResult { text: summary, structured: None, items: Vec::new(), is_error: false },
                Err(e) => error_result(&e),
            },
            Ok(other) => CallResult { text: other.text(), structured: None, items: Vec::new(), is_error: false },
            Err(e) => error_result(&e),
        })
    }

    fn error_result(&self, e: &Error) -> CallResult {
        error_result(e)
    }

    fn follows_client_roots(&self) -> bool {
        false
    }
}

/// Applies `plan` through `sink`, unless it would change a file with another hard link: every
/// plan of the profile passes here, so no tool writes through a name whose file may also be
/// outside the root.
fn apply(ctx: &Context<'_>, sink: &dyn Sink, plan: &EditPlan) -> Result<()> {
    sink::refuse_hard_links(ctx.vfs, plan)?;
    sink::apply(sink, ctx.config, ctx.vfs, plan).map(drop)
}

/// The commands `run_command` may start under `config`.
fn allowed_commands(config: &Config) -> Vec<String> {
    match &config.allowed_commands {
        Some(list) => list.clone(),
        None => DEFAULT_COMMANDS.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Runs core tool `name` on `args`.
fn core(ctx: &Context<'_>, name: &str, args: Value) -> Result<Output> {
    let tool = tools::find(name).ok_or_else(|| Error::invalid(format!("no core tool {name}")))?;
    (tool.run)(ctx, args)
}

/// `move_file`'s arguments as the core `move` takes them: a file at the destination is replaced,
/// as `rename` does.
fn move_args(args: Value) -> Result<Value> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MoveFile {
        source: String,
        destination: String,
    }
    let a: MoveFile = parse_args(args)?;
    Ok(json!({"source": a.source, "destination": a.destination, "overwrite": true}))
}

/// The error result for `e`, in the contract's names.
pub fn error_result(e: &Error) -> CallResult {
    let v = json!({"error": error_name(e), "message": e.message()});
    CallResult { text: v.to_string(), structured: None, items: Vec::new(), is_error: true }
}

/// The contract's name for `e`; kinds the contract does not name keep the standard names.
fn error_name(e: &Error) -> &'static str {
    match e.kind() {
        ErrorKind::PathEscape => "OutsideRoot",
        ErrorKind::NotFound => "NotFound",
        ErrorKind::PatchFailed => "PatchFailed",
        ErrorKind::ReadOnly => "ReadOnly",
        ErrorKind::CommandNotAllowed => "CommandNotAllowed",
        ErrorKind::IoError if e.message().contains("permission denied") => "PermissionDenied",
        kind => kind.as_str(),
    }
}

/// Arguments of `apply_patch`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    path: String,
    patch: String,
}

/// Plans `args.patch` onto `args.path` and says what it does.
fn apply_patch(ctx: &Context<'_>, args: ApplyPatchArgs) -> Result<Output> {
    let done = patch_one_file(ctx, OneFilePatch { path: args.path, patch: args.patch })?;
    let (path, n) = (&done.path, done.hunks);
    let hunks = format!("{n} hunk{}", if n == 1 { "" } else { "s" });
    let summary = if done.created {
        format!("created {path} from the patch ({hunks})")
    } else {
        format!("patched {path} ({hunks} applied)")
    };
    Ok(Output::Change { plan: done.plan, summary })
}

/// Arguments of `append_file`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AppendArgs {
    path: String,
    content: String,
}

/// Plans appending `args.content` to the end of an existing file, as given (line breaks in the
/// file's style), and says how much it adds.
fn append_file(ctx: &Context<'_>, args: AppendArgs) -> Result<Output> {
    let given = args.path.clone();
    let done = append_as_given(ctx, AppendAsGiven { path: args.path, content: args.content })
        .map_err(|e| never_creates(e, &given))?;
    let n = done.bytes;
    let summary = format!("appended {n} byte{} to {}", if n == 1 { "" } else { "s" }, done.path);
    Ok(Output::Change { plan: done.plan, summary })
}

/// A missing file in `append_file`'s words: the tool never creates one.
fn never_creates(e: Error, given: &str) -> Error {
    if e.kind() != ErrorKind::NotFound {
        return e;
    }
    let message =
        format!("{given}: no such file; append_file adds to an existing file and never creates one (use write_file)");
    Error::new(ErrorKind::NotFound, message).with_path(given)
}

/// `run_command`'s result text.
fn format_outcome(o: &Outcome) -> String {
    let code = match (o.exit_code, o.signal) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => -1,
    };
    let mut stderr = captured_text(&o.stderr, "stderr");
    let note = if o.timed_out {
        Some("tether: the command ran past its time limit and was stopped".to_owned())
    } else if o.cancelled {
        Some("tether: the command was cancelled and stopped".to_owned())
    } else {
        o.signal.map(|s| format!("tether: the command was ended by {}", signal_name(s)))
    };
    if let Some(note) = note {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&note);
        stderr.push('\n');
    }
    let stdout = captured_text(&o.stdout, "stdout");
    format!(
        "exit_code: {code}\nstdout:\n{stdout}{}stderr:\n{stderr}",
        if stdout.is_empty() || stdout.ends_with('\n') { "" } else { "\n" }
    )
}

/// A stream's text, with a note when it was cut.
fn captured_text(c: &Captured, what: &str) -> String {
    let mut text = c.text.clone();
    if c.truncated {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("tether: {what} was cut after {} of its {} bytes\n", c.text.len(), c.total_bytes));
    }
    text
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::config::Cancel;
    use crate::edit::FileOp;
    use crate::sink::{Applied, DiskSink};
    use crate::text::Document;
    use crate::tools::testing::fixture;
    use crate::vfs::{OpenDocument, Overlay, Vfs};

    #[test]
    fn error_names() {
        let table = [
            (Error::new(ErrorKind::PathEscape, "x"), "OutsideRoot"),
            (Error::new(ErrorKind::NotFound, "x"), "NotFound"),
            (Error::new(ErrorKind::PatchFailed, "x"), "PatchFailed"),
            (Error::new(ErrorKind::ReadOnly, "x"), "ReadOnly"),
            (Error::new(ErrorKind::CommandNotAllowed, "x"), "CommandNotAllowed"),
            (Error::io(&std::io::Error::from(std::io::ErrorKind::PermissionDenied), "a"), "PermissionDenied"),
            (Error::new(ErrorKind::IoError, "disk full"), "io_error"),
            (Error::invalid("x"), "invalid_input"),
            (Error::new(ErrorKind::NotAFile, "x"), "not_a_file"),
        ];
        for (e, want) in table {
            let r = error_result(&e);
            let v: Value = serde_json::from_str(&r.text).expect("json");
            assert!(r.is_error);
            assert_eq!(v["error"], want, "{e}");
            assert_eq!(v["message"], e.message());
        }
    }

    #[test]
    fn command_results() {
        let captured = |text: &str, total: u64| Captured {
            text: text.to_owned(),
            total_bytes: total,
            truncated: total > text.len() as u64,
            spill: None,
            bytes: None,
        };
        let outcome = |code, signal, timed_out, out: Captured, err: Captured| Outcome {
            exit_code: code,
            signal,
            timed_out,
            cancelled: false,
            output_limit: false,
            background_killed: false,
            duration: Duration::from_millis(5),
            stdout: out,
            stderr: err,
        };
        let table = [
            (outcome(Some(0), None, false, captured("a\n", 2), captured("", 0)), "exit_code: 0\nstdout:\na\nstderr:\n"),
            (
                outcome(Some(2), None, false, captured("a", 1), captured("e\n", 2)),
                "exit_code: 2\nstdout:\na\nstderr:\ne\n",
            ),
            (
                outcome(None, Some(9), true, captured("", 0), captured("", 0)),
                "exit_code: 137\nstdout:\nstderr:\ntether: the command ran past its time limit and was stopped\n",
            ),
            (
                outcome(Some(0), None, false, captured("abc", 10), captured("", 0)),
                "exit_code: 0\nstdout:\nabc\ntether: stdout was cut after 3 of its 10 bytes\nstderr:\n",
            ),
        ];
        for (o, want) in table {
            assert_eq!(format_outcome(&o), want);
        }
    }

    /// A sink that must not be reached.
    struct Unreachable;

    impl Sink for Unreachable {
        fn apply(&self, _vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
            panic!("a refused plan reached the sink: {plan:?}")
        }
    }

    /// The error name and message of a refused call.
    fn refused(ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> (String, String) {
        let r = Guarded.call(ctx, sink, name, args.clone()).expect("known tool");
        assert!(r.is_error, "{name} {args} succeeded: {}", r.text);
        let v: Value = serde_json::from_str(&r.text).expect("json");
        (v["error"].as_str().expect("name").to_owned(), v["message"].as_str().expect("message").to_owned())
    }

    /// A file inside the root that is a hard link to one outside it is never changed, moved or
    /// replaced, on disk or in an open buffer, and the refusal names the path and says why.
    #[test]
    fn refuses_hard_linked_files() {
        let f = fixture(
            r#"
//- other.txt
other
//- plain.txt
plain
"#,
        );
        let outside = tempfile::tempdir().expect("tempdir");
        let secret = outside.path().join("secret.txt");
        fs::write(&secret, "old\n").expect("write");
        fs::hard_link(&secret, f.dir.path().join("linked.txt")).expect("link");
        std::os::unix::fs::symlink("linked.txt", f.dir.path().join("via.txt")).expect("symlink");
        let patch = "@@ -1 +1 @@\n-old\n+new\n";
        let calls = [
            ("write_file", json!({"path": "linked.txt", "content": "new\n"}), "linked.txt"),
            ("write_file", json!({"path": "via.txt", "content": "new\n"}), "via.txt"),
            ("append_file", json!({"path": "linked.txt", "content": "more"}), "linked.txt"),
            ("apply_patch", json!({"path": "linked.txt", "patch": patch}), "linked.txt"),
            ("move_file", json!({"source": "linked.txt", "destination": "moved.txt"}), "linked.txt"),
            ("move_file", json!({"source": "other.txt", "destination": "linked.txt"}), "linked.txt"),
        ];
        let unchanged = |f: &crate::tools::testing::Fixture| {
            assert_eq!(fs::read(&secret).expect("outside"), b"old\n");
            assert_eq!(f.read("linked.txt").as_deref(), Some(&b"old\n"[..]));
            assert_eq!(f.read("other.txt").as_deref(), Some(&b"other\n"[..]));
            assert_eq!(f.read("moved.txt"), None);
        };
        for (name, args, path) in &calls {
            let (error, message) = refused(&f.ctx(), &DiskSink, name, args.clone());
            assert_eq!(error, "OutsideRoot", "{name} {args}");
            let why = "the file has 2 hard links, and another name of the same file may be outside the workspace";
            assert!(message.starts_with(&format!("{path}: {why}, so tether does not ")), "{message}");
            unchanged(&f);
        }

        // An open buffer is saved to the same file: refused before the editor sees the change.
        let real = f.vfs.resolve("linked.txt").expect("inside").real().to_path_buf();
        let open = OpenDocument { doc: Document::from_text("old\n"), version: 1, dirty: false, stamp: 1 };
        let overlay = Overlay::from_docs(BTreeMap::from([(real, open)]));
        let ws = crate::workspace::Workspace::new([f.dir.path()]).expect("workspace");
        let vfs = Vfs::new(Arc::new(ws), Arc::new(overlay));
        let ctx = Context { vfs: &vfs, config: &f.config, cancel: &Cancel::default(), editor: None };
        for (name, args, _) in &calls {
            assert_eq!(refused(&ctx, &Unreachable, name, args.clone()).0, "OutsideRoot", "{name} {args}");
        }

        // All or nothing: a plan with one such file changes none of the others.
        let resolve = |p: &str| f.vfs.resolve(p).expect("inside");
        let plan = EditPlan {
            ops: vec![
                FileOp::Create { path: resolve("new.txt"), text: "new\n".into(), overwrite: false, mode: None },
                FileOp::Create { path: resolve("plain.txt"), text: "new\n".into(), overwrite: true, mode: None },
                FileOp::Create { path: resolve("linked.txt"), text: "new\n".into(), overwrite: true, mode: None },
            ],
        };
        assert_eq!(apply(&f.ctx(), &DiskSink, &plan).expect_err("refused").kind(), ErrorKind::PathEscape);
        assert_eq!((f.read("new.txt"), f.read("plain.txt").as_deref()), (None, Some(&b"plain\n"[..])));
        unchanged(&f);

        // A file with one name is written as before.
        let r = Guarded.call(&f.ctx(), &DiskSink, "write_file", json!({"path": "plain.txt", "content": "new\n"}));
        assert!(!r.expect("known tool").is_error);
        assert_eq!(f.read("plain.txt").as_deref(), Some(&b"new\n"[..]));
    }
}
