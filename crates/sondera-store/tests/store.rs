//! The behaviour every store backend must have, run against SQLite on disk
//! and in memory.

use chrono::{DateTime, Duration, TimeZone, Utc};
use sondera_model::*;
use sondera_store::*;

fn t(name: &str) -> TenantId {
    TenantId::new(name).unwrap()
}

fn at(minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap() + Duration::minutes(minute)
}

fn agent(id: &str) -> Agent {
    Agent::new(id, "google-adk").with_card(AgentCard::React {
        model: Some("m".into()),
        system_instruction: "be good".into(),
        tools: vec![],
        sub_agents: vec![],
    })
}

fn event(traj: &str, agent_id: &str, minute: i64, payload: Payload) -> Event {
    let mut e = Event::new(traj, &agent(agent_id), payload);
    e.timestamp = at(minute);
    e
}

fn verdict(decision: Decision, policy: &str) -> Adjudicated {
    let mut v = match decision {
        Decision::Allow => Adjudicated::allow(Mode::Govern, "permitted"),
        _ => Adjudicated {
            decision,
            ..Adjudicated::deny(Mode::Govern, format!("by {policy}"))
        },
    };
    v.policies = vec![PolicyMetadata {
        policy_id: policy.into(),
        description: None,
        escalate: decision == Decision::Escalate,
        escalate_arg: None,
        annotations: Default::default(),
    }];
    v
}

/// The first `limit` denied and escalated steps of every tenant, newest first.
async fn blocked_steps(store: &dyn TrajectoryStore, limit: usize) -> Page<AdjudicationRecord> {
    store
        .list_adjudications(
            Tenants::All,
            &AdjudicationFilter::default(),
            &PageRequest::first(limit),
        )
        .await
        .unwrap()
}

/// Writes a trajectory of the default tenant.
async fn write_trajectory(
    store: &dyn TrajectoryStore,
    traj: &str,
    agent_id: &str,
    session: &str,
    start: i64,
    decisions: &[Decision],
    complete: bool,
) {
    write_tenant_trajectory(
        store,
        DEFAULT_TENANT,
        (traj, agent_id, session),
        start,
        decisions,
        complete,
    )
    .await
}

/// Writes a trajectory: started, then one shell step per decision, then optionally completed.
async fn write_tenant_trajectory(
    store: &dyn TrajectoryStore,
    tenant: &str,
    (traj, agent_id, session): (&str, &str, &str),
    start: i64,
    decisions: &[Decision],
    complete: bool,
) {
    let tenant = &t(tenant);
    let mut state = TrajectoryState::default();
    let started = event(
        traj,
        agent_id,
        start,
        Payload::Started {
            agent: agent(agent_id),
            task: None,
            session_id: Some(session.into()),
        },
    );
    store
        .append(StepRecord {
            tenant,
            event: &started,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap();
    let mut seq = 1;
    for (i, decision) in decisions.iter().enumerate() {
        let payload = Payload::ShellCommand {
            call_id: format!("c{i}"),
            command: format!("cmd {i}"),
            working_dir: None,
        };
        state.record(&payload, *decision);
        let e = event(traj, agent_id, start + seq as i64, payload);
        let mut v = verdict(
            *decision,
            if *decision == Decision::Allow {
                "base-default-permit"
            } else {
                "no-cmd"
            },
        );
        v.decision_id = Some(format!("dec-{traj}-{seq}"));
        store
            .append(StepRecord {
                tenant,
                event: &e,
                seq,
                adjudication: Some(&v),
                status: TrajectoryStatus::Running,
                state: &state,
            })
            .await
            .unwrap();
        seq += 1;
    }
    if complete {
        let e = event(
            traj,
            agent_id,
            start + seq as i64,
            Payload::Completed { summary: None },
        );
        store
            .append(StepRecord {
                tenant,
                event: &e,
                seq,
                adjudication: None,
                status: TrajectoryStatus::Completed,
                state: &state,
            })
            .await
            .unwrap();
    }
}

async fn lifecycle_and_ordered_events(store: &dyn TrajectoryStore) {
    use Decision::*;
    write_trajectory(store, "t1", "bot", "s1", 0, &[Allow, Deny, Escalate], true).await;
    let detail = store
        .trajectory_with_events(&TenantId::default(), "t1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.summary.status, TrajectoryStatus::Completed);
    assert_eq!(
        (
            detail.summary.agent_id.as_str(),
            detail.summary.session_id.as_deref()
        ),
        ("bot", Some("s1"))
    );
    assert_eq!(detail.summary.event_count, 5);
    assert_eq!(
        (
            detail.summary.state.step_count,
            detail.summary.state.denial_count,
            detail.summary.state.escalation_count
        ),
        (3, 1, 1)
    );
    let kinds: Vec<&str> = detail
        .events
        .iter()
        .map(|e| e.event.payload.kind())
        .collect();
    assert_eq!(
        kinds,
        [
            "started",
            "shell_command",
            "shell_command",
            "shell_command",
            "completed"
        ]
    );
    assert_eq!(
        detail.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(
        detail.events[2].adjudication.as_ref().unwrap().decision,
        Deny
    );
    assert!(detail.events[0].adjudication.is_none());
    assert_eq!(
        store
            .agent(&TenantId::default(), "bot")
            .await
            .unwrap()
            .unwrap(),
        agent("bot"),
        "agents keep their cards"
    );
    assert!(
        store
            .trajectory(&TenantId::default(), "missing")
            .await
            .unwrap()
            .is_none()
    );
}

async fn concurrent_writers_cannot_interleave(store: &dyn TrajectoryStore) {
    write_trajectory(
        store,
        "t-conflict",
        "bot",
        "s",
        0,
        &[Decision::Allow],
        false,
    )
    .await;
    let state = TrajectoryState::default();
    let e = event(
        "t-conflict",
        "bot",
        9,
        Payload::Thought {
            content: "late".into(),
        },
    );
    let err = store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &e,
            seq: 1,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { ref trajectory_id, seq: 1 } if trajectory_id == "t-conflict"),
        "{err}"
    );
    // Nothing of the refused step was kept.
    assert_eq!(
        store
            .trajectory(&TenantId::default(), "t-conflict")
            .await
            .unwrap()
            .unwrap()
            .event_count,
        2
    );

    let again = event(
        "t-conflict",
        "bot",
        10,
        Payload::Started {
            agent: agent("bot"),
            task: None,
            session_id: None,
        },
    );
    let err = store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &again,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateTrajectory(_)), "{err}");

    let reused = event(
        "t-conflict",
        "bot",
        11,
        Payload::Thought {
            content: "x".into(),
        },
    );
    let mut reused = reused;
    reused.event_id = store
        .trajectory_with_events(&TenantId::default(), "t-conflict")
        .await
        .unwrap()
        .unwrap()
        .events[1]
        .event
        .event_id
        .clone();
    let err = store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &reused,
            seq: 2,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateEvent(_)), "{err}");

    let orphan = event(
        "never-started",
        "bot",
        10,
        Payload::Thought {
            content: "x".into(),
        },
    );
    let err = store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &orphan,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::UnknownTrajectory(_)), "{err}");
}

