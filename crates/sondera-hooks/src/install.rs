//! Our handlers in an agent's hook configuration: added (merged with what is
//! there, once), taken out (exactly ours), and listed.
//!
//! A handler is ours when its command runs a `sondera` binary's `hook
//! <agent>`; nothing else is touched. A file is written back with its
//! members in their order and every member but the hooks as it was
//! written, its previous content kept beside it (`<file>.sondera-backup`).

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::CodingAgent;
use crate::input::installed_events;
use crate::tools::shell_quoted;

/// How long an agent waits for our hook (seconds), above the longest we
/// wait for an operator, so the agent's timeout never decides a step.
pub const HOOK_TIMEOUT_SECS: u64 = 120;

/// Where a configuration lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The project rooted at this directory.
    Project(PathBuf),
    /// The user whose home is this directory.
    User(PathBuf),
}

/// Why a configuration could not be changed or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The file is not JSON.
    #[error("{path}:{line}:{column}: not JSON ({message}); fix or move it, then run this again")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Where, from 1.
        line: usize,
        /// Where in the line, from 1.
        column: usize,
        /// What the reader found.
        message: String,
    },
    /// A part of the file is not of the shape the agent reads.
    #[error("{path}: `{field}` is not {expected}; fix it by hand, then run this again")]
    Shape {
        /// The file.
        path: PathBuf,
        /// The part.
        field: String,
        /// What it should be.
        expected: &'static str,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// What was done to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The file.
    pub path: PathBuf,
    /// One line per handler added or removed (empty: nothing changed).
    pub changes: Vec<String>,
    /// Where the previous content was kept, when the file existed and changed.
    pub backup: Option<PathBuf>,
}

/// The file an agent reads its hooks from, in `scope`.
pub fn config_path(agent: CodingAgent, scope: &Scope) -> PathBuf {
    let (base, project) = match scope {
        Scope::Project(dir) => (dir, true),
        Scope::User(home) => (home, false),
    };
    let relative = match (agent, project) {
        (CodingAgent::ClaudeCode, _) => ".claude/settings.json",
        (CodingAgent::GeminiCli, _) => ".gemini/settings.json",
        (CodingAgent::Cursor, _) => ".cursor/hooks.json",
        (CodingAgent::Copilot, true) => ".github/hooks/sondera.json",
        (CodingAgent::Copilot, false) => ".copilot/hooks/sondera.json",
        (CodingAgent::Codex, _) => ".codex/hooks.json",
    };
    base.join(relative)
}

/// The command line that runs `sondera` (at `program`) as `agent`'s hook
/// for `event`. Copilot CLI's inputs do not name their event, so its
/// command does.
pub fn hook_command(program: &str, agent: CodingAgent, event: &str) -> String {
    let mut command = format!("{} hook {agent}", shell_quoted(program));
    if agent == CodingAgent::Copilot {
        command.push(' ');
        command.push_str(event);
    }
    command
}

/// Adds our handler for every event `agent` is judged at to the
/// configuration in `path`; `program` is the `sondera` binary to run.
pub fn install(agent: CodingAgent, path: &Path, program: &str) -> Result<Report, InstallError> {
    let mut config = read(path)?;
    let mut changes = Vec::new();
    for event in installed_events(agent) {
        let command = hook_command(program, agent, event);
        if add_handler(agent, &mut config.value, event, &command, path)? {
            changes.push(format!("added {event}: {command}"));
        }
    }
    write_if_changed(path, &config, changes)
}

/// Takes every handler of ours for `agent` out of `path`, and the groups
/// and lists left empty by that.
pub fn uninstall(agent: CodingAgent, path: &Path) -> Result<Report, InstallError> {
    let mut config = read(path)?;
    if config.original.is_none() {
        return Ok(Report {
            path: path.to_path_buf(),
            changes: Vec::new(),
            backup: None,
        });
    }
    let mut changes = Vec::new();
    if let Some(hooks) = config.value.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, entries) in hooks.iter_mut() {
            for command in remove_ours(agent, entries) {
                changes.push(format!("removed {event}: {command}"));
            }
        }
        hooks.retain(|_, entries| entries.as_array().is_none_or(|a| !a.is_empty()));
    }
    let emptied = config.value["hooks"].as_object().is_some_and(Map::is_empty);
    if emptied && !changes.is_empty() {
        // What is left decides nothing; the key goes as install brought it.
        config
            .value
            .as_object_mut()
            .expect("checked when read")
            .remove("hooks");
    }
    write_if_changed(path, &config, changes)
}

