//! v2.sql: the idempotent job's reads and its two inserts.

use super::{Exec, GoldChunk, Params, Query, Store, Tx, arrow, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use duckdb::named_params;
use std::collections::BTreeMap;

row! {
    /// What one file of an upload holds for one business date and currency, flagged.
    pub struct UploadCell {
        pub upload_date: NaiveDate,
        pub business_date: NaiveDate,
        pub currency: String,
        pub rows: i64,
        pub revenue_minor: i64,
        /// The rows never enter silver.
        pub beyond: bool,
        /// The file version is current (a superseded version's dates are affected, no more).
        pub current: bool,
    }
}

row! {
    /// What one file feeds one business date under the window: rows and their digest sum.
    pub struct InputCell { pub business_date: NaiveDate, pub rows: i64, pub digest: i64 }
}

row! {
    /// The version of a date that silver and gold hold now, and the window it keeps (reopened).
    pub struct CurrentVersion {
        pub business_date: NaiveDate,
        pub input_hash: String,
        pub silver_rows: i64,
        pub gold_rows: i64,
        pub kept_late_days: Option<i32>,
    }
}

impl CurrentVersion {
    /// The window this version keeps (a reopening's; a negative count, which no write records,
    /// is none).
    pub fn kept_window(&self) -> Option<u32> {
        self.kept_late_days.and_then(|d| u32::try_from(d).ok())
    }
}

row! {
    pub struct KeyCount { pub keys: i64 }
}

row! {
    /// One winner of a write (`winners_rows`): silver's columns, the first five, in silver's order,
    /// then what gold sums. Read as Arrow batches (`Query::batches`); the struct names the columns.
    pub struct WinnerRow {
        pub snapshot_id: i64,
        pub business_date: NaiveDate,
        pub file_id: i32,
        pub line: i32,
        pub copies: i32,
        pub store_row: i32,
        pub revenue_minor: i64,
    }
}

/// The rows a write's new versions hold per date: (silver's, gold's).
pub type DateRows = BTreeMap<NaiveDate, (i64, i64)>;

row! {
    /// A new gold row's store and its line of the fingerprint's text (`Rewrite::text`).
    pub struct GoldAddedLine { pub business_date: NaiveDate, pub store_id: String, pub line: String }
}

row! {
    /// A store correction no v2 run has rebuilt for yet: the store's row before and after.
    pub struct PendingStoreChange {
        pub change_id: i32,
        pub store_id: String,
        pub old_country: String,
        pub old_timezone: String,
        pub old_currency: String,
        pub new_country: String,
        pub new_timezone: String,
        pub new_currency: String,
        pub landing_id: i64,
    }
}

row! {
    pub struct ChangeDate { pub business_date: NaiveDate }
}

statements! {
    PENDING_STORE_CHANGES: Query<PendingStoreChange> = v2::PENDING_STORE_CHANGES;
    STORE_CHANGE_DATES: Query<ChangeDate> = v2::STORE_CHANGE_DATES;
    STORE_CHANGES_APPLIED: Exec = v2::STORE_CHANGES_APPLIED;
    UPLOAD_CELLS: Query<UploadCell> = v2::UPLOAD_CELLS;
    INPUT_CELLS: Query<InputCell> = v2::INPUT_CELLS;
    CURRENT_VERSIONS: Query<CurrentVersion> = v2::CURRENT_VERSIONS;
    WINNERS_ROWS: Query<WinnerRow> = v2::WINNERS_ROWS;
    SILVER_INSERT: Exec = v2::SILVER_INSERT;
    SILVER_FROM_ROWS: Exec = v2::SILVER_FROM_ROWS;
    KEY_COLLISIONS: Query<KeyCount> = v2::KEY_COLLISIONS;
    GOLD_FROM_SUMS: Exec = v2::GOLD_FROM_SUMS;
    GOLD_FROM_SUMS_TEXT: Query<GoldAddedLine> = v2::GOLD_FROM_SUMS_TEXT;
    DATE_WINDOWS_INSERT: Exec = v2::DATE_WINDOWS_INSERT;
}

impl Store {
    /// What each upload of `first..=last` holds per file, business date and currency.
    pub fn upload_cells(&self, first: NaiveDate, last: NaiveDate, late_days: u32) -> Result<BTreeMap<NaiveDate, Vec<UploadCell>>> {
        let mut by_upload: BTreeMap<NaiveDate, Vec<UploadCell>> = BTreeMap::new();
        UPLOAD_CELLS.each(self, named_params! { "first": first, "last": last, "late_days": late_days }, |c| {
            by_upload.entry(c.upload_date).or_default().push(c);
            Ok(())
        })?;
        Ok(by_upload)
    }

    /// What feeds the dates `first..=last` under the window, file by file.
    pub fn input_cells(&self, late_days: u32, first: NaiveDate, last: NaiveDate, mut f: impl FnMut(InputCell)) -> Result<()> {
        INPUT_CELLS.each(self, named_params! { "late_days": late_days, "first": first, "last": last }, |c| {
            f(c);
            Ok(())
        })
    }

    /// The current version of each built date in `first..=last`.
    pub fn current_versions(&self, first: NaiveDate, last: NaiveDate) -> Result<BTreeMap<NaiveDate, CurrentVersion>> {
        let rows = CURRENT_VERSIONS.all(self, named_params! { "first": first, "last": last })?;
        Ok(rows.into_iter().map(|c| (c.business_date, c)).collect())
    }

    /// The store corrections landed and not yet rebuilt for, oldest first.
    pub fn pending_store_changes(&self) -> Result<Vec<PendingStoreChange>> {
        PENDING_STORE_CHANGES.all(self, &[])
    }

    /// The business dates that hold a pending correction's store's events in the versions its
    /// correction re-derived, before or after, for every pending correction at once.
    pub fn store_change_dates(&self) -> Result<Vec<NaiveDate>> {
        Ok(STORE_CHANGE_DATES.all(self, &[])?.into_iter().map(|d| d.business_date).collect())
    }

    /// The kept window of each date in `first..=last` whose version now has one (reopened).
    /// Read through `current_versions`, the one statement that joins a version to its window.
    pub fn kept_windows(&self, first: NaiveDate, last: NaiveDate) -> Result<BTreeMap<NaiveDate, u32>> {
        Ok(self.current_versions(first, last)?.into_iter().filter_map(|(d, v)| Some((d, v.kept_window()?))).collect())
    }

    /// How many basket keys two basket_ids share.
    pub fn key_collisions(&self) -> Result<i64> {
        Ok(KEY_COLLISIONS.one(self, &[])?.keys)
    }
}

/// The dates one v2 write rebuilds: the first and last, and the list when it has gaps.
#[derive(Debug, Clone, Copy)]
pub struct Rewrite<'a> {
    pub snapshot_id: i64,
    pub late_days: u32,
    pub first: NaiveDate,
    pub last: NaiveDate,
    /// The dates as one list (ISO dates joined by commas), for the statements that need the set.
    pub dates: &'a str,
    /// The dates leave gaps between the first and the last.
    pub gaps: bool,
    /// Some basket keys are shared by two basket_ids: tell baskets apart by basket_id too.
    pub key_collisions: bool,
    /// The write rewrites many dates (bulk work: one thread, the lower memory limit). DuckDB
    /// inserts silver's winners, and gold sums them streamed a second time, so the process holds
    /// none. Keeping them as a short write does was tried twice: through DuckDB's appender in
    /// slices of dates it was slower and peaked higher; through `recount_rows` in slices of input
    /// rows it was a little faster, but raised the backfill's peak RSS past a third of the
    /// classic pipeline's, which is the tighter of the bench's two targets.
    pub long: bool,
    /// A short write returns its dates' new text from gold's insert: the process holds gold's
    /// text and brings it up to date (`snapshot::fingerprint_after`).
    pub text: bool,
}

