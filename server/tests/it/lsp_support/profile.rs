//! A test profile whose tools make any plan, and the real disk sink wrapped so that it counts the
//! plans it applies and can be told to fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tether::config::Config;
use tether::edit::{Base, EditPlan, FileOp, TextChange};
use tether::error::{Error, ErrorKind};
use tether::profiles::{CallError, CallResult, Profile, Standard, ToolInfo};
use tether::sink::{self, Applied, Destination, DiskSink, Prepared, Sink, TwoPhaseSink};
use tether::tools::{Context, Effects};
use tether::vfs::Vfs;

/// Hooks a test sets to act inside a tool call.
#[derive(Default)]
pub struct Hooks {
    /// Run once each, in order, by `plan` after it read its files and before it applies.
    pub before_apply: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    /// How many times `plan` ran.
    pub plan_runs: AtomicUsize,
    /// How many `gate` calls are waiting.
    pub at_gate: AtomicUsize,
    gate: (Mutex<bool>, Condvar),
}

impl Hooks {
    /// Lets every `gate` call (waiting or to come) through.
    pub fn open_gate(&self) {
        *self.gate.0.lock().expect("lock") = true;
        self.gate.1.notify_all();
    }

    fn wait_gate(&self) -> bool {
        self.at_gate.fetch_add(1, Ordering::SeqCst);
        let open = self.gate.0.lock().expect("lock");
        let (open, _) = self.gate.1.wait_timeout_while(open, Duration::from_secs(20), |open| !*open).expect("lock");
        *open
    }
}

/// The standard tools plus `plan` (any list of operations) and `gate` (waits for the test).
pub struct TestProfile {
    /// Shared with the test.
    pub hooks: Arc<Hooks>,
}

impl Profile for TestProfile {
    fn name(&self) -> &'static str {
        "test"
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        let mut tools = Standard.tools(config);
        if !config.read_only {
            // Field by field, so that a field added to Effects keeps READ's value.
            let mut effects = Effects::READ;
            (effects.read_only, effects.destructive, effects.idempotent) = (false, true, false);
            tools.push(ToolInfo { name: "plan", description: "test", input_schema: json!({}), effects, quick: false });
        }
        tools.push(ToolInfo {
            name: "gate",
            description: "test",
            input_schema: json!({}),
            effects: Effects::READ,
            quick: false,
        });
        tools
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        if !self.tools(ctx.config).iter().any(|t| t.name == name) {
            return Err(CallError::UnknownTool(name.to_owned()));
        }
        match name {
            "plan" => Ok(match self.plan(ctx, sink, &args) {
                Ok(applied) => CallResult {
                    text: "applied".into(),
                    structured: Some(applied_json(&applied)),
                    items: Vec::new(),
                    is_error: false,
                },
                Err(e) => self.error_result(&e),
            }),
            "gate" => {
                let open = self.hooks.wait_gate();
                Ok(CallResult {
                    text: format!("gate open: {open}"),
                    structured: None,
                    items: Vec::new(),
                    is_error: !open,
                })
            }
            _ => Standard.call(ctx, sink, name, args),
        }
    }
}

impl TestProfile {
    /// Builds a plan from `{"ops": [...]}` against the call's snapshot and applies it.
    fn plan(&self, ctx: &Context<'_>, sink: &dyn Sink, args: &Value) -> tether::Result<Applied> {
        self.hooks.plan_runs.fetch_add(1, Ordering::SeqCst);
        let s = |op: &Value, k: &str| op[k].as_str().unwrap_or_default().to_owned();
        let mut plan = EditPlan::default();
        for op in args["ops"].as_array().cloned().unwrap_or_default() {
            let file_op = match s(&op, "op").as_str() {
                "replace" | "append" => {
                    let path = ctx.vfs.resolve(&s(&op, "path"))?;
                    let file = ctx.vfs.read_text(&path)?;
                    let change = if s(&op, "op") == "append" {
                        TextChange::new(file.text.len(), file.text.len(), s(&op, "text"))
                    } else {
                        let old = s(&op, "old");
                        let at = file.text.find(&old).ok_or_else(|| {
                            Error::new(ErrorKind::NoMatch, format!("{}: `{old}` not found", path.given()))
                        })?;
                        TextChange::new(at, at + old.len(), s(&op, "new"))
                    };
                    FileOp::Edit { path, base: Base::from(file), changes: vec![change] }
                }
                "create" => FileOp::Create {
                    path: ctx.vfs.resolve(&s(&op, "path"))?,
                    text: s(&op, "text"),
                    overwrite: op["overwrite"].as_bool().unwrap_or(false),
                    mode: None,
                },
                "rename" => FileOp::Rename {
                    from: ctx.vfs.resolve(&s(&op, "from"))?,
                    to: ctx.vfs.resolve(&s(&op, "to"))?,
                    overwrite: false,
                },
                "delete" => FileOp::Delete {
                    path: ctx.vfs.resolve(&s(&op, "path"))?,
                    recursive: op["recursive"].as_bool().unwrap_or(false),
                },
                "mkdir" => FileOp::Mkdir { path: ctx.vfs.resolve(&s(&op, "path"))? },
                other => return Err(Error::invalid(format!("unknown op {other}"))),
            };
            plan.ops.push(file_op);
        }
        let hook = {
            let mut hooks = self.hooks.before_apply.lock().expect("lock");
            (!hooks.is_empty()).then(|| hooks.remove(0))
        };
        if let Some(hook) = hook {
            hook();
        }
        sink::apply(sink, ctx.config, ctx.vfs, &plan)
    }
}

/// `{"files": [{"path", "destination"}]}` with destinations as `disk`, `buffer_saved`,
/// `buffer_unsaved`.
pub fn applied_json(applied: &Applied) -> Value {
    let files: Vec<Value> = applied
        .files
        .iter()
        .map(|(path, dest)| {
            let dest = match dest {
                Destination::Disk => "disk",
                Destination::BufferSaved => "buffer_saved",
                Destination::BufferUnsaved => "buffer_unsaved",
                Destination::BufferNotSaved => "buffer_not_saved",
                Destination::BufferRepaired => "buffer_repaired",
                Destination::BufferUnconfirmed => "buffer_unconfirmed",
            };
            json!({"path": path, "destination": dest})
        })
        .collect();
    json!({ "files": files })
}

/// The real disk sink, counting the plans it begins and failing (before writing anything) any
/// plan touching `fail_on`.
#[derive(Default)]
pub struct FsSink {
    /// A path (as given) whose plans fail.
    pub fail_on: Mutex<Option<String>>,
    /// How many plans it applied (committed or not).
    pub applied: AtomicUsize,
}

impl Sink for FsSink {
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> tether::Result<Applied> {
        self.prepare(vfs, plan)?.apply()
    }
}

impl TwoPhaseSink for FsSink {
    fn prepare<'p>(&self, vfs: &Vfs, plan: &'p EditPlan) -> tether::Result<Prepared<'p>> {
        if let Some(bad) = self.fail_on.lock().expect("lock").as_deref() {
            if plan.ops.iter().any(|op| op.path().given() == bad) {
                return Err(Error::new(ErrorKind::IoError, format!("{bad}: simulated disk failure")));
            }
        }
        let prepared = DiskSink.prepare(vfs, plan)?;
        self.applied.fetch_add(1, Ordering::SeqCst);
        Ok(prepared)
    }
}
