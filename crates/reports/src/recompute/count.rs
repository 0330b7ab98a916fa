//! The recount's counting: each raw file read in parallel into columns of copies (in memory, or
//! spilled to buckets by basket id when they outgrow the recount's share of the budget), the
//! first copy of each basket kept in polars, and the winners summed per date and store with
//! every sum checked.

use super::{GoldRow, Recount};
use crate::lake::Lab;
use crate::model::copies::{self, Copies, ReadCopy, Sums};
use crate::raw::source::Reader;
use crate::raw::{self, StoreTable};
use crate::store::buckets;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, eyre};
use rayon::prelude::*;
use std::path::Path;

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

/// Gives `each` every copy of one file, the file of place `rank` in raw-zone order; returns how
/// many lines it rejected. A copy's group is its store's number in `Stores`, and its measures
/// are retail's: one basket, and its revenue.
fn read_file(
    file: &RawFile,
    rank: u32,
    reader: &Reader,
    stores: &(StoreTable, Stores),
    mut each: impl FnMut(&ReadCopy<'_>) -> Result<()>,
) -> Result<u64> {
    let (path, upload_date) = (file.path.as_path(), file.upload_date);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut rejected = 0;
    raw::mapped::read_events(path, &bytes, reader, &stores.0, upload_date, |line, verdict, _| {
        match verdict {
            Ok(e) => {
                let store = *stores.1.by_id.get(e.store_id).ok_or_else(|| eyre!("store {} is not in the store list", e.store_id))?;
                each(&ReadCopy {
                    key: &e.basket_id,
                    event_id: &e.event_id,
                    arrival: e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MAX),
                    file_rank: rank,
                    line,
                    day: copies::day_of(e.business_date),
                    group: store,
                    measures: &[1, e.revenue_minor],
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
    let (all, stores) = bronze_copies(lab, as_of)?;
    let mut sums = Sums::default();
    add(&mut sums, &stores, all).wrap_err("recounting the warehouse's bronze")?;
    let events = sums.copies;
    Ok((rows(sums, &stores)?, events))
}

/// A mirror's bronze events (as of snapshot `as_of`, None: now), as the recount's copies and the
/// stores they name.
fn bronze_copies(lab: &Lab, as_of: Option<i64>) -> Result<(Copies, Stores)> {
    let mut all = Copies::new(WIDTH);
    let mut stores = Stores::default();
    // Each copy's file by (upload day, name): numbered as met, ranked once every copy is read.
    let mut files: std::collections::HashMap<(i32, String), u32> = Default::default();
    lab.store().recount_events(as_of, |e| {
        let next = u32::try_from(files.len()).unwrap_or(u32::MAX);
        let file = *files.entry((e.upload_day, e.file)).or_insert(next);
        all.push(&ReadCopy {
            key: &e.basket_id,
            event_id: &e.event_id,
            arrival: e.uploaded_at_ns,
            file_rank: file,
            line: u32::try_from(e.line).unwrap_or(u32::MAX),
            day: e.business_day,
            group: stores.number(&e.store_id, &e.country, &e.currency),
            measures: &[1, e.revenue_minor],
        });
    })?;
    let mut order: Vec<(&(i32, String), &u32)> = files.iter().collect();
    order.sort();
    let mut rank = vec![0u32; order.len()];
    for (r, (_, id)) in order.iter().enumerate() {
        rank[**id as usize] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    all.rank_files(|file| rank[file as usize]);
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
    let (mut sums, mut rejected, started) = (Sums::default(), 0u64, std::time::Instant::now());
    if passes == 1 {
        let parts: Vec<Result<(Copies, u64)>> = files
            .par_iter()
            .zip(&rank)
            .map(|(f, &r)| {
                let mut c = Copies::new(WIDTH);
                let n = read_file(f, r, reader, &stores, |copy| {
                    c.push(copy);
                    Ok(())
                })?;
                Ok((c, n))
            })
            .collect();
        let mut all = Copies::new(WIDTH);
        for p in parts {
            let (c, n) = p?;
            all.append(c);
            rejected += n;
        }
        add(&mut sums, &stores.1, all)?;
    } else {
        let spilled = buckets::Buckets::create(spill, passes)?;
        let parts: Vec<Result<u64>> = files
            .par_iter()
            .zip(&rank)
            .map(|(f, &r)| {
                let (mut sink, mut buf) = (spilled.sink(), Vec::new());
                let n = read_file(f, r, reader, &stores, |copy| {
                    Copies::encode(copy, &mut buf);
                    sink.push(copy.key.as_bytes(), &buf)
                })?;
                sink.flush()?;
                Ok(n)
            })
            .collect();
        for n in parts {
            rejected += n?;
        }
        let (spilled, read) = (spilled.finish()?, started.elapsed());
        let mut decoding = std::time::Duration::ZERO;
        spilled.each(recount_share() / buckets::EXPANSION, &mut |records| {
            let t = std::time::Instant::now();
            let c = Copies::of_bucket(records, WIDTH, |_, store| Ok(store))?;
            decoding += t.elapsed();
            add(&mut sums, &stores.1, c)
        })?;
        crate::progress::profile(&copies::phases(files.len(), passes, read, decoding, started.elapsed()));
    }
    let events = sums.copies;
    let rows = rows(sums, &stores.1)?;
    let baskets = rows.iter().map(|r| r.baskets as u64).sum();
    Ok(Recount { rows, events, baskets, rejected_lines: rejected, files: files.len() })
}

/// Retail's measures per copy: one basket, and its revenue.
const WIDTH: usize = 2;

/// Adds a whole recount's or a bucket's copies into `sums`, naming the date and store of a
/// revenue past 64 bits.
fn add(sums: &mut Sums, stores: &Stores, c: Copies) -> Result<()> {
    sums.add(c, |date, store, _| {
        let id = stores.rows.get(store as usize).map_or("?", |r| r.0.as_str());
        format!("{date}: the recount's revenue of store {id}")
    })
}

/// The sums as gold's rows, in (date, store id) order.
fn rows(sums: Sums, stores: &Stores) -> Result<Vec<GoldRow>> {
    let mut rows = Vec::new();
    for (business_date, s, m) in sums.rows() {
        let (store_id, country, currency) = stores.rows.get(s as usize).ok_or_else(|| eyre!("the recount's store {s} has no row"))?;
        rows.push(GoldRow {
            business_date,
            store_id: store_id.clone(),
            country: country.clone(),
            currency: currency.clone(),
            baskets: m[0],
            revenue_minor: m[1],
        });
    }
    rows.sort_by(|a, b| (a.business_date, &a.store_id).cmp(&(b.business_date, &b.store_id)));
    Ok(rows)
}

/// Where a lab's recount spills: the lab's spill folder, beside its raw zone.
pub(super) fn spill_dir(raw_root: &Path) -> std::path::PathBuf {
    raw_root.parent().unwrap_or(raw_root).join(crate::store::SPILL_DIR)
}
