use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

crate::wire_enum! {
    /// The outcome of adjudicating one step.
    pub enum Decision: "decision" {
        /// The step goes ahead.
        Allow,
        /// The step is refused.
        Deny,
        /// A human should decide before the step goes ahead.
        Escalate,
    }
}

impl Decision {
    /// Whether the step may go ahead.
    pub fn is_allow(self) -> bool {
        self == Self::Allow
    }
}

crate::wire_enum! {
    /// How a verdict is applied.
    #[derive(Default)]
    pub enum Mode: "mode" {
        /// Enforce the decision.
        #[default]
        Govern,
        /// Record the decision but always allow; the would-be decision stays visible.
        Monitor,
        /// Enforce, and give the agent steering text to correct course with.
        Steer,
    }
}

/// A policy that took part in a decision, with the annotations its author wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyMetadata {
    /// The policy's `@id`.
    pub policy_id: String,
    /// The policy's `@description`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The policy asks for a human decision rather than a hard deny.
    #[serde(default)]
    pub escalate: bool,
    /// The value of `@escalate("...")`, e.g. who should decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_arg: Option<String>,
    /// Every annotation of the policy (including `id` and `description`).
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// A verdict on one event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Adjudicated {
    /// The decision to apply. In monitor mode this is always `allow`.
    pub decision: Decision,
    /// The mode the decision was made in.
    pub mode: Mode,
    /// Why, in words the agent and a person can read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The policies that determined the decision.
    #[serde(default)]
    pub policies: Vec<PolicyMetadata>,
    /// What the policies decided when that differs from `decision` (monitor mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_be: Option<Decision>,
    /// Policies in shadow (`@mode("monitor")`) that matched; they never change `decision`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadow_matches: Vec<PolicyMetadata>,
    /// Facts the detectors computed for this event, when they are reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrails: Option<serde_json::Value>,
    /// Text that tells the agent how to correct course (steer mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steering: Option<String>,
    /// The recorded judgement this verdict is (see [`decision_id`]): what an
    /// agent logs so that its line can be found in the server's records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
    /// The policy set that judged the step, by the hash of its content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_revision: Option<String>,
}

/// The id of the judgement of the step at `seq` of a trajectory by the
/// policy set `policy_revision`: 32 hex digits of a SHA-256 over them all.
///
/// Derived rather than drawn at random, so the same step judged by the same
/// policies has the same id wherever it is computed (a replay, another
/// server), and a step judged again after a lost race for its position, or
/// by other policies, has another.
pub fn decision_id(
    tenant: &str,
    trajectory_id: &str,
    seq: u64,
    event_id: &str,
    policy_revision: &str,
) -> String {
    DecisionIds::new(tenant, trajectory_id).id(seq, event_id, policy_revision)
}

/// [`decision_id`] for the steps of one trajectory, with what they share
/// hashed once: the tenant and trajectory id, and the length of an event
/// id, which with a UUID trajectory fill the hash's first block (one of the
/// three a step's id takes).
#[derive(Debug, Clone)]
pub struct DecisionIds {
    /// The hash over the tenant and the trajectory id.
    trajectory: sha2::Sha256,
    /// It, over the length of an event id too: (length, state).
    event_id_length: Option<(usize, sha2::Sha256)>,
}

impl DecisionIds {
    /// The ids of the steps of `trajectory_id` in `tenant`.
    pub fn new(tenant: &str, trajectory_id: &str) -> Self {
        let mut trajectory = sha2::Sha256::default();
        for part in [tenant, trajectory_id] {
            hash_part(&mut trajectory, part);
        }
        Self {
            trajectory,
            event_id_length: None,
        }
    }

    /// The id of the judgement of the step at `seq`, event `event_id`, by
    /// the policy set `policy_revision`.
    pub fn id(&mut self, seq: u64, event_id: &str, policy_revision: &str) -> String {
        use sha2::Digest;
        let mut hasher = match &self.event_id_length {
            Some((length, state)) if *length == event_id.len() => state.clone(),
            _ => {
                let mut state = self.trajectory.clone();
                state.update((event_id.len() as u64).to_le_bytes());
                self.event_id_length = Some((event_id.len(), state.clone()));
                state
            }
        };
        hasher.update(event_id.as_bytes());
        hash_part(&mut hasher, policy_revision);
        hasher.update(seq.to_le_bytes());
        hex::encode(&hasher.finalize()[..16])
    }
}

/// A part of a decision id: its length first, so no two lists of parts
/// hash alike.
fn hash_part(hasher: &mut sha2::Sha256, part: &str) {
    use sha2::Digest;
    hasher.update((part.len() as u64).to_le_bytes());
    hasher.update(part.as_bytes());
}

impl Adjudicated {
    /// An allow verdict with a reason and no deciding policies.
    pub fn allow(mode: Mode, reason: impl Into<String>) -> Self {
        Self {
            decision: Decision::Allow,
            mode,
            reason: Some(reason.into()),
            policies: Vec::new(),
            would_be: None,
            shadow_matches: Vec::new(),
            guardrails: None,
            steering: None,
            decision_id: None,
            policy_revision: None,
        }
    }

    /// The verdict of a step policies do not judge (a lifecycle event, a
    /// thought): allowed, and recorded without a verdict of its own.
    pub fn unjudged(mode: Mode, kind: &str) -> Self {
        Self::allow(mode, format!("{kind} recorded"))
    }

    /// A deny verdict that no policy produced (a failure to adjudicate).
    pub fn deny(mode: Mode, reason: impl Into<String>) -> Self {
        Self {
            decision: Decision::Deny,
            ..Self::allow(mode, reason)
        }
    }

    /// Whether the step may go ahead.
    pub fn is_allowed(&self) -> bool {
        self.decision.is_allow()
    }

