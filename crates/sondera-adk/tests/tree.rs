//! The agent tree: its card, its rules, and who each step is attributed to.

mod support;

use std::sync::Arc;

use adk_agent::{LlmAgentBuilder, SequentialAgent};
use adk_core::{Agent as AdkAgent, Tool};
use serde_json::json;
use sondera_adk::{SonderaHarnessPlugin, TRANSFER_TOOL, Workflow};
use sondera_model::{AgentCard, CollaborationMode, Payload, PromptRole};
use support::*;

fn tool(name: &str, parameter: &str) -> Arc<dyn Tool> {
    RecordingTool::new(name, parameter, json!({"ok": true}))
}

/// A sub-agent descriptor: name, parent path, mode, model, owned tools.
type Described<'a> = (
    &'a str,
    Vec<String>,
    CollaborationMode,
    Option<&'a str>,
    Vec<String>,
);

fn quiet() -> Arc<ScriptedModel> {
    ScriptedModel::planned(|_| vec![])
}

/// lead -> pipeline (sequential) -> writer, checker.
fn team(sondera: &SonderaHarnessPlugin, shell: Arc<dyn Tool>) -> Arc<dyn AdkAgent> {
    let writer = llm(
        sondera,
        "writer",
        quiet(),
        vec![tool("write_file", "path"), shell.clone()],
    );
    let checker = llm(sondera, "checker", quiet(), vec![tool("read_file", "path")]);
    let pipeline = sondera.workflow(
        Arc::new(SequentialAgent::new("pipeline", vec![writer, checker])),
        Workflow::Sequential,
    );
    sondera
        .llm_agent("lead")
        .description("Leads the work")
        .instruction("Plan, then hand off.")
        .model(quiet())
        .tool(shell)
        .sub_agent(pipeline)
        .build()
        .unwrap()
}

fn plugin() -> SonderaHarnessPlugin {
    let store = Arc::new(sondera_store::MemoryStore::new());
    SonderaHarnessPlugin::new(harness(store)).unwrap()
}

#[test]
fn the_card_describes_the_whole_tree() {
    let sondera = plugin();
    let shell = tool("run_shell", "command");
    let root = team(&sondera, shell);
    let agent = sondera.agent_card(&root).unwrap();
    assert_eq!(agent.id, "lead");
    let AgentCard::React {
        model,
        system_instruction,
        tools,
        sub_agents,
    } = std::sync::Arc::unwrap_or_clone(agent.card.unwrap());
    assert_eq!(model.as_deref(), Some("scripted-model"));
    assert_eq!(system_instruction, "Plan, then hand off.");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["run_shell", "write_file", "read_file", TRANSFER_TOOL]
    );
    assert_eq!(tools[0].description, "The run_shell tool");
    assert_eq!(
        tools[0].parameters_json_schema.as_ref().unwrap()["required"],
        json!(["command"])
    );

    let described: Vec<Described> = sub_agents
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.parent_path.clone(),
                s.collaboration_mode,
                s.model.as_deref(),
                s.owned_tool_names.clone(),
            )
        })
        .collect();
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        described,
        vec![
            (
                "pipeline",
                path(&["lead"]),
                CollaborationMode::Transfer,
                None,
                vec![]
            ),
            (
                "writer",
                path(&["lead", "pipeline"]),
                CollaborationMode::Sequential,
                Some("scripted-model"),
                path(&["write_file", "run_shell"]),
            ),
            (
                "checker",
                path(&["lead", "pipeline"]),
                CollaborationMode::Sequential,
                Some("scripted-model"),
                path(&["read_file"]),
            ),
        ]
    );
    assert_eq!(sub_agents[1].description, "writer does its job");
}

#[test]
fn names_must_be_unique_in_a_tree() {
    let sondera = plugin();
    let inner = llm(&sondera, "helper", quiet(), vec![]);
    let middle = sondera
        .llm_agent("middle")
        .model(quiet())
        .sub_agent(inner)
        .build()
        .unwrap();
    let twin = llm(&sondera, "helper", quiet(), vec![]);
    let root = sondera
        .llm_agent("root")
        .model(quiet())
        .sub_agent(middle)
        .sub_agent(twin)
        .build()
        .unwrap();
    let error = sondera.root(root).err().unwrap().to_string();
    assert!(error.contains("two agents are named `helper`"), "{error}");
    assert!(
        error.contains("root/middle/helper") && error.contains("root/helper"),
        "{error}"
    );
}

