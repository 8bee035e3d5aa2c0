//! `sondera policy check`: load and validate a policy set, and show every
//! problem where it is.

use std::path::PathBuf;
use std::process::ExitCode;

use sondera_policy::{PolicyEngine, PolicyError, builtin_source};

pub fn run(dirs: &[PathBuf], deny_warnings: bool, json: bool) -> anyhow::Result<ExitCode> {
    let loaded = PolicyEngine::builder()
        .builtin_or_directories(dirs.iter().cloned())
        .build();
    let (errors, warnings, policies) = match &loaded {
        Ok(engine) => (
            Vec::new(),
            engine.warnings().to_vec(),
            engine.policy_ids().count(),
        ),
        Err(e) => (e.errors().to_vec(), Vec::new(), 0),
    };
    if json {
        let item = |severity: &str, e: &PolicyError| {
            serde_json::json!({
                "severity": severity,
                "file": e.file,
                "line": e.line,
                "column": e.column,
                "policy_id": e.policy_id,
                "message": e.message,
                "help": e.help,
            })
        };
        let report = serde_json::json!({
            "valid": errors.is_empty(),
            "policies": policies,
            "problems": errors.iter().map(|e| item("error", e))
                .chain(warnings.iter().map(|w| item("warning", w)))
                .collect::<Vec<_>>(),
        });
        println!("{report}");
    } else {
        for error in &errors {
            print!("{}", located("error", error));
        }
        for warning in &warnings {
            print!("{}", located("warning", warning));
        }
        println!("{}", summary(policies, errors.len(), warnings.len()));
    }
    Ok(if !errors.is_empty() {
        ExitCode::from(2)
    } else if deny_warnings && !warnings.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn summary(policies: usize, errors: usize, warnings: usize) -> String {
    use crate::count;
    if errors > 0 {
        format!("{}: nothing loaded", count(errors, "error", "errors"))
    } else {
        format!(
            "{} valid, {}",
            count(policies, "policy", "policies"),
            count(warnings, "warning", "warnings")
        )
    }
}

/// The problem, the source line it points at with a caret under the column,
/// and the help.
fn located(severity: &str, problem: &PolicyError) -> String {
    let mut out = format!("{severity}: {}\n", headline(problem));
    if let Some(line) = source_line(&problem.file, problem.line) {
        let number = problem.line.to_string();
        let gutter = " ".repeat(number.len());
        let caret = " ".repeat(problem.column.saturating_sub(1));
        out.push_str(&format!(
            "{gutter} |\n{number} | {line}\n{gutter} | {caret}^\n"
        ));
    }
    if let Some(help) = &problem.help {
        out.push_str(&format!("  = help: {help}\n"));
    }
    out
}

fn headline(problem: &PolicyError) -> String {
    let mut text = problem.file.clone();
    if problem.line > 0 {
        text.push_str(&format!(":{}:{}", problem.line, problem.column));
    }
    text.push_str(": ");
    if let Some(id) = &problem.policy_id {
        text.push_str(&format!("policy `{id}`: "));
    }
    text + &problem.message
}

fn source_line(file: &str, line: usize) -> Option<String> {
    if line == 0 {
        return None;
    }
    let text = match builtin_source(file) {
        Some(text) => text.to_string(),
        None => std::fs::read_to_string(file).ok()?,
    };
    text.lines().nth(line - 1).map(|l| l.replace('\t', " "))
}
