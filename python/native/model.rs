//! The event model as Python classes. Each class wraps the Rust type it
//! names, so construction validates as the wire format does and `to_dict` /
//! `from_dict` are the JSON wire format itself. Class names and constructor
//! keywords follow the published `sondera-harness-client` where they
//! describe the same thing.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use sondera_model as model;
use sondera_model::Payload;

use crate::convert::{field, fresh_call_id, from_py, json_of, to_py};

/// Events larger than this are refused by `Event.from_json`.
const MAX_EVENT_JSON_BYTES: usize = 16 * 1024 * 1024;

/// A Python class that wraps one serde type of the model.
pub(crate) trait Wraps: Sized {
    type Inner: serde::Serialize + serde::de::DeserializeOwned + PartialEq;
    const NAME: &'static str;
    fn inner(&self) -> &Self::Inner;
    fn wrap(inner: Self::Inner) -> PyResult<Self>;
}

/// `to_dict`, `from_dict`, `__repr__` and `__eq__`, the same for every class.
macro_rules! common_methods {
    ($class:ident) => {
        #[pymethods]
        impl $class {
            /// This value in the JSON wire format, as Python data.
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_py(py, self.inner())
            }

            /// Reads a value from the JSON wire format.
            #[staticmethod]
            fn from_dict(data: &Bound<'_, PyAny>) -> PyResult<Self> {
                Self::wrap(from_py(data, <Self as Wraps>::NAME)?)
            }

            fn __repr__(&self) -> PyResult<String> {
                let json = serde_json::to_string(self.inner())
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Ok(format!("{}({json})", <Self as Wraps>::NAME))
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other
                    .cast::<Self>()
                    .is_ok_and(|other| other.get().inner() == self.inner())
            }
        }
    };
}

/// Getters that read a field of the JSON form.
macro_rules! json_getters {
    ($class:ident: $($name:ident),+) => {
        #[pymethods]
        impl $class {
            $(
                #[getter]
                fn $name<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                    field(py, self.inner(), stringify!($name))
                }
            )+
        }
    };
}

