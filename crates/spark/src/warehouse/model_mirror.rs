//! The warehouse of a model other than retail as a model lab the reports read: its mirror.
//!
//! pyiceberg plans, without a JVM, what the model's tables hold (`recount_spark.model_mirror`):
//! the model, the dimension's versions and the file versions with the time each landing
//! committed, bronze's record files, and every gold snapshot with the run that wrote it. The
//! records load once (queries/model_mirror.sql); then the warehouse's history is replayed in the
//! order it happened through the lab's own writes: a landing's file versions enter the lab at
//! their commit time, each gold snapshot is the lab's v2 write of the same dates under the same
//! window (silver's winners and the input hashes are the lab's, over the same bronze), a move of
//! gold back to an older snapshot is the lab's rollback, and a run that wrote nothing is a
//! skipped run. After each step gold's fingerprint must be the warehouse's as of that snapshot:
//! a warehouse whose gold its own bronze does not give is refused, never shown as if it agreed.

use super::{at, stop_if_asked};
use crate::lake::{Lab, model as lab_model};
use crate::model::Model;
use crate::store::Tx;
use crate::store::model::ModelFile;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One table of the warehouse and the metadata file it is at.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct TableState {
    pub table: String,
    pub metadata: String,
}

/// A file version the warehouse recorded, with its landing's commit time.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorFile {
    pub upload_date: NaiveDate,
    pub file: String,
    pub version: i32,
    pub md5: String,
    pub records: i64,
    pub quarantined: i64,
    pub at_ms: i64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorDimension {
    pub version: i32,
    pub md5: String,
    pub text: String,
    pub at_ms: i64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorSkipped {
    /// None: a rebuild of named dates.
    pub upload: Option<NaiveDate>,
    pub dates: Vec<NaiveDate>,
    pub at_ms: i64,
}

/// A snapshot of the model's gold: the run that wrote it, an upload's or a reopening's (neither:
/// the table's creation).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorGoldSnapshot {
    pub snapshot_id: i64,
    /// The uploads of the run that wrote it (none: a rebuild, a reopening or the creation).
    pub uploads: Vec<NaiveDate>,
    /// `manual`: a rebuild of named dates.
    pub trigger: String,
    /// The date a reopening rebuilt, the window it keeps from then on, and who decided why.
    pub reopened: Option<NaiveDate>,
    pub window: Option<u32>,
    pub reason: String,
    pub by: String,
    pub late_days: u32,
    pub files: String,
    pub dates: Vec<NaiveDate>,
    pub beyond_window: i64,
    /// Gold's fingerprint as of this snapshot, read by pyiceberg.
    pub fingerprint: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorLogEntry {
    pub snapshot_id: i64,
    pub timestamp_ms: i64,
}

/// One v1 append to the warehouse, with its commit time and the files it added.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct MirrorNaive {
    pub snapshot_id: i64,
    pub at_ms: i64,
    pub files: Vec<String>,
}

/// What pyiceberg planned (`python -m recount_spark model-plan`).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub(crate) struct ModelMirrorPlan {
    pub warehouse: String,
    pub state: Vec<TableState>,
    pub name: String,
    /// The model as the driver recorded it (JSON).
    pub parts: String,
    pub dimensions: Vec<MirrorDimension>,
    pub files: Vec<MirrorFile>,
    pub records: Vec<String>,
    pub gold: Vec<MirrorGoldSnapshot>,
    pub log: Vec<MirrorLogEntry>,
    pub skipped: Vec<MirrorSkipped>,
    pub naive: Vec<MirrorNaive>,
}

