//! Coding agents end to end: `sondera hook <agent>` in process and against
//! a server, `POST /v1/hooks/{agent}`, operators deciding an agent's
//! escalation, and `sondera hooks install|status|uninstall`.

mod common;

use std::process::Output;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const AGENTS: [&str; 5] = ["claude-code", "gemini-cli", "cursor", "copilot", "codex"];

/// A shell command about to run, as `agent`'s tool gate sends it: the event
/// to name on the command line (Copilot's inputs carry none) and the input.
fn shell_call(agent: &str, session: &str, command: &str) -> (Option<&'static str>, String) {
    let cwd = "/home/dev/project";
    let input = match agent {
        "claude-code" | "codex" => json!({
            "session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_1"
        }),
        "gemini-cli" => json!({
            "session_id": session, "cwd": cwd, "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command", "tool_input": {"command": command}
        }),
        "cursor" => json!({
            "conversation_id": session, "generation_id": "g1", "workspace_roots": [cwd],
            "hook_event_name": "beforeShellExecution", "command": command, "cwd": cwd
        }),
        "copilot" => json!({
            "sessionId": session, "timestamp": 1, "cwd": cwd, "toolName": "bash",
            "toolArgs": json!({"command": command}).to_string()
        }),
        other => panic!("{other}"),
    };
    let event = (agent == "copilot").then_some("preToolUse");
    (event, input.to_string())
}

fn hook(agent: &str, event: Option<&str>, input: &str, env: &[(&str, &str)]) -> Output {
    let mut args = vec!["hook", agent];
    args.extend(event);
    let mut env = env.to_vec();
    env.push(("SONDERA_HOME", "/home/dev"));
    sondera_with_env(&args, input, &env)
}

/// Whether an answer refuses the step, in the agent's dialect.
fn refused(agent: &str, output: &Output) -> bool {
    if output.status.code() == Some(2) {
        return agent != "copilot";
    }
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(output);
    if text.trim().is_empty() {
        return false;
    }
    let answer: Value = serde_json::from_str(&text).unwrap();
    let decision = answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .or(answer["permissionDecision"].as_str())
        .or(answer["decision"].as_str())
        .or(answer["permission"].as_str())
        .unwrap_or_default();
    matches!(decision, "deny" | "block" | "ask")
}

#[test]
fn every_agent_is_judged_in_process_and_recorded_in_the_embedded_store() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().display().to_string();
    let env = [("SONDERA_DATA_DIR", dir.as_str())];
    for agent in AGENTS {
        let (event, input) = shell_call(agent, "s1", "cargo test");
        let allowed = hook(agent, event, &input, &env);
        assert!(!refused(agent, &allowed), "{agent}: {allowed:?}");
        let (event, input) = shell_call(agent, "s1", "rm -rf ~");
        let denied = hook(agent, event, &input, &env);
        assert!(refused(agent, &denied), "{agent}: {denied:?}");
    }
    let listed = stdout(&sondera(&["trajectories", "list", "--data-dir", &dir]));
    for agent in AGENTS {
        assert!(listed.contains(&format!("{agent}-s1")), "{listed}");
    }
}

#[test]
fn every_agent_is_judged_by_a_server_through_both_ways_in() {
    let data = tempfile::tempdir().unwrap();
    let store = data.path().display().to_string();
    let token = "sk_hooks_agent";
    let entry = stdout(&sondera_with_input(
        &["token", "hash", "--tenant", "acme"],
        token,
    ));
    let server = ServerProcess::start(&["--store", &store, "--token", entry.trim()]);
    let env = [
        ("SONDERA_HARNESS_ENDPOINT", server.grpc.as_str()),
        ("SONDERA_API_TOKEN", token),
    ];
    let bearer = format!("Bearer {token}");
    for agent in AGENTS {
        let (event, input) = shell_call(agent, "remote-1", "git status");
        assert!(
            !refused(agent, &hook(agent, event, &input, &env)),
            "{agent}"
        );
        let (event, input) = shell_call(agent, "remote-1", "rm -rf ~");
        assert!(refused(agent, &hook(agent, event, &input, &env)), "{agent}");

        let path = match event {
            Some(event) => format!("/v1/hooks/{agent}?event={event}"),
            None => format!("/v1/hooks/{agent}"),
        };
        let auth = [("authorization", bearer.as_str())];
        let (_, input) = shell_call(agent, "http-1", "rm -rf ~");
        let (status, body) = post_json(&server.http, &path, &auth, &input);
        assert_eq!(status, 200, "{agent}: {body}");
        assert!(
            body.contains("destructive-delete-outside-workspace"),
            "{agent}: {body}"
        );
        let (_, input) = shell_call(agent, "http-1", "ls -la");
        let (status, body) = post_json(&server.http, &path, &auth, &input);
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert!(
            !body.contains("deny") && !body.contains("block"),
            "{agent}: {answer}"
        );

        // No token, or a body that is not JSON: still 200, with a refusal.
        let (status, body) = post_json(&server.http, &path, &[], &input);
        assert_eq!(status, 200);
        assert!(body.contains("token"), "{agent}: {body}");
        let (status, body) = post_json(&server.http, &path, &auth, "{\"session_id\": ");
        assert_eq!(status, 200);
        assert!(body.contains("not JSON"), "{agent}: {body}");
    }
}

