//! Session scopes under a real runner: one trajectory per session, leases,
//! eviction, quarantine and close.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sondera_adk::{CloseError, SonderaHarnessPlugin};
use sondera_harness::Harness;
use sondera_store::{Records, TrajectoryStatus, TrajectoryStore};
use support::*;

fn echo(sondera: &SonderaHarnessPlugin) -> Arc<dyn adk_core::Agent> {
    llm(sondera, "coder", ScriptedModel::planned(|_| vec![]), vec![])
}

/// A fixture whose `run_shell` tool waits for a permit before it returns.
fn held(
    capacity: usize,
) -> (
    Arc<Fixture>,
    Arc<RecordingTool>,
    Arc<tokio::sync::Semaphore>,
) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let shell = RecordingTool::held("run_shell", "command", gate.clone());
    let tool = shell.clone();
    let fixture = Fixture::new(
        move |b| b.max_session_scopes(capacity),
        move |sondera| {
            let model = ScriptedModel::planned(|text| match text {
                "wait" => vec![(Some("w1"), "run_shell", json!({"command": "sleep 1"}))],
                _ => vec![],
            });
            llm(sondera, "coder", model, vec![tool])
        },
    );
    (Arc::new(fixture), shell, gate)
}

async fn until(check: impl Fn() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition never held");
}

async fn status(fixture: &Fixture, trajectory_id: &str) -> TrajectoryStatus {
    fixture
        .store
        .trajectory(&sondera_store::TenantId::default(), trajectory_id)
        .await
        .unwrap()
        .unwrap()
        .status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_share_their_sessions_trajectory_and_sessions_never_share_one() {
    let fixture = Fixture::new(|b| b, echo);
    fixture.turn("ana", "s1", "first").await;
    fixture.turn("ana", "s1", "second").await;
    let (a, b) = tokio::join!(
        fixture.turn("ana", "s2", "from s2"),
        fixture.turn("bo", "s2", "from bo"),
    );
    assert!(a.errors.is_empty() && b.errors.is_empty(), "{a:?} {b:?}");

    let s1 = fixture.trajectory("ana", "s1").await;
    assert_eq!(kinds(&s1).iter().filter(|k| **k == "started").count(), 1);
    assert_eq!(
        prompts(&s1, sondera_model::PromptRole::User),
        ["first", "second"]
    );
    let ana = fixture.trajectory("ana", "s2").await;
    let bo = fixture.trajectory("bo", "s2").await;
    assert_eq!(prompts(&ana, sondera_model::PromptRole::User), ["from s2"]);
    assert_eq!(prompts(&bo, sondera_model::PromptRole::User), ["from bo"]);
    assert_ne!(ana[0].event.trajectory_id, bo[0].event.trajectory_id);
    assert_eq!(fixture.sondera.session_scopes(), 3);
    assert!(fixture.sondera.active_leases().is_empty());
}

#[tokio::test]
async fn the_least_recently_used_idle_session_is_ended_to_make_room() {
    let fixture = Fixture::new(|b| b.max_session_scopes(2), echo);
    fixture.turn("ana", "a", "hi").await;
    fixture.turn("ana", "b", "hi").await;
    fixture.turn("ana", "a", "again").await;
    let b = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "b"))
        .await
        .unwrap();
    fixture.turn("ana", "c", "hi").await;

    assert_eq!(fixture.sondera.session_scopes(), 2);
    assert_eq!(
        fixture
            .sondera
            .trajectory_id(&Fixture::key("ana", "b"))
            .await,
        None
    );
    assert_eq!(status(&fixture, &b).await, TrajectoryStatus::Completed);
    let a = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    assert_eq!(status(&fixture, &a).await, TrajectoryStatus::Running);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_with_running_invocations_are_never_evicted() {
    let (fixture, shell, gate) = held(1);
    let running = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.turn("ana", "a", "wait").await })
    };
    until(|| shell.runs() == 1).await;
    let leases = fixture.sondera.active_leases();
    assert_eq!(leases.len(), 1);
    assert_eq!(leases[0].session, Fixture::key("ana", "a"));

    let refused = fixture.turn("ana", "b", "hi").await;
    let error = refused.errors.join("\n");
    assert!(error.contains("all 1 session scopes are in use"), "{error}");
    assert!(error.contains("fixture-app/ana/a (invocation"), "{error}");

    gate.add_permits(1);
    let done = running.await.unwrap();
    assert!(done.errors.is_empty(), "{done:?}");
    let admitted = fixture.turn("ana", "b", "hi").await;
    assert!(admitted.errors.is_empty(), "{admitted:?}");
}

