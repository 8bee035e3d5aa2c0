//! `install`, `uninstall` and `installed` against temporary project and
//! home directories that already hold settings of their own.

use std::path::Path;

use serde_json::{Value, json};
use sondera_hooks::CodingAgent;
use sondera_hooks::install::{self, Scope, backup_path, config_path};

const PROGRAM: &str = "/opt/sondera/bin/sondera";

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Settings a user already has: other keys, and another hook at an event
/// we also use.
fn existing(agent: CodingAgent) -> Value {
    match agent {
        CodingAgent::ClaudeCode => json!({
            "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
            "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}]},
            "model": "sonnet"
        }),
        CodingAgent::Codex => json!({
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./scripts/summary.sh"}]}],
                      "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/audit.sh"}]}]}
        }),
        CodingAgent::GeminiCli => json!({
            "theme": "GitHub",
            "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]}]}
        }),
        CodingAgent::Cursor => json!({
            "version": 1,
            "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}]}
        }),
        CodingAgent::Copilot => json!({
            "version": 1,
            "hooks": {"sessionStart": [{"type": "command", "bash": "echo started >> log.txt"}]}
        }),
    }
}

#[test]
fn install_merges_once_and_uninstall_takes_out_exactly_what_it_added() {
    for agent in CodingAgent::ALL {
        for user in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let scope = if user {
                Scope::User(dir.path().to_path_buf())
            } else {
                Scope::Project(dir.path().to_path_buf())
            };
            let path = config_path(agent, &scope);
            let before = existing(agent);
            write(&path, &before);

            let report = install::install(agent, &path, PROGRAM).unwrap();
            assert!(!report.changes.is_empty(), "{agent}");
            assert_eq!(report.backup.as_deref(), Some(backup_path(&path).as_path()));
            assert_eq!(
                read(&backup_path(&path)),
                before,
                "{agent}: the backup is the file as it was"
            );
            let after = read(&path);
            for (key, value) in before.as_object().unwrap() {
                if key != "hooks" {
                    assert_eq!(&after[key], value, "{agent}: `{key}` is kept");
                }
            }
            let events = install::installed(agent, &path).unwrap();
            assert!(events.len() >= 4, "{agent}: {events:?}");
            let tool_gate = match agent {
                CodingAgent::ClaudeCode | CodingAgent::Codex => "PreToolUse",
                CodingAgent::GeminiCli => "BeforeTool",
                CodingAgent::Cursor => "beforeShellExecution",
                CodingAgent::Copilot => "preToolUse",
            };
            assert!(events.iter().any(|e| e == tool_gate), "{agent}: {events:?}");
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.contains(&format!("{PROGRAM} hook {agent}")),
                "{agent}: {text}"
            );

            let again = install::install(agent, &path, PROGRAM).unwrap();
            assert!(
                again.changes.is_empty(),
                "{agent}: a second install changes nothing"
            );
            assert_eq!(read(&path), after);

            let removed = install::uninstall(agent, &path).unwrap();
            assert_eq!(removed.changes.len(), report.changes.len(), "{agent}");
            let mut expected = before.clone();
            if matches!(agent, CodingAgent::Cursor | CodingAgent::Copilot) {
                expected["version"] = json!(1);
            }
            assert_eq!(
                read(&path),
                expected,
                "{agent}: only what install added is gone"
            );
            assert!(install::installed(agent, &path).unwrap().is_empty());
        }
    }
}

