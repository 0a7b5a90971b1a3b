//! Admission and concurrency of tool calls: how many may be in flight, and how many run.

use std::sync::Arc;

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use super::options::Limits;

/// Admission and concurrency of tool calls.
#[derive(Debug)]
pub(crate) struct Calls {
    admitted: Arc<Semaphore>,
    running: Semaphore,
}

impl Calls {
    /// Caps from `limits`.
    pub fn new(limits: &Limits) -> Calls {
        Calls {
            admitted: Arc::new(Semaphore::new(limits.max_admitted.max(1))),
            running: Semaphore::new(limits.max_running.max(1)),
        }
    }

    /// Admits one call arriving through an LSP request, or `None` when too many are in flight.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        self.admitted.clone().try_acquire_owned().ok()
    }

    /// Waits for a turn to run (at most `max_running` calls run at once).
    pub async fn turn(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.running.acquire().await
    }
}
