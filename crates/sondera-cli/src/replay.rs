//! `sondera replay`: re-judge recorded trajectories under candidate policies
//! and report every decision that would change.

use std::process::ExitCode;

use sondera_harness::replay::{ReplayReport, ReplayScope, replay};
use sondera_policy::PolicyEngine;
use sondera_proto::v1;
use sondera_store::TrajectoryFilter;

use crate::ReplayArgs;

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let candidate = match &args.revision {
        Some(revision) => kept_revision(&args, revision)?,
        None => args.policies.engine()?,
    };
    let store = args.store.open_recorded()?;
    let scope = ReplayScope {
        filter: TrajectoryFilter {
            agent_id: args.agent.clone(),
            ..TrajectoryFilter::default()
        },
        since: args.since,
    };
    let progress = crate::progress(None, "events re-judged");
    let report = crate::block_on(replay(store.as_ref(), &candidate, &scope, |events| {
        progress.set_position(events)
    }))??;
    progress.finish_and_clear();
    if args.json {
        for change in &report.changed {
            println!("{}", serde_json::to_string(change)?);
        }
        println!(
            "{}",
            serde_json::json!({
                "trajectories": report.trajectories,
                "events": report.events,
                "changed": report.changed.len(),
            })
        );
    } else {
        for change in &report.changed {
            println!(
                "{} #{} {}: {} -> {}  [{}] -> [{}]",
                change.trajectory_id,
                change.seq,
                change.kind,
                change.before.as_str(),
                change.after.as_str(),
                change.before_policies.join(", "),
                change.after_policies.join(", "),
            );
        }
        println!("{}", totals(&report));
    }
    Ok(if report.changed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The engine of a policy revision the server's store keeps, with the
/// mode, workspace and hosts these arguments give.
fn kept_revision(args: &ReplayArgs, revision: &str) -> anyhow::Result<PolicyEngine> {
    let connection = args.store.remote.connection()?;
    let request = v1::GetPolicyRevisionRequest {
        revision: revision.to_owned(),
    };
    let set = crate::block_on(connection.call_any(request, |mut c, r| async move {
        c.get_policy_revision(r).await
    }))??;
    let engine = args.policies.builder()?()
        .sources(named(&set.policies), named(&set.schemas))
        .build()?;
    let kept = set.revision.map(|r| r.revision).unwrap_or_default();
    anyhow::ensure!(
        engine.revision() == kept,
        "revision {kept} loads here as {}: the set changed on the way",
        engine.revision()
    );
    Ok(engine)
}

fn totals(report: &ReplayReport) -> String {
    use crate::count;
    use sondera_model::Decision::{Allow, Deny, Escalate};
    let mut line = format!(
        "{}, {} re-judged, {} change",
        count(report.trajectories as usize, "trajectory", "trajectories"),
        count(report.events as usize, "event", "events"),
        count(report.changed.len(), "decision", "decisions"),
    );
    let moves: Vec<String> = [Allow, Deny, Escalate]
        .iter()
        .flat_map(|b| [Allow, Deny, Escalate].map(|a| (*b, a)))
        .filter(|(b, a)| b != a)
        .filter_map(|(b, a)| {
            let n = report.count(b, a);
            (n > 0).then(|| format!("{n} {} -> {}", b.as_str(), a.as_str()))
        })
        .collect();
    if !moves.is_empty() {
        line.push_str(&format!(" ({})", moves.join(", ")));
    }
    line
}

/// Each file as (name, text).
fn named(files: &[v1::PolicyFile]) -> impl Iterator<Item = (&str, &str)> {
    files.iter().map(|f| (f.name.as_str(), f.text.as_str()))
}
