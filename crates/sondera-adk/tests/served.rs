//! Agents served over HTTP by adk-server, whose per-request runners carry no
//! plugin manager: the agents' own callbacks lease, judge and release.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_core::SingleAgentLoader;
use adk_server::ServerConfig;
use serde_json::json;
use sondera_adk::CloseError;
use sondera_store::{Records, TrajectoryStatus};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// adk-server names an app after the agent its loader serves.
const SERVED_APP: &str = "coder";

fn key(session: &str) -> sondera_adk::SessionKey {
    sondera_adk::SessionKey {
        app: SERVED_APP.into(),
        user: "ana".into(),
        session: session.into(),
    }
}

struct Served {
    fixture: Fixture,
    shell: Arc<RecordingTool>,
    gate: Arc<tokio::sync::Semaphore>,
    address: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<()>,
}

async fn serve() -> Served {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let shell = RecordingTool::held("run_shell", "command", gate.clone());
    let tool = shell.clone();
    let fixture = Fixture::new(
        |b| b,
        move |sondera| {
            let model = ScriptedModel::planned(|text| match text {
                "wait" => vec![(Some("w1"), "run_shell", json!({"command": "sleep 1"}))],
                "rm" => vec![(Some("r1"), "run_shell", json!({"command": "rm -rf ~"}))],
                _ => vec![],
            });
            llm(sondera, "coder", model, vec![tool])
        },
    );
    let config = ServerConfig::new(
        Arc::new(SingleAgentLoader::new(fixture.root.clone())),
        fixture.sessions.clone(),
    );
    let app = adk_server::create_app(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Served {
        fixture,
        shell,
        gate,
        address,
        stop,
        server,
    }
}

fn request(path: &str, body: &serde_json::Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn run_body(session: &str, text: &str, streaming: bool) -> serde_json::Value {
    json!({
        "appName": SERVED_APP,
        "userId": "ana",
        "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": text}]},
        "streaming": streaming,
    })
}

/// Sends a request and reads the whole response.
async fn exchange(address: std::net::SocketAddr, path: &str, body: &serde_json::Value) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(&request(path, body)).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fully_consumed_runs_release_their_lease_and_shutdown_ends_idle_sessions() {
    let served = serve().await;
    served.fixture.open_in(SERVED_APP, "ana", "plain").await;
    served.fixture.open_in(SERVED_APP, "ana", "streamed").await;

    let plain = exchange(
        served.address,
        "/api/run",
        &run_body("plain", "hello", false),
    )
    .await;
    assert!(plain.starts_with("HTTP/1.1 200"), "{plain}");
    assert!(plain.contains("you said: hello"), "{plain}");
    let streamed = exchange(
        served.address,
        "/api/run_sse",
        &run_body("streamed", "rm", true),
    )
    .await;
    assert!(streamed.starts_with("HTTP/1.1 200"), "{streamed}");
    assert!(
        streamed.contains("Sondera Harness blocked this step"),
        "{streamed}"
    );
    assert_eq!(served.shell.runs(), 0);
    assert!(served.fixture.sondera.active_leases().is_empty());

    let plain_id = served
        .fixture
        .sondera
        .trajectory_id(&key("plain"))
        .await
        .unwrap();
    let events = served.fixture.events(&plain_id).await;
    assert_eq!(kinds(&events), ["started", "prompt", "prompt"]);

    served.stop.send(()).unwrap();
    served.server.await.unwrap();
    served.fixture.sondera.close().await.unwrap();
    let status = served
        .fixture
        .store
        .trajectory(&sondera_store::TenantId::default(), &plain_id)
        .await
        .unwrap()
        .unwrap()
        .status;
    assert_eq!(status, TrajectoryStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_stream_stays_leased_and_blocks_close() {
    let served = serve().await;
    served.fixture.open_in(SERVED_APP, "ana", "abandoned").await;
    let mut stream = TcpStream::connect(served.address).await.unwrap();
    stream
        .write_all(&request(
            "/api/run_sse",
            &run_body("abandoned", "wait", true),
        ))
        .await
        .unwrap();
    for _ in 0..500 {
        if served.shell.runs() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(served.shell.runs(), 1);
    drop(stream);
    tokio::time::sleep(Duration::from_millis(100)).await;

    let leases = served.fixture.sondera.active_leases();
    assert_eq!(leases.len(), 1, "{leases:?}");
    assert_eq!(leases[0].session, key("abandoned"));
    match served.fixture.sondera.close().await {
        Err(CloseError::LeasesActive(listed)) => {
            assert!(
                listed.to_string().contains("coder/ana/abandoned"),
                "{listed}"
            );
        }
        other => panic!("{other:?}"),
    }
    let id = served
        .fixture
        .sondera
        .trajectory_id(&key("abandoned"))
        .await
        .unwrap();
    let status = served
        .fixture
        .store
        .trajectory(&sondera_store::TenantId::default(), &id)
        .await
        .unwrap()
        .unwrap()
        .status;
    assert_eq!(
        status,
        TrajectoryStatus::Running,
        "not finalized behind the caller's back"
    );
    served.gate.add_permits(1);
    served.stop.send(()).unwrap();
    let _ = served.server.await;
}
