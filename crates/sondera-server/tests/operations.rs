//! Running the service: policy reloads and TLS.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use sondera_harness::{Harness, RemoteHarness};
use sondera_model::{Agent, Decision};
use sondera_policy::PolicyEngine;
use sondera_server::{PolicyLoader, TlsFiles};
use sondera_store::MemoryStore;

const PERMIT_ALL: &str = r#"@id("allow-all") @description("allow") @severity("info")
permit (principal, action, resource);
"#;

const NO_RM: &str = r#"@id("allow-all") @description("allow") @severity("info")
permit (principal, action, resource);
@id("no-rm") @description("no rm") @severity("high")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "rm *" };
"#;

async fn decision_for(harness: &mut RemoteHarness, command: &str) -> Decision {
    let event = harness.event(shell(command)).unwrap();
    harness.adjudicate(event).await.unwrap().decision
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_policy_files_are_reloaded_and_invalid_ones_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.cedar");
    std::fs::write(&rules, PERMIT_ALL).unwrap();
    let policies = dir.path().to_path_buf();
    let loader: PolicyLoader =
        Arc::new(move || PolicyEngine::builder().directory(&policies).build());
    let server = start(
        builder(Arc::new(MemoryStore::new()), loader)
            .watch(dir.path())
            .watch_interval(Duration::from_millis(50)),
    )
    .await;
    let mut harness = harness(server.grpc, None);
    harness.initialize(None, None).await.unwrap();
    assert_eq!(
        decision_for(&mut harness, "rm -rf build").await,
        Decision::Allow
    );

    std::fs::write(&rules, "permit (principal, action, resource").unwrap();
    let metrics = || async { http(server.http, "GET", "/metrics", None, None).await.body };
    let refused = "sondera_policy_reload_failures_total 1";
    for _ in 0..100 {
        if metrics().await.contains(refused) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        metrics().await.contains(refused),
        "the broken set was not reported"
    );
    assert_eq!(
        decision_for(&mut harness, "rm -rf build").await,
        Decision::Allow,
        "the running set stays in force"
    );

    std::fs::write(&rules, NO_RM).unwrap();
    let mut decision = Decision::Allow;
    for _ in 0..100 {
        decision = decision_for(&mut harness, "rm -rf build").await;
        if decision == Decision::Deny {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(decision, Decision::Deny, "the new set took effect");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_listeners_serve_tls_from_a_certificate_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, issued.cert.pem()).unwrap();
    std::fs::write(&key, issued.signing_key.serialize_pem()).unwrap();
    let server = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .tls(TlsFiles {
                cert: cert.clone(),
                key,
            }),
    )
    .await;

    let mut config = config(server.grpc, Some(ACME));
    config.endpoint = format!("https://localhost:{}", server.grpc.port());
    config.ca_certificate = Some(cert.clone());
    let mut harness = RemoteHarness::new(&config, Some(Agent::new("coder", "google-adk"))).unwrap();
    harness.initialize(None, None).await.unwrap();
    assert_eq!(decision_for(&mut harness, "rm -rf /").await, Decision::Deny);

    // Without trusting the certificate the call fails; it is never an allow.
    config.ca_certificate = None;
    let mut untrusting =
        RemoteHarness::new(&config, Some(Agent::new("coder", "google-adk"))).unwrap();
    assert!(untrusting.initialize(None, None).await.is_err());

    // HTTP over TLS with the same certificate.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(issued.cert.der().clone()).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let tcp = tokio::net::TcpStream::connect(server.http).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    tls.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    // Plain HTTP to the TLS listener gets nothing useful.
    let plain = tokio::time::timeout(
        Duration::from_secs(5),
        http(server.http, "GET", "/healthz", None, None),
    )
    .await;
    assert!(plain.is_err() || plain.unwrap().status != 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pruner_keeps_the_newest_ended_trajectories_and_the_running_ones() {
    let store = Arc::new(MemoryStore::new());
    let mut rules = sondera_store::RetentionRules::default();
    rules.trajectories(&"acme=2".parse().unwrap());
    let server = start(
        builder(store.clone(), builtin())
            .access(two_tenants())
            .retention(rules, Duration::from_millis(100)),
    )
    .await;
    let mut ended = Vec::new();
    for n in 0..4 {
        let mut agent = harness(server.grpc, Some(ACME));
        agent.initialize(None, None).await.unwrap();
        decision_for(&mut agent, &format!("ls {n}")).await;
        let id = agent.trajectory_id().unwrap().to_string();
        if n < 3 {
            agent.finalize(None).await.unwrap();
            ended.push(id);
        }
        // Distinct last-step times, so "newest" is unambiguous.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let acme = sondera_store::TenantId::new("acme").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    use sondera_store::Records as _;
    // Counted once the batch is removed.
    while !server
        .governance
        .metrics()
        .render()
        .contains("sondera_pruned_trajectories_total 1")
    {
        assert!(std::time::Instant::now() < deadline, "the pruner never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(store.trajectory(&acme, &ended[0]).await.unwrap().is_none());
    for kept in &ended[1..] {
        assert!(store.trajectory(&acme, kept).await.unwrap().is_some());
    }
    let running = store
        .list_trajectories(
            (&acme).into(),
            &Default::default(),
            &sondera_store::PageRequest::first(10),
        )
        .await
        .unwrap();
    assert_eq!(running.items.len(), 3, "two ended and the running one");
    let metrics = server.governance.metrics().render();
    assert!(
        metrics.contains("sondera_pruned_events_total 3"),
        "{metrics}"
    );
    server.stop().await;
}
