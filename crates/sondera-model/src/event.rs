use chrono::{DateTime, SubsecRound, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Agent, Payload};

/// One step of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// This event's id, unique in its trajectory.
    #[schemars(regex(pattern = ID_PATTERN))]
    pub event_id: String,
    /// The trajectory the event is a step of.
    #[schemars(regex(pattern = ID_PATTERN))]
    pub trajectory_id: String,
    /// The root agent: the principal of every policy decision.
    pub agent: Agent,
    /// When the step happened, RFC 3339 in UTC.
    pub timestamp: DateTime<Utc>,
    /// What happened.
    pub payload: Payload,
    /// Who produced the event.
    pub actor: Actor,
    /// How the event relates to others, for tracing.
    #[serde(default, skip_serializing_if = "Causality::is_empty")]
    pub causality: Causality,
    /// The agent of the tree that executed this step, when it is not the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ExecutionAttribution>,
    /// The upstream tool-call id, the key that ties a call to its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_call_id: Option<String>,
}

/// Who produced an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    /// What kind of producer it is.
    pub kind: ActorKind,
    /// Its id (a user id, an agent name, a policy id).
    pub id: String,
}

/// What kind of producer an [`Actor`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    /// A person.
    Human,
    /// An agent.
    Agent,
    /// The harness or the platform it runs on.
    System,
    /// A policy of the harness.
    Policy,
}

impl Actor {
    /// An actor of `kind` named `id`.
    pub fn new(kind: ActorKind, id: impl Into<String>) -> Self {
        Self {
            kind,
            id: id.into(),
        }
    }

    /// The agent `id`.
    pub fn agent(id: impl Into<String>) -> Self {
        Self::new(ActorKind::Agent, id)
    }

    /// The person `id`.
    pub fn human(id: impl Into<String>) -> Self {
        Self::new(ActorKind::Human, id)
    }

    /// The system component `id`.
    pub fn system(id: impl Into<String>) -> Self {
        Self::new(ActorKind::System, id)
    }
}

/// How an event relates to others.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Causality {
    /// Groups the events of one request or turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The event that caused this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causation_id: Option<String>,
    /// The enclosing event (e.g. the tool call of a tool output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

impl Causality {
    /// No link to another event is set.
    pub fn is_empty(&self) -> bool {
        self.correlation_id.is_none() && self.causation_id.is_none() && self.parent_id.is_none()
    }
}

/// The agent of the tree that executed a step, for observation only: policies
/// are always written for the root agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecutionAttribution {
    /// The name of the agent that executed the step.
    pub agent_name: String,
    /// Agent names from the root down to and including `agent_name`.
    pub agent_path: Vec<String>,
}

/// Why a JSON text is not an [`Event`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventDecodeError {
    /// The text is longer than events may be.
    #[error("event is {size} bytes, larger than the {limit}-byte limit")]
    TooLarge {
        /// The text's length in bytes.
        size: usize,
        /// The longest an event may be.
        limit: usize,
    },
    /// The text is not JSON.
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// Where, from 1.
        line: usize,
        /// Where in the line, from 1.
        column: usize,
        /// What the JSON reader found.
        message: String,
    },
    /// The JSON is not an event: a field is missing, unknown or mistyped.
    #[error("not a valid event (line {line}, column {column}): {message}")]
    Invalid {
        /// Where, from 1.
        line: usize,
        /// Where in the line, from 1.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A field that names something is empty.
    #[error("event field `{field}` must not be empty")]
    EmptyField {
        /// The field's path.
        field: &'static str,
    },
    /// An id is `.` or `..`.
    #[error(
        "event field `{field}` must not be `.` or `..`: it names a path segment of the HTTP API, where those two mean something else"
    )]
    DotSegment {
        /// The field's path.
        field: &'static str,
    },
    /// A free-form JSON field nests deeper than readers accept.
    #[error(
        "event field `{field}` nests more than {limit} levels deep, past what every reader of events accepts; flatten it"
    )]
    TooDeep {
        /// The field's path.
        field: &'static str,
        /// The deepest nesting accepted.
        limit: usize,
    },
}

