//! `sondera adjudicate`: events read as JSON lines, one verdict printed per
//! event, bad lines reported while the rest are judged.

mod common;

use common::{sondera_with_input as sondera, stdout};

const SESSION: &str = include_str!("../../../examples/session.jsonl");

#[test]
fn example_session_prints_one_verdict_per_event() {
    let out = sondera(&["adjudicate", "--ephemeral", "-"], SESSION);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), SESSION.lines().count(), "{text}");
    assert!(
        lines[2].contains("allow") && lines[2].contains("shell_command"),
        "{text}"
    );
    assert!(
        lines[6].contains("deny") && lines[6].contains("[cred-file-tool-secret-read]"),
        "{text}"
    );
    assert!(
        lines[7].contains("escalate") && lines[7].contains("[persist-shell-rc]"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1), "a blocked event exits 1");
}

#[test]
fn json_output_carries_the_full_verdict() {
    let out = sondera(&["adjudicate", "--ephemeral", "--json"], SESSION);
    let verdicts: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let denied = &verdicts[6];
    assert_eq!(denied["line"], 7);
    assert_eq!(denied["event_id"], "demo-event-06");
    assert_eq!(denied["verdict"]["decision"], "deny");
    assert_eq!(
        denied["verdict"]["policies"][0]["annotations"]["severity"],
        "critical"
    );
}

