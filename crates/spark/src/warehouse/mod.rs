//! An Iceberg warehouse (`recount spark`) as a lab the reports read: its mirror.
//!
//! pyiceberg plans, without a JVM, which Parquet data files each table holds at its current
//! snapshot and which files every gold snapshot wrote, in silver and gold (`recount_spark.mirror`).
//! DuckDB reads those files into a new lab-shaped database (queries/mirror.sql), and gold's
//! snapshot log becomes the lab's snapshots: a new snapshot is a write (its dates' silver and
//! gold versions, its trigger, window and kept windows from the summary properties), a move back
//! to an older one is a rollback, recorded by the lab's own rollback; v1's appends and the runs
//! that wrote nothing take their places by time. Every report, the CLI's and the explorer's, then
//! reads the warehouse with the lab's rules, written once. Writes go to the Spark job (`Spark`).
//!
//! The mirror lives under the cache directory, one per warehouse, and is kept while the tables'
//! metadata files are the ones it was built from; any new commit builds it again beside the old
//! one, which is swapped out whole. What a mirror cannot hold the warehouse does not keep: the
//! raw lines of quarantined rows, and the raw files themselves (the independent recount counts
//! bronze's events instead, now or as of a snapshot).

use crate::lake::snapshot::{self, Operation, Trigger, TriggerKind, Written};
use crate::lake::{self, Lab};
use crate::store::mirror::{RecordTotals, Whole};
use crate::store::{DateAction, DateOutcome, Tx};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use model_mirror::MirrorLogEntry;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub(crate) mod model_mirror;
mod props;
mod writes;
pub(crate) use props::{PropKey, Props, keys};
pub use writes::{Spark, Write};

/// The file in a mirror that names the warehouse state it was built from.
const STATE_FILE: &str = lake::MIRROR_STATE_FILE;
/// The file in a mirror that names the commits (version hints) of a warehouse directory it is
/// current with.
const COMMITS_FILE: &str = "warehouse-commits";

/// What pyiceberg planned (`python -m recount_spark plan`).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorPlan {
    pub warehouse: String,
    /// Each table's metadata file: the same files, the same warehouse.
    pub state: BTreeMap<String, String>,
    /// The data files of the tables read whole.
    pub tables: BTreeMap<String, Vec<String>>,
    /// Every gold snapshot, oldest first.
    pub snapshots: Vec<SnapshotPlan>,
    /// Gold's snapshot log: each time its current snapshot moved, oldest first.
    pub log: Vec<MirrorLogEntry>,
    /// v1's runs: each append to naive_daily_sales, oldest first (none before v1 ran on Spark).
    pub naive: Vec<Append>,
    /// The v2 runs that wrote nothing: each append to skipped_runs, oldest first.
    pub skipped: Vec<Append>,
}

/// One snapshot of an append-only table (v1's rows, the skipped runs' log) and the files it added.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct Append {
    pub snapshot_id: i64,
    pub timestamp_ms: i64,
    pub properties: Props,
    pub files: Vec<String>,
}

