//! `sondera_harness_adk._native`: the Rust crates of Sondera Harness as a
//! Python extension module, so the Python ADK plugin judges with the same
//! code as everything else.
//!
//! - `model`: the event model as Python classes over the Rust types, with
//!   the JSON wire format as `to_dict` / `from_dict` / `to_json`.
//! - classification: `classify_tool_call`, `observation_for`,
//!   `action_shape` and `admit_provider_call_id`, the functions the
//!   adk-rust plugin uses.
//! - `harness`: `NativeHarness`, one trajectory scope of the embedded
//!   harness or of the gRPC client, with awaitable methods.
//!
//! The Python package wraps this module; it is not a public interface of
//! its own.

mod awaitable;
mod convert;
mod harness;
mod model;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use sondera_guard::ToolOutcome;
use sondera_model::Adapter;

use crate::convert::{fresh_call_id, json_of, to_py};
use crate::model::{payload_from_py, payload_into_py};

pyo3::create_exception!(
    _native,
    HarnessError,
    PyException,
    "A harness call failed: the step it was judging must not run."
);

/// The narrowest action a tool call fits: a `ShellCommand`, `FileOperation`
/// or `WebFetch` when its name and identifying argument say so, else a
/// `ToolCall`.
#[pyfunction]
#[pyo3(signature = (tool, arguments, call_id=None))]
fn classify_tool_call(
    py: Python<'_>,
    tool: &str,
    arguments: &Bound<'_, PyAny>,
    call_id: Option<String>,
) -> PyResult<Py<PyAny>> {
    let arguments = json_of(arguments, "tool arguments")?;
    let call_id = call_id.unwrap_or_else(fresh_call_id);
    let payload = py.detach(|| sondera_guard::classify_tool_call(&call_id, tool, &arguments));
    payload_into_py(py, payload)
}

/// The observation reporting a tool's outcome for `action` (what
/// `classify_tool_call` returned): `result` when it returned, `error` when
/// it raised. Errors and statuses inside a result are read too.
#[pyfunction]
#[pyo3(signature = (action, *, result=None, error=None))]
fn observation_for(
    py: Python<'_>,
    action: &Bound<'_, PyAny>,
    result: Option<&Bound<'_, PyAny>>,
    error: Option<String>,
) -> PyResult<Py<PyAny>> {
    let action = payload_from_py(action)?;
    let observation = match (result, error) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err("give result or error, not both"));
        }
        (None, Some(error)) => {
            py.detach(|| sondera_guard::observation_for(&action, ToolOutcome::Raised(&error)))
        }
        (result, None) => {
            let value = match result {
                Some(result) => json_of(result, "tool result")?,
                None => serde_json::Value::Null,
            };
            py.detach(|| sondera_guard::observation_for(&action, ToolOutcome::Returned(&value)))
        }
    };
    payload_into_py(py, observation)
}

/// The shape of an action that a standing approval can cover (program and
/// subcommand for shell, operation and path for files, host for the web,
/// tool and target otherwise), as a dict; `None` when nothing may be
/// trusted again.
#[pyfunction]
fn action_shape<'py>(py: Python<'py>, action: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let action = payload_from_py(action)?;
    match sondera_guard::action_shape(&action) {
        Some(shape) => to_py(py, &shape),
        None => Ok(py.None().into_bound(py)),
    }
}

/// Whether a standing approval of `granted` covers an action of `shape`
/// (a shell grant covers a command whose every program it lists).
#[pyfunction]
fn shape_covers(granted: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<bool> {
    let granted: sondera_model::ActionShape = convert::from_py(granted, "granted shape")?;
    let shape: sondera_model::ActionShape = convert::from_py(shape, "action shape")?;
    Ok(granted.covers(&shape))
}

/// A tool name as classification compares it: case and separators folded,
/// invisible characters dropped, look-alike letters read as ASCII.
#[pyfunction]
fn normalize_tool_name(name: &str) -> String {
    sondera_guard::fold_tool_name(name)
}

/// How a shape reads to a person (`shell: git push`).
#[pyfunction]
fn describe_shape(shape: &Bound<'_, PyAny>) -> PyResult<String> {
    let shape: sondera_model::ActionShape = convert::from_py(shape, "action shape")?;
    Ok(shape.to_string())
}

/// Admits an upstream provider call id at an adapter boundary (`adk`,
/// `server`, `cli`): `None` stays `None`; an invalid id (empty, blank,
/// NUL-bearing, oversized) is counted and dropped; a valid one is returned.
#[pyfunction]
#[pyo3(signature = (adapter, value))]
fn admit_provider_call_id(adapter: &str, value: Option<String>) -> PyResult<Option<String>> {
    let adapter = Adapter::ALL
        .into_iter()
        .find(|a| a.label() == adapter)
        .ok_or_else(|| {
            let known: Vec<&str> = Adapter::ALL.iter().map(|a| a.label()).collect();
            PyValueError::new_err(format!(
                "unknown adapter `{adapter}`: expected one of {}",
                known.join(", ")
            ))
        })?;
    Ok(sondera_model::admit_provider_call_id(adapter, value))
}

/// The Python logger every record of the extension is sent under: the
/// crates' targets hang below it (`sondera_harness_adk.sondera_model.call_id`).
const PACKAGE_LOGGER: &str = "sondera_harness_adk";

/// Sends the crates' log records to Python's `logging`, below the package's
/// logger. Loggers are cached but their levels are not, so logging set up
/// after import (or by pytest's `caplog`) still decides what is shown;
/// records below `INFO` never cross, which keeps the GIL out of hot paths.
fn route_logs_to_python(py: Python<'_>) -> PyResult<()> {
    let logger = pyo3_log::Logger::new(py, pyo3_log::Caching::Loggers)?
        .filter(log::LevelFilter::Info)
        .set_prefix(PACKAGE_LOGGER);
    // A second import in one process (sub-interpreters aside) finds the
    // logger installed already; the first one keeps working.
    let _ = logger.install();
    Ok(())
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    route_logs_to_python(module.py())?;
    model::register(module)?;
    module.add_class::<harness::NativeHarness>()?;
    module.add_class::<awaitable::Ready>()?;
    module.add("HarnessError", module.py().get_type::<HarnessError>())?;
    module.add_function(wrap_pyfunction!(classify_tool_call, module)?)?;
    module.add_function(wrap_pyfunction!(observation_for, module)?)?;
    module.add_function(wrap_pyfunction!(action_shape, module)?)?;
    module.add_function(wrap_pyfunction!(describe_shape, module)?)?;
    module.add_function(wrap_pyfunction!(normalize_tool_name, module)?)?;
    module.add_function(wrap_pyfunction!(shape_covers, module)?)?;
    module.add_function(wrap_pyfunction!(admit_provider_call_id, module)?)?;
    Ok(())
}
