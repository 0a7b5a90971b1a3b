//! Document sync in-process: thousands of incremental changes sent as fast as possible stay in
//! order (tower-lsp runs handlers concurrently), in utf-8 and utf-16, over emoji, CJK and CRLF;
//! versions, dirty tracking and close.

use crate::lsp_support::editor::{did_change, offset_to_pos};
use crate::lsp_support::{neovim_capabilities, Session, Setup, PATIENCE};
use serde_json::json;
use tether::text::PositionEncoding;
use tower_lsp::lsp_types::Range;

/// A small deterministic generator (xorshift64*), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Pieces of inserted text: every width of char, every line break, and nothing.
const PIECES: &[&str] =
    &["a", "xyz", "\u{1F600}", "\u{4E2D}\u{6587}", "\r\n", "\n", "\r", "\u{E9}", "\u{1F389}x", "", "e\u{301}", "  "];

/// An offset LSP can name: on a char boundary and not between the `\r` and `\n` of a CRLF.
fn nameable(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if at > 0 && text.as_bytes()[at - 1] == b'\r' && text.as_bytes().get(at) == Some(&b'\n') {
        at -= 1;
    }
    at
}

/// A random change to `text`, as an LSP range in `enc` (or a whole-text replacement), applied
/// to `text` as the reference.
fn random_change(rng: &mut Rng, text: &mut String, enc: PositionEncoding) -> (Option<Range>, String) {
    let mut insert = String::new();
    for _ in 0..rng.below(4) {
        insert.push_str(PIECES[rng.below(PIECES.len())]);
    }
    if rng.below(200) == 0 {
        *text = insert.repeat(20);
        return (None, text.clone());
    }
    let start = nameable(text, rng.below(text.len() + 1));
    // Grow while small, shrink when large, so the document stays a few KiB.
    let span = if text.len() > 4096 { 64 } else { 12 };
    let end = nameable(text, start + rng.below(span)).max(start);
    let range = Range::new(offset_to_pos(text, start, enc), offset_to_pos(text, end, enc));
    text.replace_range(start..end, &insert);
    (Some(range), insert)
}

async fn stress(enc: PositionEncoding, concurrency: usize, seed: u64) {
    let mut caps = neovim_capabilities();
    caps["general"]["positionEncodings"] = match enc {
        PositionEncoding::Utf8 => json!(["utf-8"]),
        _ => json!(["utf-16"]),
    };
    let s = Session::start(Setup { capabilities: caps, concurrency, ..Setup::default() }).await;
    assert_eq!(s.editor.encoding(), enc);
    let uri = s.uri("stress.txt");
    let mut text = "h\u{E9}llo \u{1F600} w\u{F6}rld\r\n\u{4E2D}\u{6587} line\nthird\r\nlast \u{1F389}".repeat(8);
    s.client.send(s.editor.open(&uri, &text, 0));
    let mut rng = Rng(seed);
    let mut checks = Vec::new();
    for version in 1..=2500 {
        let changes: Vec<_> = (0..1 + rng.below(3)).map(|_| random_change(&mut rng, &mut text, enc)).collect();
        s.client.send(did_change(&uri, version, &changes));
        // Pipelined: the server answers after applying every change sent before the request.
        let rx = s.client.send_request("tether/debugDocument", json!({ "uri": uri }));
        checks.push((version, text.clone(), rx));
    }
    for (version, want, rx) in checks {
        let msg = tokio::time::timeout(PATIENCE, rx).await.expect("answer in time").expect("answer");
        let got = &msg["result"];
        assert_eq!(got["version"], version, "{enc:?} concurrency {concurrency}");
        assert!(got["text"] == want.as_str(), "{enc:?} concurrency {concurrency}: text differs at version {version}");
    }
    // A tool call sees the final text too.
    let r = s.call("read_file", json!({"path": "stress.txt", "limit": 100000})).await.expect("result");
    let shown = crate::lsp_support::text(&r);
    let first_line = text.split(['\n', '\r']).next().unwrap_or_default();
    assert!(shown.contains(first_line), "{shown}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_changes_stay_in_order_utf16() {
    stress(PositionEncoding::Utf16, 4, 0x5EED_0001).await; // tower-lsp's default concurrency
    stress(PositionEncoding::Utf16, tether::lsp::CONCURRENCY_LEVEL, 0x5EED_0002).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_changes_stay_in_order_utf8() {
    stress(PositionEncoding::Utf8, 4, 0x5EED_0003).await;
    stress(PositionEncoding::Utf8, tether::lsp::CONCURRENCY_LEVEL, 0x5EED_0004).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dirty_follows_disk_changes_and_saves() {
    let files = "//- same.txt\nsame\n//- differs.txt\non disk\n";
    let s = Session::start(Setup { files, ..Setup::default() }).await;
    std::fs::write(s.path("bom.txt"), b"\xEF\xBB\xBFwith bom\n").expect("write");
    // (file, buffer text at open, dirty)
    let table = [
        ("same.txt", "same\n", false),
        ("differs.txt", "in the buffer\n", true),
        ("bom.txt", "with bom\n", false),
        ("missing.txt", "never saved\n", true),
    ];
    for (rel, text, dirty) in table {
        s.open(rel, text);
        assert_eq!(s.server_copy(rel).await, Some((1, text.to_owned(), dirty)), "{rel}");
    }
    s.type_text("same.txt", 0, 0, "x");
    assert_eq!(s.server_copy("same.txt").await.map(|d| d.2), Some(true));
    let save = s.editor.save(&s.uri("same.txt")).expect("saved");
    s.client.send(save);
    assert_eq!(s.server_copy("same.txt").await, Some((2, "xsame\n".to_owned(), false)));
    s.client.send(s.editor.close(&s.uri("same.txt")));
    assert_eq!(s.server_copy("same.txt").await, None);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_whose_version_goes_backwards_are_rejected() {
    let s = Session::start(Setup::default()).await;
    let uri = s.uri("a.txt");
    s.open("a.txt", "abc");
    let r = |a, b| {
        Some(Range::new(
            offset_to_pos("abc", a, PositionEncoding::Utf8),
            offset_to_pos("abc", b, PositionEncoding::Utf8),
        ))
    };
    s.client.send(did_change(&uri, 5, &[(r(0, 1), "A".into())]));
    s.client.send(did_change(&uri, 4, &[(r(1, 2), "B".into())]));
    s.client.send(did_change(&uri, 5, &[(r(2, 3), "C".into())]));
    assert_eq!(s.server_copy("a.txt").await.map(|d| (d.0, d.1)), Some((5, "Abc".to_owned())));
    // A change to a document that is not open is ignored too.
    s.client.send(did_change(&s.uri("other.txt"), 1, &[(None, "x".into())]));
    assert_eq!(s.server_copy("other.txt").await, None);
    s.shutdown().await;
}
