use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cedar_policy::{
    ActionConstraint, Authorizer, Decision as CedarDecision, Effect, Entity, EntityUid, Policy,
    PolicyId, PolicySet, Request, Response, Schema,
};
use sondera_model::{
    Adjudicated, AgentCard, Decision, Event, Mode, PolicyMetadata, TrajectoryState,
};

use crate::args::ArgType;
use crate::error::{EvaluationError, PolicyError, PolicyLoadErrors};
use crate::load::{self, BUILTIN_PACKS, LoadedPolicy, Source};
use crate::prefilter::{Candidates, Condition, Prefilter, Screening};
use crate::request::{self, ActionName, CedarRequest, Environment, Names, Workspace};
use sondera_guard::net::HostAllowlist;

/// Configures and loads a [`PolicyEngine`].
///
/// ```
/// use sondera_policy::PolicyEngine;
/// use sondera_model::Mode;
///
/// let engine = PolicyEngine::builder()
///     .builtin_packs()
///     .policy_source("inline.cedar", r#"
///         @id("no-deletes")
///         forbid (principal, action == Sondera::Action::"FileDelete", resource);
///     "#)
///     .mode(Mode::Govern)
///     .build()
///     .expect("valid policies");
/// assert!(engine.policy("no-deletes").is_some());
/// ```
#[derive(Debug, Default)]
pub struct PolicyEngineBuilder {
    policies: Vec<Source>,
    schemas: Vec<Source>,
    cards: Vec<AgentCard>,
    mode: Mode,
    workspace: Option<Workspace>,
    allowed_hosts: HostAllowlist,
    errors: Vec<PolicyError>,
    /// Whether anything but the built-in packs was added.
    own_policies: bool,
    lint_builtin: bool,
}

impl PolicyEngineBuilder {
    /// Adds the packs built into the binary.
    #[must_use]
    pub fn builtin_packs(mut self) -> Self {
        for (name, text) in BUILTIN_PACKS {
            self.policies.push(Source {
                name: (*name).to_string(),
                text: (*text).to_string(),
            });
        }
        self
    }

    /// The policies of `dirs`, or the built-in packs when `dirs` is empty:
    /// a user's own directories replace the packs rather than add to them.
    #[must_use]
    pub fn builtin_or_directories<I, P>(self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let mut dirs = dirs.into_iter().peekable();
        if dirs.peek().is_none() {
            self.builtin_packs()
        } else {
            self.directories(dirs)
        }
    }

    /// Validates and lints a set of the built-in packs alone too. Both run
    /// in the project's tests, so by default a process that loads only them
    /// skips them; any set with policies or schemas of its own is always
    /// validated and linted.
    #[must_use]
    pub fn lint_builtin_packs(mut self) -> Self {
        self.lint_builtin = true;
        self
    }

    /// Adds every `.cedar` policy file and `.cedarschema` fragment under `dir`.
    #[must_use]
    pub fn directory(mut self, dir: impl AsRef<Path>) -> Self {
        self.own_policies = true;
        load::read_dir(
            dir.as_ref(),
            &mut self.policies,
            &mut self.schemas,
            &mut self.errors,
        );
        self
    }

    /// Adds the policies of several directories, in order.
    #[must_use]
    pub fn directories<I, P>(self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        dirs.into_iter()
            .fold(self, |builder, dir| builder.directory(dir.into()))
    }

    /// Adds policy text; `name` is what errors call it.
    #[must_use]
    pub fn policy_source(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.own_policies = true;
        self.policies.push(Source {
            name: name.into(),
            text: text.into(),
        });
        self
    }

    /// Adds a `.cedarschema` fragment that extends the base schema.
    #[must_use]
    pub fn schema_source(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.own_policies = true;
        self.schemas.push(Source {
            name: name.into(),
            text: text.into(),
        });
        self
    }

