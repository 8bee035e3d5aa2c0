//! `sondera approvals list|show|approve|deny`: an operator's side of the
//! escalations agents put to a server.

use crate::inert::inert;
use std::process::ExitCode;

use clap::Subcommand;
use sondera_harness::remote::Connection;
use sondera_model::{Approval, Payload};
use sondera_store::{
    ApprovalFilter, ApprovalRecord, ApprovalState, ApprovalStatus, PageRequest, Records,
};

use crate::{ServerArgs, block_on};

#[derive(Debug, Subcommand)]
pub(crate) enum ApprovalsCommand {
    /// Approvals of the token's tenant, newest first: pending ones unless --status says otherwise.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// pending, decided or expired.
        #[arg(long, default_value = "pending")]
        status: ApprovalStatus,
        #[arg(long, value_name = "AGENT_ID")]
        agent: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per approval.
        #[arg(long)]
        json: bool,
    },
    /// One approval: the step, the policies that escalated it and why, and what became of it.
    /// Exit status 1 when it is not recorded.
    Show {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Let a pending step run: this once, or with --session / --always for later steps of the
    /// same shape in its session or by its agent from now on.
    Approve {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        #[arg(long, conflicts_with = "always")]
        session: bool,
        #[arg(long)]
        always: bool,
        /// Why, recorded with the decision.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Block a pending step.
    Deny {
        #[command(flatten)]
        server: ServerArgs,
        id: String,
        /// Why, recorded with the decision and shown to the agent.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(command: ApprovalsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ApprovalsCommand::List {
            server,
            status,
            agent,
            limit,
            json,
        } => {
            let records = sondera_harness::RemoteRecords::new(server.connection()?);
            let filter = ApprovalFilter {
                status: Some(status),
                agent_id: agent,
                trajectory_id: None,
            };
            let page = block_on(records.list_approvals(
                sondera_store::Tenants::All,
                &filter,
                &PageRequest::first(limit),
            ))??;
            for approval in &page.items {
                print(approval, json, false)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Show { server, id, json } => {
            let connection = server.connection()?;
            match block_on(connection.approval(&id, std::time::Duration::ZERO))? {
                Ok(approval) => {
                    print(&approval, json, true)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(sondera_harness::HarnessError::Remote { code, message })
                    if code == "NotFound" =>
                {
                    eprintln!("error: {message}");
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
        ApprovalsCommand::Approve {
            server,
            id,
            session,
            always,
            reason,
            json,
        } => {
            let approval = match (session, always) {
                (true, _) => Approval::Session,
                (_, true) => Approval::Always,
                _ => Approval::Once,
            };
            decide(&server.connection()?, &id, approval, reason, json)
        }
        ApprovalsCommand::Deny {
            server,
            id,
            reason,
            json,
        } => decide(&server.connection()?, &id, Approval::Deny, reason, json),
    }
}

fn decide(
    connection: &Connection,
    id: &str,
    approval: Approval,
    reason: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let decided = block_on(connection.decide(id, approval, reason))??;
    print(&decided, json, false)?;
    Ok(ExitCode::SUCCESS)
}

fn print(approval: &ApprovalRecord, json: bool, detailed: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(approval)?);
        return Ok(());
    }
    println!("{}", line(approval));
    if detailed {
        for policy in &approval.verdict.policies {
            let description = policy.description.as_deref().unwrap_or_default();
            println!(
                "  policy {}: {}",
                inert(&policy.policy_id),
                inert(description)
            );
        }
        if let Some(reason) = &approval.verdict.reason {
            println!("  escalated because: {}", inert(reason));
        }
        match &approval.shape {
            Some(shape) => println!(
                "  a session or always approval covers: {}",
                inert(&shape.to_string())
            ),
            None => {
                println!("  approvable once only: the step has no shape that can be trusted again")
            }
        }
        println!(
            "  agent {} trajectory {}#{} session {}",
            inert(&approval.agent_id),
            inert(&approval.trajectory_id),
            approval.seq,
            inert(approval.session_id.as_deref().unwrap_or("-"))
        );
    }
    Ok(())
}

/// `id status agent step [policies]`, with the outcome or the deadline.
pub(crate) fn line(approval: &ApprovalRecord) -> String {
    let policies: Vec<&str> = approval
        .verdict
        .policies
        .iter()
        .map(|p| p.policy_id.as_str())
        .collect();
    let state = match &approval.state {
        ApprovalState::Pending => format!(
            "pending until {}",
            approval.expires_at.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        ApprovalState::Decided {
            approval: decision,
            decided_by,
            reason,
            ..
        } => {
            let why = reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({})", inert(r)));
            format!("{} by {}{why}", decision.phrase(), inert(&decided_by.id))
        }
        ApprovalState::Expired { .. } => "expired: denied".to_string(),
    };
    format!(
        "{}  {}  {}  {}  [{}]",
        inert(&approval.id),
        inert(&approval.agent_id),
        inert(&step(&approval.action)),
        state,
        inert(&policies.join(","))
    )
}

/// The step in a few words.
fn step(action: &Payload) -> String {
    match action {
        Payload::ShellCommand { command, .. } => format!("$ {command}"),
        Payload::ToolCall {
            tool, arguments, ..
        } => format!("{tool} {arguments}"),
        Payload::WebFetch { url, .. } => format!("fetch {url}"),
        Payload::FileOperation {
            operation, path, ..
        } => format!("{} {path}", operation.as_str()),
        other => other.kind().to_string(),
    }
}
