//! `sondera trajectories list|show` and `sondera adjudications list`: read
//! what a local data directory recorded.

use crate::inert::inert;
use std::process::ExitCode;

use sondera_model::Decision;
use sondera_store::{AdjudicationFilter, PageRequest, TrajectoryFilter, TrajectoryStatus};

use crate::{AdjudicationsCommand, TrajectoriesCommand};

use crate::block_on;

pub(crate) fn trajectories(command: TrajectoriesCommand) -> anyhow::Result<ExitCode> {
    match command {
        TrajectoriesCommand::List {
            store,
            agent,
            status,
            session,
            decision,
            policy,
            since,
            until,
            text,
            limit,
            json,
        } => {
            let status = status
                .map(|s| s.parse::<TrajectoryStatus>().map_err(anyhow::Error::msg))
                .transpose()?;
            let filter = TrajectoryFilter {
                agent_id: agent,
                status,
                session_id: session,
                decision,
                policy_id: policy,
                active: sondera_store::TimeWindow { since, until },
                text,
            };
            let records = store.open_recorded()?;
            let page = block_on(records.list_trajectories(
                store.tenants(),
                &filter,
                &PageRequest::first(limit),
            ))??;
            for t in &page.items {
                if json {
                    println!("{}", serde_json::to_string(t)?);
                } else {
                    println!(
                        "{}  {}  {}  {} events  updated {}",
                        inert(&t.id),
                        inert(&t.agent_id),
                        t.status.as_str(),
                        t.event_count,
                        t.updated_at.to_rfc3339()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TrajectoriesCommand::Show { store, id, json } => {
            let records = store.open_recorded()?;
            let Some(detail) = block_on(records.trajectory_with_events(&store.tenant(), &id))??
            else {
                eprintln!("error: trajectory {id} is not recorded");
                return Ok(ExitCode::from(1));
            };
            if json {
                println!("{}", serde_json::to_string(&detail)?);
                return Ok(ExitCode::SUCCESS);
            }
            let s = &detail.summary;
            println!(
                "{}  agent {}  {}  {} events",
                inert(&s.id),
                inert(&s.agent_id),
                s.status.as_str(),
                s.event_count
            );
            for stored in &detail.events {
                let verdict = stored.adjudication.as_ref().map_or(String::new(), |v| {
                    format!(
                        "{}  [{}]",
                        v.decision.as_str(),
                        inert(&v.policy_ids().collect::<Vec<_>>().join(", "))
                    )
                });
                println!(
                    "  #{:<4} {:<22} {verdict}",
                    stored.seq,
                    stored.event.payload.kind()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub(crate) fn adjudications(command: AdjudicationsCommand) -> anyhow::Result<ExitCode> {
    let AdjudicationsCommand::List {
        store,
        agent,
        trajectory,
        decision,
        limit,
        json,
    } = command;
    let decision = match decision.as_deref() {
        None => None,
        Some("deny") => Some(Decision::Deny),
        Some("escalate") => Some(Decision::Escalate),
        Some(other) => anyhow::bail!("unknown decision `{other}` (deny or escalate)"),
    };
    let filter = AdjudicationFilter {
        agent_id: agent,
        trajectory_id: trajectory,
        decision,
    };
    let records = store.open_recorded()?;
    let page = block_on(records.list_adjudications(
        store.tenants(),
        &filter,
        &PageRequest::first(limit),
    ))??;
    for a in &page.items {
        if json {
            println!("{}", serde_json::to_string(a)?);
        } else {
            println!(
                "{}  {} #{}  {}  {}  [{}]",
                a.timestamp.to_rfc3339(),
                inert(&a.trajectory_id),
                a.seq,
                a.kind,
                a.adjudication.decision.as_str(),
                inert(&a.adjudication.policy_ids().collect::<Vec<_>>().join(", "))
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
