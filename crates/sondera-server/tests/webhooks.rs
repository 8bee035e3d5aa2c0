//! Approval notifications: delivered to local receivers, signed, retried
//! after a 500, free of the step's content by default, and a receiver that
//! never answers does not slow judging.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use hmac::{KeyInit as _, Mac as _};
use sondera_harness::Harness;
use sondera_model::{Approval, Decision};
use sondera_server::{WebhookSecret, Webhooks};
use sondera_store::MemoryStore;
use tokio::sync::mpsc;

const SECRET: &str = "0123456789abcdef0123456789abcdef";

/// One request a receiver got.
#[derive(Debug)]
struct Received {
    headers: axum::http::HeaderMap,
    body: String,
}

/// A receiver on loopback answering 500 to its first `failures` requests;
/// its URL and what it receives.
async fn receiver(failures: usize) -> (String, mpsc::UnboundedReceiver<Received>) {
    let (send, received) = mpsc::unbounded_channel();
    let failed = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let (send, failed) = (send.clone(), failed.clone());
            async move {
                let _ = send.send(Received { headers, body });
                if failed.fetch_add(1, Ordering::SeqCst) < failures {
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    axum::http::StatusCode::NO_CONTENT
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), received)
}

async fn next(received: &mut mpsc::UnboundedReceiver<Received>) -> Received {
    tokio::time::timeout(Duration::from_secs(10), received.recv())
        .await
        .expect("a notification within 10 s")
        .unwrap()
}

/// Checks `x-sondera-signature` as a receiver would.
fn signature_holds(received: &Received) -> bool {
    let header = received.headers["x-sondera-signature"].to_str().unwrap();
    let (t, v1) = header.split_once(",v1=").unwrap();
    let t = t.strip_prefix("t=").unwrap();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", received.body).as_bytes());
    mac.verify_slice(&hex::decode(v1).unwrap()).is_ok()
        && (chrono::Utc::now().timestamp() - t.parse::<i64>().unwrap()).abs() < 60
}

