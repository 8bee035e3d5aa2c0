//! `sondera serve --config`: precedence, located errors, `--print-config`,
//! SIGHUP, and the structured logs (`--log-format json`, request ids).

mod common;

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use common::{ServerProcess, sondera_with_env};

fn config_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sondera.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path.display().to_string())
}

/// `key = value  # origin` lines of --print-config, by key.
fn printed(output: &str) -> std::collections::BTreeMap<String, (String, String)> {
    output
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (key, rest) = l.split_once(" = ")?;
            let (value, origin) = rest.rsplit_once("  # ")?;
            Some((key.to_string(), (value.to_string(), origin.to_string())))
        })
        .collect()
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file_which_beats_the_default() {
    let (_dir, path) = config_file(
        "grpc-addr = \"127.0.0.1:7001\"\nhttp-addr = \"127.0.0.1:7002\"\nmax-event-bytes = 5000\npublic-metrics = true\n\
         public-host = [\"a.example\", \"b.example\"]\nstore = \"postgres://sondera:hunter2@db/sondera\"\n\
         token = [\"acme=sha256:0000000000000000000000000000000000000000000000000000000000000000\"]\n",
    );
    let output = sondera_with_env(
        &[
            "serve",
            "--config",
            &path,
            "--print-config",
            "--grpc-addr",
            "127.0.0.1:7009",
        ],
        "",
        &[("SONDERA_HTTP_ADDR", "127.0.0.1:7008")],
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let settings = printed(&text);
    let at = |key: &str| {
        settings
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("{key} in {text}"))
    };
    assert_eq!(
        at("grpc-addr"),
        ("\"127.0.0.1:7009\"".into(), "command line".into())
    );
    assert_eq!(
        at("http-addr"),
        (
            "\"127.0.0.1:7008\"".into(),
            "environment SONDERA_HTTP_ADDR".into()
        )
    );
    assert_eq!(
        at("max-event-bytes"),
        ("5000".into(), format!("file {path}:3"))
    );
    assert_eq!(
        at("public-metrics"),
        ("true".into(), format!("file {path}:4"))
    );
    assert_eq!(at("public-host").0, "[\"a.example\", \"b.example\"]");
    assert_eq!(at("max-batch-events"), ("256".into(), "default".into()));
    assert_eq!(
        at("store").0,
        "\"postgres://sondera:<redacted>@db/sondera\""
    );
    assert_eq!(at("token").0, "[\"<redacted>\"]");
    assert!(
        !text.contains("hunter2") && !text.contains("00000000000"),
        "{text}"
    );
    assert!(text.contains("# tls-cert is unset"), "{text}");

    // What --print-config prints is a file --config reads to the same
    // settings (but the redacted token, which is left out).
    let without_token: String = text
        .lines()
        .filter(|l| !l.starts_with("token ="))
        .map(|l| format!("{l}\n"))
        .collect();
    let (_again, reprinted) = config_file(&without_token);
    let output = sondera_with_env(
        &["serve", "--config", &reprinted, "--print-config"],
        "",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let again = printed(&String::from_utf8(output.stdout).unwrap());
    for (key, (value, _)) in &settings {
        if key != "token" {
            assert_eq!(&again[key].0, value, "{key}");
        }
    }
}

#[test]
fn errors_name_the_file_line_column_and_the_fix() {
    let cases: &[(&str, &[&str])] = &[
        (
            "grpc-addr = \"127.0.0.1:1\"\nhttp_addr = \"127.0.0.1:2\"\n",
            &[
                ":2:1:",
                "unknown key `http_addr`",
                "did you mean `http-addr`?",
            ],
        ),
        (
            "max-event-bytes = \"lots\"\n",
            &[
                ":1:19:",
                "invalid value 'lots'",
                "`max-event-bytes` takes BYTES",
            ],
        ),
        (
            "\n\npolicy-source = \"git\"\n",
            &[
                ":3:17:",
                "invalid value 'git'",
                "one of `auto`, `files`, `store`",
            ],
        ),
        (
            "public-metrics = \"yes\"\n",
            &[
                ":1:18:",
                "`public-metrics` is a switch, not a string",
                "public-metrics = true",
            ],
        ),
        (
            "grpc-addr = [\"127.0.0.1:1\", \"127.0.0.1:2\"]\n",
            &[":1:13:", "takes one value, not a list"],
        ),
        (
            "[server]\ngrpc-addr = \"x\"\n",
            &[":1:2:", "unknown key `server`", "sections are not used"],
        ),
        ("grpc-addr = \n", &[":1:", "not valid TOML"]),
        (
            "config = \"other.toml\"\n",
            &[":1:1:", "given on the command line only"],
        ),
    ];
    for (text, expected) in cases {
        let (_dir, path) = config_file(text);
        let output = sondera_with_env(&["serve", "--config", &path, "--print-config"], "", &[]);
        assert_eq!(output.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&path), "{text}: {stderr}");
        for part in *expected {
            assert!(stderr.contains(part), "{text}: `{part}` not in {stderr}");
        }
    }
    let output = sondera_with_env(&["serve", "--config", "/nonexistent/sondera.toml"], "", &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read the configuration file"));
}

/// A `started` event whose agent provider pads it to about `size` bytes.
fn started(trajectory: &str, size: usize) -> String {
    format!(
        r#"{{"event_id":"e-{trajectory}","trajectory_id":"{trajectory}","agent":{{"id":"a","provider":"{}"}},"timestamp":"2026-11-30T10:00:00Z","payload":{{"type":"started","agent":{{"id":"a","provider":"p"}}}},"actor":{{"kind":"agent","id":"a"}}}}"#,
        "p".repeat(size.saturating_sub(200))
    )
}

/// POSTs `body` to /v1/adjudicate with `headers`: the status line and headers, and the body.
fn adjudicate(http: &str, headers: &str, body: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(http).unwrap();
    let request = format!(
        "POST /v1/adjudicate HTTP/1.1\r\nhost: {http}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// Reads the child's standard error on a thread; lines as they come.
fn stderr_lines(server: &mut ServerProcess) -> std::sync::mpsc::Receiver<String> {
    let stderr = server.child.stderr.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// Waits for a line containing every one of `parts`.
fn wait_for_line(lines: &std::sync::mpsc::Receiver<String>, parts: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) if parts.iter().all(|p| line.contains(p)) => return line,
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    panic!("no line with {parts:?} in:\n{}", seen.join("\n"));
}

#[test]
fn sighup_applies_what_it_can_and_names_what_needs_a_restart() {
    let (dir, path) =
        config_file("store = \"memory\"\nno-watch = true\nmax-event-bytes = 100000\n");
    let mut server = ServerProcess::start(&["--config", &path]);
    let lines = stderr_lines(&mut server);
    let (head, _) = adjudicate(&server.http, "", &started("t1", 2000));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    std::fs::write(
        dir.path().join("sondera.toml"),
        "store = \"memory\"\nno-watch = true\nmax-event-bytes = 1000\nstream-buffer = 8\n",
    )
    .unwrap();
    server.signal("HUP");
    let applied = wait_for_line(
        &lines,
        &["setting changed: in force now", "max-event-bytes"],
    );
    assert!(applied.contains("from=\"100000\" to=\"1000\""), "{applied}");
    wait_for_line(&lines, &["takes effect after a restart", "stream-buffer"]);
    let (head, body) = adjudicate(&server.http, "", &started("t2", 2000));
    assert!(head.starts_with("HTTP/1.1 413"), "{head}\n{body}");

    // A file that no longer reads leaves everything as it was.
    std::fs::write(
        dir.path().join("sondera.toml"),
        "max-event-bytes = 1000\nbogus = 1\n",
    )
    .unwrap();
    server.signal("HUP");
    wait_for_line(
        &lines,
        &["configuration not reloaded", "unknown key `bogus`"],
    );
    let (head, _) = adjudicate(&server.http, "", &started("t3", 2000));
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    let (head, body) = adjudicate(&server.http, "", &started("t4", 400));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
}

#[test]
fn json_logs_carry_the_request_id_and_what_the_request_was_about() {
    let mut server = ServerProcess::start(&["--store", "memory", "--log-format", "json"]);
    let lines = stderr_lines(&mut server);
    let (head, _) = adjudicate(
        &server.http,
        "x-request-id: req-7f3a\r\n",
        &started("traj-9", 0),
    );
    assert!(
        head.to_ascii_lowercase().contains("x-request-id: req-7f3a"),
        "{head}"
    );
    let command = r#"{"event_id":"e2","trajectory_id":"traj-9","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:01Z","payload":{"type":"shell_command","call_id":"c","command":"rm -rf ~"},"actor":{"kind":"agent","id":"a"}}"#;
    let (head, body) = adjudicate(&server.http, "x-request-id: req-8b1c\r\n", command);
    assert!(body.contains("\"deny\""), "{head}\n{body}");
    let line = wait_for_line(&lines, &["req-8b1c", "step judged"]);
    let record: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(record["request_id"], "req-8b1c");
    assert_eq!(record["level"], "INFO");
    assert_eq!(record["tenant"], "default");
    assert_eq!(record["agent"], "a");
    assert_eq!(record["trajectory"], "traj-9");
    assert_eq!(record["decision"], "deny");
    assert!(
        record["decision_id"]
            .as_str()
            .is_some_and(|d| d.len() == 32),
        "{line}"
    );
    assert!(
        record["target"]
            .as_str()
            .unwrap()
            .starts_with("sondera_server")
    );
    assert!(record["timestamp"].as_str().unwrap().ends_with('Z'));

    // An id that could forge a log line is replaced by a fresh one.
    let (head, _) = adjudicate(
        &server.http,
        "x-request-id: a b\r\n",
        &started("traj-10", 0),
    );
    let id = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("x-request-id: ")
                .map(str::to_string)
        })
        .unwrap();
    assert_eq!(id.len(), 32, "{head}");
}

/// Accepts OTLP/HTTP posts on a thread; each request's path and body.
fn otlp_receiver() -> (String, std::sync::mpsc::Receiver<(String, Vec<u8>)>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let (send, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                use std::io::BufRead as _;
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = n.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut body);
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
            );
            if send.send((path, body)).is_err() {
                break;
            }
        }
    });
    (endpoint, received)
}

