//! The disk sink: placeholder until its implementation lands.

use super::{Applied, Sink};
use crate::edit::EditPlan;
use crate::error::{Error, Result};
use crate::vfs::Vfs;

/// Applies plans to files on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskSink;

impl Sink for DiskSink {
    fn apply(&self, _vfs: &Vfs, _plan: &EditPlan) -> Result<Applied> {
        Err(Error::invalid("not yet implemented"))
    }
}
