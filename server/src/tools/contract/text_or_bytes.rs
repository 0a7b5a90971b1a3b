//! A file read whole, as text or, when it is binary, as bytes with a MIME type (the filesystem
//! profile's `read_file`, which returns a binary file as base64 rather than failing).

use crate::error::{ErrorKind, Result};
use crate::tools::Context;
use crate::workspace::SandboxPath;

/// A file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// The open buffer's text, or the file decoded.
    Text(String),
    /// The bytes of a binary file on disk.
    Binary {
        /// The bytes.
        bytes: Vec<u8>,
        /// The MIME type its extension names (`application/octet-stream` when it names none).
        mime: &'static str,
    },
}

/// Reads `path` whole: the open buffer or the decoded file, or its bytes when it is binary.
pub fn read_content(ctx: &Context<'_>, path: &SandboxPath) -> Result<Content> {
    match ctx.vfs.read_text(path) {
        Ok(file) => Ok(Content::Text(file.text)),
        Err(e) if e.kind() == ErrorKind::IsBinary => {
            let bytes = ctx.vfs.read_bytes(path)?;
            Ok(Content::Binary { bytes, mime: mime_of(path.path()) })
        }
        Err(e) => Err(e),
    }
}

/// The MIME type of a binary file, by its extension.
fn mime_of(p: &std::path::Path) -> &'static str {
    let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "ico" => "image/x-icon",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "wasm" => "application/wasm",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        _ => "application/octet-stream",
    }
}
