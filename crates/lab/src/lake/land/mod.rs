//! Landing: uploads are copied into the lab's raw zone and parsed once into bronze. Every line is
//! either a bronze row or a quarantine row with its file, line and reason.

use super::Lab;
use crate::raw::source::{Reader, Source};
use crate::raw::{self, PosEvent, StoreTable};
use crate::store::RowSource;
use crate::store::arrow::array::{
    ArrayRef, Date32Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder,
};
use crate::store::arrow::datatypes::{DataType, Field, TimeUnit};
use crate::store::arrow::record_batch::RecordBatch;
use crate::store::{CellRecord, FileRecord, QuarantineRecord, StoreRow, Tx, arrow_days};
use chrono::{NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) mod columns;
mod parse_job;
mod report;
pub(crate) mod staging;

use columns::*;
use parse_job::*;
pub use report::{FileLanded, FileStatus, LandReport, PartitionLanded, dated_in_future, is_in_future, reverting};
use staging::*;

/// Copies written next to their final place: (staged path, final path).
type Staged = Arc<Mutex<Vec<(PathBuf, PathBuf)>>>;

/// Lands the given upload partitions of `world` into the lab, in one transaction: either every
/// file of the call lands, or none does and the lab is as it was.
pub fn land(lab: &mut Lab, world: &Path, dates: &[NaiveDate]) -> Result<LandReport> {
    let source = Source::of_world(world, None)?;
    land_with(lab, world, &source, dates, super::fail_after_from_env())
}

/// `land` through a given source description (`--source FILE`).
pub fn land_from(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate]) -> Result<LandReport> {
    land_with(lab, world, source, dates, super::fail_after_from_env())
}

pub fn land_with(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate], fail_after: Option<usize>) -> Result<LandReport> {
    // A file that cannot be read whole (corrupt, too big) holds back its own upload: the
    // landing is tried again without it, and the upload is reported with the reason. A landing
    // that ran out of memory is tried again as it was, with more.
    let mut dates = dates.to_vec();
    let mut held: Vec<HeldUpload> = Vec::new();
    loop {
        match land_once(lab, world, source, &dates, fail_after) {
            // Out of DuckDB's limit: nothing of it was kept (land_once undid its copies); again
            // with a larger one, up to DuckDB's share of the memory budget.
            Err(e) if crate::store::is_out_of_memory(&e) && lab.store().raise_limit(true)? => {}
            Err(e) => {
                let Some(bad) = e.downcast_ref::<BadFile>().filter(|b| dates.contains(&b.upload_date)).cloned() else {
                    return Err(e);
                };
                dates.retain(|d| *d != bad.upload_date);
                held.push(HeldUpload { upload_date: bad.upload_date, file: bad.file, reason: bad.reason });
            }
            Ok(mut report) => {
                held.sort_by_key(|h| h.upload_date);
                report.held = held;
                return Ok(report);
            }
        }
    }
}

/// An upload a landing held back, and why: one of its files could not be read whole. Every
/// model's landing, and the Spark driver's answer of a model's (`ModelHeld`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct HeldUpload {
    pub upload_date: NaiveDate,
    pub file: String,
    pub reason: String,
}

/// A raw file that cannot be landed at all (its upload is held back, not the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFile {
    pub upload_date: NaiveDate,
    pub file: String,
    pub reason: String,
}

impl std::fmt::Display for BadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.reason)
    }
}

impl std::error::Error for BadFile {}