    /// Adds a whole set of named texts: policy files, then schema fragments
    /// (a pushed set, or a directory read as [`crate::PolicyDirectory`]).
    #[must_use]
    pub fn sources<'a>(
        self,
        policies: impl IntoIterator<Item = (&'a str, &'a str)>,
        schemas: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let builder = policies
            .into_iter()
            .fold(self, |b, (name, text)| b.policy_source(name, text));
        schemas
            .into_iter()
            .fold(builder, |b, (name, text)| b.schema_source(name, text))
    }

    /// Types tool arguments from the parameter JSON Schemas of this card's
    /// tools, unless a schema fragment declares `Sondera::ToolArgs` itself.
    #[must_use]
    pub fn agent_card(mut self, card: &AgentCard) -> Self {
        self.cards.push(card.clone());
        self
    }

    /// The mode verdicts are applied in (govern by default).
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Where the agent works; by default this process's current directory and `$HOME`.
    #[must_use]
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Hosts the agent may reach. Requests then carry the hosts a step
    /// reaches outside this list as `context.egress.unlisted_hosts`; with no
    /// list (the default) that set is always empty.
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: HostAllowlist) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Loads and validates everything, or reports every problem found.
    pub fn build(self) -> Result<PolicyEngine, PolicyLoadErrors> {
        prepare_detectors();
        if !self.errors.is_empty() {
            return Err(PolicyLoadErrors(self.errors));
        }
        let check = self.own_policies || self.lint_builtin;
        let loaded = load::load(&self.schemas, &self.policies, &self.cards, check)
            .map_err(PolicyLoadErrors)?;
        let environment = Environment {
            workspace: self.workspace.unwrap_or_else(Workspace::from_process),
            allowed_hosts: self.allowed_hosts,
        };
        PolicyEngine::new(loaded, self.mode, environment)
    }
}

/// Builds the detectors' automata on another thread, once per process,
/// while the policies load: the first step's scan would otherwise wait for
/// them (about half of what a fresh process spends before its first
/// verdict). A process that never scans text still pays for building
/// them, on that thread.
fn prepare_detectors() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // If no thread can be made, the first scan builds them as before.
        let _ = std::thread::Builder::new()
            .name("sondera-prepare".into())
            .spawn(sondera_guard::content::prepare);
    });
}

/// The policies of one action, split by how they take part in a decision.
#[derive(Debug, Default, Clone)]
struct Slice {
    enforced: PolicySet,
    shadow_forbids: PolicySet,
    shadow_permits: PolicySet,
    /// Some policy still tests the action, so requests must carry the
    /// action's entity and its groups.
    needs_action_entities: bool,
    /// The enforced policies with what their conditions need; empty for the
    /// whole, unsliced set, which is judged in full as the reference.
    prefilter: Prefilter,
}

impl Slice {
    fn has_shadows(&self) -> bool {
        self.shadow_forbids.policies().next().is_some()
            || self.shadow_permits.policies().next().is_some()
    }

    fn add(&mut self, loaded: &LoadedPolicy, policy: Policy) -> Result<(), String> {
        let target = match (loaded.shadow, loaded.policy.effect()) {
            (false, _) => &mut self.enforced,
            (true, Effect::Forbid) => &mut self.shadow_forbids,
            (true, Effect::Permit) => &mut self.shadow_permits,
        };
        target.add(policy).map_err(|e| e.to_string())
    }

    /// Adds a policy whose action scope is known to match this slice's action.
    ///
    /// The copy loses its action scope: the slice already proved it true, and
    /// without it requests need no action entities, which spares Cedar a
    /// transitive-closure computation per request. A policy whose conditions
    /// mention `action` keeps its scope and makes the slice carry them.
    /// `read` is [`Read`] of the policy, made once for every slice it joins.
    fn add_for_action(&mut self, loaded: &LoadedPolicy, read: &Read) -> Result<(), String> {
        let policy = match &read.scopeless {
            Some(policy) => policy.clone(),
            None => {
                self.needs_action_entities = true;
                loaded.policy.clone()
            }
        };
        if !loaded.shadow {
            self.prefilter.add(policy.clone(), read.condition.clone());
        }
        self.add(loaded, policy)
    }
}

/// What a slice needs of a policy, from one reading of its JSON form.
struct Read {
    /// The policy without its action scope, unless its conditions mention
    /// `action`.
    scopeless: Option<Policy>,
    condition: Condition,
}

impl Read {
    fn of(loaded: &LoadedPolicy) -> Self {
        match &loaded.generated {
            Some((tree, reading)) => Self {
                scopeless: (!reading.mentions_action)
                    .then(|| scopeless_from_tree(tree, loaded.policy.id()))
                    .flatten(),
                condition: reading.condition.clone(),
            },
            None => Self::of_json(&loaded.policy),
        }
    }

