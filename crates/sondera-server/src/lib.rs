//! The Sondera harness service: one process that every agent adjudicates
//! against, whatever language or host it runs on.
//!
//! A [`Server`] wraps one [`Adjudicator`] (policy engine plus trajectory
//! store) in [`Governance`], the service's protocol-free layer: adjudicate
//! an event for a tenant, query that tenant's records, follow the live
//! stream. Two
//! front ends share it: gRPC (`sondera.harness.v1.HarnessService`, tonic)
//! and JSON over HTTP under `/v1` (axum) with Server-Sent Events, an OpenAPI
//! document, `/healthz` and Prometheus `/metrics`. Both authenticate with
//! bearer tokens configured as hashes ([`Access`]), each token granting one
//! tenant and a [`Role`]: an agent adjudicates and reads by id, an operator
//! also reads the tenant's records, decides approvals and keeps grants.
//! Without tokens the server only listens on loopback.
//!
//! Escalations reach people through approvals: an agent asks the server to
//! put an escalated step to the tenant's operators and long-polls for the
//! outcome; an operator decides before the deadline, or the step is denied
//! when it passes. The store holds every approval, so neither a dropped
//! connection nor a restart loses one. The dashboard at `/` is the
//! operators' screen: one page built into the binary over the same API.
//!
//! A verdict is returned only after the store has durably recorded it.
//! Several servers may share one store (PostgreSQL): the adjudicator judges
//! an event again when another process appended to its trajectory first, so
//! per-trajectory state and order stay consistent across processes.
//!
//! Live subscribers never slow adjudication: events fan out through a
//! bounded broadcast buffer, and a subscriber that falls behind it is
//! dropped with an error. Policies (and tokens) reload on SIGHUP, policies also when a watched
//! directory changes; an invalid set is refused and the running set stays.

mod approvals;
mod auth;
mod browser;
mod dashboard;
mod error;
mod governance;
mod grpc;
mod hooks;
mod http;
mod limits;
mod listener;
mod live;
mod metrics;
mod policies;
mod reload;
mod request_id;
mod retention;
mod serve;
mod sessions;
mod shared;
mod stored_tokens;
mod webhooks;

pub use auth::{
    Access, AccessControl, Caller, Role, TokenConfigError, TokenLoader, TokenReload, Tokens,
    hash_token,
};
pub use error::ServiceError;
pub use governance::Governance;
pub use http::OPENAPI;
pub use limits::Limits;
pub use live::{Backlog, LiveCursor, LiveEvent, LiveItem, Resume, StreamFilter, Subscription};
pub use metrics::{LatencySummary, Metrics};
pub use policies::PolicyBuilder;
pub use reload::{PolicyLoader, Reconfiguration, Reconfigure, ReloadOutcome};
pub use request_id::{REQUEST_ID, RequestIdLayer};
pub use serve::{Server, ServerBuilder, ServerError, TlsFiles};
pub use sondera_harness::Adjudicator;
pub use webhooks::{WebhookError, WebhookFormat, WebhookSecret, WebhookTarget, Webhooks};
