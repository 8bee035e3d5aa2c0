//! Request ids: every HTTP and gRPC request runs in a `request` span whose
//! `request_id` is the caller's `x-request-id` (header or metadata) when it
//! is a plausible id, or a fresh one; the response carries it back, so a
//! line of the caller's log and a line of the server's can be matched.
//!
//! The span also declares the fields the service fills in once it knows
//! them (`tenant`, `agent`, `trajectory`, `decision`, `decision_id`), so
//! every log line written while the request runs carries them.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{HeaderName, HeaderValue, Request, Response};
use tracing::Instrument as _;

/// The header (and gRPC metadata key) a request id travels in.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id taken from a caller.
const MAX_LEN: usize = 128;

/// The caller's id when it is 1 to 128 letters, digits or `-_.:/`;
/// anything else (which a log could be forged with) is replaced.
fn accepted(value: &HeaderValue) -> Option<&str> {
    let id = value.to_str().ok()?;
    let plausible = !id.is_empty()
        && id.len() <= MAX_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/".contains(&b));
    plausible.then_some(id)
}

/// Wraps a service so each request runs in a `request` span (see the module).
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestIdLayer;

impl<S> tower_layer::Layer<S> for RequestIdLayer {
    type Service = RequestIdService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestIdService { inner }
    }
}

/// See [`RequestIdLayer`].
#[derive(Debug, Clone)]
pub struct RequestIdService<S> {
    inner: S,
}

impl<S, B, R> tower_service::Service<Request<B>> for RequestIdService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let id = match request.headers().get(&REQUEST_ID).and_then(accepted) {
            Some(id) => id.to_string(),
            None => uuid::Uuid::new_v4().simple().to_string(),
        };
        let header = HeaderValue::from_str(&id).expect("request ids are visible ASCII");
        request.headers_mut().insert(REQUEST_ID, header.clone());
        let span = tracing::info_span!(
            "request",
            request_id = %id,
            method = %request.method(),
            path = %request.uri().path(),
            tenant = tracing::field::Empty,
            agent = tracing::field::Empty,
            trajectory = tracing::field::Empty,
            decision = tracing::field::Empty,
            decision_id = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        adopt_trace_context(&span, request.headers());
        let response = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
                let mut response = response.await?;
                response.headers_mut().insert(REQUEST_ID, header);
                Ok(response)
            }
            .instrument(span),
        )
    }
}

/// Makes the caller's trace (a W3C `traceparent` header, or gRPC metadata,
/// which travels as headers) the parent of the request's span, so the
/// server's spans join the agent's trace. Without an OpenTelemetry
/// propagator installed (no exporter configured) nothing is read.
#[cfg(feature = "otel")]
fn adopt_trace_context(span: &tracing::Span, headers: &http::HeaderMap) {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    struct Headers<'a>(&'a http::HeaderMap);
    impl opentelemetry::propagation::Extractor for Headers<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key)?.to_str().ok()
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(HeaderName::as_str).collect()
        }
    }
    let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Headers(headers)));
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plausible_ids_are_taken() {
        let take = |v: &str| accepted(&HeaderValue::from_str(v).unwrap()).map(str::to_string);
        assert_eq!(take("req-42_a.b:c/d").as_deref(), Some("req-42_a.b:c/d"));
        assert_eq!(take(""), None);
        assert_eq!(take("two words"), None);
        assert_eq!(take("a\"b"), None);
        assert_eq!(take(&"x".repeat(129)), None);
        assert!(take(&"x".repeat(128)).is_some());
    }
}
