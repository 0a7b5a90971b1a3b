//! Review before apply: a tool call's whole plan shown to the user as one proposal
//! (`tether/review`), and the plan the user's answer leaves: all of it, none of it, some files,
//! or files whose text the user edited first.

use std::path::Path;
use std::time::Duration;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::convert::uri_of;
use super::protocol::ReviewAnswer as Answer;
use crate::edit::plan::apply_changes;
use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::Vfs;

/// How long a proposal waits for the user unless the editor says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether a change waits for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Changes apply at once.
    #[default]
    Off,
    /// Every change waits for the user, unless a rule says `never`.
    Ask,
}

/// A rule: the first that matches an operation decides whether it is reviewed.
#[derive(Debug, Clone)]
pub struct Rule {
    tool: Option<String>,
    path: Option<GlobMatcher>,
    creates: Option<bool>,
    ask: bool,
}

/// The review setup (`initializationOptions.review`, `workspace/didChangeConfiguration`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The default for operations no rule matches.
    pub mode: Mode,
    rules: Vec<Rule>,
    /// How long a proposal waits for the user.
    pub timeout: Option<Duration>,
}

/// The JSON form of [`Settings`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsJson {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    rules: Vec<RuleJson>,
    #[serde(default)]
    timeout: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleJson {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    creates: Option<bool>,
    review: Mode,
}

impl Settings {
    /// Reads `{"mode": "off"|"ask", "rules": [{"tool", "path", "creates", "review"}], "timeout": MS}`.
    pub fn from_json(v: &Value) -> std::result::Result<Settings, String> {
        let s: SettingsJson = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
        let rules = s
            .rules
            .into_iter()
            .map(|r| {
                let path = match r.path {
                    Some(p) => Some(
                        Glob::new(p.trim_start_matches('/'))
                            .map_err(|e| format!("rule path {p:?}: {e}"))?
                            .compile_matcher(),
                    ),
                    None => None,
                };
                Ok(Rule { tool: r.tool, path, creates: r.creates, ask: r.review == Mode::Ask })
            })
            .collect::<std::result::Result<_, String>>()?;
        Ok(Settings { mode: s.mode, rules, timeout: s.timeout.map(Duration::from_millis) })
    }

    /// Whether `op` of tool `tool` waits for the user (`rel`: its path relative to its root).
    fn asks(&self, tool: &str, op: &FileOp, rel: &Path) -> bool {
        let creates = matches!(op, FileOp::Create { .. } | FileOp::Mkdir { .. });
        for r in &self.rules {
            let matches = r.tool.as_deref().is_none_or(|t| t == tool)
                && r.path.as_ref().is_none_or(|g| g.is_match(rel))
                && r.creates.is_none_or(|c| c == creates);
            if matches {
                return r.ask;
            }
        }
        self.mode == Mode::Ask
    }

    /// Whether any operation of `plan` waits for the user.
    pub fn asks_for(&self, tool: &str, plan: &EditPlan, vfs: &Vfs) -> bool {
        if self.mode == Mode::Off && self.rules.iter().all(|r| !r.ask) {
            return false;
        }
        let ws = vfs.workspace();
        plan.ops.iter().any(|op| {
            let p = op.path().path();
            let rel = ws.root_of(p).and_then(|i| p.strip_prefix(&ws.roots()[i]).ok()).unwrap_or(p);
            self.asks(tool, op, rel)
        })
    }
}

/// What the review decided, for the call's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Files applied as proposed.
    pub accepted: Vec<String>,
    /// Files applied with the user's text.
    pub edited: Vec<String>,
    /// Files left as they were.
    pub rejected: Vec<String>,
    /// The user's reason, if given.
    pub reason: Option<String>,
}

impl Outcome {
    /// The result's own content item.
    pub fn to_json(&self) -> Value {
        let decision = if self.rejected.is_empty() { "accepted" } else { "partly accepted" };
        let mut v = json!({"decision": decision, "accepted": self.accepted, "rejected": self.rejected});
        if !self.edited.is_empty() {
            v["edited_by_the_user"] = json!(self.edited);
        }
        if let Some(r) = &self.reason {
            v["reason"] = json!(r);
        }
        json!({ "review": v })
    }
}

