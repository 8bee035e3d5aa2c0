//! Moving values between Rust and Python: serde values through `pythonize`,
//! errors as Python exceptions that name what was wrong.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
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
///
/// Tool arguments and results are nearly always plain JSON data, read here
/// directly; data of any other kind (a dataclass, a mapping with keys that
/// are not strings, a number JSON cannot hold) is read as a whole through
/// `pythonize`, which the direct reading agrees with wherever both apply.
pub(crate) fn json_of(value: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    match plain_json(value, 1) {
        Plain::Json(json) => Ok(json),
        Plain::TooDeep => Err(PyValueError::new_err(format!(
            "invalid {what}: nested more than {MAX_NESTING} levels deep"
        ))),
        Plain::Other => from_py(value, what),
    }
}

enum Plain {
    Json(serde_json::Value),
    TooDeep,
    /// Not plain JSON data.
    Other,
}

/// `value` read as plain JSON data, at `depth` (the outermost is 1).
fn plain_json(value: &Bound<'_, PyAny>, depth: usize) -> Plain {
    use serde_json::Value;
    if value.is_none() {
        return Plain::Json(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Plain::Json(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return text.to_str().map_or(Plain::Other, |text| {
            Plain::Json(Value::String(text.to_owned()))
        });
    }
    if value.cast::<PyInt>().is_ok() {
        if let Ok(n) = value.extract::<i64>() {
            return Plain::Json(n.into());
        }
        return value
            .extract::<u64>()
            .map_or(Plain::Other, |n| Plain::Json(n.into()));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(float.value())
            .map_or(Plain::Other, |n| Plain::Json(Value::Number(n)));
    }
    let container = value.cast::<PyDict>().is_ok()
        || value.cast::<PyList>().is_ok()
        || value.cast::<PyTuple>().is_ok();
    if !container {
        return Plain::Other;
    }
    if depth > MAX_NESTING {
        return Plain::TooDeep;
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Plain::Other;
            };
            let Ok(key) = key.to_str() else {
                return Plain::Other;
            };
            match plain_json(&item, depth + 1) {
                Plain::Json(item) => map.insert(key.to_owned(), item),
                other => return other,
            };
        }
        return Plain::Json(Value::Object(map));
    }
    match value.cast::<PyList>() {
        Ok(list) => plain_array(list.iter(), depth),
        Err(_) => value
            .cast::<PyTuple>()
            .map_or(Plain::Other, |tuple| plain_array(tuple.iter(), depth)),
    }
}

/// The items of a list or tuple at `depth`, as a JSON array.
fn plain_array<'py>(
    items: impl ExactSizeIterator<Item = Bound<'py, PyAny>>,
    depth: usize,
) -> Plain {
    let mut array = Vec::with_capacity(items.len());
    for item in items {
        match plain_json(&item, depth + 1) {
            Plain::Json(item) => array.push(item),
            other => return other,
        }
    }
    Plain::Json(serde_json::Value::Array(array))
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
