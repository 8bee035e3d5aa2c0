//! Turning an event and its trajectory's state into a Cedar request.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;

use cedar_policy::{
    Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, Request, RestrictedExpression,
};
use sondera_model::{Event, FileOperationKind, Payload, TrajectoryState};

use sondera_guard::content::Signals;
use sondera_guard::net::{self, Egress, HostAllowlist};
use sondera_guard::places::Place;
use sondera_guard::shell::{self, ShellAnalysis, ShellContext};

use crate::args::{ArgType, ArgumentTypeError};
use crate::error::EvaluationError;

/// Where the agent works: what shell paths are resolved against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The agent's workspace root; a command's default working directory.
    pub root: String,
    /// What `~` and `$HOME` stand for.
    pub home: String,
}

impl Workspace {
    pub fn new(root: impl Into<String>, home: impl Into<String>) -> Self {
        Self {
            root: root.into(),
            home: home.into(),
        }
    }

    /// The current directory and `$HOME` of this process.
    pub fn from_process() -> Self {
        let root = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "/".into());
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        Self { root, home }
    }
}

/// What requests are built against besides the event: where the agent works
/// and which hosts it may reach.
#[derive(Debug, Clone)]
pub(crate) struct Environment {
    pub workspace: Workspace,
    pub allowed_hosts: HostAllowlist,
}

/// The Cedar actions an event can be adjudicated as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionName {
    Prompt,
    Thought,
    PreToolUse,
    ToolOutput,
    ShellCommand,
    ShellCommandOutput,
    WebFetch,
    WebFetchOutput,
    FileRead,
    FileWrite,
    FileEdit,
    FileDelete,
    FileOperationResult,
}

impl ActionName {
    pub const ALL: [ActionName; 13] = [
        Self::Prompt,
        Self::Thought,
        Self::PreToolUse,
        Self::ToolOutput,
        Self::ShellCommand,
        Self::ShellCommandOutput,
        Self::WebFetch,
        Self::WebFetchOutput,
        Self::FileRead,
        Self::FileWrite,
        Self::FileEdit,
        Self::FileDelete,
        Self::FileOperationResult,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "Prompt",
            Self::Thought => "Thought",
            Self::PreToolUse => "PreToolUse",
            Self::ToolOutput => "ToolOutput",
            Self::ShellCommand => "ShellCommand",
            Self::ShellCommandOutput => "ShellCommandOutput",
            Self::WebFetch => "WebFetch",
            Self::WebFetchOutput => "WebFetchOutput",
            Self::FileRead => "FileRead",
            Self::FileWrite => "FileWrite",
            Self::FileEdit => "FileEdit",
            Self::FileDelete => "FileDelete",
            Self::FileOperationResult => "FileOperationResult",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The action `payload` is adjudicated as; `None` for lifecycle and
    /// state events, which policies do not govern.
    pub fn of(payload: &Payload) -> Option<Self> {
        Some(match payload {
            Payload::Prompt { .. } => Self::Prompt,
            Payload::Thought { .. } => Self::Thought,
            Payload::ToolCall { .. } => Self::PreToolUse,
            Payload::ToolOutput { .. } => Self::ToolOutput,
            Payload::ShellCommand { .. } => Self::ShellCommand,
            Payload::ShellCommandOutput { .. } => Self::ShellCommandOutput,
            Payload::WebFetch { .. } => Self::WebFetch,
            Payload::WebFetchOutput { .. } => Self::WebFetchOutput,
            Payload::FileOperation { operation, .. } => match operation {
                FileOperationKind::Read => Self::FileRead,
                FileOperationKind::Write => Self::FileWrite,
                FileOperationKind::Edit => Self::FileEdit,
                FileOperationKind::Delete => Self::FileDelete,
            },
            Payload::FileOperationResult { .. } => Self::FileOperationResult,
            _ => return None,
        })
    }
}

/// Entity type names and action ids, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    agent: EntityTypeName,
    trajectory: EntityTypeName,
    tool: EntityTypeName,
    message: EntityTypeName,
    file: EntityTypeName,
    actions: Vec<EntityUid>,
}

