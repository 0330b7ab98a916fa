//! `recount trend` and the explorer's Trend screen: each measure per business date and part (retail: revenue per
//! country), the three answers side by side (v1, v2 gold, the recompute). v1's retry stands out as a spike,
//! and provisional dates are marked. The table is the picture's text, read by the same struct.

use super::check::SummaryVerdicts;
use super::table::{Cell, Note, Report, Status, Table};
use chrono::NaiveDate;
use serde::Serialize;

/// One business date of one series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendPoint {
    pub business_date: NaiveDate,
    /// The date's window has not landed whole: the number can still move.
    pub provisional: bool,
    /// v1's appends summed (every run), None when v1 never ran for the date.
    pub v1: Option<i64>,
    pub v2: i64,
    pub recompute: i64,
    /// v2 equals the recompute once what the rules keep out (beyond the window) is added back:
    /// a difference they explain is no ✗ (`check::v2_explained`).
    pub v2_explained: bool,
}

impl TrendPoint {
    /// v1 counted half as much again as the recompute, or more: a retry doubled the day.
    pub fn v1_spike(&self) -> bool {
        self.v1.is_some_and(|v1| 2 * i128::from(v1) >= 3 * i128::from(self.recompute) && v1 > 0)
    }

    /// What the row's mark says: the spike first, then finality.
    fn marks(&self) -> String {
        let mut m = Vec::new();
        if self.v1_spike() {
            m.push("v1 spike");
        }
        if !self.v2_explained {
            m.push("v2 ≠ recompute");
        } else if self.v2 != self.recompute {
            m.push("beyond window");
        }
        if self.provisional {
            m.push("provisional");
        }
        m.join(", ")
    }
}

/// One measure of one part (retail: a country's revenue), its dates oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendSeries {
    /// The part's values of the model's attributes (retail: its country; empty: the whole lab).
    pub part: String,
    /// The measure, by its key for machines (`revenue_minor`, `units_produced`).
    pub measure: String,
    /// A money measure's ISO-4217 currency; None: a count or a sum of units.
    pub currency: Option<String>,
    /// What names the series on a screen and in a note: its part, and its measure when the
    /// report shows more than one ("GB"; "units_produced"; "north units_produced").
    pub label: String,
    pub points: Vec<TrendPoint>,
}

impl TrendSeries {
    /// The largest of the three answers over every date (0 when there is none): the picture's
    /// scale.
    pub fn max_minor(&self) -> i64 {
        self.points.iter().flat_map(|p| [p.v1.unwrap_or(0), p.v2, p.recompute]).max().unwrap_or(0).max(0)
    }

    /// The picture's floor: a tenth of the answers' range below the smallest of them (v1 where
    /// it ran, v2 gold and the recompute; a date v2 has not built yet counts by its recompute),
    /// never below 0. A day's revenue moves a few percent, so a floor at 0 would press every
    /// line into the top rows.
    pub fn floor_minor(&self) -> i64 {
        let values = || {
            self.points.iter().flat_map(|p| {
                let v2 = (p.v2 != 0).then_some(p.v2);
                [p.v1, v2, Some(p.recompute)].into_iter().flatten()
            })
        };
        let (Some(lo), max) = (values().min(), self.max_minor()) else { return 0 };
        let pad = (i128::from(max) - i128::from(lo)) / 10;
        i64::try_from((i128::from(lo) - pad).max(0)).unwrap_or(0)
    }

    /// The dates v1 spiked on.
    pub fn spikes(&self) -> Vec<NaiveDate> {
        self.points.iter().filter(|p| p.v1_spike()).map(|p| p.business_date).collect()
    }

    /// The series and its measure in words: "GB revenue", "units_produced", "north units_produced".
    pub fn heading(&self) -> String {
        if self.label != self.part {
            return self.label.clone();
        }
        let stem = self.measure.strip_suffix("_minor").unwrap_or(&self.measure);
        format!("{} {stem}", self.part).trim().to_string()
    }

