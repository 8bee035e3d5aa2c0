//! Policies kept in the store: pushed as a whole set, each set kept by its
//! revision (the content hash every verdict records), one of them current.
//! A server that takes its policies from the store judges by the current
//! revision: it loads it at start, as soon as a change is announced (a
//! push or rollback through any server sharing the store), and otherwise
//! checks every few seconds, so a missed announcement delays a change by
//! that much at most. Until something is pushed it judges by its loader's
//! set (the built-in packs).

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use sondera_policy::{PolicyEngine, PolicyEngineBuilder, PolicyLoadErrors};
use sondera_store::{CurrentPolicies, PolicyRevision, PolicySources};
use tokio::sync::Notify;

use crate::auth::Caller;
use crate::error::ServiceError;
use crate::governance::Governance;

/// A policy engine builder with everything but the policies set (mode,
/// workspace, allowed hosts): what a pushed set is loaded with.
pub type PolicyBuilder = Arc<dyn Fn() -> PolicyEngineBuilder + Send + Sync>;

/// How often a server following the store checks the current revision
/// when no change was announced.
const CHECK_EVERY: Duration = Duration::from_secs(5);
/// The shortest prefix of a revision taken in its place.
const MIN_PREFIX: usize = 6;
/// Revisions listed at most, and searched for a prefix.
const LISTED: usize = 1000;

/// How a server takes its policies from the store.
pub(crate) struct StorePolicies {
    builder: PolicyBuilder,
    /// Woken when the store announces a change of the current revision.
    pub(crate) changed: Notify,
}

impl StorePolicies {
    pub(crate) fn new(builder: PolicyBuilder) -> Self {
        Self {
            builder,
            changed: Notify::new(),
        }
    }

    /// The engine of a pushed set, validated as files would be.
    fn engine(&self, sources: &PolicySources) -> Result<PolicyEngine, PolicyLoadErrors> {
        (self.builder)()
            .sources(named(&sources.policies), named(&sources.schemas))
            .build()
    }
}

impl Governance {
    fn store_policies(&self, doing: &str) -> Result<&StorePolicies, ServiceError> {
        self.store_policies.as_ref().ok_or_else(|| {
            ServiceError::FailedPrecondition(format!(
                "{doing}: this server takes its policies from files; start it with `--policy-source store` (and no --policies) to judge by the store's"
            ))
        })
    }

    /// Validates `sources` and keeps them as a revision made current; this
    /// server judges by it at once, the others sharing the store next.
    pub async fn push_policies(
        &self,
        caller: &Caller,
        sources: PolicySources,
        message: Option<String>,
    ) -> Result<PolicyRevision, ServiceError> {
        caller.admin("pushing policies")?;
        let engine = self
            .store_policies("pushing policies")?
            .engine(&sources)
            .map_err(|errors| {
                ServiceError::InvalidArgument(format!("the policies do not load:\n{errors}"))
            })?;
        let now = Utc::now();
        let revision = PolicyRevision {
            revision: engine.revision().to_owned(),
            pushed_at: now,
            pushed_by: caller.name.clone(),
            message,
            policies: engine.policy_ids().count() as u64,
        };
        let current = CurrentPolicies {
            revision: revision.revision.clone(),
            since: now,
            set_by: caller.name.clone(),
        };
        self.store()
            .push_policies(&revision, &sources, &current)
            .await?;
        self.replace_engine(engine);
        tracing::info!(revision = %revision.revision, by = %caller.name, "policies pushed and in force");
        Ok(revision)
    }

    /// The kept revisions, newest first, and the current one.
    pub async fn policy_revisions(
        &self,
        caller: &Caller,
        limit: usize,
    ) -> Result<(Vec<PolicyRevision>, Option<CurrentPolicies>), ServiceError> {
        caller.operator("listing policy revisions")?;
        let limit = if limit == 0 { 100 } else { limit.min(LISTED) };
        let revisions = self.store().policy_revisions(limit).await?;
        Ok((revisions, self.store().current_policies().await?))
    }

    /// A kept revision with its files, by its id or a prefix of it.
    pub async fn policy_set(
        &self,
        caller: &Caller,
        revision: &str,
    ) -> Result<(PolicyRevision, PolicySources), ServiceError> {
        caller.operator("reading a policy revision")?;
        let revision = self.resolve_revision(revision).await?;
        self.store()
            .policy_revision(&revision)
            .await?
            .ok_or_else(|| {
                ServiceError::NotFound(format!("policy revision {revision} is not kept"))
            })
    }

