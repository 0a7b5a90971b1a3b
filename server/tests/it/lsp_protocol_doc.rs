//! `editors/protocol.md` and the server agree: every command, custom method and capability the
//! doc names in a `###` heading is one the server registers, announces, sends or reads, and the
//! other way round.

use std::collections::BTreeSet;

use crate::lsp_support::{editor_script, ChangeOrder, Session, Setup, Strictness};
use serde_json::{json, Value};
use tether::lsp::protocol;

const DOC: &str = include_str!("../../../editors/protocol.md");

/// The backquoted `###` headings of the `##` section titled `section`.
fn documented(section: &str) -> BTreeSet<String> {
    let mut current = "";
    let mut out = BTreeSet::new();
    for line in DOC.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            current = title.trim();
        } else if let Some(h) = line.strip_prefix("### ") {
            let name = h.trim().strip_prefix('`').and_then(|h| h.split('`').next());
            let name = name.unwrap_or_else(|| panic!("a ### heading in protocol.md is not a `name`: {h}"));
            if current == section {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn every_heading_belongs_to_a_known_section() {
    let sections = [
        "Commands",
        "Requests from the server to the client",
        "Requests and notifications from the client to the server",
        "Capabilities",
        "Initialization options",
    ];
    let all: usize = sections.iter().map(|s| documented(s).len()).sum();
    let headings = DOC.lines().filter(|l| l.starts_with("### ")).count();
    assert_eq!(all, headings, "a ### heading sits outside the known sections");
}

#[test]
fn documented_names_are_the_code_constants() {
    assert_eq!(documented("Commands"), set(protocol::COMMANDS));
    assert_eq!(documented("Requests from the server to the client"), set(protocol::CLIENT_METHODS));
    assert_eq!(documented("Requests and notifications from the client to the server"), set(protocol::SERVER_METHODS));
    let key = |name: &str| format!("experimental.{}.{name}", protocol::CAPABILITY_KEY);
    let caps: BTreeSet<String> = [
        key(protocol::SAVE_DOCUMENTS_CAPABILITY),
        key(protocol::DIAGNOSTICS_CAPABILITY),
        key(protocol::EDITOR_CONTEXT_CAPABILITY),
        key(protocol::LANGUAGE_REQUESTS_CAPABILITY),
        key(protocol::REVIEW_CAPABILITY),
        key(protocol::DISK_CHANGES_CAPABILITY),
        key(protocol::DISK_RELOADS_CAPABILITY),
        key(protocol::PROTOCOL_VERSION_CAPABILITY),
        key(protocol::MIN_PROTOCOL_VERSION_CAPABILITY),
    ]
    .into();
    assert_eq!(documented("Capabilities"), caps);
    assert_eq!(documented("Initialization options"), set(protocol::INIT_OPTIONS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_does_what_the_doc_names() {
    let s = Session::start(Setup {
        files: "//- a.txt\nalpha\n//- b.txt\nbravo\n",
        script: editor_script(Strictness::Strict, ChangeOrder::AfterAnswer),
        // Every client capability the doc names.
        capabilities: {
            let mut caps = crate::lsp_support::neovim_capabilities();
            for cap in documented("Capabilities") {
                let name = cap.rsplit('.').next().expect("name").to_owned();
                if name != protocol::PROTOCOL_VERSION_CAPABILITY {
                    caps["experimental"]["tether"][name] = json!(true);
                }
            }
            caps
        },
        // Review on, so that the change below is proposed first.
        initialization_options: json!({"review": {"mode": "ask"}}),
        ..Setup::default()
    })
    .await;
    // The commands it announces.
    let announced: BTreeSet<String> = s.init["capabilities"]["executeCommandProvider"]["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect();
    assert_eq!(announced, documented("Commands"));
    for command in documented("Commands") {
        let args = if command == protocol::CALL_TOOL {
            vec![json!({"tool": "read_file", "arguments": {"path": "a.txt"}})]
        } else {
            vec![]
        };
        s.execute(&command, args).await.unwrap_or_else(|e| panic!("{command}: {e}"));
    }
    // The custom methods it handles.
    for method in documented("Requests and notifications from the client to the server") {
        if method == protocol::PUBLISH_DIAGNOSTICS {
            // A notification: the diagnostics tool then lists what it carried.
            s.client.send(
                json!({"jsonrpc": "2.0", "method": method, "params": {"uri": s.uri("a.txt"), "version": null,
                "diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
                                 "message": "documented"}]}}),
            );
            let r = s.execute(protocol::CALL_TOOL, vec![json!({"tool": "diagnostics", "profile": "standard"})]).await;
            let r = r.expect("diagnostics");
            assert!(r.to_string().contains("documented"), "{method}: {r}");
            continue;
        }
        let r = s.client.request(&method, json!({"uri": s.uri("a.txt")})).await;
        assert!(r.is_ok(), "{method}: {r:?}");
    }
    // The server capabilities it announces under experimental.tether.
    let ours = &s.init["capabilities"]["experimental"][protocol::CAPABILITY_KEY];
    let keys: BTreeSet<String> = ours.as_object().expect("experimental.tether").keys().cloned().collect();
    let server_caps: BTreeSet<String> = documented("Capabilities")
        .into_iter()
        .filter_map(|c| c.rsplit('.').next().map(str::to_owned))
        .filter(|k| k == protocol::PROTOCOL_VERSION_CAPABILITY || k == protocol::MIN_PROTOCOL_VERSION_CAPABILITY)
        .collect();
    assert_eq!(keys, server_caps);
    assert_eq!(ours[protocol::PROTOCOL_VERSION_CAPABILITY], json!(protocol::PROTOCOL_VERSION));
    assert_eq!(ours[protocol::MIN_PROTOCOL_VERSION_CAPABILITY], json!(protocol::MIN_PROTOCOL_VERSION));
    // The requests it sends, given the client capability the doc names.
    s.open_from_disk("a.txt");
    let ops = json!({"ops": [{"op": "replace", "path": "a.txt", "old": "alpha", "new": "beta"}]});
    let r = s.call("plan", ops).await.expect("result");
    assert_eq!(r["isError"], Value::Bool(false), "{r}");
    for tool in [json!({"tool": "editor_context"}), json!({"tool": "symbols", "arguments": {"query": "x"}})] {
        let mut call = tool.clone();
        call["profile"] = json!("standard");
        s.execute(protocol::CALL_TOOL, vec![call]).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
    }
    // A change on disk under unsaved text: told with a notification.
    s.type_text("a.txt", 0, 0, "unsaved ");
    s.sync().await;
    std::fs::write(s.path("a.txt"), "beta\nfrom disk\n").expect("write");
    let disk_change = protocol::DISK_CHANGE;
    s.client.wait_for(disk_change, |n| n.iter().any(|n| n["method"] == disk_change)).await;
    // ... and under a buffer without unsaved text: told to reload.
    s.open_from_disk("b.txt");
    s.sync().await;
    std::fs::write(s.path("b.txt"), "bravo\nfrom disk\n").expect("write");
    let disk_reload = protocol::DISK_RELOAD;
    s.client.wait_for(disk_reload, |n| n.iter().any(|n| n["method"] == disk_reload)).await;
    for method in documented("Requests from the server to the client") {
        if method == disk_change || method == disk_reload {
            assert_eq!(s.client.notifications(&method).len(), 1, "{method}");
            continue;
        }
        assert_eq!(s.client.server_requests(&method).len(), 1, "{method}");
    }
    s.shutdown().await;
}
