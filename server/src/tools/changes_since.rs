//! `changes_since`: what changed in a file since a read's version token, and who changed it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, Result};
use crate::journal::{self, Journal};
use crate::workspace::SandboxPath;

/// Arguments of `changes_since`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesSinceArgs {
    /// The file.
    pub path: String,
    /// The version a read of it showed (`[version: ...]`).
    pub version: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "changes_since",
    description: "What changed in a file since you read it: pass the `version` its read ended with \
(`[version: ...]`). Answers whether it changed, a unified diff from the text you read to the text \
now, and the changes tether applied in between with who asked for them (a change with no \
changeset was made by the user or another program).",
    schema: schema_of::<ChangesSinceArgs>,
    effects: Effects::READ,
    quick: true,
    run: |ctx, args: Value| {
        let args: ChangesSinceArgs = parse_args(args)?;
        let path = ctx.vfs.resolve(&args.path)?;
        since(ctx, &path, &args.version).map(|s| Output::Json(s.to_json()))
    },
};

/// What changed in a file since a version.
#[derive(Debug)]
pub struct Since {
    /// The file as the user named it.
    pub path: String,
    /// The version a read showed.
    pub version: String,
    /// The version now.
    pub now: String,
    /// A unified diff from the text at `version` to the text now (`None`: that text is not known).
    pub diff: Option<String>,
    /// The changesets tether applied to the file since, as `history` lists them, oldest first.
    pub changesets: Vec<Value>,
}

impl Since {
    /// Whether the file changed.
    pub fn changed(&self) -> bool {
        self.version != self.now
    }

    /// The answer of `changes_since`.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path,
            "version": self.now,
            "changed": self.changed(),
            "diff": self.diff,
            "changesets": self.changesets,
        })
    }

    /// In words, for an edit refused because it named an old version.
    pub fn describe(&self) -> String {
        let who: Vec<String> = self
            .changesets
            .iter()
            .map(|c| {
                format!(
                    "changeset {} ({} by {}, {})",
                    c["id"].as_str().unwrap_or("?"),
                    c["tool"].as_str().unwrap_or("?"),
                    c["client"].as_str().unwrap_or("?"),
                    c["time"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let by = if who.is_empty() {
            "not by tether (the user or another program changed it)".to_owned()
        } else {
            format!("by {}", who.join(", "))
        };
        let diff = match &self.diff {
            Some(d) => {
                let lines: Vec<&str> = d.lines().collect();
                let shown = lines.iter().take(80).copied().collect::<Vec<_>>().join("\n");
                let more = lines.len().saturating_sub(80);
                if more > 0 {
                    format!("\nwhat changed since your read:\n{shown}\n({more} more diff lines)")
                } else {
                    format!("\nwhat changed since your read:\n{shown}")
                }
            }
            None => "\n(tether no longer has the text of your read, so it cannot show what changed)".to_owned(),
        };
        format!(
            "{}: changed since you read it (your version {}, now {}), {by}; nothing was changed: read it again and redo the change{diff}",
            self.path, self.version, self.now
        )
    }
}

/// The version of `path` now (an open buffer, else the disk) and its bytes.
pub fn current(ctx: &Context<'_>, path: &SandboxPath) -> Result<(String, Vec<u8>)> {
    let bytes = match ctx.vfs.overlay().get(path.real()) {
        Some(open) => open.bytes(),
        None => {
            let file = ctx.vfs.read_text(path)?;
            let mut b = if file.bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
            b.extend_from_slice(file.text.as_bytes());
            b
        }
    };
    Ok((journal::version_of(&[&bytes]), bytes))
}

/// What changed in `path` since `version`.
pub fn since(ctx: &Context<'_>, path: &SandboxPath, version: &str) -> Result<Since> {
    let version =
        version.trim().trim_start_matches(crate::tools::read_file::VERSION_PREFIX).trim_end_matches(']').to_owned();
    if version.is_empty() || !version.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(format!("`version`: {version:?} is not a version (reads end with [version: ...])")));
    }
    let (now, bytes) = current(ctx, path)?;
    let mut out = Since {
        path: path.given().to_owned(),
        version: version.clone(),
        now: now.clone(),
        diff: None,
        changesets: Vec::new(),
    };
    if now == version {
        out.diff = Some(String::new());
        return Ok(out);
    }
    let Some(settings) = ctx.config.journal.as_ref() else { return Ok(out) };
    let journal = Journal::open(settings, ctx.vfs.workspace().roots());
    let mut old = journal.read_kept(path.real(), &version);
    let all = journal.list()?;
    let undone = journal::undone_by(&all);
    // Oldest first: the changesets of this file from the one that started at `version`, or the
    // one after the one that ended there.
    let mine: Vec<_> = all.iter().rev().filter(|c| c.touches(path.real())).collect();
    let record = |c: &journal::Changeset| c.files.iter().find(|r| r.path == path.real()).cloned();
    let start = mine
        .iter()
        .rposition(|c| record(c).and_then(|r| r.after).is_some_and(|s| s.version() == version))
        .map(|i| i + 1)
        .or_else(|| mine.iter().position(|c| record(c).and_then(|r| r.before).is_some_and(|s| s.version() == version)));
    if let Some(start) = start {
        for c in &mine[start..] {
            out.changesets.push(super::history::entry(ctx, c, &undone));
        }
        if old.is_none() {
            // The text at `version` from the journal: the bytes after the change that ended there,
            // or before the one that started there.
            let c = if start > 0 { mine[start - 1] } else { mine[start] };
            if let Some(r) = record(c) {
                let (before, after) = journal.contents(c, &r);
                old = if start > 0 { after } else { before };
            }
        }
    }
    if let Some(old) = old {
        out.diff = Some(crate::edit::unified_diff(
            path.given(),
            &String::from_utf8_lossy(&old),
            &String::from_utf8_lossy(&bytes),
        ));
    }
    Ok(out)
}
