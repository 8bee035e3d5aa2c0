//! Rust futures as Python awaitables, without a thread hop when none is
//! needed.
//!
//! Handing every future to the Tokio runtime and waking the asyncio loop
//! from its thread costs two cross-thread wake-ups per call, several times
//! the cost of an in-process adjudication. So the future is first polled on
//! the calling thread (GIL released, inside the runtime's context): an
//! embedded harness over the memory store finishes there, and Python gets an
//! already-completed awaitable. A future that has to wait (a store commit, a
//! network round trip) is handed, as it stands, to the runtime and bridged to
//! asyncio by `pyo3-async-runtimes`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;

/// An awaitable whose result is already known.
#[pyclass(module = "sondera_harness_adk._native")]
pub(crate) struct Ready(Option<PyResult<Py<PyAny>>>);

#[pymethods]
impl Ready {
    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> PyResult<Py<PyAny>> {
        match self.0.take() {
            Some(Ok(value)) => Err(PyStopIteration::new_err((value,))),
            Some(Err(error)) => Err(error),
            None => Err(PyStopIteration::new_err(())),
        }
    }
}

/// `future` as an awaitable.
pub(crate) fn awaitable<'py, T, F>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
    F: Future<Output = PyResult<T>> + Send + 'static,
{
    let mut future = Box::pin(future);
    let polled = py.detach(|| poll_once(future.as_mut()));
    match polled {
        Poll::Ready(result) => {
            let value = result.and_then(|v| v.into_py_any(py));
            Ok(Bound::new(py, Ready(Some(value)))?.into_any())
        }
        Poll::Pending => pyo3_async_runtimes::tokio::future_into_py(py, future),
    }
}

fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    let _runtime = pyo3_async_runtimes::tokio::get_runtime().enter();
    future.poll(&mut Context::from_waker(Waker::noop()))
}
