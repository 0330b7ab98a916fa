//! reports.sql: the read-only questions users ask of a business date.

use super::{Exec, Query, Store, Tx, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct BusinessDate { pub business_date: NaiveDate }
}

row! {
    /// A layer's figures for one store of one date (gold, a recount).
    pub struct StoreFigures { pub store_id: String, pub country: String, pub currency: String, pub baskets: i64, pub revenue_minor: i64 }
}

row! {
    /// What v1 appended for one store: events, not baskets.
    pub struct V1Store { pub store_id: String, pub country: String, pub currency: String, pub events: i64, pub revenue_minor: i64 }
}

row! {
    pub struct Runs { pub runs: i64 }
}

row! {
    /// A basket one v1 run gets wrong, with its winning copy and its copies in the run.
    pub struct ExplainBasketRow {
        pub country: String,
        pub currency: String,
        pub basket_id: String,
        pub store_id: String,
        pub winner_revenue_minor: i64,
        pub winner_upload: NaiveDate,
        pub copies_in_run: i64,
        pub revenue_in_run: i64,
        pub first_in_run: i64,
    }
}

row! {
    /// A key of a model lab one v1 run gets wrong (`ExplainBasketRow` of a model): its winner's
    /// upload and measures, its copies in the run, their sums and the first one's.
    pub struct ExplainEntityRow {
        pub entity_key: String,
        pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub winner_upload: NaiveDate,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
        pub copies_in_run: i64,
        pub r1: Option<i64>, pub r2: Option<i64>, pub r3: Option<i64>, pub r4: Option<i64>, pub r5: Option<i64>, pub r6: Option<i64>,
        pub f1: Option<i64>, pub f2: Option<i64>, pub f3: Option<i64>, pub f4: Option<i64>, pub f5: Option<i64>, pub f6: Option<i64>,
    }
}

row! {
    /// A key whose winner differs between two silver versions of a model lab's date: its file
    /// version and measures before and after (None: no winner on that side), and how many keys
    /// changed in all.
    pub struct VersionChange {
        pub entity_key: String,
        pub file_before: Option<String>, pub upload_before: Option<NaiveDate>, pub version_before: Option<i32>,
        pub file_after: Option<String>, pub upload_after: Option<NaiveDate>, pub version_after: Option<i32>,
        pub b1: Option<i64>, pub b2: Option<i64>, pub b3: Option<i64>, pub b4: Option<i64>, pub b5: Option<i64>, pub b6: Option<i64>,
        pub a1: Option<i64>, pub a2: Option<i64>, pub a3: Option<i64>, pub a4: Option<i64>, pub a5: Option<i64>, pub a6: Option<i64>,
        pub total: i64,
    }
}

row! {
    /// A model lab's measures summed per value of its attributes.
    pub struct AttributeSums {
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
    }
}

row! {
    pub struct CountryEvents { pub country: String, pub currency: String, pub events: i64, pub revenue_minor: i64 }
}

row! {
    pub struct LatenessState { pub newest_file: i32, pub counted_file: i32 }
}

row! {
    #[derive(serde::Serialize)]
    pub struct LatenessRow {
        /// None when not split by country.
        pub country: Option<String>,
        pub days: i64,
        pub events: i64,
        /// Distinct entity keys (retail's baskets).
        pub keys: i64,
    }
}

row! {
    /// A row outside the lateness window of its business date.
    #[derive(serde::Serialize)]
    pub struct LateRow {
        pub business_date: NaiveDate,
        pub upload_date: NaiveDate,
        pub days_late: i64,
        pub event_id: String,
        pub basket_id: String,
        pub store_id: String,
        pub country: String,
        pub currency: String,
        pub revenue_minor: i64,
        pub file: String,
        pub line: i64,
        /// The row's basket has no copy inside the window: it is in the recompute, not in v2.
        pub missing_from_v2: bool,
        /// The row is the copy of its basket the recompute counts.
        pub recompute_copy: bool,
    }
}

row! { pub struct QuarantinedLines { pub lines: i64 } }
row! {
    /// A line rejected at landing.
    #[derive(serde::Serialize)]
    pub struct QuarantineRow { pub upload_date: NaiveDate, pub file: String, pub line: i64, pub reason: String, pub raw_line: String }
}

