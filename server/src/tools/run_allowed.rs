//! `run_allowed`: start one program from an allow-list directly, with no shell in between.
//!
//! Nothing in the arguments is interpreted: `;`, `|`, `$(...)`, `*` and quotes reach the program
//! as the bytes they are. Before anything is started:
//!
//! - the program must be on the allow-list, by bare name, and is looked up on `PATH` (absolute
//!   entries outside the workspace only, so a file planted in the workspace is never run);
//! - every argument that names a path is checked against the sandbox: one that starts with `/`
//!   or contains `..` (also as the value of `--opt=VALUE` or `-oVALUE`) must resolve inside a
//!   root, and a relative one that exists must not be a symlink out of the roots;
//! - options that would start another program, write or delete files, or follow symbolic links
//!   out of the roots are refused ([`REFUSED`]): the runner is for looking, and changes go through
//!   the file tools, which honour read-only mode and the editor's buffers. `sed` runs with
//!   `--sandbox` (no `e`, `r`, `w` commands), `diff` with `--no-dereference`, and `awk` as
//!   `gawk --sandbox` when gawk is installed; without it, an awk program that could run a command
//!   or open a file (`system`, `getline`, redirections after `print`) is refused.
//!
//! Only the program's own reading of what it is given remains; what it is given is checked.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use schemars::JsonSchema;
use serde::Deserialize;

use super::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{self, Outcome, Spec};
use crate::workspace::Workspace;

/// Arguments of the allow-listed runner.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAllowedArgs {
    /// The program's bare name; it must be on the allow-list.
    pub command: String,
    /// The arguments, passed to the program as they are.
    #[serde(default)]
    pub args: Vec<String>,
}

/// Options refused for each program: they start other programs, write or delete files, follow
/// symbolic links out of the roots, or read the names of files to open from a file (which no
/// argument check sees). Single-letter options are also found inside clusters
/// (`-rR`); `find`'s words are matched whole.
pub const REFUSED: &[(&str, &[&str])] = &[
    (
        "find",
        &[
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-delete",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
            "-L",
            "-follow",
            "-files0-from",
        ],
    ),
    ("sed", &["-i", "--in-place"]),
    ("sort", &["-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from"]),
    ("rg", &["--pre", "-z", "--search-zip", "-L", "--follow", "--hostname-bin"]),
    ("grep", &["-R", "--dereference-recursive"]),
    ("du", &["-L", "--dereference", "--files0-from"]),
    ("wc", &["--files0-from"]),
    ("ls", &["-L", "--dereference"]),
    ("stat", &["-L", "--dereference"]),
    ("file", &["-L", "--dereference", "-C", "--compile", "-f", "--files-from"]),
    ("awk", &["-f", "--file", "-W", "-l", "--load", "-i", "--include", "-E", "--exec"]),
];

/// Runs `args.command` with `args.args` if `allowed` lists it and every argument passes the
/// checks; the working directory is the first root.
pub fn run_allowed(ctx: &Context<'_>, args: &RunAllowedArgs, allowed: &[String]) -> Result<Outcome> {
    let name = args.command.as_str();
    if name.is_empty() || name.contains(['/', '\0']) || !allowed.iter().any(|a| a == name) {
        return Err(Error::new(
            ErrorKind::CommandNotAllowed,
            format!("`{name}` is not an allowed command; allowed commands: {}", allowed.join(", ")),
        ));
    }
    if args.args.iter().any(|a| a.contains('\0')) {
        return Err(Error::invalid("`args` contains a NUL byte"));
    }
    let ws = ctx.vfs.workspace();
    refuse_options(name, &args.args)?;
    for arg in &args.args {
        check_arg(ws, arg)?;
    }
    let (program, argv) = invocation(ws, name, &args.args)?;
    let cwd = ws.roots()[0].clone();
    let spec = Spec::new(String::new(), cwd);
    let cancel: &AtomicBool = ctx.cancel.flag();
    exec::run_program(&program, &argv, &spec, cancel)
        .map_err(|e| Error::new(ErrorKind::IoError, format!("{name}: could not be started: {e}")))
}

/// The program to start and its arguments, with the safety options some programs get.
fn invocation(ws: &Workspace, name: &str, args: &[String]) -> Result<(PathBuf, Vec<String>)> {
    let with = |extra: &str| std::iter::once(extra.to_owned()).chain(args.iter().cloned()).collect::<Vec<_>>();
    if name == "awk" {
        if let Some(gawk) = find_program(ws, "gawk") {
            return Ok((gawk, with("--sandbox")));
        }
        check_awk_program(args)?;
    }
    let program = find_program(ws, name).ok_or_else(|| {
        Error::new(ErrorKind::NotFound, format!("`{name}` is allowed but not installed (not found on PATH)"))
    })?;
    let argv = match name {
        "sed" => with("--sandbox"),
        "diff" => with("--no-dereference"),
        _ => args.to_vec(),
    };
    Ok((program, argv))
}

