//! `gymscope.Table`: an Arrow table handed to Python through the Arrow PyCapsule interface
//! (`__arrow_c_stream__`), so pyarrow (`pa.table(t)`), polars (`pl.DataFrame(t)`) and pandas
//! (through pyarrow) take it without a copy, and with no Python dependency for the rest
//! (`to_pylist`).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch, RecordBatchIterator};
use arrow_schema::DataType;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};

/// A table of gymscope's results (`Profile.tasks`, `rollouts()`): Arrow columns in memory.
#[pyclass(module = "gymscope._native", frozen)]
pub struct Table {
    batch: RecordBatch,
}

impl Table {
    pub fn new(batch: RecordBatch) -> Table {
        Table { batch }
    }
}

#[pymethods]
impl Table {
    /// The number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The columns' names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        let schema = self.batch.schema();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    fn __repr__(&self) -> String {
        let names = self.column_names();
        let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
        let more = if names.len() > 8 { ", …" } else { "" };
        format!(
            "gymscope.Table({} rows × {} columns: {}{more})",
            self.batch.num_rows(),
            names.len(),
            shown.join(", ")
        )
    }

    /// The Arrow C stream of this table, in a PyCapsule named `arrow_array_stream` (the
    /// Arrow PyCapsule interface). `requested_schema` is not needed: the columns are sent as
    /// they are, which the interface allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let schema = self.batch.schema();
        let batches = RecordBatchIterator::new([Ok(self.batch.clone())], schema);
        let stream = arrow_array::ffi_stream::FFI_ArrowArrayStream::new(Box::new(batches));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Rows `offset..offset + length` (fewer at the end), sharing this table's buffers.
    fn slice(&self, offset: usize, length: usize) -> Table {
        let offset = offset.min(self.batch.num_rows());
        let length = length.min(self.batch.num_rows() - offset);
        Table::new(self.batch.slice(offset, length))
    }

    /// The rows as dictionaries, column name to value (`None` where missing): no pyarrow needed.
    fn to_pylist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let names = self.column_names();
        let rows = PyList::empty(py);
        for i in 0..self.batch.num_rows() {
            let row = PyDict::new(py);
            for (name, column) in names.iter().zip(self.batch.columns()) {
                row.set_item(name, value(py, column.as_ref(), i)?)?;
            }
            rows.append(row)?;
        }
        Ok(rows)
    }
}

/// Row `i` of a column as a Python value.
fn value<'py>(py: Python<'py>, column: &dyn Array, i: usize) -> PyResult<Bound<'py, PyAny>> {
    if column.is_null(i) {
        return Ok(py.None().into_bound(py));
    }
    Ok(match column.data_type() {
        DataType::Int64 => column
            .as_primitive::<Int64Type>()
            .value(i)
            .into_pyobject(py)?
            .into_any(),
        DataType::Float64 => column
            .as_primitive::<Float64Type>()
            .value(i)
            .into_pyobject(py)?
            .into_any(),
        DataType::Boolean => column
            .as_boolean()
            .value(i)
            .into_pyobject(py)?
            .to_owned()
            .into_any(),
        DataType::Utf8 => column
            .as_string::<i32>()
            .value(i)
            .into_pyobject(py)?
            .into_any(),
        other => {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "no Python value for an Arrow {other} column"
            )))
        }
    })
}
