//! The same world in other shapes (`generate --shape`): a Kafka Connect sink's layout and field
//! names, a Spark writer's Parquet, a CSV export. Each shape is written from the contract's files
//! line by line (every event, every copy, in the same order and under the same file stems), with
//! the `recount.toml` that reads it back, so the same events in any shape give the same
//! fingerprint. Corrections are converted too, each a world of the shape.

use crate::raw::source::{SOURCE_FILE, Source};
use crate::raw::{self, StoreTable};
use chrono::{DateTime, NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::io::Write;
use std::path::Path;

/// A raw zone's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// The contract's own: upload_date=D/*.jsonl.gz and stores.csv
    Contract,
    /// year=/month=/day= folders, gzipped JSON Lines with nested vendor fields, a total in major
    /// units, epoch-millisecond arrival times, stores in a CSV of other column names
    KafkaConnect,
    /// The same in the sink's default layout: a folder per hour of arrival below the day
    /// (year=/month=/day=/hour=), each contract file split by its lines' arrival hour
    KafkaConnectHourly,
    /// dt=D folders of Parquet with writer markers (_SUCCESS, .crc), epoch-microsecond sale
    /// times, amounts in minor units, stores in Parquet
    Parquet,
    /// date=D folders of plain CSV, times with offsets and in epoch seconds, a total in major units
    Csv,
}

impl Shape {
    /// The description that reads this shape back.
    pub fn description(self) -> &'static str {
        match self {
            Shape::Contract => "",
            Shape::KafkaConnect => KAFKA_CONNECT,
            Shape::KafkaConnectHourly => KAFKA_CONNECT_HOURLY,
            Shape::Parquet => PARQUET,
            Shape::Csv => CSV,
        }
    }
}

const KAFKA_CONNECT: &str = include_str!("shapes/kafka-connect.toml");

const KAFKA_CONNECT_HOURLY: &str = include_str!("shapes/kafka-connect-hourly.toml");

const PARQUET: &str = include_str!("shapes/parquet.toml");

const CSV: &str = include_str!("shapes/csv.toml");

/// One contract line's values, as every shape writes them.
struct Event {
    event_id: String,
    basket_id: String,
    store_id: String,
    till_id: String,
    event_ts: DateTime<Utc>,
    uploaded_at: DateTime<Utc>,
    currency: String,
    revenue_minor: i64,
}

fn event(line: &str, stores: &StoreTable, d: NaiveDate) -> Result<Event> {
    let e = raw::parse_line(line, stores, d).map_err(|why| eyre!("a line the shapes cannot carry ({why})"))?;
    Ok(Event {
        event_id: e.event_id.into_owned(),
        basket_id: e.basket_id.into_owned(),
        store_id: e.store_id.to_string(),
        till_id: e.till_id.into_owned(),
        event_ts: e.event_ts,
        uploaded_at: e.uploaded_at,
        currency: e.currency.to_string(),
        revenue_minor: e.revenue_minor,
    })
}

/// Minor units as exact major-unit text by the currency's digits: 1250 GBP is "12.50".
fn major(minor: i64, currency: &str) -> Result<String> {
    let digits = crate::money::digits(currency).ok_or_else(|| eyre!("currency {currency} has no ISO-4217 digits"))? as usize;
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs().to_string();
    if digits == 0 {
        return Ok(format!("{sign}{abs}"));
    }
    let padded = format!("{abs:0>width$}", width = digits + 1);
    let (int, frac) = padded.split_at(padded.len() - digits);
    Ok(format!("{sign}{int}.{frac}"))
}

