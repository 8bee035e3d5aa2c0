//! What governance costs a turn: one scripted turn with two tool calls
//! through a real adk-rust runner, with and without the plugin (local
//! harness, built-in policies, in-memory store).
//!
//! Every turn starts a new session, so the governed side also starts a
//! trajectory and, once 256 sessions are open, ends the least recently used
//! one: eight judged steps per turn. (Turns of one long session are not
//! measured: adk-rust's in-memory session service copies the whole history
//! on every turn, which swamps both sides.)

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_agent::LlmAgentBuilder;
use adk_core::{
    Agent, Content, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Tool, ToolContext,
};
use adk_runner::Runner;
use adk_session::{CreateRequest, InMemorySessionService, SessionService};
use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::{Value, json};
use sondera_adk::{LocalHarness, SonderaHarnessPlugin};

struct TwoCalls;

#[async_trait]
impl Llm for TwoCalls {
    fn name(&self) -> &str {
        "two-calls"
    }

    async fn generate_content(
        &self,
        request: LlmRequest,
        _stream: bool,
    ) -> adk_core::Result<LlmResponseStream> {
        let answered = request.contents.last().is_some_and(|c| {
            c.parts
                .iter()
                .any(|p| matches!(p, Part::FunctionResponse { .. }))
        });
        let content = if answered {
            Content::new("model").with_text("Both files look fine.")
        } else {
            let call = |id: &str, name: &str, args: Value| Part::FunctionCall {
                name: name.into(),
                args,
                id: Some(id.into()),
                thought_signature: None,
            };
            Content {
                role: "model".into(),
                parts: vec![
                    call("c1", "read_file", json!({"path": "src/lib.rs"})),
                    call("c2", "run_shell", json!({"command": "cargo test --quiet"})),
                ],
            }
        };
        let response = LlmResponse {
            content: Some(content),
            turn_complete: true,
            ..Default::default()
        };
        Ok(Box::pin(futures::stream::once(async { Ok(response) })))
    }
}

struct Fixed(&'static str, Value);

#[async_trait]
impl Tool for Fixed {
    fn name(&self) -> &str {
        self.0
    }

    fn description(&self) -> &str {
        "returns a fixed result"
    }

    async fn execute(&self, _ctx: Arc<dyn ToolContext>, _args: Value) -> adk_core::Result<Value> {
        Ok(self.1.clone())
    }
}

fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Fixed(
            "read_file",
            json!({"content": "pub fn answer() -> u32 { 42 }"}),
        )),
        Arc::new(Fixed(
            "run_shell",
            json!({"exit_code": 0, "stdout": "test result: ok"}),
        )),
    ]
}

struct Setup {
    runner: Runner,
    sessions: Arc<InMemorySessionService>,
    next: AtomicUsize,
}

fn plain() -> Setup {
    let mut builder = LlmAgentBuilder::new("coder").model(Arc::new(TwoCalls));
    for tool in tools() {
        builder = builder.tool(tool);
    }
    setup(Arc::new(builder.build().unwrap()), None)
}

fn governed() -> Setup {
    let harness = LocalHarness::builder().in_memory().build().unwrap();
    let sondera = SonderaHarnessPlugin::new(harness).unwrap();
    let mut builder = sondera.llm_agent("coder").model(Arc::new(TwoCalls));
    for tool in tools() {
        builder = builder.tool(tool);
    }
    let agent = sondera.root(builder.build().unwrap()).unwrap();
    setup(agent, Some(sondera))
}

fn setup(agent: Arc<dyn Agent>, sondera: Option<SonderaHarnessPlugin>) -> Setup {
    let sessions = Arc::new(InMemorySessionService::new());
    let mut builder = Runner::builder()
        .app_name("bench")
        .agent(agent)
        .session_service(sessions.clone());
    if let Some(sondera) = sondera {
        builder = builder.plugin_manager(sondera.plugin_manager());
    }
    Setup {
        runner: builder.build().unwrap(),
        sessions,
        next: AtomicUsize::new(0),
    }
}

impl Setup {
    async fn create(&self, session: &str) {
        self.sessions
            .create(CreateRequest {
                app_name: "bench".into(),
                user_id: "dev".into(),
                session_id: Some(session.into()),
                state: HashMap::new(),
            })
            .await
            .unwrap();
    }

    async fn turn(&self, session: &str) {
        let content = Content::new("user").with_text("check the library");
        let mut events = self.runner.run_str("dev", session, content).await.unwrap();
        while let Some(event) = events.next().await {
            event.unwrap();
        }
    }

    async fn fresh_turn(&self) {
        let session = format!("s{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.create(&session).await;
        self.turn(&session).await;
    }
}

fn overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("turn_with_two_tool_calls");
    for (name, make) in [("plain", plain as fn() -> Setup), ("governed", governed)] {
        let setup = make();
        group.bench_function(name, |b| b.to_async(&runtime).iter(|| setup.fresh_turn()));
    }
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
