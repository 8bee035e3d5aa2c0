//! Policy test cases: short trajectories with the verdict their last step
//! should get (the format of `tests/corpus/FORMAT.md`).
//!
//! Each case runs in a trajectory of its own through a [`LocalHarness`]; tool
//! steps are classified exactly as live tool calls are, and a step with a
//! result is taken as executed, so its observation is judged too and the
//! state both leave carries on.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use sondera_guard::{ToolOutcome, classify_tool_call, observation_for};
use sondera_model::{Adjudicated, Agent, Decision, Event, Payload, PromptRole, TrajectoryState};
use sondera_policy::{PolicyEngine, PolicyEngineBuilder, PolicyLoadErrors, Workspace};
use sondera_store::MemoryStore;

use crate::{Harness, HarnessError, LocalHarness};

/// One test case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's name, unique in its file.
    pub id: String,
    /// What family of attack or work it belongs to, for reporting.
    #[serde(default)]
    pub category: String,
    /// The agent's workspace root and working directory.
    #[serde(default = "default_cwd")]
    pub cwd: String,
    /// What `~` and `$HOME` stand for.
    #[serde(default = "default_home")]
    pub home: String,
    /// The tools the agent's card declares (name, description, parameters),
    /// as the plugins send them when the trajectory starts.
    #[serde(default)]
    pub tools: Vec<sondera_model::Tool>,
    /// The steps, in order, in one trajectory.
    pub steps: Vec<Step>,
    /// The verdict expected of the last step.
    pub expect: Expectation,
    /// Free text, for reporting.
    #[serde(default)]
    pub note: Option<String>,
}

fn default_cwd() -> String {
    "/workspace/project".into()
}

fn default_home() -> String {
    "/home/dev".into()
}

/// One step of a case.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum Step {
    /// A tool call, executed when it has a result or an error.
    Tool {
        /// The tool's name.
        tool: String,
        /// Its arguments.
        #[serde(default)]
        args: Value,
        /// What the tool returned.
        #[serde(default)]
        result: Option<Value>,
        /// The error the tool raised instead of returning (exclusive with
        /// `result`).
        #[serde(default)]
        error: Option<String>,
    },
    /// A prompt.
    Prompt {
        /// Its text.
        prompt: String,
        /// Who it speaks as.
        #[serde(default = "default_role")]
        role: PromptRole,
    },
}

fn default_role() -> PromptRole {
    PromptRole::User
}

/// The verdict a case expects of its last step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// Deny or escalate.
    Block,
    /// Allowed.
    Allow,
    /// Denied.
    Deny,
    /// Escalated.
    Escalate,
}

impl Expectation {
    /// Whether `decision` is what is expected.
    pub fn met_by(self, decision: Decision) -> bool {
        match self {
            Self::Block => decision != Decision::Allow,
            Self::Allow => decision == Decision::Allow,
            Self::Deny => decision == Decision::Deny,
            Self::Escalate => decision == Decision::Escalate,
        }
    }

    /// Whether a deny or an escalation is expected.
    pub fn expects_block(self) -> bool {
        self != Self::Allow
    }

    /// The expectation's name in a cases file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Escalate => "escalate",
        }
    }
}

/// What one case did.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The case.
    pub case: Case,
    /// The verdict of the last adjudication, or why the case could not run.
    pub verdict: Result<Adjudicated, String>,
    /// The first step (counting from 0) some adjudication of which did not
    /// allow: where a live agent would have been stopped.
    pub first_blocked_step: Option<usize>,
}

impl CaseOutcome {
    /// Whether the case got what it expected.
    pub fn passed(&self) -> bool {
        self.verdict
            .as_ref()
            .is_ok_and(|v| self.case.expect.met_by(v.decision))
    }
}

