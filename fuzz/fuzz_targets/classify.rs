//! Tool-call classification, result observations and content scanning on
//! any input under the event size limit, judged within the bounds.

#![no_main]

#[path = "../../crates/sondera-guard/tests/exercise/mod.rs"]
#[allow(dead_code)]
mod exercise;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() <= exercise::MAX_EVENT_BYTES {
        sondera_fuzz::within_bounds("classification and scanning", || exercise::classify(data));
    }
});
