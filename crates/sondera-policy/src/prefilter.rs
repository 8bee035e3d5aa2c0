//! Which policies of a slice can match a request, known before Cedar runs.
//!
//! Most policies open with a test of one fact (`context.shell.risks.contains("fork_bomb")`,
//! `context.place == "system"`), and on a typical step that test is false.
//! Cedar would still evaluate each of them in full. At load time each
//! policy's conditions are read into a [`Condition`]: the tests it can read
//! exactly, joined by `&&`, `||` and `!`, and everything else kept as "could
//! be anything". At request time the condition is evaluated over the
//! request's facts, the very values Cedar's context and entities are made
//! from, into the set of outcomes it could have (true, false, an evaluation
//! error). Only a policy whose every possible outcome is a clean `false` is
//! left out, so the policies Cedar evaluates are a superset of those that
//! match or error: the verdict, its reasons and its errors are the same as
//! with the whole slice. When every policy's outcome is a single clean
//! `true` or `false`, the answer is known without Cedar: the forbids that
//! matched deny, else the permits that matched allow, else nothing permits.
//!
//! Cedar evaluates `&&` and `||` left to right and stops early, so a `false`
//! on the left hides any error on the right; a test whose value is not of
//! the type it expects, or a fact that cannot be found, is "could be
//! anything", never `false`.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cedar_policy::{Policy, PolicySet};
use serde_json::Value;

use crate::facts::{Fact, RequestFacts, field};

/// How many distinct subsets of one slice are kept built. Past this, a
/// request with a new subset is judged against the whole slice: the same
/// verdict, only slower.
const MAX_SUBSETS: usize = 512;

/// The outcomes an expression could have, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcomes(u8);

impl Outcomes {
    /// The outcomes whose bits are set in `bits` (true 1, false 2, error 4).
    pub(crate) const fn from_bits(bits: u8) -> Self {
        Self(bits & 7)
    }

    #[cfg(test)]
    pub(crate) const fn bits(self) -> u8 {
        self.0
    }

    const TRUE: Self = Self(1);
    const FALSE: Self = Self(2);
    const ERROR: Self = Self(4);
    /// True or false, never an error: a scope constraint.
    const BOOL: Self = Self(1 | 2);
    const ANY: Self = Self(1 | 2 | 4);

    fn has(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    fn of(b: bool) -> Self {
        if b { Self::TRUE } else { Self::FALSE }
    }

    fn not(self) -> Self {
        let mut out = Self(self.0 & Self::ERROR.0);
        if self.has(Self::TRUE) {
            out = out.union(Self::FALSE);
        }
        if self.has(Self::FALSE) {
            out = out.union(Self::TRUE);
        }
        out
    }
}

/// A literal a test compares with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    Bool(bool),
    Long(i64),
    String(String),
}

impl Literal {
    fn from_json(value: &Value) -> Option<Self> {
        Some(match value.get("Value")? {
            Value::Bool(b) => Self::Bool(*b),
            Value::Number(n) => Self::Long(n.as_i64()?),
            Value::String(s) => Self::String(s.clone()),
            _ => return None,
        })
    }

    fn long(&self) -> Option<i64> {
        match self {
            Self::Long(n) => Some(*n),
            _ => None,
        }
    }

    /// Cedar's `==`: values of different types are unequal, never an error.
    /// `None` for a value only Cedar can read.
    fn equals(&self, value: &Fact) -> Option<bool> {
        Some(match (self, value) {
            (Self::Bool(a), Fact::Bool(b)) => a == b,
            (Self::Long(a), Fact::Long(b)) => a == b,
            (Self::String(a), Fact::String(b)) => a == b,
            (_, Fact::Cedar(_)) => return None,
            (_, Fact::Set(_) | Fact::Record(_) | Fact::Trajectory) => false,
            (_, Fact::Bool(_) | Fact::Long(_) | Fact::String(_)) => false,
        })
    }

