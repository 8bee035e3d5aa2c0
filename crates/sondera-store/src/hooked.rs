//! A store wrapper that runs a hook around every append.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use sondera_model::{Agent, Grant};

use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, Page, PageRequest, StepRecord,
    StoreError, TimeWindow, TrajectoryDetail, TrajectoryFilter, TrajectoryStore, TrajectorySummary,
};

/// What a [`HookedStore`] does around each append.
pub trait AppendHook: Send + Sync + std::fmt::Debug {
    /// Runs before the write; an error refuses the step without writing it.
    fn before(&self, _step: &StepRecord<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    /// Runs after the write, with how long it took and how it ended.
    fn after(&self, _elapsed: Duration, _result: &Result<(), StoreError>) {}
}

/// A store that runs `hook` around every append and passes everything else
/// through: for instrumenting writes or injecting failures.
#[derive(Debug)]
pub struct HookedStore<H> {
    inner: Arc<dyn TrajectoryStore>,
    hook: H,
}

impl<H: AppendHook> HookedStore<H> {
    pub fn new(inner: Arc<dyn TrajectoryStore>, hook: H) -> Self {
        Self { inner, hook }
    }

    pub fn hook(&self) -> &H {
        &self.hook
    }
}

#[async_trait]
impl<H: AppendHook> TrajectoryStore for HookedStore<H> {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        self.hook.before(&step)?;
        let started = Instant::now();
        let result = self.inner.append(step).await;
        self.hook.after(started.elapsed(), &result);
        result
    }

    async fn trajectory(&self, id: &str) -> Result<Option<TrajectorySummary>, StoreError> {
        self.inner.trajectory(id).await
    }

    async fn trajectory_with_events(
        &self,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        self.inner.trajectory_with_events(id).await
    }

    async fn put_grant(
        &self,
        tenant: &str,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        self.inner.put_grant(tenant, agent_id, grant).await
    }

    async fn grants(&self, tenant: &str, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        self.inner.grants(tenant, agent_id).await
    }

    async fn agent(&self, tenant: &str, id: &str) -> Result<Option<Agent>, StoreError> {
        self.inner.agent(tenant, id).await
    }

    async fn list_agents(
        &self,
        tenant: Option<&str>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        self.inner.list_agents(tenant, page).await
    }

    async fn list_trajectories(
        &self,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        self.inner.list_trajectories(filter, page).await
    }

    async fn list_adjudications(
        &self,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        self.inner.list_adjudications(filter, page).await
    }

    async fn analytics(
        &self,
        tenant: Option<&str>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        self.inner.analytics(tenant, window).await
    }
}
