//! The profile's columns as they cross to the page: typed arrays, not a million JS numbers.

use crate::inspect::model::Columns;
use serde::{Deserialize, Serialize};
use serde_wasm_bindgen::preserve;

/// [`Columns`] as typed arrays: copied once into JS memory, moved to the page without a copy.
#[derive(Serialize, Deserialize)]
pub struct JsColumns {
    #[serde(with = "preserve")]
    task_stats: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_task: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_rollout: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_agent: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_offset: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_len: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_values: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_flags: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_health_agent: js_sys::Float64Array,
    #[serde(with = "preserve")]
    point_verdict: js_sys::Float64Array,
}

impl From<&Columns> for JsColumns {
    fn from(c: &Columns) -> JsColumns {
        let a = |v: &[f64]| js_sys::Float64Array::from(v);
        JsColumns {
            task_stats: a(&c.task_stats),
            point_task: a(&c.point_task),
            point_rollout: a(&c.point_rollout),
            point_agent: a(&c.point_agent),
            point_offset: a(&c.point_offset),
            point_len: a(&c.point_len),
            point_values: a(&c.point_values),
            point_flags: a(&c.point_flags),
            point_health_agent: a(&c.point_health_agent),
            point_verdict: a(&c.point_verdict),
        }
    }
}

impl From<&JsColumns> for Columns {
    fn from(c: &JsColumns) -> Columns {
        Columns {
            task_stats: c.task_stats.to_vec(),
            point_task: c.point_task.to_vec(),
            point_rollout: c.point_rollout.to_vec(),
            point_agent: c.point_agent.to_vec(),
            point_offset: c.point_offset.to_vec(),
            point_len: c.point_len.to_vec(),
            point_values: c.point_values.to_vec(),
            point_flags: c.point_flags.to_vec(),
            point_health_agent: c.point_health_agent.to_vec(),
            point_verdict: c.point_verdict.to_vec(),
        }
    }
}