#[test]
fn traces_go_to_the_otlp_endpoint_in_the_callers_trace() {
    let (endpoint, received) = otlp_receiver();
    let (grpc, http) = (
        format!("127.0.0.1:{}", common::free_port()),
        format!("127.0.0.1:{}", common::free_port()),
    );
    let child = common::command(&[
        "serve",
        "--store",
        "memory",
        "--grpc-addr",
        &grpc,
        "--http-addr",
        &http,
    ])
    .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
    .env("OTEL_BSP_SCHEDULE_DELAY", "50")
    .env("OTEL_SERVICE_NAME", "sondera-under-test")
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut server = ServerProcess { child, grpc, http };
    server.wait_until_healthy();
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("traceparent: 00-{trace}-00f067aa0ba902b7-01\r\n");
    let (head, _) = adjudicate(&server.http, &traceparent, &started("otel-1", 0));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let trace_bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&trace[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let (path, body) = received
            .recv_timeout(left)
            .expect("spans exported within 20 s");
        assert_eq!(path, "/v1/traces");
        let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
        if has(b"apply_guardrail sondera") {
            assert!(
                has(&trace_bytes),
                "the guardrail span is in the caller's trace"
            );
            assert!(has(b"gen_ai.guardrail.result") && has(b"sondera-under-test"));
            break;
        }
    }
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn print_config_shows_what_is_configured_even_when_it_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.cedar"), "permit (principal,").unwrap();
    let policies = dir.path().display().to_string();
    let output = sondera_with_env(
        &["serve", "--policies", &policies, "--print-config"],
        "",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed.contains(&format!("policies = [\"{policies}\"]  # command line")),
        "{printed}"
    );
    let started = sondera_with_env(
        &["serve", "--policies", &policies, "--store", "memory"],
        "",
        &[],
    );
    assert_eq!(
        started.status.code(),
        Some(2),
        "the server itself refuses the set"
    );
}

#[test]
fn a_webhook_secret_can_come_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "short\n").unwrap();
    let file = secret.display().to_string();
    let args = [
        "serve",
        "--store",
        "memory",
        "--webhook",
        "https://hooks.example/h",
    ];
    let short = sondera_with_env(
        &[&args[..], &["--webhook-secret-file", &file]].concat(),
        "",
        &[],
    );
    assert_eq!(short.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&short.stderr).contains("shorter than 16 bytes"));
    let missing = sondera_with_env(
        &[&args[..], &["--webhook-secret-file", "/nonexistent/secret"]].concat(),
        "",
        &[],
    );
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--webhook-secret-file /nonexistent/secret")
    );
    let both = sondera_with_env(
        &[
            &args[..],
            &[
                "--webhook-secret-file",
                &file,
                "--webhook-secret",
                "0123456789abcdef",
            ],
        ]
        .concat(),
        "",
        &[],
    );
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("cannot be used with"),
        "{both:?}"
    );

    // A good one: the server starts and serves.
    std::fs::write(&secret, "0123456789abcdef0123\n").unwrap();
    let server = ServerProcess::start(&[
        "--store",
        "memory",
        "--webhook",
        "https://hooks.example/h",
        "--webhook-secret-file",
        &file,
    ]);
    drop(server);
}
