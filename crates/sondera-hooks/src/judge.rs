//! Judging a hook call through a harness, and what the answer says.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use sondera_harness::{ApprovalRecord, ApprovalState, Backend, HarnessError};
use sondera_model::{
    Actor, Adapter, Adjudicated, Agent, Approval, Decision, Event, ExecutionAttribution, Grant,
    Payload, admit_provider_call_id,
};

use crate::CodingAgent;
use crate::answer::{self, CommandAnswer, Gate, Outcome};
use crate::input::{HookCall, Step};

/// Why a step was not judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The trajectory is not recorded: it must be started first.
    #[error("the trajectory is not recorded")]
    NotStarted,
    /// A `started` event came for a trajectory already recorded.
    #[error("the trajectory has already started")]
    AlreadyStarted,
    /// Anything else; the step is blocked with this reason.
    #[error("{0}")]
    Failed(String),
}

/// Where hook calls are judged: the adjudicator in process, a connection to
/// a server (both through [`Backend`]), or the server's service itself.
#[async_trait]
pub trait Steps: Send + Sync {
    /// Judges and records one event.
    async fn adjudicate(&self, event: Event) -> Result<Adjudicated, StepError>;

    /// The standing approvals kept for `agent_id` (an operator's "always").
    async fn grants(&self, agent_id: &str) -> Result<Vec<Grant>, StepError>;

    /// The approvals "for this session" operators gave in `trajectory_id`.
    async fn session_grants(&self, trajectory_id: &str) -> Result<Vec<Grant>, StepError>;

    /// Asks the operators about escalated event `event_id` and waits at
    /// most `wait` for their decision.
    async fn ask_operators(
        &self,
        trajectory_id: &str,
        event_id: &str,
        wait: Duration,
    ) -> Result<ApprovalRecord, StepError>;
}

#[async_trait]
impl<B: Backend> Steps for B {
    async fn adjudicate(&self, event: Event) -> Result<Adjudicated, StepError> {
        self.adjudicate_one(event).await.map_err(step_error)
    }

    async fn grants(&self, agent_id: &str) -> Result<Vec<Grant>, StepError> {
        Backend::grants(self, agent_id).await.map_err(step_error)
    }

    async fn session_grants(&self, trajectory_id: &str) -> Result<Vec<Grant>, StepError> {
        Backend::session_grants(self, trajectory_id)
            .await
            .map_err(step_error)
    }

    async fn ask_operators(
        &self,
        trajectory_id: &str,
        event_id: &str,
        wait: Duration,
    ) -> Result<ApprovalRecord, StepError> {
        self.ask_operator(trajectory_id, event_id, Some(wait))
            .await
            .map_err(step_error)
    }
}

/// A harness error as a step error. A server's refusals arrive as gRPC
/// status codes: not found for an unknown trajectory, a failed
/// precondition for a second start (and for a step of an ended trajectory,
/// told apart by its message).
fn step_error(error: HarnessError) -> StepError {
    match &error {
        HarnessError::UnknownTrajectory(_) => StepError::NotStarted,
        HarnessError::AlreadyStarted(_) => StepError::AlreadyStarted,
        HarnessError::Remote { code, .. } if code == "NotFound" => StepError::NotStarted,
        HarnessError::Remote { code, message }
            if code == "FailedPrecondition" && message.contains("already started") =>
        {
            StepError::AlreadyStarted
        }
        _ => StepError::Failed(error.to_string()),
    }
}

/// Who decides an escalated step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Escalation {
    /// The person at the agent, through the agent's own "ask" (a refusal
    /// that says so where the agent cannot ask).
    #[default]
    Agent,
    /// The server's operators, waited for at most this long; no decision
    /// by then is a refusal.
    Operators(Duration),
}

/// Judges hook calls through `S`.
#[derive(Debug, Clone)]
pub struct HookJudge<S> {
    steps: S,
    escalation: Escalation,
    user: Option<String>,
}

/// The answer to one hook call, before it is put in the agent's dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The agent.
    pub agent: CodingAgent,
    /// The event, as the agent named it (empty when the input named none).
    pub event: String,
    /// What the answer can do.
    pub gate: Gate,
    /// What it says.
    pub outcome: Outcome,
}

impl Judged {
    /// The answer of a command hook.
    pub fn command(&self) -> CommandAnswer {
        answer::command(self.agent, &self.event, self.gate, &self.outcome)
    }

    /// The body of an HTTP hook's answer.
    pub fn http(&self) -> Value {
        answer::http(self.agent, &self.event, self.gate, &self.outcome)
    }

