//! The bridge: `tether mcp` reaching the editor's `tether lsp` over a private Unix socket.
//!
//! Only this module knows the socket and its format. A `tether lsp` with workspace roots listens
//! on `<runtime dir>/<pid>.sock` and describes itself in `<runtime dir>/<pid>.json`
//! ([`discovery`]); the runtime directory is `$XDG_RUNTIME_DIR/tether`, else `/run/user/<uid>/tether`
//! or `/tmp/tether-<uid>` (chosen without the environment, and all looked in by a `tether mcp`
//! without `XDG_RUNTIME_DIR`), always 0700 and ours. A connection is served only when
//!
//! 1. the peer's effective uid is ours (`SO_PEERCRED` on Linux, `getpeereid` on macOS), and
//! 2. its first line is a JSON object `{"token": "<64 hex digits>", "profile": "<name>"}` whose
//!    token equals the discovery file's (compared in constant time);
//!
//! anything else is closed without a reply. After that line the connection carries MCP
//! (newline-delimited JSON-RPC) to the same `McpServer` the standalone server runs, whose host
//! sends every call through the lsp's own call path (`bridge/listen.rs`). `tether mcp` finds the
//! instance serving its root and forwards calls to it (`bridge/attach.rs`).

mod attach;
pub mod discovery;
mod listen;

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::json;

pub use attach::SocketConnector;
pub use discovery::{runtime_dir, Instance};
pub use listen::{Endpoint, MakeServer};

/// The first line a client sends.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// The instance's token, from its discovery file.
    pub token: String,
    /// The profile the client serves (the lsp serves its tools under the same names).
    pub profile: String,
}

/// The longest first line the endpoint reads before giving up on a connection.
pub const MAX_HELLO: u64 = 1024;

