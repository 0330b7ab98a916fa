//! recompute.sql: the polars recount's cache, and DuckDB's own recount beside it; a model lab's
//! kept recount (model.sql's `recount_*`).

use super::model::{ATTRIBUTE_COLUMNS, GRAIN_COLUMNS, MEASURE_COLUMNS, ModelCells};
use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct RecountState { pub manifest: String }
}

row! {
    /// DuckDB's recount of a date for one store, and what of it the window keeps out of v2.
    pub struct DuckRecount {
        pub store_id: String,
        pub country: String,
        pub currency: String,
        pub baskets: i64,
        pub revenue_minor: i64,
        pub beyond_baskets: i64,
        pub beyond_revenue_minor: i64,
    }
}

row! {
    /// The newest landed file, and whether DuckDB's recount is kept through it for a window.
    pub struct DuckRecountState { pub newest_file: i32, pub kept: bool }
}

row! {
    /// A window whose recount is not kept through the newest landed file.
    pub struct MissingWindow { pub late_days: i32, pub newest_file: i32 }
}

row! { pub struct RecountInput { pub input: String } }

statements! {
    STATE: Query<RecountState> = recompute::STATE;
    CLEAR_ROWS: Exec = recompute::CLEAR_ROWS;
    CLEAR_STATE: Exec = recompute::CLEAR_STATE;
    STATE_INSERT: Exec = recompute::STATE_INSERT;
    DUCKDB_DATE: Query<DuckRecount> = recompute::DUCKDB_DATE;
    DUCKDB_RECOUNT_STATE: Query<DuckRecountState> = recompute::DUCKDB_RECOUNT_STATE;
    DUCKDB_RECOUNT_MISSING: Query<MissingWindow> = recompute::DUCKDB_RECOUNT_MISSING;
    DUCKDB_RECOUNT_CLEAR: Exec = recompute::DUCKDB_RECOUNT_CLEAR;
    DUCKDB_RECOUNTED_CLEAR: Exec = recompute::DUCKDB_RECOUNTED_CLEAR;
    DUCKDB_RECOUNTED_INSERT: Exec = recompute::DUCKDB_RECOUNTED_INSERT;
    DUCKDB_RECOUNT_FORGET: Exec = recompute::DUCKDB_RECOUNT_FORGET;
    DUCKDB_RECOUNTED_FORGET: Exec = recompute::DUCKDB_RECOUNTED_FORGET;
    DUCKDB_RECOUNT_FILL: Exec = recompute::DUCKDB_RECOUNT_FILL;
    DUCKDB_RECOUNT_KEPT: Query<DuckRecount> = recompute::DUCKDB_RECOUNT_KEPT;
    RECOUNT_INPUT: Query<RecountInput> = model::RECOUNT_INPUT;
    RECOUNT_INPUT_KEPT: Query<RecountInput> = model::RECOUNT_INPUT_KEPT;
    RECOUNT_ROWS_KEPT: Query<ModelCells> = model::RECOUNT_ROWS_KEPT;
    RECOUNT_ROWS_KEPT_OF: Query<ModelCells> = model::RECOUNT_ROWS_KEPT_OF;
    RECOUNT_ROWS_FORGET: Exec = model::RECOUNT_ROWS_FORGET;
    RECOUNT_INPUT_FORGET: Exec = model::RECOUNT_INPUT_FORGET;
    RECOUNT_INPUT_SET: Exec = model::RECOUNT_INPUT_SET;
}

/// One row of the recount: daily sales of one store.
pub struct RecountRow<'a> {
    pub business_date: NaiveDate,
    pub store_id: &'a str,
    pub country: &'a str,
    pub currency: &'a str,
    pub baskets: i64,
    pub revenue_minor: i64,
}

impl DuckRecount {
    /// The recount's own figures, without the window's part.
    pub fn figures(self) -> super::StoreFigures {
        super::StoreFigures {
            store_id: self.store_id,
            country: self.country,
            currency: self.currency,
            baskets: self.baskets,
            revenue_minor: self.revenue_minor,
        }
    }
}

impl Store {
    /// The manifest of the raw zone the cached recount counted; None before the first.
    pub fn recount_manifest(&self) -> Result<Option<String>> {
        Ok(STATE.optional(self, &[])?.map(|s| s.manifest))
    }

    /// DuckDB's own recount of `d` from bronze, per store, with the winners the window of
    /// `late_days` keeps out of v2.
    pub fn duckdb_recount(&self, d: NaiveDate, key_collisions: bool, late_days: u32) -> Result<Vec<DuckRecount>> {
        DUCKDB_DATE.all(self, named_params! { "business_date": d, "key_collisions": key_collisions, "late_days": late_days })
    }

    /// The newest landed file, and whether DuckDB's recount of every date is kept through it
    /// for window `late_days`.
    pub fn duckdb_recount_state(&self, late_days: u32) -> Result<DuckRecountState> {
        DUCKDB_RECOUNT_STATE.one(self, named_params! { "late_days": late_days })
    }