row! {
    /// One business date and currency: v1, v2 and the recompute, and the window it was built with.
    pub struct DateSummaryRow {
        pub business_date: NaiveDate,
        pub country: String,
        pub currency: String,
        pub v1_ran: bool,
        pub v1_revenue_minor: i64,
        pub v2_baskets: i64,
        pub v2_revenue_minor: i64,
        pub recompute_baskets: i64,
        pub recompute_revenue_minor: i64,
        pub beyond_baskets: i64,
        pub beyond_revenue_minor: i64,
        pub late_days: Option<i32>,
    }
}

row! {
    /// One copy of a basket sent more than once.
    pub struct BasketCopyRow {
        pub basket_id: String,
        pub store_id: String,
        pub country: String,
        pub currency: String,
        pub event_id: String,
        pub business_date: NaiveDate,
        pub upload_date: NaiveDate,
        pub uploaded_at: String,
        pub revenue_minor: i64,
        pub in_window: bool,
        /// Copies of the basket with the same uploaded_at (a tie when above one).
        pub same_instant: i64,
        /// Copies with the same uploaded_at and event_id: the same message twice (an exact tie).
        pub same_message: i64,
        pub file: String,
        pub line: i64,
    }
}

row! {
    pub struct Completeness {
        pub landed: i64,
        pub silver_rows: i64,
        pub silver_baskets: i64,
        pub silver_landed: i64,
        pub silver_not_landed: i64,
        pub beyond: i64,
    }
}

row! {
    pub struct StoreSumsRow {
        pub country: String,
        pub gold_baskets: i64,
        pub gold_revenue_minor: i64,
        pub silver_baskets: i64,
        pub silver_revenue_minor: i64,
    }
}

row! {
    pub struct RowsHeld { pub silver_rows: i64, pub gold_rows: i64 }
}

statements! {
    BUSINESS_DATES: Query<BusinessDate> = reports::BUSINESS_DATES;
    V1_BY_STORE: Query<V1Store> = reports::V1_BY_STORE;
    V1_RUNS: Query<Runs> = reports::V1_RUNS;
    GOLD_BY_STORE: Query<StoreFigures> = reports::GOLD_BY_STORE;
    RECOMPUTE_BY_STORE: Query<StoreFigures> = reports::RECOMPUTE_BY_STORE;
    COPIES_COUNTED: Query<StoreFigures> = reports::COPIES_COUNTED;
    UTC_DATED: Query<StoreFigures> = reports::UTC_DATED;
    WINDOWED: Query<StoreFigures> = reports::WINDOWED;
    EXPLAIN_BASKETS: Query<ExplainBasketRow> = reports::EXPLAIN_BASKETS;
    V1_ONCE_BY_COUNTRY: Query<CountryEvents> = reports::V1_ONCE_BY_COUNTRY;
    MODEL_EXPLAIN_ENTITIES: Query<ExplainEntityRow> = reports::MODEL_EXPLAIN_ENTITIES;
    MODEL_V1_ONCE: Query<AttributeSums> = reports::MODEL_V1_ONCE;
    MODEL_VERSION_CHANGES: Query<VersionChange> = reports::MODEL_VERSION_CHANGES;
    LATENESS_STATE: Query<LatenessState> = reports::LATENESS_STATE;
    LATENESS_CLEAR: Exec = reports::LATENESS_CLEAR;
    LATENESS_FILL: Exec = reports::LATENESS_FILL;
    LATENESS_FILL_BY_ID: Exec = reports::LATENESS_FILL_BY_ID;
    LATENESS: Query<LatenessRow> = reports::LATENESS;
    MODEL_COMPLETENESS: Query<Completeness> = reports::MODEL_COMPLETENESS;
    MODEL_GOLD_AGAINST_SILVER: Query<super::land::Rows> = reports::MODEL_GOLD_AGAINST_SILVER;
    LATE_DATES: Query<BusinessDate> = reports::LATE_DATES;
    MODEL_LATE_DATES: Query<BusinessDate> = reports::MODEL_LATE_DATES;
    LATE_ROWS: Query<LateRow> = reports::LATE_ROWS;
    QUARANTINE_ROWS: Query<QuarantineRow> = reports::QUARANTINE_ROWS;
    QUARANTINED_LINES: Query<QuarantinedLines> = reports::QUARANTINED_LINES;
    DATE_SUMMARIES: Query<DateSummaryRow> = reports::DATE_SUMMARIES;
    BASKET_COPIES: Query<BasketCopyRow> = reports::BASKET_COPIES;
    COMPLETENESS: Query<Completeness> = reports::COMPLETENESS;
    STORE_SUMS_VS_SILVER: Query<StoreSumsRow> = reports::STORE_SUMS_VS_SILVER;
    ROWS_HELD: Query<RowsHeld> = reports::ROWS_HELD;
}