/// A class over a model struct.
macro_rules! record_class {
    ($(#[$doc:meta])* $class:ident wraps $inner:ty) => {
        $(#[$doc])*
        #[pyclass(module = "sondera_harness_adk._native", frozen, from_py_object)]
        #[derive(Clone)]
        pub struct $class(pub(crate) $inner);

        impl Wraps for $class {
            type Inner = $inner;
            const NAME: &'static str = stringify!($class);
            fn inner(&self) -> &$inner {
                &self.0
            }
            fn wrap(inner: $inner) -> PyResult<Self> {
                Ok(Self(inner))
            }
        }

        common_methods!($class);
    };
}

/// An enumeration whose values are the wire format's strings:
/// `Decision.ALLOW == Decision("allow") == "allow"`.
macro_rules! string_enum {
    ($(#[$doc:meta])* $class:ident wraps $inner:ty { $($attr:ident = $variant:expr),+ $(,)? }) => {
        $(#[$doc])*
        #[pyclass(module = "sondera_harness_adk._native", frozen, from_py_object)]
        #[derive(Clone, Copy)]
        pub struct $class(pub(crate) $inner);

        #[pymethods]
        impl $class {
            $(
                #[classattr]
                #[allow(non_snake_case)]
                fn $attr() -> Self {
                    Self($variant)
                }
            )+

            #[new]
            fn new(value: &Bound<'_, PyAny>) -> PyResult<Self> {
                if let Ok(same) = value.cast::<Self>() {
                    return Ok(*same.get());
                }
                let text: String = value.extract()?;
                serde_json::from_value(Value::String(text.to_lowercase()))
                    .map(Self)
                    .map_err(|_| {
                        let known: Vec<String> = vec![$(Self($variant).value()),+];
                        PyValueError::new_err(format!(
                            "unknown {} `{text}`: expected one of {}",
                            stringify!($class),
                            known.join(", ")
                        ))
                    })
            }

            /// The wire format's string.
            #[getter]
            fn value(&self) -> String {
                match serde_json::to_value(self.0) {
                    Ok(Value::String(s)) => s,
                    _ => unreachable!("string enums serialize to strings"),
                }
            }

            fn __str__(&self) -> String {
                self.value()
            }

            fn __repr__(&self) -> String {
                format!("{}.{}", stringify!($class), self.value().to_uppercase())
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                if let Ok(other) = other.cast::<Self>() {
                    return other.get().0 == self.0;
                }
                other.extract::<String>().is_ok_and(|s| s == self.value())
            }

            fn __hash__(&self) -> u64 {
                let mut hasher = DefaultHasher::new();
                self.value().hash(&mut hasher);
                hasher.finish()
            }
        }

        impl $class {
            /// `value` as this enumeration: an instance or its string.
            pub(crate) fn read(value: &Bound<'_, PyAny>) -> PyResult<$inner> {
                Ok(Self::new(value)?.0)
            }
        }
    };
}

string_enum! {
    /// What the policies decided: `ALLOW`, `DENY` or `ESCALATE` (ask a person).
    Decision wraps model::Decision {
        ALLOW = model::Decision::Allow,
        DENY = model::Decision::Deny,
        ESCALATE = model::Decision::Escalate,
    }
}

string_enum! {
    /// How verdicts are applied: `GOVERN` enforces them, `MONITOR` allows and
    /// reports what would have happened, `STEER` adds guidance to denials.
    Mode wraps model::Mode {
        GOVERN = model::Mode::Govern,
        MONITOR = model::Mode::Monitor,
        STEER = model::Mode::Steer,
    }
}

string_enum! {
    /// Who performed a step.
    ActorType wraps model::ActorKind {
        HUMAN = model::ActorKind::Human,
        AGENT = model::ActorKind::Agent,
        SYSTEM = model::ActorKind::System,
        POLICY = model::ActorKind::Policy,
    }
}

string_enum! {
    /// What a file operation does.
    FileOpType wraps model::FileOperationKind {
        READ = model::FileOperationKind::Read,
        WRITE = model::FileOperationKind::Write,
        EDIT = model::FileOperationKind::Edit,
        DELETE = model::FileOperationKind::Delete,
    }
}

string_enum! {
    /// Whose words a prompt is.
    PromptRole wraps model::PromptRole {
        USER = model::PromptRole::User,
        SYSTEM = model::PromptRole::System,
        ASSISTANT = model::PromptRole::Assistant,
    }
}

record_class! {
    /// Who performed a step: a person, an agent, the system or a policy.
    Actor wraps model::Actor
}

#[pymethods]
impl Actor {
    #[new]
    fn new(id: String, actor_type: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(model::Actor::new(ActorType::read(actor_type)?, id)))
    }

    #[staticmethod]
    fn human(id: String) -> Self {
        Self(model::Actor::human(id))
    }

    #[staticmethod]
    fn agent(id: String) -> Self {
        Self(model::Actor::agent(id))
    }

    #[staticmethod]
    fn system(id: String) -> Self {
        Self(model::Actor::system(id))
    }

    #[staticmethod]
    fn policy(id: String) -> Self {
        Self(model::Actor::new(model::ActorKind::Policy, id))
    }

    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }

    #[getter]
    fn actor_type(&self) -> ActorType {
        ActorType(self.0.kind)
    }
}

impl Actor {
    /// An actor given as an `Actor`, or as an id of `default_kind`.
    fn read(value: &Bound<'_, PyAny>, default_kind: model::ActorKind) -> PyResult<model::Actor> {
        if let Ok(actor) = value.cast::<Actor>() {
            return Ok(actor.get().0.clone());
        }
        if let Ok(id) = value.extract::<String>() {
            return Ok(model::Actor::new(default_kind, id));
        }
        from_py(value, "Actor")
    }
}

record_class! {
    /// Links between events: a correlation across a task, the event that
    /// caused this one, a parent trajectory's event.
    Causality wraps model::Causality
}
json_getters!(Causality: correlation_id, causation_id, parent_id);

#[pymethods]
impl Causality {
    #[new]
    #[pyo3(signature = (*, correlation_id=None, causation_id=None, parent_id=None))]
    fn new(
        correlation_id: Option<String>,
        causation_id: Option<String>,
        parent_id: Option<String>,
    ) -> Self {
        Self(model::Causality {
            correlation_id,
            causation_id,
            parent_id,
        })
    }
}

record_class! {
    /// The agent of the tree that executed a step (the principal stays the root).
    ExecutionAttribution wraps model::ExecutionAttribution
}
json_getters!(ExecutionAttribution: agent_name, agent_path);

#[pymethods]
impl ExecutionAttribution {
    #[new]
    #[pyo3(signature = (*, agent_name, agent_path=None))]
    fn new(agent_name: String, agent_path: Option<Vec<String>>) -> Self {
        Self(model::ExecutionAttribution {
            agent_path: agent_path.unwrap_or_else(|| vec![agent_name.clone()]),
            agent_name,
        })
    }
}

record_class! {
    /// A tool an agent can call, with its declaration.
    Tool wraps model::Tool
}
json_getters!(Tool: name, description, parameters, parameters_json_schema, response, response_json_schema, source, annotations);

#[pymethods]
impl Tool {
    #[new]
    #[pyo3(signature = (name, description="".to_string(), parameters=None, *, parameters_json_schema=None, response=None, response_json_schema=None, source=None, annotations=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        description: String,
        parameters: Option<&Bound<'_, PyAny>>,
        parameters_json_schema: Option<&Bound<'_, PyAny>>,
        response: Option<&Bound<'_, PyAny>>,
        response_json_schema: Option<&Bound<'_, PyAny>>,
        source: Option<String>,
        annotations: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let json =
            |value: Option<&Bound<'_, PyAny>>, what| value.map(|v| json_of(v, what)).transpose();
        Ok(Self(model::Tool {
            name,
            description,
            parameters: json(parameters, "tool parameters")?.unwrap_or(Value::Null),
            parameters_json_schema: json(parameters_json_schema, "parameters_json_schema")?,
            response: json(response, "tool response")?,
            response_json_schema: json(response_json_schema, "response_json_schema")?,
            source,
            annotations: json(annotations, "tool annotations")?,
        }))
    }
}

record_class! {
    /// A sub-agent of an agent tree, as the root's card describes it.
    ReActSubAgentDescriptor wraps model::SubAgent
}
json_getters!(ReActSubAgentDescriptor: name, parent_path, description, model, collaboration_mode, owned_tool_names);

#[pymethods]
impl ReActSubAgentDescriptor {
    #[new]
    #[pyo3(signature = (*, name, parent_path=None, description=None, model=None, collaboration_mode=None, owned_tool_names=None))]
    fn new(
        name: String,
        parent_path: Option<Vec<String>>,
        description: Option<String>,
        model: Option<String>,
        collaboration_mode: Option<&Bound<'_, PyAny>>,
        owned_tool_names: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let collaboration_mode = match collaboration_mode {
            Some(mode) => from_py(mode, "collaboration_mode")?,
            None => model::CollaborationMode::Transfer,
        };
        Ok(Self(model::SubAgent {
            name,
            parent_path: parent_path.unwrap_or_default(),
            description: description.unwrap_or_default(),
            model,
            collaboration_mode,
            owned_tool_names: owned_tool_names.unwrap_or_default(),
        }))
    }
}

record_class! {
    /// The card of a ReAct-style agent: its model, instruction, tools and sub-agents.
    ReActAgentCard wraps model::AgentCard
}
json_getters!(ReActAgentCard: model, system_instruction);

#[pymethods]
impl ReActAgentCard {
    #[new]
    #[pyo3(signature = (*, model=None, system_instruction=None, tools=None, sub_agents=None))]
    fn new(
        model: Option<String>,
        system_instruction: Option<String>,
        tools: Option<Vec<Tool>>,
        sub_agents: Option<Vec<ReActSubAgentDescriptor>>,
    ) -> Self {
        Self(model::AgentCard::React {
            model,
            system_instruction: system_instruction.unwrap_or_default(),
            tools: tools.unwrap_or_default().into_iter().map(|t| t.0).collect(),
            sub_agents: sub_agents
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.0)
                .collect(),
        })
    }

    #[getter]
    fn tools(&self) -> Vec<Tool> {
        let model::AgentCard::React { tools, .. } = &self.0;
        tools.iter().cloned().map(Tool).collect()
    }

    #[getter]
    fn sub_agents(&self) -> Vec<ReActSubAgentDescriptor> {
        let model::AgentCard::React { sub_agents, .. } = &self.0;
        sub_agents
            .iter()
            .cloned()
            .map(ReActSubAgentDescriptor)
            .collect()
    }
}