impl Event {
    /// A new event for `trajectory_id`, stamped now with a fresh id, produced by the agent.
    ///
    /// The id is a UUID version 7: it starts with the time, so ids made in
    /// turn sort in turn and a store's index of them grows at one end
    /// instead of being written at random places.
    pub fn new(trajectory_id: impl Into<String>, agent: &Agent, payload: Payload) -> Self {
        Self {
            event_id: uuid::Uuid::now_v7().to_string(),
            trajectory_id: trajectory_id.into(),
            agent: agent.without_card(),
            timestamp: Utc::now().round_subsecs(6),
            payload,
            actor: Actor::agent(agent.id.clone()),
            causality: Causality::default(),
            execution: None,
            provider_call_id: None,
        }
    }

    /// The event, produced by `actor`.
    #[must_use]
    pub fn with_actor(mut self, actor: Actor) -> Self {
        self.actor = actor;
        self
    }

    /// The event, executed by the agent `execution` names.
    #[must_use]
    pub fn with_execution(mut self, execution: ExecutionAttribution) -> Self {
        self.execution = Some(execution);
        self
    }

    /// The event, with the provider's tool-call id.
    #[must_use]
    pub fn with_provider_call_id(mut self, id: Option<String>) -> Self {
        self.provider_call_id = id;
        self
    }

    /// The event, linked to others by `causality`.
    #[must_use]
    pub fn with_causality(mut self, causality: Causality) -> Self {
        self.causality = causality;
        self
    }

    /// Decodes one event from JSON, refusing texts over `max_bytes` before parsing.
    pub fn from_json(text: &str, max_bytes: usize) -> Result<Self, EventDecodeError> {
        if text.len() > max_bytes {
            return Err(EventDecodeError::TooLarge {
                size: text.len(),
                limit: max_bytes,
            });
        }
        let event: Event = serde_json::from_str(text).map_err(|e| {
            let (line, column) = (e.line(), e.column());
            // serde_json appends the position, which the variant already carries.
            let full = e.to_string();
            let message = match full.rsplit_once(" at line ") {
                Some((head, _)) => head.to_string(),
                None => full,
            };
            match e.classify() {
                serde_json::error::Category::Data => EventDecodeError::Invalid {
                    line,
                    column,
                    message,
                },
                _ => EventDecodeError::Syntax {
                    line,
                    column,
                    message,
                },
            }
        })?;
        event.check()?;
        Ok(event)
    }

    /// Checks the invariants serde cannot express.
    pub fn check(&self) -> Result<(), EventDecodeError> {
        for (field, value) in [
            ("event_id", &self.event_id),
            ("trajectory_id", &self.trajectory_id),
            ("agent.id", &self.agent.id),
        ] {
            if value.trim().is_empty() {
                return Err(EventDecodeError::EmptyField { field });
            }
        }
        for (field, value) in [
            ("trajectory_id", &self.trajectory_id),
            ("agent.id", &self.agent.id),
        ] {
            if value == "." || value == ".." {
                return Err(EventDecodeError::DotSegment { field });
            }
        }
        let limit = crate::MAX_JSON_DEPTH;
        let agent_json = self
            .agent
            .card
            .as_deref()
            .into_iter()
            .flat_map(crate::AgentCard::json_fields);
        for (field, value) in self.payload.json_fields().chain(agent_json) {
            if crate::json_depth_exceeds(value, limit) {
                return Err(EventDecodeError::TooDeep { field, limit });
            }
        }
        Ok(())
    }

    /// The event in its JSON wire format.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialize to JSON")
    }
}

/// What [`Event::check`] accepts as an id, for the JSON Schema: some text
/// that is not blank, and not `.` or `..` (a path segment on the HTTP API).
pub const ID_PATTERN: &str = r"^(?!\.\.?$)[\s\S]*\S[\s\S]*$";

/// The JSON Schema of the event envelope, generated from these types.
pub fn event_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Event)).expect("schemas serialize to JSON")
}
