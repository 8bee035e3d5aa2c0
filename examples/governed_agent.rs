//! A coding agent governed by Sondera Harness, end to end.
//!
//! It runs offline by default with a scripted model, so the three things
//! that matter are shown deterministically: an allowed call, a destructive
//! command that is denied, and a risky one that waits for a person.
//!
//! ```text
//! cargo run -p sondera-adk --example governed_agent
//! cargo run -p sondera-adk --example governed_agent -- --approve ask
//! GOOGLE_API_KEY=... cargo run -p sondera-adk --features gemini --example governed_agent -- --model gemini
//! cargo run -p sondera-adk --features ollama --example governed_agent -- --model ollama:qwen2.5-coder
//! ```
//!
//! The shell tool is a dry run: it reports the command it was allowed to
//! run instead of running it, so trying the example never touches the
//! machine whatever a real model asks for.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::Arc;

use adk_core::{Content, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, Tool, ToolContext};
use adk_runner::Runner;
use adk_session::{CreateRequest, InMemorySessionService, SessionService};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use sondera_adk::{
    Approval, ApprovalDecision, ApprovalError, ApprovalRequest, Approver, LocalHarness,
    SonderaHarnessPlugin,
};
use sondera_model::{Actor, Payload};
use sondera_store::{MemoryStore, TrajectoryStore};

const TURNS: [&str; 3] = [
    "List the files in the project.",
    "Free some disk space: clean up my home directory.",
    "Publish the fix to main, overwriting what is there.",
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse()?;
    let store = Arc::new(MemoryStore::new());
    let harness = LocalHarness::builder().store(store.clone()).build()?;
    let sondera = SonderaHarnessPlugin::builder(harness)
        .approver(options.approver)
        .build()?;

    let agent = sondera
        .llm_agent("release_engineer")
        .description("Keeps the repository healthy and ships fixes")
        .instruction("You maintain a software project. Use run_shell for every command.")
        .model(options.model)
        .tool(Arc::new(DryRunShell))
        .build()?;
    let agent = sondera.root(agent)?;

    let sessions = Arc::new(InMemorySessionService::new());
    sessions
        .create(CreateRequest {
            app_name: "demo".into(),
            user_id: "dev".into(),
            session_id: Some("session-1".into()),
            state: HashMap::new(),
        })
        .await?;
    let runner = Runner::builder()
        .app_name("demo")
        .agent(agent)
        .session_service(sessions)
        .plugin_manager(sondera.plugin_manager())
        .build()?;

    for message in TURNS {
        println!("\n> {message}");
        let mut events = runner
            .run_str("dev", "session-1", Content::new("user").with_text(message))
            .await?;
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => print_event(&event),
                Err(error) => println!("  ! {error}"),
            }
        }
    }

    let key = sondera_adk::SessionKey {
        app: "demo".into(),
        user: "dev".into(),
        session: "session-1".into(),
    };
    let trajectory = sondera.trajectory_id(&key).await;
    sondera.close().await?;
    if let Some(id) = trajectory {
        print_trajectory(store.as_ref(), &id).await?;
    }
    Ok(())
}

fn print_event(event: &adk_core::Event) {
    let Some(content) = &event.llm_response.content else {
        return;
    };
    if event.llm_response.partial || event.author == "user" {
        return;
    }
    for part in &content.parts {
        match part {
            Part::Text { text } => println!("  {}: {text}", event.author),
            Part::FunctionCall { name, args, .. } => {
                println!("  {} calls {name} {args}", event.author)
            }
            Part::FunctionResponse {
                function_response, ..
            } => println!(
                "  {} -> {}",
                function_response.name, function_response.response
            ),
            _ => {}
        }
    }
}

async fn print_trajectory(store: &dyn TrajectoryStore, id: &str) -> anyhow::Result<()> {
    let detail = store
        .trajectory_with_events(&sondera_store::TenantId::default(), id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("trajectory {id} is not recorded"))?;
    println!("\nTrajectory {id} ({:?}):", detail.summary.status);
    for stored in &detail.events {
        let verdict = stored
            .adjudication
            .as_ref()
            .map(|a| a.decision.as_str())
            .unwrap_or("-");
        let by = &stored.event.actor;
        let what = match &stored.event.payload {
            Payload::ShellCommand { command, .. } => format!("shell_command `{command}`"),
            Payload::Adjudicated(decision) => format!(
                "decision {} by {:?} {}: {}",
                decision.decision,
                by.kind,
                by.id,
                decision.reason.as_deref().unwrap_or("")
            ),
            other => other.kind().to_string(),
        };
        println!("  #{:<2} {verdict:<8} {what}", stored.seq);
    }
    Ok(())
}

/// A shell tool that reports what it would run.
struct DryRunShell;

#[async_trait]
impl Tool for DryRunShell {
    fn name(&self) -> &str {
        "run_shell"
    }

    fn description(&self) -> &str {
        "Runs a shell command in the project (dry run: reports the command)"
    }