impl Rewrite<'_> {
    /// Runs `f` with what `@winners` (v2.sql) binds, and the new snapshot's id.
    fn with_winners_params<T>(&self, f: impl FnOnce(Params) -> Result<T>) -> Result<T> {
        f(named_params! {
            "snapshot_id": self.snapshot_id, "late_days": self.late_days, "first": self.first, "last": self.last,
            "key_collisions": self.key_collisions, "dates": self.gap_list(),
        })
    }

    /// What the statements bind as `$dates`: the dates' list when they leave gaps between the
    /// first and the last (another window's dates may lie there), else NULL (every date of
    /// `first..=last`, which zone maps alone select).
    fn gap_list(&self) -> Option<&str> {
        self.gaps.then_some(self.dates)
    }
}

impl Tx<'_> {
    /// Snapshot `snapshot_id` keeps window `late_days` for `dates` (ISO dates joined by commas).
    pub fn keep_windows(&mut self, snapshot_id: i64, late_days: u32, dates: &str) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "late_days": late_days, "dates": dates };
        self.exec("keeping the dates' windows", &DATE_WINDOWS_INSERT, params)?;
        Ok(())
    }

    /// The new silver and gold versions of the dates of `w`. A short write finds the winners once
    /// (`winners_rows`), keeps them (a few dates: about 17,500 rows a date of the full world),
    /// sums gold's (`GoldSums`) and inserts silver's pointers from them (`silver_from_rows`). A
    /// long one has DuckDB insert silver's winners itself, then streams them once more into the
    /// sums, keeping none (`Rewrite::long`). Gold's sums are then named and inserted. Returns the rows the two
    /// versions hold per date, (silver's, gold's), and, when `w.text` asks, the new gold version's
    /// text, a chunk per date with rows, as `version_text` would read it (lines in store_id order,
    /// the byte order of DuckDB's ORDER BY).
    pub fn insert_versions(&mut self, w: &Rewrite) -> Result<(DateRows, Option<Vec<GoldChunk>>)> {
        let store = self.store;
        let mut sums = GoldSums::default();
        if w.long {
            w.with_winners_params(|params| self.exec("silver insert", &SILVER_INSERT, params))?;
            w.with_winners_params(|params| WINNERS_ROWS.each_batch(store, params, |b| sums.add(&b)))?;
            self.step("summing gold")?;
        } else {
            let winners = w.with_winners_params(|params| WINNERS_ROWS.batches(store, params))?;
            self.step("finding the winners")?;
            for batch in &winners {
                sums.add(batch)?;
            }
            if let Some(first) = winners.first() {
                let fields = first.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
                let job = store.scans.register(std::sync::Arc::new(super::scan::Batches::new(fields, winners)))?;
                SILVER_FROM_ROWS.run(store, named_params! { "job": job.id })?;
            }
            self.step("silver insert")?;
        }
        let counts = sums.rows_per_date()?;
        let job = store.scans.register(std::sync::Arc::new(sums.into_source()?))?;
        let params = named_params! { "snapshot_id": w.snapshot_id, "job": job.id };
        let text = if w.text {
            let mut lines: BTreeMap<NaiveDate, Vec<(String, String)>> = BTreeMap::new();
            GOLD_FROM_SUMS_TEXT.each(store, params, |row| {
                lines.entry(row.business_date).or_default().push((row.store_id, row.line));
                Ok(())
            })?;
            Some(
                lines
                    .into_iter()
                    .map(|(business_date, mut rows)| {
                        rows.sort_unstable();
                        let text = rows.iter().map(|(_, line)| line.as_str()).collect::<Vec<_>>().join("\n");
                        GoldChunk { business_date, rows: rows.len() as i64, text }
                    })
                    .collect(),
            )
        } else {
            GOLD_FROM_SUMS.run(store, params)?;
            None
        };
        drop(job);
        self.step("gold insert")?;
        Ok((counts, text))
    }

    /// Snapshot `snapshot_id` rebuilt for every pending store correction.
    pub fn mark_store_changes_applied(&mut self, snapshot_id: i64) -> Result<()> {
        self.exec("recording the store corrections as rebuilt", &STORE_CHANGES_APPLIED, named_params! { "snapshot_id": snapshot_id })
            .map(|_| ())
    }
}

