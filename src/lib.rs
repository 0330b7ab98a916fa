//! recount: why did a daily sales number move? Raw till uploads, a naive v1 job, an idempotent
//! v2 job and an independent polars recount, with every write kept as a snapshot.
//!
//! The map: `store` is the only code that talks to DuckDB; `lake` runs the lab's operations
//! (land, v1, v2, rollback) through it; `rules` holds the window and finality rules; `reports`
//! reads plain structs out of the lab; `cli`/`commands`, `tui`, `demo` and `bench` are front ends
//! that call only `lake` and `reports`.

pub mod bench;
pub mod cli;
pub mod commands;
pub mod config;
pub mod demo;
pub mod error;
pub mod lake;
pub mod model;
pub mod model_commands;
pub mod money;
pub mod progress;
pub mod raw;
pub mod recompute;
pub mod reports;
pub mod rules;
pub mod sanitize;
pub mod spark;
pub mod store;
pub mod tui;
pub mod tz;
pub mod warehouse;
pub mod world;
