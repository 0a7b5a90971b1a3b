//! The numbering of the messages read from the editor (see `lsp/transport.rs`): with it a
//! `didChange` is known to have been read after the editor answered a `workspace/applyEdit`.

use std::sync::atomic::{AtomicU64, Ordering};

/// The numbering of the messages read from the editor.
#[derive(Debug, Default)]
pub(crate) struct Arrivals {
    /// How many requests and notifications have been read.
    read: AtomicU64,
    /// The number of the message whose handler is running (handlers run one poll at a time).
    running: AtomicU64,
}

impl Arrivals {
    /// How many messages have been read so far.
    pub fn read(&self) -> u64 {
        self.read.load(Ordering::SeqCst)
    }

    /// The number of the message whose handler is being polled: called by a handler that needs
    /// its own message's place (`didChange`), before its first `.await`.
    pub fn running(&self) -> u64 {
        self.running.load(Ordering::SeqCst)
    }

    /// Counts one more message read, and returns its number.
    pub fn arrive(&self) -> u64 {
        self.read.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Records that the handler of message `number` is being polled.
    pub fn set_running(&self, number: u64) {
        self.running.store(number, Ordering::SeqCst);
    }
}
