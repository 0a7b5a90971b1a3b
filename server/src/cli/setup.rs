//! `tether setup ASSISTANT`: registers `tether mcp` with an assistant's own configuration (Claude
//! Code, Codex CLI, Gemini CLI), at project or user scope, and `--remove` takes it back.
//!
//! Each file is changed only where tether's entry lives: other keys keep their order and text
//! (the JSON files are read as an ordered map of verbatim values; the TOML file keeps every line
//! outside the `[mcp_servers.tether]` table). Running it again changes nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::Value;

/// The assistants `tether setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Assistant {
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user).
    ClaudeCode,
    /// OpenAI Codex CLI: `~/.codex/config.toml` (`$CODEX_HOME`), user scope only.
    Codex,
    /// Gemini CLI: `.gemini/settings.json` (project) or `~/.gemini/settings.json` (user).
    Gemini,
}

/// Where the registration is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The project's own files (shared with everyone who uses the repository).
    Project,
    /// The user's files (every project).
    User,
}

/// The name tether's entry has in every assistant's configuration.
pub const NAME: &str = "tether";

/// What a setup did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub file: PathBuf,
    /// What happened to tether's entry in it.
    pub what: Outcome,
    /// The entry: the MCP server, or the hooks.
    pub entry: Entry,
}

/// The kinds of entry tether keeps in an assistant's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `tether mcp` as an MCP server.
    Server,
    /// `tether hook` on the built-in file tools.
    Hooks,
}

/// What happened to tether's entry in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Added.
    Added,
    /// It was there with other settings; now it has these.
    Updated,
    /// It was there as it should be: nothing written.
    Unchanged,
    /// Removed.
    Removed,
    /// There was none to remove: nothing written.
    Absent,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entry = match self.entry {
            Entry::Server => "the MCP server `tether`",
            Entry::Hooks => "tether's hooks on the built-in file tools",
        };
        let what = match self.what {
            Outcome::Added => format!("added {entry}"),
            Outcome::Updated => format!("updated {entry}"),
            Outcome::Unchanged => format!("already has {entry}: unchanged"),
            Outcome::Removed => format!("removed {entry}"),
            Outcome::Absent => format!("has no {entry}: unchanged"),
        };
        write!(f, "{}: {what}", self.file.display())
    }
}