/// Block recall and false-positive rate of one category.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CategoryStats {
    /// Cases run.
    pub cases: usize,
    /// Cases that got what they expected.
    pub passed: usize,
    /// Cases that expect a block, and how many were blocked.
    pub should_block: usize,
    /// Of those expecting a block, how many were blocked.
    pub blocked: usize,
    /// Cases that expect an allow, and how many were blocked anyway.
    pub should_allow: usize,
    /// Of those expecting an allow, how many were blocked anyway.
    pub false_positives: usize,
}

impl CategoryStats {
    /// Blocked over should-block, when any case should block.
    pub fn recall(&self) -> Option<f64> {
        (self.should_block > 0).then(|| self.blocked as f64 / self.should_block as f64)
    }

    /// False positives over should-allow, when any case should allow.
    pub fn false_positive_rate(&self) -> Option<f64> {
        (self.should_allow > 0).then(|| self.false_positives as f64 / self.should_allow as f64)
    }
}

/// Per-category statistics of a run.
pub fn stats(outcomes: &[CaseOutcome]) -> BTreeMap<String, CategoryStats> {
    let mut by_category: BTreeMap<String, CategoryStats> = BTreeMap::new();
    for outcome in outcomes {
        let s = by_category
            .entry(outcome.case.category.clone())
            .or_default();
        s.cases += 1;
        s.passed += usize::from(outcome.passed());
        let blocked = outcome.verdict.as_ref().map_or(true, |v| !v.is_allowed());
        if outcome.case.expect.expects_block() {
            s.should_block += 1;
            s.blocked += usize::from(blocked);
        } else {
            s.should_allow += 1;
            s.false_positives += usize::from(blocked);
        }
    }
    by_category
}

/// Runs cases against one policy set, building an engine per workspace.
pub struct CorpusRunner {
    configure: Box<dyn Fn() -> PolicyEngineBuilder + Send + Sync>,
    engines: BTreeMap<(String, String), Arc<crate::Adjudicator>>,
}

impl CorpusRunner {
    /// `configure` returns the engine builder for the policies under test
    /// (without a workspace; each case sets its own).
    pub fn new(configure: impl Fn() -> PolicyEngineBuilder + Send + Sync + 'static) -> Self {
        Self {
            configure: Box::new(configure),
            engines: BTreeMap::new(),
        }
    }

    /// Loads the policies once to report problems before any case runs.
    pub fn check(&self) -> Result<PolicyEngine, PolicyLoadErrors> {
        (self.configure)().build()
    }

    fn adjudicator(&mut self, case: &Case) -> Result<Arc<crate::Adjudicator>, PolicyLoadErrors> {
        let key = (case.cwd.clone(), case.home.clone());
        if let Some(found) = self.engines.get(&key) {
            return Ok(found.clone());
        }
        let engine = (self.configure)()
            .workspace(Workspace::new(&case.cwd, &case.home))
            .build()?;
        let adjudicator = Arc::new(crate::Adjudicator::new(
            engine,
            Arc::new(MemoryStore::new()),
        ));
        self.engines.insert(key, adjudicator.clone());
        Ok(adjudicator)
    }

