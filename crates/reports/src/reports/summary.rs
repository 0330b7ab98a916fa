//! `recount summary`: the finance controller's morning in a few lines. What the newest write of
//! gold did: each date whose version it changed, by how much per country, and whether the date
//! is final now, e.g. "upload 2026-10-31 moved 2026-10-30 GB +£1,827.90 (provisional)". A
//! morning cron mail carries it; the lines are the same struct every front end renders.

use super::history::gold_changes;
use super::status::statuses_at;
use super::table::{Cell, Note, Report, Status, Table};
use crate::lake::{Lab, snapshot};
use crate::model::Model;
use crate::money;
use crate::store::Operation;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use serde::Serialize;
use std::collections::BTreeMap;

/// One measure of a part: its value now and how much the write changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeasureMove {
    /// The measure's name (`revenue_minor`, `units_produced`).
    pub measure: String,
    /// A money measure's ISO-4217 currency; None: a count or a sum of units.
    pub currency: Option<String>,
    pub now: i64,
    pub change: i64,
}

/// One part of a moved date: its values of the attributes the summary names (retail: its
/// country; none: the date whole), and each measure shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartMove {
    pub part: Vec<String>,
    pub measures: Vec<MeasureMove>,
}

/// A date the newest write changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedDate {
    pub business_date: NaiveDate,
    /// closed, provisional, stale or unbuilt, now.
    pub finality: String,
    pub parts: Vec<PartMove>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MorningSummary {
    /// The newest snapshot that wrote gold (v1's appends aside), if any.
    pub snapshot_id: Option<i64>,
    /// What it was: "upload 2026-10-31", "rollback to snapshot 12", ...
    pub what: String,
    /// What names a part, in the model's words (retail: `country`; empty: the date is one part).
    pub part_names: Vec<String>,
    /// The measures shown, by their keys for machines (a money measure's ends in `_minor`): the
    /// model's money measures, else every measure (retail: `revenue_minor`).
    pub measures: Vec<String>,
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
    let (part_names, measures) = (vec!["country".to_string()], vec!["revenue_minor".to_string()]);
    let latest = snapshot::latest_id(lab)?;
    let records = snapshot::records(lab, latest)?;
    let Some(at) = records.iter().rposition(|r| matches!(r.operation, Operation::Overwrite | Operation::Rollback)) else {
        return Ok(MorningSummary::nothing(part_names, measures));
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
        let parts = change
            .iter()
            .map(|c| PartMove {
                part: vec![c.country.clone()],
                measures: vec![MeasureMove {
                    measure: measures[0].clone(),
                    currency: Some(c.currency.clone()),
                    now: c.revenue_after_minor,
                    change: c.revenue_after_minor - c.revenue_before_minor,
                }],
            })
            .collect();
        dates.push(MovedDate { business_date: d, finality: status.finality.word().to_string(), parts });
    }
    Ok(MorningSummary { snapshot_id: Some(rec.snapshot_id), what: rec.trigger.detail.clone(), part_names, measures, dates, more })
}

/// What the newest write of a model lab's gold did, date by date, in the model's words: each
/// part is a value of its attributes (a money measure's currency rides with its amount), and the
/// measures are its money, else every measure. The same struct as retail's, read where the
/// model's versions are kept: two totals of gold, before and after the write, summed by DuckDB.
pub fn model_summary(lab: &Lab, model: &Model, late_days: u32) -> Result<MorningSummary> {
    model_summary_of(lab, model, late_days, usize::MAX)
}

/// The model lab's one line, as `banner` is retail's.
pub fn model_banner(lab: &Lab, model: &Model, late_days: u32) -> Result<String> {
    Ok(model_summary_of(lab, model, late_days, SHOWN)?.line())
}

fn model_summary_of(lab: &Lab, model: &Model, late_days: u32, newest: usize) -> Result<MorningSummary> {
    let shown_measures = super::model::shown_measures(model);
    let named = super::model::part_positions(model, &shown_measures);
    let part_names = named.iter().map(|&i| model.attributes[i].clone()).collect();
    let measures = shown_measures.iter().map(|&i| super::model::measure_key(&model.measures[i], None)).collect();
    let snapshots = lab.store().model_snapshots()?;
    let Some(last) = snapshots.last() else { return Ok(MorningSummary::nothing(part_names, measures)) };
    let prev = snapshots.len().checked_sub(2).map(|i| snapshots[i].snapshot_id);
    let versions = |s: Option<i64>| -> Result<BTreeMap<NaiveDate, i64>> {
        let Some(s) = s else { return Ok(BTreeMap::new()) };
        Ok(lab.store().model_versions_at(Some(s))?.into_iter().map(|v| (v.business_date, v.snapshot_id)).collect())
    };
    let (before, after) = (versions(prev)?, versions(Some(last.snapshot_id))?);
    let moved: Vec<NaiveDate> = after.iter().filter(|(d, v)| before.get(d) != Some(v)).map(|(d, _)| *d).collect();
    let more = moved.len().saturating_sub(newest);
    let shown = &moved[more..];
    let every: Vec<usize> = (0..model.attributes.len()).collect();
    let totals =
        |s: Option<i64>| s.map_or_else(|| Ok(Default::default()), |s| super::model_day::totals_by(lab, model, "gold", &every, Some(s)));
    let (was, now) = (totals(prev)?, totals(Some(last.snapshot_id))?);
    let statuses = super::status::model_statuses(lab, late_days, shown, None)?;
    let mut dates = Vec::new();
    for (&d, status) in shown.iter().zip(statuses) {
        let of_date = |t: &'_ super::model_day::Totals| {
            t.range((d, Vec::new())..).take_while(|((k, _), _)| *k == d).map(|((_, a), _)| a.clone()).collect::<Vec<_>>()
        };
        let mut keys: Vec<Vec<String>> = of_date(&was).into_iter().chain(of_date(&now)).collect();
        keys.sort();
        keys.dedup();
        let mut parts = Vec::new();
        for attributes in keys {
            let key = (d, attributes);
            let value = |t: &super::model_day::Totals, i: usize| t.get(&key).map_or(0, |m| m[i]);
            let mut values = Vec::new();
            for &i in &shown_measures {
                let (n, w) = (value(&now, i), value(&was, i));
                let change = n.checked_sub(w).ok_or_else(|| eyre!("the change of {d}'s {} overflows 64 bits", model.measures[i].name))?;
                let currency = model.currency_at(&model.measures[i]).map(|c| key.1[c].clone());
                values.push(MeasureMove { measure: model.measures[i].name.clone(), currency, now: n, change });
            }
            parts.push(PartMove { part: named.iter().map(|&i| key.1[i].clone()).collect(), measures: values });
        }
        dates.push(MovedDate { business_date: d, finality: status.finality.word().to_string(), parts });
    }
    Ok(MorningSummary { snapshot_id: Some(last.snapshot_id), what: model_what(last), part_names, measures, dates, more })
}

