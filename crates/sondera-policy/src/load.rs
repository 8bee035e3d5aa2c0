//! Loading policy sets: sources, schema composition, per-policy rules and
//! strict validation, with every problem located in its file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;

use cedar_policy::{
    Effect, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy, PolicyId, PolicySet,
    Schema, SchemaFragment, ValidationMode, Validator, pst,
};
use sondera_model::{AgentCard, PolicyMetadata};

use crate::args::{ArgType, tool_args_fragment};
use crate::error::{PolicyError, PolicyLoadErrors, from_diagnostic, line_column};

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

/// The base schema in Cedar's JSON form, and the built-in packs' revision,
/// generated from the texts above; a test keeps it current (regenerate with
/// `SONDERA_UPDATE_BUILTIN=1 cargo test -p sondera-policy`). Cedar reads
/// the schema's JSON form for a tenth of what parsing its text costs, which
/// every fresh process paid before its first verdict. (The packs themselves
/// are built as syntax trees: [`crate::builtin`].)
const BUILTIN_FORMS: &str = include_str!("../../../policies/builtin.json");

/// [`BUILTIN_FORMS`], read.
#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct BuiltinForms {
    /// Kept as text: Cedar reads a schema from JSON text for less than
    /// from a `serde_json::Value`, and the file is not parsed twice.
    schema: Box<serde_json::value::RawValue>,
    /// The [`revision`] of the built-in packs alone.
    revision: String,
    /// Each action of the base schema and the actions it is in (directly
    /// or not): all a set that adds no fragment needs of its schema to
    /// judge.
    actions: BTreeMap<String, Vec<String>>,
}

impl BuiltinForms {
    fn read() -> Self {
        serde_json::from_str(BUILTIN_FORMS).expect("policies/builtin.json is Cedar's JSON forms")
    }

    /// The base schema's action entities, as [`Schema::action_entities`]
    /// gives them.
    fn action_entities(&self) -> Result<Entities, String> {
        // Cedar parses a type name with its grammar: once, not per action.
        let action_type = EntityTypeName::from_str(ACTION_TYPE).expect("the action type is a name");
        let uid =
            |id: &str| EntityUid::from_type_name_and_id(action_type.clone(), EntityId::new(id));
        let actions = self.actions.iter().map(|(action, groups)| {
            Entity::new_no_attrs(uid(action), groups.iter().map(|g| uid(g)).collect())
        });
        Entities::from_entities(actions, None).map_err(|e| e.to_string())
    }
}

/// The type of every action the base schema declares.
const ACTION_TYPE: &str = "Sondera::Action";

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
    /// A built-in policy's syntax tree, without annotations (cheap to make
    /// variants of), and what slicing reads of it.
    pub generated: Option<(pst::Template, crate::builtin::Reading)>,
    pub metadata: PolicyMetadata,
    /// `@mode("monitor")`: reported when it matches, never decides.
    pub shadow: bool,
    pub steer: Option<String>,
    pub file: String,
}

pub(crate) struct Loaded {
    pub schema: LoadedSchema,
    /// The schema's actions, with the groups each is in.
    pub action_entities: Entities,
    pub revision: String,
    pub policies: Vec<LoadedPolicy>,
    pub tool_args: BTreeMap<String, ArgType>,
    pub warnings: Vec<PolicyError>,
}

/// The policy files and schema fragments of a directory, as a pushed set
/// carries them: each named by its path under `dir`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyDirectory {
    /// `.cedar` files, as (name, text), in path order.
    pub policies: Vec<(String, String)>,
    /// `.cedarschema` fragments, as (name, text), in path order.
    pub schemas: Vec<(String, String)>,
}