/// The first executable `name` in an absolute `PATH` directory outside the workspace roots.
fn find_program(ws: &Workspace, name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .filter(|dir| {
            let real = crate::sys::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            ws.root_of(&real).is_none()
        })
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Fails with `command_not_allowed` when an argument is one of `name`'s refused options.
fn refuse_options(name: &str, args: &[String]) -> Result<()> {
    if name == "uniq" && uniq_operands(args) > 1 {
        return Err(Error::new(
            ErrorKind::CommandNotAllowed,
            "`uniq INPUT OUTPUT` is not allowed: the second operand is a file uniq writes; give one input and \
             read the result",
        ));
    }
    let Some((_, refused)) = REFUSED.iter().find(|(n, _)| *n == name) else { return Ok(()) };
    for arg in args {
        if arg == "--" {
            break;
        }
        if let Some(opt) = refused.iter().find(|opt| option_matches(name, opt, arg)) {
            return Err(Error::new(
                ErrorKind::CommandNotAllowed,
                format!(
                    "`{name} {opt}` is not allowed: it could start another program, change files or follow \
                     links out of the root; use the file tools to change files"
                ),
            ));
        }
    }
    Ok(())
}

/// How many operands (input, then output file) a `uniq` command line has.
fn uniq_operands(args: &[String]) -> usize {
    let mut n = 0;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--" {
            return n + it.count();
        }
        if matches!(arg.as_str(), "-f" | "-s" | "-w") {
            // These take their number as the next argument.
            it.next();
        } else if arg == "-" || !arg.starts_with('-') {
            n += 1;
        }
    }
    n
}

/// Whether `arg` uses option `opt` of program `name`.
fn option_matches(name: &str, opt: &str, arg: &str) -> bool {
    if arg == opt {
        return true;
    }
    if opt.starts_with("--") || name == "find" {
        // A long option (or a find word) also appears as `--opt=VALUE`.
        return arg.strip_prefix(opt).is_some_and(|rest| rest.starts_with('='));
    }
    let letter = opt.as_bytes()[1];
    if name == "awk" {
        // Every awk option takes its value glued or next (`-ffile`, `-vx=1`, `-F:`), so only the
        // letter after the dash is an option.
        return arg.as_bytes().get(..2) == Some(&[b'-', letter][..]);
    }
    // A single-letter option, alone or in a cluster (`-rR`, `-ni`, `-i.bak`).
    match arg.strip_prefix('-') {
        Some(cluster) if !cluster.starts_with('-') => {
            cluster.bytes().take_while(u8::is_ascii_alphabetic).any(|b| b == letter)
        }
        _ => false,
    }
}

/// Refuses an awk program that could run a command or open a file, for an awk without a
/// sandbox mode: `system`, `getline`, and `>` or `|` after `print`/`printf` in a statement.
fn check_awk_program(args: &[String]) -> Result<()> {
    for arg in args {
        if let Some(what) = awk_danger(arg) {
            return Err(Error::new(
                ErrorKind::CommandNotAllowed,
                format!(
                    "this awk program uses {what}, which could run a command or open a file; install gawk \
                     (which tether runs with --sandbox) or leave it out"
                ),
            ));
        }
    }
    Ok(())
}

/// What in `program` could run a command or open a file, if anything.
fn awk_danger(program: &str) -> Option<&'static str> {
    // Strings are skipped, so `print "a > b"` is fine.
    let code = strip_awk_strings(program);
    for word in ["system", "getline"] {
        if code.match_indices(word).any(|(i, _)| is_word_at(&code, i, word.len())) {
            return Some(if word == "system" { "system()" } else { "getline" });
        }
    }
    let mut rest = code.as_str();
    while let Some(i) = rest.find("print") {
        let after = &rest[i..];
        let statement_end = after.find([';', '}', '\n']).unwrap_or(after.len());
        let statement = &after[..statement_end];
        let mut depth = 0i32;
        for c in statement.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '>' | '|' if depth <= 0 => return Some("output redirection after print"),
                _ => {}
            }
        }
        rest = &after[5..];
    }
    None
}

fn is_word_at(s: &str, i: usize, len: usize) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let before = s[..i].chars().next_back().is_none_or(|c| !ident(c));
    let after = s[i + len..].chars().next().is_none_or(|c| !ident(c));
    before && after
}

