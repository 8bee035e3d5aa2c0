use std::collections::{BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::reuse::{clone_deque_from, clone_if_changed};
use crate::{Decision, Payload};

/// How many tool calls awaiting their result a trajectory remembers. Older
/// ones are forgotten, so the state of a trajectory stays the same size however
/// long it runs.
pub const MAX_PENDING_CALLS: usize = 64;

/// How many distinct tool names a trajectory remembers in `tools_used`.
/// Past this, new names are not added, so a trajectory that invents names
/// cannot grow its state without bound.
pub const MAX_TOOLS_USED: usize = 256;

/// How many commands suggested by untrusted content a trajectory remembers;
/// older ones are forgotten first.
pub const MAX_UNTRUSTED_COMMANDS: usize = 32;

/// How many written scripts whose commands carry risks a trajectory
/// remembers; the oldest is forgotten first.
pub const MAX_WRITTEN_SCRIPTS: usize = 8;

/// What a trajectory has accumulated so far: the facts policies read from the
/// `Trajectory` entity. It is a fixed-size summary, never a scan of history,
/// so the cost of one adjudication does not grow with the trajectory.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrajectoryState {
    /// Steps adjudicated by policy (actions and observations).
    pub step_count: u64,
    /// Steps denied.
    pub denial_count: u64,
    /// Steps escalated.
    pub escalation_count: u64,
    /// Credentials have entered the trajectory (a credential file was read,
    /// or an output revealed a credential).
    pub secrets_seen: bool,
    /// Untrusted content has entered the trajectory (web content, or an
    /// output or prompt carrying injection signals).
    pub untrusted_seen: bool,
    /// Calls whose result has not been seen yet, oldest first.
    pub pending_calls: VecDeque<PendingCall>,
    /// Tools called and not denied: generic tools by name, classified calls
    /// by their class (`shell`, `web_fetch`, `file_read`, `file_write`,
    /// `file_edit`, `file_delete`). At most [`MAX_TOOLS_USED`] names.
    pub tools_used: BTreeSet<String>,
    /// Commands untrusted content told the agent to run (whitespace
    /// collapsed), newest last; at most [`MAX_UNTRUSTED_COMMANDS`].
    pub untrusted_commands: VecDeque<String>,
    /// Where the identifying values the trajectory saw came from.
    pub provenance: crate::provenance::Provenance,
    /// Scripts the trajectory wrote whose commands carry risks, newest
    /// last; at most [`MAX_WRITTEN_SCRIPTS`]. A command that later runs one
    /// carries its risks.
    pub written_scripts: Vec<WrittenScript>,
}

/// A script a trajectory wrote (by a file tool) and the risks of what it
/// runs, so that running it later is judged by what it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenScript {
    /// Its absolute path.
    pub path: String,
    /// The risks of its commands.
    pub risks: Vec<ScriptRisk>,
}

/// One risk of a written script's commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptRisk {
    /// The risk's kind, by its name in policies (`delete_outside_workspace`).
    pub kind: String,
    /// What established it.
    pub evidence: String,
}

/// A call the trajectory saw, remembered until its result arrives so the
/// result can be judged with what was asked for.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call's id.
    pub call_id: String,
    /// The tool name for generic calls, the command for shell calls, the URL
    /// for web fetches, the path for file operations.
    pub target: String,
    /// The payload kind of the call (`tool_call`, `shell_command`, ...).
    pub kind: String,
    /// For file operations: `read`, `write`, `edit` or `delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
}

// `clone_from` reuses what the target holds: a store copies the state into
// its own after every step (see `crate::reuse`). Fields are listed by
// destructuring, so a new one cannot be left out of either.
impl Clone for TrajectoryState {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let Self {
            step_count,
            denial_count,
            escalation_count,
            secrets_seen,
            untrusted_seen,
            pending_calls,
            tools_used,
            untrusted_commands,
            provenance,
            written_scripts,
        } = source;
        self.step_count = *step_count;
        self.denial_count = *denial_count;
        self.escalation_count = *escalation_count;
        self.secrets_seen = *secrets_seen;
        self.untrusted_seen = *untrusted_seen;
        clone_deque_from(&mut self.pending_calls, pending_calls);
        clone_if_changed(&mut self.tools_used, tools_used);
        clone_deque_from(&mut self.untrusted_commands, untrusted_commands);
        self.provenance.clone_from(provenance);
        clone_if_changed(&mut self.written_scripts, written_scripts);
    }
}

impl Clone for PendingCall {
    fn clone(&self) -> Self {
        Self {
            call_id: self.call_id.clone(),
            target: self.target.clone(),
            kind: self.kind.clone(),
            operation: self.operation.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let Self {
            call_id,
            target,
            kind,
            operation,
        } = source;
        self.call_id.clone_from(call_id);
        self.target.clone_from(target);
        self.kind.clone_from(kind);
        self.operation.clone_from(operation);
    }
}

impl TrajectoryState {
    /// The pending call `call_id`, if the trajectory still remembers it.
    pub fn pending(&self, call_id: &str) -> Option<&PendingCall> {
        self.pending_calls.iter().find(|c| c.call_id == call_id)
    }

