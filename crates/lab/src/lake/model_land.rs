//! A model lab's landing: each upload's files compared with the versions the lab holds (the same
//! bytes are noted, not landed again), new and corrected files landed as their next version, and
//! the files a corrected dimension row re-dates read again from their kept bytes. DuckDB's threads
//! read the file versions through the store's scan (`Reading`), each keeping a version's bytes
//! under its own path and inserting its records, in one transaction.

use super::Lab;
use super::land::{BadFile, HeldUpload};
use crate::model::Model;
use crate::model::read::{DimensionTable, LineReader};
use crate::store::Tx;
use crate::store::model::{ModelFile, RecordRow, RecordsBatch, RecordsBuilder, RecordsReader};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where a model lab keeps each file version's bytes: `raw/model/upload_date=D/NAME.vN`. A
/// version's path is written once, before the landing commits, and never again.
pub(super) fn version_path(lab: &Lab, upload: NaiveDate, name: &str, version: i32) -> PathBuf {
    lab.raw_root().join("model").join(format!("upload_date={upload}")).join(format!("{name}.v{version}"))
}

/// Every key the lab's dimension versions have named, each with the row of the newest version
/// that names it: a key gone from the file keeps its last row, so its records keep their dates
/// and stay in gold (as a store gone from stores.csv keeps its sales). As of snapshot `as_of`
/// (None: now), of the versions landed by then.
pub(super) fn kept_dimension(lab: &Lab, model: &Model, as_of: Option<i64>) -> Result<DimensionTable> {
    let mut table = DimensionTable::default();
    for v in lab.store().model_dimension_versions(as_of)? {
        table.rows.extend(DimensionTable::parse(model, &v.text)?.rows);
    }
    Ok(table)
}

/// A file a landing looked at, and what became of it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelLandedFile {
    pub upload_date: NaiveDate,
    pub file: String,
    pub version: i32,
    /// `new`, `corrected` (a later version of a landed path), `unchanged` (the same bytes) or
    /// `re-read` (read again under a corrected dimension row).
    pub status: String,
    pub records: i64,
    pub quarantined: i64,
    /// A correction whose bytes are an earlier version's: (that version, the version it
    /// replaced), as retail's `FileLanded::reverts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<(i32, i32)>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelLanding {
    pub model: String,
    pub files: Vec<ModelLandedFile>,
    /// The dimension file's rows that changed or are new (their keys), when a new version of it
    /// landed.
    pub dimension_changed: Vec<String>,
    /// Keys the world's dimension file no longer names: each keeps the row it last had, and its
    /// records stay in gold.
    pub dimension_removed: Vec<String>,
    /// Upload dates asked for that the world does not have.
    pub missing: Vec<NaiveDate>,
    /// Uploads held back whole: a file of theirs cannot be read whole (a cut or corrupt gzip,
    /// one that inflates past the limit), so nothing of them landed; the other uploads did.
    /// Each by its first file (in name order) that cannot be read whole, as retail's.
    pub held: Vec<HeldUpload>,
}

/// A refused line: file id, line, reason, the line as shown.
type RefusedLine = (i32, i32, String, String);

/// A file version to land: its row in the catalogue (its md5 is what the bytes must hash to),
/// where its bytes are read from, and where they are kept, unless that is where they are.
struct ToRead {
    file: ModelFile,
    from: PathBuf,
    keep_at: Option<PathBuf>,
    status: &'static str,
}

/// A file version read: its row with its counts, its status, its refused lines.
struct Read {
    file: ModelFile,
    status: &'static str,
    refused: Vec<RefusedLine>,
}

/// The landing's file versions, as the store's scan reads them on DuckDB's threads.
struct Reading {
    model: Model,
    dims: DimensionTable,
    /// Last first.
    todo: Mutex<Vec<ToRead>>,
    read: Mutex<Vec<Read>>,
    error: Mutex<Option<color_eyre::Report>>,
}

fn poisoned<T>(_: T) -> color_eyre::Report {
    eyre!("a landing thread panicked")
}

