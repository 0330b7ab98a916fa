//! The recount's counting: each raw file read in parallel into columns of copies (in memory, or
//! spilled to buckets by basket id when they outgrow the recount's share of the budget), the
//! first copy of each basket kept in polars, and the winners summed per date and store with
//! every sum checked.

use super::{GoldRow, Recount};
use crate::lake::Lab;
use crate::raw::source::Reader;
use crate::raw::{self, StoreTable};
use crate::store::buckets;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, eyre};
use polars::prelude::*;
use rayon::prelude::*;
use std::path::Path;

#[derive(Default)]
struct Columns {
    basket_id: Vec<String>,
    event_id: Vec<String>,
    uploaded_at: Vec<i64>,
    /// Where each copy sits in the raw zone, as the rank of its file among every file by (upload
    /// date, name in byte order), then its line: the contract's order for exact ties.
    file_rank: Vec<u32>,
    line: Vec<i64>,
    business_date: Vec<i32>,
    /// The copy's store, as its place in `Stores`: one number a row, not three strings.
    store: Vec<u32>,
    revenue: Vec<i64>,
    rejected: u64,
}

/// The stores the recount's rows name by number: (store_id, country, currency) each.
#[derive(Default)]
struct Stores {
    rows: Vec<(String, String, String)>,
    /// A store list's stores by id (a raw zone's: one row a store).
    by_id: std::collections::HashMap<String, u32>,
    /// Stores as bronze's rows give them (a mirror's), by all three.
    by_row: std::collections::HashMap<(String, String, String), u32>,
}

impl Stores {
    fn of(table: &StoreTable) -> Stores {
        let mut s = Stores::default();
        for st in &table.stores {
            let n = s.number(&st.store_id, &st.country, &st.currency);
            s.by_id.insert(st.store_id.clone(), n);
        }
        s
    }

    fn number(&mut self, store_id: &str, country: &str, currency: &str) -> u32 {
        let key = (store_id.to_string(), country.to_string(), currency.to_string());
        if let Some(&n) = self.by_row.get(&key) {
            return n;
        }
        let n = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        self.rows.push(key.clone());
        self.by_row.insert(key, n);
        n
    }
}

/// How many bytes of the recount's working set one copy takes, with polars' sort and dedup over
/// it: what the number of passes is sized by.
const BYTES_PER_COPY: u64 = 320;

/// The recount's share of the memory budget: a quarter, beside DuckDB's three (`store::Limits`).
fn recount_share() -> u64 {
    crate::store::memory_budget() / 4
}

/// How many buckets hold the copies of `files` within the recount's share of the budget, each
/// counted on its own (`recount_files`). One, in memory, for a lab that fits.
pub(super) fn passes_for(files: &[RawFile], reader: &Reader) -> u64 {
    let mut copies = 0u64;
    for f in files {
        let bytes = std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0);
        let compressed =
            reader.compression_of(&f.name) != raw::source::Compression::None || reader.format == raw::source::FileFormat::Parquet;
        // About 40 compressed bytes a copy, or 300 as plain text (the landing's own guess).
        copies += bytes / if compressed { 40 } else { 300 } + 1;
    }
    copies.saturating_mul(BYTES_PER_COPY).div_ceil(recount_share().max(1)).max(1)
}

fn epoch() -> NaiveDate {
    chrono::DateTime::UNIX_EPOCH.date_naive()
}

/// The current files of a lab's raw zone, by upload and name: the contract's partitions, each
/// file the lab's reader takes.
pub(super) fn lab_files(raw_root: &Path, reader: &Reader) -> Result<Vec<RawFile>> {
    let mut files = Vec::new();
    for d in raw::list_partitions(raw_root)? {
        for path in raw::files_below(&raw::partition_dir(raw_root, d))? {
            let taken = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| raw::source::glob_takes(&reader.glob, n));
            if taken {
                let rel = path.strip_prefix(raw_root).unwrap_or(&path).to_string_lossy().into_owned();
                files.push(RawFile::new(d, path, &rel));
            }
        }
    }
    Ok(files)
}

/// One file of the lab's raw zone to recount: its upload, where its bytes are (a superseded
/// version is kept elsewhere) and its name in its upload (its path below the partition), which
/// orders exact ties after the upload date.
pub(super) struct RawFile {
    pub(super) upload_date: NaiveDate,
    pub(super) path: std::path::PathBuf,
    pub(super) name: String,
}