impl Names {
    pub(crate) fn new() -> Self {
        let ty = |name: &str| EntityTypeName::from_str(name).expect("valid entity type name");
        let action_type = ty("Sondera::Action");
        Self {
            agent: ty("Sondera::Agent"),
            trajectory: ty("Sondera::Trajectory"),
            tool: ty("Sondera::Tool"),
            message: ty("Sondera::Message"),
            file: ty("Sondera::File"),
            actions: ActionName::ALL
                .iter()
                .map(|a| {
                    EntityUid::from_type_name_and_id(action_type.clone(), EntityId::new(a.as_str()))
                })
                .collect(),
        }
    }

    pub(crate) fn action(&self, action: ActionName) -> &EntityUid {
        &self.actions[action.index()]
    }
}

fn uid(ty: &EntityTypeName, id: &str) -> EntityUid {
    EntityUid::from_type_name_and_id(ty.clone(), EntityId::new(id))
}

fn string(s: &str) -> RestrictedExpression {
    RestrictedExpression::new_string(s.to_string())
}

fn long(n: u64) -> RestrictedExpression {
    RestrictedExpression::new_long(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Everything Cedar needs to judge one event.
pub struct CedarRequest {
    pub action: ActionName,
    pub request: Request,
    pub entities: Entities,
    /// The content signals put into the context, for callers that need them
    /// too (the trajectory's taints), so large texts are scanned once.
    pub signals: Option<Signals>,
}

/// Builds the request for `event`, whose payload is adjudicated as `action`;
/// `lineage` holds the action entities the policies need (possibly none).
/// What a request is built with besides the event and state.
pub(crate) struct Inputs<'a> {
    pub names: &'a Names,
    pub lineage: &'a [Entity],
    pub tool_args: &'a BTreeMap<String, ArgType>,
    pub environment: &'a Environment,
}

pub(crate) fn build(
    inputs: &Inputs<'_>,
    action: ActionName,
    event: &Event,
    state: &TrajectoryState,
) -> Result<CedarRequest, EvaluationError> {
    let names = inputs.names;
    let fail = |message: String| EvaluationError::Request {
        action: action.as_str().to_string(),
        message,
    };
    let principal = uid(&names.agent, &event.agent.id);
    let trajectory = uid(&names.trajectory, &event.trajectory_id);
    let resource_entity = resource(names, &event.payload, &trajectory, state).map_err(fail)?;
    let resource = resource_entity
        .as_ref()
        .map_or_else(|| trajectory.clone(), Entity::uid);

    let mut context = vec![
        ("execution".to_string(), execution(event)),
        (
            "trajectory".to_string(),
            RestrictedExpression::new_entity_uid(trajectory.clone()),
        ),
    ];
    payload_fields(&event.payload, state, inputs, &mut context)?;
    let signals = sondera_guard::content::scanned_text(&event.payload)
        .map(|text| sondera_guard::content::signals(&text, &known_tools(state)));
    context.push((
        "signals".to_string(),
        content_signals(signals.as_ref().unwrap_or(&Signals::default())),
    ));
    let context = Context::from_pairs(context).map_err(|e| fail(e.to_string()))?;

    let mut entities = Vec::with_capacity(inputs.lineage.len() + 3);
    entities.extend_from_slice(inputs.lineage);
    entities.push(agent_entity(&principal, event).map_err(fail)?);
    entities.push(trajectory_entity(&trajectory, state).map_err(fail)?);
    entities.extend(resource_entity);
    let entities = Entities::from_entities(entities, None).map_err(|e| fail(e.to_string()))?;

    let request = Request::new(
        principal,
        names.action(action).clone(),
        resource,
        context,
        None,
    )
    .map_err(|e| fail(e.to_string()))?;
    Ok(CedarRequest {
        action,
        request,
        entities,
        signals,
    })
}

/// The agent's tools the trajectory knows of: those its card declares and
/// those it called.
fn known_tools(state: &TrajectoryState) -> Vec<&str> {
    let mut tools: Vec<&str> = state.tools_used.iter().map(String::as_str).collect();
    tools.extend(state.provenance.tool_effects.keys().map(String::as_str));
    tools.sort_unstable();
    tools.dedup();
    tools
}

/// Where the values a call acts on came from, as the `Provenance` record.
fn provenance_facts(facts: &sondera_guard::provenance::CallProvenance) -> RestrictedExpression {
    RestrictedExpression::new_record([
        (
            "side_effect".to_string(),
            RestrictedExpression::new_bool(facts.effect.is_some()),
        ),
        (
            "effect".to_string(),
            string(match (facts.effect, facts.effect_unknown) {
                (Some(effect), _) => effect.as_str(),
                (None, true) => "unknown",
                (None, false) => "",
            }),
        ),
        (
            "untrusted_targets".to_string(),
            strings(facts.untrusted_targets.iter().map(String::as_str)),
        ),
        (
            "flagged_targets".to_string(),
            strings(facts.flagged_targets.iter().map(String::as_str)),
        ),
        (
            "follows_flagged".to_string(),
            RestrictedExpression::new_bool(facts.follows_flagged),
        ),
        (
            "user_read_only".to_string(),
            RestrictedExpression::new_bool(facts.user_read_only),
        ),
        (
            "user_requested".to_string(),
            RestrictedExpression::new_bool(facts.user_requested),
        ),
    ])
    .expect("distinct keys")
}

fn agent_entity(uid: &EntityUid, event: &Event) -> Result<Entity, String> {
    let attrs = HashMap::from([
        ("provider".to_string(), string(&event.agent.provider)),
        (
            "platform".to_string(),
            string(event.agent.platform.as_deref().unwrap_or("")),
        ),
    ]);
    Entity::new(uid.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())
}

fn trajectory_entity(uid: &EntityUid, state: &TrajectoryState) -> Result<Entity, String> {
    // The current step counts: a budget of N steps forbids the (N+1)th.
    let attrs = HashMap::from([
        ("step_count".to_string(), long(state.step_count + 1)),
        ("denial_count".to_string(), long(state.denial_count)),
        ("escalation_count".to_string(), long(state.escalation_count)),
        (
            "secrets_seen".to_string(),
            RestrictedExpression::new_bool(state.secrets_seen),
        ),
        (
            "untrusted_seen".to_string(),
            RestrictedExpression::new_bool(state.untrusted_seen),
        ),
        (
            "tools_used".to_string(),
            strings(state.tools_used.iter().map(String::as_str)),
        ),
    ]);
    Entity::new(uid.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())
}

/// The resource entity of a payload; `None` when the trajectory itself is the resource.
fn resource(
    names: &Names,
    payload: &Payload,
    trajectory: &EntityUid,
    state: &TrajectoryState,
) -> Result<Option<Entity>, String> {
    let in_trajectory = || HashSet::from([trajectory.clone()]);
    let message = |id: &str, role: &str| {
        Entity::new(
            uid(&names.message, id),
            HashMap::from([("role".to_string(), string(role))]),
            in_trajectory(),
        )
        .map_err(|e| e.to_string())
    };
    let entity = match payload {
        Payload::Prompt { role, .. } => message(role.as_str(), role.as_str()),
        Payload::Thought { .. } => message("thought", "assistant"),
        Payload::ToolCall { tool, .. } => tool_entity(names, tool, in_trajectory()),
        Payload::ToolOutput { call_id, .. } => {
            tool_entity(names, &pending_target(state, call_id), in_trajectory())
        }
        Payload::FileOperation { path, .. } => file_entity(names, path),
        Payload::FileOperationResult { call_id, .. } => {
            file_entity(names, &pending_target(state, call_id))
        }
        _ => return Ok(None),
    };
    entity.map(Some)
}

fn tool_entity(names: &Names, tool: &str, parents: HashSet<EntityUid>) -> Result<Entity, String> {
    Entity::new(
        uid(&names.tool, tool),
        HashMap::from([("name".to_string(), string(tool))]),
        parents,
    )
    .map_err(|e| e.to_string())
}

fn file_entity(names: &Names, path: &str) -> Result<Entity, String> {
    Entity::new(
        uid(&names.file, path),
        HashMap::from([("path".to_string(), string(path))]),
        HashSet::new(),
    )
    .map_err(|e| e.to_string())
}

fn pending_target(state: &TrajectoryState, call_id: &str) -> String {
    state
        .pending(call_id)
        .map(|c| c.target.clone())
        .unwrap_or_default()
}

fn execution(event: &Event) -> RestrictedExpression {
    let (name, path, depth) = match &event.execution {
        Some(e) => (
            e.agent_name.as_str(),
            e.agent_path.join("/"),
            e.agent_path.len().saturating_sub(1),
        ),
        None => (event.agent.id.as_str(), event.agent.id.clone(), 0),
    };
    RestrictedExpression::new_record([
        ("agent_name".to_string(), string(name)),
        (
            "agent_path".to_string(),
            RestrictedExpression::new_string(path),
        ),
        ("depth".to_string(), long(depth as u64)),
    ])
    .expect("distinct keys")
}

type Fields = Vec<(String, RestrictedExpression)>;

fn put(fields: &mut Fields, key: &str, value: RestrictedExpression) {
    fields.push((key.to_string(), value));
}

fn put_opt(fields: &mut Fields, key: &str, value: Option<&String>) {
    if let Some(v) = value {
        put(fields, key, string(v));
    }
}

fn payload_fields(
    payload: &Payload,
    state: &TrajectoryState,
    inputs: &Inputs<'_>,
    f: &mut Fields,
) -> Result<(), EvaluationError> {
    match payload {
        Payload::Prompt { role, content } => {
            put(f, "role", string(role.as_str()));
            put(f, "content", string(content));
        }
        Payload::Thought { content } => put(f, "content", string(content)),
        Payload::ToolCall {
            call_id,
            tool,
            arguments,
        } => {
            put(f, "call_id", string(call_id));
            put(f, "tool", string(tool));
            put(
                f,
                "arguments",
                RestrictedExpression::new_string(arguments.to_string()),
            );
            put(f, "args", typed_args(inputs.tool_args, tool, arguments)?);
            let provenance = sondera_guard::provenance::of_call(&state.provenance, tool, arguments);
            put(f, "provenance", provenance_facts(&provenance));
            let egress = net::tool_call_egress(arguments);
            put(f, "egress", egress_facts(&egress, inputs.environment));
            let workspace = &inputs.environment.workspace;
            let paths = sondera_guard::path_arguments(arguments);
            let sensitive = paths
                .iter()
                .copied()
                .filter(|path| workspace.is_sensitive(path));
            put(f, "sensitive_paths", strings(sensitive));
            // Searching outside the workspace for secrets, or searching at
            // all inside a credential directory.
            let patterns: Vec<&str> = sondera_guard::search_patterns(arguments).collect();
            let searches_for_secrets = !patterns.is_empty()
                && paths.iter().any(|path| {
                    let outside =
                        !matches!(workspace.place(path), Place::Workspace | Place::Scratch);
                    let credentials =
                        sondera_guard::secrets::credential_directory(&workspace.resolve(path));
                    credentials
                        || outside
                            && patterns
                                .iter()
                                .any(|p| sondera_guard::secrets::names_secret(p))
                });
            put(
                f,
                "searches_for_secrets",
                RestrictedExpression::new_bool(searches_for_secrets),
            );
        }
        Payload::ToolOutput {
            call_id,
            success,
            output,
            error,
        } => {
            put(f, "call_id", string(call_id));
            put(
                f,
                "tool",
                RestrictedExpression::new_string(pending_target(state, call_id)),
            );
            put(f, "success", RestrictedExpression::new_bool(*success));
            put(
                f,
                "output",
                RestrictedExpression::new_string(output.to_string()),
            );
            put_opt(f, "error", error.as_ref());
        }
        Payload::ShellCommand {
            call_id,
            command,
            working_dir,
        } => {
            put(f, "call_id", string(call_id));
            put(f, "command", string(command));
            put_opt(f, "working_dir", working_dir.as_ref());
            let workspace = &inputs.environment.workspace;
            let analysis = analyze(command, working_dir.as_deref(), workspace);
            put(f, "shell", shell_facts(&analysis));
            put(
                f,
                "egress",
                egress_facts(&shell_egress(&analysis), inputs.environment),
            );
            let normalized = sondera_guard::content::normalize_command(command);
            put(
                f,
                "suggested_by_untrusted",
                RestrictedExpression::new_bool(state.untrusted_commands.contains(&normalized)),
            );
        }
        Payload::ShellCommandOutput {
            call_id,
            exit_code,
            stdout,
            stderr,
        } => {
            let command = pending_target(state, call_id);
            put(f, "call_id", string(call_id));
            let analysis = analyze(&command, None, &inputs.environment.workspace);
            put(f, "shell", shell_facts(&analysis));
            put(f, "command", RestrictedExpression::new_string(command));
            put(f, "exit_code", RestrictedExpression::new_long(*exit_code));
            put(f, "stdout", string(stdout));
            put(f, "stderr", string(stderr));
        }
        Payload::WebFetch {
            call_id,
            url,
            prompt,
            method,
            body,
        } => {
            put(f, "call_id", string(call_id));
            put(f, "url", string(url));
            put(f, "prompt", string(prompt));
            put(f, "method", string(method.as_deref().unwrap_or("GET")));
            put_opt(f, "body", body.as_ref());
            let egress = net::web_fetch_egress(url, method.as_deref(), body.as_deref());
            put(f, "egress", egress_facts(&egress, inputs.environment));
            let provenance = sondera_guard::provenance::of_fetch(
                &state.provenance,
                url,
                body.as_deref(),
                egress.sends_data,
            );
            put(f, "provenance", provenance_facts(&provenance));
        }
        Payload::WebFetchOutput {
            call_id,
            url,
            code,
            result,
        } => {
            put(f, "call_id", string(call_id));
            put(f, "url", string(url));
            put(f, "code", long(u64::from(*code)));
            put(f, "result", string(result));
        }
        Payload::FileOperation {
            call_id,
            operation,
            path,
            content,
            old_content,
        } => {
            put(f, "call_id", string(call_id));
            put(f, "operation", string(operation.as_str()));
            let workspace = &inputs.environment.workspace;
            put(f, "path", string(path));
            put(
                f,
                "sensitive",
                RestrictedExpression::new_bool(workspace.is_sensitive(path)),
            );
            put(
                f,
                "persistence",
                string(workspace.persistence(path).unwrap_or_default()),
            );
            put(f, "place", string(workspace.place(path).as_str()));
            put_opt(f, "content", content.as_ref());
            put_opt(f, "old_content", old_content.as_ref());
        }
        Payload::FileOperationResult {
            call_id,
            success,
            content,
            error,
        } => {
            let pending = state.pending(call_id);
            put(f, "call_id", string(call_id));
            put(
                f,
                "operation",
                string(pending.and_then(|p| p.operation.as_deref()).unwrap_or("")),
            );
            let path = pending.map_or("", |p| p.target.as_str());
            put(f, "path", string(path));
            put(
                f,
                "sensitive",
                RestrictedExpression::new_bool(
                    !path.is_empty() && inputs.environment.workspace.is_sensitive(path),
                ),
            );
            put(f, "success", RestrictedExpression::new_bool(*success));
            put_opt(f, "content", content.as_ref());
            put_opt(f, "error", error.as_ref());
        }
        _ => {}
    }
    Ok(())
}

impl Workspace {
    /// Whether a file path (resolved against the workspace root and home) holds credentials.
    pub fn is_sensitive(&self, path: &str) -> bool {
        sondera_guard::secrets::sensitive_path(&self.resolve(path)).is_some()
    }

    /// What kind of persistence writing to `path` gives ("shell_startup",
    /// "authorized_keys", ...), if any.
    pub fn persistence(&self, path: &str) -> Option<&'static str> {
        sondera_guard::persistence::persistence_target(&self.resolve(path), &self.home)
    }

    /// Where `path` lies: the workspace, scratch space, home, the system or elsewhere.
    pub fn place(&self, path: &str) -> sondera_guard::places::Place {
        sondera_guard::places::place(&self.resolve(path), &self.root, &self.home)
    }

    /// `path` made absolute against the workspace root and home, lexically.
    pub fn resolve(&self, path: &str) -> String {
        let word = shell::word::Word::path(path);
        let context = ShellContext {
            working_dir: &self.root,
            workspace_root: &self.root,
            home: &self.home,
        };
        shell::resolve(&word, &context).path
    }
}