/// A model snapshot's trigger in retail's words: "upload D", "backfill of uploads A..B",
/// "rollback to snapshot N"; a rebuild and a reopening say what their record says.
fn model_what(s: &crate::store::model::ModelSnapshotRow) -> String {
    match (s.operation.as_str(), s.upload) {
        ("v2", Some(u)) => format!("upload {u}"),
        ("v2", None) => format!("backfill of {}", s.files),
        ("rollback", _) => format!("rollback {}", s.files),
        _ => s.files.clone(),
    }
}

impl MeasureMove {
    fn amount(&self, value: i64, signed: bool) -> String {
        match (&self.currency, signed) {
            (Some(c), true) => money::format_delta(value, c),
            (Some(c), false) => money::format_major(value, c),
            (None, true) => money::format_count_delta(value),
            (None, false) => money::format_count(value),
        }
    }
}

impl PartMove {
    /// "GB +£1,827.90"; with several measures each is named: "units_produced +1,234, defect_count +3".
    fn describe(&self, signed: bool) -> Option<String> {
        let named = self.measures.len() > 1;
        let values: Vec<String> = self
            .measures
            .iter()
            .filter(|m| !signed || m.change != 0)
            .map(|m| {
                let amount = m.amount(if signed { m.change } else { m.now }, signed);
                if named { format!("{} {amount}", m.measure) } else { amount }
            })
            .collect();
        if values.is_empty() {
            return None;
        }
        Some(self.part.iter().cloned().chain([values.join(", ")]).collect::<Vec<_>>().join(" "))
    }
}

impl MovedDate {
    /// "2026-10-30 GB +£1,827.90, IN +₹4,120.00 (provisional)"; a closed date with no change
    /// shown at its value: "2026-10-29 closed at GB £101,040.42".
    pub fn describe(&self) -> String {
        let moved: Vec<String> = self.parts.iter().filter_map(|p| p.describe(true)).collect();
        if moved.is_empty() {
            let at: Vec<String> = self.parts.iter().filter_map(|p| p.describe(false)).collect();
            return format!("{} {} at {}", self.business_date, self.finality, at.join(", "));
        }
        format!("{} {} ({})", self.business_date, moved.join(", "), self.finality)
    }
}

/// The dates the one line names; the table lists every one.
const SHOWN: usize = 3;

impl MorningSummary {
    fn nothing(part_names: Vec<String>, measures: Vec<String>) -> MorningSummary {
        MorningSummary { snapshot_id: None, what: "no v2 run yet".into(), part_names, measures, dates: Vec::new(), more: 0 }
    }

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
        // (key, label): `revenue_minor` and `change_revenue_minor` for machines, as a model's
        // measures are keyed everywhere; `revenue now` and `revenue change` for people.
        let mut cols: Vec<(String, String)> = vec![("business_date".into(), "date".into())];
        cols.extend(self.part_names.iter().map(|p| (p.clone(), p.clone())));
        for m in &self.measures {
            let stem = m.strip_suffix("_minor").unwrap_or(m);
            cols.push((m.clone(), format!("{stem} now")));
            cols.push((format!("change_{m}"), format!("{stem} change")));
        }
        cols.push(("finality".into(), "final?".into()));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("Dates the newest write changed", &refs);
        for d in self.dates.iter().rev() {
            for p in &d.parts {
                let mut row = vec![Cell::Date(d.business_date)];
                row.extend(p.part.iter().map(Cell::text));
                for m in &p.measures {
                    match &m.currency {
                        Some(c) => row.extend([Cell::money(m.now, c), Cell::delta(m.change, c)]),
                        None => row.extend([Cell::Int(m.now), Cell::IntDelta(m.change)]),
                    }
                }
                row.push(Cell::text(&d.finality));
                t.push(row);
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
