//! The lifecycle of one trajectory scope, shared by every harness: which
//! trajectory the scope holds, when its id is published and cleared, and
//! which events it accepts. Harnesses differ only in their [`Backend`].

use async_trait::async_trait;
use sondera_model::{
    ActionShape, Actor, Adjudicated, Agent, Approval, Event, Grant, GrantScope, Payload,
};
use sondera_store::{ApprovalRecord, ApprovalState};

use crate::{Harness, HarnessError};

/// Where a harness's events are judged and recorded: the one thing that
/// differs between harnesses. Implement it to build a custom harness that
/// keeps the lifecycle rules of [`ScopedHarness`].
#[async_trait]
pub trait Backend: Send + Sync {
    /// Judges and records one event.
    async fn adjudicate_one(&self, event: Event) -> Result<Adjudicated, HarnessError>;

    /// Judges events in order, stopping at the first error; the events
    /// before it stay recorded.
    async fn adjudicate_all(&self, events: Vec<Event>) -> Result<Vec<Adjudicated>, HarnessError> {
        let mut verdicts = Vec::with_capacity(events.len());
        for event in events {
            verdicts.push(self.adjudicate_one(event).await?);
        }
        Ok(verdicts)
    }

    /// The agent a recorded trajectory belongs to, as last recorded;
    /// [`HarnessError::UnknownTrajectory`] when it is not recorded.
    async fn recorded_agent(&self, trajectory_id: &str) -> Result<Option<Agent>, HarnessError>;

    /// Keeps a standing approval for `agent_id` durably.
    async fn put_grant(&self, agent_id: &str, grant: &Grant) -> Result<(), HarnessError>;

    /// The standing approvals kept for `agent_id`.
    async fn grants(&self, agent_id: &str) -> Result<Vec<Grant>, HarnessError>;

    /// The approvals "for this session" operators gave in trajectory
    /// `trajectory_id`, as grants. A backend without operators has none.
    async fn session_grants(&self, trajectory_id: &str) -> Result<Vec<Grant>, HarnessError> {
        let _ = trajectory_id;
        Ok(Vec::new())
    }

    /// Asks an operator to decide escalated event `event_id` and waits for
    /// the outcome, up to `deadline`. A backend without operators says so.
    async fn ask_operator(
        &self,
        trajectory_id: &str,
        event_id: &str,
        deadline: Option<std::time::Duration>,
    ) -> Result<ApprovalRecord, HarnessError> {
        let _ = (trajectory_id, event_id, deadline);
        Err(HarnessError::NoOperators)
    }
}

/// A [`Harness`]: one trajectory scope whose events a [`Backend`] judges.
/// [`crate::LocalHarness`] and [`crate::RemoteHarness`] are this over the
/// in-process adjudicator and over a server connection.
#[derive(Debug, Clone)]
pub struct ScopedHarness<B> {
    pub(crate) backend: B,
    pub(crate) scope: Scope,
}

impl<B: Backend> ScopedHarness<B> {
    /// A scope over `backend`; `agent` is used when `initialize` is given none.
    pub fn over(backend: B, agent: Option<Agent>) -> Self {
        Self {
            backend,
            scope: Scope::new(agent),
        }
    }

    /// What the scope adjudicates through.
    pub fn backend(&self) -> &B {
        &self.backend
    }
}

#[async_trait]
impl<B: Backend + Clone + 'static> Harness for ScopedHarness<B> {
    async fn initialize(
        &mut self,
        agent: Option<Agent>,
        session_id: Option<String>,
    ) -> Result<String, HarnessError> {
        self.scope
            .initialize(&self.backend, agent, session_id)
            .await
    }

    async fn resume(
        &mut self,
        trajectory_id: &str,
        agent: Option<Agent>,
    ) -> Result<(), HarnessError> {
        self.scope.resume(&self.backend, trajectory_id, agent).await
    }

    async fn finalize(&mut self, summary: Option<String>) -> Result<(), HarnessError> {
        self.scope
            .end(&self.backend, Payload::Completed { summary })
            .await
    }

    async fn fail(&mut self, reason: &str) -> Result<(), HarnessError> {
        let failed = Payload::Failed {
            reason: reason.to_string(),
        };
        self.scope.end(&self.backend, failed).await
    }

    async fn adjudicate(&mut self, event: Event) -> Result<Adjudicated, HarnessError> {
        self.scope.check(&event)?;
        self.backend.adjudicate_one(event).await
    }

    async fn adjudicates(&mut self, events: Vec<Event>) -> Result<Vec<Adjudicated>, HarnessError> {
        for event in &events {
            self.scope.check(event)?;
        }
        self.backend.adjudicate_all(events).await
    }

    async fn grant(&mut self, grant: Grant) -> Result<(), HarnessError> {
        match grant.scope {
            GrantScope::Session => {
                self.scope.keep_session_grant(grant);
                Ok(())
            }
            GrantScope::Always => {
                let agent = self.scope.agent().ok_or(HarnessError::NoAgent)?;
                self.backend.put_grant(&agent.id, &grant).await
            }
        }
    }

    async fn granted(&mut self, shape: &ActionShape) -> Result<Option<Grant>, HarnessError> {
        if let Some(grant) = self
            .scope
            .session_grants
            .iter()
            .find(|g| g.shape.covers(shape))
        {
            return Ok(Some(grant.clone()));
        }
        let agent = self.scope.agent().ok_or(HarnessError::NoAgent)?;
        let kept = self.backend.grants(&agent.id).await?;
        Ok(kept.into_iter().find(|g| g.shape.covers(shape)))
    }

    async fn ask_operator(
        &mut self,
        event_id: &str,
        deadline: Option<std::time::Duration>,
    ) -> Result<ApprovalRecord, HarnessError> {
        let trajectory_id = self
            .scope
            .trajectory_id()
            .ok_or(HarnessError::NotInitialized)?
            .to_string();
        let settled = self
            .backend
            .ask_operator(&trajectory_id, event_id, deadline)
            .await?;
        if let (
            ApprovalState::Decided {
                approval: Approval::Session,
                decided_by,
                ..
            },
            Some(shape),
        ) = (&settled.state, &settled.shape)
        {
            let grant = Grant::new(shape.clone(), GrantScope::Session, decided_by.clone());
            self.scope.keep_session_grant(grant);
        }
        Ok(settled)
    }

    fn trajectory_id(&self) -> Option<&str> {
        self.scope.trajectory_id()
    }

    fn agent(&self) -> Option<&Agent> {
        self.scope.agent()
    }

    fn new_scope(&self) -> Box<dyn Harness> {
        Box::new(Self {
            backend: self.backend.clone(),
            scope: self.scope.fresh(),
        })
    }
}