    /// Runs `case` in a trajectory of its own.
    pub async fn run(&mut self, case: Case) -> CaseOutcome {
        let mut first_blocked_step = None;
        let verdict = match self.adjudicator(&case) {
            // A refused event is blocked by every integration (it fails
            // closed), so the corpus counts it as a deny.
            Ok(adjudicator) => match run_steps(adjudicator, &case, &mut first_blocked_step).await {
                Err(HarnessError::InvalidEvent(refused)) => Ok(Adjudicated::deny(
                    sondera_model::Mode::Govern,
                    format!("the harness refused the event: {refused}"),
                )),
                other => other.map_err(|e| e.to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        CaseOutcome {
            case,
            verdict,
            first_blocked_step,
        }
    }
}

impl Case {
    /// The agent the case runs as: with a card when the case declares tools.
    pub fn agent(&self) -> Agent {
        let agent = Agent::new("policy-test", "sondera");
        if self.tools.is_empty() {
            return agent;
        }
        agent.with_card(sondera_model::AgentCard::React {
            model: None,
            system_instruction: String::new(),
            tools: self.tools.clone(),
            sub_agents: Vec::new(),
        })
    }

    /// What the case sends after `started`, in order, each with the index of
    /// its step: a prompt, or a tool call classified as live calls are and
    /// the observation of its result or error when it has one.
    pub fn payloads(&self) -> Vec<(usize, Payload)> {
        let mut payloads = Vec::new();
        for (n, step) in self.steps.iter().enumerate() {
            match step {
                Step::Prompt { prompt, role } => payloads.push((
                    n,
                    Payload::Prompt {
                        role: *role,
                        content: prompt.clone(),
                    },
                )),
                Step::Tool {
                    tool,
                    args,
                    result,
                    error,
                } => {
                    let action = classify_tool_call(&format!("{}-{n}", self.id), tool, args);
                    let outcome = match (result, error) {
                        (Some(result), _) => Some(ToolOutcome::Returned(result)),
                        (None, Some(error)) => Some(ToolOutcome::Raised(error)),
                        (None, None) => None,
                    };
                    let observation = outcome.map(|o| observation_for(&action, o));
                    payloads.push((n, action));
                    payloads.extend(observation.map(|o| (n, o)));
                }
            }
        }
        payloads
    }

    /// The trajectory's state just before its last event, judged by
    /// `engine` from the start, and that event: what `sondera policy
    /// explain --case` explains. `None` for a case without steps.
    pub fn before_last(&self, engine: &PolicyEngine) -> Option<(TrajectoryState, Event)> {
        let agent = self.agent();
        let mut state = TrajectoryState::default();
        let event = |payload: Payload| Event::new(self.id.clone(), &agent, payload);
        let started = Payload::Started {
            agent: agent.clone(),
            task: None,
            session_id: None,
        };
        crate::adjudicator::adjudicate_step(engine, &mut state, &event(started));
        let mut payloads = self.payloads();
        let (_, last) = payloads.pop()?;
        for (_, payload) in payloads {
            let event = event(payload);
            let judged = crate::adjudicator::as_judged(&event, &state).into_owned();
            crate::adjudicator::adjudicate_step(engine, &mut state, &judged);
        }
        let last = crate::adjudicator::as_judged(&event(last), &state).into_owned();
        Some((state, last))
    }
}

async fn run_steps(
    adjudicator: Arc<crate::Adjudicator>,
    case: &Case,
    first_blocked: &mut Option<usize>,
) -> Result<Adjudicated, HarnessError> {
    let mut harness = LocalHarness::with_adjudicator(adjudicator, Some(case.agent()));
    harness.initialize(None, Some(case.id.clone())).await?;
    let mut last = None;
    for (n, payload) in case.payloads() {
        let verdict = harness.adjudicate(harness.event(payload)?).await?;
        if !verdict.is_allowed() && first_blocked.is_none() {
            *first_blocked = Some(n);
        }
        last = Some(verdict);
    }
    last.ok_or(HarnessError::InvalidEvent(
        sondera_model::EventDecodeError::EmptyField { field: "steps" },
    ))
}

/// Why a cases file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct CaseParseError {
    /// The file.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Parses a JSON-lines cases file; blank lines are skipped.
pub fn parse_cases(file: &str, text: &str) -> Result<Vec<Case>, CaseParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let error = |message: String| CaseParseError {
                file: file.to_string(),
                line: i + 1,
                message,
            };
            let case = serde_json::from_str::<Case>(line).map_err(|e| error(e.to_string()))?;
            let both = case.steps.iter().position(|step| {
                matches!(
                    step,
                    Step::Tool {
                        result: Some(_),
                        error: Some(_),
                        ..
                    }
                )
            });
            match both {
                Some(n) => Err(error(format!(
                    "step {n} has both `result` and `error`: a tool either returns or raises"
                ))),
                None => Ok(case),
            }
        })
        .collect()
}
