//! Prometheus metrics in the text exposition format.
//!
//! Written here rather than taken from a metrics crate: the service needs
//! four fixed families, and the crates that render them bring their own HTTP
//! stacks or registries.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use sondera_model::Decision;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Debug, Default)]
struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    /// Sum in microseconds, so it can be atomic.
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// The service's counters and histograms.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Adjudications by (decision, payload kind).
    adjudications: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    adjudication_latency: Histogram,
    store_write_latency: Histogram,
    active_streams: Arc<AtomicI64>,
    policy_reloads_failed: AtomicU64,
}

/// Times every store write into [`Metrics`].
#[derive(Debug)]
pub(crate) struct WriteTimer(pub(crate) Arc<Metrics>);

impl sondera_store::AppendHook for WriteTimer {
    fn after(&self, elapsed: Duration, _result: &Result<(), sondera_store::StoreError>) {
        self.0.store_write(elapsed);
    }
}

/// Counts an open stream until dropped.
#[derive(Debug)]
pub struct ActiveStream(Arc<AtomicI64>);

impl Drop for ActiveStream {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn adjudicated(&self, decision: Decision, kind: &'static str, elapsed: Duration) {
        *self
            .adjudications
            .lock()
            .entry((decision.as_str(), kind))
            .or_default() += 1;
        self.adjudication_latency.observe(elapsed);
    }

    pub fn store_write(&self, elapsed: Duration) {
        self.store_write_latency.observe(elapsed);
    }

    pub fn stream_opened(&self) -> ActiveStream {
        self.active_streams.fetch_add(1, Ordering::Relaxed);
        ActiveStream(self.active_streams.clone())
    }

    pub fn reload_failed(&self) {
        self.policy_reloads_failed.fetch_add(1, Ordering::Relaxed);
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP sondera_adjudications_total Events adjudicated, by decision and payload kind.\n\
             # TYPE sondera_adjudications_total counter\n",
        );
        for ((decision, kind), count) in self.adjudications.lock().iter() {
            let _ = writeln!(
                out,
                "sondera_adjudications_total{{decision=\"{decision}\",action=\"{kind}\"}} {count}"
            );
        }
        self.adjudication_latency.render(
            &mut out,
            "sondera_adjudication_seconds",
            "Time to judge and durably record one event.",
        );
        self.store_write_latency.render(
            &mut out,
            "sondera_store_write_seconds",
            "Time for the store to durably record one step.",
        );
        let streams = self.active_streams.load(Ordering::Relaxed);
        let failed = self.policy_reloads_failed.load(Ordering::Relaxed);
        let _ = write!(
            out,
            "# HELP sondera_active_streams Live event subscribers.\n# TYPE sondera_active_streams gauge\n\
             sondera_active_streams {streams}\n\
             # HELP sondera_policy_reload_failures_total Policy reloads refused because the new set was invalid.\n\
             # TYPE sondera_policy_reload_failures_total counter\n\
             sondera_policy_reload_failures_total {failed}\n"
        );
        out
    }
}
