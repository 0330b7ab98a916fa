//! `recount summary`: the finance controller's morning in a few lines. What the newest write of
//! gold did: each date whose version it changed, by how much per country, and whether the date
//! is final now, e.g. "upload 2026-10-31 moved 2026-10-30 GB +£1,827.90 (provisional)". A
//! morning cron mail carries it; the lines are the same struct every front end renders.

use super::history::gold_changes;
use super::status::statuses_at;
use super::table::{Cell, Note, Report, Status, Table};
use crate::lake::{Lab, snapshot};
use crate::money;
use crate::store::Operation;
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use serde::Serialize;

/// One country's part of a moved date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountryMove {
    pub country: String,
    pub currency: String,
    pub revenue_minor: i64,
    pub delta_minor: i64,
}

/// A date the newest write changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedDate {
    pub business_date: NaiveDate,
    /// closed, provisional, stale or unbuilt, now.
    pub finality: String,
    pub countries: Vec<CountryMove>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MorningSummary {
    /// The newest snapshot that wrote gold (v1's appends aside), if any.
    pub snapshot_id: Option<i64>,
    /// What it was: "upload 2026-10-31", "rollback to snapshot 12", ...
    pub what: String,
    /// The dates it changed, oldest first (the newest `SHOWN` only, for the one line).
    pub dates: Vec<MovedDate>,
    /// Dates it changed that `dates` leaves out (the one line's count of the rest).
    pub more: usize,
}

/// What the newest write of gold did, date by date.
pub fn summary(lab: &Lab) -> Result<MorningSummary> {
    summary_of(lab, usize::MAX)
}

/// The one line the explorer opens with: only the newest dates are compared.
pub fn banner(lab: &Lab) -> Result<String> {
    Ok(summary_of(lab, SHOWN)?.line())
}

fn summary_of(lab: &Lab, newest: usize) -> Result<MorningSummary> {
    let latest = snapshot::latest_id(lab)?;
    let records = snapshot::records(lab, latest)?;
    let Some(at) = records.iter().rposition(|r| matches!(r.operation, Operation::Overwrite | Operation::Rollback)) else {
        return Ok(MorningSummary { snapshot_id: None, what: "no v2 run yet".into(), dates: Vec::new(), more: 0 });
    };
    let rec = &records[at];
    let before = match at.checked_sub(1) {
        Some(i) => snapshot::versions_as_of(lab, records[i].snapshot_id)?,
        None => Default::default(),
    };
    let after = snapshot::versions_as_of(lab, rec.snapshot_id)?;
    let moved: Vec<(NaiveDate, i64)> = after.iter().filter(|(d, v)| before.get(d) != Some(v)).map(|(d, v)| (*d, *v)).collect();
    let more = moved.len().saturating_sub(newest);
    let shown = &moved[more..];
    let statuses = statuses_at(lab, &shown.iter().map(|&(d, _)| d).collect::<Vec<_>>(), None)?;
    let changes: Vec<_> = shown.iter().map(|&(d, version)| (d, before.get(&d).copied(), Some(version))).collect();
    let mut dates = Vec::new();
    for ((&(d, _), status), change) in shown.iter().zip(statuses).zip(gold_changes(lab, &changes)?) {
        let countries = change
            .iter()
            .map(|c| CountryMove {
                country: c.country.clone(),
                currency: c.currency.clone(),
                revenue_minor: c.revenue_after_minor,
                delta_minor: c.revenue_after_minor - c.revenue_before_minor,
            })
            .collect();
        let finality = status.finality.word().to_string();
        dates.push(MovedDate { business_date: d, finality, countries });
    }
    Ok(MorningSummary { snapshot_id: Some(rec.snapshot_id), what: rec.trigger.detail.clone(), dates, more })
}

impl MovedDate {
    /// "2026-10-30 GB +£1,827.90, IN +₹4,120.00 (provisional)"; a closed date with no change
    /// shown at its value: "2026-10-29 closed at GB £101,040.42".
    pub fn describe(&self) -> String {
        let moved: Vec<&CountryMove> = self.countries.iter().filter(|c| c.delta_minor != 0).collect();
        if moved.is_empty() {
            let at: Vec<String> =
                self.countries.iter().map(|c| format!("{} {}", c.country, money::format_major(c.revenue_minor, &c.currency))).collect();
            return format!("{} {} at {}", self.business_date, self.finality, at.join(", "));
        }
        let parts: Vec<String> =
            moved.iter().map(|c| format!("{} {}", c.country, money::format_delta(c.delta_minor, &c.currency))).collect();
        format!("{} {} ({})", self.business_date, parts.join(", "), self.finality)
    }
}

/// The dates the one line names; the table lists every one.
const SHOWN: usize = 3;

impl MorningSummary {
    /// The one line the explorer and a cron mail start with.
    pub fn line(&self) -> String {
        match self.snapshot_id {
            None => "nothing built yet: land an upload and run v2".to_string(),
            Some(_) if self.dates.is_empty() && self.more == 0 => format!("{}: no date changed", self.what),
            Some(_) => {
                // The newest dates, which the morning asks about; a backfill's others counted.
                let dates: Vec<String> = self.dates.iter().rev().take(SHOWN).map(MovedDate::describe).collect();
                let more = self.more + self.dates.len().saturating_sub(SHOWN);
                let more = if more > 0 { format!("; and {more} older date(s) (recount summary lists them)") } else { String::new() };
                format!("{} moved {}{more}", self.what, dates.join("; "))
            }
        }
    }
}

impl Report for MorningSummary {
    fn kind(&self) -> &'static str {
        "summary"
    }
    fn headline(&self) -> String {
        self.line()
    }

    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "Dates the newest write changed",
            &[
                ("business_date", "date"),
                ("country", "country"),
                ("revenue_minor", "revenue now"),
                ("change_minor", "change"),
                ("finality", "final?"),
            ],
        );
        for d in self.dates.iter().rev() {
            for c in &d.countries {
                t.push(vec![
                    Cell::Date(d.business_date),
                    Cell::text(&c.country),
                    Cell::money(c.revenue_minor, &c.currency),
                    Cell::delta(c.delta_minor, &c.currency),
                    Cell::text(&d.finality),
                ]);
            }
        }
        vec![t]
    }

    fn notes(&self) -> Vec<Note> {
        let provisional = self.dates.iter().filter(|d| d.finality == "provisional").count();
        if provisional == 0 {
            return Vec::new();
        }
        vec![Note {
            status: Status::Info,
            text: format!("{provisional} date(s) still provisional: later uploads of their window can still change them"),
        }]
    }
}
