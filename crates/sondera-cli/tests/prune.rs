//! `sondera prune`: retention applied to a data directory.

mod common;

use common::{sondera, sondera_with_input};

fn line(trajectory: &str, n: usize, at: &str, payload: &str) -> String {
    format!(
        r#"{{"event_id":"{trajectory}-{n}","trajectory_id":"{trajectory}","agent":{{"id":"a","provider":"p"}},"timestamp":"{at}","payload":{payload},"actor":{{"kind":"agent","id":"a"}}}}"#
    )
}

/// A trajectory started, one command, and (when `ends`) completed, at `at`.
fn trajectory(id: &str, at: &str, ends: bool) -> String {
    let mut lines = vec![
        line(
            id,
            0,
            at,
            r#"{"type":"started","agent":{"id":"a","provider":"p"}}"#,
        ),
        line(
            id,
            1,
            at,
            r#"{"type":"shell_command","call_id":"c","command":"ls"}"#,
        ),
    ];
    if ends {
        lines.push(line(id, 2, at, r#"{"type":"completed"}"#));
    }
    lines.join("\n") + "\n"
}

#[test]
fn prune_removes_ended_trajectories_past_retention_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().display().to_string();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let input = trajectory("old-ended", "2025-01-01T10:00:00Z", true)
        + &trajectory("old-running", "2025-01-01T10:00:00Z", false)
        + &trajectory("recent", &now, true);
    let judged = sondera_with_input(&["adjudicate", "--data-dir", &data, "--json"], &input);
    assert!(judged.status.code().is_some_and(|c| c < 2), "{judged:?}");

    let nothing = sondera(&["prune", "--store", &data]);
    assert_eq!(nothing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("nothing to prune by"));

    let dry = sondera(&[
        "prune",
        "--store",
        &data,
        "--retain-days",
        "30",
        "--dry-run",
    ]);
    assert!(dry.status.success(), "{dry:?}");
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(
        said.contains("default: would remove 1 trajectory (3 events)"),
        "{said}"
    );

    let listed = |data: &str| {
        let out = sondera(&["trajectories", "list", "--data-dir", data]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        listed(&data).contains("old-ended"),
        "a dry run removes nothing"
    );
    let real = sondera(&["prune", "--store", &data, "--retain-days", "default=30"]);
    assert!(real.status.success(), "{real:?}");
    assert!(String::from_utf8_lossy(&real.stdout).contains("removed 1 trajectory (3 events)"));
    let left = listed(&data);
    assert!(!left.contains("old-ended"), "{left}");
    assert!(
        left.contains("old-running") && left.contains("recent"),
        "{left}"
    );

    let bad = sondera(&["prune", "--store", &data, "--retain-days", "acme=0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("0 would keep nothing"));
}