// gold's rule: begin. The rules digest in every input hash covers the code from here to the end
// mark, as it covers v2.sql (`store::rules_digest`): a changed rule rebuilds every date.

/// Gold's rule: per business date and store row, the winners counted (baskets) and their revenue
/// summed, in 64 bits, checked (a sum past them is an error, never a wrapped total). Every write
/// of gold sums here; v2.sql names each store row.
#[derive(Default)]
struct GoldSums {
    /// (days since 1970-01-01, store row) -> (baskets, revenue in minor units).
    cells: std::collections::HashMap<(i32, i32), (i64, i64), std::hash::BuildHasherDefault<PairHasher>>,
}

impl GoldSums {
    /// Adds a batch of `winners_rows`.
    fn add(&mut self, batch: &arrow::record_batch::RecordBatch) -> Result<()> {
        use arrow::array::AsArray;
        use arrow::datatypes::{Date32Type, Int32Type, Int64Type};
        let column = |name: &str| batch.column_by_name(name).ok_or_else(|| eyre!("the winners lack column {name}"));
        let dates = column("business_date")?.as_primitive_opt::<Date32Type>().ok_or_else(|| eyre!("business_date is not a DATE"))?;
        let store_rows = column("store_row")?.as_primitive_opt::<Int32Type>().ok_or_else(|| eyre!("store_row is not an INTEGER"))?;
        let revenue = column("revenue_minor")?.as_primitive_opt::<Int64Type>().ok_or_else(|| eyre!("revenue_minor is not a BIGINT"))?;
        for ((d, s), r) in dates.values().iter().zip(store_rows.values().iter()).zip(revenue.values().iter()) {
            let cell = self.cells.entry((*d, *s)).or_default();
            cell.0 += 1;
            cell.1 = cell.1.checked_add(*r).ok_or_else(|| {
                eyre!(
                    "the revenue of store row {s} on {} passes 64 bits",
                    super::arrow_date(*d).map_or_else(|| d.to_string(), |d| d.to_string())
                )
            })?;
        }
        Ok(())
    }

