//! What the editor knows, for the assistant: its language servers' diagnostics, what the user is
//! looking at, and symbols (outline, definition, references, hover, rename).
//!
//! tether does not analyse code itself. Inside `tether lsp` the editor forwards what its other
//! language servers know ([`Editor`], implemented by `lsp/`); these tools turn it into tether's
//! own terms: paths inside the workspace, 1-based lines, and columns counted in characters.
//! Without an editor, or with one that does not forward a kind of knowledge, a tool fails with
//! `unsupported` naming what is missing, never with an empty answer that reads as "nothing".

pub mod context;
pub mod diagnostics;
pub mod rename;
pub mod symbols;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ropey::Rope;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{Context, Tool};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::text::{offset_to_position, position_to_offset, Offset, Position, PositionEncoding};

/// A range of an editor's positions, in the unit its answer states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
}

/// How severe a problem is, most severe first (the LSP order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

impl Severity {
    /// Its name in results and arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }

    /// The severity named `name`.
    pub fn parse(name: &str) -> Option<Severity> {
        [Severity::Error, Severity::Warning, Severity::Information, Severity::Hint]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// One problem as the editor reported it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// Where it is.
    pub span: Span,
    /// How severe.
    pub severity: Severity,
    /// The language server's code for it (`2322`, `reportAttributeAccessIssue`).
    pub code: Option<String>,
    /// Who reported it (`ts`, `Pyright`).
    pub source: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// The problems of one document, whole, as last reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    /// The document's real path.
    pub path: PathBuf,
    /// The document version the problems were computed for (`None`: a document not open, or an
    /// editor that could not tell).
    pub version: Option<i32>,
    /// The unit of the spans' columns.
    pub encoding: PositionEncoding,
    /// The problems.
    pub problems: Vec<Problem>,
}

/// An editor window showing a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The document's real path.
    pub path: PathBuf,
    /// The document's version, when the editor knows it.
    pub version: Option<i32>,
    /// Whether it has the focus.
    pub active: bool,
    /// The selections, primary first, with the text each holds (a cursor is an empty one).
    pub selections: Vec<(Span, String)>,
    /// The ranges on screen.
    pub visible: Vec<Span>,
}

/// What the user is looking at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The unit of the spans' columns.
    pub encoding: PositionEncoding,
    /// The visible editors.
    pub editors: Vec<Shown>,
}

/// A position in a document, to ask the language servers about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The document's real path.
    pub path: PathBuf,
    /// The position, in [`Editor::encoding`] units.
    pub position: Position,
}

/// What to ask the editor's language servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// Where the symbol at a position is defined.
    Definition(At),
    /// Where the symbol at a position is used (with its declaration or not).
    References(At, bool),
    /// The type and documentation of the symbol at a position.
    Hover(At),
    /// A document's symbols.
    Outline(PathBuf),
    /// The workspace's symbols matching a query.
    Workspace(String),
    /// Renaming the symbol at a position.
    Rename(At, String),
}

/// A place in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    /// The file's path as the language server named it.
    pub path: PathBuf,
    /// The range.
    pub span: Span,
}

/// A symbol, as an outline or a search lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// What it is (`function`, `class`, `variable`).
    pub kind: String,
    /// More about it (a signature), when the server gives it.
    pub detail: Option<String>,
    /// The symbol containing it, for a flat list.
    pub container: Option<String>,
    /// Where it is (its whole range, or its name's in a search).
    pub spot: Spot,
    /// The symbols inside it, for an outline.
    pub children: Vec<Symbol>,
}

/// The text edits a language server's rename makes in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdits {
    /// The file's path.
    pub path: PathBuf,
    /// Each range and its new text.
    pub edits: Vec<(Span, String)>,
}

/// What the language servers found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Places (definition, references).
    Spots(Vec<Spot>),
    /// Hover text (markdown), if any.
    Hover(Option<String>),
    /// Symbols.
    Symbols(Vec<Symbol>),
    /// A rename's edits (`None`: the servers had no rename for it).
    Edit(Option<Vec<FileEdits>>),
}

/// The editor's answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The unit of the answer's columns.
    pub encoding: PositionEncoding,
    /// The language servers that answered (empty: none serves the document).
    pub servers: Vec<String>,
    /// `false` while a server is still indexing: the answer may grow.
    pub complete: bool,
    /// What they found.
    pub found: Found,
}

