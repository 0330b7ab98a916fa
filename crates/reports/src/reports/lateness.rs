//! `recount lateness`: upload date minus business date, in events and the entity's keys, for
//! retail and every model, each bucket with its fate by the window.

use super::{Cell, Report, Table};
use crate::lake::Lab;
use crate::rules::Fate;
use crate::store::Tx;
use color_eyre::eyre::{Result, eyre};

pub use crate::store::LatenessRow as LatenessBucket;

/// Rows of the current files by days from business date to upload, with their distinct keys: the
/// same report for retail and every model, in the model's words.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LatenessReport {
    /// The entity's word (`basket`, `record`): its column counts distinct keys.
    pub entity: String,
    /// The window each bucket's fate is judged by; None: the fates are not shown (the explorer's
    /// histogram).
    pub late_days: Option<u32>,
    /// The attribute the buckets are split by (retail's country); None: over every row.
    pub by: Option<String>,
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

/// A retail lab's histogram; with `late_days`, each bucket's fate by that window.
pub fn lateness(lab: &Lab, by_country: bool, late_days: Option<u32>) -> Result<LatenessReport> {
    ensure_cached(lab)?;
    let by = by_country.then(|| "country".to_string());
    Ok(LatenessReport { entity: "basket".into(), late_days, by, buckets: lab.store().lateness(by_country)? })
}

/// A model lab's histogram, with each bucket's fate by the window `late_days`; `by_part`, per value
/// of the attribute that names a part of a date (retail's country), as retail's per country.
pub fn model_lateness(lab: &Lab, model: &crate::model::Model, by_part: bool, late_days: u32) -> Result<LatenessReport> {
    let part = if by_part {
        let first = super::model::part_positions(model, &super::model::shown_measures(model)).first().copied();
        let why =
            || eyre!("model {} has no attribute that names a part of a date: `recount lateness` counts every {}", model.name, model.entity);
        Some(first.ok_or_else(why)?)
    } else {
        None
    };
    let buckets = lab
        .store()
        .model_lateness(part)?
        .into_iter()
        .filter(|b| b.part.is_some() == part.is_some())
        .map(|b| LatenessBucket { country: b.part, days: b.days_late, events: b.records, keys: b.keys })
        .collect();
    let by = part.map(|i| model.attributes[i].clone());
    Ok(LatenessReport { entity: model.entity.clone(), late_days: Some(late_days), by, buckets })
}

impl Report for LatenessReport {
    fn kind(&self) -> &'static str {
        "lateness"
    }
    fn headline(&self) -> String {
        let head = "lateness: upload date minus business date";
        let Some(window) = self.late_days.map(crate::rules::LatenessWindow::new) else { return head.into() };
        // Counted wide: a histogram's events summed never wrap.
        let past: i128 = self.buckets.iter().filter(|b| window.fate_after(b.days) != Fate::Affected).map(|b| i128::from(b.events)).sum();
        format!("{head}; {past} event(s) outside the {}-day window", window.late_days)
    }
    fn tables(&self) -> Vec<Table> {
        let keys = format!("{}s", self.entity);
        let mut cols = vec![];
        if let Some(by) = &self.by {
            cols.push((by.as_str(), by.as_str()));
        }
        cols.extend([("days", "days"), ("events", "events"), (keys.as_str(), keys.as_str())]);
        if self.late_days.is_some() {
            cols.push(("fate", "fate"));
        }
        let mut t = Table::new("", &cols);
        for b in &self.buckets {
            let mut cells = vec![];
            if let Some(c) = &b.country {
                cells.push(Cell::text(c));
            }
            cells.extend([Cell::IntDelta(b.days), Cell::Int(b.events), Cell::Int(b.keys)]);
            if let Some(late_days) = self.late_days {
                cells.push(Cell::text(crate::rules::LatenessWindow::new(late_days).fate_after(b.days).word()));
            }
            t.push(cells);
        }
        vec![t]
    }
}
