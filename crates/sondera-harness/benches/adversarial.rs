//! Judging adversarial events at the service's size limit: every token
//! class of `tests/adversarial` in every carrier, 1 MiB of text each (or the
//! sizes given), in a release build. Prints each probe's best wall time of
//! three and the worst probes; under callgrind (see BENCHMARKS.md) the
//! instructions of `adversarial::measured_step`.
//!
//! `cargo bench -p sondera-harness --bench adversarial [-- SIZE_KIB... CLASS_WORD...]`

use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../tests/adversarial/mod.rs"]
mod adversarial;

use adversarial::{CARRIERS, CLASSES, probe, repeated};
use sondera_harness::Adjudicator;
use sondera_model::Event;
use sondera_policy::PolicyEngine;
use sondera_store::MemoryStore;

#[inline(never)]
fn measured_step(runtime: &tokio::runtime::Runtime, adjudicator: &Adjudicator, event: &Event) {
    let verdict = runtime.block_on(adjudicator.adjudicate(event));
    std::hint::black_box(verdict.expect("judged"));
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok())
        .map(|kib| kib * 1024)
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1 << 20]
    } else {
        sizes
    };
    // Words that are not sizes choose the token classes whose names hold them.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let engine = PolicyEngine::builtin().expect("built-in packs load");
    let adjudicator = Adjudicator::new(engine, Arc::new(MemoryStore::new()));
    let mut results: Vec<(Duration, String)> = Vec::new();
    let mut trajectory = 0;
    for size in sizes {
        for (class, unit) in CLASSES {
            if !only.is_empty() && !only.iter().any(|w| class.contains(w.as_str())) {
                continue;
            }
            for carrier in CARRIERS {
                let mut best = Duration::MAX;
                for _ in 0..3 {
                    trajectory += 1;
                    let mut events =
                        probe(carrier, repeated(unit, size), &format!("t-{trajectory}"));
                    let last = events.pop().expect("a measured step");
                    for event in &events {
                        runtime
                            .block_on(adjudicator.adjudicate(event))
                            .expect("judged");
                    }
                    let started = Instant::now();
                    measured_step(&runtime, &adjudicator, &last);
                    best = best.min(started.elapsed());
                }
                let line = format!("{} KiB {class} in {carrier:?}", size / 1024);
                println!("{:>9.2} ms  {line}", best.as_secs_f64() * 1e3);
                results.push((best, line));
            }
        }
    }
    results.sort_by_key(|r| std::cmp::Reverse(r.0));
    println!("\nworst:");
    for (took, line) in results.iter().take(10) {
        println!("{:>9.2} ms  {line}", took.as_secs_f64() * 1e3);
    }
}