record_class! {
    /// The card attached to an agent: what it is and what it can do.
    AgentCard wraps model::AgentCard
}

#[pymethods]
impl AgentCard {
    #[staticmethod]
    fn react(card: ReActAgentCard) -> Self {
        Self(card.0)
    }

    #[getter]
    fn variant(&self) -> &'static str {
        match self.0 {
            model::AgentCard::React { .. } => "react",
        }
    }

    #[getter]
    fn react_card(&self) -> ReActAgentCard {
        ReActAgentCard(self.0.clone())
    }
}

impl AgentCard {
    fn read(value: &Bound<'_, PyAny>) -> PyResult<model::AgentCard> {
        if let Ok(card) = value.cast::<AgentCard>() {
            return Ok(card.get().0.clone());
        }
        if let Ok(card) = value.cast::<ReActAgentCard>() {
            return Ok(card.get().0.clone());
        }
        from_py(value, "AgentCard")
    }
}

record_class! {
    /// An agent: the principal policies judge.
    Agent wraps model::Agent
}
json_getters!(Agent: platform);

#[pymethods]
impl Agent {
    #[new]
    #[pyo3(signature = (id, provider, *, platform=None, card=None))]
    fn new(
        id: String,
        provider: String,
        platform: Option<String>,
        card: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        if id.trim().is_empty() {
            return Err(PyValueError::new_err("Agent id must not be empty"));
        }
        Ok(Self(model::Agent {
            id,
            provider,
            platform,
            card: card.map(AgentCard::read).transpose()?.map(Arc::new),
        }))
    }

    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }

    #[getter]
    fn provider(&self) -> &str {
        &self.0.provider
    }

    #[getter]
    fn card(&self) -> Option<AgentCard> {
        self.0.card.as_deref().cloned().map(AgentCard)
    }
}

impl Agent {
    pub(crate) fn read(value: &Bound<'_, PyAny>) -> PyResult<model::Agent> {
        if let Ok(agent) = value.cast::<Agent>() {
            return Ok(agent.get().0.clone());
        }
        from_py(value, "Agent")
    }
}

record_class! {
    /// A policy that decided a verdict, with its annotations.
    PolicyMetadata wraps model::PolicyMetadata
}
json_getters!(PolicyMetadata: policy_id, description, escalate, escalate_arg);