/// An editor that forwards what its language servers know. Each method blocks until the editor
/// answers (bounded); an editor that does not forward that kind of knowledge fails with
/// `unsupported`.
pub trait Editor: Send + Sync {
    /// The unit of the positions tether sends the editor.
    fn encoding(&self) -> PositionEncoding;

    /// Every document's problems, as last reported.
    fn diagnostics(&self) -> Result<Vec<Reported>>;

    /// What the user is looking at now.
    fn view(&self) -> Result<View>;

    /// Asks the document's language servers.
    fn ask(&self, question: Question) -> Result<Answer>;
}

/// The editor of `ctx`, or `unsupported` saying there is none.
pub fn editor<'a>(ctx: &Context<'a>) -> Result<&'a dyn Editor> {
    ctx.editor.ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported,
            "no editor runs tether here: this tool answers from an editor's language servers, inside `tether lsp` \
             or a `tether mcp` attached to it",
        )
    })
}

/// Every tool of this module, listed by the standard profile when an editor runs tether.
#[rustfmt::skip]
pub const ALL: &[Tool] = &[
    diagnostics::TOOL,
    context::TOOL,
    symbols::SYMBOLS,
    symbols::DEFINITION,
    symbols::REFERENCES,
    symbols::HOVER,
    rename::TOOL,
];

/// The tool of this module named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    ALL.iter().find(|t| t.name == name)
}

/// A position given the way a model can: a line, and a column or the symbol's name on it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// The file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in characters. Optional when `symbol` is given.
    #[serde(default)]
    pub column: Option<u64>,
    /// The symbol's name as written on that line: tether finds its column (on a nearby line
    /// when it is not on `line`). With `column` too, the occurrence nearest that column.
    #[serde(default)]
    pub symbol: Option<String>,
}

/// A resolved [`Place`]: where to ask, and the name found there.
#[derive(Debug, Clone)]
pub struct Located {
    /// The question's position.
    pub at: At,
    /// The identifier at that position (`""` when there is none).
    pub name: String,
    /// The 1-based line and column used.
    pub line: usize,
    /// The 1-based column used.
    pub column: usize,
}

