//! recount-spark: the Spark bridge. It sets up and starts the PySpark driver (`spark`), speaks
//! its protocol (one JSON object a line) and reads its answers into typed structs, and it keeps a
//! warehouse's mirror, a lab rebuilt from the warehouse's snapshots, which the reports read as
//! they read a lab (`warehouse`). Every write to a warehouse, from `recount spark …`, from
//! `--warehouse` or from the explorer, goes through `warehouse::Spark`. It is the only crate that
//! names the driver's protocol; it reads and writes labs through recount-lab and the reports, and
//! cannot name a front end.

pub mod spark;
pub mod warehouse;

// The lower crates, under the names the bridge's code uses: `crate::lake::Lab`.
pub use recount_core::{error, money, progress, rules, sanitize, tz};
pub use recount_lab::lake;
pub use recount_raw::{model, raw};
pub use recount_reports::{recompute, reports};
pub use recount_store as store;
