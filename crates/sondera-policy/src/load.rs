//! Loading policy sets: sources, schema composition, per-policy rules and
//! strict validation, with every problem located in its file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;

use cedar_policy::{
    Effect, Policy, PolicyId, PolicySet, Schema, SchemaFragment, ValidationMode, Validator,
};
use sondera_model::{AgentCard, PolicyMetadata};

use crate::args::{ArgType, tool_args_fragment};
use crate::error::{PolicyError, from_diagnostic, line_column};

/// The schema every policy set is validated against.
pub const BASE_SCHEMA: &str = include_str!("../../../policies/schema.cedarschema");

/// The policy packs built into the binary, as (name, Cedar text).
pub const BUILTIN_PACKS: &[(&str, &str)] = &[
    (
        "policies/packs/base.cedar",
        include_str!("../../../policies/packs/base.cedar"),
    ),
    (
        "policies/packs/destructive.cedar",
        include_str!("../../../policies/packs/destructive.cedar"),
    ),
    (
        "policies/packs/shell-integrity.cedar",
        include_str!("../../../policies/packs/shell-integrity.cedar"),
    ),
    (
        "policies/packs/credentials.cedar",
        include_str!("../../../policies/packs/credentials.cedar"),
    ),
    (
        "policies/packs/exfiltration.cedar",
        include_str!("../../../policies/packs/exfiltration.cedar"),
    ),
    (
        "policies/packs/supply-chain.cedar",
        include_str!("../../../policies/packs/supply-chain.cedar"),
    ),
    (
        "policies/packs/persistence-and-privilege.cedar",
        include_str!("../../../policies/packs/persistence-and-privilege.cedar"),
    ),
    (
        "policies/packs/prompt-injection.cedar",
        include_str!("../../../policies/packs/prompt-injection.cedar"),
    ),
    (
        "policies/packs/trajectory.cedar",
        include_str!("../../../policies/packs/trajectory.cedar"),
    ),
];

const BASE_SCHEMA_NAME: &str = "policies/schema.cedarschema";

/// The text of an embedded source (the base schema or a built-in pack) by the
/// name errors give for it.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    if name == BASE_SCHEMA_NAME {
        return Some(BASE_SCHEMA);
    }
    BUILTIN_PACKS
        .iter()
        .find(|(pack, _)| *pack == name)
        .map(|(_, text)| *text)
}

#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub name: String,
    pub text: String,
}

/// A policy that passed every load-time rule.
#[derive(Debug, Clone)]
pub(crate) struct LoadedPolicy {
    pub policy: Policy,
    pub metadata: PolicyMetadata,
    /// `@mode("monitor")`: reported when it matches, never decides.
    pub shadow: bool,
    pub steer: Option<String>,
    pub file: String,
}

pub(crate) struct Loaded {
    pub schema: Schema,
    pub policies: Vec<LoadedPolicy>,
    pub tool_args: BTreeMap<String, ArgType>,
    pub warnings: Vec<PolicyError>,
}

/// Reads every `.cedar` and `.cedarschema` file under `dir`, in path order.
pub(crate) fn read_dir(
    dir: &Path,
    policies: &mut Vec<Source>,
    schemas: &mut Vec<Source>,
    errors: &mut Vec<PolicyError>,
) {
    let io_error = |path: &Path, e: std::io::Error| PolicyError {
        span_len: 0,
        file: path.display().to_string(),
        line: 0,
        column: 0,
        policy_id: None,
        message: format!("cannot read: {e}"),
        help: None,
    };
    let mut entries: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => return errors.push(io_error(dir, e)),
    };
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_dir(&path, policies, schemas, errors);
            continue;
        }
        let target = match path.extension().and_then(|e| e.to_str()) {
            Some("cedar") => &mut *policies,
            Some("cedarschema") => &mut *schemas,
            _ => continue,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => target.push(Source {
                name: path.display().to_string(),
                text,
            }),
            Err(e) => errors.push(io_error(&path, e)),
        }
    }
}

