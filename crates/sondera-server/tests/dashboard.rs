//! The dashboard in headless Chromium (Debian's `chromium` and
//! `chromium-driver`, which `.ci/test-deps` installs), against a real server
//! fed by a scripted agent through `RemoteHarness`. Each view is saved as a
//! screenshot under `target/dashboard/` for review.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use fantoccini::{Client, ClientBuilder, Locator};
use sondera_harness::{Harness, RemoteHarness};
use sondera_model::{Decision, Payload, PromptRole};
use sondera_policy::PolicyEngine;
use sondera_server::Limits;
use sondera_store::MemoryStore;

const ESCALATING: &str = r#"
@id("infra-apply") @description("Applying infrastructure changes needs an operator") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "terraform apply*" };
@id("trial-no-listing") @description("On trial: listing directories") @mode("monitor")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "ls*" };
"#;

async fn start_server(approval_timeout: Duration) -> Running {
    start_server_on(Arc::new(MemoryStore::new()), approval_timeout).await
}

async fn start_server_on(store: Arc<MemoryStore>, approval_timeout: Duration) -> Running {
    let loader: sondera_server::PolicyLoader = Arc::new(|| {
        PolicyEngine::builder()
            .builtin_packs()
            .policy_source("ops.cedar", ESCALATING)
            .build()
    });
    let limits = Limits {
        approval_timeout,
        ..Limits::default()
    };
    start(builder(store, loader).access(two_tenants()).limits(limits)).await
}

/// A headless Chromium driven through its own chromedriver.
struct Browser {
    client: Client,
    driver: Child,
    base: String,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    /// Ends chromedriver and every Chromium process it started, even when a
    /// test panicked: each is started with this browser's own profile
    /// directory on its command line. Left running, they would hold the
    /// machine's inotify instances, which the policy watcher needs.
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = Command::new("pkill")
            .args(["-KILL", "-f"])
            .arg(self._profile.path())
            .status();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    async fn open(server: &Running) -> Self {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs (Debian's chromium-driver; .ci/test-deps installs it)");
        let profile = tempfile::tempdir().unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--no-first-run", "--disable-component-update", "--disable-sync",
                    "--window-size=1280,800",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = loop {
            match ClientBuilder::new(connector.clone())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("chromium did not start: {e}"),
            }
        };
        Self {
            client,
            driver,
            base: format!("http://{}", server.http),
            _profile: profile,
        }
    }

    async fn go(&self, fragment: &str) {
        self.client
            .goto(&format!("{}/{fragment}", self.base))
            .await
            .unwrap();
    }

