//! Regex replacement templates: `$1`, `\1`, `${name}`, `$0`, `\0`, `$&` and `$$`.
//!
//! A template is parsed and checked against its regex before anything is replaced, so that a
//! reference to a group the pattern does not have is an error naming it, never a silent empty
//! string (the `regex` crate's own expansion gives `$1a` the meaning "group `1a`" and expands an
//! unknown group to nothing: both have bitten everyone once).
//!
//! The forms:
//! - `$N`, `\N`, `${N}`: group N (all the digits that follow); `$0`, `\0`, `$&`: the whole match;
//! - `${name}`: the named group `name`;
//! - `$$`: a literal `$`. Any other `$` is an error, so a template never means something else
//!   than it says; every backslash not followed by a digit is literal.

use regex::{Captures, Regex};

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Text copied as is.
    Literal(String),
    /// A numbered group (0 is the whole match).
    Group(usize),
    /// A named group.
    Named(String),
}

/// A parsed replacement template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `s`; the error says what is wrong and where, without naming the argument.
    pub fn parse(s: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            let at = s.len() - rest.len();
            let after = &rest[c.len_utf8()..];
            let (piece, used) = match c {
                '$' => parse_dollar(after).ok_or_else(|| bad_dollar(s, at))?,
                '\\' => match digits(after) {
                    Some((n, len)) => (Piece::Group(n.map_err(|_| too_big(&rest[..1 + len]))?), len),
                    None => {
                        lit.push(c);
                        rest = after;
                        continue;
                    }
                },
                _ => {
                    lit.push(c);
                    rest = after;
                    continue;
                }
            };
            rest = &after[used..];
            match piece {
                Piece::Literal(t) => lit.push_str(&t),
                p => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut lit)));
                    }
                    pieces.push(p);
                }
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Literal(lit));
        }
        Ok(Template { pieces })
    }

    /// Checks that every group the template names exists in `re`.
    pub fn check(&self, re: &Regex) -> Result<(), String> {
        let groups = re.captures_len() - 1;
        for p in &self.pieces {
            match p {
                Piece::Group(n) if *n > groups => {
                    let has = match groups {
                        0 => "no groups".to_owned(),
                        1 => "only 1 group".to_owned(),
                        g => format!("only {g} groups"),
                    };
                    return Err(format!(
                        "refers to group {n}, but `pattern` has {has} (write `$$` for a literal dollar sign)"
                    ));
                }
                Piece::Named(name) if !re.capture_names().flatten().any(|n| n == name) => {
                    let names: Vec<&str> = re.capture_names().flatten().collect();
                    let has = if names.is_empty() {
                        "no named groups".to_owned()
                    } else {
                        format!("only {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
                    };
                    return Err(format!("refers to group `{name}`, but `pattern` has {has}"));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The template's text when it refers to no group (so every match gets the same text).
    pub fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Literal(t) => out.push_str(t),
                _ => return None,
            }
        }
        Some(out)
    }

    /// Appends the expansion for one match to `out`. A group that did not take part in the match
    /// expands to nothing.
    pub fn expand(&self, caps: &Captures<'_>, out: &mut String) {
        for p in &self.pieces {
            match p {
                Piece::Literal(t) => out.push_str(t),
                Piece::Group(n) => out.push_str(caps.get(*n).map_or("", |m| m.as_str())),
                Piece::Named(name) => out.push_str(caps.name(name).map_or("", |m| m.as_str())),
            }
        }
    }
}

/// The leading ASCII digits of `s` as a number (or an overflow) and their length.
fn digits(s: &str) -> Option<(Result<usize, std::num::ParseIntError>, usize)> {
    let len = s.bytes().take_while(u8::is_ascii_digit).count();
    (len > 0).then(|| (s[..len].parse(), len))
}

/// What follows a `$`: the piece and how many bytes after the `$` it used.
fn parse_dollar(after: &str) -> Option<(Piece, usize)> {
    match after.chars().next()? {
        '$' => Some((Piece::Literal("$".to_owned()), 1)),
        '&' => Some((Piece::Group(0), 1)),
        '0'..='9' => {
            let (n, len) = digits(after)?;
            Some((Piece::Group(n.ok()?), len))
        }
        '{' => {
            let close = after.find('}')?;
            let inner = &after[1..close];
            let piece = if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
                Piece::Group(inner.parse().ok()?)
            } else if is_name(inner) {
                Piece::Named(inner.to_owned())
            } else {
                return None;
            };
            Some((piece, close + 1))
        }
        _ => None,
    }
}

/// Whether `s` is a group name: a letter or `_`, then letters, digits or `_`.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn bad_dollar(s: &str, at: usize) -> String {
    let shown: String = s[at..].chars().take(12).collect();
    format!(
        "`{shown}` at character {} is not a group reference; write `$1`, `\\1` or `${{name}}` for a group, \
         `$0` or `$&` for the whole match, `$$` for a literal dollar sign",
        s[..at].chars().count() + 1
    )
}

fn too_big(shown: &str) -> String {
    format!("`{shown}` is not a group this pattern can have")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        let re = Regex::new(r"(?<key>\w+)=(\w+)(x)?").expect("regex");
        // (template, expansion of the match "a=1", or the start of the error).
        let table = [
            ("$2 <- $1", Ok("1 <- a")),
            (r"\2 <- \1", Ok("1 <- a")),
            ("${key}:${2}", Ok("a:1")),
            ("[$0]", Ok("[a=1]")),
            (r"[\0]", Ok("[a=1]")),
            ("[$&]", Ok("[a=1]")),
            ("$$1 costs $$", Ok("$1 costs $")),
            ("$1a", Ok("aa")),
            (r"C:\dir\", Ok(r"C:\dir\")),
            ("<$3>", Ok("<>")),
            ("caf\u{e9} \u{1F600}", Ok("caf\u{e9} \u{1F600}")),
            ("$4", Err("refers to group 4, but `pattern` has only 3 groups")),
            (r"\9", Err("refers to group 9")),
            ("${value}", Err("refers to group `value`, but `pattern` has only `key`")),
            ("$name", Err("`$name` at character 1 is not a group reference")),
            ("cost: $", Err("`$` at character 7 is not a group reference")),
            ("${1", Err("`${1` at character 1")),
            ("${a-b}", Err("`${a-b}` at character 1")),
            ("$99999999999999999999999", Err("`$9999999")),
            (r"\99999999999999999999999", Err(r"`\99999999999999999999999` is not a group")),
        ];
        let caps = re.captures("a=1").expect("match");
        for (template, want) in table {
            let got = Template::parse(template).and_then(|t| {
                t.check(&re)?;
                let mut out = String::new();
                t.expand(&caps, &mut out);
                Ok(out)
            });
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{template}"),
                (Err(got), Err(want)) => assert!(got.starts_with(want), "{template}: {got}"),
                (got, want) => panic!("{template}: got {got:?}, want {want:?}"),
            }
        }
        assert_eq!(Template::parse("plain $$").expect("ok").as_literal().as_deref(), Some("plain $"));
        assert_eq!(Template::parse("$1").expect("ok").as_literal(), None);
        let none = Regex::new("x").expect("regex");
        let err = Template::parse("${n}").expect("ok").check(&none).expect_err("no names");
        assert_eq!(err, "refers to group `n`, but `pattern` has no named groups");
    }
}
