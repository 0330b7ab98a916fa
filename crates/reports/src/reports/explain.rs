//! `recount explain DATE`: why v1 is wrong, basket by basket. v1 reads only upload DATE and
//! counts events: it misses baskets whose only copies landed in another day's upload, and counts
//! re-sent copies twice. The identity `recompute - missed + double counted = v1` must hold to the
//! minor unit; the report computes each side independently and says whether it does.

use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BasketLine {
    pub basket_id: String,
    pub store_id: String,
    /// For a missed basket, the upload its winning copy arrived in.
    pub upload_date: NaiveDate,
    /// Copies in upload DATE (0 for a missed basket).
    pub copies_in_run: i64,
    /// Revenue this line contributes to its bucket.
    pub revenue_minor: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CountryExplain {
    pub country: String,
    pub currency: String,
    pub recompute_baskets: i64,
    pub recompute_revenue_minor: i64,
    pub missed_baskets: i64,
    pub missed_revenue_minor: i64,
    pub double_counted_copies: i64,
    pub double_counted_revenue_minor: i64,
    /// What ONE v1 run for the date counts.
    pub v1_events: i64,
    pub v1_revenue_minor: i64,
    /// recompute - missed + double counted - v1: zero when the identity holds.
    pub identity_gap_minor: i64,
    pub missed: Vec<BasketLine>,
    pub double_counted: Vec<BasketLine>,
}

impl CountryExplain {
    pub fn identity_holds(&self) -> bool {
        self.identity_gap_minor == 0
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ExplainReport {
    pub business_date: NaiveDate,
    pub countries: Vec<CountryExplain>,
}

pub fn explain(lab: &Lab, d: NaiveDate) -> Result<ExplainReport> {
    crate::recompute::ensure_cached(lab)?;
    let store = lab.store();
    let mut countries: BTreeMap<String, CountryExplain> = BTreeMap::new();
    fn row<'a>(m: &'a mut BTreeMap<String, CountryExplain>, country: &str, currency: &str) -> &'a mut CountryExplain {
        m.entry(country.to_string()).or_insert_with(|| CountryExplain {
            country: country.into(),
            currency: currency.into(),
            ..Default::default()
        })
    }
    // The recompute side comes from polars.
    for r in store.recompute_by_store(d)? {
        let c = row(&mut countries, &r.country, &r.currency);
        c.recompute_baskets += r.baskets;
        crate::money::add(&mut c.recompute_revenue_minor, r.revenue_minor, || format!("{d} {}: recompute", r.country))?;
    }
    // Missed and double counted come from bronze, basket by basket.
    for b in store.explain_baskets(d)? {
        let c = row(&mut countries, &b.country, &b.currency);
        if b.copies_in_run == 0 {
            c.missed_baskets += 1;
            crate::money::add(&mut c.missed_revenue_minor, b.winner_revenue_minor, || format!("{d}: missed revenue"))?;
            c.missed.push(BasketLine {
                basket_id: b.basket_id,
                store_id: b.store_id,
                upload_date: b.winner_upload,
                copies_in_run: 0,
                revenue_minor: b.winner_revenue_minor,
            });
        } else if b.copies_in_run > 1 {
            // Every copy after the first in the run is counted again by v1.
            let extra = b.revenue_in_run - b.first_in_run;
            c.double_counted_copies += b.copies_in_run - 1;
            crate::money::add(&mut c.double_counted_revenue_minor, extra, || format!("{d}: double counted revenue"))?;
            c.double_counted.push(BasketLine {
                basket_id: b.basket_id,
                store_id: b.store_id,
                upload_date: d,
                copies_in_run: b.copies_in_run,
                revenue_minor: extra,
            });
        }
    }
    // The v1 side: what one naive run reads, straight from bronze.
    for r in store.v1_once_by_country(d)? {
        let c = row(&mut countries, &r.country, &r.currency);
        c.v1_events += r.events;
        crate::money::add(&mut c.v1_revenue_minor, r.revenue_minor, || format!("{d} {}: v1", r.country))?;
    }
    for c in countries.values_mut() {
        c.identity_gap_minor = c.recompute_revenue_minor - c.missed_revenue_minor + c.double_counted_revenue_minor - c.v1_revenue_minor;
    }
    Ok(ExplainReport { business_date: d, countries: countries.into_values().collect() })
}

impl ExplainReport {
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "",
            &[
                ("country", "country"),
                ("recompute_revenue_minor", "recompute"),
                ("missed_revenue_minor", "- missed"),
                ("double_counted_revenue_minor", "+ double counted"),
                ("v1_revenue_minor", "= v1 (one run)"),
                ("identity", "identity"),
                ("identity_gap_minor", "gap"),
                ("missed_baskets", "missed baskets"),
                ("double_counted_copies", "extra copies"),
            ],
        );
        for c in &self.countries {
            let holds = c.identity_holds();
            let mut r = super::Row {
                cells: vec![
                    Cell::text(&c.country),
                    Cell::money(c.recompute_revenue_minor, &c.currency),
                    Cell::money(c.missed_revenue_minor, &c.currency),
                    Cell::money(c.double_counted_revenue_minor, &c.currency),
                    Cell::money(c.v1_revenue_minor, &c.currency),
                    Cell::text(if holds { "holds" } else { "BROKEN" }),
                    Cell::money(c.identity_gap_minor, &c.currency),
                    Cell::Int(c.missed_baskets),
                    Cell::Int(c.double_counted_copies),
                ],
                flag: if holds { None } else { Some(Status::Fail) },
                drill: None,
                summary: false,
            };
            r.drill = Some(format!("explain:{}:{}", self.business_date, c.country));
            t.rows.push(r);
        }
        t
    }

    pub fn baskets_table(&self) -> Table {
        let mut t = Table::new(
            "baskets behind the numbers",
            &[
                ("kind", "kind"),
                ("country", "country"),
                ("basket_id", "basket_id"),
                ("store_id", "store"),
                ("upload_date", "upload"),
                ("copies_in_run", "copies in run"),
                ("revenue_minor", "revenue"),
            ],
        );
        for c in &self.countries {
            for (kind, list) in [("missed", &c.missed), ("double counted", &c.double_counted)] {
                for b in list {
                    t.push(vec![
                        Cell::text(kind),
                        Cell::text(&c.country),
                        Cell::text(&b.basket_id),
                        Cell::text(&b.store_id),
                        Cell::Date(b.upload_date),
                        Cell::Int(b.copies_in_run),
                        Cell::money(b.revenue_minor, &c.currency),
                    ]);
                }
            }
        }
        t
    }
}

impl Report for ExplainReport {
    fn kind(&self) -> &'static str {
        "explain"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!(
            "explain {}: recompute - missed + double counted = what ONE v1 run counts (check's v1 column sums every run appended)",
            self.business_date
        )
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table()]
    }
    fn notes(&self) -> Vec<Note> {
        self.countries
            .iter()
            .map(|c| {
                let m = |v| crate::money::format_major(v, &c.currency);
                Note {
                    status: if c.identity_holds() { Status::Pass } else { Status::Fail },
                    text: format!(
                        "{}: {} - {} + {} = {} {} one v1 run {}",
                        c.country,
                        m(c.recompute_revenue_minor),
                        m(c.missed_revenue_minor),
                        m(c.double_counted_revenue_minor),
                        m(c.recompute_revenue_minor - c.missed_revenue_minor + c.double_counted_revenue_minor),
                        if c.identity_holds() { "=" } else { "≠" },
                        m(c.v1_revenue_minor)
                    ),
                }
            })
            .collect()
    }
}
