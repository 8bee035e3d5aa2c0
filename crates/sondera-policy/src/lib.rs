//! The Cedar policy engine of Sondera Harness.
//!
//! Detectors compute facts; policies decide. This crate turns an event and its
//! trajectory's accumulated state into a Cedar request (principal: the root
//! agent; action: what the step is; resource: the tool, message, file or
//! trajectory it touches; context: the payload's fields and the executing
//! agent) and maps Cedar's answer onto a Sondera decision:
//!
//! - Cedar allows: **allow**.
//! - Cedar denies with a matching `forbid` that has no `@escalate`: **deny**
//!   (a hard forbid beats an escalating one).
//! - only `@escalate` forbids matched: **escalate** to a human.
//! - no `permit` matched: **deny**, saying so.
//! - a `forbid` that fails to evaluate: **deny**, naming it (fail closed).
//!
//! Policies load from directories of `.cedar` files plus optional
//! `.cedarschema` fragments that extend the base schema, and are validated
//! strictly at load time: every problem is reported with file, line, column
//! and policy id, and nothing loads partially. Each policy needs a unique
//! `@id`; `@escalate` is only valid on `forbid`; `@mode("monitor")` puts one
//! policy in shadow (its matches are reported, never enforced); `@steer("..")`
//! gives the agent correction text in steer mode. All annotations travel into
//! [`sondera_model::PolicyMetadata`].
//!
//! Cedar's authorizer evaluates every policy it is given, so the set is sliced
//! by action at load time and each request is judged only against the
//! policies whose action scope can match it. Within a slice, a policy whose
//! conditions are certain to be a clean `false` for the request (its
//! `context.shell.risks.contains("fork_bomb")` when there is no such risk) is
//! left out too, read from the request's facts; anything the reader does not
//! understand, or that could error, is kept, so the verdict is the same as
//! the whole set's. The facts are gathered as plain values first and made
//! into Cedar's context and entities only when some policy's outcome is not
//! known exactly; when every outcome is, the verdict follows Cedar's rule
//! directly (a matching forbid denies, else a matching permit allows). Tests
//! hold both ways to Cedar's answer over the whole set on every corpus
//! event and thousands of random requests. Evaluation does no I/O.
//!
//! Beyond Cedar's validator, loading lints the set (a missing `@description`
//! or `@severity`, a rule repeating another's effect, scope and conditions)
//! and reports those as warnings. [`import`] converts Claude Code and Gemini
//! CLI permission rules into policies over the same facts.

mod args;
mod builtin;
mod engine;
mod error;
mod facts;
pub mod import;
mod lint;
mod load;
mod prefilter;
mod request;

pub use args::{ArgumentTypeError, tool_args_fragment};
pub use engine::{CedarParts, PolicyEngine, PolicyEngineBuilder};
pub use error::{EvaluationError, PolicyError, PolicyLoadErrors};
pub use load::{BASE_SCHEMA, BUILTIN_PACKS, PolicyDirectory, builtin_source};
pub use request::{ActionName, CedarRequest, Workspace};
pub use sondera_guard::net::{HostAllowlist, InvalidHostPattern};
pub use sondera_guard::shell::MAX_PREFIX_WORDS;