    /// Whether any of `values` equals one of `literals`, as Cedar's
    /// `contains` and `containsAny` ask.
    fn any_in(literals: &[Self], values: &[Fact]) -> Option<bool> {
        let mut found = false;
        for value in values {
            for literal in literals {
                found |= literal.equals(value)?;
            }
        }
        Some(found)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

impl Comparison {
    fn from_op(op: &str) -> Option<Self> {
        Some(match op {
            "<" => Self::Less,
            "<=" => Self::LessOrEqual,
            ">" => Self::Greater,
            ">=" => Self::GreaterOrEqual,
            _ => return None,
        })
    }

    fn flipped(self) -> Self {
        match self {
            Self::Less => Self::Greater,
            Self::LessOrEqual => Self::GreaterOrEqual,
            Self::Greater => Self::Less,
            Self::GreaterOrEqual => Self::LessOrEqual,
        }
    }

    fn holds(self, left: i64, right: i64) -> bool {
        match self {
            Self::Less => left < right,
            Self::LessOrEqual => left <= right,
            Self::Greater => left > right,
            Self::GreaterOrEqual => left >= right,
        }
    }
}

/// A test of one fact, `context.a.b` or an attribute of an entity reached
/// through it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Test {
    /// The fact itself, in a boolean position.
    IsTrue,
    Contains(Literal),
    ContainsAny(Vec<Literal>),
    IsEmpty,
    Equals(Literal),
    /// `[..].contains(fact)`.
    OneOf(Vec<Literal>),
    Compare(Comparison, i64),
    Has(String),
}

impl Test {
    fn outcomes(&self, value: &Fact) -> Outcomes {
        let known = match (self, value) {
            (Self::IsTrue, Fact::Bool(b)) => Some(*b),
            (Self::Equals(lit), value) => lit.equals(value),
            (Self::OneOf(lits), value) => Literal::any_in(lits, std::slice::from_ref(value)),
            (Self::Compare(op, n), Fact::Long(v)) => Some(op.holds(*v, *n)),
            (Self::Has(attr), Fact::Record(record)) => Some(field(record, attr).is_some()),
            (Self::Contains(lit), Fact::Set(set)) => {
                Literal::any_in(std::slice::from_ref(lit), set)
            }
            (Self::ContainsAny(lits), Fact::Set(set)) => Literal::any_in(lits, set),
            (Self::IsEmpty, Fact::Set(set)) => Some(set.is_empty()),
            _ => None,
        };
        known.map_or(Outcomes::ANY, Outcomes::of)
    }
}

/// What a policy's scope and conditions need, as far as it can be read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Condition {
    Known(Outcomes),
    And(Box<Condition>, Box<Condition>),
    Or(Box<Condition>, Box<Condition>),
    Not(Box<Condition>),
    /// A test of the fact at this path under `context`.
    Fact(FactPath, Test),
}

/// `context.a.b` as `["a", "b"]`, with the slot a prefilter keeps its
/// value in while it screens one request: the policies of a slice test a
/// few facts many times over, and each is looked up once.
#[derive(Debug, Clone)]
pub(crate) struct FactPath {
    names: Vec<String>,
    /// Given when its prefilter screens its first request; a path without
    /// one is looked up every time.
    slot: OnceLock<usize>,
}

impl FactPath {
    pub(crate) fn new(names: Vec<String>) -> Self {
        Self {
            names,
            slot: OnceLock::new(),
        }
    }

    #[cfg(test)]
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }
}

/// Two paths are the same path wherever their values are kept.
impl PartialEq for FactPath {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names
    }
}

impl Condition {
    /// Nothing is known: the policy is always evaluated.
    pub(crate) fn unknown() -> Self {
        Self::Known(Outcomes::ANY)
    }