impl PolicyDirectory {
    /// Reads every `.cedar` and `.cedarschema` file under `dir`.
    pub fn read(dir: &Path) -> Result<Self, PolicyLoadErrors> {
        let (mut policies, mut schemas, mut errors) = (Vec::new(), Vec::new(), Vec::new());
        read_dir(dir, &mut policies, &mut schemas, &mut errors);
        if !errors.is_empty() {
            return Err(PolicyLoadErrors(errors));
        }
        let relative = |sources: Vec<Source>| {
            sources
                .into_iter()
                .map(|s| {
                    let name = Path::new(&s.name)
                        .strip_prefix(dir)
                        .map(|p| p.display().to_string())
                        .unwrap_or(s.name);
                    (name, s.text)
                })
                .collect()
        };
        Ok(Self {
            policies: relative(policies),
            schemas: relative(schemas),
        })
    }
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
    check: bool,
) -> Result<Loaded, Vec<PolicyError>> {
    let forms = BuiltinForms::read();
    let (fragments, declared) = parse_fragments(schemas)?;
    let generated = declared.is_none().then(|| cards_fragment(cards));
    let tool_args =
        tool_arg_types(declared.or_else(|| generated.as_ref().and_then(declared_tool_args)))?;
    let (schema, action_entities) = match generated {
        Some(generated) if !check && schemas.is_empty() => (
            LoadedSchema::later(generated),
            forms.action_entities().map_err(schema_internal)?,
        ),
        generated => {
            let schema = compose(&forms, fragments, generated)?;
            let actions = schema
                .action_entities()
                .map_err(|e| schema_internal(e.to_string()))?;
            (LoadedSchema::composed(schema), actions)
        }
    };
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
    // The built-in packs alone are validated and linted by the project's
    // tests (and by `policy check`): what a process adds to the schema,
    // `Sondera::ToolArgs`, no pack reads.
    let mut warnings = if check {
        validate(schema.get().map_err(|e| e.0)?, policies, &loaded)?
    } else {
        Vec::new()
    };
    if check {
        warnings.extend(crate::lint::lint(policies, &loaded));
    }
    let revision = if is_builtin_set(schemas, policies) {
        forms.revision
    } else {
        revision(schemas, policies)
    };
    Ok(Loaded {
        schema,
        action_entities,
        revision,
        policies: loaded,
        tool_args,
        warnings,
    })
}

/// A policy set's revision: 64 hex digits of a SHA-256 over the SHA-256 of
/// each source's text, the base schema's included, each marked as schema or
/// policies, in sorted order. Neither the files' names nor their order
/// change what a set decides, so neither changes its revision: the same
/// policies pushed from two checkouts are one revision.
pub(crate) fn revision(schemas: &[Source], policies: &[Source]) -> String {
    use sha2::{Digest, Sha256};
    let base = std::iter::once(BASE_SCHEMA);
    let mut parts: Vec<[u8; 33]> = base
        .chain(schemas.iter().map(|s| s.text.as_str()))
        .map(|text| (b's', text))
        .chain(policies.iter().map(|s| (b'p', s.text.as_str())))
        .map(|(kind, text)| {
            let mut part = [0u8; 33];
            part[0] = kind;
            part[1..].copy_from_slice(&Sha256::digest(text.as_bytes()));
            part
        })
        .collect();
    parts.sort_unstable();
    let mut hasher = Sha256::new();
    for part in &parts {
        hasher.update(part);
    }
    hex::encode(hasher.finalize())
}

/// Whether the set is the built-in packs alone, whose revision is known.
fn is_builtin_set(schemas: &[Source], policies: &[Source]) -> bool {
    schemas.is_empty()
        && policies.len() == BUILTIN_PACKS.len()
        && policies
            .iter()
            .zip(BUILTIN_PACKS)
            .all(|(source, (name, text))| source.name == *name && source.text == *text)
}

fn schema_error(file: &str, text: &str, diagnostic: &dyn miette::Diagnostic) -> PolicyError {
    from_diagnostic(file, text, None, diagnostic)
}

/// The schema a set is judged with. Composing it was a quarter of what a
/// fresh process spent before its first verdict, and only checking
/// policies reads it (judging needs only the actions, which
/// [`BuiltinForms`] lists): so a set of the built-in packs alone, which
/// the project's tests check, composes it the first time it is asked for.
#[derive(Debug)]
pub(crate) struct LoadedSchema {
    composed: std::sync::OnceLock<Result<Schema, PolicyLoadErrors>>,
    /// The fragment the agent cards' tools make, when composing is left
    /// for later.
    cards_fragment: Option<serde_json::Value>,
}

impl LoadedSchema {
    fn composed(schema: Schema) -> Self {
        Self {
            composed: Ok(schema).into(),
            cards_fragment: None,
        }
    }

    fn later(cards_fragment: serde_json::Value) -> Self {
        Self {
            composed: std::sync::OnceLock::new(),
            cards_fragment: Some(cards_fragment),
        }
    }

