//! The command line: `tether call`, `tether tools`, and the servers `tether mcp` and `tether lsp`.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::Value;

use crate::config::{Cancel, Config};
use crate::journal::{client, CallInfo};
use crate::profiles::{self, CallError, Profile};
use crate::sink::DiskSink;
use crate::tools::Context;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

pub mod hook;
pub mod setup;

/// tether: file tools over live editor buffers, for editors and AI assistants.
#[derive(Debug, Parser)]
#[command(name = "tether", version, about, long_about = None)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool and print its result (exit 0) or its error object (exit 1).
    Call(CallArgs),
    /// List the tools of a profile with their descriptions and argument schemas.
    Tools(ToolsArgs),
    /// Serve the tools over MCP on stdio, for AI assistants.
    Mcp(McpArgs),
    /// Serve the tools to an editor as a language server on stdio, over its live buffers.
    Lsp(LspArgs),
    /// List the running `tether lsp` instances that `tether mcp` can attach to, and the discovery
    /// files passed over, with why.
    Status(StatusArgs),
    /// List the changes tether applied to the workspace (from the change journal), newest
    /// first; with an ID, show that change as a diff.
    History(HistoryArgs),
    /// Take back changes tether applied (ids from `tether history`), keeping later changes to
    /// the same files.
    Undo(UndoArgs),
    /// Register `tether mcp` with an assistant's configuration (`--remove` takes it back).
    Setup(SetupArgs),
    /// Answer one of an assistant's hook events (JSON on stdin), so that its built-in file tools
    /// meet the editor's buffers; `tether setup` installs it.
    Hook(HookArgs),
}

/// `tether hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The assistant whose hook event comes on stdin.
    #[arg(value_enum)]
    pub assistant: hook::Assistant,
}

/// `tether setup`.
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The assistant to set up.
    #[arg(value_enum)]
    pub assistant: setup::Assistant,
    /// Where to register it: the project's files, or the user's (Codex: user only). Default:
    /// project, except for Codex.
    #[arg(long, value_enum)]
    pub scope: Option<setup::Scope>,
    /// The project's root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Take tether's registration back out.
    #[arg(long)]
    pub remove: bool,
}

/// `tether history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Show this changeset in full, as a unified diff.
    pub id: Option<String>,
    /// Only changes to this file.
    #[arg(long)]
    pub path: Option<String>,
    /// Only changes asked for by this client (a part of its name: `claude`, `editor`, `cli`).
    #[arg(long)]
    pub client: Option<String>,
    /// Only changes since this time (RFC 3339) or this long ago (`10m`, `2h`, `1day`).
    #[arg(long)]
    pub since: Option<String>,
    /// The most changes to list.
    #[arg(long, default_value_t = crate::tools::history::DEFAULT_LIMIT)]
    pub limit: usize,
    /// Print the answer as JSON, as the `history` tool gives it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    /// Roots and the journal.
    pub serve: ServeArgs,
}

/// `tether undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The changesets to undo, together (all or nothing).
    #[arg(required_unless_present = "last", conflicts_with = "last")]
    pub ids: Vec<String>,
    /// Undo the newest N changes that are not undone yet.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    #[command(flatten)]
    /// Roots and the journal.
    pub serve: ServeArgs,
}

/// Where the change journal is kept, or that it is off.
#[derive(Debug, Clone, Args)]
pub struct JournalArgs {
    /// Do not record changes in the change journal (and serve no `history`, `undo` or
    /// `changes_since`).
    #[arg(long)]
    pub no_journal: bool,
    /// The journal's directory (default `$XDG_STATE_HOME/tether/journal`, else
    /// `~/.local/state/tether/journal`); one journal per workspace root is kept inside.
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
    /// The most MiB one root's journal keeps; the oldest changes are dropped beyond it.
    #[arg(long, value_name = "MIB", default_value_t = crate::config::JournalSettings::DEFAULT_MAX_BYTES >> 20)]
    pub journal_max_mib: u64,
}

impl JournalArgs {
    /// The journal these options select (`None`: off, or no state directory to keep it in).
    pub fn settings(&self) -> Option<crate::config::JournalSettings> {
        if self.no_journal {
            return None;
        }
        let dir = self.journal_dir.clone().or_else(crate::journal::default_dir)?;
        Some(crate::config::JournalSettings { dir, max_bytes: self.journal_max_mib.saturating_mul(1 << 20) })
    }
}

