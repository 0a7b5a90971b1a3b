//! Test support: multi-file fixtures in one raw string, and tool calls on them.

use std::fs;
use std::sync::Arc;

use serde_json::Value;

use super::{Context, Output};
use crate::config::{Cancel, Config};
use crate::error::ErrorKind;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

/// A workspace on disk built from a fixture, and its read view.
pub struct Fixture {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
    /// The read view over it.
    pub vfs: Vfs,
    /// The configuration calls run with.
    pub config: Config,
    /// The cancellation signal calls run with (never set unless a test sets it).
    pub cancel: Cancel,
}

/// Builds a workspace from a fixture: `//- path` lines start files, the lines after are their
/// text; a path ending in `/` makes an empty directory.
///
/// ```text
/// //- src/main.rs
/// fn main() {}
/// //- empty/
/// ```
pub fn fixture(text: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut current: Option<(String, String)> = None;
    let flush = |cur: Option<(String, String)>| {
        if let Some((path, body)) = cur {
            let full = dir.path().join(&path);
            if path.ends_with('/') {
                fs::create_dir_all(&full).expect("mkdir");
            } else {
                fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
                fs::write(&full, body).expect("write");
            }
        }
    };
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            flush(current.take());
            current = Some((path.trim().to_owned(), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(current);
    let ws = Workspace::new([dir.path()]).expect("workspace");
    Fixture { dir, vfs: Vfs::disk(Arc::new(ws)), config: Config::default(), cancel: Cancel::default() }
}

impl Fixture {
    /// The context a tool call on this fixture runs with.
    pub fn ctx(&self) -> Context<'_> {
        Context { vfs: &self.vfs, config: &self.config, cancel: &self.cancel, editor: None }
    }

    /// Writes raw bytes to `path` inside the fixture.
    pub fn write(&self, path: &str, bytes: impl AsRef<[u8]>) {
        let full = self.dir.path().join(path);
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, bytes).expect("write");
    }

    /// The raw bytes of `path` inside the fixture, or `None` when there is no such file.
    #[allow(dead_code)] // Used by the tools that change files.
    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        fs::read(self.dir.path().join(path)).ok()
    }

    /// Calls the core tool `name` with `args`, returning its text or its error kind and message.
    pub fn call(&self, name: &str, args: Value) -> Result<String, (ErrorKind, String)> {
        let tool = super::find(name).expect("tool exists");
        let ctx = self.ctx();
        (tool.run)(&ctx, args).map(|o| o.text()).map_err(|e| (e.kind(), e.message().to_owned()))
    }

    /// Calls `name` and, when it returns a change, applies it to disk as `tether call` would
    /// (through `sink::apply` and the disk sink); returns the tool's text or the error.
    #[allow(dead_code)] // Used by the tools that change files.
    pub fn apply(&self, name: &str, args: Value) -> Result<String, (ErrorKind, String)> {
        let tool = super::find(name).expect("tool exists");
        let ctx = self.ctx();
        let fail = |e: crate::error::Error| (e.kind(), e.message().to_owned());
        let out = (tool.run)(&ctx, args).map_err(fail)?;
        if let Output::Change { plan, .. } = &out {
            crate::sink::apply(&crate::sink::DiskSink, &self.config, &self.vfs, plan).map_err(fail)?;
        }
        Ok(out.text())
    }

    /// Calls `name` and returns its JSON output.
    #[allow(dead_code)] // Used by the tools with JSON results.
    pub fn call_json(&self, name: &str, args: Value) -> Result<Value, (ErrorKind, String)> {
        let tool = super::find(name).expect("tool exists");
        let ctx = self.ctx();
        match (tool.run)(&ctx, args) {
            Ok(Output::Json(v)) => Ok(v),
            Ok(other) => panic!("expected JSON, got {other:?}"),
            Err(e) => Err((e.kind(), e.message().to_owned())),
        }
    }

    /// Calls `name` and returns the kind of its error; panics if it succeeds.
    pub fn call_err(&self, name: &str, args: Value) -> ErrorKind {
        match self.call(name, args.clone()) {
            Ok(out) => panic!("{name} {args} succeeded: {out}"),
            Err((kind, _)) => kind,
        }
    }
}