async fn filters_and_pagination(store: &dyn TrajectoryStore) {
    for i in 0..7 {
        let agent_id = if i % 2 == 0 { "even" } else { "odd" };
        write_trajectory(
            store,
            &format!("p{i}"),
            agent_id,
            &format!("sess-{}", i % 3),
            i * 10,
            if i == 6 {
                &[Decision::Allow, Decision::Deny, Decision::Escalate][..]
            } else {
                &[Decision::Allow][..]
            },
            i < 4,
        )
        .await;
    }
    let all = |filter: TrajectoryFilter| async move {
        let mut ids = Vec::new();
        let mut page = PageRequest::first(2);
        loop {
            let got = store
                .list_trajectories(Tenants::All, &filter, &page)
                .await
                .unwrap();
            assert!(got.items.len() <= 2);
            ids.extend(got.items.into_iter().map(|t| t.id));
            match got.next {
                Some(next) => page = PageRequest::after(2, next),
                None => return ids,
            }
        }
    };
    assert_eq!(
        all(TrajectoryFilter::default()).await,
        ["p6", "p5", "p4", "p3", "p2", "p1", "p0"],
        "newest first across pages"
    );
    assert_eq!(
        all(TrajectoryFilter {
            agent_id: Some("odd".into()),
            ..Default::default()
        })
        .await,
        ["p5", "p3", "p1"]
    );
    assert_eq!(
        all(TrajectoryFilter {
            status: Some(TrajectoryStatus::Running),
            ..Default::default()
        })
        .await,
        ["p6", "p5", "p4"]
    );
    assert_eq!(
        all(TrajectoryFilter {
            session_id: Some("sess-1".into()),
            agent_id: Some("even".into()),
            ..Default::default()
        })
        .await,
        ["p4"]
    );
    let filtered = |f: fn(&mut TrajectoryFilter)| {
        let mut filter = TrajectoryFilter::default();
        f(&mut filter);
        all(filter)
    };
    assert_eq!(
        filtered(|f| f.decision = Some(Decision::Deny)).await,
        ["p6"]
    );
    assert_eq!(
        filtered(|f| f.decision = Some(Decision::Escalate)).await,
        ["p6"]
    );
    assert_eq!(
        filtered(|f| f.decision = Some(Decision::Allow)).await,
        ["p5", "p4", "p3", "p2", "p1", "p0"]
    );
    assert_eq!(
        filtered(|f| f.policy_id = Some("no-cmd".into())).await,
        ["p6"]
    );
    assert_eq!(
        filtered(|f| f.policy_id = Some("base-default-permit".into())).await,
        Vec::<String>::new(),
        "a policy that allowed decided nothing worth finding"
    );
    assert_eq!(
        filtered(|f| f.active = TimeWindow {
            since: Some(at(30)),
            until: Some(at(50))
        })
        .await,
        ["p4", "p3"]
    );
    assert_eq!(
        filtered(|f| f.text = Some("CMD 2".into())).await,
        ["p6"],
        "in an event"
    );
    assert_eq!(
        filtered(|f| f.text = Some("sess-1".into())).await,
        ["p4", "p1"]
    );
    assert_eq!(
        filtered(|f| f.text = Some("P5".into())).await,
        ["p5"],
        "in the id"
    );
    assert_eq!(
        filtered(|f| f.text = Some("DEC-P3-1".into())).await,
        ["p3"],
        "in a verdict: its decision id"
    );
    assert_eq!(
        filtered(|f| f.text = Some("50%_".into())).await,
        Vec::<String>::new()
    );

    let agents = store
        .list_agents(Tenants::All, &PageRequest::first(1))
        .await
        .unwrap();
    assert_eq!(agents.items[0].agent.id, "even");
    assert_eq!(agents.items[0].trajectory_count, 4);
    // Counted over every trajectory of the agent, not a page of them.
    let counts =
        |a: &sondera_store::AgentRecord| (a.step_count, a.denial_count, a.escalation_count);
    assert_eq!(counts(&agents.items[0]), (6, 1, 1));
    let rest = store
        .list_agents(Tenants::All, &PageRequest::after(1, agents.next.unwrap()))
        .await
        .unwrap();
    assert_eq!(counts(&rest.items[0]), (3, 0, 0));
    assert_eq!((rest.items[0].agent.id.as_str(), rest.next), ("odd", None));

    let err = store
        .list_trajectories(
            Tenants::All,
            &TrajectoryFilter::default(),
            &PageRequest::after(2, "garbage"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidCursor(_)));
}

