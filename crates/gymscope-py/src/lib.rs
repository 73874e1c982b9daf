//! `gymscope._native`: the Python face's compiled half (docs/python.md). It holds no logic of
//! its own: the profile and the rollout rows are the native face's reads (`gymscope::cli`),
//! and the commands (`compare`, `health`, …) run in this process as the CLI runs them, their
//! output captured. The Python package (`python/gymscope`) shapes the results. It also serves
//! the wheel's `gymscope` command ([`main`]), so the wheel holds one copy of the core.
//!
//! - `columns`: the core's results as Arrow record batches;
//! - `errors`: core errors as the package's exceptions (`gymscope._errors`);
//! - `interrupt`: long calls on a thread of their own, so Ctrl-C raises at once;
//! - `query_fields`: a query's fields that no row has (`strict=` and its warning);
//! - `task_agents`: each task's agent, from its sample;
//! - `table`: `Table`, handed to pyarrow, polars and pandas through `__arrow_c_stream__`.

mod columns;
mod errors;
mod interrupt;
mod query_fields;
mod table;
mod task_agents;

use gymscope::native::out::capture_thread;
use gymscope::native::query_read::{self, RowOptions};
use gymscope::profile::Profile as CoreProfile;
use interrupt::{interruptible, OnStop};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Mutex;
use table::Table;

/// The command line's allocator (mimalloc, as the `gymscope` binary's: see its line in the root
/// Cargo.toml), for the wheel's command and the API alike.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One command at a time: what a command prints, on any of its threads, is captured
/// process-wide. The reads (`Profile`, `rollouts`) capture their own thread's output only and
/// run side by side.
static COMMANDS: Mutex<()> = Mutex::new(());

