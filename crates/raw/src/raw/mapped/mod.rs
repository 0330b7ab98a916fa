//! Reading a raw file through a source description: each line (JSON Lines), row (CSV) or record
//! (Parquet) is mapped onto the contract's fields, which then go through the contract's own
//! checks (`event::validate`), so every shape keeps the same rules, limits and reasons. A value
//! that does not map is quarantined with a reason naming the field and the path it came from.
//!
//! The contract's shape never comes here: it stays on the fast reader (`event::parse_line`).

use super::event::{Amount, Fields as Mapped, Labels, PosEvent, Stamp};
use super::source::{FileFormat, Reader, Unit};
use super::{MAX_LINE_BYTES, StoreTable};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};
use std::borrow::Cow;
use std::path::Path;

mod samples;
pub(super) mod values;
pub use samples::FieldCheck;
pub use samples::FieldSamples;
use values::*;

/// What `each` is told of a line: its number, its verdict, and its text as it was.
pub type Verdict<'a> = Result<PosEvent<'a>, String>;

/// Every line of one raw file, in order, as its verdict: `each(line, verdict, text)`. The file's
/// bytes are `bytes` (read once by the caller, which also copies and digests them); a Parquet
/// file is read from `path`. An error is about the whole file (not readable as its format), and
/// holds its upload back. Returns the number of lines.
pub fn read_events(
    path: &Path,
    bytes: &[u8],
    reader: &Reader,
    stores: &StoreTable,
    upload_date: NaiveDate,
    mut each: impl FnMut(u32, Verdict<'_>, &str) -> Result<()>,
) -> Result<u64> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if reader.format == FileFormat::Parquet {
        let map = Map::new(reader)?;
        if map.paths.iter().any(|p| p.len() > 1) {
            // A path into a struct column: each record as JSON, walked as a JSON line is.
            let rows = crate::store::parquet::rows_as_json(path)?;
            for (i, row) in rows.iter().enumerate() {
                each(line_number(i)?, map.json(row, stores, upload_date), row)?;
            }
            return Ok(rows.len() as u64);
        }
        return map.parquet(path, stores, upload_date, &mut each);
    }
    let text = inflate(bytes, reader.compression_of(&name))?;
    match (reader.format, &reader.fields) {
        (FileFormat::Jsonl, None) => lines(&text, |line| super::parse_line(line, stores, upload_date), &mut each),
        (FileFormat::Jsonl, Some(_)) => {
            let map = Map::new(reader)?;
            lines(&text, |line| map.json(line, stores, upload_date), &mut each)
        }
        (FileFormat::Csv, _) => Map::new(reader)?.csv(&text, stores, upload_date, &mut each),
        (FileFormat::Parquet, _) => unreachable!("read above"),
    }
}

/// Why a CSV row that is not UTF-8 is quarantined: the first such byte, counted from the row's
/// first byte (`rest` starts there). Only the row's own bytes are searched: the most a row of
/// these fields can take, each quoted with its quotes doubled, so a file of such rows costs time
/// in proportion to its size.
fn not_utf8_in_row(rest: &[u8], record: &csv::ByteRecord) -> String {
    let most = 2 * record.as_slice().len() + 3 * record.len() + 2;
    let at = std::str::from_utf8(&rest[..most.min(rest.len())]).err().map_or(0, |e| e.valid_up_to());
    format!("not UTF-8 at byte {at}")
}

fn line_number(i: usize) -> Result<u32> {
    u32::try_from(i + 1).map_err(|_| eyre!("more than 2^32 lines"))
}

