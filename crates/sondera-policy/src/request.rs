//! Turning an event and its trajectory's state into a Cedar request.

use std::collections::BTreeMap;
use std::str::FromStr;

use cedar_policy::{EntityId, EntityTypeName, EntityUid, RestrictedExpression};
use sondera_model::{Event, FileOperationKind, Payload, PromptRole, TrajectoryState};

use sondera_guard::content::Signals;
use sondera_guard::links;
use sondera_guard::net::{self, Egress, HostAllowlist};
use sondera_guard::places::Place;
use sondera_guard::shell::{self, ShellAnalysis, ShellContext};

use crate::args::{ArgType, ArgumentTypeError};
use crate::error::EvaluationError;
use crate::facts::{EntityFacts, Fact, Record, RequestFacts};

/// Where the agent works: what shell paths are resolved against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The agent's workspace root; a command's default working directory.
    pub root: String,
    /// What `~` and `$HOME` stand for.
    pub home: String,
}

impl Workspace {
    /// A workspace rooted at `root`, with `home` for `~`.
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
    /// A prompt from the user or the system.
    Prompt,
    /// The agent's own reasoning.
    Thought,
    /// A tool call about to run.
    PreToolUse,
    /// What a tool returned.
    ToolOutput,
    /// A shell command about to run.
    ShellCommand,
    /// What a shell command printed.
    ShellCommandOutput,
    /// A web page about to be fetched.
    WebFetch,
    /// What a web fetch returned.
    WebFetchOutput,
    /// A file about to be read.
    FileRead,
    /// A file about to be written.
    FileWrite,
    /// A file about to be edited.
    FileEdit,
    /// A file about to be deleted.
    FileDelete,
    /// What a file operation returned.
    FileOperationResult,
}

impl ActionName {
    /// Every action, in the order of the schema.
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

    /// The action's name in Cedar (`ShellCommand`).
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

/// Everything Cedar needs to judge one event, as facts: Cedar's own request
/// is made from them only when a policy remains whose outcome the prefilter
/// cannot know ([`crate::PolicyEngine::cedar`]).
#[derive(Debug, Clone)]
pub struct CedarRequest {
    /// The Cedar action the event is judged as.
    pub action: ActionName,
    /// The content signals put into the context, for callers that need them
    /// too (the trajectory's taints), so large texts are scanned once.
    pub signals: Option<Signals>,
    pub(crate) facts: RequestFacts,
}

/// What a request is built with besides the event and state.
pub(crate) struct Inputs<'a> {
    pub names: &'a Names,
    pub tool_args: &'a BTreeMap<String, ArgType>,
    pub environment: &'a Environment,
}

