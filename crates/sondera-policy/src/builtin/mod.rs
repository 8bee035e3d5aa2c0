//! The built-in packs as Cedar syntax trees, made by code generated from
//! their texts.
//!
//! Every fresh process loads the packs before its first verdict. Cedar
//! reads a policy from text with its parser and from JSON through several
//! passes of `serde_json::Value`, both costing some 150 thousand
//! instructions a policy; a policy built as Cedar's public syntax tree
//! (`cedar_policy::pst`) costs about 12 thousand. So `packs.rs` spells each
//! pack policy out as calls to [`Syntax`], generated from the texts by a
//! test that fails when it is stale (`SONDERA_UPDATE_BUILTIN=1 cargo test
//! -p sondera-policy` rewrites it), and that holds every policy so built
//! equal to the text's.
//!
//! The trees carry no annotations: Cedar checks each annotation's key with
//! its parser, which would cost more than everything else. The annotations
//! are kept beside each tree, as written, for the policy's metadata.

use std::sync::Arc;

use cedar_policy::pst::{
    self, ActionConstraint, BinaryOp, Clause, Effect, EntityOrSlot, EntityType, EntityUID, Expr,
    Literal, PatternElem, PolicyID, PrincipalConstraint, ResourceConstraint, SmolStr, Template,
    UnaryOp, Var,
};
use cedar_policy::{EntityId, EntityTypeName, EntityUid};

use crate::prefilter::{Condition, FactPath, Outcomes, Test};

#[rustfmt::skip]
mod packs;

#[cfg(test)]
mod generate;

/// One policy of a built-in pack: its tree, without annotations, its
/// annotations as written, in order, and what slicing reads of it.
pub(crate) struct BuiltinPolicy {
    pub template: Template,
    pub annotations: &'static [(&'static str, &'static str)],
    pub reading: Reading,
}

/// What slicing reads of a policy's JSON form ([`Condition::of_policy`],
/// and whether its conditions mention `action`), read when the code was
/// generated: making and dropping the JSON forms of the packs cost a fresh
/// process 5 million instructions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    pub condition: Condition,
    pub mentions_action: bool,
}

/// The policies of built-in pack `name`, in file order; `None` for a name
/// that is not a built-in pack.
pub(crate) fn pack(name: &str) -> Option<Vec<BuiltinPolicy>> {
    packs::pack(name, &Syntax::default())
}

/// What the generated code builds trees with; entity types are made once
/// each.
#[derive(Default)]
pub(crate) struct Syntax {
    types: std::cell::RefCell<Vec<(&'static str, EntityType)>>,
}

type E = Arc<Expr>;

// The generator may write any of these; the packs of the day use some.
#[allow(dead_code)]
impl Syntax {
    fn entity_type(&self, name: &'static str) -> EntityType {
        let mut types = self.types.borrow_mut();
        if let Some((_, ty)) = types.iter().find(|(n, _)| *n == name) {
            return ty.clone();
        }
        let parsed: EntityTypeName = name
            .parse()
            .expect("the generated code names valid entity types");
        let ty = EntityUID::from(EntityUid::from_type_name_and_id(parsed, EntityId::new(""))).ty;
        types.push((name, ty.clone()));
        ty
    }