    /// The windows a reader's kept recount should hold (every window a write used, and
    /// `default`, a date's before it is built) and does not hold through the newest file.
    pub fn duckdb_recount_missing(&self, default: u32) -> Result<Vec<MissingWindow>> {
        DUCKDB_RECOUNT_MISSING.all(self, named_params! { "late_days": default })
    }

    /// The kept recount of `d` for window `late_days` through file `newest_file`, as
    /// `duckdb_recount` gives it.
    pub fn duckdb_recount_kept(&self, d: NaiveDate, late_days: u32, newest_file: i32) -> Result<Vec<DuckRecount>> {
        DUCKDB_RECOUNT_KEPT.all(self, named_params! { "business_date": d, "late_days": late_days, "newest_file": newest_file })
    }

    /// Forgets every kept recount (the bench measures the first one after a landing).
    pub fn forget_duckdb_recount(&self) -> Result<()> {
        DUCKDB_RECOUNTED_FORGET.run(self, &[])?;
        DUCKDB_RECOUNT_FORGET.run(self, &[]).map(|_| ())
    }
}

impl Tx<'_> {
    /// Recounts every date with DuckDB for window `late_days`, through file `newest_file`, and
    /// keeps it in place of that window's older recount (and of every window's recount of an
    /// older bronze).
    pub fn refill_duckdb_recount(&mut self, newest_file: i32, late_days: u32, key_collisions: bool) -> Result<()> {
        let params = named_params! { "newest_file": newest_file, "late_days": late_days };
        self.exec("clearing DuckDB's kept recount", &DUCKDB_RECOUNT_CLEAR, params)?;
        self.exec("clearing the list of DuckDB's kept recounts", &DUCKDB_RECOUNTED_CLEAR, params)?;
        let filled = named_params! { "newest_file": newest_file, "late_days": late_days, "key_collisions": key_collisions };
        self.exec("recounting every date with DuckDB", &DUCKDB_RECOUNT_FILL, filled)?;
        self.exec("listing DuckDB's kept recount", &DUCKDB_RECOUNTED_INSERT, params)?;
        Ok(())
    }

    /// Replaces the cached recount with `rows`, counted from the raw zone `manifest` names.
    pub fn replace_recount<'r>(
        &mut self,
        manifest: &str,
        events: i64,
        baskets: i64,
        computed_at: NaiveDateTime,
        rows: impl Iterator<Item = RecountRow<'r>>,
    ) -> Result<()> {
        self.exec("clearing the recount", &CLEAR_ROWS, &[])?;
        self.exec("clearing the recount's state", &CLEAR_STATE, &[])?;
        (|| -> duckdb::Result<()> {
            let mut app = self.store.conn.appender_to_db("daily_store_sales", "recompute")?;
            for r in rows {
                app.append_row(duckdb::params![r.business_date, r.store_id, r.country, r.currency, r.baskets, r.revenue_minor])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("storing the recount", e))?;
        self.step("storing the recount")?;
        let params = named_params! { "manifest": manifest, "events": events, "baskets": baskets, "computed_at": computed_at };
        self.exec("recording the recount's state", &STATE_INSERT, params).map(|_| ())
    }
}

impl Store {
    /// What a recount of the current files counts (`recount_input`), and whether the kept
    /// recount, if one is kept, counted exactly that: then its rows are the recount's.
    pub fn model_recount_input(&self) -> Result<(String, bool)> {
        let input = RECOUNT_INPUT.one(self, &[])?.input;
        let current = RECOUNT_INPUT_KEPT.optional(self, &[])?.is_some_and(|k| k.input == input);
        Ok((input, current))
    }
    /// The kept recount's rows, of one date or (None) of all.
    pub fn model_recount_rows(&self, d: Option<NaiveDate>) -> Result<Vec<ModelCells>> {
        match d {
            None => RECOUNT_ROWS_KEPT.all(self, &[]),
            Some(d) => RECOUNT_ROWS_KEPT_OF.all(self, named_params! { "business_date": d }),
        }
    }
}

/// A recount row in the lab's columns, as `Tx::model_keep_recount` stores it.
pub type RecountCells<'r> =
    (NaiveDate, [Option<&'r str>; GRAIN_COLUMNS], [Option<&'r str>; ATTRIBUTE_COLUMNS], [Option<i64>; MEASURE_COLUMNS]);

impl Tx<'_> {
    /// Replaces the kept recount with `rows`, the count of `input`.
    pub fn model_keep_recount<'r>(&mut self, input: &str, rows: impl Iterator<Item = RecountCells<'r>>) -> Result<()> {
        self.exec("clearing the kept recount", &RECOUNT_ROWS_FORGET, &[])?;
        self.exec("clearing the kept recount's input", &RECOUNT_INPUT_FORGET, &[])?;
        (|| -> duckdb::Result<()> {
            let mut app = self.store.conn.appender_to_db("recount_rows", "model")?;
            for (d, g, a, m) in rows {
                app.append_row(duckdb::params![d, g[0], g[1], g[2], g[3], a[0], a[1], a[2], a[3], m[0], m[1], m[2], m[3], m[4], m[5]])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("keeping the recount", e))?;
        self.step("keeping the recount")?;
        self.exec("recording the kept recount's input", &RECOUNT_INPUT_SET, named_params! { "input": input }).map(|_| ())
    }
}
