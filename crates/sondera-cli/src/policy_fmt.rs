//! `sondera policy fmt`: format Cedar policy files in place, or with
//! `--check` list the files that are not formatted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cedar_policy_formatter::{Config, policies_str_to_pretty};

const CONFIG: Config = Config {
    line_width: 100,
    indent_width: 2,
};

pub(crate) fn run(paths: &[PathBuf], check: bool) -> anyhow::Result<ExitCode> {
    let files = cedar_files(paths)?;
    let mut unformatted = 0;
    let mut broken = 0;
    for file in &files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let pretty = match policies_str_to_pretty(&text, &CONFIG) {
            Ok(pretty) => pretty,
            Err(e) => {
                eprintln!("error: {}: {e:#}", file.display());
                broken += 1;
                continue;
            }
        };
        if pretty == text {
            continue;
        }
        unformatted += 1;
        if check {
            println!("{}: not formatted", file.display());
        } else {
            std::fs::write(file, &pretty)
                .with_context(|| format!("cannot write {}", file.display()))?;
            println!("{}: formatted", file.display());
        }
    }
    Ok(if broken > 0 {
        ExitCode::from(2)
    } else if check && unformatted > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The `.cedar` files among `paths`, directories searched recursively, in
/// a stable order.
fn cedar_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if path.is_dir() {
        let entries =
            std::fs::read_dir(path).with_context(|| format!("cannot read {}", path.display()))?;
        for entry in entries {
            collect(&entry?.path(), files)?;
        }
    } else if path.extension().is_some_and(|e| e == "cedar") {
        files.push(path.to_path_buf());
    } else if !path.exists() {
        anyhow::bail!("{} does not exist", path.display());
    }
    Ok(())
}
