//! The dashboard's sign-in sessions at the HTTP level: an opaque cookie
//! that is not the token and reads nothing without the page's key, sign-out
//! and expiry that end access and the live streams opened with it, the
//! limit on failed sign-ins, and the security headers on every response.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use sondera_server::Limits;
use sondera_store::MemoryStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn server(limits: Limits) -> Running {
    start(
        builder(Arc::new(MemoryStore::new()), builtin())
            .access(two_tenants())
            .limits(limits),
    )
    .await
}

/// A signed-in page: its session cookie and its page key.
struct Page {
    cookie: String,
    key: String,
}

fn set_cookie<'a>(response: &'a HttpResponse, name: &str) -> &'a str {
    response
        .headers
        .iter()
        .find(|(k, v)| k == "set-cookie" && v.starts_with(&format!("{name}=")))
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} cookie in {:?}", response.headers))
}

fn value(set_cookie: &str) -> String {
    set_cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_string()
}

async fn sign_in(addr: SocketAddr, token: &str) -> HttpResponse {
    let body = format!("{{\"token\": \"{token}\"}}");
    http(addr, "POST", "/session", None, Some(&body)).await
}

async fn signed_in(addr: SocketAddr, token: &str) -> Page {
    let response = sign_in(addr, token).await;
    assert_eq!(response.status, 200, "{}", response.body);
    Page {
        cookie: value(set_cookie(&response, "sondera_session")),
        key: response.json()["page_key"].as_str().unwrap().to_string(),
    }
}

/// A request made by the page: its cookie and its key.
async fn as_page(addr: SocketAddr, page: &Page, method: &str, path: &str) -> HttpResponse {
    with_cookie(addr, &page.cookie, Some(&page.key), method, path).await
}

/// A request carrying the session cookie, and the page key when given.
async fn with_cookie(
    addr: SocketAddr,
    cookie: &str,
    key: Option<&str>,
    method: &str,
    path: &str,
) -> HttpResponse {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncookie: sondera_session={cookie}\r\n"
    );
    if let Some(key) = key {
        request.push_str(&format!("x-sondera-page-key: {key}\r\n"));
    }
    request.push_str("content-length: 0\r\n\r\n");
    send(addr, &request).await
}

/// Opens the live stream with the page's session; the open connection.
async fn follow(addr: SocketAddr, page: &Page) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /v1/events/stream?page_key={} HTTP/1.1\r\nhost: {addr}\r\ncookie: sondera_session={}\r\n\r\n",
        page.key, page.cookie
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    stream
}

/// Whether the server ends `stream` within `within`.
async fn ends(mut stream: tokio::net::TcpStream, within: Duration) -> bool {
    let mut rest = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut rest))
        .await
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookie_is_an_opaque_session_not_the_token() {
    let server = server(Limits::default()).await;
    let response = sign_in(server.http, ACME_OPS).await;
    let session = set_cookie(&response, "sondera_session");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(session.contains(attribute), "{session}");
    }
    assert!(!session.contains("Domain"), "{session}");
    let id = value(session);
    assert!(!id.contains(ACME_OPS) && id.len() == 64, "{id}");
    assert!(!response.body.contains(&id), "the id is only in the cookie");
    let again = signed_in(server.http, ACME_OPS).await;
    assert_ne!(again.cookie, id, "every sign-in opens a session of its own");

    let key = response.json()["page_key"].as_str().unwrap().to_string();
    assert!(key.len() == 64 && key != id, "{key}");
    assert_eq!(
        set_cookie_names(&response),
        ["sondera_session"],
        "no other cookie"
    );
    let page = Page {
        cookie: id.clone(),
        key: key.clone(),
    };
    let listed = as_page(server.http, &page, "GET", "/v1/approvals").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let me = as_page(server.http, &page, "GET", "/session").await;
    assert_eq!(me.status, 200);
    assert!(
        !me.body.contains(&key),
        "only the sign-in answer carries the key"
    );

    // The cookie alone, as another service on this host receives it, reads
    // nothing, changes nothing and follows nothing.
    for path in ["/v1/approvals", "/session", "/v1/events/stream"] {
        let alone = with_cookie(server.http, &id, None, "GET", path).await;
        assert_eq!(alone.status, 401, "{path}");
    }
    let change = with_cookie(server.http, &id, None, "DELETE", "/session").await;
    assert_eq!(change.status, 403);
    let wrong = with_cookie(server.http, &id, Some("guessed"), "GET", "/v1/approvals").await;
    assert_eq!(wrong.status, 401);
    // Anywhere else the id is worth nothing: not a bearer token, and a
    // token in the cookie is not a session.
    let as_bearer = http(server.http, "GET", "/v1/approvals", Some(&id), None).await;
    assert_eq!(as_bearer.status, 401);
    let token_cookie = with_cookie(server.http, ACME_OPS, Some(&key), "GET", "/v1/approvals").await;
    assert_eq!(token_cookie.status, 401);
    server.stop().await;
}

