use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Who owns a record. Every id (agent, trajectory, event) is unique only
/// within its tenant, so every query that reads or writes by id takes one.
///
/// A tenant is a name of 1 to 64 letters, digits, `-`, `_` and `.`; there is
/// no way to build one that is not, so a tenant read from a token file or a
/// database row has been checked once, where it entered.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TenantId(Arc<str>);

/// The longest tenant name.
pub const MAX_TENANT_LEN: usize = 64;

/// The tenant of everything recorded without one: a local data directory,
/// or a server running without authentication.
pub const DEFAULT_TENANT: &str = "default";

/// Why a name is not a tenant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a tenant name: use 1 to 64 letters, digits, `-`, `_` and `.`")]
pub struct InvalidTenant(pub String);

impl TenantId {
    /// `name` as a tenant, if it is a valid name.
    pub fn new(name: &str) -> Result<Self, InvalidTenant> {
        let valid = !name.is_empty()
            && name.len() <= MAX_TENANT_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if valid {
            Ok(Self(Arc::from(name)))
        } else {
            Err(InvalidTenant(name.chars().take(80).collect()))
        }
    }

    /// The tenant of records made without one ([`DEFAULT_TENANT`]).
    pub fn default_tenant() -> Self {
        Self(Arc::from(DEFAULT_TENANT))
    }

    /// The tenant's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the default tenant (a single-tenant deployment's).
    pub fn is_default(&self) -> bool {
        &*self.0 == DEFAULT_TENANT
    }
}

impl Default for TenantId {
    fn default() -> Self {
        Self::default_tenant()
    }
}

impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TenantId({:?})", &*self.0)
    }
}

impl std::str::FromStr for TenantId {
    type Err = InvalidTenant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl TryFrom<String> for TenantId {
    type Error = InvalidTenant;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(&s)
    }
}

impl From<TenantId> for String {
    fn from(t: TenantId) -> Self {
        t.0.to_string()
    }
}

impl PartialEq<str> for TenantId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for TenantId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl AsRef<str> for TenantId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Whose records a listing or a count covers: one tenant's, or, named as
/// such at the call site, every tenant's (an operator's local data directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tenants<'a> {
    /// One tenant's.
    Only(&'a TenantId),
    /// Every tenant's.
    All,
}

impl Tenants<'_> {
    /// Whether a record of `tenant` is in scope.
    pub fn includes(&self, tenant: &TenantId) -> bool {
        match self {
            Self::Only(t) => *t == tenant,
            Self::All => true,
        }
    }

    /// The one tenant in scope, or `None` for all.
    pub fn only(&self) -> Option<&TenantId> {
        match self {
            Self::Only(t) => Some(t),
            Self::All => None,
        }
    }
}

impl<'a> From<&'a TenantId> for Tenants<'a> {
    fn from(t: &'a TenantId) -> Self {
        Self::Only(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_where_they_enter() {
        assert!(TenantId::new("acme-prod.eu_1").is_ok());
        for bad in ["", "a b", "acme/../x", "é", &"x".repeat(65)] {
            assert!(TenantId::new(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<TenantId>(&format!("{bad:?}")).is_err());
        }
        assert_eq!(
            serde_json::to_string(&TenantId::new("acme").unwrap()).unwrap(),
            "\"acme\""
        );
    }
}
