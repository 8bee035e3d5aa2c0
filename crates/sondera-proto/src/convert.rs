//! Conversions between the generated wire types and the event model.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sondera_model as model;
use sondera_store as store;

use crate::v1;

/// Why a wire message is not a valid model value, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {problem}")]
#[non_exhaustive]
pub struct DecodeError {
    /// Dotted path from the decoded message to the offending field.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl DecodeError {
    fn new(field: &str, problem: impl Into<String>) -> Self {
        Self {
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    fn missing(field: &str) -> Self {
        Self::new(field, "is required but missing")
    }

    fn unknown(field: &str, value: i32) -> Self {
        Self::new(field, format!("has no known value ({value})"))
    }

    /// The same error seen from the message that contains `parent`.
    fn inside(mut self, parent: &str) -> Self {
        self.field = format!("{parent}.{}", self.field);
        self
    }
}

type Decoded<T> = Result<T, DecodeError>;

fn required<T>(value: Option<T>, field: &str) -> Decoded<T> {
    value.ok_or_else(|| DecodeError::missing(field))
}

/// Decodes a required sub-message, prefixing errors with its field name.
fn nested<W, M>(value: Option<W>, field: &str, decode: impl FnOnce(W) -> Decoded<M>) -> Decoded<M> {
    decode(required(value, field)?).map_err(|e| e.inside(field))
}

fn optional<W, M>(
    value: Option<W>,
    field: &str,
    decode: impl FnOnce(W) -> Decoded<M>,
) -> Decoded<Option<M>> {
    value
        .map(|v| decode(v).map_err(|e| e.inside(field)))
        .transpose()
}

fn each<W, M>(values: Vec<W>, field: &str, decode: impl Fn(W) -> Decoded<M>) -> Decoded<Vec<M>> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| decode(v).map_err(|e| e.inside(&format!("{field}[{i}]"))))
        .collect()
}

// ---- JSON and time -------------------------------------------------------

/// A JSON value on the wire: integers stay exact, objects keep their order.
pub fn json_to_wire(value: serde_json::Value) -> v1::JsonValue {
    use serde_json::Value;
    use v1::json_value::Kind;
    let kind = match value {
        Value::Null => Kind::Null(true),
        Value::Bool(b) => Kind::Bool(b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Kind::Int(i),
            (None, Some(u)) => Kind::Uint(u),
            _ => Kind::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Kind::String(s),
        Value::Array(items) => Kind::Array(v1::JsonArray {
            items: items.into_iter().map(json_to_wire).collect(),
        }),
        Value::Object(map) => Kind::Object(v1::JsonObject {
            fields: map
                .into_iter()
                .map(|(key, value)| v1::JsonField {
                    key,
                    value: Some(json_to_wire(value)),
                })
                .collect(),
        }),
    };
    v1::JsonValue { kind: Some(kind) }
}

/// The JSON value a wire value encodes, or where it is malformed.
pub fn json_from_wire(value: v1::JsonValue) -> Decoded<serde_json::Value> {
    use serde_json::Value;
    use v1::json_value::Kind;
    Ok(match required(value.kind, "kind")? {
        Kind::Null(_) => Value::Null,
        Kind::Bool(b) => Value::Bool(b),
        Kind::Int(i) => Value::from(i),
        Kind::Uint(u) => Value::from(u),
        Kind::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| DecodeError::new("float", format!("{f} is not a JSON number")))?,
        Kind::String(s) => Value::String(s),
        Kind::Array(a) => Value::Array(each(a.items, "array", json_from_wire)?),
        Kind::Object(o) => {
            let mut map = serde_json::Map::with_capacity(o.fields.len());
            for field in o.fields {
                let value = nested(field.value, "value", json_from_wire)
                    .map_err(|e| e.inside(&format!("object[{}]", field.key)))?;
                map.insert(field.key, value);
            }
            Value::Object(map)
        }
    })
}

/// A JSON field that defaults to `null` when absent.
fn json_or_null(value: Option<v1::JsonValue>) -> Decoded<serde_json::Value> {
    value.map_or(Ok(serde_json::Value::Null), json_from_wire)
}

