//! The agents' tools as the guard's classification sees them.
//!
//! Most tools need nothing: `classify_tool_call` already reads `Bash
//! {command}`, `Read {file_path}`, `run_shell_command {command, directory}`,
//! `view {path}` or `web_fetch {url}` as what they are. The few whose
//! arguments carry what they act on in another shape are rewritten into
//! that shape first: edits made of several replacements, notebook cells,
//! searches of a path (a read of it), Gemini's `web_fetch` whose URL is in
//! its prompt, Codex's patch text, PowerShell.

use std::borrow::Cow;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use sondera_guard::{ToolOutcome, classify_tool_call, fold_tool_name, observation_for};
use sondera_model::{FileOperationKind, Payload};

use crate::CodingAgent;

/// The action a call of `tool` with `input` is judged as. `call_id` is the
/// agent's own id of the call; agents without one get an id derived from
/// the call itself, so its result (which repeats tool and input) finds it.
pub(crate) fn action(
    agent: CodingAgent,
    call_id: Option<&str>,
    tool: &str,
    input: &Value,
) -> Payload {
    let id = call_id.map_or_else(|| derived_id(tool, input), str::to_string);
    let (name, args) = normalized(agent, tool, input);
    match classify_tool_call(&id, &name, &args) {
        // Judged under the agent's own name when nothing narrower fits.
        Payload::ToolCall { call_id, .. } => Payload::ToolCall {
            call_id,
            tool: tool.to_string(),
            arguments: input.clone(),
        },
        narrower => narrower,
    }
}

/// A shell command line.
pub(crate) fn shell(call_id: Option<&str>, command: &str, cwd: Option<String>) -> Payload {
    let input = json!({ "command": command });
    Payload::ShellCommand {
        call_id: call_id.map_or_else(|| derived_id("shell", &input), str::to_string),
        command: command.to_string(),
        working_dir: cwd,
    }
}

/// What a tool returned, as the observation of `action`.
pub(crate) fn observation(action: &Payload, response: &Value) -> Payload {
    observation_for(action, ToolOutcome::Returned(response))
}

/// A tool that failed with `error`, as the observation of `action`.
pub(crate) fn failure(action: &Payload, error: &str) -> Payload {
    observation_for(action, ToolOutcome::Raised(error))
}

/// Cursor's file read, and the content it gives the hook (judged as what the
/// read returns, so a planted instruction stops the read).
pub(crate) fn cursor_read(path: &str, content: Option<String>) -> (Payload, Option<Payload>) {
    let call_id = derived_id("read_file", &json!({ "file_path": path }));
    let result = content.map(|content| Payload::FileOperationResult {
        call_id: call_id.clone(),
        success: true,
        content: Some(content),
        error: None,
    });
    let read = Payload::FileOperation {
        call_id,
        operation: FileOperationKind::Read,
        path: path.to_string(),
        content: None,
        old_content: None,
    };
    (read, result)
}

/// Cursor's report of an edit it made: the replacements, as one edit.
pub(crate) fn cursor_edit(path: &str, edits: &Value) -> Payload {
    let (old, new) = replacements(edits, "old_string", "new_string");
    Payload::FileOperation {
        call_id: derived_id("edit", &json!({ "file_path": path, "edits": edits })),
        operation: FileOperationKind::Edit,
        path: path.to_string(),
        content: Some(new),
        old_content: Some(old),
    }
}

/// A call id for agents that give none: the same tool with the same input
/// gets the same id, so an after-tool event finds its call.
fn derived_id(tool: &str, input: &Value) -> String {
    let mut hash = Sha256::new();
    hash.update(tool.as_bytes());
    hash.update([0]);
    hash.update(input.to_string().as_bytes());
    format!("call-{}", hex::encode(&hash.finalize()[..12]))
}

/// The tool name and arguments the classification reads.
fn normalized<'a>(
    agent: CodingAgent,
    tool: &'a str,
    input: &'a Value,
) -> (Cow<'a, str>, Cow<'a, Value>) {
    let Some(args) = input.as_object() else {
        return (Cow::Borrowed(tool), Cow::Borrowed(input));
    };
    let rewritten = match (agent, fold_tool_name(tool).as_str()) {
        (_, "multiedit") => Some(multi_edit(args)),
        (_, "notebookedit") => Some(notebook_edit(args)),
        (_, "grep" | "searchfilecontent" | "listdirectory" | "ls") => searched_path(args),
        (CodingAgent::GeminiCli, "webfetch") => gemini_fetch(args),
        (CodingAgent::GeminiCli, "readmanyfiles") => single_path(args),
        (_, "bash" | "shell" | "execcommand") => command_list(args),
        (_, "applypatch") => patch_text(args),
        (_, "powershell") => Some(("shell", Value::Object(args.clone()))),
        _ => None,
    };
    match rewritten {
        Some((name, args)) => (Cow::Borrowed(name), Cow::Owned(args)),
        None => (Cow::Borrowed(tool), Cow::Borrowed(input)),
    }
}

