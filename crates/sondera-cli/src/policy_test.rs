use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use sondera_harness::corpus::{CaseOutcome, CorpusRunner, parse_cases, stats};
use sondera_policy::PolicyEngine;

pub(crate) fn run(
    files: &[PathBuf],
    policy_dirs: &[PathBuf],
    json: bool,
) -> anyhow::Result<ExitCode> {
    let dirs = policy_dirs.to_vec();
    let mut runner =
        CorpusRunner::new(move || PolicyEngine::builder().builtin_or_directories(dirs.clone()));
    runner.check()?;
    let mut cases = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        cases.extend(parse_cases(&file.display().to_string(), &text)?);
    }
    let progress = crate::progress(Some(cases.len() as u64), "cases");
    let outcomes: Vec<CaseOutcome> = crate::block_on(async {
        let mut outcomes = Vec::with_capacity(cases.len());
        for case in cases {
            outcomes.push(runner.run(case).await);
            progress.inc(1);
        }
        outcomes
    })?;
    progress.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if json {
        report_json(&mut out, &outcomes)?;
    } else {
        report_text(&mut out, &outcomes)?;
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn describe(outcome: &CaseOutcome) -> String {
    match &outcome.verdict {
        Ok(v) => {
            let ids: Vec<&str> = v.policy_ids().collect();
            format!("{} [{}]", v.decision, ids.join(", "))
        }
        Err(e) => format!("error: {e}"),
    }
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn report_text(out: &mut impl Write, outcomes: &[CaseOutcome]) -> std::io::Result<()> {
    for outcome in outcomes.iter().filter(|o| !o.passed()) {
        let case = &outcome.case;
        write!(
            out,
            "FAIL {} ({}): expected {}, got {}",
            case.id,
            case.category,
            case.expect.as_str(),
            describe(outcome)
        )?;
        match &case.note {
            Some(note) => writeln!(out, " -- {note}")?,
            None => writeln!(out)?,
        }
    }
    writeln!(
        out,
        "\n{:<24} {:>7} {:>13} {:>10}",
        "category", "passed", "block recall", "false pos"
    )?;
    for (category, s) in stats(outcomes) {
        writeln!(
            out,
            "{category:<24} {:>7} {:>13} {:>10}",
            format!("{}/{}", s.passed, s.cases),
            percent(s.recall()),
            percent(s.false_positive_rate())
        )?;
    }
    let passed = outcomes.iter().filter(|o| o.passed()).count();
    writeln!(out, "\n{passed} passed, {} failed", outcomes.len() - passed)
}

fn report_json(out: &mut impl Write, outcomes: &[CaseOutcome]) -> std::io::Result<()> {
    for outcome in outcomes {
        let value = serde_json::json!({
            "id": outcome.case.id,
            "category": outcome.case.category,
            "expect": outcome.case.expect.as_str(),
            "passed": outcome.passed(),
            "verdict": outcome.verdict.as_ref().ok(),
            "error": outcome.verdict.as_ref().err(),
        });
        writeln!(out, "{value}")?;
    }
    Ok(())
}
