//! One line of a model's feed, read and checked as the contract reads a POS event: required
//! fields, ISO-8601 instants (second 60 refused), the arrival in its partition, the dimension's
//! key known, integers exact and sums checked for overflow, then the model's own checks. A line
//! that breaks a rule gets a reason, which names the rule.

use super::json::{Json, Lookup, at};
use super::{Model, Rule};
use crate::raw::fast_line::JsonReader;
use crate::sanitize::for_terminal;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::borrow::Cow;
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

/// A field's value as the rules read it: the same from the fast reader and from serde_json.
#[derive(Debug, Clone, PartialEq)]
enum Slot<'l> {
    /// Absent, or null.
    Missing,
    Str(Cow<'l, str>),
    Int(i64),
    /// A number that is not an integer within 64 bits, as serde_json writes it.
    Number(String),
    /// A list's elements, each as its summed field's value.
    Items(Vec<Slot<'l>>),
    /// Any other kind of value (a bool, an object, a list where a scalar was wanted).
    Other,
    /// A key on the field's path given twice in one object: which copy was meant is unknown, so
    /// the line is refused when the field is read (retail refuses a tender's amount given twice).
    Twice,
}

/// What the model reads from a line: a field, or the sum of a field over a list's elements.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Want {
    Field(String),
    Sum { list: String, field: String },
}

/// A parsed check, by the slots it compares.
enum SlotRule {
    NonNegative(usize),
    AtMost(usize, usize),
    NotEmpty(usize),
}

/// How a measure's value is had: 1 for a count, else its slot.
enum MeasureSlot {
    Count,
    Field(usize),
    Sum(usize),
}

/// A model made ready to read lines: its checks parsed once, each field it reads given a slot,
/// and, when every field is at the top of the object, the fast reader's map of those keys.
pub struct LineReader<'a> {
    model: &'a Model,
    dims: &'a DimensionTable,
    wants: Vec<Want>,
    event_id: usize,
    key: usize,
    grain: Vec<usize>,
    event_time: usize,
    arrival: usize,
    measures: Vec<MeasureSlot>,
    rules: Vec<(SlotRule, &'a super::Check)>,
    dated_by: usize,
    /// Each top-level key the fast reader looks for and its slot; None: a nested path, which
    /// serde_json reads.
    top: Option<Vec<(String, usize)>>,
}