fn land_once(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate], fail_after: Option<usize>) -> Result<LandReport> {
    let planning = std::time::Instant::now();
    let plan = plan(lab, world, source, dates)?;
    let planning = planning.elapsed().as_secs_f64() * 1e3;
    let raw_root = lab.raw_root();
    keep_reader(lab, source)?;
    let staged = Staged::default();
    let mut created_dirs = Vec::new();
    // Settings of the connection, not of the transaction: set before it, reset after it, however
    // it ends. A landing is bulk work, in the lower memory limit (`Store::bulk`).
    lab.store().unordered_inserts()?;
    // Until the copies are in place, the next open looks for what a kill would leave.
    super::recovery::mark(&lab.root)?;
    let result = make_partition_dirs(&raw_root, &plan.todo, &mut created_dirs)
        .and_then(|()| lab.store().bulk(false, || write_bronze(lab, &plan, &staged, fail_after)));
    let reset = lab.store().ordered_inserts();
    // Landing may list new basket keys that collide: v2 reads them again.
    lab.key_collisions.set(None);
    let result = result.and_then(|r| reset.map(|()| r).wrap_err("resetting the insertion order"));
    // The copies the parsers staged, even if one of them panicked holding the list.
    let staged = std::mem::take(&mut *staged.lock().unwrap_or_else(|p| p.into_inner()));
    match result {
        Ok(landed) => {
            // Committed: a kill or a failure from here on is finished by the next open
            // (`recovery`), and the error says what is true: the data landed.
            super::crash_point("landing:committed");
            put_in_place(lab, &plan, &staged).map_err(|e| eyre!(crate::error::LabError::LandedUnfinished(format!("{e:#}"))))?;
            let mut partitions = landed.partitions;
            redelivered(lab, &mut partitions).map_err(|e| eyre!(crate::error::LabError::LandedUnfinished(format!("{e:#}"))))?;
            Ok(LandReport {
                partitions,
                stores_added: plan.new_stores.len(),
                stores_changed: plan.changed_stores.clone(),
                stores_readmitted: plan.readmitted_stores.iter().map(|s| s.store_id.clone()).collect(),
                stores_removed: plan.removed_stores.clone(),
                rederived_files: plan.todo.iter().filter(|f| f.rederived).count(),
                rederived_events: landed.rederived_events,
                events: landed.events,
                quarantined: landed.quarantined,
                held: Vec::new(),
                phases: std::iter::once(("planning".to_string(), planning)).chain(landed.phases).collect(),
            })
        }
        Err(e) => {
            undo_copies(&raw_root, &staged, &created_dirs);
            // A copy that could not be removed is left to the next open's recovery.
            if staged.iter().all(|(tmp, _)| !tmp.exists()) {
                super::recovery::unmark(&lab.root)?;
            }
            Err(e)
        }
    }
}

/// A new version whose rows are the rows of the one it replaced is a re-delivery, not a
/// correction (`raw.redelivered_versions`, which the landed rows decide).
fn redelivered(lab: &Lab, partitions: &mut [PartitionLanded]) -> Result<()> {
    for p in partitions.iter_mut().filter(|p| p.files.iter().any(|f| f.status == FileStatus::Corrected)) {
        let same = lab.store().redelivered_files(p.upload_date)?;
        for f in p.files.iter_mut().filter(|f| f.status == FileStatus::Corrected) {
            if same.iter().any(|s| raw::name_in_upload(&s.file) == f.name && s.version == f.version) {
                f.status = FileStatus::Redelivered;
            }
        }
    }
    Ok(())
}

/// What a landing will do: the stores it adds, the files it lands and what each partition holds.
struct Plan {
    dates: Vec<NaiveDate>,
    /// Every store, landed before or now.
    stores: StoreTable,
    new_stores: Vec<raw::Shop>,
    changed_stores: Vec<raw::StoreChange>,
    /// New stores whose lines were quarantined as an unknown store: they count now.
    readmitted_stores: Vec<raw::Shop>,
    removed_stores: Vec<String>,
    /// Each file to land, new or a correction, or re-derived for a store correction.
    todo: Vec<ToLand>,
    partitions: Vec<PartitionLanded>,
    landed_partitions: std::collections::HashSet<NaiveDate>,
    /// How the files read (the lab's, which the world's must be).
    reader: Reader,
}

/// The lab keeps the reader it lands through (`raw/source.toml`; none for the contract's), since
/// its raw zone holds the files as they came: one lab, one reader. Another reader is refused once
/// a file has landed.
fn keep_reader(lab: &Lab, source: &Source) -> Result<()> {
    let raw_root = lab.raw_root();
    let kept = Reader::of_lab(&raw_root)?;
    if kept == *source.reader() {
        return Ok(());
    }
    if !lab.store().landed_files()?.is_empty() {
        bail!(
            "this lab was landed through another source description (its reader is in {}); land the world it came from, or `recount reset` first",
            raw_root.join(raw::source::LAB_SOURCE_FILE).display()
        );
    }
    std::fs::create_dir_all(&raw_root).wrap_err_with(|| format!("creating {}", raw_root.display()))?;
    let path = raw_root.join(raw::source::LAB_SOURCE_FILE);
    if source.is_contract() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(eyre!(e).wrap_err(format!("removing {}", path.display()))),
            _ => Ok(()),
        };
    }
    write_durably(&path, source.reader().to_toml()?.as_bytes()).wrap_err_with(|| format!("writing {}", path.display()))
}

