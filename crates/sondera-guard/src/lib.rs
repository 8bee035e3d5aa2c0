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
//! This crate is the face the policy engine reads the detectors through.
//! The facts come from crates with one job each, re-exported here:
//! [`shell`] (`sondera-shell`) parses commands structurally and tags risks
//! with evidence; [`injection`] (`sondera-injection`) scores text for
//! instructions addressed to the agent; the catalogue (`sondera-catalogue`)
//! holds the names they share, and says what a path holds, what writing it
//! makes persist and where it lies ([`secrets`], [`persistence`],
//! [`places`]). The modules of this crate itself classify tool calls and
//! their results, read a call's shape and its provenance, check egress
//! against the host allowlist ([`net`]), and find credential signatures and
//! injection in what a step sees and sends, with the taints a step adds to
//! its trajectory ([`content`]), and read what the links and images of the
//! agent's answer carry ([`links`]). Every scan is bounded in size and depth,
//! and whatever a detector cannot read is reported as such (unparsable,
//! dynamic), never treated as benign.

mod classify;
pub mod content;
mod json;
pub mod links;
pub mod net;
pub mod provenance;
pub mod scripts;
mod shape;

pub use sondera_catalogue::hosts::file_url_path;
pub use sondera_catalogue::{persistence, places, secrets};
pub use sondera_injection as injection;
pub use sondera_shell as shell;

pub use classify::{
    ToolOutcome, classify_tool_call, fold_tool_name, observation_for, reclassify, visible_ascii,
};
pub use json::{path_arguments, search_patterns};
pub use shape::action_shape;
