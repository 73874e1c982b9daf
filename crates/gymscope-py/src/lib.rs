//! `gymscope._native`: the Python face's compiled half (docs/python.md). It holds no logic of
//! its own: the profile and the rollout rows are the native face's reads (`gymscope::cli`),
//! and the commands (`compare`, `health`, …) run in this process as the CLI runs them, their
//! output captured. The Python package (`python/gymscope`) shapes the results.
//!
//! - `columns`: the core's results as Arrow record batches;
//! - `table`: `Table`, handed to pyarrow, polars and pandas through `__arrow_c_stream__`.

mod columns;
mod table;

use gymscope::cli::query_rows::{self, RowOptions};
use gymscope::profile::Profile as CoreProfile;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Mutex;
use table::Table;

create_exception!(
    _native,
    GymscopeError,
    PyException,
    "gymscope's error: its message names the file, the line and the field."
);

fn error(e: anyhow::Error) -> PyErr {
    GymscopeError::new_err(format!("{e:#}"))
}

/// One command at a time: what a command prints is captured process-wide.
static COMMANDS: Mutex<()> = Mutex::new(());

/// Runs `gymscope ARGS…` in this process: `(exit code, stdout, stderr)`, the output as a pipe
/// would have had it. The GIL is released meanwhile.
#[pyfunction]
fn run<'py>(py: Python<'py>, args: Vec<String>) -> PyResult<(u8, Bound<'py, PyBytes>, String)> {
    let (code, out) = py.detach(|| {
        let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
        let argv = std::iter::once("gymscope".to_string())
            .chain(args)
            .collect();
        gymscope::cli::run_captured(argv)
    });
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok((code, PyBytes::new(py, &out.stdout), stderr))
}

/// A run's reward profile, as `gymscope profile` computes it.
#[pyclass(module = "gymscope._native", frozen)]
struct Profile {
    profile: CoreProfile,
    inputs: PathBuf,
    rollouts: PathBuf,
}

#[pymethods]
impl Profile {
    /// Reads and profiles the run (`partial`: `--allow-partial-rollouts`).
    #[new]
    #[pyo3(signature = (inputs, rollouts, partial=false))]
    fn new(py: Python<'_>, inputs: PathBuf, rollouts: PathBuf, partial: bool) -> PyResult<Self> {
        let profile = py
            .detach(|| {
                let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
                gymscope::native::out::capture(|| {
                    gymscope::cli::profile::read_profile(&inputs, &rollouts, partial)
                })
                .0
            })
            .map_err(error)?;
        Ok(Profile {
            profile,
            inputs,
            rollouts,
        })
    }

    /// The run's materialized inputs file.
    #[getter]
    fn inputs(&self) -> PathBuf {
        self.inputs.clone()
    }

    /// The run's rollouts file.
    #[getter]
    fn rollouts(&self) -> PathBuf {
        self.rollouts.clone()
    }

    /// What the read handled that upstream would have failed on (`gymscope profile` prints
    /// them as warnings).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.profile.warnings.clone()
    }

    /// The task table (one row per task with a rollout) as Arrow columns.
    fn tasks(&self) -> PyResult<Table> {
        let batch = columns::task_table(&self.profile)
            .map_err(|e| GymscopeError::new_err(e.to_string()))?;
        Ok(Table::new(batch))
    }

    /// `*_agent_metrics.json`'s bytes.
    fn agent_metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        gymscope::render::write_agent_metrics(&mut out, &self.profile)
            .map_err(|e| error(e.into()))?;
        Ok(PyBytes::new(py, &out))
    }

    /// `*_repeat_level_metrics.json`'s bytes.
    fn repeat_level_metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        gymscope::render::write_repeat_level_metrics(&mut out, &self.profile)
            .map_err(|e| error(e.into()))?;
        Ok(PyBytes::new(py, &out))
    }

    /// Writes the three files `gymscope profile` writes (beside the rollouts, or in
    /// `out_dir`, created); returns their paths.
    #[pyo3(signature = (out_dir=None))]
    fn write(&self, py: Python<'_>, out_dir: Option<PathBuf>) -> PyResult<Vec<PathBuf>> {
        py.detach(|| {
            gymscope::cli::profile::write_outputs(
                &self.profile,
                &self.inputs,
                &self.rollouts,
                out_dir.as_deref(),
            )
        })
        .map(Vec::from)
        .map_err(error)
    }
}

/// Every rollout's row (or every match of `query`) as an Arrow table, in file order.
#[pyfunction]
#[pyo3(signature = (rollouts, inputs=None, query=None, pass_threshold=1.0, single_step=false))]
fn rollouts(
    py: Python<'_>,
    rollouts: PathBuf,
    inputs: Option<PathBuf>,
    query: Option<String>,
    pass_threshold: f64,
    single_step: bool,
) -> PyResult<Table> {
    let rows = py
        .detach(|| {
            let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
            let options = RowOptions {
                inputs: inputs.as_deref(),
                pass_threshold,
                single_step,
                ..RowOptions::default()
            };
            gymscope::native::out::capture(|| {
                query_rows::rollout_rows(&rollouts, query.as_deref(), &options)
            })
            .0
        })
        .map_err(error)?;
    let batch = columns::rollout_rows(rows).map_err(|e| GymscopeError::new_err(e.to_string()))?;
    Ok(Table::new(batch))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("GymscopeError", m.py().get_type::<GymscopeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Profile>()?;
    m.add_class::<Table>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(rollouts, m)?)?;
    Ok(())
}
