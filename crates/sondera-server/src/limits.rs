//! Bounds on what one request may ask of the service.

use std::time::Duration;

use crate::error::ServiceError;

/// How much one request may carry and one peer may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest event accepted, in bytes of its encoding (protobuf or JSON).
    pub max_event_bytes: usize,
    /// Most events in one batch.
    pub max_batch_events: usize,
    /// Largest request body (a batch included); larger requests are refused
    /// before they are read.
    pub max_request_bytes: usize,
    /// How long a request may take, reading its body included, before the
    /// caller is told it timed out.
    pub request_timeout: Duration,
    /// How long an HTTP/1 client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// How long a connection may pass with no traffic either way.
    pub idle_timeout: Duration,
    /// How long a client may take to finish the TLS handshake.
    pub tls_handshake_timeout: Duration,
    /// Connections open at once, per listener; more wait to be accepted.
    pub max_connections: usize,
    /// Connections one client address may hold open at once, per listener;
    /// past it, its new connections are closed on accepting them.
    pub max_connections_per_peer: usize,
    /// Live events a subscriber may fall behind before it is dropped.
    pub stream_buffer: usize,
    /// How long an escalated step waits for an operator when its agent
    /// asks for no other deadline.
    pub approval_timeout: Duration,
    /// The longest deadline an agent may ask for.
    pub max_approval_timeout: Duration,
    /// A dashboard session unused this long ends.
    pub session_idle: Duration,
    /// A dashboard session ends this long after signing in, however used.
    pub session_lifetime: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_event_bytes: 1024 * 1024,
            max_batch_events: 256,
            max_request_bytes: 16 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            tls_handshake_timeout: Duration::from_secs(10),
            max_connections: 512,
            max_connections_per_peer: 64,
            stream_buffer: 1024,
            approval_timeout: Duration::from_secs(300),
            max_approval_timeout: Duration::from_secs(3600),
            session_idle: Duration::from_secs(3600),
            session_lifetime: Duration::from_secs(12 * 3600),
        }
    }
}

impl Limits {
    /// Refuses an event of `size` bytes past the limit.
    pub fn check_event(&self, size: usize) -> Result<(), ServiceError> {
        if size > self.max_event_bytes {
            return Err(ServiceError::TooLarge(format!(
                "event is {size} bytes, larger than the {}-byte limit (--max-event-bytes)",
                self.max_event_bytes
            )));
        }
        Ok(())
    }

    /// A field an agent or operator supplies that is kept in a record
    /// (a decision's reason, a grant): no larger than an event may be.
    pub fn check_field(&self, field: &str, size: usize) -> Result<(), ServiceError> {
        if size > self.max_event_bytes {
            return Err(ServiceError::TooLarge(format!(
                "`{field}` makes its record {size} bytes, larger than the {}-byte limit on a record (--max-event-bytes)",
                self.max_event_bytes
            )));
        }
        Ok(())
    }

    /// Refuses a batch of `events` past the limit.
    pub fn check_batch(&self, events: usize) -> Result<(), ServiceError> {
        if events > self.max_batch_events {
            return Err(ServiceError::TooLarge(format!(
                "batch has {events} events, more than the {}-event limit (--max-batch-events)",
                self.max_batch_events
            )));
        }
        Ok(())
    }

    /// The deadline of an approval asked for with `requested` (the default
    /// when `None`), within the maximum.
    pub fn approval_deadline(&self, requested: Option<Duration>) -> Duration {
        requested
            .unwrap_or(self.approval_timeout)
            .min(self.max_approval_timeout)
    }

    /// How long one long poll may wait: as asked, but answered within the
    /// request timeout with a second to spare.
    pub fn long_poll(&self, requested: Duration) -> Duration {
        requested.min(self.request_timeout.saturating_sub(Duration::from_secs(1)))
    }

    /// Runs `work`, giving up after the request timeout.
    pub async fn timed<T>(
        &self,
        work: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ServiceError> {
        tokio::time::timeout(self.request_timeout, work)
            .await
            .unwrap_or(Err(ServiceError::Timeout(self.request_timeout)))
    }
}