/// The events our handler for `agent` is installed at in `path`.
pub fn installed(agent: CodingAgent, path: &Path) -> Result<Vec<String>, InstallError> {
    let config = read(path)?;
    let Some(hooks) = config.value.get("hooks").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    Ok(hooks
        .iter()
        .filter(|(_, entries)| handlers(entries).any(|c| is_ours(agent, c)))
        .map(|(event, _)| event.clone())
        .collect())
}

/// A configuration file as read: its value, to change, and its members in
/// their order with their text, so that what is written back changes only
/// what was changed.
struct Config {
    value: Value,
    original: Option<Members>,
}

fn read(path: &Path) -> Result<Config, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Config {
                value: json!({}),
                original: None,
            });
        }
        Err(source) => return Err(io(path, source)),
    };
    if text.trim().is_empty() {
        return Ok(Config {
            value: json!({}),
            original: Some(Members(Vec::new())),
        });
    }
    let not_json = |e: serde_json::Error| InstallError::NotJson {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    let value: Value = serde_json::from_str(&text).map_err(not_json)?;
    if !value.is_object() {
        return Err(shape(path, "the file", "a JSON object"));
    }
    let original: Members = serde_json::from_str(&text).map_err(not_json)?;
    Ok(Config {
        value,
        original: Some(original),
    })
}

fn write_if_changed(
    path: &Path,
    config: &Config,
    changes: Vec<String>,
) -> Result<Report, InstallError> {
    let mut backup = None;
    if !changes.is_empty() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        if config.original.is_some() {
            let kept = backup_path(path);
            std::fs::copy(path, &kept).map_err(|e| io(&kept, e))?;
            backup = Some(kept);
        }
        let text = config.text();
        // Written beside the file and renamed over it, so a crash leaves
        // the old or the new configuration, never half of one.
        let partial = path.with_extension("sondera-partial");
        std::fs::write(&partial, text).map_err(|e| io(&partial, e))?;
        std::fs::rename(&partial, path).map_err(|e| io(path, e))?;
    }
    Ok(Report {
        path: path.to_path_buf(),
        changes,
        backup,
    })
}

impl Config {
    /// The file's new text: its members in their order, each unchanged one
    /// as it was written, then the new ones.
    fn text(&self) -> String {
        let object = self.value.as_object().expect("checked when read");
        let kept = self
            .original
            .as_ref()
            .map(|m| m.0.as_slice())
            .unwrap_or_default();
        let mut members = Vec::with_capacity(object.len());
        for (key, raw) in kept {
            let Some(now) = object.get(key) else { continue };
            let unchanged = serde_json::from_str::<Value>(raw.get()).is_ok_and(|was| was == *now);
            members.push((
                key.clone(),
                if unchanged {
                    raw.clone()
                } else {
                    member_text(now)
                },
            ));
        }
        for (key, now) in object {
            if !kept.iter().any(|(k, _)| k == key) {
                members.push((key.clone(), member_text(now)));
            }
        }
        serde_json::to_string_pretty(&Members(members)).expect("JSON serialises") + "\n"
    }
}

/// `value` laid out as a member of the top-level object: pretty, one level in.
fn member_text(value: &Value) -> Box<RawValue> {
    let pretty = serde_json::to_string_pretty(value).expect("JSON serialises");
    // JSON strings hold no raw line breaks, so each one starts a line.
    RawValue::from_string(pretty.replace('\n', "\n  ")).expect("still JSON")
}

/// The members of a JSON object, in order, each with its own text.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl serde::Serialize for Members {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// `<file>.sondera-backup`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sondera-backup");
    path.with_file_name(name)
}

fn io(path: &Path, source: std::io::Error) -> InstallError {
    InstallError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn shape(path: &Path, field: &str, expected: &'static str) -> InstallError {
    InstallError::Shape {
        path: path.to_path_buf(),
        field: field.to_string(),
        expected,
    }
}

/// How an agent lists the handlers of one event.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `[{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]`
    Grouped,
    /// `[{"command": ...}]` (Cursor) or `[{"type": "command", "bash": ...}]` (Copilot)
    Flat,
}

