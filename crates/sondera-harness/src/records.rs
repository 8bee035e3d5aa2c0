//! A harness server's records read through the [`Records`]
//! interface, so every tool that reads a store (listing, replay) works
//! against a server unchanged. Writing goes through adjudication only.

use async_trait::async_trait;
use sondera_model::Agent;
use sondera_proto::v1;
use sondera_store::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, ApprovalFilter, ApprovalRecord,
    Page, PageRequest, Records, StoreError, StoredEvent, TenantId, Tenants, TimeWindow,
    TrajectoryDetail, TrajectoryFilter, TrajectorySummary,
};

use crate::HarnessError;
use crate::remote::Connection;

/// The records of the caller's tenant on a harness server. The server
/// decides the tenant from the token, so the tenant a query names is not
/// sent, and summaries carry the default tenant.
#[derive(Debug, Clone)]
pub struct RemoteRecords {
    connection: Connection,
}

impl RemoteRecords {
    /// The records of the server `connection` reaches.
    pub fn new(connection: Connection) -> Self {
        Self { connection }
    }
}

fn remote(e: HarnessError) -> StoreError {
    StoreError::Remote(e.to_string())
}

fn decode<T>(decoded: Result<T, sondera_proto::DecodeError>) -> Result<T, StoreError> {
    decoded.map_err(|e| StoreError::Corrupt {
        what: "server response".into(),
        message: e.to_string(),
    })
}

fn page_size(page: &PageRequest) -> u32 {
    page.limit.clamp(1, PageRequest::MAX_LIMIT) as u32
}

/// A page of a server's answer: its items decoded, its continuation token.
fn decoded_page<W, T>(
    items: Vec<W>,
    next_page_token: String,
    decode_one: impl Fn(W) -> Result<T, sondera_proto::DecodeError>,
) -> Result<Page<T>, StoreError> {
    Ok(Page {
        items: items
            .into_iter()
            .map(|item| decode(decode_one(item)))
            .collect::<Result<_, _>>()?,
        next: (!next_page_token.is_empty()).then_some(next_page_token),
    })
}

impl RemoteRecords {
    async fn detail(
        &self,
        id: &str,
        summary_only: bool,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        let c = &self.connection;
        let mut from_seq = 0;
        let mut events = Vec::new();
        // The server answers in pages a default gRPC client accepts.
        loop {
            let request = v1::GetTrajectoryRequest {
                trajectory_id: id.to_string(),
                summary_only,
                from_seq,
            };
            let wire = match c.call(c.client().get_trajectory(c.request(request))).await {
                Err(HarnessError::Remote { code, .. }) if code == "NotFound" => return Ok(None),
                other => other.map_err(remote)?,
            };
            for event in wire.events {
                events.push(decode(StoredEvent::try_from(event))?);
            }
            match wire.next_seq {
                Some(next) if next > from_seq => from_seq = next,
                Some(_) => {
                    return Err(StoreError::Corrupt {
                        what: "server response".into(),
                        message: "a page of events that does not move forward".into(),
                    });
                }
                None => {
                    let summary = wire.summary.ok_or_else(|| StoreError::Corrupt {
                        what: "server response".into(),
                        message: "a trajectory without its summary".into(),
                    })?;
                    let summary = decode(sondera_proto::summary_from_wire(
                        summary,
                        &TenantId::default(),
                    ))?;
                    return Ok(Some(TrajectoryDetail { summary, events }));
                }
            }
        }
    }
}

#[async_trait]
impl Records for RemoteRecords {
    async fn trajectory(
        &self,
        _tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        Ok(self.detail(id, true).await?.map(|d| d.summary))
    }

    async fn trajectory_with_events(
        &self,
        _tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        self.detail(id, false).await
    }

