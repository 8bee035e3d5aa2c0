//! Where and how log lines go: standard error, as text or one JSON object
//! per line.
//!
//! The server's lines carry what the request they belong to knows: its
//! `request_id`, `tenant`, `agent`, `trajectory`, `decision` (the fields of
//! the server's `request` span). In JSON they are top-level keys beside
//! `timestamp`, `level`, `target` and `message`, so a log store can index
//! them; in text every control character of a line (a newline or an
//! escape sequence an agent put in its ids) is written escaped, so one
//! record is one line and no record can pass for another.

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

/// Logs to standard error, what `SONDERA_LOG` selects (else `default`), in
/// the server's `format`; and exports traces when the OTEL_* variables ask
/// for them (see [`traces`]).
pub(crate) fn init_server(format: LogFormat, default: &str) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("SONDERA_LOG")
            .unwrap_or_else(|_| default.into())
    };
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(EscapedStderr)
            .with_filter(filter())
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .fmt_fields(JsonFields::new())
            .event_format(FlatJson)
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
    };
    let registry = tracing_subscriber::registry().with(logs);
    #[cfg(feature = "otel")]
    let registry = registry.with(traces::layer());
    registry.init();
}

/// Sends the spans still buffered, before the process exits.
pub(crate) fn flush() {
    #[cfg(feature = "otel")]
    traces::shutdown();
}

/// Logs what `SONDERA_LOG` selects (else warnings) to standard error, for
/// the commands a person runs.
pub(crate) fn init_command() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SONDERA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
}

/// OpenTelemetry traces over OTLP (http/protobuf), configured as the
/// OpenTelemetry SDKs are: on when `OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set or `OTEL_TRACES_EXPORTER` is
/// `otlp`, off when `OTEL_SDK_DISABLED` is `true` or `OTEL_TRACES_EXPORTER`
/// is `none`; `OTEL_SERVICE_NAME` (default `sondera`), the sampler, headers
/// and timeouts from their own variables. Spans are batched on a thread of
/// their own; a collector that is down costs dropped spans, never a step.
#[cfg(feature = "otel")]
mod traces {
    use std::sync::OnceLock;

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_subscriber::Layer;

    static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

    fn wanted() -> bool {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return false;
        }
        match var("OTEL_TRACES_EXPORTER").as_deref() {
            Some("none") => false,
            Some("otlp") => true,
            _ => {
                var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
                    || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
            }
        }
    }

    /// The layer that turns spans into OpenTelemetry spans, when wanted.
    pub(super) fn layer<S>() -> Option<impl Layer<S>>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        if !wanted() {
            return None;
        }
        if std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL").is_ok_and(|p| p.starts_with("grpc")) {
            eprintln!(
                "warning: sondera exports traces over http/protobuf (port 4318), not gRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is ignored"
            );
        }
        let exporter = match opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
        {
            Ok(exporter) => exporter,
            Err(e) => {
                eprintln!("warning: no traces exported: the OTLP exporter cannot be made: {e}");
                return None;
            }
        };
        let mut resource = opentelemetry_sdk::Resource::builder();
        if std::env::var("OTEL_SERVICE_NAME").is_err() {
            resource = resource.with_service_name("sondera");
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let tracer = provider.tracer("sondera");
        let _ = PROVIDER.set(provider);
        // The spans of requests and judging (those of judging are at
        // `debug`, so they cost nothing when no traces are exported) and
        // the events logged in them at `info`; other crates' stay out.
        let filter = tracing_subscriber::filter::filter_fn(|meta| {
            let ours = ["sondera_server", "sondera_harness"]
                .iter()
                .any(|t| meta.target().starts_with(t));
            let level = if meta.is_span() {
                tracing::Level::DEBUG
            } else {
                tracing::Level::INFO
            };
            ours && *meta.level() <= level
        });
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(filter),
        )
    }

    pub(super) fn shutdown() {
        if let Some(provider) = PROVIDER.get()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("warning: traces not all exported at exit: {e}");
        }
    }
}

/// One JSON object per event: its fields and every enclosing span's, flat.
struct FlatJson;

impl<S, N> FormatEvent<S, N> for FlatJson
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let metadata = event.metadata();
        let mut object = Map::new();
        object.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .into(),
        );
        object.insert("level".into(), metadata.level().as_str().into());
        object.insert("target".into(), metadata.target().into());
        for span in ctx.event_scope().into_iter().flat_map(|s| s.from_root()) {
            let extensions = span.extensions();
            let Some(fields) = extensions.get::<FormattedFields<N>>() else {
                continue;
            };
            if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(fields.as_str()) {
                object.extend(fields);
            }
        }
        event.record(&mut Fields(&mut object));
        writeln!(writer, "{}", Value::Object(object))
    }
}

/// Puts an event's fields in a JSON object.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}

/// Standard error, with every control character but a line's final
/// newline written as an escape.
#[derive(Clone, Copy)]
struct EscapedStderr;

impl<'a> MakeWriter<'a> for EscapedStderr {
    type Writer = EscapedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

impl std::io::Write for EscapedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::io::stderr()
            .lock()
            .write_all(escaped(buf).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// `line` with control characters escaped, but a final newline.
fn escaped(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let (body, end) = match text.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (&*text, ""),
    };
    let mut out = String::with_capacity(text.len() + 8);
    for c in body.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push_str(end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_but_the_last_newline() {
        assert_eq!(escaped(b"plain line\n"), "plain line\n");
        assert_eq!(
            escaped(b"agent=evil\nINFO forged\x1b[2J\n"),
            "agent=evil\\nINFO forged\\u{1b}[2J\n"
        );
        assert_eq!(escaped(b"no newline\r"), "no newline\\r");
    }
}
