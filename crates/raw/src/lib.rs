//! The raw zone and reading it: the contract's layout, a line's checks and business date, the
//! fast and careful line readers, the dimension files, source descriptions that map other
//! shapes onto the contract's fields, and the models (what a daily metric counts, and a
//! model's own reader and independent recount).

pub mod model;
pub mod raw;

// The lower crates under the names the code has always used.
use recount_core::{money, progress, rules, sanitize, tz};
use recount_store as store;