impl<'a> LineReader<'a> {
    pub fn new(model: &'a Model, dims: &'a DimensionTable) -> Result<LineReader<'a>> {
        let mut wants = Vec::new();
        let field = |p: &str| Want::Field(p.to_string());
        let event_id = slot(&mut wants, field(&model.event_id));
        let key = slot(&mut wants, field(&model.key));
        let grain = model.grain.iter().map(|g| slot(&mut wants, field(g))).collect();
        let event_time = slot(&mut wants, field(&model.event_time));
        let arrival = slot(&mut wants, field(&model.arrival_time));
        let measures = model
            .measures
            .iter()
            .map(|m| match m.of.split_once("[].") {
                _ if m.is_count() => MeasureSlot::Count,
                Some((list, f)) => MeasureSlot::Sum(slot(&mut wants, Want::Sum { list: list.into(), field: f.into() })),
                None => MeasureSlot::Field(slot(&mut wants, field(&m.of))),
            })
            .collect();
        let mut rules = Vec::new();
        for c in &model.checks {
            let r = match c.parse()? {
                Rule::NonNegative(f) => SlotRule::NonNegative(slot(&mut wants, field(&f))),
                Rule::AtMost(a, b) => SlotRule::AtMost(slot(&mut wants, field(&a)), slot(&mut wants, field(&b))),
                // The list's slot: a sum's over it when a measure has one, else its own.
                Rule::NotEmpty(list) => SlotRule::NotEmpty(list_slot(&mut wants, &list)),
            };
            rules.push((r, c));
        }
        let dated_by = match (&model.dimension, &model.business_date) {
            (Some(d), _) => slot(&mut wants, field(&d.key)),
            (None, Some(f)) => slot(&mut wants, field(f)),
            (None, None) => bail!("the model gives no business date"),
        };
        let top = top_level(&wants);
        Ok(LineReader { model, dims, wants, event_id, key, grain, event_time, arrival, measures, rules, dated_by, top })
    }

    /// Reads one line: a record, or the reason it is quarantined.
    pub fn read(&self, line: &str, upload_date: NaiveDate) -> Result<Record, String> {
        self.read_with(line, upload_date, |v| Record::from(v))
    }

    /// Reads one line and hands its view to `f`: `f`'s answer, or the reason the line is
    /// quarantined.
    pub fn read_with<T>(&self, line: &str, upload_date: NaiveDate, f: impl FnOnce(RecordView<'_>) -> T) -> Result<T, String> {
        if line.len() > crate::raw::MAX_LINE_BYTES {
            return Err(format!("line of {} bytes, longer than the {} recount parses", line.len(), crate::raw::MAX_LINE_BYTES));
        }
        match self.top.as_deref().and_then(|top| fast_slots(line, top, &self.wants)) {
            Some(slots) => self.view(&slots, upload_date).map(f),
            None => self.view(&self.careful_slots(line)?, upload_date).map(f),
        }
    }

    /// The slots as serde_json reads the line: the reader of every line the fast one leaves.
    /// Objects keep their keys as written, so a key given twice on a field's path is seen.
    fn careful_slots(&self, line: &str) -> Result<Vec<Slot<'static>>, String> {
        let v: Json = serde_json::from_str(line).map_err(|e| format!("not one JSON object: {e}"))?;
        if !matches!(v, Json::Object(_)) {
            return Err("not one JSON object".into());
        }
        let scalar = |v: Lookup<'_>| match v {
            Lookup::Twice => Slot::Twice,
            Lookup::No | Lookup::One(Json::Null) => Slot::Missing,
            Lookup::One(Json::String(s)) => Slot::Str(Cow::Owned(s.clone())),
            Lookup::One(Json::Number(n)) => n.as_i64().map_or_else(|| Slot::Number(n.to_string()), Slot::Int),
            Lookup::One(_) => Slot::Other,
        };
        Ok(self
            .wants
            .iter()
            .map(|w| match w {
                Want::Field(p) => scalar(at(&v, p)),
                Want::Sum { list, field } => match at(&v, list) {
                    Lookup::Twice => Slot::Twice,
                    Lookup::No | Lookup::One(Json::Null) => Slot::Missing,
                    Lookup::One(Json::Array(a)) => Slot::Items(a.iter().map(|item| scalar(at(item, field))).collect()),
                    Lookup::One(_) => Slot::Other,
                },
            })
            .collect())
    }

    /// The contract's rules on a line's slots, in the order a line's faults are named: the line
    /// as a view of the slots' text.
    fn view<'s>(&'s self, s: &'s [Slot<'_>], upload_date: NaiveDate) -> Result<RecordView<'s>, String> {
        let path = |i: usize| match &self.wants[i] {
            Want::Field(p) => p.as_str(),
            Want::Sum { list, .. } => list.as_str(),
        };
        let text = |i: usize| text(&s[i], path(i));
        let integer = |i: usize| integer(&s[i], path(i));
        let m = self.model;
        let event_id = text(self.event_id)?;
        let key = text(self.key)?;
        let mut grain = Vec::with_capacity(self.grain.len());
        for &g in &self.grain {
            grain.push(text(g)?);
        }
        let event_time = crate::raw::event::instant(text(self.event_time)?, &m.event_time)?;
        let arrival = crate::raw::event::instant(text(self.arrival)?, &m.arrival_time)?;
        let mut measures = Vec::with_capacity(self.measures.len());
        for ms in &self.measures {
            measures.push(match *ms {
                MeasureSlot::Count => 1,
                MeasureSlot::Field(i) => integer(i)?,
                MeasureSlot::Sum(i) => sum(&s[i], &self.wants[i])?,
            });
        }
        for (rule, c) in &self.rules {
            let broken = match *rule {
                SlotRule::NonNegative(f) => integer(f)? < 0,
                SlotRule::AtMost(a, b) => integer(a)? > integer(b)?,
                SlotRule::NotEmpty(i) => match &s[i] {
                    Slot::Items(a) => a.is_empty(),
                    Slot::Twice => return Err(format!("{} is given twice", path(i))),
                    Slot::Missing => return Err(format!("missing required field {}", path(i))),
                    _ => return Err(format!("{} is not a list", path(i))),
                },
            };
            if broken {
                return Err(format!("breaks check {} ({})", c.name, c.rule));
            }
        }
        let by = text(self.dated_by)?;
        let (business_date, attributes): (NaiveDate, &[String]) = match &m.dimension {
            Some(d) => {
                let row = self.dims.rows.get(by).ok_or_else(|| format!("unknown {} '{}'", d.key, for_terminal(by)))?;
                (crate::tz::business_date(event_time, row.timezone), &row.attributes)
            }
            None => (
                crate::raw::strict_date(by)
                    .ok_or_else(|| format!("{} '{}' is not a date YYYY-MM-DD", path(self.dated_by), for_terminal(by)))?,
                &[],
            ),
        };
        if arrival.date_naive() != upload_date {
            return Err(format!(
                "{} {} is not in partition upload_date={upload_date}",
                m.arrival_time,
                arrival.format("%Y-%m-%dT%H:%M:%S%.3fZ")
            ));
        }
        Ok(RecordView { key, event_id, event_time, arrival, business_date, grain, attributes, measures })
    }
}

