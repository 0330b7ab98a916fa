//! as_of.sql: the raw zone and bronze as they were when a snapshot was recorded, for the reports
//! that read "as of S" (their status, their recounts and their verdicts then, not now).

use super::recompute::DuckRecount;
use super::v2::InputCell;
use super::{Query, Store, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct UploadAt { pub upload_date: NaiveDate }
}

row! {
    /// A file version current as of a snapshot, and whether a later version has replaced it since.
    pub struct FileAt { pub upload_date: NaiveDate, pub file: String, pub version: i32, pub superseded_now: bool }
}

statements! {
    UPLOADS: Query<UploadAt> = as_of::UPLOADS;
    FILES: Query<FileAt> = as_of::FILES;
    INPUT_CELLS: Query<InputCell> = as_of::INPUT_CELLS;
    DUCKDB_DATE: Query<DuckRecount> = as_of::DUCKDB_DATE;
    STORES: Query<super::StoreRow> = as_of::STORES;
}

impl Store {
    /// The uploads that had landed when `snapshot_id` was recorded, oldest first.
    pub fn landed_uploads_as_of(&self, snapshot_id: i64) -> Result<Vec<NaiveDate>> {
        Ok(UPLOADS.all(self, named_params! { "snapshot_id": snapshot_id })?.into_iter().map(|u| u.upload_date).collect())
    }

    /// Each store's row as it was when `snapshot_id` was recorded (before later store corrections).
    pub fn stores_as_of(&self, snapshot_id: i64) -> Result<Vec<super::StoreRow>> {
        STORES.all(self, named_params! { "snapshot_id": snapshot_id })
    }

    /// The file versions current when `snapshot_id` was recorded.
    pub fn files_as_of(&self, snapshot_id: i64) -> Result<Vec<FileAt>> {
        FILES.all(self, named_params! { "snapshot_id": snapshot_id })
    }

    /// `input_cells` as of `snapshot_id`.
    pub fn input_cells_as_of(
        &self,
        snapshot_id: i64,
        late_days: u32,
        first: NaiveDate,
        last: NaiveDate,
        mut f: impl FnMut(InputCell),
    ) -> Result<()> {
        INPUT_CELLS.each(self, named_params! { "snapshot_id": snapshot_id, "late_days": late_days, "first": first, "last": last }, |c| {
            f(c);
            Ok(())
        })
    }

    /// DuckDB's recount of `d` over the raw zone as of `snapshot_id` (`key_collisions`: whether
    /// the lab lists colliding basket keys, as for `duckdb_recount`).
    pub fn duckdb_recount_as_of(&self, d: NaiveDate, snapshot_id: i64, key_collisions: bool, late_days: u32) -> Result<Vec<DuckRecount>> {
        let params =
            named_params! { "business_date": d, "snapshot_id": snapshot_id, "key_collisions": key_collisions, "late_days": late_days };
        DUCKDB_DATE.all(self, params)
    }
}