fn plan(lab: &Lab, world: &Path, source: &Source, dates: &[NaiveDate]) -> Result<Plan> {
    let world_stores = source.stores(world)?;
    // A bad partition name anywhere in the world is an error: it would hide a day of sales.
    source.partitions(world)?;
    let lab_stores = lab.stores()?;
    let mut new_stores = Vec::new();
    let mut changed_stores = Vec::new();
    for s in &world_stores.stores {
        match lab_stores.get(&s.store_id) {
            None => new_stores.push(s.clone()),
            Some(old) if old == s => {}
            Some(old) => changed_stores.push(raw::StoreChange { old: old.clone(), new: s.clone() }),
        }
    }
    let removed_stores: Vec<String> =
        lab_stores.stores.iter().filter(|s| world_stores.get(&s.store_id).is_none()).map(|s| s.store_id.clone()).collect();
    // Every store as the landing reads lines: the world's rows, and the landed stores it no longer lists.
    let mut all_stores = world_stores.stores.clone();
    all_stores.extend(lab_stores.stores.iter().filter(|s| world_stores.get(&s.store_id).is_none()).cloned());
    all_stores.sort_by(|a, b| a.store_id.cmp(&b.store_id));

    // Which files are new; a landed file must be byte-identical to what is offered again.
    let landed_files = lab.store().landed_files()?;
    let mut todo = Vec::new();
    let mut partitions = Vec::new();
    for &d in dates {
        partitions.push(plan_partition(world, source, d, &landed_files, &mut todo)?);
    }
    let readmitted_stores = rederive(lab, &landed_files, &changed_stores, &new_stores, &mut todo)?;
    Ok(Plan {
        dates: dates.to_vec(),
        stores: StoreTable::new(all_stores),
        new_stores,
        changed_stores,
        readmitted_stores,
        removed_stores,
        todo,
        partitions,
        reader: source.reader().clone(),
        landed_partitions: lab.store().landed_uploads()?.into_iter().collect(),
    })
}

/// What the world's partition `d` holds against the lab: each file new (version 1), a correction
/// (other bytes than its current version: its next version) or unchanged, and each landed file
/// the world no longer has (reported). The files to land go into `todo`.
fn plan_partition(
    world: &Path,
    source: &Source,
    d: NaiveDate,
    landed_files: &HashMap<String, Vec<crate::store::LandedFile>>,
    todo: &mut Vec<ToLand>,
) -> Result<PartitionLanded> {
    let dir = source.partition_dir(world, d);
    let exists = dir.is_dir();
    let (files, other) = source.files(world, d)?;
    if files.is_empty() && !other.is_empty() {
        // A description that takes none of a partition's files would land an empty day and say
        // it worked: a layout with a level the template does not name (hourly folders), or a
        // pattern that matches nothing.
        bail!(
            "{}: the source description takes none of the {} entr{} there (the first: {}): the file pattern '{}' matches no file, \
             or the files sit in folders below the partition that the template does not name; nothing was landed",
            dir.display(),
            other.len(),
            if other.len() == 1 { "y" } else { "ies" },
            crate::sanitize::for_terminal(&source.name_in_upload(world, d, &other[0])),
            crate::sanitize::for_terminal(&source.reader().glob)
        );
    }
    let not_taken = other.iter().map(|f| source.name_in_upload(world, d, f)).collect();
    let mut p = PartitionLanded {
        upload_date: d,
        files_landed: 0,
        files_already_landed: 0,
        events: 0,
        quarantined: 0,
        exists,
        files: Vec::new(),
        not_taken,
        dated_in_future: exists && is_in_future(d),
    };
    let prefix = raw::rel_path(d, "");
    let mut seen = std::collections::HashSet::new();
    for path in files {
        let name = source.name_in_upload(world, d, &path);
        let rel = format!("{prefix}{name}");
        seen.insert(rel.clone());
        let versions = landed_files.get(&rel).map(Vec::as_slice).unwrap_or_default();
        let Some(current) = versions.iter().find(|v| v.current) else {
            p.files.push(FileLanded { name: name.clone(), status: FileStatus::New, version: 1, reverts: None });
            todo.push(ToLand { upload_date: d, path, rel, version: 1, supersedes: None, rederived: false });
            continue;
        };
        let md5 = raw::md5_of_file(&path)?;
        if md5 == current.md5 {
            p.files_already_landed += 1;
            p.files.push(FileLanded { name, status: FileStatus::Unchanged, version: current.version, reverts: None });
        } else {
            let version = versions.iter().map(|v| v.version).max().unwrap_or(0) + 1;
            let reverts_to = versions.iter().filter(|v| !v.current && v.md5 == md5).map(|v| v.version).max();
            p.files.push(FileLanded { name, status: FileStatus::Corrected, version, reverts: reverts_to.map(|to| (to, current.version)) });
            todo.push(ToLand {
                upload_date: d,
                path,
                rel,
                version,
                supersedes: Some((current.file_id, current.version)),
                rederived: false,
            });
        }
    }
    let mut missing: Vec<(&String, i32)> = landed_files
        .iter()
        .filter(|(rel, _)| rel.starts_with(&prefix) && !seen.contains(*rel))
        .filter_map(|(rel, vs)| vs.iter().find(|v| v.current).map(|v| (rel, v.version)))
        .collect();
    missing.sort();
    for (rel, version) in missing {
        p.files.push(FileLanded { name: rel[prefix.len()..].to_string(), status: FileStatus::Missing, version, reverts: None });
    }
    Ok(p)
}

