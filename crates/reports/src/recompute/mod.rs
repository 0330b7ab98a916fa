//! The independent recount: every landed event, read from the raw zone's files (not from
//! DuckDB), deduplicated by basket_id and grouped by business date in polars, with no lateness
//! window. Its answers are cached in the lab, keyed by the raw zone's manifest.

mod count;

use crate::lake::Lab;
use crate::raw::source::Reader;
use crate::raw::{self, StoreTable};
use crate::store::{DuckRecount, RecountRow, Tx};
use chrono::{NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr};
use count::{RawFile, bronze_recount, lab_files, passes_for, recount_files, spill_dir};
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
    recount_files(&files, &reader, &stores, passes, &spill_dir(raw_root))
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
        bronze_recount(lab, Some(snapshot_id))?.0
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
        recount_files(&files, &reader, &stores, passes_for(&files, &reader), &spill_dir(&raw_root))
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
    let (rows, events) = bronze_recount(lab, None)?;
    let baskets = rows.iter().map(|r| r.baskets).sum();
    store(lab, &manifest(&lab.raw_root())?, events as i64, baskets, &rows)
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