    /// Makes a kept revision current again, once it loads.
    pub async fn rollback_policies(
        &self,
        caller: &Caller,
        revision: &str,
    ) -> Result<PolicyRevision, ServiceError> {
        caller.admin("rolling back policies")?;
        let policies = self.store_policies("rolling back policies")?;
        let (kept, sources) = self.policy_set(caller, revision).await?;
        let engine = policies.engine(&sources).map_err(|errors| {
            ServiceError::FailedPrecondition(format!(
                "revision {} no longer loads on this server:\n{errors}",
                kept.revision
            ))
        })?;
        let current = CurrentPolicies {
            revision: kept.revision.clone(),
            since: Utc::now(),
            set_by: caller.name.clone(),
        };
        if !self.store().set_current_policies(&current).await? {
            return Err(ServiceError::NotFound(format!(
                "policy revision {} is not kept",
                kept.revision
            )));
        }
        self.replace_engine(engine);
        tracing::info!(revision = %kept.revision, by = %caller.name, "policies rolled back");
        Ok(kept)
    }

    /// The one kept revision `given` names: itself, or the only one it is a
    /// prefix of.
    async fn resolve_revision(&self, given: &str) -> Result<String, ServiceError> {
        let given = given.trim().to_ascii_lowercase();
        if given.len() < MIN_PREFIX || !given.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ServiceError::InvalidArgument(format!(
                "`{given}` is not a revision: give at least {MIN_PREFIX} of its hex digits (`sondera policy revisions` lists them)"
            )));
        }
        let matching: Vec<String> = self
            .store()
            .policy_revisions(LISTED)
            .await?
            .into_iter()
            .map(|r| r.revision)
            .filter(|r| r.starts_with(&given))
            .collect();
        match matching.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(ServiceError::NotFound(format!(
                "no kept policy revision starts with {given}"
            ))),
            _ => Err(ServiceError::InvalidArgument(format!(
                "{given} starts {} revisions; give more digits",
                matching.len()
            ))),
        }
    }

    /// Puts the store's current revision in force if another is; `true`
    /// when it changed. A revision that does not load leaves the running
    /// set in force, and says so.
    pub(crate) async fn load_current_policies(&self) -> Result<bool, ServiceError> {
        let Some(policies) = self.store_policies.as_ref() else {
            return Ok(false);
        };
        let Some(current) = self.store().current_policies().await? else {
            return Ok(false);
        };
        if current.revision == self.engine().revision() {
            return Ok(false);
        }
        let (_, sources) = self
            .store()
            .policy_revision(&current.revision)
            .await?
            .ok_or_else(|| {
                ServiceError::Internal(format!("current revision {} is not kept", current.revision))
            })?;
        match policies.engine(&sources) {
            Ok(engine) => {
                self.replace_engine(engine);
                tracing::info!(revision = %current.revision, set_by = %current.set_by, "policies from the store in force");
                Ok(true)
            }
            Err(errors) => {
                self.metrics().reload_failed();
                Err(ServiceError::FailedPrecondition(format!(
                    "the store's current policy revision {} does not load here; the running policies stay:\n{errors}",
                    current.revision
                )))
            }
        }
    }

    /// Tells a server following the store's policies that the current
    /// revision may have changed.
    pub(crate) fn policies_may_have_changed(&self) {
        if let Some(policies) = &self.store_policies {
            policies.changed.notify_one();
        }
    }
}

/// Keeps a server judging by the store's current revision until the
/// service closes.
pub(crate) async fn follow(governance: Arc<Governance>) {
    let Some(policies) = governance.store_policies.as_ref() else {
        return;
    };
    let mut closing = governance.closing();
    loop {
        tokio::select! {
            _ = policies.changed.notified() => {}
            _ = tokio::time::sleep(CHECK_EVERY) => {}
            _ = closing.wait_for(|closing| *closing) => return,
        }
        if let Err(e) = governance.load_current_policies().await {
            tracing::error!("{e}");
        }
    }
}

/// Each file as (name, text).
fn named(files: &[sondera_store::PolicyFile]) -> impl Iterator<Item = (&str, &str)> {
    files.iter().map(|f| (f.name.as_str(), f.text.as_str()))
}
