//! `sondera prune`: retention applied once, to a store this process opens.

use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct PruneArgs {
    /// The store: a directory (SQLite inside), sqlite:FILE or postgres://...
    /// Default: ~/.sondera/data.
    #[arg(long, value_name = "LOCATION", env = "SONDERA_STORE")]
    store: Option<String>,
    #[command(flatten)]
    retention: crate::RetentionArgs,
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Trajectories removed per transaction.
    #[arg(long, default_value_t = 500, value_name = "N")]
    batch: usize,
}

pub(crate) fn run(args: PruneArgs) -> anyhow::Result<ExitCode> {
    let rules = args.retention.rules()?;
    anyhow::ensure!(
        !rules.keeps_all(),
        "nothing to prune by: give --retain-days or --retain-trajectories"
    );
    let location = match &args.store {
        Some(location) => location.clone(),
        None => crate::data_dir_or_default(None)?.display().to_string(),
    };
    let options = sondera_store::PruneOptions {
        batch: args.batch.max(1),
        dry_run: args.dry_run,
        ..sondera_store::PruneOptions::offline()
    };
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let total = crate::block_on(async {
        let store = sondera_store::connect(&location).await?;
        let mut by_tenant = std::collections::BTreeMap::new();
        let total = sondera_store::prune(
            store.as_ref(),
            &rules,
            chrono::Utc::now(),
            options,
            |tenant, pruned| *by_tenant.entry(tenant.clone()).or_default() += pruned,
        )
        .await?;
        for (tenant, pruned) in by_tenant {
            println!("{tenant}: {verb} {}", counted(pruned));
        }
        anyhow::Ok(total)
    })??;
    println!("{location}: {verb} {}", counted(total));
    Ok(ExitCode::SUCCESS)
}

fn counted(pruned: sondera_store::Pruned) -> String {
    format!(
        "{} ({})",
        crate::count(pruned.trajectories as usize, "trajectory", "trajectories"),
        crate::count(pruned.events as usize, "event", "events")
    )
}
