//! `recount check DATE`: per country, v1, v2 gold and the recompute side by side, with DuckDB's
//! own recount as a second engine behind the polars one.

use crate::lake::Cached;
use super::status::{DateStatus, date_status};
use super::{Cell, Note, Report, Status, Table, resolve_as_of};
use crate::lake::Lab;
use crate::queries::sql;
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CountryCheck {
    pub country: String,
    pub currency: String,
    pub v1_runs: i64,
    pub v1_events: i64,
    pub v1_revenue_minor: i64,
    pub v2_baskets: i64,
    pub v2_revenue_minor: i64,
    pub recompute_baskets: i64,
    pub recompute_revenue_minor: i64,
    /// Revenue of baskets whose every copy arrived outside the window: in the recompute, not in v2.
    pub beyond_window_baskets: i64,
    pub beyond_window_revenue_minor: i64,
}

impl CountryCheck {
    /// v2 equals the recompute once beyond-window baskets are added back.
    pub fn v2_explained(&self) -> bool {
        self.v2_revenue_minor + self.beyond_window_revenue_minor == self.recompute_revenue_minor
            && self.v2_baskets + self.beyond_window_baskets == self.recompute_baskets
    }
    pub fn v2_exact(&self) -> bool {
        self.v2_revenue_minor == self.recompute_revenue_minor && self.v2_baskets == self.recompute_baskets
    }
}

/// A store where the polars and DuckDB recounts differ.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EngineDisagreement {
    pub store_id: String,
    pub polars_baskets: i64,
    pub polars_revenue_minor: i64,
    pub duckdb_baskets: i64,
    pub duckdb_revenue_minor: i64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    pub business_date: NaiveDate,
    pub as_of_snapshot: i64,
    pub status: DateStatus,
    pub countries: Vec<CountryCheck>,
    pub engines_agree: bool,
    pub engine_disagreements: Vec<EngineDisagreement>,
}

fn country_row<'a>(map: &'a mut BTreeMap<String, CountryCheck>, country: &str, currency: &str) -> &'a mut CountryCheck {
    map.entry(country.to_string())
        .or_insert_with(|| CountryCheck { country: country.into(), currency: currency.into(), ..Default::default() })
}

type StoreFigures = (String, String, String, i64, i64);

fn by_store(conn: &duckdb::Connection, query: &str, params: &[&dyn duckdb::ToSql]) -> Result<Vec<StoreFigures>> {
    let mut stmt = conn.prepare_cached(query)?;
    let rows = stmt.query_map(params, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn check(lab: &Lab, d: NaiveDate, as_of: Option<i64>) -> Result<CheckReport> {
    crate::recompute::ensure_cached(lab)?;
    let snap = resolve_as_of(lab, as_of)?;
    let conn = &lab.conn;
    let mut status = date_status(lab, d)?;
    if as_of.is_some() {
        status.built = crate::lake::snapshot::version_at(conn, d, snap)?.is_some();
    }
    let mut countries: BTreeMap<String, CountryCheck> = BTreeMap::new();
    // v1: everything appended up to the snapshot.
    let mut stmt = conn.prepare_cached(sql("reports", "v1_by_store"))?;
    let v1 = stmt.query_map(duckdb::params![d, snap], |r| {
        Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?, r.get::<_, i64>(4)?))
    })?;
    for row in v1 {
        let (country, currency, events, revenue) = row?;
        let c = country_row(&mut countries, &country, &currency);
        c.v1_events += events;
        c.v1_revenue_minor += revenue;
    }
    let runs: i64 = conn.row_cached(sql("reports", "v1_runs"), duckdb::params![d, snap], |r| r.get(0))?;
    let gold = if as_of.is_some() {
        by_store(conn, sql("reports", "gold_by_store_as_of"), &[&d, &snap])?
    } else {
        by_store(conn, sql("reports", "gold_by_store"), &[&d])?
    };
    for (_, country, currency, baskets, revenue) in &gold {
        let c = country_row(&mut countries, country, currency);
        c.v2_baskets += baskets;
        c.v2_revenue_minor += revenue;
    }
    let polars = by_store(conn, sql("reports", "recompute_by_store"), &[&d])?;
    for (_, country, currency, baskets, revenue) in &polars {
        let c = country_row(&mut countries, country, currency);
        c.recompute_baskets += baskets;
        c.recompute_revenue_minor += revenue;
    }
    let mut stmt = conn.prepare_cached(sql("reports", "late_rows"))?;
    let late = stmt.query_map(duckdb::params![status.late_days, d], |r| {
        Ok((r.get::<_, String>(6)?, r.get::<_, String>(7)?, r.get::<_, i64>(8)?, r.get::<_, bool>(11)?))
    })?;
    for row in late {
        let (country, currency, revenue, missing) = row?;
        if missing {
            let c = country_row(&mut countries, &country, &currency);
            c.beyond_window_baskets += 1;
            c.beyond_window_revenue_minor += revenue;
        }
    }
    for c in countries.values_mut() {
        c.v1_runs = runs;
    }
    // The second engine: DuckDB recounts the same date from bronze.
    let duck = by_store(conn, sql("recompute", "duckdb_date"), &[&d, &lab.has_key_collisions()?])?;
    let polars_map: BTreeMap<&str, (i64, i64)> = polars.iter().map(|(s, _, _, b, r)| (s.as_str(), (*b, *r))).collect();
    let duck_map: BTreeMap<&str, (i64, i64)> = duck.iter().map(|(s, _, _, b, r)| (s.as_str(), (*b, *r))).collect();
    let mut disagreements = Vec::new();
    for store in polars_map.keys().chain(duck_map.keys()).collect::<std::collections::BTreeSet<_>>() {
        let p = polars_map.get(store).copied().unwrap_or((0, 0));
        let q = duck_map.get(store).copied().unwrap_or((0, 0));
        if p != q {
            disagreements.push(EngineDisagreement {
                store_id: store.to_string(),
                polars_baskets: p.0,
                polars_revenue_minor: p.1,
                duckdb_baskets: q.0,
                duckdb_revenue_minor: q.1,
            });
        }
    }
    Ok(CheckReport {
        business_date: d,
        as_of_snapshot: snap,
        status,
        countries: countries.into_values().collect(),
        engines_agree: disagreements.is_empty(),
        engine_disagreements: disagreements,
    })
}

