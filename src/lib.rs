//! recount: why did a daily sales number move? Raw till uploads, a naive v1 job, an idempotent
//! v2 job and an independent polars recount, with every write kept as a snapshot.

pub mod bench;
pub mod cli;
pub mod commands;
pub mod demo;
pub mod lake;
pub mod money;
pub mod queries;
pub mod raw;
pub mod recompute;
pub mod reports;
pub mod sanitize;
pub mod tui;
pub mod tz;
pub mod world;
