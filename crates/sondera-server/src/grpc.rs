//! `sondera.harness.v1.HarnessService` over tonic.

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use prost::Message;
use sondera_model::{Decision, Event};
use sondera_proto::{optional_enum, put_grant_from_wire, timestamp_from_wire, v1};
use sondera_store::{
    AdjudicationFilter, ApprovalFilter, PageRequest, TenantId, TimeWindow, TrajectoryFilter,
};
use tonic::{Request, Response, Status};

use crate::auth::{AccessControl, Caller};
use crate::error::ServiceError;
use crate::governance::{Governance, page_request};
use crate::live::{LiveItem, StreamFilter};

pub(crate) struct GrpcService {
    pub(crate) governance: Arc<Governance>,
    pub(crate) access: Arc<AccessControl>,
}

type Reply<T> = Result<Response<T>, Status>;

/// Most bytes of events in one `GetTrajectory` answer: within the 4 MiB a
/// default gRPC client accepts, with room for the summary and framing.
const RESPONSE_BUDGET: usize = 3 << 20;

impl GrpcService {
    fn caller<T>(&self, request: &Request<T>) -> Result<Caller, ServiceError> {
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        self.access.caller(header)
    }

    fn tenant<T>(&self, request: &Request<T>) -> Result<TenantId, ServiceError> {
        Ok(self.caller(request)?.tenant)
    }

    /// The tenant, when the caller is one of its operators.
    fn operator<T>(&self, request: &Request<T>, doing: &str) -> Result<TenantId, ServiceError> {
        Ok(self.caller(request)?.operator(doing)?.clone())
    }

    /// Checks the event's size and decodes it.
    fn event(&self, wire: v1::Event) -> Result<Event, ServiceError> {
        self.governance.limits().check_event(wire.encoded_len())?;
        Ok(Event::try_from(wire)?)
    }
}

/// Proto3 cannot tell an unset size from 0, so 0 asks for the default.
fn page(size: u32, token: String) -> Result<PageRequest, ServiceError> {
    let size = (size != 0).then_some(size as usize);
    page_request(size, Some(token))
}

fn next_token(next: Option<String>) -> String {
    next.unwrap_or_default()
}

#[tonic::async_trait]
impl v1::harness_service_server::HarnessService for GrpcService {
    async fn adjudicate(&self, request: Request<v1::Event>) -> Reply<v1::Adjudicated> {
        let tenant = self.tenant(&request)?;
        let event = self.event(request.into_inner())?;
        let verdict = self.governance.adjudicate(&tenant, event).await?;
        Ok(Response::new(verdict.into()))
    }