impl Store {
    /// Every business date any landed row carries, oldest first.
    pub fn business_dates(&self) -> Result<Vec<NaiveDate>> {
        Ok(BUSINESS_DATES.all(self, &[])?.into_iter().map(|d| d.business_date).collect())
    }

    /// What v1 appended for `d` up to snapshot `up_to`, per store.
    pub fn v1_by_store(&self, d: NaiveDate, up_to: i64) -> Result<Vec<V1Store>> {
        V1_BY_STORE.all(self, named_params! { "business_date": d, "up_to": up_to })
    }

    /// How many v1 runs of `d` there were up to snapshot `up_to`.
    pub fn v1_runs(&self, d: NaiveDate, up_to: i64) -> Result<i64> {
        Ok(V1_RUNS.one(self, named_params! { "business_date": d, "up_to": up_to })?.runs)
    }

    /// Gold of `d` as of snapshot `up_to` (None: now), per store.
    pub fn gold_by_store(&self, d: NaiveDate, up_to: Option<i64>) -> Result<Vec<StoreFigures>> {
        GOLD_BY_STORE.all(self, named_params! { "business_date": d, "up_to": up_to })
    }

    /// Date `d` per store as a job without dedup sums it, within window `late_days`.
    pub fn copies_counted(&self, d: NaiveDate, late_days: u32) -> Result<Vec<StoreFigures>> {
        COPIES_COUNTED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }

    /// Date `d` per store as v2 builds it with window `late_days`.
    pub fn windowed(&self, d: NaiveDate, late_days: u32) -> Result<Vec<StoreFigures>> {
        WINDOWED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }

    /// Date `d` per store as a job that dates events in UTC builds it, within window `late_days`.
    pub fn utc_dated(&self, d: NaiveDate, late_days: u32) -> Result<Vec<StoreFigures>> {
        UTC_DATED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }

    /// The polars recount of `d`, per store.
    pub fn recompute_by_store(&self, d: NaiveDate) -> Result<Vec<StoreFigures>> {
        RECOMPUTE_BY_STORE.all(self, named_params! { "business_date": d })
    }

    pub fn explain_baskets(&self, d: NaiveDate) -> Result<Vec<ExplainBasketRow>> {
        EXPLAIN_BASKETS.all(self, named_params! { "business_date": d })
    }

    pub fn v1_once_by_country(&self, d: NaiveDate) -> Result<Vec<CountryEvents>> {
        V1_ONCE_BY_COUNTRY.all(self, named_params! { "business_date": d })
    }

    /// The keys of a model lab's `d` one v1 run gets wrong.
    pub fn model_explain_entities(&self, d: NaiveDate) -> Result<Vec<ExplainEntityRow>> {
        MODEL_EXPLAIN_ENTITIES.all(self, named_params! { "business_date": d })
    }

    /// The keys whose winner differs between silver versions `from` (None: before the first) and
    /// `to` of a model lab's `d`, by key: the first `limit` of them (None: every one).
    pub fn model_version_changes(&self, d: NaiveDate, from: Option<i64>, to: i64, limit: Option<usize>) -> Result<Vec<VersionChange>> {
        let limit = limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
        MODEL_VERSION_CHANGES.all(self, named_params! { "business_date": d, "from": from, "to": to, "limit": limit })
    }

    /// What one v1 run of a model lab's `d` counts, per value of the attributes.
    pub fn model_v1_once(&self, d: NaiveDate) -> Result<Vec<AttributeSums>> {
        MODEL_V1_ONCE.all(self, named_params! { "business_date": d })
    }