    fn of_json(policy: &Policy) -> Self {
        let Ok(mut json) = policy.to_json() else {
            return Self {
                scopeless: None,
                condition: Condition::unknown(),
            };
        };
        let condition = Condition::of_policy(&json);
        let scopeless = (!mentions_action(&json["conditions"]))
            .then(|| {
                json["action"] = serde_json::json!({ "op": "All" });
                Policy::from_json(Some(policy.id().clone()), json).ok()
            })
            .flatten();
        Self {
            scopeless,
            condition,
        }
    }
}

/// A built-in policy without its action scope, made from its tree for a
/// tenth of what reading JSON costs.
fn scopeless_from_tree(
    tree: &cedar_policy::pst::Template,
    id: &cedar_policy::PolicyId,
) -> Option<Policy> {
    let mut tree = tree.clone();
    tree.action = cedar_policy::pst::ActionConstraint::Any;
    let tree = cedar_policy::pst::StaticPolicy::try_from(tree).ok()?;
    Policy::from_pst(cedar_policy::pst::Policy::Static(tree))
        .ok()
        .map(|p| p.new_id(id.clone()))
}

pub(crate) fn mentions_action(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            map.get("Var").and_then(|v| v.as_str()) == Some("action")
                || map.values().any(mentions_action)
        }
        serde_json::Value::Array(items) => items.iter().any(mentions_action),
        _ => false,
    }
}

/// A validated policy set, ready to judge events.
///
/// The set is sliced by action at load time: Cedar's authorizer evaluates
/// every policy it is given, so each request is judged only against the
/// policies whose action scope can match it (directly, through an action
/// group, or unconstrained). Evaluation reads only the event and the
/// trajectory state passed in; it does no I/O, so the same inputs always give
/// the same verdict.
#[derive(Debug)]
pub struct PolicyEngine {
    schema: crate::load::LoadedSchema,
    revision: String,
    mode: Mode,
    policies: BTreeMap<String, LoadedPolicy>,
    full: PolicySet,
    full_slice: Slice,
    slices: Vec<Slice>,
    names: Names,
    /// Per action: the action's entity and its ancestors, the only action
    /// entities a request for it needs.
    action_lineage: Vec<Vec<Entity>>,
    tool_args: BTreeMap<String, ArgType>,
    environment: Environment,
    warnings: Vec<PolicyError>,
    authorizer: Authorizer,
}

impl PolicyEngine {
    /// A builder: policies, schema, workspace, hosts and mode.
    pub fn builder() -> PolicyEngineBuilder {
        PolicyEngineBuilder::default()
    }

    /// The built-in packs in govern mode.
    pub fn builtin() -> Result<Self, PolicyLoadErrors> {
        Self::builder().builtin_packs().build()
    }

    fn new(
        loaded: load::Loaded,
        mode: Mode,
        environment: Environment,
    ) -> Result<Self, PolicyLoadErrors> {
        let internal =
            |message: String| PolicyLoadErrors(vec![PolicyError::in_file("schema", message)]);
        let action_entities = &loaded.action_entities;
        let names = Names::new();
        let mut full_slice = Slice {
            needs_action_entities: true,
            ..Slice::default()
        };
        let mut slices = vec![Slice::default(); ActionName::ALL.len()];
        for loaded_policy in &loaded.policies {
            full_slice
                .add(loaded_policy, loaded_policy.policy.clone())
                .map_err(internal)?;
            let constraint = loaded_policy.policy.action_constraint();
            let mut read: Option<Read> = None;
            for action in ActionName::ALL {
                if scope_can_match(&constraint, names.action(action), action_entities) {
                    let read = read.get_or_insert_with(|| Read::of(loaded_policy));
                    slices[action.index()]
                        .add_for_action(loaded_policy, read)
                        .map_err(internal)?;
                }
            }
        }
        let action_lineage = ActionName::ALL
            .iter()
            .map(|a| lineage(names.action(*a), action_entities))
            .collect();
        Ok(Self {
            schema: loaded.schema,
            revision: loaded.revision,
            mode,
            policies: loaded
                .policies
                .into_iter()
                .map(|p| (p.metadata.policy_id.clone(), p))
                .collect(),
            full: full_slice.enforced.clone(),
            full_slice,
            slices,
            names,
            action_lineage,
            tool_args: loaded.tool_args,
            environment,
            warnings: loaded.warnings,
            authorizer: Authorizer::new(),
        })
    }

