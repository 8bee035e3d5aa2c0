//! A real adk-rust runner around governed agents, with scripted models and
//! recording tools, over a local harness whose store can be made to fail.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use adk_core::{
    Agent as AdkAgent, Content, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Tool,
    ToolContext,
};
use adk_runner::Runner;
use adk_session::{CreateRequest, InMemorySessionService, SessionService};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use sondera_adk::{SessionKey, SonderaHarnessPlugin, SonderaHarnessPluginBuilder};
use sondera_harness::{Harness, LocalHarness, LocalHarnessBuilder};
use sondera_model::{Payload, PayloadCategory, PromptRole};
use sondera_policy::Workspace;
use sondera_store::{
    AppendHook, EventLog, HookedLog, MemoryStore, Records, StepRecord, StoreError, StoredEvent,
    TrajectoryStore,
};

pub(crate) const APP: &str = "fixture-app";
pub(crate) const WORKSPACE: &str = "/work/project";
pub(crate) const HOME: &str = "/home/dev";

/// A model that answers by a rule over the request.
pub(crate) struct ScriptedModel {
    name: String,
    rule: Box<dyn Fn(&LlmRequest) -> LlmResponse + Send + Sync>,
    pub calls: AtomicUsize,
}

impl ScriptedModel {
    pub(crate) fn new(
        rule: impl Fn(&LlmRequest) -> LlmResponse + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            name: "scripted-model".into(),
            rule: Box::new(rule),
            calls: AtomicUsize::new(0),
        })
    }

    /// A sub-agent's model: runs `command` through `run_shell` once (call
    /// `call_id`), then says `done`.
    pub(crate) fn runs_once(
        call_id: &'static str,
        command: &'static str,
        done: &'static str,
    ) -> Arc<Self> {
        Self::new(move |request| {
            let ran = request.contents.iter().flat_map(|c| &c.parts).any(|p| {
                matches!(p, Part::FunctionResponse { function_response, .. } if function_response.name == "run_shell")
            });
            if ran {
                say(done)
            } else {
                call_all(vec![(
                    Some(call_id),
                    "run_shell",
                    json!({ "command": command }),
                )])
            }
        })
    }

    /// A lead's model that hands every message to `agent`.
    pub(crate) fn transfers_to(agent: &'static str) -> Arc<Self> {
        Self::new(move |_| {
            call_all(vec![(
                Some("t-1"),
                sondera_adk::TRANSFER_TOOL,
                json!({ "agent_name": agent }),
            )])
        })
    }

    /// The usual loop: a user asks, the model calls what `plan` says for
    /// that text, then reports "done" once every call has answered.
    pub(crate) fn planned(
        plan: impl Fn(&str) -> Vec<(Option<&'static str>, &'static str, Value)> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Self::new(move |request| {
            let last = request.contents.last();
            if last.is_some_and(|c| {
                c.parts
                    .iter()
                    .any(|p| matches!(p, Part::FunctionResponse { .. }))
            }) {
                return say("done");
            }
            let text = last.map(text).unwrap_or_default();
            let calls = plan(&text);
            if calls.is_empty() {
                return say(&format!("you said: {text}"));
            }
            call_all(calls)
        })
    }
}

#[async_trait]
impl Llm for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    async fn generate_content(
        &self,
        request: LlmRequest,
        _stream: bool,
    ) -> adk_core::Result<LlmResponseStream> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let response = (self.rule)(&request);
        Ok(Box::pin(futures::stream::iter(vec![Ok(response)])))
    }
}

