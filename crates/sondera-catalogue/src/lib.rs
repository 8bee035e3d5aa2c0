//! The names Sondera Harness's detectors share, each defined once.
//!
//! A detector that asks "is this program an HTTP client?" or "is this path
//! a system directory?" asks it here. When two analyses kept lists of their
//! own, the lists drifted, and the same program got different verdicts from
//! the analyses that read the same role: a client that fetched but reported
//! no host, a directory that was a system one for placing a path and not
//! for a permission change. With one list per role, a program added to a
//! role reaches every analysis that reads the role, and the consistency
//! test of `sondera-guard` holds each role to the same behaviour everywhere.
//!
//! The crate is a leaf: plain data and the predicates over it, no
//! dependencies, so every detector crate can read it.

pub mod places;
pub mod programs;

pub use programs::Role;
