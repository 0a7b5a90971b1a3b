//! Logging for `tether lsp`: everything to stderr (stdout is the protocol), and warnings and
//! errors from tether itself also to the editor as `window/logMessage`.

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use tokio::sync::mpsc;
use tower_lsp::lsp_types::MessageType;
use tower_lsp::Client;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::Layer;

/// Messages logged before (or while) the client is connected, waiting to be sent.
pub(crate) struct Forward {
    rx: mpsc::UnboundedReceiver<(MessageType, String)>,
}

impl Forward {
    /// Sends every forwarded message to `client` from now on.
    pub fn connect(self, client: Client) {
        let mut rx = self.rx;
        tokio::spawn(async move {
            while let Some((typ, message)) = rx.recv().await {
                client.log_message(typ, message).await;
            }
        });
    }
}

/// Installs the process's logger: stderr at `level` (or the `TETHER_LOG` filter), plus the
/// forwarding of tether's warnings and errors to the editor.
pub(crate) fn init(level: Option<&str>) -> Forward {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level.unwrap_or("warn")));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(filter);
    let (tx, rx) = mpsc::unbounded_channel();
    let _ = tracing_subscriber::registry().with(stderr).with(ToClient { tx }).try_init();
    Forward { rx }
}

/// Forwards tether's own warnings and errors. Other crates' events (tower-lsp's among them) stay
/// on stderr, so that a failure to send a message can never feed itself.
struct ToClient {
    tx: mpsc::UnboundedSender<(MessageType, String)>,
}

impl<S: Subscriber> Layer<S> for ToClient {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() > Level::WARN || !meta.target().starts_with("tether") {
            return;
        }
        let typ = if *meta.level() == Level::ERROR { MessageType::ERROR } else { MessageType::WARNING };
        let mut text = Text::default();
        event.record(&mut text);
        let _ = self.tx.send((typ, format!("tether: {}", text.0)));
    }
}

/// An event's message followed by its other fields as `key=value`.
#[derive(Default)]
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}{rest}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            self.0 = format!("{value}{rest}");
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}
