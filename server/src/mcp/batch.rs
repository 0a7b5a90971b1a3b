//! JSON-RPC batches, which MCP has in one revision only: 2025-03-26 ("MCP implementations MAY
//! support sending JSON-RPC batches, but MUST support receiving JSON-RPC batches"; 2025-06-18
//! removed them).
//!
//! A session that agreed to 2025-03-26 takes a batch as JSON-RPC 2.0 says: every element is
//! handled as if it had come alone (concurrently, as single requests are), the answers to its
//! requests come back together as one array in the order they are ready (JSON-RPC leaves the order
//! free; each answer carries its request's id), a batch of only notifications and responses gets
//! no answer, and an empty array gets one `-32600` (Invalid Request). A session on any other
//! revision gets `-32600` for a batch, a message its revision does not have. The stdio transport
//! ([`super::transport`]) and the HTTP guard ([`super::http`]) each carry this out with what their
//! transport offers; the rules they share are here.

use rmcp::model::{ErrorData, ProtocolVersion, RequestId};
use serde_json::Value;

/// Whether a session on protocol `version` takes batches.
pub(crate) fn accepted_in(version: &ProtocolVersion) -> bool {
    *version == ProtocolVersion::V_2025_03_26
}

/// The answer to an empty array: JSON-RPC 2.0 calls it an invalid request, and answers it alone.
pub(crate) fn empty() -> ErrorData {
    ErrorData::invalid_request("Invalid request: an empty batch (JSON array)", None)
}

/// The answer to a batch in a session that does not take them; `instead` says what to send.
pub(crate) fn refused(instead: &str) -> ErrorData {
    let reason = format!(
        "Invalid request: a batch (JSON array) is accepted only in a session on MCP 2025-03-26, the one \
         revision with batches; {instead}"
    );
    ErrorData::invalid_request(reason, None)
}

/// The answer to a request whose id another request of an unanswered batch already has: its
/// answer could not be told from the other's.
pub(crate) fn id_in_use(id: &RequestId) -> ErrorData {
    ErrorData::invalid_request(format!("Invalid request: id {id} is already used by an unanswered request"), None)
}

/// One element of a batch, before it is handled.
pub(crate) enum Element {
    /// A message to handle as if it had come alone.
    Message(Value),
    /// An element refused as it stands: the id to answer under (when it has one) and the error.
    Refused(Option<RequestId>, ErrorData),
}

/// Sorts out what no message of any batch may be: something other than an object, and
/// `initialize` (which "MUST NOT be part of a JSON-RPC batch": the session already exists).
pub(crate) fn element(value: Value) -> Element {
    if !value.is_object() {
        let reason = "Invalid request: a batch element must be a JSON-RPC message (an object)";
        return Element::Refused(None, ErrorData::invalid_request(reason, None));
    }
    if value.get("method").and_then(Value::as_str) == Some("initialize") {
        let reason = "Invalid request: initialize must not be part of a batch";
        return Element::Refused(request_id(&value), ErrorData::invalid_request(reason, None));
    }
    Element::Message(value)
}

/// The id of a request (an element with a method and a string or integer id).
pub(crate) fn request_id(value: &Value) -> Option<RequestId> {
    value.get("method")?;
    serde_json::from_value(value.get("id")?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn elements() {
        let table = [
            (json!(1), Err(None)),
            (json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), Err(None)),
            (json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}}), Err(Some(json!(4)))),
            (json!({"jsonrpc": "2.0", "method": "initialize"}), Err(None)),
            (json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}), Ok(())),
            (json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Ok(())),
            (json!({"jsonrpc": "2.0", "id": 6, "result": {}}), Ok(())),
        ];
        for (value, want) in table {
            let got = match element(value.clone()) {
                Element::Message(m) => {
                    assert_eq!(m, value);
                    Ok(())
                }
                Element::Refused(id, error) => {
                    assert_eq!(error.code.0, -32600, "{value}");
                    Err(id.map(|id| serde_json::to_value(id).expect("id")))
                }
            };
            assert_eq!(got, want, "{value}");
        }
    }

    #[test]
    fn only_2025_03_26_takes_batches() {
        for version in ProtocolVersion::KNOWN_VERSIONS {
            assert_eq!(accepted_in(version), version.as_str() == "2025-03-26", "{version}");
        }
    }
}
