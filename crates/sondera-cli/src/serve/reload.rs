//! What `sondera serve` does on SIGHUP before its policies and tokens
//! reload: reads its command line, environment and configuration file
//! again, logs each setting that changed and whether it is in force now or
//! after a restart, and points the policy and token loaders at the new
//! settings.

use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory as _, FromArgMatches as _};
use parking_lot::{Mutex, RwLock};
use sondera_server::{Limits, Reconfiguration, Reconfigure};

use super::ServeArgs;
use crate::config::{self, Effective, Layered};

/// The settings SIGHUP puts in force; any other needs a restart.
pub(crate) const RELOADABLE: &[&str] = &[
    "policies",
    "mode",
    "workspace",
    "home",
    "allow-host",
    "token",
    "tokens-file",
    "max-event-bytes",
    "max-batch-events",
    "approval-timeout",
    "max-approval-timeout",
];

/// A closure handed to the server whose body a reload replaces.
pub(crate) struct Swappable<R>(Arc<RwLock<Arc<dyn Fn() -> R + Send + Sync>>>);

impl<R: 'static> Swappable<R> {
    pub(crate) fn new(current: Arc<dyn Fn() -> R + Send + Sync>) -> Self {
        Self(Arc::new(RwLock::new(current)))
    }

    /// The closure the server calls: always the latest one set.
    pub(crate) fn handle(&self) -> Arc<dyn Fn() -> R + Send + Sync> {
        let cell = self.0.clone();
        Arc::new(move || {
            let current = cell.read().clone();
            current()
        })
    }

    fn set(&self, next: Arc<dyn Fn() -> R + Send + Sync>) {
        *self.0.write() = next;
    }
}

/// The running server's settings and the loaders that follow them.
pub(crate) struct Running {
    pub(crate) layered: Layered,
    pub(crate) settings: Mutex<Vec<Effective>>,
    pub(crate) limits: Mutex<Limits>,
    pub(crate) policies:
        Swappable<Result<sondera_policy::PolicyEngine, sondera_policy::PolicyLoadErrors>>,
    pub(crate) store_policies: Swappable<sondera_policy::PolicyEngineBuilder>,
    pub(crate) tokens: Swappable<Result<sondera_server::Tokens, String>>,
}

impl Running {
    /// The server's hook: reload, and answer the limits to hold requests to
    /// and the report of what changed, logged once it is in force.
    pub(crate) fn reconfigure(self: &Arc<Self>) -> Reconfigure {
        let running = self.clone();
        Arc::new(move || running.reload())
    }

    fn reload(&self) -> Option<Reconfiguration> {
        let command = crate::Cli::command();
        let parsed = match self.layered.reparse(&command) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::error!("configuration not reloaded, the running one stays: {e}");
                return None;
            }
        };
        let serve = parsed.matches.subcommand_matches("serve")?;
        let args = match ServeArgs::from_arg_matches(serve) {
            Ok(args) => args,
            Err(e) => {
                tracing::error!("configuration not reloaded, the running one stays: {e}");
                return None;
            }
        };
        let settings = config::effective(&command, serve, &parsed.layered);
        let before = std::mem::replace(&mut *self.settings.lock(), settings.clone());
        self.apply(&args);
        let mut limits = self.limits.lock();
        *limits = Limits {
            max_event_bytes: args.max_event_bytes,
            max_batch_events: args.max_batch_events,
            approval_timeout: Duration::from_secs(args.approval_timeout),
            max_approval_timeout: Duration::from_secs(args.max_approval_timeout),
            ..limits.clone()
        };
        Some(Reconfiguration {
            limits: limits.clone(),
            in_force: Box::new(move || report_changes(&before, &settings)),
        })
    }

    /// Points the loaders at `args`; a setting that does not load is
    /// logged and the running loader stays.
    fn apply(&self, args: &ServeArgs) {
        match args.policies.loader() {
            Ok(loader) => self.policies.set(loader),
            Err(e) => tracing::error!("policy settings not applied, the running ones stay: {e:#}"),
        }
        match args.policies.builder() {
            Ok(builder) => self.store_policies.set(builder),
            Err(e) => tracing::error!("policy settings not applied, the running ones stay: {e:#}"),
        }
        self.tokens.set(args.token_loader());
    }
}

/// Logs every setting whose value differs between `before` and `after`.
fn report_changes(before: &[Effective], after: &[Effective]) {
    let mut changed = 0;
    for (old, new) in before.iter().zip(after) {
        if old.key != new.key || old.value == new.value {
            continue;
        }
        changed += 1;
        let (from, to) = (shown(&old.value), shown(&new.value));
        if RELOADABLE.contains(&new.key.as_str()) {
            tracing::info!(setting = new.key, from, to, origin = %new.origin, "setting changed: in force now");
        } else {
            tracing::warn!(setting = new.key, from, to, origin = %new.origin, "setting changed: takes effect after a restart");
        }
    }
    if changed == 0 {
        tracing::info!("configuration read again: no setting changed");
    }
}

fn shown(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("(unset)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reloadable_setting_is_a_flag_of_serve() {
        let command = crate::Cli::command();
        let keys: Vec<&str> = config::settable(config::subcommand(&command))
            .map(|(key, _)| key)
            .collect();
        for key in RELOADABLE {
            assert!(keys.contains(key), "{key} is not a flag of sondera serve");
        }
    }
}
