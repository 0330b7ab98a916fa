//! Reports: plain structs read from the lab's layers. The CLI prints them; the explorer draws
//! the same structs.

pub mod baskets;
pub mod check;
pub mod evidence;
pub mod explain;
pub mod history;
pub mod lateness;
pub mod listings;
pub mod overview;
pub mod promises;
pub mod status;
pub mod table;

pub use table::{Cell, Format, Note, Report, Row, Status, Table};

use crate::lake::Lab;
use crate::lake::snapshot::{self, Fingerprint};
use chrono::NaiveDate;
use color_eyre::eyre::Result;

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

impl Report for FingerprintReport {
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
