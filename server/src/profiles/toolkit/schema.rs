//! The toolkit's tool descriptions and argument schemas, as its contract gives them (the
//! descriptions rewritten for clarity).

use serde_json::{json, Value};

pub(super) const SET_WORKSPACE: &str = "Set the workspace root directory for this session. Call it first: \
every other tool is refused until a workspace is set. The directory must exist inside the directories the \
server allows. Afterwards relative paths resolve against the workspace, and absolute paths must lie inside \
it. Calling it again switches to another workspace.";

pub(super) const READ_FILES: &str = "Read one or more text files. Lines come back numbered as `N | line` \
(1-based), the numbers other tools such as apply_diffs and insert_contents use. One file (`path` a string) \
returns just its numbered lines; with `line_range` (\"start-end\", inclusive, single file only) only those \
lines, keeping their real numbers (an end past the last line stops at it). Several files (`path` an array) \
return `Successfully read N file(s):` and a `=== PATH (N lines) ===` section per file; a file that cannot \
be read gets `Error: ...` in its section instead.";

pub(super) const WRITE_FILES: &str = "Create files, or overwrite existing ones completely (missing parent \
directories are created). `path` is one path or an array; `content` is one text for every file or an array \
with one per path; `line_count` is the number of lines of each content (one integer for all, or an array). \
Every file is checked against its line_count before anything is written: on any mismatch nothing is \
written, which catches content cut short. A trailing line break does not count as a line, though one more \
is accepted. All files are written together or none is. An existing file keeps its line-ending style and \
BOM.";

pub(super) const APPLY_DIFFS: &str = "Replace blocks of whole lines in one existing file. Each diff gives \
the exact lines to find (`search_content`), the lines to put instead (`replace_content`, inserted exactly; \
empty deletes) and `start_line`, the 1-based line where the block starts in the file as it is now. Give \
arrays for several diffs: every start_line refers to the original file, before any diff is applied, so \
never shift them yourself. A block is taken at its start_line, or else at the nearest match within 40 \
lines. With `trim`, whitespace at the start and end of each line is ignored when matching. `atomic` \
(default true) applies all diffs or none; false applies the diffs that match and reports the others. \
Read the file with read_files first to get exact lines and numbers.";

pub(super) const INSERT_CONTENTS: &str = "Insert lines into one or more existing files. `line` is where the \
new lines go: a positive line inserts before that 1-based line (one past the last line appends), 0 appends \
at the end of the file, a negative line counts from the end (-1 inserts before the last line). `path`, \
`line` and `content` each take one value or an array (one per path; a single value serves every path). \
Each file is changed on its own and reported on its own line, so one failure does not undo the others.";

pub(super) const SEARCH_AND_REPLACE: &str = "Replace every occurrence of a text, or of a regular expression \
with `use_regex`, in one file. Optionally ignore case, or limit the matches to lines `start_line` to \
`end_line` (1-based, inclusive). In regex mode `replace` may refer to groups as `$1`, `${name}` or `$&`, \
and `$$` is a literal `$`; `^` and `$` match at line starts and ends. Nothing matching is an error.";

pub(super) const LIST_FILES: &str = "List the files and subdirectories of a directory, one per line as \
`directory: NAME` or `file: NAME`, sorted by name. With `recursive`, the contents of every subdirectory \
follow it, named by their path relative to the listed directory (`.git` and symlinked directories are \
listed but not entered). At most 2000 entries are listed.";

/// A parameter that takes one string or an array of them.
fn strings(one: &str, many: &str) -> Value {
    json!({"oneOf": [
        {"type": "string", "description": one},
        {"type": "array", "items": {"type": "string"}, "description": many},
    ], "description": format!("{one}; or {}", lowercase(many))})
}

/// A parameter that takes one integer or an array of them.
fn integers(one: &str, many: &str, minimum: Option<i64>) -> Value {
    let mut single = json!({"type": "integer", "description": one});
    let mut item = json!({"type": "integer"});
    if let Some(m) = minimum {
        single["minimum"] = json!(m);
        item["minimum"] = json!(m);
    }
    json!({"oneOf": [single, {"type": "array", "items": item, "description": many}],
        "description": format!("{one}; or {}", lowercase(many))})
}

fn lowercase(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

pub(super) fn set_workspace() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The workspace root directory: an absolute path inside the allowed directories (a relative path starts at the first allowed directory)"},
        },
        "required": ["path"],
    })
}

pub(super) fn read_files() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": strings("The path of the single file to read", "An array of file paths to read"),
            "line_range": {
                "type": "string",
                "description": "Optional line range 'start-end' (1-based, inclusive), e.g. '1-50'; only when path is a single file",
                "pattern": "^\\d+-\\d+$",
            },
        },
        "required": ["path"],
    })
}

pub(super) fn write_files() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": strings("The path of the single target file", "An array of target file paths"),
            "content": strings(
                "The full content to write, for the single file or the same for all files",
                "An array with the content of each file, in the order of path",
            ),
            "line_count": integers(
                "Total number of lines of the content, for the single file or the same for all files",
                "An array with the line count of each file, in the order of path",
                Some(0),
            ),
        },
        "required": ["path", "content", "line_count"],
    })
}

pub(super) fn apply_diffs() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The path of the file to modify"},
            "search_content": strings(
                "The exact lines to find (for a single diff)",
                "The exact lines to find, one entry per diff",
            ),
            "replace_content": strings(
                "The lines to put in their place (for a single diff)",
                "The lines to put in their place, one entry per diff",
            ),
            "start_line": integers(
                "The 1-based line of the original file where search_content starts (for a single diff)",
                "The 1-based line of the original file where each search_content starts, one per diff; all refer to the file before any diff is applied",
                Some(1),
            ),
            "atomic": {
                "type": "boolean",
                "description": "All-or-nothing: when true (default) every diff is checked before any is applied, and none is applied if one fails; when false the diffs that match are applied and the others reported",
                "default": true,
            },
            "trim": {
                "type": "boolean",
                "description": "Ignore whitespace at the start and end of each line when matching search_content; replace_content is still inserted exactly as given. Default false",
                "default": false,
            },
        },
        "required": ["path", "search_content", "replace_content", "start_line"],
    })
}

pub(super) fn insert_contents() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": strings("The path of the single target file", "An array of target file paths"),
            "line": integers(
                "Where to insert (positive: before this 1-based line; 0: at the end of the file; negative: from the end, -1 before the last line), for the single file or the same for all files",
                "An array with the line for each file, in the order of path",
                None,
            ),
            "content": strings(
                "The content to insert, for the single file or the same for all files",
                "An array with the content for each file, in the order of path",
            ),
        },
        "required": ["path", "line", "content"],
    })
}

pub(super) fn search_and_replace() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The target file path"},
            "search": {"type": "string", "description": "The text or regular expression to search for"},
            "replace": {"type": "string", "description": "The text to replace each match with"},
            "use_regex": {"type": "boolean", "description": "Treat search as a regular expression", "default": false},
            "ignore_case": {"type": "boolean", "description": "Ignore case when searching", "default": false},
            "start_line": {"type": "integer", "description": "First line of the search range (1-based, inclusive)", "minimum": 1},
            "end_line": {"type": "integer", "description": "Last line of the search range (1-based, inclusive)", "minimum": 1},
        },
        "required": ["path", "search", "replace"],
    })
}

pub(super) fn list_files() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The directory to list (relative to the workspace, or absolute inside it)"},
            "recursive": {"type": "boolean", "description": "Also list the contents of every subdirectory", "default": false},
        },
        "required": ["path"],
    })
}
