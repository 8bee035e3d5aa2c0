//! Where the identifying values of a trajectory came from: the addresses,
//! accounts, links, handles and ids that entered through what the agent read
//! and through what the user wrote. Detectors (sondera-guard's provenance
//! module) fill it in; policies read the facts derived from it when the
//! agent acts.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::reuse::{clone_deque_from, clone_if_changed};

/// How many values a trajectory remembers; past this the oldest value that
/// only observations carried is forgotten first.
pub const MAX_PROVENANCE_VALUES: usize = 256;

/// How many observations are remembered as sources of values.
pub const MAX_PROVENANCE_SOURCES: usize = 32;

/// How many tools of the agent's card are remembered with their effect.
pub const MAX_CARD_TOOLS: usize = 256;

/// Values by fingerprint, the observations they came from, what the user
/// asked for, and the effects of the agent's tools. Fixed in size.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// Fingerprints (of the normalised value) and their origin.
    pub values: BTreeMap<u64, ValueOrigin>,
    /// Observations values were taken from, oldest first.
    pub sources: VecDeque<Source>,
    /// Number the next source gets.
    pub next_source: u32,
    /// Order the next value sighting gets (for forgetting the oldest).
    pub next_order: u64,
    /// Effects the user's prompts asked for ("send", "transfer", ...).
    pub user_effects: BTreeSet<String>,
    /// Effects content the agent read asked its reader for ("please cancel
    /// the renewal", "Bot: close every ticket").
    pub content_effects: BTreeSet<String>,
    /// User prompts seen.
    pub user_prompts: u32,
    /// An observation the injection detector flagged entered the trajectory.
    pub flagged_seen: bool,
    /// The agent's tools by name, with the effect their declaration gives
    /// ("" for tools that only read, "unknown" when nothing says), from its
    /// card.
    pub tool_effects: BTreeMap<String, String>,
}

// `clone_from` reuses what the target holds, as the trajectory state's
// does (see `crate::reuse`).
impl Clone for Provenance {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let Self {
            values,
            sources,
            next_source,
            next_order,
            user_effects,
            content_effects,
            user_prompts,
            flagged_seen,
            tool_effects,
        } = source;
        clone_if_changed(&mut self.values, values);
        clone_deque_from(&mut self.sources, sources);
        self.next_source = *next_source;
        self.next_order = *next_order;
        clone_if_changed(&mut self.user_effects, user_effects);
        clone_if_changed(&mut self.content_effects, content_effects);
        self.user_prompts = *user_prompts;
        self.flagged_seen = *flagged_seen;
        clone_if_changed(&mut self.tool_effects, tool_effects);
    }
}

/// Where one value was seen. Stored as `[flags, source, order]`: a
/// trajectory's state is written with every step, and its values are most
/// of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CompactOrigin", into = "CompactOrigin")]
pub struct ValueOrigin {
    /// In one of the user's prompts.
    pub user: bool,
    /// In an observation (a tool, file, shell or web result).
    pub observed: bool,
    /// In an observation the injection detector flagged.
    pub flagged: bool,
    /// In an observation, as the value assigned to a credential (a
    /// password, key or token): what must not leave in a link.
    pub credential: bool,
    /// The first observation it was seen in (see [`Provenance::source`]).
    pub source: Option<u32>,
    /// When it was last seen.
    pub order: u64,
}

/// [`ValueOrigin`] as stored: its four flags as bits, then the source
/// and the order.
type CompactOrigin = (u8, Option<u32>, u64);

impl From<CompactOrigin> for ValueOrigin {
    fn from((flags, source, order): CompactOrigin) -> Self {
        Self {
            user: flags & 1 != 0,
            observed: flags & 2 != 0,
            flagged: flags & 4 != 0,
            credential: flags & 8 != 0,
            source,
            order,
        }
    }
}

impl From<ValueOrigin> for CompactOrigin {
    fn from(origin: ValueOrigin) -> Self {
        let flags = u8::from(origin.user)
            | u8::from(origin.observed) << 1
            | u8::from(origin.flagged) << 2
            | u8::from(origin.credential) << 3;
        (flags, origin.source, origin.order)
    }
}

/// An observation values came from.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The observation's number in the trajectory, from 1.
    pub number: u32,
    /// The call the observation answered.
    pub call_id: String,
    /// The tool (or class of call) that produced it.
    pub tool: String,
    /// The injection detector flagged it.
    pub flagged: bool,
}

impl Clone for Source {
    fn clone(&self) -> Self {
        Self {
            number: self.number,
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            flagged: self.flagged,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let Self {
            number,
            call_id,
            tool,
            flagged,
        } = source;
        self.number = *number;
        self.call_id.clone_from(call_id);
        self.tool.clone_from(tool);
        self.flagged = *flagged;
    }
}

/// Who brought a value in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sighting {
    /// A prompt of the user's.
    User,
    /// An observation of a tool's.
    Observation {
        /// The observation's number (see [`Source::number`]).
        source: u32,
        /// The injection detector flagged it.
        flagged: bool,
    },
    /// The value assigned to a credential in an observation's text.
    Credential {
        /// The observation's number (see [`Source::number`]).
        source: u32,
    },
}