/// What moved the warehouse, in the order it happened; at one instant a dimension's version
/// comes before the files read under it, and they before the run over them.
enum ModelMoved<'p> {
    Dimension(&'p MirrorDimension),
    File(&'p ModelFile),
    Gold(&'p MirrorLogEntry),
    Skipped(&'p MirrorSkipped),
    Naive(&'p MirrorNaive),
}

/// Lays the plan out in the new lab: the model, bronze, then the warehouse's history replayed.
pub(super) fn build(lab: &Lab, plan: &ModelMirrorPlan, stop: &dyn Fn() -> bool) -> Result<()> {
    let model: Model = serde_json::from_str(&plan.parts).wrap_err_with(|| format!("the warehouse's model {}", plan.name))?;
    // The folder marks a model lab for the commands (`model_commands`).
    std::fs::create_dir_all(lab.raw_root().join("model"))?;
    let mut order: Vec<&MirrorFile> = plan.files.iter().collect();
    order.sort_by(|a, b| {
        (a.at_ms, a.upload_date, a.file.as_bytes(), a.version).cmp(&(b.at_ms, b.upload_date, b.file.as_bytes(), b.version))
    });
    let mut files = Vec::with_capacity(order.len());
    let mut landed_at = HashMap::new();
    for (i, f) in order.iter().enumerate() {
        let file_id = i32::try_from(i + 1)?;
        landed_at.insert(file_id, f.at_ms);
        let (file, md5) = (f.file.clone(), f.md5.clone());
        files.push(ModelFile {
            file_id,
            file,
            upload_date: f.upload_date,
            version: f.version,
            md5,
            records: f.records,
            quarantined: f.quarantined,
        });
    }
    let mut tx = Tx::begin(lab.store(), None)?;
    tx.model_define(&model.name, &serde_json::to_string(&model)?)?;
    tx.model_mirror_ids(&files)?;
    for path in &plan.records {
        stop_if_asked(stop)?;
        tx.model_mirror_records(path)?;
    }
    tx.commit()?;
    let mut moves: Vec<(i64, u8, ModelMoved)> = Vec::new();
    moves.extend(plan.dimensions.iter().map(|d| (d.at_ms, 0, ModelMoved::Dimension(d))));
    moves.extend(files.iter().map(|f| (landed_at[&f.file_id], 1, ModelMoved::File(f))));
    moves.extend(plan.log.iter().map(|e| (e.timestamp_ms, 2, ModelMoved::Gold(e))));
    moves.extend(plan.skipped.iter().map(|s| (s.at_ms, 3, ModelMoved::Skipped(s))));
    moves.extend(plan.naive.iter().map(|n| (n.at_ms, 4, ModelMoved::Naive(n))));
    moves.sort_by_key(|(ms, rank, _)| (*ms, *rank));
    let by_id: HashMap<i64, &MirrorGoldSnapshot> = plan.gold.iter().map(|s| (s.snapshot_id, s)).collect();
    let mut mirror_of: HashMap<i64, i64> = HashMap::new();
    // Each of the mirror's snapshots with the Iceberg snapshot it stands for: a rollback from the
    // explorer names the mirror's, Spark's rollback the warehouse's.
    let mut iceberg: Vec<(i64, i64)> = Vec::new();
    for (ms, _, moved) in moves {
        stop_if_asked(stop)?;
        let when = at(ms)?;
        let mut tx = Tx::begin(lab.store(), None)?;
        match moved {
            ModelMoved::Dimension(d) => tx.model_mirror_dimension(d.version, &d.md5, &d.text, when)?,
            ModelMoved::File(f) => tx.model_mirror_file(f, when)?,
            ModelMoved::Skipped(s) => tx.model_mirror_skipped(s.upload.as_slice(), &s.dates, when)?,
            ModelMoved::Naive(n) => {
                for path in &n.files {
                    tx.model_mirror_naive(path)?;
                }
            }
            ModelMoved::Gold(entry) => {
                drop(tx);
                let snap = by_id
                    .get(&entry.snapshot_id)
                    .ok_or_else(|| eyre!("gold's log names snapshot {}, which it does not hold", entry.snapshot_id))?;
                let id = gold_moved(lab, &model, snap, &mirror_of)?;
                let Some(id) = id else { continue };
                mirror_of.entry(snap.snapshot_id).or_insert(id);
                iceberg.push((id, snap.snapshot_id));
                let mut tx = Tx::begin(lab.store(), None)?;
                tx.model_mirror_time(id, when)?;
                tx.commit()?;
                continue;
            }
        }
        tx.commit()?;
    }
    finish(lab, &iceberg)
}

/// The mirror's last step: each file version's sums per date, as a lab keeps them as files land
/// (its reports then add them up rather than hash every record: `input_hashes`), and its
/// snapshots paired with the Iceberg snapshots they stand for.
fn finish(lab: &Lab, iceberg: &[(i64, i64)]) -> Result<()> {
    let mut tx = Tx::begin(lab.store(), None)?;
    tx.model_file_hashes()?;
    tx.commit()?;
    std::fs::write(lab.root.join(ICEBERG_IDS), serde_json::to_string(iceberg)?)?;
    Ok(())
}

/// The file in a model's mirror that pairs each of its snapshots with the Iceberg snapshot it
/// stands for.
const ICEBERG_IDS: &str = "iceberg-snapshots.json";

/// The Iceberg snapshot the mirror's snapshot `id` stands for (None: no gold snapshot of it).
pub(super) fn iceberg_of(mirror: &Lab, id: i64) -> Result<Option<i64>> {
    let path = mirror.root.join(ICEBERG_IDS);
    let text = std::fs::read_to_string(&path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let pairs: Vec<(i64, i64)> = serde_json::from_str(&text)?;
    Ok(pairs.into_iter().find(|(m, _)| *m == id).map(|(_, ice)| ice))
}

/// Gold's current snapshot moved to `snap`: the lab's v2 write of its dates, or, to a snapshot
/// it held before, the lab's rollback; checked against gold's fingerprint as of `snap`. Returns
/// the lab's snapshot (None: the table's creation, which wrote nothing).
fn gold_moved(lab: &Lab, model: &Model, snap: &MirrorGoldSnapshot, mirror_of: &HashMap<i64, i64>) -> Result<Option<i64>> {
    let id = match (mirror_of.get(&snap.snapshot_id), snap.uploads.first(), snap.reopened) {
        (Some(&target), ..) => lab_model::rollback(lab, model, target)?,
        (None, Some(_), _) => {
            let what = (snap.files.as_str(), snap.beyond_window);
            lab_model::mirror_write(lab, model, &snap.uploads, snap.dates.clone(), snap.late_days, what)?
        }
        (None, None, Some(d)) => {
            let window = snap.window.ok_or_else(|| eyre!("gold's snapshot {} reopens {d} and names no window", snap.snapshot_id))?;
            let decision = (snap.reason.as_str(), snap.by.as_str());
            lab_model::mirror_reopen(lab, model, (d, window), snap.late_days, decision, &snap.files)?
        }
        (None, None, None) if snap.trigger == "manual" && !snap.dates.is_empty() => {
            lab_model::mirror_rebuild(lab, model, snap.dates.clone(), snap.late_days, &snap.files)?
        }
        (None, None, None) if snap.dates.is_empty() && mirror_of.is_empty() => return Ok(None),
        (None, None, None) => bail!("gold's snapshot {} is no run recount knows (no upload, no reopening)", snap.snapshot_id),
    };
    let here = lab_model::fingerprint(lab, model, None)?;
    if here != snap.fingerprint {
        bail!(
            "the warehouse's gold at snapshot {} ({}) is not what its own bronze gives under the lab's rules ({here}): \
             a lab of the same world and `recount audit --gold iceberg:WAREHOUSE#recount.{}` name the rows",
            snap.snapshot_id,
            snap.fingerprint,
            model.gold
        );
    }
    Ok(Some(id))
}
