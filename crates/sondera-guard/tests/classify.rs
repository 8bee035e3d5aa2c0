//! Tool classification: a call becomes the narrowest action it fits, and a
//! result the observation that matches its call.

use serde_json::{Value, json};
use sondera_guard::{ToolOutcome, classify_tool_call, fold_tool_name, observation_for};
use sondera_model::{FileOperationKind as Op, Payload};

fn classify(tool: &str, args: Value) -> Payload {
    classify_tool_call("c1", tool, &args)
}

fn file(tool: &str, args: Value) -> (Op, String, Option<String>, Option<String>) {
    match classify(tool, args) {
        Payload::FileOperation {
            operation,
            path,
            content,
            old_content,
            ..
        } => (operation, path, content, old_content),
        other => panic!("{tool}: expected a file operation, got {other:?}"),
    }
}

fn assert_generic(tool: &str, args: Value) {
    match classify(tool, args.clone()) {
        Payload::ToolCall {
            tool: t,
            arguments,
            call_id,
        } => {
            assert_eq!(
                (t.as_str(), &arguments, call_id.as_str()),
                (tool, &args, "c1")
            );
        }
        other => panic!("{tool} {args}: expected a generic call, got {other:?}"),
    }
}

#[test]
fn names_fold_without_merging_distinct_tools() {
    for name in [
        "read_file",
        "readFile",
        "read-file",
        "READ_FILE",
        "Read File",
    ] {
        assert_eq!(fold_tool_name(name), "readfile", "{name}");
    }
    assert_eq!(fold_tool_name("mcp__fs__read_file"), "mcpfsreadfile");
    assert_generic("mcp__fs__read_file", json!({"path": "/etc/passwd"}));
}

#[test]
fn file_names_map_to_their_operation() {
    let cases: &[(&[&str], Op)] = &[
        (
            &[
                "read",
                "read_file",
                "readFiles",
                "read_many_files",
                "view",
                "view_file",
                "open_file",
            ],
            Op::Read,
        ),
        (
            &[
                "write",
                "write_file",
                "create",
                "create_file",
                "new_file",
                "save_file",
            ],
            Op::Write,
        ),
        (
            &[
                "edit",
                "edit_file",
                "edit_files",
                "replace",
                "str_replace",
                "replace_in_file",
                "replace_string_in_file",
                "multi_edit",
                "apply_patch",
                "patch",
                "apply_diff",
            ],
            Op::Edit,
        ),
        (
            &[
                "delete",
                "delete_file",
                "remove_file",
                "rm_file",
                "delete_folder",
                "removeDirectory",
                "rm_dir",
                "trash_file",
                "delete-files",
                "erase_path",
            ],
            Op::Delete,
        ),
    ];
    for (names, op) in cases {
        for name in *names {
            assert_eq!(file(name, json!({"path": "src/a.rs"})).0, *op, "{name}");
        }
    }
}

#[test]
fn path_comes_from_the_first_string_in_priority_order() {
    assert_eq!(
        file("read_file", json!({"path": "b", "file_path": "a"})).1,
        "a"
    );
    assert_eq!(
        file("read_file", json!({"filePath": 3, "absolute_path": "abs"})).1,
        "abs"
    );
    assert_eq!(
        file("view", json!({"notebook_path": "n.ipynb"})).1,
        "n.ipynb"
    );
    assert_eq!(file("read", json!({"file": "f"})).1, "f");
    assert_eq!(
        file("read", json!({"targetFile": "t", "target_file": "u"})).1,
        "t"
    );
}

#[test]
fn filename_and_uri_never_count_as_paths() {
    assert_generic("read_file", json!({"filename": "secrets.txt"}));
    assert_generic("read_file", json!({"uri": "file:///etc/shadow"}));
    assert_generic("write_file", json!({"path": "   ", "content": "x"}));
}

#[test]
fn deleting_verbs_with_other_nouns_stay_generic_calls() {
    for tool in [
        "delete_event",
        "remove_member",
        "delete_branch",
        "deleted_files",
    ] {
        assert_generic(tool, json!({"path": "src/a.rs"}));
    }
}

#[test]
fn issue_tracker_create_stays_a_generic_call() {
    assert_generic(
        "create",
        json!({"title": "Cleanup task", "body": "stop running rm -rf / on staging"}),
    );
    assert_generic("delete", json!({"ticket_id": 42}));
}

