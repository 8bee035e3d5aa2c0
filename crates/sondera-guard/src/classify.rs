//! Tool classification: an ADK tool call adjudicated as the narrowest action it fits.
//!
//! A tool is an arbitrary function, so the name alone proves nothing: the name
//! sets include bare verbs such as `read` and `create`. A call is reclassified
//! only when its arguments also carry the identifying value (a path or patch
//! body, a command, a URL); otherwise an issue tracker's `create(title, body)`
//! would be judged as a file write, and on a fail-closed gate a mislabel is a
//! spurious deny. The observation after execution is derived from the action
//! built before it, never re-decided from the result.

use serde_json::{Map, Value};
use sondera_model::{FileOperationKind, Payload, PendingCall};

const FILE_READ: &[&str] = &[
    "read",
    "readfile",
    "readfiles",
    "readmanyfiles",
    "view",
    "viewfile",
    "openfile",
];
const FILE_WRITE: &[&str] = &[
    "write",
    "writefile",
    "create",
    "createfile",
    "newfile",
    "savefile",
];
const FILE_EDIT: &[&str] = &[
    "edit",
    "editfile",
    "editfiles",
    "replace",
    "strreplace",
    "replaceinfile",
    "replacestringinfile",
    "multiedit",
    "applypatch",
    "patch",
    "applydiff",
];
/// Verbs that delete, read from the front of a folded tool name.
const DELETING_VERBS: &[&str] = &[
    "delete", "remove", "rm", "erase", "trash", "unlink", "destroy", "wipe", "purge",
];
/// What a deleting verb deletes when it is a file or a folder; the verb
/// alone (`delete(path=...)`) too.
const FILE_NOUNS: &[&str] = &[
    "",
    "file",
    "files",
    "folder",
    "folders",
    "directory",
    "directories",
    "dir",
    "dirs",
    "path",
    "paths",
    "tree",
    "recursive",
];
const MULTIPLEXED_EDITORS: &[&str] = &["strreplaceeditor", "strreplacebasededittool", "texteditor"];
const PATCH_TOOLS: &[&str] = &["applypatch", "patch", "applydiff"];
const SHELL: &[&str] = &[
    "bash",
    "sh",
    "shell",
    "terminal",
    "runshell",
    "runshellcommand",
    "shellcommand",
    "executeshellcommand",
    "runterminalcommand",
    "runterminalcmd",
    "runinterminal",
    "executecommand",
    "execcommand",
    "runcommand",
    "executebash",
    "runbash",
    "bashtool",
    "shellexec",
    "localshell",
];
const WEB: &[&str] = &[
    "webfetch",
    "fetch",
    "fetchwebpage",
    "fetchurl",
    "loadwebpage",
    "readurl",
    "readurlcontent",
    "weburl",
    "httprequest",
    "http",
];

const EDITOR_OPERATION_KEYS: &[&str] = &["command", "subcommand", "operation", "action"];
const PATH_KEYS: &[&str] = &[
    "filePath",
    "file_path",
    "absolutePath",
    "absolute_path",
    "targetFile",
    "target_file",
    "notebook_path",
    "notebookPath",
    "path",
    "file",
];
const CONTENT_KEYS: &[&str] = &[
    "content",
    "file_text",
    "fileText",
    "new_str",
    "newStr",
    "new_string",
    "newString",
    "new_content",
    "newContent",
    "text",
    "code",
];
const PATCH_KEYS: &[&str] = &["patch", "diff"];
const OLD_CONTENT_KEYS: &[&str] = &[
    "old_str",
    "oldStr",
    "old_string",
    "oldString",
    "old_content",
    "oldContent",
];
const COMMAND_KEYS: &[&str] = &["command", "cmd", "command_line", "commandLine", "script"];
const WORKING_DIR_KEYS: &[&str] = &["working_dir", "workingDir", "cwd", "directory", "dir"];
const URL_KEYS: &[&str] = &["url", "URL", "uri", "href", "link"];
const URL_LIST_KEYS: &[&str] = &["urls", "links"];
const PROMPT_KEYS: &[&str] = &["prompt", "query", "question", "instructions"];
pub(crate) const METHOD_KEYS: &[&str] = &["method", "http_method", "httpMethod", "verb"];
pub(crate) const BODY_KEYS: &[&str] = &["body", "data", "json", "payload", "form", "content"];

