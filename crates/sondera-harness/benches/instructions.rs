//! Runs one adjudication path a fixed number of times, for counting
//! instructions under callgrind, which unlike wall time is repeatable on a
//! shared machine:
//!
//! ```sh
//! cargo bench -p sondera-harness --bench instructions --no-run
//! BIN=$(ls -t target/release/deps/instructions-* | grep -v '\.d$' | head -1)
//! for path in setup bare harness; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null $BIN $path 2000 2>&1 | grep refs
//! done
//! ```
//!
//! (harness - setup) / 2000 and (bare - setup) / 2000 are the per-call costs.

use std::sync::Arc;

use cedar_policy::Authorizer;
use serde_json::json;
use sondera_harness::{Harness, LocalHarness};
use sondera_model::{Agent, Event, Payload};
use sondera_policy::PolicyEngine;
use sondera_store::MemoryStore;

const PACK_120: &str = include_str!("../../../policies/bench/pack-120.cedar");

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let path = args.next().unwrap_or_else(|| "harness".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let engine = || {
        PolicyEngine::builder()
            .builtin_packs()
            .policy_source("pack-120.cedar", PACK_120)
            .build()
            .expect("benchmark policies load")
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut harness = LocalHarness::builder()
        .engine(engine())
        .store(Arc::new(MemoryStore::new()))
        .agent(Agent::new("bench-agent", "google-adk"))
        .build()
        .unwrap();
    rt.block_on(harness.initialize(None, None)).unwrap();
    let call = || Payload::ToolCall {
        call_id: "c1".into(),
        tool: "create_ticket".into(),
        arguments: json!({"title": "Flaky test", "body": "retry the job", "priority": 2}),
    };
    let (id, agent) = (
        harness.trajectory_id().unwrap().to_string(),
        harness.agent().unwrap().clone(),
    );
    let events: Vec<Event> = (0..n).map(|_| Event::new(&id, &agent, call())).collect();
    let engine = engine();
    let request = engine
        .unsliced_request(&events[0], &Default::default())
        .unwrap()
        .unwrap();
    let authorizer = Authorizer::new();
    match path.as_str() {
        "setup" => {}
        "bare" => {
            for _ in 0..n {
                std::hint::black_box(authorizer.is_authorized(
                    &request.request,
                    engine.policy_set(),
                    &request.entities,
                ));
            }
        }
        "harness" => {
            for event in events {
                std::hint::black_box(rt.block_on(harness.adjudicate(event)).unwrap());
            }
        }
        other => panic!("unknown path {other}: use setup, bare or harness"),
    }
}