/// Characters that continue an identifier in most languages.
fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Finds `place` in its file: the column of its symbol on its line (or the nearest line within
/// three that has it), else its column.
pub fn locate(ctx: &Context<'_>, editor: &dyn Editor, place: &Place) -> Result<Located> {
    let path = ctx.vfs.resolve(&place.path)?;
    let file = ctx.vfs.read_text(&path)?;
    let rope = Rope::from_str(&file.text);
    let lines = rope.len_lines() - usize::from(file.text.ends_with('\n') || file.text.ends_with('\r'));
    let line = usize::try_from(place.line).unwrap_or(usize::MAX);
    if line == 0 || line > lines.max(1) {
        return Err(Error::invalid(format!("`line` must be between 1 and {}, got {}", lines.max(1), place.line)));
    }
    let line_text = |l: usize| -> String {
        let s = rope.line(l - 1).to_string();
        s.trim_end_matches(['\n', '\r']).to_owned()
    };
    let column = place.column.map(|c| usize::try_from(c).unwrap_or(usize::MAX));
    if column == Some(0) {
        return Err(Error::invalid("`column` is 1-based: give 1 or more"));
    }
    let (line, col) = match place.symbol.as_deref().map(str::trim) {
        Some("") => return Err(Error::invalid("`symbol` is empty")),
        Some(symbol) => {
            let mut found = None;
            // The given line first, then the nearest lines, earlier before later.
            for delta in 0..=3usize {
                for l in [line.checked_sub(delta), (delta > 0).then(|| line + delta)].into_iter().flatten() {
                    if l == 0 || l > lines {
                        continue;
                    }
                    let starts = occurrences(&line_text(l), symbol);
                    let best = match column {
                        Some(c) => starts.iter().copied().min_by_key(|s| {
                            let end = s + symbol.chars().count();
                            if (*s + 1..=end).contains(&c) {
                                0
                            } else {
                                c.abs_diff(s + 1)
                            }
                        }),
                        None => starts.first().copied(),
                    };
                    if let Some(s) = best {
                        found = Some((l, s + 1));
                        break;
                    }
                }
                if found.is_some() {
                    break;
                }
            }
            found.ok_or_else(|| {
                Error::new(
                    ErrorKind::NoMatch,
                    format!(
                        "`{symbol}` is not on line {line} of {} or the three lines around it; line {line} reads: {}",
                        path.given(),
                        line_text(line).trim()
                    ),
                )
                .with_path(path.given())
            })?
        }
        None => match column {
            Some(c) => (line, c),
            None => return Err(Error::invalid("give `symbol` (the name on that line) or `column`")),
        },
    };
    let text = line_text(line);
    let chars: Vec<char> = text.chars().collect();
    let col = col.min(chars.len() + 1);
    // The identifier around the column, for messages and renames.
    let at = (col - 1).min(chars.len());
    let mut s = at;
    while s > 0 && chars.get(s - 1).copied().is_some_and(is_ident) {
        s -= 1;
    }
    let mut e = at;
    while chars.get(e).copied().is_some_and(is_ident) {
        e += 1;
    }
    let name: String = chars[s..e].iter().collect();
    let byte = rope.line_to_byte(line - 1) + text.char_indices().nth(col - 1).map_or(text.len(), |(b, _)| b);
    let position = offset_to_position(&rope, Offset::new(byte), editor.encoding());
    Ok(Located { at: At { path: path.real().to_path_buf(), position }, name, line, column: col })
}

/// The 0-based char columns where `word` occurs in `line` as a whole identifier.
fn occurrences(line: &str, word: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (b, _) in line.match_indices(word) {
        let before = line[..b].chars().next_back();
        let after = line[b + word.len()..].chars().next();
        let bounded = |c: Option<char>| c.is_none_or(|c| !is_ident(c) || !word.chars().all(is_ident));
        if bounded(before) && bounded(after) {
            out.push(line[..b].chars().count());
        }
    }
    out
}

/// Turns editor positions into tether's: paths inside the workspace, 1-based lines and
/// character columns, reading each file once (from its buffer when open).
pub struct Places<'c, 'a> {
    ctx: &'c Context<'a>,
    encoding: PositionEncoding,
    texts: HashMap<PathBuf, Option<Rope>>,
}

/// A place in tether's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Where {
    /// The path as tether shows it (relative to its root), or absolute outside the workspace.
    pub path: String,
    /// Whether the file is inside the workspace (only then is its text read).
    pub inside: bool,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in characters (in the editor's unit outside the workspace).
    pub column: usize,
    /// 1-based end line.
    pub end_line: usize,
    /// 1-based end column.
    pub end_column: usize,
}

impl<'c, 'a> Places<'c, 'a> {
    /// Converts positions given in `encoding`.
    pub fn new(ctx: &'c Context<'a>, encoding: PositionEncoding) -> Places<'c, 'a> {
        Places { ctx, encoding, texts: HashMap::new() }
    }

    /// The text of `path` when it is a file inside the workspace.
    fn rope(&mut self, path: &Path) -> Option<&Rope> {
        let ctx = self.ctx;
        self.texts
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let p = ctx.vfs.resolve(&path.to_string_lossy()).ok()?;
                ctx.vfs.read_text(&p).ok().map(|f| Rope::from_str(&f.text))
            })
            .as_ref()
    }

    /// Whether `path` is inside the workspace but hidden by the deny list: such a place is left
    /// out of answers altogether (not even its name is shown).
    pub fn hidden(&self, path: &Path) -> bool {
        self.ctx.vfs.workspace().denied(path).is_some()
    }

    /// A 1-based line and character column for `pos` in `rope`.
    fn point(&self, rope: &Rope, pos: Position) -> (usize, usize) {
        let off = position_to_offset(rope, pos, self.encoding);
        let ch = rope.byte_to_char(off.get());
        let line = rope.char_to_line(ch);
        (line + 1, ch - rope.line_to_char(line) + 1)
    }

    /// `span` of `path` in tether's terms.
    pub fn place(&mut self, path: &Path, span: Span) -> Where {
        match self.rope(path).cloned() {
            Some(rope) => {
                let (line, column) = self.point(&rope, span.start);
                let (end_line, end_column) = self.point(&rope, span.end);
                Where { path: self.ctx.vfs.display(path), inside: true, line, column, end_line, end_column }
            }
            None => {
                let p = |p: Position| (p.line as usize + 1, p.character as usize + 1);
                let ((line, column), (end_line, end_column)) = (p(span.start), p(span.end));
                Where { path: path.display().to_string(), inside: false, line, column, end_line, end_column }
            }
        }
    }

    /// The text of 1-based `line` of `path`, without its line break, when inside the workspace.
    pub fn line_text(&mut self, path: &Path, line: usize) -> Option<String> {
        let rope = self.rope(path)?;
        let l = line.checked_sub(1).filter(|l| *l < rope.len_lines())?;
        Some(rope.line(l).to_string().trim_end_matches(['\n', '\r']).to_owned())
    }

    /// `place` as JSON (`path`, `line`, `column`, `end_line`, `end_column`).
    pub fn json(&mut self, path: &Path, span: Span) -> serde_json::Map<String, Value> {
        let s = self.place(path, span);
        let mut out = serde_json::Map::new();
        out.insert("path".into(), json!(s.path));
        out.insert("line".into(), json!(s.line));
        out.insert("column".into(), json!(s.column));
        out.insert("end_line".into(), json!(s.end_line));
        out.insert("end_column".into(), json!(s.end_column));
        if !s.inside {
            out.insert("outside_workspace".into(), json!(true));
        }
        out
    }
}

