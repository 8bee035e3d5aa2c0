//! Policy reloads: on SIGHUP, and when a file under a watched directory
//! changes. A set that fails to load is reported and the running set stays.
//! Tokens reload on SIGHUP too (see [`AccessControl::reload`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sondera_policy::{PolicyEngine, PolicyLoadErrors};
use tokio::sync::mpsc;

use crate::auth::AccessControl;
use crate::governance::Governance;

/// Builds the policy engine, at start and on every reload.
pub type PolicyLoader = Arc<dyn Fn() -> Result<PolicyEngine, PolicyLoadErrors> + Send + Sync>;

/// Reads the server's configuration again on SIGHUP, before policies and
/// tokens reload (so they load with what it set); answers what to put in
/// force, or `None` to keep the running configuration.
pub type Reconfigure = Arc<dyn Fn() -> Option<Reconfiguration> + Send + Sync>;

/// What a configuration read again on SIGHUP puts in force.
pub struct Reconfiguration {
    /// The limits to hold requests to from now on.
    pub limits: crate::limits::Limits,
    /// Called once the limits, policies and tokens are all in force, so
    /// that what it reports as in force already is.
    pub in_force: Box<dyn FnOnce() + Send>,
}

/// What a reload did.
#[derive(Debug)]
pub enum ReloadOutcome {
    /// The new set is in force, with this many policies.
    Reloaded(usize),
    /// The new set was refused; the running set stays.
    Refused(PolicyLoadErrors),
}

/// Loads the policies again and puts them in force if they are valid. A
/// server that takes its policies from the store checks the store instead.
pub(crate) fn reload(governance: &Governance, loader: &PolicyLoader) -> ReloadOutcome {
    if governance.follows_store_policies() {
        governance.policies_may_have_changed();
        return ReloadOutcome::Reloaded(governance.engine().policy_ids().count());
    }
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

/// Watches `dirs` for changes with the operating system's notifications
/// (inotify on Linux), or, where those cannot be had, by polling every
/// `poll`; each change sends a unit on `changed`. `None` when there is
/// nothing to watch or no watcher could be made.
fn watcher(
    dirs: &[PathBuf],
    poll: Duration,
    changed: mpsc::UnboundedSender<()>,
) -> Option<Box<dyn notify::Watcher + Send>> {
    if dirs.is_empty() {
        return None;
    }
    let handler = move |event: notify::Result<notify::Event>| {
        let relevant = event.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_)));
        if relevant {
            let _ = changed.send(());
        }
    };
    let mut watcher: Box<dyn notify::Watcher + Send> = match notify::recommended_watcher(
        handler.clone(),
    ) {
        Ok(native) => Box::new(native),
        Err(e) => {
            tracing::warn!(
                "file notifications unavailable ({e}); polling policy directories every {poll:?}"
            );
            let config = notify::Config::default().with_poll_interval(poll);
            match notify::PollWatcher::new(handler, config) {
                Ok(polling) => Box::new(polling),
                Err(e) => {
                    tracing::error!("cannot watch the policy directories: {e}; reload with SIGHUP");
                    return None;
                }
            }
        }
    };
    for dir in dirs {
        if let Err(e) = watcher.watch(dir, notify::RecursiveMode::Recursive) {
            tracing::error!("cannot watch {}: {e}; reload with SIGHUP", dir.display());
        }
    }
    Some(watcher)
}

/// Reloads policies on SIGHUP and whenever the watched directories change
/// (once changes have settled for `settle`), and tokens on SIGHUP, until the
/// task is dropped.
pub(crate) async fn watch(
    governance: Arc<Governance>,
    access: Arc<AccessControl>,
    loader: PolicyLoader,
    reconfigure: Option<Reconfigure>,
    dirs: Vec<PathBuf>,
    settle: Duration,
) {
    let mut hangup = hangup_signal();
    let (changed, mut changes) = mpsc::unbounded_channel();
    let _watcher = watcher(&dirs, settle, changed);
    loop {
        let hup = async {
            match hangup.as_mut() {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = hup => {
                tracing::info!("SIGHUP: reloading the configuration, policies and tokens");
                let reconfigured = reconfigure.as_ref().and_then(|r| r());
                let in_force = reconfigured.map(|next| {
                    governance.set_limits(next.limits);
                    next.in_force
                });
                reload(&governance, &loader);
                access.reload();
                if let Some(report) = in_force {
                    report();
                }
            }
            Some(()) = changes.recv() => {
                // An editor's save or a checkout is several events: wait
                // until they stop, then load once.
                while let Ok(Some(())) = tokio::time::timeout(settle, changes.recv()).await {}
                tracing::info!("policy files changed: reloading");
                reload(&governance, &loader);
            }
        }
    }
}

fn hangup_signal() -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}