pub(crate) fn text(content: &Content) -> String {
    content
        .parts
        .iter()
        .filter_map(|p| p.text())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn say(text: &str) -> LlmResponse {
    LlmResponse {
        content: Some(Content::new("model").with_text(text)),
        turn_complete: true,
        ..Default::default()
    }
}

pub(crate) fn call_all(calls: Vec<(Option<&'static str>, &'static str, Value)>) -> LlmResponse {
    let parts = calls
        .into_iter()
        .map(|(id, name, args)| Part::FunctionCall {
            name: name.into(),
            args,
            id: id.map(Into::into),
            thought_signature: None,
        })
        .collect();
    LlmResponse {
        content: Some(Content {
            role: "model".into(),
            parts,
        }),
        turn_complete: true,
        ..Default::default()
    }
}

/// A tool that returns a fixed result and counts its runs.
pub(crate) struct RecordingTool {
    name: String,
    description: String,
    parameters: Value,
    result: Value,
    pub runs: AtomicUsize,
    /// When set, a run waits for this before it returns.
    pub hold: Option<Arc<tokio::sync::Semaphore>>,
}

impl RecordingTool {
    pub(crate) fn new(name: &str, parameter: &str, result: Value) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            description: format!("The {name} tool"),
            parameters: json!({
                "type": "object",
                "properties": {parameter: {"type": "string"}},
                "required": [parameter],
            }),
            result,
            runs: AtomicUsize::new(0),
            hold: None,
        })
    }

    pub(crate) fn held(
        name: &str,
        parameter: &str,
        gate: Arc<tokio::sync::Semaphore>,
    ) -> Arc<Self> {
        let mut tool = Arc::into_inner(Self::new(name, parameter, json!({"ok": true}))).unwrap();
        tool.hold = Some(gate);
        Arc::new(tool)
    }

    pub(crate) fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for RecordingTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters_schema(&self) -> Option<Value> {
        Some(self.parameters.clone())
    }

    async fn execute(&self, _ctx: Arc<dyn ToolContext>, _args: Value) -> adk_core::Result<Value> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if let Some(gate) = &self.hold {
            gate.acquire().await.unwrap().forget();
        }
        Ok(self.result.clone())
    }
}

/// A tool that always fails with a fixed message.
pub(crate) struct FailingTool {
    name: String,
    message: String,
}

impl FailingTool {
    pub(crate) fn new(name: &str, message: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            message: message.into(),
        })
    }
}

#[async_trait]
impl Tool for FailingTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "A tool that fails"
    }

    fn parameters_schema(&self) -> Option<Value> {
        Some(json!({"type": "object", "properties": {"command": {"type": "string"}}}))
    }

    async fn execute(&self, _ctx: Arc<dyn ToolContext>, _args: Value) -> adk_core::Result<Value> {
        Err(adk_core::AdkError::tool(self.message.clone()))
    }
}

/// Store failures on demand.
#[derive(Debug, Default)]
pub(crate) struct Failures {
    pub fail_started: AtomicBool,
    pub fail_completed: AtomicBool,
    pub fail_all: AtomicBool,
    pub fail_actions: AtomicBool,
    /// Fails every append to this trajectory.
    pub fail_trajectory: std::sync::Mutex<Option<String>>,
    /// While set, a `completed` append blocks its thread until it is cleared.
    pub hold_completed: AtomicBool,
    pub held: AtomicUsize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Switch(pub Arc<Failures>);

impl std::ops::Deref for Switch {
    type Target = Failures;
    fn deref(&self) -> &Failures {
        &self.0
    }
}

impl AppendHook for Switch {
    fn before(&self, step: &StepRecord<'_>) -> Result<(), StoreError> {
        if matches!(step.event.payload, Payload::Completed { .. }) {
            while self.hold_completed.load(Ordering::SeqCst) {
                self.held.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        let fail = match step.event.payload {
            Payload::Started { .. } => self.fail_started.load(Ordering::SeqCst),
            Payload::Completed { .. } => self.fail_completed.load(Ordering::SeqCst),
            _ => false,
        } || self.fail_all.load(Ordering::SeqCst)
            || (self.fail_actions.load(Ordering::SeqCst)
                && step.event.payload.category() == PayloadCategory::Action)
            || self.fail_trajectory.lock().unwrap().as_deref()
                == Some(step.event.trajectory_id.as_str());
        if fail {
            return Err(StoreError::Unavailable("the disk was unplugged".into()));
        }
        Ok(())
    }
}

pub(crate) fn set(flag: &AtomicBool, on: bool) {
    flag.store(on, Ordering::SeqCst);
}

/// Built-in packs plus a fixture policy that blocks prompts mentioning
/// launch codes.
pub(crate) fn policy_dirs() -> (Vec<PathBuf>, tempfile::TempDir) {
    let packs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policies/packs");
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(
        extra.path().join("fixture.cedar"),
        r#"@id("fixture-no-launch-codes")
@description("Launch codes stay out of the conversation")
forbid (principal, action == Sondera::Action::"Prompt", resource)
when { context.content like "*launch codes*" };
"#,
    )
    .unwrap();
    (vec![packs, extra.path().to_path_buf()], extra)
}

/// A local harness over `store`, judging with the fixture's policies.
pub(crate) fn harness(store: Arc<dyn TrajectoryStore>) -> LocalHarness {
    built(store, |builder| builder)
}

/// A harness over `store` that appends its steps through `log`.
pub(crate) fn harness_appending_through(
    store: Arc<dyn TrajectoryStore>,
    log: Arc<dyn EventLog>,
) -> LocalHarness {
    built(store, |builder| builder.appending_through(log))
}

/// A harness over `store` with the fixture's policies, as `finish` sets it up.
fn built(
    store: Arc<dyn TrajectoryStore>,
    finish: impl FnOnce(LocalHarnessBuilder) -> LocalHarnessBuilder,
) -> LocalHarness {
    let (dirs, _keep) = policy_dirs();
    let mut builder = LocalHarness::builder()
        .workspace(Workspace::new(WORKSPACE, HOME))
        .store(store);
    for dir in dirs {
        builder = builder.policy_dir(dir);
    }
    finish(builder).build().unwrap()
}

pub(crate) struct Fixture {
    pub sondera: SonderaHarnessPlugin,
    pub store: Arc<MemoryStore>,
    pub switch: Switch,
    pub sessions: Arc<InMemorySessionService>,
    pub root: Arc<dyn AdkAgent>,
}

/// What a turn produced.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    pub texts: Vec<String>,
    /// Function responses by tool name.
    pub results: Vec<(String, Value)>,
    pub errors: Vec<String>,
}

impl Turn {
    pub(crate) fn result(&self, tool: &str) -> &Value {
        &self
            .results
            .iter()
            .find(|(name, _)| name == tool)
            .unwrap_or_else(|| panic!("no result for {tool} in {self:?}"))
            .1
    }

