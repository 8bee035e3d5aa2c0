//! Warnings about policies that load but are probably not what their author
//! meant: missing annotations, and rules that repeat another's scope and
//! conditions (so one of them never decides anything on its own).

use std::collections::HashMap;

use crate::error::PolicyError;
use crate::load::{LoadedPolicy, Source};

/// Annotations every policy should carry, and why.
const EXPECTED_ANNOTATIONS: &[(&str, &str)] = &[
    (
        "description",
        "say what the rule stops: it is shown with every verdict",
    ),
    (
        "severity",
        "give `@severity(\"low\" | \"medium\" | \"high\" | \"critical\")`",
    ),
];

pub(crate) fn lint(sources: &[Source], policies: &[LoadedPolicy]) -> Vec<PolicyError> {
    let mut warnings = Vec::new();
    let mut first_with_body: HashMap<String, &LoadedPolicy> = HashMap::new();
    for policy in policies {
        let warn = |message: String, help: &str| {
            let (line, column) = locate(sources, policy);
            PolicyError {
                span_len: 0,
                file: policy.file.clone(),
                line,
                column,
                policy_id: Some(policy.metadata.policy_id.clone()),
                message,
                help: Some(help.to_string()),
            }
        };
        for (name, help) in EXPECTED_ANNOTATIONS {
            if !policy.metadata.annotations.contains_key(*name) {
                warnings.push(warn(format!("no @{name} annotation"), help));
            }
        }
        let Some(body) = body_key(policy) else {
            continue;
        };
        match first_with_body.get(&body) {
            Some(first) => warnings.push(warn(
                format!(
                    "same effect, scope and conditions as `{}` ({}); one of the two never decides anything the other would not",
                    first.metadata.policy_id, first.file
                ),
                "remove one, or change its conditions",
            )),
            None => {
                first_with_body.insert(body, policy);
            }
        }
    }
    warnings
}

/// The policy without its annotations, as JSON text: equal keys mean equal
/// effect, scope and conditions.
fn body_key(policy: &LoadedPolicy) -> Option<String> {
    let mut json = policy.policy.to_json().ok()?;
    json.as_object_mut()?.remove("annotations");
    Some(json.to_string())
}

/// Where the policy's `@id` annotation is written, (0, 0) if not found.
fn locate(sources: &[Source], policy: &LoadedPolicy) -> (usize, usize) {
    sources
        .iter()
        .find(|s| s.name == policy.file)
        .map_or((0, 0), |source| {
            source.id_location(&policy.metadata.policy_id)
        })
}
