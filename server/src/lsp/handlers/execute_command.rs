//! `workspace/executeCommand`: `tether.callTool` and `tether.listTools`.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tower_lsp::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp::lsp_types::ExecuteCommandParams;
use tower_lsp::lsp_types::MessageType;

use crate::config::Cancel;
use crate::journal::client;
use crate::lsp::calls::Caller;
use crate::lsp::progress::Progress;
use crate::lsp::protocol::{self, CallToolParams, ListToolsParams};
use crate::lsp::shared::{request_failed, Shared};
use crate::profiles::{CallError, CallResult, Item};

/// Runs one of tether's commands.
pub(crate) async fn handle(shared: &Arc<Shared>, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
    match params.command.as_str() {
        protocol::CALL_TOOL => call_tool(shared, params).await.map(Some),
        protocol::LIST_TOOLS => list_tools(shared, params).map(Some),
        other => Err(RpcError::invalid_params(format!(
            "unknown command `{other}`; tether's commands are {}",
            protocol::COMMANDS.join(", ")
        ))),
    }
}

/// `tether.callTool {tool, arguments, profile?}` → an MCP-shaped `CallToolResult`.
async fn call_tool(shared: &Arc<Shared>, params: ExecuteCommandParams) -> RpcResult<Value> {
    let args: CallToolParams = single_argument(protocol::CALL_TOOL, params.arguments, false)?
        .ok_or_else(|| RpcError::invalid_params("tether.callTool takes one argument: {\"tool\", \"arguments\"}"))?;
    let served =
        shared.served(args.profile.as_deref()).map_err(|e| RpcError::invalid_params(e.message().to_owned()))?;
    if !served.serves(&args.tool) {
        return Err(RpcError::invalid_params(CallError::UnknownTool(args.tool).to_string()));
    }
    let profile = served.profile;
    // Refuse rather than queue without bound: a queued call holds one of tower-lsp's handler
    // slots, and the didChange a running call waits for needs a free one.
    let Some(_admitted) = shared.calls.admit() else {
        return Err(request_failed(format!(
            "too many tether tool calls in flight ({}); try again when some have finished",
            shared.options.limits.max_admitted
        )));
    };
    let progress =
        Progress::start(shared, params.work_done_progress_params.work_done_token, format!("tether: {}", args.tool))
            .await;
    // Dropping this future (the client cancelled the request) tells the tool to stop.
    let cancel = Cancel::default();
    let _stop_on_drop = CancelOnDrop(cancel.clone());
    let tool = args.tool.clone();
    let result =
        shared.call_tool(profile, args.tool, args.arguments, cancel, Caller::Editor, client::EDITOR.to_owned()).await;
    let message = match &result {
        Ok(r) if r.is_error => "failed",
        _ => "done",
    };
    progress.finish(message).await;
    // Only a user who ran the command themselves is interrupted with a failure; an assistant
    // reads it in the result.
    if args.interactive {
        let failure = match &result {
            Ok(r) if r.is_error => Some(r.text.clone()),
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        };
        if let Some(text) = failure {
            shared.client.show_message(MessageType::ERROR, format!("tether {tool}: {text}")).await;
        }
    }
    match result {
        Ok(r) => Ok(call_tool_result(r)),
        Err(e) => Err(RpcError {
            code: tower_lsp::jsonrpc::ErrorCode::from(i64::from(e.code())),
            message: e.to_string().into(),
            data: e.data().cloned(),
        }),
    }
}

/// `tether.listTools {profile?}` → `{"tools": [...]}`, each tool as MCP lists it.
fn list_tools(shared: &Shared, params: ExecuteCommandParams) -> RpcResult<Value> {
    let args: ListToolsParams = single_argument(protocol::LIST_TOOLS, params.arguments, true)?.unwrap_or_default();
    let profile =
        shared.profile(args.profile.as_deref()).map_err(|e| RpcError::invalid_params(e.message().to_owned()))?;
    let tools: Vec<Value> = profile.tools(&shared.options.config).iter().map(|t| t.to_json()).collect();
    Ok(json!({ "tools": tools }))
}

/// The result in the shape of an MCP `CallToolResult`.
pub(crate) fn call_tool_result(r: CallResult) -> Value {
    let content: Vec<Value> = if r.items.is_empty() {
        vec![json!({"type": "text", "text": r.text})]
    } else {
        r.items
            .into_iter()
            .map(|item| match item {
                Item::Text(text) => json!({"type": "text", "text": text}),
                Item::Blob { uri, data, mime_type } => {
                    json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "blob": data}})
                }
            })
            .collect()
    };
    let mut v = json!({"content": content, "isError": r.is_error});
    if let Some(s) = r.structured {
        v["structuredContent"] = s;
    }
    v
}

/// Parses the command's one argument; `optional` allows none.
fn single_argument<T: DeserializeOwned>(
    command: &str,
    mut arguments: Vec<Value>,
    optional: bool,
) -> RpcResult<Option<T>> {
    match arguments.len() {
        0 if optional => Ok(None),
        1 => serde_json::from_value(arguments.remove(0))
            .map(Some)
            .map_err(|e| RpcError::invalid_params(format!("{command}: invalid argument: {e}"))),
        n => Err(RpcError::invalid_params(format!("{command} takes one argument (an object), got {n}"))),
    }
}

/// Cancels a tool call when the request handling it goes away.
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
