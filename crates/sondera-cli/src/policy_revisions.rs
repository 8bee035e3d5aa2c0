//! `sondera policy push|revisions|rollback`: policy sets kept in a server's
//! store, by revision, one of them current for every server sharing it.

use std::path::Path;
use std::process::ExitCode;

use sondera_policy::PolicyDirectory;
use sondera_proto::v1;

use crate::inert::inert;
use crate::{ServerArgs, block_on};

/// Validates the set here first (a set that does not load is reported with
/// its locations and never sent), then pushes it.
pub(crate) fn push(
    server: &ServerArgs,
    dir: &Path,
    message: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let files = PolicyDirectory::read(dir)?;
    if files.policies.is_empty() {
        anyhow::bail!(
            "{} holds no .cedar file: a pushed set replaces every policy, so an empty one would allow nothing",
            dir.display()
        );
    }
    sondera_policy::PolicyEngine::builder()
        .sources(named(&files.policies), named(&files.schemas))
        .build()?;
    let file = |(name, text): (String, String)| v1::PolicyFile { name, text };
    let request = v1::PushPoliciesRequest {
        policies: files.policies.into_iter().map(file).collect(),
        schemas: files.schemas.into_iter().map(file).collect(),
        message,
    };
    let connection = server.connection()?;
    let pushed = block_on(
        connection.call_any(request, |mut c, r| async move { c.push_policies(r).await }),
    )??;
    print(&pushed, json, true);
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn revisions(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let connection = server.connection()?;
    let listed = block_on(connection.call_any(
        v1::ListPolicyRevisionsRequest::default(),
        |mut c, r| async move { c.list_policy_revisions(r).await },
    ))??;
    let current = listed.current.as_deref();
    if !json {
        println!(
            "this server judges by {} (its policies come from {})",
            listed.in_force, listed.source
        );
    }
    for revision in &listed.revisions {
        print(revision, json, current == Some(revision.revision.as_str()));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn rollback(
    server: &ServerArgs,
    revision: String,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let connection = server.connection()?;
    let request = v1::RollbackPoliciesRequest { revision };
    let current =
        block_on(connection.call_any(
            request,
            |mut c, r| async move { c.rollback_policies(r).await },
        ))??;
    print(&current, json, true);
    Ok(ExitCode::SUCCESS)
}

fn print(revision: &v1::PolicyRevision, json: bool, current: bool) {
    let pushed_at = revision
        .pushed_at
        .and_then(|t| sondera_proto::timestamp_from_wire(t).ok());
    if json {
        let value = serde_json::json!({
            "revision": revision.revision,
            "pushed_at": pushed_at,
            "pushed_by": revision.pushed_by,
            "message": revision.message,
            "policies": revision.policies,
            "current": current,
        });
        println!("{value}");
        return;
    }
    println!(
        "{} {}  {} policies, pushed by {} at {}{}",
        if current { "*" } else { " " },
        revision.revision,
        revision.policies,
        inert(&revision.pushed_by),
        pushed_at.map_or_else(String::new, |t| t
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string()),
        revision
            .message
            .as_deref()
            .map_or_else(String::new, |m| format!(": {}", inert(m))),
    );
}

/// Each file as (name, text).
fn named(files: &[(String, String)]) -> impl Iterator<Item = (&str, &str)> {
    files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
}
