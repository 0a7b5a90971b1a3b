//! The core error type.
//!
//! Every core operation fails with one [`Error`]: a machine-readable [`ErrorKind`] plus a message
//! written for the reader (a person or a model) that names the path or field involved. Messages are
//! lowercase and end without a period. Frontends (profiles, protocols) map kinds to their own
//! codes and texts; the core never formats for a protocol.

use std::fmt;

/// What went wrong, as a stable, protocol-neutral kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path does not exist.
    NotFound,
    /// The path exists but is not a regular file.
    NotAFile,
    /// The path exists but is not a directory.
    NotADirectory,
    /// The file is binary (or in an encoding the operation cannot edit).
    IsBinary,
    /// The file is larger than the operation allows without paging.
    TooLarge,
    /// The path leaves the workspace roots.
    PathEscape,
    /// An argument is missing, of the wrong type or out of range.
    InvalidInput,
    /// A search or edit found nothing to act on.
    NoMatch,
    /// An edit found several places where it expected one.
    AmbiguousMatch,
    /// A patch did not apply.
    PatchFailed,
    /// The text changed between reading and writing.
    Conflict,
    /// The editor declined a change (the user said no, or a preview was cancelled).
    Rejected,
    /// The server runs read-only and the operation would change something.
    ReadOnly,
    /// The operating system refused an operation.
    IoError,
    /// The operation ran past its time limit.
    Timeout,
    /// The output exceeded a limit.
    OutputLimit,
    /// A command is not allowed to run.
    CommandNotAllowed,
    /// The caller cancelled the call.
    Cancelled,
    /// The operation needs something this server does not have: an editor's knowledge (its
    /// diagnostics, selection or language servers) when no editor, or one that does not forward
    /// it, runs tether.
    Unsupported,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::NotFound,
        ErrorKind::NotAFile,
        ErrorKind::NotADirectory,
        ErrorKind::IsBinary,
        ErrorKind::TooLarge,
        ErrorKind::PathEscape,
        ErrorKind::InvalidInput,
        ErrorKind::NoMatch,
        ErrorKind::AmbiguousMatch,
        ErrorKind::PatchFailed,
        ErrorKind::Conflict,
        ErrorKind::Rejected,
        ErrorKind::ReadOnly,
        ErrorKind::IoError,
        ErrorKind::Timeout,
        ErrorKind::OutputLimit,
        ErrorKind::CommandNotAllowed,
        ErrorKind::Cancelled,
        ErrorKind::Unsupported,
    ];

    /// The snake_case name used on the wire by the `standard` profile.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::NotAFile => "not_a_file",
            ErrorKind::NotADirectory => "not_a_directory",
            ErrorKind::IsBinary => "is_binary",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::PathEscape => "path_escape",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::NoMatch => "no_match",
            ErrorKind::AmbiguousMatch => "ambiguous_match",
            ErrorKind::PatchFailed => "patch_failed",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Rejected => "rejected",
            ErrorKind::ReadOnly => "read_only",
            ErrorKind::IoError => "io_error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::OutputLimit => "output_limit",
            ErrorKind::CommandNotAllowed => "command_not_allowed",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A core failure: a kind, a message, and the user-given path it concerns, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<String>,
    /// For a `conflict` because a file changed between the tool's read and the write, which
    /// running the tool again on the newer text can resolve: the file's real path (see
    /// [`Error::stale`]).
    stale: Option<std::path::PathBuf>,
}

/// The core result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), path: None, stale: None }
    }

    /// A `conflict` on `path` (as the user gave it; `real` is the file it names): the file
    /// changed after the tool read it and before its change was written, so nothing was written.
    /// Frontends run such a call again on the newer text, where the change still applies when
    /// nothing it touches changed.
    pub fn stale(path: &str, real: &std::path::Path, message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Conflict,
            message: message.into(),
            path: Some(path.to_owned()),
            stale: Some(real.to_owned()),
        }
    }

    /// The real path of a [`Error::stale`] conflict's file: a new run on the newer text may
    /// resolve it.
    pub fn stale_path(&self) -> Option<&std::path::Path> {
        self.stale.as_deref()
    }

    /// Attaches the path (as the user wrote it) that the error concerns.
    pub fn with_path(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// An `invalid_input` error.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidInput, message)
    }

    /// Maps an I/O error on `path` (as the user wrote it) to the matching kind.
    pub fn io(err: &std::io::Error, path: &str) -> Error {
        use std::io::ErrorKind as Io;
        let (kind, what) = match err.kind() {
            Io::NotFound => (ErrorKind::NotFound, "no such file or directory".to_owned()),
            Io::NotADirectory => (ErrorKind::NotADirectory, "not a directory".to_owned()),
            Io::IsADirectory => (ErrorKind::NotAFile, "is a directory".to_owned()),
            Io::InvalidFilename => (ErrorKind::InvalidInput, "path is too long".to_owned()),
            Io::PermissionDenied => (ErrorKind::IoError, "permission denied".to_owned()),
            // Another program holds the file (on Windows, a sharing violation the sink waited out).
            Io::ResourceBusy => (ErrorKind::Conflict, lowercase_first(&err.to_string())),
            _ => (ErrorKind::IoError, lowercase_first(&err.to_string())),
        };
        Error::new(kind, format!("{path}: {what}")).with_path(path)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, written for the reader.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The path the error concerns, as the user gave it.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Builds an [`Error`] with a formatted message: `err!(NotFound, "{path}: no such file")`.
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)+) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)+))
    };
}
