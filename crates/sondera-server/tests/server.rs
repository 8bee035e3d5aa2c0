//! The real server on loopback, driven through RemoteHarness, the generated
//! gRPC client and plain HTTP.

mod common;

fn tenant(name: &str) -> sondera_store::TenantId {
    sondera_store::TenantId::new(name).unwrap()
}

use std::sync::Arc;

use common::*;
use sondera_harness::{Harness, HarnessError};
use sondera_model::{Decision, Event, Payload};
use sondera_proto::v1;
use sondera_server::Limits;
use sondera_store::MemoryStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_harness_runs_a_full_lifecycle() {
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let mut harness = harness(server.grpc, Some(ACME));
        let id = harness
            .initialize(None, Some("session-1".into()))
            .await
            .unwrap();
        assert_eq!(harness.trajectory_id(), Some(id.as_str()));

        let denied = harness.event(shell("rm -rf ~")).unwrap();
        let verdict = harness.adjudicate(denied).await.unwrap();
        assert_eq!(verdict.decision, Decision::Deny);
        assert!(
            verdict
                .policies
                .iter()
                .any(|p| p.policy_id.starts_with("destructive"))
        );
        let allowed = harness.event(shell("cargo test")).unwrap();
        assert!(harness.adjudicate(allowed).await.unwrap().is_allowed());

        // A batch goes through the batch call and keeps order.
        let batch = vec![
            harness.event(shell("ls")).unwrap(),
            harness
                .event(Payload::Thought {
                    content: "done".into(),
                })
                .unwrap(),
        ];
        assert_eq!(harness.adjudicates(batch).await.unwrap().len(), 2);

        harness.finalize(Some("ok".into())).await.unwrap();
        assert_eq!(
            harness.trajectory_id(),
            None,
            "cleared once completed is acknowledged"
        );

        // A new scope shares the connection but starts empty, and can resume.
        let mut other = harness.new_scope();
        assert_eq!(other.trajectory_id(), None);
        let err = other.resume("no-such-trajectory", None).await.unwrap_err();
        assert!(matches!(err, HarnessError::UnknownTrajectory(_)), "{err}");

        let connection = connection(server.grpc, Some(ACME_OPS));
        let mut client = connection.client();
        let request = v1::GetTrajectoryRequest {
            trajectory_id: id.clone(),
            summary_only: false,
            ..Default::default()
        };
        let detail = client
            .get_trajectory(connection.request(request))
            .await
            .unwrap()
            .into_inner();
        let summary = detail.summary.unwrap();
        assert_eq!(summary.event_count, 6);
        assert_eq!(summary.session_id.as_deref(), Some("session-1"));
        assert_eq!(summary.status, v1::TrajectoryStatus::Completed as i32);
        let seqs: Vec<u64> = detail.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4, 5]);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trajectory_resumes_through_another_scope() {
    let server = start_default().await;
    let mut first = harness(server.grpc, Some(ACME));
    let id = first.initialize(None, None).await.unwrap();
    first
        .adjudicate(first.event(shell("rm -rf /")).unwrap())
        .await
        .unwrap();
    let mut second = harness(server.grpc, Some(ACME));
    second.resume(&id, None).await.unwrap();
    assert_eq!(second.agent().unwrap().id, "coder");
    second
        .adjudicate(second.event(shell("ls")).unwrap())
        .await
        .unwrap();
    let summary = server
        .governance
        .trajectory(&tenant("acme"), &id, true)
        .await
        .unwrap()
        .summary;
    assert_eq!((summary.event_count, summary.state.denial_count), (4, 1));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_query_answers_over_grpc() {
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let mut harness = harness(server.grpc, Some(ACME));
        let id = harness.initialize(None, Some("s".into())).await.unwrap();
        harness
            .adjudicate(harness.event(shell("rm -rf /")).unwrap())
            .await
            .unwrap();
        harness
            .adjudicate(harness.event(shell("ls")).unwrap())
            .await
            .unwrap();

        let c = connection(server.grpc, Some(ACME_OPS));
        let mut client = c.client();
        let agents = client
            .list_agents(c.request(v1::ListAgentsRequest::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(agents.agents.len(), 1);
        assert_eq!(agents.agents[0].trajectory_count, 1);
        let agent = client
            .get_agent(c.request(v1::GetAgentRequest {
                agent_id: "coder".into(),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(agent.provider, "google-adk");

        let running = v1::ListTrajectoriesRequest {
            status: v1::TrajectoryStatus::Running as i32,
            session_id: Some("s".into()),
            ..Default::default()
        };
        let listed = client
            .list_trajectories(c.request(running))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(listed.trajectories.len(), 1);
        assert_eq!(listed.trajectories[0].id, id);
        assert_eq!(listed.next_page_token, "");

        let blocked = client
            .list_adjudications(c.request(v1::ListAdjudicationsRequest::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(blocked.adjudications.len(), 1);
        assert_eq!(blocked.adjudications[0].kind, "shell_command");
        assert_eq!(blocked.adjudications[0].seq, 1);

        let analytics = client
            .analyze_trajectories(c.request(v1::AnalyzeTrajectoriesRequest::default()))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            (
                analytics.trajectories,
                analytics.events,
                analytics.denied,
                analytics.allowed
            ),
            (1, 3, 1, 1)
        );
        assert!(!analytics.top_denying_policies.is_empty());

        let health = client
            .health(c.request(v1::HealthRequest {}))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(health.status, "serving");
        assert!(health.policies > 10);

        let bad = v1::ListTrajectoriesRequest {
            status: 99,
            ..Default::default()
        };
        let err = client.list_trajectories(c.request(bad)).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().contains("status"), "{}", err.message());
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_delivers_recorded_events_to_their_tenant_only() {
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let acme = connection(server.grpc, Some(ACME_OPS));
        let globex = connection(server.grpc, Some(GLOBEX_OPS));
        let mut acme_stream = acme
            .client()
            .stream_events(acme.request(v1::StreamEventsRequest::default()))
            .await
            .unwrap()
            .into_inner();
        let mut globex_stream = globex
            .client()
            .stream_events(globex.request(v1::StreamEventsRequest::default()))
            .await
            .unwrap()
            .into_inner();

        let mut harness = harness(server.grpc, Some(ACME));
        let id = harness.initialize(None, None).await.unwrap();
        harness
            .adjudicate(harness.event(shell("rm -rf /")).unwrap())
            .await
            .unwrap();

        let started = acme_stream.message().await.unwrap().unwrap();
        assert_eq!(
            (started.seq, started.event.unwrap().trajectory_id),
            (0, id.clone())
        );
        let denied = acme_stream.message().await.unwrap().unwrap();
        assert_eq!(
            denied.adjudicated.unwrap().decision,
            v1::Decision::Deny as i32
        );

        let nothing = tokio::time::timeout(
            std::time::Duration::from_millis(300),
            globex_stream.message(),
        )
        .await;
        assert!(nothing.is_err(), "globex saw acme's event: {nothing:?}");
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_valid_token_are_refused() {
    let server = start_default().await;
    for token in [None, Some("wrong")] {
        let mut harness = harness(server.grpc, token);
        let err = harness.initialize(None, None).await.unwrap_err();
        assert!(
            matches!(&err, HarnessError::Remote { code, .. } if code == "Unauthenticated"),
            "{err}"
        );
        assert!(
            harness.trajectory_id().is_some(),
            "the id stays published after a failed start"
        );
        let response = http(server.http, "GET", "/v1/trajectories", token, None).await;
        assert_eq!(response.status, 401);
        assert_eq!(response.json()["error"]["code"], "UNAUTHENTICATED");
    }
    // Liveness, metrics and the OpenAPI document need no token.
    assert_eq!(
        http(server.http, "GET", "/healthz", None, None)
            .await
            .status,
        200
    );
    assert_eq!(
        http(server.http, "GET", "/v1/openapi.json", None, None)
            .await
            .status,
        200
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_can_neither_read_nor_write_another_tenants_trajectory() {
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let mut acme = harness(server.grpc, Some(ACME));
        let id = acme.initialize(None, None).await.unwrap();
        acme.adjudicate(acme.event(shell("rm -rf /")).unwrap())
            .await
            .unwrap();

        let globex = connection(server.grpc, Some(GLOBEX_OPS));
        let mut client = globex.client();
        let get = v1::GetTrajectoryRequest {
            trajectory_id: id.clone(),
            summary_only: false,
            ..Default::default()
        };
        let err = client
            .get_trajectory(globex.request(get))
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::NotFound);

        let intrusion = Event::new(&id, acme.agent().unwrap(), shell("ls"));
        let err = client
            .adjudicate(globex.request(v1::Event::from(intrusion)))
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::NotFound);

        let listed = client
            .list_trajectories(globex.request(v1::ListTrajectoriesRequest::default()))
            .await
            .unwrap()
            .into_inner();
        assert!(listed.trajectories.is_empty());
        let blocked = http(
            server.http,
            "GET",
            "/v1/adjudications",
            Some(GLOBEX_OPS),
            None,
        )
        .await;
        assert_eq!(blocked.json()["items"].as_array().unwrap().len(), 0);
        let path = format!("/v1/trajectories/{id}");
        assert_eq!(
            http(server.http, "GET", &path, Some(GLOBEX), None)
                .await
                .status,
            404
        );
        assert_eq!(
            http(server.http, "GET", &path, Some(ACME), None)
                .await
                .status,
            200
        );

        let summary = server
            .governance
            .trajectory(&tenant("acme"), &id, true)
            .await
            .unwrap()
            .summary;
        assert_eq!(summary.event_count, 2, "nothing globex sent was recorded");
        server.stop().await;
    }
}

/// Ids are each tenant's own: another tenant reusing a trajectory or event
/// id learns nothing (no "already started", no "already recorded") and
/// takes nothing the first will use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_reveal_nothing_across_tenants_and_cannot_be_squatted() {
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let mut acme = harness(server.grpc, Some(ACME));
        let id = acme.initialize(None, None).await.unwrap();
        let recorded = server
            .governance
            .trajectory(&tenant("acme"), &id, false)
            .await
            .unwrap();
        let globex = connection(server.grpc, Some(GLOBEX_OPS));
        let mut client = globex.client();
        // The very event acme recorded, ids and all.
        let copy = recorded.events[0].event.clone();
        client
            .adjudicate(globex.request(v1::Event::from(copy)))
            .await
            .unwrap();
        // Globex squats an id acme has not used yet; acme uses it after.
        let squatted = format!("{id}-next");
        let squat = Event::new(
            &squatted,
            acme.agent().unwrap(),
            recorded.events[0].event.payload.clone(),
        );
        client
            .adjudicate(globex.request(v1::Event::from(squat.clone())))
            .await
            .unwrap();
        let acme_connection = connection(server.grpc, Some(ACME_OPS));
        acme_connection
            .client()
            .adjudicate(acme_connection.request(v1::Event::from(squat)))
            .await
            .unwrap();
        for (who, event_count) in [("acme", 1), ("globex", 1)] {
            let summary = server
                .governance
                .trajectory(&tenant(who), &id, true)
                .await
                .unwrap()
                .summary;
            assert_eq!(
                (summary.tenant.as_str(), summary.event_count),
                (who, event_count)
            );
        }
        acme.adjudicate(acme.event(shell("ls")).unwrap())
            .await
            .unwrap();
        let acme_now = server
            .governance
            .trajectory(&tenant("acme"), &id, true)
            .await
            .unwrap();
        assert_eq!(acme_now.summary.event_count, 2);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_events_and_batches_are_refused_with_the_limit() {
    let limits = Limits {
        max_event_bytes: 2048,
        max_batch_events: 3,
        max_request_bytes: 16 * 1024,
        ..Limits::default()
    };
    let server = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .limits(limits),
    )
    .await;
    let mut harness = harness(server.grpc, Some(ACME));
    harness.initialize(None, None).await.unwrap();
    let huge = harness.event(shell(&"x".repeat(4096))).unwrap();
    let err = harness.adjudicate(huge.clone()).await.unwrap_err();
    assert!(
        matches!(&err, HarnessError::Remote { code, message } if code == "InvalidArgument" && message.contains("2048-byte limit")),
        "{err}"
    );
    let batch: Vec<Event> = (0..4)
        .map(|_| harness.event(shell("ls")).unwrap())
        .collect();
    let err = harness.adjudicates(batch).await.unwrap_err();
    assert!(err.to_string().contains("3-event limit"), "{err}");

    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        Some(ACME),
        Some(&huge.to_json()),
    )
    .await;
    assert_eq!(response.status, 413);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2048-byte limit")
    );
    // A body over the request limit is refused before it is read, in the same format.
    let body = format!("{{\"events\": [\"{}\"]}}", "x".repeat(20 * 1024));
    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate/batch",
        Some(ACME),
        Some(&body),
    )
    .await;
    assert_eq!(response.status, 413);
    let message = response.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("16384-byte limit"), "{message}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_the_same_operations_as_json() {
    for backend in each_store().await {
        let server = start(
            builder(backend.store.clone(), builtin())
                .access(two_tenants())
                .public_metrics(true),
        )
        .await;
        let mut harness = harness(server.grpc, Some(ACME));
        let id = harness.initialize(None, None).await.unwrap();
        let event = harness.event(shell("rm -rf /")).unwrap();
        let response = http(
            server.http,
            "POST",
            "/v1/adjudicate",
            Some(ACME),
            Some(&event.to_json()),
        )
        .await;
        assert_eq!(response.status, 200, "{}", response.body);
        assert_eq!(response.json()["decision"], "deny");

        let batch = serde_json::json!({ "events": [
            harness.event(shell("ls")).unwrap(),
            Event::new("unknown-trajectory", harness.agent().unwrap(), shell("ls")),
            harness.event(shell("pwd")).unwrap(),
        ]});
        let response = http(
            server.http,
            "POST",
            "/v1/adjudicate/batch",
            Some(ACME),
            Some(&batch.to_string()),
        )
        .await;
        let results = response.json()["results"].as_array().unwrap().clone();
        assert_eq!(results.len(), 2, "stops after the first failure");
        assert_eq!(results[0]["adjudicated"]["decision"], "allow");
        assert_eq!(results[1]["error"]["code"], "NOT_FOUND");

        let malformed = http(
            server.http,
            "POST",
            "/v1/adjudicate",
            Some(ACME),
            Some("{\"event_id\": "),
        )
        .await;
        assert_eq!(malformed.status, 400);
        assert!(
            malformed.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("line 1")
        );

        let detail = http(
            server.http,
            "GET",
            &format!("/v1/trajectories/{id}"),
            Some(ACME),
            None,
        )
        .await;
        assert_eq!(detail.json()["events"].as_array().unwrap().len(), 3);
        let listed = http(
            server.http,
            "GET",
            "/v1/trajectories?status=running&page_size=1",
            Some(ACME_OPS),
            None,
        )
        .await;
        assert_eq!(listed.json()["items"][0]["id"], id.as_str());
        let bad = http(
            server.http,
            "GET",
            "/v1/trajectories?status=sleeping",
            Some(ACME_OPS),
            None,
        )
        .await;
        assert_eq!(bad.status, 400);
        let agents = http(server.http, "GET", "/v1/agents", Some(ACME_OPS), None).await;
        assert_eq!(agents.json()["items"][0]["agent"]["id"], "coder");
        let agent = http(server.http, "GET", "/v1/agents/coder", Some(ACME), None).await;
        assert_eq!(agent.json()["provider"], "google-adk");
        let blocked = http(
            server.http,
            "GET",
            "/v1/adjudications?decision=deny",
            Some(ACME_OPS),
            None,
        )
        .await;
        assert_eq!(blocked.json()["items"].as_array().unwrap().len(), 1);
        let analytics = http(
            server.http,
            "GET",
            "/v1/analytics?since=2020-01-01T00:00:00Z",
            Some(ACME_OPS),
            None,
        )
        .await;
        assert_eq!(analytics.json()["denied"], 1);
        let health = http(server.http, "GET", "/v1/health", Some(ACME), None).await;
        assert_eq!(health.json()["status"], "serving");

        let metrics = http(server.http, "GET", "/metrics", None, None).await.body;
        assert!(
            metrics.contains(
                "sondera_adjudications_total{decision=\"deny\",action=\"shell_command\"} 1"
            ),
            "{metrics}"
        );
        // started, the HTTP deny and the one batch step before the unknown
        // trajectory: every write is timed.
        assert!(
            metrics.contains("sondera_store_write_seconds_count 3\n"),
            "{metrics}"
        );
        assert!(
            metrics.contains("sondera_adjudication_seconds_bucket{le=\"+Inf\"} 3\n"),
            "{metrics}"
        );
        server.stop().await;
    }
}

/// Every path the OpenAPI document lists is served, and nothing else under /v1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_lists_the_routes() {
    let server = start_default().await;
    let doc: serde_json::Value = serde_json::from_str(sondera_server::OPENAPI).unwrap();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            if path.contains("stream") {
                continue;
            }
            let concrete = path.replace("{id}", "missing");
            let response = http(
                server.http,
                &method.to_uppercase(),
                &concrete,
                Some(ACME),
                Some("{}"),
            )
            .await;
            assert_ne!(response.status, 405, "{method} {path}");
            assert!(
                response.status != 404 || response.json()["error"]["code"] == "NOT_FOUND",
                "{method} {path} is not routed"
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_streams_events_as_server_sent_events() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let server = start_default().await;
    let mut stream = tokio::net::TcpStream::connect(server.http).await.unwrap();
    let request = format!(
        "GET /v1/events/stream HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer {ACME_OPS}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    // The subscription exists once the response head has arrived.
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.is_empty() {
            break;
        }
    }
    let mut harness = harness(server.grpc, Some(ACME));
    harness.initialize(None, None).await.unwrap();
    let data = loop {
        let line = lines.next_line().await.unwrap().unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            break serde_json::from_str::<serde_json::Value>(data).unwrap();
        }
    };
    assert_eq!(data["seq"], 0);
    assert_eq!(data["event"]["payload"]["type"], "started");
    server.stop().await;
}

/// The `id:` and data lines of SSE items read from `lines` until `count`
/// items (or a `gap` event, returned as id "gap") have come.
async fn sse_items(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::net::TcpStream>>,
    count: usize,
) -> Vec<(String, serde_json::Value)> {
    let mut items = Vec::new();
    let mut id = String::new();
    while items.len() < count {
        let line = lines.next_line().await.unwrap().unwrap();
        if line == "event: gap" {
            items.push(("gap".to_string(), serde_json::Value::Null));
        } else if let Some(value) = line.strip_prefix("id: ") {
            id = value.to_string();
        } else if let Some(data) = line.strip_prefix("data: ")
            && !id.is_empty()
        {
            items.push((std::mem::take(&mut id), serde_json::from_str(data).unwrap()));
        }
    }
    items
}

async fn open_sse(
    server: &Running,
    query: &str,
    last_event_id: Option<&str>,
) -> tokio::io::Lines<tokio::io::BufReader<tokio::net::TcpStream>> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut stream = tokio::net::TcpStream::connect(server.http).await.unwrap();
    let resume = last_event_id.map_or(String::new(), |id| format!("last-event-id: {id}\r\n"));
    let request = format!(
        "GET /v1/events/stream{query} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer {ACME_OPS}\r\n{resume}\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.is_empty() {
            break;
        }
    }
    lines
}

