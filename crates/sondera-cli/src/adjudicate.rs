use std::io::{BufRead, BufReader, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use sondera_harness::Adjudicator;
use sondera_model::{Adjudicated, Decision, Event};
use sondera_store::{MemoryStore, SqliteStore, TrajectoryStore};

use crate::AdjudicateArgs;

/// How the run went, for the exit status.
#[derive(Debug, Default)]
struct Tally {
    blocked: usize,
    failed: usize,
}

pub(crate) fn run(args: AdjudicateArgs) -> anyhow::Result<ExitCode> {
    let engine = args.policies.engine()?;
    let store: Arc<dyn TrajectoryStore> = match args.store.data_dir()? {
        Some(dir) => Arc::new(
            SqliteStore::open_dir(&dir)
                .with_context(|| format!("opening the store in {}", dir.display()))?,
        ),
        None => Arc::new(MemoryStore::new()),
    };
    let adjudicator = Adjudicator::new(engine, store);
    crate::keep_policies_until_exit(&adjudicator);
    let input: Box<dyn Read> = match args.input.as_deref() {
        None => Box::new(std::io::stdin()),
        Some(path) if path.as_os_str() == "-" => Box::new(std::io::stdin()),
        Some(path) => Box::new(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        ),
    };
    let tally = crate::block_on(adjudicate_lines(&adjudicator, input, &args))??;
    Ok(match tally {
        Tally { failed: 1.., .. } => ExitCode::from(2),
        Tally { blocked: 1.., .. } => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

async fn adjudicate_lines(
    adjudicator: &Adjudicator,
    input: Box<dyn Read>,
    args: &AdjudicateArgs,
) -> anyhow::Result<Tally> {
    let mut reader = BufReader::new(input);
    let mut out = std::io::stdout().lock();
    let mut tally = Tally::default();
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        // Read at most one byte past the limit so an oversized line cannot exhaust memory.
        let limit = args.max_event_bytes as u64 + 1;
        let read = (&mut reader).take(limit).read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        let truncated = line.last() != Some(&b'\n') && read as u64 == limit;
        if truncated {
            skip_rest_of_line(&mut reader)?;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let outcome = adjudicate_line(
            adjudicator,
            text.trim_end(),
            truncated,
            args.max_event_bytes,
        )
        .await;
        report(&mut out, number, &outcome, args.json)?;
        match &outcome {
            Ok((_, verdict)) if !verdict.is_allowed() => tally.blocked += 1,
            Ok(_) => {}
            Err(_) => tally.failed += 1,
        }
    }
    out.flush()?;
    Ok(tally)
}

fn skip_rest_of_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

async fn adjudicate_line(
    adjudicator: &Adjudicator,
    text: &str,
    truncated: bool,
    max_bytes: usize,
) -> Result<(Event, Adjudicated), String> {
    if truncated {
        return Err(format!("event is larger than the {max_bytes}-byte limit"));
    }
    let event = Event::from_json(text, max_bytes).map_err(|e| e.to_string())?;
    let verdict = adjudicator
        .adjudicate(&event)
        .await
        .map_err(|e| format!("not adjudicated, treat as blocked: {e}"))?;
    Ok((event, verdict))
}

fn report(
    out: &mut impl Write,
    line: usize,
    outcome: &Result<(Event, Adjudicated), String>,
    json: bool,
) -> std::io::Result<()> {
    match (outcome, json) {
        (Ok((event, verdict)), true) => {
            let value = serde_json::json!({
                "line": line,
                "event_id": event.event_id,
                "trajectory_id": event.trajectory_id,
                "kind": event.payload.kind(),
                "verdict": verdict,
            });
            writeln!(out, "{value}")
        }
        (Err(error), true) => {
            writeln!(out, "{}", serde_json::json!({"line": line, "error": error}))
        }
        (Ok((event, verdict)), false) => writeln!(out, "{}", text_line(line, event, verdict)),
        (Err(error), false) => writeln!(out, "{line:>5}: error     {error}"),
    }
}

fn text_line(line: usize, event: &Event, verdict: &Adjudicated) -> String {
    let decision = match (verdict.decision, verdict.would_be) {
        (Decision::Allow, Some(would_be)) => format!("allow (would {would_be})"),
        (decision, _) => decision.to_string(),
    };
    let mut text = format!("{line:>5}: {decision:<9} {:<21}", event.payload.kind());
    if let Some(reason) = &verdict.reason {
        text.push(' ');
        text.push_str(reason);
    }
    let ids: Vec<&str> = verdict.policy_ids().collect();
    if !ids.is_empty() {
        text.push_str(&format!(" [{}]", ids.join(", ")));
    }
    text
}