#[test]
fn one_tool_name_cannot_mean_two_tools() {
    let sondera = plugin();
    let a = llm(&sondera, "a", quiet(), vec![tool("search", "query")]);
    let b = llm(&sondera, "b", quiet(), vec![tool("search", "pattern")]);
    let root = sondera.custom(Arc::new(SequentialAgent::new("root", vec![a, b])));
    let error = sondera.root(root).err().unwrap().to_string();
    assert!(
        error.contains("tool `search` is declared differently by `a` and `b`"),
        "{error}"
    );
}

#[test]
fn an_agent_built_around_the_plugin_is_refused() {
    let sondera = plugin();
    let stray: Arc<dyn AdkAgent> = Arc::new(
        LlmAgentBuilder::new("stray")
            .model(quiet())
            .build()
            .unwrap(),
    );
    let root = sondera
        .llm_agent("root")
        .model(quiet())
        .sub_agent(stray)
        .build()
        .unwrap();
    let error = sondera.root(root).err().unwrap().to_string();
    assert!(
        error.contains("agent `stray` at root/stray was not built through the Sondera plugin"),
        "{error}"
    );
}

#[tokio::test]
async fn steps_name_the_root_as_principal_and_the_agent_that_ran_them() {
    let shell = RecordingTool::new("run_shell", "command", json!({"stdout": "ok"}));
    let tool: Arc<dyn Tool> = shell.clone();
    let fixture = Fixture::new(
        |b| b,
        move |sondera| {
            let worker_model = ScriptedModel::runs_once("w-1", "cargo test", "tests pass");
            let worker = llm(sondera, "worker", worker_model, vec![tool]);
            let lead_model = ScriptedModel::transfers_to("worker");
            sondera
                .llm_agent("lead")
                .model(lead_model)
                .sub_agent(worker)
                .build()
                .unwrap()
        },
    );
    let turn = fixture.turn("ana", "s1", "run the tests").await;
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!(shell.runs(), 1);

    let events = fixture.trajectory("ana", "s1").await;
    assert!(events.iter().all(|e| e.event.agent.id == "lead"));
    let attributed = |predicate: &dyn Fn(&Payload) -> bool| {
        let event = &events
            .iter()
            .find(|e| predicate(&e.event.payload))
            .unwrap()
            .event;
        event.execution.clone().unwrap()
    };
    let hand_off =
        attributed(&|p| matches!(p, Payload::ToolCall { tool, .. } if tool == TRANSFER_TOOL));
    assert_eq!(
        (hand_off.agent_name.as_str(), hand_off.agent_path.clone()),
        ("lead", vec!["lead".to_string()])
    );
    let command = attributed(&|p| matches!(p, Payload::ShellCommand { .. }));
    assert_eq!(command.agent_name, "worker");
    assert_eq!(command.agent_path, ["lead", "worker"]);
}

#[tokio::test]
async fn steps_inside_a_workflow_name_the_llm_agent_that_ran_them() {
    let shell = RecordingTool::new("run_shell", "command", json!({"stdout": "ok"}));
    let tool: Arc<dyn Tool> = shell.clone();
    let fixture = Fixture::new(
        |b| b,
        move |sondera| {
            let writer_model = ScriptedModel::runs_once("w-1", "cargo build", "written");
            let writer = llm(sondera, "writer", writer_model, vec![tool]);
            let checker = llm(sondera, "checker", quiet(), vec![]);
            sondera.workflow(
                Arc::new(SequentialAgent::new("pipeline", vec![writer, checker])),
                Workflow::Sequential,
            )
        },
    );
    let turn = fixture.turn("ana", "s1", "build it").await;
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!(shell.runs(), 1);
    let events = fixture.trajectory("ana", "s1").await;
    let command = events
        .iter()
        .find(|e| matches!(e.event.payload, Payload::ShellCommand { .. }))
        .and_then(|e| e.event.execution.clone())
        .unwrap();
    assert_eq!(command.agent_name, "writer");
    assert_eq!(command.agent_path, ["pipeline", "writer"]);
    let answers: Vec<_> = events
        .iter()
        .filter(|e| {
            matches!(
                &e.event.payload,
                Payload::Prompt {
                    role: PromptRole::Assistant,
                    ..
                }
            )
        })
        .filter_map(|e| e.event.execution.as_ref().map(|x| x.agent_name.clone()))
        .collect();
    assert!(answers.contains(&"writer".to_string()), "{answers:?}");
    assert!(answers.contains(&"checker".to_string()), "{answers:?}");
}