/// A store correction, or a new store, re-derives every current file version whose lines depend
/// on the store's row (`files_of_stores`): the file's next version, from the bytes the raw zone
/// holds, read under the new row. A file the landing corrects anyway is read under it already.
fn rederive(
    lab: &Lab,
    landed: &HashMap<String, Vec<crate::store::LandedFile>>,
    changed: &[raw::StoreChange],
    new: &[raw::Shop],
    todo: &mut Vec<ToLand>,
) -> Result<Vec<raw::Shop>> {
    if landed.is_empty() || (changed.is_empty() && new.is_empty()) {
        return Ok(Vec::new());
    }
    let raw_root = lab.raw_root();
    // A new store has no events yet: only lines quarantined as its unknown store depend on it.
    let unknown = if new.is_empty() { Default::default() } else { lab.store().unknown_stores()? };
    let readmitted: Vec<raw::Shop> = new.iter().filter(|s| unknown.contains(&s.store_id)).cloned().collect();
    let stores = rederived_stores(changed, &readmitted);
    if stores.is_empty() {
        return Ok(readmitted);
    }
    let corrected: std::collections::HashSet<String> = todo.iter().map(|t| t.rel.clone()).collect();
    for f in lab.store().files_of_stores(&stores)? {
        if corrected.contains(&f.file) {
            continue;
        }
        let version = landed.get(&f.file).and_then(|vs| vs.iter().map(|v| v.version).max()).unwrap_or(f.version) + 1;
        todo.push(ToLand {
            upload_date: f.upload_date,
            path: raw_root.join(&f.file),
            rel: f.file,
            version,
            supersedes: Some((f.file_id, f.version)),
            rederived: true,
        });
    }
    Ok(readmitted)
}

