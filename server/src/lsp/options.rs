//! How a `tether lsp` server is set up: its [`Options`], their [`Limits`] and [`SavePolicy`].

use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::profiles::{self, Profile};
use crate::sink::{DiskSink, TwoPhaseSink};

/// Finds a profile by name (the `profile` of `tether.callTool`, or the server's default).
pub type ProfileLookup = Arc<dyn Fn(&str) -> crate::Result<Box<dyn Profile>> + Send + Sync>;

/// Caps and time limits of the server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Tool calls running at once; more wait for a turn.
    pub max_running: usize,
    /// Tool calls admitted at once (running or waiting); more are refused with a JSON-RPC error,
    /// so that waiting calls never fill tower-lsp's handler slots.
    pub max_admitted: usize,
    /// How long a call may wait for its turn.
    pub queue_timeout: Duration,
    /// How many times a tool runs when its edit meets a buffer that changed meanwhile.
    pub max_attempts: u32,
    /// How long the editor has to answer `workspace/applyEdit`.
    pub apply_timeout: Duration,
    /// How long the editor has, after answering, to report the edited text in `didChange`
    /// before the call answers from the editor's word (the edit is followed on after that).
    pub verify_timeout: Duration,
    /// How long the editor has to answer `tether/saveDocuments`.
    pub save_timeout: Duration,
    /// How long a call runs before the server creates a progress token for it.
    pub progress_delay: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_running: 8,
            max_admitted: 32,
            queue_timeout: Duration::from_secs(120),
            max_attempts: 3,
            apply_timeout: Duration::from_secs(10),
            verify_timeout: Duration::from_secs(3),
            save_timeout: Duration::from_secs(10),
            progress_delay: Duration::from_millis(500),
        }
    }
}

/// How a `tether lsp` server is set up.
#[derive(Clone)]
pub struct Options {
    /// The profile calls use when they name none.
    pub profile: String,
    /// Limits and switches for the tools (read-only mode among them).
    pub config: Config,
    /// Where profile names are looked up.
    pub profiles: ProfileLookup,
    /// Where changes to files that are not open go.
    pub disk: Arc<dyn TwoPhaseSink>,
    /// Caps and time limits.
    pub limits: Limits,
    /// Whether buffers that were clean before an edit are saved after it (the editor's
    /// `initializationOptions.save` overrides it).
    pub save: SavePolicy,
    /// Whether `run_stdio` serves the bridge for `tether mcp` (a private Unix socket).
    pub bridge: bool,
    /// Whether `run_stdio` serves Claude Code's IDE protocol (a loopback WebSocket and a lock
    /// file in Claude Code's `ide/` folder).
    pub ide: bool,
    /// The paths inside the workspace folders no tool may touch.
    pub deny: crate::workspace::Deny,
}

/// What happens to a buffer that was clean before a tool changed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SavePolicy {
    /// Save it, so that disk and buffer agree.
    #[default]
    Clean,
    /// Leave it unsaved.
    Never,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            profile: "standard".to_owned(),
            config: Config::default(),
            profiles: Arc::new(profiles::by_name),
            disk: Arc::new(DiskSink),
            limits: Limits::default(),
            save: SavePolicy::default(),
            bridge: true,
            ide: true,
            deny: crate::workspace::Deny::default(),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("profile", &self.profile)
            .field("config", &self.config)
            .field("limits", &self.limits)
            .field("save", &self.save)
            .field("bridge", &self.bridge)
            .field("ide", &self.ide)
            .field("deny", &self.deny.patterns())
            .finish_non_exhaustive()
    }
}
