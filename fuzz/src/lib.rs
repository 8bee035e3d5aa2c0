//! What every fuzz target asserts besides not panicking: one input under
//! the event size limit is analysed within [`MAX_TIME`] and [`MAX_MEMORY`].
//!
//! Memory is measured by the global allocator (`cap`): before each input its
//! limit is set to what is allocated plus [`MAX_MEMORY`], so an analysis
//! that holds more fails its allocation, which aborts the run and makes
//! libFuzzer keep the input as a crash.

use std::alloc::System;
use std::time::{Duration, Instant};

use cap::Cap;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Longest an input may take.
pub const MAX_TIME: Duration = Duration::from_millis(100);
/// Most memory an input may hold beyond what was allocated before it.
pub const MAX_MEMORY: usize = 64 * 1024 * 1024;

/// Runs `analyse` under the bounds; panics (a finding) when it takes too long.
pub fn within_bounds<T>(what: &str, analyse: impl FnOnce() -> T) -> T {
    let baseline = ALLOCATOR.allocated();
    ALLOCATOR
        .set_limit(baseline.saturating_add(MAX_MEMORY))
        .expect("the limit is above what is allocated");
    let started = Instant::now();
    let result = analyse();
    let took = started.elapsed();
    ALLOCATOR
        .set_limit(usize::MAX)
        .expect("lifting the limit never fails");
    assert!(took <= MAX_TIME, "{what} took {took:?}, over {MAX_TIME:?}");
    result
}