impl RawFile {
    /// `rel` is the file's path in the raw zone, as raw.files records it.
    pub(super) fn new(upload_date: NaiveDate, path: std::path::PathBuf, rel: &str) -> RawFile {
        let name = rel.strip_prefix(&raw::rel_path(upload_date, "")).unwrap_or(rel).to_string();
        RawFile { upload_date, path, name }
    }
}

/// One copy as a file gives it, before it joins a pass's columns or a spilled bucket.
struct RawCopy<'a> {
    basket_id: &'a str,
    event_id: &'a str,
    uploaded_at: i64,
    line: i64,
    business_date: i32,
    store: u32,
    revenue: i64,
}

impl Columns {
    fn push(&mut self, c: &RawCopy<'_>, rank: u32) {
        self.basket_id.push(c.basket_id.to_string());
        self.event_id.push(c.event_id.to_string());
        self.uploaded_at.push(c.uploaded_at);
        self.file_rank.push(rank);
        self.line.push(c.line);
        self.business_date.push(c.business_date);
        self.store.push(c.store);
        self.revenue.push(c.revenue);
    }

    /// A spilled bucket's copies (`spilled_copy`'s encoding) as columns.
    fn of_bucket(records: buckets::Records<'_>) -> Result<Columns> {
        let mut c = Columns::default();
        for r in records {
            let (basket_id, payload) = r?;
            let mut f = buckets::Payload::new(payload);
            let copy = RawCopy {
                basket_id: std::str::from_utf8(basket_id).map_err(|_| eyre!("a spilled basket id is not UTF-8"))?,
                event_id: f.str()?,
                uploaded_at: f.i64()?,
                line: f.i64()?,
                business_date: f.u32()? as i32,
                store: f.u32()?,
                revenue: f.i64()?,
            };
            let rank = f.u32()?;
            c.push(&copy, rank);
        }
        Ok(c)
    }
}

/// A copy's payload in a spilled bucket (its basket id is the record's key).
fn spilled_copy(c: &RawCopy<'_>, rank: u32, buf: &mut Vec<u8>) {
    buf.clear();
    buckets::put_str(buf, c.event_id);
    buckets::put_i64(buf, c.uploaded_at);
    buckets::put_i64(buf, c.line);
    buckets::put_u32(buf, c.business_date as u32);
    buckets::put_u32(buf, c.store);
    buckets::put_i64(buf, c.revenue);
    buckets::put_u32(buf, rank);
}

/// Gives `each` every copy of one file; returns how many lines it rejected.
fn read_file(
    file: &RawFile,
    reader: &Reader,
    stores: &(StoreTable, Stores),
    mut each: impl FnMut(&RawCopy<'_>) -> Result<()>,
) -> Result<u64> {
    let (path, upload_date) = (file.path.as_path(), file.upload_date);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut rejected = 0;
    raw::mapped::read_events(path, &bytes, reader, &stores.0, upload_date, |line, verdict, _| {
        match verdict {
            Ok(e) => {
                let store = *stores.1.by_id.get(e.store_id).ok_or_else(|| eyre!("store {} is not in the store list", e.store_id))?;
                each(&RawCopy {
                    basket_id: &e.basket_id,
                    event_id: &e.event_id,
                    uploaded_at: e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MAX),
                    line: i64::from(line),
                    business_date: (e.business_date - epoch()).num_days() as i32,
                    store,
                    revenue: e.revenue_minor,
                })?;
            }
            Err(_) => rejected += 1,
        }
        Ok(())
    })
    .wrap_err_with(|| format!("{}", path.display()))?;
    Ok(rejected)
}

/// A mirror's bronze (as of snapshot `as_of`, None: now) recounted as a raw zone's copies are:
/// its rows, and the events read.
pub(super) fn bronze_recount(lab: &Lab, as_of: Option<i64>) -> Result<(Vec<GoldRow>, u64)> {
    let (all, stores) = bronze_columns(lab, as_of)?;
    let mut sums = StoreSums::default();
    sums.add(all).wrap_err("recounting the warehouse's bronze")?;
    let events = sums.events;
    Ok((sums.rows(&stores)?, events))
}