#[test]
fn monitor_mode_allows_and_shows_what_would_have_happened() {
    let out = sondera(&["adjudicate", "--ephemeral", "--mode", "monitor"], SESSION);
    assert!(
        stdout(&out).contains("allow (would deny)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bad_lines_are_reported_and_the_rest_still_judged() {
    let mut lines: Vec<String> = SESSION.lines().map(str::to_string).collect();
    let unknown_payload = lines[1].replace("\"type\": \"prompt\"", "\"type\": \"teleport\"");
    lines.insert(2, "{not json".into());
    lines.insert(3, unknown_payload);
    lines.insert(4, "x".repeat(5000));
    let out = sondera(
        &["adjudicate", "--ephemeral", "--max-event-bytes", "4096"],
        &lines.join("\n"),
    );
    let text = stdout(&out);
    assert!(
        text.contains(
            "    3: error     malformed JSON at line 1, column 2: key must be a string\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    4: error     not a valid event (line 1, column"),
        "{text}"
    );
    assert!(text.contains("unknown variant `teleport`"), "{text}");
    assert!(
        text.contains("    5: error     event is larger than the 4096-byte limit"),
        "{text}"
    );
    assert!(text.contains("    6: allow     shell_command"), "{text}");
    assert_eq!(text.lines().count(), lines.len());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn events_before_a_start_are_not_judged() {
    let orphan = SESSION.lines().nth(2).unwrap();
    let out = sondera(&["adjudicate", "--ephemeral"], orphan);
    assert!(
        stdout(&out).contains(
            "not adjudicated, treat as blocked: trajectory demo-trajectory-1 is not recorded"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_data_directory_keeps_trajectories_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let first = sondera(&["adjudicate", "--data-dir", data], SESSION);
    assert_eq!(first.status.code(), Some(1));
    assert!(dir.path().join("sondera.db").exists());
    // The very start sent again is answered as it was recorded...
    let start = SESSION.lines().next().unwrap();
    let again = sondera(&["adjudicate", "--data-dir", data], start);
    assert!(
        stdout(&again).contains("allow     started               started recorded"),
        "{}",
        stdout(&again)
    );
    // ...and another start of the same trajectory is refused.
    let another = start.replace("demo-event-00", "demo-event-restart");
    let again = sondera(&["adjudicate", "--data-dir", data], &another);
    assert!(
        stdout(&again).contains("trajectory demo-trajectory-1 has already started"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn a_broken_policy_directory_is_reported_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.cedar"),
        "@id(\"p\")\nforbid (principal, action, resource)\nwhen { context.nope };\n",
    )
    .unwrap();
    let out = sondera(
        &[
            "adjudicate",
            "--ephemeral",
            "--policies",
            dir.path().to_str().unwrap(),
        ],
        SESSION,
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("mine.cedar:3:"), "{stderr}");
    assert!(stderr.contains("policy `p`"), "{stderr}");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "nothing is judged under a broken policy set"
    );
}

#[test]
fn workspace_option_decides_what_is_outside() {
    let cmd = r#"{"event_id":"e2","trajectory_id":"w","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:01Z","payload":{"type":"shell_command","call_id":"c","command":"rm -rf ./build","working_dir":"/srv/app"},"actor":{"kind":"agent","id":"a"}}"#;
    let start = r#"{"event_id":"e1","trajectory_id":"w","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:00Z","payload":{"type":"started","agent":{"id":"a","provider":"p"}},"actor":{"kind":"agent","id":"a"}}"#;
    let input = format!("{start}\n{cmd}");
    let inside = sondera(
        &["adjudicate", "--ephemeral", "--workspace", "/srv/app"],
        &input,
    );
    assert!(
        stdout(&inside).contains("    2: allow"),
        "{}",
        stdout(&inside)
    );
    let outside = sondera(
        &["adjudicate", "--ephemeral", "--workspace", "/srv/other"],
        &input,
    );
    assert!(
        stdout(&outside).contains("[destructive-delete-outside-workspace]"),
        "{}",
        stdout(&outside)
    );
}

#[test]
fn allowed_hosts_restrict_egress_and_bad_patterns_are_refused() {
    let start = r#"{"event_id":"e1","trajectory_id":"h","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:00Z","payload":{"type":"started","agent":{"id":"a","provider":"p"}},"actor":{"kind":"agent","id":"a"}}"#;
    let fetch = |id: &str, url: &str| {
        format!(
            r#"{{"event_id":"{id}","trajectory_id":"h","agent":{{"id":"a","provider":"p"}},"timestamp":"2026-11-30T10:00:01Z","payload":{{"type":"web_fetch","call_id":"{id}","url":"{url}"}},"actor":{{"kind":"agent","id":"a"}}}}"#
        )
    };
    let input = format!(
        "{start}\n{}\n{}",
        fetch("e2", "https://api.github.com/x"),
        fetch("e3", "https://evil.example/x")
    );
    let out = sondera(
        &["adjudicate", "--ephemeral", "--allow-host", "*.github.com"],
        &input,
    );
    let text = stdout(&out);
    assert!(text.contains("    2: allow"), "{text}");
    assert!(
        text.contains("    3: escalate") && text.contains("[egress-unlisted-host]"),
        "{text}"
    );
    let open = sondera(&["adjudicate", "--ephemeral"], &input);
    assert!(
        stdout(&open).contains("    3: allow"),
        "no allowlist, no restriction"
    );

    let bad = sondera(
        &[
            "adjudicate",
            "--ephemeral",
            "--allow-host",
            "https://github.com",
        ],
        &input,
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("invalid allowed-host pattern `https://github.com`"),
        "{err}"
    );
}

#[test]
fn version_prints_the_package_version() {
    let out = sondera(&["version"], "");
    assert_eq!(
        stdout(&out).trim(),
        format!("sondera {}", env!("CARGO_PKG_VERSION"))
    );
}

fn cases_file(dir: &tempfile::TempDir, name: &str, lines: &[&str]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, lines.join("\n")).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn policy_test_reports_failures_stats_and_totals() {
    let dir = tempfile::tempdir().unwrap();
    let file = cases_file(
        &dir,
        "cases.jsonl",
        &[
            r#"{"id": "ok-1", "category": "destructive", "steps": [{"tool": "bash", "args": {"command": "r''m -rf /"}}], "expect": "block"}"#,
            r#"{"id": "ok-2", "category": "benign", "steps": [{"tool": "bash", "args": {"command": "rm -rf ./build"}}], "expect": "allow"}"#,
            r#"{"id": "wrong", "category": "benign", "steps": [{"tool": "read_file", "args": {"path": "/home/dev/.ssh/id_rsa"}}], "expect": "allow", "note": "deliberately wrong"}"#,
        ],
    );
    let out = sondera(&["policy", "test", &file], "");
    let text = stdout(&out);
    assert!(text.contains("FAIL wrong (benign): expected allow, got deny [cred-file-tool-secret-read] -- deliberately wrong"), "{text}");
    assert!(
        text.contains("destructive                  1/1        100.0%"),
        "{text}"
    );
    assert!(
        text.contains("benign                       1/2             -      50.0%"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn policy_test_passes_cleanly_and_reports_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = cases_file(
        &dir,
        "good.jsonl",
        &[
            r#"{"id": "a", "category": "c", "steps": [{"prompt": "hello", "role": "user"}], "expect": "allow"}"#,
        ],
    );
    let out = sondera(&["policy", "test", &good], "");
    assert!(stdout(&out).trim_end().ends_with("1 passed, 0 failed"));
    assert_eq!(out.status.code(), Some(0));

    let bad = cases_file(
        &dir,
        "bad.jsonl",
        &["", r#"{"id": "a", "steps": [], "expect": "maybe"}"#],
    );
    let out = sondera(&["policy", "test", &bad], "");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("bad.jsonl:2:") && stderr.contains("maybe"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(2));
}
