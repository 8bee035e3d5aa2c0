//! Harness scopes for Python: the embedded harness and the gRPC client to
//! `sondera serve`, behind one class whose methods return awaitables. The
//! work runs on a Tokio runtime without the GIL; Python only waits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sondera_harness::remote::with_trace_parent;
use sondera_harness::{
    Harness, HarnessError as RustHarnessError, LocalHarness, RemoteConfig, RemoteHarness,
};
use sondera_model as model;
use sondera_policy::{HostAllowlist, PolicyEngine, Workspace};
use tokio::sync::Mutex;

use crate::HarnessError;
use crate::awaitable::awaitable;
use crate::convert::{from_py, to_py};
use crate::model::{Actor, Adjudicated, Agent, Event};

/// What Python reads without waiting: the scope's trajectory and agent as
/// of its last completed call.
#[derive(Default)]
struct Published {
    trajectory_id: Option<String>,
    agent: Option<model::Agent>,
}

/// One trajectory scope of a Sondera harness (embedded or remote).
#[pyclass(module = "sondera_harness_adk._native", frozen)]
pub(crate) struct NativeHarness {
    scope: Arc<Mutex<Box<dyn Harness>>>,
    published: Arc<StdMutex<Published>>,
    kind: &'static str,
}

fn harness_error(error: RustHarnessError) -> PyErr {
    HarnessError::new_err(error.to_string())
}

impl NativeHarness {
    fn over(harness: Box<dyn Harness>, kind: &'static str) -> Self {
        let published = Published {
            trajectory_id: harness.trajectory_id().map(str::to_string),
            agent: harness.agent().cloned(),
        };
        Self {
            scope: Arc::new(Mutex::new(harness)),
            published: Arc::new(StdMutex::new(published)),
            kind,
        }
    }

    /// Runs `work` on the scope and returns an awaitable of its result; the
    /// published trajectory and agent are refreshed whatever the outcome.
    fn run<'py, T, F>(&self, py: Python<'py>, work: F) -> PyResult<Bound<'py, PyAny>>
    where
        T: for<'a> IntoPyObject<'a> + Send + 'static,
        F: for<'h> FnOnce(
                &'h mut Box<dyn Harness>,
            ) -> std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<T, RustHarnessError>> + Send + 'h>,
            > + Send
            + 'static,
    {
        let scope = self.scope.clone();
        let published = self.published.clone();
        awaitable(py, async move {
            let mut harness = scope.lock().await;
            let result = work(&mut harness).await;
            if let Ok(mut p) = published.lock() {
                // A scope takes its agent with its trajectory (initialize,
                // resume) and changes neither otherwise: a step does not
                // copy the agent and its card again.
                let trajectory_id = harness.trajectory_id();
                if p.trajectory_id.as_deref() != trajectory_id {
                    p.trajectory_id = trajectory_id.map(str::to_string);
                    p.agent = harness.agent().cloned();
                }
            }
            result.map_err(harness_error)
        })
    }
}