#[pymethods]
impl PolicyMetadata {
    #[new]
    #[pyo3(signature = (*, policy_id, description=None, escalate=false, escalate_arg=None, metadata=None))]
    fn new(
        policy_id: String,
        description: Option<String>,
        escalate: bool,
        escalate_arg: Option<String>,
        metadata: Option<BTreeMap<String, String>>,
    ) -> Self {
        Self(model::PolicyMetadata {
            policy_id,
            description,
            escalate,
            escalate_arg,
            annotations: metadata.unwrap_or_default(),
        })
    }

    /// The policy's annotations.
    #[getter]
    fn metadata(&self) -> BTreeMap<String, String> {
        self.0.annotations.clone()
    }
}

record_class! {
    /// A verdict: the decision, the mode it was made in, why, and the
    /// policies that made it.
    Adjudicated wraps model::Adjudicated
}
json_getters!(Adjudicated: reason, steering, guardrails, decision_id, policy_revision);

#[pymethods]
impl Adjudicated {
    #[new]
    #[pyo3(signature = (decision, *, mode=None, reason=None, metadata=None, guardrails=None, steering=None))]
    fn new(
        decision: &Bound<'_, PyAny>,
        mode: Option<&Bound<'_, PyAny>>,
        reason: Option<String>,
        metadata: Option<Vec<PolicyMetadata>>,
        guardrails: Option<&Bound<'_, PyAny>>,
        steering: Option<String>,
    ) -> PyResult<Self> {
        let mode = mode.map(Mode::read).transpose()?.unwrap_or_default();
        let mut verdict = model::Adjudicated::allow(mode, String::new());
        verdict.decision = Decision::read(decision)?;
        verdict.reason = reason;
        verdict.policies = metadata
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.0)
            .collect();
        verdict.guardrails = guardrails.map(|g| json_of(g, "guardrails")).transpose()?;
        verdict.steering = steering;
        Ok(Self(verdict))
    }

    #[staticmethod]
    fn allow() -> PyResult<Self> {
        Self::of(model::Decision::Allow)
    }

    #[staticmethod]
    fn deny() -> PyResult<Self> {
        Self::of(model::Decision::Deny)
    }

    #[staticmethod]
    fn escalate() -> PyResult<Self> {
        Self::of(model::Decision::Escalate)
    }

    #[getter]
    fn decision(&self) -> Decision {
        Decision(self.0.decision)
    }

    #[getter]
    fn mode(&self) -> Mode {
        Mode(self.0.mode)
    }

    /// The policies that decided, with their annotations.
    #[getter]
    fn metadata(&self) -> Vec<PolicyMetadata> {
        self.0
            .policies
            .iter()
            .cloned()
            .map(PolicyMetadata)
            .collect()
    }

    /// The ids of the policies that decided.
    #[getter]
    fn policy_ids(&self) -> Vec<String> {
        self.0.policy_ids().map(str::to_string).collect()
    }

    /// In monitor mode, what governing would have decided.
    #[getter]
    fn would_be(&self) -> Option<Decision> {
        self.0.would_be.map(Decision)
    }

    /// Shadow policies (`@mode("monitor")`) that matched, reported only.
    #[getter]
    fn shadow_matches(&self) -> Vec<PolicyMetadata> {
        self.0
            .shadow_matches
            .iter()
            .cloned()
            .map(PolicyMetadata)
            .collect()
    }

    #[getter]
    fn is_allowed(&self) -> bool {
        self.0.is_allowed()
    }

    /// What the agent reads instead of a step that did not run: the
    /// verdict's reason (or `default_reason`) and the policies that decided.
    #[pyo3(signature = (default_reason=None))]
    fn deny_message(&self, default_reason: Option<String>) -> String {
        let mut verdict = self.0.clone();
        if verdict.reason.is_none() {
            verdict.reason = default_reason;
        }
        verdict.deny_message()
    }
}

impl Adjudicated {
    fn of(decision: model::Decision) -> PyResult<Self> {
        let mut verdict = model::Adjudicated::allow(model::Mode::Govern, String::new());
        verdict.decision = decision;
        verdict.reason = None;
        Ok(Self(verdict))
    }
}

