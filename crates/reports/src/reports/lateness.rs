//! `recount lateness`: upload date minus business date, in events and baskets.

use super::{Cell, Report, Table};
use crate::lake::Lab;
use crate::store::Tx;
use color_eyre::eyre::Result;

pub use crate::store::LatenessRow as LatenessBucket;

#[derive(Debug, Clone, serde::Serialize)]
pub struct LatenessReport {
    pub by_country: bool,
    pub buckets: Vec<LatenessBucket>,
}

/// The histogram needs every bronze row's basket, counted distinct: a full scan. It is kept in
/// the lab and recounted only after a file lands.
pub fn ensure_cached(lab: &Lab) -> Result<()> {
    let state = lab.store().lateness_state()?;
    if state.newest_file == state.counted_file {
        return Ok(());
    }
    crate::recompute::caches_writable(lab)?;
    let by_id = lab.has_key_collisions()?;
    // A full world's histogram can outgrow the reports' first limit: again, within the budget.
    lab.store().retrying_out_of_memory(false, || {
        let mut tx = Tx::begin(lab.store(), None)?;
        tx.refill_lateness(state.newest_file, by_id)?;
        tx.commit().map(drop)
    })
}

/// Whether the kept histogram counts every landed file.
pub fn is_cached(lab: &Lab) -> Result<bool> {
    let state = lab.store().lateness_state()?;
    Ok(state.newest_file == state.counted_file)
}

/// Forgets the kept histogram, so the next report counts it again (the bench measures that).
pub fn forget(lab: &Lab) -> Result<()> {
    lab.store().forget_lateness()
}

pub fn lateness(lab: &Lab, by_country: bool) -> Result<LatenessReport> {
    ensure_cached(lab)?;
    Ok(LatenessReport { by_country, buckets: lab.store().lateness(by_country)? })
}

impl Report for LatenessReport {
    fn kind(&self) -> &'static str {
        "lateness"
    }
    fn headline(&self) -> String {
        "lateness: upload date minus business date".into()
    }
    fn tables(&self) -> Vec<Table> {
        let mut cols = vec![];
        if self.by_country {
            cols.push(("country", "country"));
        }
        cols.extend([("days", "days"), ("events", "events"), ("baskets", "baskets")]);
        let mut t = Table::new("", &cols);
        for b in &self.buckets {
            let mut cells = vec![];
            if let Some(c) = &b.country {
                cells.push(Cell::text(c));
            }
            cells.extend([Cell::IntDelta(b.days), Cell::Int(b.events), Cell::Int(b.baskets)]);
            t.push(cells);
        }
        vec![t]
    }
}
