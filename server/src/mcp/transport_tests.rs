//! Tests of the MCP transport: framing, limits and closed pipes.

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::*;

/// A server-side transport over an in-memory pipe, and the client's ends of it.
fn pair() -> (
    LineTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>,
    tokio::io::DuplexStream,
    tokio::io::BufReader<tokio::io::DuplexStream>,
) {
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    (LineTransport::new(server_in, server_out), client_out, tokio::io::BufReader::new(client_in))
}

async fn answer(from: &mut tokio::io::BufReader<tokio::io::DuplexStream>) -> Value {
    let mut line = String::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), from.read_line(&mut line));
    read.await.expect("an answer within 10 s").expect("read");
    serde_json::from_str(&line).expect("JSON")
}

#[tokio::test]
async fn messages_are_read_across_reads_with_a_bom_and_crlf() {
    let (mut t, mut to_server, _) = pair();
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let writer = tokio::spawn(async move {
        to_server.write_all(b"\n\xEF\xBB\xBF").await.expect("write");
        // A message split over several writes, then one ending in CRLF.
        to_server.write_all(&ping[..10]).await.expect("write");
        to_server.write_all(&ping[10..]).await.expect("write");
        to_server.write_all(b"\n").await.expect("write");
        to_server.write_all(br#"{"jsonrpc":"2.0","id":"two","method":"ping"}"#).await.expect("write");
        to_server.write_all(b"\r\n").await.expect("write");
    });
    for id in [json_id(1), json_id("two")] {
        assert_eq!(request_id(t.receive().await), id);
    }
    writer.await.expect("writer");
    assert!(t.receive().await.is_none(), "the stream ended");
}

/// The id of `message`, which must be a request.
fn request_id(message: Option<RxJsonRpcMessage<RoleServer>>) -> RequestId {
    match message {
        Some(JsonRpcMessage::Request(request)) => request.id,
        other => panic!("not a request: {other:?}"),
    }
}

fn json_id(v: impl Into<Value>) -> RequestId {
    serde_json::from_value(v.into()).expect("id")
}

#[tokio::test]
async fn a_malformed_request_is_answered_under_its_own_id() {
    let (mut t, mut to_server, mut from_server) = pair();
    let lines = concat!(
        "this is not JSON\n",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"error":"not an error object"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":7}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#,
        "\n",
    );
    to_server.write_all(lines.as_bytes()).await.expect("write");
    // The second and third are dropped, the others answered, and the last is the next message.
    assert_eq!(request_id(t.receive().await), json_id(10));
    let parse_error = answer(&mut from_server).await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    let answer_9 = answer(&mut from_server).await;
    assert_eq!(answer_9["id"], 9, "{answer_9}");
    assert_eq!(answer_9["error"]["code"], -32600, "{answer_9}");
    let reason = answer_9["error"]["message"].as_str().expect("a message");
    assert!(reason.starts_with("Invalid request: tools/call: "), "{reason}");
    // An id that is neither a string nor an integer is answered with a null one.
    let answer_null = answer(&mut from_server).await;
    assert_eq!(answer_null["error"]["code"], -32600, "{answer_null}");
    assert!(answer_null.get("id").is_none_or(Value::is_null), "{answer_null}");
}

#[tokio::test]
async fn a_line_that_is_not_json_is_answered_with_a_parse_error() {
    let (mut t, mut to_server, mut from_server) = pair();
    let lines = concat!(
        "this is not JSON\n",
        "{\"jsonrpc\": \"2.0\", \"id\": 3,\n",
        " \t\r\n",
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
        "\n"
    );
    to_server.write_all(lines.as_bytes()).await.expect("write");
    assert_eq!(request_id(t.receive().await), json_id(4), "still serving");
    // Two answers, both with a null id since neither line can be trusted to carry one; the
    // blank line gets none.
    for _ in 0..2 {
        let answer = answer(&mut from_server).await;
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        let reason = answer["error"]["message"].as_str().expect("a message");
        assert!(reason.starts_with("Parse error: the line is not JSON: "), "{reason}");
    }
}

/// The server's end after it answered `initialize` agreeing to protocol `version`.
async fn agreed(
    version: &'static str,
) -> (
    LineTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>,
    tokio::io::DuplexStream,
    tokio::io::BufReader<tokio::io::DuplexStream>,
) {
    let (mut t, to_server, mut from_server) = pair();
    let mut init = rmcp::model::InitializeResult::default();
    init.protocol_version = serde_json::from_value(json!(version)).expect("version");
    t.send(JsonRpcMessage::response(ServerResult::InitializeResult(init), json_id(0))).await.expect("sent");
    assert_eq!(answer(&mut from_server).await["result"]["protocolVersion"], version);
    (t, to_server, from_server)
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// The empty result rmcp answers a ping with.
fn pong(id: &RequestId) -> TxJsonRpcMessage<RoleServer> {
    JsonRpcMessage::response(ServerResult::EmptyResult(rmcp::model::EmptyResult {}), id.clone())
}

/// The ids of a batch's answers and the error codes among them, in the order written.
fn ids_and_codes(answers: &Value) -> Vec<(Value, Value)> {
    let answers = answers.as_array().unwrap_or_else(|| panic!("an array: {answers}"));
    answers.iter().map(|a| (a["id"].clone(), a["error"]["code"].clone())).collect()
}

#[tokio::test]
async fn a_batch_in_a_2025_03_26_session_is_answered_as_one_array() {
    let (mut t, mut to_server, mut from_server) = agreed("2025-03-26").await;
    let batch = json!([
        ping(1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ping(2),
        5,
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": 7},
        ping(2),
    ]);
    to_server.write_all(format!("{batch}\n").as_bytes()).await.expect("write");
    // Its messages reach rmcp one at a time, in order.
    let first = request_id(t.receive().await);
    assert!(matches!(t.receive().await, Some(JsonRpcMessage::Notification(_))));
    let second = request_id(t.receive().await);
    assert_eq!((first.clone(), second.clone()), (json_id(1), json_id(2)));
    // rmcp answers in any order; nothing is written until the last answer is in.
    t.send(pong(&second)).await.expect("held");
    t.send(pong(&first)).await.expect("sent");
    let answers = answer(&mut from_server).await;
    let null = Value::Null;
    assert_eq!(
        ids_and_codes(&answers),
        [
            (null.clone(), json!(-32600)),
            (json!(3), json!(-32600)),
            (json!(4), json!(-32600)),
            (json!(2), json!(-32600)),
            (json!(2), null.clone()),
            (json!(1), null),
        ],
        "the element that is no message, initialize, a malformed request, a reused id, then the answers: {answers}"
    );
    assert_eq!(answers[5]["result"], json!({}), "{answers}");

    // A batch of notifications gets no answer, an empty one a single error.
    let quiet = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    to_server.write_all(format!("{quiet}\n[]\n").as_bytes()).await.expect("write");
    assert!(matches!(t.receive().await, Some(JsonRpcMessage::Notification(_))));
    to_server.write_all(format!("{}\n", ping(9)).as_bytes()).await.expect("write");
    assert_eq!(request_id(t.receive().await), json_id(9));
    let empty = answer(&mut from_server).await;
    assert_eq!((empty["id"].clone(), empty["error"]["code"].clone()), (Value::Null, json!(-32600)), "{empty}");
    // A single request is answered alone, as always.
    t.send(pong(&json_id(9))).await.expect("sent");
    assert_eq!(answer(&mut from_server).await["id"], 9);
}

#[tokio::test]
async fn a_batch_stops_waiting_for_a_cancelled_request() {
    let (mut t, mut to_server, mut from_server) = agreed("2025-03-26").await;
    to_server.write_all(format!("{}\n", json!([ping(1), ping(2)])).as_bytes()).await.expect("write");
    let (one, _two) = (request_id(t.receive().await), request_id(t.receive().await));
    t.send(pong(&one)).await.expect("held");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    to_server.write_all(format!("{cancel}\n").as_bytes()).await.expect("write");
    assert!(matches!(t.receive().await, Some(JsonRpcMessage::Notification(_))));
    // rmcp sends nothing for a cancelled request; the batch is answered without it.
    assert_eq!(ids_and_codes(&answer(&mut from_server).await), [(json!(1), Value::Null)]);
}

#[tokio::test]
async fn a_batch_is_refused_before_initialize_and_on_other_revisions() {
    let batch = format!("{}\n{}\n", json!([ping(1), ping(2)]), ping(3));
    let (mut t, mut to_server, mut from_server) = pair();
    to_server.write_all(batch.as_bytes()).await.expect("write");
    assert_eq!(request_id(t.receive().await), json_id(3));
    let refused = answer(&mut from_server).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null, "{refused}");
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (mut t, mut to_server, mut from_server) = agreed(version).await;
        to_server.write_all(batch.as_bytes()).await.expect("write");
        assert_eq!(request_id(t.receive().await), json_id(3), "{version}");
        let refused = answer(&mut from_server).await;
        assert_eq!(refused["error"]["code"], -32600, "{version}: {refused}");
        let reason = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(reason.contains("only in a session on MCP 2025-03-26"), "{version}: {reason}");
    }
}

#[tokio::test]
async fn a_receive_dropped_mid_line_loses_nothing() {
    let (mut t, mut to_server, _) = pair();
    let ping = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    to_server.write_all(&ping[..20]).await.expect("write");
    // rmcp drops `receive` whenever another event wins its select; half a line is read by now.
    let early = tokio::time::timeout(std::time::Duration::from_millis(50), t.receive()).await;
    assert!(early.is_err(), "no message yet");
    to_server.write_all(&ping[20..]).await.expect("write");
    to_server.write_all(b"\n").await.expect("write");
    let message = tokio::time::timeout(std::time::Duration::from_secs(10), t.receive())
        .await
        .expect("the whole line arrived, not just its second half");
    assert_eq!(request_id(message), json_id(5));
}

#[tokio::test]
async fn a_line_over_the_limit_is_skipped_whole() {
    let (mut t, mut to_server, _) = pair();
    t.max = 1 << 20;
    let writer = tokio::spawn(async move {
        // Over the limit by far, so that it spans many reads.
        let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#, "y".repeat(3 << 20));
        to_server.write_all(big.as_bytes()).await.expect("write");
        to_server.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await.expect("write");
    });
    assert_eq!(request_id(t.receive().await), json_id(2));
    writer.await.expect("writer");
}

#[tokio::test]
async fn sent_messages_arrive_whole_and_in_order() {
    let (mut t, _to_server, mut from_server) = pair();
    let long = "a line\n".repeat(json::LONG);
    // Written by one task each, as rmcp does; the reader drains the pipe meanwhile.
    let mut tasks = Vec::new();
    for i in 0..3 {
        let text = if i == 1 { long.clone() } else { format!("message {i}") };
        tasks
            .push(tokio::spawn(t.send(JsonRpcMessage::error(ErrorData::internal_error(text, None), Some(json_id(i))))));
    }
    for i in 0..3 {
        let answer = answer(&mut from_server).await;
        assert_eq!(answer["id"], i);
        let expected = if i == 1 { long.clone() } else { format!("message {i}") };
        assert_eq!(answer["error"]["message"], expected.as_str());
    }
    for task in tasks {
        task.await.expect("task").expect("sent");
    }
    t.close().await.expect("close");
    let refused = t.send(JsonRpcMessage::error(ErrorData::internal_error("late", None), None)).await;
    assert_eq!(refused.expect_err("closed").kind(), io::ErrorKind::NotConnected);
}
