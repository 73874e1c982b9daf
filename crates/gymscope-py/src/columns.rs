//! The core's results as Arrow record batches: a run's rollout rows (`query::rows`) and the
//! profile's task table (`table::task_table`), column by column with their nulls.

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_schema::{ArrowError, Field, Schema};
use gymscope::health::Flag;
use gymscope::json::Num;
use gymscope::profile::Profile;
use gymscope::query::rows::{RowColumns, TOKENS};
use std::sync::Arc;

/// Builds a batch from named columns (the row count given, so a batch of no columns has it).
fn batch(columns: Vec<(String, ArrayRef)>, rows: usize) -> Result<RecordBatch, ArrowError> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(name, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
}

fn ints(v: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from_iter(v))
}

fn floats(v: impl IntoIterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from_iter(v))
}

/// The rows of `gymscope.rollouts()`, in `query --format rows`' column order.
pub fn rollout_rows(c: RowColumns) -> Result<RecordBatch, ArrowError> {
    let n = c.len();
    let mut columns: Vec<(String, ArrayRef)> = vec![
        ("task".into(), ints(c.task.iter().map(|&t| Some(t)))),
        ("rollout".into(), ints(c.rollout.iter().map(|&r| Some(r)))),
        ("agent".into(), Arc::new(StringArray::from(c.agent))),
        ("reward".into(), floats(c.reward)),
    ];
    for (name, values) in TOKENS.iter().zip(c.tokens) {
        columns.push(((*name).into(), ints(values)));
    }
    columns.push(("tool_calls".into(), ints(c.tool_calls)));
    columns.push(("turns".into(), ints(c.turns)));
    for f in Flag::ALL {
        let set = c.flags.iter().map(|b| b.map(|b| b & f.bit() != 0));
        let array: ArrayRef = Arc::new(BooleanArray::from_iter(set));
        columns.push((format!("health.{}", f.as_str()), array));
    }
    for (name, values) in c.fields.into_iter().zip(c.values) {
        columns.push((name, floats(values)));
    }
    batch(columns, n)
}

/// The profile's task table: the task, its agent (`agents`, one per task: `task_agents`), then
/// every statistic and count as `*_reward_profiling.jsonl` names them (integers where every
/// value is one).
pub fn task_table(p: &Profile, agents: &[Option<String>]) -> Result<RecordBatch, ArrowError> {
    let t = gymscope::table::task_table(p);
    let n = p.tasks.len();
    let agents = agents.iter().cloned();
    let mut columns: Vec<(String, ArrayRef)> = vec![
        ("task".into(), ints(p.tasks.iter().map(|t| Some(t.task)))),
        (
            "agent".into(),
            Arc::new(StringArray::from_iter(agents)) as ArrayRef,
        ),
    ];
    for (c, header) in t.headers.iter().enumerate() {
        let cells = t.rows.iter().map(|r| r.cells[c].value);
        let all_int = cells.clone().all(|v| matches!(v, None | Some(Num::Int(_))));
        let array = if all_int {
            ints(cells.map(|v| match v {
                Some(Num::Int(i)) => Some(i),
                _ => None,
            }))
        } else {
            floats(cells.map(|v| v.map(|v| v.as_f64())))
        };
        columns.push((header.clone(), array));
    }
    batch(columns, n)
}
