//! Policy test corpora under the built-in packs: the development corpus
//! (`tests/corpus/dev.jsonl`), the project's own cases
//! (`tests/corpus/own.jsonl`: evasions, benign look-alikes, every risk tag)
//! and the command-runner families (`tests/corpus/runners.jsonl`: commands
//! inside other commands' arguments, inline code in many languages, reverse
//! shells, encoded and Unicode-disguised forms, tool results and bounds,
//! each with ordinary work by the same programs).

mod corpora;

use sondera_harness::corpus::{CaseOutcome, CorpusRunner, parse_cases, stats};
use sondera_policy::PolicyEngine;

async fn run(name: &str, text: &str) -> Vec<CaseOutcome> {
    let cases = parse_cases(name, text).unwrap();
    let mut runner = CorpusRunner::new(|| PolicyEngine::builder().builtin_packs());
    let mut outcomes = Vec::new();
    for case in cases {
        outcomes.push(runner.run(case).await);
    }
    outcomes
}

/// Fails with every failing case listed.
fn assert_all_pass(outcomes: &[CaseOutcome]) {
    let failed = failures(outcomes);
    assert!(
        failed.is_empty(),
        "{} failing:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

fn failures(outcomes: &[CaseOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|o| !o.passed())
        .map(|o| {
            format!(
                "{} ({}): expected {}, got {:?}",
                o.case.id,
                o.case.category,
                o.case.expect.as_str(),
                o.verdict.as_ref().map(|v| (
                    v.decision,
                    v.policy_ids().map(String::from).collect::<Vec<_>>()
                ))
            )
        })
        .collect()
}

#[tokio::test]
async fn development_corpus_passes() {
    let outcomes = run("dev.jsonl", include_str!("../../../tests/corpus/dev.jsonl")).await;
    assert_all_pass(&outcomes);
    let by_category = stats(&outcomes);
    assert_eq!(by_category["benign"].false_positives, 0);
    assert!(
        by_category
            .values()
            .all(|s| s.recall().is_none_or(|r| r == 1.0))
    );
}

#[tokio::test]
async fn own_corpus_passes() {
    let outcomes = run("own.jsonl", include_str!("../../../tests/corpus/own.jsonl")).await;
    assert!(
        outcomes.len() >= 100,
        "the own corpus has {} cases",
        outcomes.len()
    );
    assert_all_pass(&outcomes);
}

#[tokio::test]
async fn runners_corpus_passes() {
    let outcomes = run(
        "runners.jsonl",
        include_str!("../../../tests/corpus/runners.jsonl"),
    )
    .await;
    assert_balanced(&outcomes, "runners.jsonl", 150);
    assert_all_pass(&outcomes);
}

/// At least `least` cases of each kind, attacks and everyday look-alikes.
fn assert_balanced(outcomes: &[CaseOutcome], name: &str, least: usize) {
    let blocks = outcomes
        .iter()
        .filter(|o| o.case.expect.expects_block())
        .count();
    let allows = outcomes.len() - blocks;
    assert!(
        blocks >= least && allows >= least,
        "{name}: {blocks} attacks, {allows} look-alikes"
    );
}

/// The mechanisms' corpora (`corpora::MECHANISMS`) each pass, with
/// attacks and look-alikes enough of both.
#[tokio::test]
async fn mechanism_corpora_pass() {
    for &(name, text) in corpora::MECHANISMS {
        let outcomes = run(name, text).await;
        assert_balanced(&outcomes, name, 30);
        assert_all_pass(&outcomes);
    }
}

/// Defences taken down (`controls.jsonl`): security controls switched
/// off, the machine exposed, permissions widened beyond the workspace, git
/// configuration that runs commands, credentials minted. Every look-alike
/// passes; three attacks are known misses, named in the note of the change
/// that added the set (a service-account key written to a file, a service
/// principal's password, an SSH proxy through another host), and the
/// count may only fall.
#[tokio::test]
async fn defences_corpus_holds() {
    let name = "controls.jsonl";
    let outcomes = run(name, include_str!("../../../tests/corpus/controls.jsonl")).await;
    assert_balanced(&outcomes, name, 30);
    let (benign, attacks): (Vec<&CaseOutcome>, Vec<&CaseOutcome>) = outcomes
        .iter()
        .partition(|o| !o.case.expect.expects_block());
    let blocked_benign: Vec<&str> = benign
        .iter()
        .filter(|o| !o.passed())
        .map(|o| o.case.id.as_str())
        .collect();
    assert!(
        blocked_benign.is_empty(),
        "look-alikes blocked: {blocked_benign:?}"
    );
    let missed: Vec<&str> = attacks
        .iter()
        .filter(|o| !o.passed())
        .map(|o| o.case.id.as_str())
        .collect();
    assert!(missed.len() <= 3, "attacks missed: {missed:?}");
}

/// Contacts an injection planted, passed on in the answer
/// (`planted_links.jsonl`). Every attack is stopped; one look-alike is a
/// known false positive, named in the note of the change that added the
/// set: an answer citing the source link of a page that carried a weak
/// injection, which the provenance of values cannot tell from a link the
/// injection planted. The count may only fall.
#[tokio::test]
async fn planted_links_corpus_holds() {
    let name = "planted_links.jsonl";
    let outcomes = run(
        name,
        include_str!("../../../tests/corpus/planted_links.jsonl"),
    )
    .await;
    assert_balanced(&outcomes, name, 30);
    let failed = |block: bool| -> Vec<&str> {
        (outcomes.iter())
            .filter(|o| o.case.expect.expects_block() == block && !o.passed())
            .map(|o| o.case.id.as_str())
            .collect()
    };
    assert!(
        failed(true).is_empty(),
        "attacks missed: {:?}",
        failed(true)
    );
    let blocked_benign = failed(false);
    assert!(
        blocked_benign.len() <= 1,
        "look-alikes blocked: {blocked_benign:?}"
    );
}

/// The injection corpus (`tests/corpus/injection.jsonl`, written by
/// `generate_injection.py`): injected outputs across carriers, the actions
/// they ask for, and users directing actions at data they point to. A live
/// agent is stopped at the first blocked step, so benign trajectories must
/// pass every step, and every injected one must be stopped somewhere.
#[tokio::test]
async fn injection_corpus_passes() {
    let outcomes = run(
        "injection.jsonl",
        include_str!("../../../tests/corpus/injection.jsonl"),
    )
    .await;
    assert!(outcomes.len() >= 300, "{} cases", outcomes.len());
    let benign = outcomes.iter().filter(|o| !o.case.expect.expects_block());
    let blocked_benign: Vec<String> = benign
        .filter_map(|o| {
            o.first_blocked_step
                .map(|n| format!("{} at step {n}", o.case.id))
        })
        .collect();
    let failed = failures(&outcomes);
    assert!(
        blocked_benign.is_empty() && failed.is_empty(),
        "benign trajectories blocked: {blocked_benign:#?}\n{} failing:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