    /// A value as people read it: money by its currency's digits, else a count.
    pub fn amount(&self, v: i64) -> String {
        match &self.currency {
            Some(c) => crate::money::format_major(v, c),
            None => crate::money::format_count(v),
        }
    }

    fn cell(&self, v: i64) -> Cell {
        match &self.currency {
            Some(c) => Cell::Money { minor: v, currency: c.clone() },
            None => Cell::Int(v),
        }
    }

    /// The series as a table: one row per date; `part_name` names the part's column (retail:
    /// `country`; None: the model has no part).
    pub fn table(&self, part_name: Option<&str>) -> Table {
        let keys = ["v1", "v2", "recompute"].map(|side| format!("{side}_{}", self.measure));
        let mut cols = vec![("business_date", "business date"), (&keys[0], "v1"), (&keys[1], "v2 gold"), (&keys[2], "recompute")];
        cols.push(("marks", "marks"));
        cols.extend(part_name.map(|p| (p, p)));
        let title = match &self.currency {
            Some(c) => format!("{} ({c})", self.label),
            None => self.label.clone(),
        };
        let mut t = Table::new(title, &cols);
        if let Some(p) = part_name {
            t = t.repeating(&[p]);
        }
        for p in &self.points {
            // The check's marks: ✗ for what the rules do not explain, ! for v1's spike or a
            // difference of beyond-window rows alone.
            let flag = if !p.v2_explained {
                Some(Status::Fail)
            } else if p.v1_spike() || p.v2 != p.recompute {
                Some(Status::Warn)
            } else {
                None
            };
            let mut row = vec![
                Cell::Date(p.business_date),
                p.v1.map_or_else(|| Cell::Text("not run".into()), |v| self.cell(v)),
                self.cell(p.v2),
                self.cell(p.recompute),
                Cell::Text(p.marks()),
            ];
            if part_name.is_some() {
                row.push(Cell::Repeat(self.part.clone()));
            }
            t.push_flagged(row, flag);
        }
        t
    }
}

/// `recount trend`: every country's series, from the lab now.
pub fn trend(lab: &crate::lake::Lab) -> color_eyre::eyre::Result<TrendReport> {
    crate::recompute::ensure_cached(lab)?;
    Ok(TrendReport::from_rows(&lab.store().date_summaries()?, &lab.store().landed_uploads()?))
}

/// Every series: one per part and measure shown (retail: a country's revenue; a model: its
/// money measures, else every measure, per value of its other attributes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TrendReport {
    /// The part's column (retail: `country`); None: the model has no attribute but a currency.
    pub part_name: Option<String>,
    pub series: Vec<TrendSeries>,
}

impl TrendReport {
    /// Built from the navigator's rows: per (date, country, currency) the three answers, and
    /// whether the date is provisional by the uploads `landed`.
    pub fn from_rows(rows: &[crate::store::DateSummaryRow], landed: &[NaiveDate]) -> TrendReport {
        let mut by: std::collections::BTreeMap<(String, String), Vec<TrendPoint>> = Default::default();
        for r in rows {
            by.entry((r.country.clone(), r.currency.clone())).or_default().push(TrendPoint {
                business_date: r.business_date,
                provisional: r.provisional(landed),
                v1: r.v1_ran.then_some(r.v1_revenue_minor),
                v2: r.v2_revenue_minor,
                recompute: r.recompute_revenue_minor,
                v2_explained: r.v2_explained(),
            });
        }
        let series = by
            .into_iter()
            .map(|((country, currency), mut points)| {
                points.sort_by_key(|p| p.business_date);
                TrendSeries { label: country.clone(), part: country, measure: "revenue_minor".into(), currency: Some(currency), points }
            })
            .collect();
        TrendReport { part_name: Some("country".into()), series }
    }

