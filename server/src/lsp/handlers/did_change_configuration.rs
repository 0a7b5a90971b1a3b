//! `workspace/didChangeConfiguration`: the review setup changed at run time. The settings are
//! read under `tether` (`{"tether": {"review": {...}}}`), or at the top when the client sends its
//! section alone (`{"review": {...}}`); anything else is not tether's and is ignored.

use tower_lsp::lsp_types::DidChangeConfigurationParams;

use crate::lsp::protocol;
use crate::lsp::review::Settings;
use crate::lsp::shared::Shared;

/// Replaces the review setup when the new settings carry one.
pub(crate) fn handle(shared: &Shared, params: DidChangeConfigurationParams) {
    let settings = &params.settings;
    let review = settings
        .get(protocol::CAPABILITY_KEY)
        .and_then(|t| t.get(protocol::REVIEW_OPTION))
        .or_else(|| settings.get(protocol::REVIEW_OPTION));
    let Some(review) = review else { return };
    match Settings::from_json(review) {
        Ok(s) => {
            tracing::info!(mode = ?s.mode, "review setup changed");
            shared.set_review(s);
        }
        Err(e) => tracing::warn!(error = %e, "the review setting is malformed; keeping the current one"),
    }
}
