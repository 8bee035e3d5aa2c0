//! An agent loop guarded by an embedded harness: each tool call is classified,
//! judged before it runs, and its result judged after.
//!
//! Run with `cargo run -p sondera-harness --example embedded`.

use serde_json::{Value, json};
use sondera_guard::{ToolOutcome, classify_tool_call, observation_for};
use sondera_harness::{Harness, LocalHarness};
use sondera_model::Agent;

/// Stands in for the tools an agent would really run.
fn run_tool(tool: &str, args: &Value) -> Value {
    match tool {
        "bash" => json!({"stdout": format!("ran: {}", args["command"]), "exit_code": 0}),
        "read_file" => json!({"content": "fn main() {}"}),
        _ => json!({"result": "ok"}),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut harness = LocalHarness::builder()
        .agent(Agent::new("example-agent", "google-adk"))
        .in_memory()
        .build()?;
    harness
        .initialize(None, Some("example-session".into()))
        .await?;

    let calls = [
        ("bash", json!({"command": "cargo build --release"})),
        (
            "read_file",
            json!({"path": "/workspace/project/src/main.rs"}),
        ),
        ("read_file", json!({"path": "/home/dev/.ssh/id_rsa"})),
        ("create", json!({"title": "Release notes", "body": "draft"})),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        let action = classify_tool_call(&format!("call-{i}"), tool, args);
        let verdict = harness.adjudicate(harness.event(action.clone())?).await?;
        if !verdict.is_allowed() {
            println!("{tool:<10} blocked:\n{}", verdict.deny_message());
            continue;
        }
        let result = run_tool(tool, args);
        let observation = observation_for(&action, ToolOutcome::Returned(&result));
        let checked = harness.adjudicate(harness.event(observation)?).await?;
        println!(
            "{tool:<10} {} -> result {}",
            action.kind(),
            checked.decision
        );
    }
    harness.finalize(Some("example finished".into())).await?;
    Ok(())
}
