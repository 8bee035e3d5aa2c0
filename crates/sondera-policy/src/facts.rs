//! The facts of one request as plain values.
//!
//! Detectors' results are gathered here once, as our own values. The
//! prefilter reads them as they are; only when a policy remains whose
//! outcome it cannot know are they turned into Cedar's context and entities,
//! which costs more than computing most facts did (Cedar evaluates every
//! restricted expression into a value and closes the entity hierarchy).

use std::collections::{HashMap, HashSet};

use cedar_policy::{Context, Entities, Entity, EntityUid, RestrictedExpression};

/// One fact, shaped as Cedar will see it.
#[derive(Debug, Clone)]
pub(crate) enum Fact {
    Bool(bool),
    Long(i64),
    String(String),
    Set(Vec<Fact>),
    Record(Record),
    /// The trajectory entity, which the context refers to.
    Trajectory,
    /// A value only Cedar reads (typed tool arguments, decimals among
    /// them): the prefilter takes it for "could be anything".
    Cedar(RestrictedExpression),
}

pub(crate) type Record = Vec<(&'static str, Fact)>;

impl Fact {
    pub(crate) fn string(s: &str) -> Self {
        Self::String(s.to_string())
    }

    /// A count as Cedar's `Long`, saturating.
    pub(crate) fn count(n: u64) -> Self {
        Self::Long(i64::try_from(n).unwrap_or(i64::MAX))
    }

    pub(crate) fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Self {
        Self::Set(items.into_iter().map(Self::string).collect())
    }

    /// Whether Cedar would build this value without evaluating anything
    /// that can fail: everything but [`Fact::Cedar`].
    pub(crate) fn is_plain(&self) -> bool {
        match self {
            Self::Set(items) => items.iter().all(Self::is_plain),
            Self::Record(record) => record.iter().all(|(_, v)| v.is_plain()),
            Self::Cedar(_) => false,
            _ => true,
        }
    }

    fn to_cedar(&self, trajectory: &EntityUid) -> Result<RestrictedExpression, String> {
        Ok(match self {
            Self::Bool(b) => RestrictedExpression::new_bool(*b),
            Self::Long(n) => RestrictedExpression::new_long(*n),
            Self::String(s) => RestrictedExpression::new_string(s.clone()),
            Self::Set(items) => RestrictedExpression::new_set(
                items
                    .iter()
                    .map(|item| item.to_cedar(trajectory))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Self::Record(record) => RestrictedExpression::new_record(pairs(record, trajectory)?)
                .map_err(|e| e.to_string())?,
            Self::Trajectory => RestrictedExpression::new_entity_uid(trajectory.clone()),
            Self::Cedar(expression) => expression.clone(),
        })
    }
}

fn pairs(
    record: &Record,
    trajectory: &EntityUid,
) -> Result<Vec<(String, RestrictedExpression)>, String> {
    record
        .iter()
        .map(|(key, value)| Ok((key.to_string(), value.to_cedar(trajectory)?)))
        .collect()
}

/// The value at `key` of a record.
pub(crate) fn field<'r>(record: &'r Record, key: &str) -> Option<&'r Fact> {
    record.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// An entity of the request besides the trajectory: the principal or the
/// resource.
#[derive(Debug, Clone)]
pub(crate) struct EntityFacts {
    pub uid: EntityUid,
    pub attrs: Record,
    /// Whether the entity is in the trajectory (messages and tools are).
    pub in_trajectory: bool,
}

impl EntityFacts {
    fn to_cedar(&self, trajectory: &EntityUid) -> Result<Entity, String> {
        let attrs: HashMap<String, RestrictedExpression> =
            pairs(&self.attrs, trajectory)?.into_iter().collect();
        let parents = if self.in_trajectory {
            HashSet::from([trajectory.clone()])
        } else {
            HashSet::new()
        };
        Entity::new(self.uid.clone(), attrs, parents).map_err(|e| e.to_string())
    }
}

/// Everything a request says, before Cedar sees it.
#[derive(Debug, Clone)]
pub(crate) struct RequestFacts {
    pub principal: EntityFacts,
    pub trajectory: EntityUid,
    pub trajectory_attrs: Record,
    /// `None` when the trajectory itself is the resource.
    pub resource: Option<EntityFacts>,
    pub context: Record,
}

impl RequestFacts {
    /// Whether every fact is one the prefilter reads exactly, so a verdict
    /// may be reached without Cedar.
    pub(crate) fn is_plain(&self) -> bool {
        let plain = |record: &Record| record.iter().all(|(_, v)| v.is_plain());
        plain(&self.context)
            && plain(&self.trajectory_attrs)
            && plain(&self.principal.attrs)
            && self.resource.as_ref().is_none_or(|r| plain(&r.attrs))
    }

    pub(crate) fn resource_uid(&self) -> &EntityUid {
        self.resource.as_ref().map_or(&self.trajectory, |r| &r.uid)
    }

    /// Cedar's context, and its entities with `lineage` (the action
    /// entities the policies need, possibly none).
    pub(crate) fn to_cedar(&self, lineage: &[Entity]) -> Result<(Context, Entities), String> {
        let context = Context::from_pairs(pairs(&self.context, &self.trajectory)?)
            .map_err(|e| e.to_string())?;
        let trajectory = Entity::new(
            self.trajectory.clone(),
            pairs(&self.trajectory_attrs, &self.trajectory)?
                .into_iter()
                .collect(),
            HashSet::new(),
        )
        .map_err(|e| e.to_string())?;
        let mut entities = Vec::with_capacity(lineage.len() + 3);
        entities.extend_from_slice(lineage);
        entities.push(self.principal.to_cedar(&self.trajectory)?);
        entities.push(trajectory);
        if let Some(resource) = &self.resource {
            entities.push(resource.to_cedar(&self.trajectory)?);
        }
        let entities = Entities::from_entities(entities, None).map_err(|e| e.to_string())?;
        Ok((context, entities))
    }
}
