//! OpenTelemetry: each judged step is an `apply_guardrail` span with the
//! GenAI guardrail attributes and children for detection, evaluation and
//! the store write, in the caller's trace when the request carries one
//! (HTTP `traceparent`, or gRPC metadata from the Rust remote harness).

mod common;

use std::sync::{Arc, OnceLock};

use common::*;
use opentelemetry::Value;
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use sondera_harness::Harness;
use sondera_store::MemoryStore;
use tracing_subscriber::layer::SubscriberExt as _;

/// One exporter for the whole test binary: the subscriber is global.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("sondera-test")))
            .with(tracing_subscriber::EnvFilter::new(
                "info,sondera_server=debug,sondera_harness=debug",
            ));
        tracing::subscriber::set_global_default(subscriber).unwrap();
        exporter
    })
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            Value::String(s) => s.to_string(),
            other => other.to_string(),
        })
}

/// The spans of `trace`, once its guardrail span and three children are in.
async fn spans_of(trace: TraceId) -> Vec<SpanData> {
    for _ in 0..200 {
        let spans: Vec<SpanData> = exporter()
            .get_finished_spans()
            .unwrap()
            .into_iter()
            .filter(|s| s.span_context.trace_id() == trace)
            .collect();
        let guardrails = spans
            .iter()
            .filter(|s| s.name == "apply_guardrail sondera")
            .count();
        if guardrails > 0 && spans.iter().any(|s| s.name == "sondera.record") {
            return spans;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no guardrail span in trace {trace}");
}

/// The guardrail span judging `step` in `spans`, and its children's names.
fn guardrail<'a>(spans: &'a [SpanData], step: &str) -> (&'a SpanData, Vec<&'a str>) {
    let span = spans
        .iter()
        .find(|s| {
            s.name == "apply_guardrail sondera"
                && attribute(s, "sondera.step").as_deref() == Some(step)
        })
        .unwrap_or_else(|| {
            panic!(
                "no {step} guardrail in {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
    let children = spans
        .iter()
        .filter(|s| s.parent_span_id == span.span_context.span_id())
        .map(|s| s.name.as_ref())
        .collect();
    (span, children)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_over_http_joins_the_callers_trace() {
    exporter();
    let server = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    let parent = SpanId::from_hex("00f067aa0ba902b7").unwrap();
    let client = reqwest::Client::new();
    let post = |body: String| {
        client
            .post(format!("http://{}/v1/adjudicate", server.http))
            .header("content-type", "application/json")
            .header("traceparent", format!("00-{trace}-{parent}-01"))
            .body(body)
            .send()
    };
    let started = r#"{"event_id":"t-0","trajectory_id":"traced","agent":{"id":"coder","provider":"p"},"timestamp":"2026-11-30T10:00:00Z","payload":{"type":"started","agent":{"id":"coder","provider":"p"}},"actor":{"kind":"agent","id":"coder"}}"#;
    assert!(post(started.into()).await.unwrap().status().is_success());
    let denied = r#"{"event_id":"t-1","trajectory_id":"traced","agent":{"id":"coder","provider":"p"},"timestamp":"2026-11-30T10:00:01Z","payload":{"type":"tool_call","call_id":"call-7","tool":"run_shell","arguments":{"command":"rm -rf ~","secret":"hunter2"}},"actor":{"kind":"agent","id":"coder"}}"#;
    let answer = post(denied.into()).await.unwrap().text().await.unwrap();
    assert!(answer.contains("\"deny\""), "{answer}");

    let spans = spans_of(trace).await;
    let (span, children) = guardrail(&spans, "tool_call");
    let request = spans
        .iter()
        .find(|s| s.span_context.span_id() == span.parent_span_id)
        .expect("the guardrail span is a child of the request's");
    assert_eq!(
        request.parent_span_id, parent,
        "the request's span is a child of the caller's"
    );
    for (key, value) in [
        ("gen_ai.operation.name", "apply_guardrail"),
        ("gen_ai.guardrail.name", "sondera"),
        ("gen_ai.guardrail.result", "deny"),
        ("gen_ai.agent.name", "coder"),
        ("gen_ai.conversation.id", "traced"),
        ("gen_ai.tool.call.id", "call-7"),
        ("gen_ai.tool.name", "run_shell"),
        ("sondera.tenant", "default"),
    ] {
        assert_eq!(attribute(span, key).as_deref(), Some(value), "{key}");
    }
    assert!(attribute(span, "gen_ai.guardrail.policy.ids").is_some_and(|p| !p.is_empty()));
    assert!(attribute(span, "sondera.decision_id").is_some_and(|d| d.len() == 32));
    let mut children = children;
    children.sort();
    assert_eq!(
        children,
        ["sondera.detect", "sondera.evaluate", "sondera.record"]
    );
    for span in &spans {
        for kv in &span.attributes {
            assert!(
                !kv.value.to_string().contains("hunter2"),
                "{}: the step's arguments are not in spans",
                kv.key
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_from_the_rust_harness_joins_the_agents_trace() {
    use tracing::Instrument as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    exporter();
    let server = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let agent_span = tracing::info_span!("invoke_agent", otel.name = "invoke_agent coder");
    let trace = {
        use opentelemetry::trace::TraceContextExt as _;
        agent_span.context().span().span_context().trace_id()
    };
    assert_ne!(trace, TraceId::INVALID);
    async {
        let mut agent = harness(server.grpc, None);
        agent.initialize(None, None).await.unwrap();
        let event = agent.event(shell("ls -la")).unwrap();
        agent.adjudicate(event).await.unwrap();
    }
    .instrument(agent_span)
    .await;
    let spans = spans_of(trace).await;
    let (span, _) = guardrail(&spans, "shell_command");
    assert_eq!(
        attribute(span, "gen_ai.guardrail.result").as_deref(),
        Some("allow")
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_gets_its_request_id_back() {
    let server = start(builder(Arc::new(MemoryStore::new()), builtin())).await;
    let connection = connection(server.grpc, None);
    let mut request = connection.request(sondera_proto::v1::HealthRequest {});
    request
        .metadata_mut()
        .insert("x-request-id", "grpc-req-42".parse().unwrap());
    let answered = connection.client().health(request).await.unwrap();
    assert_eq!(
        answered.metadata().get("x-request-id").unwrap(),
        "grpc-req-42"
    );
    let fresh = connection
        .client()
        .health(connection.request(sondera_proto::v1::HealthRequest {}))
        .await
        .unwrap();
    let id = fresh
        .metadata()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(id.len(), 32, "a fresh id: {id}");
    server.stop().await;
}