/// What moved the warehouse, in the order it happened: gold's current snapshot, a v1 run, or a
/// v2 run that found nothing to write.
enum Moved<'p> {
    Gold(&'p MirrorLogEntry),
    Naive(&'p Append),
    Skipped(&'p Append),
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct SnapshotPlan {
    pub snapshot_id: i64,
    pub properties: Props,
    pub dates: Vec<NaiveDate>,
    pub gold_files: Vec<String>,
    pub silver_files: Vec<String>,
}

/// Where mirrors live: `$RECOUNT_MIRRORS`, else `$XDG_CACHE_HOME/recount/warehouses`, else
/// `~/.cache/recount/warehouses`.
pub fn mirrors_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RECOUNT_MIRRORS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
        .join("recount/warehouses")
}

/// How a warehouse read through a catalog is named: `catalog:NAME`, NAME as pyiceberg's
/// load_catalog knows it (its config file, or PYICEBERG_CATALOG__NAME__* variables).
const CATALOG: &str = "catalog:";

/// The catalog's name, when `warehouse` names one rather than a Hadoop catalog's directory.
pub(crate) fn catalog(warehouse: &Path) -> Option<&str> {
    warehouse.to_str().and_then(|w| w.strip_prefix(CATALOG))
}

/// The warehouse at `warehouse` as a lab, for reading: its mirror, built first when the
/// warehouse has committed anything since the mirror was.
pub fn open(warehouse: &Path) -> Result<Lab> {
    open_until(warehouse, &mirrors_dir(), &|| false)
}

/// `open` for a command on a terminal: while the mirror is planned and built (seconds, the
/// first time after a write), a progress line on stderr says so. The explorer, which owns the
/// screen, opens without one.
pub fn open_telling(warehouse: &Path) -> Result<Lab> {
    let dir = mirror_telling(warehouse, &mirrors_dir(), &|| false, true)?;
    Lab::open_read(&dir)
}

/// `open`, with the mirror kept under `mirrors` (a test's own directory).
pub fn open_with(warehouse: &Path, mirrors: &Path) -> Result<Lab> {
    open_until(warehouse, mirrors, &|| false)
}

/// `open_with`, giving up between the steps of building a mirror once `stop` says so (the
/// explorer quitting: a large warehouse's mirror takes a while to build). It then fails with
/// `LabError::Interrupted`, and the mirror in place, if any, is left as it was.
pub fn open_until(warehouse: &Path, mirrors: &Path, stop: &dyn Fn() -> bool) -> Result<Lab> {
    let dir = mirror_telling(warehouse, mirrors, stop, false)?;
    Lab::open_read(&dir)
}

/// An error once `stop` says so.
pub(super) fn stop_if_asked(stop: &dyn Fn() -> bool) -> Result<()> {
    match stop() {
        true => Err(eyre!(crate::error::LabError::Interrupted)),
        false => Ok(()),
    }
}

/// The Parquet data files of another pipeline's Iceberg table `table` (namespace.table) in
/// `warehouse` (a directory, or `catalog:NAME`) at its current snapshot, planned by pyiceberg with
/// no JVM: a foreign gold for `audit --gold iceberg:…`, which DuckDB then reads.
pub fn foreign_table_files(warehouse: &Path, table: &str) -> Result<Vec<PathBuf>> {
    let abs = match catalog(warehouse) {
        Some(_) => warehouse.to_path_buf(),
        None if !warehouse.is_dir() => bail!("no Iceberg warehouse at {}", warehouse.display()),
        None => std::fs::canonicalize(warehouse).wrap_err_with(|| format!("reading {}", warehouse.display()))?,
    };
    Ok(crate::spark::Driver::new(abs, "local[1]".into())?.table_files(table)?.files)
}

/// What pyiceberg planned of a warehouse: retail's tables, or a model's.
enum WarehousePlan {
    Retail(MirrorPlan),
    Model(model_mirror::ModelMirrorPlan),
}

impl WarehousePlan {
    /// The tables' metadata files: the same state, the same warehouse.
    fn state(&self) -> Result<String> {
        Ok(match self {
            WarehousePlan::Retail(p) => serde_json::to_string(&p.state)?,
            WarehousePlan::Model(p) => serde_json::to_string(&p.state)?,
        })
    }

    /// The warehouse as the driver named it.
    fn warehouse(&self) -> &str {
        match self {
            WarehousePlan::Retail(p) => &p.warehouse,
            WarehousePlan::Model(p) => &p.warehouse,
        }
    }
}

/// The mirror's directory under `mirrors`, up to date with the warehouse.
fn mirror_telling(warehouse: &Path, mirrors: &Path, stop: &dyn Fn() -> bool, tell: bool) -> Result<PathBuf> {
    let abs = match catalog(warehouse) {
        Some(_) => warehouse.to_path_buf(),
        None if !warehouse.is_dir() => bail!("no warehouse at {}: `recount spark run` makes one", warehouse.display()),
        None => std::fs::canonicalize(warehouse).wrap_err_with(|| format!("reading {}", warehouse.display()))?,
    };
    let key = crate::raw::md5_hex(abs.display().to_string().as_bytes());
    let dir = mirrors.join(&key[..16]);
    // A warehouse directory's commits are its tables' version hints: while they are the ones the
    // mirror was built at, it is current, and no Python runs (read before the plan, so a commit
    // between the two only makes the next read plan again).
    let seen = catalog(warehouse).is_none().then(|| format!("{}\n{}\n{:?}", lake::code_version(), layout(), commits(&abs)));
    if let Some(seen) = &seen
        && lake::exists(&dir)
        && std::fs::read_to_string(dir.join(COMMITS_FILE)).is_ok_and(|s| &s == seen)
    {
        return Ok(dir);
    }
    stop_if_asked(stop)?;
    // Past the quick check the mirror is planned (pyiceberg) and may be built: say so.
    let _telling = tell.then(|| crate::progress::Progress::start(format!("reading the warehouse {} into its mirror", warehouse.display())));
    let driver = crate::spark::Driver::new(abs.clone(), "local[1]".into())?;
    let plan = match crate::spark::holds_model(&abs) {
        true => WarehousePlan::Model(driver.model_plan()?),
        false => WarehousePlan::Retail(driver.plan()?),
    };
    stop_if_asked(stop)?;
    let state = format!("{}\n{}\n{}", lake::code_version(), layout(), plan.state()?);
    if lake::exists(&dir) && std::fs::read_to_string(dir.join(STATE_FILE)).is_ok_and(|s| s == state) {
        if let Some(seen) = &seen {
            std::fs::write(dir.join(COMMITS_FILE), seen)?;
        }
        return Ok(dir);
    }
    let parent = mirrors.to_path_buf();
    std::fs::create_dir_all(&parent).wrap_err_with(|| format!("creating {}", parent.display()))?;
    let fresh = tempfile::Builder::new().prefix(&format!(".{}-", &key[..16])).tempdir_in(&parent)?;
    std::fs::write(fresh.path().join(STATE_FILE), &state)?;
    if let Some(seen) = &seen {
        std::fs::write(fresh.path().join(COMMITS_FILE), seen)?;
    }
    {
        let lab = Lab::open(fresh.path())?;
        match &plan {
            WarehousePlan::Retail(p) => build(&lab, p, stop),
            WarehousePlan::Model(p) => model_mirror::build(&lab, p, stop),
        }
        .wrap_err_with(|| format!("mirroring the warehouse {}", plan.warehouse()))?;
    }
    let fresh = fresh.keep();
    // The old mirror goes aside whole, then the new one takes its name: a reader never sees half.
    let old = parent.join(format!(".{}-old-{}", &key[..16], std::process::id()));
    if dir.exists() {
        std::fs::rename(&dir, &old).wrap_err_with(|| format!("moving the old mirror {} aside", dir.display()))?;
    }
    std::fs::rename(&fresh, &dir).wrap_err_with(|| format!("putting the mirror in place at {}", dir.display()))?;
    if old.exists() {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(dir)
}

/// A digest of what lays a mirror out (its SQL, the lab's schema and this module's files): a build that lays
/// it out otherwise builds its mirrors anew. The schema's text counts whole, comments included:
/// a reader refuses a lab whose views another build's schema wrote (`Store::prepare_read`), and
/// the rules digest in `lake::code_version` no longer changes with a comment.
fn layout() -> String {
    layout_of(&LAYOUT)
}

const LAYOUT: [&str; 10] = [
    include_str!("../../../../queries/mirror.sql"),
    include_str!("../../../../queries/model_mirror.sql"),
    include_str!("model_mirror.rs"),
    include_str!("../../../../queries/schema.sql"),
    include_str!("../../../../queries/as_of.sql"),
    include_str!("mod.rs"),
    include_str!("props.rs"),
    include_str!("writes.rs"),
    include_str!("../../../reports/src/recompute/mod.rs"),
    include_str!("../../../reports/src/recompute/count.rs"),
];

fn layout_of(texts: &[&str]) -> String {
    crate::raw::md5_hex(texts.concat().as_bytes())
}

pub(super) fn at(ms: i64) -> Result<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(ms).map(|t| t.naive_utc()).ok_or_else(|| eyre!("a snapshot time out of range: {ms} ms"))
}

/// Lays the plan out in the new lab: bronze and the catalogue, then gold's log as snapshots,
/// then the caches the reports read.
fn build(lab: &Lab, plan: &MirrorPlan, stop: &dyn Fn() -> bool) -> Result<()> {
    std::fs::create_dir_all(lab.raw_root().join(crate::raw::EVENTS_DIR))?;
    let mut tx = Tx::begin(lab.store(), None)?;
    tx.mirror_stage()?;
    for table in Whole::ALL {
        for path in plan.tables.get(table.table()).into_iter().flatten() {
            stop_if_asked(stop)?;
            tx.mirror_load(table, path)?;
        }
    }
    tx.mirror_lay_out()?;
    tx.commit()?;
    // The raw zone's stores.csv says what raw.stores says, as in a lab; the mirror's raw zone
    // holds nothing else.
    std::fs::write(lab.raw_root().join(crate::raw::STORES_FILE), lab.stores()?.to_csv()?)?;
    let by_id: HashMap<i64, &SnapshotPlan> = plan.snapshots.iter().map(|s| (s.snapshot_id, s)).collect();
    let mut mirror_of: HashMap<i64, i64> = HashMap::new();
    let mut in_order: Vec<(i64, Moved)> = plan.log.iter().map(|e| (e.timestamp_ms, Moved::Gold(e))).collect();
    in_order.extend(plan.naive.iter().map(|n| (n.timestamp_ms, Moved::Naive(n))));
    in_order.extend(plan.skipped.iter().map(|n| (n.timestamp_ms, Moved::Skipped(n))));
    in_order.sort_by_key(|(t, _)| *t);
    // Gold's Iceberg snapshot as each move left it: what a rollback to that point asks for.
    let mut gold_now: Option<i64> = None;
    let mut left_at: Vec<(i64, i64)> = Vec::new();
    for (ms, moved) in in_order {
        stop_if_asked(stop)?;
        let when = at(ms)?;
        let id = match moved {
            Moved::Naive(run) => append_naive(lab, run, when)?,
            Moved::Skipped(log) => skipped_from_log(lab, log, when)?,
            Moved::Gold(entry) => {
                let Some(snap) = by_id.get(&entry.snapshot_id) else { continue };
                gold_now = Some(entry.snapshot_id);
                match mirror_of.get(&entry.snapshot_id) {
                    // Gold's current snapshot moved back to one it had: a rollback.
                    Some(&target) => rollback_to(lab, target, when)?,
                    None => {
                        let id = write(lab, snap, when)?;
                        mirror_of.insert(snap.snapshot_id, id);
                        id
                    }
                }
            }
        };
        left_at.extend(gold_now.map(|ice| (id, ice)));
    }
    let ids: Vec<String> = mirror_of.iter().map(|(ice, id)| format!("{ice}={id}")).collect();
    let mut tx = Tx::begin(lab.store(), None)?;
    for (id, ice) in left_at {
        tx.mirror_iceberg_id(id, ice)?;
    }
    tx.mirror_link_snapshots(&ids.join(","))?;
    tx.commit()?;
    stop_if_asked(stop)?;
    crate::recompute::recount_mirror(lab)?;
    stop_if_asked(stop)?;
    crate::reports::lateness::ensure_cached(lab)?;
    stop_if_asked(stop)?;
    // DuckDB's recount of every date, kept as a lab's is: the marks that tell a difference the
    // rules explain (beyond the window) from one they do not read it.
    crate::recompute::keep_duckdb_recounts(lab)
}

/// A move of gold's current snapshot back to `target`'s, recorded by the lab's own rollback at
/// the time the warehouse made it.
fn rollback_to(lab: &Lab, target: i64, when: NaiveDateTime) -> Result<i64> {
    let record = snapshot::rollback(lab, target, None)?;
    let mut tx = Tx::begin(lab.store(), None)?;
    tx.mirror_record_time(record.snapshot_id, when)?;
    tx.commit()?;
    Ok(record.snapshot_id)
}

/// Each date's input rows and hash as of snapshot `id` (the mirror's own hash over its bronze, so
/// that finality is judged as in the lab), each under its window: a kept one, else the run's.
fn hashes_as_of(
    store: &crate::store::Store,
    id: i64,
    dates: &[NaiveDate],
    kept: &BTreeMap<NaiveDate, u32>,
    late_days: u32,
) -> Result<HashMap<NaiveDate, (i64, String)>> {
    let mut windows: BTreeMap<u32, Vec<NaiveDate>> = BTreeMap::new();
    for d in dates {
        windows.entry(kept.get(d).copied().unwrap_or(late_days)).or_default().push(*d);
    }
    let mut hashes = HashMap::new();
    for (window, ds) in &windows {
        for (d, rows, hash) in lake::v2::input_hashes_at(store, *window, ds, Some(id))? {
            hashes.insert(d, (rows, hash));
        }
    }
    Ok(hashes)
}

/// The record of each date a run found unchanged, as the lab's run records it.
fn skips(dates: &[NaiveDate], hashes: &mut HashMap<NaiveDate, (i64, String)>) -> Vec<DateOutcome> {
    let skip = |d: &NaiveDate| {
        let (input_rows, input_hash) = hashes.remove(d).unwrap_or_default();
        DateOutcome {
            business_date: *d,
            action: DateAction::Skip,
            input_hash,
            input_rows,
            silver_replaced: 0,
            silver_added: 0,
            gold_replaced: 0,
            gold_added: 0,
        }
    };
    dates.iter().map(skip).collect()
}

/// The skipped runs one append to the log holds (one, as the driver writes it), each recorded as
/// the lab records a run that wrote nothing. Returns the last one's snapshot id.
fn skipped_from_log(lab: &Lab, log: &Append, when: NaiveDateTime) -> Result<i64> {
    let mut tx = Tx::begin(lab.store(), None)?;
    for path in &log.files {
        tx.mirror_load_skipped(path, log.snapshot_id)?;
    }
    tx.commit()?;
    let mut last = None;
    for text in lab.store().skipped_properties(log.snapshot_id)? {
        let props: Props = serde_json::from_str(&text).wrap_err_with(|| format!("skipped_runs' row of snapshot {}", log.snapshot_id))?;
        last = Some(skipped_run(lab, &props, when)?);
    }
    last.ok_or_else(|| eyre!("skipped_runs' snapshot {} holds no run", log.snapshot_id))
}

/// A v2 run on Spark that found every date unchanged, as the lab records one: a skipped snapshot
/// naming its trigger and the dates it compared.
fn skipped_run(lab: &Lab, props: &Props, when: NaiveDateTime) -> Result<i64> {
    let late_days = props.late_days()?;
    let dates = props.dates(keys::SKIPPED_DATES)?;
    let mut record = snapshot::new_record(lab, Operation::Skipped, props.trigger()?, late_days)?;
    record.created_at = when;
    record.dates_skipped = dates.len() as i64;
    record.beyond_window_rows = props.count(keys::BEYOND_WINDOW_ROWS, 0)?;
    let mut tx = Tx::begin(lab.store(), None)?;
    record.fingerprint = snapshot::fingerprint_after(lab, &mut tx, None)?;
    snapshot::insert_record(lab, &mut tx, &record)?;
    let mut hashes = hashes_as_of(tx.store(), record.snapshot_id, &dates, &props.kept_windows()?, late_days)?;
    tx.append_snapshot_dates(record.snapshot_id, &skips(&dates, &mut hashes))?;
    tx.commit()?;
    Ok(record.snapshot_id)
}

/// One v1 run on Spark as the lab's v1 snapshot: the rows it appended, under the next id.
fn append_naive(lab: &Lab, run: &Append, when: NaiveDateTime) -> Result<i64> {
    let run_date = run.properties.date(keys::UPLOAD)?.ok_or_else(|| eyre!("v1's snapshot {} names no run date", run.snapshot_id))?;

    let mut record = snapshot::new_record(lab, Operation::Append, Trigger::upload(TriggerKind::Naive, run_date), 0)?;
    record.created_at = when;
    let mut tx = Tx::begin(lab.store(), None)?;
    for path in &run.files {
        tx.mirror_load_naive(path, run.snapshot_id)?;
    }
    record.fingerprint = snapshot::fingerprint_after(lab, &mut tx, None)?;
    record.rows_added = tx.mirror_naive_version(record.snapshot_id, run.snapshot_id)?;
    snapshot::insert_record(lab, &mut tx, &record)?;
    tx.commit()?;
    Ok(record.snapshot_id)
}

/// One Iceberg snapshot of gold as the lab's snapshot: the versions of the dates it wrote, its
/// record, and each date's input hash over bronze as it was then (the mirror's own hash, so that
/// a date's finality is judged as in the lab). Returns the new snapshot's id.
fn write(lab: &Lab, snap: &SnapshotPlan, when: NaiveDateTime) -> Result<i64> {
    let props = &snap.properties;
    let late_days = props.late_days()?;
    let kept = props.kept_windows()?;
    let skipped = props.dates(keys::SKIPPED_DATES)?;
    let mut record = snapshot::new_record(lab, Operation::Overwrite, props.trigger()?, late_days)?;
    record.created_at = when;
    record.dates_rewritten = snap.dates.len() as i64;
    record.dates_skipped = skipped.len() as i64;
    record.beyond_window_rows = props.count(keys::BEYOND_WINDOW_ROWS, 0)?;
    let id = record.snapshot_id;
    let before = match record.parent_id {
        Some(head) => snapshot::versions_as_of(lab, head)?,
        None => BTreeMap::new(),
    };
    let dates = crate::store::date_list(&snap.dates);
    let mut tx = Tx::begin(lab.store(), None)?;
    for path in &snap.gold_files {
        tx.mirror_load_version(true, path, snap.snapshot_id, &dates)?;
    }
    for path in &snap.silver_files {
        tx.mirror_load_version(false, path, snap.snapshot_id, &dates)?;
    }
    tx.mirror_version(id, snap.snapshot_id)?;
    for (d, w) in &kept {
        tx.mirror_window(id, *d, *w)?;
    }
    snapshot::insert_record(lab, &mut tx, &record)?;
    let all: Vec<NaiveDate> = snap.dates.iter().chain(&skipped).copied().collect();
    let mut hashes = hashes_as_of(tx.store(), id, &all, &kept, late_days)?;
    let mut outcomes = skips(&skipped, &mut hashes);
    for d in &snap.dates {
        let replaced = match before.get(d) {
            Some(v) => Some(tx.store().rows_of_version(*v, *d)?),
            None => None,
        };
        let added = tx.store().rows_of_version(id, *d)?;
        let (input_rows, input_hash) = hashes.remove(d).unwrap_or_default();
        outcomes.push(DateOutcome {
            business_date: *d,
            action: DateAction::Overwrite,
            input_hash,
            input_rows,
            silver_replaced: replaced.as_ref().map_or(0, |r| r.silver_rows),
            silver_added: added.silver_rows,
            gold_replaced: replaced.as_ref().map_or(0, |r| r.gold_rows),
            gold_added: added.gold_rows,
        });
    }
    outcomes.sort_by_key(|o| o.business_date);
    tx.append_snapshot_dates(id, &outcomes)?;
    let fp = snapshot::fingerprint_after(lab, &mut tx, Some(Written { snapshot_id: id, dates: &snap.dates, text: None }))?;
    let totals = RecordTotals {
        gold_rows: fp.rows,
        gold_md5: &fp.md5,
        rows_replaced: outcomes.iter().map(|o| o.silver_replaced + o.gold_replaced).sum(),
        rows_added: outcomes.iter().map(|o| o.silver_added + o.gold_added).sum(),
    };
    tx.mirror_record_totals(id, totals)?;
    tx.commit()?;
    Ok(id)
}

/// What the warehouse's tables have committed so far: each table of the `recount` namespace with
/// its version hint (a Hadoop catalog writes it anew with every commit, and a new table adds
/// one). Cheap to read (no JVM, no pyiceberg), so the explorer asks it while idle and reloads when
/// it changes, and a current mirror is found without planning.
pub fn commits(warehouse: &Path) -> Vec<(String, Option<String>)> {
    let namespace = warehouse.join("recount");
    let mut tables: Vec<String> = std::fs::read_dir(&namespace)
        .map(|dir| dir.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    tables.sort();
    tables
        .into_iter()
        .map(|t| {
            let hint = std::fs::read_to_string(namespace.join(&t).join("metadata/version-hint.text")).ok();
            (t, hint)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_properties_the_lab_reads_are_the_ones_the_shared_corpus_says_it_reads() {
        let text = std::fs::read_to_string(
            std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../tests/corpus/properties.jsonl"),
        )
        .unwrap();
        let cases: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let read: std::collections::BTreeSet<String> =
            cases.iter().filter(|c| c["lab_reads"] == true).map(|c| c["key"].as_str().unwrap().to_string()).collect();
        let ours: std::collections::BTreeSet<String> = super::keys::ALL.iter().map(|k| k.full()).collect();
        assert_eq!(ours, read, "the lab's keys (warehouse::keys) and the corpus's lab_reads");
        assert_eq!(super::keys::WINDOW.full(), "recount.window.");
    }

    use super::*;

    #[test]
    fn a_comment_in_the_labs_schema_lays_a_mirror_out_anew() {
        let schema = include_str!("../../../../queries/schema.sql");
        let edited = format!("-- a note\n{schema}");
        // The rules digest, which every input hash covers, reads past the comment...
        assert_eq!(crate::store::sql_for_digest(&edited), crate::store::sql_for_digest(schema));
        // ...but the mirror's layout does not: a reader would refuse views another schema wrote.
        let texts: Vec<&str> = LAYOUT.iter().map(|t| if *t == schema { edited.as_str() } else { *t }).collect();
        assert_ne!(layout_of(&texts), layout());
    }
}