#[test]
fn a_fresh_configuration_is_created_and_covers_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::Project(dir.path().to_path_buf());
    let path = config_path(CodingAgent::ClaudeCode, &scope);
    let report =
        install::install(CodingAgent::ClaudeCode, &path, "/usr/local/bin/sondera").unwrap();
    assert_eq!(report.backup, None);
    let config = read(&path);
    for event in ["PreToolUse", "PostToolUse"] {
        assert_eq!(
            config["hooks"][event][0]["matcher"], "*",
            "every tool, MCP and sub-agents' included"
        );
    }
    assert_eq!(config["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 120);
    let copilot = config_path(CodingAgent::Copilot, &scope);
    install::install(CodingAgent::Copilot, &copilot, "/usr/local/bin/sondera").unwrap();
    let config = read(&copilot);
    assert_eq!(
        config["hooks"]["preToolUse"][0]["bash"], "/usr/local/bin/sondera hook copilot preToolUse",
        "Copilot's inputs do not name their event, so the command does"
    );
    // Uninstalling the last handler of a file created by install leaves an
    // empty configuration.
    install::uninstall(CodingAgent::ClaudeCode, &path).unwrap();
    assert_eq!(read(&path), json!({}));
}

#[test]
fn a_path_with_spaces_is_quoted_and_still_recognised_as_ours() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_path(
        CodingAgent::Cursor,
        &Scope::Project(dir.path().to_path_buf()),
    );
    let program = "/Users/Dev Person/bin/sondera";
    install::install(CodingAgent::Cursor, &path, program).unwrap();
    let config = read(&path);
    assert_eq!(
        config["hooks"]["beforeShellExecution"][0]["command"],
        "'/Users/Dev Person/bin/sondera' hook cursor"
    );
    assert!(
        install::install(CodingAgent::Cursor, &path, program)
            .unwrap()
            .changes
            .is_empty()
    );
    assert!(
        !install::uninstall(CodingAgent::Cursor, &path)
            .unwrap()
            .changes
            .is_empty()
    );
}

#[test]
fn a_configuration_that_is_not_json_is_left_alone_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_path(
        CodingAgent::GeminiCli,
        &Scope::Project(dir.path().to_path_buf()),
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\n  \"theme\": \"GitHub\",\n  oops\n}\n").unwrap();
    let error = install::install(CodingAgent::GeminiCli, &path, PROGRAM)
        .unwrap_err()
        .to_string();
    assert!(error.contains("settings.json:3:"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\n  \"theme\": \"GitHub\",\n  oops\n}\n"
    );
    std::fs::write(&path, r#"{"hooks": ["not", "an", "object"]}"#).unwrap();
    let error = install::install(CodingAgent::GeminiCli, &path, PROGRAM)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`hooks` is not an object of events"),
        "{error}"
    );
}

#[test]
fn another_tools_handler_is_never_taken_for_ours() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_path(
        CodingAgent::ClaudeCode,
        &Scope::Project(dir.path().to_path_buf()),
    );
    let theirs = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "other-guard hook claude-code"},
        {"type": "command", "command": "/opt/sondera/bin/sondera hook gemini-cli"},
        {"type": "command", "command": "echo sondera hook claude-code"}
    ]}]}});
    write(&path, &theirs);
    assert!(
        install::installed(CodingAgent::ClaudeCode, &path)
            .unwrap()
            .is_empty()
    );
    assert!(
        install::uninstall(CodingAgent::ClaudeCode, &path)
            .unwrap()
            .changes
            .is_empty()
    );
    assert_eq!(read(&path), theirs);
}

#[test]
fn everything_but_the_hooks_keeps_its_order_and_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_path(
        CodingAgent::ClaudeCode,
        &Scope::Project(dir.path().to_path_buf()),
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = r#"{
  "permissions": {
    "deny": ["Read(./.env)"],
    "allow": ["Bash(npm test:*)"]
  },
  "model": "sonnet",
  "env": {"ZED": "1", "ALPHA": "2"}
}
"#;
    std::fs::write(&path, original).unwrap();
    install::install(CodingAgent::ClaudeCode, &path, PROGRAM).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Bash(npm test:*)\"]\n  },\n  \"model\": \"sonnet\",\n  \"env\": {\"ZED\": \"1\", \"ALPHA\": \"2\"},\n  \"hooks\": {\n    \""),
        "{text}"
    );
    assert!(
        text.contains("\n    \"PreToolUse\": [\n      {\n"),
        "the hooks one level in: {text}"
    );
    install::uninstall(CodingAgent::ClaudeCode, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Bash(npm test:*)\"]\n  },\n  \"model\": \"sonnet\",\n  \"env\": {\"ZED\": \"1\", \"ALPHA\": \"2\"}\n}\n"
    );
}
