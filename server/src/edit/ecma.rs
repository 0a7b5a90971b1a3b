//! ECMAScript (JavaScript) regular expressions and replacement strings, on `fancy-regex`.
//!
//! Some tool contracts take their patterns in JavaScript syntax, which models write from habit:
//! lookahead and lookbehind, backreferences (`\1`, `\k<name>`), ASCII `\d`/`\w`, a `.` that stops
//! at every line terminator, `[^]`, `\cX`, `\uXXXX`, identity escapes such as `\/`, and a `{`
//! that is literal when it starts no quantifier. [`translate`] rewrites such a pattern into the
//! syntax of `fancy-regex` (which adds lookaround and backreferences to the `regex` crate), and
//! [`build`] compiles it with JavaScript's `m` flag: `^` and `$` match at every line boundary.
//!
//! Known differences that remain: `\b` and case folding follow Unicode rather than JavaScript's
//! ASCII and `toUpperCase` rules, and the `u`/`v`-flag-only syntax (`\p{...}` aside) is not
//! interpreted.
//!
//! [`Template`] is JavaScript's replacement string plus the sed-style references models also use:
//! `$1`–`$9` and `\1`–`\9` insert a group, `$0`, `\0` and `$&` the whole match, `$<name>` a named
//! group, `$$` a literal `$`. A reference to a group the pattern lacks is an error, never a
//! silent empty string.

use fancy_regex::{Captures, Regex, RegexBuilder};

/// Characters JavaScript's `\s` matches (`WhiteSpace` and `LineTerminator`), as class items.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// JavaScript's line terminators, which `.` does not match.
const JS_LINE_TERMINATORS: &str = r"\n\r\x{2028}\x{2029}";

/// Compiles the ECMAScript pattern `src` in multiline mode, optionally case-insensitive.
pub fn build(src: &str, case_insensitive: bool) -> Result<Regex, String> {
    let translated = translate(src)?;
    // The flag goes inline: the builder's switch does not reach lookaround in every version.
    let flags = if case_insensitive { "(?mi)" } else { "(?m)" };
    RegexBuilder::new(&format!("{flags}{translated}")).build().map_err(|e| format!("invalid regex /{src}/: {e}"))
}