/// Payload classes: each wraps a `Payload` of one variant.
macro_rules! payload_class {
    ($(#[$doc:meta])* $class:ident = $kind:literal; getters: $($getter:ident),*) => {
        $(#[$doc])*
        #[pyclass(module = "sondera_harness_adk._native", frozen, from_py_object)]
        #[derive(Clone)]
        pub struct $class(pub(crate) Payload);

        impl Wraps for $class {
            type Inner = Payload;
            const NAME: &'static str = stringify!($class);
            fn inner(&self) -> &Payload {
                &self.0
            }
            fn wrap(inner: Payload) -> PyResult<Self> {
                if inner.kind() != $kind {
                    return Err(PyValueError::new_err(format!(
                        "a {} payload has type `{}`, not `{}`",
                        stringify!($class),
                        $kind,
                        inner.kind()
                    )));
                }
                Ok(Self(inner))
            }
        }

        #[pymethods]
        impl $class {
            /// This payload in the JSON wire format, as Python data.
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_py(py, &self.0)
            }

            /// Reads a payload from the JSON wire format (`type` may be left out).
            #[staticmethod]
            fn from_dict(data: &Bound<'_, PyDict>) -> PyResult<Self> {
                let data = data.copy()?;
                if !data.contains("type")? {
                    data.set_item("type", $kind)?;
                }
                Self::wrap(from_py(data.as_any(), stringify!($class))?)
            }

            fn __repr__(&self) -> PyResult<String> {
                let json = serde_json::to_string(&self.0)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Ok(format!("{}({json})", stringify!($class)))
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other.cast::<Self>().is_ok_and(|other| other.get().0 == self.0)
            }

            /// The payload's type in the wire format (`shell_command`, ...).
            #[getter]
            fn event_type(&self) -> &'static str {
                $kind
            }

            $(
                #[getter]
                fn $getter<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                    field(py, &self.0, stringify!($getter))
                }
            )*
        }
    };
}

payload_class! {
    /// A call of a tool that is not a shell command, file operation or web fetch.
    ToolCall = "tool_call"; getters: call_id, tool, arguments
}
payload_class! {
    /// A shell command the agent runs.
    ShellCommand = "shell_command"; getters: call_id, command, working_dir
}
payload_class! {
    /// A URL the agent fetches.
    WebFetch = "web_fetch"; getters: call_id, url, prompt, method, body
}
payload_class! {
    /// A file the agent reads, writes, edits or deletes.
    FileOperation = "file_operation"; getters: call_id, path, content, old_content
}
payload_class! {
    /// A message in the conversation: the user's, the system's or the model's.
    Prompt = "prompt"; getters: content
}
payload_class! {
    /// The model's reasoning.
    Thought = "thought"; getters: content
}
payload_class! {
    /// What a generic tool returned.
    ToolOutput = "tool_output"; getters: call_id, success, output, error
}
payload_class! {
    /// What a shell command printed and how it exited.
    ShellCommandOutput = "shell_command_output"; getters: call_id, exit_code, stdout, stderr
}
payload_class! {
    /// What a web fetch returned.
    WebFetchOutput = "web_fetch_output"; getters: call_id, url, code, result
}
payload_class! {
    /// How a file operation went, and what it read.
    FileOperationResult = "file_operation_result"; getters: call_id, success, content, error
}
payload_class! {
    /// A trajectory began.
    Started = "started"; getters: task, session_id
}
payload_class! {
    /// A trajectory ended successfully.
    Completed = "completed"; getters: summary
}
payload_class! {
    /// A trajectory ended in failure.
    Failed = "failed"; getters: reason
}
payload_class! {
    /// A trajectory was stopped from outside.
    Terminated = "terminated"; getters: reason
}
payload_class! {
    /// A trajectory was paused.
    Suspended = "suspended"; getters: reason
}
payload_class! {
    /// A paused or interrupted trajectory continued.
    Resumed = "resumed"; getters:
}
payload_class! {
    /// The agent's working environment at a point in time.
    Snapshot = "snapshot"; getters: working_dir, open_files, git_branch, variables
}

#[pymethods]
impl ToolCall {
    #[new]
    #[pyo3(signature = (tool, arguments=None, *, call_id=None))]
    fn new(
        tool: String,
        arguments: Option<&Bound<'_, PyAny>>,
        call_id: Option<String>,
    ) -> PyResult<Self> {
        let arguments = arguments
            .map(|a| json_of(a, "tool arguments"))
            .transpose()?;
        Ok(Self(Payload::ToolCall {
            call_id: call_id.unwrap_or_else(fresh_call_id),
            tool,
            arguments: arguments.unwrap_or_else(|| Value::Object(Default::default())),
        }))
    }
}

#[pymethods]
impl ShellCommand {
    #[new]
    #[pyo3(signature = (command, *, working_dir=None, call_id=None))]
    fn new(command: String, working_dir: Option<String>, call_id: Option<String>) -> Self {
        Self(Payload::ShellCommand {
            call_id: call_id.unwrap_or_else(fresh_call_id),
            command,
            working_dir,
        })
    }
}

#[pymethods]
impl WebFetch {
    #[new]
    #[pyo3(signature = (url, prompt="".to_string(), *, method=None, body=None, call_id=None))]
    fn new(
        url: String,
        prompt: String,
        method: Option<String>,
        body: Option<String>,
        call_id: Option<String>,
    ) -> Self {
        Self(Payload::WebFetch {
            call_id: call_id.unwrap_or_else(fresh_call_id),
            url,
            prompt,
            method,
            body,
        })
    }
}

#[pymethods]
impl FileOperation {
    #[new]
    #[pyo3(signature = (operation, path, *, content=None, old_content=None, call_id=None))]
    fn new(
        operation: &Bound<'_, PyAny>,
        path: String,
        content: Option<String>,
        old_content: Option<String>,
        call_id: Option<String>,
    ) -> PyResult<Self> {
        Ok(Self::of(
            FileOpType::read(operation)?,
            path,
            content,
            old_content,
        ))
        .map(|op| op.with_call_id(call_id))
    }

