//! Core errors as Python exceptions: `gymscope._errors` (the package's own module) picks the
//! class from the message and the failing I/O error, so tracebacks name `gymscope`, not
//! `_native`, and a missing file is a `FileNotFoundError` (docs/python.md, "Errors").

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The exception for `e`, built by `gymscope._errors.from_message`.
pub fn to_py(py: Python<'_>, e: &anyhow::Error) -> PyErr {
    let kind = e
        .chain()
        .find_map(|c| c.downcast_ref::<std::io::Error>())
        .map_or("", |io| match io.kind() {
            std::io::ErrorKind::NotFound => "not_found",
            std::io::ErrorKind::IsADirectory => "is_a_directory",
            _ => "",
        });
    from_message(py, &format!("{e:#}"), kind)
}

/// The exception for an error message (`kind` as in [`to_py`]).
pub fn from_message(py: Python<'_>, message: &str, kind: &str) -> PyErr {
    let made = py
        .import("gymscope._errors")
        .and_then(|m| m.call_method1("from_message", (message, kind)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        // The package is missing its own module: still an error, and it says which.
        Err(e) => PyRuntimeError::new_err(format!("{message} (and gymscope._errors: {e})")),
    }
}
