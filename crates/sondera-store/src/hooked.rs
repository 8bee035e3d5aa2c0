//! A store wrapper that runs a hook around every append.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use sondera_model::{Agent, Grant};

use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, ApprovalFilter, ApprovalRecord,
    Page, PageRequest, StepRecord, StoreError, TenantId, Tenants, TimeWindow, TrajectoryDetail,
    TrajectoryFilter, TrajectoryStore, TrajectorySummary,
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

    async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        self.inner.trajectory(tenant, id).await
    }

    async fn trajectory_with_events(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        self.inner.trajectory_with_events(tenant, id).await
    }

    async fn put_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        self.inner.put_grant(tenant, agent_id, grant).await
    }

    async fn grants(&self, tenant: &TenantId, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        self.inner.grants(tenant, agent_id).await
    }

    async fn open_approval(&self, approval: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        self.inner.open_approval(approval).await
    }

    async fn approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        self.inner.approval(tenant, id).await
    }

    async fn list_approvals(
        &self,
        tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError> {
        self.inner.list_approvals(tenants, filter, page).await
    }

    async fn settle_approval(&self, settled: &ApprovalRecord) -> Result<bool, StoreError> {
        self.inner.settle_approval(settled).await
    }

    async fn overdue_approvals(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.inner.overdue_approvals(now, limit).await
    }

    async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError> {
        self.inner.agent(tenant, id).await
    }

    async fn list_agents(
        &self,
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        self.inner.list_agents(tenants, page).await
    }

    async fn list_trajectories(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        self.inner.list_trajectories(tenants, filter, page).await
    }

    async fn list_adjudications(
        &self,
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        self.inner.list_adjudications(tenants, filter, page).await
    }

    async fn analytics(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        self.inner.analytics(tenants, window).await
    }
}