/// Folds a tool name case- and separator-insensitively: `read_file`,
/// `readFile` and `read-file` all become `readfile`. Separators are removed,
/// never replaced, so namespaced names (`mcp__fs__read_file`) stay distinct
/// from the bare verb.
///
/// Names are compared as a reader sees them, not as they are encoded: a tool
/// called `bаsh` (Cyrillic а), `ｂａｓｈ` or `ba<ZWJ>sh` is classified as
/// `bash`, since a model that reads the name calls it as one. See
/// [`visible_ascii`].
pub fn fold_tool_name(name: &str) -> String {
    let visible = visible_ascii(name);
    visible
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// `text` with its compatibility forms folded (NFKC: full-width letters and
/// digits, ligatures, circled characters), invisible characters removed
/// (zero-width joiners and spaces, soft hyphens, direction marks: Unicode's
/// default-ignorable code points) and every other non-ASCII character that
/// Unicode's confusables table says looks like ASCII replaced by that ASCII
/// (UTS #39 skeleton of the character). ASCII text is returned as it is.
pub fn visible_ascii(text: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut one = [0u8; 4];
    for c in text.nfkc() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut one)).collect();
        if skeleton.is_ascii() {
            out.push_str(&skeleton);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The action a call of `tool` with `arguments` is adjudicated as.
pub fn classify_tool_call(call_id: &str, tool: &str, arguments: &Value) -> Payload {
    let folded = fold_tool_name(tool);
    let args = arguments.as_object();
    let classified = args.and_then(|args| {
        file_operation(&folded, args)
            .map(|(operation, path)| file_payload(call_id, &folded, operation, path, args))
            .or_else(|| shell_payload(call_id, &folded, args))
            .or_else(|| web_payload(call_id, &folded, args))
    });
    classified.unwrap_or_else(|| Payload::ToolCall {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        arguments: arguments.clone(),
    })
}

fn file_operation(folded: &str, args: &Map<String, Value>) -> Option<(FileOperationKind, String)> {
    let operation = if MULTIPLEXED_EDITORS.contains(&folded) {
        editor_operation(args)
    } else if FILE_READ.contains(&folded) {
        FileOperationKind::Read
    } else if FILE_WRITE.contains(&folded) {
        FileOperationKind::Write
    } else if FILE_EDIT.contains(&folded) {
        FileOperationKind::Edit
    } else if deletes_files(folded) {
        FileOperationKind::Delete
    } else {
        return None;
    };
    if let Some(path) = first_string(args, PATH_KEYS) {
        return Some((operation, path.to_string()));
    }
    if PATCH_TOOLS.contains(&folded) {
        let patch = first_string(args, PATCH_KEYS)?;
        return Some((operation, patch_target(patch).unwrap_or_default()));
    }
    None
}

/// Whether a folded tool name is a deleting verb with a file's or a
/// folder's noun, or alone: `delete_folder`, `removeDirectory`, `rm_dir`,
/// `trash_file`.
fn deletes_files(folded: &str) -> bool {
    DELETING_VERBS.iter().any(|verb| {
        folded
            .strip_prefix(verb)
            .is_some_and(|noun| FILE_NOUNS.contains(&noun))
    })
}

fn editor_operation(args: &Map<String, Value>) -> FileOperationKind {
    let op = first_string(args, EDITOR_OPERATION_KEYS)
        .unwrap_or_default()
        .to_ascii_lowercase();
    match op.as_str() {
        "view" | "read" => FileOperationKind::Read,
        "create" | "write" => FileOperationKind::Write,
        "delete" | "remove" => FileOperationKind::Delete,
        _ => FileOperationKind::Edit,
    }
}

/// The first file a unified or `*** Begin Patch` style patch touches.
fn patch_target(patch: &str) -> Option<String> {
    patch.lines().find_map(|line| {
        let rest = [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "+++ ",
            "--- ",
        ]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix))?;
        let path = rest.split('\t').next()?.trim();
        let path = path
            .strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path);
        (!path.is_empty() && path != "/dev/null").then(|| path.to_string())
    })
}

