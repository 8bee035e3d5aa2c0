//! `sondera policy push|revisions|rollback` against a server that takes its
//! policies from its store, and a server refusing to mix files with them.

mod common;

use common::*;

const NO_ECHO: &str = r#"
@id("no-echo") @description("echo is refused") @severity("low")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "echo *" };
@id("rest") permit (principal, action, resource);
"#;

fn json_lines(output: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn pushed_revisions_are_listed_judge_and_roll_back() {
    let data = tempfile::tempdir().unwrap();
    let store = data.path().display().to_string();
    let server = ServerProcess::start(&["--store", &store]);
    let policies = tempfile::tempdir().unwrap();
    std::fs::write(policies.path().join("team.cedar"), NO_ECHO).unwrap();
    let dir = policies.path().display().to_string();

    let first = sondera(&[
        "policy",
        "push",
        &dir,
        "--server",
        &server.grpc,
        "-m",
        "no echo",
        "--json",
    ]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let first = &json_lines(&first)[0];
    let first_revision = first["revision"].as_str().unwrap().to_owned();
    assert_eq!(
        (first["policies"].as_u64(), first["message"].as_str()),
        (Some(2), Some("no echo"))
    );

    // A set that does not load is reported with its location and never sent.
    std::fs::write(
        policies.path().join("broken.cedar"),
        "forbid (principal, action, resource) when { nope };",
    )
    .unwrap();
    let broken = sondera(&["policy", "push", &dir, "--server", &server.grpc]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("broken.cedar"));
    std::fs::remove_file(policies.path().join("broken.cedar")).unwrap();

    std::fs::write(
        policies.path().join("team.cedar"),
        NO_ECHO.replace("echo *", "printf *"),
    )
    .unwrap();
    let second = sondera(&["policy", "push", &dir, "--server", &server.grpc, "--json"]);
    assert_eq!(second.status.code(), Some(0));
    let second_revision = json_lines(&second)[0]["revision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(first_revision, second_revision);

    let listed = sondera(&["policy", "revisions", "--server", &server.grpc, "--json"]);
    let listed = json_lines(&listed);
    let current: Vec<(&str, bool)> = listed
        .iter()
        .map(|r| {
            (
                r["revision"].as_str().unwrap(),
                r["current"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        current,
        [
            (second_revision.as_str(), true),
            (first_revision.as_str(), false)
        ]
    );

    let rolled = sondera(&[
        "policy",
        "rollback",
        &first_revision[..8],
        "--server",
        &server.grpc,
    ]);
    assert_eq!(
        rolled.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&rolled.stderr)
    );
    let text = stdout(&sondera(&["policy", "revisions", "--server", &server.grpc]));
    assert!(
        text.contains(&format!("judges by {first_revision}")),
        "{text}"
    );
    assert!(text.contains(&format!("* {first_revision}")), "{text}");

    // The server judges by the current revision: echo is denied, by it.
    let verdict = tokio::runtime::Runtime::new().unwrap().block_on(async {
        use sondera_harness::{Harness, RemoteConfig, RemoteHarness};
        let config =
            RemoteConfig::resolve_from(Some(server.grpc.clone()), None, |_| None, None).unwrap();
        let agent = sondera_model::Agent::new("coder", "google-adk");
        let mut harness = RemoteHarness::new(&config, Some(agent)).unwrap();
        harness.initialize(None, None).await.unwrap();
        let event = harness
            .event(sondera_model::Payload::ShellCommand {
                call_id: "c1".into(),
                command: "echo hi".into(),
                working_dir: None,
            })
            .unwrap();
        harness.adjudicate(event).await.unwrap()
    });
    assert_eq!(verdict.policy_ids().collect::<Vec<_>>(), ["no-echo"]);
    assert_eq!(
        verdict.policy_revision.as_deref(),
        Some(first_revision.as_str())
    );

    // Replayed by the second revision, which forbids printf instead, the
    // echo denied by the first would have been allowed.
    let replayed = sondera(&[
        "replay",
        "--server",
        &server.grpc,
        "--revision",
        &second_revision[..10],
        "--json",
    ]);
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let changes = json_lines(&replayed);
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(
        (changes[0]["before"].as_str(), changes[0]["after"].as_str()),
        (Some("deny"), Some("allow"))
    );

    // Another server on the same store with files of its own refuses to mix them.
    let mixed = sondera(&[
        "serve",
        "--store",
        &store,
        "--policies",
        &dir,
        "--grpc-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
    ]);
    assert_eq!(mixed.status.code(), Some(2));
    let said = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        said.contains("--policy-source files or --policy-source store")
            && said.contains(&first_revision),
        "{said}"
    );
    drop(server);
}

#[test]
fn tokens_stored_through_the_server_are_accepted_and_revoked() {
    let data = tempfile::tempdir().unwrap();
    let admin = "sk_admin_for_tests";
    let entry = format!(
        "default={} role=admin name=root",
        sondera_server::hash_token(admin)
    );
    let server = ServerProcess::start(&[
        "--store",
        &data.path().display().to_string(),
        "--tokens-from-store",
        "--token",
        &entry,
    ]);
    let made = sondera(&[
        "token",
        "new",
        "--tenant",
        "acme",
        "--role",
        "operator",
        "--name",
        "ana",
        "--server",
        &server.grpc,
        "--token",
        admin,
    ]);
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let token = stdout(&made).trim().to_owned();
    assert!(token.starts_with("sk_"));
    let listed = stdout(&sondera(&[
        "token",
        "list",
        "--server",
        &server.grpc,
        "--token",
        admin,
    ]));
    assert!(listed.contains("acme  operator  ana"), "{listed}");

    let lists = |token: &str| {
        sondera(&[
            "trajectories",
            "list",
            "--server",
            &server.grpc,
            "--token",
            token,
        ])
        .status
        .code()
    };
    assert!(
        within_seconds(3, || lists(&token) == Some(0)),
        "the stored operator token works"
    );

    let revoked = sondera(&[
        "token",
        "revoke",
        "ana",
        "--server",
        &server.grpc,
        "--token",
        admin,
    ]);
    assert_eq!(
        revoked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&revoked.stderr)
    );
    assert!(
        within_seconds(3, || lists(&token) != Some(0)),
        "a revoked token is refused"
    );
    drop(server);
}

/// Whether `holds` comes true within `seconds`, asking every 50 ms.
fn within_seconds(seconds: u64, holds: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while !holds() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}
