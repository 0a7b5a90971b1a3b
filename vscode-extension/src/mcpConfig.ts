// Copy MCP Configuration: the snippets that give other assistants tether's tools over MCP.
// Pure (no `vscode` import) so that unit tests can run it.

import { mcpArgs, type Settings } from "./settings";

/** Quotes a word for a POSIX shell, only when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A TOML basic string. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/**
 * The configuration snippets for one workspace folder, as one Markdown text: Claude Code's
 * command, Codex's `config.toml` table, Cursor's and VS Code's `mcp.json`. `command` is the
 * binary to run (`tether` when it is on PATH, else its absolute path).
 */
export function mcpConfiguration(command: string, folder: string, s: Settings): string {
  const args = mcpArgs(s, folder);
  const claude = ["claude", "mcp", "add", "tether", "--", command, ...args].map(shellQuote).join(" ");
  const codex = [
    "[mcp_servers.tether]",
    `command = ${tomlString(command)}`,
    `args = [${args.map(tomlString).join(", ")}]`,
  ].join("\n");
  const cursor = JSON.stringify({ mcpServers: { tether: { command, args } } }, null, 2);
  const vscode = JSON.stringify({ servers: { tether: { type: "stdio", command, args } } }, null, 2);
  return [
    `# tether over MCP for ${folder}`,
    "",
    "VS Code's agent mode already has tether's tools from this extension (MCP server \"tether\").",
    "",
    "## Claude Code",
    "",
    "```sh",
    claude,
    "```",
    "",
    "## Codex (`~/.codex/config.toml`)",
    "",
    "```toml",
    codex,
    "```",
    "",
    "## Cursor (`.cursor/mcp.json` in the project)",
    "",
    "```json",
    cursor,
    "```",
    "",
    "## VS Code without the extension (`.vscode/mcp.json` in the project)",
    "",
    "```json",
    vscode,
    "```",
    "",
  ].join("\n");
}
