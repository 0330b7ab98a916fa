//! Row listings: rows beyond the window, and quarantined lines.

use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use crate::model::Model;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

pub use crate::store::{LateRow, QuarantineRow};

/// A record outside its date's window, in its model's words (retail's: a basket's copy).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LateLine {
    pub business_date: NaiveDate,
    pub upload_date: NaiveDate,
    pub days_late: i64,
    pub entity_key: String,
    pub event_id: String,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub measures: Vec<i64>,
    pub file: String,
    pub line: i64,
    /// Its key has no copy inside a window: the recount counts it, v2 does not.
    pub missing_from_v2: bool,
    /// The copy of its key the recount counts (the first in the contract's order).
    pub recompute_copy: bool,
}

/// `late [DATE]` on any lab: the records past their date's window, or future-dated.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LateReport {
    #[serde(skip)]
    pub model: Model,
    pub business_date: Option<NaiveDate>,
    pub late_days: u32,
    pub rows: Vec<LateLine>,
}

/// `d`'s rows outside the window on a retail lab (none: every date's), each by its date's window
/// (a reopened date's wider one).
pub fn late(lab: &Lab, d: Option<NaiveDate>, late_days: u32) -> Result<LateReport> {
    let dates = match d {
        Some(d) => vec![d],
        None => lab.store().late_dates(late_days)?,
    };
    let mut rows = Vec::new();
    let mut window = late_days;
    for day in dates {
        // A reopened date's rows are listed by its wider window.
        window = crate::lake::reopen::listing_window(lab, day, late_days)?;
        rows.extend(lab.store().late_rows(window, day)?.into_iter().map(|r| LateLine {
            business_date: r.business_date,
            upload_date: r.upload_date,
            days_late: r.days_late,
            entity_key: r.basket_id,
            event_id: r.event_id,
            grain: vec![r.store_id],
            attributes: vec![r.country, r.currency],
            measures: vec![1, r.revenue_minor],
            file: r.file,
            line: r.line,
            missing_from_v2: r.missing_from_v2,
            recompute_copy: r.recompute_copy,
        }));
    }
    let late_days = if d.is_some() { window } else { late_days };
    Ok(LateReport { model: crate::model::retail(), business_date: d, late_days, rows })
}

/// The same on a model lab: each date's `late_rows` apply its reopened window, which a date's
/// listing names, as retail's does.
pub fn model_late(lab: &Lab, model: &Model, d: Option<NaiveDate>, late_days: u32) -> Result<LateReport> {
    use crate::lake::model::named;
    let named_window = match d {
        Some(d) => crate::lake::reopen::model_listing_window(lab, d, late_days)?,
        None => late_days,
    };
    let dates = match d {
        Some(d) => vec![d],
        None => lab.store().model_late_dates(late_days)?,
    };
    let mut rows = Vec::new();
    for day in dates {
        rows.extend(lab.store().model_late_rows(day, late_days, None)?.into_iter().map(|r| LateLine {
            business_date: r.business_date,
            upload_date: r.upload_date,
            days_late: r.days_late,
            entity_key: r.entity_key,
            event_id: r.event_id,
            grain: named(&model.grain, [r.g1, r.g2, r.g3, r.g4]),
            attributes: named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]),
            measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
            file: super::model::raw_path(model, r.upload_date, &r.file),
            line: r.line.into(),
            missing_from_v2: !r.counted,
            recompute_copy: r.recount_copy,
        }));
    }
    Ok(LateReport { model: model.clone(), business_date: d, late_days: named_window, rows })
}

impl Report for LateReport {
    fn kind(&self) -> &'static str {
        "late"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        self.business_date
    }
    fn headline(&self) -> String {
        let scope = self.business_date.map(|d| format!("business date {d}")).unwrap_or_else(|| "every business date".into());
        format!("beyond the {}-day window or future-dated, {scope}: rows that never enter silver or gold", self.late_days)
    }
    fn tables(&self) -> Vec<Table> {
        let m = &self.model;
        let shown = super::model::record_measures(m);
        let missing = format!("{} missing from v2", m.entity);
        let mut cols: Vec<(String, String)> = [("business_date", "business date"), ("upload_date", "upload"), ("days_late", "days")]
            .into_iter()
            .chain([("kind", "kind"), (m.key.as_str(), m.key.as_str()), ("event_id", "event_id")])
            .map(|(k, l)| (k.to_string(), l.to_string()))
            .collect();
        cols.extend(m.grain.iter().map(|g| (g.clone(), g.clone())));
        cols.extend(
            shown
                .iter()
                .map(|&i| (super::model::measure_key(&m.measures[i], None), super::model::measure_label(&m.measures[i]).to_string())),
        );
        cols.extend(
            [("missing_from_v2", missing.as_str()), ("recompute_copy", "copy counted"), ("file", "file"), ("line", "line")]
                .map(|(k, l)| (k.to_string(), l.to_string())),
        );
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("", &refs);
        for r in &self.rows {
            let mut row = vec![
                Cell::Date(r.business_date),
                Cell::Date(r.upload_date),
                Cell::Int(r.days_late),
                Cell::text(crate::rules::outside_window_word(crate::rules::future_dated(r.upload_date, r.business_date))),
                Cell::text(&r.entity_key),
                Cell::text(&r.event_id),
            ];
            row.extend(r.grain.iter().map(Cell::text));
            let cells = super::model::measure_cells(m, &r.attributes, &r.measures);
            row.extend(shown.iter().map(|&i| cells[i].clone()));
            row.extend([
                Cell::text(if r.missing_from_v2 { "yes" } else { "no" }),
                Cell::text(if r.recompute_copy { "this copy" } else { "another copy" }),
                Cell::text(&r.file),
                Cell::Int(r.line),
            ]);
            t.push(row);
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let future = self.rows.iter().filter(|r| crate::rules::future_dated(r.upload_date, r.business_date)).count();
        let mut notes = vec![Note { status: Status::Info, text: format!("{} row(s) outside the window", self.rows.len()) }];
        if future > 0 {
            notes.push(Note {
                status: Status::Warn,
                text: format!(
                    "{future} of them future-dated (clock error?): dated after their upload's next day, so not sold yet when they arrived"
                ),
            });
        }
        notes.extend(self.missing().into_iter().map(|text| Note { status: Status::Warn, text }));
        notes
    }
}