/// `program` with the contents of its string literals replaced by spaces.
fn strip_awk_strings(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in program.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                out.push('"');
                continue;
            }
            out.push(' ');
        } else {
            if c == '"' {
                in_string = true;
            }
            out.push(c);
        }
    }
    out
}

/// Checks one argument against the sandbox (see the module documentation).
fn check_arg(ws: &Workspace, arg: &str) -> Result<()> {
    let path_like = |s: &str| s.starts_with('/') || s.contains("..");
    let mut candidates: Vec<&str> = Vec::new();
    if path_like(arg) {
        candidates.push(arg);
    }
    // A lone `/` glued to an option is a separator (`cut -d/`, `--delimiter=/`), not a path.
    let glued_path = |s: &str| s != "/" && path_like(s);
    if let Some((opt, value)) = arg.split_once('=') {
        if opt.starts_with('-') && glued_path(value) {
            candidates.push(value);
        }
    }
    if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) {
        // `-f/etc/x`: a value glued to a one-letter option.
        let value = cluster.get(1..).unwrap_or("");
        if cluster.starts_with(|c: char| c.is_ascii_alphabetic()) && glued_path(value) {
            candidates.push(value);
        }
    }
    for c in candidates {
        inside(ws, arg, c)?;
    }
    // A relative name that exists may still be a symlink out of the roots.
    if !arg.starts_with('/') && !arg.starts_with('-') && !arg.is_empty() {
        let joined = ws.roots()[0].join(arg);
        if joined.symlink_metadata().is_ok() {
            inside(ws, arg, arg)?;
        }
    }
    Ok(())
}

/// Fails with `path_escape` when `path` (from argument `arg`) resolves outside the roots.
fn inside(ws: &Workspace, arg: &str, path: &str) -> Result<()> {
    match ws.resolve(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::PathEscape => Err(Error::new(
            ErrorKind::PathEscape,
            format!("argument `{arg}` resolves outside the root; the command was not started"),
        )
        .with_path(path)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_options() {
        let table: &[(&str, &[&str], bool)] = &[
            ("find", &[".", "-name", "x"], true),
            ("find", &[".", "-exec", "rm", "{}", ";"], false),
            ("find", &[".", "-delete"], false),
            ("find", &["-L", "."], false),
            ("find", &[".", "-newer", "x"], true),
            ("sed", &["-n", "p", "a"], true),
            ("sed", &["-i", "s/a/b/", "a"], false),
            ("sed", &["-ni", "p", "a"], false),
            ("sed", &["--in-place=.bak", "p"], false),
            ("grep", &["-rn", "x"], true),
            ("grep", &["-rR", "x"], false),
            ("grep", &["--dereference-recursive", "x"], false),
            ("sort", &["-o", "out", "in"], false),
            ("sort", &["--output=out", "in"], false),
            ("sort", &["-k2", "-n", "in"], true),
            ("rg", &["--pre", "cat", "x"], false),
            ("rg", &["--pre=cat", "x"], false),
            ("rg", &["-n", "x"], true),
            ("cat", &["-L"], true),
            ("grep", &["--", "-R"], true),
            ("wc", &["--files0-from=names"], false),
            ("du", &["--files0-from", "names"], false),
            ("find", &["-files0-from", "names"], false),
            ("file", &["-f", "names"], false),
            ("uniq", &["-c", "in"], true),
            ("uniq", &["-f", "1", "in"], true),
            ("uniq", &["in", "out"], false),
            ("uniq", &["-", "out"], false),
            ("uniq", &["--", "in", "out"], false),
            ("awk", &["-F:", "-vfile=1", "{print}"], true),
            ("awk", &["-fprog.awk"], false),
            ("awk", &["-W", "exec", "x"], false),
        ];
        for (name, args, ok) in table {
            let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(refuse_options(name, &args).is_ok(), *ok, "{name} {args:?}");
        }
    }

    #[test]
    fn awk_programs() {
        let table = [
            ("{print $1}", None),
            ("$3 > 10 {print $1}", None),
            ("{print ($1 > 2)}", None),
            ("{print \"a > b\"}", None),
            ("a || b {print}", None),
            ("BEGIN{system(\"id\")}", Some("system()")),
            ("{getline x < \"/etc/passwd\"}", Some("getline")),
            ("{print > \"/tmp/x\"}", Some("output redirection after print")),
            ("{print | \"sh\"}", Some("output redirection after print")),
            ("{printf \"%s\", $1 >> \"f\"}", Some("output redirection after print")),
            ("{mysystem = 1}", None),
        ];
        for (program, want) in table {
            assert_eq!(awk_danger(program), want, "{program}");
        }
    }
}
