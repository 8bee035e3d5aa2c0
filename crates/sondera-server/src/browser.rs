//! What a web page in the operator's browser can ask of the HTTP listener:
//! nothing it was not served by this server itself.
//!
//! Whether or not tokens are configured, every request must name a host
//! the server answers to in `Host` (an IP address, `localhost` or a name
//! below it, or a name given with `--public-host`), so a page whose DNS
//! name is rebound to this address reaches nothing. A request that changes
//! anything must not come from another site or origin (`Sec-Fetch-Site`,
//! `Origin`), and any body it carries must be JSON, which a page on another
//! site can only send after a CORS preflight the server never answers. The
//! plugins, the CLI and scripts send neither header and pass.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ServiceError;

/// The host names (besides IP addresses and `localhost`) the server answers to.
#[derive(Debug, Clone, Default)]
pub(crate) struct PublicHosts(Vec<String>);

impl PublicHosts {
    pub(crate) fn new<I: IntoIterator<Item = String>>(names: I) -> Self {
        Self(
            names
                .into_iter()
                .map(|n| n.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        )
    }

    /// Whether `authority` (`host[:port]`) names this server.
    fn allows(&self, authority: &str) -> bool {
        let host = host_of(authority).to_ascii_lowercase();
        let host = host.trim_end_matches('.');
        host.parse::<std::net::IpAddr>().is_ok()
            || host == "localhost"
            || host.ends_with(".localhost")
            || self.0.iter().any(|name| name == host)
    }
}

/// The host part of `host[:port]` or `[v6]:port`.
fn host_of(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

/// Refuses requests a browser could have been made to send from elsewhere.
pub(crate) async fn same_origin_only(
    State(hosts): State<std::sync::Arc<PublicHosts>>,
    request: Request,
    next: Next,
) -> Response {
    match check(&hosts, request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

fn check(
    hosts: &PublicHosts,
    method: &Method,
    uri: &axum::http::Uri,
    headers: &HeaderMap,
) -> Result<(), ServiceError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let authority = text(header::HOST.as_str()).or_else(|| uri.authority().map(|a| a.as_str()));
    if let Some(authority) = authority
        && !hosts.allows(authority)
    {
        return Err(ServiceError::PermissionDenied(format!(
            "this server does not answer to the host `{}`; start it with `--public-host {}` if clients reach it by that name",
            shown(authority),
            shown(host_of(authority)),
        )));
    }
    if method.is_safe() {
        return Ok(());
    }
    if let Some(site) = text("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Err(ServiceError::PermissionDenied(format!(
            "a {site} request from a web page may not change anything here"
        )));
    }
    if let Some(origin) = text(header::ORIGIN.as_str()) {
        let own = authority.is_some_and(|a| {
            ["http://", "https://"]
                .iter()
                .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}{a}")))
        });
        if !own {
            return Err(ServiceError::PermissionDenied(format!(
                "a request from the page at `{}` may not change anything here: only this server's own pages may",
                shown(origin)
            )));
        }
    }
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || text(header::CONTENT_LENGTH.as_str()).is_some_and(|n| n.trim() != "0");
    let json = text(header::CONTENT_TYPE.as_str()).is_some_and(is_json);
    if has_body && !json {
        return Err(ServiceError::UnsupportedMediaType(
            "a request body must be JSON: send `content-type: application/json`".into(),
        ));
    }
    Ok(())
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence
            .rsplit_once('+')
            .is_some_and(|(_, suffix)| suffix.eq_ignore_ascii_case("json"))
            && essence.to_ascii_lowercase().starts_with("application/")
}

/// A header value as it may be quoted in a message: printable ASCII, at
/// most 100 characters.
fn shown(value: &str) -> String {
    value
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn request(method: Method, pairs: &[(&'static str, &str)]) -> Result<(), ServiceError> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        let hosts = PublicHosts::new(["harness.example.com".to_string()]);
        check(&hosts, &method, &"/v1/x".parse().unwrap(), &headers)
    }

    #[test]
    fn only_names_the_server_answers_to_are_served() {
        for host in [
            "127.0.0.1:8080",
            "[::1]:8080",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:1",
            "10.1.2.3",
            "harness.example.com:443",
            "harness.example.com.",
        ] {
            assert!(request(Method::GET, &[("host", host)]).is_ok(), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
        ] {
            let refused = request(Method::GET, &[("host", host)]).unwrap_err();
            assert!(refused.to_string().contains("--public-host"), "{refused}");
        }
    }

    #[test]
    fn changes_from_other_sites_and_origins_are_refused() {
        let host = ("host", "127.0.0.1:8080");
        let json = ("content-type", "application/json");
        let body = ("content-length", "2");
        for refused in [
            vec![host, json, body, ("origin", "http://evil.example")],
            vec![host, json, body, ("origin", "http://127.0.0.1:3000")],
            vec![host, json, body, ("origin", "null")],
            vec![host, json, body, ("sec-fetch-site", "cross-site")],
            vec![host, json, body, ("sec-fetch-site", "same-site")],
            vec![host, ("content-type", "text/plain"), body],
            vec![host, body],
            vec![
                host,
                ("content-type", "application/x-www-form-urlencoded"),
                body,
            ],
        ] {
            assert!(request(Method::POST, &refused).is_err(), "{refused:?}");
        }
        for allowed in [
            vec![host, json, body],
            vec![host, json, body, ("origin", "http://127.0.0.1:8080")],
            vec![host, json, body, ("sec-fetch-site", "same-origin")],
            vec![host, ("content-type", "application/merge-patch+json"), body],
            vec![host],
            vec![host, ("content-length", "0")],
        ] {
            assert!(request(Method::POST, &allowed).is_ok(), "{allowed:?}");
        }
        assert!(
            request(Method::GET, &[host, ("origin", "http://evil.example")]).is_ok(),
            "reads are answered; CORS keeps their answers from other pages"
        );
    }
}
