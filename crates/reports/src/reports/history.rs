//! The snapshot trail: `snapshots` and `history DATE` (`diff DATE` is `super::diff`).

use super::status::{DateStatus, date_status_at};
use super::{Cell, Report, Status, Table, resolve_as_of};
use crate::lake::Lab;
use crate::lake::snapshot::{self, Operation, SnapshotRecord, Trigger};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;

// A date's diff has a file of its own (`super::diff`); its names stay reachable here, beside the
// history that shows the same changes.
pub use super::diff::{ChangeKind, CountryDiff, DiffBasket, DiffPart, DiffReport, FileVersion, diff};
pub use super::diff::{Compared, diff_summaries, diff_versions, gold_changes};
// ---------------------------------------------------------------- snapshots

#[derive(Debug, Clone, serde::Serialize)]
pub struct SnapshotsReport {
    pub records: Vec<SnapshotRecord>,
}

pub fn snapshots(lab: &Lab) -> Result<SnapshotsReport> {
    Ok(SnapshotsReport { records: snapshot::records(lab, i64::MAX)? })
}

impl Report for SnapshotsReport {
    fn kind(&self) -> &'static str {
        "snapshots"
    }
    fn headline(&self) -> String {
        format!("{} snapshot record(s), oldest first", self.records.len())
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("snapshot_id", "snapshot"),
                ("parent_id", "parent"),
                ("operation", "operation"),
                ("trigger", "trigger"),
                ("dates_rewritten", "dates"),
                ("dates_skipped", "skipped"),
                ("rows_replaced", "rows -"),
                ("rows_added", "rows +"),
                ("gold_rows", "gold rows"),
                ("gold_md5", "gold md5"),
                ("created_at", "at (UTC)"),
            ],
        );
        for r in &self.records {
            t.push_flagged(
                vec![
                    Cell::Id(r.snapshot_id),
                    r.parent_id.map(Cell::Id).unwrap_or(Cell::Empty),
                    Cell::text(r.operation.as_str()),
                    Cell::text(format!("{}: {}", r.trigger.kind, r.trigger.detail)),
                    Cell::Int(r.dates_rewritten),
                    Cell::Int(r.dates_skipped),
                    Cell::Int(r.rows_replaced),
                    Cell::Int(r.rows_added),
                    Cell::Int(r.fingerprint.rows),
                    Cell::text(&r.fingerprint.md5),
                    Cell::text(r.created_at.format("%Y-%m-%d %H:%M:%S").to_string()),
                ],
                (r.operation == Operation::Skipped).then_some(Status::Info),
            );
        }
        vec![t]
    }
}

// ---------------------------------------------------------------- history

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CountryValue {
    pub country: String,
    pub currency: String,
    pub baskets: i64,
    pub revenue_minor: i64,
    pub baskets_delta: i64,
    pub revenue_delta_minor: i64,
    /// "+126 baskets, +£5,423.19 added from upload 2026-08-16"
    pub attribution: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryEntry {
    pub snapshot_id: i64,
    pub operation: Operation,
    pub trigger: Trigger,
    pub created_at: chrono::NaiveDateTime,
    pub countries: Vec<CountryValue>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryReport {
    pub business_date: NaiveDate,
    pub as_of_snapshot: i64,
    pub status: DateStatus,
    pub entries: Vec<HistoryEntry>,
}

pub fn history(lab: &Lab, d: NaiveDate, as_of: Option<i64>) -> Result<HistoryReport> {
    let up_to = resolve_as_of(lab, as_of)?;
    let versions = lab.store().versions_of_date(d, up_to)?;
    let records: BTreeMap<i64, SnapshotRecord> = snapshot::records(lab, up_to)?.into_iter().map(|r| (r.snapshot_id, r)).collect();
    let pairs: Vec<Compared> =
        versions.iter().enumerate().map(|(i, &v)| Compared::versions(i.checked_sub(1).map(|p| versions[p]), v)).collect();
    let mut entries = Vec::new();
    for (diff, &v) in diff_summaries(lab, d, &pairs)?.iter().zip(&versions) {
        let rec = &records[&v];
        // A reopening is a decision: its "why" names it, who made it and the reason, before the
        // baskets it took in (the trigger's own parenthesis, which repeats them, left out).
        let decided = (rec.trigger.kind == crate::store::TriggerKind::Reopen)
            .then(|| rec.trigger.detail.rsplit_once(" (").map_or(rec.trigger.detail.as_str(), |(head, _)| head));
        let countries = diff
            .countries
            .iter()
            .map(|c| CountryValue {
                country: c.country.clone(),
                currency: c.currency.clone(),
                baskets: c.baskets_after,
                revenue_minor: c.revenue_after_minor,
                baskets_delta: c.baskets_after - c.baskets_before,
                revenue_delta_minor: c.revenue_after_minor - c.revenue_before_minor,
                attribution: match decided {
                    Some(d) => format!("{d}: {}", c.summary()),
                    None => c.summary(),
                },
            })
            .collect();
        entries.push(HistoryEntry {
            snapshot_id: v,
            operation: rec.operation,
            trigger: rec.trigger.clone(),
            created_at: rec.created_at,
            countries,
        });
    }
    // The status as of the snapshot the history stops at, when one is named: then, not now.
    let status = date_status_at(lab, d, as_of.map(|_| up_to))?;
    Ok(HistoryReport { business_date: d, as_of_snapshot: up_to, status, entries })
}

impl HistoryReport {
    /// The snapshot behind row `row` of `table()` (one row per country of each entry).
    /// The country a row of `table` is about.
    pub fn country_at_row(&self, row: usize) -> Option<&str> {
        self.entries.iter().flat_map(|e| e.countries.iter().map(|c| c.country.as_str())).nth(row)
    }

    pub fn snapshot_at_row(&self, row: usize) -> Option<i64> {
        self.entries.iter().flat_map(|e| e.countries.iter().map(move |_| e.snapshot_id)).nth(row)
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "",
            &[
                ("snapshot_id", "snapshot"),
                ("country", "country"),
                ("baskets", "baskets"),
                ("revenue_minor", "revenue"),
                ("attribution", "why"),
                ("baskets_delta", "Δ baskets"),
                ("revenue_delta_minor", "Δ revenue"),
                ("operation", "operation"),
                ("trigger", "trigger"),
            ],
        )
        .repeating(&["baskets_delta", "revenue_delta_minor"]);
        for e in &self.entries {
            for c in &e.countries {
                t.push(vec![
                    Cell::Id(e.snapshot_id),
                    Cell::text(&c.country),
                    Cell::Int(c.baskets),
                    Cell::money(c.revenue_minor, &c.currency),
                    Cell::text(&c.attribution),
                    Cell::IntDelta(c.baskets_delta),
                    Cell::delta(c.revenue_delta_minor, &c.currency),
                    Cell::text(e.operation.as_str()),
                    Cell::text(&e.trigger.detail),
                ]);
            }
        }
        t
    }
}

impl Report for HistoryReport {
    fn kind(&self) -> &'static str {
        "history"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("history {} as of snapshot {} — {}", self.business_date, self.as_of_snapshot, self.status.describe())
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table()]
    }
    /// Each version's why, country by country, oldest first.
    fn gist(&self) -> Vec<String> {
        let whys = self.entries.iter().flat_map(|e| e.countries.iter().map(move |c| (e.snapshot_id, c)));
        whys.map(|(id, c)| format!("snapshot {id}, {}: {}", c.country, c.attribution)).collect()
    }
}
