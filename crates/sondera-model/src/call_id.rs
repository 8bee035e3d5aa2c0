//! Admission of upstream tool-call ids.
//!
//! A provider's function-call id is the only key that ties a tool call to its
//! result, so a bad one (empty, padded, binary, unbounded) must never become a
//! key. Rejected ids are dropped rather than failing the step: the event goes
//! ahead unkeyed, and the rejection is logged and counted per adapter so a
//! misbehaving integration shows up in metrics.

use std::sync::atomic::{AtomicU64, Ordering};

/// Longest provider call id accepted, in bytes.
pub const MAX_PROVIDER_CALL_ID_BYTES: usize = 256;

/// The integration a provider call id arrived through. A closed set, so a
/// metric label can never be misspelt at a call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Adapter {
    /// The ADK plugin.
    Adk,
    /// Events received by the harness server over gRPC or HTTP.
    Server,
    /// Events read by the command line.
    Cli,
    /// Coding agents' hook calls.
    Hooks,
}

impl Adapter {
    /// Every adapter, in the order of their counters.
    pub const ALL: [Adapter; 4] = [Adapter::Adk, Adapter::Server, Adapter::Cli, Adapter::Hooks];

    /// The adapter's name in metrics.
    pub fn label(self) -> &'static str {
        match self {
            Self::Adk => "adk",
            Self::Server => "server",
            Self::Cli => "cli",
            Self::Hooks => "hooks",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static REJECTED: [AtomicU64; Adapter::ALL.len()] =
    [const { AtomicU64::new(0) }; Adapter::ALL.len()];

/// Why a provider call id was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderCallIdRejection {
    /// The id is the empty string.
    Empty,
    /// The id is white space only.
    Whitespace,
    /// The id holds a NUL byte.
    ContainsNul,
    /// The id is longer than ids may be.
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
}

impl std::fmt::Display for ProviderCallIdRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("empty"),
            Self::Whitespace => f.write_str("whitespace only"),
            Self::ContainsNul => f.write_str("contains a NUL byte"),
            Self::TooLong { bytes } => write!(
                f,
                "{bytes} bytes, longer than the {MAX_PROVIDER_CALL_ID_BYTES}-byte limit"
            ),
        }
    }
}

fn check(value: &str) -> Result<(), ProviderCallIdRejection> {
    if value.is_empty() {
        Err(ProviderCallIdRejection::Empty)
    } else if value.trim().is_empty() {
        Err(ProviderCallIdRejection::Whitespace)
    } else if value.contains('\0') {
        Err(ProviderCallIdRejection::ContainsNul)
    } else if value.len() > MAX_PROVIDER_CALL_ID_BYTES {
        Err(ProviderCallIdRejection::TooLong { bytes: value.len() })
    } else {
        Ok(())
    }
}

/// Admits an upstream call id: absent stays absent, a valid id passes
/// unchanged, an invalid one is logged, counted for `adapter` and dropped.
pub fn admit_provider_call_id(adapter: Adapter, value: Option<String>) -> Option<String> {
    let value = value?;
    match check(&value) {
        Ok(()) => Some(value),
        Err(rejection) => {
            REJECTED[adapter.index()].fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                adapter = adapter.label(),
                %rejection,
                "provider call id rejected; the event proceeds without a call key"
            );
            None
        }
    }
}

/// How many provider call ids `adapter` has rejected since the process started.
pub fn rejected_provider_call_ids(adapter: Adapter) -> u64 {
    REJECTED[adapter.index()].load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_valid_ids_pass_unchanged() {
        assert_eq!(admit_provider_call_id(Adapter::Adk, None), None);
        let id = "call_8f2b c/d".to_string();
        assert_eq!(
            admit_provider_call_id(Adapter::Adk, Some(id.clone())),
            Some(id)
        );
        let at_limit = "x".repeat(MAX_PROVIDER_CALL_ID_BYTES);
        assert_eq!(
            admit_provider_call_id(Adapter::Adk, Some(at_limit.clone())),
            Some(at_limit)
        );
    }

    #[test]
    fn invalid_ids_are_dropped_and_counted_per_adapter() {
        // Only this test uses the Cli adapter, so the counts are exact.
        let before = rejected_provider_call_ids(Adapter::Cli);
        let server_before = rejected_provider_call_ids(Adapter::Server);
        for bad in [
            String::new(),
            " \t\n".to_string(),
            "abc\0def".to_string(),
            "é".repeat(257), // 514 bytes, 257 characters
        ] {
            assert_eq!(admit_provider_call_id(Adapter::Cli, Some(bad)), None);
        }
        assert_eq!(rejected_provider_call_ids(Adapter::Cli), before + 4);
        assert_eq!(rejected_provider_call_ids(Adapter::Server), server_before);
    }

    #[test]
    fn rejection_reasons_are_specific() {
        assert_eq!(check(""), Err(ProviderCallIdRejection::Empty));
        assert_eq!(check("  "), Err(ProviderCallIdRejection::Whitespace));
        assert_eq!(check("a\0"), Err(ProviderCallIdRejection::ContainsNul));
        assert_eq!(
            check(&"a".repeat(257)),
            Err(ProviderCallIdRejection::TooLong { bytes: 257 })
        );
    }
}
