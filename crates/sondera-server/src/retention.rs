//! The background pruner: applies the retention rules to the store every
//! so often, in the store's bounded batches (see `sondera_store::prune`),
//! counting what it removed. A failed pass is logged and tried again at
//! the next one; judging never waits for it.

use std::sync::Arc;
use std::time::Duration;

use sondera_store::{PruneOptions, RetentionRules};

use crate::governance::Governance;

/// Prunes every `every`, from the first tick on.
pub(crate) async fn run(governance: Arc<Governance>, rules: RetentionRules, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let metrics = governance.metrics().clone();
        let pass = sondera_store::prune(
            governance.store().as_ref(),
            &rules,
            chrono::Utc::now(),
            PruneOptions::default(),
            |tenant, pruned| {
                metrics.pruned(pruned);
                if pruned.trajectories > 0 {
                    tracing::info!(
                        tenant = tenant.as_str(),
                        trajectories = pruned.trajectories,
                        events = pruned.events,
                        "pruned ended trajectories past retention"
                    );
                }
            },
        )
        .await;
        if let Err(e) = pass {
            tracing::warn!("pruning failed; trying again in {every:?}: {e}");
        }
    }
}
