//! The service's metrics, kept in a `prometheus-client` registry and
//! rendered in the OpenMetrics text format at `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use sondera_model::Decision;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// The content type `/metrics` answers with.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Adjudication {
    decision: &'static str,
    action: &'static str,
}

/// The service's counters, gauges and histograms.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    adjudications: Family<Adjudication, Counter>,
    adjudication_latency: Histogram,
    store_write_latency: Histogram,
    active_streams: Gauge,
    policy_reloads_failed: Counter,
    shared_stream_lost: Counter,
    webhooks: Family<Outcome, Counter>,
    pruned_trajectories: Counter,
    pruned_events: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let adjudications = Family::<Adjudication, Counter>::default();
        registry.register(
            "sondera_adjudications",
            "Events adjudicated, by decision and payload kind",
            adjudications.clone(),
        );
        let latency = || Histogram::new(BUCKETS);
        let adjudication_latency = latency();
        registry.register(
            "sondera_adjudication_seconds",
            "Time to judge and durably record one event",
            adjudication_latency.clone(),
        );
        let store_write_latency = latency();
        registry.register(
            "sondera_store_write_seconds",
            "Time for the store to durably record one step",
            store_write_latency.clone(),
        );
        let active_streams = Gauge::default();
        registry.register(
            "sondera_active_streams",
            "Live event subscribers",
            active_streams.clone(),
        );
        let policy_reloads_failed = Counter::default();
        registry.register(
            "sondera_policy_reload_failures",
            "Policy reloads refused because the new set was invalid",
            policy_reloads_failed.clone(),
        );
        let shared_stream_lost = Counter::default();
        registry.register(
            "sondera_shared_stream_lost",
            "Records announced by a shared store that the live stream could not read",
            shared_stream_lost.clone(),
        );
        let webhooks = Family::<Outcome, Counter>::default();
        // Every outcome from the start at 0, so a rate or an alert on
        // failures has a series before the first one.
        for outcome in ["delivered", "retried", "failed", "dropped"] {
            drop(webhooks.get_or_create(&Outcome { outcome }));
        }
        registry.register(
            "sondera_webhook_notifications",
            "Approval notifications by outcome: delivered, retried (an attempt that will be repeated), failed, dropped (too many in flight)",
            webhooks.clone(),
        );
        let pruned_trajectories = Counter::default();
        registry.register(
            "sondera_pruned_trajectories",
            "Ended trajectories removed by retention",
            pruned_trajectories.clone(),
        );
        let pruned_events = Counter::default();
        registry.register(
            "sondera_pruned_events",
            "Events removed by retention, with their trajectories",
            pruned_events.clone(),
        );
        Self {
            pruned_trajectories,
            pruned_events,
            webhooks,
            registry,
            adjudications,
            adjudication_latency,
            store_write_latency,
            active_streams,
            policy_reloads_failed,
            shared_stream_lost,
        }
    }
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
pub struct ActiveStream(Gauge);

impl Drop for ActiveStream {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    /// Counts what one batch of retention removed.
    pub(crate) fn pruned(&self, pruned: sondera_store::Pruned) {
        self.pruned_trajectories.inc_by(pruned.trajectories);
        self.pruned_events.inc_by(pruned.events);
    }

    /// Counts one webhook notification's `outcome`.
    pub(crate) fn webhook(&self, outcome: &'static str) {
        self.webhooks.get_or_create(&Outcome { outcome }).inc();
    }

    /// Counts one adjudication and its latency.
    pub fn adjudicated(&self, decision: Decision, kind: &'static str, elapsed: Duration) {
        self.adjudications
            .get_or_create(&Adjudication {
                decision: decision.as_str(),
                action: kind,
            })
            .inc();
        self.adjudication_latency.observe(elapsed.as_secs_f64());
    }

    /// Times one append to the store.
    pub fn store_write(&self, elapsed: Duration) {
        self.store_write_latency.observe(elapsed.as_secs_f64());
    }

    /// Counts a live stream for as long as the returned guard lives.
    pub fn stream_opened(&self) -> ActiveStream {
        self.active_streams.inc();
        ActiveStream(self.active_streams.clone())
    }

    /// Counts records a shared store announced that the live stream could
    /// not read.
    pub fn shared_stream_lost(&self, records: usize) {
        self.shared_stream_lost.inc_by(records as u64);
    }

    /// Counts a failed policy or token reload.
    pub fn reload_failed(&self) {
        self.policy_reloads_failed.inc();
    }

    /// Everything, in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Adjudication latency per tenant, in the same buckets as `/metrics`, so
/// an operator sees percentiles of their own tenant's steps only.
#[derive(Debug, Default)]
pub(crate) struct TenantLatency {
    tenants: parking_lot::RwLock<
        std::collections::HashMap<sondera_store::TenantId, Arc<[AtomicU64; BUCKETS.len() + 1]>>,
    >,
}

/// Latency percentiles of a tenant's adjudications since the server started,
/// each the upper bound of the bucket it falls in (`None` past the last).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    /// How many adjudications.
    pub count: u64,
    /// The median latency.
    pub p50_seconds: Option<f64>,
    /// The 90th percentile.
    pub p90_seconds: Option<f64>,
    /// The 99th percentile.
    pub p99_seconds: Option<f64>,
}

use std::sync::atomic::{AtomicU64, Ordering};

impl TenantLatency {
    pub(crate) fn record(&self, tenant: &sondera_store::TenantId, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        let known = self.tenants.read().get(tenant).cloned();
        let counts = known.unwrap_or_else(|| {
            self.tenants
                .write()
                .entry(tenant.clone())
                .or_insert_with(|| Arc::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .clone()
        });
        counts[bucket].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn summary(&self, tenant: &sondera_store::TenantId) -> LatencySummary {
        let counts: Vec<u64> = self
            .tenants
            .read()
            .get(tenant)
            .map(|c| c.iter().map(|n| n.load(Ordering::Relaxed)).collect())
            .unwrap_or_default();
        let count = counts.iter().sum();
        let percentile = |q: f64| {
            let rank = (q * count as f64).ceil().max(1.0) as u64;
            let mut seen = 0;
            counts.iter().enumerate().find_map(|(i, n)| {
                seen += n;
                (seen >= rank).then(|| BUCKETS.get(i).copied())
            })?
        };
        LatencySummary {
            count,
            p50_seconds: percentile(0.5),
            p90_seconds: percentile(0.9),
            p99_seconds: percentile(0.99),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_the_bounds_of_the_buckets_they_fall_in() {
        let latency = TenantLatency::default();
        let acme = sondera_store::TenantId::new("acme").unwrap();
        assert_eq!(latency.summary(&acme).count, 0);
        assert_eq!(latency.summary(&acme).p50_seconds, None);
        for _ in 0..98 {
            latency.record(&acme, Duration::from_micros(300));
        }
        latency.record(&acme, Duration::from_millis(20));
        latency.record(&acme, Duration::from_secs(9));
        let summary = latency.summary(&acme);
        assert_eq!(summary.count, 100);
        assert_eq!(summary.p50_seconds, Some(0.0005));
        assert_eq!(summary.p90_seconds, Some(0.0005));
        assert_eq!(summary.p99_seconds, Some(0.025));
        let other = sondera_store::TenantId::new("globex").unwrap();
        assert_eq!(latency.summary(&other).count, 0, "tenants are kept apart");
    }
}
