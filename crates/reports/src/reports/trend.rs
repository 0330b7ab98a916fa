//! `recount trend` and the explorer's Trend screen: revenue per business date and country, the
//! three answers side by side (v1, v2 gold, the recompute). v1's retry stands out as a spike,
//! and provisional dates are marked. The table is the picture's text, read by the same struct.

use super::check::SummaryVerdicts;
use super::table::{Cell, Note, Report, Status, Table};
use chrono::NaiveDate;
use serde::Serialize;

/// One business date of one country.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendPoint {
    pub business_date: NaiveDate,
    /// The date's window has not landed whole: the number can still move.
    pub provisional: bool,
    /// v1's appends summed (every run), None when v1 never ran for the date.
    pub v1_revenue_minor: Option<i64>,
    pub v2_revenue_minor: i64,
    pub recompute_revenue_minor: i64,
    /// v2 equals the recompute once what the rules keep out (beyond the window) is added back:
    /// a difference they explain is no ✗ (`check::v2_explained`).
    pub v2_explained: bool,
}

impl TrendPoint {
    /// v1 counted half as much again as the recompute, or more: a retry doubled the day.
    pub fn v1_spike(&self) -> bool {
        self.v1_revenue_minor.is_some_and(|v1| 2 * i128::from(v1) >= 3 * i128::from(self.recompute_revenue_minor) && v1 > 0)
    }

    /// What the row's mark says: the spike first, then finality.
    fn marks(&self) -> String {
        let mut m = Vec::new();
        if self.v1_spike() {
            m.push("v1 spike");
        }
        if !self.v2_explained {
            m.push("v2 ≠ recompute");
        } else if self.v2_revenue_minor != self.recompute_revenue_minor {
            m.push("beyond window");
        }
        if self.provisional {
            m.push("provisional");
        }
        m.join(", ")
    }
}

/// One country's dates, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendSeries {
    pub country: String,
    pub currency: String,
    pub points: Vec<TrendPoint>,
}

impl TrendSeries {
    /// The largest of the three answers over every date (0 when there is none): the picture's
    /// scale.
    pub fn max_minor(&self) -> i64 {
        self.points
            .iter()
            .flat_map(|p| [p.v1_revenue_minor.unwrap_or(0), p.v2_revenue_minor, p.recompute_revenue_minor])
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// The picture's floor: a tenth of the answers' range below the smallest of them (v1 where
    /// it ran, v2 gold and the recompute; a date v2 has not built yet counts by its recompute),
    /// never below 0. A day's revenue moves a few percent, so a floor at 0 would press every
    /// line into the top rows.
    pub fn floor_minor(&self) -> i64 {
        let values = || {
            self.points.iter().flat_map(|p| {
                let v2 = (p.v2_revenue_minor != 0).then_some(p.v2_revenue_minor);
                [p.v1_revenue_minor, v2, Some(p.recompute_revenue_minor)].into_iter().flatten()
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

    /// The series as a table: one row per date.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!("{} ({})", self.country, self.currency),
            &[
                ("business_date", "business date"),
                ("v1_revenue_minor", "v1"),
                ("v2_revenue_minor", "v2 gold"),
                ("recompute_revenue_minor", "recompute"),
                ("marks", "marks"),
                ("country", "country"),
            ],
        )
        .repeating(&["country"]);
        for p in &self.points {
            let money = |v: i64| Cell::Money { minor: v, currency: self.currency.clone() };
            // The check's marks: ✗ for what the rules do not explain, ! for v1's spike or a
            // difference of beyond-window baskets alone.
            let flag = if !p.v2_explained {
                Some(Status::Fail)
            } else if p.v1_spike() || p.v2_revenue_minor != p.recompute_revenue_minor {
                Some(Status::Warn)
            } else {
                None
            };
            t.push_flagged(
                vec![
                    Cell::Date(p.business_date),
                    p.v1_revenue_minor.map_or_else(|| Cell::Text("not run".into()), money),
                    money(p.v2_revenue_minor),
                    money(p.recompute_revenue_minor),
                    Cell::Text(p.marks()),
                    Cell::Repeat(self.country.clone()),
                ],
                flag,
            );
        }
        t
    }
}

/// `recount trend`: every country's series, from the lab now.
pub fn trend(lab: &crate::lake::Lab) -> color_eyre::eyre::Result<TrendReport> {
    crate::recompute::ensure_cached(lab)?;
    Ok(TrendReport::from_rows(&lab.store().date_summaries()?, &lab.store().landed_uploads()?))
}

/// Every country's series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TrendReport {
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
                v1_revenue_minor: r.v1_ran.then_some(r.v1_revenue_minor),
                v2_revenue_minor: r.v2_revenue_minor,
                recompute_revenue_minor: r.recompute_revenue_minor,
                v2_explained: r.v2_explained(),
            });
        }
        let series = by
            .into_iter()
            .map(|((country, currency), mut points)| {
                points.sort_by_key(|p| p.business_date);
                TrendSeries { country, currency, points }
            })
            .collect();
        TrendReport { series }
    }

    /// The countries the series cover, in order.
    pub fn countries(&self) -> Vec<String> {
        let mut c: Vec<String> = self.series.iter().map(|s| s.country.clone()).collect();
        c.dedup();
        c
    }

    /// Only the named country's series (every one with None).
    pub fn only(mut self, country: Option<&str>) -> TrendReport {
        if let Some(c) = country {
            self.series.retain(|s| s.country.eq_ignore_ascii_case(c));
        }
        self
    }
}

impl Report for TrendReport {
    fn kind(&self) -> &'static str {
        "trend"
    }
    fn headline(&self) -> String {
        "revenue per business date and country: v1 (every run), v2 gold and the recompute".into()
    }

    fn tables(&self) -> Vec<Table> {
        self.series.iter().map(TrendSeries::table).collect()
    }

    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        for s in &self.series {
            let spikes = s.spikes();
            if !spikes.is_empty() {
                let dates: Vec<String> = spikes.iter().map(|d| d.to_string()).collect();
                notes.push(Note {
                    status: Status::Warn,
                    text: format!("{}: v1 spikes on {} (v1 ran again and counted the day twice)", s.country, dates.join(", ")),
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