fn file_payload(
    call_id: &str,
    folded: &str,
    operation: FileOperationKind,
    path: String,
    args: &Map<String, Value>,
) -> Payload {
    let content = first_string(args, CONTENT_KEYS).or_else(|| {
        PATCH_TOOLS
            .contains(&folded)
            .then(|| first_string(args, PATCH_KEYS))
            .flatten()
    });
    Payload::FileOperation {
        call_id: call_id.to_string(),
        operation,
        path,
        content: content.map(str::to_string),
        old_content: first_string(args, OLD_CONTENT_KEYS).map(str::to_string),
    }
}

fn shell_payload(call_id: &str, folded: &str, args: &Map<String, Value>) -> Option<Payload> {
    if !SHELL.contains(&folded) {
        return None;
    }
    let command = first_string(args, COMMAND_KEYS)?;
    Some(Payload::ShellCommand {
        call_id: call_id.to_string(),
        command: command.to_string(),
        working_dir: first_string(args, WORKING_DIR_KEYS).map(str::to_string),
    })
}

fn web_payload(call_id: &str, folded: &str, args: &Map<String, Value>) -> Option<Payload> {
    if !WEB.contains(&folded) {
        return None;
    }
    let url = first_string(args, URL_KEYS).or_else(|| {
        URL_LIST_KEYS.iter().find_map(|key| {
            args.get(*key)?
                .as_array()?
                .iter()
                .find_map(|v| v.as_str().filter(|s| !s.trim().is_empty()))
        })
    })?;
    // A web tool given a `file:` URL reads a local file.
    if let Some(path) = sondera_catalogue::hosts::file_url_path(url.trim()) {
        return Some(Payload::FileOperation {
            call_id: call_id.to_string(),
            operation: FileOperationKind::Read,
            path: path.to_string(),
            content: None,
            old_content: None,
        });
    }
    Some(Payload::WebFetch {
        call_id: call_id.to_string(),
        url: url.to_string(),
        prompt: first_string(args, PROMPT_KEYS)
            .unwrap_or_default()
            .to_string(),
        method: first_string(args, METHOD_KEYS).map(|m| m.trim().to_ascii_uppercase()),
        body: request_body(args),
    })
}

/// The body a web tool sends: a string as given, anything else as JSON.
fn request_body(args: &Map<String, Value>) -> Option<String> {
    BODY_KEYS.iter().find_map(|key| match args.get(*key)? {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    })
}

/// The first non-blank string among `keys`, in the order given.
fn first_string<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| args.get(*key)?.as_str().filter(|s| !s.trim().is_empty()))
}

/// The payload an event arriving from any client is judged as: a generic
/// tool call that [`classify_tool_call`] puts in a narrower class (a `bash`
/// call with a command is a shell command), and the generic output of a
/// call that was so classified (`pending`) as the matching observation.
/// `None` when the payload is already what it would be classified as.
///
/// Every way in (a harness server, `sondera adjudicate`, a custom
/// integration) applies this, so sending a shell command as a generic call
/// downgrades nothing.
pub fn reclassify(payload: &Payload, pending: Option<&PendingCall>) -> Option<Payload> {
    match payload {
        Payload::ToolCall {
            call_id,
            tool,
            arguments,
        } => {
            let classified = classify_tool_call(call_id, tool, arguments);
            (!matches!(classified, Payload::ToolCall { .. })).then_some(classified)
        }
        Payload::ToolOutput {
            call_id,
            output,
            error,
            ..
        } => {
            let action = pending_action(pending?)?;
            let outcome = match (output, error) {
                (Value::Null, Some(error)) => ToolOutcome::Raised(error),
                _ => ToolOutcome::Returned(output),
            };
            let observation = observation_for(&action, outcome);
            (observation.call_id() == Some(call_id.as_str())).then_some(observation)
        }
        _ => None,
    }
}

/// The action a pending call of a class other than a generic tool call
/// stands for, as far as its observation needs it.
fn pending_action(call: &PendingCall) -> Option<Payload> {
    let call_id = call.call_id.clone();
    Some(match call.kind.as_str() {
        "shell_command" => Payload::ShellCommand {
            call_id,
            command: call.target.clone(),
            working_dir: None,
        },
        "web_fetch" => Payload::WebFetch {
            call_id,
            url: call.target.clone(),
            prompt: String::new(),
            method: None,
            body: None,
        },
        "file_operation" => Payload::FileOperation {
            call_id,
            operation: FileOperationKind::Read,
            path: call.target.clone(),
            content: None,
            old_content: None,
        },
        _ => return None,
    })
}