    /// Reads a policy in Cedar's JSON form as a member of an action's
    /// slice: its scope (which never errors; the slice has proven its action
    /// part), then its `when` and `unless` clauses in order, as Cedar joins
    /// them.
    pub(crate) fn of_policy(json: &Value) -> Self {
        let scope = ["principal", "resource"]
            .iter()
            .map(|part| match json[part]["op"].as_str() {
                Some("All") => Self::Known(Outcomes::TRUE),
                _ => Self::Known(Outcomes::BOOL),
            });
        let clauses = json["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|clause| {
                let body = Self::of_expr(&clause["body"]);
                match clause["kind"].as_str() {
                    Some("when") => body,
                    Some("unless") => Self::Not(Box::new(body)),
                    _ => Self::Known(Outcomes::ANY),
                }
            });
        scope
            .chain(clauses)
            .reduce(|left, right| Self::And(Box::new(left), Box::new(right)))
            .unwrap_or(Self::Known(Outcomes::TRUE))
    }

    fn of_expr(expr: &Value) -> Self {
        let Some((op, args)) = expr.as_object().and_then(|o| o.iter().next()) else {
            return Self::Known(Outcomes::ANY);
        };
        let pair = || Some((&args["left"], &args["right"]));
        let binary = |make: fn(Box<Self>, Box<Self>) -> Self| {
            pair().map(|(l, r)| make(Box::new(Self::of_expr(l)), Box::new(Self::of_expr(r))))
        };
        let read = match op.as_str() {
            "Value" => match args {
                Value::Bool(b) => Some(Self::Known(Outcomes::of(*b))),
                _ => None,
            },
            "&&" => binary(Self::And),
            "||" => binary(Self::Or),
            "!" => Some(Self::Not(Box::new(Self::of_expr(&args["arg"])))),
            "." => path(expr).map(|p| Self::Fact(FactPath::new(p), Test::IsTrue)),
            "isEmpty" => path(&args["arg"]).map(|p| Self::Fact(FactPath::new(p), Test::IsEmpty)),
            "has" => path(&args["left"]).and_then(|p| {
                let attr = args["attr"].as_str()?.to_string();
                Some(Self::Fact(FactPath::new(p), Test::Has(attr)))
            }),
            "contains" => contains(&args["left"], &args["right"]),
            "containsAny" => path(&args["left"])
                .zip(literals(&args["right"]))
                .map(|(p, lits)| Self::Fact(FactPath::new(p), Test::ContainsAny(lits))),
            "==" | "!=" => equality(&args["left"], &args["right"]).map(|c| {
                if op == "!=" {
                    Self::Not(Box::new(c))
                } else {
                    c
                }
            }),
            other => Comparison::from_op(other).and_then(|cmp| compare(cmp, args)),
        };
        read.unwrap_or(Self::Known(Outcomes::ANY))
    }

    fn outcomes(&self, facts: &Facts<'_>) -> Outcomes {
        match self {
            Self::Known(o) => *o,
            Self::Not(c) => c.outcomes(facts).not(),
            Self::And(left, right) => Self::short_circuit(left, right, Outcomes::TRUE, facts),
            Self::Or(left, right) => Self::short_circuit(left, right, Outcomes::FALSE, facts),
            Self::Fact(path, test) => match facts.value(path) {
                Some(value) => test.outcomes(value),
                None => Outcomes::ANY,
            },
        }
    }

    /// Gives each path a slot of `slots`, the same slot to the same path.
    fn assign_slots<'c>(&'c self, slots: &mut HashMap<&'c [String], usize>) {
        match self {
            Self::Known(_) => {}
            Self::Not(c) => c.assign_slots(slots),
            Self::And(left, right) | Self::Or(left, right) => {
                left.assign_slots(slots);
                right.assign_slots(slots);
            }
            Self::Fact(path, _) => {
                let next = slots.len();
                let slot = *slots.entry(&path.names).or_insert(next);
                // Already given (a clone of a screened prefilter): the same.
                let _ = path.slot.set(slot);
            }
        }
    }

    /// `&&` (which goes on to its right side when the left is true) or `||`
    /// (when the left is false): the left's other outcomes stand as they are.
    fn short_circuit(left: &Self, right: &Self, goes_on: Outcomes, facts: &Facts<'_>) -> Outcomes {
        let l = left.outcomes(facts);
        let stands = Outcomes(l.0 & !goes_on.0);
        if l.has(goes_on) {
            stands.union(right.outcomes(facts))
        } else {
            stands
        }
    }
}

