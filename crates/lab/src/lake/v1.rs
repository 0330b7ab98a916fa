//! v1, the naive job, kept on purpose: it reads one upload, counts events (not baskets) for the
//! business date equal to the run date, and APPENDS. A retry doubles the day.

use super::Lab;
use super::snapshot::{self, Operation, SnapshotRecord, Trigger, TriggerKind};
use crate::store::Tx;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

pub fn run(lab: &Lab, run_date: NaiveDate, fail_after: Option<usize>) -> Result<SnapshotRecord> {
    let mut record = snapshot::new_record(lab, Operation::Append, Trigger::upload(TriggerKind::Naive, run_date), 0)?;
    let mut tx = Tx::begin(lab.store(), fail_after)?;
    record.fingerprint = snapshot::fingerprint_after(lab, &mut tx, None)?;
    record.rows_added = tx.append_naive(record.snapshot_id, run_date)?;
    snapshot::insert_record(lab, &mut tx, &record)?;
    tx.commit()?;
    Ok(record)
}
