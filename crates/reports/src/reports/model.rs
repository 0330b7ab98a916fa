//! `recount model WORLD`: the world's model checked, its parts, gold recounted from the
//! raw files with the model (its rows, or the first of them) and the contract's fingerprint,
//! and every line the model refused with file, line and reason.

use super::{Cell, Note, Report, Status, Table};
use crate::model::Model;
use crate::model::recount::{ModelRecount, fingerprint};
use color_eyre::eyre::Result;
use std::path::Path;

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelReport {
    pub model: Model,
    pub fingerprint: String,
    pub recount: ModelRecount,
    /// How many gold rows the table shows (all with `--rows 0`).
    #[serde(skip)]
    pub shown: usize,
}

/// Reads `world`'s model and recounts its gold.
pub fn model_report(world: &Path, shown: usize) -> Result<ModelReport> {
    let model = crate::model::recount::model_of(world)?;
    let recount = crate::model::recount::recount(world, &model)?;
    let fingerprint = fingerprint(&model, &recount.rows);
    Ok(ModelReport { model, fingerprint, recount, shown })
}

impl ModelReport {
    fn parts(&self) -> Table {
        let m = &self.model;
        let mut t = Table::new("the model", &[("part", "part"), ("value", "value")]);
        let dimension = match (&m.dimension, &m.business_date) {
            (Some(d), _) => format!("{} (key {}, time zone {})", d.file, d.key, d.timezone),
            (None, Some(f)) => format!("none: business date read as-is from {f}"),
            (None, None) => String::new(),
        };
        let measures: Vec<String> = m
            .measures
            .iter()
            .map(|x| match (&x.currency, x.is_count()) {
                (_, true) => format!("{} = count of {}s", x.name, m.entity),
                (Some(c), _) => format!("{} = sum of {} (money in {c})", x.name, x.of),
                (None, _) => format!("{} = sum of {}", x.name, x.of),
            })
            .collect();
        let checks: Vec<String> = m.checks.iter().map(|c| format!("{}: {}", c.name, c.rule)).collect();
        for (part, value) in [
            ("gold", format!("gold.{}", m.gold)),
            ("entity", format!("{}, business key {}", m.entity, m.key)),
            ("event / arrival time", format!("{} / {}", m.event_time, m.arrival_time)),
            ("uploads", format!("{}/upload_date=YYYY-MM-DD/*.jsonl.gz", m.events_root)),
            ("dimension", dimension),
            ("grain", format!("business_date, {}", m.grain.join(", "))),
            ("attributes", if m.attributes.is_empty() { "none".into() } else { m.attributes.join(", ") }),
            ("measures", measures.join("; ")),
            ("checks", if checks.is_empty() { "none".into() } else { checks.join("; ") }),
        ] {
            t.push(vec![Cell::text(part), Cell::text(value)]);
        }
        t
    }

    fn gold(&self) -> Table {
        let cols = self.model.gold_columns();
        let refs: Vec<(&str, &str)> = cols.iter().map(|c| (c.as_str(), c.as_str())).collect();
        let n = if self.shown == 0 { self.recount.rows.len() } else { self.shown.min(self.recount.rows.len()) };
        let mut t =
            Table::new(format!("gold.{} recounted from the raw files ({n} of {} rows)", self.model.gold, self.recount.rows.len()), &refs);
        for r in self.recount.rows.iter().take(n) {
            let mut row = vec![Cell::Date(r.business_date)];
            row.extend(r.grain.iter().map(Cell::text));
            row.extend(r.attributes.iter().map(Cell::text));
            row.extend(measure_cells(&self.model, &r.attributes, &r.measures));
            t.push(row);
        }
        t
    }
}