    async fn adjudicate_batch(
        &self,
        request: Request<v1::AdjudicateBatchRequest>,
    ) -> Reply<v1::AdjudicateBatchResponse> {
        let tenant = self.tenant(&request)?;
        let wire = request.into_inner().events;
        self.governance.limits().check_batch(wire.len())?;
        let events = wire
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                self.event(e).map_err(|err| match err {
                    ServiceError::TooLarge(m) => {
                        ServiceError::TooLarge(format!("events[{i}]: {m}"))
                    }
                    other => ServiceError::InvalidArgument(format!("events[{i}]: {other}")),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let results = self.governance.adjudicate_batch(&tenant, events).await?;
        let results = results
            .into_iter()
            .map(|r| v1::BatchResult {
                result: Some(match r {
                    Ok(verdict) => v1::batch_result::Result::Adjudicated(verdict.into()),
                    Err(e) => v1::batch_result::Result::Error(v1::BatchError {
                        code: e.code_name().to_string(),
                        message: e.to_string(),
                    }),
                }),
            })
            .collect();
        Ok(Response::new(v1::AdjudicateBatchResponse { results }))
    }

    async fn list_agents(
        &self,
        request: Request<v1::ListAgentsRequest>,
    ) -> Reply<v1::ListAgentsResponse> {
        let tenant = self.operator(&request, "listing agents")?;
        let r = request.into_inner();
        let page = self
            .governance
            .list_agents(&tenant, &page(r.page_size, r.page_token)?)
            .await?;
        Ok(Response::new(v1::ListAgentsResponse {
            agents: page.items.into_iter().map(Into::into).collect(),
            next_page_token: next_token(page.next),
        }))
    }

    async fn put_grant(
        &self,
        request: Request<v1::PutGrantRequest>,
    ) -> Reply<v1::PutGrantResponse> {
        let caller = self.caller(&request)?;
        let (agent_id, grant) =
            put_grant_from_wire(request.into_inner()).map_err(ServiceError::from)?;
        self.governance.put_grant(&caller, &agent_id, grant).await?;
        Ok(Response::new(v1::PutGrantResponse {}))
    }

    async fn list_grants(
        &self,
        request: Request<v1::ListGrantsRequest>,
    ) -> Reply<v1::ListGrantsResponse> {
        let tenant = self.tenant(&request)?;
        let grants = self
            .governance
            .grants(&tenant, &request.into_inner().agent_id)
            .await?;
        Ok(Response::new(v1::ListGrantsResponse {
            grants: grants.into_iter().map(Into::into).collect(),
        }))
    }

    async fn list_session_grants(
        &self,
        request: Request<v1::ListSessionGrantsRequest>,
    ) -> Reply<v1::ListGrantsResponse> {
        let tenant = self.tenant(&request)?;
        let grants = self
            .governance
            .session_grants(&tenant, &request.into_inner().trajectory_id)
            .await?;
        Ok(Response::new(v1::ListGrantsResponse {
            grants: grants.into_iter().map(Into::into).collect(),
        }))
    }

    async fn revoke_grant(&self, request: Request<v1::RevokeGrantRequest>) -> Reply<v1::Grant> {
        let caller = self.caller(&request)?;
        let r = request.into_inner();
        let revoked = self
            .governance
            .revoke_grant(&caller, &r.agent_id, &r.grant_id)
            .await?;
        Ok(Response::new(revoked.into()))
    }

    async fn push_policies(
        &self,
        request: Request<v1::PushPoliciesRequest>,
    ) -> Reply<v1::PolicyRevision> {
        let caller = self.caller(&request)?;
        let r = request.into_inner();
        let sources = sondera_proto::policy_sources_from_wire(r.policies, r.schemas);
        let pushed = self
            .governance
            .push_policies(&caller, sources, r.message)
            .await?;
        Ok(Response::new(pushed.into()))
    }

    async fn list_policy_revisions(
        &self,
        request: Request<v1::ListPolicyRevisionsRequest>,
    ) -> Reply<v1::ListPolicyRevisionsResponse> {
        let caller = self.caller(&request)?;
        let limit = request.into_inner().limit as usize;
        let (revisions, current) = self.governance.policy_revisions(&caller, limit).await?;
        let source = if self.governance.follows_store_policies() {
            "store"
        } else {
            "files"
        };
        Ok(Response::new(v1::ListPolicyRevisionsResponse {
            revisions: revisions.into_iter().map(Into::into).collect(),
            current_since: current
                .as_ref()
                .map(|c| sondera_proto::timestamp_to_wire(c.since)),
            current_set_by: current.as_ref().map(|c| c.set_by.clone()),
            current: current.map(|c| c.revision),
            in_force: self.governance.engine().revision().to_owned(),
            source: source.into(),
        }))
    }

    async fn get_policy_revision(
        &self,
        request: Request<v1::GetPolicyRevisionRequest>,
    ) -> Reply<v1::PolicySet> {
        let caller = self.caller(&request)?;
        let given = request.into_inner().revision;
        let (revision, sources) = self.governance.policy_set(&caller, &given).await?;
        let files = v1::PushPoliciesRequest::from(sources);
        Ok(Response::new(v1::PolicySet {
            revision: Some(revision.into()),
            policies: files.policies,
            schemas: files.schemas,
        }))
    }

    async fn rollback_policies(
        &self,
        request: Request<v1::RollbackPoliciesRequest>,
    ) -> Reply<v1::PolicyRevision> {
        let caller = self.caller(&request)?;
        let given = request.into_inner().revision;
        let current = self.governance.rollback_policies(&caller, &given).await?;
        Ok(Response::new(current.into()))
    }

    async fn put_token(&self, request: Request<v1::PutTokenRequest>) -> Reply<v1::StoredToken> {
        let caller = self.caller(&request)?;
        let r = request.into_inner();
        let stored = self
            .governance
            .put_token(&caller, &r.tenant, &r.role, &r.name, &r.hash)
            .await?;
        Ok(Response::new(stored.into()))
    }

    async fn list_tokens(
        &self,
        request: Request<v1::ListTokensRequest>,
    ) -> Reply<v1::ListTokensResponse> {
        let caller = self.caller(&request)?;
        let tokens = self.governance.stored_tokens(&caller).await?;
        Ok(Response::new(v1::ListTokensResponse {
            tokens: tokens.into_iter().map(Into::into).collect(),
        }))
    }

    async fn revoke_token(
        &self,
        request: Request<v1::RevokeTokenRequest>,
    ) -> Reply<v1::StoredToken> {
        let caller = self.caller(&request)?;
        let given = request.into_inner().token;
        let revoked = self.governance.revoke_token(&caller, &given).await?;
        Ok(Response::new(revoked.into()))
    }

    async fn get_agent(&self, request: Request<v1::GetAgentRequest>) -> Reply<v1::Agent> {
        let tenant = self.tenant(&request)?;
        let agent = self
            .governance
            .agent(&tenant, &request.into_inner().agent_id)
            .await?;
        Ok(Response::new(agent.into()))
    }

    async fn list_trajectories(
        &self,
        request: Request<v1::ListTrajectoriesRequest>,
    ) -> Reply<v1::ListTrajectoriesResponse> {
        let tenant = self.operator(&request, "listing trajectories")?;
        let r = request.into_inner();
        let filter = TrajectoryFilter {
            agent_id: r.agent_id,
            status: optional_enum(r.status, "status").map_err(ServiceError::from)?,
            session_id: r.session_id,
            decision: optional_enum(r.decision, "decision").map_err(ServiceError::from)?,
            policy_id: r.policy_id,
            active: window_from_wire(
                (r.active_since, "active_since"),
                (r.active_until, "active_until"),
            )?,
            text: r.text,
        };
        let page = self
            .governance
            .list_trajectories(&tenant, filter, &page(r.page_size, r.page_token)?)
            .await?;
        Ok(Response::new(v1::ListTrajectoriesResponse {
            trajectories: page.items.into_iter().map(Into::into).collect(),
            next_page_token: next_token(page.next),
        }))
    }

    async fn get_trajectory(
        &self,
        request: Request<v1::GetTrajectoryRequest>,
    ) -> Reply<v1::TrajectoryDetail> {
        let tenant = self.tenant(&request)?;
        let r = request.into_inner();
        let detail = self
            .governance
            .trajectory(&tenant, &r.trajectory_id, r.summary_only)
            .await?;
        let mut events = Vec::new();
        let mut size = 0;
        let mut next_seq = None;
        for stored in detail.events.into_iter().filter(|e| e.seq >= r.from_seq) {
            let seq = stored.seq;
            let wire = v1::RecordedEvent::from(stored);
            size += wire.encoded_len();
            if !events.is_empty() && size > RESPONSE_BUDGET {
                next_seq = Some(seq);
                break;
            }
            events.push(wire);
        }
        Ok(Response::new(v1::TrajectoryDetail {
            summary: Some(detail.summary.into()),
            events,
            next_seq,
        }))
    }

    async fn list_adjudications(
        &self,
        request: Request<v1::ListAdjudicationsRequest>,
    ) -> Reply<v1::ListAdjudicationsResponse> {
        let tenant = self.operator(&request, "listing adjudications")?;
        let r = request.into_inner();
        let decision: Option<Decision> =
            optional_enum(r.decision, "decision").map_err(ServiceError::from)?;
        let filter = AdjudicationFilter {
            agent_id: r.agent_id,
            trajectory_id: r.trajectory_id,
            decision,
        };
        let page = self
            .governance
            .list_adjudications(&tenant, filter, &page(r.page_size, r.page_token)?)
            .await?;
        Ok(Response::new(v1::ListAdjudicationsResponse {
            adjudications: page.items.into_iter().map(Into::into).collect(),
            next_page_token: next_token(page.next),
        }))
    }

    async fn analyze_trajectories(
        &self,
        request: Request<v1::AnalyzeTrajectoriesRequest>,
    ) -> Reply<v1::Analytics> {
        let tenant = self.operator(&request, "reading analytics")?;
        let r = request.into_inner();
        let window = window_from_wire((r.since, "since"), (r.until, "until"))?;
        let analytics = self.governance.analytics(&tenant, &window).await?;
        Ok(Response::new(analytics.into()))
    }

    type StreamEventsStream = Pin<Box<dyn Stream<Item = Result<v1::RecordedEvent, Status>> + Send>>;

    async fn stream_events(
        &self,
        request: Request<v1::StreamEventsRequest>,
    ) -> Reply<Self::StreamEventsStream> {
        let tenant = self.operator(&request, "following the live stream")?;
        // The stream ends once its token is taken out of the configuration.
        let digest = crate::auth::bearer_digest(
            request
                .metadata()
                .get("authorization")
                .and_then(|v| v.to_str().ok()),
        );
        let access = self.access.clone();
        let revoked = async move {
            match digest {
                Some(digest) => access.until_revoked(digest).await,
                None => std::future::pending().await,
            }
        };
        let r = request.into_inner();
        let subscription = self.governance.subscribe(
            &tenant,
            StreamFilter {
                agent_id: r.agent_id,
                trajectory_id: r.trajectory_id,
            },
        );
        let stream = futures_util::StreamExt::map(subscription.into_stream(), |next| {
            next.map(|live| match &live.item {
                LiveItem::Recorded {
                    seq,
                    event,
                    verdict,
                } => v1::RecordedEvent {
                    seq: *seq,
                    event: Some(event.clone().into()),
                    adjudicated: Some(verdict.clone().into()),
                    approval: None,
                },
                LiveItem::Approval(approval) => v1::RecordedEvent {
                    seq: approval.seq,
                    event: None,
                    adjudicated: None,
                    approval: Some(approval.clone().into()),
                },
            })
            .map_err(Status::from)
        });
        let stream: Self::StreamEventsStream =
            Box::pin(futures_util::StreamExt::take_until(stream, revoked));
        Ok(Response::new(stream))
    }

    async fn request_approval(
        &self,
        request: Request<v1::RequestApprovalRequest>,
    ) -> Reply<v1::Approval> {
        let tenant = self.tenant(&request)?;
        let r = request.into_inner();
        let timeout = Some(std::time::Duration::from_secs(r.timeout_seconds.into()));
        let approval = self
            .governance
            .request_approval(&tenant, &r.trajectory_id, &r.event_id, timeout)
            .await?;
        Ok(Response::new(approval.into()))
    }

    async fn get_approval(&self, request: Request<v1::GetApprovalRequest>) -> Reply<v1::Approval> {
        let tenant = self.tenant(&request)?;
        let r = request.into_inner();
        let wait = std::time::Duration::from_secs(r.wait_seconds.into());
        let approval = self
            .governance
            .wait_approval(&tenant, &r.approval_id, wait)
            .await?;
        Ok(Response::new(approval.into()))
    }

    async fn list_approvals(
        &self,
        request: Request<v1::ListApprovalsRequest>,
    ) -> Reply<v1::ListApprovalsResponse> {
        let caller = self.caller(&request)?;
        let r = request.into_inner();
        let filter = ApprovalFilter {
            status: optional_enum(r.status, "status").map_err(ServiceError::from)?,
            agent_id: r.agent_id,
            trajectory_id: r.trajectory_id,
        };
        let page = self
            .governance
            .list_approvals(&caller, filter, &page(r.page_size, r.page_token)?)
            .await?;
        Ok(Response::new(v1::ListApprovalsResponse {
            approvals: page.items.into_iter().map(Into::into).collect(),
            next_page_token: next_token(page.next),
        }))
    }

    async fn decide_approval(
        &self,
        request: Request<v1::DecideApprovalRequest>,
    ) -> Reply<v1::Approval> {
        let caller = self.caller(&request)?;
        let r = request.into_inner();
        let decision =
            sondera_proto::WireEnum::decode(r.decision, "decision").map_err(ServiceError::from)?;
        let approval = self
            .governance
            .decide_approval(&caller, &r.approval_id, decision, r.reason)
            .await?;
        Ok(Response::new(approval.into()))
    }

    async fn health(&self, request: Request<v1::HealthRequest>) -> Reply<v1::HealthResponse> {
        self.tenant(&request)?;
        self.governance
            .healthy()
            .await
            .map_err(ServiceError::from)?;
        Ok(Response::new(v1::HealthResponse {
            status: "serving".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            policies: self.governance.engine().policy_ids().count() as u64,
        }))
    }
}

/// A time window from its two optional ends, each named in an error.
fn window_from_wire(
    (since, since_field): (Option<prost_types::Timestamp>, &str),
    (until, until_field): (Option<prost_types::Timestamp>, &str),
) -> Result<TimeWindow, ServiceError> {
    let time = |t: Option<prost_types::Timestamp>, field: &str| {
        t.map(|t| {
            timestamp_from_wire(t)
                .map_err(|e| ServiceError::InvalidArgument(format!("`{field}` {}", e.problem)))
        })
        .transpose()
    };
    Ok(TimeWindow {
        since: time(since, since_field)?,
        until: time(until, until_field)?,
    })
}