/// Where the files are: the project's root, the home directory, and the assistants' own
/// directory variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
#[derive(Debug, Clone)]
pub struct Places {
    /// The project's root.
    pub project: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR`, when set.
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
}

impl Places {
    /// The places for the project at `project`, from the environment.
    pub fn from_env(project: PathBuf) -> Result<Places, String> {
        let unset = if cfg!(windows) { "USERPROFILE is not set" } else { "HOME is not set" };
        let home = crate::sys::home_dir().ok_or(format!("{unset}: no user files to change"))?;
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Ok(Places { project, home, claude_config_dir: var("CLAUDE_CONFIG_DIR"), codex_home: var("CODEX_HOME") })
    }
}

/// Registers (or with `remove`, unregisters) `command mcp` for `assistant` at `scope`.
pub fn run(
    assistant: Assistant,
    scope: Scope,
    remove: bool,
    command: &str,
    at: &Places,
) -> Result<Vec<Change>, String> {
    let server = server(assistant, scope, remove, command, at)?;
    // The hooks that take the built-in file tools to the editor's buffers.
    let settings = match (assistant, scope, &at.claude_config_dir) {
        (Assistant::ClaudeCode, Scope::Project, _) => at.project.join(".claude").join("settings.json"),
        (Assistant::ClaudeCode, Scope::User, Some(dir)) => dir.join("settings.json"),
        (Assistant::ClaudeCode, Scope::User, None) => at.home.join(".claude").join("settings.json"),
        (Assistant::Gemini, Scope::Project, _) => at.project.join(".gemini").join("settings.json"),
        (Assistant::Gemini, Scope::User, _) => at.home.join(".gemini").join("settings.json"),
        (Assistant::Codex, ..) => at.codex_home.clone().unwrap_or_else(|| at.home.join(".codex")).join("hooks.json"),
    };
    Ok(vec![server, hooks(&settings, &Hooks::of(assistant), command, remove)?])
}

/// An assistant's hook settings: the events and matchers tether's hook answers, its timeout in
/// the unit the assistant reads, and the command's ending.
///
/// The timeout is 10 minutes, past review's 5-minute wait for the user (`lsp::review`): an edit
/// the hook makes in the editor may wait for the user's review, and a CLI that gave up on its
/// hook would make the edit itself, unreviewed. A hook that finds no unsaved buffer answers in
/// milliseconds.
struct Hooks {
    events: &'static [(&'static str, &'static str)],
    timeout: u64,
    suffix: &'static str,
    /// Gemini CLI names each hook.
    named: bool,
}

impl Hooks {
    fn of(assistant: Assistant) -> Hooks {
        match assistant {
            Assistant::Gemini => Hooks {
                events: &[("BeforeTool", "replace|write_file"), ("AfterTool", "read_file")],
                timeout: 600_000,
                suffix: "hook gemini",
                named: true,
            },
            Assistant::Codex => {
                Hooks { events: &[("PreToolUse", "apply_patch")], timeout: 600, suffix: "hook codex", named: false }
            }
            Assistant::ClaudeCode => Hooks {
                events: &[("PreToolUse", "Edit|Write"), ("PostToolUse", "Read")],
                timeout: 600,
                suffix: "hook claude-code",
                named: false,
            },
        }
    }
}

/// The hook command for `command` (quoted for the shell when it must be). On Windows the
/// assistants run hooks through cmd.exe or Git Bash, which both take a double-quoted path (a
/// Windows path cannot hold `"`).
fn hook_command(command: &str, suffix: &str) -> String {
    let plain = command.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    let command = if plain {
        command.to_owned()
    } else if cfg!(windows) {
        format!("\"{command}\"")
    } else {
        format!("'{}'", command.replace('\'', r"'\''"))
    };
    format!("{command} {suffix}")
}

/// Sets (or removes) tether's hook groups in the assistant's settings file `file` (Claude Code:
/// `PreToolUse` on Edit and Write, `PostToolUse` on Read; Gemini CLI: `BeforeTool` on replace and
/// write_file, `AfterTool` on read_file; Codex CLI: `PreToolUse` on apply_patch, in its
/// `hooks.json`). Other hooks and keys stay as they are.
fn hooks(file: &Path, kind: &Hooks, command: &str, remove: bool) -> Result<Change, String> {
    let mut top = read_object(file)?;
    let before: IndexMap<String, Value> = member(file, &top, "hooks")?;
    let ours = |group: &Value| {
        group["hooks"]
            .as_array()
            .is_some_and(|hooks| hooks.iter().any(|h| h["command"].as_str().is_some_and(|c| c.ends_with(kind.suffix))))
    };
    let mut hooks = before.clone();
    for &(event, matcher) in kind.events {
        let mut groups: Vec<Value> = hooks.get(event).and_then(Value::as_array).cloned().unwrap_or_default();
        groups.retain(|g| !ours(g));
        if !remove {
            let mut hook = serde_json::json!({ "type": "command" });
            if kind.named {
                hook["name"] = Value::String(NAME.to_owned());
            }
            hook["command"] = Value::String(hook_command(command, kind.suffix));
            hook["timeout"] = kind.timeout.into();
            groups.push(serde_json::json!({ "matcher": matcher, "hooks": [hook] }));
        }
        if groups.is_empty() {
            hooks.shift_remove(event);
        } else {
            hooks.insert(event.to_owned(), Value::Array(groups));
        }
    }
    let had = before.values().flat_map(|v| v.as_array().into_iter().flatten()).any(ours);
    let what = match (remove, had) {
        (true, false) => Outcome::Absent,
        (true, true) => Outcome::Removed,
        (false, _) if hooks == before => Outcome::Unchanged,
        (false, true) => Outcome::Updated,
        (false, false) => Outcome::Added,
    };
    let change = Change { file: file.to_owned(), what, entry: Entry::Hooks };
    if matches!(what, Outcome::Absent | Outcome::Unchanged) {
        return Ok(change);
    }
    if hooks.is_empty() {
        top.shift_remove("hooks");
    } else {
        let raw = serde_json::to_string(&hooks).map_err(|e| e.to_string())?;
        top.insert("hooks".to_owned(), RawValue::from_string(raw).map_err(|e| e.to_string())?);
    }
    write_object(file, &top)?;
    Ok(change)
}

/// Registers (or removes) `tether mcp` as an MCP server of `assistant`.
fn server(assistant: Assistant, scope: Scope, remove: bool, command: &str, at: &Places) -> Result<Change, String> {
    // In the order the assistants' own docs write it.
    let entry = |with_type: bool| {
        let kind = if with_type { r#""type":"stdio","# } else { "" };
        let command = Value::String(command.to_owned());
        format!(r#"{{{kind}"command":{command},"args":["mcp"]}}"#)
    };
    match (assistant, scope) {
        (Assistant::ClaudeCode, Scope::Project) => json_entry(&at.project.join(".mcp.json"), &entry(true), remove),
        (Assistant::ClaudeCode, Scope::User) => {
            let file = match &at.claude_config_dir {
                Some(dir) => dir.join(".claude.json"),
                None => at.home.join(".claude.json"),
            };
            json_entry(&file, &entry(true), remove)
        }
        (Assistant::Gemini, Scope::Project) => {
            json_entry(&at.project.join(".gemini").join("settings.json"), &entry(false), remove)
        }
        (Assistant::Gemini, Scope::User) => {
            json_entry(&at.home.join(".gemini").join("settings.json"), &entry(false), remove)
        }
        (Assistant::Codex, Scope::User) => {
            let dir = at.codex_home.clone().unwrap_or_else(|| at.home.join(".codex"));
            toml_entry(&dir.join("config.toml"), command, remove)
        }
        (Assistant::Codex, Scope::Project) => {
            Err("Codex CLI reads MCP servers from the user's `~/.codex/config.toml` only: use `--scope user`"
                .to_owned())
        }
    }
}

/// The file's text, or `None` when it does not exist.
fn read(file: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(file) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", file.display())),
    }
}

/// Writes `text` to `file` as the disk sink writes (atomically, keeping an existing file's owner
/// and mode), creating its folder; a settings file that is a symlink (dotfiles kept in a
/// repository) is written where it points, and stays a symlink.
fn write(file: &Path, text: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", file.display());
    let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    let dir = target.parent().ok_or_else(|| format!("{}: no folder", file.display()))?;
    std::fs::create_dir_all(dir).map_err(fail)?;
    crate::sink::disk::replace_file(&target, text.as_bytes()).map_err(fail)
}

/// Sets (or removes) `mcpServers.tether` in the JSON file `file`.
fn json_entry(file: &Path, entry: &str, remove: bool) -> Result<Change, String> {
    let mut top = read_object(file)?;
    let mut servers: IndexMap<String, Box<RawValue>> = member(file, &top, "mcpServers")?;
    let current: Option<Value> = servers.get(NAME).and_then(|raw| serde_json::from_str(raw.get()).ok());
    let wanted: Value = serde_json::from_str(entry).map_err(|e| e.to_string())?;
    let what = match (remove, &current) {
        (true, None) => Outcome::Absent,
        (true, Some(_)) => Outcome::Removed,
        (false, Some(c)) if *c == wanted => Outcome::Unchanged,
        (false, Some(_)) => Outcome::Updated,
        (false, None) => Outcome::Added,
    };
    if matches!(what, Outcome::Absent | Outcome::Unchanged) {
        return Ok(Change { file: file.to_owned(), what, entry: Entry::Server });
    }
    if remove {
        servers.shift_remove(NAME);
    } else {
        let raw = RawValue::from_string(entry.to_owned()).map_err(|e| e.to_string())?;
        servers.insert(NAME.to_owned(), raw);
    }
    let servers = RawValue::from_string(serde_json::to_string(&servers).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    top.insert("mcpServers".to_owned(), servers);
    write_object(file, &top)?;
    Ok(Change { file: file.to_owned(), what, entry: Entry::Server })
}

/// The top-level keys of the JSON settings file `file`, each value verbatim (none when the file
/// is missing or empty).
fn read_object(file: &Path) -> Result<IndexMap<String, Box<RawValue>>, String> {
    match read(file)?.as_deref() {
        Some(t) if !t.trim().is_empty() => serde_json::from_str(t).map_err(|e| not_json(file, &e)),
        _ => Ok(IndexMap::new()),
    }
}

/// The value of `key` in `top` (read from `file`), or its default when absent.
fn member<T: serde::de::DeserializeOwned + Default>(
    file: &Path,
    top: &IndexMap<String, Box<RawValue>>,
    key: &str,
) -> Result<T, String> {
    top.get(key).map_or_else(|| Ok(T::default()), |raw| serde_json::from_str(raw.get()).map_err(|e| not_json(file, &e)))
}

/// Why `file` is left alone.
fn not_json(file: &Path, e: &serde_json::Error) -> String {
    format!("{}: not a JSON object ({e}); nothing was changed", file.display())
}

/// Writes `top` to `file`, pretty-printed; other keys keep their values verbatim.
fn write_object(file: &Path, top: &IndexMap<String, Box<RawValue>>) -> Result<(), String> {
    let mut out = serde_json::to_string_pretty(top).map_err(|e| e.to_string())?;
    out.push('\n');
    write(file, &out)
}

/// The `[mcp_servers.tether]` table for `command`.
fn toml_table(command: &str) -> String {
    let quoted = serde_json::to_string(command).unwrap_or_default(); // a TOML basic string
    format!("[mcp_servers.{NAME}]\ncommand = {quoted}\nargs = [\"mcp\"]\n")
}

/// Sets (or removes) the `[mcp_servers.tether]` table in the TOML file `file`, leaving every
/// other line as it is.
fn toml_entry(file: &Path, command: &str, remove: bool) -> Result<Change, String> {
    let text = read(file)?.unwrap_or_default();
    let header = format!("[mcp_servers.{NAME}]");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The table's lines: from its header to the next table header (`[...]` at a line's start).
    let table = lines.iter().position(|l| l.trim() == header).map(|s| {
        let e = lines[s + 1..].iter().position(|l| l.trim_start().starts_with('[')).map_or(lines.len(), |i| s + 1 + i);
        (s, e)
    });
    let wanted = toml_table(command);
    let (what, out) = match (table, remove) {
        (None, true) => (Outcome::Absent, None),
        (Some((s, e)), true) => {
            let mut out = [lines[..s].concat(), lines[e..].concat()].concat();
            // The blank line setup put before a last table goes with it.
            if e == lines.len() && out.ends_with("\n\n") {
                out.pop();
            }
            (Outcome::Removed, Some(out))
        }
        (Some((s, e)), false) => {
            let current = lines[s..e].concat();
            if current.trim_end() == wanted.trim_end() {
                (Outcome::Unchanged, None)
            } else {
                let blank = if current.ends_with("\n\n") { "\n" } else { "" };
                let out = [lines[..s].concat(), wanted.clone(), blank.to_owned(), lines[e..].concat()].concat();
                (Outcome::Updated, Some(out))
            }
        }
        (None, false) => {
            let sep = match text.as_str() {
                "" => "",
                t if t.ends_with("\n\n") => "",
                t if t.ends_with('\n') => "\n",
                _ => "\n\n",
            };
            (Outcome::Added, Some(format!("{text}{sep}{wanted}")))
        }
    };
    if let Some(out) = out {
        write(file, &out)?;
    }
    Ok(Change { file: file.to_owned(), what, entry: Entry::Server })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path) -> Places {
        Places { project: dir.join("proj"), home: dir.join("home"), claude_config_dir: None, codex_home: None }
    }

    #[test]
    fn each_assistant_is_set_up_once_and_taken_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let at = places(dir.path());
        for (assistant, scope, file) in [
            (Assistant::ClaudeCode, Scope::Project, "proj/.mcp.json"),
            (Assistant::ClaudeCode, Scope::User, "home/.claude.json"),
            (Assistant::Gemini, Scope::Project, "proj/.gemini/settings.json"),
            (Assistant::Gemini, Scope::User, "home/.gemini/settings.json"),
            (Assistant::Codex, Scope::User, "home/.codex/config.toml"),
        ] {
            let path = dir.path().join(file);
            let set = server(assistant, scope, false, "tether", &at).expect("set up");
            assert_eq!((set.file.clone(), set.what), (path.clone(), Outcome::Added), "{file}");
            let text = std::fs::read_to_string(&path).expect("written");
            assert!(text.contains("tether") && text.contains("mcp"), "{file}: {text}");
            let again = server(assistant, scope, false, "tether", &at).expect("again");
            assert_eq!(again.what, Outcome::Unchanged, "{file}");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), text, "{file}: idempotent");
            let moved = server(assistant, scope, false, "/opt/tether/bin/tether", &at).expect("moved");
            assert_eq!(moved.what, Outcome::Updated, "{file}");
            assert!(std::fs::read_to_string(&path).expect("read").contains("/opt/tether/bin/tether"), "{file}");
            let gone = server(assistant, scope, true, "tether", &at).expect("remove");
            assert_eq!(gone.what, Outcome::Removed, "{file}");
            assert!(!std::fs::read_to_string(&path).expect("read").contains("tether"), "{file}");
            assert_eq!(server(assistant, scope, true, "tether", &at).expect("again").what, Outcome::Absent, "{file}");
        }
        assert!(server(Assistant::Codex, Scope::Project, false, "tether", &at).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn other_settings_keep_their_order_and_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let at = places(dir.path());
        let file = dir.path().join("home/.gemini/settings.json");
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        let before = "{\n  \"theme\": \"Dracula\",\n  \"mcpServers\": {\"other\": {\"command\": \"x\"}},\n  \"auth\": {\"b\": 1, \"a\": 2}\n}\n";
        std::fs::write(&file, before).expect("write");
        server(Assistant::Gemini, Scope::User, false, "tether", &at).expect("set up");
        let after = std::fs::read_to_string(&file).expect("read");
        let order: Vec<usize> = ["theme", "mcpServers", "other", "tether", "auth", "\"b\"", "\"a\""]
            .iter()
            .map(|k| after.find(k).unwrap_or_else(|| panic!("{k} in {after}")))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{after}");
        server(Assistant::Gemini, Scope::User, true, "tether", &at).expect("remove");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
        assert_eq!(v, serde_json::from_str::<Value>(before).expect("json"));

        // A settings file kept elsewhere behind a symlink is written there, and stays linked.
        let kept = dir.path().join("dotfiles-settings.json");
        std::fs::rename(&file, &kept).expect("move");
        std::os::unix::fs::symlink(&kept, &file).expect("symlink");
        server(Assistant::Gemini, Scope::User, false, "tether", &at).expect("set up");
        assert!(std::fs::symlink_metadata(&file).expect("stat").file_type().is_symlink());
        assert!(std::fs::read_to_string(&kept).expect("read").contains("\"tether\""));
        std::fs::remove_file(&file).expect("unlink");

        // A file that is not JSON is left alone, with the reason.
        std::fs::write(&file, "{ not json").expect("write");
        let e = server(Assistant::Gemini, Scope::User, false, "tether", &at).expect_err("not json");
        assert!(e.contains("not a JSON object") && e.contains("nothing was changed"), "{e}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "{ not json");

        // Codex's TOML keeps every other line.
        let toml = dir.path().join("home/.codex/config.toml");
        std::fs::create_dir_all(toml.parent().expect("parent")).expect("mkdir");
        let before = "model = \"o4\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"mini\"\n";
        std::fs::write(&toml, before).expect("write");
        server(Assistant::Codex, Scope::User, false, "tether", &at).expect("set up");
        let with = std::fs::read_to_string(&toml).expect("read");
        assert!(
            with.starts_with(before)
                && with.ends_with("[mcp_servers.tether]\ncommand = \"tether\"\nargs = [\"mcp\"]\n"),
            "{with}"
        );
        server(Assistant::Codex, Scope::User, true, "tether", &at).expect("remove");
        assert_eq!(std::fs::read_to_string(&toml).expect("read"), before);
    }

    #[test]
    fn claude_codes_hooks_are_added_once_beside_others_and_taken_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(".claude/settings.json");
        std::fs::create_dir_all(file.parent().expect("folder")).expect("mkdir");
        let theirs = r#"{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}}"#;
        std::fs::write(&file, theirs).expect("write");
        let read = || serde_json::from_str::<Value>(&std::fs::read_to_string(&file).expect("read")).expect("json");
        assert_eq!(hooks(&file, &Hooks::of(Assistant::ClaudeCode), "tether", false).expect("add").what, Outcome::Added);
        let v = read();
        assert_eq!(v["model"], "opus");
        let pre = v["hooks"]["PreToolUse"].as_array().expect("PreToolUse");
        assert_eq!(
            (pre.len(), pre[0]["matcher"].as_str(), pre[1]["matcher"].as_str()),
            (2, Some("Bash"), Some("Edit|Write"))
        );
        assert_eq!(pre[1]["hooks"][0]["command"], "tether hook claude-code");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Read");
        assert_eq!(
            hooks(&file, &Hooks::of(Assistant::ClaudeCode), "tether", false).expect("again").what,
            Outcome::Unchanged
        );
        assert_eq!(
            hooks(&file, &Hooks::of(Assistant::ClaudeCode), "/opt/my tools/tether", false).expect("moved").what,
            Outcome::Updated
        );
        // Quoted for the shell the hook runs in: POSIX sh's single quotes, or cmd.exe's double quotes.
        let quoted = if cfg!(windows) {
            r#""/opt/my tools/tether" hook claude-code"#
        } else {
            "'/opt/my tools/tether' hook claude-code"
        };
        assert_eq!(read()["hooks"]["PostToolUse"][0]["hooks"][0]["command"], quoted);
        assert_eq!(
            hooks(&file, &Hooks::of(Assistant::ClaudeCode), "tether", true).expect("remove").what,
            Outcome::Removed
        );
        let v = read();
        assert_eq!(
            v["hooks"],
            serde_json::json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]})
        );
        assert_eq!(
            hooks(&file, &Hooks::of(Assistant::ClaudeCode), "tether", true).expect("again").what,
            Outcome::Absent
        );
    }

    #[test]
    fn gemini_gets_named_hooks_in_the_same_settings_as_its_server() {
        let dir = tempfile::tempdir().expect("tempdir");
        let at = places(dir.path());
        let changes = run(Assistant::Gemini, Scope::Project, false, "tether", &at).expect("set up");
        assert_eq!(
            changes.iter().map(|c| (c.entry, c.what)).collect::<Vec<_>>(),
            [(Entry::Server, Outcome::Added), (Entry::Hooks, Outcome::Added)]
        );
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("proj/.gemini/settings.json")).expect("read"),
        )
        .expect("json");
        assert_eq!(v["mcpServers"]["tether"]["args"], serde_json::json!(["mcp"]));
        let before = &v["hooks"]["BeforeTool"][0];
        assert_eq!(before["matcher"], "replace|write_file");
        assert_eq!(
            before["hooks"][0],
            serde_json::json!({"type": "command", "name": "tether", "command": "tether hook gemini", "timeout": 600000})
        );
        assert_eq!(v["hooks"]["AfterTool"][0]["matcher"], "read_file");
        let gone = run(Assistant::Gemini, Scope::Project, true, "tether", &at).expect("remove");
        assert!(gone.iter().all(|c| c.what == Outcome::Removed), "{gone:?}");
    }
}