fn set_cookie_names(response: &HttpResponse) -> Vec<String> {
    response
        .headers
        .iter()
        .filter(|(k, _)| k == "set-cookie")
        .map(|(_, v)| v.split('=').next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_ends_the_session_and_every_stream_it_opened() {
    let server = server(Limits::default()).await;
    let page = signed_in(server.http, ACME_OPS).await;
    let first_tab = follow(server.http, &page).await;
    let second_tab = follow(server.http, &page).await;
    let other = signed_in(server.http, ACME_OPS).await;
    let other_tab = follow(server.http, &other).await;

    let forged = Page {
        cookie: page.cookie.clone(),
        key: "guessed".into(),
    };
    assert_eq!(
        as_page(server.http, &forged, "DELETE", "/session")
            .await
            .status,
        403
    );
    let out = as_page(server.http, &page, "DELETE", "/session").await;
    assert_eq!(out.status, 204, "{}", out.body);
    assert!(
        ends(first_tab, Duration::from_secs(5)).await,
        "the first tab's stream ends"
    );
    assert!(
        ends(second_tab, Duration::from_secs(5)).await,
        "so does the second's"
    );
    assert_eq!(
        as_page(server.http, &page, "GET", "/v1/approvals")
            .await
            .status,
        401
    );
    assert_eq!(
        as_page(server.http, &page, "GET", "/session").await.status,
        401
    );

    assert!(
        !ends(other_tab, Duration::from_millis(500)).await,
        "another session goes on"
    );
    assert_eq!(
        as_page(server.http, &other, "GET", "/v1/approvals")
            .await
            .status,
        200
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_when_idle_and_at_the_end_of_its_lifetime() {
    let limits = Limits {
        session_idle: Duration::from_millis(800),
        session_lifetime: Duration::from_secs(3),
        ..Limits::default()
    };
    let server = server(limits).await;
    let idle = signed_in(server.http, ACME_OPS).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        as_page(server.http, &idle, "GET", "/session").await.status,
        401
    );

    let busy = signed_in(server.http, ACME_OPS).await;
    let started = Instant::now();
    let stream = follow(server.http, &busy).await;
    while started.elapsed() < Duration::from_millis(2500) {
        assert_eq!(
            as_page(server.http, &busy, "GET", "/session").await.status,
            200
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        ends(stream, Duration::from_secs(3)).await,
        "the stream ends with the lifetime"
    );
    assert!(started.elapsed() >= Duration::from_millis(2900));
    assert_eq!(
        as_page(server.http, &busy, "GET", "/session").await.status,
        401
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_from_one_address_must_wait() {
    let server = server(Limits::default()).await;
    for attempt in 1..=4 {
        let refused = sign_in(server.http, &format!("guess-{attempt}")).await;
        assert_eq!(refused.status, 401, "attempt {attempt}");
    }
    // An agent's token is no sign-in either, and counts: the fifth failure.
    let agent = sign_in(server.http, ACME).await;
    assert_eq!(agent.status, 403, "{}", agent.body);
    let waiting = sign_in(server.http, ACME_OPS).await;
    assert_eq!(waiting.status, 429, "{}", waiting.body);
    let retry: u64 = waiting
        .headers
        .iter()
        .find(|(k, _)| k == "retry-after")
        .map(|(_, v)| v.parse().unwrap())
        .expect("a Retry-After header");
    assert!((1..=2).contains(&retry), "{retry}");
    assert!(
        waiting.body.contains("too many failed sign-ins"),
        "{}",
        waiting.body
    );
    tokio::time::sleep(Duration::from_secs(retry)).await;
    let page = signed_in(server.http, ACME_OPS).await;
    assert!(!page.cookie.is_empty());
    // Signing in clears the count.
    assert_eq!(sign_in(server.http, "one-more-guess").await.status, 401);
    assert_eq!(sign_in(server.http, ACME_OPS).await.status, 200);
    server.stop().await;
}

fn header<'a>(response: &'a HttpResponse, name: &str) -> Option<&'a str> {
    response
        .headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_the_security_headers() {
    let server = server(Limits::default()).await;
    let responses = [
        (
            "health",
            http(server.http, "GET", "/v1/health", Some(ACME), None).await,
        ),
        (
            "refusal",
            http(server.http, "GET", "/v1/approvals", None, None).await,
        ),
        (
            "listing",
            http(server.http, "GET", "/v1/approvals", Some(ACME_OPS), None).await,
        ),
        (
            "healthz",
            http(server.http, "GET", "/healthz", None, None).await,
        ),
        ("sign-in", sign_in(server.http, ACME_OPS).await),
        (
            "unknown",
            http(server.http, "GET", "/nowhere", None, None).await,
        ),
    ];
    for (what, response) in &responses {
        assert_eq!(
            header(response, "x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
        assert_eq!(
            header(response, "referrer-policy"),
            Some("no-referrer"),
            "{what}"
        );
        let csp = header(response, "content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
            "{what}: {csp}"
        );
        assert_eq!(
            header(response, "cache-control"),
            Some("no-store"),
            "{what}"
        );
    }
    let page = http(server.http, "GET", "/", None, None).await;
    let csp = header(&page, "content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'"),
        "the page keeps its own policy: {csp}"
    );
    assert_eq!(header(&page, "x-content-type-options"), Some("nosniff"));
    server.stop().await;
}
