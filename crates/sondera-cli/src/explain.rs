//! `sondera policy explain`: how one step is seen and judged: the action it
//! is classified as, the context the detectors computed, and the policies
//! that decided.

use crate::inert::inert;
use std::io::Read;
use std::process::ExitCode;

use anyhow::Context as _;
use sondera_harness::classify_tool_call;
use sondera_model::{Agent, Event, Payload, PromptRole, TrajectoryState};

use crate::ExplainArgs;

pub(crate) fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let engine = args.policies.engine()?;
    let (state, event) = match &args.case {
        Some(path) => case_event(&engine, path, args.id.as_deref())?,
        None => (TrajectoryState::default(), event(&args)?),
    };
    let Some(request) = engine.request(&event, &state)? else {
        anyhow::bail!(
            "a `{}` event is recorded, not judged by policies",
            event.payload.kind()
        );
    };
    let cedar = engine.cedar(&request)?;
    let context = match cedar.request.context() {
        Some(context) => sorted(
            context
                .to_json_value()
                .map_err(|e| anyhow::anyhow!("cannot show the request context: {e}"))?,
        ),
        None => serde_json::Value::Null,
    };
    let mut verdict = engine.decide(&request);
    verdict.policy_revision = Some(engine.revision().to_owned());
    let cedar_evaluated = engine.needs_cedar(&request);
    let origins = value_origins(&state, &event.payload);
    let evidence = evidence(&event.payload, request.signals.as_ref());
    if args.json {
        let report = serde_json::json!({
            "action": request.action.as_str(),
            "payload": event.payload,
            "context": context,
            "provenance": origins,
            "injection_evidence": evidence,
            "verdict": verdict,
            "cedar_evaluated": cedar_evaluated,
        });
        println!("{report}");
    } else {
        println!("action: {}", request.action.as_str());
        // JSON escapes C0 controls but not C1 or reordering characters.
        let payload = serde_json::to_string(&event.payload)?;
        println!("payload: {}", inert(&payload));
        println!("context:");
        for line in serde_json::to_string_pretty(&context)?.lines() {
            println!("  {}", inert(line));
        }
        if !origins.is_empty() {
            println!("where the values came from:");
            for origin in &origins {
                println!("  {}", inert(origin["text"].as_str().unwrap_or_default()));
            }
        }
        if !evidence.is_empty() {
            println!("injection evidence:");
            for found in &evidence {
                println!(
                    "  {} at {}: {}",
                    found["feature"].as_str().unwrap_or_default(),
                    found["at"],
                    inert(&found["text"].to_string())
                );
            }
        }
        let reason = verdict.reason.as_deref().unwrap_or_default();
        println!(
            "decision: {} ({})",
            verdict.decision.as_str(),
            inert(reason)
        );
        for policy in &verdict.policies {
            println!("  {}", describe(policy));
        }
        for policy in &verdict.shadow_matches {
            println!("  shadow: {}", describe(policy));
        }
        println!("policy revision: {}", engine.revision());
        if !cedar_evaluated {
            println!("judged without Cedar: every policy's outcome was known from the facts");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The case `id` of the cases file at `path` (or its only case), as the
/// state before its last event and that event.
fn case_event(
    engine: &sondera_policy::PolicyEngine,
    path: &str,
    id: Option<&str>,
) -> anyhow::Result<(TrajectoryState, Event)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    let cases = sondera_harness::corpus::parse_cases(path, &text)?;
    let case = match id {
        Some(id) => cases
            .into_iter()
            .find(|c| c.id == id)
            .with_context(|| format!("{path} has no case `{id}`"))?,
        None if cases.len() == 1 => cases.into_iter().next().expect("one case"),
        None => anyhow::bail!("{path} holds {} cases: name one with --id", cases.len()),
    };
    case.before_last(engine)
        .with_context(|| format!("case `{}` has no steps", case.id))
}

/// Where each identifying value a tool call or fetch acts on came from.
fn value_origins(state: &TrajectoryState, payload: &Payload) -> Vec<serde_json::Value> {
    use sondera_guard::provenance;
    let facts = match payload {
        Payload::ToolCall {
            tool, arguments, ..
        } => provenance::of_call(&state.provenance, tool, arguments),
        Payload::WebFetch { url, body, .. } => {
            provenance::of_fetch(&state.provenance, url, body.as_deref(), false)
        }
        _ => return Vec::new(),
    };
    facts
        .origins
        .iter()
        .map(|trace| {
            let mut from = Vec::new();
            if trace.user {
                from.push("the user's prompt".to_string());
            }
            if trace.observed {
                let source = trace.source.as_ref().map_or_else(
                    || "content the agent read".to_string(),
                    |(call, tool)| format!("the result of {tool} (call {call})"),
                );
                let flag = if trace.flagged {
                    ", which carried injected instructions"
                } else {
                    ""
                };
                from.push(format!("{source}{flag}"));
            }
            serde_json::json!({
                "argument": trace.argument,
                "value": trace.value,
                "user": trace.user,
                "observed": trace.observed,
                "flagged": trace.flagged,
                "source": trace.source.as_ref().map(|(call, tool)| serde_json::json!({"call_id": call, "tool": tool})),
                "text": format!("{} = {:?}: from {}", trace.argument, trace.value, from.join(" and ")),
            })
        })
        .collect()
}

/// The injection features found in what a step reads or sends, with the
/// text each was found in.
fn evidence(
    payload: &Payload,
    signals: Option<&sondera_guard::content::Signals>,
) -> Vec<serde_json::Value> {
    let (Some(text), Some(signals)) = (sondera_guard::content::scanned_text(payload), signals)
    else {
        return Vec::new();
    };
    signals
        .evidence
        .iter()
        .map(|e| {
            serde_json::json!({
                "feature": e.feature.tag(),
                "at": e.span.start,
                "text": text.get(e.span.clone()).unwrap_or_default(),
            })
        })
        .collect()
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
