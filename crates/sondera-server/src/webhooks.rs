//! Approval notifications: when an approval opens, is decided or expires
//! on this server, a JSON notification is POSTed to every configured
//! webhook, so an operator hears of it wherever they are.
//!
//! Two payloads: Sondera's own JSON, signed, for receivers that act on it;
//! and a Slack incoming-webhook message (`text` and `blocks`). Every
//! notification is signed when a secret is configured: the header
//! `x-sondera-signature: t=UNIX,v1=HEX` holds the HMAC-SHA256, under the
//! secret, of `UNIX.BODY`, so a receiver recomputes it, compares in
//! constant time and refuses old timestamps (replays).
//!
//! Delivery never touches judging: each notification is handed to a task
//! of its own, at most [`IN_FLIGHT`] at once (past that it is dropped and
//! counted), and retried with doubling back-off on a transport error, a
//! 5xx or a 429, a bounded number of times. The step's own content (a
//! command, a tool's arguments) may hold secrets, so it is sent only when
//! configured; by default a notification names the approval, agent,
//! trajectory, kind of step and policies, and links to the dashboard.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use hmac::{KeyInit as _, Mac as _};
use serde_json::{Value, json};
use sondera_store::{ApprovalRecord, ApprovalState};
use tokio::sync::Semaphore;

use crate::metrics::Metrics;

/// Notifications being delivered at once; more are dropped.
pub(crate) const IN_FLIGHT: usize = 64;

/// The payload a webhook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookFormat {
    /// Sondera's notification object.
    Json,
    /// A Slack incoming-webhook message.
    Slack,
}

/// One receiver: `https://...` (Sondera's JSON) or `slack=https://...`.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookTarget {
    url: String,
    /// The URL up to its host: what logs show, since the rest (a Slack
    /// webhook's path) is a credential.
    shown: String,
    format: WebhookFormat,
}

impl fmt::Debug for WebhookTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WebhookTarget({:?}, {}/...)", self.format, self.shown)
    }
}

impl WebhookTarget {
    /// The receiver's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The payload it receives.
    pub fn format(&self) -> WebhookFormat {
        self.format
    }
}

/// A webhook setting that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("webhook `{given}`: {problem}")]
pub struct WebhookError {
    given: String,
    problem: String,
}

impl FromStr for WebhookTarget {
    type Err = WebhookError;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let fail = |problem: &str| WebhookError {
            given: given.to_string(),
            problem: problem.to_string(),
        };
        let (format, url) = match given.split_once('=') {
            Some(("slack", url)) => (WebhookFormat::Slack, url),
            Some(("json", url)) => (WebhookFormat::Json, url),
            _ => (WebhookFormat::Json, given),
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            fail(&format!(
                "not a URL ({e}); write https://host/path or slack=https://..."
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(fail("only http:// and https:// receivers are supported"));
        }
        let shown = format!(
            "{}://{}",
            parsed.scheme(),
            &parsed[url::Position::BeforeHost..url::Position::AfterPort]
        );
        Ok(Self {
            url: url.to_string(),
            shown,
            format,
        })
    }
}

/// The shared secret notifications are signed with.
#[derive(Clone)]
pub struct WebhookSecret(Arc<[u8]>);

impl WebhookSecret {
    /// A secret of at least 16 bytes.
    pub fn new(secret: &str) -> Result<Self, WebhookError> {
        if secret.len() < 16 {
            return Err(WebhookError {
                given: "the webhook secret".into(),
                problem: "shorter than 16 bytes: make one with `openssl rand -hex 32`".into(),
            });
        }
        Ok(Self(secret.as_bytes().into()))
    }