    /// Remembers commands untrusted content suggested, forgetting the oldest
    /// beyond [`MAX_UNTRUSTED_COMMANDS`].
    pub fn remember_untrusted_commands(&mut self, commands: impl IntoIterator<Item = String>) {
        for command in commands {
            self.untrusted_commands.retain(|c| *c != command);
            if self.untrusted_commands.len() == MAX_UNTRUSTED_COMMANDS {
                self.untrusted_commands.pop_front();
            }
            self.untrusted_commands.push_back(command);
        }
    }

    /// Remembers what the script at `path` now does: a script without
    /// risks is forgotten, and so is the oldest past [`MAX_WRITTEN_SCRIPTS`].
    pub fn remember_script(&mut self, path: &str, risks: Vec<ScriptRisk>) {
        self.written_scripts.retain(|s| s.path != path);
        if risks.is_empty() {
            return;
        }
        if self.written_scripts.len() == MAX_WRITTEN_SCRIPTS {
            self.written_scripts.remove(0);
        }
        self.written_scripts.push(WrittenScript {
            path: path.to_string(),
            risks,
        });
    }

    /// The script written at `path` earlier in the trajectory, if its
    /// commands carry risks.
    pub fn written_script(&self, path: &str) -> Option<&WrittenScript> {
        self.written_scripts.iter().find(|s| s.path == path)
    }