    #[staticmethod]
    fn read(path: String) -> Self {
        Self::of(model::FileOperationKind::Read, path, None, None)
    }

    #[staticmethod]
    fn write(path: String, content: String) -> Self {
        Self::of(model::FileOperationKind::Write, path, Some(content), None)
    }

    #[staticmethod]
    fn edit(path: String, old_content: String, new_content: String) -> Self {
        Self::of(
            model::FileOperationKind::Edit,
            path,
            Some(new_content),
            Some(old_content),
        )
    }

    #[staticmethod]
    fn delete(path: String) -> Self {
        Self::of(model::FileOperationKind::Delete, path, None, None)
    }

    #[getter]
    fn operation(&self) -> Option<FileOpType> {
        match &self.0 {
            Payload::FileOperation { operation, .. } => Some(FileOpType(*operation)),
            _ => None,
        }
    }
}

impl FileOperation {
    fn of(
        operation: model::FileOperationKind,
        path: String,
        content: Option<String>,
        old_content: Option<String>,
    ) -> Self {
        Self(Payload::FileOperation {
            call_id: fresh_call_id(),
            operation,
            path,
            content,
            old_content,
        })
    }

    fn with_call_id(mut self, id: Option<String>) -> Self {
        if let (Some(id), Payload::FileOperation { call_id, .. }) = (id, &mut self.0) {
            *call_id = id;
        }
        self
    }
}

#[pymethods]
impl Prompt {
    #[new]
    #[pyo3(signature = (content, role=None))]
    fn new(content: String, role: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let role = role
            .map(PromptRole::read)
            .transpose()?
            .unwrap_or(model::PromptRole::User);
        Ok(Self(Payload::Prompt { role, content }))
    }

    #[staticmethod]
    fn user(content: String) -> Self {
        Self(Payload::Prompt {
            role: model::PromptRole::User,
            content,
        })
    }

    #[staticmethod]
    fn system(content: String) -> Self {
        Self(Payload::Prompt {
            role: model::PromptRole::System,
            content,
        })
    }

    #[staticmethod]
    fn assistant(content: String) -> Self {
        Self(Payload::Prompt {
            role: model::PromptRole::Assistant,
            content,
        })
    }

    #[getter]
    fn role(&self) -> Option<PromptRole> {
        match &self.0 {
            Payload::Prompt { role, .. } => Some(PromptRole(*role)),
            _ => None,
        }
    }
}

#[pymethods]
impl Thought {
    #[new]
    fn new(thought: String) -> Self {
        Self(Payload::Thought { content: thought })
    }

    #[getter]
    fn thought<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        field(py, &self.0, "content")
    }
}

#[pymethods]
impl ToolOutput {
    #[new]
    #[pyo3(signature = (call_id, success, output=None, *, error=None))]
    fn new(
        call_id: String,
        success: bool,
        output: Option<&Bound<'_, PyAny>>,
        error: Option<String>,
    ) -> PyResult<Self> {
        let output = output.map(|o| json_of(o, "tool output")).transpose()?;
        Ok(Self(Payload::ToolOutput {
            call_id,
            success,
            output: output.unwrap_or(Value::Null),
            error,
        }))
    }

    #[staticmethod]
    fn from_success(call_id: String, output: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::new(call_id, true, Some(output), None)
    }

    #[staticmethod]
    fn from_error(call_id: String, error: String) -> PyResult<Self> {
        Self::new(call_id, false, None, Some(error))
    }
}

#[pymethods]
impl ShellCommandOutput {
    #[new]
    #[pyo3(signature = (call_id, exit_code, stdout="".to_string(), stderr="".to_string()))]
    fn new(call_id: String, exit_code: i64, stdout: String, stderr: String) -> Self {
        Self(Payload::ShellCommandOutput {
            call_id,
            exit_code,
            stdout,
            stderr,
        })
    }
}

#[pymethods]
impl WebFetchOutput {
    #[new]
    #[pyo3(signature = (call_id, url, code, result="".to_string()))]
    fn new(call_id: String, url: String, code: u16, result: String) -> Self {
        Self(Payload::WebFetchOutput {
            call_id,
            url,
            code,
            result,
        })
    }
}

#[pymethods]
impl FileOperationResult {
    #[new]
    #[pyo3(signature = (call_id, success, *, content=None, error=None))]
    fn new(call_id: String, success: bool, content: Option<String>, error: Option<String>) -> Self {
        Self(Payload::FileOperationResult {
            call_id,
            success,
            content,
            error,
        })
    }

    #[staticmethod]
    fn from_success(call_id: String) -> Self {
        Self::new(call_id, true, None, None)
    }

    #[staticmethod]
    fn from_error(call_id: String, error: String) -> Self {
        Self::new(call_id, false, None, Some(error))
    }
}