pub(crate) fn load(
    schemas: &[Source],
    policies: &[Source],
    cards: &[AgentCard],
    lint: bool,
) -> Result<Loaded, Vec<PolicyError>> {
    let (schema, tool_args) = compose_schema(schemas, cards)?;
    let mut errors = Vec::new();
    let mut loaded: Vec<LoadedPolicy> = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for source in policies {
        for policy in parse_file(source, &mut errors) {
            let id = policy.metadata.policy_id.as_str();
            if let Some(first) = seen.insert(id.to_string(), source.name.clone()) {
                errors.push(PolicyError {
                    span_len: 0,
                    file: source.name.clone(),
                    line: 0,
                    column: 0,
                    policy_id: Some(id.to_string()),
                    message: format!("duplicate @id: already used in {first}"),
                    help: Some("give every policy a unique @id".into()),
                });
                continue;
            }
            loaded.push(policy);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut warnings = validate(&schema, policies, &loaded)?;
    if lint {
        warnings.extend(crate::lint::lint(policies, &loaded));
    }
    Ok(Loaded {
        schema,
        policies: loaded,
        tool_args,
        warnings,
    })
}

fn schema_error(file: &str, text: &str, diagnostic: &dyn miette::Diagnostic) -> PolicyError {
    from_diagnostic(file, text, None, diagnostic)
}

/// The base schema plus fragments; `Sondera::ToolArgs` is taken from a
/// fragment that declares it, else generated from the agent cards, else empty.
fn compose_schema(
    schemas: &[Source],
    cards: &[AgentCard],
) -> Result<(Schema, BTreeMap<String, ArgType>), Vec<PolicyError>> {
    let base = Source {
        name: BASE_SCHEMA_NAME.into(),
        text: BASE_SCHEMA.into(),
    };
    let mut errors = Vec::new();
    let mut fragments = Vec::new();
    let mut tool_args_json = None;
    // The base schema refers to `Sondera::ToolArgs` but never declares it
    // (a test holds it to that), so it is parsed once, not twice.
    match parse_schema_text(&base) {
        Ok(fragment) => fragments.push(fragment),
        Err(e) => errors.push(e),
    }
    for source in schemas {
        match parse_fragment(source) {
            Ok((fragment, declared)) => {
                fragments.push(fragment);
                tool_args_json = tool_args_json.or(declared);
            }
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if tool_args_json.is_none() {
        let tools: Vec<_> = cards
            .iter()
            .flat_map(|AgentCard::React { tools, .. }| tools.iter().cloned())
            .collect();
        let generated = Source {
            name: "<tool arguments from agent cards>".into(),
            text: tool_args_fragment(&tools),
        };
        let (fragment, declared) = parse_fragment(&generated).map_err(|e| vec![e])?;
        fragments.push(fragment);
        tool_args_json = declared;
    }
    let (record, common) = tool_args_json.unwrap_or_default();
    let tool_args = match ArgType::from_schema_json(&record, &common) {
        Ok(ArgType::Record(attrs)) => attrs.into_iter().map(|(k, (ty, _))| (k, ty)).collect(),
        Ok(_) | Err(_) => {
            return Err(vec![PolicyError {
                span_len: 0,
                file: "schema".into(),
                line: 0,
                column: 0,
                policy_id: None,
                message: "Sondera::ToolArgs must be a record of tool names to argument records of Long, String, Bool, decimal, sets and records".into(),
                help: None,
            }]);
        }
    };
    let schema = Schema::from_schema_fragments(fragments).map_err(|e| {
        vec![PolicyError {
            span_len: 0,
            file: "schema".into(),
            line: 0,
            column: 0,
            policy_id: None,
            message: format!("the schema fragments do not compose: {e}"),
            help: miette::Diagnostic::help(&e).map(|h| h.to_string()),
        }]
    })?;
    Ok((schema, tool_args))
}

type ToolArgsJson = (serde_json::Value, serde_json::Value);

fn parse_schema_text(source: &Source) -> Result<SchemaFragment, PolicyError> {
    match SchemaFragment::from_cedarschema_str(&source.text) {
        Ok((fragment, _warnings)) => Ok(fragment),
        Err(e) => Err(schema_error(&source.name, &source.text, &e)),
    }
}

/// Parses one fragment and returns its `Sondera::ToolArgs` declaration, if any,
/// with the fragment's common types for resolving references.
fn parse_fragment(source: &Source) -> Result<(SchemaFragment, Option<ToolArgsJson>), PolicyError> {
    let fragment = parse_schema_text(source)?;
    let json = parse_schema_text(source)?
        .to_json_value()
        .unwrap_or_default();
    let common = json["Sondera"]["commonTypes"].clone();
    let declared = common
        .get("ToolArgs")
        .cloned()
        .map(|record| (record, common.clone()));
    Ok((fragment, declared))
}

/// Parses one file and applies the per-policy rules to each policy in it.
fn parse_file(source: &Source, errors: &mut Vec<PolicyError>) -> Vec<LoadedPolicy> {
    let set = match PolicySet::from_str(&source.text) {
        Ok(set) => set,
        Err(parse_errors) => {
            errors.extend(
                parse_errors
                    .iter()
                    .map(|e| from_diagnostic(&source.name, &source.text, None, e)),
            );
            return Vec::new();
        }
    };
    if set.templates().next().is_some() {
        errors.push(PolicyError {
            span_len: 0,
            file: source.name.clone(),
            line: 0,
            column: 0,
            policy_id: None,
            message: "policy templates (with ?principal or ?resource slots) are not supported"
                .into(),
            help: Some("write static policies".into()),
        });
    }
    let mut policies: Vec<&Policy> = set.policies().collect();
    // Cedar numbers policies `policy0`, `policy1`, ... in file order.
    policies.sort_by_key(|p| {
        p.id().to_string()[6..]
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    let mut search_from = 0;
    policies
        .into_iter()
        .filter_map(|policy| {
            let text = policy.to_string();
            let offset = source.text[search_from..]
                .find(&text)
                .map_or(search_from, |i| search_from + i);
            search_from = offset + text.len().min(source.text.len() - offset);
            check_policy(source, policy, line_column(&source.text, offset), errors)
        })
        .collect()
}

fn check_policy(
    source: &Source,
    policy: &Policy,
    (line, column): (usize, usize),
    errors: &mut Vec<PolicyError>,
) -> Option<LoadedPolicy> {
    let error = |id: Option<&str>, message: String, help: &str| PolicyError {
        span_len: 0,
        file: source.name.clone(),
        line,
        column,
        policy_id: id.map(str::to_string),
        message,
        help: Some(help.to_string()),
    };
    // Read once: each `Policy::annotation` lookup parses its key as a Cedar
    // identifier, which cost more than parsing the packs.
    let annotations: BTreeMap<String, String> = policy
        .annotations()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let annotation = |key: &str| annotations.get(key).map(String::as_str);
    let Some(id) = annotation("id").filter(|id| !id.trim().is_empty()) else {
        errors.push(error(
            None,
            "policy has no @id annotation".into(),
            "add @id(\"a-unique-name\") above the policy",
        ));
        return None;
    };
    let escalate_arg = annotation("escalate");
    if escalate_arg.is_some() && policy.effect() == Effect::Permit {
        errors.push(error(
            Some(id),
            "@escalate is only valid on forbid policies".into(),
            "remove @escalate or make the policy a forbid",
        ));
        return None;
    }
    let shadow = match annotation("mode") {
        None | Some("govern") => false,
        Some("monitor") => true,
        Some(other) => {
            errors.push(error(
                Some(id),
                format!("unknown @mode(\"{other}\")"),
                "use @mode(\"monitor\") to put a policy in shadow",
            ));
            return None;
        }
    };
    let policy = policy.new_id(PolicyId::new(id));
    let steer = annotation("steer").map(str::to_string);
    let metadata = PolicyMetadata {
        policy_id: id.to_string(),
        description: annotation("description").map(str::to_string),
        escalate: escalate_arg.is_some(),
        escalate_arg: escalate_arg.filter(|a| !a.is_empty()).map(str::to_string),
        annotations: annotations.clone(),
    };
    Some(LoadedPolicy {
        policy,
        steer,
        metadata,
        shadow,
        file: source.name.clone(),
    })
}

/// Strict validation of the whole set; returns the validator's warnings.
fn validate(
    schema: &Schema,
    sources: &[Source],
    policies: &[LoadedPolicy],
) -> Result<Vec<PolicyError>, Vec<PolicyError>> {
    let mut set = PolicySet::new();
    for p in policies {
        set.add(p.policy.clone())
            .expect("policy ids were checked to be unique");
    }
    let by_id: HashMap<&str, &LoadedPolicy> = policies
        .iter()
        .map(|p| (p.metadata.policy_id.as_str(), p))
        .collect();
    let text_of = |file: &str| {
        sources
            .iter()
            .find(|s| s.name == file)
            .map_or("", |s| s.text.as_str())
    };
    let locate = |id: &str, diagnostic: &dyn miette::Diagnostic| {
        let file = by_id.get(id).map_or("", |p| p.file.as_str());
        from_diagnostic(file, text_of(file), Some(id), diagnostic)
    };
    let result = Validator::new(schema.clone()).validate(&set, ValidationMode::Strict);
    let errors: Vec<PolicyError> = result
        .validation_errors()
        .map(|e| locate(e.policy_id().as_ref(), e))
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(result
        .validation_warnings()
        .map(|w| {
            let id = w.policy_id().to_string();
            locate(&id, w)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_schema_declares_no_tool_args() {
        let base = Source {
            name: BASE_SCHEMA_NAME.into(),
            text: BASE_SCHEMA.into(),
        };
        let (_, declared) = parse_fragment(&base).unwrap();
        assert!(
            declared.is_none(),
            "compose_schema reads the base schema as declaring none"
        );
    }
}
