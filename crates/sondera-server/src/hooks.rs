//! Coding agents' HTTP hooks: `POST /v1/hooks/{agent}` takes the JSON an
//! agent's hook sends (Claude Code's `http` handler, or anything that posts
//! a command hook's input) and answers in the agent's dialect.
//!
//! Agents treat an HTTP error as "go ahead", so every failure here (no
//! token, a body too large or not JSON, an unknown event, a store that
//! fails, judging past the request's time) is answered `200 OK` with the
//! dialect's refusal. An agent that cannot reach the server at all runs the
//! step: that is the agent's rule, and why `sondera hook` (a command that
//! exits 2 when it cannot judge) is the way in that fails closed.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use serde::Deserialize;
use sondera_hooks::{CodingAgent, Escalation, HookJudge, Judged, StepError, Steps};
use sondera_model::{Adjudicated, Event};
use sondera_store::{ApprovalRecord, ApprovalState, TenantId};

use crate::error::ServiceError;
use crate::governance::Governance;
use crate::http::{HttpState, RequestDeadline, Who};

/// How long before the request's own deadline a hook is answered, so the
/// answer (a refusal, if need be) is sent before the connection is cut.
const ANSWER_MARGIN: Duration = Duration::from_secs(2);

#[derive(Debug, Deserialize)]
pub(crate) struct HookQuery {
    /// The event, for inputs that do not name it.
    event: Option<String>,
    /// `operators` to put escalations to the operators.
    escalate: Option<String>,
    /// Seconds to wait for an operator.
    wait: Option<u64>,
}

pub(crate) async fn hook(
    State(state): State<HttpState>,
    Extension(RequestDeadline(deadline)): Extension<RequestDeadline>,
    Path(agent): Path<String>,
    query: Result<Query<HookQuery>, axum::extract::rejection::QueryRejection>,
    who: Who,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<serde_json::Value>, ServiceError> {
    // An unknown agent has no dialect to refuse in: a plain error.
    let agent: CodingAgent = agent
        .parse()
        .map_err(|e: sondera_hooks::UnknownAgent| ServiceError::NotFound(e.to_string()))?;
    let judged = match query {
        Ok(Query(query)) => answer(&state, agent, &query, deadline, &who, body)
            .await
            .unwrap_or_else(|reason| Judged::failed(agent, query.event.as_deref(), reason)),
        Err(e) => Judged::failed(
            agent,
            None,
            format!("the query is not valid: {}", e.body_text()),
        ),
    };
    Ok(Json(judged.http()))
}

async fn answer(
    state: &HttpState,
    agent: CodingAgent,
    query: &HookQuery,
    deadline: Instant,
    who: &Who,
    body: Result<Bytes, BytesRejection>,
) -> Result<Judged, String> {
    let caller = state.caller(who).map_err(|e| e.to_string())?;
    let body = body.map_err(|e| format!("the hook input could not be read: {}", e.body_text()))?;
    let answer_by = deadline - ANSWER_MARGIN;
    let escalation = match query.escalate.as_deref() {
        None | Some("agent") => Escalation::Agent,
        Some("operators") => {
            let left = answer_by.saturating_duration_since(Instant::now());
            let wait = query.wait.map_or(left, Duration::from_secs).min(left);
            Escalation::Operators(wait)
        }
        Some(other) => return Err(format!("escalate={other}: use agent or operators")),
    };
    let steps = TenantSteps {
        governance: &state.governance,
        tenant: caller.tenant,
        deadline: answer_by,
    };
    let judge = HookJudge::new(steps).escalation(escalation);
    let judging = judge.judge(agent, query.event.as_deref(), &body);
    tokio::time::timeout_at(answer_by.into(), judging)
        .await
        .map_err(|_| "the step was not judged in time, so it is blocked".to_string())
}

/// The service's steps for one tenant, each to end by `deadline`.
struct TenantSteps<'a> {
    governance: &'a Governance,
    tenant: TenantId,
    deadline: Instant,
}

fn step_error(error: ServiceError) -> StepError {
    match &error {
        ServiceError::NotFound(_) => StepError::NotStarted,
        ServiceError::FailedPrecondition(message) if message.contains("already started") => {
            StepError::AlreadyStarted
        }
        _ => StepError::Failed(error.to_string()),
    }
}

#[async_trait]
impl Steps for TenantSteps<'_> {
    async fn adjudicate(&self, event: Event) -> Result<Adjudicated, StepError> {
        self.governance
            .adjudicate_until(&self.tenant, event, self.deadline)
            .await
            .map_err(step_error)
    }

    async fn grants(&self, agent_id: &str) -> Result<Vec<sondera_model::Grant>, StepError> {
        self.governance
            .grants(&self.tenant, agent_id)
            .await
            .map_err(step_error)
    }

    async fn session_grants(
        &self,
        trajectory_id: &str,
    ) -> Result<Vec<sondera_model::Grant>, StepError> {
        self.governance
            .session_grants(&self.tenant, trajectory_id)
            .await
            .map_err(step_error)
    }

    async fn ask_operators(
        &self,
        trajectory_id: &str,
        event_id: &str,
        wait: Duration,
    ) -> Result<ApprovalRecord, StepError> {
        let governance = self.governance;
        let mut approval = governance
            .request_approval(&self.tenant, trajectory_id, event_id, Some(wait))
            .await
            .map_err(step_error)?;
        let until = Instant::now() + wait;
        while approval.state == ApprovalState::Pending && Instant::now() < until {
            let left = until.saturating_duration_since(Instant::now());
            approval = governance
                .wait_approval(&self.tenant, &approval.id, left)
                .await
                .map_err(step_error)?;
        }
        Ok(approval)
    }
}
