//! Clients that connect and then dawdle: trickling headers, stalling a body,
//! sending nothing, never finishing a TLS handshake. Each is closed within
//! its timeout while other clients are served.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use sondera_harness::Harness;
use sondera_server::{Limits, TlsFiles};
use sondera_store::MemoryStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEADER_TIMEOUT: Duration = Duration::from_secs(1);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
const IDLE_TIMEOUT: Duration = Duration::from_secs(3);
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);
/// Scheduling on a loaded two-core machine.
const SLACK: Duration = Duration::from_millis(1500);

fn limits() -> Limits {
    Limits {
        header_read_timeout: HEADER_TIMEOUT,
        request_timeout: REQUEST_TIMEOUT,
        idle_timeout: IDLE_TIMEOUT,
        tls_handshake_timeout: HANDSHAKE_TIMEOUT,
        max_connections: 400,
        max_connections_per_peer: 400,
        ..Limits::default()
    }
}

/// Waits until the server closes `stream` (end of file or reset), reading
/// and discarding whatever it answers; how long that took.
async fn closed_after(mut stream: TcpStream, started: Instant) -> Duration {
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return started.elapsed(),
            Ok(_) => {}
        }
    }
}

/// Sends `bytes` one at a time, `every` apart, until the server closes the
/// connection; how long it stayed open.
async fn trickle(addr: SocketAddr, bytes: &'static [u8], every: Duration) -> Duration {
    let started = Instant::now();
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let writer = tokio::spawn(async move {
        for byte in bytes.iter().cycle() {
            if write.write_all(std::slice::from_ref(byte)).await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
    });
    let mut buf = [0u8; 1024];
    let open_for = loop {
        match read.read(&mut buf).await {
            Ok(0) | Err(_) => break started.elapsed(),
            Ok(_) => {}
        }
    };
    writer.abort();
    open_for
}

async fn healthz_answers_quickly(addr: SocketAddr) {
    let started = Instant::now();
    let response = tokio::time::timeout(
        Duration::from_secs(2),
        http(addr, "GET", "/healthz", None, None),
    )
    .await
    .expect("/healthz answers while slow clients are connected");
    assert_eq!(response.status, 200);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_headers_are_cut_off_while_others_are_served() {
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits())).await;
    let header: &'static [u8] =
        b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let preface: &'static [u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let slow: Vec<_> = (0..200)
        .map(|i| match i % 4 {
            0 => tokio::spawn(trickle(server.grpc, preface, Duration::from_millis(200))),
            _ => tokio::spawn(trickle(server.http, header, Duration::from_millis(100))),
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..5 {
        healthz_answers_quickly(server.http).await;
    }
    let mut agent = harness(server.grpc, None);
    agent.initialize(None, None).await.unwrap();
    for task in slow {
        let open_for = task.await.unwrap();
        assert!(
            open_for < HEADER_TIMEOUT + SLACK,
            "a connection trickling its headers stayed open {open_for:?}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_is_answered_and_closed_within_the_request_timeout() {
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits())).await;
    let started = Instant::now();
    let mut stream = TcpStream::connect(server.http).await.unwrap();
    stream
        .write_all(
            b"POST /v1/adjudicate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"event_id\":",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(REQUEST_TIMEOUT + SLACK * 2, stream.read_to_end(&mut answer))
        .await
        .expect("the connection is closed");
    let elapsed = started.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(
        elapsed >= REQUEST_TIMEOUT && elapsed < REQUEST_TIMEOUT + SLACK,
        "{elapsed:?}"
    );
    healthz_answers_quickly(server.http).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_to_either_listener_are_closed_when_idle() {
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits())).await;
    let started = Instant::now();
    let mut silent = Vec::new();
    for addr in [server.grpc, server.http] {
        for _ in 0..20 {
            let stream = TcpStream::connect(addr).await.unwrap();
            silent.push(tokio::spawn(closed_after(stream, started)));
        }
    }
    // Meanwhile both listeners serve.
    healthz_answers_quickly(server.http).await;
    let mut harness = harness(server.grpc, None);
    harness.initialize(None, None).await.unwrap();
    for task in silent {
        let open_for = task.await.unwrap();
        assert!(
            open_for < IDLE_TIMEOUT.max(HEADER_TIMEOUT) + SLACK,
            "a silent connection stayed open {open_for:?}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_tls_handshake_is_closed_and_others_complete() {
    let dir = tempfile::tempdir().unwrap();
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, issued.cert.pem()).unwrap();
    std::fs::write(&key, issued.signing_key.serialize_pem()).unwrap();
    let server = start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .limits(limits())
            .tls(TlsFiles {
                cert: cert.clone(),
                key,
            }),
    )
    .await;
    let started = Instant::now();
    let stalled: Vec<_> = [server.grpc, server.http]
        .into_iter()
        .map(|addr| {
            tokio::spawn(async move {
                let mut stream = TcpStream::connect(addr).await.unwrap();
                // The first bytes of a ClientHello, then nothing.
                stream.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
                closed_after(stream, started).await
            })
        })
        .collect();
    let mut config = config(server.grpc, None);
    config.endpoint = format!("https://localhost:{}", server.grpc.port());
    config.ca_certificate = Some(cert);
    let mut harness = sondera_harness::RemoteHarness::new(
        &config,
        Some(sondera_model::Agent::new("coder", "google-adk")),
    )
    .unwrap();
    harness.initialize(None, None).await.unwrap();
    for task in stalled {
        let open_for = task.await.unwrap();
        assert!(
            open_for < HANDSHAKE_TIMEOUT + SLACK,
            "an unfinished handshake stayed open {open_for:?}"
        );
    }
    server.stop().await;
}

/// Past the connection limit, new connections wait to be accepted rather
/// than exhausting the process; they are served once others close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_limit_wait_and_are_served_after() {
    let limits = Limits {
        max_connections: 4,
        ..limits()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(server.http).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let waiting = tokio::spawn(http(server.http, "GET", "/healthz", None, None));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "a fifth connection was served");
    drop(held);
    let response = tokio::time::timeout(Duration::from_secs(3), waiting)
        .await
        .expect("served once a place is free")
        .unwrap();
    assert_eq!(response.status, 200);
    server.stop().await;
}

/// Subscribes over SSE with a small receive buffer, then records events far
/// larger than any socket buffer while the subscriber reads nothing.
async fn subscribe_and_flood(server: &Running) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut subscriber = socket.connect(server.http).await.unwrap();
    subscriber
        .write_all(b"GET /v1/events/stream HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 64];
    let n = subscriber.read(&mut head).await.unwrap();
    assert!(head[..n].starts_with(b"HTTP/1.1 200"));
    let mut agent = harness(server.grpc, None);
    agent.initialize(None, None).await.unwrap();
    let filler = "x".repeat(16 * 1024);
    for _ in 0..200 {
        let event = agent
            .event(sondera_model::Payload::Thought {
                content: filler.clone(),
            })
            .unwrap();
        agent.adjudicate(event).await.unwrap();
    }
    subscriber
}

/// A live subscriber that stops reading falls behind; its connection is
/// closed rather than held open with a full buffer for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_is_disconnected() {
    let limits = Limits {
        stream_buffer: 4,
        ..limits()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let mut subscriber = subscribe_and_flood(&server).await;
    tokio::time::sleep(IDLE_TIMEOUT + SLACK).await;
    // What was buffered before the close can still be read; then it ends.
    let mut sink = vec![0u8; 1 << 20];
    let closed = loop {
        match tokio::time::timeout(Duration::from_secs(2), subscriber.read(&mut sink)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(_)) => continue,
            Err(_) => break false,
        }
    };
    assert!(
        closed,
        "the stalled subscriber's connection was never closed"
    );
    server.stop().await;
}

