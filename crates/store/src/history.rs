//! history.sql: the snapshot trail of a date, and what changed between two of its versions.

use super::snapshot::SnapshotRow;
use super::vocab::ChangeKind;
use super::{Query, Store, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct Version { pub snapshot_id: i64 }
}

row! {
    /// What a version of a date held in one country.
    pub struct GoldCountry {
        pub business_date: NaiveDate,
        pub version: i64,
        pub country: String,
        pub currency: String,
        pub baskets: i64,
        pub revenue_minor: i64,
    }
}

row! {
    /// One basket that differs between two versions of a date.
    pub struct DiffBasketRow {
        pub basket_id: String,
        pub kind: ChangeKind,
        pub upload_date: Option<NaiveDate>,
        /// The corrected file version a correction's kind is attributed to (its raw-zone path).
        pub file: Option<String>,
        pub file_version: Option<i32>,
        pub country: Option<String>,
        pub currency: Option<String>,
        pub store_id: Option<String>,
        pub event_before: Option<String>,
        pub event_after: Option<String>,
        pub baskets_delta: i64,
        pub revenue_delta_minor: i64,
        pub copies_discarded_delta: i64,
    }
}

row! {
    /// The baskets that differ, summed per pair of versions (named by its newer one), country,
    /// kind and upload.
    pub struct DiffPartRow {
        pub version: i64,
        pub country: Option<String>,
        pub kind: ChangeKind,
        pub upload_date: Option<NaiveDate>,
        pub file: Option<String>,
        pub file_version: Option<i32>,
        pub baskets: i64,
        pub baskets_delta: i64,
        pub revenue_delta_minor: i64,
        pub copies_discarded_delta: i64,
    }
}

row! {
    /// A date's version at some snapshot and how many gold rows it holds.
    pub struct DateAt { pub business_date: NaiveDate, pub version: i64, pub gold_rows: i64 }
}

statements! {
    SNAPSHOTS: Query<SnapshotRow> = history::SNAPSHOTS;
    VERSIONS_OF_DATE: Query<Version> = history::VERSIONS_OF_DATE;
    GOLD_VERSIONS: Query<GoldCountry> = history::GOLD_VERSIONS;
    DIFF_BASKETS: Query<DiffBasketRow> = history::DIFF_BASKETS;
    DIFF_PARTS: Query<DiffPartRow> = history::DIFF_PARTS;
    DATES_AT: Query<DateAt> = history::DATES_AT;
}

/// "No version": a version id no snapshot has. The parts of a diff name their pair by its newer
/// version, this one when there is none.
pub const NO_VERSION: i64 = -1;

impl Store {
    /// Every snapshot record up to `up_to`, oldest first.
    pub fn snapshots(&self, up_to: i64) -> Result<Vec<SnapshotRow>> {
        SNAPSHOTS.all(self, named_params! { "up_to": up_to })
    }

    /// Every snapshot that wrote a version of `d`, up to `up_to`, oldest first.
    pub fn versions_of_date(&self, d: NaiveDate, up_to: i64) -> Result<Vec<i64>> {
        Ok(VERSIONS_OF_DATE.all(self, named_params! { "business_date": d, "up_to": up_to })?.into_iter().map(|v| v.snapshot_id).collect())
    }

    /// Per date, version and country: what each (date, version) of `pairs` held, in one query.
    pub fn gold_versions(&self, pairs: &[(NaiveDate, i64)]) -> Result<Vec<GoldCountry>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let dates = super::listed(pairs.iter().map(|p| p.0));
        let versions = super::listed(pairs.iter().map(|p| p.1));
        GOLD_VERSIONS.all(self, named_params! { "dates": dates, "versions": versions })
    }

    /// The baskets of `d` that differ between two versions (None: no version).
    pub fn diff_baskets(&self, d: NaiveDate, before: Option<i64>, after: Option<i64>) -> Result<Vec<DiffBasketRow>> {
        let params = named_params! { "before": before.unwrap_or(NO_VERSION), "after": after.unwrap_or(NO_VERSION), "business_date": d };
        DIFF_BASKETS.all(self, params)
    }

    /// The same baskets summed per country, kind and upload, for each pair (before, after) of
    /// `pairs` in one query; a row names its pair by the after version (NO_VERSION: none), so the
    /// pairs' after versions must differ.
    pub fn diff_parts(&self, d: NaiveDate, pairs: &[(Option<i64>, Option<i64>)]) -> Result<Vec<DiffPartRow>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let befores = super::listed(pairs.iter().map(|p| p.0.unwrap_or(NO_VERSION)));
        let afters = super::listed(pairs.iter().map(|p| p.1.unwrap_or(NO_VERSION)));
        DIFF_PARTS.all(self, named_params! { "befores": befores, "afters": afters, "business_date": d })
    }

    /// Each date's version and gold rows as of `snapshot_id`.
    pub fn dates_at(&self, snapshot_id: i64) -> Result<Vec<DateAt>> {
        DATES_AT.all(self, named_params! { "snapshot_id": snapshot_id })
    }
}