#[pymethods]
impl Started {
    #[new]
    #[pyo3(signature = (agent, *, task=None, session_id=None))]
    fn new(
        agent: &Bound<'_, PyAny>,
        task: Option<String>,
        session_id: Option<String>,
    ) -> PyResult<Self> {
        Ok(Self(Payload::Started {
            agent: Agent::read(agent)?,
            task,
            session_id,
        }))
    }

    #[getter]
    fn agent(&self) -> Option<Agent> {
        match &self.0 {
            Payload::Started { agent, .. } => Some(Agent(agent.clone())),
            _ => None,
        }
    }
}

#[pymethods]
impl Completed {
    #[new]
    #[pyo3(signature = (*, summary=None))]
    fn new(summary: Option<String>) -> Self {
        Self(Payload::Completed { summary })
    }
}

#[pymethods]
impl Failed {
    #[new]
    fn new(reason: String) -> Self {
        Self(Payload::Failed { reason })
    }
}

#[pymethods]
impl Terminated {
    /// `terminated_by` is an `Actor`, or the id of a person.
    #[new]
    fn new(reason: String, terminated_by: &Bound<'_, PyAny>) -> PyResult<Self> {
        let terminated_by = Actor::read(terminated_by, model::ActorKind::Human)?;
        Ok(Self(Payload::Terminated {
            reason,
            terminated_by,
        }))
    }

    #[getter]
    fn terminated_by(&self) -> Option<Actor> {
        match &self.0 {
            Payload::Terminated { terminated_by, .. } => Some(Actor(terminated_by.clone())),
            _ => None,
        }
    }
}

#[pymethods]
impl Suspended {
    #[new]
    fn new(reason: String) -> Self {
        Self(Payload::Suspended { reason })
    }
}

#[pymethods]
impl Resumed {
    /// `resumed_by` is an `Actor`, or the id of the system that resumed.
    #[new]
    fn new(resumed_by: &Bound<'_, PyAny>) -> PyResult<Self> {
        let resumed_by = Actor::read(resumed_by, model::ActorKind::System)?;
        Ok(Self(Payload::Resumed { resumed_by }))
    }

    #[getter]
    fn resumed_by(&self) -> Option<Actor> {
        match &self.0 {
            Payload::Resumed { resumed_by } => Some(Actor(resumed_by.clone())),
            _ => None,
        }
    }
}

#[pymethods]
impl Snapshot {
    #[new]
    #[pyo3(signature = (*, working_dir=None, git_branch=None, open_files=None, variables=None))]
    fn new(
        working_dir: Option<String>,
        git_branch: Option<String>,
        open_files: Option<Vec<String>>,
        variables: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let variables = variables
            .map(|v| from_py(v, "snapshot variables"))
            .transpose()?;
        Ok(Self(Payload::Snapshot {
            working_dir,
            open_files: open_files.unwrap_or_default(),
            git_branch,
            variables: variables.unwrap_or_default(),
        }))
    }
}

/// Every payload class, in one list: conversions in both directions use it.
macro_rules! for_each_payload {
    ($m:ident) => {
        $m!(
            ToolCall = "tool_call",
            ShellCommand = "shell_command",
            WebFetch = "web_fetch",
            FileOperation = "file_operation",
            Prompt = "prompt",
            Thought = "thought",
            ToolOutput = "tool_output",
            ShellCommandOutput = "shell_command_output",
            WebFetchOutput = "web_fetch_output",
            FileOperationResult = "file_operation_result",
            Started = "started",
            Completed = "completed",
            Failed = "failed",
            Terminated = "terminated",
            Suspended = "suspended",
            Resumed = "resumed",
            Snapshot = "snapshot"
        )
    };
}

/// A payload as the Python class of its variant.
pub(crate) fn payload_into_py(py: Python<'_>, payload: Payload) -> PyResult<Py<PyAny>> {
    macro_rules! into_class {
        ($($class:ident = $kind:literal),+) => {
            match payload.kind() {
                $($kind => Ok(Py::new(py, $class(payload))?.into_any()),)+
                _ => match payload {
                    Payload::Adjudicated(verdict) => Ok(Py::new(py, Adjudicated(verdict))?.into_any()),
                    other => Err(PyTypeError::new_err(format!("no Python class for `{}`", other.kind()))),
                },
            }
        };
    }
    for_each_payload!(into_class)
}

/// A payload from any payload class, an `Adjudicated`, or its wire-format dict.
pub(crate) fn payload_from_py(value: &Bound<'_, PyAny>) -> PyResult<Payload> {
    macro_rules! from_class {
        ($($class:ident = $kind:literal),+) => {
            $(
                if let Ok(p) = value.cast::<$class>() {
                    return Ok(p.get().0.clone());
                }
            )+
        };
    }
    for_each_payload!(from_class);
    if let Ok(verdict) = value.cast::<Adjudicated>() {
        return Ok(Payload::Adjudicated(verdict.get().0.clone()));
    }
    if value.cast::<PyDict>().is_ok() {
        return from_py(value, "payload");
    }
    Err(PyTypeError::new_err(format!(
        "expected an event payload (ToolCall, ShellCommand, Prompt, ...), got {}",
        value.get_type().name()?
    )))
}