#[tokio::test]
async fn a_session_whose_trajectory_may_exist_unstarted_is_quarantined() {
    let fixture = Fixture::new(|b| b.max_session_scopes(1), echo);
    set(&fixture.switch.fail_started, true);
    let failed = fixture.turn("ana", "a", "hi").await;
    assert!(
        failed
            .errors
            .join("")
            .contains("could not start the trajectory"),
        "{failed:?}"
    );
    set(&fixture.switch.fail_started, false);

    let again = fixture.turn("ana", "a", "hi").await;
    assert!(
        again.errors.join("").contains("is quarantined"),
        "{again:?}"
    );
    // It keeps its capacity until its trajectory is ended, which cannot
    // happen for one whose start was never recorded.
    let other = fixture.turn("ana", "b", "hi").await;
    assert!(
        other
            .errors
            .join("")
            .contains("could not end the trajectory of idle session fixture-app/ana/a"),
        "{other:?}"
    );
    assert_eq!(fixture.sondera.session_scopes(), 1);
    match fixture.sondera.close().await {
        Err(CloseError::Finalize(failures)) => {
            assert_eq!(failures.len(), 1);
            assert_eq!(failures[0].0, Fixture::key("ana", "a"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_session_that_failed_to_end_is_cleared_by_a_later_eviction() {
    let fixture = Fixture::new(|b| b.max_session_scopes(1), echo);
    fixture.turn("ana", "a", "hi").await;
    let a = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    set(&fixture.switch.fail_completed, true);
    let refused = fixture.turn("ana", "b", "hi").await;
    assert!(
        refused.errors.join("").contains("the disk was unplugged"),
        "{refused:?}"
    );
    let quarantined = fixture.turn("ana", "a", "hi").await;
    assert!(
        quarantined.errors.join("").contains("is quarantined"),
        "{quarantined:?}"
    );

    set(&fixture.switch.fail_completed, false);
    let admitted = fixture.turn("ana", "b", "hi").await;
    assert!(admitted.errors.is_empty(), "{admitted:?}");
    assert_eq!(status(&fixture, &a).await, TrajectoryStatus::Completed);
    assert_eq!(
        fixture
            .sondera
            .trajectory_id(&Fixture::key("ana", "a"))
            .await,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_being_evicted_is_waited_for_then_started_afresh() {
    let fixture = Arc::new(Fixture::new(|b| b.max_session_scopes(2), echo));
    fixture.turn("ana", "a", "hi").await;
    fixture.turn("ana", "c", "hi").await;
    let old = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();

    set(&fixture.switch.hold_completed, true);
    let evicting = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.turn("ana", "b", "hi").await })
    };
    until(|| {
        fixture
            .switch
            .held
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
    })
    .await;
    let returning = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.turn("ana", "a", "back again").await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !returning.is_finished(),
        "it waits while the old scope is ending"
    );
    set(&fixture.switch.hold_completed, false);

    let (evicting, returning) = (evicting.await.unwrap(), returning.await.unwrap());
    assert!(evicting.errors.is_empty(), "{evicting:?}");
    assert!(returning.errors.is_empty(), "{returning:?}");
    assert_eq!(status(&fixture, &old).await, TrajectoryStatus::Completed);
    let new = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    assert_ne!(new, old);
    let events = fixture.events(&new).await;
    assert_eq!(
        prompts(&events, sondera_model::PromptRole::User),
        ["back again"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_waits_for_running_invocations_and_then_ends_every_session() {
    let (fixture, shell, gate) = held(8);
    fixture.turn("bo", "idle", "hi").await;
    let idle = fixture
        .sondera
        .trajectory_id(&Fixture::key("bo", "idle"))
        .await
        .unwrap();
    let running = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.turn("ana", "a", "wait").await })
    };
    until(|| shell.runs() == 1).await;

    match fixture.sondera.close().await {
        Err(CloseError::LeasesActive(leases)) => {
            assert_eq!(leases.0.len(), 1);
            assert!(leases.to_string().contains("fixture-app/ana/a"), "{leases}");
        }
        other => panic!("{other:?}"),
    }
    // A refused close changes nothing: new sessions start, and the running
    // invocation goes on to its next step.
    let accepted = fixture.turn("cy", "new", "hi").await;
    assert!(accepted.errors.is_empty(), "{accepted:?}");

    gate.add_permits(1);
    let finished = running.await.unwrap();
    assert!(finished.errors.is_empty(), "{finished:?}");
    let a = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    let new = fixture
        .sondera
        .trajectory_id(&Fixture::key("cy", "new"))
        .await
        .unwrap();
    fixture.sondera.close().await.unwrap();
    assert_eq!(fixture.sondera.session_scopes(), 0);
    for trajectory in [idle, a, new] {
        assert_eq!(
            status(&fixture, &trajectory).await,
            TrajectoryStatus::Completed
        );
    }
    let refused = fixture.turn("dee", "late", "hi").await;
    assert!(refused.errors.join("").contains("closing"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_waits_for_a_session_an_eviction_is_ending() {
    let fixture = Arc::new(Fixture::new(|b| b.max_session_scopes(1), echo));
    fixture.turn("ana", "a", "hi").await;
    let a = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    set(&fixture.switch.hold_completed, true);
    let evicting = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.turn("ana", "b", "hi").await })
    };
    until(|| {
        fixture
            .switch
            .held
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
    })
    .await;
    let closing = {
        let fixture = fixture.clone();
        tokio::spawn(async move { fixture.sondera.close().await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !closing.is_finished(),
        "close waits while a scope is ending"
    );
    set(&fixture.switch.hold_completed, false);
    closing.await.unwrap().unwrap();
    assert_eq!(status(&fixture, &a).await, TrajectoryStatus::Completed);
    let evicting = evicting.await.unwrap();
    assert!(evicting.errors.join("").contains("closing"), "{evicting:?}");
    assert_eq!(fixture.sondera.session_scopes(), 0);
}

#[tokio::test]
async fn close_ends_what_it_can_and_reports_the_rest() {
    let fixture = Fixture::new(|b| b, echo);
    fixture.turn("ana", "a", "hi").await;
    fixture.turn("ana", "b", "hi").await;
    let a = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "a"))
        .await
        .unwrap();
    let b = fixture
        .sondera
        .trajectory_id(&Fixture::key("ana", "b"))
        .await
        .unwrap();
    *fixture.switch.fail_trajectory.lock().unwrap() = Some(a.clone());

    let error = fixture.sondera.close().await.unwrap_err();
    assert!(error.to_string().contains("fixture-app/ana/a"), "{error}");
    assert!(!error.to_string().contains("fixture-app/ana/b"), "{error}");
    assert_eq!(status(&fixture, &b).await, TrajectoryStatus::Completed);
    assert_eq!(fixture.sondera.session_scopes(), 1);

    *fixture.switch.fail_trajectory.lock().unwrap() = None;
    fixture.sondera.close().await.unwrap();
    assert_eq!(status(&fixture, &a).await, TrajectoryStatus::Completed);
}

#[tokio::test]
async fn a_session_keeps_its_agent_tree() {
    let fixture = Fixture::new(|b| b, echo);
    fixture.turn("ana", "a", "hi").await;
    let other = fixture
        .sondera
        .root(llm(
            &fixture.sondera,
            "reviewer",
            ScriptedModel::planned(|_| vec![]),
            vec![],
        ))
        .unwrap();
    let turn = fixture
        .turn_with(&fixture.runner_for(other), "ana", "a", "hi")
        .await;
    let error = turn.errors.join("");
    assert!(
        error.contains("governed as the agent tree rooted at `coder`"),
        "{error}"
    );
    assert!(error.contains("runs `reviewer`"), "{error}");
}

#[tokio::test]
async fn a_factory_must_hand_out_fresh_scopes() {
    let store: Arc<dyn TrajectoryStore> = Arc::new(sondera_store::MemoryStore::new());
    let shared: sondera_adk::SharedHarness =
        Arc::new(tokio::sync::Mutex::new(Box::new(harness(store.clone()))));
    let reused = shared.clone();
    let fixture = Fixture::new(
        |_| SonderaHarnessPlugin::with_factory(move || Ok(reused.clone())),
        echo,
    );
    assert!(fixture.turn("ana", "a", "hi").await.errors.is_empty());
    let second = fixture.turn("ana", "b", "hi").await;
    assert!(
        second
            .errors
            .join("")
            .contains("already issued to session fixture-app/ana/a"),
        "{second:?}"
    );

    let mut started = harness(store);
    started
        .initialize(Some(sondera_model::Agent::new("x", "google-adk")), None)
        .await
        .unwrap();
    let started: sondera_adk::SharedHarness = Arc::new(tokio::sync::Mutex::new(Box::new(started)));
    let fixture = Fixture::new(
        move |_| SonderaHarnessPlugin::with_factory(move || Ok(started.clone())),
        echo,
    );
    let refused = fixture.turn("ana", "a", "hi").await;
    assert!(
        refused.errors.join("").contains("already holds trajectory"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn invalid_configurations_are_refused() {
    let store: Arc<dyn TrajectoryStore> = Arc::new(sondera_store::MemoryStore::new());
    let error = SonderaHarnessPlugin::builder(harness(store.clone()))
        .max_session_scopes(0)
        .build()
        .err()
        .unwrap();
    assert!(error.to_string().contains("at least 1"), "{error}");
    let error = SonderaHarnessPlugin::builder(harness(store))
        .escalation(sondera_adk::EscalationMode::Ask)
        .build()
        .err()
        .unwrap();
    assert!(error.to_string().contains("needs an approver"), "{error}");
}

#[tokio::test]
async fn an_agent_whose_tree_was_never_registered_is_refused() {
    let fixture = Fixture::new(|b| b, echo);
    let model_calls = ScriptedModel::planned(|_| vec![]);
    let loose = llm(&fixture.sondera, "loose", model_calls.clone(), vec![]);
    let turn = fixture
        .turn_with(&fixture.runner_for(loose), "ana", "x", "hi")
        .await;
    let error = turn.errors.join("");
    assert!(
        error.contains("agent `loose` is not part of a tree this plugin governs"),
        "{error}"
    );
    assert_eq!(
        model_calls.calls.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    assert_eq!(fixture.sondera.session_scopes(), 0);
}

/// What a [`Faulty`] harness does wrong.
#[derive(Clone, Copy)]
enum Fault {
    /// `initialize` fails before it publishes a trajectory id.
    RefusesToStart,
    /// `adjudicate` panics.
    PanicsWhenJudging,
    /// `adjudicate` never answers.
    HangsWhenJudging,
}

/// A harness over a real one, with one fault.
struct Faulty(Box<dyn Harness>, Fault);

#[async_trait::async_trait]
impl Harness for Faulty {
    async fn initialize(
        &mut self,
        agent: Option<sondera_model::Agent>,
        session_id: Option<String>,
    ) -> Result<String, sondera_harness::HarnessError> {
        match self.1 {
            Fault::RefusesToStart => Err(sondera_harness::HarnessError::Config(
                "the server is read-only".into(),
            )),
            _ => self.0.initialize(agent, session_id).await,
        }
    }
    async fn resume(
        &mut self,
        trajectory_id: &str,
        agent: Option<sondera_model::Agent>,
    ) -> Result<(), sondera_harness::HarnessError> {
        self.0.resume(trajectory_id, agent).await
    }
    async fn finalize(
        &mut self,
        summary: Option<String>,
    ) -> Result<(), sondera_harness::HarnessError> {
        self.0.finalize(summary).await
    }
    async fn fail(&mut self, reason: &str) -> Result<(), sondera_harness::HarnessError> {
        self.0.fail(reason).await
    }
    async fn adjudicate(
        &mut self,
        event: sondera_model::Event,
    ) -> Result<sondera_model::Adjudicated, sondera_harness::HarnessError> {
        match self.1 {
            Fault::PanicsWhenJudging => panic!("policy engine bug"),
            Fault::HangsWhenJudging => std::future::pending().await,
            Fault::RefusesToStart => self.0.adjudicate(event).await,
        }
    }
    async fn grant(
        &mut self,
        grant: sondera_model::Grant,
    ) -> Result<(), sondera_harness::HarnessError> {
        self.0.grant(grant).await
    }
    async fn granted(
        &mut self,
        shape: &sondera_model::ActionShape,
    ) -> Result<Option<sondera_model::Grant>, sondera_harness::HarnessError> {
        self.0.granted(shape).await
    }
    fn trajectory_id(&self) -> Option<&str> {
        self.0.trajectory_id()
    }
    fn agent(&self) -> Option<&sondera_model::Agent> {
        self.0.agent()
    }
    fn new_scope(&self) -> Box<dyn Harness> {
        Box::new(Faulty(self.0.new_scope(), self.1))
    }
}

#[tokio::test]
async fn a_start_that_failed_before_any_trajectory_existed_leaves_no_scope() {
    let store: Arc<dyn TrajectoryStore> = Arc::new(sondera_store::MemoryStore::new());
    let refusing = Faulty(Box::new(harness(store)), Fault::RefusesToStart);
    let fixture = Fixture::new(
        move |_| SonderaHarnessPlugin::builder(refusing).max_session_scopes(1),
        echo,
    );
    let failed = fixture.turn("ana", "a", "hi").await;
    assert!(
        failed.errors.join("").contains("the server is read-only"),
        "{failed:?}"
    );
    assert_eq!(fixture.sondera.session_scopes(), 0);
    assert!(fixture.sondera.active_leases().is_empty());
    fixture.sondera.close().await.unwrap();
}

#[tokio::test]
async fn a_harness_that_panics_or_hangs_blocks_the_step_and_releases_the_lease() {
    for (fault, expected) in [
        (
            Fault::PanicsWhenJudging,
            "the harness panicked: policy engine bug",
        ),
        (Fault::HangsWhenJudging, "did not answer within 200ms"),
    ] {
        let store: Arc<dyn TrajectoryStore> = Arc::new(sondera_store::MemoryStore::new());
        let faulty = Faulty(Box::new(harness(store)), fault);
        let fixture = Fixture::new(
            move |_| {
                SonderaHarnessPlugin::builder(faulty).harness_timeout(Duration::from_millis(200))
            },
            echo,
        );
        let turn = fixture.turn("ana", "a", "hi").await;
        assert!(turn.errors.join("").contains(expected), "{turn:?}");
        assert!(fixture.sondera.active_leases().is_empty());
        fixture.sondera.close().await.unwrap();
    }
}
