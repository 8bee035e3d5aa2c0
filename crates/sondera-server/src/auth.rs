//! Bearer-token authentication. Tokens are configured as SHA-256 hashes,
//! each mapped to a [`Caller`]: the tenant whose records it may read and
//! write, its [`Role`] and the name its decisions are recorded under. The
//! service never holds or logs a token itself.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use sha2::{Digest, Sha256};
use sondera_store::TenantId;

use crate::error::ServiceError;

/// Why a token entry could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenConfigError {
    /// The entry does not have the entry's form.
    #[error(
        "token entry `{entry}` is not `TENANT=sha256:HEX [role=agent|operator|admin] [name=NAME]`; make one with `sondera token hash --tenant TENANT`"
    )]
    Malformed {
        /// The entry as configured.
        entry: String,
    },
    /// The tenant is not a valid tenant name.
    #[error("in a token entry: {0}")]
    BadTenant(#[from] sondera_store::InvalidTenant),
    /// The hash is not 64 hex digits.
    #[error("token hash for tenant `{tenant}` is not 64 hex digits")]
    BadHash {
        /// The entry's tenant.
        tenant: String,
    },
    /// A `role=` or `name=` field is wrong.
    #[error("token for tenant `{tenant}`: {problem}")]
    BadField {
        /// The entry's tenant.
        tenant: String,
        /// What is wrong.
        problem: String,
    },
    /// Two entries share a hash, so one token would be two callers.
    #[error("the same token hash is configured for tenants `{first}` and `{second}`")]
    Duplicate {
        /// One entry's tenant.
        first: String,
        /// The other's.
        second: String,
    },
}

sondera_model::named_enum! {
    /// What a token may do.
    pub enum Role: "role" {
        /// Adjudicate, read records by id, ask for and wait on approvals.
        Agent,
        /// Also read and follow the tenant's records, decide approvals and
        /// manage standing grants.
        Operator,
        /// An operator who may also push and roll back the server's
        /// policies, which judge every tenant's steps.
        Admin,
    }
}

/// Who is calling: what a token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Whose records the caller reaches.
    pub tenant: TenantId,
    /// What the caller may do.
    pub role: Role,
    /// Who decisions made with this token are recorded as.
    pub name: String,
}

impl Caller {
    /// The caller of a server without tokens, on loopback only: whoever can
    /// reach it may do everything, as the default tenant.
    fn loopback() -> Self {
        Self {
            tenant: TenantId::default(),
            role: Role::Admin,
            name: "loopback".into(),
        }
    }

    /// The tenant, if this caller is an operator; otherwise what `doing`
    /// needs, as the refusal.
    pub fn operator(&self, doing: &str) -> Result<&TenantId, ServiceError> {
        match self.role {
            Role::Operator | Role::Admin => Ok(&self.tenant),
            Role::Agent => Err(ServiceError::PermissionDenied(format!(
                "{doing} needs an operator token; this token is for an agent (issue one with `sondera token hash --role operator`)"
            ))),
        }
    }

    /// Nothing, if this caller may change what judges every tenant;
    /// otherwise what `doing` needs, as the refusal.
    pub fn admin(&self, doing: &str) -> Result<(), ServiceError> {
        match self.role {
            Role::Admin => Ok(()),
            Role::Agent | Role::Operator => Err(ServiceError::PermissionDenied(format!(
                "{doing} changes the policies that judge every tenant and needs an admin token (issue one with `sondera token hash --role admin`)"
            ))),
        }
    }
}

/// Who may call the service.
#[derive(Debug, Clone)]
pub enum Access {
    /// No authentication: every caller is the default tenant's operator.
    /// Only allowed when every listener is on a loopback address.
    LoopbackOnly,
    /// Bearer tokens, each granting one tenant and one role.
    Tokens(Tokens),
}

/// Token hashes and the caller each makes.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    callers: HashMap<[u8; 32], Caller>,
}

/// The `sha256:HEX` form a token is configured as.
pub fn hash_token(token: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(token.as_bytes())))
}

/// The longest name a token's decisions may be recorded under.
const MAX_NAME_LEN: usize = 64;

