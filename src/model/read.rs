//! One line of a model's feed, read and checked as the contract reads a POS event: required
//! fields, ISO-8601 instants (second 60 refused), the arrival in its partition, the dimension's
//! key known, integers exact and sums checked for overflow, then the model's own checks. A line
//! that breaks a rule gets a reason, which names the rule.

use super::{Model, Rule};
use crate::sanitize::for_terminal;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde_json::Value;
use std::collections::HashMap;

/// One row of a model's dimension: its time zone and the attributes carried into gold.
#[derive(Debug, Clone, PartialEq)]
pub struct DimensionRow {
    pub timezone: Tz,
    pub attributes: Vec<String>,
}

/// A model's dimension file, by key; empty for a model that reads its business date as-is.
#[derive(Debug, Clone, Default)]
pub struct DimensionTable {
    pub rows: HashMap<String, DimensionRow>,
}

impl DimensionTable {
    /// Reads the dimension CSV: its key, its time zone column and the model's attributes.
    pub fn parse(model: &Model, text: &str) -> Result<DimensionTable> {
        let Some(d) = &model.dimension else { return Ok(DimensionTable::default()) };
        let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let header: Vec<String> =
            reader.headers().wrap_err_with(|| format!("{}: its header", d.file))?.iter().map(str::to_string).collect();
        let col = |name: &str| {
            header.iter().position(|h| h == name).ok_or_else(|| eyre!("{}: no column {:?} (it has: {})", d.file, name, header.join(", ")))
        };
        let key = col(&d.key)?;
        let tz = col(&d.timezone)?;
        let attrs: Vec<usize> = model.attributes.iter().map(|a| col(a)).collect::<Result<_>>()?;
        let mut rows = HashMap::new();
        for (i, rec) in reader.records().enumerate() {
            let rec = rec.wrap_err_with(|| format!("{}: line {}", d.file, i + 2))?;
            let id = rec.get(key).unwrap_or("").to_string();
            let zone = crate::tz::parse_zone(rec.get(tz).unwrap_or("")).map_err(|e| eyre!("{}: line {}: {e}", d.file, i + 2))?;
            if id.is_empty() {
                bail!("{}: line {}: an empty {}", d.file, i + 2, d.key);
            }
            let attributes = attrs.iter().map(|&c| rec.get(c).unwrap_or("").to_string()).collect();
            if rows.insert(id.clone(), DimensionRow { timezone: zone, attributes }).is_some() {
                bail!("{}: {} {:?} is listed twice", d.file, d.key, for_terminal(&id));
            }
        }
        Ok(DimensionTable { rows })
    }
}

/// A line as a model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub key: String,
    pub event_id: String,
    /// When the event happened (an audit dates it in UTC to test that bug).
    pub event_time: DateTime<Utc>,
    pub arrival: DateTime<Utc>,
    pub business_date: NaiveDate,
    /// The grain's values, then the attributes'.
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    /// Each measure's value for this one entity: 1 for a count.
    pub measures: Vec<i64>,
}

fn at<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

fn text<'v>(v: &'v Value, path: &str) -> Result<&'v str, String> {
    match at(v, path) {
        None | Some(Value::Null) => Err(format!("missing required field {path}")),
        Some(Value::String(s)) if s.is_empty() => Err(format!("empty required field {path}")),
        Some(Value::String(s)) if s.len() > crate::raw::MAX_ID_BYTES => {
            Err(format!("{path} of {} bytes, longer than the {} recount keeps", s.len(), crate::raw::MAX_ID_BYTES))
        }
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("{path} is not a string")),
    }
}

/// An integer field: JSON integers only (no fraction, no exponent), within 64 bits.
fn integer(v: &Value, path: &str) -> Result<i64, String> {
    match at(v, path) {
        None | Some(Value::Null) => Err(format!("missing required field {path}")),
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| format!("{path} {n} is not an integer within 64 bits")),
        Some(_) => Err(format!("{path} is not an integer")),
    }
}

/// A measure's value for one line: 1 for a count, the field, or the sum over a list.
fn measure_value(v: &Value, of: &str) -> Result<i64, String> {
    if of == "count" {
        return Ok(1);
    }
    let Some((list, field)) = of.split_once("[].") else { return integer(v, of) };
    let items = match at(v, list) {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(format!("{list} is empty")),
        None | Some(Value::Null) => return Err(format!("missing required field {list}")),
        Some(_) => return Err(format!("{list} is not a list")),
    };
    let mut sum: i64 = 0;
    for (i, item) in items.iter().enumerate() {
        let n = integer(item, field).map_err(|e| format!("{list} {}: {e}", i + 1))?;
        sum = sum.checked_add(n).ok_or_else(|| format!("{list} {}: the sum of {field} overflows 64 bits", i + 1))?;
    }
    Ok(sum)
}

