//! Loading policies: each problem named with its file, line and column.

use sondera_policy::{PolicyEngine, PolicyError};

fn errors_of(files: &[(&str, &str)]) -> Vec<PolicyError> {
    files
        .iter()
        .fold(PolicyEngine::builder(), |b, (name, text)| {
            b.policy_source(*name, *text)
        })
        .build()
        .expect_err("the set must be rejected")
        .0
}

const GOOD: &str = r#"@id("ok") @description("Allow the rest") @severity("info") permit (principal, action, resource);"#;

#[test]
fn syntax_errors_name_file_line_and_column() {
    let errors = errors_of(&[(
        "a.cedar",
        "@id(\"x\")\npermit (principal, action, resource)\nwhen { context.command like };",
    )]);
    let e = &errors[0];
    assert_eq!((e.file.as_str(), e.line), ("a.cedar", 3), "{e}");
    assert!(e.column > 1, "{e}");
    assert!(e.to_string().starts_with("a.cedar:3:"), "{e}");
}

#[test]
fn every_policy_needs_an_id() {
    let errors = errors_of(&[(
        "a.cedar",
        &format!("{GOOD}\n\npermit (principal, action, resource);"),
    )]);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        (
            errors[0].line,
            errors[0].column,
            errors[0].policy_id.as_deref()
        ),
        (3, 1, None)
    );
    assert!(errors[0].message.contains("no @id"));
    assert!(errors[0].help.as_deref().unwrap().contains("@id(\""));
}

#[test]
fn ids_are_unique_across_files() {
    let errors = errors_of(&[("a.cedar", GOOD), ("b.cedar", GOOD)]);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        (errors[0].file.as_str(), errors[0].policy_id.as_deref()),
        ("b.cedar", Some("ok"))
    );
    assert!(
        errors[0].message.contains("already used in a.cedar"),
        "{}",
        errors[0]
    );
}

#[test]
fn escalate_is_only_valid_on_forbid() {
    let errors = errors_of(&[(
        "a.cedar",
        r#"@id("p") @escalate permit (principal, action, resource);"#,
    )]);
    assert_eq!(errors[0].policy_id.as_deref(), Some("p"));
    assert!(
        errors[0]
            .message
            .contains("@escalate is only valid on forbid")
    );
}

#[test]
fn unknown_mode_annotation_is_rejected() {
    let errors = errors_of(&[(
        "a.cedar",
        r#"@id("p") @mode("audit") forbid (principal, action, resource);"#,
    )]);
    assert!(
        errors[0].message.contains("unknown @mode(\"audit\")"),
        "{}",
        errors[0]
    );
}

#[test]
fn schema_violations_name_the_policy_and_its_position() {
    let text = "@id(\"ok\") permit (principal, action, resource);\n\n@id(\"typo\")\nforbid (principal, action == Sondera::Action::\"ShellCommand\", resource)\nwhen { context.comand == \"ls\" };\n";
    let errors = errors_of(&[("pack/typo.cedar", text)]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(
        (e.file.as_str(), e.line, e.policy_id.as_deref()),
        ("pack/typo.cedar", 5, Some("typo")),
        "{e}"
    );
    assert!(e.message.contains("comand"), "{e}");
    assert!(
        e.help.as_deref().unwrap_or_default().contains("command"),
        "{e}"
    );
}

#[test]
fn unknown_actions_and_entity_types_are_rejected() {
    let errors = errors_of(&[(
        "a.cedar",
        r#"@id("x") forbid (principal, action == Sondera::Action::"Teleport", resource);"#,
    )]);
    assert!(errors[0].message.contains("Teleport"), "{}", errors[0]);
}

#[test]
fn every_problem_is_reported_and_nothing_loads_partially() {
    let errors = errors_of(&[
        ("good.cedar", GOOD),
        ("a.cedar", "permit (principal, action, resource);"),
        (
            "b.cedar",
            "@id(\"b\") permit (principal, action, resource) when { ;",
        ),
        (
            "c.cedar",
            r#"@id("c") @escalate permit (principal, action, resource);"#,
        ),
    ]);
    let files: Vec<&str> = errors.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, ["a.cedar", "b.cedar", "c.cedar"], "{errors:?}");
}

#[test]
fn directories_load_policies_and_schema_fragments_recursively() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    std::fs::write(dir.path().join("base.cedar"), GOOD).unwrap();
    std::fs::write(dir.path().join("README.md"), "not a policy").unwrap();
    std::fs::write(
        dir.path().join("nested/args.cedarschema"),
        "namespace Sondera { type ToolArgs = { \"pay\"?: { amount: Long } }; }",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("nested/pay.cedar"),
        r#"@id("pay-limit") @description("Large payments") @severity("high") forbid (principal, action == Sondera::Action::"PreToolUse", resource) when { context.args has pay && context.args.pay.amount > 5 };"#,
    )
    .unwrap();
    let engine = PolicyEngine::builder()
        .directory(dir.path())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(engine.policy_ids().collect::<Vec<_>>(), ["ok", "pay-limit"]);
    assert!(engine.warnings().is_empty(), "{:?}", engine.warnings());
}

#[test]
fn a_missing_directory_is_an_error_naming_it() {
    let err = PolicyEngine::builder()
        .directory("/nonexistent/policies")
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("/nonexistent/policies: cannot read"),
        "{err}"
    );
}

#[test]
fn broken_schema_fragments_are_located() {
    let err = PolicyEngine::builder()
        .schema_source(
            "ext.cedarschema",
            "namespace Sondera {\n  entity Broken = {\n    x: ,\n  };\n}",
        )
        .policy_source("a.cedar", GOOD)
        .build()
        .unwrap_err();
    let e = &err.0[0];
    assert_eq!((e.file.as_str(), e.line), ("ext.cedarschema", 3), "{e}");
}

#[test]
fn builtin_packs_have_complete_annotations() {
    let engine = PolicyEngine::builtin().unwrap();
    for id in engine.policy_ids() {
        let meta = engine.policy(id).unwrap();
        assert!(meta.description.is_some(), "{id} has no @description");
        assert!(
            meta.annotations.contains_key("severity"),
            "{id} has no @severity"
        );
    }
    assert!(engine.warnings().is_empty(), "{:?}", engine.warnings());
}

#[test]
fn lint_warns_about_missing_annotations_and_repeated_rules() {
    let engine = PolicyEngine::builder()
        .policy_source(
            "mine.cedar",
            r#"@id("all") @description("d") @severity("info")
permit (principal, action, resource);

@id("bare")
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.shell.dynamic };

@id("again") @description("d") @severity("high") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.shell.dynamic };
"#,
        )
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let warnings: Vec<(Option<&str>, usize, &str)> = engine
        .warnings()
        .iter()
        .map(|w| (w.policy_id.as_deref(), w.line, w.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            (Some("bare"), 4, "no @description annotation"),
            (Some("bare"), 4, "no @severity annotation"),
            (
                Some("again"),
                8,
                "same effect, scope and conditions as `bare` (mine.cedar); one of the two never decides anything the other would not"
            ),
        ]
    );
    let builtin = PolicyEngine::builder()
        .builtin_packs()
        .lint_builtin_packs()
        .build()
        .unwrap();
    assert!(
        builtin.warnings().is_empty(),
        "the built-in packs lint clean: {:?}",
        builtin.warnings()
    );
}
