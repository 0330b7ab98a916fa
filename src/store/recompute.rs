//! recompute.sql: the polars recount's cache, and DuckDB's own recount beside it.

use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::{Result, WrapErr};
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

statements! {
    STATE: Query<RecountState> = recompute::STATE;
    CLEAR_ROWS: Exec = recompute::CLEAR_ROWS;
    CLEAR_STATE: Exec = recompute::CLEAR_STATE;
    STATE_INSERT: Exec = recompute::STATE_INSERT;
    DUCKDB_DATE: Query<DuckRecount> = recompute::DUCKDB_DATE;
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
    pub(crate) fn recount_manifest(&self) -> Result<Option<String>> {
        Ok(STATE.optional(self, &[])?.map(|s| s.manifest))
    }

    /// DuckDB's own recount of `d` from bronze, per store, with the winners the window of
    /// `late_days` keeps out of v2.
    pub(crate) fn duckdb_recount(&self, d: NaiveDate, key_collisions: bool, late_days: u32) -> Result<Vec<DuckRecount>> {
        DUCKDB_DATE.all(self, named_params! { "business_date": d, "key_collisions": key_collisions, "late_days": late_days })
    }
}

impl Tx<'_> {
    /// Replaces the cached recount with `rows`, counted from the raw zone `manifest` names.
    pub(crate) fn replace_recount<'r>(
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
        .wrap_err("storing the recount")?;
        self.step("storing the recount")?;
        let params = named_params! { "manifest": manifest, "events": events, "baskets": baskets, "computed_at": computed_at };
        self.exec("recording the recount's state", &STATE_INSERT, params).map(|_| ())
    }
}