#[test]
fn an_unreachable_server_blocks_the_step_in_every_dialect() {
    let env = [("SONDERA_HARNESS_ENDPOINT", "127.0.0.1:9")];
    for agent in AGENTS {
        let (event, input) = shell_call(agent, "s1", "ls");
        let output = hook(agent, event, &input, &env);
        assert!(refused(agent, &output), "{agent}: {output:?}");
        let said = format!(
            "{}{}",
            stdout(&output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            said.contains("cannot reach the harness server"),
            "{agent}: {said}"
        );
    }
    // A setting that makes no sense is a refusal too, not a quiet default.
    let (event, input) = shell_call("claude-code", "s1", "ls");
    let output = hook(
        "claude-code",
        event,
        &input,
        &[("SONDERA_HOOK_ESCALATE", "nobody")],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("SONDERA_HOOK_ESCALATE"));
}

#[test]
fn an_operator_decides_a_coding_agents_escalation() {
    let data = tempfile::tempdir().unwrap();
    let store = data.path().display().to_string();
    let agent_token = "sk_hooks_agent";
    let operator_token = "sk_hooks_operator";
    let agent_entry = stdout(&sondera_with_input(
        &["token", "hash", "--tenant", "acme"],
        agent_token,
    ));
    let operator_entry = stdout(&sondera_with_input(
        &[
            "token", "hash", "--tenant", "acme", "--role", "operator", "--name", "ana",
        ],
        operator_token,
    ));
    let tokens = format!("{},{}", agent_entry.trim(), operator_entry.trim());
    let server = ServerProcess::start(&["--store", &store, "--token", &tokens]);
    let mut tail = tail_json(&server.grpc, operator_token);
    let (event, input) = shell_call("gemini-cli", "ops-1", "git push --force origin main");
    let grpc = server.grpc.clone();
    let waiting = std::thread::spawn(move || {
        let env = [
            ("SONDERA_HARNESS_ENDPOINT", grpc.as_str()),
            ("SONDERA_API_TOKEN", agent_token),
            ("SONDERA_HOOK_ESCALATE", "operators"),
            ("SONDERA_HOOK_WAIT", "30"),
        ];
        hook("gemini-cli", event, &input, &env)
    });
    let as_operator = ["--server", server.grpc.as_str(), "--token", operator_token];
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let listed = stdout(&sondera(
            &[&["approvals", "list", "--json"][..], &as_operator].concat(),
        ));
        if let Some(first) = listed.lines().next() {
            let approval: Value = serde_json::from_str(first).unwrap();
            assert_eq!(approval["trajectory_id"], "gemini-cli-ops-1");
            break approval["id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(100));
    };
    // The session is followed live like any agent's: started, where it works, the call.
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(tail.stdout.take().unwrap()).lines();
    let followed: Vec<Value> = (0..3)
        .map(|_| serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap())
        .collect();
    tail.kill().unwrap();
    tail.wait().unwrap();
    let kinds: Vec<&str> = followed
        .iter()
        .map(|l| l["event"]["payload"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["started", "snapshot", "shell_command"]);
    assert_eq!(followed[0]["event"]["payload"]["session_id"], "ops-1");
    assert_eq!(
        followed[1]["event"]["payload"]["working_dir"],
        "/home/dev/project"
    );
    assert!(
        followed[2]["event"]["agent"]["id"]
            .as_str()
            .unwrap()
            .starts_with("gemini-cli")
    );
    assert_eq!(followed[2]["adjudication"]["decision"], "escalate");
    let approved =
        sondera(&[&["approvals", "approve", &id, "--always"][..], &as_operator].concat());
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let answer = waiting.join().unwrap();
    assert_eq!(answer.status.code(), Some(0));
    assert_eq!(
        stdout(&answer),
        "",
        "approved: the agent goes on under its own rules"
    );

    let short = [
        ("SONDERA_HARNESS_ENDPOINT", server.grpc.as_str()),
        ("SONDERA_API_TOKEN", agent_token),
        ("SONDERA_HOOK_ESCALATE", "operators"),
        ("SONDERA_HOOK_WAIT", "1"),
    ];
    // Approved always: the next push of the same shape, in a new session,
    // goes ahead without asking anyone, and the record says whose approval.
    let (event, input) = shell_call("gemini-cli", "ops-3", "git push --force origin main");
    let again = hook("gemini-cli", event, &input, &short);
    assert!(!refused("gemini-cli", &again), "{again:?}");
    let shown = stdout(&sondera(
        &[
            &["trajectories", "show", "gemini-cli-ops-3"][..],
            &as_operator,
        ]
        .concat(),
    ));
    assert!(shown.contains("adjudicated"), "{shown}");

    // The operator lists the standing grant, revokes it by its id, and the
    // same push asks again (and, nobody deciding, is refused).
    let agent_id = followed[2]["event"]["agent"]["id"].as_str().unwrap();
    let listed = stdout(&sondera(
        &[&["grants", "list", agent_id, "--json"][..], &as_operator].concat(),
    ));
    let grant: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(grant["scope"], "always");
    assert_eq!(grant["granted_by"]["id"], "ana");
    let grant_id = grant["id"].as_str().unwrap();
    let revoked = sondera(&[&["grants", "revoke", agent_id, grant_id][..], &as_operator].concat());
    assert!(revoked.status.success(), "{revoked:?}");
    assert!(stdout(&revoked).contains("shell: git push"), "{revoked:?}");
    let twice = sondera(&[&["grants", "revoke", agent_id, grant_id][..], &as_operator].concat());
    assert_eq!(twice.status.code(), Some(1), "{twice:?}");
    let (event, input) = shell_call("gemini-cli", "ops-4", "git push --force origin main");
    assert!(refused(
        "gemini-cli",
        &hook("gemini-cli", event, &input, &short)
    ));

    // Approved for its session: the same push later in that session goes
    // ahead without asking; in another session it is asked about again.
    let (event, input) = shell_call("claude-code", "ops-5", "git push --force origin release");
    let grpc = server.grpc.clone();
    let waiting = std::thread::spawn(move || {
        let env = [
            ("SONDERA_HARNESS_ENDPOINT", grpc.as_str()),
            ("SONDERA_API_TOKEN", agent_token),
            ("SONDERA_HOOK_ESCALATE", "operators"),
            ("SONDERA_HOOK_WAIT", "30"),
        ];
        hook("claude-code", event, &input, &env)
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let listed = stdout(&sondera(
            &[&["approvals", "list", "--json"][..], &as_operator].concat(),
        ));
        let ops5 = listed
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|a| a["trajectory_id"] == "claude-code-ops-5");
        if let Some(approval) = ops5 {
            break approval["id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(100));
    };
    let approved = sondera(
        &[
            &["approvals", "approve", &id, "--session"][..],
            &as_operator,
        ]
        .concat(),
    );
    assert!(approved.status.success(), "{approved:?}");
    assert!(!refused("claude-code", &waiting.join().unwrap()));
    let (event, input) = shell_call("claude-code", "ops-5", "git push --force origin release");
    let again = hook("claude-code", event, &input, &short);
    assert!(
        !refused("claude-code", &again),
        "the session's approval holds: {again:?}"
    );
    let (event, input) = shell_call("claude-code", "ops-6", "git push --force origin release");
    let elsewhere = hook("claude-code", event, &input, &short);
    assert!(refused("claude-code", &elsewhere), "not in another session");

    // Nobody decides within the wait: refused, saying so.
    let (event, input) = shell_call("claude-code", "ops-2", "git push --force origin main");
    let answer = hook("claude-code", event, &input, &short);
    assert!(refused("claude-code", &answer));
    assert!(
        stdout(&answer).contains("no operator approved this step within 1s"),
        "{}",
        stdout(&answer)
    );
}

#[test]
fn hooks_install_status_and_uninstall_in_a_project() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = project.path().display().to_string();
    let run = |args: &[&str]| {
        command(args)
            .env("HOME", home.path())
            .current_dir(project.path())
            .output()
            .unwrap()
    };
    for agent in AGENTS {
        let installed = run(&["hooks", "install", agent]);
        assert!(
            installed.status.success(),
            "{}",
            String::from_utf8_lossy(&installed.stderr)
        );
        assert!(
            stdout(&installed).contains("added"),
            "{}",
            stdout(&installed)
        );
        let again = run(&["hooks", "install", agent, "--project", &dir]);
        assert!(stdout(&again).contains("installed already; nothing changed"));
    }
    let user = run(&["hooks", "install", "claude-code", "--user"]);
    assert!(
        stdout(&user).contains(
            &home
                .path()
                .join(".claude/settings.json")
                .display()
                .to_string()
        )
    );
    let status = stdout(&run(&["hooks", "status"]));
    assert!(
        status.contains("PreToolUse") && status.contains("beforeShellExecution"),
        "{status}"
    );
    assert!(
        !status.contains("not installed") || status.matches("not installed").count() == 4,
        "{status}"
    );
    let settings = std::fs::read_to_string(project.path().join(".claude/settings.json")).unwrap();
    assert!(settings.contains(&format!(
        "{} hook claude-code",
        env!("CARGO_BIN_EXE_sondera")
    )));
    for agent in AGENTS {
        let removed = run(&["hooks", "uninstall", agent]);
        assert!(stdout(&removed).contains("removed"), "{}", stdout(&removed));
    }
    let status = stdout(&run(&["hooks", "status"]));
    assert_eq!(status.matches("not installed").count(), 9, "{status}");
}

#[test]
fn an_input_that_never_ends_is_refused_in_time() {
    use std::io::Write;
    let mut child = command(&["hook", "codex", "--timeout", "1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"session_id\": \"s1\", ").unwrap();
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("did not end within 1s"));
    drop(stdin);
}