/// The slot of what a reader wants, shared with an equal want before it.
fn slot(wants: &mut Vec<Want>, w: Want) -> usize {
    match wants.iter().position(|x| *x == w) {
        Some(i) => i,
        None => {
            wants.push(w);
            wants.len() - 1
        }
    }
}

/// The slot that holds a list: a sum's over it when a measure has one (so the fast reader still
/// finds each key once), else one of its own.
fn list_slot(wants: &mut Vec<Want>, list: &str) -> usize {
    match wants.iter().position(|w| matches!(w, Want::Sum { list: l, .. } if l == list)) {
        Some(i) => i,
        None => slot(wants, Want::Sum { list: list.to_string(), field: String::new() }),
    }
}

/// A line as a model reads it, borrowed from the line: what a landing copies into bronze's
/// columns without a string of its own per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView<'s> {
    pub key: &'s str,
    pub event_id: &'s str,
    pub event_time: DateTime<Utc>,
    pub arrival: DateTime<Utc>,
    pub business_date: NaiveDate,
    pub grain: Vec<&'s str>,
    pub attributes: &'s [String],
    pub measures: Vec<i64>,
}

impl From<RecordView<'_>> for Record {
    fn from(v: RecordView<'_>) -> Record {
        Record {
            key: v.key.to_string(),
            event_id: v.event_id.to_string(),
            event_time: v.event_time,
            arrival: v.arrival,
            business_date: v.business_date,
            grain: v.grain.into_iter().map(str::to_string).collect(),
            attributes: v.attributes.to_vec(),
            measures: v.measures,
        }
    }
}

/// The fast reader's map of top-level keys to slots, when every field is a top-level key (a
/// list's summed field a key of its elements) and no key serves two slots.
fn top_level(wants: &[Want]) -> Option<Vec<(String, usize)>> {
    let mut top: Vec<(String, usize)> = Vec::new();
    for (i, w) in wants.iter().enumerate() {
        let (name, inner) = match w {
            Want::Field(p) => (p, None),
            Want::Sum { list, field } => (list, Some(field)),
        };
        if name.contains('.') || inner.is_some_and(|f| f.contains('.')) || top.iter().any(|(k, _)| k == name) {
            return None;
        }
        top.push((name.clone(), i));
    }
    Some(top)
}

/// The slots of a line in the common shape, read without serde_json; None when anything is
/// unusual (see `raw::fast_line`), and serde_json decides.
fn fast_slots<'l>(line: &'l str, top: &[(String, usize)], wants: &[Want]) -> Option<Vec<Slot<'l>>> {
    let mut r = JsonReader::new(line);
    let mut slots = vec![Slot::Missing; wants.len()];
    let mut seen = vec![false; wants.len()];
    r.ws();
    r.object(|r, key| {
        let Some(&(_, i)) = top.iter().find(|(k, _)| k == key) else { return r.skip_value(0) };
        if std::mem::replace(&mut seen[i], true) {
            return None; // a duplicate key: serde_json keeps the last, so it decides
        }
        slots[i] = match &wants[i] {
            Want::Field(_) => fast_scalar(r)?,
            Want::Sum { field, .. } => match r.peek()? {
                b'[' => {
                    let mut items = Vec::new();
                    r.array(|r| {
                        items.push(if r.peek()? == b'{' { fast_item(r, field)? } else { r.skip_value(1).map(|_| Slot::Missing)? });
                        Some(())
                    })?;
                    Slot::Items(items)
                }
                _ => fast_scalar(r).map(|s| if s == Slot::Missing { s } else { Slot::Other })?,
            },
        };
        Some(())
    })?;
    r.ws();
    r.at_end().then_some(slots)
}