    /// Silver's rows (baskets) and gold's rows of each date.
    fn rows_per_date(&self) -> Result<DateRows> {
        let mut rows = DateRows::new();
        for (&(d, _), &(baskets, _)) in &self.cells {
            let d =
                super::arrow_date(d).ok_or_else(|| eyre!("a winner's business date ({d} days after 1970-01-01) is past chrono's range"))?;
            let r = rows.entry(d).or_default();
            (r.0, r.1) = (r.0 + baskets, r.1 + 1);
        }
        Ok(rows)
    }

    /// The sums as rows for `recount_rows` (business_date, store_row, baskets, revenue_minor),
    /// by date and store row.
    fn into_source(self) -> Result<super::scan::Batches> {
        use arrow::array::{ArrayRef, Date32Array, Int32Array, Int64Array};
        use arrow::datatypes::{DataType, Field, Schema};
        let mut cells: Vec<((i32, i32), (i64, i64))> = self.cells.into_iter().collect();
        cells.sort_unstable();
        let fields = vec![
            Field::new("business_date", DataType::Date32, false),
            Field::new("store_row", DataType::Int32, false),
            Field::new("baskets", DataType::Int64, false),
            Field::new("revenue_minor", DataType::Int64, false),
        ];
        let columns: Vec<ArrayRef> = vec![
            std::sync::Arc::new(Date32Array::from_iter_values(cells.iter().map(|c| c.0.0))),
            std::sync::Arc::new(Int32Array::from_iter_values(cells.iter().map(|c| c.0.1))),
            std::sync::Arc::new(Int64Array::from_iter_values(cells.iter().map(|c| c.1.0))),
            std::sync::Arc::new(Int64Array::from_iter_values(cells.iter().map(|c| c.1.1))),
        ];
        let batch = arrow::record_batch::RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields.clone())), columns)?;
        Ok(super::scan::Batches::new(fields, vec![batch]))
    }
}

