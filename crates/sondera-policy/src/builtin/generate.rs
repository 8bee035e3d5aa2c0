//! Writes `packs.rs` from the packs' texts, and holds it to them.

use std::fmt::Write;
use std::str::FromStr;

use cedar_policy::pst::{
    ActionConstraint, Clause, EntityOrSlot, EntityType, EntityUID, Expr, Literal, PatternElem,
    PrincipalConstraint, ResourceConstraint,
};
use cedar_policy::{Policy, PolicySet};

use crate::load::BUILTIN_PACKS;
use crate::prefilter::{Condition, Literal as FactLiteral, Test};

const HEADER: &str = "\
// @generated from policies/packs/*.cedar by the tests of `builtin::generate`:
// SONDERA_UPDATE_BUILTIN=1 cargo test -p sondera-policy rewrites it.

use cedar_policy::pst::{ActionConstraint, BinaryOp, Clause, Effect, PrincipalConstraint, ResourceConstraint, UnaryOp, Var};

use super::{BuiltinPolicy, Syntax};
use crate::prefilter::{Comparison, Literal, Test};

pub(super) fn pack(name: &str, s: &Syntax) -> Option<Vec<BuiltinPolicy>> {
    Some(match name {
";

/// The Rust source of `packs.rs` for the packs' current texts.
pub(super) fn source() -> String {
    let mut out = HEADER.to_string();
    for (name, text) in BUILTIN_PACKS {
        writeln!(out, "        {name:?} => vec![").unwrap();
        for (index, policy) in crate::load::in_file_order(&PolicySet::from_str(text).unwrap())
            .into_iter()
            .enumerate()
        {
            writeln!(out, "            {},", policy_call(index, policy)).unwrap();
        }
        out.push_str("        ],\n");
    }
    out.push_str("        _ => return None,\n    })\n}\n");
    out
}

fn policy_call(index: usize, policy: &Policy) -> String {
    let pst = policy.to_pst().unwrap();
    let body = pst.body();
    let clauses: Vec<String> = body
        .clauses()
        .iter()
        .map(|clause| match clause {
            Clause::When(e) => format!("Clause::When({})", expr(e)),
            Clause::Unless(e) => format!("Clause::Unless({})", expr(e)),
        })
        .collect();
    let annotations: Vec<String> = policy
        .annotations()
        .map(|(k, v)| format!("({k:?}, {v:?})"))
        .collect();
    let json = policy.to_json().unwrap();
    format!(
        "s.policy({index}, Effect::{:?}, {}, {}, {}, vec![{}], &[{}], s.reading({}, {}))",
        body.effect,
        principal(&body.principal),
        action(&body.action),
        resource(&body.resource),
        clauses.join(", "),
        annotations.join(", "),
        condition(&Condition::of_policy(&json)),
        crate::engine::mentions_action(&json["conditions"]),
    )
}

fn condition(c: &Condition) -> String {
    match c {
        Condition::Known(outcomes) => format!("s.known({})", outcomes.bits()),
        Condition::And(l, r) => format!("s.and({}, {})", condition(l), condition(r)),
        Condition::Or(l, r) => format!("s.or({}, {})", condition(l), condition(r)),
        Condition::Not(c) => format!("s.not({})", condition(c)),
        Condition::Fact(path, t) => format!("s.fact(&{:?}, {})", path.names(), test(t)),
    }
}

fn test(t: &Test) -> String {
    let list = |literals: &[FactLiteral]| {
        let items: Vec<String> = literals.iter().map(literal).collect();
        format!("vec![{}]", items.join(", "))
    };
    match t {
        Test::IsTrue => "Test::IsTrue".into(),
        Test::IsEmpty => "Test::IsEmpty".into(),
        Test::Contains(l) => format!("Test::Contains({})", literal(l)),
        Test::ContainsAny(ls) => format!("Test::ContainsAny({})", list(ls)),
        Test::Equals(l) => format!("Test::Equals({})", literal(l)),
        Test::OneOf(ls) => format!("Test::OneOf({})", list(ls)),
        Test::Compare(op, n) => format!("Test::Compare(Comparison::{op:?}, {n})"),
        Test::Has(attr) => format!("Test::Has({attr:?}.into())"),
    }
}

fn literal(l: &FactLiteral) -> String {
    match l {
        FactLiteral::Bool(b) => format!("Literal::Bool({b})"),
        FactLiteral::Long(n) => format!("Literal::Long({n})"),
        FactLiteral::String(text) => format!("Literal::String({text:?}.into())"),
    }
}

fn type_name(ty: &EntityType) -> String {
    format!("{:?}", ty.to_string())
}

fn entity(uid: &EntityUID) -> String {
    format!("{}, {:?}", type_name(&uid.ty), uid.eid.as_str())
}

fn slot_free(e: &EntityOrSlot) -> String {
    match e {
        EntityOrSlot::Entity(uid) => format!("s.eq({})", entity(uid)),
        other => panic!("the packs have no templates: {other:?}"),
    }
}

fn principal(c: &PrincipalConstraint) -> String {
    let name = "PrincipalConstraint";
    match c {
        PrincipalConstraint::Any => format!("{name}::Any"),
        PrincipalConstraint::Eq(e) => format!("{name}::Eq({})", slot_free(e)),
        PrincipalConstraint::In(e) => format!("{name}::In({})", slot_free(e)),
        PrincipalConstraint::Is(t) => format!("{name}::Is(s.is({}))", type_name(t)),
        PrincipalConstraint::IsIn(t, e) => {
            format!("{name}::IsIn(s.is({}), {})", type_name(t), slot_free(e))
        }
    }
}

fn resource(c: &ResourceConstraint) -> String {
    let name = "ResourceConstraint";
    match c {
        ResourceConstraint::Any => format!("{name}::Any"),
        ResourceConstraint::Eq(e) => format!("{name}::Eq({})", slot_free(e)),
        ResourceConstraint::In(e) => format!("{name}::In({})", slot_free(e)),
        ResourceConstraint::Is(t) => format!("{name}::Is(s.is({}))", type_name(t)),
        ResourceConstraint::IsIn(t, e) => {
            format!("{name}::IsIn(s.is({}), {})", type_name(t), slot_free(e))
        }
    }
}

fn action(c: &ActionConstraint) -> String {
    match c {
        ActionConstraint::Any => "ActionConstraint::Any".into(),
        ActionConstraint::Eq(uid) => format!("s.action_eq({})", entity(uid)),
        ActionConstraint::In(uids) => {
            let ty = uids.first().map(|u| type_name(&u.ty)).unwrap_or_default();
            assert!(
                uids.iter().all(|u| type_name(&u.ty) == ty),
                "one type of action"
            );
            let ids: Vec<String> = uids
                .iter()
                .map(|u| format!("{:?}", u.eid.as_str()))
                .collect();
            format!("s.action_in({ty}, &[{}])", ids.join(", "))
        }
    }
}

fn expr(e: &Expr) -> String {
    match e {
        Expr::Literal(Literal::Bool(b)) => format!("s.bool({b})"),
        Expr::Literal(Literal::Long(n)) => format!("s.long({n})"),
        Expr::Literal(Literal::String(text)) => format!("s.string({:?})", text.as_str()),
        Expr::Literal(Literal::EntityUID(uid)) => format!("s.literal_entity({})", entity(uid)),
        Expr::Var(var) => format!("s.var(Var::{var:?})"),
        Expr::UnaryOp { op, expr: inner } => format!("s.unary(UnaryOp::{op:?}, {})", expr(inner)),
        Expr::BinaryOp { op, left, right } => {
            format!(
                "s.binary(BinaryOp::{op:?}, {}, {})",
                expr(left),
                expr(right)
            )
        }
        Expr::GetAttr { expr: inner, attr } => {
            format!("s.get({}, {:?})", expr(inner), attr.as_str())
        }
        Expr::HasAttr { expr: inner, attrs } => {
            let rest: Vec<String> = attrs
                .tail
                .iter()
                .map(|a| format!("{:?}", a.as_str()))
                .collect();
            format!(
                "s.has({}, {:?}, &[{}])",
                expr(inner),
                attrs.head.as_str(),
                rest.join(", ")
            )
        }
        Expr::Like {
            expr: inner,
            pattern,
        } => {
            let elems: Vec<String> = pattern
                .iter()
                .map(|p| match p {
                    PatternElem::Char(c) => format!("Some({c:?})"),
                    PatternElem::Wildcard => "None".into(),
                })
                .collect();
            format!("s.like({}, &[{}])", expr(inner), elems.join(", "))
        }
        Expr::Is {
            expr: inner,
            entity_type,
            in_expr,
        } => format!(
            "s.is_type({}, {}, {})",
            expr(inner),
            type_name(entity_type),
            in_expr
                .as_ref()
                .map_or("None".into(), |e| format!("Some({})", expr(e)))
        ),
        Expr::IfThenElse {
            cond,
            then_expr,
            else_expr,
        } => format!(
            "s.if_then_else({}, {}, {})",
            expr(cond),
            expr(then_expr),
            expr(else_expr)
        ),
        Expr::Set(items) => {
            let items: Vec<String> = items.iter().map(|i| expr(i)).collect();
            format!("s.set(vec![{}])", items.join(", "))
        }
        Expr::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("({k:?}, {})", expr(v)))
                .collect();
            format!("s.record(vec![{}])", fields.join(", "))
        }
        other => panic!("the generator does not write {other:?}; teach it"),
    }
}

#[test]
fn the_generated_packs_match_the_texts() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/builtin/packs.rs");
    let generated = source();
    if std::env::var_os("SONDERA_UPDATE_BUILTIN").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap();
    assert!(
        checked_in == generated,
        "src/builtin/packs.rs is stale: run SONDERA_UPDATE_BUILTIN=1 cargo test -p sondera-policy"
    );
}

/// Every policy the generated code builds is the policy its text gives,
/// but for the annotations, which are kept beside it as written.
#[test]
fn the_generated_policies_are_the_texts_policies() {
    for (name, text) in BUILTIN_PACKS {
        let set = PolicySet::from_str(text).unwrap();
        let from_text = crate::load::in_file_order(&set);
        let built = super::pack(name).unwrap();
        assert_eq!(built.len(), from_text.len(), "{name}");
        for (made, parsed) in built.into_iter().zip(from_text) {
            let policy = Policy::from_pst(cedar_policy::pst::Policy::Static(
                made.template.try_into().unwrap(),
            ))
            .unwrap();
            let mut expected = parsed.to_json().unwrap();
            expected.as_object_mut().unwrap().remove("annotations");
            let mut actual = policy.to_json().unwrap();
            actual.as_object_mut().unwrap().remove("annotations");
            assert_eq!(actual, expected, "{name}: {}", parsed.id());
            assert_eq!(policy.id(), parsed.id());
            let written: Vec<(String, String)> = parsed
                .annotations()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let kept: Vec<(String, String)> = made
                .annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(kept, written, "{name}: {}", parsed.id());
        }
    }
}