async fn blocked_adjudications_and_analytics(store: &dyn TrajectoryStore) {
    use Decision::*;
    write_trajectory(store, "a1", "bot", "s", 0, &[Allow, Deny, Deny], true).await;
    write_trajectory(store, "a2", "bot", "s", 100, &[Escalate, Allow], true).await;
    let blocked = blocked_steps(store, 10).await;
    let seen: Vec<(&str, u64, Decision)> = blocked
        .items
        .iter()
        .map(|a| (a.trajectory_id.as_str(), a.seq, a.adjudication.decision))
        .collect();
    assert_eq!(
        seen,
        [("a2", 1, Escalate), ("a1", 3, Deny), ("a1", 2, Deny)]
    );
    assert_eq!(blocked.items[0].kind, "shell_command");
    let only_denies = store
        .list_adjudications(
            Tenants::All,
            &AdjudicationFilter {
                decision: Some(Deny),
                ..Default::default()
            },
            &PageRequest::first(1),
        )
        .await
        .unwrap();
    assert_eq!(only_denies.items.len(), 1);
    let next = store
        .list_adjudications(
            Tenants::All,
            &AdjudicationFilter {
                decision: Some(Deny),
                ..Default::default()
            },
            &PageRequest::after(1, only_denies.next.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!((next.items[0].seq, next.next), (2, None));

    let everything = store
        .analytics(Tenants::All, &TimeWindow::default())
        .await
        .unwrap();
    assert_eq!(
        (
            everything.trajectories,
            everything.events,
            everything.allowed,
            everything.denied,
            everything.escalated
        ),
        (2, 9, 2, 2, 1)
    );
    assert_eq!(
        everything.top_denying_policies,
        [PolicyCount {
            policy_id: "no-cmd".into(),
            count: 3
        }]
    );

    let second_only = store
        .analytics(
            Tenants::All,
            &TimeWindow {
                since: Some(at(50)),
                until: Some(at(1000)),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (
            second_only.trajectories,
            second_only.denied,
            second_only.escalated
        ),
        (1, 0, 1)
    );
}

async fn monitor_verdicts_count_what_policies_decided(store: &dyn TrajectoryStore) {
    let state = TrajectoryState::default();
    let started = event(
        "m1",
        "bot",
        0,
        Payload::Started {
            agent: agent("bot"),
            task: None,
            session_id: None,
        },
    );
    store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &started,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap();
    let mut monitored = verdict(Decision::Deny, "shadowed-deny");
    monitored.would_be = Some(Decision::Deny);
    monitored.decision = Decision::Allow;
    let shadow = verdict(Decision::Deny, "trial-rule").policies;
    monitored.shadow_matches = shadow;
    let e = event(
        "m1",
        "bot",
        1,
        Payload::Thought {
            content: "x".into(),
        },
    );
    store
        .append(StepRecord {
            tenant: &TenantId::default(),
            event: &e,
            seq: 1,
            adjudication: Some(&monitored),
            status: TrajectoryStatus::Running,
            state: &state,
        })
        .await
        .unwrap();
    let analytics = store
        .analytics(Tenants::All, &TimeWindow::default())
        .await
        .unwrap();
    assert_eq!(analytics.allowed, 1);
    assert_eq!(analytics.top_denying_policies[0].policy_id, "shadowed-deny");
    assert_eq!(
        analytics.shadow_matches,
        vec![PolicyCount {
            policy_id: "trial-rule".into(),
            count: 1
        }],
        "a shadow-mode match is counted apart from the deciding policies"
    );
    assert_eq!(analytics.top_denying_policies.len(), 1);
}

async fn tenants_see_only_their_own(store: &dyn TrajectoryStore) {
    use Decision::*;
    write_tenant_trajectory(store, "acme", ("a1", "bot", "s"), 0, &[Deny], true).await;
    write_tenant_trajectory(
        store,
        "globex",
        ("g1", "bot", "s"),
        1,
        &[Allow, Escalate],
        false,
    )
    .await;
    let summary = store.trajectory(&t("acme"), "a1").await.unwrap().unwrap();
    assert_eq!(summary.tenant, t("acme"));
    assert!(
        store
            .trajectory(&t("globex"), "a1")
            .await
            .unwrap()
            .is_none()
    );

    let page = PageRequest::default();
    let acme = store
        .list_trajectories(
            Tenants::Only(&t("acme")),
            &TrajectoryFilter::default(),
            &page,
        )
        .await
        .unwrap();
    assert_eq!(
        acme.items.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["a1"]
    );
    let everyone = store
        .list_trajectories(Tenants::All, &TrajectoryFilter::default(), &page)
        .await
        .unwrap();
    assert_eq!(everyone.items.len(), 2);

    let globex = store
        .list_adjudications(
            Tenants::Only(&t("globex")),
            &AdjudicationFilter::default(),
            &page,
        )
        .await
        .unwrap();
    assert_eq!(globex.items.len(), 1);
    assert_eq!(globex.items[0].trajectory_id, "g1");

    // The same agent id is two agents, one per tenant.
    let agents = store
        .list_agents(Tenants::Only(&t("acme")), &page)
        .await
        .unwrap();
    assert_eq!(agents.items.len(), 1);
    assert_eq!(
        (
            agents.items[0].tenant.as_str(),
            agents.items[0].trajectory_count
        ),
        ("acme", 1)
    );
    let all = store
        .list_agents(Tenants::All, &PageRequest::first(1))
        .await
        .unwrap();
    let rest = store
        .list_agents(Tenants::All, &PageRequest::after(1, all.next.unwrap()))
        .await
        .unwrap();
    assert_eq!(
        (all.items[0].tenant.as_str(), rest.items[0].tenant.as_str()),
        ("acme", "globex")
    );
    assert!(store.agent(&t("acme"), "bot").await.unwrap().is_some());
    assert!(store.agent(&t("initech"), "bot").await.unwrap().is_none());

    let window = TimeWindow::default();
    let acme = store
        .analytics(Tenants::Only(&t("acme")), &window)
        .await
        .unwrap();
    assert_eq!(
        (acme.trajectories, acme.events, acme.denied, acme.escalated),
        (1, 3, 1, 0)
    );
    let globex = store
        .analytics(Tenants::Only(&t("globex")), &window)
        .await
        .unwrap();
    assert_eq!(
        (globex.trajectories, globex.denied, globex.escalated),
        (1, 0, 1)
    );
}

/// Ids are unique per tenant: a second tenant may use the same trajectory
/// and event ids, learns nothing from them and takes nothing from the first.
async fn ids_are_unique_per_tenant(store: &dyn TrajectoryStore) {
    use Decision::*;
    write_tenant_trajectory(store, "acme", ("shared", "bot", "s"), 0, &[Deny], true).await;
    let acme = store
        .trajectory_with_events(&t("acme"), "shared")
        .await
        .unwrap()
        .unwrap();
    // The same trajectory with the same event ids, recorded by another
    // tenant with other verdicts: accepted, and kept apart.
    let allowed = verdict(Allow, "base-default-permit");
    for stored in &acme.events[..2] {
        store
            .append(StepRecord {
                tenant: &t("globex"),
                event: &stored.event,
                seq: stored.seq,
                adjudication: stored.adjudication.as_ref().map(|_| &allowed),
                status: TrajectoryStatus::Running,
                state: &TrajectoryState::default(),
            })
            .await
            .unwrap();
    }
    let acme = store
        .trajectory_with_events(&t("acme"), "shared")
        .await
        .unwrap()
        .unwrap();
    let globex = store
        .trajectory_with_events(&t("globex"), "shared")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(acme.events.len(), 3);
    assert_eq!(globex.events.len(), 2);
    assert_eq!(
        acme.events[1].event.event_id,
        globex.events[1].event.event_id
    );
    assert_eq!(acme.events[1].adjudication.as_ref().unwrap().decision, Deny);
    assert_eq!(
        globex.events[1].adjudication.as_ref().unwrap().decision,
        Allow
    );
    assert_eq!(acme.summary.status, TrajectoryStatus::Completed);
    assert_eq!(globex.summary.status, TrajectoryStatus::Running);
    // Within one tenant the ids still collide.
    let again = event(
        "shared",
        "bot",
        9,
        Payload::Started {
            agent: agent("bot"),
            task: None,
            session_id: None,
        },
    );
    let err = store
        .append(StepRecord {
            tenant: &t("globex"),
            event: &again,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &TrajectoryState::default(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::DuplicateTrajectory(_) | StoreError::DuplicateEvent(_)
        ),
        "{err}"
    );
    let blocked = store
        .list_adjudications(
            Tenants::Only(&t("globex")),
            &AdjudicationFilter::default(),
            &PageRequest::default(),
        )
        .await
        .unwrap();
    assert!(blocked.items.is_empty(), "{blocked:?}");
}

/// Many concurrent appends, as group commit batches them: every step is
/// acknowledged and recorded, and one conflicting step fails alone.
async fn concurrent_appends_each_stand_alone(store: &dyn TrajectoryStore) {
    let ids: Vec<String> = (0..24).map(|i| format!("g{i}")).collect();
    let starts = ids.iter().map(|id| async move {
        let state = TrajectoryState::default();
        let started = event(
            id,
            "bot",
            0,
            Payload::Started {
                agent: agent("bot"),
                task: None,
                session_id: None,
            },
        );
        let step = StepRecord {
            tenant: &TenantId::default(),
            event: &started,
            seq: 0,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        };
        store.append(step).await
    });
    for result in futures_util::future::join_all(starts).await {
        result.unwrap();
    }
    let thoughts: Vec<(String, Event)> = ids
        .iter()
        .map(|id| {
            (
                id.clone(),
                event(
                    id,
                    "bot",
                    1,
                    Payload::Thought {
                        content: "x".into(),
                    },
                ),
            )
        })
        .collect();
    // The last one claims a position already taken.
    let last = thoughts.len() - 1;
    let appends = thoughts.iter().enumerate().map(|(i, (_, e))| async move {
        let state = TrajectoryState::default();
        let seq = if i == last { 0 } else { 1 };
        let step = StepRecord {
            tenant: &TenantId::default(),
            event: e,
            seq,
            adjudication: None,
            status: TrajectoryStatus::Running,
            state: &state,
        };
        store.append(step).await
    });
    let results = futures_util::future::join_all(appends).await;
    let (last, rest) = results.split_last().unwrap();
    assert!(matches!(last, Err(StoreError::Conflict { .. })), "{last:?}");
    for (result, (id, _)) in rest.iter().zip(&thoughts) {
        assert!(result.is_ok(), "{id}: {result:?}");
        assert_eq!(
            store
                .trajectory(&TenantId::default(), id)
                .await
                .unwrap()
                .unwrap()
                .event_count,
            2
        );
    }
    let (last_id, _) = thoughts.last().unwrap();
    assert_eq!(
        store
            .trajectory(&TenantId::default(), last_id)
            .await
            .unwrap()
            .unwrap()
            .event_count,
        1
    );
}

/// Standing approvals are kept per tenant and agent; granting a shape again
/// replaces the earlier grant instead of adding a second.
async fn grants_are_kept_per_agent(store: &dyn TrajectoryStore) {
    let shape = |host: &str| ActionShape::Web { host: host.into() };
    let mut first = Grant::new(shape("docs.rs"), GrantScope::Always, Actor::human("ana"));
    first.granted_at = at(1);
    let mut second = Grant::new(shape("crates.io"), GrantScope::Always, Actor::human("ana"));
    second.granted_at = at(2);
    store
        .put_grant(&t("default"), "bot", &second)
        .await
        .unwrap();
    store.put_grant(&t("default"), "bot", &first).await.unwrap();
    store.put_grant(&t("acme"), "bot", &first).await.unwrap();
    let mut again = first.clone();
    again.granted_by = Actor::human("bo");
    again.granted_at = at(3);
    store.put_grant(&t("default"), "bot", &again).await.unwrap();

    let kept = store.grants(&t("default"), "bot").await.unwrap();
    assert_eq!(kept, vec![second.clone(), again.clone()]);
    assert_eq!(
        store.grants(&t("acme"), "bot").await.unwrap(),
        vec![first.clone()]
    );
    assert!(
        store
            .grants(&t("default"), "other")
            .await
            .unwrap()
            .is_empty()
    );

    // Revoking takes out that tenant's grant of that shape and no other.
    let revoked = store
        .revoke_grant(&t("default"), "bot", &shape("docs.rs"))
        .await
        .unwrap();
    assert_eq!(revoked, Some(again));
    assert_eq!(
        store.grants(&t("default"), "bot").await.unwrap(),
        vec![second]
    );
    assert_eq!(store.grants(&t("acme"), "bot").await.unwrap(), vec![first]);
    let twice = store
        .revoke_grant(&t("default"), "bot", &shape("docs.rs"))
        .await
        .unwrap();
    assert_eq!(twice, None);
}

fn pending_approval(tenant: &str, id: &str, event_id: &str, expires: i64) -> ApprovalRecord {
    ApprovalRecord {
        id: id.into(),
        tenant: t(tenant),
        event_id: event_id.into(),
        trajectory_id: "traj".into(),
        seq: 3,
        agent_id: "bot".into(),
        session_id: Some("s1".into()),
        action: Payload::ShellCommand {
            command: "terraform apply".into(),
            working_dir: None,
            call_id: "c1".into(),
        },
        shape: None,
        verdict: verdict(Decision::Escalate, "infra-changes"),
        created_at: at(0) + Duration::seconds(id.len() as i64),
        expires_at: at(expires),
        state: ApprovalState::Pending,
    }
}

fn decided(approval: &ApprovalRecord, approval_kind: Approval, minute: i64) -> ApprovalRecord {
    ApprovalRecord {
        state: ApprovalState::Decided {
            approval: approval_kind,
            decided_by: Actor::human("ops"),
            reason: Some("checked the plan".into()),
            decided_at: at(minute),
        },
        ..approval.clone()
    }
}

fn expired(approval: &ApprovalRecord, minute: i64) -> ApprovalRecord {
    ApprovalRecord {
        state: ApprovalState::Expired {
            expired_at: at(minute),
        },
        ..approval.clone()
    }
}

/// An approval opens once per event, is private to its tenant, and leaves
/// `pending` exactly once: a decision only before its deadline, an expiry
/// only after it.
async fn approvals_settle_once_and_in_time(store: &dyn TrajectoryStore) {
    let first = pending_approval("default", "a1", "e1", 10);
    assert_eq!(store.open_approval(&first).await.unwrap(), first);
    let again = pending_approval("default", "a1-again", "e1", 99);
    assert_eq!(
        store.open_approval(&again).await.unwrap(),
        first,
        "a second request for the same event gets the first approval"
    );
    let other_tenant = pending_approval("acme", "a1", "e1", 10);
    assert_eq!(
        store.open_approval(&other_tenant).await.unwrap(),
        other_tenant
    );
    let late = pending_approval("default", "a2", "e2", 5);
    store.open_approval(&late).await.unwrap();

    assert_eq!(
        store.approval(&t("default"), "a1").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.approval(&t("globex"), "a1").await.unwrap(), None);
    let pending = ApprovalFilter {
        status: Some(ApprovalStatus::Pending),
        ..Default::default()
    };
    let listed = store
        .list_approvals((&t("default")).into(), &pending, &PageRequest::first(1))
        .await
        .unwrap();
    assert_eq!(listed.items, vec![late.clone()], "newest first");
    let rest = store
        .list_approvals(
            (&t("default")).into(),
            &pending,
            &PageRequest::after(1, listed.next.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(rest.items, vec![first.clone()]);
    assert_eq!(rest.next, None);
    assert_eq!(store.pending_approvals(&t("default")).await.unwrap(), 2);
    assert_eq!(store.pending_approvals(&t("acme")).await.unwrap(), 1);

    // A decision before the deadline wins; nothing settles it again.
    let approved = decided(&first, Approval::Session, 9);
    assert!(store.settle_approval(&approved).await.unwrap());
    assert!(!store.settle_approval(&expired(&first, 10)).await.unwrap());
    assert!(
        !store
            .settle_approval(&decided(&first, Approval::Deny, 9))
            .await
            .unwrap()
    );
    assert_eq!(
        store.approval(&t("default"), "a1").await.unwrap(),
        Some(approved)
    );
    assert_eq!(
        store.approval(&t("acme"), "a1").await.unwrap(),
        Some(other_tenant),
        "the other tenant's approval of the same id is untouched"
    );

    // At the deadline a decision is refused and only expiry can settle it.
    assert_eq!(store.overdue_approvals(at(4), 10).await.unwrap(), vec![]);
    let overdue = store.overdue_approvals(at(5), 10).await.unwrap();
    assert_eq!(overdue, vec![late.clone()]);
    assert!(
        !store
            .settle_approval(&decided(&late, Approval::Once, 5))
            .await
            .unwrap()
    );
    assert!(!store.settle_approval(&expired(&late, 4)).await.unwrap());
    assert!(store.settle_approval(&expired(&late, 5)).await.unwrap());
    assert_eq!(store.pending_approvals(&t("default")).await.unwrap(), 0);
    let decided_list = store
        .list_approvals(
            Tenants::All,
            &ApprovalFilter {
                status: Some(ApprovalStatus::Expired),
                ..Default::default()
            },
            &PageRequest::first(10),
        )
        .await
        .unwrap();
    assert_eq!(decided_list.items, vec![expired(&late, 5)]);
    let overdue = store.overdue_approvals(at(60), 10).await.unwrap();
    assert_eq!(overdue.len(), 1, "only acme's approval is still pending");
    assert_eq!(overdue[0].tenant, t("acme"));
}

/// Pushed policy sets are kept once each by revision, one is current, and
/// only a kept one can be made current.
async fn policy_revisions_are_kept_and_one_is_current(store: &dyn TrajectoryStore) {
    assert_eq!(store.current_policies().await.unwrap(), None);
    let sources = |text: &str| PolicySources {
        policies: vec![PolicyFile {
            name: "a.cedar".into(),
            text: text.into(),
        }],
        schemas: vec![],
    };
    let revision = |id: &str, at: i64| PolicyRevision {
        revision: id.into(),
        pushed_at: self::at(at),
        pushed_by: "ana".into(),
        message: Some(format!("push {id}")),
        policies: 1,
    };
    let current = |id: &str, at: i64, by: &str| CurrentPolicies {
        revision: id.into(),
        since: self::at(at),
        set_by: by.into(),
    };
    store
        .push_policies(
            &revision("r1", 1),
            &sources("one"),
            &current("r1", 1, "ana"),
        )
        .await
        .unwrap();
    store
        .push_policies(
            &revision("r2", 2),
            &sources("two"),
            &current("r2", 2, "ana"),
        )
        .await
        .unwrap();
    // The same set pushed again keeps its first record.
    store
        .push_policies(&revision("r1", 3), &sources("one"), &current("r1", 3, "bo"))
        .await
        .unwrap();
    let listed: Vec<String> = store
        .policy_revisions(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.revision)
        .collect();
    assert_eq!(listed, ["r2", "r1"], "newest first, each once");
    assert_eq!(
        store.current_policies().await.unwrap(),
        Some(current("r1", 3, "bo"))
    );
    let (kept, kept_sources) = store.policy_revision("r1").await.unwrap().unwrap();
    assert_eq!((kept.pushed_at, kept_sources), (at(1), sources("one")));
    assert!(store.policy_revision("r9").await.unwrap().is_none());

    assert!(
        store
            .set_current_policies(&current("r2", 4, "cy"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_current_policies(&current("r9", 5, "cy"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.current_policies().await.unwrap(),
        Some(current("r2", 4, "cy")),
        "a revision never pushed cannot be made current"
    );
    assert_eq!(store.policy_revisions(1).await.unwrap().len(), 1);
}

/// Stored tokens are kept once by hash, listed, and revoked.
async fn tokens_are_kept_once_and_revoked(store: &dyn TrajectoryStore) {
    let token = |hash: &str, name: &str| StoredToken {
        hash: hash.into(),
        tenant: t("acme"),
        role: "operator".into(),
        name: name.into(),
        created_at: at(1),
        created_by: "root".into(),
    };
    assert!(store.put_token(&token("sha256:aa", "ana")).await.unwrap());
    assert!(store.put_token(&token("sha256:bb", "bo")).await.unwrap());
    assert!(
        !store
            .put_token(&token("sha256:aa", "impostor"))
            .await
            .unwrap(),
        "a hash is kept once"
    );
    assert_eq!(
        store.tokens().await.unwrap(),
        [token("sha256:aa", "ana"), token("sha256:bb", "bo")]
    );
    assert_eq!(
        store.revoke_token("sha256:aa").await.unwrap(),
        Some(token("sha256:aa", "ana"))
    );
    assert_eq!(store.revoke_token("sha256:aa").await.unwrap(), None);
    assert_eq!(store.tokens().await.unwrap(), [token("sha256:bb", "bo")]);
}

/// Retention lets ended trajectories go by count and by age, oldest first,
/// and never a running one, one with an approval pending, or a grant.
async fn retention_prunes_only_ended_trajectories(store: &dyn TrajectoryStore) {
    let deny = [Decision::Allow, Decision::Deny];
    for (traj, start, complete) in [
        ("old-1", 0, true),
        ("old-2", 100, true),
        ("waiting", 200, true),
        ("running", 50, false),
        ("new-1", 1000, true),
        ("new-2", 1100, true),
    ] {
        write_trajectory(store, traj, "bot", "s", start, &deny, complete).await;
    }
    write_tenant_trajectory(store, "acme", ("acme-old", "bot", "s"), 0, &deny, true).await;
    let pending = ApprovalRecord {
        trajectory_id: "waiting".into(),
        ..pending_approval("default", "p1", "e-waiting", 5000)
    };
    store.open_approval(&pending).await.unwrap();
    let settled = ApprovalRecord {
        trajectory_id: "old-2".into(),
        ..pending_approval("default", "p2", "e-old-2", 5000)
    };
    store.open_approval(&settled).await.unwrap();
    assert!(
        store
            .settle_approval(&decided(&settled, Approval::Once, 9))
            .await
            .unwrap()
    );
    let grant = Grant::new(
        ActionShape::Web {
            host: "docs.rs".into(),
        },
        GrantScope::Always,
        Actor::human("ana"),
    );
    store.put_grant(&t("default"), "bot", &grant).await.unwrap();

    let mut rules = RetentionRules::default();
    rules.trajectories(&"2".parse().unwrap());
    rules.days(&"acme=3650".parse().unwrap()).unwrap();
    let now = at(2000);
    let options = PruneOptions {
        batch: 1,
        dry_run: true,
        ..PruneOptions::offline()
    };
    let mut heard = Vec::new();
    let would = prune(store, &rules, now, options, |tenant, p| {
        heard.push((tenant.clone(), p))
    })
    .await
    .unwrap();
    assert_eq!(
        would,
        Pruned {
            trajectories: 2,
            events: 8
        }
    );
    assert_eq!(
        heard,
        [(t("acme"), Pruned::default()), (t("default"), would)],
        "acme keeps its only ended one"
    );
    assert!(
        store
            .trajectory(&t("default"), "old-1")
            .await
            .unwrap()
            .is_some(),
        "a dry run removes nothing"
    );

    let options = PruneOptions {
        dry_run: false,
        ..options
    };
    let pruned = prune(store, &rules, now, options, |_, _| {}).await.unwrap();
    assert_eq!(pruned, would);
    let default = t("default");
    for gone in ["old-1", "old-2"] {
        assert!(
            store.trajectory(&default, gone).await.unwrap().is_none(),
            "{gone}"
        );
        assert!(
            store
                .trajectory_with_events(&default, gone)
                .await
                .unwrap()
                .is_none(),
            "{gone}"
        );
    }
    for kept in ["waiting", "running", "new-1", "new-2"] {
        assert!(
            store.trajectory(&default, kept).await.unwrap().is_some(),
            "{kept}"
        );
    }
    assert!(
        store
            .trajectory(&t("acme"), "acme-old")
            .await
            .unwrap()
            .is_some()
    );
    let blocked = blocked_steps(store, 100).await;
    assert!(
        blocked
            .items
            .iter()
            .all(|a| !a.trajectory_id.starts_with("old-")),
        "the verdicts go with their trajectory"
    );
    assert_eq!(
        store.approval(&default, "p2").await.unwrap(),
        None,
        "settled approvals go"
    );
    assert_eq!(
        store.approval(&default, "p1").await.unwrap(),
        Some(pending),
        "pending ones stay"
    );
    assert_eq!(store.grants(&default, "bot").await.unwrap(), [grant]);
    // Nothing more to do; by age, acme's goes once it is old enough.
    assert_eq!(
        prune(store, &rules, now, options, |_, _| {}).await.unwrap(),
        Pruned::default()
    );
    let mut by_age = RetentionRules::default();
    by_age.days(&"acme=1".parse().unwrap()).unwrap();
    let later = at(0) + Duration::days(2);
    let pruned = prune(store, &by_age, later, options, |_, _| {})
        .await
        .unwrap();
    assert_eq!(
        pruned,
        Pruned {
            trajectories: 1,
            events: 4
        }
    );
    assert_eq!(store.tenants().await.unwrap(), [t("default")]);
}

macro_rules! suite {
    ($module:ident, $make:expr) => {
        mod $module {
            use super::*;
            #[tokio::test]
            async fn retention_prunes_only_ended_trajectories() {
                let (s, _g) = $make;
                super::retention_prunes_only_ended_trajectories(&s).await
            }
            #[tokio::test]
            async fn tokens_are_kept_once_and_revoked() {
                let (s, _g) = $make;
                super::tokens_are_kept_once_and_revoked(&s).await
            }
            #[tokio::test]
            async fn policy_revisions_are_kept_and_one_is_current() {
                let (s, _g) = $make;
                super::policy_revisions_are_kept_and_one_is_current(&s).await
            }
            #[tokio::test]
            async fn lifecycle_and_ordered_events() {
                let (s, _g) = $make;
                super::lifecycle_and_ordered_events(&s).await
            }
            #[tokio::test]
            async fn concurrent_writers_cannot_interleave() {
                let (s, _g) = $make;
                super::concurrent_writers_cannot_interleave(&s).await
            }
            #[tokio::test]
            async fn filters_and_pagination() {
                let (s, _g) = $make;
                super::filters_and_pagination(&s).await
            }
            #[tokio::test]
            async fn blocked_adjudications_and_analytics() {
                let (s, _g) = $make;
                super::blocked_adjudications_and_analytics(&s).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn concurrent_appends_each_stand_alone() {
                let (s, _g) = $make;
                super::concurrent_appends_each_stand_alone(&s).await
            }
            #[tokio::test]
            async fn ids_are_unique_per_tenant() {
                let (s, _g) = $make;
                super::ids_are_unique_per_tenant(&s).await
            }

            #[tokio::test]
            async fn tenants_see_only_their_own() {
                let (s, _g) = $make;
                super::tenants_see_only_their_own(&s).await
            }
            #[tokio::test]
            async fn grants_are_kept_per_agent() {
                let (s, _g) = $make;
                super::grants_are_kept_per_agent(&s).await
            }
            #[tokio::test]
            async fn approvals_settle_once_and_in_time() {
                let (s, _g) = $make;
                super::approvals_settle_once_and_in_time(&s).await
            }
            #[tokio::test]
            async fn monitor_verdicts_count_what_policies_decided() {
                let (s, _g) = $make;
                super::monitor_verdicts_count_what_policies_decided(&s).await
            }
        }
    };
}

suite!(memory, (MemoryStore::new(), ()));
suite!(sqlite_memory, (SqliteStore::in_memory().unwrap(), ()));
suite!(postgres, {
    let url = sondera_testkit::postgres_database();
    (PostgresStore::connect(&url).await.unwrap(), ())
});
suite!(sqlite_file, {
    let dir = tempfile::tempdir().unwrap();
    (SqliteStore::open_dir(dir.path()).unwrap(), dir)
});

#[tokio::test]
async fn acknowledged_steps_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SqliteStore::open_dir(dir.path()).unwrap();
        write_trajectory(&store, "durable", "bot", "s", 0, &[Decision::Deny], false).await;
    }
    let store = SqliteStore::open_dir(dir.path()).unwrap();
    let summary = store
        .trajectory(&TenantId::default(), "durable")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            summary.event_count,
            summary.state.denial_count,
            summary.status
        ),
        (2, 1, TrajectoryStatus::Running)
    );
    let conn = rusqlite_mode(dir.path());
    assert_eq!(conn, "wal");
}

fn rusqlite_mode(dir: &std::path::Path) -> String {
    let conn = rusqlite::Connection::open(dir.join("sondera.db")).unwrap();
    conn.pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap()
}

/// Reads do not queue behind writes: while a commit waits (here on another
/// process's lock; in life on its sync), the store still answers reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_do_not_wait_for_a_pending_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open_dir(dir.path()).unwrap());
    write_trajectory(store.as_ref(), "read-me", "bot", "s", 0, &[], false).await;
    let other = rusqlite::Connection::open(dir.path().join("sondera.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            write_trajectory(store.as_ref(), "waits", "bot", "s", 1, &[], false).await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let read = store
        .trajectory(&TenantId::default(), "read-me")
        .await
        .unwrap();
    assert!(read.is_some());
    assert!(!writer.is_finished(), "the read waited for the writer");
    other.execute_batch("COMMIT").unwrap();
    writer.await.unwrap();
}

#[tokio::test]
async fn opening_an_unusable_path_names_it() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let err = SqliteStore::open_dir(file.path().join("sub")).unwrap_err();
    assert!(
        err.to_string().contains(&file.path().display().to_string()),
        "{err}"
    );
}

/// A data directory written before tenants existed opens, and everything in
/// it belongs to the default tenant.
#[tokio::test]
async fn a_store_from_before_tenants_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("sondera.db")).unwrap();
    conn.execute_batch(
        r#"
        CREATE TABLE agents (id TEXT PRIMARY KEY, body TEXT NOT NULL, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL);
        CREATE TABLE trajectories (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, session_id TEXT, status TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL, event_count INTEGER NOT NULL, state TEXT NOT NULL);
        CREATE TABLE events (trajectory_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL UNIQUE,
            recorded_at TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (trajectory_id, seq)) WITHOUT ROWID;
        CREATE TABLE adjudications (event_id TEXT PRIMARY KEY, trajectory_id TEXT NOT NULL, agent_id TEXT NOT NULL,
            seq INTEGER NOT NULL, kind TEXT NOT NULL, decision TEXT NOT NULL, recorded_at TEXT NOT NULL, body TEXT NOT NULL);
        CREATE TABLE adjudication_policies (event_id TEXT NOT NULL, policy_id TEXT NOT NULL, recorded_at TEXT NOT NULL);
        INSERT INTO agents VALUES ('bot', '{"id":"bot","provider":"google-adk"}', '2026-11-01T00:00:00.000000Z', '2026-11-01T00:00:00.000000Z');
        INSERT INTO trajectories VALUES ('old', 'bot', NULL, 'running', '2026-11-01T00:00:00.000000Z',
            '2026-11-01T00:00:00.000000Z', 1, '{}');
        "#,
    )
    .unwrap();
    // One denied step, which every later rebuild of the tables must carry.
    let denied = event(
        "old",
        "bot",
        1,
        Payload::ShellCommand {
            call_id: "c1".into(),
            command: "rm -rf /".into(),
            working_dir: None,
        },
    );
    let recorded_at = "2026-11-01T00:01:00.000000Z";
    conn.execute(
        "INSERT INTO events VALUES ('old', 1, ?1, ?2, ?3)",
        rusqlite::params![
            denied.event_id,
            recorded_at,
            serde_json::to_string(&denied).unwrap()
        ],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO adjudications VALUES (?1, 'old', 'bot', 1, 'shell_command', 'deny', ?2, ?3)",
        rusqlite::params![
            denied.event_id,
            recorded_at,
            serde_json::to_string(&verdict(Decision::Deny, "no-rm")).unwrap()
        ],
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open_dir(dir.path()).unwrap();
    let old = store
        .trajectory(&TenantId::default(), "old")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((old.tenant.as_str(), old.event_count), (DEFAULT_TENANT, 1));
    let detail = store
        .trajectory_with_events(&TenantId::default(), "old")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.events.len(), 1);
    assert_eq!(detail.events[0].event.event_id, denied.event_id);
    assert_eq!(
        detail.events[0].adjudication.as_ref().map(|a| a.decision),
        Some(Decision::Deny)
    );
    let blocked = blocked_steps(&store, 10).await;
    assert_eq!(blocked.items.len(), 1);
    assert_eq!(blocked.items[0].event_id, denied.event_id);
    assert!(
        store
            .agent(&TenantId::default(), "bot")
            .await
            .unwrap()
            .is_some()
    );
    write_trajectory(&store, "new", "bot", "s", 0, &[Decision::Allow], false).await;
    drop(store);
    // Opening again leaves a migrated store as it is.
    let store = SqliteStore::open_dir(dir.path()).unwrap();
    assert_eq!(
        store
            .trajectory(&TenantId::default(), "new")
            .await
            .unwrap()
            .unwrap()
            .event_count,
        2
    );
}

#[tokio::test]
async fn the_memory_store_forgets_ended_trajectories_beyond_its_budget() {
    use Decision::*;
    // Each trajectory is 5 events: started, three steps, completed.
    let store = MemoryStore::with_event_budget(50);
    write_trajectory(&store, "running", "bot", "s", 0, &[Allow, Deny], false).await;
    for n in 0..100 {
        let id = format!("done-{n}");
        write_trajectory(&store, &id, "bot", "s", 10 + n, &[Allow, Deny, Allow], true).await;
    }
    assert!(store.stored_events() <= 50, "{}", store.stored_events());
    assert!(
        store
            .trajectory(&TenantId::default(), "done-0")
            .await
            .unwrap()
            .is_none(),
        "the oldest ended one is gone"
    );
    assert!(
        store
            .trajectory(&TenantId::default(), "done-99")
            .await
            .unwrap()
            .is_some(),
        "the newest stays"
    );
    assert!(
        store
            .trajectory(&TenantId::default(), "running")
            .await
            .unwrap()
            .is_some(),
        "a running trajectory is never forgotten"
    );
    // What is forgotten is not listed, and its verdicts do not count.
    let blocked = blocked_steps(&store, 1000).await;
    let listed: std::collections::BTreeSet<&str> = blocked
        .items
        .iter()
        .map(|a| a.trajectory_id.as_str())
        .collect();
    assert!(!listed.contains("done-0"));
    assert!(listed.contains("done-99") && listed.contains("running"));
    assert!(blocked.items.len() <= 50);
    // A forgotten trajectory is unknown: its id can start again.
    write_trajectory(&store, "done-0", "bot", "s", 500, &[Allow], true).await;
}

#[tokio::test]
async fn a_memory_location_may_name_its_budget() {
    assert!(connect("memory:5000").await.is_ok());
    let err = connect("memory:lots").await.unwrap_err();
    assert!(err.to_string().contains("memory:EVENTS"), "{err}");
}

/// Hosted databases require TLS: `sslmode` and `sslrootcert` in the URL
/// are honoured, and the server's certificate is verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls_follows_sslmode_and_verifies_the_server() {
    let (url, ca) = sondera_testkit::postgres_tls_database();
    let ca = ca.display().to_string();
    let trusted = format!("{url}?sslmode=require&sslrootcert={ca}");
    let store = PostgresStore::connect(&trusted).await.unwrap();
    write_trajectory(&store, "over-tls", "bot", "s", 0, &[Decision::Allow], true).await;
    let summary = store
        .trajectory(&TenantId::default(), "over-tls")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(summary.event_count, 3);
    // verify-full reads the same, and `prefer` (the default) takes TLS
    // when the server offers it.
    PostgresStore::connect(&format!("{url}?sslmode=verify-full&sslrootcert={ca}"))
        .await
        .unwrap();
    PostgresStore::connect(&format!("{url}?sslrootcert={ca}"))
        .await
        .unwrap();

    let refused = |url: String| async move {
        PostgresStore::connect(&url)
            .await
            .expect_err("refused")
            .to_string()
    };
    let plain = refused(format!("{url}?sslmode=disable")).await;
    assert!(
        plain.contains("no encryption") || plain.contains("rejects"),
        "{plain}"
    );
    let untrusted = refused(format!("{url}?sslmode=require")).await;
    assert!(
        untrusted.to_lowercase().contains("certificate"),
        "{untrusted}"
    );
    let unknown = refused(format!("{url}?sslmode=sometimes")).await;
    assert!(unknown.contains("sslmode `sometimes`"), "{unknown}");
}
