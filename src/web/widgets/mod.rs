//! Components more than one page lays out, or big enough to stand alone: the plots (`plots`,
//! `scatter_canvas`, `histogram`, `plot_download`), the task table (`task_table`, `task_filters`,
//! `task_rollouts`), the query bar (`query_bar`) and the pass-rate band that writes into it (`pass_band`), a rollout (`rollout_view`, `conversation_view`), `file_pick` (with `atif_files`, ATIF chosen there made a run),
//! `follow` (a run followed while it grows) and `health_badges`.

pub mod atif_files;
pub mod column_picker;
pub mod conversation_view;
pub mod file_pick;
pub mod follow;
pub mod health_badges;
pub mod histogram;
pub mod pass_band;
pub mod plot_download;
pub mod plots;
pub mod query_bar;
pub mod rollout_nav;
pub mod rollout_view;
pub mod run_header;
pub mod scatter_canvas;
pub mod task_filters;
pub mod task_rollouts;
pub mod task_table;
