//! A real server on loopback ports, and a minimal HTTP/1.1 client.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use sondera_harness::RemoteHarness;
use sondera_harness::remote::{Connection, RemoteConfig};
use sondera_model::{Agent, Payload};
use sondera_policy::PolicyEngine;
use sondera_server::{Access, PolicyLoader, Server, ServerBuilder, Tokens, hash_token};
use sondera_store::{MemoryStore, TrajectoryStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Agent tokens of two tenants.
pub(crate) const ACME: &str = "acme-token";
pub(crate) const GLOBEX: &str = "globex-token";
/// Operator tokens of the same tenants, recorded as `ana` and `gus`.
pub(crate) const ACME_OPS: &str = "acme-operator-token";
pub(crate) const GLOBEX_OPS: &str = "globex-operator-token";
pub(crate) const ADMIN: &str = "admin-token";

pub(crate) struct Running {
    pub grpc: SocketAddr,
    pub http: SocketAddr,
    pub governance: Arc<sondera_server::Governance>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<Result<(), sondera_server::ServerError>>,
}

impl Running {
    /// Stops the server and waits for it to drain.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.task).await.unwrap().unwrap();
    }
}

pub(crate) fn builtin() -> PolicyLoader {
    Arc::new(PolicyEngine::builtin)
}

pub(crate) fn two_tenants() -> Access {
    let mut tokens = Tokens::default();
    tokens.add(&format!("acme={}", hash_token(ACME))).unwrap();
    tokens
        .add(&format!("globex={}", hash_token(GLOBEX)))
        .unwrap();
    tokens
        .add(&format!(
            "acme={} role=operator name=ana",
            hash_token(ACME_OPS)
        ))
        .unwrap();
    tokens
        .add(&format!(
            "globex={} role=operator name=gus",
            hash_token(GLOBEX_OPS)
        ))
        .unwrap();
    tokens
        .add(&format!("acme={} role=admin name=root", hash_token(ADMIN)))
        .unwrap();
    Access::Tokens(tokens)
}

pub(crate) fn builder(store: Arc<dyn TrajectoryStore>, loader: PolicyLoader) -> ServerBuilder {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    Server::builder(store, loader).grpc_addr(any).http_addr(any)
}

pub(crate) async fn start(builder: ServerBuilder) -> Running {
    let server = builder.bind().await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (grpc, http) = (server.grpc_addr(), server.http_addr());
    let governance = server.governance().clone();
    let task = tokio::spawn(server.serve(async {
        let _ = stopped.await;
    }));
    Running {
        grpc,
        http,
        governance,
        stop: Some(stop),
        task,
    }
}

/// A store the server tests run against, with what keeps it alive.
pub(crate) struct Backend {
    pub name: &'static str,
    pub store: Arc<dyn TrajectoryStore>,
    _dir: Option<tempfile::TempDir>,
}

/// Every store backend: memory, SQLite in a data directory, PostgreSQL.
pub(crate) async fn each_store() -> Vec<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = sondera_store::SqliteStore::open_dir(dir.path()).unwrap();
    let postgres = sondera_store::PostgresStore::connect(&sondera_testkit::postgres_database())
        .await
        .unwrap();
    vec![
        Backend {
            name: "memory",
            store: Arc::new(MemoryStore::new()),
            _dir: None,
        },
        Backend {
            name: "sqlite",
            store: Arc::new(sqlite),
            _dir: Some(dir),
        },
        Backend {
            name: "postgres",
            store: Arc::new(postgres),
            _dir: None,
        },
    ]
}

/// A server with two tenants over `backend`.
pub(crate) async fn start_on(backend: &Backend) -> Running {
    start(builder(backend.store.clone(), builtin()).access(two_tenants())).await
}

/// A server with two tenants over a memory store.
pub(crate) async fn start_default() -> Running {
    start(builder(Arc::new(MemoryStore::new()), builtin()).access(two_tenants())).await
}

pub(crate) fn config(addr: SocketAddr, token: Option<&str>) -> RemoteConfig {
    let mut config = RemoteConfig::resolve_from(
        Some(addr.to_string()),
        token.map(String::from),
        |_| None,
        None,
    )
    .unwrap();
    config.timeout = std::time::Duration::from_secs(10);
    config
}

pub(crate) fn connection(addr: SocketAddr, token: Option<&str>) -> Connection {
    Connection::lazy(&config(addr, token)).unwrap()
}

pub(crate) fn harness(addr: SocketAddr, token: Option<&str>) -> RemoteHarness {
    RemoteHarness::new(
        &config(addr, token),
        Some(Agent::new("coder", "google-adk")),
    )
    .unwrap()
}

pub(crate) fn shell(command: &str) -> Payload {
    Payload::ShellCommand {
        call_id: format!("c-{}", command.len()),
        command: command.into(),
        working_dir: None,
    }
}

/// A response: status code, headers (lower-cased names) and body.
pub(crate) struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One HTTP/1.1 request on a fresh connection.
pub(crate) async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> HttpResponse {
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    if let Some(token) = token {
        request.push_str(&format!("authorization: Bearer {token}\r\n"));
    }
    if let Some(body) = body {
        request.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ));
    } else {
        request.push_str("\r\n");
    }
    send(addr, &request).await
}

/// One request written exactly as given (head, blank line, body) on a
/// fresh connection, as a browser or an attacker may write it.
pub(crate) async fn send(addr: SocketAddr, request: &str) -> HttpResponse {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    parse_response(&String::from_utf8_lossy(&raw))
}

fn parse_response(raw: &str) -> HttpResponse {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let mut lines = head.lines();
    // 0 when the server sent no HTTP response at all.
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// A policy that escalates `terraform apply`, over the built-in packs.
pub(crate) const ESCALATING: &str = r#"
@id("infra-apply") @description("Applying infrastructure changes needs an operator") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "terraform apply*" };
"#;

/// The built-in packs and [`ESCALATING`].
pub(crate) fn escalating() -> PolicyLoader {
    Arc::new(|| {
        sondera_policy::PolicyEngine::builder()
            .builtin_packs()
            .policy_source("ops.cedar", ESCALATING)
            .build()
    })
}