/// Each line of a file of JSON Lines, split at the newline byte and decoded on its own: a line
/// that is not UTF-8 is quarantined alone (`raw::line_text`), and so is a blank one.
fn lines<'t>(
    bytes: &'t [u8],
    parse: impl Fn(&'t str) -> Verdict<'t>,
    each: &mut impl FnMut(u32, Verdict<'_>, &str) -> Result<()>,
) -> Result<u64> {
    let mut n = 0u64;
    for (i, raw) in super::split_lines(bytes).enumerate() {
        n += 1;
        let no = line_number(i)?;
        match super::line_text(raw) {
            Err(reason) => each(no, Err(reason), &String::from_utf8_lossy(raw))?,
            Ok(line) if line.trim().is_empty() => each(no, Err("blank line".to_string()), "")?,
            Ok(line) => each(no, parse(line), line)?,
        }
    }
    Ok(n)
}

/// A file's bytes inflated by its compression, at most `MAX_INFLATED_BYTES`; not decoded (its
/// lines are, one by one).
pub fn inflate(bytes: &[u8], compression: super::source::Compression) -> Result<super::Inflated<'_>> {
    use super::source::Compression;
    Ok(match compression {
        Compression::Gzip => super::decompress(bytes).map_err(|e| super::unreadable(".gz", &e))?,
        Compression::Zstd => super::unzstd(bytes).map_err(|e| super::unreadable(".zst", &e))?,
        Compression::None => {
            if bytes.len() > super::MAX_INFLATED_BYTES {
                bail!("larger than {} MiB, the most one raw file may hold", super::MAX_INFLATED_BYTES >> 20);
            }
            super::Inflated::borrowed(bytes)
        }
    })
}

/// A description's fields, split into paths once per file.
struct Map {
    paths: [Vec<String>; 8],
    labels: Labels,
    formats: [Option<super::source::EpochUnit>; 2],
    unit: Unit,
    /// The list of tenders, when the amount is summed over one.
    tenders: Option<Vec<String>>,
    /// The slots by the object that holds them (their path but the last key), so a line's
    /// objects are each walked once.
    groups: Vec<(Vec<String>, Vec<usize>)>,
}

/// The slots of `Map::paths`, in the contract's order.
const EVENT_ID: usize = 0;
const BASKET_ID: usize = 1;
const STORE_ID: usize = 2;
const TILL_ID: usize = 3;
const EVENT_TS: usize = 4;
const UPLOADED_AT: usize = 5;
const CURRENCY: usize = 6;
const AMOUNT: usize = 7;

impl Map {
    fn new(reader: &Reader) -> Result<Map> {
        let Some(f) = &reader.fields else { bail!("this reader has no field mapping") };
        let split = |p: &str| p.split('.').map(str::to_string).collect::<Vec<_>>();
        let label = |name: &str, path: &str| Cow::Owned(format!("{name} ({path})"));
        let till = f.till_id.clone().unwrap_or_default();
        let mut map = Map {
            paths: [
                split(&f.event_id),
                split(&f.basket_id),
                split(&f.store_id),
                if f.till_id.is_some() { split(&till) } else { Vec::new() },
                split(f.event_ts.path()),
                split(f.uploaded_at.path()),
                split(&f.currency),
                split(&f.amount.path),
            ],
            labels: Labels {
                event_id: label("event_id", &f.event_id),
                basket_id: label("basket_id", &f.basket_id),
                store_id: label("store_id", &f.store_id),
                till_id: f.till_id.as_ref().map(|t| label("till_id", t)),
                event_ts: label("event_ts", f.event_ts.path()),
                uploaded_at: label("uploaded_at", f.uploaded_at.path()),
                currency: label("currency", &f.currency),
                amount: label("amount", &f.amount.display_path()),
            },
            formats: [f.event_ts.format().epoch(), f.uploaded_at.format().epoch()],
            unit: f.amount.unit,
            tenders: f.amount.tenders.as_deref().map(split),
            groups: Vec::new(),
        };
        for slot in 0..8 {
            let Some((_, parent)) = map.paths[slot].split_last() else { continue };
            if slot == AMOUNT && map.tenders.is_some() {
                continue;
            }
            match map.groups.iter_mut().find(|(p, _)| p == parent) {
                Some((_, slots)) => slots.push(slot),
                None => map.groups.push((parent.to_vec(), vec![slot])),
            }
        }
        Ok(map)
    }

