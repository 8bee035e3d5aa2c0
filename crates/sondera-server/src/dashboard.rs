//! The operator's dashboard at `/`: one page of HTML, CSS and script built
//! into the binary, reading the same `/v1` API as every other client.
//!
//! Signing in exchanges an operator token for a session (see
//! [`crate::sessions`]): an opaque id in an `HttpOnly`, `SameSite=Strict`
//! cookie (`__Host-` prefixed and `Secure` over TLS), never the token, and a
//! random CSRF value in a cookie the script can read. A request made with
//! the session that changes anything must echo that value in
//! `x-csrf-token`; a page on another site can neither read it nor send the
//! header without a preflight the server never allows. Signing out ends the
//! session on the server. Failed sign-ins are logged (without the token)
//! and, past a few from one address, answered only after a growing wait.
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
/// The CSRF cookies, readable by the page's script.
const CSRF_COOKIE_TLS: &str = "__Host-sondera_csrf";
const CSRF_COOKIE: &str = "sondera_csrf";
/// The header a cookie-authenticated change must echo the CSRF value in.
const CSRF_HEADER: &str = "x-csrf-token";

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

fn csrf_cookie_name(tls: bool) -> &'static str {
    if tls { CSRF_COOKIE_TLS } else { CSRF_COOKIE }
}

/// Resolves the session cookie into the session a request is made with,
/// after checking the CSRF value on anything but a read. A request with an
/// `authorization` header is judged by it alone; a cookie naming no open
/// session makes the request one without credentials.
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
    if !request.method().is_safe() {
        let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
        if sent != Some(session.csrf.as_str()) {
            return ServiceError::PermissionDenied(format!(
                "a change made with the dashboard's session must carry the `{CSRF_HEADER}` header the page sends"
            ))
            .into_response();
        }
    }
    request.extensions_mut().insert(session);
    next.run(request).await
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
        Ok(caller) if caller.role == Role::Operator => caller,
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
    let (id, csrf) = state.sessions.open(caller.clone(), token);
    let mut response = Json(serde_json::json!({
        "tenant": caller.tenant,
        "name": caller.name,
        "role": caller.role.as_str(),
    }))
    .into_response();
    let tls = state.secure_cookies;
    set_cookie(
        &mut response,
        cookie_for(session_cookie_name(tls), id, true, tls),
    );
    set_cookie(
        &mut response,
        cookie_for(csrf_cookie_name(tls), csrf, false, tls),
    );
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

/// Ends the session and forgets its cookies. Like every change, it needs
/// the CSRF header; the session's live streams end with it.
async fn sign_out(State(state): State<HttpState>, who: Who) -> Response {
    if let Some(session) = who.session() {
        state.sessions.end(session);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let tls = state.secure_cookies;
    for (name, http_only) in [
        (session_cookie_name(tls), true),
        (csrf_cookie_name(tls), false),
    ] {
        let mut gone = cookie_for(name, String::new(), http_only, tls);
        gone.make_removal();
        set_cookie(&mut response, gone);
    }
    response
}

fn cookie_for(name: &'static str, value: String, http_only: bool, secure: bool) -> Cookie<'static> {
    Cookie::build((name, value))
        .path("/")
        .http_only(http_only)
        .secure(secure)
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

    /// What a browser sends back: the name=value part of each Set-Cookie.
    fn sent_back(response: &Response) -> HeaderMap {
        let pairs: Vec<String> = response
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_string())
            .collect();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&pairs.join("; ")).unwrap(),
        );
        headers
    }

    #[test]
    fn the_session_cookie_is_host_only_http_only_and_strict_over_tls() {
        let token = "s3cret; with=odd chars,%";
        let mut response = StatusCode::OK.into_response();
        set_cookie(
            &mut response,
            cookie_for(session_cookie_name(true), token.into(), true, true),
        );
        set_cookie(
            &mut response,
            cookie_for(csrf_cookie_name(true), "abc".into(), false, true),
        );
        let set: Vec<&str> = response
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert!(
            set[0].starts_with("__Host-")
                && set[0].contains("HttpOnly")
                && set[0].contains("SameSite=Strict")
                && set[0].contains("Secure")
                && set[0].contains("Path=/")
                && !set[0].contains("Domain"),
            "{}",
            set[0]
        );
        assert!(
            !set[1].contains("HttpOnly"),
            "the page reads the CSRF value"
        );
        let headers = sent_back(&response);
        assert_eq!(cookie(&headers, SESSION_COOKIE_TLS).as_deref(), Some(token));
        assert_eq!(cookie(&headers, CSRF_COOKIE_TLS).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "other"), None);
    }
}