/// `context.a.b` as `["a", "b"]`.
fn path(expr: &Value) -> Option<Vec<String>> {
    if let Some(var) = expr.get("Var") {
        return (var.as_str()? == "context").then(Vec::new);
    }
    let access = expr.get(".")?;
    let mut p = path(&access["left"])?;
    p.push(access["attr"].as_str()?.to_string());
    Some(p)
}

fn literals(expr: &Value) -> Option<Vec<Literal>> {
    expr.get("Set")?
        .as_array()?
        .iter()
        .map(Literal::from_json)
        .collect()
}

fn contains(left: &Value, right: &Value) -> Option<Condition> {
    if let (Some(p), Some(lit)) = (path(left), Literal::from_json(right)) {
        return Some(Condition::Fact(FactPath::new(p), Test::Contains(lit)));
    }
    let (lits, p) = (literals(left)?, path(right)?);
    Some(Condition::Fact(FactPath::new(p), Test::OneOf(lits)))
}

fn equality(left: &Value, right: &Value) -> Option<Condition> {
    let (p, lit) = match (path(left), path(right)) {
        (Some(p), _) => (p, Literal::from_json(right)?),
        (None, Some(p)) => (p, Literal::from_json(left)?),
        (None, None) => return None,
    };
    Some(Condition::Fact(FactPath::new(p), Test::Equals(lit)))
}

fn compare(cmp: Comparison, args: &Value) -> Option<Condition> {
    let long = |v: &Value| Literal::from_json(v)?.long();
    let (left, right) = (&args["left"], &args["right"]);
    if let (Some(p), Some(n)) = (path(left), long(right)) {
        return Some(Condition::Fact(FactPath::new(p), Test::Compare(cmp, n)));
    }
    let (n, p) = (long(left)?, path(right)?);
    Some(Condition::Fact(
        FactPath::new(p),
        Test::Compare(cmp.flipped(), n),
    ))
}

/// Resolves `context.a.b` paths over a request's facts; an attribute of the
/// trajectory is read through the entity the context names.
struct Facts<'r> {
    facts: &'r RequestFacts,
    /// What each slot's path resolved to, once looked up.
    resolved: Vec<Cell<Option<Option<&'r Fact>>>>,
}

impl<'r> Facts<'r> {
    fn new(facts: &'r RequestFacts, slots: usize) -> Self {
        Self {
            facts,
            resolved: vec![Cell::new(None); slots],
        }
    }

    fn value(&self, path: &FactPath) -> Option<&'r Fact> {
        let Some(cell) = path.slot.get().and_then(|slot| self.resolved.get(*slot)) else {
            return self.resolve(&path.names);
        };
        if let Some(known) = cell.get() {
            return known;
        }
        let value = self.resolve(&path.names);
        cell.set(Some(value));
        value
    }

    fn resolve(&self, path: &[String]) -> Option<&'r Fact> {
        let (first, rest) = path.split_first()?;
        let mut value = field(&self.facts.context, first)?;
        for attr in rest {
            value = match value {
                Fact::Record(record) => field(record, attr)?,
                Fact::Trajectory => field(&self.facts.trajectory_attrs, attr)?,
                _ => return None,
            };
        }
        Some(value)
    }
}

/// The enforced policies of a slice with their conditions, and the policy
/// sets already built for subsets of them.
#[derive(Debug, Default)]
pub(crate) struct Prefilter {
    members: Vec<(Policy, Condition)>,
    /// How many distinct paths the members' conditions test, once each
    /// has its slot: given when the slice screens its first request, so a
    /// process that judges one step pays only for its slice.
    slots: OnceLock<usize>,
    subsets: Mutex<HashMap<Vec<u64>, Arc<PolicySet>>>,
}

