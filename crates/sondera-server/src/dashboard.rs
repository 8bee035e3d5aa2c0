//! The operator's dashboard at `/`: one page of HTML, CSS and script built
//! into the binary, reading the same `/v1` API as every other client.
//!
//! Signing in exchanges an operator token for a session (see
//! [`crate::sessions`]) held in two parts. The browser keeps an opaque id in
//! an `HttpOnly`, `SameSite=Strict` cookie (`__Host-` prefixed and `Secure`
//! over TLS), never the token. The page keeps a second random value, its
//! *page key*, which the sign-in answer's body carries and the page stores
//! in `localStorage`, and sends with every request (`x-sondera-page-key`,
//! or `page_key=` in the live stream's URL, which an `EventSource` cannot
//! give headers). Cookies are not kept apart by port, so another service on
//! the same host (a dev server on 127.0.0.1) receives the cookie; it never
//! receives the page key, which is kept per origin, so the cookie alone
//! reads nothing and changes nothing. A page on another site can neither
//! read the key nor send the header without a preflight the server never
//! allows, which also makes the key the page's defence against cross-site
//! requests. Signing out ends the session on the server. Failed sign-ins
//! are logged (without the token) and, past a few from one address, answered
//! only after a growing wait.
//! Without tokens (loopback only) the page needs no sign-in.

use std::net::IpAddr;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::StringRejection;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cookie::{Cookie, SameSite};
use serde::Deserialize;

use crate::auth::Role;
use crate::error::ServiceError;
use crate::http::{HttpState, Who};
use crate::listener::PeerAddr;

/// The session cookie over TLS: `__Host-` keeps it to this host, `Secure`,
/// with no `Domain` and the whole path.
const SESSION_COOKIE_TLS: &str = "__Host-sondera_session";
/// The session cookie over plain HTTP (loopback or a trusted network),
/// where browsers refuse the `__Host-` prefix.
const SESSION_COOKIE: &str = "sondera_session";
/// The header every request made with the session carries the page key in.
const PAGE_KEY_HEADER: &str = "x-sondera-page-key";
/// The same, in the live stream's URL.
const PAGE_KEY_PARAM: &str = "page_key";

const INDEX: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/app.js");
const STYLE: &str = include_str!("dashboard/app.css");

/// Nothing but this origin's own assets, never framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/// What every other response may load: nothing.
const CSP_NONE: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

pub(crate) fn routes() -> axum::Router<HttpState> {
    use axum::routing::get;
    axum::Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX)))
        .route(
            "/assets/app.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/assets/app.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
        .route("/session", get(whoami).post(sign_in).delete(sign_out))
}

async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Puts the security headers on every response: a content security policy
/// (the page's own, or one that loads nothing), no MIME sniffing, no
/// referrer, and no caching of anything but the page's assets.
pub(crate) async fn security_headers(request: Request<axum::body::Body>, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = [
        (header::CONTENT_SECURITY_POLICY, CSP_NONE),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in set {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    response
}

fn session_cookie_name(tls: bool) -> &'static str {
    if tls {
        SESSION_COOKIE_TLS
    } else {
        SESSION_COOKIE
    }
}

/// Resolves the session cookie into the session a request is made with,
/// when the request also carries the session's page key. A request with an
/// `authorization` header is judged by it alone. A read whose cookie names
/// no open session, or that lacks the key, is a request without
/// credentials; such a change is refused.
pub(crate) async fn session_credentials(
    State(state): State<HttpState>,
    mut request: Request<axum::body::Body>,
    next: Next,
) -> Response {
    let headers = request.headers();
    if headers.contains_key(header::AUTHORIZATION) {
        return next.run(request).await;
    }
    let name = session_cookie_name(state.secure_cookies);
    let Some(session) =
        cookie(headers, name).and_then(|id| state.sessions.resolve(&id, &state.access))
    else {
        return next.run(request).await;
    };
    let keyed = page_key(&request).is_some_and(|key| key == session.page_key);
    if keyed {
        request.extensions_mut().insert(session);
    } else if !request.method().is_safe() {
        return ServiceError::PermissionDenied(format!(
            "a change made with the dashboard's session must carry the `{PAGE_KEY_HEADER}` header the page sends"
        ))
        .into_response();
    }
    next.run(request).await
}

/// The page key a request carries: its header, or for the live stream (an
/// `EventSource` sends no headers) the URL's `page_key`.
fn page_key(request: &Request<axum::body::Body>) -> Option<String> {
    if let Some(key) = request.headers().get(PAGE_KEY_HEADER) {
        return key.to_str().ok().map(str::to_string);
    }
    if request.uri().path() != "/v1/events/stream" {
        return None;
    }
    let axum::extract::Query(mut query) = axum::extract::Query::<
        std::collections::HashMap<String, String>,
    >::try_from_uri(request.uri())
    .ok()?;
    query.remove(PAGE_KEY_PARAM)
}

/// The value of cookie `name`, if the request carries it.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse_encoded)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_string())
}