/// A page that opens gets what the stream's history kept; one that
/// reconnects with `Last-Event-ID` gets exactly what it missed; a cursor
/// older than the history (or from another run) is told of the gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_stream_resumes_after_its_last_event_id() {
    let server = start_default().await;
    let mut harness = harness(server.grpc, Some(ACME));
    harness.initialize(None, None).await.unwrap();
    for i in 0..3 {
        let event = harness.event(shell(&format!("echo {i}"))).unwrap();
        harness.adjudicate(event).await.unwrap();
    }
    let mut lines = open_sse(&server, "?recent=2", None).await;
    let recent = sse_items(&mut lines, 2).await;
    let commands: Vec<&str> = recent
        .iter()
        .map(|(_, d)| d["event"]["payload"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["echo 1", "echo 2"], "the last two, oldest first");
    drop(lines);
    let last_seen = recent[0].0.clone();

    let mut lines = open_sse(&server, "", Some(&last_seen)).await;
    let resumed = sse_items(&mut lines, 1).await;
    assert_eq!(resumed[0].0, recent[1].0, "the one item after it, no more");
    let event = harness.event(shell("echo live")).unwrap();
    harness.adjudicate(event).await.unwrap();
    let live = sse_items(&mut lines, 1).await;
    assert_eq!(live[0].1["event"]["payload"]["command"], "echo live");

    let (epoch, _) = last_seen.split_once('-').unwrap();
    let other_run = format!("{}-1", if epoch == "1" { "2" } else { "1" });
    let mut lines = open_sse(&server, "", Some(&other_run)).await;
    let told = sse_items(&mut lines, 1).await;
    assert_eq!(told[0].0, "gap");
    let bad = http(
        server.http,
        "GET",
        "/v1/events/stream?after=yesterday",
        Some(ACME_OPS),
        None,
    )
    .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("EPOCH-ID"), "{}", bad.body);

    let history = http(
        server.http,
        "GET",
        &format!("/v1/events/recent?after={last_seen}"),
        Some(ACME_OPS),
        None,
    )
    .await;
    let history = history.json();
    assert_eq!(history["gap"], false);
    let kinds: Vec<&str> = history["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["event"]["payload"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["echo 2", "echo live"]);
    let other = http(
        server.http,
        "GET",
        "/v1/events/recent",
        Some(GLOBEX_OPS),
        None,
    )
    .await;
    assert_eq!(
        other.json()["items"],
        serde_json::json!([]),
        "another tenant's history"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_is_dropped_and_never_blocks_adjudication() {
    let limits = Limits {
        stream_buffer: 4,
        ..Limits::default()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let mut subscription = server
        .governance
        .subscribe(&tenant("default"), Default::default());
    let mut harness = harness(server.grpc, None);
    harness.initialize(None, None).await.unwrap();
    for _ in 0..20 {
        harness
            .adjudicate(harness.event(shell("ls")).unwrap())
            .await
            .unwrap();
    }
    let err = subscription.next().await.unwrap().unwrap_err();
    assert!(err.to_string().contains("fell"), "{err}");
    assert_eq!(err.code(), tonic::Code::ResourceExhausted);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tokens_the_server_listens_only_on_loopback() {
    let open = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
    let err = builder(Arc::new(MemoryStore::new()), builtin())
        .http_addr(open)
        .bind()
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("without authentication"), "{err}");
    let server = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let mut harness = harness(server.grpc, None);
    harness.initialize(None, None).await.unwrap();
    assert_eq!(
        harness
            .adjudicate(harness.event(shell("rm -rf /")).unwrap())
            .await
            .unwrap()
            .decision,
        Decision::Deny
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_typed_error_never_an_allow() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut harness = harness(addr, Some(ACME));
    let err = harness.initialize(None, None).await.unwrap_err();
    assert!(matches!(err, HarnessError::Transport(_)), "{err}");
    assert!(harness.trajectory_id().is_some());
    let err = harness
        .adjudicate(harness.event(shell("ls")).unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, HarnessError::Transport(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_the_timeout_fail_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(sondera_store::SqliteStore::open_dir(dir.path()).unwrap());
    // Another connection holds the database's write lock, so every append
    // waits far longer than the request timeout.
    let blocker = rusqlite::Connection::open(dir.path().join("sondera.db")).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let limits = Limits {
        request_timeout: std::time::Duration::from_millis(300),
        ..Limits::default()
    };
    let server = start(builder(store, builtin()).limits(limits)).await;
    let mut harness = harness(server.grpc, None);
    let err = harness.initialize(None, None).await.unwrap_err();
    assert!(matches!(err, HarnessError::Timeout(_)), "{err}");
    assert!(
        harness.trajectory_id().is_some(),
        "the step may have been recorded: keep the id"
    );

    let agent = sondera_model::Agent::new("coder", "google-adk");
    let started = Payload::Started {
        agent: agent.clone(),
        task: None,
        session_id: None,
    };
    let event = Event::new("t-timeout", &agent, started);
    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        None,
        Some(&event.to_json()),
    )
    .await;
    assert_eq!(response.status, 504, "{}", response.body);
    assert_eq!(response.json()["error"]["code"], "DEADLINE_EXCEEDED");
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("may still have been recorded")
    );
    blocker.execute_batch("COMMIT").unwrap();
    server.stop().await;
}

/// A subscriber that hangs up stops counting at once, without waiting for
/// another event to find out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stream_is_released_without_waiting_for_an_event() {
    let server = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .public_metrics(true),
    )
    .await;
    let c = connection(server.grpc, Some(ACME_OPS));
    let stream = c
        .client()
        .stream_events(c.request(v1::StreamEventsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let active = || async { http(server.http, "GET", "/metrics", None, None).await.body };
    assert!(active().await.contains("sondera_active_streams 1"));
    drop(stream);
    drop(c);
    let mut released = false;
    for _ in 0..100 {
        if active().await.contains("sondera_active_streams 0") {
            released = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(released, "the stream stayed open after its subscriber left");
    server.stop().await;
}

/// A remote harness keeps "always" approvals on the server, per tenant, and
/// session approvals in its own scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standing_approvals_are_kept_by_the_server_per_tenant() {
    use sondera_model::{Actor, Grant, GrantScope};
    for backend in each_store().await {
        let server = start_on(&backend).await;
        let mut acme = harness(server.grpc, Some(ACME_OPS));
        acme.initialize(None, None).await.unwrap();
        let push = sondera_guard::action_shape(&shell("git push --force origin main")).unwrap();
        let fetch = sondera_guard::action_shape(&Payload::WebFetch {
            call_id: "w".into(),
            url: "https://docs.rs/tokio".into(),
            prompt: String::new(),
            method: None,
            body: None,
        })
        .unwrap();
        let always = Grant::new(push.clone(), GrantScope::Always, Actor::human("ana"));
        let mut agent = harness(server.grpc, Some(ACME));
        agent.initialize(None, None).await.unwrap();
        let refused = agent.grant(always.clone()).await.unwrap_err();
        assert!(
            matches!(&refused, HarnessError::Remote { code, .. } if code == "PermissionDenied"),
            "an agent token cannot keep a standing grant: {refused}"
        );
        acme.grant(always.clone()).await.unwrap();
        let session = Grant::new(fetch.clone(), GrantScope::Session, Actor::human("ana"));
        acme.grant(session).await.unwrap();
        assert!(acme.granted(&fetch).await.unwrap().is_some());

        let mut other_scope = acme.new_scope();
        other_scope.initialize(None, None).await.unwrap();
        // The server records who kept it and when, whatever the client said.
        let kept = other_scope.granted(&push).await.unwrap().expect("kept");
        assert_eq!(
            (kept.shape, kept.scope, kept.granted_by),
            (
                always.shape.clone(),
                always.scope,
                always.granted_by.clone()
            )
        );
        assert!(kept.granted_at >= always.granted_at);
        assert_eq!(other_scope.granted(&fetch).await.unwrap(), None);

        let mut globex = harness(server.grpc, Some(GLOBEX));
        globex.initialize(None, None).await.unwrap();
        assert_eq!(globex.granted(&push).await.unwrap(), None);

        let listed = http(
            server.http,
            "GET",
            "/v1/agents/coder/grants",
            Some(ACME),
            None,
        )
        .await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        assert_eq!(listed.json()["grants"][0]["granted_by"]["id"], "ana");
        let session_body = serde_json::to_string(&Grant::new(
            fetch.clone(),
            GrantScope::Session,
            Actor::human("ana"),
        ))
        .unwrap();
        let refused = http(
            server.http,
            "POST",
            "/v1/agents/coder/grants",
            Some(ACME_OPS),
            Some(&session_body),
        )
        .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(
            refused
                .body
                .contains("session approvals live in the harness scope")
        );

        let c = connection(server.grpc, Some(ACME_OPS));
        let shapeless = v1::PutGrantRequest {
            agent_id: "coder".into(),
            grant: Some(v1::Grant {
                shape: None,
                ..always.into()
            }),
        };
        let status = c
            .client()
            .put_grant(c.request(shapeless))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(
            status.message().contains("`grant.shape` is required"),
            "{status:?}"
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generic_call_is_judged_as_the_shell_command_it_carries() {
    let server = start_default().await;
    let mut harness = harness(server.grpc, Some(ACME));
    harness.initialize(None, None).await.unwrap();
    let generic = |call_id: &str, command: &str| Payload::ToolCall {
        call_id: call_id.into(),
        tool: "bash".into(),
        arguments: serde_json::json!({ "command": command }),
    };
    let over_grpc = harness.event(generic("c1", "rm -rf ~")).unwrap();
    let verdict = harness.adjudicate(over_grpc).await.unwrap();
    assert_eq!(verdict.decision, Decision::Deny, "{verdict:?}");
    let over_http = harness
        .event(generic("c2", "cat ~/.aws/credentials"))
        .unwrap();
    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        Some(ACME),
        Some(&over_http.to_json()),
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.json()["decision"], "deny", "{}", response.body);
    server.stop().await;
}

/// Fails unless `status` is `INVALID_ARGUMENT` with `needle` in its message.
#[track_caller]
fn assert_invalid_argument(status: &tonic::Status, needle: &str) {
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status}");
    assert!(status.message().contains(needle), "{}", status.message());
}

/// Tool arguments nested `levels` objects deep, built by moves.
fn nested_call(levels: usize) -> Payload {
    let mut value = serde_json::json!("x");
    for _ in 0..levels {
        let mut object = serde_json::Map::new();
        object.insert("k".into(), value);
        value = serde_json::Value::Object(object);
    }
    Payload::ToolCall {
        call_id: format!("deep-{levels}"),
        tool: "create_ticket".into(),
        arguments: value,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_nesting_limit_holds_at_every_way_in_and_all_it_accepts_reads_back() {
    let limit = sondera_model::MAX_JSON_DEPTH;
    let server =
        start(builder(Arc::new(MemoryStore::new()), builtin()).access(two_tenants())).await;
    let mut harness = harness(server.grpc, Some(ACME));
    let id = harness.initialize(None, None).await.unwrap();

    // At the limit: accepted over gRPC and over HTTP, and read back over gRPC.
    let deepest = harness.event(nested_call(limit)).unwrap();
    harness.adjudicate(deepest).await.unwrap();
    let over_http = harness.event(nested_call(limit)).unwrap();
    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        Some(ACME),
        Some(&over_http.to_json()),
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body);
    let c = connection(server.grpc, Some(ACME_OPS));
    let detail = c
        .client()
        .get_trajectory(c.request(v1::GetTrajectoryRequest {
            trajectory_id: id.clone(),
            summary_only: false,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(detail.summary.unwrap().event_count, 3);

    // One past it: refused, naming the field and the limit, over both.
    let too_deep = harness.event(nested_call(limit + 1)).unwrap();
    let err = harness.adjudicate(too_deep.clone()).await.unwrap_err();
    let expected = format!("`payload.arguments` nests more than {limit} levels deep");
    assert!(
        matches!(&err, HarnessError::Remote { code, message } if code == "InvalidArgument" && message.contains(&expected)),
        "{err}"
    );
    let response = http(
        server.http,
        "POST",
        "/v1/adjudicate",
        Some(ACME),
        Some(&too_deep.to_json()),
    )
    .await;
    assert_eq!(response.status, 400, "{}", response.body);
    assert!(response.body.contains(&expected), "{}", response.body);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_protobuf_cannot_decode_is_the_callers_error() {
    let server =
        start(builder(Arc::new(MemoryStore::new()), builtin()).access(two_tenants())).await;
    let mut harness = harness(server.grpc, Some(ACME));
    harness.initialize(None, None).await.unwrap();
    // Past prost's recursion limit of 100: the server cannot decode it.
    let event: v1::Event = harness.event(nested_call(120)).unwrap().into();
    let c = connection(server.grpc, Some(ACME_OPS));
    let status = c.client().adjudicate(c.request(event)).await.unwrap_err();
    assert_invalid_argument(&status, "cannot be decoded");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_size_outside_its_range_is_refused() {
    let server =
        start(builder(Arc::new(MemoryStore::new()), builtin()).access(two_tenants())).await;
    for (path, fine) in [
        ("/v1/agents?page_size=1", true),
        ("/v1/agents?page_size=1000", true),
        ("/v1/agents?page_size=0", false),
        ("/v1/trajectories?page_size=1001", false),
        ("/v1/adjudications?page_size=5000", false),
    ] {
        let response = http(server.http, "GET", path, Some(ACME_OPS), None).await;
        if fine {
            assert_eq!(response.status, 200, "{path}: {}", response.body);
        } else {
            assert_eq!(response.status, 400, "{path}: {}", response.body);
            assert!(
                response.body.contains("outside 1 to 1000"),
                "{}",
                response.body
            );
        }
    }
    let c = connection(server.grpc, Some(ACME_OPS));
    let err = c
        .client()
        .list_agents(c.request(v1::ListAgentsRequest {
            page_size: 5000,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_invalid_argument(&err, "page_size 5000");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dot_segments_are_refused_as_ids_everywhere() {
    let server =
        start(builder(Arc::new(MemoryStore::new()), builtin()).access(two_tenants())).await;
    let agent = sondera_model::Agent::new("coder", "google-adk");
    for (trajectory, agent_id) in [("..", "coder"), (".", "coder"), ("t-1", "..")] {
        let agent = sondera_model::Agent::new(agent_id, &agent.provider);
        let event = Event::new(
            trajectory,
            &agent,
            Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: None,
            },
        );
        let response = http(
            server.http,
            "POST",
            "/v1/adjudicate",
            Some(ACME),
            Some(&event.to_json()),
        )
        .await;
        assert_eq!(response.status, 400, "{}", response.body);
        assert!(
            response.body.contains("must not be `.` or `..`"),
            "{}",
            response.body
        );
        let c = connection(server.grpc, Some(ACME_OPS));
        let err = c
            .client()
            .adjudicate(c.request(event.into()))
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::InvalidArgument,
            "{}",
            err.message()
        );
    }
    server.stop().await;
}