fn mode_of(mode: &str) -> PyResult<model::Mode> {
    mode.parse()
        .map_err(|e: sondera_model::UnknownName| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl NativeHarness {
    /// The embedded harness: the Cedar engine over the built-in packs (or
    /// `policy_dirs`) and a store in `data_dir` (SQLite), in memory with
    /// `memory=True`, else in `~/.sondera/data` as `sondera adjudicate` uses.
    #[staticmethod]
    #[pyo3(signature = (*, policy_dirs=None, data_dir=None, memory=false, mode="govern", workspace=None, home=None, allowed_hosts=None, agent=None))]
    #[allow(clippy::too_many_arguments)]
    fn local(
        py: Python<'_>,
        policy_dirs: Option<Vec<PathBuf>>,
        data_dir: Option<PathBuf>,
        memory: bool,
        mode: &str,
        workspace: Option<String>,
        home: Option<String>,
        allowed_hosts: Option<Vec<String>>,
        agent: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        if memory && data_dir.is_some() {
            return Err(PyValueError::new_err(
                "give data_dir or memory=True, not both",
            ));
        }
        let agent = agent.map(Agent::read).transpose()?;
        let mode = mode_of(mode)?;
        let process = Workspace::from_process();
        let workspace = Workspace::new(
            workspace.unwrap_or(process.root),
            home.unwrap_or(process.home),
        );
        let hosts = HostAllowlist::new(allowed_hosts.unwrap_or_default())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let data_dir = match (memory, data_dir) {
            (true, _) => None,
            (false, Some(dir)) => Some(dir),
            (false, None) => Some(sondera_harness::default_data_dir().ok_or_else(|| {
                PyValueError::new_err("HOME is not set: give data_dir or memory=True")
            })?),
        };
        let harness = py.detach(move || {
            let engine = PolicyEngine::builder()
                .builtin_or_directories(policy_dirs.unwrap_or_default())
                .mode(mode)
                .workspace(workspace)
                .allowed_hosts(hosts)
                .build()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let mut builder = LocalHarness::builder().engine(engine).mode(mode);
            builder = match data_dir {
                Some(dir) => builder.data_dir(dir),
                None => builder.in_memory(),
            };
            if let Some(agent) = agent {
                builder = builder.agent(agent);
            }
            builder
                .build()
                .map_err(|e| HarnessError::new_err(e.to_string()))
        })?;
        Ok(Self::over(Box::new(harness), "local"))
    }

    /// The client of a harness server: `endpoint` and `token` as given, else
    /// from `SONDERA_HARNESS_ENDPOINT` / `SONDERA_API_TOKEN`, else from
    /// `~/.sondera/env`. Connects on first use.
    #[staticmethod]
    #[pyo3(signature = (*, endpoint=None, token=None, agent=None, timeout=None, ca_certificate=None, approval_timeout=None))]
    fn remote(
        endpoint: Option<String>,
        token: Option<String>,
        agent: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        ca_certificate: Option<PathBuf>,
        approval_timeout: Option<f64>,
    ) -> PyResult<Self> {
        let agent = agent.map(Agent::read).transpose()?;
        let mut config = RemoteConfig::resolve(endpoint, token).map_err(harness_error)?;
        if let Some(seconds) = timeout {
            config.timeout = seconds_arg(seconds, "timeout")?;
        }
        config.approval_timeout = approval_timeout
            .map(|seconds| seconds_arg(seconds, "approval_timeout"))
            .transpose()?;
        config.ca_certificate = ca_certificate;
        let _runtime = pyo3_async_runtimes::tokio::get_runtime().enter();
        let harness = RemoteHarness::new(&config, agent).map_err(harness_error)?;
        Ok(Self::over(Box::new(harness), "remote"))
    }

    /// `"local"` or `"remote"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The trajectory this scope holds, as of its last completed call. It
    /// is published before `started` is sent and cleared only once a
    /// terminal event is accepted, so after a failure it names a trajectory
    /// that may exist.
    #[getter]
    fn trajectory_id(&self) -> Option<String> {
        self.published.lock().ok()?.trajectory_id.clone()
    }

    #[getter]
    fn agent(&self) -> Option<Agent> {
        self.published.lock().ok()?.agent.clone().map(Agent)
    }

    /// A fresh scope sharing this one's engine, store or connection.
    fn new_scope(&self, py: Python<'_>) -> PyResult<Self> {
        let scope = self.scope.clone();
        let fresh = py.detach(move || {
            pyo3_async_runtimes::tokio::get_runtime()
                .block_on(async move { scope.lock().await.new_scope() })
        });
        Ok(Self::over(fresh, self.kind))
    }

    /// Starts a trajectory (sends `started`); resolves to its id.
    #[pyo3(signature = (*, agent=None, session_id=None))]
    fn initialize<'py>(
        &self,
        py: Python<'py>,
        agent: Option<&Bound<'py, PyAny>>,
        session_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agent = agent.map(Agent::read).transpose()?;
        self.run(py, move |h| Box::pin(h.initialize(agent, session_id)))
    }

    /// Reattaches to a recorded trajectory (sends `resumed`).
    #[pyo3(signature = (trajectory_id, *, agent=None))]
    fn resume<'py>(
        &self,
        py: Python<'py>,
        trajectory_id: String,
        agent: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agent = agent.map(Agent::read).transpose()?;
        self.run(py, move |h| {
            Box::pin(async move { h.resume(&trajectory_id, agent).await })
        })
    }

    /// Ends the trajectory successfully (sends `completed`).
    #[pyo3(signature = (*, summary=None))]
    fn finalize<'py>(
        &self,
        py: Python<'py>,
        summary: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.run(py, move |h| Box::pin(h.finalize(summary)))
    }

    /// Ends the trajectory as failed (sends `failed`).
    #[pyo3(signature = (*, reason))]
    fn fail<'py>(&self, py: Python<'py>, reason: String) -> PyResult<Bound<'py, PyAny>> {
        self.run(py, move |h| Box::pin(async move { h.fail(&reason).await }))
    }

    /// Judges one event (an `Event`, its dict or its JSON); resolves to an
    /// `Adjudicated`. A remote harness sends `traceparent` (W3C Trace
    /// Context) with the call, so the server's spans join that trace.
    #[pyo3(signature = (event, *, traceparent=None))]
    fn adjudicate<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
        traceparent: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let event = Event::read(event)?;
        self.run(py, move |h| {
            Box::pin(async move {
                let judged = h.adjudicate(event);
                with_trace_parent(traceparent.as_deref(), judged)
                    .await
                    .map(Adjudicated)
            })
        })
    }

    /// Judges events in order; the first error stops the batch.
    #[pyo3(signature = (events, *, traceparent=None))]
    fn adjudicates<'py>(
        &self,
        py: Python<'py>,
        events: Vec<Bound<'py, PyAny>>,
        traceparent: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let events = events
            .iter()
            .map(Event::read)
            .collect::<PyResult<Vec<_>>>()?;
        self.run(py, move |h| {
            Box::pin(async move {
                let judged = h.adjudicates(events);
                let verdicts = with_trace_parent(traceparent.as_deref(), judged).await?;
                Ok(verdicts.into_iter().map(Adjudicated).collect::<Vec<_>>())
            })
        })
    }

    /// An event of this scope's trajectory carrying `payload`.
    fn event(&self, payload: &Bound<'_, PyAny>) -> PyResult<Event> {
        let payload = crate::model::payload_from_py(payload)?;
        let published = self
            .published
            .lock()
            .map_err(|_| HarnessError::new_err("harness state poisoned"))?;
        let trajectory_id = published
            .trajectory_id
            .clone()
            .ok_or_else(|| harness_error(RustHarnessError::NotInitialized))?;
        let agent = published
            .agent
            .as_ref()
            .ok_or_else(|| harness_error(RustHarnessError::NoAgent))?;
        Ok(Event(model::Event::new(trajectory_id, agent, payload)))
    }

    /// Keeps a standing approval of `shape` (from `action_shape`) for this
    /// scope's agent: `"session"` lasts as long as the scope, `"always"` is
    /// kept by the harness's store.
    fn grant<'py>(
        &self,
        py: Python<'py>,
        shape: &Bound<'py, PyAny>,
        scope: &Bound<'py, PyAny>,
        granted_by: Actor,
    ) -> PyResult<Bound<'py, PyAny>> {
        let shape: model::ActionShape = from_py(shape, "action shape")?;
        let scope: model::GrantScope = from_py(scope, "grant scope (session or always)")?;
        let grant = model::Grant::new(shape, scope, granted_by.0);
        self.run(py, move |h| Box::pin(h.grant(grant)))
    }

    /// The standing approval covering `shape`, as a dict, or `None`.
    fn granted<'py>(
        &self,
        py: Python<'py>,
        shape: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let shape: model::ActionShape = from_py(shape, "action shape")?;
        let scope = self.scope.clone();
        awaitable(py, async move {
            let grant = scope
                .lock()
                .await
                .granted(&shape)
                .await
                .map_err(harness_error)?;
            Python::attach(|py| match grant {
                Some(grant) => Ok(to_py(py, &grant)?.unbind()),
                None => Ok(py.None()),
            })
        })
    }

    /// Asks the server's operators to decide escalated event `event_id` and
    /// waits until they do or the deadline passes (`deadline` seconds, else
    /// the harness's approval timeout, else the server's); the approval as a dict.
    #[pyo3(signature = (event_id, *, deadline=None))]
    fn ask_operator<'py>(
        &self,
        py: Python<'py>,
        event_id: String,
        deadline: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let deadline = deadline
            .map(|seconds| seconds_arg(seconds, "deadline"))
            .transpose()?;
        let scope = self.scope.clone();
        awaitable(py, async move {
            let settled = scope
                .lock()
                .await
                .ask_operator(&event_id, deadline)
                .await
                .map_err(harness_error)?;
            Python::attach(|py| Ok(to_py(py, &settled)?.unbind()))
        })
    }

    fn __repr__(&self) -> String {
        match self.trajectory_id() {
            Some(id) => format!("NativeHarness({}, trajectory={id})", self.kind),
            None => format!("NativeHarness({})", self.kind),
        }
    }
}

/// A positive number of seconds given as `name`.
fn seconds_arg(seconds: f64, name: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            PyValueError::new_err(format!("{name} must be a positive number of seconds"))
        })
}