impl Reading {
    /// Reads one version: its bytes, hashed (and checked against the md5 it was planned with,
    /// when the plan hashed it) and kept under the version's path, then its lines with the model.
    fn read_one(&self, mut t: ToRead) -> Result<RecordsBatch> {
        let bytes = std::fs::read(&t.from).wrap_err_with(|| format!("reading {}", t.from.display()))?;
        let md5 = crate::raw::md5_hex(&bytes);
        if !t.file.md5.is_empty() && md5 != t.file.md5 {
            bail!("{} changed while it was landing: land it again", t.from.display());
        }
        t.file.md5 = md5;
        if let Some(path) = &t.keep_at {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
            }
            let tmp = path.with_extension("landing");
            crate::lake::crash_point("landing:write");
            // A re-read version keeps the bytes of the one it follows: linked, not copied.
            if t.status == REREAD { crate::lake::link_or_write(&t.from, &tmp, &bytes) } else { std::fs::write(&tmp, &bytes) }
                .and_then(|_| std::fs::rename(&tmp, path))
                .wrap_err_with(|| format!("writing {}", path.display()))?;
        }
        let (batch, file, refused) = records_of(&self.model, &self.dims, t.file, &bytes)?;
        self.read.lock().map_err(poisoned)?.push(Read { file, status: t.status, refused });
        Ok(batch)
    }
}

impl RecordsReader for Reading {
    fn next_file(&self) -> Result<Option<RecordsBatch>> {
        let next = self.todo.lock().map_err(poisoned)?.pop();
        next.map(|t| self.read_one(t)).transpose()
    }

    fn threads(&self) -> u64 {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    }

    fn failed(&self, e: color_eyre::Report) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert(e);
        }
    }

    fn take_error(&self) -> Option<color_eyre::Report> {
        self.error.lock().ok()?.take()
    }
}