/// Gathers the facts of `event`, whose payload is adjudicated as `action`.
pub(crate) fn build(
    inputs: &Inputs<'_>,
    action: ActionName,
    event: &Event,
    state: &TrajectoryState,
) -> Result<CedarRequest, EvaluationError> {
    let names = inputs.names;
    let trajectory = uid(&names.trajectory, &event.trajectory_id);
    // Room for the most fields a payload adds, so the record never regrows.
    let mut context = Vec::with_capacity(16);
    context.push(("execution", execution(event)));
    context.push(("trajectory", Fact::Trajectory));
    payload_fields(&event.payload, state, inputs, &mut context)?;
    // What a tool, command, page or file returned may ask its reader to
    // act; a prompt or the agent's own thought is judged as it is.
    let read_content = matches!(
        event.payload,
        Payload::ToolOutput { .. }
            | Payload::ShellCommandOutput { .. }
            | Payload::WebFetchOutput { .. }
            | Payload::FileOperationResult { .. }
    );
    let signals = sondera_guard::content::scanned_text(&event.payload).map(|text| {
        let tools = known_tools(state);
        if read_content {
            sondera_guard::content::observed_signals(&text, &tools)
        } else {
            sondera_guard::content::signals(&text, &tools)
        }
    });
    context.push((
        "signals",
        content_signals(signals.as_ref().unwrap_or(&Signals::default())),
    ));
    let facts = RequestFacts {
        principal: agent_entity(uid(&names.agent, &event.agent.id), event),
        trajectory,
        trajectory_attrs: trajectory_attrs(state),
        resource: resource(names, &event.payload, state),
        context,
    };
    Ok(CedarRequest {
        action,
        signals,
        facts,
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
fn links_facts(links: &links::AnswerLinks) -> Fact {
    Fact::Record(vec![
        (
            "hosts",
            Fact::strings(links.hosts.iter().map(String::as_str)),
        ),
        (
            "credentials",
            Fact::strings(links.credentials.iter().copied()),
        ),
        ("image_carries_data", Fact::Bool(links.image_carries_data)),
        ("planted", Fact::Bool(links.planted)),
    ])
}

fn provenance_facts(facts: &sondera_guard::provenance::CallProvenance) -> Fact {
    Fact::Record(vec![
        ("side_effect", Fact::Bool(facts.effect.is_some())),
        (
            "effect",
            Fact::string(match (facts.effect, facts.effect_unknown) {
                (Some(effect), _) => effect.as_str(),
                (None, true) => "unknown",
                (None, false) => "",
            }),
        ),
        (
            "untrusted_targets",
            Fact::strings(facts.untrusted_targets.iter().map(String::as_str)),
        ),
        (
            "flagged_targets",
            Fact::strings(facts.flagged_targets.iter().map(String::as_str)),
        ),
        ("follows_flagged", Fact::Bool(facts.follows_flagged)),
        ("user_read_only", Fact::Bool(facts.user_read_only)),
        ("user_prompted", Fact::Bool(facts.user_prompted)),
        ("follows_content", Fact::Bool(facts.follows_content)),
        ("user_requested", Fact::Bool(facts.user_requested)),
        ("content_requested", Fact::Bool(facts.content_requested)),
    ])
}

fn agent_entity(uid: EntityUid, event: &Event) -> EntityFacts {
    EntityFacts {
        uid,
        attrs: vec![
            ("provider", Fact::string(&event.agent.provider)),
            (
                "platform",
                Fact::string(event.agent.platform.as_deref().unwrap_or("")),
            ),
        ],
        in_trajectory: false,
    }
}

fn trajectory_attrs(state: &TrajectoryState) -> Record {
    // The current step counts: a budget of N steps forbids the (N+1)th.
    vec![
        ("step_count", Fact::count(state.step_count + 1)),
        ("denial_count", Fact::count(state.denial_count)),
        ("escalation_count", Fact::count(state.escalation_count)),
        ("secrets_seen", Fact::Bool(state.secrets_seen)),
        ("untrusted_seen", Fact::Bool(state.untrusted_seen)),
        (
            "tools_used",
            Fact::strings(state.tools_used.iter().map(String::as_str)),
        ),
    ]
}

/// The resource entity of a payload; `None` when the trajectory itself is the resource.
fn resource(names: &Names, payload: &Payload, state: &TrajectoryState) -> Option<EntityFacts> {
    let message = |id: &str, role: &str| EntityFacts {
        uid: uid(&names.message, id),
        attrs: vec![("role", Fact::string(role))],
        in_trajectory: true,
    };
    Some(match payload {
        Payload::Prompt { role, .. } => message(role.as_str(), role.as_str()),
        Payload::Thought { .. } => message("thought", "assistant"),
        Payload::ToolCall { tool, .. } => tool_entity(names, tool),
        Payload::ToolOutput { call_id, .. } => tool_entity(names, &pending_target(state, call_id)),
        Payload::FileOperation { path, .. } => file_entity(names, path),
        Payload::FileOperationResult { call_id, .. } => {
            file_entity(names, &pending_target(state, call_id))
        }
        _ => return None,
    })
}

/// Whether `path` is a file coding agents load as standing instructions.
fn agent_instructions(path: &str) -> Fact {
    Fact::Bool(sondera_guard::persistence::agent_instructions(path))
}

fn tool_entity(names: &Names, tool: &str) -> EntityFacts {
    EntityFacts {
        uid: uid(&names.tool, tool),
        attrs: vec![("name", Fact::string(tool))],
        in_trajectory: true,
    }
}

fn file_entity(names: &Names, path: &str) -> EntityFacts {
    EntityFacts {
        uid: uid(&names.file, path),
        attrs: vec![("path", Fact::string(path))],
        in_trajectory: false,
    }
}

fn pending_target(state: &TrajectoryState, call_id: &str) -> String {
    state
        .pending(call_id)
        .map(|c| c.target.clone())
        .unwrap_or_default()
}

fn execution(event: &Event) -> Fact {
    let (name, path, depth) = match &event.execution {
        Some(e) => (
            e.agent_name.as_str(),
            e.agent_path.join("/"),
            e.agent_path.len().saturating_sub(1),
        ),
        None => (event.agent.id.as_str(), event.agent.id.clone(), 0),
    };
    Fact::Record(vec![
        ("agent_name", Fact::string(name)),
        ("agent_path", Fact::String(path)),
        ("depth", Fact::count(depth as u64)),
    ])
}

type Fields = Record;

fn put(fields: &mut Fields, key: &'static str, value: Fact) {
    fields.push((key, value));
}

fn put_opt(fields: &mut Fields, key: &'static str, value: Option<&String>) {
    if let Some(v) = value {
        put(fields, key, Fact::string(v));
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
            put(f, "role", Fact::string(role.as_str()));
            put(f, "content", Fact::string(content));
            // Only the agent's own answer is shown to the user, whose
            // client loads its images.
            let links = match role {
                PromptRole::Assistant => links::of_answer(content, &state.provenance),
                PromptRole::User | PromptRole::System => links::AnswerLinks::default(),
            };
            put(f, "links", links_facts(&links));
        }
        Payload::Thought { content } => put(f, "content", Fact::string(content)),
        Payload::ToolCall {
            call_id,
            tool,
            arguments,
        } => {
            put(f, "call_id", Fact::string(call_id));
            put(f, "tool", Fact::string(tool));
            put(f, "arguments", Fact::String(arguments.to_string()));
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
            put(f, "sensitive_paths", Fact::strings(sensitive));
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
            put(f, "searches_for_secrets", Fact::Bool(searches_for_secrets));
        }
        Payload::ToolOutput {
            call_id,
            success,
            output,
            error,
        } => {
            put(f, "call_id", Fact::string(call_id));
            put(f, "tool", Fact::String(pending_target(state, call_id)));
            put(f, "success", Fact::Bool(*success));
            put(f, "output", Fact::String(output.to_string()));
            put_opt(f, "error", error.as_ref());
        }
        Payload::ShellCommand {
            call_id,
            command,
            working_dir,
        } => {
            put(f, "call_id", Fact::string(call_id));
            put(f, "command", Fact::string(command));
            put_opt(f, "working_dir", working_dir.as_ref());
            let workspace = &inputs.environment.workspace;
            let analysis = analyze(command, working_dir.as_deref(), workspace, state);
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
                Fact::Bool(state.untrusted_commands.contains(&normalized)),
            );
            put(
                f,
                "user_asked_only_to_read",
                Fact::Bool(sondera_guard::provenance::user_asked_only_to_read(
                    &state.provenance,
                )),
            );
        }
        Payload::ShellCommandOutput {
            call_id,
            exit_code,
            stdout,
            stderr,
        } => {
            let command = pending_target(state, call_id);
            put(f, "call_id", Fact::string(call_id));
            let analysis = analyze(&command, None, &inputs.environment.workspace, state);
            put(f, "shell", shell_facts(&analysis));
            let printed = shell::files_printed(&analysis);
            let instructions = !printed.is_empty()
                && printed
                    .iter()
                    .all(|path| sondera_guard::persistence::agent_instructions(path));
            put(f, "agent_instructions", Fact::Bool(instructions));
            put(f, "command", Fact::String(command));
            put(f, "exit_code", Fact::Long(*exit_code));
            put(f, "stdout", Fact::string(stdout));
            put(f, "stderr", Fact::string(stderr));
        }
        Payload::WebFetch {
            call_id,
            url,
            prompt,
            method,
            body,
        } => {
            put(f, "call_id", Fact::string(call_id));
            put(f, "url", Fact::string(url));
            put(f, "prompt", Fact::string(prompt));
            put(
                f,
                "method",
                Fact::string(method.as_deref().unwrap_or("GET")),
            );
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
            put(f, "call_id", Fact::string(call_id));
            put(f, "url", Fact::string(url));
            put(f, "code", Fact::count(u64::from(*code)));
            put(f, "result", Fact::string(result));
        }
        Payload::FileOperation {
            call_id,
            operation,
            path,
            content,
            old_content,
        } => {
            put(f, "call_id", Fact::string(call_id));
            put(f, "operation", Fact::string(operation.as_str()));
            let workspace = &inputs.environment.workspace;
            put(f, "path", Fact::string(path));
            // One resolution serves every fact of the path.
            let resolved = workspace.resolve(path);
            put(
                f,
                "sensitive",
                Fact::Bool(Workspace::holds_credentials(&resolved)),
            );
            put(
                f,
                "persistence",
                Fact::string(workspace.persistence_of(&resolved).unwrap_or_default()),
            );
            put(f, "agent_instructions", agent_instructions(path));
            put(
                f,
                "place",
                Fact::string(workspace.place_of(&resolved).as_str()),
            );
            let later = content
                .as_deref()
                .filter(|_| {
                    matches!(
                        operation,
                        FileOperationKind::Write | FileOperationKind::Edit
                    )
                })
                .and_then(|text| workspace.runs_later(path, text));
            let later = later.as_ref();
            put(f, "runs", Fact::string(later.map_or("", |l| l.kind)));
            put(
                f,
                "runs_risks",
                Fact::strings(
                    later
                        .into_iter()
                        .flat_map(|l| l.risks.iter().map(|r| r.kind.as_str())),
                ),
            );
            put(
                f,
                "untrusted_sources",
                Fact::strings(
                    later
                        .into_iter()
                        .flat_map(|l| l.untrusted_sources.iter().map(String::as_str)),
                ),
            );
            put_opt(f, "content", content.as_ref());
            put_opt(f, "old_content", old_content.as_ref());
            let provenance =
                sondera_guard::provenance::of_file_operation(&state.provenance, *operation, path);
            put(f, "provenance", provenance_facts(&provenance));
        }
        Payload::FileOperationResult {
            call_id,
            success,
            content,
            error,
        } => {
            let pending = state.pending(call_id);
            put(f, "call_id", Fact::string(call_id));
            put(
                f,
                "operation",
                Fact::string(pending.and_then(|p| p.operation.as_deref()).unwrap_or("")),
            );
            let path = pending.map_or("", |p| p.target.as_str());
            put(f, "path", Fact::string(path));
            put(
                f,
                "sensitive",
                Fact::Bool(!path.is_empty() && inputs.environment.workspace.is_sensitive(path)),
            );
            put(f, "agent_instructions", agent_instructions(path));
            put(f, "success", Fact::Bool(*success));
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
        Self::holds_credentials(&self.resolve(path))
    }

    /// [`Workspace::is_sensitive`] of a path already resolved.
    fn holds_credentials(resolved: &str) -> bool {
        sondera_guard::secrets::sensitive_path(resolved).is_some()
    }

    /// What kind of persistence writing to `path` gives ("shell_startup",
    /// "authorized_keys", ...), if any.
    pub fn persistence(&self, path: &str) -> Option<&'static str> {
        self.persistence_of(&self.resolve(path))
    }

    /// [`Workspace::persistence`] of a path already resolved.
    fn persistence_of(&self, resolved: &str) -> Option<&'static str> {
        sondera_guard::persistence::persistence_target(resolved, &self.home)
    }

    /// What writing `content` to `path` will execute later, if a tool runs
    /// the file (a manifest's scripts, `.envrc`, an SSH config, ...).
    pub fn runs_later(&self, path: &str, content: &str) -> Option<shell::LaterRun> {
        let context = ShellContext {
            working_dir: &self.root,
            workspace_root: &self.root,
            home: &self.home,
        };
        shell::runs_later(&self.resolve(path), content, &context)
    }

    /// Where `path` lies: the workspace, scratch space, home, the system or elsewhere.
    pub fn place(&self, path: &str) -> sondera_guard::places::Place {
        self.place_of(&self.resolve(path))
    }

    /// [`Workspace::place`] of a path already resolved.
    fn place_of(&self, resolved: &str) -> sondera_guard::places::Place {
        sondera_guard::places::place(resolved, &self.root, &self.home)
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
fn content_signals(signals: &Signals) -> Fact {
    Fact::Record(vec![
        (
            "injection",
            Fact::strings(signals.injection.iter().copied()),
        ),
        ("secrets", Fact::strings(signals.secrets.iter().copied())),
        ("injected", Fact::Bool(signals.injected)),
        (
            "injection_score",
            Fact::count(u64::from(signals.injection_score)),
        ),
        ("truncated", Fact::Bool(signals.truncated)),
    ])
}

/// The analysis of `command`, with the risks of the scripts written
/// earlier in the trajectory that it runs.
fn analyze(
    command: &str,
    working_dir: Option<&str>,
    workspace: &Workspace,
    state: &TrajectoryState,
) -> ShellAnalysis {
    let context = ShellContext {
        working_dir: working_dir.unwrap_or(&workspace.root),
        workspace_root: &workspace.root,
        home: &workspace.home,
    };
    let mut analysis = shell::analyze(command, &context);
    let scripts = sondera_guard::scripts::risks_run(state, &analysis, &context);
    if !scripts.is_empty() {
        analysis.risks.extend(scripts);
        analysis
            .risks
            .sort_by(|a, b| (a.kind, &a.evidence).cmp(&(b.kind, &b.evidence)));
    }
    analysis
}

/// Where a shell command reaches, and whether it uploads.
fn shell_egress(analysis: &ShellAnalysis) -> Egress {
    Egress::new(
        analysis.hosts.iter().map(String::as_str),
        analysis.has(shell::RiskKind::NetworkUpload),
    )
}

/// Egress facts as the typed `Egress` record.
fn egress_facts(egress: &Egress, environment: &Environment) -> Fact {
    let allowed: &HostAllowlist = &environment.allowed_hosts;
    Fact::Record(vec![
        (
            "hosts",
            Fact::strings(egress.hosts.iter().map(|h| h.name.as_str())),
        ),
        ("host_classes", Fact::strings(egress.classes())),
        ("unlisted_hosts", Fact::strings(egress.unlisted(allowed))),
        ("obfuscated_address", Fact::Bool(egress.obfuscated())),
        ("sends_data", Fact::Bool(egress.sends_data)),
    ])
}

/// The shell analysis as the typed `ShellFacts` record.
fn shell_facts(analysis: &ShellAnalysis) -> Fact {
    Fact::Record(vec![
        ("programs", Fact::strings(analysis.programs())),
        (
            "commands",
            Fact::Set(analysis.commands().into_iter().map(Fact::String).collect()),
        ),
        (
            "command_prefixes",
            Fact::Set(
                analysis
                    .command_prefixes()
                    .into_iter()
                    .map(Fact::String)
                    .collect(),
            ),
        ),
        ("segments", Fact::count(analysis.segments() as u64)),
        (
            "risks",
            Fact::strings(analysis.risks.iter().map(|r| r.kind.as_str())),
        ),
        (
            "paths_outside_workspace",
            Fact::strings(analysis.paths_outside_workspace.iter().map(String::as_str)),
        ),
        (
            "hosts",
            Fact::strings(analysis.hosts.iter().map(String::as_str)),
        ),
        ("dynamic", Fact::Bool(analysis.dynamic())),
        ("nested", Fact::Bool(analysis.nested)),
        ("unparsable", Fact::Bool(analysis.unparsable.is_some())),
        ("privileged", Fact::Bool(analysis.privileged())),
    ])
}

fn typed_args(
    tool_args: &BTreeMap<String, ArgType>,
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<Fact, EvaluationError> {
    // Keyed by the tool's name, which no static record can be: the typed
    // arguments are Cedar's alone to read.
    if let Some(ty) = tool_args.get(tool) {
        let value = ty
            .convert(arguments, &format!("args.{tool}"))
            .map_err(|(path, problem)| ArgumentTypeError {
                tool: tool.to_string(),
                path,
                problem,
            })?;
        let record =
            RestrictedExpression::new_record([(tool.to_string(), value)]).expect("one key");
        return Ok(Fact::Cedar(record));
    }
    Ok(Fact::Record(Vec::new()))
}