impl Provenance {
    /// Remembers an observation as a source and returns its number.
    pub fn add_source(&mut self, call_id: &str, tool: &str, flagged: bool) -> u32 {
        let number = self.next_source;
        self.next_source = self.next_source.wrapping_add(1);
        if self.sources.len() == MAX_PROVENANCE_SOURCES {
            self.sources.pop_front();
        }
        self.sources.push_back(Source {
            number,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            flagged,
        });
        self.flagged_seen |= flagged;
        number
    }

    /// The source numbered `number`, if it is still remembered.
    pub fn source(&self, number: u32) -> Option<&Source> {
        self.sources.iter().find(|s| s.number == number)
    }

    /// Records a sighting of the value fingerprinted `fingerprint`.
    pub fn sighted(&mut self, fingerprint: u64, sighting: Sighting) {
        if !self.values.contains_key(&fingerprint) && self.values.len() >= MAX_PROVENANCE_VALUES {
            self.forget_oldest();
        }
        let order = self.next_order;
        self.next_order += 1;
        let origin = self.values.entry(fingerprint).or_default();
        origin.order = order;
        match sighting {
            Sighting::User => origin.user = true,
            Sighting::Observation { source, flagged } => {
                origin.observed = true;
                origin.flagged |= flagged;
                origin.source.get_or_insert(source);
            }
            Sighting::Credential { source } => {
                origin.observed = true;
                origin.credential = true;
                origin.source.get_or_insert(source);
            }
        }
    }

    /// Forgets the oldest value only observations carried, or else the oldest.
    fn forget_oldest(&mut self) {
        let oldest = |user_too: bool| {
            self.values
                .iter()
                .filter(|(_, o)| user_too || !o.user)
                .min_by_key(|(_, o)| o.order)
                .map(|(k, _)| *k)
        };
        if let Some(key) = oldest(false).or_else(|| oldest(true)) {
            self.values.remove(&key);
        }
    }

    /// Remembers the effect of one of the agent's tools.
    pub fn declare_tool(&mut self, name: &str, effect: &str) {
        if self.tool_effects.len() < MAX_CARD_TOOLS || self.tool_effects.contains_key(name) {
            self.tool_effects
                .insert(name.to_string(), effect.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_bounded_and_user_values_kept_longest() {
        let mut p = Provenance::default();
        p.sighted(0, Sighting::User);
        let source = p.add_source("c", "read_email", false);
        for fp in 1..(MAX_PROVENANCE_VALUES as u64 + 50) {
            p.sighted(
                fp,
                Sighting::Observation {
                    source,
                    flagged: false,
                },
            );
        }
        assert_eq!(p.values.len(), MAX_PROVENANCE_VALUES);
        assert!(p.values[&0].user, "the user's value outlives observed ones");
        assert!(!p.values.contains_key(&1));
    }

    #[test]
    fn a_value_keeps_its_first_source_and_any_flag() {
        let mut p = Provenance::default();
        let clean = p.add_source("a", "search", false);
        let flagged = p.add_source("b", "read_page", true);
        p.sighted(
            7,
            Sighting::Observation {
                source: clean,
                flagged: false,
            },
        );
        p.sighted(
            7,
            Sighting::Observation {
                source: flagged,
                flagged: true,
            },
        );
        let origin = &p.values[&7];
        assert_eq!(
            (origin.source, origin.flagged, origin.user),
            (Some(clean), true, false)
        );
        assert!(p.flagged_seen);
    }

    #[test]
    fn origins_are_stored_compactly_and_read_back() {
        let mut p = Provenance::default();
        let source = p.add_source("c", "read_inbox", true);
        p.sighted(
            42,
            Sighting::Observation {
                source,
                flagged: true,
            },
        );
        p.sighted(42, Sighting::User);
        let json = serde_json::to_string(&p.values).unwrap();
        assert_eq!(json, r#"{"42":[7,0,1]}"#);
        let back: BTreeMap<u64, ValueOrigin> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p.values);
        p.sighted(43, Sighting::Credential { source });
        let json = serde_json::to_string(&p.values).unwrap();
        assert_eq!(json, r#"{"42":[7,0,1],"43":[10,0,2]}"#);
        let back: BTreeMap<u64, ValueOrigin> = serde_json::from_str(&json).unwrap();
        assert!(back[&43].credential && !back[&42].credential);
    }

    #[test]
    fn sources_are_bounded() {
        let mut p = Provenance::default();
        for i in 0..MAX_PROVENANCE_SOURCES + 3 {
            p.add_source(&i.to_string(), "t", false);
        }
        assert_eq!(p.sources.len(), MAX_PROVENANCE_SOURCES);
        assert!(p.source(0).is_none());
        assert!(p.source(MAX_PROVENANCE_SOURCES as u32 + 2).is_some());
    }
}
