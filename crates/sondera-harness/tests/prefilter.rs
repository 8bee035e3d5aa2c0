//! Leaving out the policies a request cannot make match (the engine's
//! prefilter) must never change a verdict: for every event of every case in
//! the corpora, judged in the state its trajectory had, the filtered slice and
//! the whole, unfiltered set agree on the decision, the deciding policies and
//! the shadow matches. A pack of hostile conditions (errors behind
//! short-circuits and before them, conditions it cannot read, entity attributes,
//! `unless`) runs alongside the built-in packs, once with a shadow policy
//! (Cedar then judges every step) and once without (most steps are then
//! judged by the prefilter alone, every policy's outcome known).

mod corpora;

use std::collections::BTreeMap;

use sondera_harness::corpus::{Case, Step, parse_cases};
use sondera_policy::{PolicyEngine, Workspace};

const HOSTILE: &str = r#"
@id("h-error-behind-risk") forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.shell.risks.contains("network_upload") && context.trajectory.step_count + 9223372036854775807 > 0 };
@id("h-error-on-the-left") forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.trajectory.step_count * 9223372036854775807 > 1 && context.shell.risks.contains("fork_bomb") };
@id("h-error-on-the-right") forbid (principal, action in Sondera::Action::"ToolUse", resource)
when { context.trajectory.step_count > 2 || context.trajectory.denial_count - 9223372036854775807 - 9 > 0 };
@id("h-unless") @escalate("user") forbid (principal, action == Sondera::Action::"ShellCommand", resource)
unless { context.shell.risks.isEmpty() || context.shell.risks.contains("secret_read") };
@id("h-entity") forbid (principal, action in Sondera::Action::"ToolUse", resource)
when { context.trajectory.denial_count > 2 && context.trajectory.secrets_seen };
@id("h-not-equal") forbid (principal, action in Sondera::Action::"FileMutation", resource)
when { !(context.place != "home") && context.persistence != "" };
@id("h-compare-left") forbid (principal, action, resource)
when { 3 < context.trajectory.step_count && context.signals.injection.containsAny(["role_hijack"]) };
@id("h-permit-narrow") permit (principal, action == Sondera::Action::"FileRead", resource)
when { ["home", "system"].contains(context.place) };
"#;

/// A shadow policy in every slice: with one, Cedar judges every step.
const SHADOW: &str = r#"
@id("h-has") @mode("monitor") forbid (principal, action, resource)
when { context has shell && context.shell.dynamic };
"#;

/// Every event a case sends, each with the case cut just after it (and,
/// for a tool step with a result, also before its result), so that
/// [`Case::before_last`] gives the event with the state it is judged in.
fn prefixes(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for n in 1..=case.steps.len() {
        let mut cut = case.clone();
        cut.steps.truncate(n);
        if let Some(Step::Tool { result, error, .. }) = cut.steps.last()
            && (result.is_some() || error.is_some())
        {
            let mut action_only = cut.clone();
            if let Some(Step::Tool { result, error, .. }) = action_only.steps.last_mut() {
                *result = None;
                *error = None;
            }
            out.push(action_only);
        }
        out.push(cut);
    }
    out
}

#[test]
fn filtering_never_changes_a_verdict_on_the_corpora() {
    let with_shadow = judge_corpora(&format!("{HOSTILE}{SHADOW}"));
    assert_eq!(with_shadow.known, 0, "a shadow policy needs Cedar");
    let hostile = judge_corpora(HOSTILE);
    let builtin = judge_corpora("");
    assert_eq!(hostile.judged, with_shadow.judged);
    // The hostile conditions that may overflow keep Cedar on many steps.
    assert!(
        hostile.known * 4 > hostile.judged,
        "only {} of {} steps judged without Cedar",
        hostile.known,
        hostile.judged
    );
    // Every built-in condition is one the prefilter reads exactly.
    assert!(
        builtin.known * 10 > builtin.judged * 9,
        "only {} of {} steps judged without Cedar under the built-in packs",
        builtin.known,
        builtin.judged
    );
}

struct Tally {
    judged: usize,
    /// Steps whose verdict the prefilter knew without Cedar.
    known: usize,
}

/// Judges every event of the corpora both ways under the built-in packs
/// plus `extra`, asserting they agree.
fn judge_corpora(extra: &str) -> Tally {
    let others = [
        ("dev.jsonl", include_str!("../../../tests/corpus/dev.jsonl")),
        ("own.jsonl", include_str!("../../../tests/corpus/own.jsonl")),
        (
            "controls.jsonl",
            include_str!("../../../tests/corpus/controls.jsonl"),
        ),
        (
            "runners.jsonl",
            include_str!("../../../tests/corpus/runners.jsonl"),
        ),
        (
            "injection.jsonl",
            include_str!("../../../tests/corpus/injection.jsonl"),
        ),
    ];
    let corpora = others.iter().chain(corpora::MECHANISMS);
    let mut engines: BTreeMap<(String, String), PolicyEngine> = BTreeMap::new();
    let (mut judged, mut blocked, mut known) = (0, 0, 0);
    for &(name, text) in corpora {
        for case in parse_cases(name, text).unwrap() {
            let engine = engines
                .entry((case.cwd.clone(), case.home.clone()))
                .or_insert_with(|| {
                    PolicyEngine::builder()
                        .builtin_packs()
                        .policy_source("hostile.cedar", extra)
                        .workspace(Workspace::new(&case.cwd, &case.home))
                        .build()
                        .unwrap_or_else(|e| panic!("{e}"))
                });
            for cut in prefixes(&case) {
                let Some((state, event)) = cut.before_last(engine) else {
                    continue;
                };
                let Some(request) = engine.request(&event, &state).unwrap() else {
                    continue;
                };
                let filtered = engine.decide(&request);
                let whole = engine
                    .decide_unsliced(&engine.unsliced_request(&event, &state).unwrap().unwrap());
                assert_eq!(filtered, whole, "{} step {}", case.id, cut.steps.len());
                judged += 1;
                known += usize::from(!engine.needs_cedar(&request));
                blocked += usize::from(!filtered.is_allowed());
            }
        }
    }
    assert!(judged > 3_000, "only {judged} events judged");
    assert!(
        blocked > 500 && blocked < judged,
        "{blocked} of {judged} blocked"
    );
    Tally { judged, known }
}