// gold's rule: end.

/// The hash of a (date, store row) key: one multiply per word (FxHash's), in place of the default
/// SipHash's rounds for each of a write's 70,000 winners. The keys are the lab's own numbers, not
/// an attacker's.
#[derive(Default)]
struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_i32(&mut self, i: i32) {
        self.write_u64(u64::from(i as u32));
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, AsArray, Date32Array, Int32Array, Int64Array};
    use arrow::datatypes::{Date32Type, Int32Type, Int64Type};
    use std::sync::Arc;

    /// Winners as `winners_rows` gives them, gold's three columns only: (days, store row, revenue).
    fn winners(rows: &[(i32, i32, i64)]) -> arrow::record_batch::RecordBatch {
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("business_date", Arc::new(Date32Array::from_iter_values(rows.iter().map(|r| r.0)))),
            ("store_row", Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1)))),
            ("revenue_minor", Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2)))),
        ];
        arrow::record_batch::RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn gold_sums_count_and_sum_each_dates_store_rows_in_order() {
        let day = |d: u32| (NaiveDate::from_ymd_opt(2026, 8, d).unwrap() - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32;
        let mut sums = GoldSums::default();
        sums.add(&winners(&[(day(15), 7, 1_000), (day(14), 7, 250), (day(15), 2, 5), (day(15), 7, -300)])).unwrap();
        sums.add(&winners(&[(day(14), 7, 1), (day(15), 2, 20)])).unwrap();
        let per_date = sums.rows_per_date().unwrap();
        let (d14, d15) = (NaiveDate::from_ymd_opt(2026, 8, 14).unwrap(), NaiveDate::from_ymd_opt(2026, 8, 15).unwrap());
        // (silver's rows: baskets, gold's rows: store rows) per date.
        assert_eq!(per_date, DateRows::from([(d14, (2, 1)), (d15, (4, 2))]));
        let source = sums.into_source().unwrap();
        let (batch, _) = super::super::RowSource::next_rows(&source).unwrap().unwrap();
        let col = |n: &str| batch.column_by_name(n).unwrap().clone();
        let dates: Vec<i32> = col("business_date").as_primitive::<Date32Type>().values().to_vec();
        let rows: Vec<i32> = col("store_row").as_primitive::<Int32Type>().values().to_vec();
        let baskets: Vec<i64> = col("baskets").as_primitive::<Int64Type>().values().to_vec();
        let revenue: Vec<i64> = col("revenue_minor").as_primitive::<Int64Type>().values().to_vec();
        assert_eq!(dates, vec![day(14), day(15), day(15)]);
        assert_eq!(rows, vec![7, 2, 7]);
        assert_eq!(baskets, vec![2, 2, 2]);
        assert_eq!(revenue, vec![251, 25, 700]);
        assert!(super::super::RowSource::next_rows(&source).unwrap().is_none());
    }

    #[test]
    fn a_gold_sum_past_64_bits_is_an_error_not_a_wrapped_total() {
        let mut sums = GoldSums::default();
        sums.add(&winners(&[(20_680, 3, i64::MAX - 1), (20_680, 4, i64::MAX)])).unwrap();
        let err = sums.add(&winners(&[(20_680, 3, 2)])).unwrap_err();
        assert!(err.to_string().contains("store row 3 on 2026-08-15 passes 64 bits"), "{err}");
    }
}
