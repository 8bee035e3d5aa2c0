//! Standing approvals: a human's "yes, and don't ask me again" for a shape of
//! action. A grant answers an *escalation* only; a hard deny is never
//! covered, whatever was granted.

use chrono::{DateTime, SubsecRound, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Actor, FileOperationKind};

crate::wire_enum! {
    /// How long an approval holds.
    pub enum GrantScope: "grant scope" {
        /// For the rest of this session's trajectory scope.
        Session,
        /// For this agent from now on, across sessions and restarts.
        Always,
    }
}

crate::wire_enum! {
    /// A person's answer to an escalated step.
    pub enum Approval: "approval" {
        /// The step is refused.
        Deny,
        /// This step only.
        Once,
        /// This step and later ones of the same shape in this session.
        Session,
        /// This step and later ones of the same shape by this agent, from now on.
        Always,
    }
}

impl Approval {
    /// How long the approval holds beyond this step, if it does.
    pub fn grant_scope(self) -> Option<GrantScope> {
        match self {
            Self::Session => Some(GrantScope::Session),
            Self::Always => Some(GrantScope::Always),
            Self::Deny | Self::Once => None,
        }
    }

    /// Whether the answer lets the step go ahead.
    pub fn is_approved(self) -> bool {
        self != Self::Deny
    }

    /// The decision in words, as a reason reads it.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Deny => "denied",
            Self::Once => "approved once",
            Self::Session => "approved for this session",
            Self::Always => "approved always",
        }
    }
}

/// One simple command of a shell action, as a grant sees it: the program,
/// its subcommand, and whether it ran with elevated privileges. `sudo rm`
/// and `rm` are different shapes, so neither grant covers the other.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct CommandShape {
    /// The program's name, without directories.
    pub program: String,
    /// Its subcommand (`push` of `git push`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subcommand: Option<String>,
    /// It ran with elevated privileges.
    #[serde(default)]
    pub privileged: bool,
}

/// What a grant covers: the kind of action and its target, never the exact
/// arguments, so one approval covers later calls of the same shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionShape {
    /// Every simple command of the command line, sorted and without repeats.
    Shell {
        /// One shape per simple command.
        commands: Vec<CommandShape>,
    },
    /// A file operation on a path.
    File {
        /// What the operation does.
        operation: FileOperationKind,
        /// The path, normalised.
        path: String,
    },
    /// A web fetch from a host.
    Web {
        /// The host, normalised.
        host: String,
    },
    /// A call of a tool on a target.
    Tool {
        /// The tool's name.
        tool: String,
        /// What the call acts on (its identifying argument), or empty.
        target: String,
    },
}

impl ActionShape {
    /// Whether a grant of `self` covers an action of shape `other`. A shell
    /// grant covers a command line whose every simple command it names.
    pub fn covers(&self, other: &ActionShape) -> bool {
        match (self, other) {
            (Self::Shell { commands: granted }, Self::Shell { commands }) => {
                !commands.is_empty() && commands.iter().all(|c| granted.binary_search(c).is_ok())
            }
            _ => self == other,
        }
    }

    /// A stable text form, used as the key a grant is stored under.
    pub fn key(&self) -> String {
        serde_json::to_string(self).expect("action shapes serialize")
    }

    /// A short id for the shape (16 hex digits of the SHA-256 of its key),
    /// which an operator names to revoke the grant of it.
    pub fn id(&self) -> String {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(self.key().as_bytes());
        hex::encode(&digest[..8])
    }
}

impl std::fmt::Display for ActionShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Shell { commands } => {
                let names: Vec<String> = commands
                    .iter()
                    .map(|c| {
                        let sudo = if c.privileged { "sudo " } else { "" };
                        match &c.subcommand {
                            Some(sub) => format!("{sudo}{} {sub}", c.program),
                            None => format!("{sudo}{}", c.program),
                        }
                    })
                    .collect();
                write!(f, "shell: {}", names.join(", "))
            }
            Self::File { operation, path } => write!(f, "file {}: {path}", operation.as_str()),
            Self::Web { host } => write!(f, "web: {host}"),
            Self::Tool { tool, target } => write!(f, "tool {tool}: {target}"),
        }
    }
}

/// A standing approval, as the harness stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// What the grant covers.
    pub shape: ActionShape,
    /// How long it holds.
    pub scope: GrantScope,
    /// Who granted it.
    pub granted_by: Actor,
    /// When, to the second.
    pub granted_at: DateTime<Utc>,
}

impl Grant {
    /// A grant made now.
    pub fn new(shape: ActionShape, scope: GrantScope, granted_by: Actor) -> Self {
        Self {
            shape,
            scope,
            granted_by,
            granted_at: Utc::now().round_subsecs(6),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(program: &str, sub: Option<&str>, privileged: bool) -> CommandShape {
        CommandShape {
            program: program.into(),
            subcommand: sub.map(Into::into),
            privileged,
        }
    }

    #[test]
    fn shell_grants_cover_their_commands_only() {
        let granted = ActionShape::Shell {
            commands: vec![cmd("git", Some("log"), false), cmd("head", None, false)],
        };
        let git_log = ActionShape::Shell {
            commands: vec![cmd("git", Some("log"), false)],
        };
        let git_push = ActionShape::Shell {
            commands: vec![cmd("git", Some("push"), false)],
        };
        let sudo_git_log = ActionShape::Shell {
            commands: vec![cmd("git", Some("log"), true)],
        };
        assert!(granted.covers(&git_log));
        assert!(!granted.covers(&git_push));
        assert!(!granted.covers(&sudo_git_log));
        assert!(!sudo_git_log.covers(&git_log));
        assert!(!granted.covers(&ActionShape::Shell { commands: vec![] }));
    }

    #[test]
    fn other_grants_need_the_same_target() {
        let web = ActionShape::Web {
            host: "example.com".into(),
        };
        assert!(web.covers(&web.clone()));
        assert!(!web.covers(&ActionShape::Web {
            host: "evil.example".into()
        }));
    }
}