    /// `t=UNIX,v1=HEX` for `body` sent at `unix`.
    pub fn signature(&self, unix: i64, body: &[u8]) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        mac.update(unix.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("t={unix},v1={}", hex::encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

/// Where and how approval notifications go.
#[derive(Debug, Clone)]
pub struct Webhooks {
    targets: Vec<WebhookTarget>,
    secret: Option<WebhookSecret>,
    dashboard: Option<String>,
    include_step: bool,
    attempts: u32,
    first_retry: Duration,
    timeout: Duration,
}

impl Webhooks {
    /// Notifies `targets`, signing with `secret`. Sondera's JSON is for
    /// receivers that act on it, so it is never sent unsigned.
    pub fn new(
        targets: Vec<WebhookTarget>,
        secret: Option<WebhookSecret>,
    ) -> Result<Self, WebhookError> {
        if secret.is_none()
            && let Some(json) = targets.iter().find(|t| t.format == WebhookFormat::Json)
        {
            return Err(WebhookError {
                given: json.url.clone(),
                problem: "Sondera's JSON notifications are signed: give a secret (--webhook-secret), or mark a Slack receiver slack=URL".into(),
            });
        }
        Ok(Self {
            targets,
            secret,
            dashboard: None,
            include_step: false,
            attempts: 5,
            first_retry: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        })
    }

    /// The dashboard's address as operators reach it, for links.
    #[must_use]
    pub fn dashboard(mut self, url: impl Into<String>) -> Self {
        self.dashboard = Some(url.into().trim_end_matches('/').to_string());
        self
    }

    /// Sends the step's content (command, arguments) too.
    #[must_use]
    pub fn include_step(mut self, include: bool) -> Self {
        self.include_step = include;
        self
    }

    /// Tries each notification this many times (at least once), waiting
    /// `first_retry` after the first failure and twice as long after each
    /// next one (at most a minute); each attempt may take `timeout`.
    #[must_use]
    pub fn retries(mut self, attempts: u32, first_retry: Duration, timeout: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.first_retry = first_retry;
        self.timeout = timeout;
        self
    }

    /// Whether any receiver is configured.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

/// What happened to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApprovalNews {
    Opened,
    Settled,
}

/// Sends notifications in the background; see the module.
pub(crate) struct Notifier {
    webhooks: Webhooks,
    client: reqwest::Client,
    in_flight: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl Notifier {
    pub(crate) fn new(webhooks: Webhooks, metrics: Arc<Metrics>) -> Result<Self, WebhookError> {
        let client = reqwest::Client::builder()
            .timeout(webhooks.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("sondera/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| WebhookError {
                given: "the webhook client".into(),
                problem: e.to_string(),
            })?;
        Ok(Self {
            webhooks,
            client,
            in_flight: Arc::new(Semaphore::new(IN_FLIGHT)),
            metrics,
        })
    }

    /// Hands a notification of `approval` to every receiver; returns at once.
    pub(crate) fn approval(&self, approval: &ApprovalRecord, news: ApprovalNews) {
        let event = event_type(approval, news);
        let delivery = uuid::Uuid::new_v4().to_string();
        let link = self
            .webhooks
            .dashboard
            .as_ref()
            .map(|d| format!("{d}/#/approvals/{}", approval.id));
        for target in &self.webhooks.targets {
            let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
                self.metrics.webhook("dropped");
                tracing::warn!(approval = %approval.id, "webhook notification dropped: {IN_FLIGHT} already being delivered");
                continue;
            };
            let body = match target.format {
                WebhookFormat::Json => json_body(
                    approval,
                    event,
                    &delivery,
                    link.as_deref(),
                    self.webhooks.include_step,
                ),
                WebhookFormat::Slack => slack_body(approval, event, link.as_deref()),
            };
            let send = Delivery {
                client: self.client.clone(),
                url: target.url.clone(),
                shown: target.shown.clone(),
                body: body.to_string().into_bytes(),
                event,
                delivery: delivery.clone(),
                secret: self.webhooks.secret.clone(),
                attempts: self.webhooks.attempts,
                first_retry: self.webhooks.first_retry,
                metrics: self.metrics.clone(),
            };
            tokio::spawn(async move {
                send.run().await;
                drop(permit);
            });
        }
    }
}

fn event_type(approval: &ApprovalRecord, news: ApprovalNews) -> &'static str {
    match (news, &approval.state) {
        (ApprovalNews::Opened, _) | (_, ApprovalState::Pending) => "approval.opened",
        (ApprovalNews::Settled, ApprovalState::Decided { .. }) => "approval.decided",
        (ApprovalNews::Settled, ApprovalState::Expired { .. }) => "approval.expired",
    }
}

/// One notification to one receiver, with its retries.
struct Delivery {
    client: reqwest::Client,
    url: String,
    shown: String,
    body: Vec<u8>,
    event: &'static str,
    delivery: String,
    secret: Option<WebhookSecret>,
    attempts: u32,
    first_retry: Duration,
    metrics: Arc<Metrics>,
}

impl Delivery {
    async fn run(self) {
        let mut wait = self.first_retry;
        for attempt in 1..=self.attempts {
            match self.attempt().await {
                Ok(()) => {
                    self.metrics.webhook("delivered");
                    return;
                }
                Err((problem, retry)) if retry && attempt < self.attempts => {
                    self.metrics.webhook("retried");
                    tracing::info!(delivery = %self.delivery, attempt, "webhook {}: {problem}; trying again in {wait:?}", self.shown);
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(60));
                }
                Err((problem, _)) => {
                    self.metrics.webhook("failed");
                    tracing::warn!(delivery = %self.delivery, attempt, "webhook {} not notified of {}: {problem}", self.shown, self.event);
                    return;
                }
            }
        }
    }

    /// One POST; on failure, what went wrong and whether to try again.
    async fn attempt(&self) -> Result<(), (String, bool)> {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("x-sondera-event", self.event)
            .header("x-sondera-delivery", &self.delivery)
            .body(self.body.clone());
        if let Some(secret) = &self.secret {
            let unix = chrono::Utc::now().timestamp();
            request = request.header("x-sondera-signature", secret.signature(unix, &self.body));
        }
        // reqwest's errors name the URL: keep only what they say of it.
        let response = request
            .send()
            .await
            .map_err(|e| (e.without_url().to_string(), true))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry = status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
        Err((format!("answered {status}"), retry))
    }
}

/// Sondera's notification object.
fn json_body(
    approval: &ApprovalRecord,
    event: &str,
    delivery: &str,
    link: Option<&str>,
    include_step: bool,
) -> Value {
    let mut state = serde_json::to_value(&approval.state).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut state
        && !include_step
    {
        // An operator's reason may quote the step.
        fields.remove("reason");
    }
    let mut body = json!({
        "type": event,
        "delivery": delivery,
        "sent_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "approval": {
            "id": approval.id,
            "tenant": approval.tenant.as_str(),
            "agent_id": approval.agent_id,
            "trajectory_id": approval.trajectory_id,
            "event_id": approval.event_id,
            "seq": approval.seq,
            "session_id": approval.session_id,
            "step": approval.action.kind(),
            "tool": tool_name(approval),
            "policies": policy_ids(approval),
            "created_at": approval.created_at,
            "expires_at": approval.expires_at,
            "state": state,
        },
        "link": link,
    });
    if include_step {
        body["approval"]["action"] = serde_json::to_value(&approval.action).unwrap_or(Value::Null);
        body["approval"]["reason"] = json!(approval.verdict.reason);
    }
    body
}

/// A Slack incoming-webhook message.
fn slack_body(approval: &ApprovalRecord, event: &str, link: Option<&str>) -> Value {
    let what = match (&approval.state, event) {
        (
            ApprovalState::Decided {
                approval: a,
                decided_by,
                ..
            },
            _,
        ) => format!(
            "Approval {} by {}",
            if *a == sondera_model::Approval::Deny {
                "refused"
            } else {
                "granted"
            },
            slack_text(&decided_by.id)
        ),
        (ApprovalState::Expired { .. }, _) => "Approval expired: nobody decided in time".into(),
        _ => "Approval needed".into(),
    };
    let step = match tool_name(approval) {
        Some(tool) => format!("`{}` ({})", slack_text(tool), approval.action.kind()),
        None => approval.action.kind().to_string(),
    };
    let mut text = format!(
        "*{what}*: agent `{}` wants to run {step} in trajectory `{}`; policies: {}",
        slack_text(&approval.agent_id),
        slack_text(&approval.trajectory_id),
        slack_text(&policy_ids(approval).join(", ")),
    );
    if let Some(link) = link {
        text.push_str(&format!(" <{link}|Open in the dashboard>"));
    }
    json!({
        "text": text,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
    })
}

/// Text with Slack's control characters escaped, so an agent's ids cannot
/// make links or mentions.
fn slack_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "'")
}