/// The URI a proposal names `op`'s file by.
fn uri(op: &FileOp) -> String {
    uri_of(op.path().path()).map_or_else(|| op.path().given().to_owned(), |u| u.to_string())
}

/// The proposal for `plan`: per file, what it is now and what it would be.
pub fn proposal(tool: &str, caller: &str, summary: Option<&str>, plan: &EditPlan, vfs: &Vfs) -> Value {
    let current = |op: &FileOp| vfs.read_text(op.path()).ok().map(|f| f.text);
    let files: Vec<Value> = plan
        .ops
        .iter()
        .map(|op| {
            let (kind, old, new, extra) = match op {
                FileOp::Edit { base, changes, .. } => {
                    let old = base.text.to_str().into_owned();
                    let new = apply_changes(&old, changes);
                    ("edit", Some(old), Some(new), Value::Null)
                }
                FileOp::Create { text, .. } => ("create", current(op), Some(text.clone()), Value::Null),
                FileOp::Delete { recursive, .. } => ("delete", current(op), None, json!({"recursive": recursive})),
                FileOp::Rename { to, .. } => {
                    let new_uri = uri_of(to.path()).map(|u| u.to_string());
                    ("rename", None, None, json!({"newUri": new_uri, "newPath": to.given()}))
                }
                FileOp::Mkdir { .. } => ("mkdir", None, None, Value::Null),
            };
            let mut f = json!({"uri": uri(op), "path": vfs.display(op.path().real()), "kind": kind,
                               "oldText": old, "newText": new});
            if let (Some(o), Some(e)) = (f.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            f
        })
        .collect();
    json!({"tool": tool, "caller": caller, "summary": summary, "files": files})
}

/// The plan the user's answer leaves, and what it decided; a whole rejection is `rejected`.
pub fn decide(plan: &EditPlan, answer: &Answer) -> Result<(EditPlan, Outcome)> {
    let reason = answer.reason.clone().filter(|r| !r.trim().is_empty());
    let rejected_all = || {
        let why = reason.as_deref().map_or_else(String::new, |r| format!(": {r}"));
        Error::new(ErrorKind::Rejected, format!("the user rejected the change{why}; nothing was changed"))
    };
    let mut out = EditPlan::default();
    let mut outcome = Outcome { reason: reason.clone(), ..Outcome::default() };
    match answer.decision.as_str() {
        "reject" => return Err(rejected_all()),
        "accept" | "partial" => {}
        other => {
            return Err(Error::new(
                ErrorKind::IoError,
                format!(
                    "the editor answered the review with {other:?}, not accept, reject or partial; nothing was changed"
                ),
            ))
        }
    }
    for op in &plan.ops {
        let key = uri(op);
        let given = answer.files.iter().find(|f| f.uri == key);
        // A partial answer that leaves a file out leaves that file as it was.
        let accepted = match (answer.decision.as_str(), given) {
            ("accept", None) => true,
            (_, Some(f)) => f.decision == "accept",
            _ => false,
        };
        let shown = op.path().given().to_owned();
        if !accepted {
            outcome.rejected.push(shown);
            continue;
        }
        match (op, given.and_then(|f| f.text.as_ref())) {
            (FileOp::Edit { path, base, .. }, Some(text)) => {
                out.ops.extend(EditPlan::edit_to(path.clone(), base.clone(), text).ops);
                outcome.edited.push(shown);
            }
            (FileOp::Create { path, overwrite, .. }, Some(text)) => {
                out.ops.push(FileOp::Create {
                    path: path.clone(),
                    text: text.clone(),
                    overwrite: *overwrite,
                    mode: None,
                });
                outcome.edited.push(shown);
            }
            _ => {
                out.ops.push(op.clone());
                outcome.accepted.push(shown);
            }
        }
    }
    if out.is_empty() && outcome.edited.is_empty() {
        return Err(rejected_all());
    }
    Ok((out, outcome))
}