    /// Each slot's value span in one line (`start`: its top object), every object on the way
    /// walked once. A slot's error is the one its own lookup would give.
    fn spans(&self, line: &str, start: usize) -> [Result<Option<(usize, usize)>, String>; 8] {
        let mut out: [Result<Option<(usize, usize)>, String>; 8] = std::array::from_fn(|_| Ok(None));
        let s = line.as_bytes();
        for (parent, slots) in &self.groups {
            let at = if parent.is_empty() {
                Some(start)
            } else {
                match lookup(line, start, parent, "") {
                    Ok(at) => at.map(|(a, _)| a),
                    Err(_) => {
                        for &slot in slots {
                            out[slot] = lookup(line, start, &self.paths[slot], self.label(slot));
                        }
                        continue;
                    }
                }
            };
            let Some(at) = at.filter(|&a| s[a] != b'n') else { continue };
            if s[at] != b'{' {
                for &slot in slots {
                    out[slot] = Err(format!("{}: {} is not an object", self.label(slot), parent.join(".")));
                }
                continue;
            }
            for (raw_key, span) in entries(line, at) {
                for &slot in slots {
                    let Some(key) = self.paths[slot].last() else { continue };
                    if key_is(raw_key, key) {
                        out[slot] = match out[slot] {
                            Ok(None) => Ok(Some(span)),
                            _ => Err(format!("malformed JSON: duplicate field `{}`", crate::sanitize::for_terminal(key))),
                        };
                    }
                }
            }
        }
        out
    }

    fn label(&self, slot: usize) -> &str {
        let l = &self.labels;
        match slot {
            EVENT_ID => &l.event_id,
            BASKET_ID => &l.basket_id,
            STORE_ID => &l.store_id,
            TILL_ID => l.till_id.as_deref().unwrap_or("till_id"),
            EVENT_TS => &l.event_ts,
            UPLOADED_AT => &l.uploaded_at,
            CURRENCY => &l.currency,
            _ => &l.amount,
        }
    }

