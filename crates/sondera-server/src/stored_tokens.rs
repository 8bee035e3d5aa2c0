//! Bearer tokens kept in the store, for deployments whose servers share a
//! database but no files: an admin stores a token's hash (`PutToken`), and
//! every server that accepts stored tokens takes it within a second, and
//! drops it as fast once revoked. Each server reads the store's tokens when
//! the store announces a change and every second besides.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use sondera_store::{StoredToken, TenantId};

use crate::auth::{AccessControl, Caller, Tokens};
use crate::error::ServiceError;
use crate::governance::Governance;

/// How often the store's tokens are read when no change was announced: the
/// longest a revocation takes to be seen.
const READ_EVERY: Duration = Duration::from_secs(1);
/// The fewest hex digits of a hash that name a token.
const MIN_HASH_DIGITS: usize = 8;

/// The entry a server reads for `token`, as `--token` takes it.
fn entry(token: &StoredToken) -> String {
    format!(
        "{}={} role={} name={}",
        token.tenant, token.hash, token.role, token.name
    )
}

/// The stored tokens as a server's tokens; one that does not read (edited
/// by hand, from a later release) is left out and said.
fn as_tokens(stored: &[StoredToken]) -> Tokens {
    let mut tokens = Tokens::default();
    for token in stored {
        if let Err(e) = tokens.add(&entry(token)) {
            tracing::warn!(name = %token.name, "a stored token is not accepted: {e}");
        }
    }
    tokens
}

impl Governance {
    /// Keeps a token's hash for `tenant` with `role` and `name`; it works on
    /// every server that accepts stored tokens from the next second.
    pub async fn put_token(
        &self,
        caller: &Caller,
        tenant: &str,
        role: &str,
        name: &str,
        hash: &str,
    ) -> Result<StoredToken, ServiceError> {
        caller.admin("storing a token")?;
        let token = StoredToken {
            hash: hash.to_owned(),
            tenant: TenantId::new(tenant)
                .map_err(|e| ServiceError::InvalidArgument(e.to_string()))?,
            role: role.to_owned(),
            name: name.to_owned(),
            created_at: Utc::now(),
            created_by: caller.name.clone(),
        };
        Tokens::default()
            .add(&entry(&token))
            .map_err(|e| ServiceError::InvalidArgument(e.to_string()))?;
        if !self.store().put_token(&token).await? {
            return Err(ServiceError::AlreadyExists(
                "a token with this hash is stored already".into(),
            ));
        }
        self.tokens_changed.notify_one();
        tracing::info!(name = %token.name, tenant = %token.tenant, role = %token.role, by = %caller.name, "token stored");
        Ok(token)
    }

    /// The tokens kept in the store.
    pub async fn stored_tokens(&self, caller: &Caller) -> Result<Vec<StoredToken>, ServiceError> {
        caller.admin("listing stored tokens")?;
        Ok(self.store().tokens().await?)
    }

    /// Removes the stored token `given` names: its hash (`sha256:HEX` or
    /// eight or more of its digits) or its name, when one token has it.
    pub async fn revoke_token(
        &self,
        caller: &Caller,
        given: &str,
    ) -> Result<StoredToken, ServiceError> {
        caller.admin("revoking a token")?;
        let digits = given
            .trim()
            .trim_start_matches("sha256:")
            .to_ascii_lowercase();
        let by_hash =
            digits.len() >= MIN_HASH_DIGITS && digits.bytes().all(|b| b.is_ascii_hexdigit());
        let matching: Vec<StoredToken> = self
            .store()
            .tokens()
            .await?
            .into_iter()
            .filter(|t| {
                t.name == given
                    || (by_hash && t.hash.trim_start_matches("sha256:").starts_with(&digits))
            })
            .collect();
        let token = match matching.as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(ServiceError::NotFound(format!(
                    "no stored token is `{given}`"
                )));
            }
            _ => {
                return Err(ServiceError::InvalidArgument(format!(
                    "`{given}` names {} stored tokens; give more of the hash",
                    matching.len()
                )));
            }
        };
        let revoked = self
            .store()
            .revoke_token(&token.hash)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("no stored token is `{given}`")))?;
        self.tokens_changed.notify_one();
        tracing::info!(name = %revoked.name, by = %caller.name, "stored token revoked");
        Ok(revoked)
    }
}

/// Keeps `access` holding the store's tokens until the service closes. A
/// store that cannot be read leaves the tokens in force as they were.
pub(crate) async fn follow(access: Arc<AccessControl>, governance: Arc<Governance>) {
    if !access.accepts_stored_tokens() {
        return;
    }
    let mut closing = governance.closing();
    loop {
        match governance.store().tokens().await {
            Ok(stored) => {
                if access.replace_stored(as_tokens(&stored)) {
                    tracing::info!(tokens = stored.len(), "stored tokens in force");
                }
            }
            Err(e) => tracing::warn!("cannot read the stored tokens; those in force stay: {e}"),
        }
        tokio::select! {
            _ = governance.tokens_changed.notified() => {}
            _ = tokio::time::sleep(READ_EVERY) => {}
            _ = closing.wait_for(|closing| *closing) => return,
        }
    }
}
