//! A store wrapper that reports how long durable writes take.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use sondera_model::Agent;
use sondera_store::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, Page, PageRequest, StepRecord,
    StoreError, TimeWindow, TrajectoryDetail, TrajectoryFilter, TrajectoryStore, TrajectorySummary,
};

use crate::metrics::Metrics;

#[derive(Debug)]
pub(crate) struct TimedStore {
    pub(crate) inner: Arc<dyn TrajectoryStore>,
    pub(crate) metrics: Arc<Metrics>,
}

#[async_trait]
impl TrajectoryStore for TimedStore {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        let started = Instant::now();
        let result = self.inner.append(step).await;
        self.metrics.store_write(started.elapsed());
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
