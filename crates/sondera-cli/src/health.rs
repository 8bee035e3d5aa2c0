//! `sondera health`: whether a server answers its health check, for a
//! container's or a supervisor's probe.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// The server's health check.
    #[arg(default_value = "http://127.0.0.1:8080/healthz")]
    url: String,
    /// A PEM CA certificate to trust for an https:// server.
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 3, value_name = "SECONDS")]
    timeout: u64,
}

/// Exit status 0 when the server answers 2xx, 1 when it answers anything
/// else, 2 when it cannot be reached.
pub(crate) fn run(args: HealthArgs) -> anyhow::Result<ExitCode> {
    let mut client = reqwest::Client::builder().timeout(Duration::from_secs(args.timeout));
    if let Some(ca) = &args.ca_cert {
        let pem = std::fs::read(ca).map_err(|e| anyhow::anyhow!("{}: {e}", ca.display()))?;
        client = client.add_root_certificate(reqwest::Certificate::from_pem(&pem)?);
    }
    let client = client.build()?;
    let answer = crate::block_on(async { client.get(&args.url).send().await })?
        .map_err(|e| anyhow::anyhow!("{} cannot be reached: {e}", args.url))?;
    let status = answer.status();
    if status.is_success() {
        println!("healthy: {} answered {status}", args.url);
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("unhealthy: {} answered {status}", args.url);
        Ok(ExitCode::from(1))
    }
}