/// A file version's lines read with the model: its records as bronze's columns, its row with
/// its counts, its refused lines.
fn records_of(
    model: &Model,
    dims: &DimensionTable,
    mut file: ModelFile,
    bytes: &[u8],
) -> Result<(RecordsBatch, ModelFile, Vec<RefusedLine>)> {
    // The contract's section 2: a file that cannot be read whole holds back its upload, and only
    // that upload (`land` lands the others without it).
    let bytes = crate::raw::decompress(bytes).map_err(|e| {
        eyre!(BadFile { upload_date: file.upload_date, file: file.file.clone(), reason: crate::raw::unreadable(".gz", &e).to_string() })
    })?;
    // Retail's quarantine: the first refused lines of a file kept, each bounded; the rest counted.
    let (mut records, mut refused) = (RecordsBuilder::new(file.file_id), crate::lake::land::columns::Quarantine::default());
    let reader = LineReader::new(model, dims)?;
    for (i, raw) in crate::raw::split_lines(&bytes).enumerate() {
        let n = i32::try_from(i + 1)?;
        let line = match crate::raw::line_text(raw) {
            Ok(line) => line,
            Err(reason) => {
                refused.push(n.unsigned_abs(), &reason, &crate::sanitize::for_terminal(&String::from_utf8_lossy(raw)));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let read = reader.read_with(line, file.upload_date, |r| {
            records.push(RecordRow {
                line: n,
                key: r.key,
                event_id: r.event_id,
                arrival_ns: r.arrival.timestamp_nanos_opt().unwrap_or(i64::MAX),
                event_ns: r.event_time.timestamp_nanos_opt().unwrap_or(i64::MAX),
                business_date: r.business_date,
                grain: &r.grain,
                attributes: r.attributes,
                measures: &r.measures,
            })
        });
        if let Err(reason) = read {
            refused.push(n.unsigned_abs(), &reason, &crate::sanitize::for_terminal(line));
        }
    }
    file.records = records.rows() as i64;
    let (kept, quarantined) = refused.finish();
    file.quarantined = i64::try_from(quarantined)?;
    let refused = kept.into_iter().map(|q| Ok((file.file_id, i32::try_from(q.line)?, q.reason, q.raw_line))).collect::<Result<_>>()?;
    Ok((records.finish()?, file, refused))
}

/// A new version of the dimension file: its version, MD5 and text.
type NewDimension = (i32, String, String);

/// The dimension: the world's file if it has one (a new version when its bytes changed), over
/// every row the lab's versions named (a key gone from the file keeps its last row, and its
/// records stay in gold, as retail keeps a store gone from stores.csv). Returns the table, the new
/// version to keep, the keys whose rows changed or are new, and the keys the file no longer names.
fn dimension(lab: &Lab, world: &Path, model: &Model) -> Result<LandingDimension> {
    let Some(d) = &model.dimension else { return Ok(LandingDimension::default()) };
    let kept = lab.store().model_dimension()?;
    let mut table = kept_dimension(lab, model, None)?;
    let path = crate::raw::world_file(world, &d.file, "model.dimension.file")?;
    // Only a file that is not there falls back on the lab's; a folder or a FIFO in its place is
    // refused by the read below, naming it.
    if !path.exists() {
        return match kept {
            Some(_) => Ok(LandingDimension { table, ..LandingDimension::default() }),
            None => bail!("{}: no {} here, and the lab has none yet: the model dates its events by it", world.display(), d.file),
        };
    }
    crate::raw::inside_world(world, &path)?;
    let text = crate::raw::read_small_file(&path)?;
    let now = DimensionTable::parse(model, &text).wrap_err_with(|| format!("{}", path.display()))?;
    let md5 = crate::raw::md5_hex(text.as_bytes());
    let mut removed: Vec<String> = table.rows.keys().filter(|k| !now.rows.contains_key(*k)).cloned().collect();
    removed.sort();
    let new = match &kept {
        Some(k) if k.md5 == md5 => return Ok(LandingDimension { table, removed, ..LandingDimension::default() }),
        Some(k) => Some((k.version + 1, md5, text)),
        None => Some((1, md5, text)),
    };
    let mut changed: Vec<String> = match kept {
        Some(_) => now.rows.iter().filter(|(key, row)| table.rows.get(*key) != Some(*row)).map(|(k, _)| k.clone()).collect(),
        None => Vec::new(),
    };
    changed.sort();
    table.rows.extend(now.rows);
    Ok(LandingDimension { table, new, changed, removed })
}

/// What a landing reads its lines by: the dimension table, the new version of its file to keep,
/// the keys whose rows changed or are new, and the keys the file no longer names.
#[derive(Default)]
struct LandingDimension {
    table: DimensionTable,
    new: Option<NewDimension>,
    changed: Vec<String>,
    removed: Vec<String>,
}

/// The files of upload `d` in `world`, by name in the upload (None: no such partition).
fn world_files(world: &Path, model: &Model, d: NaiveDate) -> Result<Option<Vec<(String, PathBuf)>>> {
    let root = crate::raw::world_file(world, &model.events_root, "model.events_root")?;
    let dir = crate::model::recount::partition(&root, d);
    if !dir.is_dir() {
        return Ok(None);
    }
    crate::raw::inside_world(world, &dir)?;
    let mut out = Vec::new();
    for path in crate::raw::files_below(&dir)? {
        let name = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().into_owned();
        if name.ends_with(".jsonl.gz") {
            crate::raw::inside_world(world, &path)?;
            out.push((name, path));
        }
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(Some(out))
}

/// What a landing found in the world: the file versions to read, the uploads the world lacks,
/// and the files it already holds (the same bytes).
struct Planned {
    todo: Vec<ToRead>,
    missing: Vec<NaiveDate>,
    files: Vec<ModelLandedFile>,
}

/// Each upload's files against the versions the lab holds: the same bytes are noted, other bytes
/// are read as the path's next version (ids from `next_id` on). Only a path the lab holds is
/// hashed here; a new path is read once, on DuckDB's threads, which hash and inflate it.
fn plan(lab: &Lab, world: &Path, model: &Model, dates: &[NaiveDate], next_id: &mut i32) -> Result<Planned> {
    let (mut todo, mut missing, mut files) = (Vec::new(), Vec::new(), Vec::new());
    let landed = lab.store().model_files_of_uploads(dates)?;
    for &d in dates {
        let Some(found) = world_files(world, model, d)? else {
            missing.push(d);
            continue;
        };
        for (name, path) in found {
            let before = landed.iter().find(|f| f.upload_date == d && f.file == name);
            let md5 = match before {
                Some(_) => crate::raw::md5_of_file(&path)?,
                None => String::new(),
            };
            if let Some(f) = before.filter(|f| f.md5 == md5) {
                let (records, quarantined) = (f.records, f.quarantined);
                files.push(ModelLandedFile {
                    upload_date: d,
                    file: name,
                    version: f.version,
                    status: "unchanged".into(),
                    records,
                    quarantined,
                    reverts: None,
                });
                continue;
            }
            let version = before.map_or(1, |f| f.version + 1);
            let keep_at = Some(version_path(lab, d, &name, version));
            let file = ModelFile { file_id: *next_id, file: name, upload_date: d, version, md5, records: 0, quarantined: 0 };
            *next_id += 1;
            todo.push(ToRead { file, from: path, keep_at, status: if version == 1 { "new" } else { "corrected" } });
        }
    }
    Ok(Planned { todo, missing, files })
}

/// The held upload's first file, in name order, that cannot be read whole: the one a landing
/// names, whichever of its files a thread met first.
fn first_unreadable(world: &Path, model: &Model, bad: BadFile) -> Result<HeldUpload> {
    for (name, path) in world_files(world, model, bad.upload_date)?.unwrap_or_default() {
        let bytes = std::fs::read(&path).wrap_err_with(|| format!("reading {}", path.display()))?;
        if let Err(e) = crate::raw::decompress(&bytes) {
            return Ok(HeldUpload { upload_date: bad.upload_date, file: name, reason: crate::raw::unreadable(".gz", &e).to_string() });
        }
    }
    Ok(HeldUpload { upload_date: bad.upload_date, file: bad.file, reason: bad.reason })
}

/// Lands uploads `dates` of `world` into a model lab: new and corrected files as their next
/// version, unchanged ones noted, a corrected dimension row's files read again. One transaction;
/// every version's bytes are written under their own path before it commits. A landing that ran
/// out of DuckDB's limit kept nothing, and runs again as it was with a raised limit, up to
/// DuckDB's share of the budget, as retail's does (its reads run inside its transaction, where a
/// statement is not retried alone).
/// A file that cannot be read whole holds back its upload: the landing runs again without it.
pub fn land(lab: &mut Lab, world: &Path, model: &Model, dates: &[NaiveDate]) -> Result<ModelLanding> {
    let (mut dates, mut held) = (dates.to_vec(), Vec::new());
    loop {
        match land_once(lab, world, model, &dates) {
            Err(e) if crate::store::is_out_of_memory(&e) && lab.store().raise_limit(false)? => {}
            Err(e) => {
                let Some(bad) = e.downcast_ref::<BadFile>().filter(|b| dates.contains(&b.upload_date)).cloned() else {
                    return Err(e);
                };
                dates.retain(|d| *d != bad.upload_date);
                held.push(first_unreadable(world, model, bad)?);
            }
            Ok(mut landing) => {
                held.sort_by_key(|h: &HeldUpload| h.upload_date);
                landing.held = held;
                return Ok(landing);
            }
        }
    }
}

fn land_once(lab: &mut Lab, world: &Path, model: &Model, dates: &[NaiveDate]) -> Result<ModelLanding> {
    lab.begin_writing()?;
    let started = std::time::Instant::now();
    let LandingDimension { table: dims, new: new_dimension, changed, removed } = dimension(lab, world, model)?;
    let mut next_id = lab.store().model_next_file_id()?;
    let first_file_id = next_id;
    let Planned { mut todo, missing, mut files } = plan(lab, world, model, dates, &mut next_id)?;
    todo.extend(reread(lab, model, &changed, &todo, &mut next_id)?);
    let planned = started.elapsed();
    todo.reverse();
    // Where this landing keeps new versions' bytes: removed again if it does not commit.
    let kept: Vec<PathBuf> = todo.iter().filter_map(|t| t.keep_at.clone()).collect();
    let reading = Arc::new(Reading { model: model.clone(), dims, todo: Mutex::new(todo), read: Mutex::default(), error: Mutex::default() });
    // Settings of the connection, not of the transaction: set before it, reset after it.
    lab.store().unordered_inserts()?;
    let written = write_landing(lab, model, new_dimension, (reading.clone(), &kept), first_file_id);
    let reset = lab.store().ordered_inserts();
    if let Err(e) = written {
        return Err(forget_kept(&kept, e));
    }
    reset.wrap_err("resetting the insertion order")?;
    crate::progress::profile(&[
        ("planning".to_string(), planned.as_secs_f64() * 1e3),
        (
            "reading the files and inserting their records, in DuckDB's threads".to_string(),
            (started.elapsed() - planned).as_secs_f64() * 1e3,
        ),
    ]);
    let read = std::mem::take(&mut *reading.read.lock().map_err(poisoned)?);
    let reverted = lab.store().model_reverted_versions(first_file_id)?;
    for r in read {
        // Other bytes holding the same records are a re-delivery, not a correction.
        let status = match r.status {
            "corrected" if lab.store().model_same_rows_as_before(r.file.file_id)? => REDELIVERED,
            other => other,
        };
        files.push(ModelLandedFile {
            upload_date: r.file.upload_date,
            file: r.file.file,
            version: r.file.version,
            status: status.to_string(),
            records: r.file.records,
            quarantined: r.file.quarantined,
            reverts: reverted.iter().find(|v| v.file_id == r.file.file_id).map(|v| (v.reverts_to, v.replaced)),
        });
    }
    files.sort_by(|a, b| (a.upload_date, &a.file, a.version).cmp(&(b.upload_date, &b.file, b.version)));
    Ok(ModelLanding { model: model.name.clone(), files, dimension_changed: changed, dimension_removed: removed, missing, held: Vec::new() })
}

/// A file version's status when it holds its path's previous version's records in other bytes.
pub const REDELIVERED: &str = "re-delivered (same rows)";

/// A landing that did not commit: the bytes it kept for its versions are no version's, so they go
/// too (a kill leaves them, and the next landing writes the same paths again). The error says
/// nothing landed, and names a file it could not remove.
fn forget_kept(kept: &[PathBuf], e: color_eyre::Report) -> color_eyre::Report {
    for path in kept {
        for p in [path.clone(), path.with_extension("landing")] {
            if let Err(err) = std::fs::remove_file(&p)
                && err.kind() != std::io::ErrorKind::NotFound
            {
                return e.wrap_err(format!("landing: nothing was landed (the transaction rolled back), but {} is left", p.display()));
            }
        }
    }
    e.wrap_err("landing: nothing was landed (the transaction rolled back)")
}

/// The status of a file read again under a corrected dimension row.
const REREAD: &str = "re-read";

/// The current files whose records name a dimension row that changed, read again from their
/// kept bytes as their next version (the contract's dimension correction).
fn reread(lab: &Lab, model: &Model, changed: &[String], todo: &[ToRead], next_id: &mut i32) -> Result<Vec<ToRead>> {
    let Some(d) = model.dimension.as_ref().filter(|_| !changed.is_empty()) else { return Ok(Vec::new()) };
    let column = model.grain.iter().position(|g| *g == d.key).ok_or_else(|| eyre!("model.grain lacks the dimension's key"))? + 1;
    let mut out = Vec::new();
    for f in lab.store().model_files_with_key(column, changed)? {
        if todo.iter().any(|t| t.file.upload_date == f.upload_date && t.file.file == f.file) {
            continue;
        }
        let from = version_path(lab, f.upload_date, &f.file, f.version);
        let keep_at = Some(version_path(lab, f.upload_date, &f.file, f.version + 1));
        let file = ModelFile { file_id: *next_id, version: f.version + 1, records: 0, quarantined: 0, ..f };
        *next_id += 1;
        out.push(ToRead { file, from, keep_at, status: REREAD });
    }
    Ok(out)
}

/// The landing's one transaction: the records read on DuckDB's threads, the files' rows, sums and
/// refused lines. The kept versions' bytes are synced to disk while the last statements run, and
/// COMMIT waits for them, as retail's landing does.
fn write_landing(
    lab: &Lab,
    model: &Model,
    dimension: Option<NewDimension>,
    (reading, kept_paths): (Arc<Reading>, &[PathBuf]),
    first_file_id: i32,
) -> Result<()> {
    // The folder marks a model lab for the commands (`model_commands`), before its first commit.
    let kept = lab.raw_root().join("model");
    std::fs::create_dir_all(&kept).wrap_err_with(|| format!("creating {}", kept.display()))?;
    let mut tx = Tx::begin(lab.store(), super::fail_after_from_env())?;
    if lab.store().model_definition()?.is_none() {
        tx.model_define(&model.name, &serde_json::to_string(model)?)?;
    }
    if let Some((version, md5, text)) = &dimension {
        tx.model_dimension_insert(*version, md5, text)?;
    }
    tx.model_records(reading.clone())?;
    let mut read = reading.read.lock().map_err(poisoned)?;
    read.sort_by_key(|r| r.file.file_id);
    let refused: Vec<RefusedLine> = read.iter().flat_map(|r| r.refused.iter().cloned()).collect();
    let landed: Vec<ModelFile> = read.iter().map(|r| r.file.clone()).collect();
    drop(read);
    tx.model_files_insert(&landed)?;
    tx.model_reread_pending(first_file_id)?;
    let raw_root = lab.raw_root();
    std::thread::scope(|s| {
        let sync = s.spawn(|| crate::lake::land::staging::sync_to_disk(kept_paths, &raw_root));
        let rest = (|| {
            tx.model_file_hashes()?;
            tx.model_refused(&refused)?;
            tx.store().fit_to_rows_written()?;
            refuse_measures_past_limit(&mut tx, model, first_file_id)
        })();
        let synced = sync.join().unwrap_or_else(|_| Err(eyre!("syncing the landed copies panicked")));
        rest.and(synced)
    })?;
    tx.commit()?;
    crate::lake::crash_point("landing:committed");
    Ok(())
}

/// A date and grain the new files touch where a measure, summed over every landed copy, would
/// leave 64 bits: the landing is refused, naming them, the measure and a file, as retail refuses
/// a date's revenue past its limit. Every later sum of the grain then stays inside 64 bits.
fn refuse_measures_past_limit(tx: &mut Tx, model: &Model, first_file_id: i32) -> Result<()> {
    let Some(past) = tx.model_measure_past_limit(first_file_id, i64::MAX)? else { return Ok(()) };
    let totals = [&past.t1, &past.t2, &past.t3, &past.t4, &past.t5, &past.t6];
    let over = |t: &Option<String>| t.as_deref().and_then(|t| t.parse::<i128>().ok()).is_some_and(|t| t > i128::from(i64::MAX));
    let (measure, total) = model
        .measures
        .iter()
        .zip(totals)
        .find(|(_, t)| over(t))
        .map_or(("a measure", ""), |(m, t)| (m.name.as_str(), t.as_deref().unwrap_or_default()));
    let grain: Vec<String> = [&past.g1, &past.g2, &past.g3, &past.g4]
        .iter()
        .zip(&model.grain)
        .map(|(v, name)| format!("{name} {}", crate::sanitize::for_terminal(v.as_deref().unwrap_or_default())))
        .collect();
    bail!(
        "business date {}, {}: {measure} over every landed copy would total {total}, past what 64 bits hold (file {}); nothing was landed",
        past.business_date,
        grain.join(", "),
        crate::sanitize::for_terminal(past.file.as_deref().unwrap_or("?"))
    )
}

/// A correction a model's world ships: a folder laid out as the world, holding one upload's
/// corrected file, with `correction.json` saying which and what changed.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ModelCorrection {
    #[serde(skip)]
    pub dir: PathBuf,
    pub upload_date: NaiveDate,
    pub file: String,
    /// What the correction changes, in the world's words.
    #[serde(default)]
    pub what: String,
}

/// The corrections of `world` not landed yet, in delivery order: their upload has landed, and
/// their file's bytes are no landed version's.
pub fn pending_corrections(lab: &Lab, world: &Path, model: &Model) -> Result<Vec<ModelCorrection>> {
    let root = world.join(crate::raw::corrections::CORRECTIONS_DIR);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    crate::raw::inside_world(world, &root)?;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    dirs.sort();
    let landed = lab.store().model_uploads(None)?;
    let mut out = Vec::new();
    for dir in dirs {
        let note = dir.join(crate::raw::corrections::NOTE_FILE);
        if !note.is_file() {
            continue;
        }
        crate::raw::inside_world(world, &note)?;
        let text = crate::raw::read_small_file(&note)?;
        let mut c: ModelCorrection = serde_json::from_str(&text).wrap_err_with(|| format!("reading {}", note.display()))?;
        if !landed.contains(&c.upload_date) {
            continue;
        }
        let Some(files) = world_files(&dir, model, c.upload_date)? else { continue };
        let Some((_, path)) = files.iter().find(|(name, _)| *name == c.file) else {
            bail!("{}: it names {}, which its upload_date={} does not hold", note.display(), c.file, c.upload_date);
        };
        let md5 = crate::raw::md5_hex(&std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?);
        if lab.store().model_file_versions(c.upload_date, &c.file)?.iter().all(|v| v.md5 != md5) {
            c.dir = dir;
            out.push(c);
        }
    }
    Ok(out)
}
