//! MCP roots: turning the client's `file://` URIs into directories.
//!
//! Roots are deprecated in the newest MCP revision, but clients of the earlier ones use them to
//! scope a server, so tether honours them.
#![allow(deprecated)]

use std::path::PathBuf;

use rmcp::model::Root;

/// The existing directories named by `roots`; anything that is not a `file://` URI of a
/// directory is skipped with a warning.
pub fn paths_from_roots(roots: &[Root]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        match file_uri_to_path(&root.uri) {
            Some(p) if p.is_dir() => out.push(p),
            _ => tracing::warn!(uri = %root.uri, "ignoring a root that is not a local directory"),
        }
    }
    out
}

/// Decodes a `file://` URI (empty or `localhost` authority) to a path.
pub fn file_uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = percent_decode(rest)?;
    if bytes.contains(&0) {
        return None;
    }
    path_of(bytes)
}

/// The path a decoded `file://` URI path names: its bytes as they are on Unix.
#[cfg(unix)]
fn path_of(bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// The path a decoded `file://` URI path names on Windows: `/C:/w` is `C:\w` (the drive letter
/// in either case, `%3A` already decoded), and the path must be UTF-8.
#[cfg(windows)]
fn path_of(bytes: Vec<u8>) -> Option<PathBuf> {
    let text = String::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix('/')?;
    let drive = rest.as_bytes();
    if drive.len() < 2
        || !drive[0].is_ascii_alphabetic()
        || drive[1] != b':'
        || drive.get(2).is_some_and(|&b| b != b'/')
    {
        return None;
    }
    let mut path = rest.replace('/', "\\");
    if path.len() == 2 {
        path.push('\\');
    }
    Some(PathBuf::from(path))
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn decodes_file_uris() {
        let table = [
            ("file:///home/u/project", Some("/home/u/project")),
            ("file://localhost/srv/a%20b", Some("/srv/a b")),
            ("file:///caf%C3%A9", Some("/caf\u{e9}")),
            ("file://host/share", None),
            ("https://example.com/x", None),
            ("file:///bad%2", None),
            ("file:///nul%00", None),
        ];
        for (uri, want) in table {
            assert_eq!(file_uri_to_path(uri), want.map(PathBuf::from), "{uri}");
        }
    }

    #[cfg(windows)]
    #[test]
    fn decodes_file_uris() {
        let table = [
            ("file:///C:/Users/u/project", Some(r"C:\Users\u\project")),
            ("file:///c%3A/Users/u/a%20b", Some(r"c:\Users\u\a b")),
            ("file://localhost/D:/caf%C3%A9", Some("D:\\caf\u{e9}")),
            ("file:///C:", Some(r"C:\")),
            ("file:///C:/", Some(r"C:\")),
            ("file:///home/u/project", None),
            ("file:///C:x", None),
            ("file:///C:/caf%FF", None),
            ("file://host/share", None),
            ("https://example.com/x", None),
            ("file:///C:/bad%2", None),
            ("file:///C:/nul%00", None),
        ];
        for (uri, want) in table {
            assert_eq!(file_uri_to_path(uri), want.map(PathBuf::from), "{uri}");
        }
    }
}
