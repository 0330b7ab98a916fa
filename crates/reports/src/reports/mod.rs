//! Reports: plain structs read from the lab's layers. The CLI prints them; the explorer draws
//! the same structs.

pub mod audit;
pub mod audit_example;
pub mod audit_spill;
pub mod audit_where;
pub mod baskets;
pub mod check;
pub mod day;
pub mod diff;
pub mod evidence;
pub mod explain;
pub mod foreign;
pub mod history;
pub mod lateness;
pub mod listings;
pub mod model;
pub mod model_audit;
pub mod model_day;
pub mod model_lab;
pub mod overview;
pub mod promises;
pub mod source;
pub mod status;
pub mod summary;
pub mod table;
pub mod trend;

pub use table::{Cell, Format, Note, Report, Row, Status, Table};

use crate::lake::Lab;
use crate::lake::snapshot::{self, Fingerprint};
use chrono::NaiveDate;
use color_eyre::eyre::Result;

/// Brings the caches the reports read (the polars recount, the lateness histogram) up to date
/// with the raw zone. A reader writes them under the lab's lock, briefly; when it cannot (the lab
/// is read-only, or another process is writing), it reads a private copy of the database and
/// computes them there, so the lab itself never changes under a report. DuckDB's recount is kept
/// too, for each window the lab's writes used; whether it is, is asked of the default window
/// only (asking of every window would slow every report's start), so a `check` of a date built
/// with another window that finds it missing recounts the date alone.
pub fn freshen(lab: &mut Lab) -> Result<()> {
    if crate::recompute::is_cached(lab)? && lateness::is_cached(lab)? && crate::recompute::duckdb_recount_kept(lab)? {
        return Ok(());
    }
    if !lab.may_write_caches() {
        let wrote = lab.begin_writing().and_then(|()| {
            let filled = fill_caches(lab);
            let ended = lab.end_writing();
            filled.and(ended)
        });
        match wrote {
            Ok(()) => return Ok(()),
            Err(e) => {
                lab.read_private_copy().map_err(|c| c.wrap_err(format!("reading the lab, which could not be written ({e:#})")))?;
            }
        }
    }
    fill_caches(lab)
}

fn fill_caches(lab: &Lab) -> Result<()> {
    crate::recompute::ensure_cached(lab)?;
    lateness::ensure_cached(lab)?;
    crate::recompute::keep_duckdb_recounts(lab)
}

/// The snapshot a report reads as of: the newest when none is named.
pub fn resolve_as_of(lab: &Lab, as_of: Option<i64>) -> Result<i64> {
    match as_of {
        Some(s) => {
            snapshot::require(lab, s)?;
            Ok(s)
        }
        None => snapshot::latest_id(lab),
    }
}

/// The business date a person named (`YYYY-MM-DD`, `MM-DD` within the lab's years, or
/// `yesterday`), among
/// the lab's dates: a date outside them is an error that says so.
pub fn resolve_day(lab: &Lab, day: day::Day) -> Result<NaiveDate> {
    let newest = if day == day::Day::Yesterday { lab.store().landed_uploads()?.last().copied() } else { None };
    day.resolve_in(&business_dates(lab)?, newest).map_err(|e| color_eyre::eyre::eyre!(e))
}

/// Every business date any landed row carries, oldest first.
pub fn business_dates(lab: &Lab) -> Result<Vec<NaiveDate>> {
    lab.store().business_dates()
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FingerprintReport {
    pub as_of_snapshot: Option<i64>,
    pub rows: i64,
    pub md5: String,
    pub line: String,
}

pub fn fingerprint(lab: &Lab, as_of: Option<i64>) -> Result<FingerprintReport> {
    let fp: Fingerprint = match as_of {
        Some(s) => {
            snapshot::require(lab, s)?;
            snapshot::fingerprint_as_of(lab, s)?
        }
        None => snapshot::fingerprint(lab)?,
    };
    Ok(FingerprintReport { as_of_snapshot: as_of, rows: fp.rows, md5: fp.md5.clone(), line: fp.to_string() })
}

/// A model lab's gold fingerprint, now or as of snapshot `as_of`, as the same report.
pub fn model_fingerprint(lab: &Lab, model: &crate::model::Model, as_of: Option<i64>) -> Result<FingerprintReport> {
    if let Some(s) = as_of {
        crate::lake::model::require_snapshot(lab, s)?;
    }
    let (rows, md5) = crate::model::recount::digest(&crate::lake::model::rows_of(model, lab.store().model_gold(as_of)?));
    let line = crate::model::recount::fingerprint_line(model, rows, &md5);
    Ok(FingerprintReport { as_of_snapshot: as_of, rows, md5, line })
}

impl Report for FingerprintReport {
    fn kind(&self) -> &'static str {
        "fingerprint"
    }
    fn headline(&self) -> String {
        String::new()
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new("", &[("rows", "rows"), ("md5", "md5")]);
        t.push(vec![Cell::Int(self.rows), Cell::text(&self.md5)]);
        vec![t]
    }
}

/// The lab's gold of business date `d` now, store by store (what `recount spark check` sets
/// beside the Iceberg table's).
pub fn lab_gold_by_store(lab: &Lab, d: NaiveDate) -> Result<Vec<crate::store::StoreFigures>> {
    lab.store().gold_by_store(d, None)
}
