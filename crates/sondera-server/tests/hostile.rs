//! What a hostile web page, a hostile client or a hostile event can make
//! the server do: nothing it would not do for the operator.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use sondera_model::{Actor, Grant, GrantScope};
use sondera_server::Limits;
use sondera_store::{MemoryStore, Records};

/// A grant body as a page would forge it, naming someone else as granter.
fn forged_grant() -> String {
    let shape = sondera_guard::action_shape(&shell("git push --force origin main")).unwrap();
    serde_json::to_string(&Grant::new(
        shape,
        GrantScope::Always,
        Actor::human("mallory"),
    ))
    .unwrap()
}

async fn grants(server: &Running, token: Option<&str>) -> serde_json::Value {
    let listed = http(server.http, "GET", "/v1/agents/coder/grants", token, None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    listed.json()["grants"].clone()
}

/// The same request a browser sends for a cross-site "simple" POST: a
/// text/plain body, an `Origin` and `Sec-Fetch-Site` naming another site.
fn cross_site_post(host: &str, path: &str, body: &str, content_type: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\norigin: http://evil.example\r\nsec-fetch-site: cross-site\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_cannot_change_a_server_without_tokens() {
    let server = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let host = server.http.to_string();
    let body = forged_grant();
    for content_type in ["text/plain", "application/json"] {
        let forged = cross_site_post(&host, "/v1/agents/coder/grants", &body, content_type);
        let refused = send(server.http, &forged).await;
        assert_eq!(refused.status, 403, "{content_type}: {}", refused.body);
    }
    let no_origin_headers = format!(
        "POST /v1/agents/coder/grants HTTP/1.1\r\nhost: {host}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let refused = send(server.http, &no_origin_headers).await;
    assert_eq!(refused.status, 415, "{}", refused.body);
    assert_eq!(grants(&server, None).await, serde_json::json!([]));

    // DNS rebinding: the page's own name, now pointing at loopback.
    let rebound = format!(
        "GET /v1/trajectories HTTP/1.1\r\nhost: evil.example:{}\r\nconnection: close\r\n\r\n",
        server.http.port()
    );
    let refused = send(server.http, &rebound).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("--public-host"), "{}", refused.body);

    // The plugins, the CLI and scripts send JSON without browser headers.
    let kept = http(
        server.http,
        "POST",
        "/v1/agents/coder/grants",
        None,
        Some(&body),
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_host_is_answered_by_its_name_only_when_configured() {
    let server = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .public_hosts(["harness.example.com".to_string()]),
    )
    .await;
    for (host, status) in [("harness.example.com", 200), ("other.example.com", 403)] {
        let request = format!(
            "GET /v1/health HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {ACME}\r\nconnection: close\r\n\r\n"
        );
        let answer = send(server.http, &request).await;
        assert_eq!(answer.status, status, "{host}: {}", answer.body);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_is_recorded_as_granted_by_the_token_that_kept_it() {
    let server = start_default().await;
    let kept = http(
        server.http,
        "POST",
        "/v1/agents/coder/grants",
        Some(ACME_OPS),
        Some(&forged_grant()),
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let listed = grants(&server, Some(ACME_OPS)).await;
    assert_eq!(listed[0]["granted_by"]["id"], "ana", "{listed}");
    let huge = forged_grant().replace("\"git\"", &format!("\"{}\"", "g".repeat(2 << 20)));
    assert!(huge.len() > 2 << 20, "the shape names the program");
    let refused = http(
        server.http,
        "POST",
        "/v1/agents/coder/grants",
        Some(ACME_OPS),
        Some(&huge),
    )
    .await;
    assert_eq!(refused.status, 413, "{}", refused.body);
    assert!(refused.body.contains("`grant`"), "{}", refused.body);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_that_sum_every_tenant_need_an_explicit_choice() {
    let tokens = start_default().await;
    let refused = http(tokens.http, "GET", "/metrics", None, None).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let refused = http(tokens.http, "GET", "/metrics", Some(ACME_OPS), None).await;
    assert_eq!(
        refused.status, 403,
        "another tenant's operator reads no totals"
    );
    assert!(
        refused.body.contains("--public-metrics"),
        "{}",
        refused.body
    );
    tokens.stop().await;

    let public = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .public_metrics(true),
    )
    .await;
    let served = http(public.http, "GET", "/metrics", None, None).await;
    assert_eq!(served.status, 200, "{}", served.body);
    public.stop().await;

    let loopback = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let served = http(loopback.http, "GET", "/metrics", None, None).await;
    assert_eq!(served.status, 200, "one tenant, loopback: {}", served.body);
    loopback.stop().await;
}

/// An event built to be costly to judge: a megabyte of text the injection
/// detector normalises character by character.
fn costly_event(trajectory: &str, event_id: &str) -> String {
    let text = "\u{430}\u{200b}".repeat(1 << 18);
    serde_json::json!({
        "event_id": event_id,
        "trajectory_id": trajectory,
        "agent": {"id": "coder", "provider": "google-adk"},
        "timestamp": "2026-12-02T10:00:00Z",
        "payload": {"type": "prompt", "role": "user", "content": text},
        "actor": {"kind": "human", "id": "dev"},
    })
    .to_string()
}

fn started(trajectory: &str) -> String {
    serde_json::json!({
        "event_id": format!("{trajectory}-start"),
        "trajectory_id": trajectory,
        "agent": {"id": "coder", "provider": "google-adk"},
        "timestamp": "2026-12-02T10:00:00Z",
        "payload": {"type": "started", "agent": {"id": "coder", "provider": "google-adk"}},
        "actor": {"kind": "agent", "id": "coder"},
    })
    .to_string()
}

/// The request timeout bounds judging too: past it the caller is answered
/// 504 at once, the step is not recorded (its event id stays free), and
/// while costly steps are judged `/healthz` still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judging_is_bounded_by_the_request_timeout_and_starves_nothing() {
    // How long one costly step takes to judge here, with time to spare.
    let unhurried = start(
        builder(Arc::new(MemoryStore::new()), builtin()).limits(Limits {
            max_event_bytes: 4 << 20,
            ..Limits::default()
        }),
    )
    .await;
    let opened = http(
        unhurried.http,
        "POST",
        "/v1/adjudicate",
        None,
        Some(&started("t")),
    )
    .await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let sent = Instant::now();
    let judged = http(
        unhurried.http,
        "POST",
        "/v1/adjudicate",
        None,
        Some(&costly_event("t", "costly")),
    )
    .await;
    let judging = sent.elapsed();
    assert_eq!(judged.status, 200, "{}", judged.body);
    unhurried.stop().await;

    let timeout = (judging / 4).max(Duration::from_millis(10));
    let limits = Limits {
        request_timeout: timeout,
        max_event_bytes: 4 << 20,
        ..Limits::default()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let mut costly = Vec::new();
    for n in 0..4 {
        let trajectory = format!("t-{n}");
        let opened = http(
            server.http,
            "POST",
            "/v1/adjudicate",
            None,
            Some(&started(&trajectory)),
        )
        .await;
        assert_eq!(opened.status, 200, "{}", opened.body);
        let event = costly_event(&trajectory, &format!("costly-{n}"));
        let addr = server.http;
        costly.push(tokio::spawn(async move {
            let sent = Instant::now();
            let answer = http(addr, "POST", "/v1/adjudicate", None, Some(&event)).await;
            (answer, sent.elapsed())
        }));
    }
    tokio::time::sleep(timeout / 2).await;
    let asked = Instant::now();
    let health = http(server.http, "GET", "/healthz", None, None).await;
    let health_took = asked.elapsed();
    assert_eq!(health.status, 200);
    for task in costly {
        let (answer, took) = task.await.unwrap();
        assert_eq!(
            answer.status, 504,
            "judging took {judging:?} unhurried: {}",
            answer.body
        );
        assert!(
            took < timeout + judging / 2 + Duration::from_secs(1),
            "answered after {took:?} (timeout {timeout:?}, judging {judging:?})"
        );
    }
    assert!(
        health_took < judging / 2 + Duration::from_secs(1),
        "/healthz took {health_took:?} while steps were judged (each takes {judging:?})"
    );
    // Nothing past the deadline was recorded: each trajectory holds only
    // its start, and the same event id is judged again, not refused.
    tokio::time::sleep(judging * 4 + Duration::from_secs(1)).await;
    for n in 0..4 {
        let path = format!("/v1/trajectories/t-{n}");
        let detail = http(server.http, "GET", &path, None, None).await;
        assert_eq!(detail.status, 200, "{}", detail.body);
        assert_eq!(
            detail.json()["events"].as_array().unwrap().len(),
            1,
            "t-{n}"
        );
    }
    let again = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        None,
        Some(&costly_event("t-0", "costly-0")),
    )
    .await;
    assert_eq!(
        again.status, 504,
        "judged again, not a duplicate: {}",
        again.body
    );
    server.stop().await;
}

/// A trajectory of events near the size limit is read back in pages a
/// default gRPC client (4 MiB) accepts, and whole through the records API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_trajectory_is_read_in_pages_a_default_client_accepts() {
    use sondera_harness::Harness;
    use sondera_proto::v1;

    let server = start_default().await;
    let mut agent = harness(server.grpc, Some(ACME));
    let id = agent.initialize(None, None).await.unwrap();
    let filler = "x".repeat(900 * 1024);
    for _ in 0..6 {
        let event = agent
            .event(sondera_model::Payload::Thought {
                content: filler.clone(),
            })
            .unwrap();
        agent.adjudicate(event).await.unwrap();
    }
    let mut client = v1::harness_service_client::HarnessServiceClient::connect(format!(
        "http://{}",
        server.grpc
    ))
    .await
    .unwrap();
    let mut from_seq = 0;
    let mut read = 0;
    loop {
        let mut request = tonic::Request::new(v1::GetTrajectoryRequest {
            trajectory_id: id.clone(),
            summary_only: false,
            from_seq,
        });
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {ACME}").parse().unwrap());
        let page = client.get_trajectory(request).await.unwrap().into_inner();
        read += page.events.len();
        match page.next_seq {
            Some(next) => from_seq = next,
            None => break,
        }
    }
    assert_eq!(read, 7, "the start and six thoughts");
    let records = sondera_harness::RemoteRecords::new(connection(server.grpc, Some(ACME)));
    let tenant = sondera_store::TenantId::default();
    let whole = records
        .trajectory_with_events(&tenant, &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(whole.events.len(), 7);
    assert!(whole.events.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
    server.stop().await;
}
