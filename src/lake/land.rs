//! Landing: uploads are copied into the lab's raw zone and parsed once into bronze. Every line is
//! either a bronze row or a quarantine row with its file, line and reason.

use crate::lake::Cached;
use super::{Lab, Tx};
use crate::queries::{hex, sql};
use crate::raw::{self, PosEvent, StoreTable};
use chrono::{NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use duckdb::arrow::array::{ArrayRef, Date32Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder};
use duckdb::arrow::record_batch::RecordBatch;
use md5::Digest;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionLanded {
    pub upload_date: NaiveDate,
    pub files_landed: usize,
    pub files_already_landed: usize,
    pub events: u64,
    pub quarantined: u64,
    /// False when the world has no such partition yet: nothing arrived, nothing is recorded.
    pub exists: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LandReport {
    pub partitions: Vec<PartitionLanded>,
    pub stores_added: usize,
    pub events: u64,
    pub quarantined: u64,
    /// Wall time per phase in milliseconds, for RECOUNT_PROFILE (not part of any record).
    #[serde(skip)]
    pub phases: Vec<(String, f64)>,
}

impl LandReport {
    pub fn render(&self) -> String {
        let mut s = String::new();
        for p in &self.partitions {
            let extra = if p.files_already_landed > 0 { format!(", {} already landed", p.files_already_landed) } else { String::new() };
            let q = if p.quarantined > 0 { format!(", {} quarantined", p.quarantined) } else { String::new() };
            if !p.exists {
                s.push_str(&format!("upload {}: the world has no such partition; nothing landed\n", p.upload_date));
                continue;
            }
            let files = if p.files_landed == 0 && p.files_already_landed == 0 { " (an empty partition)".to_string() } else { String::new() };
            s.push_str(&format!(
                "landed upload {}: {} file(s), {} events{q}{extra}{files}\n",
                p.upload_date,
                p.files_landed,
                crate::money::format_count(p.events as i64)
            ));
        }
        if self.stores_added > 0 {
            s.push_str(&format!("stores: {} added\n", self.stores_added));
        }
        if self.quarantined > 0 {
            s.push_str("quarantined lines are listed by `recount quarantine`\n");
        }
        s
    }
}

struct ParsedFile {
    file_id: i32,
    rel: String,
    source: PathBuf,
    upload_date: NaiveDate,
    bytes: Vec<u8>,
    md5: String,
    lines: u64,
    /// Its bronze rows as one Arrow batch, built in the parsing thread (None when it has none).
    batch: Option<RecordBatch>,
    events: usize,
    quarantine: Vec<(u32, String, String)>,
    cells: Vec<Cell>,
}

/// What one file holds for one (business date, currency): see `bronze.cells`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cell {
    business_date: NaiveDate,
    currency: String,
    rows: i64,
    revenue_minor: i64,
    digest: u64,
}

/// A stable 64-bit hash of the fields that make a bronze row what it is (xxh3 over
/// length-prefixed fields). Summed per cell, it gives each date's input hash: adding, removing
/// or changing any feeding row changes the sum.
fn row_digest(e: &PosEvent, buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    for s in [&*e.event_id, &*e.basket_id, e.store_id, &*e.till_id] {
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
    buf.extend_from_slice(&e.event_ts.timestamp_nanos_opt().unwrap_or(i64::MIN).to_le_bytes());
    buf.extend_from_slice(&e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MIN).to_le_bytes());
    buf.extend_from_slice(&days(e.upload_date).to_le_bytes());
    buf.extend_from_slice(&days(e.business_date).to_le_bytes());
    buf.extend_from_slice(&e.revenue_minor.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(buf)
}

/// The cells of one file, summed as its rows are parsed.
#[derive(Default)]
struct Cells<'a> {
    map: std::collections::BTreeMap<(NaiveDate, &'a str), Cell>,
    buf: Vec<u8>,
}

impl<'a> Cells<'a> {
    fn add(&mut self, e: &PosEvent<'a>, path: &Path) -> Result<()> {
        let c = self.map.entry((e.business_date, e.currency)).or_insert_with(|| Cell {
            business_date: e.business_date,
            currency: e.currency.to_string(),
            rows: 0,
            revenue_minor: 0,
            digest: 0,
        });
        c.rows += 1;
        c.revenue_minor = c.revenue_minor.checked_add(e.revenue_minor).ok_or_else(|| {
            eyre!("{}: the revenue of business date {} ({}) overflows 64 bits", path.display(), e.business_date, e.currency)
        })?;
        c.digest = c.digest.wrapping_add(row_digest(e, &mut self.buf));
        Ok(())
    }
}

/// Bronze's columns for one file, filled as its lines are parsed.
struct EventColumns {
    event_id: StringBuilder,
    basket_id: StringBuilder,
    store_id: StringBuilder,
    till_id: StringBuilder,
    country: StringBuilder,
    currency: StringBuilder,
    event_ts: TimestampNanosecondBuilder,
    uploaded_at: TimestampNanosecondBuilder,
    upload_date: Date32Builder,
    business_date: Date32Builder,
    revenue: Int64Builder,
    tenders: Int16Builder,
    file_id: Int32Builder,
    line: Int32Builder,
    rows: usize,
}

impl EventColumns {
    fn with_capacity(n: usize) -> EventColumns {
        EventColumns {
            event_id: StringBuilder::with_capacity(n, n * 20),
            basket_id: StringBuilder::with_capacity(n, n * 24),
            store_id: StringBuilder::with_capacity(n, n * 8),
            till_id: StringBuilder::with_capacity(n, n * 12),
            country: StringBuilder::with_capacity(n, n * 2),
            currency: StringBuilder::with_capacity(n, n * 3),
            event_ts: TimestampNanosecondBuilder::with_capacity(n),
            uploaded_at: TimestampNanosecondBuilder::with_capacity(n),
            upload_date: Date32Builder::with_capacity(n),
            business_date: Date32Builder::with_capacity(n),
            revenue: Int64Builder::with_capacity(n),
            tenders: Int16Builder::with_capacity(n),
            file_id: Int32Builder::with_capacity(n),
            line: Int32Builder::with_capacity(n),
            rows: 0,
        }
    }

    fn push(&mut self, e: &PosEvent, file_id: i32, line: u32) -> Result<()> {
        // parse_line has checked both instants fit; an error here would leave no column behind.
        let event_ts = e.event_ts.timestamp_nanos_opt().ok_or_else(|| eyre!("event_ts out of range"))?;
        let uploaded_at = e.uploaded_at.timestamp_nanos_opt().ok_or_else(|| eyre!("uploaded_at out of range"))?;
        self.event_id.append_value(&e.event_id);
        self.basket_id.append_value(&e.basket_id);
        self.store_id.append_value(e.store_id);
        self.till_id.append_value(&e.till_id);
        self.country.append_value(e.country);
        self.currency.append_value(e.currency);
        self.event_ts.append_value(event_ts);
        self.uploaded_at.append_value(uploaded_at);
        self.upload_date.append_value(days(e.upload_date));
        self.business_date.append_value(days(e.business_date));
        self.revenue.append_value(e.revenue_minor);
        self.tenders.append_value(e.tenders.min(i16::MAX as u32) as i16);
        self.file_id.append_value(file_id);
        self.line.append_value(line as i32);
        self.rows += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("event_id", Arc::new(self.event_id.finish())),
            ("basket_id", Arc::new(self.basket_id.finish())),
            ("store_id", Arc::new(self.store_id.finish())),
            ("till_id", Arc::new(self.till_id.finish())),
            ("country", Arc::new(self.country.finish())),
            ("currency", Arc::new(self.currency.finish())),
            ("event_ts", Arc::new(self.event_ts.finish())),
            ("uploaded_at", Arc::new(self.uploaded_at.finish())),
            ("upload_date", Arc::new(self.upload_date.finish())),
            ("business_date", Arc::new(self.business_date.finish())),
            ("revenue_minor", Arc::new(self.revenue.finish())),
            ("tenders", Arc::new(self.tenders.finish())),
            ("file_id", Arc::new(self.file_id.finish())),
            ("line", Arc::new(self.line.finish())),
        ];
        Ok(Some(RecordBatch::try_from_iter(columns)?))
    }
}

/// Lands the given upload partitions of `world` into the lab, in one transaction: either every
/// file of the call lands, or none does and the lab is as it was.
pub fn land(lab: &mut Lab, world: &Path, dates: &[NaiveDate]) -> Result<LandReport> {
    land_with(lab, world, dates, super::fail_after_from_env())
}

pub fn land_with(lab: &mut Lab, world: &Path, dates: &[NaiveDate], fail_after: Option<usize>) -> Result<LandReport> {
    let world_stores = StoreTable::read(&world.join(raw::STORES_FILE))?;
    // A bad partition name anywhere in the world is an error: it would hide a day of sales.
    raw::list_partitions(world)?;
    let lab_stores = lab.stores()?;
    let mut new_stores = Vec::new();
    for s in &world_stores.stores {
        match lab_stores.get(&s.store_id) {
            None => new_stores.push(s.clone()),
            Some(old) if old == s => {}
            Some(old) => bail!(
                "store {} changed from {}/{}/{} to {}/{}/{}: stores.csv rows are immutable once landed",
                s.store_id, old.country, old.timezone.name(), old.currency, s.country, s.timezone.name(), s.currency
            ),
        }
    }
    let mut all_stores = lab_stores.stores.clone();
    all_stores.extend(new_stores.iter().cloned());
    let stores = StoreTable::new(all_stores);

    // Which files are new; a landed file must be byte-identical to what is offered again.
    let mut todo: Vec<(NaiveDate, PathBuf, String)> = Vec::new();
    let mut partitions: Vec<PartitionLanded> = Vec::new();
    let landed_files: std::collections::HashMap<String, String> = {
        let mut stmt = lab.conn.prepare_cached(sql("land", "landed_files"))?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?
    };
    let landed_partitions: std::collections::HashSet<NaiveDate> = {
        let mut stmt = lab.conn.prepare_cached(sql("land", "landed_uploads"))?;
        stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?
    };
    for &d in dates {
        let exists = raw::partition_dir(world, d).is_dir();
        let mut p = PartitionLanded { upload_date: d, files_landed: 0, files_already_landed: 0, events: 0, quarantined: 0, exists };
        for path in raw::list_files(world, d)? {
            let rel = format!("{}/upload_date={d}/{}", raw::EVENTS_DIR, path.file_name().unwrap().to_string_lossy());
            match landed_files.get(&rel) {
                None => todo.push((d, path, rel)),
                Some(md5) => {
                    let now = md5_hex(&std::fs::read(&path)?);
                    if &now != md5 {
                        bail!("{} differs from the copy landed earlier: raw files are immutable", path.display());
                    }
                    p.files_already_landed += 1;
                }
            }
        }
        partitions.push(p);
    }

    let raw_root = lab.raw_root();
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let result = (|| -> Result<(u64, u64, Vec<(String, f64)>)> {
        let mut tx = Tx::begin(&lab.conn, fail_after)?;
        for s in &new_stores {
            tx.execute("adding a store", sql("land", "store_insert"), duckdb::params![s.store_id, s.country, s.timezone.name(), s.currency])?;
        }
        let landing_id: i64 = tx.conn().row_cached(sql("land", "next_landing_id"), [], |r| r.get(0))?;
        let (mut events, mut quarantined) = (0u64, 0u64);
        let first_file_id: i32 = tx.conn().row_cached(sql("land", "next_file_id"), [], |r| r.get(0))?;
        let was_empty = first_file_id == 1;
        let mut t_append = std::time::Duration::ZERO;
        let t_all = std::time::Instant::now();
        // Files are parsed a few at a time on every core by a producer thread while this one
        // appends the previous ones; the bounded channel keeps memory to a few files. File ids
        // follow the order of `todo`, in which the files also arrive here.
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<ParsedFile>>(4);
        // DuckDB's own worker threads only contend with the parsers while rows are appended
        // (one thread appends): the full world lands in 5.8 s instead of 6.4 s (medians of 3 and 2).
        tx.conn().execute_batch(sql("land", "threads_for_appending"))?;
        let todo_ref = &todo;
        let stores_ref = &stores;
        let appended = std::thread::scope(|scope| -> Result<()> {
            scope.spawn(move || {
                for (c, chunk) in todo_ref.chunks(4).enumerate() {
                    let first = first_file_id + (c * 4) as i32;
                    let parsed: Vec<Result<ParsedFile>> =
                        chunk.par_iter().enumerate().map(|(i, (d, path, rel))| parse_file(path, rel, *d, stores_ref, first + i as i32)).collect();
                    for pf in parsed {
                        if sender.send(pf).is_err() {
                            return; // the appender stopped: an error is on its way up
                        }
                    }
                }
            });
            for pf in receiver {
                let mut pf = pf?;
                let t1 = std::time::Instant::now();
                if let Some(batch) = pf.batch.take() {
                    append_events(tx.conn(), batch)?;
                }
                append_cells(tx.conn(), &pf)?;
                t_append += t1.elapsed();
                tx.step("appending bronze events")?;
                append_quarantine(tx.conn(), &pf)?;
                tx.execute(
                    "recording a raw file",
                    sql("land", "file_insert"),
                    duckdb::params![pf.file_id, pf.rel, pf.upload_date, pf.bytes.len() as i64, pf.md5, pf.lines as i64, pf.events as i64, pf.quarantine.len() as i64, landing_id],
                )?;
                let p = partitions.iter_mut().find(|p| p.upload_date == pf.upload_date).expect("partition listed");
                p.files_landed += 1;
                p.events += pf.events as u64;
                p.quarantined += pf.quarantine.len() as u64;
                events += pf.events as u64;
                quarantined += pf.quarantine.len() as u64;
                // Stage the immutable copy next to its final place; it becomes visible only after COMMIT.
                let dest = raw_root.join(&pf.rel);
                let parent = dest.parent().expect("a raw file lives in a partition");
                if !parent.exists() {
                    created_dirs.push(parent.to_path_buf());
                }
                std::fs::create_dir_all(parent)?;
                let tmp = dest.with_extension("gz.landing");
                std::fs::write(&tmp, &pf.bytes).wrap_err_with(|| format!("copying {}", pf.source.display()))?;
                staged.push((tmp, dest));
            }
            Ok(())
        });
        tx.conn().execute_batch(sql("land", "threads_reset"))?;
        appended?;
        let t_parse_and_append = t_all.elapsed();
        let t_split = std::time::Instant::now();
        if !todo.is_empty() {
            tx.execute("finding split baskets", sql("land", "split_baskets_insert"), duckdb::params![first_file_id, was_empty])?;
        }
        let t_split = t_split.elapsed();
        for p in partitions.iter().filter(|p| p.exists) {
            if !landed_partitions.contains(&p.upload_date) {
                tx.execute("recording a partition", sql("land", "partition_insert"), duckdb::params![p.upload_date, p.files_landed as i64, landing_id])?;
            }
        }
        if !todo.is_empty() || !new_stores.is_empty() {
            let first = dates.iter().min().copied();
            let last = dates.iter().max().copied();
            tx.execute(
                "recording the landing",
                sql("land", "landing_insert"),
                duckdb::params![landing_id, first, last, todo.len() as i64, events as i64, quarantined as i64, Utc::now().naive_utc()],
            )?;
        }
        let commit = tx.commit()?.last().map(|p| p.1).unwrap_or_default();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let phases = vec![
            ("parse and append, overlapped (wall)".to_string(), ms(t_parse_and_append)),
            ("  of which appending to bronze".to_string(), ms(t_append)),
            ("finding split baskets".to_string(), ms(t_split)),
            ("commit".to_string(), ms(commit)),
        ];
        Ok((events, quarantined, phases))
    })();
    match result {
        Ok((events, quarantined, phases)) => {
            for (tmp, dest) in &staged {
                std::fs::rename(tmp, dest).wrap_err_with(|| format!("moving {} into the raw zone", dest.display()))?;
            }
            std::fs::write(raw_root.join(raw::STORES_FILE), stores.to_csv())?;
            Ok(LandReport { partitions, stores_added: new_stores.len(), events, quarantined, phases })
        }
        Err(e) => {
            for (tmp, _) in &staged {
                let _ = std::fs::remove_file(tmp);
            }
            // Partition directories this call made go too (remove_dir only removes empty ones),
            // and their parents up to the raw root.
            for dir in created_dirs.iter().rev() {
                let mut d = dir.as_path();
                while d.starts_with(&raw_root) && std::fs::remove_dir(d).is_ok() {
                    match d.parent() {
                        Some(p) => d = p,
                        None => break,
                    }
                }
            }
            Err(e)
        }
    }
}

fn md5_hex(bytes: &[u8]) -> String {
    hex(&md5::Md5::digest(bytes))
}

fn parse_file(path: &Path, rel: &str, upload_date: NaiveDate, stores: &StoreTable, file_id: i32) -> Result<ParsedFile> {
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let text = raw::decompress(&bytes).map_err(|e| eyre!("{}: truncated or corrupt .gz file ({e})", path.display()))?;
    // About 300 bytes a line: enough room for most files without a regrow.
    let mut columns = EventColumns::with_capacity(text.len() / 300 + 16);
    let mut cells = Cells::default();
    let mut quarantine = Vec::new();
    let mut lines = 0u64;
    for (i, line) in text.lines().enumerate() {
        lines += 1;
        let line_no = (i + 1) as u32;
        if line.trim().is_empty() {
            quarantine.push((line_no, "blank line".to_string(), String::new()));
            continue;
        }
        match raw::parse_line(line, stores, upload_date) {
            Ok(e) => {
                columns.push(&e, file_id, line_no)?;
                cells.add(&e, path)?;
            }
            Err(reason) => {
                let mut kept: String = line.chars().take(2000).collect();
                if kept.len() < line.len() {
                    kept.push('…');
                }
                quarantine.push((line_no, reason, kept));
            }
        }
    }
    let events = columns.rows;
    Ok(ParsedFile {
        file_id,
        rel: rel.to_string(),
        source: path.to_path_buf(),
        upload_date,
        md5: md5_hex(&bytes),
        bytes,
        lines,
        batch: columns.finish()?,
        events,
        quarantine,
        cells: cells.map.into_values().collect(),
    })
}

fn days(d: NaiveDate) -> i32 {
    (d - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
}

fn append_cells(conn: &duckdb::Connection, pf: &ParsedFile) -> Result<()> {
    if pf.cells.is_empty() {
        return Ok(());
    }
    let mut app = conn.appender_to_db("cells", "bronze")?;
    for c in &pf.cells {
        app.append_row(duckdb::params![pf.file_id, pf.upload_date, c.business_date, c.currency, c.rows, c.revenue_minor, c.digest as i64])?;
    }
    app.flush()?;
    Ok(())
}

fn append_events(conn: &duckdb::Connection, batch: RecordBatch) -> Result<()> {
    let mut app = conn.appender_to_db("events", "bronze")?;
    app.append_record_batch(batch)?;
    app.flush()?;
    Ok(())
}

fn append_quarantine(conn: &duckdb::Connection, pf: &ParsedFile) -> Result<()> {
    if pf.quarantine.is_empty() {
        return Ok(());
    }
    let mut app = conn.appender_to_db("quarantine", "bronze")?;
    for (line, reason, raw_line) in &pf.quarantine {
        app.append_row(duckdb::params![pf.rel, *line as i32, pf.upload_date, reason, raw_line])?;
    }
    app.flush()?;
    Ok(())
}
