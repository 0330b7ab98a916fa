//! The independent recount: every landed event, read from the raw zone's files (not from
//! DuckDB), deduplicated by basket_id and grouped by business date in polars, with no lateness
//! window. Its answers are cached in the lab, keyed by the raw zone's manifest.

use crate::lake::Lab;
use crate::raw::source::Reader;
use crate::raw::{self, StoreTable};
use crate::store::{DuckRecount, RecountRow, Tx};
use chrono::{NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, eyre};
use polars::prelude::*;
use rayon::prelude::*;
use std::path::Path;

/// One row of daily sales per store: the shape of gold, and of the recount.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GoldRow {
    pub business_date: NaiveDate,
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub baskets: i64,
    pub revenue_minor: i64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Recount {
    pub rows: Vec<GoldRow>,
    pub events: u64,
    pub baskets: u64,
    pub rejected_lines: u64,
    pub files: usize,
}

/// Names and sizes of the raw zone's files, and the superseded versions kept beside them: every
/// version is immutable and a correction always adds one, so this identifies the content.
pub fn manifest(raw_root: &Path) -> Result<String> {
    let mut parts = Vec::new();
    let stores = raw_root.join(raw::STORES_FILE);
    if stores.exists() {
        // Its bytes' digest, not its size: a corrected row may keep the file's length.
        parts.push(format!("stores:{}", raw::md5_of_file(&stores)?));
    }
    let reader = Reader::of_lab(raw_root)?;
    if !reader.is_default() {
        parts.push(format!("reader:{}", raw::md5_hex(reader.to_toml()?.as_bytes())));
    }
    for f in lab_files(raw_root, &reader)? {
        parts.push(format!("{}/{}:{}", f.upload_date, f.name, std::fs::metadata(&f.path)?.len()));
    }
    let versions = raw_root.join(crate::raw::VERSIONS_DIR);
    if versions.is_dir() {
        // Every file below it, at any depth (a file of an hourly folder is kept in its folder).
        let mut kept: Vec<String> = raw::files_below(&versions)?
            .iter()
            .map(|f| format!("superseded:{}", f.strip_prefix(&versions).unwrap_or(f).display()))
            .collect();
        kept.sort();
        parts.extend(kept);
    }
    Ok(parts.join(","))
}

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

