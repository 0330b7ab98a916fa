//! A model lab's date record by record: its records past the window (`late`), and its keys
//! sent more than once, every copy in the contract's order with the winner (`baskets`, whose
//! entities are the model's).

use super::model::measure_cells;
use super::model_day::columns;
use super::{Cell, Report, Table};
use crate::lake::Lab;
use crate::lake::model::named;
use crate::model::Model;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

/// A date's records that arrived past its window (`late DATE` on a model lab).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelLateReport {
    pub model: Model,
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub rows: Vec<LateLine>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LateLine {
    pub entity_key: String,
    pub upload_date: NaiveDate,
    pub days_late: i64,
    pub file: String,
    pub line: i32,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub measures: Vec<i64>,
    /// The key has a copy inside a window: gold counts it from that copy.
    pub counted: bool,
}

pub fn late(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32) -> Result<ModelLateReport> {
    let rows = lab
        .store()
        .model_late_rows(d, late_days, None)?
        .into_iter()
        .map(|r| LateLine {
            entity_key: r.entity_key,
            upload_date: r.upload_date,
            days_late: r.days_late,
            file: format!("{} v{}", r.file, r.version),
            line: r.line,
            grain: named(&model.grain, [r.g1, r.g2, r.g3, r.g4]),
            attributes: named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]),
            measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
            counted: r.counted,
        })
        .collect();
    Ok(ModelLateReport { model: model.clone(), business_date: d, late_days, rows })
}

impl Report for ModelLateReport {
    fn kind(&self) -> &'static str {
        "late"
    }
    fn business_date(&self) -> Option<NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("{}: {} record(s) past the {}-day window", self.business_date, self.rows.len(), self.late_days)
    }
    fn tables(&self) -> Vec<Table> {
        let cols = columns(&self.model, &["entity_key", "upload_date", "days_late", "file", "line"], &["in_gold"]);
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new(format!("records of {} that arrived past the window", self.business_date), &refs);
        for r in &self.rows {
            let mut row = vec![
                Cell::text(&r.entity_key),
                Cell::Date(r.upload_date),
                Cell::Int(r.days_late),
                Cell::text(&r.file),
                Cell::Int(r.line.into()),
            ];
            row.extend(r.grain.iter().map(Cell::text));
            row.extend(measure_cells(&self.model, &r.attributes, &r.measures));
            row.push(if r.counted {
                Cell::Term { text: "from another copy".into(), key: "counted".into() }
            } else {
                Cell::Term { text: "never".into(), key: "never".into() }
            });
            t.push(row);
        }
        vec![t]
    }
}

/// A date's keys sent more than once, every copy with the winner (`baskets DATE` on a model lab).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ResentReport {
    pub model: Model,
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub copies: Vec<ResentLine>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ResentLine {
    pub entity_key: String,
    pub business_date: NaiveDate,
    pub upload_date: NaiveDate,
    pub file: String,
    pub line: i32,
    pub event_id: String,
    pub arrived: String,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub measures: Vec<i64>,
    pub won: bool,
}

pub fn resent(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32) -> Result<ResentReport> {
    let copies = lab
        .store()
        .model_resent(d, late_days)?
        .into_iter()
        .map(|r| ResentLine {
            entity_key: r.entity_key,
            business_date: r.business_date,
            upload_date: r.upload_date,
            file: format!("{} v{}", r.file, r.version),
            line: r.line,
            event_id: r.event_id,
            arrived: r.arrived,
            grain: named(&model.grain, [r.g1, r.g2, r.g3, r.g4]),
            attributes: named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]),
            measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
            won: r.won,
        })
        .collect();
    Ok(ResentReport { model: model.clone(), business_date: d, late_days, copies })
}

impl Report for ResentReport {
    fn kind(&self) -> &'static str {
        "baskets"
    }
    fn business_date(&self) -> Option<NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        let keys = self.copies.iter().filter(|c| c.won).count();
        format!("{}: {keys} {} key(s) sent more than once, {} copies", self.business_date, self.model.entity, self.copies.len())
    }
    fn tables(&self) -> Vec<Table> {
        let cols =
            columns(&self.model, &["entity_key", "business_date", "upload_date", "file", "line", "event_id", "arrived"], &["verdict"]);
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new(format!("copies of each key of {}, first arrival first", self.business_date), &refs);
        for c in &self.copies {
            let mut row = vec![
                Cell::Repeat(c.entity_key.clone()),
                Cell::Date(c.business_date),
                Cell::Date(c.upload_date),
                Cell::text(&c.file),
                Cell::Int(c.line.into()),
                Cell::text(&c.event_id),
                Cell::text(&c.arrived),
            ];
            row.extend(c.grain.iter().map(Cell::text));
            row.extend(measure_cells(&self.model, &c.attributes, &c.measures));
            row.push(if c.won {
                Cell::Term { text: "wins: the first arrival".into(), key: "won".into() }
            } else {
                Cell::Term { text: "a copy, not counted".into(), key: "lost".into() }
            });
            t.push(row);
        }
        vec![t]
    }
}