/// Injection and credential signals of a text, as the `ContentSignals` record.
fn content_signals(signals: &Signals) -> RestrictedExpression {
    RestrictedExpression::new_record([
        (
            "injection".to_string(),
            strings(signals.injection.iter().copied()),
        ),
        (
            "secrets".to_string(),
            strings(signals.secrets.iter().copied()),
        ),
        (
            "injected".to_string(),
            RestrictedExpression::new_bool(signals.injected),
        ),
        (
            "injection_score".to_string(),
            long(u64::from(signals.injection_score)),
        ),
        (
            "truncated".to_string(),
            RestrictedExpression::new_bool(signals.truncated),
        ),
    ])
    .expect("distinct keys")
}

fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> RestrictedExpression {
    RestrictedExpression::new_set(items.into_iter().map(string))
}

fn analyze(command: &str, working_dir: Option<&str>, workspace: &Workspace) -> ShellAnalysis {
    let context = ShellContext {
        working_dir: working_dir.unwrap_or(&workspace.root),
        workspace_root: &workspace.root,
        home: &workspace.home,
    };
    shell::analyze(command, &context)
}

/// Where a shell command reaches, and whether it uploads.
fn shell_egress(analysis: &ShellAnalysis) -> Egress {
    Egress::new(
        analysis.hosts.iter().map(String::as_str),
        analysis.has(shell::RiskKind::NetworkUpload),
    )
}