/// `tether status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `tether lsp`. The workspace roots are the editor's workspace folders.
#[derive(Debug, Args)]
pub struct LspArgs {
    /// The tool profile calls use when they name none.
    #[arg(long, default_value = "standard", value_parser = clap::builder::PossibleValuesParser::new(profiles::NAMES))]
    pub profile: String,
    /// Serve only the tools that change nothing.
    #[arg(long)]
    pub read_only: bool,
    /// Whether a buffer that was clean before a tool changed it is saved after it (the editor's
    /// `initializationOptions.save` overrides this).
    #[arg(long, value_enum, default_value = "clean")]
    pub save: crate::lsp::SavePolicy,
    /// Accepted and ignored: tether lsp always speaks over stdio, and some clients pass this.
    #[arg(long)]
    pub stdio: bool,
    /// Log level for stderr (error, warn, info, debug, trace); `TETHER_LOG` takes a full filter.
    /// Warnings and errors also go to the editor (`window/logMessage`).
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Do not serve the bridge socket that lets `tether mcp` attach to this editor.
    #[arg(long)]
    pub no_bridge: bool,
    /// Do not serve the assistant CLIs' IDE protocols (Claude Code's, Gemini CLI's companion): no
    /// discovery file in their folders.
    #[arg(long)]
    pub no_ide: bool,
    #[command(flatten)]
    /// The deny list.
    pub deny: DenyArgs,
    #[command(flatten)]
    /// The change journal.
    pub journal: JournalArgs,
}

/// `tether mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    /// Roots, profile and mode.
    pub serve: ServeArgs,
    /// Log level for stderr (error, warn, info, debug, trace); `TETHER_LOG` takes a full filter.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Run tools in the editor's `tether lsp` serving this root (`auto`: the deepest root, then
    /// the newest instance; or a pid), so that they see its buffers; `never` serves on disk.
    #[arg(long, value_name = "auto|never|PID", default_value = "auto")]
    pub attach: crate::bridge::Attach,
    #[command(flatten)]
    /// The HTTP transport, when asked for.
    pub http: HttpArgs,
}

/// `tether mcp --http`: MCP over streamable HTTP instead of stdio.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Serve MCP over streamable HTTP at this address (`127.0.0.1:8931`; port 0 picks a free
    /// one) instead of stdio. The endpoint is `/mcp`; the address is printed on stderr.
    #[arg(long, value_name = "ADDR", requires = "token_file")]
    pub http: Option<std::net::SocketAddr>,
    /// The file holding the bearer token every HTTP request must send as
    /// `Authorization: Bearer <token>`.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Allow `--http` to listen on an address other than loopback (other machines can then
    /// reach the server; the token still guards it).
    #[arg(long, requires = "http")]
    pub http_allow_remote: bool,
    /// A browser origin allowed to call the HTTP server besides the loopback ones (repeatable;
    /// `https://app.example:8443`, or `:*` for any port).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,
}

/// Options every tool-serving mode shares.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A workspace root (repeatable); defaults to the current directory. Relative paths in tool
    /// arguments start at the first root.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// The tool profile to serve.
    #[arg(long, default_value = "standard", value_parser = clap::builder::PossibleValuesParser::new(profiles::NAMES))]
    pub profile: String,
    /// Serve only the tools that change nothing.
    #[arg(long)]
    pub read_only: bool,
    /// A program the profile's allow-listed command runner may start (repeatable); the list
    /// given replaces the profile's own (the `guarded` profile's `run_command`).
    #[arg(long = "allow-command", value_name = "NAME")]
    pub allowed_commands: Vec<String>,
    #[command(flatten)]
    /// The deny list.
    pub deny: DenyArgs,
    #[command(flatten)]
    /// The change journal.
    pub journal: JournalArgs,
}

/// Which paths inside the roots tools may not touch.
#[derive(Debug, Clone, Args)]
pub struct DenyArgs {
    /// Hide paths matching GLOB from every tool (repeatable): they cannot be read, listed,
    /// searched or changed, and no open buffer of theirs is shown. A GLOB without `/` matches a
    /// name anywhere (`.env`, `*.pem`); with `/`, the path from its root (`config/secrets/**`).
    #[arg(long = "deny", value_name = "GLOB")]
    pub deny: Vec<String>,
    /// Hide the usual secrets files too: `.env`, `.env.local`, `.env.*.local`, `.env.production`,
    /// `*.pem`, `*.key`, `*.p12`, `*.pfx`, `id_rsa`, `id_ecdsa`, `id_ed25519`, `.netrc`.
    #[arg(long)]
    pub deny_secrets: bool,
}