impl Clone for Prefilter {
    fn clone(&self) -> Self {
        Self {
            members: self.members.clone(),
            slots: self.slots.clone(),
            subsets: Mutex::default(),
        }
    }
}

/// The policies a request is judged against: all of a slice, or a subset.
pub(crate) enum Candidates<'a> {
    All(&'a PolicySet),
    Subset(Arc<PolicySet>),
}

impl std::ops::Deref for Candidates<'_> {
    type Target = PolicySet;
    fn deref(&self) -> &PolicySet {
        match self {
            Self::All(set) => set,
            Self::Subset(set) => set,
        }
    }
}

/// What the prefilter makes of a request.
pub(crate) enum Screening<'a> {
    /// Every policy's outcome is known and none can error: these matched.
    Known(Vec<&'a Policy>),
    /// Cedar evaluates these.
    Evaluate(Candidates<'a>),
}

impl Prefilter {
    pub(crate) fn add(&mut self, policy: Policy, condition: Condition) {
        self.members.push((policy, condition));
    }

    fn slots(&self) -> usize {
        *self.slots.get_or_init(|| {
            let mut slots = HashMap::new();
            for (_, condition) in &self.members {
                condition.assign_slots(&mut slots);
            }
            slots.len()
        })
    }

    /// Which policies of `all` (the slice's enforced set, whose members were
    /// added here in order) the request could make match or fail; when the
    /// outcome of each is known exactly, which match.
    pub(crate) fn screen<'a>(&'a self, all: &'a PolicySet, facts: &RequestFacts) -> Screening<'a> {
        let facts = Facts::new(facts, self.slots());
        let mut mask = vec![0u64; self.members.len().div_ceil(64)];
        let mut every = true;
        let mut exact = true;
        let mut matched = Vec::new();
        for (i, (policy, condition)) in self.members.iter().enumerate() {
            let outcomes = condition.outcomes(&facts);
            if outcomes == Outcomes::FALSE {
                every = false;
                continue;
            }
            mask[i / 64] |= 1 << (i % 64);
            if outcomes == Outcomes::TRUE {
                matched.push(policy);
            } else {
                exact = false;
            }
        }
        // Checked last, and only when it decides: it walks every fact.
        if exact && facts.facts.is_plain() {
            return Screening::Known(matched);
        }
        if every {
            return Screening::Evaluate(Candidates::All(all));
        }
        Screening::Evaluate(
            self.subset(mask)
                .map_or(Candidates::All(all), Candidates::Subset),
        )
    }

    fn subset(&self, mask: Vec<u64>) -> Option<Arc<PolicySet>> {
        let mut subsets = self.subsets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = subsets.get(&mask) {
            return Some(set.clone());
        }
        if subsets.len() >= MAX_SUBSETS {
            return None;
        }
        let chosen = self
            .members
            .iter()
            .enumerate()
            .filter(|(i, _)| mask[i / 64] & (1 << (i % 64)) != 0)
            .map(|(_, (policy, _))| policy.clone());
        let set = Arc::new(PolicySet::from_policies(chosen).ok()?);
        subsets.insert(mask, set.clone());
        Some(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cedar_policy::RestrictedExpression;

    fn condition(src: &str) -> Condition {
        let policy: Policy = src.parse().unwrap();
        Condition::of_policy(&policy.to_json().unwrap())
    }

    fn fact(path: &[&str], test: Test) -> Condition {
        Condition::Fact(
            FactPath::new(path.iter().map(|s| s.to_string()).collect()),
            test,
        )
    }

    fn and(l: Condition, r: Condition) -> Condition {
        Condition::And(Box::new(l), Box::new(r))
    }

    /// An open principal and resource scope (the slice proves the action).
    fn scoped(body: Condition) -> Condition {
        let open = || Condition::Known(Outcomes::TRUE);
        and(and(open(), open()), body)
    }

    #[test]
    fn reads_the_forms_the_packs_use() {
        let risks = || vec!["shell".to_string(), "risks".to_string()];
        assert_eq!(
            condition(
                r#"forbid (principal, action, resource) when { context.shell.risks.contains("fork_bomb") };"#
            ),
            scoped(Condition::Fact(
                FactPath::new(risks()),
                Test::Contains(Literal::String("fork_bomb".into()))
            ))
        );
        assert_eq!(
            condition(
                r#"forbid (principal, action, resource) when { ["a", "b"].contains(context.place) };"#
            ),
            scoped(fact(
                &["place"],
                Test::OneOf(vec![
                    Literal::String("a".into()),
                    Literal::String("b".into())
                ])
            ))
        );
        assert_eq!(
            condition(r#"forbid (principal, action, resource) when { 10 < context.n };"#),
            scoped(fact(&["n"], Test::Compare(Comparison::Greater, 10)))
        );
        assert_eq!(
            condition(r#"forbid (principal, action, resource) unless { context.ok };"#),
            scoped(Condition::Not(Box::new(fact(&["ok"], Test::IsTrue))))
        );
    }

    #[test]
    fn what_it_cannot_read_could_be_anything() {
        for src in [
            r#"forbid (principal, action, resource) when { context.command like "*x*" };"#,
            r#"forbid (principal, action, resource) when { resource.path == "x" };"#,
            r#"forbid (principal, action, resource) when { if context.a then context.b else false };"#,
            r#"forbid (principal, action, resource) when { context.n + 1 > 2 };"#,
        ] {
            assert_eq!(
                condition(src),
                scoped(Condition::Known(Outcomes::ANY)),
                "{src}"
            );
        }
    }

    #[test]
    fn outcomes_follow_cedars_short_circuits() {
        let f = || Box::new(Condition::Known(Outcomes::FALSE));
        let e = || Box::new(Condition::Known(Outcomes::ERROR));
        let t = || Box::new(Condition::Known(Outcomes::TRUE));
        let cases = [
            (Condition::And(f(), e()), Outcomes::FALSE),
            (Condition::And(e(), f()), Outcomes::ERROR),
            (Condition::And(t(), e()), Outcomes::ERROR),
            (Condition::Or(t(), e()), Outcomes::TRUE),
            (Condition::Or(f(), e()), Outcomes::ERROR),
            (Condition::Or(f(), f()), Outcomes::FALSE),
            (Condition::Not(e()), Outcomes::ERROR),
            (fact(&["missing"], Test::IsTrue), Outcomes::ANY),
        ];
        let request = request(vec![(
            "opaque",
            Fact::Cedar(RestrictedExpression::new_long(1)),
        )]);
        let facts = Facts::new(&request, 0);
        for (condition, expected) in &cases {
            assert_eq!(condition.outcomes(&facts), *expected, "{condition:?}");
        }
    }

    fn request(context: crate::facts::Record) -> RequestFacts {
        let uid = |s: &str| s.parse::<cedar_policy::EntityUid>().unwrap();
        RequestFacts {
            principal: crate::facts::EntityFacts {
                uid: uid(r#"A::"a""#),
                attrs: Vec::new(),
                in_trajectory: false,
            },
            trajectory: uid(r#"A::"t""#),
            trajectory_attrs: vec![("steps", Fact::Long(3))],
            resource: None,
            context,
        }
    }

    #[test]
    fn tests_read_facts_as_cedar_compares_them() {
        let request = request(vec![
            ("risks", Fact::strings(["fork_bomb"])),
            ("place", Fact::string("home")),
            ("trajectory", Fact::Trajectory),
            (
                "opaque",
                Fact::Cedar(RestrictedExpression::new_string("x".into())),
            ),
        ]);
        let facts = Facts::new(&request, 0);
        let string = |s: &str| Literal::String(s.into());
        let cases = [
            (
                fact(&["risks"], Test::Contains(string("fork_bomb"))),
                Outcomes::TRUE,
            ),
            (
                fact(&["risks"], Test::Contains(string("other"))),
                Outcomes::FALSE,
            ),
            (fact(&["risks"], Test::IsEmpty), Outcomes::FALSE),
            (
                fact(&["place"], Test::Equals(string("home"))),
                Outcomes::TRUE,
            ),
            // Values of different types are unequal, never an error.
            (
                fact(&["place"], Test::Equals(Literal::Long(1))),
                Outcomes::FALSE,
            ),
            (fact(&["risks"], Test::Equals(string("x"))), Outcomes::FALSE),
            // A string is not a set: Cedar errors, so anything could happen.
            (fact(&["place"], Test::IsEmpty), Outcomes::ANY),
            (fact(&["place"], Test::IsTrue), Outcomes::ANY),
            (
                fact(
                    &["trajectory", "steps"],
                    Test::Compare(Comparison::Greater, 2),
                ),
                Outcomes::TRUE,
            ),
            (
                fact(&["trajectory", "missing"], Test::IsTrue),
                Outcomes::ANY,
            ),
            (fact(&["opaque"], Test::Equals(string("x"))), Outcomes::ANY),
        ];
        for (condition, expected) in &cases {
            assert_eq!(condition.outcomes(&facts), *expected, "{condition:?}");
        }
        // With slots, each path is looked up once and read the same after.
        let mut slots = HashMap::new();
        for (condition, _) in &cases {
            condition.assign_slots(&mut slots);
        }
        assert_eq!(slots.len(), 5, "one slot per distinct path: {slots:?}");
        let facts = Facts::new(&request, slots.len());
        for _ in 0..2 {
            for (condition, expected) in &cases {
                assert_eq!(condition.outcomes(&facts), *expected, "{condition:?}");
            }
        }
    }

    /// A policy set of `sources`, each read as a slice member.
    fn prefilter(sources: &[&str]) -> (Prefilter, PolicySet) {
        let mut prefilter = Prefilter::default();
        let mut set = PolicySet::new();
        for (i, src) in sources.iter().enumerate() {
            let policy =
                Policy::parse(Some(cedar_policy::PolicyId::new(format!("p{i}"))), *src).unwrap();
            prefilter.add(
                policy.clone(),
                Condition::of_policy(&policy.to_json().unwrap()),
            );
            set.add(policy).unwrap();
        }
        (prefilter, set)
    }

    fn matched(judgement: &Screening<'_>) -> Option<Vec<String>> {
        match judgement {
            Screening::Known(policies) => {
                Some(policies.iter().map(|p| p.id().to_string()).collect())
            }
            Screening::Evaluate(_) => None,
        }
    }

    #[test]
    fn a_verdict_is_known_only_when_every_outcome_is() {
        let (filter, set) = prefilter(&[
            "permit (principal, action, resource);",
            r#"forbid (principal, action, resource) when { context.risks.contains("fork_bomb") };"#,
            r#"forbid (principal, action, resource) when { context.risks.contains("other") };"#,
        ]);
        let request = request(vec![("risks", Fact::strings(["fork_bomb"]))]);
        assert_eq!(
            matched(&filter.screen(&set, &request)),
            Some(vec!["p0".to_string(), "p1".to_string()])
        );

        let (filter, set) = prefilter(&[
            "permit (principal, action, resource);",
            r#"forbid (principal, action, resource) when { context.command like "*rm*" };"#,
        ]);
        assert_eq!(
            matched(&filter.screen(&set, &request)),
            None,
            "`like` is Cedar's to read"
        );

        let (filter, set) = prefilter(&[r#"permit (principal == A::"a", action, resource);"#]);
        assert_eq!(
            matched(&filter.screen(&set, &request)),
            None,
            "a scope is Cedar's to read"
        );

        let (filter, set) = prefilter(&["permit (principal, action, resource);"]);
        let typed = request_with_opaque();
        assert_eq!(
            matched(&filter.screen(&set, &typed)),
            None,
            "a value only Cedar builds may fail to build"
        );
    }

    fn request_with_opaque() -> RequestFacts {
        request(vec![(
            "args",
            Fact::Cedar(RestrictedExpression::new_decimal("1.0")),
        )])
    }
}
