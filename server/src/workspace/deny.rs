//! The deny list: paths inside the roots that no tool may read, list, search or change, and no
//! editor buffer of which any tool shows (secrets: `.env`, keys, certificates).
//!
//! A pattern without `/` matches a file or directory name anywhere (`.env`, `*.pem`), as in a
//! `.gitignore`; a pattern with `/` matches the path relative to its root (`config/secrets/**`).

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// The usual secrets files, which `--deny-secrets` (or `denySecrets` from an editor) hides:
/// environment files with secrets, private keys and certificates, credential files.
/// `.env.example` and friends stay visible.
pub const SECRETS: &[&str] = &[
    ".env",
    ".env.local",
    ".env.*.local",
    ".env.production",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    ".netrc",
];

/// A compiled deny list.
#[derive(Debug, Clone)]
pub struct Deny {
    patterns: Vec<String>,
    /// The patterns matched against a name, and their index in `patterns`.
    names: GlobSet,
    name_index: Vec<usize>,
    /// The patterns matched against the path relative to the root.
    paths: GlobSet,
    path_index: Vec<usize>,
}

impl PartialEq for Deny {
    fn eq(&self, other: &Deny) -> bool {
        self.patterns == other.patterns
    }
}

impl Eq for Deny {}

impl Default for Deny {
    /// Hides nothing: what a project keeps out of an assistant's reach is its own choice.
    fn default() -> Deny {
        Deny::none()
    }
}

impl Deny {
    /// The [`SECRETS`] patterns followed by `more`.
    pub fn secrets_and(more: impl IntoIterator<Item = String>) -> Result<Deny> {
        Deny::new(SECRETS.iter().map(|p| (*p).to_owned()).chain(more))
    }

    /// A list that hides nothing.
    pub fn none() -> Deny {
        Deny {
            patterns: Vec::new(),
            names: GlobSet::empty(),
            name_index: Vec::new(),
            paths: GlobSet::empty(),
            path_index: Vec::new(),
        }
    }

    /// Compiles `patterns`; an invalid glob is `invalid_input` naming it.
    pub fn new(patterns: impl IntoIterator<Item = String>) -> Result<Deny> {
        let patterns: Vec<String> = patterns.into_iter().filter(|p| !p.trim().is_empty()).collect();
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut name_index, mut path_index) = (Vec::new(), Vec::new());
        for (i, p) in patterns.iter().enumerate() {
            let glob = |pattern: &str| -> Result<Glob> {
                GlobBuilder::new(pattern)
                    .literal_separator(true)
                    // Windows opens `.ENV` as `.env`: a pattern must hide every spelling.
                    .case_insensitive(cfg!(windows))
                    .build()
                    .map_err(|e| Error::invalid(format!("deny pattern {p:?} is not a valid glob: {e}")))
            };
            if p.contains('/') {
                paths.add(glob(p.trim_start_matches('/'))?);
                path_index.push(i);
            } else {
                names.add(glob(p)?);
                name_index.push(i);
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| Error::invalid(format!("deny patterns: {e}")));
        Ok(Deny { names: build(names)?, paths: build(paths)?, patterns, name_index, path_index })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The pattern that hides `rel` (a path relative to its root), if any: `rel` itself, or any
    /// directory on the way to it.
    pub fn denies(&self, rel: &Path) -> Option<&str> {
        if self.patterns.is_empty() {
            return None;
        }
        let mut prefix = std::path::PathBuf::new();
        for component in rel.components() {
            prefix.push(component);
            if let Some(i) = self.names.matches(component.as_os_str()).first() {
                return Some(&self.patterns[self.name_index[*i]]);
            }
            if let Some(i) = self.paths.matches(&prefix).first() {
                return Some(&self.patterns[self.path_index[*i]]);
            }
        }
        None
    }

    /// Whether it hides nothing.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether `rel` itself (its name, or its whole relative path) is hidden, its parents
    /// already known not to be: what a walk asks of each entry, as it never enters a hidden
    /// directory.
    pub fn denies_entry(&self, rel: &Path) -> bool {
        !self.patterns.is_empty()
            && (rel.file_name().is_some_and(|n| self.names.is_match(n)) || self.paths.is_match(rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_anywhere_and_paths_from_the_root() {
        let deny =
            Deny::new(["*.pem".into(), ".env".into(), "config/secrets/**".into(), "/top.txt".into()]).expect("deny");
        let table: &[(&str, Option<&str>)] = &[
            ("server.pem", Some("*.pem")),
            ("a/b/server.pem", Some("*.pem")),
            (".env", Some(".env")),
            ("app/.env", Some(".env")),
            (".env.example", None),
            ("config/secrets/db.yml", Some("config/secrets/**")),
            ("other/config/secrets/db.yml", None),
            ("top.txt", Some("/top.txt")),
            ("a/top.txt", None),
            ("src/main.rs", None),
        ];
        for (rel, want) in table {
            assert_eq!(deny.denies(Path::new(rel)), *want, "{rel}");
        }
    }

    #[test]
    fn a_hidden_directory_hides_what_is_in_it() {
        let deny = Deny::new(["secrets".into()]).expect("deny");
        assert_eq!(deny.denies(Path::new("secrets/a.txt")), Some("secrets"));
        assert_eq!(deny.denies(Path::new("not-secrets/a.txt")), None);
    }

    #[test]
    fn the_secrets_list_hides_secrets_not_examples() {
        assert_eq!(Deny::default().denies(Path::new(".env")), None, "nothing is hidden unless asked");
        let deny = Deny::secrets_and([]).expect("deny");
        for hidden in [".env", "web/.env.local", ".env.test.local", "certs/tls.key", "id_ed25519"] {
            assert!(deny.denies(Path::new(hidden)).is_some(), "{hidden}");
        }
        for shown in [".env.example", ".env.sample", "src/keys.rs", "README.md"] {
            assert_eq!(deny.denies(Path::new(shown)), None, "{shown}");
        }
        assert!(Deny::new(["[".into()]).is_err());
    }
}
