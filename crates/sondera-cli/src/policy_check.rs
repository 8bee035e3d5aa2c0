//! `sondera policy check`: load and validate a policy set, and show every
//! problem where it is.

use std::path::PathBuf;
use std::process::ExitCode;

use sondera_policy::{PolicyEngine, PolicyError, builtin_source};

pub(crate) fn run(dirs: &[PathBuf], deny_warnings: bool, json: bool) -> anyhow::Result<ExitCode> {
    // `policy check` is where linting is asked for, built-in packs included.
    let loaded = PolicyEngine::builder()
        .builtin_or_directories(dirs.iter().cloned())
        .lint_builtin_packs()
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
        use std::io::Write as _;
        let mut out = anstream::stdout().lock();
        for error in &errors {
            write!(out, "{}", located("error", error))?;
        }
        for warning in &warnings {
            write!(out, "{}", located("warning", warning))?;
        }
        writeln!(out, "{}", summary(policies, errors.len(), warnings.len()))?;
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

/// The problem rendered by miette: the headline, the source around Cedar's
/// span with it underlined, and the help. Problems of a whole file (or in a
/// file that cannot be read again) are the headline and help alone.
fn located(severity: &str, problem: &PolicyError) -> String {
    let headline = format!("{severity}: {}", headline(problem));
    let mut out = String::new();
    let source = source_text(&problem.file);
    let span = source
        .as_deref()
        .and_then(|text| span_of(problem, text).map(|span| (text, span)));
    let Some((text, (offset, len))) = span else {
        out.push_str(&headline);
        out.push('\n');
        if let Some(help) = &problem.help {
            out.push_str(&format!("  = help: {help}\n"));
        }
        return out;
    };
    let level = match severity {
        "error" => miette::Severity::Error,
        _ => miette::Severity::Warning,
    };
    let mut diagnostic = miette::MietteDiagnostic::new(headline)
        .with_severity(level)
        .with_label(miette::LabeledSpan::underline(offset..offset + len.max(1)));
    if let Some(help) = &problem.help {
        diagnostic = diagnostic.with_help(help.clone());
    }
    let report = miette::Report::new(diagnostic).with_source_code(text.to_string());
    // Colours always: anstream strips them off a terminal and under NO_COLOR.
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode())
        .with_links(false)
        .with_context_lines(1);
    let _ = handler.render_report(&mut out, report.as_ref());
    out
}

/// Cedar's span as a byte offset and length in `text`.
fn span_of(problem: &PolicyError, text: &str) -> Option<(usize, usize)> {
    if problem.line == 0 {
        return None;
    }
    let line_start: usize = text
        .split_inclusive('\n')
        .take(problem.line - 1)
        .map(str::len)
        .sum();
    let line = text[line_start..].lines().next()?;
    let within: usize = line
        .chars()
        .take(problem.column.saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    Some((line_start + within, problem.span_len as usize))
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

fn source_text(file: &str) -> Option<String> {
    match builtin_source(file) {
        Some(text) => Some(text.to_string()),
        None => std::fs::read_to_string(file).ok(),
    }
}