/// A time on the wire, to the nanosecond.
pub fn timestamp_to_wire(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

/// The time a wire timestamp encodes, or why it is out of range.
pub fn timestamp_from_wire(t: prost_types::Timestamp) -> Decoded<DateTime<Utc>> {
    u32::try_from(t.nanos)
        .ok()
        .and_then(|nanos| DateTime::from_timestamp(t.seconds, nanos))
        .ok_or_else(|| {
            DecodeError::new(
                "",
                format!("{}s {}ns is not a valid time", t.seconds, t.nanos),
            )
        })
}

fn time_field(t: Option<prost_types::Timestamp>, field: &str) -> Decoded<DateTime<Utc>> {
    timestamp_from_wire(required(t, field)?).map_err(|e| DecodeError::new(field, e.problem))
}

// ---- Enums ---------------------------------------------------------------

macro_rules! wire_enum {
    ($model:ty, $wire:ty, $($m:ident <=> $w:ident),+ $(,)?) => {
        impl From<$model> for $wire {
            fn from(value: $model) -> Self {
                match value { $(<$model>::$m => <$wire>::$w),+ }
            }
        }
        impl WireEnum for $model {
            fn decode(value: i32, field: &str) -> Decoded<Self> {
                match <$wire>::try_from(value) {
                    $(Ok(<$wire>::$w) => Ok(<$model>::$m),)+
                    _ => Err(DecodeError::unknown(field, value)),
                }
            }
        }
    };
}

/// A model enum carried on the wire as a protobuf enum.
pub trait WireEnum: Sized {
    /// The model value of wire value `value` of `field`; zero (unspecified)
    /// and unknown values are errors.
    fn decode(value: i32, field: &str) -> Result<Self, DecodeError>;
}

fn enum_value<E: Into<W>, W: Into<i32>>(value: E) -> i32 {
    value.into().into()
}

wire_enum!(model::Decision, v1::Decision, Allow <=> Allow, Deny <=> Deny, Escalate <=> Escalate);
wire_enum!(model::Mode, v1::Mode, Govern <=> Govern, Monitor <=> Monitor, Steer <=> Steer);
wire_enum!(model::PromptRole, v1::PromptRole, User <=> User, System <=> System, Assistant <=> Assistant);
wire_enum!(model::FileOperationKind, v1::FileOperationKind, Read <=> Read, Write <=> Write, Edit <=> Edit, Delete <=> Delete);
wire_enum!(model::ActorKind, v1::ActorKind, Human <=> Human, Agent <=> Agent, System <=> System, Policy <=> Policy);
wire_enum!(model::GrantScope, v1::GrantScope, Session <=> Session, Always <=> Always);
wire_enum!(
    model::Approval, v1::ApprovalDecision,
    Deny <=> Deny, Once <=> Once, Session <=> Session, Always <=> Always
);
wire_enum!(
    store::ApprovalStatus, v1::ApprovalStatus,
    Pending <=> Pending, Decided <=> Decided, Expired <=> Expired
);
wire_enum!(
    model::CollaborationMode, v1::CollaborationMode,
    Transfer <=> Transfer, Sequential <=> Sequential, Parallel <=> Parallel, Loop <=> Loop, Custom <=> Custom
);
wire_enum!(
    store::TrajectoryStatus, v1::TrajectoryStatus,
    Pending <=> Pending, Running <=> Running, Completed <=> Completed,
    Failed <=> Failed, Terminated <=> Terminated, Suspended <=> Suspended
);

/// Decodes an enum field whose zero value means "not given".
pub fn optional_enum<E: WireEnum>(value: i32, field: &str) -> Decoded<Option<E>> {
    if value == 0 {
        return Ok(None);
    }
    E::decode(value, field).map(Some)
}

// ---- Plain mirrors ---------------------------------------------------------

/// Converts both ways between a model struct and the wire message of the same
/// shape: the listed fields move as they are; those after `collect` are
/// collections whose items convert (or whose container differs, a map against
/// a list of pairs). Anything that decodes (enums, times, required messages)
/// is written by hand below, so that its errors can name the field.
macro_rules! mirror {
    ($model:ty, $wire:ty { $($field:ident),* $(,)? } $(collect { $($items:ident),* $(,)? })?) => {
        impl From<$model> for $wire {
            fn from(value: $model) -> Self {
                Self {
                    $($field: value.$field,)*
                    $($($items: value.$items.into_iter().map(Into::into).collect(),)*)?
                }
            }
        }
        impl From<$wire> for $model {
            fn from(value: $wire) -> Self {
                Self {
                    $($field: value.$field,)*
                    $($($items: value.$items.into_iter().map(Into::into).collect(),)*)?
                }
            }
        }
    };
}

mirror!(
    model::Causality,
    v1::Causality {
        correlation_id,
        causation_id,
        parent_id
    }
);
mirror!(
    model::ExecutionAttribution,
    v1::ExecutionAttribution {
        agent_name,
        agent_path
    }
);
mirror!(model::PolicyMetadata, v1::PolicyMetadata {
    policy_id, description, escalate, escalate_arg
} collect { annotations });
mirror!(
    model::PendingCall,
    v1::PendingCall {
        call_id,
        target,
        kind,
        operation
    }
);
mirror!(model::ScriptRisk, v1::ScriptRisk { kind, evidence });
mirror!(model::WrittenScript, v1::WrittenScript { path } collect { risks });
mirror!(
    model::provenance::Source,
    v1::ProvenanceSource {
        number,
        call_id,
        tool,
        flagged
    }
);
mirror!(
    model::CommandShape,
    v1::CommandShape {
        program,
        subcommand,
        privileged
    }
);
mirror!(store::PolicyCount, v1::PolicyCount { policy_id, count });
mirror!(store::Analytics, v1::Analytics {
    trajectories, events, allowed, denied, escalated
} collect { top_denying_policies, shadow_matches });

// ---- Agents --------------------------------------------------------------

impl From<model::Agent> for v1::Agent {
    fn from(a: model::Agent) -> Self {
        Self {
            id: a.id,
            provider: a.provider,
            platform: a.platform,
            card: a
                .card
                .map(|card| std::sync::Arc::unwrap_or_clone(card).into()),
        }
    }
}

impl TryFrom<v1::Agent> for model::Agent {
    type Error = DecodeError;

    fn try_from(a: v1::Agent) -> Decoded<Self> {
        Ok(Self {
            id: a.id,
            provider: a.provider,
            platform: a.platform,
            card: optional(a.card, "card", |card| {
                model::AgentCard::try_from(card).map(std::sync::Arc::new)
            })?,
        })
    }
}

impl From<model::AgentCard> for v1::AgentCard {
    fn from(card: model::AgentCard) -> Self {
        let model::AgentCard::React {
            model,
            system_instruction,
            tools,
            sub_agents,
        } = card;
        Self {
            kind: Some(v1::agent_card::Kind::React(v1::ReactCard {
                model,
                system_instruction,
                tools: tools.into_iter().map(Into::into).collect(),
                sub_agents: sub_agents.into_iter().map(Into::into).collect(),
            })),
        }
    }
}

impl TryFrom<v1::AgentCard> for model::AgentCard {
    type Error = DecodeError;

    fn try_from(card: v1::AgentCard) -> Decoded<Self> {
        let v1::agent_card::Kind::React(react) = required(card.kind, "kind")?;
        Ok(Self::React {
            model: react.model,
            system_instruction: react.system_instruction,
            tools: each(react.tools, "react.tools", TryInto::try_into)?,
            sub_agents: each(react.sub_agents, "react.sub_agents", TryInto::try_into)?,
        })
    }
}

impl From<model::Tool> for v1::Tool {
    fn from(t: model::Tool) -> Self {
        Self {
            name: t.name,
            description: t.description,
            parameters: Some(json_to_wire(t.parameters)),
            parameters_json_schema: t.parameters_json_schema.map(json_to_wire),
            response: t.response.map(json_to_wire),
            response_json_schema: t.response_json_schema.map(json_to_wire),
            source: t.source,
            annotations: t.annotations.map(json_to_wire),
        }
    }
}

impl TryFrom<v1::Tool> for model::Tool {
    type Error = DecodeError;

    fn try_from(t: v1::Tool) -> Decoded<Self> {
        Ok(Self {
            name: t.name,
            description: t.description,
            parameters: json_or_null(t.parameters).map_err(|e| e.inside("parameters"))?,
            parameters_json_schema: optional(
                t.parameters_json_schema,
                "parameters_json_schema",
                json_from_wire,
            )?,
            response: optional(t.response, "response", json_from_wire)?,
            response_json_schema: optional(
                t.response_json_schema,
                "response_json_schema",
                json_from_wire,
            )?,
            source: t.source,
            annotations: optional(t.annotations, "annotations", json_from_wire)?,
        })
    }
}

impl From<model::SubAgent> for v1::SubAgent {
    fn from(s: model::SubAgent) -> Self {
        Self {
            name: s.name,
            parent_path: s.parent_path,
            description: s.description,
            model: s.model,
            collaboration_mode: enum_value::<_, v1::CollaborationMode>(s.collaboration_mode),
            owned_tool_names: s.owned_tool_names,
        }
    }
}

impl TryFrom<v1::SubAgent> for model::SubAgent {
    type Error = DecodeError;

    fn try_from(s: v1::SubAgent) -> Decoded<Self> {
        Ok(Self {
            collaboration_mode: WireEnum::decode(s.collaboration_mode, "collaboration_mode")?,
            name: s.name,
            parent_path: s.parent_path,
            description: s.description,
            model: s.model,
            owned_tool_names: s.owned_tool_names,
        })
    }
}

// ---- Events --------------------------------------------------------------

impl From<model::Actor> for v1::Actor {
    fn from(a: model::Actor) -> Self {
        Self {
            kind: enum_value::<_, v1::ActorKind>(a.kind),
            id: a.id,
        }
    }
}

impl TryFrom<v1::Actor> for model::Actor {
    type Error = DecodeError;

    fn try_from(a: v1::Actor) -> Decoded<Self> {
        Ok(Self {
            kind: WireEnum::decode(a.kind, "kind")?,
            id: a.id,
        })
    }
}

impl From<model::Event> for v1::Event {
    fn from(e: model::Event) -> Self {
        Self {
            event_id: e.event_id,
            trajectory_id: e.trajectory_id,
            agent: Some(e.agent.into()),
            timestamp: Some(timestamp_to_wire(e.timestamp)),
            payload: Some(e.payload.into()),
            actor: Some(e.actor.into()),
            causality: Some(e.causality.into()),
            execution: e.execution.map(Into::into),
            provider_call_id: e.provider_call_id,
        }
    }
}

impl TryFrom<v1::Event> for model::Event {
    type Error = DecodeError;

    fn try_from(e: v1::Event) -> Decoded<Self> {
        Ok(Self {
            event_id: e.event_id,
            trajectory_id: e.trajectory_id,
            agent: nested(e.agent, "agent", TryInto::try_into)?,
            timestamp: time_field(e.timestamp, "timestamp")?,
            payload: nested(e.payload, "payload", TryInto::try_into)?,
            actor: nested(e.actor, "actor", TryInto::try_into)?,
            causality: e.causality.unwrap_or_default().into(),
            execution: e.execution.map(Into::into),
            provider_call_id: e.provider_call_id,
        })
    }
}

// ---- Payloads ------------------------------------------------------------

impl From<model::Payload> for v1::Payload {
    fn from(payload: model::Payload) -> Self {
        use model::Payload as P;
        use v1::payload::Kind as K;
        let kind = match payload {
            P::ToolCall {
                call_id,
                tool,
                arguments,
            } => K::ToolCall(v1::ToolCall {
                call_id,
                tool,
                arguments: Some(json_to_wire(arguments)),
            }),
            P::ShellCommand {
                call_id,
                command,
                working_dir,
            } => K::ShellCommand(v1::ShellCommand {
                call_id,
                command,
                working_dir,
            }),
            P::WebFetch {
                call_id,
                url,
                prompt,
                method,
                body,
            } => K::WebFetch(v1::WebFetch {
                call_id,
                url,
                prompt,
                method,
                body,
            }),
            P::FileOperation {
                call_id,
                operation,
                path,
                content,
                old_content,
            } => K::FileOperation(v1::FileOperation {
                call_id,
                operation: enum_value::<_, v1::FileOperationKind>(operation),
                path,
                content,
                old_content,
            }),
            P::Prompt { role, content } => K::Prompt(v1::Prompt {
                role: enum_value::<_, v1::PromptRole>(role),
                content,
            }),
            P::Thought { content } => K::Thought(v1::Thought { content }),
            P::ToolOutput {
                call_id,
                success,
                output,
                error,
            } => K::ToolOutput(v1::ToolOutput {
                call_id,
                success,
                output: Some(json_to_wire(output)),
                error,
            }),
            P::ShellCommandOutput {
                call_id,
                exit_code,
                stdout,
                stderr,
            } => K::ShellCommandOutput(v1::ShellCommandOutput {
                call_id,
                exit_code,
                stdout,
                stderr,
            }),
            P::WebFetchOutput {
                call_id,
                url,
                code,
                result,
            } => K::WebFetchOutput(v1::WebFetchOutput {
                call_id,
                url,
                code: code.into(),
                result,
            }),
            P::FileOperationResult {
                call_id,
                success,
                content,
                error,
            } => K::FileOperationResult(v1::FileOperationResult {
                call_id,
                success,
                content,
                error,
            }),
            P::Started {
                agent,
                task,
                session_id,
            } => K::Started(v1::Started {
                agent: Some(agent.into()),
                task,
                session_id,
            }),
            P::Completed { summary } => K::Completed(v1::Completed { summary }),
            P::Failed { reason } => K::Failed(v1::Failed { reason }),
            P::Terminated {
                reason,
                terminated_by,
            } => K::Terminated(v1::Terminated {
                reason,
                terminated_by: Some(terminated_by.into()),
            }),
            P::Suspended { reason } => K::Suspended(v1::Suspended { reason }),
            P::Resumed { resumed_by } => K::Resumed(v1::Resumed {
                resumed_by: Some(resumed_by.into()),
            }),
            P::Adjudicated(verdict) => K::Adjudicated(verdict.into()),
            P::Snapshot {
                working_dir,
                open_files,
                git_branch,
                variables,
            } => K::Snapshot(v1::Snapshot {
                working_dir,
                open_files,
                git_branch,
                variables: variables
                    .into_iter()
                    .map(|(k, v)| (k, json_to_wire(v)))
                    .collect(),
            }),
        };
        Self { kind: Some(kind) }
    }
}

impl TryFrom<v1::Payload> for model::Payload {
    type Error = DecodeError;

    fn try_from(payload: v1::Payload) -> Decoded<Self> {
        use model::Payload as P;
        use v1::payload::Kind as K;
        Ok(match required(payload.kind, "kind")? {
            K::ToolCall(c) => P::ToolCall {
                call_id: c.call_id,
                tool: c.tool,
                arguments: json_or_null(c.arguments)
                    .map_err(|e| e.inside("tool_call.arguments"))?,
            },
            K::ShellCommand(c) => P::ShellCommand {
                call_id: c.call_id,
                command: c.command,
                working_dir: c.working_dir,
            },
            K::WebFetch(c) => P::WebFetch {
                call_id: c.call_id,
                url: c.url,
                prompt: c.prompt,
                method: c.method,
                body: c.body,
            },
            K::FileOperation(c) => P::FileOperation {
                operation: WireEnum::decode(c.operation, "file_operation.operation")?,
                call_id: c.call_id,
                path: c.path,
                content: c.content,
                old_content: c.old_content,
            },
            K::Prompt(p) => P::Prompt {
                role: WireEnum::decode(p.role, "prompt.role")?,
                content: p.content,
            },
            K::Thought(t) => P::Thought { content: t.content },
            K::ToolOutput(o) => P::ToolOutput {
                call_id: o.call_id,
                success: o.success,
                output: json_or_null(o.output).map_err(|e| e.inside("tool_output.output"))?,
                error: o.error,
            },
            K::ShellCommandOutput(o) => P::ShellCommandOutput {
                call_id: o.call_id,
                exit_code: o.exit_code,
                stdout: o.stdout,
                stderr: o.stderr,
            },
            K::WebFetchOutput(o) => P::WebFetchOutput {
                code: u16::try_from(o.code).map_err(|_| {
                    DecodeError::new(
                        "web_fetch_output.code",
                        format!("{} is not an HTTP status", o.code),
                    )
                })?,
                call_id: o.call_id,
                url: o.url,
                result: o.result,
            },
            K::FileOperationResult(r) => P::FileOperationResult {
                call_id: r.call_id,
                success: r.success,
                content: r.content,
                error: r.error,
            },
            K::Started(s) => P::Started {
                agent: nested(s.agent, "started.agent", TryInto::try_into)?,
                task: s.task,
                session_id: s.session_id,
            },
            K::Completed(c) => P::Completed { summary: c.summary },
            K::Failed(f) => P::Failed { reason: f.reason },
            K::Terminated(t) => P::Terminated {
                reason: t.reason,
                terminated_by: nested(
                    t.terminated_by,
                    "terminated.terminated_by",
                    TryInto::try_into,
                )?,
            },
            K::Suspended(s) => P::Suspended { reason: s.reason },
            K::Resumed(r) => P::Resumed {
                resumed_by: nested(r.resumed_by, "resumed.resumed_by", TryInto::try_into)?,
            },
            K::Adjudicated(a) => P::Adjudicated(
                a.try_into()
                    .map_err(|e: DecodeError| e.inside("adjudicated"))?,
            ),
            K::Snapshot(s) => P::Snapshot {
                working_dir: s.working_dir,
                open_files: s.open_files,
                git_branch: s.git_branch,
                variables: s
                    .variables
                    .into_iter()
                    .map(|(k, v)| {
                        let value = json_from_wire(v)
                            .map_err(|e| e.inside(&format!("snapshot.variables[{k}]")))?;
                        Ok((k, value))
                    })
                    .collect::<Decoded<BTreeMap<_, _>>>()?,
            },
        })
    }
}

// ---- Verdicts ------------------------------------------------------------

impl From<model::Adjudicated> for v1::Adjudicated {
    fn from(a: model::Adjudicated) -> Self {
        Self {
            decision: enum_value::<_, v1::Decision>(a.decision),
            mode: enum_value::<_, v1::Mode>(a.mode),
            reason: a.reason,
            policies: a.policies.into_iter().map(Into::into).collect(),
            would_be: a.would_be.map(enum_value::<_, v1::Decision>),
            shadow_matches: a.shadow_matches.into_iter().map(Into::into).collect(),
            guardrails: a.guardrails.map(json_to_wire),
            steering: a.steering,
            decision_id: a.decision_id,
            policy_revision: a.policy_revision,
        }
    }
}

impl TryFrom<v1::Adjudicated> for model::Adjudicated {
    type Error = DecodeError;

    fn try_from(a: v1::Adjudicated) -> Decoded<Self> {
        Ok(Self {
            decision: WireEnum::decode(a.decision, "decision")?,
            mode: WireEnum::decode(a.mode, "mode")?,
            reason: a.reason,
            policies: a.policies.into_iter().map(Into::into).collect(),
            would_be: a
                .would_be
                .map(|d| WireEnum::decode(d, "would_be"))
                .transpose()?,
            shadow_matches: a.shadow_matches.into_iter().map(Into::into).collect(),
            guardrails: optional(a.guardrails, "guardrails", json_from_wire)?,
            steering: a.steering,
            decision_id: a.decision_id,
            policy_revision: a.policy_revision,
        })
    }
}

// ---- Records -------------------------------------------------------------

impl From<model::TrajectoryState> for v1::TrajectoryState {
    fn from(s: model::TrajectoryState) -> Self {
        Self {
            step_count: s.step_count,
            denial_count: s.denial_count,
            escalation_count: s.escalation_count,
            secrets_seen: s.secrets_seen,
            untrusted_seen: s.untrusted_seen,
            pending_calls: s.pending_calls.into_iter().map(Into::into).collect(),
            tools_used: s.tools_used.into_iter().collect(),
            untrusted_commands: s.untrusted_commands.into_iter().collect(),
            provenance: Some(s.provenance.into()),
            written_scripts: s.written_scripts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<model::provenance::Provenance> for v1::Provenance {
    fn from(p: model::provenance::Provenance) -> Self {
        Self {
            values: p
                .values
                .into_iter()
                .map(|(fingerprint, o)| v1::ProvenanceValue {
                    fingerprint,
                    user: o.user,
                    observed: o.observed,
                    flagged: o.flagged,
                    credential: o.credential,
                    source: o.source,
                    order: o.order,
                })
                .collect(),
            sources: p.sources.into_iter().map(Into::into).collect(),
            next_source: p.next_source,
            next_order: p.next_order,
            user_effects: p.user_effects.into_iter().collect(),
            content_effects: p.content_effects.into_iter().collect(),
            user_prompts: p.user_prompts,
            flagged_seen: p.flagged_seen,
            tool_effects: p.tool_effects.into_iter().collect(),
        }
    }
}

impl From<v1::Provenance> for model::provenance::Provenance {
    fn from(p: v1::Provenance) -> Self {
        Self {
            values: p
                .values
                .into_iter()
                .map(|v| {
                    let origin = model::provenance::ValueOrigin {
                        user: v.user,
                        observed: v.observed,
                        flagged: v.flagged,
                        credential: v.credential,
                        source: v.source,
                        order: v.order,
                    };
                    (v.fingerprint, origin)
                })
                .collect(),
            sources: p.sources.into_iter().map(Into::into).collect(),
            next_source: p.next_source,
            next_order: p.next_order,
            user_effects: p.user_effects.into_iter().collect(),
            content_effects: p.content_effects.into_iter().collect(),
            user_prompts: p.user_prompts,
            flagged_seen: p.flagged_seen,
            tool_effects: p.tool_effects.into_iter().collect(),
        }
    }
}

impl From<v1::TrajectoryState> for model::TrajectoryState {
    fn from(s: v1::TrajectoryState) -> Self {
        Self {
            step_count: s.step_count,
            denial_count: s.denial_count,
            escalation_count: s.escalation_count,
            secrets_seen: s.secrets_seen,
            untrusted_seen: s.untrusted_seen,
            pending_calls: s.pending_calls.into_iter().map(Into::into).collect(),
            tools_used: s.tools_used.into_iter().collect(),
            untrusted_commands: s.untrusted_commands.into_iter().collect(),
            provenance: s.provenance.map(Into::into).unwrap_or_default(),
            written_scripts: s.written_scripts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<store::TrajectorySummary> for v1::TrajectorySummary {
    fn from(t: store::TrajectorySummary) -> Self {
        Self {
            id: t.id,
            agent_id: t.agent_id,
            session_id: t.session_id,
            status: enum_value::<_, v1::TrajectoryStatus>(t.status),
            created_at: Some(timestamp_to_wire(t.created_at)),
            updated_at: Some(timestamp_to_wire(t.updated_at)),
            event_count: t.event_count,
            state: Some(t.state.into()),
        }
    }
}

/// Decodes a summary received from `tenant`'s server: the tenant is the
/// caller's, never sent on the wire.
pub fn summary_from_wire(
    t: v1::TrajectorySummary,
    tenant: &store::TenantId,
) -> Decoded<store::TrajectorySummary> {
    Ok(store::TrajectorySummary {
        status: WireEnum::decode(t.status, "status")?,
        created_at: time_field(t.created_at, "created_at")?,
        updated_at: time_field(t.updated_at, "updated_at")?,
        state: t.state.unwrap_or_default().into(),
        id: t.id,
        tenant: tenant.clone(),
        agent_id: t.agent_id,
        session_id: t.session_id,
        event_count: t.event_count,
    })
}

impl From<store::StoredEvent> for v1::RecordedEvent {
    fn from(e: store::StoredEvent) -> Self {
        Self {
            seq: e.seq,
            event: Some(e.event.into()),
            adjudicated: e.adjudication.map(Into::into),
            approval: None,
        }
    }
}

impl TryFrom<v1::RecordedEvent> for store::StoredEvent {
    type Error = DecodeError;

    fn try_from(e: v1::RecordedEvent) -> Decoded<Self> {
        Ok(Self {
            seq: e.seq,
            event: nested(e.event, "event", TryInto::try_into)?,
            adjudication: optional(e.adjudicated, "adjudicated", TryInto::try_into)?,
        })
    }
}

impl From<store::AgentRecord> for v1::AgentRecord {
    fn from(a: store::AgentRecord) -> Self {
        Self {
            agent: Some(a.agent.into()),
            first_seen: Some(timestamp_to_wire(a.first_seen)),
            last_seen: Some(timestamp_to_wire(a.last_seen)),
            trajectory_count: a.trajectory_count,
            step_count: a.step_count,
            denial_count: a.denial_count,
            escalation_count: a.escalation_count,
        }
    }
}

/// Decodes an agent record received from `tenant`'s server.
pub fn agent_record_from_wire(
    a: v1::AgentRecord,
    tenant: &store::TenantId,
) -> Decoded<store::AgentRecord> {
    Ok(store::AgentRecord {
        agent: nested(a.agent, "agent", TryInto::try_into)?,
        tenant: tenant.clone(),
        first_seen: time_field(a.first_seen, "first_seen")?,
        last_seen: time_field(a.last_seen, "last_seen")?,
        trajectory_count: a.trajectory_count,
        step_count: a.step_count,
        denial_count: a.denial_count,
        escalation_count: a.escalation_count,
    })
}

impl From<store::AdjudicationRecord> for v1::AdjudicationRecord {
    fn from(a: store::AdjudicationRecord) -> Self {
        Self {
            event_id: a.event_id,
            trajectory_id: a.trajectory_id,
            agent_id: a.agent_id,
            seq: a.seq,
            timestamp: Some(timestamp_to_wire(a.timestamp)),
            kind: a.kind,
            adjudicated: Some(a.adjudication.into()),
        }
    }
}

impl TryFrom<v1::AdjudicationRecord> for store::AdjudicationRecord {
    type Error = DecodeError;

    fn try_from(a: v1::AdjudicationRecord) -> Decoded<Self> {
        Ok(Self {
            timestamp: time_field(a.timestamp, "timestamp")?,
            adjudication: nested(a.adjudicated, "adjudicated", TryInto::try_into)?,
            event_id: a.event_id,
            trajectory_id: a.trajectory_id,
            agent_id: a.agent_id,
            seq: a.seq,
            kind: a.kind,
        })
    }
}

// ---- Standing approvals ----------------------------------------------------

impl From<model::ActionShape> for v1::ActionShape {
    fn from(shape: model::ActionShape) -> Self {
        use v1::action_shape::Kind;
        let kind = match shape {
            model::ActionShape::Shell { commands } => Kind::Shell(v1::ShellShape {
                commands: commands.into_iter().map(Into::into).collect(),
            }),
            model::ActionShape::File { operation, path } => Kind::File(v1::FileShape {
                operation: enum_value::<_, v1::FileOperationKind>(operation),
                path,
            }),
            model::ActionShape::Web { host } => Kind::Web(v1::WebShape { host }),
            model::ActionShape::Tool { tool, target } => Kind::Tool(v1::ToolShape { tool, target }),
        };
        Self { kind: Some(kind) }
    }
}

impl TryFrom<v1::ActionShape> for model::ActionShape {
    type Error = DecodeError;

    fn try_from(shape: v1::ActionShape) -> Decoded<Self> {
        use v1::action_shape::Kind;
        Ok(match required(shape.kind, "kind")? {
            Kind::Shell(shell) => {
                // Coverage checks look commands up in order.
                let mut commands: Vec<model::CommandShape> =
                    shell.commands.into_iter().map(Into::into).collect();
                commands.sort();
                commands.dedup();
                model::ActionShape::Shell { commands }
            }
            Kind::File(file) => model::ActionShape::File {
                operation: model::FileOperationKind::decode(file.operation, "file.operation")?,
                path: file.path,
            },
            Kind::Web(web) => model::ActionShape::Web { host: web.host },
            Kind::Tool(tool) => model::ActionShape::Tool {
                tool: tool.tool,
                target: tool.target,
            },
        })
    }
}

impl From<model::Grant> for v1::Grant {
    fn from(grant: model::Grant) -> Self {
        Self {
            shape: Some(grant.shape.into()),
            scope: enum_value::<_, v1::GrantScope>(grant.scope),
            granted_by: Some(grant.granted_by.into()),
            granted_at: Some(timestamp_to_wire(grant.granted_at)),
        }
    }
}

impl TryFrom<v1::Grant> for model::Grant {
    type Error = DecodeError;

    fn try_from(grant: v1::Grant) -> Decoded<Self> {
        Ok(model::Grant {
            shape: nested(grant.shape, "shape", model::ActionShape::try_from)?,
            scope: model::GrantScope::decode(grant.scope, "scope")?,
            granted_by: nested(grant.granted_by, "granted_by", model::Actor::try_from)?,
            granted_at: time_field(grant.granted_at, "granted_at")?,
        })
    }
}

/// The agent and grant a `PutGrant` request carries.
pub fn put_grant_from_wire(request: v1::PutGrantRequest) -> Decoded<(String, model::Grant)> {
    let grant = nested(request.grant, "grant", model::Grant::try_from)?;
    Ok((request.agent_id, grant))
}

// ---- Approvals by an operator ----------------------------------------------

impl From<store::ApprovalRecord> for v1::Approval {
    fn from(a: store::ApprovalRecord) -> Self {
        let status = enum_value::<_, v1::ApprovalStatus>(a.state.status());
        let settled_at = a.state.settled_at().map(timestamp_to_wire);
        let (decision, decided_by, reason) = match a.state {
            store::ApprovalState::Decided {
                approval,
                decided_by,
                reason,
                ..
            } => (
                enum_value::<_, v1::ApprovalDecision>(approval),
                Some(decided_by.into()),
                reason,
            ),
            _ => (0, None, None),
        };
        Self {
            id: a.id,
            event_id: a.event_id,
            trajectory_id: a.trajectory_id,
            seq: a.seq,
            agent_id: a.agent_id,
            session_id: a.session_id,
            action: Some(a.action.into()),
            shape: a.shape.map(Into::into),
            verdict: Some(a.verdict.into()),
            created_at: Some(timestamp_to_wire(a.created_at)),
            expires_at: Some(timestamp_to_wire(a.expires_at)),
            status,
            decision,
            decided_by,
            reason,
            settled_at,
        }
    }
}

/// Decodes an approval received from `tenant`'s server.
pub fn approval_from_wire(
    a: v1::Approval,
    tenant: &store::TenantId,
) -> Decoded<store::ApprovalRecord> {
    let state = match store::ApprovalStatus::decode(a.status, "status")? {
        store::ApprovalStatus::Pending => store::ApprovalState::Pending,
        store::ApprovalStatus::Decided => store::ApprovalState::Decided {
            approval: model::Approval::decode(a.decision, "decision")?,
            decided_by: nested(a.decided_by, "decided_by", model::Actor::try_from)?,
            reason: a.reason,
            decided_at: time_field(a.settled_at, "settled_at")?,
        },
        store::ApprovalStatus::Expired => store::ApprovalState::Expired {
            expired_at: time_field(a.settled_at, "settled_at")?,
        },
    };
    Ok(store::ApprovalRecord {
        action: nested(a.action, "action", model::Payload::try_from)?,
        shape: optional(a.shape, "shape", model::ActionShape::try_from)?,
        verdict: nested(a.verdict, "verdict", model::Adjudicated::try_from)?,
        created_at: time_field(a.created_at, "created_at")?,
        expires_at: time_field(a.expires_at, "expires_at")?,
        id: a.id,
        tenant: tenant.clone(),
        event_id: a.event_id,
        trajectory_id: a.trajectory_id,
        seq: a.seq,
        agent_id: a.agent_id,
        session_id: a.session_id,
        state,
    })
}

// ---- Policy revisions ----------------------------------------------------

mirror!(store::PolicyFile, v1::PolicyFile { name, text });

impl From<store::PolicyRevision> for v1::PolicyRevision {
    fn from(r: store::PolicyRevision) -> Self {
        Self {
            revision: r.revision,
            pushed_at: Some(timestamp_to_wire(r.pushed_at)),
            pushed_by: r.pushed_by,
            message: r.message,
            policies: r.policies,
        }
    }
}

impl TryFrom<v1::PolicyRevision> for store::PolicyRevision {
    type Error = DecodeError;

    fn try_from(r: v1::PolicyRevision) -> Decoded<Self> {
        Ok(Self {
            revision: r.revision,
            pushed_at: time_field(r.pushed_at, "pushed_at")?,
            pushed_by: r.pushed_by,
            message: r.message,
            policies: r.policies,
        })
    }
}

impl From<store::PolicySources> for v1::PushPoliciesRequest {
    fn from(s: store::PolicySources) -> Self {
        Self {
            policies: s.policies.into_iter().map(Into::into).collect(),
            schemas: s.schemas.into_iter().map(Into::into).collect(),
            message: None,
        }
    }
}

/// The files of a pushed set.
pub fn policy_sources_from_wire(
    policies: Vec<v1::PolicyFile>,
    schemas: Vec<v1::PolicyFile>,
) -> store::PolicySources {
    store::PolicySources {
        policies: policies.into_iter().map(Into::into).collect(),
        schemas: schemas.into_iter().map(Into::into).collect(),
    }
}

// ---- Stored tokens -------------------------------------------------------

impl From<store::StoredToken> for v1::StoredToken {
    fn from(t: store::StoredToken) -> Self {
        Self {
            hash: t.hash,
            tenant: t.tenant.to_string(),
            role: t.role,
            name: t.name,
            created_at: Some(timestamp_to_wire(t.created_at)),
            created_by: t.created_by,
        }
    }
}
