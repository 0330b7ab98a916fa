//! recount: why did a daily sales number move? Raw till uploads, a naive v1 job, an idempotent
//! v2 job and an independent polars recount, with every write kept as a snapshot.
//!
//! The map: `store` is the only code that talks to DuckDB; `lake` runs the lab's operations
//! (land, v1, v2, rollback) through it; `rules` holds the window and finality rules; `reports`
//! reads plain structs out of the lab; `cli`/`commands`, `tui` and `demo` are front ends that
//! call only `lake` and `reports`. The bench is a binary of its own (`src/bin/recount-bench/`).

pub mod cli;
pub mod commands;
pub mod config;
pub mod demo;
pub mod model_commands;
pub mod tui;

// The lower crates, under the names the code has always used: `crate::store::Store`.
pub use recount_core::{env, error, money, progress, rules, sanitize, tz};
pub use recount_lab::lake;
pub use recount_raw::{model, raw};
pub use recount_reports::{recompute, reports};
pub use recount_spark::{spark, warehouse};
pub use recount_store as store;
pub use recount_world::world;