/// Reads one line with `model`: a record, or the reason it is quarantined.
pub fn read_line(model: &Model, dims: &DimensionTable, line: &str, upload_date: NaiveDate) -> Result<Record, String> {
    if line.len() > crate::raw::MAX_LINE_BYTES {
        return Err(format!("line of {} bytes, longer than the {} recount parses", line.len(), crate::raw::MAX_LINE_BYTES));
    }
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not one JSON object: {e}"))?;
    if !v.is_object() {
        return Err("not one JSON object".into());
    }
    let event_id = text(&v, &model.event_id)?.to_string();
    let key = text(&v, &model.key)?.to_string();
    let mut grain = Vec::with_capacity(model.grain.len());
    for g in &model.grain {
        grain.push(text(&v, g)?.to_string());
    }
    let event_time = crate::raw::event::instant(text(&v, &model.event_time)?, &model.event_time)?;
    let arrival = crate::raw::event::instant(text(&v, &model.arrival_time)?, &model.arrival_time)?;
    let mut measures = Vec::with_capacity(model.measures.len());
    for m in &model.measures {
        measures.push(measure_value(&v, &m.of)?);
    }
    for c in &model.checks {
        let broken = match c.parse().map_err(|e| e.to_string())? {
            Rule::NonNegative(f) => integer(&v, &f)? < 0,
            Rule::AtMost(a, b) => integer(&v, &a)? > integer(&v, &b)?,
        };
        if broken {
            return Err(format!("breaks check {} ({})", c.name, c.rule));
        }
    }
    let (business_date, attributes) = match (&model.dimension, &model.business_date) {
        (Some(d), _) => {
            let id = text(&v, &d.key)?;
            let row = dims.rows.get(id).ok_or_else(|| format!("unknown {} '{}'", d.key, for_terminal(id)))?;
            (crate::tz::business_date(event_time, row.timezone), row.attributes.clone())
        }
        (None, Some(field)) => {
            let s = text(&v, field)?;
            (
                NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| format!("{field} '{}' is not a date YYYY-MM-DD", for_terminal(s)))?,
                Vec::new(),
            )
        }
        (None, None) => return Err("the model gives no business date".into()),
    };
    if arrival.date_naive() != upload_date {
        return Err(format!(
            "{} {} is not in partition upload_date={upload_date}",
            model.arrival_time,
            arrival.format("%Y-%m-%dT%H:%M:%S%.3fZ")
        ));
    }
    Ok(Record { key, event_id, event_time, arrival, business_date, grain, attributes, measures })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plants() -> DimensionTable {
        DimensionTable::parse(
            &super::super::manufacturing(),
            "plant_id,country,timezone\nplant-a,DE,Europe/Berlin\nplant-b,US,America/Chicago\n",
        )
        .unwrap()
    }

    fn line(units: i64, defects: i64) -> String {
        format!(
            r#"{{"event_id":"e1","record_id":"r1","plant_id":"plant-b","line_id":"line-1","product_id":"gearbox-a","produced_at":"2026-06-30T03:30:00Z","uploaded_at":"2026-06-30T04:00:00Z","units":{units},"defects":{defects}}}"#
        )
    }

    #[test]
    fn a_record_is_dated_in_its_plant_s_zone_and_its_measures_are_read() {
        let m = super::super::manufacturing();
        let up = NaiveDate::from_ymd_opt(2026, 6, 30).unwrap();
        let r = read_line(&m, &plants(), &line(15, 1), up).unwrap();
        // 03:30 UTC is 22:30 the evening before in Chicago (UTC-5 in summer).
        assert_eq!(r.business_date, NaiveDate::from_ymd_opt(2026, 6, 29).unwrap());
        assert_eq!(r.grain, ["plant-b", "line-1", "gearbox-a"]);
        assert_eq!(r.measures, [1, 15, 1]);
    }

    #[test]
    fn a_line_that_breaks_a_rule_is_refused_with_the_rule_s_name() {
        let m = super::super::manufacturing();
        let up = NaiveDate::from_ymd_opt(2026, 6, 30).unwrap();
        assert!(read_line(&m, &plants(), &line(2, 3), up).unwrap_err().contains("defects_within_units"));
        assert!(read_line(&m, &plants(), &line(-1, 0), up).unwrap_err().contains("units_non_negative"));
        assert!(
            read_line(&m, &plants(), &line(10, 0).replace("plant-b", "plant-z"), up).unwrap_err().contains("unknown plant_id 'plant-z'")
        );
        assert!(
            read_line(&m, &plants(), &line(10, 0).replace("\"units\":10", "\"units\":1.5"), up).unwrap_err().contains("not an integer")
        );
        assert!(read_line(&m, &plants(), &line(10, 0), up.succ_opt().unwrap()).unwrap_err().contains("not in partition"));
        assert!(read_line(&m, &plants(), &line(10, 0).replace("03:30:00Z", "23:59:60Z"), up).unwrap_err().contains("leap second"));
    }
}