    fn parameters_schema(&self) -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line"}},
            "required": ["command"],
        }))
    }

    async fn execute(&self, _ctx: Arc<dyn ToolContext>, args: Value) -> adk_core::Result<Value> {
        let command = args["command"].as_str().unwrap_or_default();
        Ok(json!({"exit_code": 0, "stdout": format!("(dry run) {command}")}))
    }
}

/// The offline model: one shell command per request, then a summary.
struct ScriptedEngineer;

impl ScriptedEngineer {
    fn answer(request: &LlmRequest) -> LlmResponse {
        let last = request.contents.last();
        let answered = last.is_some_and(|c| {
            c.parts
                .iter()
                .any(|p| matches!(p, Part::FunctionResponse { .. }))
        });
        let content = if answered {
            Content::new("model").with_text("Done; see the tool result above.")
        } else {
            let asked = last
                .and_then(|c| c.parts.iter().find_map(Part::text))
                .unwrap_or("");
            let command = if asked.contains("home directory") {
                "rm -rf ~"
            } else if asked.contains("Publish") {
                "git push --force origin main"
            } else {
                "ls -la"
            };
            Content {
                role: "model".into(),
                parts: vec![Part::FunctionCall {
                    name: "run_shell".into(),
                    args: json!({ "command": command }),
                    id: Some(format!("call-{}", command.len())),
                    thought_signature: None,
                }],
            }
        };
        LlmResponse {
            content: Some(content),
            turn_complete: true,
            ..Default::default()
        }
    }
}

#[async_trait]
impl Llm for ScriptedEngineer {
    fn name(&self) -> &str {
        "scripted-engineer"
    }

    async fn generate_content(
        &self,
        request: LlmRequest,
        _stream: bool,
    ) -> adk_core::Result<LlmResponseStream> {
        let response = Self::answer(&request);
        Ok(Box::pin(futures::stream::once(async { Ok(response) })))
    }
}

/// Answers escalations as `--approve` says, or asks on the terminal.
struct Operator {
    answer: Option<Approval>,
}

#[async_trait]
impl Approver for Operator {
    async fn decide(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError> {
        println!("  ? {}", request.question().replace('\n', "\n    "));
        let approval = match self.answer {
            Some(answer) => answer,
            None => ask_terminal()?,
        };
        println!("  ? answered: {approval:?}");
        Ok(ApprovalDecision {
            approval,
            decided_by: Actor::human(std::env::var("USER").unwrap_or_else(|_| "operator".into())),
        })
    }
}

fn ask_terminal() -> Result<Approval, ApprovalError> {
    print!("    approve? [o]nce / [s]ession / [a]lways / [d]eny: ");
    std::io::stdout()
        .flush()
        .map_err(|e| ApprovalError(e.to_string()))?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| ApprovalError(e.to_string()))?;
    parse_approval(line.trim()).ok_or_else(|| ApprovalError(format!("not an answer: {line:?}")))
}

fn parse_approval(text: &str) -> Option<Approval> {
    Some(match text {
        "o" | "once" => Approval::Once,
        "s" | "session" => Approval::Session,
        "a" | "always" => Approval::Always,
        "d" | "deny" => Approval::Deny,
        _ => return None,
    })
}

struct Options {
    model: Arc<dyn Llm>,
    approver: Operator,
}

impl Options {
    fn parse() -> anyhow::Result<Self> {
        let mut model: Arc<dyn Llm> = Arc::new(ScriptedEngineer);
        let mut answer = Some(Approval::Once);
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            let value = args
                .next()
                .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))?;
            match flag.as_str() {
                "--model" => model = real_model(&value)?,
                "--approve" if value == "ask" => answer = None,
                "--approve" => {
                    answer = Some(parse_approval(&value).ok_or_else(|| {
                        anyhow::anyhow!("--approve takes once, session, always, deny or ask")
                    })?)
                }
                other => anyhow::bail!(
                    "unknown option {other}; see the top of examples/governed_agent.rs"
                ),
            }
        }
        Ok(Self {
            model,
            approver: Operator { answer },
        })
    }
}

#[cfg_attr(
    not(any(feature = "gemini", feature = "ollama")),
    allow(unused_variables)
)]
fn real_model(name: &str) -> anyhow::Result<Arc<dyn Llm>> {
    let (provider, model) = name.split_once(':').unwrap_or((name, ""));
    match provider {
        "scripted" => Ok(Arc::new(ScriptedEngineer)),
        #[cfg(feature = "gemini")]
        "gemini" => {
            let key = std::env::var("GOOGLE_API_KEY")
                .map_err(|_| anyhow::anyhow!("set GOOGLE_API_KEY to use Gemini"))?;
            let model = if model.is_empty() {
                "gemini-2.5-flash"
            } else {
                model
            };
            Ok(Arc::new(adk_model::GeminiModel::new(key, model)?))
        }
        #[cfg(feature = "ollama")]
        "ollama" => {
            let model = if model.is_empty() {
                "qwen2.5-coder"
            } else {
                model
            };
            let config = adk_model::OllamaConfig::new(model);
            Ok(Arc::new(adk_model::OllamaModel::new(config)?))
        }
        other => anyhow::bail!(
            "model `{other}` is not available in this build: use scripted, or build with --features gemini / --features ollama"
        ),
    }
}