/// A subscriber that falls behind but reads on is told why in an `error`
/// event, and then its connection ends: it is not left open and silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_subscriber_reads_why_and_then_its_connection_ends() {
    let limits = Limits {
        stream_buffer: 4,
        idle_timeout: Duration::from_secs(60),
        header_read_timeout: Duration::from_secs(60),
        ..limits()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let mut subscriber = subscribe_and_flood(&server).await;
    let mut received = Vec::new();
    let ended = tokio::time::timeout(
        Duration::from_secs(20),
        subscriber.read_to_end(&mut received),
    )
    .await;
    assert!(
        ended.is_ok(),
        "the connection stayed open after the stream ended"
    );
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.contains("event: error"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    server.stop().await;
}

/// One address holding its share of connections cannot keep others out:
/// its next connection is closed at once while another address is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_every_connection() {
    let limits = Limits {
        max_connections_per_peer: 3,
        ..limits()
    };
    let server = start(builder(Arc::new(MemoryStore::new()), builtin()).limits(limits)).await;
    let from = |ip: [u8; 4]| {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::from((ip, 0))).unwrap();
        socket.connect(server.http)
    };
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(from([127, 0, 0, 1]).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fourth = from([127, 0, 0, 1]).await.unwrap();
    let mut buf = [0u8; 16];
    let closed = tokio::time::timeout(SLACK, fourth.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
        "a fourth connection from one address was kept: {closed:?}"
    );
    let mut other = from([127, 0, 0, 2]).await.unwrap();
    other
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(SLACK, other.read_to_end(&mut answer))
        .await
        .expect("another address is served")
        .unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    drop(held);
    server.stop().await;
}