fn tool_name(approval: &ApprovalRecord) -> Option<&str> {
    match &approval.action {
        sondera_model::Payload::ToolCall { tool, .. } => Some(tool.as_str()),
        _ => None,
    }
}

fn policy_ids(approval: &ApprovalRecord) -> Vec<&str> {
    approval
        .verdict
        .policies
        .iter()
        .map(|p| p.policy_id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_with_their_format() {
        let json: WebhookTarget = "https://hooks.example/sondera".parse().unwrap();
        assert_eq!(json.format(), WebhookFormat::Json);
        let slack: WebhookTarget = "slack=https://hooks.slack.com/services/T/B/X"
            .parse()
            .unwrap();
        assert_eq!(slack.format(), WebhookFormat::Slack);
        assert_eq!(slack.url(), "https://hooks.slack.com/services/T/B/X");
        assert!(!format!("{slack:?}").contains("services"), "{slack:?}");
        assert!("ftp://x/y".parse::<WebhookTarget>().is_err());
        assert!("not a url".parse::<WebhookTarget>().is_err());
    }

    #[test]
    fn json_receivers_need_a_secret() {
        let json: WebhookTarget = "https://hooks.example/a".parse().unwrap();
        let slack: WebhookTarget = "slack=https://hooks.example/b".parse().unwrap();
        assert!(Webhooks::new(vec![json.clone()], None).is_err());
        assert!(Webhooks::new(vec![slack], None).is_ok());
        let secret = WebhookSecret::new("0123456789abcdef").unwrap();
        assert!(Webhooks::new(vec![json], Some(secret)).is_ok());
        assert!(WebhookSecret::new("short").is_err());
    }

    #[test]
    fn the_signature_is_an_hmac_of_the_timestamp_and_body() {
        let secret = WebhookSecret::new("0123456789abcdef").unwrap();
        let signed = secret.signature(1_700_000_000, b"{}");
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"0123456789abcdef").unwrap();
        mac.update(b"1700000000.{}");
        let expected = hex::encode(mac.finalize().into_bytes());
        assert_eq!(signed, format!("t=1700000000,v1={expected}"));
        assert_ne!(signed, secret.signature(1_700_000_001, b"{}"));
    }

    #[test]
    fn slack_text_cannot_make_links_or_mentions() {
        assert_eq!(
            slack_text("<!channel> <https://evil|click> `x`"),
            "&lt;!channel&gt; &lt;https://evil|click&gt; 'x'"
        );
    }
}