/// The partition directories of the raw zone the files go to; those it makes are listed, so that
/// a failure can take them away again.
fn make_partition_dirs(raw_root: &Path, todo: &[ToLand], created: &mut Vec<PathBuf>) -> Result<()> {
    for f in todo {
        // The partition, and the folders below it a described source's file sits in.
        let partition = raw::partition_dir(raw_root, f.upload_date);
        let dir = raw_root.join(&f.rel).parent().map_or(partition.clone(), Path::to_path_buf);
        let mut missing: Vec<PathBuf> =
            dir.ancestors().take_while(|a| a.starts_with(&partition) && !a.exists()).map(Path::to_path_buf).collect();
        if missing.is_empty() {
            continue;
        }
        std::fs::create_dir_all(&dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
        missing.reverse();
        created.extend(missing);
    }
    Ok(())
}

/// What the landing's transaction wrote.
struct Landed {
    partitions: Vec<PartitionLanded>,
    rederived_events: u64,
    events: u64,
    quarantined: u64,
    phases: Vec<(String, f64)>,
}

/// The landing's one transaction: stores, bronze rows, file records, split baskets, partitions.
fn write_bronze(lab: &Lab, plan: &Plan, staged: &Staged, fail_after: Option<usize>) -> Result<Landed> {
    let mut tx = Tx::begin(lab.store(), fail_after)?;
    let t_stores = std::time::Instant::now();
    tx.insert_stores(&plan.new_stores.iter().map(store_row).collect::<Vec<_>>())?;
    let t_stores = t_stores.elapsed();
    let landing_id = tx.store().next_landing_id()?;
    let first_file_id = tx.store().next_file_id()?;
    let t_all = std::time::Instant::now();
    let done = parse_and_insert(lab, &mut tx, plan, staged, first_file_id)?;
    let t_records = std::time::Instant::now();
    let files: Vec<FileRecord> = done.iter().zip(&plan.todo).map(|(pf, f)| pf.record(landing_id, f.version)).collect();
    let cells: Vec<CellRecord> = done.iter().flat_map(|pf| pf.cells.iter().map(|c| c.record(pf))).collect();
    let quarantine: Vec<QuarantineRecord> = done.iter().flat_map(|pf| pf.quarantine.iter().map(|q| q.record(pf))).collect();
    tx.append_landing_records(&files, &cells, &quarantine)?;
    let t_records = t_records.elapsed();
    let mut partitions = plan.partitions.clone();
    let (mut events, mut quarantined, mut rederived_events) = (0u64, 0u64, 0u64);
    for (pf, f) in done.iter().zip(&plan.todo) {
        if f.rederived {
            rederived_events += pf.events as u64;
            continue;
        }
        let p = partitions
            .iter_mut()
            .find(|p| p.upload_date == pf.upload_date)
            .ok_or_else(|| eyre!("upload {} was not planned", pf.upload_date))?;
        p.files_landed += 1;
        p.events += pf.events as u64;
        p.quarantined += pf.quarantined_lines;
        events += pf.events as u64;
        quarantined += pf.quarantined_lines;
    }
    let t_parse_and_append = t_all.elapsed();
    // Every copy is written by now: the disk syncs them while DuckDB looks for split baskets, and
    // the landing waits for both before it commits.
    let raw_root = lab.raw_root();
    let (t_split, synced, t_sync) = std::thread::scope(|s| {
        let sync = s.spawn(|| sync_staged(&plan.todo, &raw_root));
        let abs_revenue: u128 = done.iter().map(|pf| pf.abs_revenue).sum();
        let t_split = keys_and_records(lab, &mut tx, plan, &partitions, (landing_id, first_file_id), (events, quarantined, abs_revenue));
        let waited = std::time::Instant::now();
        let synced = sync.join().unwrap_or_else(|_| Err(eyre!("syncing the landed copies panicked")));
        (t_split, synced, waited.elapsed())
    });
    let t_split = t_split?;
    synced?;
    let commit = tx.commit()?.last().map(|p| p.1).unwrap_or_default();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let phases = vec![
        ("adding stores".to_string(), ms(t_stores)),
        ("parse and insert into bronze, in DuckDB's threads".to_string(), ms(t_parse_and_append - t_records)),
        ("recording files, cells and quarantine".to_string(), ms(t_records)),
        ("finding split baskets".to_string(), ms(t_split)),
        ("waiting for the copies' sync to disk".to_string(), ms(t_sync)),
        ("commit".to_string(), ms(commit)),
    ];
    Ok(Landed { partitions, rederived_events, events, quarantined, phases })
}

/// The landing's work once its rows are in bronze: the revenue check, the keys with several
/// copies and split baskets, and the records of the landing, its partitions, its corrected files
/// and stores. Returns the time the key search took. `abs_revenue`: the landed rows' revenue as
/// absolute values, summed.
fn keys_and_records(
    lab: &Lab,
    tx: &mut Tx,
    plan: &Plan,
    partitions: &[PartitionLanded],
    (landing_id, first_file_id): (i64, i32),
    (events, quarantined, abs_revenue): (u64, u64, u128),
) -> Result<std::time::Duration> {
    // Into an empty bronze (the first file id), every copy of every date is this landing's: when
    // all of them together stay within the limit, no store or country on any date can pass it,
    // and the check's scan of every row, a noticeable part of a first landing, is not needed.
    // Otherwise the check runs, and names the date and the store.
    let within_limit = first_file_id == 1 && abs_revenue <= crate::money::MAX_DAY_REVENUE_MINOR as u128;
    if !plan.todo.is_empty() && !within_limit {
        refuse_revenue_past_limit(tx, first_file_id)?;
    }
    // Snapshots from the next one on see the corrections: a diff tells withdrawn baskets by it.
    // Recorded before the search for keys with several copies, which reads current versions.
    let from_snapshot = tx.store().snapshot_ids()?.0;
    for (i, f) in plan.todo.iter().enumerate() {
        if let Some((old, _)) = f.supersedes {
            tx.insert_supersession(old, first_file_id + i as i32, from_snapshot)?;
        }
    }
    let t_split = std::time::Instant::now();
    if !plan.todo.is_empty() {
        tx.find_split_baskets_and_collisions(&landed_rows(plan, first_file_id), lab.key_rows_per_slice)?;
    }
    let t_split = t_split.elapsed();
    for c in &plan.changed_stores {
        tx.change_store(&store_row(&c.old), &store_row(&c.new), landing_id, from_snapshot)?;
    }
    for s in &plan.readmitted_stores {
        tx.record_store_change(None, &store_row(s), landing_id, from_snapshot)?;
    }
    let new_partitions: Vec<(NaiveDate, i64)> = partitions
        .iter()
        .filter(|p| p.exists && !plan.landed_partitions.contains(&p.upload_date))
        .map(|p| (p.upload_date, p.files_landed as i64))
        .collect();
    tx.insert_partitions(&new_partitions, landing_id)?;
    if !plan.todo.is_empty() || !plan.new_stores.is_empty() || !plan.changed_stores.is_empty() {
        let (first, last) = (plan.dates.iter().min().copied(), plan.dates.iter().max().copied());
        tx.insert_landing(landing_id, first, last, plan.todo.len() as i64, events as i64, quarantined as i64, Utc::now().naive_utc())?;
    }
    Ok(t_split)
}

/// The rows whose keys the landing looks up: every row of its new and corrected files, and of the
/// files it re-derives (planned last, `rederive`) the corrected and readmitted stores' rows only.
fn landed_rows(plan: &Plan, first_file_id: i32) -> crate::store::LandedRows {
    let mut landed = crate::store::LandedRows::all_from(first_file_id);
    if let Some(i) = plan.todo.iter().position(|f| f.rederived)
        && plan.todo[i..].iter().all(|f| f.rederived)
    {
        landed.first_rederived_id = first_file_id + i as i32;
        landed.corrected_stores = rederived_stores(&plan.changed_stores, &plan.readmitted_stores);
    }
    landed
}

/// The stores whose files a landing re-derives: those whose row changed, and new ones whose lines
/// were quarantined as an unknown store.
fn rederived_stores(changed: &[raw::StoreChange], readmitted: &[raw::Shop]) -> Vec<String> {
    changed.iter().map(|c| c.new.store_id.clone()).chain(readmitted.iter().map(|s| s.store_id.clone())).collect()
}

/// A date the new files touch whose revenue, summed over every landed copy, would pass what
/// recount keeps exact in every sum: the landing is refused, naming it.
fn refuse_revenue_past_limit(tx: &mut Tx, first_file_id: i32) -> Result<()> {
    let Some(past) = tx.revenue_past_limit(first_file_id, crate::money::MAX_DAY_REVENUE_MINOR)? else { return Ok(()) };
    let who = match &past.store_id {
        Some(s) => format!("store {}", crate::sanitize::for_terminal(s)),
        None => format!("country {}", past.country),
    };
    bail!(
        "business date {}, {who}: revenue over every landed copy would total {} minor units, past the {} recount keeps exact \
         in every sum; nothing was landed",
        past.business_date,
        past.total,
        crate::money::MAX_DAY_REVENUE_MINOR
    )
}

fn store_row(s: &raw::Shop) -> StoreRow {
    StoreRow {
        store_id: s.store_id.clone(),
        country: s.country.clone(),
        timezone: s.timezone.name().to_string(),
        currency: s.currency.clone(),
    }
}

/// The corrections shipped with `world` (`world/corrections/`) that the lab has not landed.
pub fn pending_corrections(lab: &Lab, world: &Path) -> Result<Vec<raw::corrections::Correction>> {
    let landed = lab.store().landed_files()?;
    let uploads = lab.store().landed_uploads()?;
    raw::corrections::pending(world, &uploads, |rel, md5| landed.get(rel).is_some_and(|vs| vs.iter().any(|v| v.md5 == md5)))
}

/// One file a landing lands: a new path (version 1) or a correction of a landed one.
struct ToLand {
    upload_date: NaiveDate,
    /// Where the world holds it.
    path: PathBuf,
    /// Its path in the raw zone (upload date and name).
    rel: String,
    version: i32,
    /// The version it replaces: (file id, version).
    supersedes: Option<(i32, i32)>,
    /// Re-derived for a store correction: the same bytes as the version it replaces.
    rederived: bool,
}
