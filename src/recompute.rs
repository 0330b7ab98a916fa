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
pub(crate) fn manifest(raw_root: &Path) -> Result<String> {
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
    /// Where each copy sits in the raw zone: the contract's order for exact ties.
    upload_date: Vec<i32>,
    file: Vec<String>,
    line: Vec<i64>,
    business_date: Vec<i32>,
    store_id: Vec<String>,
    country: Vec<String>,
    currency: Vec<String>,
    revenue: Vec<i64>,
    rejected: u64,
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

fn read_file(file: &RawFile, reader: &Reader, stores: &StoreTable) -> Result<Columns> {
    let (path, upload_date, name) = (file.path.as_path(), file.upload_date, &file.name);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let day = (upload_date - epoch()).num_days() as i32;
    let mut c = Columns::default();
    raw::mapped::read_events(path, &bytes, reader, stores, upload_date, |line, verdict, _| {
        match verdict {
            Ok(e) => {
                c.basket_id.push(e.basket_id.into_owned());
                c.event_id.push(e.event_id.into_owned());
                c.uploaded_at.push(e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MAX));
                c.upload_date.push(day);
                c.file.push(name.clone());
                c.line.push(i64::from(line));
                c.business_date.push((e.business_date - epoch()).num_days() as i32);
                c.store_id.push(e.store_id.to_string());
                c.country.push(e.country.to_string());
                c.currency.push(e.currency.to_string());
                c.revenue.push(e.revenue_minor);
            }
            Err(_) => c.rejected += 1,
        }
        Ok(())
    })
    .wrap_err_with(|| format!("{}", path.display()))?;
    Ok(c)
}

/// Recounts a raw zone from its files.
pub fn recount(raw_root: &Path) -> Result<Recount> {
    let stores = StoreTable::read(&raw_root.join(raw::STORES_FILE))?;
    let reader = Reader::of_lab(raw_root)?;
    recount_files(&lab_files(raw_root, &reader)?, &reader, &stores)
}