/// Runs `gymscope ARGS…` in this process: `(exit code, stdout, stderr)`, the output as a pipe
/// would have had it. The GIL is released meanwhile; Ctrl-C raises `KeyboardInterrupt` at once
/// and the command stops where it checks for signals (its files are finished or removed before
/// the interpreter exits: `finish_stopped`).
#[pyfunction]
fn run<'py>(py: Python<'py>, args: Vec<String>) -> PyResult<(u8, Bound<'py, PyBytes>, String)> {
    let (code, out) = interruptible(py, OnStop::Finish, move || {
        let _one = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
        let argv = std::iter::once("gymscope".to_string())
            .chain(args)
            .collect();
        gymscope::cli::run_captured(argv)
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok((code, PyBytes::new(py, &out.stdout), stderr))
}

/// The wheel's `gymscope` command (`gymscope.__main__`): the CLI with `args` (the program's name
/// first), printing as the binary does; its exit code.
#[pyfunction]
fn main(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(move || {
        gymscope::native::allocator::configure();
        gymscope::cli::run_in_process(args)
    })
}

/// A run's reward profile, as `gymscope profile` computes it.
#[pyclass(module = "gymscope._native", frozen)]
struct Profile {
    profile: CoreProfile,
    /// Each task's agent, read with the profile.
    agents: Vec<Option<String>>,
    inputs: PathBuf,
    rollouts: PathBuf,
}

#[pymethods]
impl Profile {
    /// Reads and profiles the run (`partial`: `--allow-partial-rollouts`).
    #[new]
    #[pyo3(signature = (inputs, rollouts, partial=false))]
    fn new(py: Python<'_>, inputs: PathBuf, rollouts: PathBuf, partial: bool) -> PyResult<Self> {
        let (i, r) = (inputs.clone(), rollouts.clone());
        let (profile, agents) = interruptible(py, OnStop::Abandon, move || {
            capture_thread(|| -> anyhow::Result<_> {
                let profile = gymscope::native::profile_files::read_profile(&i, &r, partial)?;
                let agents = task_agents::task_agents(&profile, &i)?;
                Ok((profile, agents))
            })
            .0
        })?
        .map_err(|e| errors::to_py(py, &e))?;
        Ok(Profile {
            profile,
            agents,
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
    fn tasks(&self, py: Python<'_>) -> PyResult<Table> {
        let batch = columns::task_table(&self.profile, &self.agents)
            .map_err(|e| errors::from_message(py, &e.to_string(), ""))?;
        Ok(Table::new(batch))
    }

    /// `*_agent_metrics.json`'s bytes.
    fn agent_metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        gymscope::render::write_agent_metrics(&mut out, &self.profile)
            .map_err(|e| errors::to_py(py, &e.into()))?;
        Ok(PyBytes::new(py, &out))
    }

    /// `*_repeat_level_metrics.json`'s bytes.
    fn repeat_level_metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        gymscope::render::write_repeat_level_metrics(&mut out, &self.profile)
            .map_err(|e| errors::to_py(py, &e.into()))?;
        Ok(PyBytes::new(py, &out))
    }

    /// Writes the three files `gymscope profile` writes (beside the rollouts, or in
    /// `out_dir`, created); returns their paths. Not interrupted half-way: its files are
    /// complete or absent.
    #[pyo3(signature = (out_dir=None))]
    fn write(&self, py: Python<'_>, out_dir: Option<PathBuf>) -> PyResult<Vec<PathBuf>> {
        py.detach(|| {
            capture_thread(|| {
                gymscope::native::profile_files::write_outputs(
                    &self.profile,
                    &self.inputs,
                    &self.rollouts,
                    out_dir.as_deref(),
                )
            })
            .0
        })
        .map(Vec::from)
        .map_err(|e| errors::to_py(py, &e))
    }
}

/// Every rollout's row (or every match of `query`) as an Arrow table, in file order, and the
/// warning for the query's fields that no row has (`None` when it names none); with `strict`
/// such a field is an error instead.
#[pyfunction]
#[pyo3(signature = (rollouts, inputs=None, query=None, pass_threshold=1.0, single_step=false, strict=false))]
fn rollouts(
    py: Python<'_>,
    rollouts: PathBuf,
    inputs: Option<PathBuf>,
    query: Option<String>,
    pass_threshold: f64,
    single_step: bool,
    strict: bool,
) -> PyResult<(Table, Option<String>)> {
    let read = interruptible(py, OnStop::Abandon, move || {
        capture_thread(|| -> anyhow::Result<_> {
            let options = RowOptions {
                inputs: inputs.as_deref(),
                pass_threshold,
                single_step,
                ..RowOptions::default()
            };
            let fields = query
                .as_deref()
                .map(query_fields::named)
                .unwrap_or_default();
            if strict {
                query_fields::refuse_missing(&rollouts, &fields, options.max_line_bytes)?;
            }
            let rows = query_read::rollout_rows(&rollouts, query.as_deref(), &options)?;
            let warning = if strict {
                None
            } else {
                query_fields::warn_missing(&rollouts, &fields, &rows, options.max_line_bytes)?
            };
            Ok((rows, warning))
        })
        .0
    })?;
    let (rows, warning) = read.map_err(|e| errors::to_py(py, &e))?;
    let batch =
        columns::rollout_rows(rows).map_err(|e| errors::from_message(py, &e.to_string(), ""))?;
    Ok((Table::new(batch), warning))
}

/// The paths of the top-level fields `expr` names (`gymscope.query()`'s warning).
#[pyfunction]
#[pyo3(name = "query_fields")]
fn named_fields(expr: &str) -> Vec<String> {
    query_fields::named(expr)
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

/// The warning for the fields `expr` names that no row of the run has (`None`: it has them all).
#[pyfunction]
fn missing_fields(py: Python<'_>, rollouts: PathBuf, expr: String) -> PyResult<Option<String>> {
    let found = interruptible(py, OnStop::Abandon, move || {
        let fields = query_fields::named(&expr);
        let max_line = RowOptions::default().max_line_bytes;
        capture_thread(|| query_fields::missing(&rollouts, &fields, max_line)).0
    })?;
    let why = found.map_err(|e| errors::to_py(py, &e))?;
    Ok(why.map(|why| query_fields::as_warning(&why)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Profile>()?;
    m.add_class::<Table>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(rollouts, m)?)?;
    m.add_function(wrap_pyfunction!(named_fields, m)?)?;
    m.add_function(wrap_pyfunction!(missing_fields, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::finish_stopped, m)?)?;
    Ok(())
}
