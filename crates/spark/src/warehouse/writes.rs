//! Writes asked of a warehouse: the Spark job does them, and the mirror is read again after.

use super::catalog;
use crate::lake::Lab;
use crate::lake::snapshot::TriggerKind;
use crate::spark::RunOf;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail};
use std::path::PathBuf;

/// A write asked of a warehouse, from the explorer or the command line. Spark does it
/// (`recount spark`'s job), and the mirror is read again after.
#[derive(Debug, Clone)]
pub enum Write {
    /// Land one upload of a world and run v2 for it: the daily step.
    Daily { world: PathBuf, upload: NaiveDate },
    /// Gold (and its silver) back to where the mirror's snapshot left them.
    Rollback(i64),
    /// Finance reopens a date: its rows past the window into gold, with who and why.
    Reopen { date: NaiveDate, reason: String, by: String },
    /// v1 for a date again: it appends, so the date's v1 doubles.
    RetryV1(NaiveDate),
    /// v2 rebuilds a date under a window (skipped when its inputs are unchanged).
    Rebuild { date: NaiveDate, late_days: u32 },
}

/// The Spark job on one warehouse.
#[derive(Debug, Clone)]
pub struct Spark {
    pub warehouse: PathBuf,
    pub master: String,
    /// The window of the job's v2 runs.
    pub late_days: u32,
}

impl Spark {
    /// Does `write` with Spark; `mirror` (the warehouse as read before) names the Iceberg snapshot
    /// a rollback goes to. Returns what was done, in one line.
    pub fn write(&self, mirror: &Lab, write: Write, mut on_progress: impl FnMut(&crate::spark::SparkProgress)) -> Result<String> {
        if let Some(name) = catalog(&self.warehouse) {
            bail!("catalog {name} is read through pyiceberg; the Spark job writes a Hadoop catalog's directory (--warehouse DIR)");
        }
        let driver = crate::spark::Driver::new(self.warehouse.clone(), self.master.clone())?;
        match write {
            Write::Daily { world, upload } => {
                let run = RunOf { world: &world, uploads: &[upload], late_days: self.late_days, daily: true };
                let r = driver.run(&run, TriggerKind::Daily, false, &mut on_progress)?;
                let written: Vec<String> = r.runs.iter().filter_map(|r| r.snapshot_id).map(|s| s.to_string()).collect();
                let snapshots = if written.is_empty() {
                    "no gold snapshot (inputs unchanged)".to_string()
                } else {
                    format!("gold snapshot {}", written.join(", "))
                };
                Ok(format!("spark landed upload {upload} and ran v2: {snapshots}; {}", r.fingerprint.line()))
            }
            Write::Rollback(n) => {
                let Some(ice) = mirror.store().iceberg_of(n)? else {
                    bail!("snapshot {n} does not exist; `recount snapshots --warehouse DIR` lists them");
                };
                let r = driver.rollback(ice, &mut on_progress)?;
                if r.fingerprint.line() != r.target_fingerprint.line() {
                    bail!("spark rollback: gold after it ({}) is not gold as of Iceberg snapshot {ice}", r.fingerprint.line());
                }
                Ok(format!("spark rolled gold back to snapshot {n} (Iceberg {ice}): {}", r.fingerprint.line()))
            }
            Write::RetryV1(date) => {
                let r = driver.naive(date, &mut on_progress)?;
                Ok(format!(
                    "spark ran v1 for {}: appended {} row(s) (Iceberg snapshot {}); the v1 column now counts every run; gold is untouched: {}",
                    r.run_date,
                    r.rows_added,
                    r.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "none".into()),
                    r.fingerprint.line()
                ))
            }
            Write::Rebuild { date, late_days } => {
                let r = driver.rebuild(&[date], late_days, &mut on_progress)?;
                Ok(match r.runs.iter().find_map(|r| r.snapshot_id) {
                    Some(s) => format!("spark rebuilt {date}: gold snapshot {s}; {}", r.fingerprint.line()),
                    None => format!("spark found the inputs of {date} unchanged: nothing was rebuilt"),
                })
            }
            Write::Reopen { date, reason, by } => {
                let (r, by) = driver.reopen(date, (&reason, &by), self.late_days, &mut on_progress)?;
                Ok(format!("spark: {date} reopened by {by}: {}", r.fingerprint.line()))
            }
        }
    }

    /// Does `write` on a model's warehouse with Spark (`model_warehouse.py`); `mirror` names the
    /// Iceberg snapshot a rollback goes to. Returns what was done, in one line.
    pub fn write_model(&self, mirror: &Lab, write: Write) -> Result<String> {
        use crate::lake::model::ModelRun;
        let driver = crate::spark::Driver::new(self.warehouse.clone(), self.master.clone())?;
        let wrote = |r: &ModelRun| match r.snapshot {
            Some(s) => format!("gold snapshot {s} rewrote {}", crate::store::date_list(&r.rewritten)),
            None => "no gold snapshot (inputs unchanged)".to_string(),
        };
        match write {
            Write::Daily { world, upload } => {
                let r = driver.model_run(&RunOf { world: &world, uploads: &[upload], late_days: self.late_days, daily: true }, |_| {})?;
                let runs: Vec<String> = r.runs.iter().map(wrote).collect();
                Ok(format!("spark landed upload {upload} and ran v2: {}; {}", runs.join("; "), r.fingerprint))
            }
            Write::Rollback(n) => {
                let Some(ice) = super::model_mirror::iceberg_of(mirror, n)? else {
                    bail!(
                        "snapshot {n} is none that a gold snapshot of the warehouse left; `recount snapshots --warehouse DIR` lists them"
                    );
                };
                let r = driver.model_rollback(ice)?;
                if r.line != r.target {
                    bail!("spark rollback: gold after it ({}) is not gold as of Iceberg snapshot {ice} ({})", r.line, r.target);
                }
                Ok(format!("spark rolled gold back to snapshot {n} (Iceberg {ice}): {}", r.line))
            }
            Write::RetryV1(date) => {
                let r = driver.model_naive(date)?;
                Ok(format!(
                    "spark ran v1 for {}: appended {} row(s); the v1 column now counts every run; gold is untouched",
                    r.run_date, r.rows_added
                ))
            }
            Write::Rebuild { date, late_days } => {
                let r = driver.model_rebuild(&[date], late_days, false)?;
                Ok(format!("spark rebuilt {date}: {}; {}", wrote(&r), r.fingerprint))
            }
            Write::Reopen { date, reason, by } => {
                let (r, by) = driver.model_reopen(date, (&reason, &by), self.late_days)?;
                Ok(format!("spark: {date} reopened by {by}: {}; {}", wrote(&r), r.fingerprint))
            }
        }
    }
}