/// The recount of business date `d` over the raw zone as it was when snapshot `snapshot_id` was
/// recorded: the file versions current then, read from the lab's raw zone (a version replaced
/// since is read from where it is kept). Per store, as the cache gives it for now.
pub(crate) fn recount_date_as_of(lab: &Lab, d: NaiveDate, snapshot_id: i64) -> Result<Vec<crate::store::StoreFigures>> {
    let raw_root = lab.raw_root();
    if !raw_root.join(raw::STORES_FILE).exists() {
        return Ok(Vec::new());
    }
    let rows = if crate::warehouse::is_mirror(lab) {
        // A warehouse keeps no raw files: its bronze as it was then, recounted the same way.
        group(bronze_columns(lab, Some(snapshot_id))?).map_err(|e| eyre!("polars recount of the warehouse's bronze: {e}"))?
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
        recount_files(&files, &Reader::of_lab(&raw_root)?, &stores)
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

/// The independent recount of a warehouse's mirror (src/warehouse.rs), which holds no raw files:
/// every event of bronze's current file versions, deduplicated and grouped in polars as the
/// raw zone's are, stored as the mirror's cached recount of its (empty) raw zone.
pub(crate) fn recount_mirror(lab: &Lab) -> Result<()> {
    let all = bronze_columns(lab, None)?;
    let events = all.basket_id.len() as i64;
    let rows = group(all).map_err(|e| eyre!("polars recount of the warehouse's bronze: {e}"))?;
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

/// A mirror's bronze events (as of snapshot `as_of`, None: now), as the recount's columns.
fn bronze_columns(lab: &Lab, as_of: Option<i64>) -> Result<Columns> {
    let mut all = Columns::default();
    lab.store().recount_events(as_of, |e| {
        all.basket_id.push(e.basket_id);
        all.event_id.push(e.event_id);
        all.uploaded_at.push(e.uploaded_at_ns);
        all.upload_date.push(e.upload_day);
        all.file.push(e.file);
        all.line.push(e.line);
        all.business_date.push(e.business_day);
        all.store_id.push(e.store_id);
        all.country.push(e.country);
        all.currency.push(e.currency);
        all.revenue.push(e.revenue_minor);
    })?;
    Ok(all)
}

/// Recounts the given files of a raw zone.
fn recount_files(files: &[RawFile], reader: &Reader, stores: &StoreTable) -> Result<Recount> {
    let parts: Vec<Result<Columns>> = files.par_iter().map(|f| read_file(f, reader, stores)).collect();
    let mut all = Columns::default();
    for p in parts {
        let p = p?;
        all.basket_id.extend(p.basket_id);
        all.event_id.extend(p.event_id);
        all.uploaded_at.extend(p.uploaded_at);
        all.upload_date.extend(p.upload_date);
        all.file.extend(p.file);
        all.line.extend(p.line);
        all.business_date.extend(p.business_date);
        all.store_id.extend(p.store_id);
        all.country.extend(p.country);
        all.currency.extend(p.currency);
        all.revenue.extend(p.revenue);
        all.rejected += p.rejected;
    }
    let events = all.basket_id.len() as u64;
    let rejected = all.rejected;
    let rows = group(all).map_err(|e| eyre!("polars recount: {e}"))?;
    let baskets = rows.iter().map(|r| r.baskets as u64).sum();
    Ok(Recount { rows, events, baskets, rejected_lines: rejected, files: files.len() })
}

#[allow(deprecated)] // the eager group-by: polars' lazy engine would add half an hour of build
fn group(c: Columns) -> PolarsResult<Vec<GoldRow>> {
    let height = c.basket_id.len();
    let df = DataFrame::new(
        height,
        vec![
            Column::new("basket_id".into(), c.basket_id),
            Column::new("uploaded_at".into(), c.uploaded_at),
            Column::new("event_id".into(), c.event_id),
            Column::new("upload_date".into(), c.upload_date),
            Column::new("file".into(), c.file),
            Column::new("line".into(), c.line),
            Int32Chunked::from_vec("business_date".into(), c.business_date).into_date().into_column(),
            Column::new("store_id".into(), c.store_id),
            Column::new("country".into(), c.country),
            Column::new("currency".into(), c.currency),
            Column::new("revenue_minor".into(), c.revenue),
        ],
    )?;
    // Dedup: per basket_id the first copy in the contract's order: (uploaded_at, event_id), and for
    // an exact tie the copy first in the raw zone (upload date, file name, line).
    let order = ["basket_id", "uploaded_at", "event_id", "upload_date", "file", "line"];
    let sorted = df.sort(order, SortMultipleOptions::default().with_maintain_order(true))?;
    let winners = sorted.unique_stable(Some(&["basket_id".to_string()]), UniqueKeepStrategy::First, None)?;
    let keys = ["business_date", "store_id", "country", "currency"];
    let groups = winners.group_by(keys)?;
    let sums = groups.clone().select(["revenue_minor"]).sum()?;
    let counts = groups.select(["revenue_minor"]).count()?;
    let date = sums.column("business_date")?.cast(&DataType::Int32)?;
    let date = date.i32()?;
    let store = sums.column("store_id")?.str()?;
    let country = sums.column("country")?.str()?;
    let currency = sums.column("currency")?.str()?;
    let revenue = sums.column("revenue_minor_sum")?.i64()?;
    let n = counts.column("revenue_minor_count")?.cast(&DataType::Int64)?;
    let n = n.i64()?;
    let mut rows = Vec::with_capacity(sums.height());
    for i in 0..sums.height() {
        let missing = || polars_err!(ComputeError: "null in the recount's row {i}");
        rows.push(GoldRow {
            business_date: epoch() + chrono::Duration::days(date.get(i).ok_or_else(missing)? as i64),
            store_id: store.get(i).ok_or_else(missing)?.to_string(),
            country: country.get(i).ok_or_else(missing)?.to_string(),
            currency: currency.get(i).ok_or_else(missing)?.to_string(),
            baskets: n.get(i).ok_or_else(missing)?,
            revenue_minor: revenue.get(i).ok_or_else(missing)?,
        });
    }
    rows.sort_by(|a, b| (a.business_date, &a.store_id).cmp(&(b.business_date, &b.store_id)));
    Ok(rows)
}

/// Whether the lab's cached recount counted the raw zone as it is.
pub(crate) fn is_cached(lab: &Lab) -> Result<bool> {
    Ok(lab.store().recount_manifest()?.as_deref() == Some(manifest(&lab.raw_root())?.as_str()))
}

/// Makes sure the lab's cached recount matches its raw zone; recounts when it does not.
/// Returns true when it had to recount.
pub(crate) fn ensure_cached(lab: &Lab) -> Result<bool> {
    let raw_root = lab.raw_root();
    let now = manifest(&raw_root)?;
    if lab.store().recount_manifest()?.as_deref() == Some(now.as_str()) {
        return Ok(false);
    }
    crate::reports::caches_writable(lab)?;
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
/// the lab keeps for that window, counted again in one pass when a file has landed since (about
/// 0.3-0.45 s on the full world); a date's recount alone took 30-45 ms, most of a check
/// (docs/performance.md). A reader that may not write the lab's caches recounts the date alone,
/// with the same rule (`date_recount` in recompute.sql).
pub fn duckdb_recount(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<Vec<DuckRecount>> {
    let store = lab.store();
    let state = store.duckdb_recount_state(late_days)?;
    if !state.kept {
        if !lab.may_write_caches() {
            return duckdb_recount_alone(lab, d, late_days);
        }
        if !keep_or_leave(lab, state.newest_file, late_days)? {
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
pub(crate) fn duckdb_recount_kept(lab: &Lab) -> Result<bool> {
    Ok(lab.store().duckdb_recount_state(crate::rules::DEFAULT_LATE_DAYS)?.kept)
}

/// Keeps DuckDB's recount for every window the lab's writes used, and the default (a reader's
/// `reports::freshen`, so that its checks read it). A window whose recount cannot be kept is
/// left to the checks, which recount their date alone (`duckdb_recount`).
pub(crate) fn keep_duckdb_recounts(lab: &Lab) -> Result<()> {
    for w in lab.store().duckdb_recount_missing(crate::rules::DEFAULT_LATE_DAYS)? {
        crate::reports::caches_writable(lab)?;
        let late_days = u32::try_from(w.late_days).wrap_err("a negative window in the lab's writes")?;
        keep_or_leave(lab, w.newest_file, late_days)?;
    }
    Ok(())
}

/// Keeps the recount of window `late_days`; a failure other than a cancel rolls it back and
/// returns false, since the kept recount only saves time (DuckDB's memory limit on a larger
/// world, a full disk). The process remembers the failure: the statement (0.3-0.45 s on the full
/// world) is not tried again for the same newest file and window, and every check answers from
/// its date's own recount meanwhile.
fn keep_or_leave(lab: &Lab, newest_file: i32, late_days: u32) -> Result<bool> {
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
    let mut tx = Tx::begin(lab.store(), None)?;
    tx.refill_duckdb_recount(newest_file, late_days, key_collisions)?;
    tx.commit().map(drop)
}

/// Forgets DuckDB's kept recounts, so the next check counts them again (the bench measures that).
pub(crate) fn forget_duckdb_recounts(lab: &Lab) -> Result<()> {
    lab.store().forget_duckdb_recount()
}