    /// The policy set's revision: 64 hex digits of a hash of its content
    /// (the schema and the policies' texts, whatever their files' names or
    /// order). Every verdict records it.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The mode verdicts are applied in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The workspace and home commands are judged against.
    pub fn workspace(&self) -> &Workspace {
        &self.environment.workspace
    }

    /// The hosts egress may reach; empty when egress is not restricted by host.
    pub fn allowed_hosts(&self) -> &HostAllowlist {
        &self.environment.allowed_hosts
    }

    /// The same policies under another mode.
    #[must_use]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The Cedar schema the policies were validated against. A set of the
    /// built-in packs alone composes it on the first call (judging does
    /// not need it), which fails only as loading a set that checks the
    /// packs would have.
    pub fn schema(&self) -> Result<&Schema, PolicyLoadErrors> {
        self.schema.get()
    }

    /// Whether policy `id` forbids (`true`) or permits (`false`).
    pub fn forbids(&self, id: &str) -> Option<bool> {
        self.policies
            .get(id)
            .map(|p| p.policy.effect() == Effect::Forbid)
    }

    /// Every enforced policy, unsliced (shadow policies excluded).
    pub fn policy_set(&self) -> &PolicySet {
        &self.full
    }

    /// The metadata of policy `id`.
    pub fn policy(&self, id: &str) -> Option<&PolicyMetadata> {
        self.policies.get(id).map(|p| &p.metadata)
    }

    /// The `@id` of every policy loaded, in order.
    pub fn policy_ids(&self) -> impl Iterator<Item = &str> {
        self.policies.keys().map(String::as_str)
    }

    /// What the validator warned about (policies that cannot match, ...).
    pub fn warnings(&self) -> &[PolicyError] {
        &self.warnings
    }

    /// How many enforced policies a request for `action` is evaluated against.
    pub fn slice_len(&self, action: ActionName) -> usize {
        self.slices[action.index()].enforced.policies().count()
    }

    /// The request `event` is judged with, or `None` when policies do not
    /// govern its payload (lifecycle and state events).
    pub fn request(
        &self,
        event: &Event,
        state: &TrajectoryState,
    ) -> Result<Option<CedarRequest>, EvaluationError> {
        let Some(action) = ActionName::of(&event.payload) else {
            return Ok(None);
        };
        let inputs = request::Inputs {
            names: &self.names,
            tool_args: &self.tool_args,
            environment: &self.environment,
        };
        request::build(&inputs, action, event, state).map(Some)
    }

    /// The same request as [`Self::request`]: the action's entity and
    /// groups, which the whole set needs, are added when Cedar's request is
    /// made. For [`Self::decide_unsliced`].
    pub fn unsliced_request(
        &self,
        event: &Event,
        state: &TrajectoryState,
    ) -> Result<Option<CedarRequest>, EvaluationError> {
        self.request(event, state)
    }

    /// Cedar's own request and entities for `request`, with the action's
    /// entity and groups, as the whole, unsliced set is judged with.
    pub fn cedar(&self, request: &CedarRequest) -> Result<CedarParts, EvaluationError> {
        self.cedar_with(request, true)
    }

    fn cedar_with(
        &self,
        request: &CedarRequest,
        with_action_entities: bool,
    ) -> Result<CedarParts, EvaluationError> {
        let action = request.action;
        let fail = |message: String| EvaluationError::Request {
            action: action.as_str().to_string(),
            message,
        };
        let lineage: &[Entity] = if with_action_entities {
            &self.action_lineage[action.index()]
        } else {
            &[]
        };
        let facts = &request.facts;
        let (context, entities) = facts.to_cedar(lineage).map_err(fail)?;
        let request = Request::new(
            facts.principal.uid.clone(),
            self.names.action(action).clone(),
            facts.resource_uid().clone(),
            context,
            None,
        )
        .map_err(|e| fail(e.to_string()))?;
        Ok(CedarParts { request, entities })
    }

    /// Judges `event` given the state its trajectory had before it. `None`
    /// when policies do not govern its payload.
    pub fn evaluate(
        &self,
        event: &Event,
        state: &TrajectoryState,
    ) -> Result<Option<Adjudicated>, EvaluationError> {
        Ok(self
            .request(event, state)?
            .map(|request| self.decide(&request)))
    }

