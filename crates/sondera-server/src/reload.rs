//! Policy reloads: on SIGHUP, and when a file under a watched directory
//! changes. A set that fails to load is reported and the running set stays.
//! Tokens reload on SIGHUP too (see [`AccessControl::reload`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sondera_policy::{PolicyEngine, PolicyLoadErrors};

use crate::auth::AccessControl;
use crate::governance::Governance;

/// Builds the policy engine, at start and on every reload.
pub type PolicyLoader = Arc<dyn Fn() -> Result<PolicyEngine, PolicyLoadErrors> + Send + Sync>;

/// What a reload did.
#[derive(Debug)]
pub enum ReloadOutcome {
    /// The new set is in force, with this many policies.
    Reloaded(usize),
    /// The new set was refused; the running set stays.
    Refused(PolicyLoadErrors),
}

/// Loads the policies again and puts them in force if they are valid.
pub fn reload(governance: &Governance, loader: &PolicyLoader) -> ReloadOutcome {
    match loader() {
        Ok(engine) => {
            let count = engine.policy_ids().count();
            governance.replace_engine(engine);
            tracing::info!(policies = count, "policies reloaded");
            ReloadOutcome::Reloaded(count)
        }
        Err(errors) => {
            governance.metrics().reload_failed();
            tracing::error!("policy reload refused, the running policies stay in force:\n{errors}");
            ReloadOutcome::Refused(errors)
        }
    }
}

/// The modification time and size of every file under `dirs`, in path
/// order: it changes when a policy file is added, removed or edited.
fn fingerprint(dirs: &[PathBuf]) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Option<SystemTime>, u64)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.metadata() {
                Ok(m) if m.is_dir() => walk(&path, out),
                Ok(m) => out.push((path, m.modified().ok(), m.len())),
                Err(_) => {}
            }
        }
    }
    let mut files = Vec::new();
    for dir in dirs {
        walk(dir, &mut files);
    }
    files.sort();
    files
}

/// Reloads policies on SIGHUP and whenever the watched directories change,
/// and tokens on SIGHUP, until the task is dropped.
pub(crate) async fn watch(
    governance: Arc<Governance>,
    access: Arc<AccessControl>,
    loader: PolicyLoader,
    dirs: Vec<PathBuf>,
    poll: Duration,
) {
    let mut hangup = hangup_signal();
    let mut seen = fingerprint(&dirs);
    let mut tick = tokio::time::interval(poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let hup = async {
            match hangup.as_mut() {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = hup => {
                tracing::info!("SIGHUP: reloading policies and tokens");
                seen = fingerprint(&dirs);
                reload(&governance, &loader);
                access.reload();
            }
            _ = tick.tick(), if !dirs.is_empty() => {
                let now = fingerprint(&dirs);
                if now != seen {
                    seen = now;
                    tracing::info!("policy files changed: reloading");
                    reload(&governance, &loader);
                }
            }
        }
    }
}

fn hangup_signal() -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}