/// A list element's summed field.
fn fast_item<'l>(r: &mut JsonReader<'l>, field: &str) -> Option<Slot<'l>> {
    let (mut out, mut seen) = (Slot::Missing, false);
    r.object(|r, key| {
        if key != field {
            return r.skip_value(2);
        }
        if std::mem::replace(&mut seen, true) {
            return None;
        }
        out = fast_scalar(r)?;
        Some(())
    })?;
    Some(out)
}

/// A value as a slot: a plain string or integer, null, or another kind (skipped, but checked).
fn fast_scalar<'l>(r: &mut JsonReader<'l>) -> Option<Slot<'l>> {
    match r.peek()? {
        b'"' => r.plain_string().map(|s| Slot::Str(Cow::Borrowed(s))),
        b'0'..=b'9' => r.int().map(Slot::Int),
        b'n' if r.null() => Some(Slot::Missing),
        b'{' | b'[' | b't' | b'f' => r.skip_value(1).map(|_| Slot::Other),
        _ => None,
    }
}

fn text<'s>(v: &'s Slot<'_>, path: &str) -> Result<&'s str, String> {
    match v {
        Slot::Twice => Err(format!("{path} is given twice")),
        Slot::Missing => Err(format!("missing required field {path}")),
        Slot::Str(s) if s.is_empty() => Err(format!("empty required field {path}")),
        Slot::Str(s) if s.len() > crate::raw::MAX_ID_BYTES => {
            Err(format!("{path} of {} bytes, longer than the {} recount keeps", s.len(), crate::raw::MAX_ID_BYTES))
        }
        Slot::Str(s) => Ok(s),
        _ => Err(format!("{path} is not a string")),
    }
}

/// An integer field: JSON integers only (no fraction, no exponent), within 64 bits.
fn integer(v: &Slot<'_>, path: &str) -> Result<i64, String> {
    match v {
        Slot::Twice => Err(format!("{path} is given twice")),
        Slot::Missing => Err(format!("missing required field {path}")),
        Slot::Int(n) => Ok(*n),
        Slot::Number(n) => Err(format!("{path} {n} is not an integer within 64 bits")),
        _ => Err(format!("{path} is not an integer")),
    }
}

/// The sum of a field over a list's elements, checked for overflow.
fn sum(v: &Slot<'_>, want: &Want) -> Result<i64, String> {
    let Want::Sum { list, field } = want else { return Err("not a sum".into()) };
    // A sum over an empty list is 0, as a SQL sum over no rows (the contract's section 7); a
    // model that must refuse an empty list declares the check `LIST[] not empty`.
    let items = match v {
        Slot::Items(a) => a,
        Slot::Twice => return Err(format!("{list} is given twice")),
        Slot::Missing => return Err(format!("missing required field {list}")),
        _ => return Err(format!("{list} is not a list")),
    };
    let mut total: i64 = 0;
    for (i, item) in items.iter().enumerate() {
        let n = integer(item, field).map_err(|e| format!("{list} {}: {e}", i + 1))?;
        total = total.checked_add(n).ok_or_else(|| format!("{list} {}: the sum of {field} overflows 64 bits", i + 1))?;
    }
    Ok(total)
}

