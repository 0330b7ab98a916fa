//! v1, the naive job, kept on purpose: it reads one upload, counts events (not baskets) for the
//! business date equal to the run date, and APPENDS. A retry doubles the day.

use super::snapshot::{self, Operation, SnapshotRecord, Trigger};
use super::{Lab, Tx};
use crate::queries::sql;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

pub fn run(lab: &Lab, run_date: NaiveDate, fail_after: Option<usize>) -> Result<SnapshotRecord> {
    let conn = &lab.conn;
    let mut record = snapshot::new_record(lab, Operation::Append, Trigger::upload("naive", run_date), 0)?;
    let mut tx = Tx::begin(conn, fail_after)?;
    record.fingerprint = snapshot::fingerprint_after(lab, &mut tx, None)?;
    record.rows_added = tx.execute("appending the naive rows", sql("v1", "append"), duckdb::params![record.snapshot_id, run_date])? as i64;
    snapshot::insert_record(lab, &mut tx, &record)?;
    tx.commit()?;
    Ok(record)
}