/// How many passes hold the copies of `files` within the recount's share of the budget: each
/// pass reads every file and keeps the baskets whose key hashes to it, so every copy of a basket
/// is deduplicated in the same pass and the passes' sums add up. One pass for a lab that fits.
fn passes_for(files: &[RawFile], reader: &Reader) -> u64 {
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

/// The pass a basket's copies are counted in.
fn pass_of(basket_id: &str, passes: u64) -> u64 {
    if passes == 1 { 0 } else { xxhash_rust::xxh3::xxh3_64(basket_id.as_bytes()) % passes }
}

fn epoch() -> NaiveDate {
    chrono::DateTime::UNIX_EPOCH.date_naive()
}

/// The current files of a lab's raw zone, by upload and name: the contract's partitions, each
/// file the lab's reader takes.
fn lab_files(raw_root: &Path, reader: &Reader) -> Result<Vec<RawFile>> {
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
struct RawFile {
    upload_date: NaiveDate,
    path: std::path::PathBuf,
    name: String,
}

impl RawFile {
    /// `rel` is the file's path in the raw zone, as raw.files records it.
    fn new(upload_date: NaiveDate, path: std::path::PathBuf, rel: &str) -> RawFile {
        let name = rel.strip_prefix(&raw::rel_path(upload_date, "")).unwrap_or(rel).to_string();
        RawFile { upload_date, path, name }
    }
}

/// The copies of one file whose basket is counted in pass `pass` of `passes`; `rank`, the file's
/// place in the raw zone's order.
fn read_file(file: &RawFile, rank: u32, (pass, passes): (u64, u64), reader: &Reader, stores: &(StoreTable, Stores)) -> Result<Columns> {
    let (path, upload_date) = (file.path.as_path(), file.upload_date);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut c = Columns::default();
    raw::mapped::read_events(path, &bytes, reader, &stores.0, upload_date, |line, verdict, _| {
        match verdict {
            Ok(e) if pass_of(&e.basket_id, passes) == pass => {
                let store = *stores.1.by_id.get(e.store_id).ok_or_else(|| eyre!("store {} is not in the store list", e.store_id))?;
                c.basket_id.push(e.basket_id.into_owned());
                c.event_id.push(e.event_id.into_owned());
                c.uploaded_at.push(e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MAX));
                c.file_rank.push(rank);
                c.line.push(i64::from(line));
                c.business_date.push((e.business_date - epoch()).num_days() as i32);
                c.store.push(store);
                c.revenue.push(e.revenue_minor);
            }
            Ok(_) => {}
            // A rejected line is counted once, in the first pass.
            Err(_) if pass == 0 => c.rejected += 1,
            Err(_) => {}
        }
        Ok(())
    })
    .wrap_err_with(|| format!("{}", path.display()))?;
    Ok(c)
}

/// Recounts a raw zone from its files.
pub fn recount(raw_root: &Path) -> Result<Recount> {
    recount_in_passes(raw_root, None)
}

/// `recount` in a given number of passes (None: as many as the memory budget needs): the tests
/// hold every number of passes to one.
#[doc(hidden)]
pub fn recount_in_passes(raw_root: &Path, passes: Option<u64>) -> Result<Recount> {
    let stores = StoreTable::read(&raw_root.join(raw::STORES_FILE))?;
    let reader = Reader::of_lab(raw_root)?;
    let files = lab_files(raw_root, &reader)?;
    let passes = match passes {
        Some(n) => n.max(1),
        None => passes_for(&files, &reader),
    };
    recount_files(&files, &reader, &stores, passes)
}

/// The recount of business date `d` over the raw zone as it was when snapshot `snapshot_id` was
/// recorded: the file versions current then, read from the lab's raw zone (a version replaced
/// since is read from where it is kept). Per store, as the cache gives it for now.
pub fn recount_date_as_of(lab: &Lab, d: NaiveDate, snapshot_id: i64) -> Result<Vec<crate::store::StoreFigures>> {
    let raw_root = lab.raw_root();
    if !raw_root.join(raw::STORES_FILE).exists() {
        return Ok(Vec::new());
    }
    let rows = if lab.is_mirror() {
        // A warehouse keeps no raw files: its bronze as it was then, recounted the same way.
        let (all, stores) = bronze_columns(lab, Some(snapshot_id))?;
        group(all, &stores).map_err(|e| eyre!("polars recount of the warehouse's bronze: {e}"))?
    } else {
        let stores = lab.stores_as_of(snapshot_id)?;
        let files: Vec<RawFile> = lab
            .store()
            .files_as_of(snapshot_id)?
            .into_iter()
            .map(|f| {
                let path = if f.superseded_now { raw::superseded_path(&raw_root, &f.file, f.version) } else { raw_root.join(&f.file) };
                RawFile::new(f.upload_date, path, &f.file)
            })
            .collect();
        let reader = Reader::of_lab(&raw_root)?;
        recount_files(&files, &reader, &stores, passes_for(&files, &reader))
            .wrap_err_with(|| format!("recounting the raw zone as of snapshot {snapshot_id}"))?
            .rows
    };
    Ok(rows
        .into_iter()
        .filter(|r| r.business_date == d)
        .map(|r| crate::store::StoreFigures {
            store_id: r.store_id,
            country: r.country,
            currency: r.currency,
            baskets: r.baskets,
            revenue_minor: r.revenue_minor,
        })
        .collect())
}

/// The independent recount of a warehouse's mirror (crates/spark/src/warehouse/), which holds no raw files:
/// every event of bronze's current file versions, deduplicated and grouped in polars as the
/// raw zone's are, stored as the mirror's cached recount of its (empty) raw zone.
pub fn recount_mirror(lab: &Lab) -> Result<()> {
    let (all, stores) = bronze_columns(lab, None)?;
    let events = all.basket_id.len() as i64;
    let rows = group(all, &stores).map_err(|e| eyre!("polars recount of the warehouse's bronze: {e}"))?;
    let baskets = rows.iter().map(|r| r.baskets).sum();
    store(lab, &manifest(&lab.raw_root())?, events, baskets, &rows)
}

/// Replaces the lab's cached recount with `rows`, counted from the raw zone `manifest` names.
fn store(lab: &Lab, manifest: &str, events: i64, baskets: i64, rows: &[GoldRow]) -> Result<()> {
    let mut tx = Tx::begin(lab.store(), None)?;
    let stored = rows.iter().map(|r| RecountRow {
        business_date: r.business_date,
        store_id: &r.store_id,
        country: &r.country,
        currency: &r.currency,
        baskets: r.baskets,
        revenue_minor: r.revenue_minor,
    });
    tx.replace_recount(manifest, events, baskets, Utc::now().naive_utc(), stored)?;
    tx.commit().map(drop)
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

/// Recounts the given files of a raw zone: in as many passes as the recount's share of the
/// memory budget needs (`passes_for`), each a parallel read of every file that keeps the baskets
/// of its pass, deduplicated and summed; the passes' sums, per date and store, add up.
fn recount_files(files: &[RawFile], reader: &Reader, table: &StoreTable, passes: u64) -> Result<Recount> {
    let stores = (table.clone(), Stores::of(table));
    // The raw zone's order: by upload date, then name in byte order.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| (files[a].upload_date, files[a].name.as_bytes()).cmp(&(files[b].upload_date, files[b].name.as_bytes())));
    let mut rank = vec![0u32; files.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    let (mut events, mut rejected) = (0u64, 0u64);
    let mut sums: std::collections::BTreeMap<(NaiveDate, String, String, String), (i64, i64)> = Default::default();
    for pass in 0..passes {
        let parts: Vec<Result<Columns>> =
            files.par_iter().zip(&rank).map(|(f, &r)| read_file(f, r, (pass, passes), reader, &stores)).collect();
        let mut all = Columns::default();
        for p in parts {
            let p = p?;
            all.basket_id.extend(p.basket_id);
            all.event_id.extend(p.event_id);
            all.uploaded_at.extend(p.uploaded_at);
            all.file_rank.extend(p.file_rank);
            all.line.extend(p.line);
            all.business_date.extend(p.business_date);
            all.store.extend(p.store);
            all.revenue.extend(p.revenue);
            rejected += p.rejected;
        }
        events += all.basket_id.len() as u64;
        for r in group(all, &stores.1).map_err(|e| eyre!("polars recount: {e}"))? {
            let sum = sums.entry((r.business_date, r.store_id, r.country, r.currency)).or_default();
            sum.0 += r.baskets;
            crate::money::add(&mut sum.1, r.revenue_minor, || format!("{}: the recount's revenue", r.business_date))?;
        }
    }
    let rows: Vec<GoldRow> = sums
        .into_iter()
        .map(|((business_date, store_id, country, currency), (baskets, revenue_minor))| GoldRow {
            business_date,
            store_id,
            country,
            currency,
            baskets,
            revenue_minor,
        })
        .collect();
    let baskets = rows.iter().map(|r| r.baskets as u64).sum();
    Ok(Recount { rows, events, baskets, rejected_lines: rejected, files: files.len() })
}

#[allow(deprecated)] // the eager group-by: polars' lazy engine would add half an hour of build
fn group(c: Columns, stores: &Stores) -> PolarsResult<Vec<GoldRow>> {
    let height = c.basket_id.len();
    let df = DataFrame::new(
        height,
        vec![
            Column::new("basket_id".into(), c.basket_id),
            Column::new("arrival".into(), c.uploaded_at),
            Column::new("event_id".into(), c.event_id),
            Column::new("file_rank".into(), c.file_rank),
            Column::new("line".into(), c.line),
            Int32Chunked::from_vec("business_date".into(), c.business_date).into_date().into_column(),
            Column::new("store".into(), c.store),
            Column::new("revenue_minor".into(), c.revenue),
        ],
    )?;
    // Dedup: per basket_id the first copy in the contract's order.
    let order = crate::rules::copy_sort("basket_id");
    let sorted = df.sort(order, SortMultipleOptions::default().with_maintain_order(true))?;
    let winners = sorted.unique_stable(Some(&["basket_id".to_string()]), UniqueKeepStrategy::First, None)?;
    let keys = ["business_date", "store"];
    let groups = winners.group_by(keys)?;
    let sums = groups.clone().select(["revenue_minor"]).sum()?;
    let counts = groups.select(["revenue_minor"]).count()?;
    let date = sums.column("business_date")?.cast(&DataType::Int32)?;
    let date = date.i32()?;
    let store = sums.column("store")?.u32()?;
    let revenue = sums.column("revenue_minor_sum")?.i64()?;
    let n = counts.column("revenue_minor_count")?.cast(&DataType::Int64)?;
    let n = n.i64()?;
    let mut rows = Vec::with_capacity(sums.height());
    for i in 0..sums.height() {
        let missing = || polars_err!(ComputeError: "null in the recount's row {i}");
        let (store_id, country, currency) = stores.rows.get(store.get(i).ok_or_else(missing)? as usize).ok_or_else(missing)?;
        rows.push(GoldRow {
            business_date: epoch() + chrono::Duration::days(date.get(i).ok_or_else(missing)? as i64),
            store_id: store_id.clone(),
            country: country.clone(),
            currency: currency.clone(),
            baskets: n.get(i).ok_or_else(missing)?,
            revenue_minor: revenue.get(i).ok_or_else(missing)?,
        });
    }
    rows.sort_by(|a, b| (a.business_date, &a.store_id).cmp(&(b.business_date, &b.store_id)));
    Ok(rows)
}

/// Whether the lab's cached recount counted the raw zone as it is.
pub fn is_cached(lab: &Lab) -> Result<bool> {
    Ok(lab.store().recount_manifest()?.as_deref() == Some(manifest(&lab.raw_root())?.as_str()))
}

/// Makes sure the lab's cached recount matches its raw zone; recounts when it does not.
/// Returns true when it had to recount.
pub fn ensure_cached(lab: &Lab) -> Result<bool> {
    let raw_root = lab.raw_root();
    let now = manifest(&raw_root)?;
    if lab.store().recount_manifest()?.as_deref() == Some(now.as_str()) {
        return Ok(false);
    }
    caches_writable(lab)?;
    let recount = if raw_root.join(raw::STORES_FILE).exists() {
        recount(&raw_root).wrap_err("recounting the raw zone with polars")?
    } else {
        Recount { rows: Vec::new(), events: 0, baskets: 0, rejected_lines: 0, files: 0 }
    };
    store(lab, &now, recount.events as i64, recount.baskets as i64, &recount.rows)?;
    Ok(true)
}

/// DuckDB's own recount of `d` for window `late_days`: the second engine `check` (and so the
/// explorer's Overview) compares polars' recount with. It is read from the recount of every date
/// the lab keeps for that window, counted again in one pass when a file has landed since (the
/// cost of about ten dates' own recounts, which would otherwise be most of each check). A reader that may not write the lab's caches recounts the date alone,
/// with the same rule (`date_recount` in recompute.sql).
pub fn duckdb_recount(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<Vec<DuckRecount>> {
    let store = lab.store();
    let state = store.duckdb_recount_state(late_days)?;
    if !state.kept {
        if !lab.may_write_caches() {
            return duckdb_recount_alone(lab, d, late_days);
        }
        if !try_keeping_recount(lab, state.newest_file, late_days)? {
            return duckdb_recount_alone(lab, d, late_days);
        }
    }
    store.duckdb_recount_kept(d, late_days, state.newest_file)
}

/// DuckDB's recount of `d` alone (the date's own statement), as a reader that may not write the
/// lab's caches reads it: the tests hold `duckdb_recount`'s kept rows to it.
pub fn duckdb_recount_alone(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<Vec<DuckRecount>> {
    lab.store().duckdb_recount(d, lab.has_key_collisions()?, late_days)
}

/// Whether DuckDB's recount is kept through the newest file for the default window.
pub fn duckdb_recount_kept(lab: &Lab) -> Result<bool> {
    Ok(lab.store().duckdb_recount_state(crate::rules::DEFAULT_LATE_DAYS)?.kept)
}

/// Keeps DuckDB's recount for every window the lab's writes used, and the default (a reader's
/// `reports::freshen`, so that its checks read it). A window whose recount cannot be kept is
/// left to the checks, which recount their date alone (`duckdb_recount`).
pub fn keep_duckdb_recounts(lab: &Lab) -> Result<()> {
    for w in lab.store().duckdb_recount_missing(crate::rules::DEFAULT_LATE_DAYS)? {
        caches_writable(lab)?;
        let late_days = u32::try_from(w.late_days).wrap_err("a negative window in the lab's writes")?;
        try_keeping_recount(lab, w.newest_file, late_days)?;
    }
    Ok(())
}

/// Keeps the recount of window `late_days`; a failure other than a cancel rolls it back and
/// returns false, since the kept recount only saves time (DuckDB's memory limit on a larger
/// world, a full disk). The process remembers the failure: the statement, a pass over all of
/// bronze, is not tried again for the same newest file and window, and every check answers from
/// its date's own recount meanwhile.
fn try_keeping_recount(lab: &Lab, newest_file: i32, late_days: u32) -> Result<bool> {
    if lab.recounts_not_kept.borrow().contains(&(newest_file, late_days)) {
        return Ok(false);
    }
    match keep_duckdb_recount(lab, newest_file, late_days) {
        Ok(()) => Ok(true),
        Err(e) if crate::error::lab_error(&e) == Some(&crate::error::LabError::Interrupted) => Err(e),
        Err(_) => {
            lab.recounts_not_kept.borrow_mut().insert((newest_file, late_days));
            Ok(false)
        }
    }
}

fn keep_duckdb_recount(lab: &Lab, newest_file: i32, late_days: u32) -> Result<()> {
    let key_collisions = lab.has_key_collisions()?;
    lab.store().retrying_out_of_memory(false, || {
        let mut tx = Tx::begin(lab.store(), None)?;
        tx.refill_duckdb_recount(newest_file, late_days, key_collisions)?;
        tx.commit().map(drop)
    })
}

/// Forgets DuckDB's kept recounts, so the next check counts them again (the bench measures that).
pub fn forget_duckdb_recounts(lab: &Lab) -> Result<()> {
    lab.store().forget_duckdb_recount()
}

/// A cache found out of date by a reader that may not write it: `reports::freshen` was not
/// called first.
pub fn caches_writable(lab: &Lab) -> Result<()> {
    if lab.may_write_caches() {
        return Ok(());
    }
    color_eyre::eyre::bail!("the lab's caches are out of date and this reader may not write them (reports::freshen first)")
}