/// Reads one line with `model` (a reader made for the one line; `LineReader` for many).
pub fn read_line(model: &Model, dims: &DimensionTable, line: &str, upload_date: NaiveDate) -> Result<Record, String> {
    LineReader::new(model, dims).map_err(|e| e.to_string())?.read(line, upload_date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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

    /// The first lines of a sample world's first uploads, each with its upload date.
    fn seed_lines(model: &Model, root: &std::path::Path) -> Vec<(String, NaiveDate)> {
        let mut out = Vec::new();
        let events = root.join(&model.events_root);
        let mut parts: Vec<_> = std::fs::read_dir(&events).unwrap().map(|e| e.unwrap().path()).collect();
        parts.sort();
        for part in parts.iter().take(3) {
            let up = NaiveDate::parse_from_str(part.file_name().unwrap().to_str().unwrap().trim_start_matches("upload_date="), "%Y-%m-%d")
                .unwrap();
            for f in std::fs::read_dir(part).unwrap() {
                let text = crate::raw::read_gz_text(&f.unwrap().path()).unwrap();
                out.extend(text.lines().take(30).map(|l| (l.to_string(), up)));
            }
        }
        out
    }

    /// `line` with each field the model reads set to each kind of value, and left out.
    fn variants(line: &str, top: &[(String, usize)]) -> Vec<String> {
        let values = [
            "null",
            "\"\"",
            "\"x\"",
            "7",
            "0",
            "-7",
            "1.5",
            "1e3",
            "99999999999999999999",
            "true",
            "{}",
            "[]",
            "[1]",
            "[{\"amount_minor\":3},{\"amount_minor\":4}]",
            "[{\"amount_minor\":3},{\"amount_minor\":\"4\"}]",
            "[{\"amount_minor\":3},{\"x\":1}]",
            "[{\"amount_minor\":null}]",
            "[{\"amount_minor\":9223372036854775807},{\"amount_minor\":1}]",
        ];
        let object: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
        let mut out = Vec::new();
        for (key, _) in top {
            for v in values {
                let mut o = object.clone();
                o.insert(key.clone(), serde_json::from_str(v).unwrap());
                out.push(Value::Object(o).to_string());
            }
            let mut o = object.clone();
            o.remove(key);
            out.push(Value::Object(o).to_string());
        }
        out
    }

    #[test]
    fn the_fast_reader_gives_the_careful_reader_s_answer_or_leaves_the_line_to_it() {
        use rand::SeedableRng;
        let manufacturing = (
            super::super::manufacturing(),
            std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../sample-data-manufacturing"),
        );
        let retail =
            (super::super::retail(), std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../sample-data"));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261205);
        for (model, root) in [manufacturing, retail] {
            let dim = model.dimension.as_ref().unwrap();
            let dims_text = std::fs::read_to_string(root.join(&dim.file)).unwrap();
            let dims = DimensionTable::parse(&model, &dims_text).unwrap();
            let fast = LineReader::new(&model, &dims).unwrap();
            let mut careful = LineReader::new(&model, &dims).unwrap();
            careful.top = None;
            let top = fast.top.clone().expect("both models' fields are at the top of a line");
            let mut seeds = seed_lines(&model, &root);
            let (first, up) = seeds[0].clone();
            seeds.extend(variants(&first, &top).into_iter().map(|l| (l, up)));
            assert!(seeds.len() > 50, "{}: sample lines to mutate", model.name);
            // True when the fast reader took the line; it must then agree with the careful one.
            let check = |line: &str, up: NaiveDate| -> bool {
                let Some(slots) = fast_slots(line, &top, &fast.wants) else { return false };
                match careful.careful_slots(line) {
                    Ok(want) => assert_eq!(slots, want, "{}: different fields for {line}", model.name),
                    Err(e) => panic!("{}: the fast reader took a line serde_json refuses ({e}): {line}", model.name),
                }
                assert_eq!(fast.read(line, up), careful.read(line, up), "{}: {line}", model.name);
                true
            };
            let read = seeds.iter().filter(|(l, up)| check(l, *up)).count();
            assert!(read > seeds.len() / 2, "{}: {read} of {} seed lines read fast", model.name, seeds.len());
            let total = 40_000;
            let took = (0..total)
                .filter(|i| {
                    let (line, up) = &seeds[i % seeds.len()];
                    check(&crate::raw::fast_line::tests::mutate(line, &mut rng), *up)
                })
                .count();
            assert!(took > 4_000 && total - took > 4_000, "{}: fast {took} of {total}", model.name);
        }
    }
}
