//! recount-lab: the lab's operations on a lab directory, written once for the CLI, the explorer
//! and a warehouse's mirror: landing (`lake::land`, `lake::model_land`), v1, v2, snapshots and
//! rollback, reopening, recovery of an interrupted write, and the bundled sample world. It reads
//! the raw zone through recount-raw and writes only through recount-store; it knows no report,
//! no Spark and no front end, and the compiler holds it to that.

pub mod lake;

// The lower crates, under the names the lab's code uses: `crate::store::Store`.
pub use recount_core::{env, error, money, progress, rules, sanitize, tz};
pub use recount_raw::{model, raw};
pub use recount_store as store;
