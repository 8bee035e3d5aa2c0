//! Detectors of Sondera Harness: Rust code that computes facts about an
//! event, so that Cedar policies can decide on typed attributes rather than on
//! strings.
//!
//! This crate never decides anything. It classifies tool calls into the
//! narrowest action they fit ([`classify_tool_call`]) and derives the matching
//! observation of a tool's result ([`observation_for`]); the policy engine
//! turns those payloads and the facts computed here into Cedar requests.
//! Detectors are pure functions of their input: they do no I/O (a command that
//! names a file never causes the file to be read), so adjudication stays
//! deterministic and bounded however hostile the input.
//!
//! The facts come from a few catalogues and analysers, each in its module:
//! [`shell`] parses commands structurally and tags risks with evidence;
//! [`net`] normalises and classifies destinations and checks the host
//! allowlist; [`secrets`], [`persistence`] and [`places`] say what a path
//! holds, what writing it makes persist and where it lies; [`content`] finds
//! injection and credential signatures in text and the taints a step adds to
//! its trajectory. Every scan is bounded in size and depth, and whatever a
//! detector cannot read is reported as such (unparsable, dynamic), never
//! treated as benign.

mod classify;
pub mod content;
pub mod injection;
mod json;
pub mod net;
pub mod persistence;
pub mod places;
pub mod provenance;
pub mod secrets;
mod shape;
pub mod shell;

pub use classify::{
    ToolOutcome, classify_tool_call, fold_tool_name, observation_for, reclassify, visible_ascii,
};
pub use json::{file_url_path, path_arguments, search_patterns};
pub use shape::action_shape;