    pub(crate) fn said(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }
}

impl Fixture {
    /// A plugin configured by `configure` over a fresh store, governing the
    /// tree `build` makes.
    pub(crate) fn new(
        configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
        build: impl FnOnce(&SonderaHarnessPlugin) -> Arc<dyn AdkAgent>,
    ) -> Self {
        Self::over(Arc::new(MemoryStore::new()), configure, build)
    }

    pub(crate) fn over(
        store: Arc<MemoryStore>,
        configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
        build: impl FnOnce(&SonderaHarnessPlugin) -> Arc<dyn AdkAgent>,
    ) -> Self {
        let switch = Switch::default();
        let hooked = Arc::new(HookedLog::new(store.clone(), switch.clone()));
        Self::judged_by(
            harness_appending_through(store.clone(), hooked),
            store,
            switch,
            configure,
            build,
        )
    }

    /// A plugin over `harness`, whose records `store` holds.
    pub(crate) fn judged_by(
        harness: impl Harness + 'static,
        store: Arc<MemoryStore>,
        switch: Switch,
        configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
        build: impl FnOnce(&SonderaHarnessPlugin) -> Arc<dyn AdkAgent>,
    ) -> Self {
        let sondera = configure(SonderaHarnessPlugin::builder(harness))
            .build()
            .unwrap();
        let root = sondera.root(build(&sondera)).unwrap();
        Self {
            sondera,
            store,
            switch,
            sessions: Arc::new(InMemorySessionService::new()),
            root,
        }
    }

    pub(crate) fn runner(&self) -> Runner {
        self.runner_for(self.root.clone())
    }

    pub(crate) fn runner_for(&self, agent: Arc<dyn AdkAgent>) -> Runner {
        Runner::builder()
            .app_name(APP)
            .agent(agent)
            .session_service(self.sessions.clone())
            .plugin_manager(self.sondera.plugin_manager())
            .build()
            .unwrap()
    }

    pub(crate) async fn open(&self, user: &str, session: &str) {
        self.open_in(APP, user, session).await;
    }

