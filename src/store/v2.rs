//! v2.sql: the idempotent job's reads and its two inserts.

use super::{Exec, GoldChunk, Params, Query, Store, Tx, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
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
    pub(crate) fn kept_window(&self) -> Option<u32> {
        self.kept_late_days.and_then(|d| u32::try_from(d).ok())
    }
}

row! {
    pub struct KeyCount { pub keys: i64 }
}

row! {
    /// One row a new gold version holds: its date and baskets (silver's rows behind it).
    pub struct GoldAdded { pub business_date: NaiveDate, pub baskets: i64 }
}

/// The rows a write's new versions hold per date: (silver's, gold's).
pub(crate) type DateRows = BTreeMap<NaiveDate, (i64, i64)>;

row! {
    /// The same for a short write, with the row's store and its line of the fingerprint's text
    /// (`Rewrite::text`).
    pub struct GoldAddedLine { pub business_date: NaiveDate, pub baskets: i64, pub store_id: String, pub line: String }
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
    SILVER_INSERT: Exec = v2::SILVER_INSERT;
    KEY_COLLISIONS: Query<KeyCount> = v2::KEY_COLLISIONS;
    GOLD_FROM_WINNERS: Query<GoldAdded> = v2::GOLD_FROM_WINNERS;
    GOLD_FROM_SILVER: Query<GoldAdded> = v2::GOLD_FROM_SILVER;
    GOLD_FROM_SILVER_TEXT: Query<GoldAddedLine> = v2::GOLD_FROM_SILVER_TEXT;
    DATE_WINDOWS_INSERT: Exec = v2::DATE_WINDOWS_INSERT;
}

impl Store {
    /// What each upload of `first..=last` holds per file, business date and currency.
    pub(crate) fn upload_cells(&self, first: NaiveDate, last: NaiveDate, late_days: u32) -> Result<BTreeMap<NaiveDate, Vec<UploadCell>>> {
        let mut by_upload: BTreeMap<NaiveDate, Vec<UploadCell>> = BTreeMap::new();
        UPLOAD_CELLS.each(self, named_params! { "first": first, "last": last, "late_days": late_days }, |c| {
            by_upload.entry(c.upload_date).or_default().push(c);
            Ok(())
        })?;
        Ok(by_upload)
    }

    /// What feeds the dates `first..=last` under the window, file by file.
    pub(crate) fn input_cells(&self, late_days: u32, first: NaiveDate, last: NaiveDate, mut f: impl FnMut(InputCell)) -> Result<()> {
        INPUT_CELLS.each(self, named_params! { "late_days": late_days, "first": first, "last": last }, |c| {
            f(c);
            Ok(())
        })
    }

    /// The current version of each built date in `first..=last`.
    pub(crate) fn current_versions(&self, first: NaiveDate, last: NaiveDate) -> Result<BTreeMap<NaiveDate, CurrentVersion>> {
        let rows = CURRENT_VERSIONS.all(self, named_params! { "first": first, "last": last })?;
        Ok(rows.into_iter().map(|c| (c.business_date, c)).collect())
    }

    /// The store corrections landed and not yet rebuilt for, oldest first.
    pub(crate) fn pending_store_changes(&self) -> Result<Vec<PendingStoreChange>> {
        PENDING_STORE_CHANGES.all(self, &[])
    }

    /// The business dates that hold the store's events in the versions its correction re-derived,
    /// before or after.
    pub(crate) fn store_change_dates(&self, c: &PendingStoreChange) -> Result<Vec<NaiveDate>> {
        let params = named_params! { "store_id": c.store_id, "landing_id": c.landing_id };
        Ok(STORE_CHANGE_DATES.all(self, params)?.into_iter().map(|d| d.business_date).collect())
    }

    /// The kept window of each date in `first..=last` whose version now has one (reopened).
    /// Read through `current_versions`, the one statement that joins a version to its window.
    pub(crate) fn kept_windows(&self, first: NaiveDate, last: NaiveDate) -> Result<BTreeMap<NaiveDate, u32>> {
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
    /// The write rewrites many dates (bulk work): gold sums the winners again, which took a
    /// backfill's gold inserts to about two thirds, rather than joining bronze to silver's new
    /// rows, which is a few ms faster for a day's dates (docs/performance.md).
    pub long: bool,
    /// A short write returns its dates' new text from gold's insert: the process holds gold's
    /// text and brings it up to date (`snapshot::fingerprint_after`).
    pub text: bool,
}

impl Rewrite<'_> {
    /// Runs `f` with what `@winners` (v2.sql) binds, and the new snapshot's id: the parameters of
    /// silver's insert and of a long write's gold, written once.
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
    pub(crate) fn keep_windows(&mut self, snapshot_id: i64, late_days: u32, dates: &str) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "late_days": late_days, "dates": dates };
        self.exec("keeping the dates' windows", &DATE_WINDOWS_INSERT, params)?;
        Ok(())
    }

    /// The new silver version of the dates: one pointer per basket to its winning copy.
    pub(crate) fn insert_silver_version(&mut self, w: &Rewrite) -> Result<()> {
        w.with_winners_params(|params| self.exec("silver insert", &SILVER_INSERT, params)).map(|_| ())
    }

    /// The new gold version of the dates, and the rows the two versions hold per date:
    /// (silver's, gold's). A long write sums the winners again, a short one the silver rows it
    /// just wrote (`Rewrite::long`); a short one that `Rewrite::text` asks also returns the new
    /// version's text, a chunk per date with rows, as `version_text` would read it (lines in
    /// store_id order, the byte order of DuckDB's ORDER BY).
    pub(crate) fn insert_gold_version(&mut self, w: &Rewrite) -> Result<(DateRows, Option<Vec<GoldChunk>>)> {
        let mut counts = DateRows::new();
        let mut add = |business_date: NaiveDate, baskets: i64| -> Result<()> {
            let c = counts.entry(business_date).or_default();
            (c.0, c.1) = (c.0 + baskets, c.1 + 1);
            Ok(())
        };
        let short_params = named_params! { "snapshot_id": w.snapshot_id, "first": w.first, "last": w.last, "dates": w.gap_list() };
        let text = if w.long {
            w.with_winners_params(|params| GOLD_FROM_WINNERS.each(self.store, params, |row| add(row.business_date, row.baskets)))?;
            None
        } else if !w.text {
            GOLD_FROM_SILVER.each(self.store, short_params, |row| add(row.business_date, row.baskets))?;
            None
        } else {
            let mut lines: BTreeMap<NaiveDate, Vec<(String, String)>> = BTreeMap::new();
            GOLD_FROM_SILVER_TEXT.each(self.store, short_params, |row| {
                add(row.business_date, row.baskets)?;
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
        };
        self.step("gold insert")?;
        Ok((counts, text))
    }

    /// Snapshot `snapshot_id` rebuilt for every pending store correction.
    pub(crate) fn mark_store_changes_applied(&mut self, snapshot_id: i64) -> Result<()> {
        self.exec("recording the store corrections as rebuilt", &STORE_CHANGES_APPLIED, named_params! { "snapshot_id": snapshot_id })
            .map(|_| ())
    }
}