    /// The base schema composed with the set's fragments.
    pub(crate) fn get(&self) -> Result<&Schema, PolicyLoadErrors> {
        self.composed
            .get_or_init(|| {
                compose(
                    &BuiltinForms::read(),
                    Vec::new(),
                    self.cards_fragment.clone(),
                )
                .map_err(PolicyLoadErrors)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// An error in composing the schema that no one file is to blame for.
fn schema_internal(message: String) -> Vec<PolicyError> {
    vec![PolicyError::in_file("schema", message)]
}

/// The set's own fragments, parsed, and the `Sondera::ToolArgs` the first
/// that declares it declares.
fn parse_fragments(
    schemas: &[Source],
) -> Result<(Vec<SchemaFragment>, Option<ToolArgsJson>), Vec<PolicyError>> {
    let mut errors = Vec::new();
    let mut fragments = Vec::new();
    let mut declared = None;
    for source in schemas {
        match parse_fragment(source) {
            Ok((fragment, tool_args)) => {
                fragments.push(fragment);
                declared = declared.or(tool_args);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok((fragments, declared))
    } else {
        Err(errors)
    }
}

/// The fragment declaring `Sondera::ToolArgs` from the agent cards' tools,
/// for a set whose fragments do not declare it.
fn cards_fragment(cards: &[AgentCard]) -> serde_json::Value {
    let tools: Vec<_> = cards
        .iter()
        .flat_map(|AgentCard::React { tools, .. }| tools.iter().cloned())
        .collect();
    tool_args_fragment(&tools)
}

/// Each tool's argument types, from a `Sondera::ToolArgs` declaration
/// (none declared: no tool's).
fn tool_arg_types(
    declared: Option<ToolArgsJson>,
) -> Result<BTreeMap<String, ArgType>, Vec<PolicyError>> {
    let (record, common) = declared.unwrap_or_default();
    match ArgType::from_schema_json(&record, &common) {
        Ok(ArgType::Record(attrs)) => Ok(attrs.into_iter().map(|(k, (ty, _))| (k, ty)).collect()),
        Ok(_) | Err(_) => Err(schema_internal(
            "Sondera::ToolArgs must be a record of tool names to argument records of Long, String, Bool, decimal, sets and records".into(),
        )),
    }
}

/// The base schema with the set's fragments and, unless one of them
/// declares `Sondera::ToolArgs`, the one the agent cards make. (The base
/// schema refers to `Sondera::ToolArgs` but never declares it; a test
/// holds it to that.)
fn compose(
    forms: &BuiltinForms,
    mut fragments: Vec<SchemaFragment>,
    cards_fragment: Option<serde_json::Value>,
) -> Result<Schema, Vec<PolicyError>> {
    fragments.insert(0, base_schema(forms));
    if let Some(generated) = cards_fragment {
        let fragment = SchemaFragment::from_json_value(generated).map_err(|e| {
            vec![PolicyError::in_file(
                "<tool arguments from agent cards>",
                format!("the agent cards' tool arguments make no schema: {e}"),
            )]
        })?;
        fragments.push(fragment);
    }
    Schema::from_schema_fragments(fragments).map_err(|e| {
        let message = format!("the schema fragments do not compose: {e}");
        vec![PolicyError {
            help: miette::Diagnostic::help(&e).map(|h| h.to_string()),
            ..PolicyError::in_file("schema", message)
        }]
    })
}

type ToolArgsJson = (serde_json::Value, serde_json::Value);

fn base_schema(forms: &BuiltinForms) -> SchemaFragment {
    SchemaFragment::from_json_str(forms.schema.get())
        .expect("the base schema's JSON form is a schema fragment")
}

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
    let json = fragment.clone().to_json_value().unwrap_or_default();
    Ok((fragment, declared_tool_args(&json)))
}

/// The `Sondera::ToolArgs` declaration of a fragment in Cedar's JSON form,
/// if any, with its common types for resolving references.
fn declared_tool_args(fragment: &serde_json::Value) -> Option<ToolArgsJson> {
    let common = &fragment["Sondera"]["commonTypes"];
    let record = common.get("ToolArgs")?.clone();
    Some((record, common.clone()))
}

/// Parses one file and applies the per-policy rules to each policy in it.
/// A built-in pack is built from its generated syntax trees.
fn parse_file(source: &Source, errors: &mut Vec<PolicyError>) -> Vec<LoadedPolicy> {
    let builtin = builtin_source(&source.name) == Some(source.text.as_str());
    match crate::builtin::pack(&source.name).filter(|_| builtin) {
        Some(policies) => builtin_policies(source, policies, errors),
        None => parse_text(source, errors),
    }
}

fn builtin_policies(
    source: &Source,
    policies: Vec<crate::builtin::BuiltinPolicy>,
    errors: &mut Vec<PolicyError>,
) -> Vec<LoadedPolicy> {
    policies
        .into_iter()
        .filter_map(|builtin| {
            let annotations: BTreeMap<String, String> = builtin
                .annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let tree = builtin.template;
            let static_policy = pst::StaticPolicy::try_from(tree.clone())
                .expect("the generated policies have no slots");
            let policy = Policy::from_pst(pst::Policy::Static(static_policy))
                .expect("the generated policies are Cedar's syntax trees of the packs");
            let id = annotations.get("id").cloned();
            let at = || id.as_deref().map_or((0, 0), |id| source.id_location(id));
            let mut loaded = check_policy(source, &policy, annotations, at, errors)?;
            loaded.generated = Some((tree, builtin.reading));
            Some(loaded)
        })
        .collect()
}

fn parse_text(source: &Source, errors: &mut Vec<PolicyError>) -> Vec<LoadedPolicy> {
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
    let mut policies: Vec<&Policy> = in_file_order(&set);
    let mut search_from = 0;
    policies
        .drain(..)
        .filter_map(|policy| {
            let text = policy.to_string();
            let offset = source.text[search_from..]
                .find(&text)
                .map_or(search_from, |i| search_from + i);
            search_from = offset + text.len().min(source.text.len() - offset);
            let annotations = policy
                .annotations()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            check_policy(
                source,
                policy,
                annotations,
                || line_column(&source.text, offset),
                errors,
            )
        })
        .collect()
}

/// The policies of a parsed file in the order they are written: Cedar
/// numbers them `policy0`, `policy1`, ...
pub(crate) fn in_file_order(set: &PolicySet) -> Vec<&Policy> {
    let mut policies: Vec<&Policy> = set.policies().collect();
    policies.sort_by_key(|p| {
        p.id().to_string()[6..]
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    policies
}

impl Source {
    /// Where `@id("id")` is written in this file, (0, 0) if not found.
    pub(crate) fn id_location(&self, id: &str) -> (usize, usize) {
        self.text
            .find(&format!("@id(\"{id}\")"))
            .map_or((0, 0), |offset| line_column(&self.text, offset))
    }
}

/// `policy`, whose annotations are `annotations`, if it passes the
/// per-policy rules. `at` finds where it is written, which only an error
/// needs: searching the file for every policy a process loads costs more
/// than a fresh process's first verdict can spare.
fn check_policy(
    source: &Source,
    policy: &Policy,
    annotations: BTreeMap<String, String>,
    at: impl Fn() -> (usize, usize),
    errors: &mut Vec<PolicyError>,
) -> Option<LoadedPolicy> {
    let error = |id: Option<&str>, message: String, help: &str| {
        let (line, column) = at();
        PolicyError {
            span_len: 0,
            file: source.name.clone(),
            line,
            column,
            policy_id: id.map(str::to_string),
            message,
            help: Some(help.to_string()),
        }
    };
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
        generated: None,
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

    /// The JSON form of the base schema and the packs' revision, made from
    /// their texts.
    fn builtin_forms_from_text() -> BuiltinForms {
        let (schema, _) = SchemaFragment::from_cedarschema_str(BASE_SCHEMA).unwrap();
        let builtin: Vec<Source> = BUILTIN_PACKS
            .iter()
            .map(|(name, text)| Source {
                name: name.to_string(),
                text: text.to_string(),
            })
            .collect();
        let composed = Schema::from_schema_fragments([
            schema.clone(),
            SchemaFragment::from_json_value(tool_args_fragment(&[])).unwrap(),
        ])
        .unwrap();
        BuiltinForms {
            schema: serde_json::value::to_raw_value(&schema.to_json_value().unwrap()).unwrap(),
            revision: revision(&[], &builtin),
            actions: actions_of(&composed.action_entities().unwrap()),
        }
    }

    /// Each action and the actions it is in, by id.
    fn actions_of(entities: &Entities) -> BTreeMap<String, Vec<String>> {
        entities
            .iter()
            .map(|action| {
                assert_eq!(action.uid().type_name().to_string(), ACTION_TYPE);
                let mut groups: Vec<String> = entities
                    .ancestors(&action.uid())
                    .into_iter()
                    .flatten()
                    .map(|group| group.id().unescaped().to_string())
                    .collect();
                groups.sort();
                (action.uid().id().unescaped().to_string(), groups)
            })
            .collect()
    }

    /// A set that composes its schema later judges with the actions the
    /// composed schema has.
    #[test]
    fn the_listed_actions_are_the_schemas() {
        let forms = BuiltinForms::read();
        let listed = forms.action_entities().unwrap();
        let composed = compose(&forms, Vec::new(), Some(tool_args_fragment(&[]))).unwrap();
        assert_eq!(
            actions_of(&listed),
            actions_of(&composed.action_entities().unwrap())
        );
        assert!(actions_of(&listed)["FileWrite"].contains(&"ToolUse".to_string()));
    }

    #[test]
    fn the_checked_in_json_forms_match_the_texts() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/builtin.json");
        let generated = builtin_forms_from_text();
        if std::env::var_os("SONDERA_UPDATE_BUILTIN").is_some() {
            let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
            std::fs::write(&path, text).unwrap();
        }
        let checked_in: BuiltinForms =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let schema = |forms: &BuiltinForms| {
            serde_json::from_str::<serde_json::Value>(forms.schema.get()).unwrap()
        };
        assert!(
            schema(&checked_in) == schema(&generated)
                && checked_in.revision == generated.revision
                && checked_in.actions == generated.actions,
            "policies/builtin.json is stale: run SONDERA_UPDATE_BUILTIN=1 cargo test -p sondera-policy"
        );
    }

    /// Loading from the generated syntax trees gives the policies, metadata
    /// and locations that parsing the texts gives.
    #[test]
    fn the_builtin_trees_load_as_the_texts_do() {
        for (name, text) in BUILTIN_PACKS {
            let source = Source {
                name: name.to_string(),
                text: text.to_string(),
            };
            let mut errors = Vec::new();
            let built = parse_file(&source, &mut errors);
            let from_text = parse_text(&source, &mut errors);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(built.len(), from_text.len(), "{name}");
            for (a, b) in built.iter().zip(&from_text) {
                assert!(b.generated.is_none());
                let (_, reading) = a.generated.as_ref().unwrap();
                let json = b.policy.to_json().unwrap();
                assert_eq!(
                    *reading,
                    crate::builtin::Reading {
                        condition: crate::prefilter::Condition::of_policy(&json),
                        mentions_action: crate::engine::mentions_action(&json["conditions"]),
                    }
                );
                assert_eq!(a.metadata, b.metadata);
                assert_eq!((a.shadow, &a.steer, &a.file), (b.shadow, &b.steer, &b.file));
                let bare = |p: &Policy| {
                    let mut json = p.to_json().unwrap();
                    json.as_object_mut().unwrap().remove("annotations");
                    json
                };
                assert_eq!(bare(&a.policy), bare(&b.policy));
                assert_eq!(a.policy.id(), b.policy.id());
                assert_eq!(
                    source.id_location(&a.metadata.policy_id),
                    source.id_location(&b.metadata.policy_id)
                );
            }
        }
    }

    /// A process that loads only the built-in packs skips validating them:
    /// they must validate, with the tool arguments an agent card adds too.
    #[test]
    fn the_builtin_packs_validate_strictly() {
        let sources: Vec<Source> = BUILTIN_PACKS
            .iter()
            .map(|(name, text)| Source {
                name: name.to_string(),
                text: text.to_string(),
            })
            .collect();
        let card: AgentCard = serde_json::from_value(serde_json::json!({
            "type": "react",
            "system_instruction": "",
            "tools": [{
                "name": "send_email",
                "description": "",
                "parameters": {"type": "object", "properties": {
                    "to": {"type": "string"}, "cc": {"type": "array", "items": {"type": "string"}}
                }, "required": ["to"]}
            }]
        }))
        .unwrap();
        for cards in [vec![], vec![card]] {
            let loaded = load(&[], &sources, &cards, true).unwrap_or_else(|e| panic!("{e:?}"));
            assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        }
    }

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