    pub(crate) async fn open_in(&self, app: &str, user: &str, session: &str) {
        let existing = self
            .sessions
            .get(adk_session::GetRequest {
                app_name: app.into(),
                user_id: user.into(),
                session_id: session.into(),
                num_recent_events: None,
                after: None,
            })
            .await;
        if existing.is_err() {
            self.sessions
                .create(CreateRequest {
                    app_name: app.into(),
                    user_id: user.into(),
                    session_id: Some(session.into()),
                    state: HashMap::new(),
                })
                .await
                .unwrap();
        }
    }

    /// Runs one turn of `session` to the end.
    pub(crate) async fn turn(&self, user: &str, session: &str, message: &str) -> Turn {
        self.turn_with(&self.runner(), user, session, message).await
    }

    pub(crate) async fn turn_with(
        &self,
        runner: &Runner,
        user: &str,
        session: &str,
        message: &str,
    ) -> Turn {
        self.open(user, session).await;
        let content = Content::new("user").with_text(message);
        let mut turn = Turn::default();
        let mut events = match runner.run_str(user, session, content).await {
            Ok(events) => events,
            Err(e) => {
                turn.errors.push(e.to_string());
                return turn;
            }
        };
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => collect(&mut turn, &event),
                Err(e) => turn.errors.push(e.to_string()),
            }
        }
        turn
    }

    pub(crate) fn key(user: &str, session: &str) -> SessionKey {
        SessionKey {
            app: APP.into(),
            user: user.into(),
            session: session.into(),
        }
    }

    /// The recorded events of `session`'s trajectory.
    pub(crate) async fn trajectory(&self, user: &str, session: &str) -> Vec<StoredEvent> {
        let id = self
            .sondera
            .trajectory_id(&Self::key(user, session))
            .await
            .expect("the session has a trajectory");
        self.events(&id).await
    }

    pub(crate) async fn events(&self, trajectory_id: &str) -> Vec<StoredEvent> {
        self.store
            .trajectory_with_events(&sondera_store::TenantId::default(), trajectory_id)
            .await
            .unwrap()
            .expect("trajectory is recorded")
            .events
    }
}

fn collect(turn: &mut Turn, event: &adk_core::Event) {
    let Some(content) = &event.llm_response.content else {
        return;
    };
    if event.llm_response.partial {
        return;
    }
    for part in &content.parts {
        match part {
            Part::Text { text } if event.author != "user" => turn.texts.push(text.clone()),
            Part::FunctionResponse {
                function_response, ..
            } => turn.results.push((
                function_response.name.clone(),
                function_response.response.clone(),
            )),
            _ => {}
        }
    }
}

/// Payload kinds of `events`, in order.
pub(crate) fn kinds(events: &[StoredEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.event.payload.kind()).collect()
}

/// The prompts of `events` with `role`.
pub(crate) fn prompts(events: &[StoredEvent], role: PromptRole) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.event.payload {
            Payload::Prompt { role: r, content } if *r == role => Some(content.clone()),
            _ => None,
        })
        .collect()
}

/// One LLM agent named `name` with `tools`, answering by `model`.
pub(crate) fn llm(
    sondera: &SonderaHarnessPlugin,
    name: &str,
    model: Arc<dyn Llm>,
    tools: Vec<Arc<dyn Tool>>,
) -> Arc<dyn AdkAgent> {
    let mut builder = sondera
        .llm_agent(name)
        .description(format!("{name} does its job"))
        .instruction("Do what the user asks.")
        .model(model);
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder.build().unwrap()
}

/// What a scripted model calls for one user message.
pub(crate) type Plan = Vec<(Option<&'static str>, &'static str, Value)>;

/// A fixture over `store` whose agent `coder` has one `run_shell` tool and
/// a model that calls what `plan` says; the tool is returned to count runs.
pub(crate) fn shell_agent(
    store: Arc<MemoryStore>,
    configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
    plan: impl Fn(&str) -> Plan + Send + Sync + 'static,
) -> (Fixture, Arc<RecordingTool>) {
    let shell = RecordingTool::new(
        "run_shell",
        "command",
        json!({"stdout": "ok", "exit_code": 0}),
    );
    let tool = shell.clone();
    let fixture = Fixture::over(store, configure, move |sondera| {
        llm(sondera, "coder", ScriptedModel::planned(plan), vec![tool])
    });
    (fixture, shell)
}
