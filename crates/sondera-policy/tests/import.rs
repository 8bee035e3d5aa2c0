//! Imported Claude Code and Gemini CLI rules load next to the built-in packs
//! and judge chained commands per segment.

use serde_json::json;
use sondera_guard::classify_tool_call;
use sondera_model::*;
use sondera_policy::import::{import_claude_code, import_gemini_cli};
use sondera_policy::{PolicyEngine, Workspace};

const CLAUDE: &str = include_str!("../../../tests/import/claude-settings.json");
const GEMINI: &str = include_str!("../../../tests/import/gemini-policy.toml");

fn engine_with(policies: &str) -> PolicyEngine {
    PolicyEngine::builder()
        .builtin_packs()
        .policy_source("imported.cedar", policies)
        .workspace(Workspace::new("/workspace/project", "/home/dev"))
        .build()
        .unwrap_or_else(|e| panic!("{e}\n{policies}"))
}

fn decide(engine: &PolicyEngine, tool: &str, arguments: serde_json::Value) -> Decision {
    let agent = Agent::new("a", "p");
    let event = Event::new("t", &agent, classify_tool_call("c", tool, &arguments));
    engine
        .evaluate(&event, &TrajectoryState::default())
        .unwrap()
        .unwrap()
        .decision
}

fn shell(engine: &PolicyEngine, command: &str) -> Decision {
    decide(engine, "bash", json!({ "command": command }))
}

#[test]
fn claude_code_rules_match_each_segment() {
    let imported = import_claude_code(CLAUDE).unwrap();
    assert_eq!(imported.rules, 11);
    assert_eq!(imported.unsupported.len(), 1);
    assert!(imported.unsupported[0].rule.contains("Bash(git * main)"));
    let engine = engine_with(&imported.policies);
    assert_eq!(shell(&engine, "ls -la"), Decision::Allow);
    assert_eq!(
        shell(&engine, "ls && rm -rf ./build"),
        Decision::Deny,
        "an allowed first segment does not carry the chain"
    );
    assert_eq!(shell(&engine, "echo x | r''m notes.txt"), Decision::Deny);
    assert_eq!(shell(&engine, "curl -s https://docs.rs"), Decision::Deny);
    assert_eq!(shell(&engine, "git push origin main"), Decision::Escalate);
    assert_eq!(shell(&engine, "git pull"), Decision::Allow);
    assert_eq!(shell(&engine, "npm run test:unit"), Decision::Allow);
    assert_eq!(
        decide(
            &engine,
            "read_file",
            json!({"path": "/workspace/project/.env"})
        ),
        Decision::Deny
    );
    assert_eq!(
        decide(&engine, "read_file", json!({"path": "secrets/prod.yaml"})),
        Decision::Deny
    );
    assert_eq!(
        decide(
            &engine,
            "write_file",
            json!({"path": "/etc/hosts", "content": "x"})
        ),
        Decision::Deny
    );
    assert_eq!(
        decide(&engine, "mcp__github__create_issue", json!({"title": "t"})),
        Decision::Escalate
    );
}

#[test]
fn gemini_cli_priorities_are_kept_and_chains_are_not_excused() {
    let imported = import_gemini_cli(GEMINI).unwrap();
    assert_eq!(imported.rules, 6);
    let reasons: Vec<&str> = imported
        .unsupported
        .iter()
        .map(|u| u.reason.as_str())
        .collect();
    assert!(reasons[0].contains("commandRegex"), "{reasons:?}");
    assert!(reasons[1].contains("argsPattern"), "{reasons:?}");
    let engine = engine_with(&imported.policies);
    assert_eq!(
        shell(&engine, "git status"),
        Decision::Allow,
        "priority 100 allow"
    );
    assert_eq!(
        shell(&engine, "git log"),
        Decision::Escalate,
        "priority 50 ask"
    );
    assert_eq!(
        shell(&engine, "git status; rm -rf ./build"),
        Decision::Deny,
        "the allow prefix does not excuse the rm segment"
    );
    assert_eq!(
        shell(&engine, "docker rm -f web"),
        Decision::Deny,
        "^docker\\s+rm"
    );
    assert_eq!(shell(&engine, "cargo build"), Decision::Allow);
    assert_eq!(
        decide(&engine, "web_fetch", json!({"url": "https://docs.rs"})),
        Decision::Escalate
    );
}

#[test]
fn malformed_files_are_errors_naming_the_problem() {
    assert!(
        import_claude_code("{")
            .unwrap_err()
            .to_string()
            .contains("not valid JSON")
    );
    assert!(
        import_claude_code(r#"{"permissions": {"deny": "Bash"}}"#)
            .unwrap_err()
            .to_string()
            .contains("`permissions.deny` is not a list")
    );
    let unknown = import_gemini_cli("[[rule]]\ntoolName = \"x\"\ndecision = \"maybe\"\n");
    assert!(
        unknown
            .unwrap_err()
            .to_string()
            .contains("unknown decision `maybe`")
    );
}