/// The trajectory event envelope: one step of one agent's trajectory.
#[pyclass(module = "sondera_harness_adk._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct Event(pub(crate) model::Event);

impl Wraps for Event {
    type Inner = model::Event;
    const NAME: &'static str = "Event";
    fn inner(&self) -> &model::Event {
        &self.0
    }
    fn wrap(inner: model::Event) -> PyResult<Self> {
        inner
            .check()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self(inner))
    }
}

common_methods!(Event);
json_getters!(Event: provider_call_id);

#[pymethods]
impl Event {
    #[new]
    #[pyo3(signature = (agent, trajectory_id, event, *, actor=None, causality=None, execution=None, provider_call_id=None, event_id=None, timestamp=None, raw=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        agent: &Bound<'_, PyAny>,
        trajectory_id: String,
        event: &Bound<'_, PyAny>,
        actor: Option<&Bound<'_, PyAny>>,
        causality: Option<Causality>,
        execution: Option<ExecutionAttribution>,
        provider_call_id: Option<String>,
        event_id: Option<String>,
        timestamp: Option<String>,
        raw: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let _ = raw; // accepted for compatibility; events carry no raw copy
        let mut inner =
            model::Event::new(trajectory_id, &Agent::read(agent)?, payload_from_py(event)?);
        if let Some(actor) = actor {
            inner.actor = Actor::read(actor, model::ActorKind::Agent)?;
        }
        inner.causality = causality.map(|c| c.0).unwrap_or_default();
        inner.execution = execution.map(|e| e.0);
        inner.provider_call_id = provider_call_id;
        if let Some(id) = event_id {
            inner.event_id = id;
        }
        if let Some(timestamp) = timestamp {
            inner.timestamp = chrono::DateTime::parse_from_rfc3339(&timestamp)
                .map_err(|e| {
                    PyValueError::new_err(format!("timestamp `{timestamp}` is not RFC 3339: {e}"))
                })?
                .to_utc();
        }
        Self::wrap(inner)
    }

    #[getter]
    fn event_id(&self) -> &str {
        &self.0.event_id
    }

    #[getter]
    fn trajectory_id(&self) -> &str {
        &self.0.trajectory_id
    }

    #[getter]
    fn agent(&self) -> Agent {
        Agent(self.0.agent.clone())
    }

    /// When the event happened, RFC 3339.
    #[getter]
    fn timestamp(&self) -> String {
        self.0
            .timestamp
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    }

    /// The payload, as its class (`ShellCommand`, `Prompt`, ...).
    #[getter]
    fn event(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        payload_into_py(py, self.0.payload.clone())
    }

    /// `action`, `observation`, `control` or `state`.
    #[getter]
    fn category<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.0.payload.category())
    }

    #[getter]
    fn event_type(&self) -> &'static str {
        self.0.payload.kind()
    }

    #[getter]
    fn actor(&self) -> Actor {
        Actor(self.0.actor.clone())
    }

    #[getter]
    fn causality(&self) -> Causality {
        Causality(self.0.causality.clone())
    }

    #[getter]
    fn execution(&self) -> Option<ExecutionAttribution> {
        self.0.execution.clone().map(ExecutionAttribution)
    }

    /// The event in the JSON wire format.
    fn to_json(&self) -> String {
        self.0.to_json()
    }

    /// Reads an event from the JSON wire format; errors name line and column.
    #[staticmethod]
    fn from_json(json_str: &str) -> PyResult<Self> {
        model::Event::from_json(json_str, MAX_EVENT_JSON_BYTES)
            .map(Self)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

impl Event {
    /// An event given as an `Event`, its dict, or its JSON.
    pub(crate) fn read(value: &Bound<'_, PyAny>) -> PyResult<model::Event> {
        if let Ok(event) = value.cast::<Event>() {
            return Ok(event.get().0.clone());
        }
        if let Ok(text) = value.extract::<String>() {
            return Self::from_json(&text).map(|e| e.0);
        }
        Self::from_dict(value).map(|e| e.0)
    }
}

/// Every class of this module, for registration.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($class:ident = $kind:literal),+) => {
            $(module.add_class::<$class>()?;)+
        };
    }
    for_each_payload!(add);
    module.add_class::<Decision>()?;
    module.add_class::<Mode>()?;
    module.add_class::<ActorType>()?;
    module.add_class::<FileOpType>()?;
    module.add_class::<PromptRole>()?;
    module.add_class::<Actor>()?;
    module.add_class::<Causality>()?;
    module.add_class::<ExecutionAttribution>()?;
    module.add_class::<Tool>()?;
    module.add_class::<ReActSubAgentDescriptor>()?;
    module.add_class::<ReActAgentCard>()?;
    module.add_class::<AgentCard>()?;
    module.add_class::<Agent>()?;
    module.add_class::<PolicyMetadata>()?;
    module.add_class::<Adjudicated>()?;
    module.add_class::<Event>()?;
    Ok(())
}