/// What a tool returned: its result object, or the error it raised.
#[derive(Debug, Clone, Copy)]
pub enum ToolOutcome<'a> {
    /// It returned this result.
    Returned(&'a Value),
    /// It raised an error with this text.
    Raised(&'a str),
}

/// The observation that reports `outcome` for the action `action`, which is
/// the payload [`classify_tool_call`] built before the tool ran.
pub fn observation_for(action: &Payload, outcome: ToolOutcome<'_>) -> Payload {
    match action {
        Payload::FileOperation { call_id, .. } => file_result(call_id, outcome),
        Payload::ShellCommand { call_id, .. } => shell_result(call_id, outcome),
        Payload::WebFetch { call_id, url, .. } => web_result(call_id, url, outcome),
        other => generic_result(other.call_id().unwrap_or_default(), outcome),
    }
}

/// Keys under which results put the text they are about, per kind of tool.
const FILE_TEXT_KEYS: &[&str] = &["result", "content", "text", "output", "data", "contents"];
const SHELL_STDOUT_KEYS: &[&str] = &["stdout", "output", "result", "out"];
const SHELL_STDERR_KEYS: &[&str] = &["stderr", "err_output"];
const SHELL_STATUS_KEYS: &[&str] = &[
    "exit_code",
    "exitCode",
    "returncode",
    "return_code",
    "status_code",
    "exit_status",
    "code",
];
const WEB_TEXT_KEYS: &[&str] = &[
    "result", "content", "output", "body", "text", "html", "markdown", "data",
];
const WEB_STATUS_KEYS: &[&str] = &[
    "code",
    "status_code",
    "statusCode",
    "status",
    "http_status",
    "httpStatus",
    "response_code",
];
/// Keys that carry a failure's message.
const ERROR_KEYS: &[&str] = &[
    "error",
    "error_message",
    "errorMessage",
    "err",
    "exception",
    "traceback",
];
/// Keys that carry a message which, when the result says it failed, is the
/// failure's explanation.
const MESSAGE_KEYS: &[&str] = &["message", "detail", "reason", "msg", "description"];

/// A result's text: the member under the first of `keys` that holds one
/// (looking through ADK's `{"result": ...}` wrapping; non-string values as
/// their text), followed by every string the result holds elsewhere, so
/// nothing it carries goes unread whatever key a tool chose for it. `None`
/// when the result holds no text at all.
fn result_text(value: &Value, keys: &[&str], skip: &[&str]) -> Option<String> {
    let Value::Object(map) = value else {
        return match value {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(crate::json::all_text(other)).filter(|t| !t.is_empty()),
        };
    };
    let primary = keys
        .iter()
        .find(|key| map.get(**key).is_some_and(|v| !v.is_null()));
    let mut text = primary
        .map(|key| member_text(&map[*key]))
        .unwrap_or_default();
    for (key, member) in map {
        if Some(&key.as_str()) == primary || skip.contains(&key.as_str()) {
            continue;
        }
        let rest = match member {
            Value::String(s) => s.clone(),
            Value::Object(_) | Value::Array(_) => crate::json::all_text(member),
            _ => continue,
        };
        if !rest.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&rest);
        }
    }
    (primary.is_some() || !text.is_empty()).then_some(text)
}

/// A member's text: a string as it is, a structure as every string in it,
/// a number or boolean as written.
fn member_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => crate::json::all_text(value),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The failure a returned result reports, if it reports one: a message under
/// an error key, or a result marked as failed (`"status": "error"`,
/// `"success": false`, `"ok": false`, `"isError": true`) with its message.
fn reported_error(value: &Value) -> Option<String> {
    let map = value.as_object()?;
    let explicit = ERROR_KEYS.iter().find_map(|key| match map.get(*key)? {
        Value::Null | Value::Bool(false) => None,
        Value::String(s) if s.is_empty() => None,
        Value::Bool(true) => Some(String::new()),
        other => Some(member_text(other)),
    });
    let flagged = map.get("status").and_then(Value::as_str).is_some_and(|s| {
        ["error", "failed", "failure", "fail"]
            .iter()
            .any(|f| s.eq_ignore_ascii_case(f))
    }) || ["success", "ok", "succeeded"]
        .iter()
        .any(|k| map.get(*k) == Some(&Value::Bool(false)))
        || ["isError", "is_error", "failed"]
            .iter()
            .any(|k| map.get(*k) == Some(&Value::Bool(true)));
    let message = || {
        MESSAGE_KEYS
            .iter()
            .find_map(|k| map.get(*k).map(member_text))
            .unwrap_or_else(|| "the tool reported a failure".to_string())
    };
    match explicit {
        Some(text) if text.is_empty() => Some(message()),
        Some(text) => Some(text),
        None => flagged.then(message),
    }
}