    /// Applies the policies of the request's action slice to a built request.
    pub fn decide(&self, request: &CedarRequest) -> Adjudicated {
        let slice = &self.slices[request.action.index()];
        let candidates = match slice.prefilter.screen(&slice.enforced, &request.facts) {
            Screening::Known(matched) if !slice.has_shadows() => {
                return self.apply_mode(self.verdict(Answer::of_matched(matched)));
            }
            Screening::Known(_) => Candidates::All(&slice.enforced),
            Screening::Evaluate(candidates) => candidates,
        };
        self.decide_with(slice, &candidates, request, slice.needs_action_entities)
    }

    /// Whether judging `request` needs Cedar: some policy of its slice has an
    /// outcome the prefilter cannot know, or the slice has shadow policies.
    pub fn needs_cedar(&self, request: &CedarRequest) -> bool {
        let slice = &self.slices[request.action.index()];
        slice.has_shadows()
            || matches!(
                slice.prefilter.screen(&slice.enforced, &request.facts),
                Screening::Evaluate(_)
            )
    }

    /// Applies the whole, unsliced policy set to a request, with Cedar: the
    /// reference that slicing and the prefilter must agree with, and what
    /// an engine without them would cost.
    pub fn decide_unsliced(&self, request: &CedarRequest) -> Adjudicated {
        let slice = &self.full_slice;
        self.decide_with(slice, &slice.enforced, request, true)
    }

    fn decide_with(
        &self,
        slice: &Slice,
        candidates: &PolicySet,
        request: &CedarRequest,
        with_action_entities: bool,
    ) -> Adjudicated {
        let cedar = match self.cedar_with(request, with_action_entities) {
            Ok(cedar) => cedar,
            Err(e) => {
                return self.apply_mode(Adjudicated::deny(
                    self.mode,
                    format!("cannot adjudicate this step, failing closed: {e}"),
                ));
            }
        };
        let response = self
            .authorizer
            .is_authorized(&cedar.request, candidates, &cedar.entities);
        let shadow_matches = self.shadow_matches(slice, &cedar);
        let mut verdict = self.verdict(Answer::of_response(&response));
        verdict.shadow_matches = shadow_matches;
        self.apply_mode(verdict)
    }

    fn shadow_matches(&self, slice: &Slice, cedar: &CedarParts) -> Vec<PolicyMetadata> {
        let mut ids: Vec<&PolicyId> = Vec::new();
        let mut responses = Vec::new();
        for set in [&slice.shadow_forbids, &slice.shadow_permits] {
            if set.policies().next().is_some() {
                responses.push(
                    self.authorizer
                        .is_authorized(&cedar.request, set, &cedar.entities),
                );
            }
        }
        for response in &responses {
            ids.extend(response.diagnostics().reason());
        }
        self.metadata_of(ids)
    }

    fn metadata_of<'a>(&self, ids: impl IntoIterator<Item = &'a PolicyId>) -> Vec<PolicyMetadata> {
        let mut out: Vec<PolicyMetadata> = ids
            .into_iter()
            .filter_map(|id| self.policy(id.as_ref() as &str).cloned())
            .collect();
        out.sort_by(|a, b| a.policy_id.cmp(&b.policy_id));
        out
    }

    /// Maps Cedar's answer to a decision: an erroring forbid denies (a policy
    /// that cannot be evaluated must not let the step through), a hard forbid
    /// beats an escalating one, and no matching permit denies.
    fn verdict(&self, answer: Answer<'_>) -> Adjudicated {
        let errored: Vec<&PolicyId> = answer
            .errored
            .into_iter()
            .filter(|id| {
                self.policies
                    .get(AsRef::<str>::as_ref(id))
                    .is_some_and(|p| p.policy.effect() == Effect::Forbid)
            })
            .collect();
        if !errored.is_empty() {
            let policies = self.metadata_of(errored);
            let names = join_ids(&policies);
            return Adjudicated {
                policies,
                ..Adjudicated::deny(
                    self.mode,
                    format!("policy evaluation failed in {names}; failing closed"),
                )
            };
        }
        let matched = self.metadata_of(answer.reasons);
        match answer.decision {
            CedarDecision::Allow => Adjudicated {
                policies: matched,
                ..Adjudicated::allow(self.mode, "permitted")
            },
            CedarDecision::Deny if matched.is_empty() => {
                Adjudicated::deny(self.mode, "no permit policy matched this step")
            }
            CedarDecision::Deny => {
                let hard: Vec<PolicyMetadata> =
                    matched.iter().filter(|p| !p.escalate).cloned().collect();
                let (decision, policies) = if hard.is_empty() {
                    (Decision::Escalate, matched)
                } else {
                    (Decision::Deny, hard)
                };
                let verb = if decision == Decision::Escalate {
                    "escalated by"
                } else {
                    "forbidden by"
                };
                let steering = self.steering(&policies);
                Adjudicated {
                    decision,
                    reason: Some(format!("{verb} {}", join_ids(&policies))),
                    policies,
                    steering,
                    ..Adjudicated::deny(self.mode, "")
                }
            }
        }
    }

    fn steering(&self, policies: &[PolicyMetadata]) -> Option<String> {
        let texts: Vec<&str> = policies
            .iter()
            .filter_map(|p| self.policies.get(&p.policy_id)?.steer.as_deref())
            .collect();
        (!texts.is_empty()).then(|| texts.join(" "))
    }

    fn apply_mode(&self, mut verdict: Adjudicated) -> Adjudicated {
        match self.mode {
            Mode::Govern => verdict.steering = None,
            Mode::Steer => {}
            Mode::Monitor => {
                if !verdict.decision.is_allow() {
                    verdict.would_be = Some(verdict.decision);
                    verdict.decision = Decision::Allow;
                }
                verdict.steering = None;
            }
        }
        verdict
    }
}

