//! The operator's dashboard at `/`: one page of HTML, CSS and script built
//! into the binary, reading the same `/v1` API as every other client.
//!
//! Signing in exchanges an operator token for two cookies: the token itself,
//! `HttpOnly` and `SameSite=Strict`, which the page's requests carry instead
//! of an `authorization` header, and a random CSRF value the script can read.
//! A request authenticated by the cookie that changes anything must echo
//! that value in `x-csrf-token`; a page on another site can neither read it
//! nor send the header without a preflight the server never allows. Without
//! tokens (loopback only) the page needs no sign-in.

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
use crate::http::HttpState;

/// The cookie holding the operator's token.
const TOKEN_COOKIE: &str = "sondera_token";
/// The cookie holding the CSRF value; readable by the page's script.
const CSRF_COOKIE: &str = "sondera_csrf";
/// The header a cookie-authenticated change must echo the CSRF value in.
const CSRF_HEADER: &str = "x-csrf-token";

const INDEX: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/app.js");
const STYLE: &str = include_str!("dashboard/app.css");

/// Nothing but this origin's own assets, never framed.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

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
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Lets the page's cookie stand in for the `authorization` header, after
/// checking the CSRF value on anything but a read.
pub(crate) async fn cookie_credentials(
    mut request: Request<axum::body::Body>,
    next: Next,
) -> Response {
    let headers = request.headers();
    if headers.contains_key(header::AUTHORIZATION) {
        return next.run(request).await;
    }
    let Some(token) = cookie(headers, TOKEN_COOKIE) else {
        return next.run(request).await;
    };
    if !request.method().is_safe() {
        let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
        let expected = cookie(headers, CSRF_COOKIE);
        if sent.is_none() || sent != expected.as_deref() {
            return ServiceError::PermissionDenied(format!(
                "a change made with the dashboard's cookie must carry the `{CSRF_HEADER}` header the page sends"
            ))
            .into_response();
        }
    }
    match HeaderValue::from_str(&format!("Bearer {token}")) {
        Ok(value) => {
            request.headers_mut().insert(header::AUTHORIZATION, value);
            next.run(request).await
        }
        Err(_) => ServiceError::Unauthenticated.into_response(),
    }
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
async fn whoami(State(state): State<HttpState>, headers: HeaderMap) -> Response {
    match state.caller(&headers) {
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

/// Exchanges an operator token for the dashboard's cookies. The body is
/// JSON, which a form on another site cannot send.
async fn sign_in(
    State(state): State<HttpState>,
    headers: HeaderMap,
    body: Result<String, StringRejection>,
) -> Response {
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
    let token = signed_in.token.trim();
    let caller = match state.access.caller(Some(&format!("Bearer {token}"))) {
        Ok(caller) => caller,
        Err(e) => return e.into_response(),
    };
    if caller.role != Role::Operator {
        return ServiceError::PermissionDenied(
            "the dashboard needs an operator token; this one is an agent's".into(),
        )
        .into_response();
    }
    let csrf = uuid::Uuid::new_v4().simple().to_string();
    let mut response = Json(serde_json::json!({
        "tenant": caller.tenant,
        "name": caller.name,
        "role": caller.role.as_str(),
    }))
    .into_response();
    let secure = state.secure_cookies;
    set_cookie(
        &mut response,
        session_cookie(TOKEN_COOKIE, token.to_string(), true, secure),
    );
    set_cookie(
        &mut response,
        session_cookie(CSRF_COOKIE, csrf, false, secure),
    );
    response
}

/// Forgets the cookies. Like every change, it needs the CSRF header.
async fn sign_out(State(state): State<HttpState>) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    for name in [TOKEN_COOKIE, CSRF_COOKIE] {
        let mut gone = session_cookie(
            name,
            String::new(),
            name == TOKEN_COOKIE,
            state.secure_cookies,
        );
        gone.make_removal();
        set_cookie(&mut response, gone);
    }
    response
}

fn session_cookie(
    name: &'static str,
    value: String,
    http_only: bool,
    secure: bool,
) -> Cookie<'static> {
    Cookie::build((name, value))
        .path("/")
        .http_only(http_only)
        .secure(secure)
        .same_site(SameSite::Strict)
        .build()
}

fn set_cookie(response: &mut Response, cookie: Cookie<'_>) {
    // Encoded, so a token with `;` or spaces survives the round trip.
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
    fn any_token_survives_the_cookie_round_trip_and_the_token_cookie_is_http_only() {
        let token = "s3cret; with=odd chars,%";
        let mut response = StatusCode::OK.into_response();
        set_cookie(
            &mut response,
            session_cookie(TOKEN_COOKIE, token.into(), true, true),
        );
        set_cookie(
            &mut response,
            session_cookie(CSRF_COOKIE, "abc".into(), false, true),
        );
        let set: Vec<&str> = response
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert!(
            set[0].contains("HttpOnly")
                && set[0].contains("SameSite=Strict")
                && set[0].contains("Secure"),
            "{}",
            set[0]
        );
        assert!(
            !set[1].contains("HttpOnly"),
            "the page reads the CSRF value"
        );
        let headers = sent_back(&response);
        assert_eq!(cookie(&headers, TOKEN_COOKIE).as_deref(), Some(token));
        assert_eq!(cookie(&headers, CSRF_COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "other"), None);
    }
}
