//! snapshot.sql: the audit trail's records, the versions of dates, and a rollback's restores.

use super::vocab::{DateAction, Operation, TriggerKind};
use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::{Result, WrapErr};
use duckdb::named_params;

row! {
    pub struct SnapshotIds { pub next_id: i64, pub head: Option<i64> }
}

row! {
    /// One record of audit.snapshots, as written and as read back.
    pub struct SnapshotRow {
        pub snapshot_id: i64,
        pub parent_id: Option<i64>,
        pub operation: Operation,
        pub trigger_kind: TriggerKind,
        pub trigger_upload: Option<NaiveDate>,
        pub trigger_detail: String,
        pub late_days: i64,
        pub dates_rewritten: i64,
        pub dates_skipped: i64,
        pub rows_replaced: i64,
        pub rows_added: i64,
        pub beyond_window_rows: i64,
        pub gold_rows: i64,
        pub gold_md5: String,
        pub code_version: String,
        pub created_at: NaiveDateTime,
    }
}

row! {
    /// A date and the snapshot whose version of it was current at some point.
    pub struct VersionedDate { pub business_date: NaiveDate, pub version: i64 }
}

row! {
    pub struct RowsOfVersion { pub silver_rows: i64, pub gold_rows: i64 }
}

impl RowsOfVersion {
    /// A version that holds no row: an emptied date.
    pub fn is_empty(&self) -> bool {
        self.silver_rows == 0 && self.gold_rows == 0
    }
}

row! {
    pub struct VersionInputs { pub input_hash: String, pub input_rows: i64 }
}

row! {
    pub struct Found { pub found: i64 }
}

row! {
    /// The version of a date current at a snapshot: who wrote it, from which inputs, and the
    /// window of the newest v2 overwrite of the date until then (None: none, only restores).
    pub struct VersionAt { pub business_date: NaiveDate, pub version: i64, pub input_hash: String, pub late_days: Option<i32> }
}

row! {
    /// What a snapshot did to one business date: a row of audit.snapshot_dates.
    #[derive(serde::Serialize)]
    pub struct DateOutcome {
        pub business_date: NaiveDate,
        pub action: DateAction,
        pub input_hash: String,
        pub input_rows: i64,
        /// Rows of the version this one made no longer current (they stay, as history).
        pub silver_replaced: i64,
        pub silver_added: i64,
        pub gold_replaced: i64,
        pub gold_added: i64,
    }
}

statements! {
    IDS: Query<SnapshotIds> = snapshot::IDS;
    INSERT: Exec = snapshot::INSERT;
    VERSIONS_AS_OF: Query<VersionedDate> = snapshot::VERSIONS_AS_OF;
    RESTORE_SILVER: Exec = snapshot::RESTORE_SILVER;
    RESTORE_WINDOW: Exec = snapshot::RESTORE_WINDOW;
    ROWS_OF_VERSION: Query<RowsOfVersion> = snapshot::ROWS_OF_VERSION;
    RESTORE_GOLD: Exec = snapshot::RESTORE_GOLD;
    VERSION_INPUTS: Query<VersionInputs> = snapshot::VERSION_INPUTS;
    EXISTS: Query<Found> = snapshot::EXISTS;
    VERSIONS_AT: Query<VersionAt> = snapshot::VERSIONS_AT;
}

impl Store {
    /// The next snapshot id and the head (the newest data snapshot).
    pub fn snapshot_ids(&self) -> Result<(i64, Option<i64>)> {
        let ids = IDS.one(self, &[])?;
        Ok((ids.next_id, ids.head))
    }

    /// Each date's version as of `snapshot_id` (None: now).
    pub fn versions_as_of(&self, snapshot_id: Option<i64>) -> Result<Vec<VersionedDate>> {
        VERSIONS_AS_OF.all(self, named_params! { "snapshot_id": snapshot_id })
    }

    /// The version of `d` current at `snapshot_id` (None: now); None when none had built it.
    pub fn version_at(&self, d: NaiveDate, snapshot_id: Option<i64>) -> Result<Option<VersionAt>> {
        Ok(self.versions_at(&[d], snapshot_id)?.remove(&d))
    }

    /// `version_at` of each of `dates` in one statement (a date with no version is left out).
    pub fn versions_at(&self, dates: &[NaiveDate], snapshot_id: Option<i64>) -> Result<std::collections::BTreeMap<NaiveDate, VersionAt>> {
        if dates.is_empty() {
            return Ok(Default::default());
        }
        let params = named_params! { "dates": super::date_list(dates), "snapshot_id": snapshot_id };
        Ok(VERSIONS_AT.all(self, params)?.into_iter().map(|v| (v.business_date, v)).collect())
    }

    pub fn rows_of_version(&self, version: i64, d: NaiveDate) -> Result<RowsOfVersion> {
        ROWS_OF_VERSION.one(self, named_params! { "version": version, "business_date": d })
    }

    pub fn version_inputs(&self, version: i64, d: NaiveDate) -> Result<Option<VersionInputs>> {
        VERSION_INPUTS.optional(self, named_params! { "version": version, "business_date": d })
    }

    pub fn snapshot_exists(&self, snapshot_id: i64) -> Result<bool> {
        Ok(EXISTS.one(self, named_params! { "snapshot_id": snapshot_id })?.found > 0)
    }
}

impl Tx<'_> {
    pub fn insert_snapshot(&mut self, record: &SnapshotRow) -> Result<()> {
        self.exec("recording the snapshot", &INSERT, &record.params()).map(|_| ())
    }

    /// Snapshot `snapshot_id` takes the silver version of `d` that `version` wrote.
    pub fn restore_silver(&mut self, snapshot_id: i64, version: i64, d: NaiveDate) -> Result<i64> {
        let params = named_params! { "snapshot_id": snapshot_id, "version": version, "business_date": d };
        Ok(self.exec("restoring silver", &RESTORE_SILVER, params)? as i64)
    }

    /// Snapshot `snapshot_id` takes the kept window (a reopening's), if any, of the version of `d`
    /// that `version` wrote.
    pub fn restore_window(&mut self, snapshot_id: i64, version: i64, d: NaiveDate) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "version": version, "business_date": d };
        self.exec("restoring the date's window", &RESTORE_WINDOW, params)?;
        Ok(())
    }

    /// Snapshot `snapshot_id` takes the gold version of `d` that `version` wrote.
    pub fn restore_gold(&mut self, snapshot_id: i64, version: i64, d: NaiveDate) -> Result<i64> {
        let params = named_params! { "snapshot_id": snapshot_id, "version": version, "business_date": d };
        Ok(self.exec("restoring gold", &RESTORE_GOLD, params)? as i64)
    }

    /// Records what the snapshot did to each date, through DuckDB's appender in the write's
    /// transaction (one step, however many dates).
    pub fn append_snapshot_dates(&mut self, snapshot_id: i64, dates: &[DateOutcome]) -> Result<()> {
        (|| -> duckdb::Result<()> {
            let mut app = self.store.conn.appender_to_db("snapshot_dates", "audit")?;
            for d in dates {
                app.append_row(duckdb::params![
                    snapshot_id,
                    d.business_date,
                    d.action,
                    d.input_hash,
                    d.input_rows,
                    d.silver_replaced,
                    d.silver_added,
                    d.gold_replaced,
                    d.gold_added
                ])?;
            }
            app.flush()
        })()
        .wrap_err("recording the dates of the snapshot")?;
        self.step("recording the dates of the snapshot")
    }
}