impl CheckReport {
    /// One line for the explorer's header.
    pub fn headline_short(&self) -> String {
        let engines = if self.engines_agree { "polars and DuckDB recounts agree" } else { "ENGINE DISAGREEMENT: polars and DuckDB differ" };
        format!("{} — {}; {engines}", self.business_date, self.status.describe())
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "",
            &[
                ("country", "country"),
                ("v1_runs", "v1 runs"),
                ("v1_revenue_minor", "v1"),
                ("v2_revenue_minor", "v2 gold"),
                ("recompute_revenue_minor", "recompute"),
                ("v2_status", "v2 vs recompute"),
                ("v1_minus_recompute_minor", "v1 - recompute"),
                ("v2_baskets", "v2 baskets"),
                ("recompute_baskets", "recompute baskets"),
                ("beyond_window_revenue_minor", "beyond window"),
            ],
        );
        let unbuilt = !self.status.built;
        for c in &self.countries {
            let (flag, word) = if unbuilt {
                (Some(Status::Info), "not built yet")
            } else if c.v2_exact() {
                (None, "match")
            } else if c.v2_explained() {
                (Some(Status::Warn), "beyond window")
            } else {
                (Some(Status::Fail), "MISMATCH")
            };
            let flag = if c.v1_revenue_minor != c.recompute_revenue_minor { flag.or(Some(Status::Warn)) } else { flag };
            t.push_flagged(
                vec![
                    Cell::text(&c.country),
                    Cell::Int(c.v1_runs),
                    Cell::money(c.v1_revenue_minor, &c.currency),
                    Cell::money(c.v2_revenue_minor, &c.currency),
                    Cell::money(c.recompute_revenue_minor, &c.currency),
                    Cell::text(word),
                    Cell::delta(c.v1_revenue_minor - c.recompute_revenue_minor, &c.currency),
                    Cell::Int(c.v2_baskets),
                    Cell::Int(c.recompute_baskets),
                    Cell::money(c.beyond_window_revenue_minor, &c.currency),
                ],
                flag,
            );
        }
        t
    }
}

impl Report for CheckReport {
    fn headline(&self) -> String {
        format!("check {} as of snapshot {} — {}", self.business_date, self.as_of_snapshot, self.status.describe())
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table()]
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if self.engines_agree {
            notes.push(Note { status: Status::Pass, text: "the polars and DuckDB recounts agree store by store".into() });
        } else {
            for d in &self.engine_disagreements {
                notes.push(Note {
                    status: Status::Fail,
                    text: format!(
                        "ENGINE DISAGREEMENT at store {}: polars {} baskets / {} minor, DuckDB {} baskets / {} minor",
                        d.store_id, d.polars_baskets, d.polars_revenue_minor, d.duckdb_baskets, d.duckdb_revenue_minor
                    ),
                });
            }
        }
        for c in self.countries.iter().filter(|_| self.status.built) {
            if !c.v2_explained() {
                notes.push(Note { status: Status::Fail, text: format!("{}: v2 differs from the recompute by more than its beyond-window baskets", c.country) });
            }
        }
        notes
    }
}
