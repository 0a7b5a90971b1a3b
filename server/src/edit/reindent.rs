//! Re-indenting a replacement to the block it replaces.
//!
//! When `old_string` matched only after its indentation was ignored, the model's indentation and
//! the file's differ (two spaces against four, spaces against tabs, or a block shifted right). The
//! replacement is written in the model's indentation, so each of its lines is moved into the
//! file's: an indent that some line of `old_string` had takes that line's indent in the file;
//! a deeper or shallower one is measured against the shallowest line of `old_string` in the
//! model's indent unit and rebuilt in the file's unit.

/// The leading whitespace of `line`.
pub fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// `new` (lines split by `\n`) re-indented from `old`'s indentation to `found`'s. `old` and
/// `found` have the same lines up to indentation (and what the matcher ignored); blank lines
/// carry no indentation and are left as they are.
pub fn reindent(old: &str, new: &str, found: &str) -> String {
    let pairs: Vec<(&str, &str)> = old
        .split('\n')
        .zip(found.split('\n'))
        .filter(|(o, _)| !o.trim().is_empty())
        .map(|(o, f)| (indent_of(o), indent_of(f)))
        .collect();
    let Some(&(old_base, file_base)) = pairs.iter().min_by_key(|(o, _)| o.len()) else {
        return new.to_owned();
    };
    if pairs.iter().all(|(o, f)| o == f) {
        return new.to_owned();
    }
    // The model's indent unit and the file's: the smallest step below the base in `old`, and
    // what the file has at that step.
    let unit = pairs
        .iter()
        .filter_map(|(o, f)| {
            let step = o.strip_prefix(old_base).filter(|s| !s.is_empty())?;
            let file_step = f.strip_prefix(file_base).filter(|s| !s.is_empty())?;
            Some((step.len(), file_step))
        })
        .min_by_key(|(n, _)| *n);
    let mut out = String::with_capacity(new.len() + new.len() / 4);
    for (i, line) in new.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        let ni = indent_of(line);
        out.push_str(&map_indent(ni, &pairs, old_base, file_base, unit));
        out.push_str(&line[ni.len()..]);
    }
    out
}

/// The file's indent for the model's indent `ni`.
fn map_indent(
    ni: &str,
    pairs: &[(&str, &str)],
    old_base: &str,
    file_base: &str,
    unit: Option<(usize, &str)>,
) -> String {
    if let Some((_, f)) = pairs.iter().find(|(o, _)| *o == ni) {
        return (*f).to_owned();
    }
    if let Some(extra) = ni.strip_prefix(old_base) {
        // Deeper than the base: rebuild the extra depth in the file's unit.
        return match unit {
            Some((n, file_unit)) => {
                let (steps, rest) = (extra.len() / n, extra.len() % n);
                let rest = &extra[char_floor(extra, extra.len() - rest)..];
                format!("{file_base}{}{rest}", file_unit.repeat(steps))
            }
            None => format!("{file_base}{extra}"),
        };
    }
    if old_base.starts_with(ni) {
        // Shallower than the base: take the missing depth off the file's base indent.
        let missing = old_base.len() - ni.len();
        let cut = match unit {
            Some((n, file_unit)) => missing.div_ceil(n) * file_unit.len(),
            None => missing,
        };
        return file_base[..char_floor(file_base, file_base.len().saturating_sub(cut))].to_owned();
    }
    // Indented with other characters than `old_string` (tabs against spaces): keep it as typed.
    ni.to_owned()
}

/// The char boundary of `s` at or before byte `i`: indents are measured in bytes, and one may
/// hold a multi-byte space (a no-break space is whitespace to `trim_start`).
fn char_floor(s: &str, i: usize) -> usize {
    (0..=i.min(s.len())).rev().find(|&b| s.is_char_boundary(b)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        // (old, new, found in the file, expected replacement).
        let table = [
            // The brief's example: two-space model indent, four-space file.
            ("def f():\n  return 1", "def f():\n  return 2", "def f():\n    return 1", "def f():\n    return 2"),
            // A new, deeper line is rebuilt in the file's unit.
            ("if a:\n  b()", "if a:\n  if c:\n    b()", "if a:\n    b()", "if a:\n    if c:\n        b()"),
            // A block shifted right as a whole (no unit to learn): the shift is kept.
            ("x = 1\ny = 2", "x = 1\ny = 3", "        x = 1\n        y = 2", "        x = 1\n        y = 3"),
            // Spaces in the model, tabs in the file.
            (
                "fn f() {\n    g();\n}",
                "fn f() {\n    g();\n    h();\n}",
                "fn f() {\n\tg();\n}",
                "fn f() {\n\tg();\n\th();\n}",
            ),
            // A dedent below the base.
            ("  a\n    b", "  a\n    b\nc", "    a\n        b", "    a\n        b\nc"),
            // Blank lines stay blank; identical indentation leaves `new` alone.
            ("a\n\n  b", "a\n\n  c", "a\n\n    b", "a\n\n    c"),
            ("same", "other", "same", "other"),
        ];
        for (old, new, found, want) in table {
            assert_eq!(reindent(old, new, found), want, "{old:?} -> {new:?} in {found:?}");
        }
    }

    /// Found by the `edit_file` fuzz target: an indent holding a no-break space (two bytes, and
    /// whitespace to `trim_start`) was cut in the middle of it, a panic in `edit_file`.
    #[test]
    fn an_indent_is_never_cut_inside_a_char() {
        // Shallower than the base: the file's indent loses three bytes of its four.
        assert_eq!(reindent("   }", "x", "\u{a0}  }"), "x");
        // Deeper than the base: what is left after whole units starts inside the no-break space.
        assert_eq!(reindent("a\n  b", "a\n   \u{a0}c", "a\n    b"), "a\n        \u{a0}c");
    }
}