/// Cedar's answer to a request, as the verdict is made from it.
struct Answer<'a> {
    decision: CedarDecision,
    /// The policies that decided: the forbids that matched on a deny, the
    /// permits on an allow.
    reasons: Vec<&'a PolicyId>,
    /// The policies that failed to evaluate.
    errored: Vec<&'a PolicyId>,
}

impl<'a> Answer<'a> {
    fn of_response(response: &'a Response) -> Self {
        Self {
            decision: response.decision(),
            reasons: response.diagnostics().reason().collect(),
            errored: response
                .diagnostics()
                .errors()
                .map(|cedar_policy::AuthorizationError::PolicyEvaluationError(e)| e.policy_id())
                .collect(),
        }
    }

    /// Cedar's rule over the policies known to match, none of which can
    /// error: any forbid denies, else any permit allows, else nothing
    /// permits.
    fn of_matched(matched: Vec<&'a Policy>) -> Self {
        let (forbids, permits): (Vec<&Policy>, Vec<&Policy>) = matched
            .into_iter()
            .partition(|p| p.effect() == Effect::Forbid);
        let (decision, reasons) = if !forbids.is_empty() {
            (CedarDecision::Deny, forbids)
        } else if !permits.is_empty() {
            (CedarDecision::Allow, permits)
        } else {
            (CedarDecision::Deny, Vec::new())
        };
        Self {
            decision,
            reasons: reasons.into_iter().map(Policy::id).collect(),
            errored: Vec::new(),
        }
    }
}

/// Cedar's own request for a step, with the entities it is judged with.
pub struct CedarParts {
    /// The Cedar request.
    pub request: Request,
    /// The entities it is judged with (the agent, the trajectory, the resource).
    pub entities: cedar_policy::Entities,
}

fn join_ids(policies: &[PolicyMetadata]) -> String {
    policies
        .iter()
        .map(|p| p.policy_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entity of `action` and of every group it is in.
fn lineage(action: &EntityUid, entities: &cedar_policy::Entities) -> Vec<Entity> {
    let mut out: Vec<Entity> = entities.get(action).into_iter().cloned().collect();
    if let Some(ancestors) = entities.ancestors(action) {
        out.extend(ancestors.filter_map(|a| entities.get(a)).cloned());
    }
    out
}

/// Whether a policy's action scope can match requests for `action`.
fn scope_can_match(
    constraint: &ActionConstraint,
    action: &EntityUid,
    entities: &cedar_policy::Entities,
) -> bool {
    let is_in = |group: &EntityUid| {
        group == action
            || entities
                .ancestors(action)
                .is_some_and(|mut ancestors| ancestors.any(|a| a == group))
    };
    match constraint {
        ActionConstraint::Any => true,
        ActionConstraint::Eq(uid) => uid == action,
        ActionConstraint::In(groups) => groups.iter().any(is_in),
    }
}

// Engines are shared across threads and sessions.
const _: () = {
    const fn check<T: Send + Sync>() {}
    check::<PolicyEngine>();
};
