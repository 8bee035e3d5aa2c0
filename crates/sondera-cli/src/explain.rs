//! `sondera policy explain`: how one step is seen and judged: the action it
//! is classified as, the context the detectors computed, and the policies
//! that decided.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context as _;
use sondera_harness::classify_tool_call;
use sondera_model::{Agent, Event, Payload, PromptRole, TrajectoryState};

use crate::ExplainArgs;

pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let engine = args.policies.engine()?;
    let event = event(&args)?;
    let Some(request) = engine.request(&event, &TrajectoryState::default())? else {
        anyhow::bail!(
            "a `{}` event is recorded, not judged by policies",
            event.payload.kind()
        );
    };
    let context = match request.request.context() {
        Some(context) => sorted(
            context
                .to_json_value()
                .map_err(|e| anyhow::anyhow!("cannot show the request context: {e}"))?,
        ),
        None => serde_json::Value::Null,
    };
    let verdict = engine.decide(&request);
    if args.json {
        let report = serde_json::json!({
            "action": request.action.as_str(),
            "payload": event.payload,
            "context": context,
            "verdict": verdict,
        });
        println!("{report}");
    } else {
        println!("action: {}", request.action.as_str());
        println!("payload: {}", serde_json::to_string(&event.payload)?);
        println!("context:");
        for line in serde_json::to_string_pretty(&context)?.lines() {
            println!("  {line}");
        }
        let reason = verdict.reason.as_deref().unwrap_or_default();
        println!("decision: {} ({reason})", verdict.decision.as_str());
        for policy in &verdict.policies {
            println!("  {}", describe(policy));
        }
        for policy in &verdict.shadow_matches {
            println!("  shadow: {}", describe(policy));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `value` with every object's keys in order, so the output is the same
/// whichever way serde_json was built to keep them.
fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(items) => items.into_iter().map(sorted).collect(),
        other => other,
    }
}

fn describe(policy: &sondera_model::PolicyMetadata) -> String {
    let severity = policy
        .annotations
        .get("severity")
        .map_or(String::new(), |s| format!(" [{s}]"));
    let description = policy.description.as_deref().unwrap_or_default();
    format!("{}{severity}: {description}", policy.policy_id)
}

/// The event to explain, from a file, standard input or a shorthand.
fn event(args: &ExplainArgs) -> anyhow::Result<Event> {
    let agent = Agent::new("explain", "sondera-cli");
    let payload = if let Some(command) = &args.shell {
        let mut arguments = serde_json::json!({ "command": command });
        if let Some(dir) = &args.cwd {
            arguments["working_dir"] = dir.clone().into();
        }
        classify_tool_call("explain-call", "bash", &arguments)
    } else if let Some(tool) = &args.tool {
        let arguments: serde_json::Value =
            serde_json::from_str(args.args.as_deref().unwrap_or("{}"))
                .context("--args is not a JSON object")?;
        classify_tool_call("explain-call", tool, &arguments)
    } else if let Some(text) = &args.prompt {
        Payload::Prompt {
            role: PromptRole::User,
            content: text.clone(),
        }
    } else {
        let text = match args.event.as_deref() {
            None | Some("-") => {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                text
            }
            Some(path) => {
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?
            }
        };
        return Ok(Event::from_json(text.trim(), args.max_event_bytes)?);
    };
    Ok(Event::new("explain", &agent, payload))
}
