//! Moving values between Rust and Python: serde values through `pythonize`,
//! errors as Python exceptions that name what was wrong.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as plain Python data (dicts, lists, strings, numbers).
pub(crate) fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PyValueError::new_err(e.to_string()))
}

// How deep Python data may nest to be read: what the wire format's JSON
// reader accepts, far below what would exhaust the stack of the recursive
// conversion.
use sondera_model::MAX_JSON_DEPTH as MAX_NESTING;

/// Plain Python data read as a `T`; `what` names the value in the error.
pub(crate) fn from_py<T: DeserializeOwned>(value: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    check_nesting(value, what)?;
    pythonize::depythonize(value).map_err(|e| PyValueError::new_err(format!("invalid {what}: {e}")))
}

/// Refuses data nested deeper than [`MAX_NESTING`], without recursing.
fn check_nesting(value: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let mut stack = vec![(value.clone(), 1usize)];
    while let Some((item, depth)) = stack.pop() {
        let children: Vec<Bound<'_, PyAny>> = if let Ok(dict) = item.cast::<PyDict>() {
            dict.values().iter().collect()
        } else if let Ok(list) = item.cast::<PyList>() {
            list.iter().collect()
        } else if let Ok(tuple) = item.cast::<PyTuple>() {
            tuple.iter().collect()
        } else {
            continue;
        };
        if depth > MAX_NESTING {
            return Err(PyValueError::new_err(format!(
                "invalid {what}: nested more than {MAX_NESTING} levels deep"
            )));
        }
        stack.extend(children.into_iter().map(|child| (child, depth + 1)));
    }
    Ok(())
}

/// Python data as JSON, for fields the model keeps as free-form JSON.
pub(crate) fn json_of(value: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    from_py(value, what)
}

/// One top-level field of `value`'s JSON form, as Python data (`None` when absent).
pub(crate) fn field<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    match json.get(name) {
        Some(field) => to_py(py, field),
        None => Ok(py.None().into_bound(py)),
    }
}

/// A call id for a step whose caller gave none.
pub(crate) fn fresh_call_id() -> String {
    format!("sondera-{}", uuid::Uuid::new_v4())
}