fn local_iso(t: DateTime<Utc>, stores: &StoreTable, store_id: &str) -> Result<String> {
    let s = stores.get(store_id).ok_or_else(|| eyre!("unknown store {store_id}"))?;
    Ok(t.with_timezone(&s.timezone).format("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string())
}

/// Writes `contract` (a world in the contract's shape) as `shape` into `out`, corrections too.
pub fn convert(contract: &Path, out: &Path, shape: Shape) -> Result<()> {
    let source = Source::from_description(toml::from_str(shape.description())?, None)?;
    let stores = StoreTable::read(&contract.join(raw::STORES_FILE))?;
    std::fs::create_dir_all(out).wrap_err_with(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join(SOURCE_FILE), shape.description())?;
    write_stores(&stores, out, shape, &source)?;
    for d in raw::list_partitions(contract)? {
        let dir = source.partition_dir(out, d);
        std::fs::create_dir_all(&dir)?;
        for f in raw::list_files(contract, d)? {
            write_file(&f, d, &dir, &stores, shape, false)?;
        }
    }
    for c in raw::corrections::list(contract)? {
        let dest = out.join(raw::corrections::CORRECTIONS_DIR).join(c.dir.file_name().unwrap_or_default());
        std::fs::create_dir_all(&dest)?;
        std::fs::write(dest.join(SOURCE_FILE), shape.description())?;
        // The note names the corrected file as the shape names it.
        let mut note = c.clone();
        note.file = shaped_name(shape, note.file.strip_suffix(".jsonl.gz").unwrap_or(&note.file));
        std::fs::write(dest.join(raw::corrections::NOTE_FILE), serde_json::to_string_pretty(&note)? + "\n")?;
        write_stores(&StoreTable::read(&c.dir.join(raw::STORES_FILE))?, &dest, shape, &source)?;
        let dir = source.partition_dir(&dest, c.upload_date);
        std::fs::create_dir_all(&dir)?;
        for f in raw::list_files(&c.dir, c.upload_date)? {
            let is_recompressed = c.kind == raw::corrections::CorrectionKind::Recompressed;
            write_file(&f, c.upload_date, &dir, &stores, shape, is_recompressed)?;
        }
    }
    Ok(())
}

fn write_stores(stores: &StoreTable, out: &Path, shape: Shape, source: &Source) -> Result<()> {
    let path = out.join(&source.description.stores.file);
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p)?;
    }
    let header = match shape {
        Shape::Contract => return Ok(std::fs::write(path, stores.to_csv()?)?),
        Shape::KafkaConnect | Shape::KafkaConnectHourly => ["code", "country_code", "tz", "currency_code"],
        Shape::Csv => ["shop", "iso_country", "time_zone", "ccy"],
        Shape::Parquet => {
            let tmp = tempfile::NamedTempFile::new()?;
            let mut w = std::io::BufWriter::new(tmp.as_file());
            for s in &stores.stores {
                let row = serde_json::json!({ "store": s.store_id, "country": s.country, "zone": s.timezone.name(), "ccy": s.currency });
                writeln!(w, "{row}")?;
            }
            w.flush()?;
            drop(w);
            return crate::store::parquet::write(tmp.path(), &path, crate::store::parquet::Shaped::Stores);
        }
    };
    let mut w = csv::Writer::from_path(&path)?;
    w.write_record(header)?;
    for s in &stores.stores {
        w.write_record([s.store_id.as_str(), &s.country, s.timezone.name(), &s.currency])?;
    }
    w.flush()?;
    Ok(())
}

/// A contract file's name in the shape, by its stem: `tills-gb` is `tills-gb.json.gz` in Kafka
/// Connect's.
pub fn shaped_name(shape: Shape, stem: &str) -> String {
    match shape {
        Shape::Contract => format!("{stem}.jsonl.gz"),
        Shape::KafkaConnect | Shape::KafkaConnectHourly => format!("{stem}.json.gz"),
        Shape::Parquet => format!("{stem}.parquet"),
        Shape::Csv => format!("{stem}.csv"),
    }
}