/// Who the page is signed in as, or 401.
async fn whoami(State(state): State<HttpState>, who: Who) -> Response {
    match state.caller(&who) {
        Ok(caller) => Json(serde_json::json!({
            "tenant": caller.tenant,
            "name": caller.name,
            "role": caller.role.as_str(),
            "sign_in_needed": !state.access.is_loopback_only(),
        }))
        .into_response(),
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    token: String,
}

/// Exchanges an operator token for a session. The body is JSON, which a
/// form on another site cannot send.
async fn sign_in(
    State(state): State<HttpState>,
    peer: Option<axum::Extension<PeerAddr>>,
    headers: HeaderMap,
    body: Result<String, StringRejection>,
) -> Response {
    let peer = peer.map(|axum::Extension(PeerAddr(ip))| ip);
    if let Some(wait) = state.sessions.sign_in_wait(peer) {
        let seconds = wait.as_secs().max(1);
        let mut refused = ServiceError::TooManyRequests(format!(
            "too many failed sign-ins from this address; try again in {seconds} s"
        ))
        .into_response();
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            refused.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return refused;
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return ServiceError::InvalidArgument("sign in with a JSON body {\"token\": ...}".into())
            .into_response();
    }
    let signed_in: SignIn = match state.json(body, "sign-in") {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let authorization = format!("Bearer {}", signed_in.token.trim());
    let caller = match state.access.caller(Some(&authorization)) {
        Ok(caller) if caller.role != Role::Agent => caller,
        Ok(_) => {
            return refuse_sign_in(
                &state,
                peer,
                "an agent's token",
                ServiceError::PermissionDenied(
                    "the dashboard needs an operator token; this one is an agent's".into(),
                ),
            );
        }
        Err(e) => return refuse_sign_in(&state, peer, "an unknown token", e),
    };
    state.sessions.signed_in(peer);
    let token = crate::auth::bearer_digest(Some(&authorization)).unwrap_or_default();
    let (id, page_key) = state.sessions.open(caller.clone(), token);
    let mut response = Json(serde_json::json!({
        "tenant": caller.tenant,
        "name": caller.name,
        "role": caller.role.as_str(),
        "page_key": page_key,
    }))
    .into_response();
    let tls = state.secure_cookies;
    set_cookie(&mut response, session_cookie(tls, id));
    response
}

/// Logs a failed sign-in (never the token) and counts it against `peer`.
fn refuse_sign_in(
    state: &HttpState,
    peer: Option<IpAddr>,
    what: &str,
    error: ServiceError,
) -> Response {
    let failures = state.sessions.failed_sign_in(peer);
    let peer = peer.map_or_else(|| "unknown".to_string(), |ip| ip.to_string());
    tracing::warn!(%peer, failures, "dashboard sign-in refused: {what}");
    error.into_response()
}

/// Ends the session and forgets its cookie. Like every change, it needs
/// the page key; the session's live streams end with it.
async fn sign_out(State(state): State<HttpState>, who: Who) -> Response {
    if let Some(session) = who.session() {
        state.sessions.end(session);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let mut gone = session_cookie(state.secure_cookies, String::new());
    gone.make_removal();
    set_cookie(&mut response, gone);
    response
}

/// The session cookie: host-only, `HttpOnly`, `SameSite=Strict`, the whole
/// path; over TLS `Secure` and `__Host-` prefixed.
fn session_cookie(tls: bool, value: String) -> Cookie<'static> {
    Cookie::build((session_cookie_name(tls), value))
        .path("/")
        .http_only(true)
        .secure(tls)
        .same_site(SameSite::Strict)
        .build()
}

fn set_cookie(response: &mut Response, cookie: Cookie<'_>) {
    if let Ok(value) = HeaderValue::from_str(&cookie.encoded().to_string()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_host_only_http_only_and_strict_and_survives_any_value() {
        let value = "s3cret; with=odd chars,%";
        let mut response = StatusCode::OK.into_response();
        set_cookie(&mut response, session_cookie(true, value.into()));
        let set = response.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            set.starts_with("__Host-sondera_session=")
                && set.contains("HttpOnly")
                && set.contains("SameSite=Strict")
                && set.contains("Secure")
                && set.contains("Path=/")
                && !set.contains("Domain"),
            "{set}"
        );
        let plain = session_cookie(false, "x".into()).to_string();
        assert!(
            plain.starts_with("sondera_session=") && !plain.contains("Secure"),
            "{plain}"
        );
        let mut headers = HeaderMap::new();
        let sent_back = set.split(';').next().unwrap();
        headers.insert(header::COOKIE, HeaderValue::from_str(sent_back).unwrap());
        assert_eq!(cookie(&headers, SESSION_COOKIE_TLS).as_deref(), Some(value));
        assert_eq!(cookie(&headers, "other"), None);
    }

    #[test]
    fn the_page_key_comes_from_its_header_or_the_live_streams_url_only() {
        let request = |uri: &str, header: Option<&str>| {
            let mut builder = Request::builder().uri(uri);
            if let Some(key) = header {
                builder = builder.header(PAGE_KEY_HEADER, key);
            }
            builder.body(axum::body::Body::empty()).unwrap()
        };
        assert_eq!(
            page_key(&request("/v1/approvals", Some("k1"))).as_deref(),
            Some("k1")
        );
        assert_eq!(
            page_key(&request("/v1/events/stream?page_key=k%202", None)).as_deref(),
            Some("k 2")
        );
        assert_eq!(page_key(&request("/v1/approvals?page_key=k3", None)), None);
    }
}
