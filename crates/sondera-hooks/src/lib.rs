//! Coding agents governed through their hooks: Claude Code, Gemini CLI,
//! Cursor, GitHub Copilot CLI and OpenAI Codex.
//!
//! Each of these agents runs a command (or posts to a URL) at points of its
//! loop and reads the answer. This crate is the one mapping between those
//! dialects and the harness:
//!
//! - [`HookCall::parse`] reads one hook input of a [`CodingAgent`]: the
//!   session becomes the trajectory (one per agent session id), the tool
//!   call the action the guard classifies it as (`Bash` and
//!   `run_shell_command` a shell command, `Read` and `view` a file read,
//!   `WebFetch` a web fetch, MCP tools generic calls), a tool's result the
//!   observation of that action, a submitted prompt a user prompt, and the
//!   session's start and end its lifecycle.
//! - [`HookJudge`] judges the call through any [`Steps`] (the adjudicator
//!   in process, a server connection, or the server's own service),
//!   starting the trajectory on its first step, and turns the verdict into
//!   an [`Outcome`]: proceed, deny, ask the person at the agent, or (when
//!   configured) ask the operators and wait.
//! - [`Judged::command`] and [`Judged::http`] render the outcome in the
//!   agent's dialect, for a command hook (stdout and an exit status) or an
//!   HTTP hook (a JSON body).
//! - [`install`] adds our handlers to an agent's hook configuration and
//!   takes exactly them out again.
//!
//! Failing closed is the rule everywhere: input that cannot be read, an
//! event this crate does not know, a harness that cannot be reached or a
//! judgement past its bound answers so that nothing runs. Each agent treats
//! some answers as "go ahead" (most: any exit status but 2; Copilot CLI: any
//! exit status but 0 with a decision); a failure is never one of them.
//! Allowing never overrides the agent's own permission rules: an allowed
//! step is answered with no decision where the dialect has that answer.

mod agent;
mod answer;
mod input;
pub mod install;
mod judge;
mod tools;

pub use agent::{CodingAgent, UnknownAgent};
pub use answer::{CommandAnswer, Gate, Outcome};
pub use input::{HookCall, HookInputError, MAX_INPUT_BYTES, Step};
pub use judge::{Escalation, HookJudge, Judged, StepError, Steps};