impl Report for ModelReport {
    fn kind(&self) -> &'static str {
        "model"
    }
    fn headline(&self) -> String {
        format!("model {}: {}", self.model.name, self.fingerprint)
    }
    fn tables(&self) -> Vec<Table> {
        let mut refused = Table::new("lines the model refused", &[("file", "file"), ("line", "line"), ("reason", "reason")]);
        for r in &self.recount.refused {
            refused.push(vec![Cell::text(&r.file), Cell::Int(r.line as i64), Cell::text(&r.reason)]);
        }
        vec![self.parts(), self.gold(), refused]
    }
    fn notes(&self) -> Vec<Note> {
        let r = &self.recount;
        vec![Note {
            status: if r.refused.is_empty() { Status::Pass } else { Status::Warn },
            text: format!(
                "{} files: {} copies read, {} {}s counted once each, {} line(s) refused",
                r.files,
                r.copies,
                r.entities,
                self.model.entity,
                r.refused.len()
            ),
        }]
    }
}

/// A measure's column for machines, on one side of a report (`v2`, `before`; none: the measure
/// alone), as retail names its own: the side first (`v2_baskets`), and a money measure's key ends in
/// `_minor`, so CSV and JSON follow it with its `_currency`, `_digits` and `_major` columns.
pub fn measure_key(m: &crate::model::Measure, side: Option<&str>) -> String {
    let name = match side {
        Some(side) => format!("{side}_{}", m.name),
        None => m.name.clone(),
    };
    if m.currency.is_some() && !name.ends_with("_minor") { format!("{name}_minor") } else { name }
}

/// A measure as people read its column: its name, a money measure's without `_minor`
/// (`revenue`).
pub fn measure_label(m: &crate::model::Measure) -> &str {
    m.name.strip_suffix("_minor").unwrap_or(&m.name)
}

/// A model lab's file as retail's reports name a file: its path in the raw zone
/// (`pos/events/upload_date=2026-10-21/tills-gb.jsonl.gz`).
pub fn raw_path(model: &Model, upload_date: chrono::NaiveDate, file: &str) -> String {
    format!("{}/upload_date={upload_date}/{file}", model.events_root)
}

/// A gold row's measures as cells: money by its currency's ISO-4217 digits (the currency is the
/// attribute the measure names), counts and sums as integers.
pub fn measure_cells(model: &Model, attributes: &[String], measures: &[i64]) -> Vec<Cell> {
    model
        .measures
        .iter()
        .zip(measures)
        .map(|(m, v)| {
            let currency = model.currency_at(m).and_then(|i| attributes.get(i));
            match currency {
                Some(c) => Cell::Money { minor: *v, currency: c.clone() },
                None => Cell::Int(*v),
            }
        })
        .collect()
}

/// The measures a summary or a trend shows, by position: a model's money measures (a controller's
/// number), else every measure.
pub fn shown_measures(model: &Model) -> Vec<usize> {
    let money: Vec<usize> = (0..model.measures.len()).filter(|&i| model.measures[i].currency.is_some()).collect();
    if money.is_empty() { (0..model.measures.len()).collect() } else { money }
}

/// The measures a listing of single records shows: a count is 1 on every record, so not those.
pub fn record_measures(model: &Model) -> Vec<usize> {
    (0..model.measures.len()).filter(|&i| !model.measures[i].is_count()).collect()
}

/// The name of the part of a date a row's attribute values fall in: the values of the attributes
/// that name a part (`part_positions` of the measures shown), joined; retail: its country; empty:
/// the model has none, and a date is one part.
pub fn part_of(model: &Model, attributes: &[String]) -> String {
    let positions = part_positions(model, &shown_measures(model));
    positions.iter().filter_map(|&i| attributes.get(i).map(String::as_str)).collect::<Vec<_>>().join(" ")
}

/// A measure's currency among a row's attribute values; None: it is no money.
pub fn currency_of<'a>(model: &Model, measure: usize, attributes: &'a [String]) -> Option<&'a str> {
    model.currency_at(&model.measures[measure]).and_then(|c| attributes.get(c)).map(String::as_str)
}

/// The attributes that name a part of a date, by position: every attribute but the currencies of
/// the measures `shown` (which ride with their amounts). Retail: its country.
pub fn part_positions(model: &Model, shown: &[usize]) -> Vec<usize> {
    let currencies: Vec<usize> = shown.iter().filter_map(|&i| model.currency_at(&model.measures[i])).collect();
    (0..model.attributes.len()).filter(|i| !currencies.contains(i)).collect()
}