/// Rewrites the ECMAScript pattern `src` in `fancy-regex` syntax.
pub fn translate(src: &str) -> Result<String, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 16);
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\\' => {
                let Some(&e) = chars.get(i) else {
                    return Err(format!("invalid regex /{src}/: `\\` at the end of the pattern"));
                };
                i += 1;
                i += escape(&chars, i, e, in_class, &mut out);
            }
            '[' if !in_class => {
                // `[^]` is any character and `[]` none, in JavaScript; both are errors elsewhere.
                if chars.get(i) == Some(&'^') && chars.get(i + 1) == Some(&']') {
                    out.push_str(r"[\s\S]");
                    i += 2;
                } else if chars.get(i) == Some(&']') {
                    out.push_str(r"[^\s\S]");
                    i += 1;
                } else {
                    in_class = true;
                    out.push('[');
                    if chars.get(i) == Some(&'^') {
                        out.push('^');
                        i += 1;
                    }
                    // A `]` first in a class is the end of an empty class in JavaScript, handled
                    // above; anything else starts the class normally.
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            // Characters that start nested classes or set operations in the target syntax are
            // plain characters inside a JavaScript class.
            '[' | '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.get(i) == Some(&'-') => {
                out.push_str(r"\-");
            }
            '.' if !in_class => {
                out.push_str(&format!("[^{JS_LINE_TERMINATORS}]"));
            }
            ']' | '}' if !in_class => {
                out.push('\\');
                out.push(c);
            }
            '{' if !in_class => {
                // A `{` that does not start `{n}`, `{n,}` or `{n,m}` is literal in JavaScript.
                let len = quantifier_len(&chars[i..]);
                if len == 0 {
                    out.push_str(r"\{");
                } else {
                    out.push('{');
                    out.extend(&chars[i..i + len]);
                    i += len;
                }
            }
            '#' | ' ' if !in_class => {
                // Literal in JavaScript; escaped so that no verbose mode can change them.
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    if in_class {
        return Err(format!("invalid regex /{src}/: unterminated character class"));
    }
    Ok(out)
}

/// Writes the translation of the escape `\e` (whose following characters start at `chars[at]`)
/// and returns how many of those following characters it used.
fn escape(chars: &[char], at: usize, e: char, in_class: bool, out: &mut String) -> usize {
    let class = |inner: &str, negated: bool| -> String {
        match (in_class, negated) {
            (true, false) => inner.to_owned(),
            (true, true) | (false, true) => format!("[^{inner}]"),
            (false, false) => format!("[{inner}]"),
        }
    };
    match e {
        'd' => out.push_str(&class("0-9", false)),
        'D' => out.push_str(&class("0-9", true)),
        'w' => out.push_str(&class("A-Za-z0-9_", false)),
        'W' => out.push_str(&class("A-Za-z0-9_", true)),
        's' => out.push_str(&class(JS_SPACE, false)),
        'S' => out.push_str(&class(JS_SPACE, true)),
        'b' if in_class => out.push_str(r"\x08"),
        'c' => match chars.get(at).filter(|c| c.is_ascii_alphabetic()) {
            Some(l) => {
                out.push_str(&format!(r"\x{:02X}", (*l as u32) % 32));
                return 1;
            }
            None => out.push_str(r"\\c"),
        },
        '0' if !chars.get(at).is_some_and(char::is_ascii_digit) => out.push_str(r"\x00"),
        'u' => {
            let hex: String = chars.iter().skip(at).take(4).collect();
            if hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                out.push_str(&format!(r"\x{{{hex}}}"));
                return 4;
            }
            if chars.get(at) == Some(&'{') {
                out.push_str(r"\x");
                return 0;
            }
            out.push('u');
        }
        'x' => {
            let hex: String = chars.iter().skip(at).take(2).collect();
            if hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                out.push_str(&format!(r"\x{hex}"));
                return 2;
            }
            out.push('x');
        }
        // Escapes the target syntax shares with JavaScript.
        'n' | 'r' | 't' | 'f' | 'v' | 'b' | 'B' | 'k' | 'p' | 'P' | '1'..='9' => {
            if e == 'v' {
                out.push_str(r"\x0B");
            } else {
                out.push('\\');
                out.push(e);
            }
        }
        // Any other escaped character stands for itself (an identity escape such as `\/`).
        other => push_literal(other, out),
    }
    0
}

/// Writes `c` so that it matches itself.
fn push_literal(c: char, out: &mut String) {
    if c.is_ascii_punctuation() || c == ' ' {
        out.push('\\');
    }
    out.push(c);
}

/// The length of a quantifier body after `{` (`2}`, `2,}`, `2,5}`), or 0 when there is none.
fn quantifier_len(rest: &[char]) -> usize {
    let digits = |from: usize| rest[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let n = digits(0);
    if n == 0 {
        return 0;
    }
    let mut at = n;
    if rest.get(at) == Some(&',') {
        at += 1;
        at += digits(at);
    }
    if rest.get(at) == Some(&'}') {
        at + 1
    } else {
        0
    }
}

/// One piece of a replacement string.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Group(usize),
    Named(String),
}