    /// A model lab's series, from its dates (each line keyed by every attribute): the parts are
    /// the values of the attributes that are no money measure's currency.
    pub fn of_model(dates: &super::model_day::DatesReport) -> TrendReport {
        let model = &dates.model;
        let shown = super::model::shown_measures(model);
        let parts = super::model::part_positions(model, &shown);
        let mut by: std::collections::BTreeMap<(String, usize, Option<String>), Vec<TrendPoint>> = Default::default();
        for line in &dates.dates {
            let part = super::model::part_of(model, &line.attributes);
            for &i in &shown {
                let currency = super::model::currency_of(model, i, &line.attributes).map(str::to_string);
                let side = |s: &Option<Vec<i64>>| s.as_ref().map(|m| m[i]);
                by.entry((part.clone(), i, currency)).or_default().push(TrendPoint {
                    business_date: line.business_date,
                    provisional: matches!(line.finality, crate::rules::Finality::Provisional { .. }),
                    v1: side(&line.v1),
                    v2: side(&line.v2).unwrap_or(0),
                    recompute: side(&line.recompute).unwrap_or(0),
                    v2_explained: line.agrees() || line.explained(),
                });
            }
        }
        let series = by
            .into_iter()
            .map(|((part, i, currency), points)| {
                let m = &model.measures[i];
                let label = match (part.is_empty(), shown.len() > 1) {
                    (false, false) => part.clone(),
                    (true, _) => m.name.clone(),
                    (false, true) => format!("{part} {}", m.name),
                };
                TrendSeries { part, measure: super::model::measure_key(m, None), currency, label, points }
            })
            .collect();
        let name = parts.iter().map(|&i| model.attributes[i].clone()).collect::<Vec<_>>().join("_");
        TrendReport { part_name: (!name.is_empty()).then_some(name), series }
    }

    /// The parts the series cover, in order (retail: its countries).
    pub fn parts(&self) -> Vec<String> {
        let mut c: Vec<String> = self.series.iter().map(|s| s.part.clone()).collect();
        c.dedup();
        c
    }

    /// Only the named part's series (every one with None), which must be one of the report's:
    /// an unknown one is an error that names those there are.
    pub fn only(mut self, part: Option<&str>) -> color_eyre::eyre::Result<TrendReport> {
        let Some(c) = part else { return Ok(self) };
        let Some(name) = &self.part_name else {
            color_eyre::eyre::bail!("this lab's trend has no parts to pick from: its model has no attribute but a currency")
        };
        let known = self.parts();
        if !known.iter().any(|k| k.eq_ignore_ascii_case(c)) {
            color_eyre::eyre::bail!(
                "no {name} {} in the lab (it has {})",
                crate::sanitize::for_terminal(c),
                if known.is_empty() { "none yet".to_string() } else { known.join(", ") }
            );
        }
        self.series.retain(|s| s.part.eq_ignore_ascii_case(c));
        Ok(self)
    }
}

impl Report for TrendReport {
    fn kind(&self) -> &'static str {
        "trend"
    }
    fn headline(&self) -> String {
        let mut what: Vec<&str> = Vec::new();
        for s in &self.series {
            let stem = s.measure.strip_suffix("_minor").unwrap_or(&s.measure);
            if !what.contains(&stem) {
                what.push(stem);
            }
        }
        let what = if what.is_empty() { "revenue".to_string() } else { what.join(", ") };
        let by = self.part_name.as_ref().map(|p| format!(" and {p}")).unwrap_or_default();
        format!("{what} per business date{by}: v1 (every run), v2 gold and the recompute")
    }

    fn tables(&self) -> Vec<Table> {
        self.series.iter().map(|s| s.table(self.part_name.as_deref())).collect()
    }

    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        for s in &self.series {
            let spikes = s.spikes();
            if !spikes.is_empty() {
                let dates: Vec<String> = spikes.iter().map(|d| d.to_string()).collect();
                notes.push(Note {
                    status: Status::Warn,
                    text: format!("{}: v1 spikes on {} (v1 ran again and counted the day twice)", s.label, dates.join(", ")),
                });
            }
        }
        if notes.is_empty() {
            notes.push(Note {
                status: Status::Pass,
                text: "no v1 spike: v1 never counted a day half as much again as the recompute".into(),
            });
        }
        notes
    }
}