impl Tokens {
    /// Adds `TENANT=sha256:HEX`, optionally followed by `role=ROLE` (agent
    /// unless given) and `name=NAME` (the hash's first eight digits unless
    /// given).
    pub fn add(&mut self, entry: &str) -> Result<(), TokenConfigError> {
        let malformed = || TokenConfigError::Malformed {
            entry: entry.chars().take(80).collect(),
        };
        let mut words = entry.split_whitespace();
        let (tenant, hash) = words
            .next()
            .and_then(|w| w.split_once('='))
            .ok_or_else(malformed)?;
        let hash = hash.strip_prefix("sha256:").ok_or_else(malformed)?;
        let tenant = TenantId::new(tenant)?;
        let bytes: [u8; 32] = hex::decode(hash)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| TokenConfigError::BadHash {
                tenant: tenant.to_string(),
            })?;
        let bad = |problem: String| TokenConfigError::BadField {
            tenant: tenant.to_string(),
            problem,
        };
        let mut caller = Caller {
            role: Role::Agent,
            name: format!("token-{}", &hash[..8]),
            tenant: tenant.clone(),
        };
        for word in words {
            match word.split_once('=') {
                Some(("role", role)) => {
                    caller.role = role
                        .parse()
                        .map_err(|e: sondera_model::UnknownName| bad(e.to_string()))?
                }
                Some(("name", name)) if valid_name(name) => caller.name = name.to_string(),
                Some(("name", _)) => {
                    return Err(bad(format!(
                        "a name is 1 to {MAX_NAME_LEN} printable characters"
                    )));
                }
                _ => return Err(bad(format!("`{word}` is not role=ROLE or name=NAME"))),
            }
        }
        if let Some(first) = self.callers.get(&bytes) {
            return Err(TokenConfigError::Duplicate {
                first: first.tenant.to_string(),
                second: tenant.to_string(),
            });
        }
        self.callers.insert(bytes, caller);
        Ok(())
    }

    /// Whether no token is configured.
    pub fn is_empty(&self) -> bool {
        self.callers.is_empty()
    }

    /// How many tokens are configured.
    pub fn len(&self) -> usize {
        self.callers.len()
    }
}

fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.chars().count()) && !name.chars().any(char::is_control)
}

/// Builds the tokens again when they are reloaded (on SIGHUP).
pub type TokenLoader = Arc<dyn Fn() -> Result<Tokens, String> + Send + Sync>;

/// Who may call, replaceable while the server runs: with a
/// [`TokenLoader`], tokens reload on SIGHUP as policies do. A request
/// already being answered finishes; a live stream opened with a token that
/// is no longer configured ends (see [`AccessControl::until_revoked`]).
pub struct AccessControl {
    current: RwLock<Arc<Access>>,
    loader: Option<TokenLoader>,
    /// Counts the reloads put in force, for those waiting on a revocation.
    reloads: tokio::sync::watch::Sender<u64>,
    /// The tokens kept in the store, when this server accepts them too.
    stored: Option<RwLock<Arc<HashMap<TokenDigest, Caller>>>>,
}

/// A token as the service keeps it: its SHA-256 digest.
pub(crate) type TokenDigest = [u8; 32];

/// The digest of the token an `authorization` header value carries, if it
/// carries one (`Bearer TOKEN`, the scheme in any case, RFC 9110).
pub(crate) fn bearer_digest(authorization: Option<&str>) -> Option<TokenDigest> {
    let token = authorization
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())?;
    Some(Sha256::digest(token.as_bytes()).into())
}

/// What a token reload did.
#[derive(Debug, PartialEq, Eq)]
pub enum TokenReload {
    /// These many tokens are now in force.
    Reloaded(usize),
    /// Nothing to reload: no loader, or a loopback-only server (which a
    /// reload never turns into one with tokens, nor back).
    Unchanged,
    /// The tokens could not be loaded, or none were left; the running
    /// tokens stay.
    Refused(String),
}

impl AccessControl {
    /// Access as configured, reloaded by `loader` on SIGHUP when given.
    pub fn new(access: Access, loader: Option<TokenLoader>) -> Self {
        Self {
            current: RwLock::new(Arc::new(access)),
            loader,
            reloads: tokio::sync::watch::Sender::new(0),
            stored: None,
        }
    }

    /// Accepts the tokens kept in the store too (`PutToken`), as they are
    /// now: a server doing so needs a token on every request, even without
    /// tokens of its own.
    #[must_use]
    pub fn with_stored_tokens(mut self) -> Self {
        self.stored = Some(RwLock::default());
        let mut current = self.current.write();
        if matches!(**current, Access::LoopbackOnly) {
            *current = Arc::new(Access::Tokens(Tokens::default()));
        }
        drop(current);
        self
    }

    /// Whether stored tokens are accepted.
    pub fn accepts_stored_tokens(&self) -> bool {
        self.stored.is_some()
    }