/// A parsed replacement string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `s`. Every `$` or `\` that starts no reference is literal, as in JavaScript.
    pub fn parse(s: &str) -> Template {
        let chars: Vec<char> = s.chars().collect();
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            let (piece, used) = match (c, next) {
                ('$', Some('$')) => {
                    lit.push('$');
                    i += 2;
                    continue;
                }
                ('$', Some('&')) => (Piece::Group(0), 2),
                ('$' | '\\', Some(d @ '0'..='9')) => (Piece::Group(d as usize - '0' as usize), 2),
                ('$', Some('<')) => match chars[i + 2..].iter().position(|&c| c == '>') {
                    Some(end) if end > 0 => (Piece::Named(chars[i + 2..i + 2 + end].iter().collect()), end + 3),
                    _ => {
                        lit.push(c);
                        i += 1;
                        continue;
                    }
                },
                _ => {
                    lit.push(c);
                    i += 1;
                    continue;
                }
            };
            if !lit.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut lit)));
            }
            pieces.push(piece);
            i += used;
        }
        if !lit.is_empty() {
            pieces.push(Piece::Literal(lit));
        }
        Template { pieces }
    }

    /// Checks that every group the template names exists in `re`.
    pub fn check(&self, re: &Regex) -> Result<(), String> {
        let groups = re.captures_len() - 1;
        for p in &self.pieces {
            match p {
                Piece::Group(n) if *n > groups => {
                    let has = match groups {
                        0 => "no capture groups".to_owned(),
                        1 => "only 1 capture group".to_owned(),
                        g => format!("only {g} capture groups"),
                    };
                    return Err(format!(
                        "newText refers to group {n}, but the pattern has {has}; wrap the part to keep in \
                         parentheses, or write $$ for a literal $"
                    ));
                }
                Piece::Named(name) if !re.capture_names().flatten().any(|n| n == name) => {
                    return Err(format!("newText refers to group <{name}>, which the pattern does not name"));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Appends the expansion for one match; a group that took no part in it adds nothing.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `(pattern, haystack, expected matches)`.
    #[test]
    fn matches_like_javascript() {
        let table: &[(&str, &str, &[&str])] = &[
            (r"\d+", "a12\u{0663}b", &["12"]),
            (r"\w+", "caf\u{e9}", &["caf"]),
            (r"^(.*)$", "one\ntwo", &["one", "two"]),
            (r"a.c", "a\rc abc", &["abc"]),
            (r"a.c", "abc a\nc", &["abc"]),
            (r"[^]+", "x\ny", &["x\ny"]),
            (r"foo(?=bar)", "foobaz foobar", &["foo"]),
            (r"(?<!x)y", "xy zy", &["y"]),
            (r"(\w)\1", "abccd", &["cc"]),
            (r"(?<q>['\x22])\w+\k<q>", "'a\" 'b'", &["'b'"]),
            (r"a{", "a{b", &["a{"]),
            (r"x{2}", "xxx", &["xx"]),
            (r"\/path\/", "a/path/b", &["/path/"]),
            (r"\u0041\x42", "zAB", &["AB"]),
            (r"[\d-]+", "a1-2b", &["1-2"]),
            (r"[\w.]+@", "me.x@y", &["me.x@"]),
            (r"[a&&b]", "&", &["&"]),
            (r"\cJ", "a\nb", &["\n"]),
            (r"a # b", "a # b", &["a # b"]),
        ];
        for (pattern, hay, want) in table {
            let re = build(pattern, false).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            let got: Vec<&str> = re.find_iter(hay).map(|m| m.expect("match").as_str()).collect();
            assert_eq!(&got, want, "/{pattern}/ on {hay:?}");
        }
        let re = build("HELLO", true).expect("ci");
        assert!(re.is_match("say hello").expect("match"));
    }

    #[test]
    fn invalid_patterns_are_errors() {
        for bad in ["(", "[a", "a\\", "a)"] {
            let err = build(bad, false).expect_err(bad);
            assert!(err.starts_with("invalid regex"), "{bad}: {err}");
        }
    }

    #[test]
    fn templates() {
        let re = build(r"(\w+)=(?<v>\d)", false).expect("regex");
        let caps = re.captures("k=1").expect("ok").expect("match");
        let table = [
            (r#""\1""#, r#""k""#),
            ("$2<-$1", "1<-k"),
            ("[$0|\\0|$&]", "[k=1|k=1|k=1]"),
            ("$$1 $x \\n", "$1 $x \\n"),
            ("$<v>", "1"),
            ("$<", "$<"),
        ];
        for (t, want) in table {
            let t = Template::parse(t);
            t.check(&re).expect("groups exist");
            let mut out = String::new();
            t.expand(&caps, &mut out);
            assert_eq!(out, want);
        }
        let none = build(".*", false).expect("regex");
        let err = Template::parse(r"\1").check(&none).expect_err("no group");
        assert!(err.starts_with("newText refers to group 1, but the pattern has no capture groups"), "{err}");
        assert!(Template::parse("$<w>").check(&re).is_err());
        assert!(Template::parse("$0 $&").check(&none).is_ok());
    }
}