/// A fresh token: 256 bits from the operating system's random source, as hex.
pub fn new_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    // The system's generator: getrandom(2) on Linux, BCryptGenRandom/ProcessPrng on Windows.
    getrandom::fill(&mut bytes).map_err(io::Error::other)?;
    let mut hex = String::with_capacity(64);
    for b in bytes {
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

/// Whether `given` equals `expected`, in time that depends only on their lengths (so a client
/// cannot find the token byte by byte by timing refusals).
pub fn tokens_match(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `tether mcp --attach`: whether and to which `tether lsp` to attach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Attach {
    /// The live instance serving the root (deepest root, then newest), if any.
    #[default]
    Auto,
    /// Never: always serve on disk.
    Never,
    /// Only the instance with this pid (when it serves the root).
    Pid(u32),
}

impl FromStr for Attach {
    type Err = String;

    fn from_str(s: &str) -> Result<Attach, String> {
        match s {
            "auto" => Ok(Attach::Auto),
            "never" => Ok(Attach::Never),
            n => n.parse().map(Attach::Pid).map_err(|_| format!("`{n}` is not auto, never or a process id")),
        }
    }
}

/// `tether status`: the live instances (never their tokens) and the discovery files passed
/// over with why, as text or JSON.
pub fn status(as_json: bool, ide: &IdeStatus) -> io::Result<String> {
    let dir = runtime_dir()?;
    let found = discovery::scan(&dir);
    Ok(if as_json { status_json(&dir, &found, ide) } else { status_text(&dir, &found, ide) })
}

/// Which IDE protocols the `tether lsp` of a pid and roots serves: per assistant CLI, its key, a
/// line for people, and the same as JSON (the lsp layer knows; the caller passes it in).
pub type IdeStatus = dyn Fn(u32, &[std::path::PathBuf]) -> Vec<(&'static str, String, serde_json::Value)>;

/// `tether status --json`: `{"runtime_dir", "instances": [{pid, roots, socket, socket_exists,
/// profile, version, started, ide}], "ignored": [{file, reason}]}`; `ide` holds, per assistant CLI
/// (`claude-code`, `gemini-cli`), the `state` of its IDE protocol: `serving`, `standing aside`
/// (for `server`, `pid`) or `not serving`.
fn status_json(dir: &Path, found: &discovery::Scan, ide_status: &IdeStatus) -> String {
    let instances: Vec<_> = found
        .live
        .iter()
        .map(|i| {
            let ide: serde_json::Map<String, serde_json::Value> =
                ide_status(i.pid, &i.roots).into_iter().map(|(key, _, v)| (key.to_owned(), v)).collect();
            json!({"pid": i.pid, "roots": i.roots, "socket": i.socket, "socket_exists": crate::sys::endpoint_exists(&i.socket),
                   "profile": i.profile, "version": i.version, "started": i.started, "ide": ide})
        })
        .collect();
    let ignored: Vec<_> = found.ignored.iter().map(|i| json!({"file": i.file, "reason": i.why.to_string()})).collect();
    serde_json::to_string_pretty(&json!({"runtime_dir": dir, "instances": instances, "ignored": ignored}))
        .unwrap_or_default()
}

fn status_text(dir: &Path, found: &discovery::Scan, ide_status: &IdeStatus) -> String {
    let mut out = String::new();
    if found.live.is_empty() {
        let _ = writeln!(out, "no tether lsp is running (runtime directory {})", dir.display());
    }
    for i in &found.live {
        let roots: Vec<_> = i.roots.iter().map(|r| r.display().to_string()).collect();
        let _ = writeln!(out, "pid {}  tether {}  profile {}", i.pid, i.version, i.profile);
        let _ = writeln!(
            out,
            "  serves  {}",
            if roots.is_empty() { "(no workspace folder)".into() } else { roots.join(", ") }
        );
        let missing = if crate::sys::endpoint_exists(&i.socket) { "" } else { " (missing: nothing can attach)" };
        let _ = writeln!(out, "  socket  {}{missing}", i.socket.display());
        for (_, line, _) in ide_status(i.pid, &i.roots) {
            let _ = writeln!(out, "  ide     {line}");
        }
    }
    for i in &found.ignored {
        let _ = writeln!(out, "ignored {}: {}", i.file.display(), i.why);
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn tokens_are_256_random_bits_in_hex() {
        let (a, b) = (new_token().expect("token"), new_token().expect("token"));
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[test]
    fn tokens_match_only_when_equal() {
        let t = new_token().expect("token");
        assert!(tokens_match(&t, &t));
        assert!(!tokens_match("", &t));
        assert!(!tokens_match(&t[..63], &t));
        let mut wrong = t.clone().into_bytes();
        wrong[63] = if wrong[63] == b'0' { b'1' } else { b'0' };
        assert!(!tokens_match(std::str::from_utf8(&wrong).expect("utf8"), &t));
    }

    #[test]
    fn status_lists_live_instances_and_the_files_passed_over() {
        let dir = Path::new("/nonexistent/run/tether");
        let found = discovery::Scan {
            live: vec![Instance {
                pid: 42,
                roots: vec!["/w/app".into()],
                socket: "/nonexistent/run/tether/42.sock".into(),
                profile: "standard".into(),
                token: "secret".into(),
                version: "1.2.3".into(),
                started: 7,
            }],
            ignored: vec![discovery::Ignored {
                file: "/nonexistent/run/tether/9.json".into(),
                why: discovery::Skipped::Dead { removed: true },
            }],
        };
        let ide = |pid: u32, roots: &[std::path::PathBuf]| {
            let line = format!("standing aside for pid {} of {}", pid + 1, roots[0].display());
            vec![("cli", line, json!({"state": "standing aside", "pid": pid + 1}))]
        };
        expect![[r#"
            {
              "ignored": [
                {
                  "file": "/nonexistent/run/tether/9.json",
                  "reason": "the process is gone (a stale file); removed"
                }
              ],
              "instances": [
                {
                  "ide": {
                    "cli": {
                      "pid": 43,
                      "state": "standing aside"
                    }
                  },
                  "pid": 42,
                  "profile": "standard",
                  "roots": [
                    "/w/app"
                  ],
                  "socket": "/nonexistent/run/tether/42.sock",
                  "socket_exists": false,
                  "started": 7,
                  "version": "1.2.3"
                }
              ],
              "runtime_dir": "/nonexistent/run/tether"
            }"#]]
        .assert_eq(&status_json(dir, &found, &ide));
        expect![[r#"
            pid 42  tether 1.2.3  profile standard
              serves  /w/app
              socket  /nonexistent/run/tether/42.sock (missing: nothing can attach)
              ide     standing aside for pid 43 of /w/app
            ignored /nonexistent/run/tether/9.json: the process is gone (a stale file); removed"#]]
        .assert_eq(&status_text(dir, &found, &ide));
        let none = discovery::Scan::default();
        expect![[r#"
            {
              "ignored": [],
              "instances": [],
              "runtime_dir": "/nonexistent/run/tether"
            }"#]]
        .assert_eq(&status_json(dir, &none, &ide));
        expect!["no tether lsp is running (runtime directory /nonexistent/run/tether)"]
            .assert_eq(&status_text(dir, &none, &ide));
    }

    #[test]
    fn attach_parses() {
        assert_eq!("auto".parse(), Ok(Attach::Auto));
        assert_eq!("never".parse(), Ok(Attach::Never));
        assert_eq!("1234".parse(), Ok(Attach::Pid(1234)));
        assert!("sometimes".parse::<Attach>().is_err());
    }
}
