//! recount-reports: what every front end shows, read from a lab (or a warehouse's mirror) as
//! plain structs, and the one `Report` → `Table` model the CLI, JSON, CSV and the explorer
//! render; with the independent recompute (`recompute`, polars over the raw zone) and the policy
//! of its cache, which the reports own. It reads a lab through recount-lab and the store, and
//! cannot name the warehouse, Spark or a front end.

pub mod recompute;
pub mod reports;

// The lower crates, under the names the reports' code uses: `crate::lake::Lab`.
pub use recount_core::{error, money, progress, rules, sanitize, tz};
pub use recount_lab::lake;
pub use recount_raw::{model, raw};
pub use recount_store as store;