/// The trajectory a scope holds and the agent it speaks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    default_agent: Option<Agent>,
    agent: Option<Agent>,
    trajectory_id: Option<String>,
    /// Approvals granted for the rest of this scope's trajectory.
    session_grants: Vec<Grant>,
}

impl Scope {
    pub(crate) fn new(default_agent: Option<Agent>) -> Self {
        Self {
            agent: default_agent.clone(),
            default_agent,
            trajectory_id: None,
            session_grants: Vec::new(),
        }
    }

    /// A fresh scope with the same default agent.
    pub(crate) fn fresh(&self) -> Self {
        Self::new(self.default_agent.clone())
    }

    pub(crate) fn trajectory_id(&self) -> Option<&str> {
        self.trajectory_id.as_deref()
    }

    /// Keeps `grant` for the rest of this scope, replacing one of its shape.
    fn keep_session_grant(&mut self, grant: Grant) {
        self.session_grants.retain(|g| g.shape != grant.shape);
        self.session_grants.push(grant);
    }

    pub(crate) fn agent(&self) -> Option<&Agent> {
        self.agent.as_ref()
    }

    fn require_no_trajectory(&self) -> Result<(), HarnessError> {
        match &self.trajectory_id {
            Some(id) => Err(HarnessError::AlreadyInitialized {
                trajectory_id: id.clone(),
            }),
            None => Ok(()),
        }
    }

    fn lifecycle_event(
        &self,
        payload: Payload,
        actor: Option<Actor>,
    ) -> Result<Event, HarnessError> {
        let trajectory_id = self
            .trajectory_id
            .as_deref()
            .ok_or(HarnessError::NotInitialized)?;
        let agent = self.agent.as_ref().ok_or(HarnessError::NoAgent)?;
        let event = Event::new(trajectory_id, agent, payload);
        Ok(match actor {
            Some(actor) => event.with_actor(actor),
            None => event,
        })
    }

    /// Publishes a new trajectory id, then sends `started`; the id stays
    /// published if sending fails, since the trajectory may exist.
    pub(crate) async fn initialize(
        &mut self,
        backend: &dyn Backend,
        agent: Option<Agent>,
        session_id: Option<String>,
    ) -> Result<String, HarnessError> {
        self.require_no_trajectory()?;
        let agent = agent
            .or_else(|| self.default_agent.clone())
            .ok_or(HarnessError::NoAgent)?;
        // Time-ordered, like event ids, so a store's keys grow at one end.
        let trajectory_id = uuid::Uuid::now_v7().to_string();
        self.agent = Some(agent.clone());
        self.trajectory_id = Some(trajectory_id.clone());
        let started = Payload::Started {
            agent,
            task: None,
            session_id,
        };
        backend
            .adjudicate_one(self.lifecycle_event(started, None)?)
            .await?;
        Ok(trajectory_id)
    }

    /// Publishes `trajectory_id`, then sends `resumed`.
    pub(crate) async fn resume(
        &mut self,
        backend: &dyn Backend,
        trajectory_id: &str,
        agent: Option<Agent>,
    ) -> Result<(), HarnessError> {
        self.require_no_trajectory()?;
        let agent = match agent {
            Some(agent) => Some(agent),
            None => backend.recorded_agent(trajectory_id).await?,
        };
        let agent = agent
            .or_else(|| self.default_agent.clone())
            .ok_or(HarnessError::NoAgent)?;
        self.agent = Some(agent);
        self.trajectory_id = Some(trajectory_id.to_string());
        let system = Actor::system("sondera-harness");
        let resumed = Payload::Resumed {
            resumed_by: system.clone(),
        };
        backend
            .adjudicate_one(self.lifecycle_event(resumed, Some(system))?)
            .await?;
        Ok(())
    }

    /// Sends a terminal event; the trajectory id is cleared only once it is accepted.
    pub(crate) async fn end(
        &mut self,
        backend: &dyn Backend,
        payload: Payload,
    ) -> Result<(), HarnessError> {
        backend
            .adjudicate_one(self.lifecycle_event(payload, None)?)
            .await?;
        self.trajectory_id = None;
        self.session_grants.clear();
        Ok(())
    }

    /// Checks that `event` belongs to this scope's trajectory.
    pub(crate) fn check(&self, event: &Event) -> Result<(), HarnessError> {
        let expected = self
            .trajectory_id
            .as_deref()
            .ok_or(HarnessError::NotInitialized)?;
        if event.trajectory_id != expected {
            return Err(HarnessError::TrajectoryMismatch {
                expected: expected.to_string(),
                found: event.trajectory_id.clone(),
            });
        }
        Ok(())
    }
}