    /// An input that could not be judged at all, refused for `reason`.
    pub fn failed(agent: CodingAgent, event: Option<&str>, reason: String) -> Self {
        Self {
            agent,
            event: event.unwrap_or_default().to_string(),
            gate: Gate::Tool,
            outcome: Outcome::Fail(reason),
        }
    }
}

impl<S: Steps> HookJudge<S> {
    /// Judges through `steps`; escalations go to the person at the agent.
    pub fn new(steps: S) -> Self {
        Self {
            steps,
            escalation: Escalation::Agent,
            user: None,
        }
    }

    /// Escalations decided as `escalation` says.
    #[must_use]
    pub fn escalation(mut self, escalation: Escalation) -> Self {
        self.escalation = escalation;
        self
    }

    /// The person the agents run for, when an input does not say (their
    /// agent ids are `<agent>@<user>`).
    #[must_use]
    pub fn user(mut self, user: Option<String>) -> Self {
        self.user = user.filter(|u| !u.trim().is_empty());
        self
    }

    /// The steps it judges through.
    pub fn steps(&self) -> &S {
        &self.steps
    }

    /// Reads and judges one hook input of `agent`.
    pub async fn judge(&self, agent: CodingAgent, event: Option<&str>, input: &[u8]) -> Judged {
        let call = match HookCall::parse(agent, event, input) {
            Ok(call) => call,
            Err(e) => return Judged::failed(agent, event, e.to_string()),
        };
        let gate = match &call.step {
            Step::Judge { gate, .. } => *gate,
            _ => Gate::None,
        };
        let outcome = match self.run(&call).await {
            Ok(outcome) => outcome,
            Err(e) => Outcome::Fail(format!(
                "the step could not be judged, so it is blocked: {e}"
            )),
        };
        Judged {
            agent,
            event: call.event,
            gate,
            outcome,
        }
    }

    async fn run(&self, call: &HookCall) -> Result<Outcome, StepError> {
        let session = Session::of(call, self.user.as_deref());
        match &call.step {
            Step::Notice => Ok(Outcome::Proceed),
            Step::SessionStart { task, resumed } => {
                self.start(&session, call, task.clone(), *resumed).await?;
                Ok(Outcome::Proceed)
            }
            Step::SessionEnd { reason } => {
                let ended = Payload::Suspended {
                    reason: format!("{} session ended: {reason}", call.agent),
                };
                match self.steps.adjudicate(session.event(call, ended)).await {
                    Ok(_) | Err(StepError::NotStarted) => Ok(Outcome::Proceed),
                    Err(e) => Err(e),
                }
            }
            Step::Judge { payloads, gate } => {
                for payload in payloads {
                    let event = session.event(call, payload.clone());
                    let outcome = self.judge_step(&session, call, event).await?;
                    if outcome != Outcome::Proceed || *gate == Gate::None {
                        return Ok(if *gate == Gate::None {
                            Outcome::Proceed
                        } else {
                            outcome
                        });
                    }
                }
                Ok(Outcome::Proceed)
            }
        }
    }

    /// Records the session's start (or its return), then where it works.
    async fn start(
        &self,
        session: &Session,
        call: &HookCall,
        task: Option<String>,
        resumed: bool,
    ) -> Result<(), StepError> {
        let started = Payload::Started {
            agent: session.agent.clone(),
            task,
            session_id: Some(call.session_id.clone()),
        };
        match self.steps.adjudicate(session.event(call, started)).await {
            Ok(_) => {}
            Err(StepError::AlreadyStarted) if resumed => {
                let back = Payload::Resumed {
                    resumed_by: Actor::agent(session.agent.id.clone()),
                };
                self.steps.adjudicate(session.event(call, back)).await?;
            }
            Err(StepError::AlreadyStarted) => return Ok(()),
            Err(e) => return Err(e),
        }
        let snapshot = Payload::Snapshot {
            working_dir: call.cwd.clone(),
            open_files: Vec::new(),
            git_branch: None,
            variables: Default::default(),
        };
        self.steps.adjudicate(session.event(call, snapshot)).await?;
        Ok(())
    }