    /// Puts `tokens` (the store's, read as entries) in force; `true` when
    /// they differ from those in force, which then end the live streams
    /// and sessions of tokens revoked.
    pub(crate) fn replace_stored(&self, tokens: Tokens) -> bool {
        let Some(stored) = &self.stored else {
            return false;
        };
        if stored.read().as_ref() == &tokens.callers {
            return false;
        }
        *stored.write() = Arc::new(tokens.callers);
        self.reloads.send_modify(|n| *n += 1);
        true
    }

    fn stored_caller(&self, digest: &TokenDigest) -> Option<Caller> {
        self.stored.as_ref()?.read().get(digest).cloned()
    }

    /// Whether the token of `digest` is configured or stored now (always,
    /// on a loopback-only server, which has none).
    pub(crate) fn holds(&self, digest: &TokenDigest) -> bool {
        let configured = match &**self.current.read() {
            Access::LoopbackOnly => true,
            Access::Tokens(tokens) => tokens.callers.contains_key(digest),
        };
        configured || self.stored_caller(digest).is_some()
    }

    /// Returns once the token of `digest` is no longer configured (a reload
    /// took it out); never, while it is.
    pub(crate) async fn until_revoked(&self, digest: TokenDigest) {
        let mut reloads = self.reloads.subscribe();
        while self.holds(&digest) {
            if reloads.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The caller an `authorization` header value makes.
    pub fn caller(&self, authorization: Option<&str>) -> Result<Caller, ServiceError> {
        let access = self.current.read().clone();
        match access.caller(authorization) {
            Err(ServiceError::Unauthenticated) if self.stored.is_some() => {
                bearer_digest(authorization)
                    .and_then(|digest| self.stored_caller(&digest))
                    .ok_or(ServiceError::Unauthenticated)
            }
            answer => answer,
        }
    }

    /// Whether the server runs without tokens, on loopback only.
    pub fn is_loopback_only(&self) -> bool {
        matches!(**self.current.read(), Access::LoopbackOnly)
    }

    /// Loads the tokens again and puts them in force. A server with tokens
    /// keeps needing them: a reload that yields none is refused, since it
    /// would leave a listener on the network open to anyone.
    pub fn reload(&self) -> TokenReload {
        let Some(loader) = &self.loader else {
            return TokenReload::Unchanged;
        };
        if self.is_loopback_only() {
            return TokenReload::Unchanged;
        }
        let outcome = match loader() {
            Ok(tokens) if tokens.is_empty() && self.stored.is_none() => {
                TokenReload::Refused("no tokens are configured any more".into())
            }
            Ok(tokens) => {
                let count = tokens.len();
                *self.current.write() = Arc::new(Access::Tokens(tokens));
                self.reloads.send_modify(|n| *n += 1);
                TokenReload::Reloaded(count)
            }
            Err(problem) => TokenReload::Refused(problem),
        };
        match &outcome {
            TokenReload::Reloaded(count) => tracing::info!(tokens = count, "tokens reloaded"),
            TokenReload::Refused(problem) => {
                tracing::error!("token reload refused, the running tokens stay in force: {problem}")
            }
            TokenReload::Unchanged => {}
        }
        outcome
    }
}

impl Access {
    /// The caller an `authorization` header value makes.
    pub fn caller(&self, authorization: Option<&str>) -> Result<Caller, ServiceError> {
        match self {
            Self::LoopbackOnly => Ok(Caller::loopback()),
            Self::Tokens(tokens) => {
                let digest = bearer_digest(authorization).ok_or(ServiceError::Unauthenticated)?;
                tokens
                    .callers
                    .get(&digest)
                    .cloned()
                    .ok_or(ServiceError::Unauthenticated)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(entries: &[(&str, &str)]) -> Tokens {
        let mut tokens = Tokens::default();
        for (tenant, token) in entries {
            tokens
                .add(&format!("{tenant}={}", hash_token(token)))
                .unwrap();
        }
        tokens
    }

    #[test]
    fn reloaded_tokens_replace_the_running_ones_unless_none_are_left() {
        let next = Arc::new(parking_lot::Mutex::new(Ok(tokens(&[("beta", "new")]))));
        let source = next.clone();
        let loader: TokenLoader = Arc::new(move || source.lock().clone());
        let control = AccessControl::new(Access::Tokens(tokens(&[("acme", "old")])), Some(loader));
        assert_eq!(control.caller(Some("Bearer old")).unwrap().tenant, "acme");
        assert_eq!(control.reload(), TokenReload::Reloaded(1));
        assert!(
            control.caller(Some("Bearer old")).is_err(),
            "a removed token stops working"
        );
        assert_eq!(control.caller(Some("Bearer new")).unwrap().tenant, "beta");

        *next.lock() = Ok(Tokens::default());
        assert!(matches!(control.reload(), TokenReload::Refused(_)));
        *next.lock() = Err("tokens.txt:3: malformed".into());
        assert!(matches!(control.reload(), TokenReload::Refused(_)));
        assert_eq!(
            control.caller(Some("Bearer new")).unwrap().tenant,
            "beta",
            "a refused reload changes nothing"
        );

        let open = AccessControl::new(Access::LoopbackOnly, None);
        assert_eq!(open.reload(), TokenReload::Unchanged);
    }

    #[test]
    fn a_configured_hash_grants_its_tenant_and_nothing_else_does() {
        let mut tokens = Tokens::default();
        tokens
            .add(&format!("acme={}", hash_token("s3cret")))
            .unwrap();
        let access = Access::Tokens(tokens);
        assert_eq!(access.caller(Some("Bearer s3cret")).unwrap().tenant, "acme");
        assert_eq!(access.caller(Some("bearer s3cret")).unwrap().tenant, "acme");
        for header in [
            None,
            Some("Bearer wrong"),
            Some("s3cret"),
            Some("Bearer "),
            Some("Basic s3cret"),
        ] {
            assert!(
                matches!(access.caller(header), Err(ServiceError::Unauthenticated)),
                "{header:?}"
            );
        }
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let mut tokens = Tokens::default();
        let hash = hash_token("x");
        assert!(matches!(
            tokens.add("acme"),
            Err(TokenConfigError::Malformed { .. })
        ));
        assert!(matches!(
            tokens.add("acme=md5:00"),
            Err(TokenConfigError::Malformed { .. })
        ));
        assert!(matches!(
            tokens.add(&format!("a/b={hash}")),
            Err(TokenConfigError::BadTenant { .. })
        ));
        assert!(matches!(
            tokens.add("acme=sha256:zz"),
            Err(TokenConfigError::BadHash { .. })
        ));
        tokens.add(&format!("acme={hash}")).unwrap();
        let err = tokens.add(&format!("globex={hash}")).unwrap_err();
        assert_eq!(
            err,
            TokenConfigError::Duplicate {
                first: "acme".into(),
                second: "globex".into()
            }
        );
    }

    #[test]
    fn entries_name_a_role_and_who_decides() {
        let mut tokens = Tokens::default();
        let hash = |t: &str| hash_token(t);
        tokens.add(&format!("acme={}", hash("a"))).unwrap();
        tokens
            .add(&format!("acme={} role=operator name=ana@acme", hash("o")))
            .unwrap();
        let access = Access::Tokens(tokens.clone());
        let agent = access.caller(Some("Bearer a")).unwrap();
        assert_eq!(
            agent.role,
            Role::Agent,
            "an entry without a role is an agent's"
        );
        assert!(agent.name.starts_with("token-") && agent.name.len() == 14);
        assert!(matches!(
            agent.operator("deciding"),
            Err(ServiceError::PermissionDenied(_))
        ));
        let operator = access.caller(Some("Bearer o")).unwrap();
        assert_eq!(
            (operator.role, operator.name.as_str()),
            (Role::Operator, "ana@acme")
        );
        assert_eq!(operator.operator("deciding").unwrap(), "acme");

        tokens
            .add(&format!("acme={} role=admin name=root", hash("r")))
            .unwrap();
        let access = Access::Tokens(tokens.clone());
        let admin = access.caller(Some("Bearer r")).unwrap();
        assert_eq!(admin.operator("deciding").unwrap(), "acme");
        assert!(admin.admin("pushing").is_ok());
        assert!(matches!(
            operator.admin("pushing"),
            Err(ServiceError::PermissionDenied(m)) if m.contains("--role admin")
        ));
        for bad in ["role=root", "name=", "colour=red", "role"] {
            let entry = format!("acme={} {bad}", hash("x"));
            assert!(
                matches!(tokens.add(&entry), Err(TokenConfigError::BadField { .. })),
                "{bad}"
            );
        }
        let open = Access::LoopbackOnly.caller(None).unwrap();
        assert_eq!(
            open.role,
            Role::Admin,
            "without tokens, loopback may do everything"
        );
    }
}
