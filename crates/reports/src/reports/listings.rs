//! Row listings: rows beyond the window, and quarantined lines.

use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

pub use crate::store::{LateRow, QuarantineRow};

#[derive(Debug, Clone, serde::Serialize)]
pub struct LateReport {
    pub business_date: Option<NaiveDate>,
    pub late_days: u32,
    pub rows: Vec<LateRow>,
}

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
        rows.extend(lab.store().late_rows(window, day)?);
    }
    Ok(LateReport { business_date: d, late_days: if d.is_some() { window } else { late_days }, rows })
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
        let mut t = Table::new(
            "",
            &[
                ("business_date", "business date"),
                ("upload_date", "upload"),
                ("days_late", "days"),
                ("kind", "kind"),
                ("basket_id", "basket_id"),
                ("event_id", "event_id"),
                ("store_id", "store"),
                ("revenue_minor", "revenue"),
                ("missing_from_v2", "basket missing from v2"),
                ("recompute_copy", "copy counted"),
                ("file", "file"),
                ("line", "line"),
            ],
        );
        for r in &self.rows {
            t.push(vec![
                Cell::Date(r.business_date),
                Cell::Date(r.upload_date),
                Cell::Int(r.days_late),
                Cell::text(crate::rules::outside_window_word(crate::rules::future_dated(r.upload_date, r.business_date))),
                Cell::text(&r.basket_id),
                Cell::text(&r.event_id),
                Cell::text(&r.store_id),
                Cell::money(r.revenue_minor, &r.currency),
                Cell::text(if r.missing_from_v2 { "yes" } else { "no" }),
                Cell::text(if r.recompute_copy { "this copy" } else { "another copy" }),
                Cell::text(&r.file),
                Cell::Int(r.line),
            ]);
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let mut by_currency: std::collections::BTreeMap<&str, (i64, i64)> = Default::default();
        for r in self.rows.iter().filter(|r| r.missing_from_v2 && r.recompute_copy) {
            let e = by_currency.entry(&r.currency).or_default();
            e.0 += 1;
            e.1 += r.revenue_minor;
        }
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
        for (cur, (n, rev)) in by_currency {
            notes.push(Note {
                status: Status::Warn,
                text: format!("{n} basket(s), {} in the recompute and not in v2", crate::money::format_major(rev, cur)),
            });
        }
        notes
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
            file: format!("{}/upload_date={}/{}", model.events_root, q.upload_date, q.file),
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
