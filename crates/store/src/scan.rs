//! `recount_parse(job)`: the table function a landing's `INSERT INTO bronze.events SELECT * FROM
//! recount_parse($job)` reads. The landing hands the store a `RowSource`; DuckDB calls the scan
//! from its own threads, each pulling record batches from the source, so parsing, copying and
//! compressing share the cores. The sources in flight belong to the connection (the function's
//! extra info), not to the process: two labs in one process land independently.
//!
//! `recount_rows(job)` is the same scan under the name a write's statements use for rows held in
//! Rust (`Batches`: a short write's winners, gold's sums; v2.sql).

use color_eyre::eyre::{Result, eyre};
use duckdb::arrow::datatypes::Field;
use duckdb::arrow::record_batch::RecordBatch;
use duckdb::core::{DataChunkHandle, LogicalTypeHandle, LogicalTypeId};
use duckdb::vtab::{BindInfo, InitInfo, TableFunctionInfo, VTab, record_batch_to_duckdb_data_chunk, to_duckdb_logical_type_for_field};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// The arrow types a `RowSource` builds its batches with (DuckDB's own arrow, re-exported so
/// that the store stays the only code that names duckdb).
pub use duckdb::arrow;

/// Chrono's day count from year 1 of 1970-01-01 (`num_days_from_ce`): Arrow's and DuckDB's DATE
/// counts days from there.
const EPOCH_FROM_CE: i32 = 719_163;

/// A date as Arrow's DATE, days since 1970-01-01: from the day count since year 1, without
/// building the epoch's date and a duration each time (a landing does it four times a row).
pub fn arrow_days(d: chrono::NaiveDate) -> i32 {
    use chrono::Datelike;
    d.num_days_from_ce() - EPOCH_FROM_CE
}

/// The date of Arrow's DATE `days` (None: past chrono's range).
pub fn arrow_date(days: i32) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::from_num_days_from_ce_opt(days.checked_add(EPOCH_FROM_CE)?)
}

/// What a landing hands the scan: batches of bronze rows, made on DuckDB's threads.
pub trait RowSource: Send + Sync {
    /// The columns of every batch, in the table's order.
    fn fields(&self) -> Vec<Field>;
    /// How many threads may call `next_rows` at once.
    fn max_threads(&self) -> u64;
    /// Up to one batch for the calling thread, and its first row not returned yet; None when
    /// every row is returned.
    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>>;
    /// The rest of a batch (from `offset`), for the calling thread's next call.
    fn keep_rest(&self, batch: RecordBatch, offset: usize) -> Result<()>;
    /// The first error a call returned, with its context (DuckDB's error keeps only its text).
    fn failed(&self, e: color_eyre::Report);
}

/// The sources in flight on one connection, by job id.
#[derive(Clone, Default)]
pub struct Scans {
    next: Arc<AtomicI64>,
    live: Arc<Mutex<HashMap<i64, Arc<dyn RowSource>>>>,
}

/// A source registered for the length of one insert; dropping it takes it out.
pub struct Registered<'a> {
    scans: &'a Scans,
    pub id: i64,
}

impl Scans {
    pub fn register(&self, source: Arc<dyn RowSource>) -> Result<Registered<'_>> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.live.lock().map_err(|_| eyre!("a landing thread panicked"))?.insert(id, source);
        Ok(Registered { scans: self, id })
    }

    fn get(&self, id: i64) -> Option<Arc<dyn RowSource>> {
        self.live.lock().ok()?.get(&id).cloned()
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut live) = self.scans.live.lock() {
            live.remove(&self.id);
        }
    }
}

/// Rows already made, as batches in memory, handed to DuckDB on one thread.
pub struct Batches {
    fields: Vec<Field>,
    /// The batches not returned yet, last first, each with its first row not returned.
    left: Mutex<Vec<(RecordBatch, usize)>>,
}

impl Batches {
    pub fn new(fields: Vec<Field>, mut batches: Vec<RecordBatch>) -> Batches {
        batches.reverse();
        Batches { fields, left: Mutex::new(batches.into_iter().map(|b| (b, 0)).collect()) }
    }
}

impl RowSource for Batches {
    fn fields(&self) -> Vec<Field> {
        self.fields.clone()
    }

    fn max_threads(&self) -> u64 {
        1
    }

    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        Ok(self.left.lock().map_err(|_| eyre!("a thread panicked"))?.pop())
    }

    fn keep_rest(&self, batch: RecordBatch, offset: usize) -> Result<()> {
        self.left.lock().map_err(|_| eyre!("a thread panicked"))?.push((batch, offset));
        Ok(())
    }

    // The rows are made before the scan: it cannot fail.
    fn failed(&self, _: color_eyre::Report) {}
}

/// The table function's type: `register_table_function_with_extra_info` gives each connection
/// its own `Scans`.
pub struct ParseScan;

pub struct ParseBind {
    source: Arc<dyn RowSource>,
}

impl VTab for ParseScan {
    type InitData = ();
    type BindData = ParseBind;

    fn bind(bind: &BindInfo) -> std::result::Result<ParseBind, Box<dyn std::error::Error>> {
        let id = bind.get_parameter(0);
        // A NULL read as a number throws inside DuckDB, which would abort the process.
        if id.is_null() {
            return Err("no job given".into());
        }
        let id = id.to_int64();
        // SAFETY: the extra info is the `Scans` this function was registered with, owned by
        // DuckDB's catalog for as long as the function exists.
        let scans = unsafe { bind.get_extra_info::<Scans>().as_ref() }.ok_or("the landing's scan has no registry")?;
        let source = scans.get(id).ok_or("no landing in progress with this id")?;
        for f in source.fields() {
            bind.add_result_column(f.name(), to_duckdb_logical_type_for_field(&f)?);
        }
        Ok(ParseBind { source })
    }

    fn init(init: &InitInfo) -> std::result::Result<(), Box<dyn std::error::Error>> {
        // SAFETY: DuckDB hands init the bind data that `bind` above returned.
        let bind = unsafe { &*init.get_bind_data::<ParseBind>() };
        init.set_max_threads(bind.source.max_threads().max(1));
        Ok(())
    }

    fn func(info: &TableFunctionInfo<Self>, output: &mut DataChunkHandle) -> std::result::Result<(), Box<dyn std::error::Error>> {
        let source = &info.get_bind_data().source;
        let (batch, offset) = match source.next_rows() {
            Ok(Some(rows)) => rows,
            Ok(None) => {
                output.set_len(0);
                return Ok(());
            }
            Err(e) => {
                let text = format!("{e:#}");
                source.failed(e);
                return Err(text.into());
            }
        };
        let n = (batch.num_rows() - offset).min(output.flat_vector(0).capacity());
        record_batch_to_duckdb_data_chunk(&batch.slice(offset, n), output)?;
        if offset + n < batch.num_rows() {
            source.keep_rest(batch, offset + n).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn parameters() -> Option<Vec<LogicalTypeHandle>> {
        Some(vec![LogicalTypeHandle::from(LogicalTypeId::Bigint)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn arrow_days_count_from_1970_both_ways() {
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        for d in [
            epoch,
            NaiveDate::from_ymd_opt(2026, 10, 25).unwrap(),
            NaiveDate::from_ymd_opt(1969, 12, 31).unwrap(),
            NaiveDate::from_ymd_opt(2262, 4, 11).unwrap(),
        ] {
            assert_eq!(arrow_days(d) as i64, (d - epoch).num_days(), "{d}");
            assert_eq!(arrow_date(arrow_days(d)), Some(d));
        }
        assert_eq!(arrow_date(i32::MAX), None);
    }
}