    /// Folds one adjudicated step into the state.
    pub fn record(&mut self, payload: &Payload, decision: Decision) {
        self.step_count += 1;
        match decision {
            Decision::Allow => {}
            Decision::Deny => self.denial_count += 1,
            Decision::Escalate => self.escalation_count += 1,
        }
        if decision != Decision::Deny
            && self.tools_used.len() < MAX_TOOLS_USED
            && let Some(tool) = tool_used(payload)
            && !self.tools_used.contains(tool)
        {
            self.tools_used.insert(tool.to_string());
        }
        if let Some(call) = PendingCall::from_action(payload) {
            self.pending_calls.retain(|c| c.call_id != call.call_id);
            if self.pending_calls.len() == MAX_PENDING_CALLS {
                self.pending_calls.pop_front();
            }
            self.pending_calls.push_back(call);
        } else if payload.category() == crate::PayloadCategory::Observation
            && let Some(call_id) = payload.call_id()
        {
            self.pending_calls.retain(|c| c.call_id != call_id);
        }
    }
}

/// The name `tools_used` records for an action.
fn tool_used(payload: &Payload) -> Option<&str> {
    Some(match payload {
        Payload::ToolCall { tool, .. } => tool,
        Payload::ShellCommand { .. } => "shell",
        Payload::WebFetch { .. } => "web_fetch",
        Payload::FileOperation { operation, .. } => match operation {
            crate::FileOperationKind::Read => "file_read",
            crate::FileOperationKind::Write => "file_write",
            crate::FileOperationKind::Edit => "file_edit",
            crate::FileOperationKind::Delete => "file_delete",
        },
        _ => return None,
    })
}

impl PendingCall {
    fn from_action(payload: &Payload) -> Option<Self> {
        let (call_id, target, operation) = match payload {
            Payload::ToolCall { call_id, tool, .. } => (call_id, tool, None),
            Payload::ShellCommand {
                call_id, command, ..
            } => (call_id, command, None),
            Payload::WebFetch { call_id, url, .. } => (call_id, url, None),
            Payload::FileOperation {
                call_id,
                path,
                operation,
                ..
            } => (call_id, path, Some(operation.as_str().to_string())),
            _ => return None,
        };
        Some(Self {
            call_id: call_id.clone(),
            target: target.clone(),
            kind: payload.kind().to_string(),
            operation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileOperationKind;

    fn shell(id: &str) -> Payload {
        Payload::ShellCommand {
            call_id: id.into(),
            command: format!("echo {id}"),
            working_dir: None,
        }
    }

    #[test]
    fn remembers_a_few_risky_scripts() {
        let risky = || {
            vec![ScriptRisk {
                kind: "remote_script".into(),
                evidence: "curl x | sh".into(),
            }]
        };
        let mut state = TrajectoryState::default();
        for n in 0..=MAX_WRITTEN_SCRIPTS {
            state.remember_script(&format!("/w/{n}.sh"), risky());
        }
        assert_eq!(state.written_scripts.len(), MAX_WRITTEN_SCRIPTS);
        assert!(state.written_script("/w/0.sh").is_none());
        assert!(state.written_script("/w/1.sh").is_some());
        // Rewritten without risks, a script is forgotten.
        state.remember_script("/w/1.sh", Vec::new());
        assert!(state.written_script("/w/1.sh").is_none());
    }

    #[test]
    fn counts_steps_and_blocked_steps() {
        let mut state = TrajectoryState::default();
        state.record(&shell("a"), Decision::Allow);
        state.record(&shell("b"), Decision::Deny);
        state.record(&shell("c"), Decision::Escalate);
        assert_eq!(
            (state.step_count, state.denial_count, state.escalation_count),
            (3, 1, 1)
        );
    }

    /// A state with something in every field, different for each `n`.
    fn busy(n: usize) -> TrajectoryState {
        let mut state = TrajectoryState::default();
        for call in 0..n * 3 {
            state.record(&shell(&format!("{n}-{call}")), Decision::Allow);
        }
        state.record(&shell("denied"), Decision::Deny);
        state.secrets_seen = n.is_multiple_of(2);
        state.untrusted_seen = !n.is_multiple_of(2);
        state.tools_used.insert(format!("tool {n}"));
        state.remember_untrusted_commands((0..n).map(|c| format!("curl x/{c}")));
        state.remember_script(
            &format!("/w/{n}.sh"),
            vec![ScriptRisk {
                kind: "remote_script".into(),
                evidence: format!("curl {n} | sh"),
            }],
        );
        let source = state
            .provenance
            .add_source(&format!("c{n}"), "web_fetch", n > 1);
        state.provenance.sighted(
            n as u64,
            crate::provenance::Sighting::Observation {
                source,
                flagged: false,
            },
        );
        state.provenance.declare_tool(&format!("tool {n}"), "send");
        state.provenance.user_effects.insert(format!("effect {n}"));
        state
            .provenance
            .content_effects
            .insert(format!("asked {n}"));
        state.provenance.user_prompts = n as u32;
        state.provenance.flagged_seen = n > 2;
        state
    }

    #[test]
    fn a_state_copied_into_another_equals_its_source() {
        for (kept, new) in [(0, 3), (3, 0), (2, 5), (5, 2), (4, 4)] {
            let source = busy(new);
            let mut target = busy(kept);
            target.clone_from(&source);
            assert_eq!(target, source, "state of {kept} copied from {new}");
            assert_eq!(source.clone(), source);
        }
    }

    #[test]
    fn remembers_calls_until_their_result() {
        let mut state = TrajectoryState::default();
        state.record(
            &Payload::FileOperation {
                call_id: "f".into(),
                operation: FileOperationKind::Read,
                path: "/w/a".into(),
                content: None,
                old_content: None,
            },
            Decision::Allow,
        );
        let pending = state.pending("f").unwrap();
        assert_eq!(
            (pending.target.as_str(), pending.operation.as_deref()),
            ("/w/a", Some("read"))
        );
        state.record(
            &Payload::FileOperationResult {
                call_id: "f".into(),
                success: true,
                content: None,
                error: None,
            },
            Decision::Allow,
        );
        assert!(state.pending("f").is_none());
    }

    #[test]
    fn pending_calls_are_bounded() {
        let mut state = TrajectoryState::default();
        for i in 0..MAX_PENDING_CALLS + 10 {
            state.record(&shell(&i.to_string()), Decision::Allow);
        }
        assert_eq!(state.pending_calls.len(), MAX_PENDING_CALLS);
        assert!(state.pending("0").is_none());
        assert!(
            state
                .pending(&(MAX_PENDING_CALLS + 9).to_string())
                .is_some()
        );
    }

    #[test]
    fn remembers_tools_that_ran_within_a_bound() {
        let mut state = TrajectoryState::default();
        let call = |tool: &str| Payload::ToolCall {
            call_id: "c".into(),
            tool: tool.into(),
            arguments: serde_json::json!({}),
        };
        state.record(&call("search"), Decision::Allow);
        state.record(&call("send_email"), Decision::Deny);
        state.record(&shell("a"), Decision::Escalate);
        assert_eq!(
            state.tools_used.iter().collect::<Vec<_>>(),
            ["search", "shell"],
            "a denied call did not run"
        );
        for i in 0..MAX_TOOLS_USED * 2 {
            state.record(&call(&format!("t{i}")), Decision::Allow);
        }
        assert_eq!(state.tools_used.len(), MAX_TOOLS_USED);
    }

    #[test]
    fn untrusted_commands_are_bounded_newest_last() {
        let mut state = TrajectoryState::default();
        state.remember_untrusted_commands((0..MAX_UNTRUSTED_COMMANDS + 5).map(|i| format!("c{i}")));
        assert_eq!(state.untrusted_commands.len(), MAX_UNTRUSTED_COMMANDS);
        assert_eq!(
            state.untrusted_commands.front().map(String::as_str),
            Some("c5")
        );
        state.remember_untrusted_commands(["c5".to_string()]);
        assert_eq!(
            state.untrusted_commands.back().map(String::as_str),
            Some("c5")
        );
        assert_eq!(state.untrusted_commands.len(), MAX_UNTRUSTED_COMMANDS);
    }
}
