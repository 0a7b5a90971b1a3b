//! Text a model escaped once too often.
//!
//! A model that writes its tool arguments as JSON sometimes escapes a string twice, so that
//! `old_string` arrives with a backslash and an `n` where the file has a line break, `\t` for a
//! tab, `\"` for a quote, `\\` for a backslash. [`unescape`] undoes one such level.

/// The escape sequences undone, as written and as meant.
const SEQUENCES: [(&str, char); 6] =
    [("\\n", '\n'), ("\\t", '\t'), ("\\r", '\r'), ("\\\"", '"'), ("\\'", '\''), ("\\\\", '\\')];

/// `text` with one level of escaping undone, or `None` when it has no escape sequence. A
/// backslash before any other character is kept as it is.
pub fn unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match SEQUENCES.iter().find(|(seq, _)| tail.starts_with(seq)) {
            Some(&(seq, c)) => {
                out.push(c);
                rest = &tail[seq.len()..];
                changed = true;
            }
            None => {
                out.push('\\');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// The escape sequences `text` uses, as written (`\n`, `\"`...), each once.
pub fn sequences_in(text: &str) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        let tail = &rest[i..];
        match SEQUENCES.iter().find(|(seq, _)| tail.starts_with(seq)) {
            Some(&(seq, _)) => {
                if !found.contains(&seq) {
                    found.push(seq);
                }
                rest = &tail[seq.len()..];
            }
            None => rest = &tail[1..],
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        let table = [
            ("plain", None),
            ("a\\nb", Some("a\nb")),
            ("\\tx = \\\"y\\\";", Some("\tx = \"y\";")),
            ("c:\\\\dir", Some("c:\\dir")),
            // `\\n` is an escaped backslash then `n`, not a line break.
            ("\\\\n", Some("\\n")),
            // Other sequences are kept.
            ("\\d+ \\w", None),
            ("\\d\\n", Some("\\d\n")),
        ];
        for (text, want) in table {
            assert_eq!(unescape(text).as_deref(), want, "{text:?}");
        }
        assert_eq!(sequences_in("a\\nb\\n\\\\n \\x \\\""), vec!["\\n", "\\\\", "\\\""]);
    }
}
