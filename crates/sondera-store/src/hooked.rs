//! A store wrapper that runs a hook around every append.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::{EventLog, StepRecord, StoreError};

/// What a [`HookedLog`] does around each append.
pub trait AppendHook: Send + Sync + std::fmt::Debug {
    /// Runs before the write; an error refuses the step without writing it.
    fn before(&self, _step: &StepRecord<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    /// Runs after the write, with how long it took and how it ended.
    fn after(&self, _elapsed: Duration, _result: &Result<(), StoreError>) {}
}

/// An event log that runs `hook` around every append of the log it wraps:
/// for instrumenting writes or injecting failures. Reads, grants and
/// approvals do not go through it; an adjudicator given it appends through
/// it and reads from its store.
#[derive(Debug)]
pub struct HookedLog<H> {
    inner: Arc<dyn EventLog>,
    hook: H,
}

impl<H: AppendHook> HookedLog<H> {
    /// `inner`'s appends, each with `hook` around it.
    pub fn new(inner: Arc<dyn EventLog>, hook: H) -> Self {
        Self { inner, hook }
    }

    /// The hook.
    pub fn hook(&self) -> &H {
        &self.hook
    }
}

#[async_trait]
impl<H: AppendHook> EventLog for HookedLog<H> {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        self.hook.before(&step)?;
        let started = Instant::now();
        let result = self.inner.append(step).await;
        self.hook.after(started.elapsed(), &result);
        result
    }
}