type Rewritten = (&'static str, Value);

fn path_of(args: &Map<String, Value>) -> Option<&Value> {
    [
        "file_path",
        "notebook_path",
        "path",
        "absolute_path",
        "dir_path",
    ]
    .iter()
    .find_map(|k| {
        args.get(*k)
            .filter(|v| v.as_str().is_some_and(|s| !s.trim().is_empty()))
    })
}

/// Several replacements in one file, as one edit of all of them.
fn multi_edit(args: &Map<String, Value>) -> Rewritten {
    let (old, new) = replacements(
        args.get("edits").unwrap_or(&Value::Null),
        "old_string",
        "new_string",
    );
    let path = path_of(args).cloned().unwrap_or_default();
    (
        "edit",
        json!({ "file_path": path, "old_string": old, "new_string": new }),
    )
}

fn notebook_edit(args: &Map<String, Value>) -> Rewritten {
    let path = path_of(args).cloned().unwrap_or_default();
    let source = args.get("new_source").cloned().unwrap_or_default();
    ("edit", json!({ "file_path": path, "new_string": source }))
}

/// Searching or listing a path reads it.
fn searched_path(args: &Map<String, Value>) -> Option<Rewritten> {
    let path = path_of(args)?.clone();
    Some(("read_file", json!({ "file_path": path })))
}

fn single_path(args: &Map<String, Value>) -> Option<Rewritten> {
    match args.get("paths")?.as_array()?.as_slice() {
        [path] if path.is_string() => Some(("read_file", json!({ "file_path": path }))),
        _ => None,
    }
}

/// Gemini's `web_fetch` takes a prompt with the URLs in it. One URL is a
/// fetch of it; several stay a generic call, whose every host is read.
fn gemini_fetch(args: &Map<String, Value>) -> Option<Rewritten> {
    let prompt = args.get("prompt")?.as_str()?;
    let mut urls = prompt
        .split(|c: char| {
            c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '(' | ')' | '[' | ']')
        })
        .map(|word| word.trim_end_matches(['.', ',', ';', ':', '!', '?']))
        .filter(|word| word.starts_with("http://") || word.starts_with("https://"));
    let url = urls.next()?;
    if urls.next().is_some() {
        return None;
    }
    Some(("web_fetch", json!({ "url": url, "prompt": prompt })))
}

/// Codex may give a command as its argument vector.
fn command_list(args: &Map<String, Value>) -> Option<Rewritten> {
    let words = args
        .get("command")
        .or_else(|| args.get("cmd"))?
        .as_array()?;
    let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
    let command = match words.as_slice() {
        // `bash -lc "script"` is the script.
        [shell, flag, script] if is_shell(shell) && flag.starts_with('-') && flag.contains('c') => {
            (*script).to_string()
        }
        _ => words
            .iter()
            .map(|w| shell_quoted(w))
            .collect::<Vec<_>>()
            .join(" "),
    };
    Some(("bash", json!({ "command": command })))
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash")
}

/// A word quoted for the shell when it needs it.
pub(crate) fn shell_quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Codex's `apply_patch` carries the patch under `input` or `command`.
fn patch_text(args: &Map<String, Value>) -> Option<Rewritten> {
    if args.contains_key("patch") {
        return None;
    }
    let patch = ["input", "command"]
        .iter()
        .find_map(|k| args.get(*k)?.as_str())?;
    Some(("apply_patch", json!({ "patch": patch })))
}

/// The old and new texts of a list of replacements, each joined by lines.
fn replacements(edits: &Value, old_key: &str, new_key: &str) -> (String, String) {
    let edits = edits.as_array().map(Vec::as_slice).unwrap_or_default();
    let texts = |key: &str| {
        edits
            .iter()
            .filter_map(|e| e.get(key)?.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    (texts(old_key), texts(new_key))
}
