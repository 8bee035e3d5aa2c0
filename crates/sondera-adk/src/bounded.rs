//! Every harness call the plugin makes is bounded: a call that panics or
//! does not answer in time fails like any other harness error, so the step
//! it was for is blocked and the invocation's lease is released as usual.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use sondera_harness::HarnessError;

/// How long one harness call may take by default.
pub const DEFAULT_HARNESS_TIMEOUT: Duration = Duration::from_secs(30);

/// `work`, failing with [`HarnessError::Timeout`] after `limit` and with
/// [`HarnessError::Panicked`] if it panics.
pub(crate) async fn bounded<T>(
    limit: Duration,
    work: impl Future<Output = Result<T, HarnessError>>,
) -> Result<T, HarnessError> {
    match tokio::time::timeout(limit, AssertUnwindSafe(work).catch_unwind()).await {
        Err(_) => Err(HarnessError::Timeout(limit)),
        Ok(Err(panic)) => Err(HarnessError::Panicked(panic_message(panic.as_ref()))),
        Ok(Ok(result)) => result,
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
