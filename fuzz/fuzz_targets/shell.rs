//! The shell analyser: any text under the event size limit, judged within
//! the bounds (see `sondera_fuzz::within_bounds`).

#![no_main]

#[path = "../../crates/sondera-guard/tests/exercise/mod.rs"]
#[allow(dead_code)]
mod exercise;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() <= exercise::MAX_EVENT_BYTES {
        sondera_fuzz::within_bounds("shell analysis", || exercise::shell(data));
    }
});