    /// `ty::"id"` with `ty` made once.
    fn entity(&self, ty: &'static str, id: &str) -> EntityUID {
        EntityUID {
            ty: self.entity_type(ty),
            eid: SmolStr::new(id),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn policy(
        &self,
        id: usize,
        effect: Effect,
        principal: PrincipalConstraint,
        action: ActionConstraint,
        resource: ResourceConstraint,
        clauses: Vec<Clause>,
        annotations: &'static [(&'static str, &'static str)],
        reading: Reading,
    ) -> BuiltinPolicy {
        let template = Template::new(
            PolicyID(SmolStr::new(format!("policy{id}"))),
            effect,
            principal,
            action,
            resource,
        )
        .try_with_clauses(clauses)
        .expect("the generated policies have no slots");
        BuiltinPolicy {
            template,
            annotations,
            reading,
        }
    }

    fn reading(&self, condition: Condition, mentions_action: bool) -> Reading {
        Reading {
            condition,
            mentions_action,
        }
    }

    fn known(&self, bits: u8) -> Condition {
        Condition::Known(Outcomes::from_bits(bits))
    }

    fn and(&self, left: Condition, right: Condition) -> Condition {
        Condition::And(Box::new(left), Box::new(right))
    }

    fn or(&self, left: Condition, right: Condition) -> Condition {
        Condition::Or(Box::new(left), Box::new(right))
    }

    fn not(&self, condition: Condition) -> Condition {
        Condition::Not(Box::new(condition))
    }

    fn fact(&self, path: &[&str], test: Test) -> Condition {
        Condition::Fact(
            FactPath::new(path.iter().map(|p| p.to_string()).collect()),
            test,
        )
    }

    fn action_eq(&self, ty: &'static str, id: &str) -> ActionConstraint {
        ActionConstraint::Eq(self.entity(ty, id))
    }

    fn action_in(&self, ty: &'static str, ids: &[&str]) -> ActionConstraint {
        ActionConstraint::In(ids.iter().map(|id| self.entity(ty, id)).collect())
    }

    fn eq(&self, ty: &'static str, id: &str) -> EntityOrSlot {
        EntityOrSlot::Entity(self.entity(ty, id))
    }

    fn is(&self, ty: &'static str) -> EntityType {
        self.entity_type(ty)
    }

    fn var(&self, var: Var) -> E {
        Arc::new(Expr::Var(var))
    }

    fn bool(&self, value: bool) -> E {
        Arc::new(Expr::Literal(Literal::Bool(value)))
    }

    fn long(&self, value: i64) -> E {
        Arc::new(Expr::Literal(Literal::Long(value)))
    }

    fn string(&self, value: &str) -> E {
        Arc::new(Expr::Literal(Literal::String(SmolStr::new(value))))
    }

    fn literal_entity(&self, ty: &'static str, id: &str) -> E {
        Arc::new(Expr::Literal(Literal::EntityUID(self.entity(ty, id))))
    }

    fn unary(&self, op: UnaryOp, expr: E) -> E {
        Arc::new(Expr::UnaryOp { op, expr })
    }

    fn binary(&self, op: BinaryOp, left: E, right: E) -> E {
        Arc::new(Expr::BinaryOp { op, left, right })
    }

    fn get(&self, expr: E, attr: &str) -> E {
        Arc::new(Expr::GetAttr {
            expr,
            attr: SmolStr::new(attr),
        })
    }

    fn has(&self, expr: E, first: &str, rest: &[&str]) -> E {
        Arc::new(Expr::HasAttr {
            expr,
            attrs: pst::NonEmpty {
                head: SmolStr::new(first),
                tail: rest.iter().map(SmolStr::new).collect(),
            },
        })
    }

    /// `expr like pattern`: each `None` of `pattern` is the wildcard.
    fn like(&self, expr: E, pattern: &[Option<char>]) -> E {
        let pattern = pattern
            .iter()
            .map(|c| c.map_or(PatternElem::Wildcard, PatternElem::Char))
            .collect();
        Arc::new(Expr::Like { expr, pattern })
    }

    fn is_type(&self, expr: E, ty: &'static str, in_expr: Option<E>) -> E {
        let entity_type = self.entity_type(ty);
        Arc::new(Expr::Is {
            expr,
            entity_type,
            in_expr,
        })
    }

    fn if_then_else(&self, cond: E, then_expr: E, else_expr: E) -> E {
        Arc::new(Expr::IfThenElse {
            cond,
            then_expr,
            else_expr,
        })
    }

    fn set(&self, items: Vec<E>) -> E {
        Arc::new(Expr::Set(items))
    }

    fn record(&self, fields: Vec<(&str, E)>) -> E {
        Arc::new(Expr::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        ))
    }
}
