//! Upstream's semantics in one home: NeMo Gym is Python and Pydantic, and what gymscope reads
//! and writes must mean what it means there. Every module that needs one of these rules calls
//! it here instead of writing it again.
//! - [`difflib`]: Python's `get_close_matches`, for v0.7.0's "did you mean"
//! - [`keys`]: the row keys upstream reads and writes (`_ng_task_index`, `ng_trajectory`, …)
//! - [`metric_names`]: v0.7.0's primary metrics (what is aggregated across repeats and compared)
//! - [`py`]: Python's truthiness, `repr` and `json.dumps`
//! - [`pydantic`]: Pydantic's lax coercions and its model rules (extra keys forbidden, fields
//!   required)
//! - [`trajectory`]: the trajectory record (`TrajectoryRecord`) validated, and
//!   [`trajectory::dump`]: its dumped form
//!
//! This layer sits below everything that reads runs (`collect`, `health`, `pivot`, …) and
//! imports none of them.

pub mod difflib;
pub mod keys;
pub mod metric_names;
pub mod py;
pub mod pydantic;
pub mod trajectory;