fn layout(agent: CodingAgent) -> Layout {
    match agent {
        CodingAgent::Cursor | CodingAgent::Copilot => Layout::Flat,
        _ => Layout::Grouped,
    }
}

/// The key holding a handler's command line.
fn command_key(agent: CodingAgent) -> &'static str {
    if agent == CodingAgent::Copilot {
        "bash"
    } else {
        "command"
    }
}

fn handler(agent: CodingAgent, command: &str) -> Value {
    match agent {
        CodingAgent::ClaudeCode | CodingAgent::Codex => {
            json!({ "type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS })
        }
        CodingAgent::GeminiCli => json!({
            "type": "command",
            "name": "sondera",
            "command": command,
            "timeout": HOOK_TIMEOUT_SECS * 1000,
        }),
        CodingAgent::Cursor => json!({ "command": command }),
        CodingAgent::Copilot => {
            json!({ "type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_SECS })
        }
    }
}

/// Adds our handler for `event` unless one is there; whether it added.
fn add_handler(
    agent: CodingAgent,
    config: &mut Value,
    event: &str,
    command: &str,
    path: &Path,
) -> Result<bool, InstallError> {
    let root = config.as_object_mut().expect("checked when read");
    if matches!(agent, CodingAgent::Cursor | CodingAgent::Copilot) {
        root.entry("version").or_insert(json!(1));
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape(path, "hooks", "an object of events"))?;
    let entries = hooks
        .entry(event.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if handlers(entries).any(|c| is_ours(agent, c)) {
        return Ok(false);
    }
    let list = entries
        .as_array_mut()
        .ok_or_else(|| shape(path, &format!("hooks.{event}"), "a list"))?;
    let new = handler(agent, command);
    match layout(agent) {
        Layout::Flat => list.push(new),
        Layout::Grouped => {
            let mut group = Map::new();
            if agent == CodingAgent::ClaudeCode && event.contains("ToolUse") {
                group.insert("matcher".into(), json!("*"));
            }
            group.insert("hooks".into(), json!([new]));
            list.push(Value::Object(group));
        }
    }
    Ok(true)
}

/// The command lines of every handler in one event's list.
fn handlers(entries: &Value) -> impl Iterator<Item = &str> {
    let list = entries.as_array().map(Vec::as_slice).unwrap_or_default();
    list.iter().flat_map(|entry| {
        let nested = entry.get("hooks").and_then(Value::as_array);
        let own = ["command", "bash"]
            .into_iter()
            .filter_map(|k| entry.get(k)?.as_str());
        let inner = nested
            .into_iter()
            .flatten()
            .filter_map(|h| h.get("command")?.as_str());
        own.chain(inner).collect::<Vec<_>>()
    })
}

/// Removes our handlers from one event's list (and the groups they leave
/// empty); the command lines removed.
fn remove_ours(agent: CodingAgent, entries: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    let Some(list) = entries.as_array_mut() else {
        return removed;
    };
    let key = command_key(agent);
    list.retain_mut(|entry| {
        if let Some(command) = entry.get(key).and_then(Value::as_str) {
            if is_ours(agent, command) {
                removed.push(command.to_string());
                return false;
            }
            return true;
        }
        let Some(inner) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = inner.len();
        inner.retain(|h| {
            let command = h.get("command").and_then(Value::as_str).unwrap_or_default();
            let ours = is_ours(agent, command);
            if ours {
                removed.push(command.to_string());
            }
            !ours
        });
        !(inner.is_empty() && before > 0)
    });
    removed
}

/// Whether `command` runs a `sondera` binary as `agent`'s hook.
fn is_ours(agent: CodingAgent, command: &str) -> bool {
    let command = command.trim();
    let (program, rest) = match command.strip_prefix('\'') {
        Some(quoted) => match quoted.split_once('\'') {
            Some((program, rest)) => (program, rest),
            None => return false,
        },
        None => command
            .split_once(char::is_whitespace)
            .unwrap_or((command, "")),
    };
    let binary = program.rsplit('/').next().unwrap_or(program);
    let mut words = rest.split_whitespace();
    binary.starts_with("sondera")
        && words.next() == Some("hook")
        && words.next() == Some(agent.name())
}
