//! `initialize`: negotiate capabilities and take the workspace folders as roots.

use tower_lsp::jsonrpc::Result as RpcResult;
use tower_lsp::lsp_types::{ClientInfo, InitializeParams, InitializeResult, ServerInfo};

use crate::lsp::capabilities::{server_capabilities, ClientCaps};
use std::time::Duration;

use crate::lsp::convert::path_of;
use crate::lsp::knowledge::{AfterChange, MAX_WAIT};
use crate::lsp::options::SavePolicy;
use crate::lsp::protocol;
use crate::lsp::shared::Shared;
use crate::workspace::Deny;

/// Records the client's capabilities and roots, and answers the server's capabilities.
pub(crate) fn handle(shared: &Shared, params: InitializeParams) -> RpcResult<InitializeResult> {
    let caps = ClientCaps::new(&params.capabilities).of_client(params.client_info.as_ref());
    check_protocol(&caps, params.client_info.as_ref());
    shared.set_caps(caps);
    if let Some(deny) = deny(shared, params.initialization_options.as_ref()) {
        shared.set_deny(deny);
    }
    shared.set_roots(roots(&params));
    if let Some(save) = save_policy(params.initialization_options.as_ref()) {
        shared.set_save_policy(save);
    }
    shared.set_after_change(after_change(params.initialization_options.as_ref()));
    if let Some(review) = params.initialization_options.as_ref().and_then(|o| o.get(protocol::REVIEW_OPTION)) {
        match crate::lsp::review::Settings::from_json(review) {
            Ok(settings) => shared.set_review(settings),
            Err(e) => tracing::warn!(error = %e, "initializationOptions.review is malformed; review stays off"),
        }
    }
    Ok(InitializeResult {
        capabilities: server_capabilities(&caps),
        server_info: Some(ServerInfo {
            name: "tether".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    })
}

/// Logs the protocol version the client speaks, and warns when it is older than this server
/// serves (the client then sees no error of its own until a call fails).
fn check_protocol(caps: &ClientCaps, client: Option<&ClientInfo>) {
    let name = client.map_or("the client", |c| c.name.as_str());
    match caps.protocol {
        Some(v) if v < protocol::MIN_PROTOCOL_VERSION => tracing::warn!(
            "{name} speaks tether protocol {v}; this tether ({}) serves protocol {} and newer: update the editor's tether plugin",
            env!("CARGO_PKG_VERSION"),
            protocol::MIN_PROTOCOL_VERSION
        ),
        Some(v) => tracing::info!("{name} speaks tether protocol {v}; this tether speaks {}", protocol::PROTOCOL_VERSION),
        None => tracing::debug!("{name} announces no tether protocol version"),
    }
}

/// `initializationOptions.save` (`"clean"` or `"never"`); another value is logged and ignored.
fn save_policy(options: Option<&serde_json::Value>) -> Option<SavePolicy> {
    let value = options?.get(protocol::SAVE_OPTION)?;
    match serde_json::from_value(value.clone()) {
        Ok(save) => Some(save),
        Err(_) => {
            tracing::warn!(%value, "initializationOptions.save must be \"clean\" or \"never\"; keeping the server's setting");
            None
        }
    }
}

/// `initializationOptions.deny`: `patterns` (globs) and `secrets` (the usual secrets files), added
/// to the server's own list. A malformed value is logged and the server's list kept.
fn deny(shared: &Shared, options: Option<&serde_json::Value>) -> Option<Deny> {
    let value = options?.get(protocol::DENY_OPTION)?;
    let patterns: Option<Vec<String>> = match value.get("patterns") {
        None => Some(Vec::new()),
        Some(p) => serde_json::from_value(p.clone()).ok(),
    };
    let secrets = value.get("secrets").map_or(Some(false), serde_json::Value::as_bool);
    let (Some(patterns), Some(secrets)) = (patterns, secrets) else {
        tracing::warn!(%value, "initializationOptions.deny must be {{\"patterns\": [globs], \"secrets\": boolean}}; ignored");
        return None;
    };
    let server = shared.options.deny.patterns().iter().cloned();
    let all = server.chain(patterns);
    let made = if secrets { Deny::secrets_and(all) } else { Deny::new(all) };
    made.map_err(|e| tracing::warn!(error = %e, "initializationOptions.deny: a pattern is not a glob; ignored")).ok()
}

/// `initializationOptions.diagnostics`: `afterChange` (boolean) and `wait` (milliseconds, at most
/// [`MAX_WAIT`]); a value of another type is logged and the default kept.
fn after_change(options: Option<&serde_json::Value>) -> AfterChange {
    let mut after = AfterChange::default();
    let Some(value) = options.and_then(|o| o.get(protocol::DIAGNOSTICS_OPTION)) else {
        return after;
    };
    match value.get("afterChange") {
        None => {}
        Some(v) => match v.as_bool() {
            Some(b) => after.enabled = b,
            None => tracing::warn!(%v, "initializationOptions.diagnostics.afterChange must be a boolean; ignored"),
        },
    }
    match value.get("wait") {
        None => {}
        Some(v) => match v.as_u64() {
            Some(ms) => after.wait = Duration::from_millis(ms).min(MAX_WAIT),
            None => tracing::warn!(%v, "initializationOptions.diagnostics.wait must be milliseconds; ignored"),
        },
    }
    after
}

/// The workspace folders, else the root URI, else the (older) root path.
#[allow(deprecated)] // `root_uri` and `root_path` are how older clients name their root.
fn roots(params: &InitializeParams) -> Vec<std::path::PathBuf> {
    if let Some(folders) = params.workspace_folders.as_ref().filter(|f| !f.is_empty()) {
        return folders.iter().filter_map(|f| path_of(&f.uri)).collect();
    }
    if let Some(path) = params.root_uri.as_ref().and_then(path_of) {
        return vec![path];
    }
    params.root_path.iter().map(std::path::PathBuf::from).collect()
}