    async fn agent(&self, _tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError> {
        let c = &self.connection;
        let request = v1::GetAgentRequest {
            agent_id: id.to_string(),
        };
        match c.call(c.client().get_agent(c.request(request))).await {
            Ok(agent) => Ok(Some(decode(Agent::try_from(agent))?)),
            Err(HarnessError::Remote { code, .. }) if code == "NotFound" => Ok(None),
            Err(e) => Err(remote(e)),
        }
    }

    async fn list_agents(
        &self,
        _tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        let c = &self.connection;
        let request = v1::ListAgentsRequest {
            page_size: page_size(page),
            page_token: page.cursor.clone().unwrap_or_default(),
        };
        let wire = c
            .call(c.client().list_agents(c.request(request)))
            .await
            .map_err(remote)?;
        decoded_page(wire.agents, wire.next_page_token, |a| {
            sondera_proto::agent_record_from_wire(a, &TenantId::default())
        })
    }

    async fn list_trajectories(
        &self,
        _tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        let c = &self.connection;
        let request = v1::ListTrajectoriesRequest {
            agent_id: filter.agent_id.clone(),
            status: filter
                .status
                .map_or(0, |s| v1::TrajectoryStatus::from(s) as i32),
            session_id: filter.session_id.clone(),
            page_size: page_size(page),
            page_token: page.cursor.clone().unwrap_or_default(),
            decision: filter.decision.map_or(0, |d| v1::Decision::from(d) as i32),
            policy_id: filter.policy_id.clone(),
            active_since: filter.active.since.map(sondera_proto::timestamp_to_wire),
            active_until: filter.active.until.map(sondera_proto::timestamp_to_wire),
            text: filter.text.clone(),
        };
        let wire = c
            .call(c.client().list_trajectories(c.request(request)))
            .await
            .map_err(remote)?;
        decoded_page(wire.trajectories, wire.next_page_token, |t| {
            sondera_proto::summary_from_wire(t, &TenantId::default())
        })
    }

    async fn list_adjudications(
        &self,
        _tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        let c = &self.connection;
        let request = v1::ListAdjudicationsRequest {
            agent_id: filter.agent_id.clone(),
            trajectory_id: filter.trajectory_id.clone(),
            decision: filter.decision.map_or(0, |d| v1::Decision::from(d) as i32),
            page_size: page_size(page),
            page_token: page.cursor.clone().unwrap_or_default(),
        };
        let wire = c
            .call(c.client().list_adjudications(c.request(request)))
            .await
            .map_err(remote)?;
        decoded_page(
            wire.adjudications,
            wire.next_page_token,
            AdjudicationRecord::try_from,
        )
    }

    async fn analytics(
        &self,
        _tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        let c = &self.connection;
        let request = v1::AnalyzeTrajectoriesRequest {
            since: window.since.map(sondera_proto::timestamp_to_wire),
            until: window.until.map(sondera_proto::timestamp_to_wire),
        };
        let wire = c
            .call(c.client().analyze_trajectories(c.request(request)))
            .await
            .map_err(remote)?;
        Ok(wire.into())
    }

    async fn approval(
        &self,
        _tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        match self
            .connection
            .approval(id, std::time::Duration::ZERO)
            .await
        {
            Ok(approval) => Ok(Some(approval)),
            Err(HarnessError::Remote { code, .. }) if code == "NotFound" => Ok(None),
            Err(e) => Err(remote(e)),
        }
    }

    async fn list_approvals(
        &self,
        _tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError> {
        let c = &self.connection;
        let request = v1::ListApprovalsRequest {
            status: filter
                .status
                .map_or(0, |s| v1::ApprovalStatus::from(s) as i32),
            agent_id: filter.agent_id.clone(),
            trajectory_id: filter.trajectory_id.clone(),
            page_size: page_size(page),
            page_token: page.cursor.clone().unwrap_or_default(),
        };
        let wire = c
            .call(c.client().list_approvals(c.request(request)))
            .await
            .map_err(remote)?;
        decoded_page(wire.approvals, wire.next_page_token, |a| {
            sondera_proto::approval_from_wire(a, &TenantId::default())
        })
    }
}
