//! tether: file tools over live editor buffers, for editors and AI assistants.
//!
//! The crate is layered (see `ARCHITECTURE.md`): [`text`] and [`workspace`] are plain values,
//! [`vfs`] is the read view, [`tools`] are pure operations over it, [`profiles`] give them their
//! names and formats, and the frontends ([`cli`]) speak to the outside world. [`exec`] runs shell
//! commands for the `run` tool, the one tool with effects outside the read view.

pub mod bridge;
pub mod cli;
pub mod config;
pub mod edit;
pub mod error;
pub mod exec;
pub mod journal;
pub mod lsp;
pub mod mcp;
pub mod profiles;
pub mod sink;
pub mod sys;
pub mod text;
pub mod tools;
pub mod vfs;
pub mod workspace;

pub use error::{Error, ErrorKind, Result};
