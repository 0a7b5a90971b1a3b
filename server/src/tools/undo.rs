//! `undo`: takes back changes the journal recorded, as one change through the normal path.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::history::journal;
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::journal::{self, Changeset};

/// Arguments of `undo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    /// The changeset to undo (an id `history` lists).
    #[serde(default)]
    pub id: Option<String>,
    /// Several changesets to undo together, all or nothing.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// Undo the newest N changes of this workspace that are not undone yet (undos themselves
    /// are not counted).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub last: Option<usize>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "undo",
    description: "Take back changes tether applied (ids from `history`), across every file they \
touched, open or not: `id`, `ids`, or `last` (the newest N changes not undone yet). Changes made \
since to the same files are kept; if a later change touched the same lines, nothing is changed \
and the error names the lines. Open buffers get an edit the user can undo; the undo is itself \
recorded, so it can be undone.",
    schema: schema_of::<UndoArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: false,
    run: |ctx, args: Value| undo(ctx, parse_args(args)?),
};

/// Plans the undo of the changesets the arguments name.
pub fn undo(ctx: &Context<'_>, args: UndoArgs) -> Result<Output> {
    let journal = journal(ctx)?;
    let all = journal.list()?;
    let undone = journal::undone_by(&all);
    let chosen: Vec<Changeset> = match (args.id, args.ids, args.last) {
        (Some(id), None, None) => vec![journal.get(&id)?],
        (None, Some(ids), None) if !ids.is_empty() => ids.iter().map(|id| journal.get(id)).collect::<Result<_>>()?,
        (None, None, Some(n)) if n > 0 => {
            let chosen: Vec<Changeset> =
                all.iter().filter(|c| c.undoes.is_empty() && !undone.contains_key(&c.id)).take(n).cloned().collect();
            if chosen.is_empty() {
                return Err(Error::new(ErrorKind::NotFound, "nothing to undo: every change in the journal is undone"));
            }
            chosen
        }
        _ => return Err(Error::invalid("give exactly one of `id`, `ids` (not empty) or `last` (1 or more)")),
    };
    for c in &chosen {
        if let Some(by) = undone.get(&c.id) {
            return Err(Error::invalid(format!(
                "changeset {} was already undone by changeset {by}; undo {by} to bring it back",
                c.id
            )));
        }
    }
    let (plan, summary) = journal::plan_undo(&journal, ctx.vfs, &chosen)?;
    if plan.is_empty() {
        return Err(Error::new(ErrorKind::NoMatch, format!("{summary}: the files already are as before the change")));
    }
    Ok(Output::Change { plan, summary })
}