    async fn sign_in(&self, token: &str) {
        self.go("").await;
        let field = self.wait_for("#token").await;
        field.send_keys(token).await.unwrap();
        self.client
            .find(Locator::Css("#sign-in-form button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }

    /// A browser signed in to the dashboard with `token`.
    async fn signed_in(server: &Running, token: &str) -> Self {
        let browser = Self::open(server).await;
        browser.sign_in(token).await;
        browser.wait_for("#who span").await;
        browser
    }

    /// Waits until the approvals page says nothing is pending.
    async fn nothing_waiting(&self) {
        self.text_when("#nothing-waiting", Duration::from_secs(5), |t| {
            t.contains("Nothing is waiting")
        })
        .await;
    }

    async fn wait_for(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css} never appeared: {e}"))
    }

    /// The text of the first element matching `css` once `wanted` holds for it.
    async fn text_when(
        &self,
        css: &str,
        within: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + within;
        loop {
            let texts = self.texts(css).await;
            if let Some(text) = texts.iter().find(|t| wanted(t)) {
                return text.clone();
            }
            assert!(
                Instant::now() < deadline,
                "{css}: nothing wanted in {texts:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The texts of every element `css` selects, once they are `wanted`
    /// together: a list replaced by another can still show the first.
    async fn texts_when(
        &self,
        css: &str,
        within: Duration,
        wanted: impl Fn(&[String]) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + within;
        loop {
            let texts = self.texts(css).await;
            if wanted(&texts) {
                return texts;
            }
            assert!(Instant::now() < deadline, "{css}: not as wanted: {texts:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn texts(&self, css: &str) -> Vec<String> {
        let mut texts = Vec::new();
        for element in self.client.find_all(Locator::Css(css)).await.unwrap() {
            if let Ok(text) = element.text().await {
                texts.push(text);
            }
        }
        texts
    }

    async fn click(&self, css: &str) {
        self.wait_for(css).await.click().await.unwrap();
    }

    async fn screenshot(&self, name: &str) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/dashboard");
        std::fs::create_dir_all(&dir).unwrap();
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Runs `script` in the page and returns what it resolves to.
    async fn run(&self, script: &str) -> serde_json::Value {
        self.client.execute_async(script, vec![]).await.unwrap()
    }
}

/// An agent of tenant acme with a started trajectory.
async fn agent(server: &Running) -> RemoteHarness {
    let mut agent = harness(server.grpc, Some(ACME));
    agent
        .initialize(None, Some("session-7".into()))
        .await
        .unwrap();
    agent
}

async fn step(agent: &mut RemoteHarness, payload: Payload) -> Decision {
    let event = agent.event(payload).unwrap();
    agent.adjudicate(event).await.unwrap().decision
}

async fn escalate(agent: &mut RemoteHarness) -> String {
    let event = agent.event(shell("terraform apply -auto-approve")).unwrap();
    let id = event.event_id.clone();
    assert_eq!(
        agent.adjudicate(event).await.unwrap().decision,
        Decision::Escalate
    );
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_appears_in_the_live_feed_within_a_second() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go("#/feed").await;
    browser.wait_for("#feed tbody").await;
    // The stream is open once the page has subscribed; give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut agent = agent(&server).await;
    let started = Instant::now();
    assert_eq!(step(&mut agent, shell("rm -rf /")).await, Decision::Deny);
    let row = browser
        .text_when("#feed tr.deny", Duration::from_secs(1), |t| {
            t.contains("rm -rf /")
        })
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(row.contains("coder") && row.contains("DENY"), "{row}");
    assert_eq!(step(&mut agent, shell("ls -la")).await, Decision::Allow);
    browser
        .text_when("#feed tr.allow", Duration::from_secs(2), |t| {
            t.contains("ls -la")
        })
        .await;

    // Filtering by decision keeps the denial and hides the rest.
    let filter = browser.wait_for("select[data-filter=decision]").await;
    filter.select_by_value("deny").await.unwrap();
    let rows = browser.texts("#feed tbody tr").await;
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.contains("DENY")),
        "{rows:?}"
    );
    browser.screenshot("feed").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trajectory_view_shows_the_timeline_and_links_calls_to_results() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    let id = agent.trajectory_id().unwrap().to_string();
    let prompt = Payload::Prompt {
        role: PromptRole::User,
        content: "tidy the build directory".into(),
    };
    step(&mut agent, prompt).await;
    step(&mut agent, shell("ls -la")).await;
    let output = Payload::ShellCommandOutput {
        call_id: shell("ls -la").call_id().unwrap().to_string(),
        exit_code: 0,
        stdout: "Cargo.toml\nsrc\n".into(),
        stderr: String::new(),
    };
    step(&mut agent, output).await;
    let event = agent.event(shell("rm -rf /")).unwrap();
    let denied = agent.adjudicate(event).await.unwrap();
    assert_eq!(denied.decision, Decision::Deny);

    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go(&format!("#/trajectory/{id}")).await;
    browser.wait_for("#timeline tbody tr").await;
    let rows = browser.texts("#timeline tbody tr").await;
    let kinds: Vec<&str> = [
        "started",
        "prompt",
        "shell_command",
        "shell_command_output",
        "shell_command",
    ]
    .to_vec();
    assert_eq!(rows.len(), kinds.len(), "{rows:?}");
    for (row, kind) in rows.iter().zip(&kinds) {
        assert!(row.contains(kind), "{row} is not {kind}");
    }
    assert!(rows[1].contains("tidy the build directory"));
    assert!(
        rows[2].contains("$ ls -la") && rows[2].contains("result: step 3"),
        "{}",
        rows[2]
    );
    assert!(rows[3].contains("answers step 2"), "{}", rows[3]);
    assert!(
        rows[4].contains("DENY") && rows[4].contains("destructive"),
        "{}",
        rows[4]
    );
    let deny_rows = browser.texts("#timeline tr.deny").await;
    assert_eq!(deny_rows.len(), 1);
    // The agent's decision id and the policy revision, to trace its log here.
    let decision_id = denied.decision_id.unwrap();
    let revision = denied.policy_revision.unwrap();
    assert!(
        deny_rows[0].contains(&format!("decision {decision_id}"))
            && deny_rows[0].contains(&format!("policies {}", &revision[..12])),
        "{}",
        deny_rows[0]
    );
    let state = browser.texts(".card.kv").await.join(" ");
    assert!(
        state.contains("session-7") && state.contains("1 / 0"),
        "{state}"
    );
    browser.click("#step-2 a").await;
    let focused = browser.run("arguments[0](document.activeElement.id)").await;
    assert_eq!(focused, "step-3", "the call's link leads to its result");
    browser.screenshot("trajectory").await;
    server.stop().await;
}

type Waiting =
    tokio::task::JoinHandle<Result<sondera_store::ApprovalRecord, sondera_harness::HarnessError>>;

/// Opens the approvals page, then escalates a call and has the agent wait
/// for an operator: the card must appear without a reload.
async fn pending_card(browser: &Browser, mut agent: RemoteHarness) -> Waiting {
    browser.go("#/approvals").await;
    browser.wait_for("#approvals-title").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let event_id = escalate(&mut agent).await;
    let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
    browser.wait_for("article[data-approval]").await;
    waiting
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deciding_in_the_page_settles_the_waiting_tool_call() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;

    for (button, approved) in [("Approve once", true), ("Deny", false)] {
        let waiting = pending_card(&browser, agent(&server).await).await;
        let card = browser.texts("article[data-approval]").await.join("\n");
        assert!(
            card.contains("Command\nterraform apply -auto-approve"),
            "{card}"
        );
        let analysis = browser
            .text_when("dl.analysis", Duration::from_secs(5), |t| {
                t.contains("Programs")
            })
            .await;
        assert!(analysis.contains("Programs\nterraform"), "{analysis}");
        assert!(
            card.contains("infra-apply")
                && card.contains("Applying infrastructure changes needs an operator"),
            "{card}"
        );
        if approved {
            browser.screenshot("approvals").await;
        }
        let buttons = browser
            .client
            .find_all(Locator::Css("article[data-approval] button"))
            .await
            .unwrap();
        let mut clicked = false;
        for candidate in buttons {
            if candidate.text().await.unwrap() == button {
                candidate.click().await.unwrap();
                clicked = true;
                break;
            }
        }
        assert!(clicked, "no {button} button");
        let outcome = tokio::time::timeout(Duration::from_secs(10), waiting)
            .await
            .expect("the waiting call was settled")
            .unwrap()
            .unwrap();
        assert_eq!(outcome.approved(), approved, "{button}");
        browser.nothing_waiting().await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_nobody_approves_in_time_stays_blocked() {
    let server = start_server(Duration::from_secs(2)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let waiting = pending_card(&browser, agent(&server).await).await;
    let outcome = waiting.await.unwrap().unwrap();
    assert!(!outcome.approved(), "{:?}", outcome.state);
    browser.nothing_waiting().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_cannot_sign_in_nor_a_forged_request_decide() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::open(&server).await;
    browser.sign_in(ACME).await;
    let error = browser
        .text_when("#sign-in-error", Duration::from_secs(5), |t| !t.is_empty())
        .await;
    assert!(error.contains("operator token"), "{error}");

    // Signed in as an operator, a change without the page's CSRF header is refused.
    browser.sign_in(ACME_OPS).await;
    browser.wait_for("#who span").await;
    let waiting = pending_card(&browser, agent(&server).await).await;
    let approval_id = browser
        .wait_for("article[data-approval]")
        .await
        .attr("data-approval")
        .await
        .unwrap()
        .unwrap();
    let forged = browser
        .run(&format!(
            "const done = arguments[0]; fetch('/v1/approvals/{approval_id}/decision', {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: JSON.stringify({{decision: 'once'}})}}).then(r => done(r.status));"
        ))
        .await;
    assert_eq!(forged, 403);
    let cookie_visible = browser
        .run("arguments[0](document.cookie.includes('sondera_session'))")
        .await;
    assert_eq!(cookie_visible, false, "the session cookie is HttpOnly");
    let by_agent = connection(server.grpc, Some(ACME))
        .decide(&approval_id, sondera_model::Approval::Once, None)
        .await
        .unwrap_err();
    assert!(
        by_agent.to_string().contains("PermissionDenied"),
        "{by_agent}"
    );
    waiting.abort();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenants_operator_sees_nothing_of_acme() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    let waiting_event = escalate(&mut agent).await;
    let opened = connection(server.grpc, Some(ACME));
    let request = sondera_proto::v1::RequestApprovalRequest {
        trajectory_id: agent.trajectory_id().unwrap().to_string(),
        event_id: waiting_event,
        timeout_seconds: 0,
    };
    opened
        .client()
        .request_approval(opened.request(request))
        .await
        .unwrap();

    let browser = Browser::signed_in(&server, GLOBEX_OPS).await;
    browser.go("#/approvals").await;
    browser.nothing_waiting().await;
    browser.go("#/feed").await;
    browser.wait_for("#feed tbody").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    step(&mut agent, shell("rm -rf /")).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(
        browser.texts("#feed tbody tr").await.is_empty(),
        "globex sees acme's events"
    );
    browser.go("#/agents").await;
    browser.wait_for("#agents-title").await;
    assert!(browser.texts("article[data-agent]").await.is_empty());
    let id = agent.trajectory_id().unwrap().to_string();
    browser.go(&format!("#/trajectory/{id}")).await;
    let error = browser
        .text_when("main .error", Duration::from_secs(5), |t| !t.is_empty())
        .await;
    assert!(error.contains("not recorded"), "{error}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_policies_and_charts_show_the_tenants_records() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    step(&mut agent, shell("ls")).await;
    step(&mut agent, shell("rm -rf /")).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;

    browser.go("#/agents").await;
    let card = browser
        .text_when("article[data-agent]", Duration::from_secs(5), |t| {
            t.contains("coder")
        })
        .await;
    assert!(
        card.contains("Trajectories\n1") || card.contains("Trajectories 1"),
        "{card}"
    );
    browser.screenshot("agents").await;

    browser.go("#/policies").await;
    let row = browser
        .text_when("tr[data-policy]", Duration::from_secs(5), |t| {
            t.contains("destructive-delete-outside-workspace")
        })
        .await;
    assert!(row.ends_with('1'), "one denial counted: {row}");
    let escalating = browser
        .text_when("tr[data-policy]", Duration::from_secs(5), |t| {
            t.contains("infra-apply")
        })
        .await;
    assert!(escalating.contains("forbid, escalates"), "{escalating}");
    let permit = browser
        .text_when("tr[data-policy]", Duration::from_secs(5), |t| {
            t.contains("base-default-permit")
        })
        .await;
    assert!(permit.contains("permit"), "{permit}");
    let shadow = browser
        .text_when("#shadow li", Duration::from_secs(5), |t| !t.is_empty())
        .await;
    assert!(
        shadow.contains("trial-no-listing would have denied 1 steps"),
        "{shadow}"
    );
    browser.screenshot("policies").await;
    // A count leads to the trajectories behind it.
    browser
        .click("tr[data-policy='destructive-delete-outside-workspace'] a")
        .await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.contains("coder")
        })
        .await;

    browser.go("#/charts").await;
    browser.wait_for("#latency svg").await;
    let label = browser
        .wait_for(".chart svg[aria-label^=Decisions]")
        .await
        .attr("aria-label")
        .await
        .unwrap()
        .unwrap();
    assert!(label.contains("1 denied"), "{label}");
    let axis = browser.texts(".chart .y-axis text").await;
    assert!(
        axis.contains(&"0".to_string()) && axis.contains(&"steps".to_string()),
        "{axis:?}"
    );
    let buckets = browser.texts(".chart text.bucket").await;
    assert_eq!(buckets.len(), 12, "{buckets:?}");
    assert!(
        buckets.iter().all(|b| b.contains('–')),
        "each bucket names its range: {buckets:?}"
    );
    // So does a bar: the denials of the last bucket.
    let href = browser
        .run("arguments[0](document.querySelector(\"a[data-bucket='11'][data-decision='denied']\").getAttribute('href'))")
        .await;
    let href = href.as_str().unwrap().to_string();
    assert!(
        href.contains("decision=deny") && href.contains("since="),
        "{href}"
    );
    let latency = browser.texts("#latency p").await.join(" ");
    assert!(latency.contains("adjudications"), "{latency}");
    browser.screenshot("charts").await;

    // The keyboard alone moves through the page: from the skip link, Tab
    // reaches the first view, and Enter follows it.
    browser
        .run("arguments[0](document.querySelector('.skip').focus())")
        .await;
    let tab = fantoccini::key::Key::Tab.to_string();
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys(&tab)
        .await
        .unwrap();
    let focused = browser
        .run("arguments[0](document.activeElement.textContent)")
        .await;
    assert!(
        focused.as_str().unwrap().starts_with("Approvals"),
        "{focused}"
    );
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys(&tab)
        .await
        .unwrap();
    let enter = fantoccini::key::Key::Enter.to_string();
    browser
        .client
        .active_element()
        .await
        .unwrap()
        .send_keys(&enter)
        .await
        .unwrap();
    browser.wait_for("#feed-title").await;
    browser.go(&href).await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.contains("coder")
        })
        .await;
    server.stop().await;
}

/// A page served on another port of this host, as another dev server
/// would: the request head the browser sent it, once it has one.
async fn another_port() -> (u16, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = vec![0u8; 8192];
            let n = socket.read(&mut head).await.unwrap();
            let head = String::from_utf8_lossy(&head[..n]).into_owned();
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi")
                .await;
            if head.starts_with("GET / ") {
                return head;
            }
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_port_of_this_host_gets_nothing_it_can_use() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let (port, seen) = another_port().await;
    browser
        .client
        .goto(&format!("http://127.0.0.1:{port}/"))
        .await
        .unwrap();
    let head = tokio::time::timeout(Duration::from_secs(10), seen)
        .await
        .unwrap()
        .unwrap();
    assert!(!head.contains(ACME_OPS), "the token never leaves: {head}");
    // Cookies are not kept apart by port: the browser sends the session's.
    let cookie = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("cookie: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    let id = cookie
        .split("; ")
        .find_map(|c| c.strip_prefix("sondera_session="))
        .unwrap_or_default()
        .to_string();
    assert!(
        !id.is_empty(),
        "the session cookie reaches the other port: {head}"
    );
    // Replayed from there, it reads nothing: the page key stayed with the page.
    for path in ["/v1/approvals", "/v1/trajectories", "/session"] {
        let request = format!(
            "GET {path} HTTP/1.1\r\nhost: {}\r\ncookie: {cookie}\r\nconnection: close\r\n\r\n",
            server.http
        );
        assert_eq!(send(server.http, &request).await.status, 401, "{path}");
    }
    let as_bearer = http(server.http, "GET", "/v1/approvals", Some(&id), None).await;
    assert_eq!(as_bearer.status, 401);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_in_one_tab_signs_out_the_other() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let first = browser.client.window().await.unwrap();
    let second = browser.client.new_window(true).await.unwrap().handle;
    browser
        .client
        .switch_to_window(second.clone())
        .await
        .unwrap();
    browser.go("#/feed").await;
    browser.wait_for("#feed tbody").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The second tab follows the live feed.
    let mut agent = agent(&server).await;
    step(&mut agent, shell("rm -rf ~")).await;
    browser
        .text_when("#feed tr.deny", Duration::from_secs(5), |t| {
            t.contains("rm -rf")
        })
        .await;

    browser.client.switch_to_window(first).await.unwrap();
    browser.click("#who button").await;
    browser.wait_for("#token").await;
    browser.client.switch_to_window(second).await.unwrap();
    browser.wait_for("#token").await;
    browser.screenshot("signed-out-second-tab").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_payload_kind_is_shown_by_its_own_fields() {
    use sondera_model::{Actor, FileOperationKind};
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    let id = agent.trajectory_id().unwrap().to_string();
    let url = "https://docs.example.org/guide";
    let steps: Vec<(Payload, &str)> = vec![
        (
            Payload::Snapshot {
                working_dir: Some("/work/app".into()),
                open_files: vec!["src/main.rs".into()],
                git_branch: Some("feature/x".into()),
                variables: Default::default(),
            },
            "in /work/app on feature/x, open: src/main.rs",
        ),
        (
            Payload::Thought {
                content: "read the guide first".into(),
            },
            "read the guide first",
        ),
        (
            Payload::ToolCall {
                call_id: "t1".into(),
                tool: "lookup_ticket".into(),
                arguments: serde_json::json!({"ticket": "OPS-12"}),
            },
            r#"lookup_ticket {"ticket":"OPS-12"}"#,
        ),
        (
            Payload::ToolOutput {
                call_id: "t1".into(),
                success: true,
                output: serde_json::json!({"title": "Disk full"}),
                error: None,
            },
            r#"returned {"title":"Disk full"}"#,
        ),
        (
            Payload::WebFetch {
                call_id: "w1".into(),
                url: url.into(),
                prompt: "summarise".into(),
                method: Some("POST".into()),
                body: Some("q=disk".into()),
            },
            "POST https://docs.example.org/guide\nq=disk",
        ),
        (
            Payload::WebFetchOutput {
                call_id: "w1".into(),
                url: url.into(),
                code: 200,
                result: "Free space with du and ncdu.".into(),
            },
            "200 https://docs.example.org/guide: Free space with du and ncdu.",
        ),
        (
            Payload::FileOperation {
                call_id: "f1".into(),
                operation: FileOperationKind::Write,
                path: "notes.md".into(),
                content: Some("# Disk\n".into()),
                old_content: None,
            },
            "write notes.md\n# Disk",
        ),
        (
            Payload::FileOperationResult {
                call_id: "f1".into(),
                success: false,
                content: None,
                error: Some("read-only file system".into()),
            },
            "failed: read-only file system",
        ),
        (
            Payload::Suspended {
                reason: "waiting for the user".into(),
            },
            "suspended: waiting for the user",
        ),
        (
            Payload::Resumed {
                resumed_by: Actor::human("ana"),
            },
            "resumed by human:ana",
        ),
    ];
    for (payload, _) in &steps {
        step(&mut agent, payload.clone()).await;
    }
    agent.finalize(Some("disk cleaned".into())).await.unwrap();
    let mut failing = harness(server.grpc, Some(ACME));
    failing.initialize(None, None).await.unwrap();
    let failed_id = failing.trajectory_id().unwrap().to_string();
    failing.fail("the model timed out").await.unwrap();

    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go(&format!("#/trajectory/{id}")).await;
    browser.wait_for("#timeline tbody tr").await;
    let cells = browser
        .texts("#timeline tbody tr td:nth-child(5) pre")
        .await;
    assert!(
        cells[0].contains("started (session session-7)"),
        "{}",
        cells[0]
    );
    for ((_, shown), cell) in steps.iter().zip(&cells[1..]) {
        assert_eq!(cell, shown);
    }
    assert_eq!(cells.last().unwrap(), "completed: disk cleaned");
    browser.go(&format!("#/trajectory/{failed_id}")).await;
    browser
        .text_when("#timeline tbody tr", Duration::from_secs(5), |t| {
            t.contains("failed: the model timed out")
        })
        .await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_shows_what_an_edit_writes_and_how_long_it_has_waited() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go("#/approvals").await;
    browser.nothing_waiting().await;
    let mut agent = agent(&server).await;
    let edit = Payload::FileOperation {
        call_id: "e1".into(),
        operation: sondera_model::FileOperationKind::Edit,
        path: "~/.bashrc".into(),
        content: Some(
            "export PATH=$HOME/bin:$PATH\nalias deploy='./scripts/deploy.sh --env prod'".into(),
        ),
        old_content: Some("export PATH=$HOME/bin:$PATH".into()),
    };
    let event = agent.event(edit).unwrap();
    let event_id = event.event_id.clone();
    assert_eq!(
        agent.adjudicate(event).await.unwrap().decision,
        Decision::Escalate
    );
    let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
    let card = browser
        .text_when("article[data-approval]", Duration::from_secs(10), |t| {
            t.contains("bashrc")
        })
        .await;
    assert!(card.contains("edit ~/.bashrc"), "{card}");
    assert!(
        card.contains("Replaces\nexport PATH=$HOME/bin:$PATH"),
        "{card}"
    );
    assert!(
        card.contains("alias deploy='./scripts/deploy.sh --env prod'"),
        "the line being written: {card}"
    );
    browser
        .text_when(".clock", Duration::from_secs(5), |t| {
            t.starts_with("waiting ") && t.contains("left before it is denied")
        })
        .await;
    browser.screenshot("approval-edit").await;
    waiting.abort();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_change_in_place_and_a_typed_reason_stays() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let first = pending_card(&browser, agent(&server).await).await;
    let field = browser.wait_for("article[data-approval] input").await;
    field.send_keys("checked the plan with Bo").await.unwrap();

    // A second approval arrives, then is settled elsewhere: the first card,
    // and what is typed in it, are left alone.
    let mut other = agent(&server).await;
    let event_id = escalate(&mut other).await;
    let second = tokio::spawn(async move { other.ask_operator(&event_id, None).await });
    let deadline = Instant::now() + Duration::from_secs(5);
    while browser.texts("article[data-approval]").await.len() < 2 {
        assert!(Instant::now() < deadline, "the second card never appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pending = http(
        server.http,
        "GET",
        "/v1/approvals?status=pending",
        Some(ACME_OPS),
        None,
    )
    .await
    .json();
    let newest = pending["items"][0]["id"].as_str().unwrap().to_string();
    connection(server.grpc, Some(ACME_OPS))
        .decide(&newest, sondera_model::Approval::Deny, None)
        .await
        .unwrap();
    assert!(!second.await.unwrap().unwrap().approved());
    let deadline = Instant::now() + Duration::from_secs(5);
    while browser.texts("article[data-approval]").await.len() != 1 {
        assert!(Instant::now() < deadline, "the settled card stayed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let typed = browser
        .run("arguments[0](document.querySelector('article[data-approval] input').value)")
        .await;
    assert_eq!(typed, "checked the plan with Bo");
    // The badge is the server's count, asked again after each change.
    browser
        .text_when("#pending-count", Duration::from_secs(5), |t| t == "1")
        .await;

    browser.click("article[data-approval] button.approve").await;
    assert!(first.await.unwrap().unwrap().approved());
    browser.nothing_waiting().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_view_fits_a_phone_without_scrolling_sideways() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    let id = agent.trajectory_id().unwrap().to_string();
    step(&mut agent, shell("rm -rf /")).await;
    step(
        &mut agent,
        shell("cargo build --release --all-targets --locked"),
    )
    .await;
    let waiting = pending_card(&Browser::signed_in(&server, ACME_OPS).await, agent).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.client.set_window_size(390, 844).await.unwrap();
    let width = browser.run("arguments[0](window.innerWidth)").await;
    assert!(width.as_u64().unwrap() <= 390, "{width}");
    for (view, ready) in [
        ("#/approvals", "article[data-approval]"),
        ("#/feed", "#feed"),
        ("#/agents", ".grid"),
        ("#/policies", "table"),
        ("#/charts", ".chart"),
        ("#/trajectories", "#trajectories tbody tr"),
        (&format!("#/trajectory/{id}")[..], "#timeline tbody tr"),
    ] {
        browser.go(view).await;
        browser.wait_for(ready).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let overflow = browser
            .run("arguments[0](document.documentElement.scrollWidth - window.innerWidth)")
            .await;
        let name = view.trim_start_matches("#/").split('/').next().unwrap();
        browser.screenshot(&format!("phone-{name}")).await;
        assert!(
            overflow.as_i64().unwrap() <= 0,
            "{view} is {overflow} px too wide"
        );
    }
    // The trajectory's step column is readable: not a few letters a line.
    let step_width = browser
        .run("arguments[0](document.querySelector('#timeline tbody tr td:nth-child(5)').getBoundingClientRect().width)")
        .await;
    assert!(step_width.as_f64().unwrap() > 300.0, "{step_width}");
    waiting.abort();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_always_asks_first_and_a_lost_server_is_said_plainly() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let waiting = pending_card(&browser, agent(&server).await).await;
    let always = "article[data-approval] .decide button:last-child";
    browser.click(always).await;
    let question = browser.client.get_alert_text().await.unwrap();
    assert!(
        question.contains("from now on") && question.contains("Approve always?"),
        "{question}"
    );
    browser.client.dismiss_alert().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        browser.texts("article[data-approval]").await.len(),
        1,
        "nothing decided"
    );
    browser.click(always).await;
    browser.client.accept_alert().await.unwrap();
    let outcome = waiting.await.unwrap().unwrap();
    assert!(outcome.approved(), "{:?}", outcome.state);

    server.stop().await;
    browser.go("#/policies").await;
    let said = browser
        .text_when("#view", Duration::from_secs(10), |t| !t.is_empty())
        .await;
    assert!(said.contains("cannot be reached"), "{said}");
    assert!(!said.contains("Failed to fetch"), "{said}");
}

/// Writes `trajectories` recorded trajectories of acme straight into the
/// store, each `steps` shell steps long; every `deny_every`-th trajectory
/// ends with a step denied by `no-force-push`. Agents are `agent-0` to
/// `agent-4` by turns. Returns the ids, oldest first.
async fn recorded(
    store: &MemoryStore,
    trajectories: usize,
    steps: usize,
    deny_every: usize,
) -> Vec<String> {
    use sondera_model::{Adjudicated, Agent, Event, Mode, PolicyMetadata, TrajectoryState};
    use sondera_store::{EventLog, StepRecord, TenantId, TrajectoryStatus};
    let tenant = TenantId::new("acme").unwrap();
    let base = chrono::Utc::now() - chrono::Duration::hours(2);
    let mut ids = Vec::new();
    for t in 0..trajectories {
        let agent = Agent::new(format!("agent-{}", t % 5), "test");
        let id = format!("t{t:05}");
        let at = base + chrono::Duration::milliseconds(t as i64 * 10);
        let mut state = TrajectoryState::default();
        let mut started = Event::new(
            &id,
            &agent,
            Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: Some(format!("s{t}")),
            },
        );
        started.timestamp = at;
        store
            .append(StepRecord {
                tenant: &tenant,
                event: &started,
                seq: 0,
                adjudication: None,
                status: TrajectoryStatus::Running,
                state: &state,
            })
            .await
            .unwrap();
        for seq in 1..=steps {
            let denied = deny_every > 0 && t % deny_every == 0 && seq == steps;
            let command = if denied {
                format!("git push --force origin release-{t}")
            } else {
                format!("echo step {seq} of {id}")
            };
            let payload = shell(&command);
            let decision = if denied {
                Decision::Deny
            } else {
                Decision::Allow
            };
            state.record(&payload, decision);
            let mut event = Event::new(&id, &agent, payload);
            event.timestamp = at;
            let mut verdict = if denied {
                Adjudicated::deny(Mode::Govern, "force pushes are not allowed")
            } else {
                Adjudicated::allow(Mode::Govern, "permitted")
            };
            if denied {
                verdict.policies = vec![PolicyMetadata {
                    policy_id: "no-force-push".into(),
                    description: None,
                    escalate: false,
                    escalate_arg: None,
                    annotations: Default::default(),
                }];
            }
            store
                .append(StepRecord {
                    tenant: &tenant,
                    event: &event,
                    seq: seq as u64,
                    adjudication: Some(&verdict),
                    status: TrajectoryStatus::Running,
                    state: &state,
                })
                .await
                .unwrap();
        }
        ids.push(id);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_trajectories_are_listed_a_page_at_a_time_and_filtered() {
    let store = Arc::new(MemoryStore::new());
    recorded(&store, 2000, 2, 100).await;
    let server = start_server_on(store, Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;

    browser.go("#/trajectories").await;
    let first = browser.texts("#trajectories tbody tr").await;
    let first = if first.is_empty() {
        browser.wait_for("#trajectories tbody tr").await;
        browser.texts("#trajectories tbody tr").await
    } else {
        first
    };
    assert_eq!(first.len(), 50, "one page");
    assert!(first[0].starts_with("t01999"), "newest first: {}", first[0]);
    browser.screenshot("trajectories").await;
    browser.click(".paging a").await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.starts_with("t01949")
        })
        .await;
    browser.click(".paging a:first-child").await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.starts_with("t01999")
        })
        .await;

    // Filtered on the server: agent, decision, policy, text, together.
    browser
        .go("#/trajectories?agent=agent-0&decision=deny&policy=no-force-push")
        .await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.starts_with("t01900")
        })
        .await;
    let rows = browser.texts("#trajectories tbody tr").await;
    assert_eq!(rows.len(), 20, "every hundredth of 2000: {rows:?}");
    assert!(rows.iter().all(|r| r.contains("agent-0")), "{rows:?}");
    browser.go("#/trajectories?text=RELEASE-1200").await;
    // The list filtered above holds t01200 too: wait for the one found.
    let found = browser
        .texts_when("#trajectories tbody tr", Duration::from_secs(5), |rows| {
            rows.len() == 1 && rows[0].starts_with("t01200")
        })
        .await;
    assert!(found[0].contains("1 / 0"), "{found:?}");
    // The form puts the filters in the address.
    let field = browser
        .wait_for("#trajectory-filters input[name=text]")
        .await;
    field.clear().await.unwrap();
    field.send_keys("no such words").await.unwrap();
    browser.click("#trajectory-filters button").await;
    browser
        .text_when("#no-trajectories", Duration::from_secs(5), |t| {
            t.contains("No recorded trajectory matches")
        })
        .await;

    // The agents' counts come from the server, over every trajectory, and
    // lead to the trajectories behind them.
    browser.go("#/agents").await;
    let card = browser
        .text_when("article[data-agent]", Duration::from_secs(5), |t| {
            t.starts_with("agent-0")
        })
        .await;
    assert!(
        card.contains("Trajectories\n400") || card.contains("Trajectories 400"),
        "{card}"
    );
    assert!(card.contains("800"), "steps judged over all 400: {card}");
    browser
        .click("article[data-agent='agent-0'] a[href*='decision=deny']")
        .await;
    browser
        .text_when("#trajectories tbody tr", Duration::from_secs(5), |t| {
            t.starts_with("t01900")
        })
        .await;
    assert_eq!(browser.texts("#trajectories tbody tr").await.len(), 20);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_thousand_step_trajectory_is_shown_a_page_at_a_time() {
    let store = Arc::new(MemoryStore::new());
    let ids = recorded(&store, 1, 3000, 0).await;
    let server = start_server_on(store, Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go(&format!("#/trajectory/{}", ids[0])).await;
    browser.wait_for("#timeline tbody tr").await;
    assert_eq!(browser.texts("#timeline tbody tr").await.len(), 250);
    let more = browser
        .text_when("#more-steps", Duration::from_secs(5), |t| !t.is_empty())
        .await;
    assert!(more.contains("250 more of 2751"), "{more}");
    browser.click("#more-steps").await;
    assert_eq!(browser.texts("#timeline tbody tr").await.len(), 500);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_and_fifty_approvals_are_paged_and_all_counted() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    let trajectory = agent.trajectory_id().unwrap().to_string();
    for _ in 0..150 {
        let event_id = escalate(&mut agent).await;
        let body = format!(r#"{{"trajectory_id": "{trajectory}", "event_id": "{event_id}"}}"#);
        let opened = http(
            server.http,
            "POST",
            "/v1/approvals",
            Some(ACME),
            Some(&body),
        )
        .await;
        assert_eq!(opened.status, 200, "{}", opened.body);
    }
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go("#/approvals").await;
    browser
        .text_when("#pending-count", Duration::from_secs(5), |t| t == "150")
        .await;
    browser.wait_for("article[data-approval]").await;
    assert_eq!(browser.texts("article[data-approval]").await.len(), 50);
    browser.click("#more-approvals").await;
    browser.click("#more-approvals").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while browser.texts("article[data-approval] h3").await.len() < 150 {
        assert!(Instant::now() < deadline, "the third page never came");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hidden = browser
        .run("arguments[0](document.getElementById('more-approvals').hidden)")
        .await;
    assert_eq!(hidden, serde_json::json!(true), "nothing more to show");
    // No card fetched its trajectory: that waits until its history is opened.
    browser.screenshot("approvals-paged").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_says_whether_the_agent_is_still_waiting() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let waiting = pending_card(&browser, agent(&server).await).await;
    browser
        .text_when(
            "article[data-approval] .waiting",
            Duration::from_secs(10),
            |t| t.contains("The agent is waiting for this answer"),
        )
        .await;
    waiting.abort();
    browser
        .text_when(
            "article[data-approval] .waiting",
            Duration::from_secs(15),
            |t| t.contains("stopped waiting"),
        )
        .await;
    server.stop().await;
}

/// The number of live streams the server has open.
fn open_streams(server: &Running) -> u64 {
    let metrics = server.governance.metrics().render();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("sondera_active_streams "))
        .and_then(|n| n.trim().parse::<f64>().ok())
        .map_or(0, |n| n as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_share_one_stream_and_the_feed_resumes_without_losing_steps() {
    let server = start_server(Duration::from_secs(300)).await;
    let mut agent = agent(&server).await;
    step(&mut agent, shell("echo before the page opened")).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    browser.go("#/feed").await;
    // What happened before the page opened is there.
    browser
        .text_when("#feed tbody tr", Duration::from_secs(5), |t| {
            t.contains("before the page opened")
        })
        .await;

    // Eight tabs: all load, and the server serves one stream for them all.
    let first = browser.client.window().await.unwrap();
    for _ in 0..7 {
        let tab = browser.client.new_window(true).await.unwrap();
        browser.client.switch_to_window(tab.handle).await.unwrap();
        browser.go("#/feed").await;
        browser.wait_for("#feed tbody tr").await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(open_streams(&server), 1, "one stream for eight tabs");
    step(&mut agent, shell("echo seen in every tab")).await;
    browser
        .text_when("#feed tbody tr", Duration::from_secs(5), |t| {
            t.contains("seen in every tab")
        })
        .await;
    browser.client.switch_to_window(first).await.unwrap();
    browser
        .text_when("#feed tbody tr", Duration::from_secs(5), |t| {
            t.contains("seen in every tab")
        })
        .await;

    // The stream drops; steps happen meanwhile; it resumes after the last
    // one seen and nothing is missing or doubled.
    browser.run("arguments[0](stopFollowing())").await;
    for i in 0..5 {
        step(&mut agent, shell(&format!("echo while away {i}"))).await;
    }
    browser.run("arguments[0](follow())").await;
    browser
        .text_when("#feed tbody tr", Duration::from_secs(5), |t| {
            t.contains("while away 4")
        })
        .await;
    let rows = browser.texts("#feed tbody tr").await;
    for i in 0..5 {
        let needle = format!("while away {i}");
        assert_eq!(
            rows.iter().filter(|r| r.contains(&needle)).count(),
            1,
            "{needle} once: {rows:?}"
        );
    }

    // A burst of 2000 steps: the feed keeps its newest 500, newest on top.
    let events: Vec<_> = (0..2000)
        .map(|i| agent.event(shell(&format!("echo burst {i}"))).unwrap())
        .collect();
    for chunk in events.chunks(100) {
        agent.adjudicates(chunk.to_vec()).await.unwrap();
    }
    browser
        .text_when("#feed tbody tr", Duration::from_secs(20), |t| {
            t.contains("burst 1999")
        })
        .await;
    let rows = browser.texts("#feed tbody tr").await;
    assert_eq!(rows.len(), 500);
    assert!(rows[0].contains("burst 1999"), "{}", rows[0]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standing_grant_is_listed_with_who_granted_it_and_can_be_revoked() {
    let server = start_server(Duration::from_secs(300)).await;
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    let waiting = pending_card(&browser, agent(&server).await).await;
    browser
        .click("article[data-approval] .decide button:last-child")
        .await;
    browser.client.accept_alert().await.unwrap();
    assert!(waiting.await.unwrap().unwrap().approved());

    browser.go("#/agents").await;
    let grant = browser
        .text_when(
            "article[data-agent] [data-grant]",
            Duration::from_secs(5),
            |t| t.contains("shell: terraform apply"),
        )
        .await;
    assert!(grant.contains("granted by ana"), "{grant}");
    browser.screenshot("agents-grants").await;
    browser.click("[data-grant] button").await;
    let question = browser.client.get_alert_text().await.unwrap();
    assert!(question.contains("asked about again"), "{question}");
    browser.client.accept_alert().await.unwrap();
    browser
        .text_when("article[data-agent] .grants", Duration::from_secs(5), |t| {
            t.contains("None")
        })
        .await;
    let listed = http(
        server.http,
        "GET",
        "/v1/agents/coder/grants",
        Some(ACME_OPS),
        None,
    )
    .await;
    assert_eq!(listed.body, r#"{"grants":[]}"#);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notifications_link_leads_to_its_approval() {
    let server = start_server(Duration::from_secs(300)).await;
    let tenant = sondera_store::TenantId::new("acme").unwrap();
    let mut opened = Vec::new();
    for _ in 0..2 {
        let mut agent = agent(&server).await;
        let event_id = escalate(&mut agent).await;
        let trajectory = agent.trajectory_id().unwrap().to_string();
        let approval = server
            .governance
            .request_approval(&tenant, &trajectory, &event_id, None)
            .await
            .unwrap();
        opened.push(approval.id);
    }
    let browser = Browser::signed_in(&server, ACME_OPS).await;
    // The newest is listed first; the link to the older one puts it first, marked.
    browser.go(&format!("#/approvals/{}", opened[0])).await;
    browser.wait_for("article.chosen").await;
    let first = browser
        .run("arguments[0](document.querySelector('#approval-cards article').dataset.approval)")
        .await;
    assert_eq!(first, opened[0]);
    let marked = browser
        .run("arguments[0](document.querySelectorAll('article.chosen').length)")
        .await;
    assert_eq!(marked, 1);

    connection(server.grpc, Some(ACME_OPS))
        .decide(&opened[1], sondera_model::Approval::Deny, None)
        .await
        .unwrap();
    browser.go(&format!("#/approvals/{}", opened[1])).await;
    let said = browser
        .text_when("#status", Duration::from_secs(5), |t| t.contains("already"))
        .await;
    assert_eq!(said, format!("Approval {} is already decided.", opened[1]));
    server.stop().await;
}
