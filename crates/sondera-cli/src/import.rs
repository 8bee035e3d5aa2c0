//! `sondera import claude-code|gemini-cli FILE`: other agents' permission
//! rules as Cedar policies.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use sondera_policy::PolicyEngine;
use sondera_policy::import::{Imported, import_claude_code, import_gemini_cli};

use crate::ImportCommand;

pub(crate) fn run(command: ImportCommand) -> anyhow::Result<ExitCode> {
    let (file, output, imported) = match command {
        ImportCommand::ClaudeCode { file, output } => {
            let imported = import_claude_code(&read(&file)?)
                .with_context(|| format!("cannot import {}", file.display()))?;
            (file, output, imported)
        }
        ImportCommand::GeminiCli { file, output } => {
            let imported = import_gemini_cli(&read(&file)?)
                .with_context(|| format!("cannot import {}", file.display()))?;
            (file, output, imported)
        }
    };
    check_loads(&imported)?;
    match &output {
        Some(path) => std::fs::write(path, &imported.policies)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{}", imported.policies),
    }
    for skipped in &imported.unsupported {
        eprintln!("not imported: {}: {}", skipped.rule, skipped.reason);
    }
    eprintln!(
        "{}: {} imported, {} not imported",
        file.display(),
        crate::count(imported.rules, "rule", "rules"),
        imported.unsupported.len()
    );
    Ok(if imported.unsupported.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn read(file: &PathBuf) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}

/// The imported policies must load next to the built-in packs; anything else
/// is a bug in the import, reported rather than written.
fn check_loads(imported: &Imported) -> anyhow::Result<()> {
    PolicyEngine::builder()
        .builtin_packs()
        .policy_source("imported.cedar", imported.policies.clone())
        .build()
        .map(drop)
        .context("the imported policies do not load")
}