impl DenyArgs {
    /// The deny list these options select.
    pub fn deny(&self) -> crate::Result<crate::workspace::Deny> {
        if self.deny_secrets {
            crate::workspace::Deny::secrets_and(self.deny.iter().cloned())
        } else {
            crate::workspace::Deny::new(self.deny.iter().cloned())
        }
    }
}

/// `tether call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name in the profile.
    pub tool: String,
    /// The tool's arguments as a JSON object; `-` reads them from stdin.
    #[arg(default_value = "{}")]
    pub arguments: String,
    /// For a profile whose session starts by choosing a workspace (`toolkit`): choose DIR
    /// (`set_workspace`) before the call.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<String>,
    #[command(flatten)]
    /// Roots, profile and mode.
    pub serve: ServeArgs,
}

/// `tether tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Print the list as JSON (name, description, inputSchema, annotations).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    /// Profile and mode.
    pub serve: ServeArgs,
}

impl ServeArgs {
    /// The configuration these options select.
    pub fn config(&self) -> Config {
        let allowed_commands = (!self.allowed_commands.is_empty()).then(|| self.allowed_commands.clone());
        Config { read_only: self.read_only, allowed_commands, journal: self.journal.settings(), ..Config::default() }
    }

    /// The workspace: the given roots, else the current directory.
    pub fn workspace(&self) -> crate::Result<Workspace> {
        let ws = if self.roots.is_empty() {
            let cwd = std::env::current_dir().map_err(|e| crate::Error::io(&e, "."))?;
            Workspace::new([cwd])
        } else {
            Workspace::new(&self.roots)
        };
        Ok(ws?.with_deny(self.deny.deny()?))
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The language server installs its own logger, which also reports to the editor.
    let command = match cli.command {
        Command::Lsp(args) => return lsp(args),
        other => other,
    };
    let level = match &command {
        Command::Mcp(args) => args.log_level.as_deref(),
        _ => None,
    };
    init_logging(level);
    match command {
        Command::Call(args) => call(args),
        Command::Tools(args) => tools(args),
        Command::Mcp(args) => mcp(args),
        Command::Lsp(args) => lsp(args),
        Command::Status(args) => status(args),
        Command::History(args) => history(args),
        Command::Undo(args) => undo(args),
        Command::Setup(args) => setup(args),
        Command::Hook(args) => hook(args),
    }
}

/// `tether setup`: one line per file, saying what changed in it.
fn setup(args: SetupArgs) -> ExitCode {
    let scope = args.scope.unwrap_or(match args.assistant {
        setup::Assistant::Codex => setup::Scope::User,
        _ => setup::Scope::Project,
    });
    let project = match args.project.map_or_else(std::env::current_dir, Ok) {
        Ok(p) => p,
        Err(e) => return fail(format_args!("the project's folder: {e}")),
    };
    let places = match setup::Places::from_env(project) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    match setup::run(args.assistant, scope, args.remove, &setup_command(), &places) {
        Ok(changes) => {
            for change in changes {
                print(&change.to_string());
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn hook(args: HookArgs) -> ExitCode {
    let mut raw = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut raw) {
        return fail(format_args!("reading the hook event from stdin: {e}"));
    }
    let input: Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(e) => return fail(format_args!("the hook event is not valid JSON: {e}")),
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(format_args!("starting: {e}")),
    };
    let Some(connector) = crate::bridge::SocketConnector::new(crate::bridge::Attach::Auto, hook::PROFILE) else {
        return ExitCode::SUCCESS;
    };
    if let Some(answer) = rt.block_on(hook::answer(args.assistant, &input, &connector)) {
        print(&answer.to_string());
    }
    ExitCode::SUCCESS
}

/// How an assistant starts this binary: `tether` when that name on `PATH` is this binary, else
/// its absolute path (an assistant may start servers with a reduced `PATH`, so a name alone
/// is written only when it is certain).
fn setup_command() -> String {
    let Ok(me) = std::env::current_exe().and_then(|p| crate::sys::canonicalize(&p)) else { return "tether".to_owned() };
    let name = if cfg!(windows) { "tether.exe" } else { "tether" };
    let on_path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()));
    match on_path.and_then(|p| crate::sys::canonicalize(&p).ok()) {
        Some(found) if found == me => "tether".to_owned(),
        _ => me.display().to_string(),
    }
}

/// Logs go to stderr only: stdout carries nothing but results and protocol.
fn init_logging(level: Option<&str>) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level.unwrap_or("warn")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Writes `text` and a newline to stdout; a closed pipe is not an error worth reporting.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("tether: {message}");
    ExitCode::from(2)
}