/// A number under the first of `keys` that holds one, written as a number or
/// as a numeric string (`"status": "404"`).
fn number_field(value: &Value, keys: &[&str]) -> Option<i64> {
    keys.iter().find_map(|key| match value.get(*key)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

fn file_result(call_id: &str, outcome: ToolOutcome<'_>) -> Payload {
    let (success, content, error) = match outcome {
        ToolOutcome::Returned(value) => {
            let error = reported_error(value);
            let content = result_text(value, FILE_TEXT_KEYS, &[]);
            (error.is_none(), content, error)
        }
        ToolOutcome::Raised(error) => (false, None, Some(error.to_string())),
    };
    Payload::FileOperationResult {
        call_id: call_id.to_string(),
        success,
        content,
        error,
    }
}

fn shell_result(call_id: &str, outcome: ToolOutcome<'_>) -> Payload {
    let (exit_code, stdout, stderr) = match outcome {
        ToolOutcome::Returned(value) => {
            let error = reported_error(value);
            let reported = number_field(value, SHELL_STATUS_KEYS);
            let exit_code = reported.unwrap_or(i64::from(error.is_some()));
            let mut skip: Vec<&str> = SHELL_STDERR_KEYS.to_vec();
            skip.extend_from_slice(SHELL_STATUS_KEYS);
            skip.extend_from_slice(ERROR_KEYS);
            let stdout = result_text(value, SHELL_STDOUT_KEYS, &skip).unwrap_or_default();
            let mut stderr = match value {
                Value::Object(map) => SHELL_STDERR_KEYS
                    .iter()
                    .find_map(|k| map.get(*k).map(member_text))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            if let Some(error) = error {
                if !stderr.is_empty() {
                    stderr.push('\n');
                }
                stderr.push_str(&error);
            }
            (exit_code, stdout, stderr)
        }
        ToolOutcome::Raised(error) => (1, String::new(), error.to_string()),
    };
    Payload::ShellCommandOutput {
        call_id: call_id.to_string(),
        exit_code,
        stdout,
        stderr,
    }
}

fn web_result(call_id: &str, url: &str, outcome: ToolOutcome<'_>) -> Payload {
    let (code, result) = match outcome {
        ToolOutcome::Returned(value) => {
            let error = reported_error(value);
            let status = number_field(value, WEB_STATUS_KEYS).and_then(|c| u16::try_from(c).ok());
            // A result that reports a failure and no status got no response.
            let code = status.unwrap_or(if error.is_some() { 0 } else { 200 });
            let mut result = result_text(value, WEB_TEXT_KEYS, WEB_STATUS_KEYS).unwrap_or_default();
            if let Some(error) = error.filter(|e| !result.contains(e.as_str())) {
                if !result.is_empty() {
                    result.push('\n');
                }
                result.push_str(&error);
            }
            (code, result)
        }
        ToolOutcome::Raised(error) => (0, error.to_string()),
    };
    Payload::WebFetchOutput {
        call_id: call_id.to_string(),
        url: url.to_string(),
        code,
        result,
    }
}

fn generic_result(call_id: &str, outcome: ToolOutcome<'_>) -> Payload {
    match outcome {
        ToolOutcome::Returned(value) => {
            let error = reported_error(value);
            Payload::ToolOutput {
                call_id: call_id.to_string(),
                success: error.is_none(),
                output: value.clone(),
                error,
            }
        }
        ToolOutcome::Raised(error) => Payload::ToolOutput {
            call_id: call_id.to_string(),
            success: false,
            output: Value::Null,
            error: Some(error.to_string()),
        },
    }
}
