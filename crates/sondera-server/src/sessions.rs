//! The dashboard's sign-in sessions, and the limit on signing in.
//!
//! Signing in exchanges an operator token for a session: a random id the
//! browser holds in an `HttpOnly` cookie and this process holds only as a
//! SHA-256 digest, bound to the caller the token made (tenant, role, name)
//! and to the token itself. The id is worth nothing anywhere else: it is not
//! a token, so an `authorization` header cannot carry it, and it stops
//! working when the person signs out, after an idle time or a lifetime, or
//! when the token it was opened with is taken out of the configuration.
//! Each of these also ends the live streams the session opened.
//!
//! Sessions live in this process's memory: a restart signs everyone out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use crate::auth::{AccessControl, Caller, TokenDigest};

/// Most sessions kept; past it the one idle longest is ended.
const MAX_SESSIONS: usize = 10_000;

/// Failed sign-ins a client address may make before it must wait.
const FREE_FAILURES: u32 = 5;
/// The longest wait imposed after failed sign-ins.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// Failures older than this are forgotten.
const FAILURE_MEMORY: Duration = Duration::from_secs(900);
/// Most client addresses whose failures are remembered.
const MAX_TRACKED_PEERS: usize = 10_000;

/// A signed-in session, as a request made with it sees it.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// Who it acts as.
    pub(crate) caller: Caller,
    /// The value every request made with it must carry (see
    /// [`crate::dashboard`]).
    pub(crate) page_key: String,
    digest: SessionDigest,
    token: TokenDigest,
    expires: Instant,
    ended: tokio::sync::watch::Receiver<bool>,
}

type SessionDigest = [u8; 32];

struct Entry {
    caller: Caller,
    page_key: String,
    token: TokenDigest,
    opened: Instant,
    used: Instant,
    ended: tokio::sync::watch::Sender<bool>,
}

#[derive(Default)]
struct Failures {
    count: u32,
    last: Option<Instant>,
}

/// The sessions of one server.
pub(crate) struct Sessions {
    /// A session unused this long ends.
    idle: Duration,
    /// A session ends this long after it was opened, however used.
    lifetime: Duration,
    open: Mutex<HashMap<SessionDigest, Entry>>,
    failures: Mutex<HashMap<IpAddr, Failures>>,
}

fn digest(id: &str) -> SessionDigest {
    Sha256::digest(id.as_bytes()).into()
}

/// A random value of 256 bits, hex encoded.
fn random() -> String {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    hex::encode(bytes)
}

impl Sessions {
    pub(crate) fn new(idle: Duration, lifetime: Duration) -> Self {
        Self {
            idle,
            lifetime,
            open: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Opens a session for `caller`, signed in with the token of `token`;
    /// its id and its page key.
    pub(crate) fn open(&self, caller: Caller, token: TokenDigest) -> (String, String) {
        let (id, page_key) = (random(), random());
        let now = Instant::now();
        let mut open = self.open.lock();
        if open.len() >= MAX_SESSIONS
            && let Some(oldest) = open.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| *k)
            && let Some(entry) = open.remove(&oldest)
        {
            entry.ended.send_replace(true);
        }
        open.insert(
            digest(&id),
            Entry {
                caller,
                page_key: page_key.clone(),
                token,
                opened: now,
                used: now,
                ended: tokio::sync::watch::Sender::new(false),
            },
        );
        (id, page_key)
    }

    /// The session `id` names, if it is open and its token still
    /// configured; using it keeps it from going idle.
    pub(crate) fn resolve(&self, id: &str, access: &AccessControl) -> Option<Session> {
        let key = digest(id);
        let now = Instant::now();
        let mut open = self.open.lock();
        let entry = open.get_mut(&key)?;
        let expires = entry.opened + self.lifetime;
        let alive = now < expires
            && now.duration_since(entry.used) < self.idle
            && access.holds(&entry.token);
        if !alive {
            if let Some(entry) = open.remove(&key) {
                entry.ended.send_replace(true);
            }
            return None;
        }
        entry.used = now;
        Some(Session {
            caller: entry.caller.clone(),
            page_key: entry.page_key.clone(),
            digest: key,
            token: entry.token,
            expires,
            ended: entry.ended.subscribe(),
        })
    }

    /// Ends `session` (signing out): its id stops working and its streams end.
    pub(crate) fn end(&self, session: &Session) {
        if let Some(entry) = self.open.lock().remove(&session.digest) {
            entry.ended.send_replace(true);
        }
    }

    /// Whether `peer` may try to sign in now; if not, how long it must wait.
    pub(crate) fn sign_in_wait(&self, peer: Option<IpAddr>) -> Option<Duration> {
        let failures = self.failures.lock();
        let seen = failures.get(&peer?)?;
        let backoff = backoff(seen.count)?;
        let since = seen.last?.elapsed();
        (since < backoff).then(|| backoff - since)
    }

    /// Counts a failed sign-in from `peer`; how many it has made.
    pub(crate) fn failed_sign_in(&self, peer: Option<IpAddr>) -> u32 {
        let Some(peer) = peer else { return 0 };
        let now = Instant::now();
        let mut failures = self.failures.lock();
        failures.retain(|_, f| {
            f.last
                .is_some_and(|t| now.duration_since(t) < FAILURE_MEMORY)
        });
        if failures.len() >= MAX_TRACKED_PEERS && !failures.contains_key(&peer) {
            return 0;
        }
        let seen = failures.entry(peer).or_default();
        seen.count += 1;
        seen.last = Some(now);
        seen.count
    }

    /// Forgets `peer`'s failures once it signs in.
    pub(crate) fn signed_in(&self, peer: Option<IpAddr>) {
        if let Some(peer) = peer {
            self.failures.lock().remove(&peer);
        }
    }
}

/// The wait after `count` failures: none for the first few, then doubling
/// from one second up to [`MAX_BACKOFF`].
fn backoff(count: u32) -> Option<Duration> {
    let over = count.checked_sub(FREE_FAILURES)?;
    Some(Duration::from_secs(1u64 << over.min(16)).min(MAX_BACKOFF))
}

impl Session {
    /// Returns when the session ends: signed out, past its lifetime, its
    /// token taken out, or ended as the oldest of too many.
    pub(crate) async fn ended(&self, access: &AccessControl) {
        let mut ended = self.ended.clone();
        tokio::select! {
            _ = ended.wait_for(|ended| *ended) => {}
            _ = tokio::time::sleep_until(self.expires.into()) => {}
            _ = access.until_revoked(self.token) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_after_the_free_failures_and_are_bounded() {
        assert_eq!(backoff(FREE_FAILURES - 1), None);
        assert_eq!(backoff(FREE_FAILURES), Some(Duration::from_secs(1)));
        assert_eq!(backoff(FREE_FAILURES + 3), Some(Duration::from_secs(8)));
        assert_eq!(backoff(FREE_FAILURES + 40), Some(MAX_BACKOFF));
    }
}
