//! v1.sql: the naive job's append.

use super::{Exec, Tx, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

statements! {
    APPEND: Exec = v1::APPEND;
}

impl Tx<'_> {
    /// Snapshot `snapshot_id` appends what one naive run of `run_date` counts; returns the rows.
    pub fn append_naive(&mut self, snapshot_id: i64, run_date: NaiveDate) -> Result<i64> {
        let n = self.exec("appending the naive rows", &APPEND, named_params! { "snapshot_id": snapshot_id, "run_date": run_date })?;
        Ok(n as i64)
    }
}
