//! `sondera serve`, `token`, `tail`, and the read commands against a server.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::*;
use sondera_harness::{Harness, RemoteConfig, RemoteHarness};
use sondera_model::{Agent, Payload};

fn harness(server: &ServerProcess, token: &str) -> RemoteHarness {
    let config = RemoteConfig::resolve_from(
        Some(server.grpc.clone()),
        Some(token.into()),
        |_| None,
        None,
    )
    .unwrap();
    RemoteHarness::new(&config, Some(Agent::new("coder", "google-adk"))).unwrap()
}

fn shell(h: &RemoteHarness, command: &str) -> sondera_model::Event {
    h.event(Payload::ShellCommand {
        call_id: "c1".into(),
        command: command.into(),
        working_dir: None,
    })
    .unwrap()
}

#[test]
fn token_new_prints_a_token_and_the_entry_that_accepts_it() {
    let output = sondera(&["token", "new", "--tenant", "acme"]);
    assert!(output.status.success());
    let token = stdout(&output).trim().to_string();
    assert!(token.starts_with("sk_") && token.len() > 60, "{token}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let entry = stderr.trim().rsplit(' ').next().unwrap().to_string();
    let hashed = sondera_with_input(&["token", "hash", "--tenant", "acme"], &token);
    assert_eq!(stdout(&hashed).trim(), entry);
    assert!(entry.starts_with("acme=sha256:"));
    let bad = sondera_with_input(&["token", "hash", "--tenant", "a b"], &token);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_server_records_what_remote_agents_do_and_the_cli_reads_it() {
    let data = tempfile::tempdir().unwrap();
    let token = "sk_test_token";
    let entry = stdout(&sondera_with_input(
        &["token", "hash", "--tenant", "acme"],
        token,
    ))
    .trim()
    .to_string();
    let operator = "sk_test_operator";
    let operator_entry = stdout(&sondera_with_input(
        &[
            "token", "hash", "--tenant", "acme", "--role", "operator", "--name", "ana",
        ],
        operator,
    ))
    .trim()
    .to_string();
    assert!(
        operator_entry.ends_with(" role=operator name=ana"),
        "{operator_entry}"
    );
    let store = data.path().display().to_string();
    let tokens = format!("{entry},{operator_entry}");
    let mut server = ServerProcess::start(&["--store", &store, "--token", &tokens]);

    let mut tail = tail_json(&server.grpc, operator);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let id = runtime.block_on(async {
        let mut h = harness(&server, token);
        let id = h.initialize(None, None).await.unwrap();
        assert!(
            !h.adjudicate(shell(&h, "rm -rf ~"))
                .await
                .unwrap()
                .is_allowed()
        );
        h.adjudicate(shell(&h, "cargo build")).await.unwrap();
        id
    });

    let mut lines = BufReader::new(tail.stdout.take().unwrap()).lines();
    let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["event"]["trajectory_id"], id.as_str());
    assert_eq!(first["event"]["payload"]["type"], "started");
    let second: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second["adjudication"]["decision"], "deny");
    tail.kill().unwrap();
    tail.wait().unwrap();

    let as_agent = ["--server", server.grpc.as_str(), "--token", token];
    let refused = sondera(&[&["trajectories", "list"][..], &as_agent].concat());
    assert_eq!(
        refused.status.code(),
        Some(2),
        "listing a tenant's records needs an operator"
    );
    assert!(String::from_utf8_lossy(&refused.stderr).contains("operator token"));
    let shown = sondera(&[&["trajectories", "show", &id][..], &as_agent].concat());
    assert!(
        shown.status.success(),
        "an agent reads a trajectory by its id"
    );

    let remote = ["--server", server.grpc.as_str(), "--token", operator];
    let listed = sondera(&[&["trajectories", "list"][..], &remote].concat());
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(stdout(&listed).contains(&id), "{}", stdout(&listed));
    // The filters reach the server: its trajectory has a denied step.
    let filtered = |flags: &[&str]| {
        let out = sondera(&[&["trajectories", "list"][..], flags, &remote].concat());
        assert!(out.status.success(), "{out:?}");
        stdout(&out).contains(&id)
    };
    assert!(filtered(&["--decision", "deny"]));
    assert!(!filtered(&["--decision", "allow"]));
    assert!(!filtered(&["--text", "no step says this"]));
    assert!(!filtered(&["--since", "2999-01-01T00:00:00Z"]));
    let shown = sondera(&[&["trajectories", "show", &id][..], &remote].concat());
    assert!(
        stdout(&shown).contains("shell_command"),
        "{}",
        stdout(&shown)
    );
    let blocked = sondera(&[&["adjudications", "list", "--json"][..], &remote].concat());
    assert_eq!(stdout(&blocked).lines().count(), 1);

    // A candidate set that allows everything flips the recorded denial.
    let candidate = tempfile::tempdir().unwrap();
    std::fs::write(
        candidate.path().join("all.cedar"),
        "@id(\"allow-all\") @description(\"d\") @severity(\"info\")\npermit (principal, action, resource);\n",
    )
    .unwrap();
    let policies = candidate.path().display().to_string();
    let replayed = sondera(&[&["replay", "--policies", &policies][..], &remote].concat());
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert!(
        stdout(&replayed).contains("deny -> allow"),
        "{}",
        stdout(&replayed)
    );

    drop(runtime);

    // A wrong token is refused.
    let refused = sondera(&[
        "trajectories",
        "list",
        "--server",
        &server.grpc,
        "--token",
        "nope",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Unauthenticated"));

    let (status, stderr) = server.stop();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("2 tokens accepted") && stderr.contains("stopped"),
        "{stderr}"
    );

    // Everything acknowledged is in the data directory, as the tenant's.
    let local = sondera(&["trajectories", "show", &id, "--data-dir", &store]);
    assert_eq!(local.status.code(), Some(1), "ids are per tenant");
    let local = sondera(&[
        "trajectories",
        "show",
        &id,
        "--data-dir",
        &store,
        "--tenant",
        "acme",
    ]);
    assert!(
        stdout(&local).contains("shell_command"),
        "{}",
        stdout(&local)
    );
}

#[test]
fn an_operator_decides_an_agents_escalation_from_the_command_line() {
    let policies = tempfile::tempdir().unwrap();
    std::fs::write(
        policies.path().join("ops.cedar"),
        r#"@id("allow-all") @description("everything else runs") @severity("info")
permit (principal, action, resource);
@id("infra-apply") @description("Applying infrastructure changes needs an operator") @severity("high") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "terraform apply*" };
"#,
    )
    .unwrap();
    let (agent, operator) = ("sk_agent", "sk_operator");
    let tokens = format!(
        "acme={},acme={} role=operator name=ana",
        sondera_server::hash_token(agent),
        sondera_server::hash_token(operator)
    );
    let dir = policies.path().display().to_string();
    let mut server =
        ServerProcess::start(&["--store", "memory", "--token", &tokens, "--policies", &dir]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (mut h, event_id) = runtime.block_on(async {
        let mut h = harness(&server, agent);
        h.initialize(None, None).await.unwrap();
        // What an agent could send to make the operator's terminal show
        // something else: erase the line, return, write another command.
        let event = shell(&h, "terraform apply\u{1b}[2K\rls -la");
        let event_id = event.event_id.clone();
        let verdict = h.adjudicate(event).await.unwrap();
        assert_eq!(verdict.decision, sondera_model::Decision::Escalate);
        (h, event_id)
    });
    let waiting = runtime.spawn(async move { h.ask_operator(&event_id, None).await });

    let as_operator = ["--server", server.grpc.as_str(), "--token", operator];
    let deadline = Instant::now() + Duration::from_secs(10);
    let id = loop {
        let listed = sondera(&[&["approvals", "list", "--json"][..], &as_operator].concat());
        assert!(
            listed.status.success(),
            "{}",
            String::from_utf8_lossy(&listed.stderr)
        );
        if let Some(first) = stdout(&listed).lines().next() {
            let approval: serde_json::Value = serde_json::from_str(first).unwrap();
            break approval["id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "no approval appeared");
        std::thread::sleep(Duration::from_millis(100));
    };
    let shown = sondera(&[&["approvals", "show", &id][..], &as_operator].concat());
    let text = stdout(&shown);
    assert!(
        text.contains("$ terraform apply") && text.contains("infra-apply"),
        "{text}"
    );
    assert!(
        text.contains("Applying infrastructure changes needs an operator"),
        "{text}"
    );
    let listed = stdout(&sondera(
        &[&["approvals", "list"][..], &as_operator].concat(),
    ));
    for printed in [&text, &listed] {
        assert!(
            !printed.contains('\u{1b}') && printed.contains("terraform apply\\x1b[2K\\rls -la"),
            "the escape sequence reaches the terminal inert: {printed:?}"
        );
    }

    let as_agent = ["--server", server.grpc.as_str(), "--token", agent];
    let refused = sondera(&[&["approvals", "approve", &id][..], &as_agent].concat());
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("PermissionDenied"));

    let approved = sondera(
        &[
            &[
                "approvals",
                "approve",
                &id,
                "--session",
                "--reason",
                "plan reviewed",
            ][..],
            &as_operator,
        ]
        .concat(),
    );
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert!(stdout(&approved).contains("approved for this session by ana (plan reviewed)"));
    let outcome = runtime.block_on(waiting).unwrap().unwrap();
    assert!(outcome.approved());
    let again = sondera(&[&["approvals", "deny", &id][..], &as_operator].concat());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already decided"));
    let missing = sondera(&[&["approvals", "show", "no-such-approval"][..], &as_operator].concat());
    assert_eq!(missing.status.code(), Some(1));
    drop(runtime);
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn sighup_reloads_and_an_invalid_set_keeps_the_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.cedar");
    std::fs::write(&rules, "@id(\"allow-all\") @description(\"d\") @severity(\"info\")\npermit (principal, action, resource);\n").unwrap();
    let policies = dir.path().display().to_string();
    let mut server =
        ServerProcess::start(&["--store", "memory", "--policies", &policies, "--no-watch"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let entered = runtime.enter();
    let mut h = harness(&server, "unused");
    runtime.block_on(h.initialize(None, None)).unwrap();
    let decide = |h: &mut RemoteHarness, command: &str| {
        let event = shell(h, command);
        runtime.block_on(h.adjudicate(event)).unwrap().decision
    };
    assert!(decide(&mut h, "rm -rf build").is_allow());

    std::fs::write(&rules, "permit (principal,").unwrap();
    server.signal("HUP");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        decide(&mut h, "rm -rf build").is_allow(),
        "the running set stays"
    );

    std::fs::write(
        &rules,
        "@id(\"allow-all\") @description(\"d\") @severity(\"info\")\npermit (principal, action, resource);\n\
         @id(\"no-rm\") @description(\"d\") @severity(\"high\")\nforbid (principal, action == Sondera::Action::\"ShellCommand\", resource) when { context.command like \"rm *\" };\n",
    )
    .unwrap();
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while decide(&mut h, "rm -rf build").is_allow() {
        assert!(Instant::now() < deadline, "the reload never took effect");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Close the client's connection, so shutdown has nothing to wait for.
    drop(h);
    drop(entered);
    drop(runtime);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains("authentication is off"), "{stderr}");
}

#[test]
fn sighup_reloads_the_tokens_file_and_a_broken_one_keeps_the_running_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.txt");
    let entry =
        |tenant: &str, token: &str| format!("{tenant}={}\n", sondera_server::hash_token(token));
    std::fs::write(&file, entry("acme", "first-token")).unwrap();
    let tokens = file.display().to_string();
    let mut server = ServerProcess::start(&["--store", "memory", "--tokens-file", &tokens]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let entered = runtime.enter();
    let accepted = |token: &str| {
        let mut h = harness(&server, token);
        runtime.block_on(h.initialize(None, None)).is_ok()
    };
    assert!(accepted("first-token"));
    assert!(!accepted("second-token"));

    std::fs::write(&file, "# rotated\nnot an entry\n").unwrap();
    server.signal("HUP");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        accepted("first-token"),
        "a broken file keeps the running tokens"
    );

    std::fs::write(&file, entry("acme", "second-token")).unwrap();
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !accepted("second-token") {
        assert!(Instant::now() < deadline, "the reload never took effect");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!accepted("first-token"), "a removed token stops working");
    drop(entered);
    drop(runtime);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains("token reload refused"), "{stderr}");
}

#[test]
fn serve_refuses_a_public_address_without_tokens() {
    let output = sondera(&[
        "serve",
        "--store",
        "memory",
        "--http-addr",
        "0.0.0.0:0",
        "--grpc-addr",
        "127.0.0.1:0",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("without authentication"), "{stderr}");
}

#[test]
fn bench_reports_throughput_latency_and_the_health_ratio() {
    let output = sondera(&[
        "bench",
        "--store",
        "memory",
        "--trajectories",
        "2",
        "--events",
        "5",
        "--round-trips",
        "20",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = stdout(&output);
    for expected in [
        "Health      p50",
        "Adjudicate  p50",
        "Adjudicate / Health at the median",
        "2 concurrent trajectories x 5 events = 10 adjudications",
        "events/s",
    ] {
        assert!(
            report.contains(expected),
            "missing `{expected}` in:\n{report}"
        );
    }
}

/// Opens the live event stream over HTTP at `path` with `credential` (a
/// header line) and returns the connection once the stream has started.
fn open_stream(server: &ServerProcess, path: &str, credential: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(&server.http).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {}\r\n{credential}\r\n\r\n",
        server.http
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200", "{credential}");
    stream
}

/// Whether the server closes `stream` within `within`.
fn closed_within(mut stream: std::net::TcpStream, within: Duration) -> bool {
    use std::io::Read;
    stream.set_read_timeout(Some(within)).unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).is_ok()
}

#[test]
fn a_token_removed_on_sighup_ends_its_streams_and_the_sessions_it_signed_in() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.txt");
    let entry = |token: &str| format!("acme={} role=operator\n", sondera_server::hash_token(token));
    std::fs::write(&file, entry("leaving-ops") + &entry("staying-ops")).unwrap();
    let tokens = file.display().to_string();
    let mut server = ServerProcess::start(&["--store", "memory", "--tokens-file", &tokens]);
    let signed_in = {
        use std::io::{Read, Write};
        let body = r#"{"token": "leaving-ops"}"#;
        let mut s = std::net::TcpStream::connect(&server.http).unwrap();
        write!(
            s,
            "POST /session HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            server.http,
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        let cookie = response
            .lines()
            .find_map(|l| l.strip_prefix("set-cookie: sondera_session="))
            .unwrap_or_else(|| panic!("a session cookie in {response}"))
            .split(';')
            .next()
            .unwrap()
            .to_string();
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        let key: serde_json::Value = serde_json::from_str(body).unwrap();
        (
            format!("cookie: sondera_session={cookie}"),
            key["page_key"].as_str().unwrap().to_string(),
        )
    };
    let (signed_in, key) = signed_in;
    let stream = "/v1/events/stream";
    let by_token = open_stream(&server, stream, "authorization: Bearer leaving-ops");
    let by_session = open_stream(&server, &format!("{stream}?page_key={key}"), &signed_in);
    let staying = open_stream(&server, stream, "authorization: Bearer staying-ops");

    std::fs::write(&file, entry("staying-ops")).unwrap();
    server.signal("HUP");
    assert!(
        closed_within(by_token, Duration::from_secs(10)),
        "the token's stream ends"
    );
    assert!(
        closed_within(by_session, Duration::from_secs(10)),
        "so does its session's"
    );
    assert!(
        !closed_within(staying, Duration::from_millis(500)),
        "another token's goes on"
    );
    let (status, _) = get_with(
        &server.http,
        "/session",
        &format!("{signed_in}\r\nx-sondera-page-key: {key}"),
    );
    assert_eq!(status, 401, "the session ended with its token");
    let (status, _) = post_json(
        &server.http,
        "/session",
        &[],
        r#"{"token": "wrong-secret"}"#,
    );
    assert_eq!(status, 401);
    let (_, stderr) = server.stop();
    assert!(
        stderr.contains("dashboard sign-in refused: an unknown token"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("wrong-secret"),
        "the token is never logged"
    );
}

/// GET `path` with one extra header line; the status and body.
fn get_with(addr: &str, path: &str, line: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\n{line}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    (response[9..12].parse().unwrap(), response)
}