#[test]
fn content_and_old_content_are_taken_from_known_keys() {
    let (_, _, content, old) = file(
        "edit_file",
        json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!((content.as_deref(), old.as_deref()), (Some("y"), Some("x")));
    let (_, _, content, _) = file("write_file", json!({"path": "a", "file_text": "body"}));
    assert_eq!(content.as_deref(), Some("body"));
    let (_, _, content, _) = file("create_file", json!({"path": "a", "code": "fn main(){}"}));
    assert_eq!(content.as_deref(), Some("fn main(){}"));
}

#[test]
fn multiplexed_editors_take_the_operation_from_an_argument() {
    let editor = |op: Value| {
        file(
            "str_replace_editor",
            json!({"command": op, "path": "/home/dev/.ssh/id_ed25519"}),
        )
        .0
    };
    assert_eq!(editor(json!("view")), Op::Read);
    assert_eq!(editor(json!("create")), Op::Write);
    assert_eq!(editor(json!("delete")), Op::Delete);
    assert_eq!(editor(json!("str_replace")), Op::Edit);
    assert_eq!(editor(json!("undo_edit")), Op::Edit);
    assert_eq!(
        file(
            "str_replace_based_edit_tool",
            json!({"subcommand": "read", "path": "a"})
        )
        .0,
        Op::Read
    );
    assert_eq!(
        file("text_editor", json!({"operation": "remove", "path": "a"})).0,
        Op::Delete
    );
    assert_eq!(
        file("textEditor", json!({"action": "write", "path": "a"})).0,
        Op::Write
    );
}

#[test]
fn patch_tools_may_carry_only_a_patch_body() {
    let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch";
    let (op, path, content, _) = file("apply_patch", json!({"patch": patch}));
    assert_eq!(
        (op, path.as_str(), content.as_deref()),
        (Op::Edit, "src/lib.rs", Some(patch))
    );
    let diff = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(file("apply_diff", json!({"diff": diff})).1, "README.md");
    // Other editors need a path; a body alone is not enough.
    assert_generic("edit_file", json!({"patch": patch}));
}

#[test]
fn shell_tools_need_a_command() {
    for name in [
        "bash",
        "sh",
        "shell",
        "terminal",
        "run_shell_command",
        "shell_command",
        "execute_shell_command",
        "runTerminalCommand",
        "run_terminal_cmd",
        "execute_command",
        "run_command",
        "execute_bash",
        "run_in_terminal",
        "local_shell",
    ] {
        match classify(name, json!({"cmd": "ls", "cwd": "/w"})) {
            Payload::ShellCommand {
                command,
                working_dir,
                ..
            } => {
                assert_eq!(
                    (command.as_str(), working_dir.as_deref()),
                    ("ls", Some("/w")),
                    "{name}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    match classify("bash", json!({"commandLine": "make", "workingDir": "/x"})) {
        Payload::ShellCommand {
            command,
            working_dir,
            ..
        } => assert_eq!(
            (command.as_str(), working_dir.as_deref()),
            ("make", Some("/x"))
        ),
        other => panic!("{other:?}"),
    }
    assert_generic("bash", json!({"description": "no command here"}));
    assert_generic("bash", json!({"command": ""}));
}

#[test]
fn run_and_execute_are_not_shells() {
    assert_generic("run", json!({"command": "rm -rf /"}));
    assert_generic("execute", json!({"command": "rm -rf /"}));
}

#[test]
fn web_tools_need_a_url() {
    let web = |tool: &str, args: Value| match classify(tool, args) {
        Payload::WebFetch { url, prompt, .. } => (url, prompt),
        other => panic!("{tool}: {other:?}"),
    };
    assert_eq!(
        web("web_fetch", json!({"url": "https://a", "prompt": "p"})),
        ("https://a".into(), "p".into())
    );
    assert_eq!(
        web("fetch", json!({"URL": "https://b", "query": "q"})),
        ("https://b".into(), "q".into())
    );
    assert_eq!(
        web(
            "http_request",
            json!({"href": "https://c", "instructions": "i"})
        )
        .0,
        "https://c"
    );
    assert_eq!(
        web(
            "fetchUrl",
            json!({"urls": [1, "", "https://d", "https://e"]})
        )
        .0,
        "https://d"
    );
    assert_eq!(
        web(
            "read_url",
            json!({"links": ["https://f"], "question": "why"})
        ),
        ("https://f".into(), "why".into())
    );
    assert_generic("web_search", json!({"query": "rust"}));
    assert_generic("search", json!({"query": "how does rm -rf / work"}));
    assert_generic("fetch", json!({"query": "no url"}));
}

#[test]
fn non_object_arguments_stay_generic() {
    assert_generic("bash", json!("rm -rf /"));
    assert_generic("read_file", Value::Null);
}

#[test]
fn file_observations_read_content_through_adk_wrapping() {
    let action = classify("read_file", json!({"path": "a"}));
    let obs = |v: Value| observation_for(&action, ToolOutcome::Returned(&v));
    for (value, expected) in [
        (json!({"result": "wrapped"}), "wrapped"),
        (json!({"content": "c"}), "c"),
        (json!({"text": "t"}), "t"),
        (json!({"output": "o"}), "o"),
        (json!("bare"), "bare"),
    ] {
        match obs(value) {
            Payload::FileOperationResult {
                success: true,
                content: Some(c),
                error: None,
                call_id,
            } => {
                assert_eq!((c.as_str(), call_id.as_str()), (expected, "c1"));
            }
            other => panic!("{other:?}"),
        }
    }
    match observation_for(&action, ToolOutcome::Raised("permission denied")) {
        Payload::FileOperationResult {
            success: false,
            content: None,
            error: Some(e),
            ..
        } => assert_eq!(e, "permission denied"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn shell_observations_map_streams_and_exit_codes() {
    let action = classify("bash", json!({"command": "ls"}));
    match observation_for(
        &action,
        ToolOutcome::Returned(&json!({"stdout": "a\nb", "stderr": "warn", "returncode": 2})),
    ) {
        Payload::ShellCommandOutput {
            exit_code,
            stdout,
            stderr,
            ..
        } => assert_eq!(
            (exit_code, stdout.as_str(), stderr.as_str()),
            (2, "a\nb", "warn")
        ),
        other => panic!("{other:?}"),
    }
    match observation_for(&action, ToolOutcome::Returned(&json!({"result": "out"}))) {
        Payload::ShellCommandOutput {
            exit_code: 0,
            stdout,
            ..
        } => assert_eq!(stdout, "out"),
        other => panic!("{other:?}"),
    }
    match observation_for(&action, ToolOutcome::Raised("sandbox refused")) {
        Payload::ShellCommandOutput {
            exit_code: 1,
            stdout,
            stderr,
            ..
        } => assert_eq!((stdout.as_str(), stderr.as_str()), ("", "sandbox refused")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn web_observations_carry_url_and_status() {
    let action = classify("web_fetch", json!({"url": "https://docs.rs"}));
    match observation_for(
        &action,
        ToolOutcome::Returned(&json!({"content": "page", "status_code": 404})),
    ) {
        Payload::WebFetchOutput {
            url,
            code: 404,
            result,
            ..
        } => assert_eq!((url.as_str(), result.as_str()), ("https://docs.rs", "page")),
        other => panic!("{other:?}"),
    }
    match observation_for(&action, ToolOutcome::Raised("dns failure")) {
        Payload::WebFetchOutput {
            code: 0, result, ..
        } => assert_eq!(result, "dns failure"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn generic_observations_keep_structure() {
    let action = classify("get_weather", json!({"city": "Lisbon"}));
    let result = json!({"temp": 21, "unit": "C", "hourly": [1, 2]});
    match observation_for(&action, ToolOutcome::Returned(&result)) {
        Payload::ToolOutput {
            success: true,
            output,
            error: None,
            ..
        } => assert_eq!(output, result),
        other => panic!("{other:?}"),
    }
    match observation_for(&action, ToolOutcome::Returned(&json!({"error": "quota"}))) {
        Payload::ToolOutput {
            success: false,
            error: Some(e),
            ..
        } => assert_eq!(e, "quota"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn web_tools_keep_what_the_request_sends() {
    match classify(
        "http_request",
        json!({"url": "https://hooks.example/x", "method": "post", "json": {"k": "v"}}),
    ) {
        Payload::WebFetch { method, body, .. } => {
            assert_eq!(method.as_deref(), Some("POST"));
            assert_eq!(body.as_deref(), Some(r#"{"k":"v"}"#));
        }
        other => panic!("{other:?}"),
    }
    match classify("web_fetch", json!({"url": "https://docs.rs", "body": ""})) {
        Payload::WebFetch { method, body, .. } => assert_eq!((method, body), (None, None)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn generic_execute_tools_are_not_shells() {
    for name in ["exec", "execute", "run_sql"] {
        assert!(
            matches!(
                classify(name, json!({"command": "SELECT 1"})),
                Payload::ToolCall { .. }
            ),
            "{name}"
        );
    }
    assert!(matches!(
        classify("sh", json!({"script": "ls"})),
        Payload::ShellCommand { .. }
    ));
}

#[test]
fn tool_names_are_compared_as_a_reader_sees_them() {
    for name in [
        "b\u{430}sh",
        "\u{ff42}\u{ff41}\u{ff53}\u{ff48}",
        "ba\u{200d}sh",
        "BASH\u{ad}",
    ] {
        assert_eq!(fold_tool_name(name), "bash", "{name:?}");
        assert!(
            matches!(
                classify(name, json!({"command": "ls"})),
                Payload::ShellCommand { .. }
            ),
            "{name:?}"
        );
    }
    assert_eq!(fold_tool_name("read\u{200b}_file"), "readfile");
    assert_eq!(
        sondera_guard::visible_ascii("m\u{fc}nchen"),
        "m\u{fc}nchen",
        "a letter with no ASCII look-alike stays"
    );
}

#[test]
fn every_string_of_a_result_is_read_whatever_its_key() {
    let web = classify("web_fetch", json!({"url": "https://news.example"}));
    for (result, code, text) in [
        (
            json!({"status": 200, "body": "from body"}),
            200,
            "from body",
        ),
        (json!({"statusCode": "404", "text": "gone"}), 404, "gone"),
        (
            json!({"html": "<p>x</p>", "meta": {"title": "T"}}),
            200,
            "T",
        ),
        (
            json!({"error": "connection refused"}),
            0,
            "connection refused",
        ),
    ] {
        match observation_for(&web, ToolOutcome::Returned(&result)) {
            Payload::WebFetchOutput {
                code: c, result: r, ..
            } => {
                assert_eq!(c, code, "{result}");
                assert!(r.contains(text), "{result}: {r}");
            }
            other => panic!("{other:?}"),
        }
    }
    let shell = classify("bash", json!({"command": "make"}));
    match observation_for(
        &shell,
        ToolOutcome::Returned(
            &json!({"output": "ok", "logs": [{"line": "deep"}], "error": "failed"}),
        ),
    ) {
        Payload::ShellCommandOutput {
            exit_code,
            stdout,
            stderr,
            ..
        } => {
            assert_eq!(exit_code, 1, "an error without a status is a failure");
            assert!(stdout.contains("ok") && stdout.contains("deep"), "{stdout}");
            assert_eq!(stderr, "failed");
        }
        other => panic!("{other:?}"),
    }
    let file = classify("read_file", json!({"path": "a"}));
    match observation_for(
        &file,
        ToolOutcome::Returned(&json!({"data": {"lines": ["x", "y"]}})),
    ) {
        Payload::FileOperationResult {
            content: Some(c), ..
        } => assert_eq!(c, "x\ny"),
        other => panic!("{other:?}"),
    }
    let generic = classify("lookup", json!({"id": 1}));
    for failed in [
        json!({"status": "error", "error_message": "no such order"}),
        json!({"ok": false, "message": "no such order"}),
        json!({"isError": true, "detail": "no such order"}),
    ] {
        match observation_for(&generic, ToolOutcome::Returned(&failed)) {
            Payload::ToolOutput {
                success: false,
                error: Some(e),
                ..
            } => assert_eq!(e, "no such order", "{failed}"),
            other => panic!("{failed}: {other:?}"),
        }
    }
}

#[test]
fn generic_calls_and_their_outputs_are_reclassified() {
    let call = Payload::ToolCall {
        call_id: "c".into(),
        tool: "bash".into(),
        arguments: json!({"command": "rm -rf ~"}),
    };
    let shell = sondera_guard::reclassify(&call, None).expect("a shell command");
    assert!(matches!(shell, Payload::ShellCommand { ref command, .. } if command == "rm -rf ~"));
    let generic = Payload::ToolCall {
        call_id: "d".into(),
        tool: "create_ticket".into(),
        arguments: json!({"title": "x"}),
    };
    assert!(sondera_guard::reclassify(&generic, None).is_none());
    let pending = sondera_model::PendingCall {
        call_id: "c".into(),
        target: "rm -rf ~".into(),
        kind: "shell_command".into(),
        operation: None,
    };
    let output = Payload::ToolOutput {
        call_id: "c".into(),
        success: false,
        output: Value::Null,
        error: Some("boom".into()),
    };
    match sondera_guard::reclassify(&output, Some(&pending)) {
        Some(Payload::ShellCommandOutput {
            exit_code: 1,
            stderr,
            ..
        }) => assert_eq!(stderr, "boom"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_web_tool_given_a_file_url_reads_a_file() {
    match classify(
        "web_fetch",
        json!({"url": "file:///home/dev/.aws/credentials"}),
    ) {
        Payload::FileOperation {
            operation: Op::Read,
            path,
            ..
        } => assert_eq!(path, "/home/dev/.aws/credentials"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sondera_guard::path_arguments(&json!({"uri": "FILE://localhost/etc/shadow"})),
        ["/etc/shadow"]
    );
    assert_eq!(sondera_guard::file_url_path("file://example.com/x"), None);
}
