//! `sondera replay`, `trajectories` and `adjudications` against a data
//! directory the example session was recorded into.

mod common;

use std::path::Path;

use common::{sondera, stdout};

/// A data directory holding the example session, judged by the built-in packs.
fn recorded() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let session = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/session.jsonl");
    let out = sondera(&[
        "adjudicate",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--workspace",
        "/workspace/project",
        "--home",
        "/home/dev",
        session.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "the example has blocked steps");
    dir
}

#[test]
fn replay_reports_decisions_a_candidate_set_changes() {
    let data = recorded();
    let data = data.path().to_str().unwrap();
    let candidate = tempfile::tempdir().unwrap();
    std::fs::write(
        candidate.path().join("permissive.cedar"),
        "@id(\"allow-all\") @description(\"Allow everything\") @severity(\"info\")\npermit (principal, action, resource);\n",
    )
    .unwrap();
    let workspace = ["--workspace", "/workspace/project", "--home", "/home/dev"];
    let mut args = vec!["replay", "--data-dir", data, "--policies"];
    args.push(candidate.path().to_str().unwrap());
    args.extend(workspace);
    let out = sondera(&args);
    assert_eq!(out.status.code(), Some(1), "decisions change");
    insta::assert_snapshot!("replay_permissive", stdout(&out));

    let mut same = vec!["replay", "--data-dir", data];
    same.extend(workspace);
    let out = sondera(&same);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the recorded policies change nothing"
    );
    assert_eq!(
        stdout(&out),
        "1 trajectory, 9 events re-judged, 0 decisions change\n"
    );

    args.push("--json");
    let json = stdout(&sondera(&args));
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["before"], "deny");
    assert_eq!(lines[3]["changed"], 3);
    assert_eq!(
        sondera(&["replay", "--ephemeral"]).status.code(),
        Some(2),
        "replay needs recorded trajectories"
    );
}

#[test]
fn recorded_trajectories_and_adjudications_are_listed() {
    let data = recorded();
    let data = data.path().to_str().unwrap();
    let list = sondera(&["trajectories", "list", "--data-dir", data]);
    assert_eq!(list.status.code(), Some(0));
    assert!(
        stdout(&list).starts_with("demo-trajectory-1  coding-assistant  completed  11 events"),
        "{}",
        stdout(&list)
    );
    let show = sondera(&[
        "trajectories",
        "show",
        "--data-dir",
        data,
        "demo-trajectory-1",
    ]);
    insta::assert_snapshot!("trajectory_show", stdout(&show));
    let by_policy = sondera(&[
        "trajectories",
        "list",
        "--data-dir",
        data,
        "--policy",
        "persist-shell-rc",
        "--text",
        "BASHRC",
    ]);
    assert!(
        stdout(&by_policy).starts_with("demo-trajectory-1 "),
        "{by_policy:?}"
    );
    let nothing = sondera(&[
        "trajectories",
        "list",
        "--data-dir",
        data,
        "--policy",
        "no-such-policy",
    ]);
    assert_eq!(stdout(&nothing), "");
    let missing = sondera(&["trajectories", "show", "--data-dir", data, "nope"]);
    assert_eq!(missing.status.code(), Some(1));

    let adjudications = sondera(&["adjudications", "list", "--data-dir", data]);
    insta::assert_snapshot!("adjudications_list", stdout(&adjudications));
    let escalations = sondera(&[
        "adjudications",
        "list",
        "--data-dir",
        data,
        "--decision",
        "escalate",
        "--json",
    ]);
    let rows: Vec<serde_json::Value> = stdout(&escalations)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0]["adjudication"]["policies"][0]["policy_id"],
        "persist-shell-rc"
    );
    let bad = sondera(&[
        "adjudications",
        "list",
        "--data-dir",
        data,
        "--decision",
        "maybe",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}
