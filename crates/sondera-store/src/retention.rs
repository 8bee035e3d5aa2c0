//! Retention: removing ended trajectories by age or by count, per tenant.
//!
//! Only ended trajectories (completed, failed, terminated) are ever
//! removed, and never one with an approval still pending; standing grants
//! and agents are kept. A store answers which trajectories a rule lets go
//! ([`Retention::prunable`], oldest ended first) and removes a batch of
//! them in one transaction ([`Retention::prune`]), checking again that each
//! is still ended and has no pending approval, so a trajectory resumed or
//! escalated in between stays. [`prune`] runs the rules over every tenant
//! in bounded batches with a pause between them, so a store that judges
//! while it prunes never waits behind one long deletion.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{StoreError, TenantId};

/// Which ended trajectories of a tenant are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetentionRule {
    /// Kept this many days after their last step.
    pub days: Option<u32>,
    /// At most this many kept, the most recently ended.
    pub trajectories: Option<u64>,
}

impl RetentionRule {
    /// Whether the rule keeps everything.
    pub fn keeps_all(&self) -> bool {
        self.days.is_none() && self.trajectories.is_none()
    }

    /// The last-step time before which ended trajectories go, given when
    /// the `trajectories`-th most recently ended one last changed (`None`
    /// when there are fewer). Trajectories ended at that very time stay,
    /// so a count is never undercut by ties.
    pub fn cutoff(
        &self,
        now: DateTime<Utc>,
        nth_newest: Option<DateTime<Utc>>,
    ) -> Option<DateTime<Utc>> {
        let by_age = self
            .days
            .map(|d| now - chrono::Duration::days(i64::from(d)));
        let by_count = self.trajectories.and(nth_newest);
        by_age.max(by_count)
    }
}

/// A trajectory a rule lets go, and how many events it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prunable {
    /// The trajectory's id.
    pub id: String,
    /// Its events.
    pub events: u64,
}

/// What a prune removed (or, dry, would remove).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// Trajectories removed.
    pub trajectories: u64,
    /// Their events.
    pub events: u64,
}

impl std::ops::AddAssign for Pruned {
    fn add_assign(&mut self, other: Self) {
        self.trajectories += other.trajectories;
        self.events += other.events;
    }
}

/// A store that can let ended trajectories go.
#[async_trait]
pub trait Retention: Send + Sync + std::fmt::Debug {
    /// Every tenant with a trajectory.
    async fn tenants(&self) -> Result<Vec<TenantId>, StoreError>;
    /// When the `n`-th most recently ended trajectory of `tenant` (from 1)
    /// last changed; `None` when fewer have ended.
    async fn nth_newest_ended(
        &self,
        tenant: &TenantId,
        n: u64,
    ) -> Result<Option<DateTime<Utc>>, StoreError>;
    /// Up to `limit` ended trajectories of `tenant` whose last step is
    /// before `cutoff` and that have no pending approval, oldest first.
    async fn prunable(
        &self,
        tenant: &TenantId,
        cutoff: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Prunable>, StoreError>;
    /// Removes the trajectories `ids` of `tenant` with their events,
    /// verdicts and settled approvals, in one transaction; a trajectory no
    /// longer ended, or with an approval pending, is left.
    async fn prune(&self, tenant: &TenantId, ids: &[String]) -> Result<Pruned, StoreError>;
}

/// Retention rules: one for every tenant, and tenants' own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionRules {
    every: RetentionRule,
    tenants: BTreeMap<TenantId, RetentionRule>,
}

/// A retention setting that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("retention `{given}`: {problem}")]
pub struct RetentionError {
    given: String,
    problem: String,
}

/// One `[TENANT=]N` setting: for a tenant, or every tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionSetting {
    tenant: Option<TenantId>,
    n: u64,
}

impl FromStr for RetentionSetting {
    type Err = RetentionError;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let fail = |problem: String| RetentionError {
            given: given.to_string(),
            problem,
        };
        let (tenant, n) = match given.split_once('=') {
            Some((tenant, n)) => (
                Some(TenantId::new(tenant.trim()).map_err(|e| fail(e.to_string()))?),
                n,
            ),
            None => (None, given),
        };
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| fail("write a whole number, or TENANT=NUMBER for one tenant".into()))?;
        if n == 0 {
            return Err(fail("0 would keep nothing: give at least 1".into()));
        }
        Ok(Self { tenant, n })
    }
}

impl RetentionRules {
    /// Keeps ended trajectories `setting` days (its tenant's, or everyone's).
    pub fn days(&mut self, setting: &RetentionSetting) -> Result<&mut Self, RetentionError> {
        let days = u32::try_from(setting.n).map_err(|_| RetentionError {
            given: setting.n.to_string(),
            problem: "more days than can be counted".into(),
        })?;
        self.rule(setting).days = Some(days);
        Ok(self)
    }

    /// Keeps at most `setting` ended trajectories (its tenant's, or everyone's).
    pub fn trajectories(&mut self, setting: &RetentionSetting) -> &mut Self {
        self.rule(setting).trajectories = Some(setting.n);
        self
    }

    fn rule(&mut self, setting: &RetentionSetting) -> &mut RetentionRule {
        match &setting.tenant {
            Some(tenant) => self.tenants.entry(tenant.clone()).or_default(),
            None => &mut self.every,
        }
    }

    /// `tenant`'s rule: its own settings, then everyone's.
    pub fn rule_for(&self, tenant: &TenantId) -> RetentionRule {
        let own = self.tenants.get(tenant).copied().unwrap_or_default();
        RetentionRule {
            days: own.days.or(self.every.days),
            trajectories: own.trajectories.or(self.every.trajectories),
        }
    }