impl LateReport {
    /// The explorer's title of a date's rows (every lab's Late screen).
    pub fn title(&self) -> String {
        let scope = self.business_date.map_or_else(|| "every date".to_string(), |d| d.to_string());
        format!("{scope}: {} row(s) beyond the {}-day window", self.rows.len(), self.late_days)
    }

    /// What the recount counts and v2 does not: the keys, and each money measure's amount, per
    /// currency ("3 basket(s), £12.00 in the recompute and not in v2").
    fn missing(&self) -> Vec<String> {
        let m = &self.model;
        let counted: Vec<&LateLine> = self.rows.iter().filter(|r| r.missing_from_v2 && r.recompute_copy).collect();
        let money: Vec<usize> = (0..m.measures.len()).filter(|&i| m.measures[i].currency.is_some()).collect();
        if money.is_empty() {
            return (!counted.is_empty())
                .then(|| format!("{} {}(s) in the recompute and not in v2", counted.len(), m.entity))
                .into_iter()
                .collect();
        }
        let mut by_currency: std::collections::BTreeMap<(usize, &str), (i64, i128)> = Default::default();
        for r in &counted {
            for &i in &money {
                let currency = super::model::currency_of(m, i, &r.attributes).unwrap_or("");
                let e = by_currency.entry((i, currency)).or_default();
                e.0 += 1;
                e.1 += i128::from(r.measures[i]);
            }
        }
        let amount =
            |v: i128, cur: &str| i64::try_from(v).map_or_else(|_| format!("{v} {cur} minor units"), |v| crate::money::format_major(v, cur));
        by_currency
            .into_iter()
            .map(|((_, cur), (n, v))| format!("{n} {}(s), {} in the recompute and not in v2", m.entity, amount(v, cur)))
            .collect()
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct QuarantineReport {
    pub upload_date: Option<NaiveDate>,
    /// Every refused line; `rows` keeps a file's first thousand and one row that counts the rest.
    pub lines: i64,
    pub rows: Vec<QuarantineRow>,
}

/// The lines landings refused, of every model: a file is named by its path in the raw zone.
pub fn quarantine(lab: &Lab, upload: Option<NaiveDate>) -> Result<QuarantineReport> {
    let Some(model) = crate::lake::model::lab_model(lab)? else {
        let lines = lab.store().quarantined_lines(upload)?;
        return Ok(QuarantineReport { upload_date: upload, lines, rows: lab.store().quarantine_rows(upload)? });
    };
    let rows = lab
        .store()
        .model_quarantine()?
        .into_iter()
        .filter(|q| upload.is_none_or(|u| q.upload_date == u))
        .map(|q| QuarantineRow {
            file: super::model::raw_path(&model, q.upload_date, &q.file),
            upload_date: q.upload_date,
            line: q.line.into(),
            reason: q.reason,
            raw_line: q.raw_line,
        })
        .collect();
    Ok(QuarantineReport { upload_date: upload, lines: lab.store().model_quarantined_lines(upload)?, rows })
}

impl Report for QuarantineReport {
    fn kind(&self) -> &'static str {
        "quarantine"
    }
    fn headline(&self) -> String {
        format!("quarantine: {} line(s) rejected at landing", crate::money::format_count(self.lines))
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new("", &[("upload_date", "upload"), ("file", "file"), ("line", "line"), ("reason", "reason")]);
        for r in &self.rows {
            t.push(vec![Cell::Date(r.upload_date), Cell::text(&r.file), Cell::Int(r.line), Cell::text(&r.reason)]);
        }
        vec![t]
    }
}
