//! fingerprint.sql: the contract's gold fingerprint, whole or as per-date text.

use super::{Query, Store, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct FingerprintRow { pub rows: i64, pub md5: String }
}

row! {
    /// One business date of gold as the fingerprint's text: its rows, joined by newlines.
    pub struct GoldChunk { pub business_date: NaiveDate, pub rows: i64, pub text: String }
}

statements! {
    CURRENT: Query<FingerprintRow> = fingerprint::CURRENT;
    AS_OF: Query<FingerprintRow> = fingerprint::AS_OF;
    CHUNKS: Query<GoldChunk> = fingerprint::CHUNKS;
    VERSION_CHUNKS: Query<GoldChunk> = fingerprint::VERSION_CHUNKS;
    LATEST_RECORD: Query<FingerprintRow> = fingerprint::LATEST_RECORD;
}

impl Store {
    /// Gold's fingerprint now, hashed by DuckDB.
    pub fn fingerprint(&self) -> Result<FingerprintRow> {
        CURRENT.one(self, &[])
    }

    /// Gold's fingerprint as it stood at `snapshot_id`.
    pub(crate) fn fingerprint_as_of(&self, snapshot_id: i64) -> Result<FingerprintRow> {
        AS_OF.one(self, named_params! { "snapshot_id": snapshot_id })
    }

    /// Every date of gold as the fingerprint's text.
    pub(crate) fn gold_chunks(&self, f: impl FnMut(GoldChunk)) -> Result<()> {
        let mut f = f;
        CHUNKS.each(self, &[], |c| {
            f(c);
            Ok(())
        })
    }

    /// The dates `first..=last` of the gold version `snapshot_id` wrote, as the fingerprint's text.
    pub(crate) fn gold_version_chunks(&self, snapshot_id: i64, first: NaiveDate, last: NaiveDate, f: impl FnMut(GoldChunk)) -> Result<()> {
        let mut f = f;
        VERSION_CHUNKS.each(self, named_params! { "snapshot_id": snapshot_id, "first": first, "last": last }, |c| {
            f(c);
            Ok(())
        })
    }

    /// The fingerprint the newest record carries; None before the first write.
    pub(crate) fn latest_recorded_fingerprint(&self) -> Result<Option<FingerprintRow>> {
        LATEST_RECORD.optional(self, &[])
    }
}