/// A mirror's bronze events (as of snapshot `as_of`, None: now), as the recount's columns and
/// the stores they name.
fn bronze_columns(lab: &Lab, as_of: Option<i64>) -> Result<(Columns, Stores)> {
    let mut all = Columns::default();
    let mut stores = Stores::default();
    // Each copy's file by (upload day, name), ranked once every copy is read.
    let mut files: std::collections::HashMap<(i32, String), u32> = Default::default();
    let mut file_of = Vec::new();
    lab.store().recount_events(as_of, |e| {
        let next = u32::try_from(files.len()).unwrap_or(u32::MAX);
        let file = *files.entry((e.upload_day, e.file)).or_insert(next);
        file_of.push(file);
        all.basket_id.push(e.basket_id);
        all.event_id.push(e.event_id);
        all.uploaded_at.push(e.uploaded_at_ns);
        all.line.push(e.line);
        all.business_date.push(e.business_day);
        all.store.push(stores.number(&e.store_id, &e.country, &e.currency));
        all.revenue.push(e.revenue_minor);
    })?;
    let mut order: Vec<(&(i32, String), &u32)> = files.iter().collect();
    order.sort();
    let mut rank = vec![0u32; order.len()];
    for (r, (_, id)) in order.iter().enumerate() {
        rank[**id as usize] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    all.file_rank = file_of.into_iter().map(|id| rank[id as usize]).collect();
    Ok((all, stores))
}

/// Recounts the given files of a raw zone. When they fit the recount's share of the memory
/// budget (`passes_for`), in one parallel read into memory. When they do not, in one parallel
/// read that spills each copy to a bucket by its basket id (under `spill`), then bucket by
/// bucket: every copy of a basket is in one bucket, so each is deduplicated on its own and the
/// buckets' sums, per date and store, add up. A bucket past the share is split again from its
/// own file.
pub(super) fn recount_files(files: &[RawFile], reader: &Reader, table: &StoreTable, passes: u64, spill: &Path) -> Result<Recount> {
    let stores = (table.clone(), Stores::of(table));
    // The raw zone's order: by upload date, then name in byte order.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| (files[a].upload_date, files[a].name.as_bytes()).cmp(&(files[b].upload_date, files[b].name.as_bytes())));
    let mut rank = vec![0u32; files.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    let (mut sums, started) = (StoreSums::default(), std::time::Instant::now());
    if passes == 1 {
        let parts: Vec<Result<Columns>> = files
            .par_iter()
            .zip(&rank)
            .map(|(f, &r)| {
                let mut c = Columns::default();
                c.rejected = read_file(f, reader, &stores, |copy| {
                    c.push(copy, r);
                    Ok(())
                })?;
                Ok(c)
            })
            .collect();
        let mut all = Columns::default();
        for p in parts {
            all.append(p?);
        }
        sums.add(all)?;
    } else {
        let spilled = buckets::Buckets::create(spill, passes)?;
        let rejected: Vec<Result<u64>> = files
            .par_iter()
            .zip(&rank)
            .map(|(f, &r)| {
                let (mut sink, mut buf) = (spilled.sink(), Vec::new());
                let n = read_file(f, reader, &stores, |copy| {
                    spilled_copy(copy, r, &mut buf);
                    sink.push(copy.basket_id.as_bytes(), &buf)
                })?;
                sink.flush()?;
                Ok(n)
            })
            .collect();
        for n in rejected {
            sums.rejected += n?;
        }
        let (spilled, read) = (spilled.finish()?, started.elapsed());
        let mut decoding = std::time::Duration::ZERO;
        spilled.each(recount_share() / buckets::EXPANSION, &mut |records| {
            let t = std::time::Instant::now();
            let c = Columns::of_bucket(records)?;
            decoding += t.elapsed();
            sums.add(c)
        })?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        crate::progress::profile(&[
            (format!("recount: read {} files into {passes} buckets", files.len()), ms(read)),
            ("recount: buckets read back".to_string(), ms(decoding)),
            ("recount: buckets counted".to_string(), ms(started.elapsed() - read - decoding)),
        ]);
    }
    let (events, rejected_lines) = (sums.events, sums.rejected);
    let rows = sums.rows(&stores.1)?;
    let baskets = rows.iter().map(|r| r.baskets as u64).sum();
    Ok(Recount { rows, events, baskets, rejected_lines, files: files.len() })
}

/// The recount's sums so far, per date and store, over every pass or bucket counted.
#[derive(Default)]
struct StoreSums {
    /// Baskets and revenue per (days since 1970, the store's number in `Stores`).
    by_store: std::collections::HashMap<(i32, u32), (i64, i64)>,
    events: u64,
    rejected: u64,
}

impl StoreSums {
    /// Deduplicates `c` (a whole pass or bucket: every copy of its baskets) and adds its sums.
    fn add(&mut self, c: Columns) -> Result<()> {
        self.events += c.basket_id.len() as u64;
        self.rejected += c.rejected;
        let won = winners(c).map_err(|e| eyre!("polars recount: {e}"))?;
        let column = |name: &str| won.column(name).map_err(|e| eyre!("polars recount: {e}"));
        let (date, store, revenue) = (column("business_date")?.i32()?, column("store")?.u32()?, column("revenue_minor")?.i64()?);
        for ((d, s), r) in date.into_no_null_iter().zip(store.into_no_null_iter()).zip(revenue.into_no_null_iter()) {
            let sum = self.by_store.entry((d, s)).or_default();
            sum.0 += 1;
            crate::money::add(&mut sum.1, r, || format!("{}: the recount's revenue", epoch() + chrono::Duration::days(i64::from(d))))?;
        }
        Ok(())
    }

    /// The sums as rows, in (date, store id) order.
    fn rows(self, stores: &Stores) -> Result<Vec<GoldRow>> {
        let mut rows = Vec::with_capacity(self.by_store.len());
        for ((d, s), (baskets, revenue_minor)) in self.by_store {
            let (store_id, country, currency) = stores.rows.get(s as usize).ok_or_else(|| eyre!("the recount's store {s} has no row"))?;
            rows.push(GoldRow {
                business_date: epoch() + chrono::Duration::days(i64::from(d)),
                store_id: store_id.clone(),
                country: country.clone(),
                currency: currency.clone(),
                baskets,
                revenue_minor,
            });
        }
        rows.sort_by(|a, b| (a.business_date, &a.store_id).cmp(&(b.business_date, &b.store_id)));
        Ok(rows)
    }
}

impl Columns {
    fn append(&mut self, p: Columns) {
        self.basket_id.extend(p.basket_id);
        self.event_id.extend(p.event_id);
        self.uploaded_at.extend(p.uploaded_at);
        self.file_rank.extend(p.file_rank);
        self.line.extend(p.line);
        self.business_date.extend(p.business_date);
        self.store.extend(p.store);
        self.revenue.extend(p.revenue);
        self.rejected += p.rejected;
    }
}

/// Where a lab's recount spills: the lab's spill folder, beside its raw zone.
pub(super) fn spill_dir(raw_root: &Path) -> std::path::PathBuf {
    raw_root.parent().unwrap_or(raw_root).join(crate::store::SPILL_DIR)
}

/// The winners of `c`'s copies (the first copy of each basket, in polars), as `(date, store)`
/// and revenue each: summed by `StoreSums::add`, every sum checked.
#[allow(deprecated)] // the eager frame: polars' lazy engine would add half an hour of build
fn winners(c: Columns) -> PolarsResult<DataFrame> {
    let height = c.basket_id.len();
    let df = DataFrame::new(
        height,
        vec![
            Column::new("basket_id".into(), c.basket_id),
            Column::new("arrival".into(), c.uploaded_at),
            Column::new("event_id".into(), c.event_id),
            Column::new("file_rank".into(), c.file_rank),
            Column::new("line".into(), c.line),
            Column::new("business_date".into(), c.business_date),
            Column::new("store".into(), c.store),
            Column::new("revenue_minor".into(), c.revenue),
        ],
    )?;
    crate::model::recount::first_copies(df, "basket_id")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(revenue: &[i64]) -> Columns {
        let mut c = Columns::default();
        for (i, &r) in revenue.iter().enumerate() {
            let (basket, event) = (format!("B{i}"), format!("e{i}"));
            let copy = RawCopy {
                basket_id: &basket,
                event_id: &event,
                uploaded_at: 0,
                line: i as i64,
                business_date: 20_000,
                store: 0,
                revenue: r,
            };
            c.push(&copy, 0);
        }
        c
    }

    /// The sums of a date and store are checked in Rust, not summed by polars, which wraps.
    #[test]
    fn a_store_s_revenue_past_64_bits_is_an_error_naming_the_date() {
        let mut sums = StoreSums::default();
        sums.add(copies(&[7, 8])).unwrap();
        assert_eq!(sums.by_store.get(&(20_000, 0)), Some(&(2, 15)));
        let err = format!("{:#}", sums.add(copies(&[i64::MAX - 10, 1])).unwrap_err());
        assert!(err.contains("2024-10-04") && err.contains("64 bits"), "{err}");
    }
}