    /// Whether no rule removes anything.
    pub fn keeps_all(&self) -> bool {
        self.every.keeps_all() && self.tenants.values().all(RetentionRule::keeps_all)
    }
}

/// How [`prune`] goes about it.
#[derive(Debug, Clone, Copy)]
pub struct PruneOptions {
    /// Most trajectories removed per transaction.
    pub batch: usize,
    /// Most events removed per transaction (a trajectory larger than this
    /// goes alone): it bounds how long one transaction holds the store.
    pub batch_events: u64,
    /// After each transaction, wait this many times as long as it took (at
    /// least `pause`): pruning then takes at most 1 / (1 + rest) of the
    /// store's time, so steps judged meanwhile rarely wait behind it.
    pub rest: u32,
    /// The least wait between transactions.
    pub pause: Duration,
    /// Count what would go, remove nothing.
    pub dry_run: bool,
}

impl Default for PruneOptions {
    /// For a store that judges while it prunes (see BENCHMARKS.md).
    fn default() -> Self {
        Self {
            batch: 100,
            batch_events: 5000,
            rest: 10,
            pause: Duration::from_millis(20),
            dry_run: false,
        }
    }
}

impl PruneOptions {
    /// As fast as the store goes, for a store nothing else uses.
    pub fn offline() -> Self {
        Self {
            batch: 500,
            batch_events: 50_000,
            rest: 0,
            pause: Duration::ZERO,
            dry_run: false,
        }
    }

    /// The first candidates that fit one transaction (at least one).
    fn fitting(&self, candidates: Vec<Prunable>) -> Vec<String> {
        let mut events = 0;
        candidates
            .into_iter()
            .take_while(|p| {
                let first = events == 0;
                events += p.events.max(1);
                first || events <= self.batch_events
            })
            .map(|p| p.id)
            .collect()
    }
}

/// Applies `rules` to every tenant of `store` as of `now`; `each` hears
/// what each batch removed (dry: what each tenant would lose). Returns the
/// total.
pub async fn prune(
    store: &dyn Retention,
    rules: &RetentionRules,
    now: DateTime<Utc>,
    options: PruneOptions,
    mut each: impl FnMut(&TenantId, Pruned) + Send,
) -> Result<Pruned, StoreError> {
    let mut total = Pruned::default();
    for tenant in store.tenants().await? {
        let rule = rules.rule_for(&tenant);
        let nth = match rule.trajectories {
            Some(n) => store.nth_newest_ended(&tenant, n).await?,
            None => None,
        };
        let Some(cutoff) = rule.cutoff(now, nth) else {
            continue;
        };
        if options.dry_run {
            let all = store.prunable(&tenant, cutoff, usize::MAX).await?;
            let would = Pruned {
                trajectories: all.len() as u64,
                events: all.iter().map(|p| p.events).sum(),
            };
            each(&tenant, would);
            total += would;
            continue;
        }
        loop {
            let candidates = store
                .prunable(&tenant, cutoff, options.batch.max(1))
                .await?;
            if candidates.is_empty() {
                break;
            }
            let ids = options.fitting(candidates);
            let began = std::time::Instant::now();
            let pruned = store.prune(&tenant, &ids).await?;
            let took = began.elapsed();
            each(&tenant, pruned);
            total += pruned;
            if pruned.trajectories == 0 {
                // Every candidate changed under us (resumed, escalated): the
                // next pass will see them as they are.
                break;
            }
            tokio::time::sleep((took * options.rest).max(options.pause)).await;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(s: &str) -> RetentionSetting {
        s.parse().unwrap()
    }

    #[test]
    fn a_tenants_own_settings_come_before_everyones() {
        let mut rules = RetentionRules::default();
        rules.days(&setting("30")).unwrap();
        rules.days(&setting("acme=90")).unwrap();
        rules.trajectories(&setting("acme=1000"));
        let acme = TenantId::new("acme").unwrap();
        let globex = TenantId::new("globex").unwrap();
        assert_eq!(
            rules.rule_for(&acme),
            RetentionRule {
                days: Some(90),
                trajectories: Some(1000)
            }
        );
        assert_eq!(
            rules.rule_for(&globex),
            RetentionRule {
                days: Some(30),
                trajectories: None
            }
        );
        assert!(!rules.keeps_all());
        assert!(RetentionRules::default().keeps_all());
    }

    #[test]
    fn a_transaction_takes_trajectories_up_to_its_events() {
        let p = |id: &str, events| Prunable {
            id: id.into(),
            events,
        };
        let options = PruneOptions {
            batch_events: 250,
            ..PruneOptions::default()
        };
        let fit = options.fitting(vec![p("a", 100), p("b", 100), p("c", 100)]);
        assert_eq!(fit, ["a", "b"]);
        assert_eq!(
            options.fitting(vec![p("huge", 10_000), p("b", 1)]),
            ["huge"]
        );
    }

    #[test]
    fn settings_that_do_not_read_say_why() {
        for bad in ["", "x", "acme=", "acme=-1", "0", "acme=0", "bad tenant!=3"] {
            assert!(bad.parse::<RetentionSetting>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_later_cutoff_wins_and_a_count_needs_enough_trajectories() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let tenth = now - chrono::Duration::days(3);
        let rule = RetentionRule {
            days: Some(7),
            trajectories: Some(10),
        };
        assert_eq!(rule.cutoff(now, Some(tenth)), Some(tenth));
        assert_eq!(
            rule.cutoff(now, None),
            Some(now - chrono::Duration::days(7))
        );
        let by_count = RetentionRule {
            days: None,
            trajectories: Some(10),
        };
        assert_eq!(by_count.cutoff(now, None), None);
        assert_eq!(RetentionRule::default().cutoff(now, Some(tenth)), None);
    }
}