/// One contract file of upload `d` in the shape, under the same stem. `again`: a correction that
/// only recompressed its file gets other bytes for the same rows in this shape too.
fn write_file(path: &Path, d: NaiveDate, dir: &Path, stores: &StoreTable, shape: Shape, again: bool) -> Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let Some(stem) = name.strip_suffix(".jsonl.gz") else { bail!("{}: not a contract file", path.display()) };
    let text = raw::read_gz_text(path)?;
    let events: Vec<Event> =
        text.lines().map(|l| event(l, stores, d)).collect::<Result<_>>().wrap_err_with(|| format!("{}", path.display()))?;
    match shape {
        Shape::Contract => {
            std::fs::copy(path, dir.join(&*name))?;
        }
        Shape::KafkaConnect => write_kafka(&events, &dir.join(shaped_name(shape, stem)), stores, again)?,
        Shape::KafkaConnectHourly => {
            // Each hour's lines in the order they stand: copies that tie on their arrival
            // instant arrive in the same hour, so the contract's order between them holds.
            let mut hours: std::collections::BTreeMap<u32, Vec<&Event>> = Default::default();
            for e in &events {
                hours.entry(chrono::Timelike::hour(&e.uploaded_at)).or_default().push(e);
            }
            for (hour, lines) in hours {
                let folder = dir.join(format!("hour={hour:02}"));
                std::fs::create_dir_all(&folder)?;
                write_kafka(lines, &folder.join(shaped_name(shape, stem)), stores, again)?;
            }
        }
        Shape::Csv => {
            // A recompressed correction: the same rows with other line ends.
            let ends = if again { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') };
            let mut w = csv::WriterBuilder::new().terminator(ends).from_path(dir.join(shaped_name(shape, stem)))?;
            w.write_record(["txn_id", "basket", "store", "till", "sold_at", "received_at", "currency", "amount"])?;
            for e in &events {
                let received = format!("{}.{:03}", e.uploaded_at.timestamp(), e.uploaded_at.timestamp_subsec_millis());
                w.write_record([
                    e.event_id.as_str(),
                    &e.basket_id,
                    &e.store_id,
                    &e.till_id,
                    &local_iso(e.event_ts, stores, &e.store_id)?,
                    &received,
                    &e.currency,
                    &major(e.revenue_minor, &e.currency)?,
                ])?;
            }
            w.flush()?;
        }
        Shape::Parquet => {
            let tmp = tempfile::NamedTempFile::new()?;
            let mut w = std::io::BufWriter::new(tmp.as_file());
            for e in &events {
                let row = serde_json::json!({
                    "event_id": e.event_id, "basket_id": e.basket_id, "store_id": e.store_id, "till_id": e.till_id,
                    "event_ts_us": e.event_ts.timestamp_micros(),
                    "uploaded_at": e.uploaded_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
                    "currency": e.currency, "amount_minor": e.revenue_minor,
                });
                writeln!(w, "{row}")?;
            }
            w.flush()?;
            drop(w);
            let file = dir.join(shaped_name(shape, stem));
            // A recompressed correction: the same rows, compressed with zstd instead of snappy.
            let what = if again { crate::store::parquet::Shaped::EventsRecompressed } else { crate::store::parquet::Shaped::Events };
            crate::store::parquet::write(tmp.path(), &file, what)?;
            // What a Spark writer leaves beside its files.
            std::fs::write(dir.join(format!(".{stem}.parquet.crc")), b"crc")?;
            std::fs::write(dir.join("_SUCCESS"), b"")?;
        }
    }
    Ok(())
}

/// Events as a Kafka Connect sink's gzipped JSON Lines, in the vendor's field names.
fn write_kafka<'e>(events: impl IntoIterator<Item = &'e Event>, path: &Path, stores: &StoreTable, again: bool) -> Result<()> {
    let mut body = Vec::new();
    for e in events {
        let row = serde_json::json!({
            "message_id": e.event_id,
            "transaction": {
                "id": e.basket_id, "till": e.till_id, "currency": e.currency,
                "completed_at": local_iso(e.event_ts, stores, &e.store_id)?,
                "total": major(e.revenue_minor, &e.currency)?,
            },
            "store": { "code": e.store_id },
            "received_at": e.uploaded_at.timestamp_millis(),
        });
        writeln!(body, "{row}")?;
    }
    // A recompressed correction: the same rows at another compression level.
    let level = if again { 1 } else { 6 };
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level));
    gz.write_all(&body)?;
    std::fs::write(path, gz.finish()?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_units_become_exact_major_text() {
        assert_eq!(major(1250, "GBP").unwrap(), "12.50");
        assert_eq!(major(5, "GBP").unwrap(), "0.05");
        assert_eq!(major(-5, "GBP").unwrap(), "-0.05");
        assert_eq!(major(1250, "JPY").unwrap(), "1250");
        assert_eq!(major(1234, "KWD").unwrap(), "1.234");
        assert_eq!(major(i64::MIN, "GBP").unwrap(), "-92233720368547758.08");
    }

    #[test]
    fn every_shape_s_description_reads() {
        for s in [Shape::KafkaConnect, Shape::KafkaConnectHourly, Shape::Parquet, Shape::Csv] {
            let d = toml::from_str(s.description()).unwrap();
            let src = Source::from_description(d, None).unwrap();
            assert!(!src.is_contract(), "{s:?}");
        }
    }
}