fn call(args: CallArgs) -> ExitCode {
    let raw = if args.arguments == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            return fail(format_args!("reading arguments from stdin: {e}"));
        }
        s
    } else {
        args.arguments.clone()
    };
    let json: Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(e) => return fail(format_args!("arguments are not valid JSON: {e}")),
    };
    let (profile, config) = match profiles::by_name(&args.serve.profile) {
        Ok(p) => (p, args.serve.config()),
        Err(e) => return fail(e.message()),
    };
    let ws = match args.serve.workspace() {
        Ok(ws) => ws,
        Err(e) => return fail(e.message()),
    };
    let vfs = Vfs::disk(Arc::new(ws));
    let ctx = Context { vfs: &vfs, config: &config, cancel: &Cancel::default(), editor: None };
    if let Some(dir) = &args.workspace {
        match profile.call(&ctx, &DiskSink, "set_workspace", serde_json::json!({ "path": dir })) {
            Ok(r) if !r.is_error => {}
            Ok(r) => {
                print(&r.text);
                return ExitCode::from(1);
            }
            Err(e) => return fail(format_args!("--workspace: profile `{}` cannot choose one: {e}", profile.name())),
        }
    }
    let info = CallInfo::new(&args.tool, profile.name(), client::CLI, &json);
    let journal = config.journal.as_ref();
    let outcome = profiles::call_on_fresh_text(profile.as_ref(), &ctx, &DiskSink, journal, &info, &args.tool, &json);
    match outcome {
        Ok(result) => {
            print(&result.text);
            if result.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e @ CallError::UnknownTool(_)) => {
            let names: Vec<_> = profile.tools(&config).iter().map(|t| t.name).collect();
            fail(format_args!("{e} (tools in profile `{}`: {})", profile.name(), names.join(", ")))
        }
        // The contract answers this failure as a JSON-RPC error: print that error object.
        Err(e) => {
            let mut error = serde_json::json!({"code": e.code(), "message": e.to_string()});
            if let Some(data) = e.data() {
                error["data"] = data.clone();
            }
            print(&error.to_string());
            ExitCode::from(1)
        }
    }
}

fn tools(args: ToolsArgs) -> ExitCode {
    let profile: Box<dyn Profile> = match profiles::by_name(&args.serve.profile) {
        Ok(p) => p,
        Err(e) => return fail(e.message()),
    };
    let list = profile.tools(&args.serve.config());
    if args.json {
        let v: Vec<Value> = list.iter().map(|t| t.to_json()).collect();
        print(&serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for t in &list {
            let summary = t.description.split(". ").next().unwrap_or(t.description);
            print(&format!("{:<12} {}", t.name, summary.trim_end_matches('.')));
        }
    }
    ExitCode::SUCCESS
}

fn mcp(args: McpArgs) -> ExitCode {
    let profile = match profiles::by_name(&args.serve.profile) {
        Ok(p) => p,
        Err(e) => return fail(e.message()),
    };
    let ws = match args.serve.workspace() {
        Ok(ws) => ws,
        Err(e) => return fail(e.message()),
    };
    if let (Some(addr), Some(token_file)) = (args.http.http, args.http.token_file) {
        let options = crate::mcp::http::HttpOptions {
            addr,
            token_file,
            allow_remote: args.http.http_allow_remote,
            allowed_origins: args.http.allowed_origins,
        };
        return match crate::mcp::http::run_http(profile.name(), args.serve.config(), ws, options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format_args!("mcp http server: {e:#}")),
        };
    }
    let connector = crate::bridge::SocketConnector::new(args.attach, &args.serve.profile)
        .map(|c| Arc::new(c) as Arc<dyn crate::mcp::remote::Connector>);
    match crate::mcp::run_stdio(profile, args.serve.config(), ws, connector) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format_args!("mcp server: {e:#}")),
    }
}