/// Whether `s` is one identifier (letters, digits, `_`, `$`, not starting with a digit).
fn identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| is_ident(c) && !c.is_ascii_digit()) && s.chars().all(is_ident)
}

/// What a text replacement's result adds when it looks like renaming an identifier by hand
/// (every pair replaces one identifier with another, `count` times in all, more than once) and
/// an editor's language servers could do it properly.
pub fn rename_hint<'s>(
    config: &Config,
    pairs: impl IntoIterator<Item = (&'s str, &'s str)>,
    count: usize,
) -> &'static str {
    let mut pairs = pairs.into_iter().peekable();
    let looks_like = pairs.peek().is_some() && pairs.all(|(old, new)| identifier(old) && identifier(new) && old != new);
    if config.editor && looks_like && count > 1 {
        "\n(renaming a symbol? `rename_symbol` renames its real uses in every file through the editor's language \
         server, and leaves strings, comments and other things of the same name alone)"
    } else {
        ""
    }
}

/// `unsupported` for an editor that does not forward `what` (`its diagnostics`), naming the
/// capability it would announce.
pub fn not_forwarded(what: &str, capability: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "this editor does not forward {what} to tether (it does not announce `experimental.tether.{capability}`); \
             the VS Code extension and the Neovim plugin do"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_identifiers_only() {
        assert_eq!(occurrences("let total = subtotal + total;", "total"), vec![4, 23]);
        assert_eq!(occurrences("a.b(a)", "a"), vec![0, 4]);
        assert_eq!(occurrences("x->y", "->"), vec![1]);
        assert!(occurrences("", "a").is_empty());
    }

    #[test]
    fn hints_rename_symbol_only_for_identifier_renames_with_an_editor() {
        let editor = Config { editor: true, ..Config::default() };
        assert!(!rename_hint(&editor, [("total", "sum")], 3).is_empty());
        assert!(!rename_hint(&editor, [("total", "sum"), ("$x", "_y")], 2).is_empty());
        assert!(rename_hint(&editor, [("total", "sum")], 1).is_empty(), "one occurrence is an edit");
        assert!(rename_hint(&editor, [("total = 1", "sum = 1")], 3).is_empty());
        assert!(rename_hint(&editor, [("2x", "y")], 3).is_empty());
        assert!(rename_hint(&editor, [], 3).is_empty());
        assert!(rename_hint(&Config::default(), [("total", "sum")], 3).is_empty(), "no editor, no language server");
    }

    #[test]
    fn severities_round_trip() {
        for s in ["error", "warning", "information", "hint"] {
            assert_eq!(Severity::parse(s).map(Severity::as_str), Some(s));
        }
        assert_eq!(Severity::parse("fatal"), None);
        assert!(Severity::Error < Severity::Hint);
    }
}