async fn escalate(agent: &mut sondera_harness::RemoteHarness, command: &str) -> String {
    let event = agent.event(shell(command)).unwrap();
    let event_id = event.event_id.clone();
    let verdict = agent.adjudicate(event).await.unwrap();
    assert_eq!(verdict.decision, Decision::Escalate);
    event_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_notified_signed_retried_and_without_the_step() {
    let (json_url, mut json) = receiver(1).await;
    let (slack_url, mut slack) = receiver(0).await;
    let webhooks = Webhooks::new(
        vec![
            json_url.parse().unwrap(),
            format!("slack={slack_url}").parse().unwrap(),
        ],
        Some(WebhookSecret::new(SECRET).unwrap()),
    )
    .unwrap()
    .dashboard("https://sondera.example/")
    .retries(4, Duration::from_millis(50), Duration::from_secs(2));
    let server = start(
        builder(Arc::new(MemoryStore::new()), escalating())
            .access(two_tenants())
            .webhooks(webhooks),
    )
    .await;
    let mut agent = harness(server.grpc, Some(ACME));
    agent.initialize(None, Some("s-1".into())).await.unwrap();
    let event_id = escalate(&mut agent, "terraform apply -var db_password=hunter2").await;
    let waiting = tokio::spawn(async move {
        let outcome = agent
            .ask_operator(&event_id, Some(Duration::from_secs(60)))
            .await;
        (agent, outcome)
    });

    // The first attempt is answered 500, the second delivered: the same body.
    let (first, second) = (next(&mut json).await, next(&mut json).await);
    assert_eq!(first.body, second.body);
    assert_eq!(
        first.headers["x-sondera-delivery"],
        second.headers["x-sondera-delivery"]
    );
    assert!(signature_holds(&second), "{:?}", second.headers);
    assert_eq!(second.headers["x-sondera-event"], "approval.opened");
    let opened: serde_json::Value = serde_json::from_str(&second.body).unwrap();
    assert_eq!(opened["type"], "approval.opened");
    let id = opened["approval"]["id"].as_str().unwrap().to_string();
    assert_eq!(opened["approval"]["tenant"], "acme");
    assert_eq!(opened["approval"]["agent_id"], "coder");
    assert_eq!(opened["approval"]["step"], "shell_command");
    assert_eq!(opened["approval"]["policies"][0], "infra-apply");
    assert_eq!(opened["approval"]["state"]["status"], "pending");
    assert_eq!(
        opened["link"],
        format!("https://sondera.example/#/approvals/{id}")
    );
    assert!(!second.body.contains("hunter2"), "{}", second.body);

    let message = next(&mut slack).await;
    assert!(signature_holds(&message));
    let text: serde_json::Value = serde_json::from_str(&message.body).unwrap();
    let text = text["text"].as_str().unwrap();
    assert!(text.starts_with("*Approval needed*"), "{text}");
    assert!(text.contains(&format!(
        "<https://sondera.example/#/approvals/{id}|Open in the dashboard>"
    )));
    assert!(!text.contains("hunter2"));

    connection(server.grpc, Some(ACME_OPS))
        .decide(&id, Approval::Once, Some("fine, hunter2 is rotated".into()))
        .await
        .unwrap();
    let decided = next(&mut json).await;
    assert!(signature_holds(&decided));
    let decided: serde_json::Value = serde_json::from_str(&decided.body).unwrap();
    assert_eq!(decided["type"], "approval.decided");
    assert_eq!(decided["approval"]["state"]["status"], "decided");
    assert_eq!(decided["approval"]["state"]["approval"], "once");
    assert!(!decided.to_string().contains("hunter2"), "{decided}");
    let message = next(&mut slack).await;
    assert!(
        message.body.contains("Approval granted by ana"),
        "{}",
        message.body
    );
    let (mut agent, outcome) = waiting.await.unwrap();
    outcome.unwrap();

    // An approval nobody decides expires, and that is told too.
    let event_id = escalate(&mut agent, "terraform apply -target=module.db").await;
    let _ = agent
        .ask_operator(&event_id, Some(Duration::from_secs(1)))
        .await;
    next(&mut json).await;
    next(&mut slack).await;
    let expired = next(&mut json).await;
    assert_eq!(expired.headers["x-sondera-event"], "approval.expired");
    assert!(next(&mut slack).await.body.contains("Approval expired"));

    // A receiver has the body before its answer is counted.
    let counted = "sondera_webhook_notifications_total{outcome=\"delivered\"} 8";
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server.governance.metrics().render().contains(counted) {
        assert!(
            Instant::now() < deadline,
            "{}",
            server.governance.metrics().render()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let metrics = server.governance.metrics().render();
    assert!(
        metrics.contains("sondera_webhook_notifications_total{outcome=\"retried\"} 1"),
        "{metrics}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_does_not_slow_judging() {
    // Accepts connections and never reads or answers them.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            open.push(stream);
        }
    });
    let webhooks = Webhooks::new(
        vec![url.parse().unwrap()],
        Some(WebhookSecret::new(SECRET).unwrap()),
    )
    .unwrap()
    .retries(3, Duration::from_secs(1), Duration::from_secs(30));
    let server = start(
        builder(Arc::new(MemoryStore::new()), escalating())
            .access(two_tenants())
            .webhooks(webhooks),
    )
    .await;
    let operator = connection(server.grpc, Some(ACME_OPS));
    let mut agent = harness(server.grpc, Some(ACME));
    agent.initialize(None, None).await.unwrap();
    // Each receiver call hangs for 30 s; twenty escalations, each opened,
    // decided and answered, take far less than one of them.
    let started = Instant::now();
    for n in 0..20 {
        let event_id = escalate(&mut agent, &format!("terraform apply -target=module.m{n}")).await;
        let opened = server
            .governance
            .request_approval(
                &sondera_store::TenantId::new("acme").unwrap(),
                agent.trajectory_id().unwrap(),
                &event_id,
                None,
            )
            .await
            .unwrap();
        operator
            .decide(&opened.id, Approval::Deny, None)
            .await
            .unwrap();
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "judging waited for the webhook: {:?}",
        started.elapsed()
    );
    held.abort();
    server.stop().await;
}
