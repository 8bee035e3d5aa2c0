//! `sondera grants list|revoke`: the standing ("always") approvals an
//! operator keeps for an agent on a server, and taking one back.

use std::process::ExitCode;

use clap::Subcommand;
use sondera_harness::{Backend, HarnessError};
use sondera_model::Grant;

use crate::inert::inert;
use crate::{ServerArgs, block_on};

#[derive(Debug, Subcommand)]
pub(crate) enum GrantsCommand {
    /// An agent's standing approvals, oldest first: id, what it covers, who granted it and when.
    List {
        #[command(flatten)]
        server: ServerArgs,
        agent: String,
        /// One JSON object per grant, with its id.
        #[arg(long)]
        json: bool,
    },
    /// Take back one standing approval by the id `grants list` shows: the agent's later steps
    /// of that shape are escalated again. Needs an operator token. Exit status 1 when the agent
    /// has no such grant.
    Revoke {
        #[command(flatten)]
        server: ServerArgs,
        agent: String,
        grant_id: String,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(command: GrantsCommand) -> anyhow::Result<ExitCode> {
    match command {
        GrantsCommand::List {
            server,
            agent,
            json,
        } => {
            let connection = server.connection()?;
            for grant in block_on(connection.grants(&agent))?? {
                print(&grant, json)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        GrantsCommand::Revoke {
            server,
            agent,
            grant_id,
            json,
        } => {
            let connection = server.connection()?;
            match block_on(connection.revoke_grant(&agent, &grant_id))? {
                Ok(grant) => {
                    print(&grant, json)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(HarnessError::Remote { code, message }) if code == "NotFound" => {
                    eprintln!("error: {message}");
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

fn print(grant: &Grant, json: bool) -> anyhow::Result<()> {
    if json {
        let mut value = serde_json::to_value(grant)?;
        value["id"] = grant.shape.id().into();
        println!("{value}");
    } else {
        println!(
            "{}  {}  granted by {} at {}",
            grant.shape.id(),
            inert(&grant.shape.to_string()),
            inert(&grant.granted_by.id),
            grant.granted_at.format("%Y-%m-%d %H:%M:%S UTC")
        );
    }
    Ok(())
}
