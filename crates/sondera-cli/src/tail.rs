//! `sondera tail`: follow a server's live event stream, one line per event.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use sondera_harness::remote::Connection;
use sondera_model::{Decision, Event};
use sondera_proto::v1;

use crate::ServerArgs;

#[derive(Debug, Args)]
pub(crate) struct TailArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Only this agent's events.
    #[arg(long, value_name = "AGENT_ID")]
    agent: Option<String>,
    /// Only this trajectory's events.
    #[arg(long, value_name = "TRAJECTORY_ID")]
    trajectory: Option<String>,
    /// One JSON object per event ({seq, event, adjudication}) instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: TailArgs) -> anyhow::Result<ExitCode> {
    let connection = args.server.connection()?;
    crate::block_on(follow(connection, args))?
}

async fn follow(connection: Connection, args: TailArgs) -> anyhow::Result<ExitCode> {
    let request = v1::StreamEventsRequest {
        agent_id: args.agent,
        trajectory_id: args.trajectory,
    };
    // The stream has no deadline; only connecting does.
    let mut request = connection.request(request);
    request.set_timeout(std::time::Duration::from_secs(u64::from(u32::MAX)));
    let mut stream = connection
        .client()
        .stream_events(request)
        .await
        .map_err(|s| sondera_harness::remote::status_error(s, std::time::Duration::ZERO))?
        .into_inner();
    // Colours reach a terminal only, and never under NO_COLOR: anstream
    // strips them otherwise.
    let mut out = anstream::stdout().lock();
    while let Some(recorded) = stream
        .message()
        .await
        .map_err(|s| anyhow::anyhow!("the stream ended: {}", s.message()))?
    {
        if let Some(approval) = recorded.approval {
            let approval =
                sondera_proto::approval_from_wire(approval, &sondera_store::TenantId::default())?;
            if args.json {
                writeln!(out, "{}", serde_json::json!({ "approval": approval }))?;
            } else {
                let colour = anstyle::AnsiColor::Cyan.on_default().bold();
                let label = format!("{colour}{:<8}{colour:#}", "approval");
                writeln!(out, "{label} {}", crate::approvals::line(&approval))?;
            }
            out.flush()?;
            continue;
        }
        let seq = recorded.seq;
        let event = Event::try_from(recorded.event.unwrap_or_default())?;
        let verdict = recorded
            .adjudicated
            .map(sondera_model::Adjudicated::try_from)
            .transpose()?;
        if args.json {
            let line = serde_json::json!({ "seq": seq, "event": event, "adjudication": verdict });
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{}", line(seq, &event, verdict.as_ref()))?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `time agent trajectory#seq decision kind reason [policies]`, the
/// decision styled.
fn line(seq: u64, event: &Event, verdict: Option<&sondera_model::Adjudicated>) -> String {
    let (decision, reason, policies) = match verdict {
        Some(v) => (
            v.decision,
            v.reason.clone().unwrap_or_default(),
            v.policies
                .iter()
                .map(|p| p.policy_id.as_str())
                .collect::<Vec<_>>()
                .join(","),
        ),
        None => (Decision::Allow, String::new(), String::new()),
    };
    let colour = match decision {
        Decision::Allow => anstyle::AnsiColor::Green.on_default(),
        Decision::Deny => anstyle::AnsiColor::Red.on_default().bold(),
        Decision::Escalate => anstyle::AnsiColor::Yellow.on_default().bold(),
    };
    let painted = format!("{colour}{:<8}{colour:#}", decision.as_str());
    let short_id: String = event.trajectory_id.chars().take(8).collect();
    let mut line = format!(
        "{} {} {}#{seq} {painted} {:<21} {}",
        event.timestamp.format("%H:%M:%S%.3f"),
        crate::inert::inert(&event.agent.id),
        crate::inert::inert(&short_id),
        event.payload.kind(),
        crate::inert::inert(&reason),
    );
    if !policies.is_empty() {
        line.push_str(&format!(" [{}]", crate::inert::inert(&policies)));
    }
    line
}