    /// Judges one step, starting the trajectory first when this is its first.
    async fn judge_step(
        &self,
        session: &Session,
        call: &HookCall,
        event: Event,
    ) -> Result<Outcome, StepError> {
        let verdict = match self.steps.adjudicate(event.clone()).await {
            Err(StepError::NotStarted) => {
                self.start(session, call, None, false).await?;
                self.steps.adjudicate(event.clone()).await?
            }
            other => other?,
        };
        Ok(match verdict.effective_decision() {
            Decision::Allow => Outcome::Proceed,
            Decision::Deny => Outcome::Deny(verdict.deny_message()),
            Decision::Escalate => match self.standing_approval(session, &event).await? {
                Some(grant) => {
                    self.record_grant(session, call, &event, &verdict, grant)
                        .await?;
                    Outcome::Proceed
                }
                None => self.escalate(&event, &verdict).await?,
            },
        })
    }

    /// The operator's approval that covers escalated `event`, if one does:
    /// a standing one for the agent, or one for this session. Nothing
    /// covers a denial.
    async fn standing_approval(
        &self,
        session: &Session,
        event: &Event,
    ) -> Result<Option<Grant>, StepError> {
        let Some(shape) = sondera_guard::action_shape(&event.payload) else {
            return Ok(None);
        };
        let kept = self.steps.grants(&session.agent.id).await?;
        if let Some(grant) = kept.into_iter().find(|grant| grant.shape.covers(&shape)) {
            return Ok(Some(grant));
        }
        let this_session = self.steps.session_grants(&event.trajectory_id).await?;
        Ok(this_session
            .into_iter()
            .find(|grant| grant.shape.covers(&shape)))
    }

    /// Records that `grant` let escalated `event` go ahead, as the person
    /// who granted it.
    async fn record_grant(
        &self,
        session: &Session,
        call: &HookCall,
        event: &Event,
        verdict: &Adjudicated,
        grant: Grant,
    ) -> Result<(), StepError> {
        let reason = format!(
            "covered by a standing approval ({}) for {}",
            grant.scope.as_str(),
            grant.shape
        );
        let mut decision = Adjudicated::allow(verdict.mode, reason);
        decision.policies = verdict.policies.clone();
        let mut recorded = session.event(call, Payload::Adjudicated(decision));
        recorded.actor = grant.granted_by;
        recorded.causality.causation_id = Some(event.event_id.clone());
        self.steps.adjudicate(recorded).await?;
        Ok(())
    }

    async fn escalate(&self, event: &Event, verdict: &Adjudicated) -> Result<Outcome, StepError> {
        let Escalation::Operators(wait) = self.escalation else {
            return Ok(Outcome::Ask(verdict.deny_message()));
        };
        let approval = self
            .steps
            .ask_operators(&event.trajectory_id, &event.event_id, wait)
            .await?;
        Ok(match approval.state {
            ApprovalState::Decided {
                approval: Approval::Deny,
                decided_by,
                reason,
                ..
            } => Outcome::Deny(format!(
                "operator {} refused this step{}",
                decided_by.id,
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            )),
            ApprovalState::Decided { .. } => Outcome::Proceed,
            _ => Outcome::Deny(format!(
                "no operator approved this step within {}s: {}",
                wait.as_secs(),
                verdict.deny_message()
            )),
        })
    }
}

/// The trajectory a call belongs to and the agent it is recorded under.
struct Session {
    trajectory_id: String,
    agent: Agent,
}

impl Session {
    fn of(call: &HookCall, user: Option<&str>) -> Self {
        let name = call.agent.name();
        let user = call.user.as_deref().or(user);
        let id = match user {
            Some(user) => format!("{name}@{user}"),
            None => name.to_string(),
        };
        Self {
            trajectory_id: trajectory_id(call.agent, &call.session_id),
            agent: Agent::new(id, name).with_platform("coding-agent"),
        }
    }

    fn event(&self, call: &HookCall, payload: Payload) -> Event {
        let mut event = Event::new(self.trajectory_id.clone(), &self.agent, payload);
        event.provider_call_id = admit_provider_call_id(Adapter::Hooks, call.tool_use_id.clone());
        if let Some(sub) = &call.subagent {
            event.execution = Some(ExecutionAttribution {
                agent_name: sub.clone(),
                agent_path: vec![self.agent.id.clone(), sub.clone()],
            });
        }
        event
    }
}

/// The trajectory of an agent's session: `<agent>-<session id>` when the id
/// is plain, else the agent and a digest of it, so two ids never share one.
pub(crate) fn trajectory_id(agent: CodingAgent, session_id: &str) -> String {
    let plain = session_id.len() <= 128
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        return format!("{}-{session_id}", agent.name());
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(session_id.as_bytes());
    format!("{}-{}", agent.name(), hex::encode(&digest[..16]))
}