    /// The decision the policies reached, whatever the mode: in monitor
    /// mode the one that would have been enforced.
    pub fn effective_decision(&self) -> Decision {
        self.would_be.unwrap_or(self.decision)
    }

    /// The `@id` of each policy that determined the decision.
    pub fn policy_ids(&self) -> impl Iterator<Item = &str> {
        self.policies.iter().map(|p| p.policy_id.as_str())
    }

    /// The message an agent reads when its step is blocked: the reason, then
    /// each deciding policy with its description and annotations, then any
    /// steering text.
    pub fn deny_message(&self) -> String {
        let mut msg = match self.decision {
            Decision::Escalate => String::from("Sondera Harness requires approval for this step"),
            _ => String::from("Sondera Harness blocked this step"),
        };
        if let Some(reason) = &self.reason {
            let _ = write!(msg, ": {reason}");
        }
        for policy in &self.policies {
            let _ = write!(msg, "\n- policy `{}`", policy.policy_id);
            if let Some(description) = &policy.description {
                let _ = write!(msg, ": {description}");
            }
            let extra: Vec<String> = policy
                .annotations
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "id" | "description"))
                .map(|(k, v)| {
                    if v.is_empty() {
                        k.clone()
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            if !extra.is_empty() {
                let _ = write!(msg, " [{}]", extra.join(", "));
            }
        }
        if let Some(steering) = &self.steering {
            let _ = write!(msg, "\nHow to proceed: {steering}");
        }
        if let Some(id) = &self.decision_id {
            let _ = write!(msg, "\n(decision {id})");
        }
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(id: &str, description: &str, extra: &[(&str, &str)]) -> PolicyMetadata {
        let mut annotations: BTreeMap<String, String> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        annotations.insert("id".into(), id.into());
        annotations.insert("description".into(), description.into());
        PolicyMetadata {
            policy_id: id.into(),
            description: Some(description.into()),
            escalate: false,
            escalate_arg: None,
            annotations,
        }
    }

    #[test]
    fn deny_message_names_reason_policies_and_annotations() {
        let mut verdict = Adjudicated::deny(Mode::Steer, "forbidden by destructive-rm-root");
        verdict.policies = vec![policy(
            "destructive-rm-root",
            "Recursive delete outside the workspace",
            &[("severity", "critical"), ("escalate", "")],
        )];
        verdict.steering = Some("delete only paths inside the workspace".into());
        let msg = verdict.deny_message();
        assert!(msg.starts_with("Sondera Harness blocked this step: forbidden by"));
        assert!(msg.contains(
            "- policy `destructive-rm-root`: Recursive delete outside the workspace [escalate, severity=critical]"
        ));
        assert!(msg.ends_with("How to proceed: delete only paths inside the workspace"));
    }

    #[test]
    fn decision_ids_follow_every_part_of_the_judgement() {
        let id = decision_id("acme", "t1", 3, "e7", "rev");
        // The id is part of every record: servers of two versions agree on it.
        assert_eq!(id, "0d45480599ca8baf1d4385284df015eb");
        assert_eq!(id, decision_id("acme", "t1", 3, "e7", "rev"));
        for other in [
            decision_id("acme2", "t1", 3, "e7", "rev"),
            decision_id("acme", "t2", 3, "e7", "rev"),
            decision_id("acme", "t1", 4, "e7", "rev"),
            decision_id("acme", "t1", 3, "e8", "rev"),
            decision_id("acme", "t1", 3, "e7", "rev2"),
            // Parts are delimited: moving a character across a boundary matters.
            decision_id("acmet", "1", 3, "e7", "rev"),
        ] {
            assert_ne!(id, other);
        }
        let mut verdict = Adjudicated::deny(Mode::Govern, "no");
        verdict.decision_id = Some(id.clone());
        assert!(
            verdict
                .deny_message()
                .ends_with(&format!("(decision {id})"))
        );
    }

    #[test]
    fn a_trajectorys_ids_are_the_ids_of_its_steps() {
        let trajectory = "0190a7c2-1c4e-7d3a-9f10-2b3c4d5e6f70";
        let revision = "9".repeat(64);
        let mut ids = DecisionIds::new("default", trajectory);
        assert_eq!(
            ids.id(5, "0190a7c2-1c4e-7d3a-9f10-2b3c4d5e6f71", &revision),
            "9e8975fce10944659149533bc02aff0f"
        );
        // Event ids of other lengths, in turn and again, and tenants and
        // trajectories on either side of the hash's block boundary.
        for tenant in ["default", "t", &"x".repeat(70)] {
            let mut ids = DecisionIds::new(tenant, trajectory);
            for (seq, event) in ["e", "0190a7c2-1c4e-7d3a-9f10-2b3c4d5e6f71", "e", "", "ee"]
                .into_iter()
                .enumerate()
            {
                let seq = seq as u64;
                assert_eq!(
                    ids.id(seq, event, &revision),
                    decision_id(tenant, trajectory, seq, event, &revision)
                );
            }
        }
    }

    #[test]
    fn escalation_message_asks_for_approval() {
        let verdict = Adjudicated {
            decision: Decision::Escalate,
            ..Adjudicated::deny(Mode::Govern, "needs review")
        };
        assert!(
            verdict
                .deny_message()
                .starts_with("Sondera Harness requires approval for this step: needs review")
        );
    }

    #[test]
    fn mode_parses_and_rejects_unknown_names() {
        assert_eq!("monitor".parse::<Mode>(), Ok(Mode::Monitor));
        let err = "audit".parse::<Mode>().unwrap_err().to_string();
        assert!(err.contains("govern, monitor or steer"), "{err}");
    }
}