    fn stamp<'a>(&self, slot: usize, v: Option<Scalar<'a>>) -> Result<Option<Stamp<'a>>, String> {
        let format = self.formats[slot - EVENT_TS];
        Ok(match (v, format) {
            (None, _) => None,
            (Some(Scalar::Str(s)), None) => Some(Stamp::Iso(s)),
            (Some(Scalar::Num(_)), None) => return Err(format!("{} is a number, not an ISO-8601 text", self.label(slot))),
            (Some(Scalar::Str(s) | Scalar::Num(s)), Some(unit)) => Some(Stamp::Epoch(s, unit)),
        })
    }

    /// One JSON line (or a Parquet record rendered as JSON) mapped and checked.
    fn json<'a>(&self, line: &'a str, stores: &'a StoreTable, upload_date: NaiveDate) -> Verdict<'a> {
        if line.len() > MAX_LINE_BYTES {
            return Err(format!("line of {} bytes, longer than the {MAX_LINE_BYTES} recount parses", line.len()));
        }
        let start = object_start(line)?;
        let spans = self.spans(line, start);
        let get = |slot: usize| -> Result<Option<Scalar<'a>>, String> {
            match &spans[slot] {
                Err(e) => Err(e.clone()),
                Ok(None) => Ok(None),
                Ok(Some(span)) => scalar(line, *span, self.label(slot)),
            }
        };
        let id = |v: Option<Scalar<'a>>| v.map(Scalar::text);
        let mut fields = Mapped {
            event_id: id(get(EVENT_ID)?),
            basket_id: id(get(BASKET_ID)?),
            store_id: id(get(STORE_ID)?),
            till_id: id(get(TILL_ID)?),
            event_ts: None,
            uploaded_at: None,
            currency: id(get(CURRENCY)?),
            amount: None,
        };
        fields.event_ts = self.stamp(EVENT_TS, get(EVENT_TS)?)?;
        fields.uploaded_at = self.stamp(UPLOADED_AT, get(UPLOADED_AT)?)?;
        fields.amount = match &self.tenders {
            None => get(AMOUNT)?.map(|v| Amount::Totals(vec![v.text()], self.unit)),
            Some(list) => self.tender_amounts(line, start, list)?,
        };
        super::event::validate(fields, &self.labels, stores, upload_date)
    }

    /// The amount at `paths[AMOUNT]` of each element of the list at `list`.
    fn tender_amounts<'a>(&self, line: &'a str, start: usize, list: &[String]) -> Result<Option<Amount<'a>>, String> {
        let label = self.label(AMOUNT);
        let Some((a, b)) = lookup(line, start, list, label)? else { return Ok(None) };
        let s = line.as_bytes();
        if s[a] == b'n' {
            return Ok(None);
        }
        if s[a] != b'[' {
            return Err(format!("{label}: {} is not a list", list.join(".")));
        }
        let mut out = Vec::new();
        let mut i = ws(s, a + 1);
        while i < b && s[i] != b']' {
            let end = value_end(s, i);
            let n = out.len() + 1;
            if s[i] != b'{' {
                return Err(format!("{label}: tender {n} is not an object"));
            }
            let v = lookup(line, i, &self.paths[AMOUNT], label)?
                .map(|span| scalar(line, span, label))
                .transpose()?
                .flatten()
                .ok_or_else(|| format!("{label}: tender {n} has no amount"))?;
            out.push(v.text());
            i = ws(s, end);
            if s.get(i) == Some(&b',') {
                i = ws(s, i + 1);
            }
        }
        Ok(Some(Amount::Totals(out, self.unit)))
    }

    /// A CSV file with a header row: each mapped path is a column name. The header must be UTF-8
    /// (without it no column can be found, so the file is unreadable); a row that is not is
    /// quarantined alone, as a JSON line is.
    fn csv(
        &self,
        bytes: &[u8],
        stores: &StoreTable,
        upload_date: NaiveDate,
        each: &mut impl FnMut(u32, Verdict<'_>, &str) -> Result<()>,
    ) -> Result<u64> {
        let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
        let mut rdr = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes);
        let headers = rdr.headers().map_err(|e| eyre!("the CSV header cannot be read ({e})"))?.clone();
        let column = |path: &[String]| (!path.is_empty()).then(|| headers.iter().position(|h| h.trim() == path.join("."))).flatten();
        let cols: Vec<Option<usize>> = self.paths.iter().map(|p| column(p)).collect();
        let mut record = csv::ByteRecord::new();
        let mut n = 0u64;
        loop {
            match rdr.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => bail!("line {}: not readable as CSV ({e})", rdr.position().line()),
            }
            // Where the record starts: its line, and its text for the quarantine.
            let (line, at) = record.position().map_or((0, 0), |p| (p.line(), p.byte() as usize));
            n += 1;
            let raw = bytes.get(at..).and_then(|r| super::split_lines(r).next()).unwrap_or_default();
            let no = u32::try_from(line).map_err(|_| eyre!("more than 2^32 lines"))?;
            let text = match super::line_text(raw) {
                Ok(t) => Cow::Borrowed(t),
                Err(_) => String::from_utf8_lossy(raw),
            };
            // The record's buffer goes into the row and back, so no row allocates.
            let row = match csv::StringRecord::from_byte_record(std::mem::take(&mut record)) {
                Ok(row) => row,
                Err(e) => {
                    record = e.into_byte_record();
                    each(no, Err(not_utf8_in_row(&bytes[at.min(bytes.len())..], &record)), &text)?;
                    continue;
                }
            };
            let verdict = if row.len() != headers.len() {
                Err(format!("CSV row has {} fields, the header has {}", row.len(), headers.len()))
            } else if raw.len() > MAX_LINE_BYTES {
                Err(format!("line of {} bytes, longer than the {MAX_LINE_BYTES} recount parses", raw.len()))
            } else {
                self.csv_row(&row, &cols, stores, upload_date)
            };
            each(no, verdict, &text)?;
            record = row.into_byte_record();
        }
        Ok(n)
    }

    /// A Parquet file whose mapped fields are its own columns, read column by column from
    /// DuckDB's Arrow batches: no JSON in between.
    fn parquet(
        &self,
        path: &Path,
        stores: &StoreTable,
        upload_date: NaiveDate,
        each: &mut impl FnMut(u32, Verdict<'_>, &str) -> Result<()>,
    ) -> Result<u64> {
        use crate::store::arrow::datatypes::DataType;
        let batches = crate::store::parquet::batches(path)?;
        let mut n = 0u64;
        for batch in &batches {
            let schema = batch.schema();
            if let Some(f) =
                schema.fields().iter().find(|f| matches!(f.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64))
            {
                bail!("{}", crate::store::parquet::floats_refused(f.name()));
            }
            let cols: Vec<Option<&dyn crate::store::arrow::array::Array>> = self
                .paths
                .iter()
                .map(|p| p.first().and_then(|name| schema.index_of(name).ok()).map(|i| batch.column(i).as_ref()))
                .collect();
            for row in 0..batch.num_rows() {
                let no = line_number(n as usize)?;
                n += 1;
                let verdict = self.parquet_row(&cols, row, stores, upload_date);
                let shown = if verdict.is_err() { self.parquet_text(&cols, row) } else { String::new() };
                each(no, verdict, &shown)?;
            }
        }
        Ok(n)
    }

    fn parquet_row<'a>(
        &self,
        cols: &[Option<&'a dyn crate::store::arrow::array::Array>],
        row: usize,
        stores: &'a StoreTable,
        d: NaiveDate,
    ) -> Verdict<'a> {
        let get = |slot: usize| cols[slot].map_or(Ok(None), |c| arrow_cell(c, row, self.label(slot)));
        let id = |slot: usize| get(slot).map(|v| v.map(Scalar::text));
        let fields = Mapped {
            event_id: id(EVENT_ID)?,
            basket_id: id(BASKET_ID)?,
            store_id: id(STORE_ID)?,
            till_id: id(TILL_ID)?,
            event_ts: self.stamp(EVENT_TS, get(EVENT_TS)?)?,
            uploaded_at: self.stamp(UPLOADED_AT, get(UPLOADED_AT)?)?,
            currency: id(CURRENCY)?,
            amount: get(AMOUNT)?.map(|v| Amount::Totals(vec![v.text()], self.unit)),
        };
        super::event::validate(fields, &self.labels, stores, d)
    }

    /// A quarantined record's mapped columns, as the quarantine shows it.
    fn parquet_text(&self, cols: &[Option<&dyn crate::store::arrow::array::Array>], row: usize) -> String {
        let mut out = serde_json::Map::new();
        for (slot, path) in self.paths.iter().enumerate() {
            if let (Some(c), Some(name)) = (cols[slot], path.first()) {
                let v = match arrow_cell(c, row, name) {
                    Ok(Some(s)) => serde_json::Value::String(s.text().into_owned()),
                    Ok(None) => serde_json::Value::Null,
                    Err(e) => serde_json::Value::String(e),
                };
                out.insert(name.clone(), v);
            }
        }
        serde_json::Value::Object(out).to_string()
    }

    fn csv_row<'a>(&self, rec: &'a csv::StringRecord, cols: &[Option<usize>], stores: &'a StoreTable, d: NaiveDate) -> Verdict<'a> {
        let get = |slot: usize| cols[slot].and_then(|c| rec.get(c)).map(|v| Scalar::Str(Cow::Borrowed(v)));
        let id = |slot: usize| get(slot).map(Scalar::text);
        let fields = Mapped {
            event_id: id(EVENT_ID),
            basket_id: id(BASKET_ID),
            store_id: id(STORE_ID),
            till_id: id(TILL_ID),
            event_ts: self.stamp(EVENT_TS, get(EVENT_TS))?,
            uploaded_at: self.stamp(UPLOADED_AT, get(UPLOADED_AT))?,
            currency: id(CURRENCY),
            amount: get(AMOUNT).filter(|v| !v.text_ref().is_empty()).map(|v| Amount::Totals(vec![v.text()], self.unit)),
        };
        super::event::validate(fields, &self.labels, stores, d)
    }
}

#[cfg(test)]
mod tests;