/// Egress facts as the typed `Egress` record.
fn egress_facts(egress: &Egress, environment: &Environment) -> RestrictedExpression {
    let allowed: &HostAllowlist = &environment.allowed_hosts;
    RestrictedExpression::new_record([
        (
            "hosts".to_string(),
            strings(egress.hosts.iter().map(|h| h.name.as_str())),
        ),
        ("host_classes".to_string(), strings(egress.classes())),
        (
            "unlisted_hosts".to_string(),
            strings(egress.unlisted(allowed)),
        ),
        (
            "obfuscated_address".to_string(),
            RestrictedExpression::new_bool(egress.obfuscated()),
        ),
        (
            "sends_data".to_string(),
            RestrictedExpression::new_bool(egress.sends_data),
        ),
    ])
    .expect("distinct keys")
}

/// The shell analysis as the typed `ShellFacts` record.
fn shell_facts(analysis: &ShellAnalysis) -> RestrictedExpression {
    RestrictedExpression::new_record([
        ("programs".to_string(), strings(analysis.programs())),
        (
            "commands".to_string(),
            RestrictedExpression::new_set(
                analysis
                    .commands()
                    .into_iter()
                    .map(RestrictedExpression::new_string),
            ),
        ),
        (
            "command_prefixes".to_string(),
            RestrictedExpression::new_set(
                analysis
                    .command_prefixes()
                    .into_iter()
                    .map(RestrictedExpression::new_string),
            ),
        ),
        ("segments".to_string(), long(analysis.segments() as u64)),
        (
            "risks".to_string(),
            strings(analysis.risks.iter().map(|r| r.kind.as_str())),
        ),
        (
            "paths_outside_workspace".to_string(),
            strings(analysis.paths_outside_workspace.iter().map(String::as_str)),
        ),
        (
            "hosts".to_string(),
            strings(analysis.hosts.iter().map(String::as_str)),
        ),
        (
            "dynamic".to_string(),
            RestrictedExpression::new_bool(analysis.dynamic()),
        ),
        (
            "nested".to_string(),
            RestrictedExpression::new_bool(analysis.nested),
        ),
        (
            "unparsable".to_string(),
            RestrictedExpression::new_bool(analysis.unparsable.is_some()),
        ),
        (
            "privileged".to_string(),
            RestrictedExpression::new_bool(analysis.privileged()),
        ),
    ])
    .expect("distinct keys")
}

fn typed_args(
    tool_args: &BTreeMap<String, ArgType>,
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<RestrictedExpression, EvaluationError> {
    let mut fields = Vec::new();
    if let Some(ty) = tool_args.get(tool) {
        let value = ty
            .convert(arguments, &format!("args.{tool}"))
            .map_err(|(path, problem)| ArgumentTypeError {
                tool: tool.to_string(),
                path,
                problem,
            })?;
        fields.push((tool.to_string(), value));
    }
    Ok(RestrictedExpression::new_record(fields).expect("one key at most"))
}