/// `tether history`: the `history` tool of the standard profile, as a table or a diff.
fn history(args: HistoryArgs) -> ExitCode {
    let mut json = serde_json::json!({"limit": args.limit});
    for (key, value) in [("id", &args.id), ("path", &args.path), ("client", &args.client), ("since", &args.since)] {
        if let Some(v) = value {
            json[key] = Value::String(v.clone());
        }
    }
    if args.id.is_some() {
        json.as_object_mut().map(|o| o.remove("limit"));
    }
    let as_json = args.json;
    let shown = args.id.is_some();
    run_standard(&args.serve, "history", json, |v| {
        if as_json {
            return serde_json::to_string_pretty(v).unwrap_or_default();
        }
        if shown {
            let c = &v["changeset"];
            return format!("{}\n{}", history_line(c), v["diff"].as_str().unwrap_or_default().trim_end());
        }
        let list = v["changesets"].as_array().map(Vec::as_slice).unwrap_or_default();
        if list.is_empty() {
            return "no changes recorded".to_owned();
        }
        let mut lines: Vec<String> = list.iter().map(history_line).collect();
        if v["more"] == Value::Bool(true) {
            lines.push("(more: raise --limit)".to_owned());
        }
        lines.join("\n")
    })
}

/// One changeset as a line: `#12 2026-11-25T10:00:03Z edit_file by claude-code 1.0: summary [a.py +1 -1]`.
fn history_line(c: &Value) -> String {
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    let files: Vec<String> = c["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            format!(
                "{} {} +{} -{}",
                f["op"].as_str().unwrap_or("?"),
                f["path"].as_str().unwrap_or("?"),
                f["added"],
                f["removed"]
            )
        })
        .collect();
    let summary = s("summary");
    let summary = summary.lines().next().unwrap_or_default();
    let undone = c["undone_by"].as_str().map(|u| format!(" (undone by #{u})")).unwrap_or_default();
    format!("#{} {} {} by {}: {summary} [{}]{undone}", s("id"), s("time"), s("tool"), s("client"), files.join(", "))
}

/// `tether undo`: the `undo` tool of the standard profile, on disk.
fn undo(args: UndoArgs) -> ExitCode {
    let json = match (args.last, args.ids.as_slice()) {
        (Some(n), _) => serde_json::json!({"last": n}),
        (None, [id]) => serde_json::json!({"id": id}),
        (None, ids) => serde_json::json!({"ids": ids}),
    };
    run_standard(&args.serve, "undo", json, |v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

/// Runs `tool` of the standard profile on disk for the command line (recording as `cli`), and
/// prints its answer through `show` (a JSON answer) or as its text.
fn run_standard(serve: &ServeArgs, tool: &str, json: Value, show: impl Fn(&Value) -> String) -> ExitCode {
    let config = serve.config();
    let Some(settings) = config.journal.clone() else {
        return fail("the change journal is off (--no-journal, or no state directory: set XDG_STATE_HOME)");
    };
    let ws = match serve.workspace() {
        Ok(ws) => ws,
        Err(e) => return fail(e.message()),
    };
    let vfs = Vfs::disk(Arc::new(ws));
    let ctx = Context { vfs: &vfs, config: &config, cancel: &Cancel::default(), editor: None };
    let info = CallInfo::new(tool, "standard", client::CLI, &json);
    let outcome =
        profiles::call_on_fresh_text(&profiles::Standard, &ctx, &DiskSink, Some(&settings), &info, tool, &json);
    match outcome {
        Ok(r) if r.is_error => {
            print(&r.text);
            ExitCode::from(1)
        }
        Ok(r) => {
            print(&r.structured.as_ref().map_or_else(|| r.text.clone(), show));
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn status(args: StatusArgs) -> ExitCode {
    match crate::bridge::status(args.json, &crate::lsp::ide_status) {
        Ok(text) => {
            print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn lsp(args: LspArgs) -> ExitCode {
    let deny = match args.deny.deny() {
        Ok(d) => d,
        Err(e) => return fail(e.message()),
    };
    let options = crate::lsp::Options {
        deny,
        profile: args.profile,
        config: Config { read_only: args.read_only, journal: args.journal.settings(), ..Config::default() },
        save: args.save,
        bridge: !args.no_bridge,
        ide: !args.no_ide,
        ..crate::lsp::Options::default()
    };
    match crate::lsp::run_stdio(options, args.log_level.as_deref()) {
        // As LSP asks: 0 after `shutdown` then `exit`, 1 when the editor left without `shutdown`.
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => fail(format_args!("lsp server: {e:#}")),
    }
}