    /// The newest landed file, and the newest the cached lateness histogram counts.
    pub fn lateness_state(&self) -> Result<LatenessState> {
        LATENESS_STATE.one(self, &[])
    }

    /// The cached lateness histogram, per country or over every country.
    pub fn lateness(&self, by_country: bool) -> Result<Vec<LatenessRow>> {
        LATENESS.all(self, named_params! { "by_country": by_country })
    }

    /// Business dates with rows outside the window.
    pub fn late_dates(&self, late_days: u32) -> Result<Vec<NaiveDate>> {
        Ok(LATE_DATES.all(self, named_params! { "late_days": late_days })?.into_iter().map(|d| d.business_date).collect())
    }

    /// The same of a model lab.
    pub fn model_late_dates(&self, late_days: u32) -> Result<Vec<NaiveDate>> {
        Ok(MODEL_LATE_DATES.all(self, named_params! { "late_days": late_days })?.into_iter().map(|d| d.business_date).collect())
    }

    /// The rows of `d` outside the window.
    pub fn late_rows(&self, late_days: u32, d: NaiveDate) -> Result<Vec<LateRow>> {
        LATE_ROWS.all(self, named_params! { "late_days": late_days, "business_date": d })
    }

    pub fn quarantine_rows(&self, upload_date: Option<NaiveDate>) -> Result<Vec<QuarantineRow>> {
        QUARANTINE_ROWS.all(self, named_params! { "upload_date": upload_date })
    }
    /// Every line current file versions refused (of one upload, or all).
    pub fn quarantined_lines(&self, upload_date: Option<NaiveDate>) -> Result<i64> {
        Ok(QUARANTINED_LINES.one(self, named_params! { "upload_date": upload_date })?.lines)
    }

    pub fn date_summaries(&self) -> Result<Vec<DateSummaryRow>> {
        DATE_SUMMARIES.all(self, named_params! { "late_days": crate::rules::DEFAULT_LATE_DAYS })
    }

    pub fn basket_copies(&self, d: NaiveDate, late_days: u32) -> Result<Vec<BasketCopyRow>> {
        BASKET_COPIES.all(self, named_params! { "business_date": d, "late_days": late_days })
    }

    pub fn completeness(&self, d: NaiveDate, late_days: u32) -> Result<Completeness> {
        COMPLETENESS.one(self, named_params! { "business_date": d, "late_days": late_days })
    }

    /// The same of a model lab's date `d` (its keys; silver's winners of its current version).
    pub fn model_completeness(&self, d: NaiveDate, late_days: u32) -> Result<Completeness> {
        MODEL_COMPLETENESS.one(self, named_params! { "business_date": d, "late_days": late_days })
    }

    /// How many of a model lab's gold rows of `d` differ from its silver winners summed.
    pub fn model_gold_against_silver(&self, d: NaiveDate) -> Result<i64> {
        Ok(MODEL_GOLD_AGAINST_SILVER.one(self, named_params! { "business_date": d })?.rows)
    }

    pub fn store_sums_vs_silver(&self, d: NaiveDate) -> Result<Vec<StoreSumsRow>> {
        STORE_SUMS_VS_SILVER.all(self, named_params! { "business_date": d })
    }

    /// Silver and gold rows `d` holds now.
    pub fn rows_held(&self, d: NaiveDate) -> Result<RowsHeld> {
        ROWS_HELD.one(self, named_params! { "business_date": d })
    }
}

impl Tx<'_> {
    /// Recounts the lateness histogram through file `newest_file`; `by_id` when two basket_ids
    /// share a basket key.
    pub fn refill_lateness(&mut self, newest_file: i32, by_id: bool) -> Result<()> {
        self.exec("clearing the lateness histogram", &LATENESS_CLEAR, &[])?;
        let fill = if by_id { &LATENESS_FILL_BY_ID } else { &LATENESS_FILL };
        self.exec("counting the lateness histogram", fill, named_params! { "newest_file": newest_file })?;
        Ok(())
    }
}

impl Store {
    /// Forgets the cached lateness histogram (the bench measures its first count).
    pub fn forget_lateness(&self) -> Result<()> {
        LATENESS_CLEAR.run(self, &[]).map(|_| ())
    }
}
