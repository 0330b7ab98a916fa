//! The lab of a model other than retail (docs/data-contract.md, "Models"): the same layers and
//! rules as retail's, in the model's words. Landing keeps every file version's bytes and reads
//! its lines with the model into bronze; v2 rebuilds the affected dates of an upload in one
//! transaction, skipping a date whose input hash is unchanged (an identical re-delivery writes no
//! snapshot); v1 appends; a rollback restores an earlier snapshot's versions as a new one. The
//! SQL is queries/model.sql.

use super::Lab;
pub use super::model_land::{ModelCorrection, ModelLandedFile, ModelLanding, REDELIVERED, land, pending_corrections};
use super::model_land::{kept_dimension, version_path};
use super::snapshot::Fingerprint;
pub use super::snapshot::{model_require as require_snapshot, model_rollback_changes as rollback_changes};
use crate::model::Model;
use crate::model::read::DimensionTable;
use crate::model::recount::ModelRow;
use crate::store::Tx;
use crate::store::model::{LateRecord, ModelCells, NewSnapshot};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::{Path, PathBuf};

/// The lab's model: None for a retail lab (nothing recorded).
pub fn lab_model(lab: &Lab) -> Result<Option<Model>> {
    let Some(d) = lab.store().model_definition()? else { return Ok(None) };
    let model: Model = serde_json::from_str(&d.parts).wrap_err_with(|| format!("the lab's model {} as recorded", d.name))?;
    Ok(Some(model))
}

/// The model a landing uses: the lab's, the world's or `--model`'s, which must agree. A lab that
/// holds retail's data takes no other model.
pub fn model_for_landing(lab: &Lab, world: &Path, asked: Option<&Model>) -> Result<Option<Model>> {
    let declared = if world.join(crate::raw::source::SOURCE_FILE).exists() { Some(crate::model::recount::model_of(world)?) } else { None };
    let wanted = asked.cloned().or(declared).filter(|m| *m != crate::model::retail());
    match (lab_model(lab)?, wanted) {
        (Some(have), Some(want)) if have != want => {
            bail!(
                "this lab holds model {}; {} declares model {} with other {}: land it in a lab of its own (--lab)",
                have.name,
                world.display(),
                want.name,
                have.differences(&want).join(", ")
            )
        }
        (Some(have), _) if !world.join(&have.events_root).is_dir() => bail!(
            "this lab holds model {}; {} has no {} folder of its uploads: land another model's world in a lab of its own (--lab)",
            have.name,
            world.display(),
            have.events_root
        ),
        (Some(have), _) => Ok(Some(have)),
        (None, Some(want)) if !lab.is_empty()? => {
            bail!("this lab holds retail's data; model {} lands in a lab of its own (--lab)", want.name)
        }
        (None, want) => Ok(want),
    }
    .and_then(|m| {
        if let Some(m) = &m {
            m.validate()?;
        }
        Ok(m)
    })
}

/// What one v2 run of an upload did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelRun {
    /// The uploads the run was for (one, or a backfill's range).
    pub uploads: Vec<NaiveDate>,
    /// The snapshot it wrote (None: nothing changed, so none).
    pub snapshot: Option<i64>,
    pub rewritten: Vec<NaiveDate>,
    /// Affected dates whose input was unchanged.
    pub skipped: Vec<NaiveDate>,
    /// Current rows older than the window, and rows dated more than a day after their upload.
    pub beyond_window: i64,
    pub future_dated: i64,
    pub fingerprint: String,
}

/// v2 for `uploads` (those the lab has not landed are passed over): one write for all of them,
/// as retail's backfill, since a date's build does not depend on the run that asks for it. Files
/// re-read under a corrected dimension row go first, whatever upload is asked (as retail's store
/// corrections): the dates they move are older uploads' too.
pub fn run(lab: &Lab, model: &Model, uploads: &[NaiveDate], late_days: u32) -> Result<Vec<ModelRun>> {
    let (mut runs, moved) = (Vec::new(), lab.store().model_reread_dates()?);
    if !moved.is_empty() {
        let files = format!("re-read files: {}", crate::lake::v2::name_runs(&moved));
        let what = ModelWrite { uploads: &[], affected: moved, beyond: 0, future: 0, operation: REREAD_RUN, files: &files, force: false };
        runs.push(write(lab, model, what, late_days).wrap_err("v2 for the re-read files: nothing was written")?);
    }
    let landed = lab.store().model_uploads(None)?;
    let mut ran: Vec<NaiveDate> = uploads.iter().filter(|u| landed.contains(u)).copied().collect();
    ran.sort();
    ran.dedup();
    if ran.is_empty() {
        return Ok(runs);
    }
    let what = match ran.as_slice() {
        [u] => format!("v2 for upload {u}"),
        _ => format!("v2 for uploads {}", crate::lake::v2::name_runs(&ran)),
    };
    runs.push(
        run_uploads(lab, model, &ran, late_days).wrap_err_with(|| format!("{what}: nothing was written (its transaction rolled back)"))?,
    );
    Ok(runs)
}

/// The run that rebuilds the dates of re-read files (`model.reread_pending`), which it empties.
const REREAD_RUN: &str = "dimension";

/// The dates runs of `uploads` rebuild (every date a version of their files holds, from
/// `u - late_days` to `u + 1`), and their current rows older than that and dated later.
fn affected(lab: &Lab, uploads: &[NaiveDate], late_days: u32) -> Result<(Vec<NaiveDate>, i64, i64)> {
    let (mut affected, mut beyond, mut future) = (std::collections::BTreeSet::new(), 0, 0);
    let kept = lab.store().model_kept_windows(None)?;
    for c in lab.store().model_upload_dates(uploads)? {
        let current = if c.current { c.rows } else { 0 };
        // A reopened date keeps its wider window for every later run.
        let window = crate::rules::LatenessWindow::with_kept(late_days, kept.get(&c.business_date).copied());
        match window.fate(c.upload_date, c.business_date) {
            crate::rules::Fate::BeyondWindow => beyond += current,
            crate::rules::Fate::FutureDated => future += current,
            crate::rules::Fate::Affected => {
                affected.insert(c.business_date);
            }
        }
    }
    Ok((affected.into_iter().collect(), beyond, future))
}

/// What a snapshot says it was built from: one upload's file versions, or a range of uploads and
/// the corrected versions among them.
fn files_of(lab: &Lab, uploads: &[NaiveDate]) -> Result<String> {
    if let [_] = uploads {
        let files = lab.store().model_files_of_uploads(uploads)?;
        return Ok(files.iter().map(|f| format!("{} v{}", f.file, f.version)).collect::<Vec<_>>().join(", "));
    }
    let mut parts = vec![format!("uploads {}", crate::lake::v2::name_runs(uploads))];
    // One statement for the range, not one an upload.
    for f in lab.store().model_corrected_files_of(uploads)? {
        // A re-delivery of the same rows is no correction.
        if !lab.store().model_same_rows_as_before(f.file_id)? {
            parts.push(format!("corrected: upload_date={}/{} v{}", f.upload_date, f.file, f.version));
        }
    }
    Ok(parts.join(", "))
}

/// v2 for `uploads`: every date they hold inside the window (in any version of their files) is
/// rebuilt from every landed upload in that date's window, in one transaction with its snapshot;
/// a date whose input hash is its version's own is skipped (none left: no snapshot).
pub fn run_uploads(lab: &Lab, model: &Model, uploads: &[NaiveDate], late_days: u32) -> Result<ModelRun> {
    let (affected, beyond, future) = affected(lab, uploads, late_days)?;
    let files = files_of(lab, uploads)?;
    write(lab, model, ModelWrite { uploads, affected, beyond, future, operation: "v2", files: &files, force: false }, late_days)
}

/// v2 for business dates `dates`, whatever uploads feed them (`recount rebuild`): each rebuilt
/// from every landed upload in its window, skipped when its input is its version's own unless
/// `force`.
pub fn rebuild(lab: &Lab, model: &Model, dates: &[NaiveDate], late_days: u32, force: bool) -> Result<ModelRun> {
    let mut affected = dates.to_vec();
    affected.sort();
    affected.dedup();
    let files = format!("rebuild of {}", crate::lake::v2::name_runs(&affected));
    let what = ModelWrite { uploads: &[], affected, beyond: 0, future: 0, operation: "rebuild", files: &files, force };
    write(lab, model, what, late_days).wrap_err_with(|| format!("rebuilding {files}: nothing was written (its transaction rolled back)"))
}

/// Reopens closed date `d` (`recount reopen`): its records that arrived past the window are
/// taken into silver and gold, under the widest window that holds them, which the date then keeps
/// for every later run; the snapshot names the reason and who decided. One transaction.
pub fn reopen(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32, (reason, by): (&str, &str)) -> Result<ModelRun> {
    let late = lab.store().model_late_rows(d, late_days, None)?;
    let Some(widest) = late.iter().map(|r| r.days_late).max() else {
        bail!("{d} has no record past its window: there is nothing to reopen it for");
    };
    let window = u32::try_from(widest).map_err(|_| eyre!("{d}: its records past the window were dated after their upload"))?;
    let files = format!("reopened {d} with a {window}-day window by {by}: {reason}");
    let what = ModelWrite { uploads: &[], affected: vec![d], beyond: 0, future: 0, operation: "reopen", files: &files, force: true };
    // Built with the wider window, so that the version's input hash is the one later runs see.
    write_keeping(lab, model, what, window.max(late_days), Some((d, window, reason, by)))
        .wrap_err_with(|| format!("reopening {d}: nothing was written (its transaction rolled back)"))
}

/// What reopening `d` would take in, as retail's `reopen::plan` works it out: the records past
/// its window, the entities gold does not count yet and their money per currency, the uploads
/// that brought them, and the window it would take; an error when nothing arrived late.
pub fn reopen_plan(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32) -> Result<crate::lake::reopen::ReopenPlan> {
    let late = lab.store().model_late_rows(d, late_days, None)?;
    let Some(widest) = late.iter().map(|r| r.days_late).max() else {
        bail!("{d} has no record past its window: there is nothing to reopen it for");
    };
    let first = first_uncounted(model, d, &late);
    let revenue = money_of(model, d, first.iter().map(|(_, r)| r))?;
    let mut uploads: Vec<NaiveDate> = late.iter().map(|r| r.upload_date).collect();
    uploads.sort();
    uploads.dedup();
    let now = crate::rules::LatenessWindow::with_kept(late_days, lab.store().model_kept_windows(None)?.get(&d).copied()).late_days;
    Ok(crate::lake::reopen::ReopenPlan {
        business_date: d,
        late_days: now,
        wider_late_days: u32::try_from(widest)?,
        rows: late.len() as i64,
        baskets: first.len() as i64,
        revenue,
        uploads,
    })
}

/// The money measures of `rows`, summed per currency (a sum past 64 bits is an error).
fn money_of<'r>(model: &Model, d: NaiveDate, rows: impl Iterator<Item = &'r ModelRow>) -> Result<std::collections::BTreeMap<String, i64>> {
    let mut revenue = std::collections::BTreeMap::new();
    for r in rows {
        for (m, v) in model.measures.iter().zip(&r.measures) {
            if let Some(currency) = model.currency_at(m).and_then(|i| r.attributes.get(i)).filter(|c| !c.is_empty()) {
                let sum: &mut i64 = revenue.entry(currency.clone()).or_insert(0);
                *sum = sum.checked_add(*v).ok_or_else(|| eyre!("{d}: the late {} in {currency} overflows 64 bits", m.name))?;
            }
        }
    }
    Ok(revenue)
}

/// What one upload brought of date `d` past its window, counted as retail's alert counts it
/// (`lake::reopen::brought`): its copies (rows), the entities gold has no copy of, and their money
/// measures per currency, each entity's first late copy counted once.
pub fn brought(lab: &Lab, model: &Model, d: NaiveDate, upload: NaiveDate, late_days: u32) -> Result<crate::lake::reopen::Brought> {
    let late = lab.store().model_late_rows(d, late_days, None)?;
    let mine: std::collections::BTreeSet<&str> =
        late.iter().filter(|r| r.upload_date == upload && !r.counted).map(|r| r.entity_key.as_str()).collect();
    let first = first_uncounted(model, d, &late);
    let revenue = money_of(model, d, first.iter().filter(|(k, _)| mine.contains(k.as_str())).map(|(_, r)| r))?;
    let copies = late.iter().filter(|r| r.upload_date == upload).count() as i64;
    Ok(crate::lake::reopen::Brought { copies, baskets: mine.len() as i64, revenue })
}

/// The first copy (in the raw zone's order) of each key of `d` that only arrived past the window,
/// as a gold row: what the recount counts and gold never does. As of snapshot `as_of` (None: now),
/// over the files current then.
pub fn never_counted(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32, as_of: Option<i64>) -> Result<Vec<ModelRow>> {
    Ok(first_uncounted(model, d, &lab.store().model_late_rows(d, late_days, as_of)?).into_iter().map(|(_, r)| r).collect())
}

/// `never_counted` of date `d`'s late rows already read, each with its key (the alert reads them
/// once for both counts, and keeps the keys its upload brought).
fn first_uncounted(model: &Model, d: NaiveDate, late: &[LateRecord]) -> Vec<(String, ModelRow)> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for r in late {
        if r.counted || !seen.insert(r.entity_key.as_str()) {
            continue;
        }
        let row = ModelRow {
            business_date: d,
            grain: named(&model.grain, [r.g1.clone(), r.g2.clone(), r.g3.clone(), r.g4.clone()]),
            attributes: named(&model.attributes, [r.a1.clone(), r.a2.clone(), r.a3.clone(), r.a4.clone()]),
            measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
        };
        out.push((r.entity_key.clone(), row));
    }
    out
}

/// The (upload, business date) pairs of `uploads` whose current rows were past their date's window.
pub fn beyond_pairs(lab: &Lab, uploads: &[NaiveDate], late_days: u32) -> Result<Vec<(NaiveDate, NaiveDate)>> {
    let kept = lab.store().model_kept_windows(None)?;
    let mut pairs = std::collections::BTreeSet::new();
    for c in lab.store().model_upload_dates(uploads)?.into_iter().filter(|c| c.current && c.rows > 0) {
        let window = crate::rules::LatenessWindow::with_kept(late_days, kept.get(&c.business_date).copied());
        if window.fate(c.upload_date, c.business_date) == crate::rules::Fate::BeyondWindow {
            pairs.insert((c.upload_date, c.business_date));
        }
    }
    Ok(pairs.into_iter().collect())
}

/// A write of v2: the dates it rebuilds and what it says it was built from.
struct ModelWrite<'a> {
    uploads: &'a [NaiveDate],
    affected: Vec<NaiveDate>,
    beyond: i64,
    future: i64,
    operation: &'a str,
    files: &'a str,
    /// Rewrite even a date whose input is unchanged.
    force: bool,
}

fn write(lab: &Lab, model: &Model, w: ModelWrite<'_>, late_days: u32) -> Result<ModelRun> {
    write_keeping(lab, model, w, late_days, None)
}

/// A reopening's window, kept in the write's own transaction: (date, window, reason, by).
type Keep<'a> = Option<(NaiveDate, u32, &'a str, &'a str)>;

fn write_keeping(lab: &Lab, model: &Model, w: ModelWrite<'_>, late_days: u32, keep: Keep<'_>) -> Result<ModelRun> {
    let store = lab.store();
    let hashes = store.model_input_hashes(&w.affected, late_days)?;
    let versions = store.model_current_versions(&w.affected, None)?;
    let (mut changed, mut skipped) = (Vec::new(), Vec::new());
    for &d in &w.affected {
        let now = hashes.iter().find(|h| h.business_date == d).map_or("", |h| h.input_hash.as_str());
        match versions.iter().find(|v| v.business_date == d) {
            Some(v) if v.input_hash == now && !w.force => skipped.push(d),
            None if now.is_empty() => skipped.push(d),
            _ => changed.push((d, now.to_string())),
        }
    }
    let run = |snapshot, rewritten, fingerprint| ModelRun {
        uploads: w.uploads.to_vec(),
        snapshot,
        rewritten,
        skipped: skipped.clone(),
        beyond_window: w.beyond,
        future_dated: w.future,
        fingerprint,
    };
    if changed.is_empty() {
        // Read before the skipped run's record commits: an error after it would not be true to
        // say that nothing was written.
        let now = fingerprint(lab, model, None)?;
        let mut tx = Tx::begin(store, super::fail_after_from_env())?;
        if !w.affected.is_empty() {
            tx.model_skipped(w.uploads, &w.affected)?;
        }
        if w.operation == REREAD_RUN {
            tx.model_rereads_applied()?;
        }
        tx.commit()?;
        return Ok(run(None, Vec::new(), now));
    }
    let id = store.model_next_snapshot()?;
    let dates: Vec<NaiveDate> = changed.iter().map(|c| c.0).collect();
    // A write that runs out of DuckDB's limit rolled back whole: it runs again with a larger
    // limit, up to DuckDB's share of the memory budget; past that, its error says to raise it.
    let fingerprint = store.retrying_out_of_memory(false, || {
        let mut tx = Tx::begin(store, super::fail_after_from_env())?;
        if let Some((d, window, reason, by)) = keep {
            tx.model_keep_window(id, d, window, (reason, by))?;
        }
        tx.model_write(id, &dates, late_days)?;
        tx.model_dates(id, &changed)?;
        if w.operation == REREAD_RUN {
            tx.model_rereads_applied()?;
        }
        let Fingerprint { rows, md5 } = fingerprint_after(lab, model, &mut tx, id, &dates)?;
        let record = NewSnapshot {
            snapshot_id: id,
            operation: w.operation,
            upload: w.uploads.last().copied().filter(|_| w.uploads.len() == 1),
            late_days,
            files: w.files,
            dates_rewritten: dates.len(),
            beyond_window: w.beyond,
            gold_rows: rows,
            gold_md5: &md5,
        };
        tx.model_snapshot(&record)?;
        tx.commit()?;
        Ok(crate::model::recount::fingerprint_line(model, rows, &md5))
    })?;
    Ok(run(Some(id), dates, fingerprint))
}

/// The model's gold rows from the lab's columns.
pub fn rows_of(model: &Model, cells: Vec<ModelCells>) -> Vec<ModelRow> {
    cells
        .into_iter()
        .map(|c| ModelRow {
            business_date: c.business_date,
            grain: named(&model.grain, [c.g1, c.g2, c.g3, c.g4]),
            attributes: named(&model.attributes, [c.a1, c.a2, c.a3, c.a4]),
            measures: named(&model.measures, [c.m1, c.m2, c.m3, c.m4, c.m5, c.m6]),
        })
        .collect()
}

/// The first of the lab's fixed columns, one per name of the model's (`model.grain`,
/// `model.attributes` or `model.measures`): the rest are the lab's unused ones.
pub fn named<N, T: Default, const C: usize>(names: &[N], columns: [Option<T>; C]) -> Vec<T> {
    columns.into_iter().take(names.len()).map(Option::unwrap_or_default).collect()
}

/// Gold's row count and MD5 as it stands: read inside a write's transaction for its record, and
/// by the consistency promise against that record.
pub fn digest(lab: &Lab, model: &Model) -> Result<(i64, String)> {
    Ok(crate::model::recount::digest(&rows_of(model, lab.store().model_gold(None)?)))
}

/// Gold's row count and MD5 after write `id` of `dates` (sorted), inside its transaction: hashed
/// from the write's first date on, as retail's write is (snapshot::model_fingerprint_after).
fn fingerprint_after(lab: &Lab, model: &Model, tx: &mut Tx<'_>, id: i64, dates: &[NaiveDate]) -> Result<Fingerprint> {
    let gold_from = |from| Ok(rows_of(model, lab.store().model_gold_from(from)?));
    super::snapshot::model_fingerprint_after(tx, id, dates, gold_from)
}

/// Gold's fingerprint as it stands (or at snapshot `as_of`), in the model's columns.
pub fn fingerprint(lab: &Lab, model: &Model, as_of: Option<i64>) -> Result<String> {
    Ok(crate::model::recount::fingerprint(model, &rows_of(model, lab.store().model_gold(as_of)?)))
}

/// v1 for each of `dates`: the upload's records of that date, every copy, appended.
pub fn naive(lab: &Lab, dates: &[NaiveDate]) -> Result<usize> {
    let mut tx = Tx::begin(lab.store(), super::fail_after_from_env())?;
    let mut rows = 0;
    for &d in dates {
        rows += tx.model_naive(d)?;
    }
    tx.commit().wrap_err("v1: nothing was appended (the transaction rolled back)")?;
    Ok(rows)
}

/// Rolls gold and silver back to snapshot `target`, as a new snapshot (`snapshot::model_rollback`).
pub fn rollback(lab: &Lab, model: &Model, target: i64) -> Result<i64> {
    super::snapshot::model_rollback(lab, target, |from| Ok(rows_of(model, lab.store().model_gold_from(from)?)))
}

/// The lab's current file versions as a recount reads them: upload, name, where the bytes are.
pub fn current_files(lab: &Lab) -> Result<Vec<(NaiveDate, String, PathBuf)>> {
    files_at(lab, None)
}

/// The file versions current as of snapshot `as_of` (None: now), in raw-zone order.
fn files_at(lab: &Lab, as_of: Option<i64>) -> Result<Vec<(NaiveDate, String, PathBuf)>> {
    let files = lab.store().model_files_at(as_of)?;
    Ok(files.into_iter().map(|f| (f.upload_date, f.file.clone(), version_path(lab, f.upload_date, &f.file, f.version))).collect())
}

/// The lab's dimension table as it stands.
pub fn dimension_table(lab: &Lab, model: &Model) -> Result<DimensionTable> {
    kept_dimension(lab, model, None)
}

/// The independent recount of the lab's current files (no window): the truth v2 is checked by.
/// It is kept in the lab with what it counted (every current file version and dimension
/// version), as retail's recount is: a report reads the kept rows until a landing changes that
/// input. A reader that may not write the lab recounts for itself. A warehouse's mirror keeps no
/// raw bytes: its recount reads bronze's current records instead.
pub fn recompute(lab: &Lab, model: &Model) -> Result<Vec<ModelRow>> {
    recompute_of(lab, model, None)
}

/// `recompute`'s rows of date `d` (None: every date): a kept recount is read for that date alone.
pub fn recompute_of(lab: &Lab, model: &Model, d: Option<NaiveDate>) -> Result<Vec<ModelRow>> {
    let on = |rows: Vec<ModelRow>| rows.into_iter().filter(|r| d.is_none_or(|d| r.business_date == d)).collect();
    if lab.is_mirror() {
        return Ok(on(recount_bronze(lab, model)?.rows));
    }
    let (input, current) = lab.store().model_recount_input()?;
    if current {
        return Ok(rows_of(model, lab.store().model_recount_rows(d)?));
    }
    let rows = recount_of(lab, model, &kept_dimension(lab, model, None)?, current_files(lab)?)?.rows;
    if lab.may_write_caches() {
        let mut tx = Tx::begin(lab.store(), None)?;
        tx.model_keep_recount(
            &input,
            rows.iter().map(|r| (r.business_date, text_cells(&r.grain), text_cells(&r.attributes), int_cells(&r.measures))),
        )?;
        tx.commit()?;
    }
    Ok(on(rows))
}

/// A row's names or measures in the lab's fixed columns, the unused ones empty.
fn text_cells<const C: usize>(values: &[String]) -> [Option<&str>; C] {
    std::array::from_fn(|i| values.get(i).map(String::as_str))
}

fn int_cells<const C: usize>(values: &[i64]) -> [Option<i64>; C] {
    std::array::from_fn(|i| values.get(i).copied())
}

/// Keeps the kept recount current before a report on `lab` reads it (`recompute`), as retail's
/// `reports::freshen` does: under the lab's write lock, briefly. A reader that cannot take the
/// lock (another process writes, a read-only lab) leaves it be and recounts for itself.
pub fn freshen(lab: &mut Lab, model: &Model) -> Result<()> {
    if lab.is_mirror() || lab.may_write_caches() {
        return Ok(());
    }
    if lab.store().model_recount_input()?.1 || lab.begin_writing().is_err() {
        return Ok(());
    }
    let kept = recompute(lab, model).map(drop);
    let ended = lab.end_writing();
    kept.and(ended)
}

/// The recount of the raw zone as it was when snapshot `as_of` was recorded: the file versions
/// current then, read from where the lab keeps each version, under the dimension's versions
/// landed by then. A warehouse's mirror keeps no raw bytes, and no time of its landings.
pub fn recompute_at(lab: &Lab, model: &Model, as_of: i64) -> Result<crate::model::recount::ModelRecount> {
    if lab.is_mirror() {
        color_eyre::eyre::bail!("a warehouse keeps no raw files: its recount as of a snapshot is not known");
    }
    recount_of(lab, model, &kept_dimension(lab, model, Some(as_of))?, files_at(lab, Some(as_of))?)
}

fn recount_of(
    lab: &Lab,
    model: &Model,
    dims: &DimensionTable,
    files: Vec<(NaiveDate, String, PathBuf)>,
) -> Result<crate::model::recount::ModelRecount> {
    crate::model::recount::recount_files(model, dims, &files, None, &lab.root.join(crate::store::SPILL_DIR))
}

/// The recount of a mirror's bronze: its current records under the same dedup and sums, in
/// passes by key as the budget needs (about 256 bytes a copy beside its ids and measures).
fn recount_bronze(lab: &Lab, model: &Model) -> Result<crate::model::recount::ModelRecount> {
    use crate::model::recount::BronzeCopy;
    let size = lab.store().model_records_size()?;
    let per_copy = 256 + 16 * model.measures.len() as u64;
    let bytes = u64::try_from(size.records)? * per_copy + 2 * u64::try_from(size.id_bytes)?;
    let files = current_files(lab)?.len();
    crate::model::recount::recount_bronze(model, bytes, files, &mut |passes, pass, push| {
        lab.store().model_bronze_records(passes, pass, |r| {
            push(BronzeCopy {
                key: r.entity_key,
                event_id: r.event_id,
                arrival_ns: r.arrival_ns,
                file_rank: u32::try_from(r.file_rank)?,
                line: u32::try_from(r.line)?,
                business_date: r.business_date,
                grain: named(&model.grain, [r.g1, r.g2, r.g3, r.g4]),
                attributes: named(&model.attributes, [r.a1, r.a2, r.a3, r.a4]),
                measures: named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]),
            })
        })
    })
}

/// A v2 write a model's warehouse made, replayed in its mirror (crates/spark/src/warehouse/model_mirror.rs):
/// `dates` rebuilt under `late_days` as the run of `uploads`, each whatever its input hash (the
/// warehouse wrote it), with the files the warehouse names. Returns the new snapshot's id.
pub fn mirror_write(
    lab: &Lab,
    model: &Model,
    uploads: &[NaiveDate],
    dates: Vec<NaiveDate>,
    late_days: u32,
    (files, beyond): (&str, i64),
) -> Result<i64> {
    let what = ModelWrite { uploads, affected: dates, beyond, future: 0, operation: "v2", files, force: true };
    let named = crate::lake::v2::name_runs(uploads);
    write(lab, model, what, late_days)?.snapshot.ok_or_else(|| eyre!("the warehouse's run of uploads {named} rebuilt no date"))
}

/// A reopening a model's warehouse made, replayed in its mirror: date `d` rebuilt under
/// `late_days` (the wider of its new window and the run's), keeping `window` for every later
/// build, with who decided why and the warehouse's own words for it. Returns the snapshot's id.
pub fn mirror_reopen(
    lab: &Lab,
    model: &Model,
    (d, window): (NaiveDate, u32),
    late_days: u32,
    (reason, by): (&str, &str),
    files: &str,
) -> Result<i64> {
    let what = ModelWrite { uploads: &[], affected: vec![d], beyond: 0, future: 0, operation: "reopen", files, force: true };
    write_keeping(lab, model, what, late_days, Some((d, window, reason, by)))?
        .snapshot
        .ok_or_else(|| eyre!("the reopening of {d} rebuilt nothing"))
}

/// A rebuild of named dates a model's warehouse made, replayed in its mirror: exactly the dates
/// it rewrote, under `late_days`, with the warehouse's words for it. Returns the snapshot's id.
pub fn mirror_rebuild(lab: &Lab, model: &Model, dates: Vec<NaiveDate>, late_days: u32, files: &str) -> Result<i64> {
    let what = ModelWrite { uploads: &[], affected: dates, beyond: 0, future: 0, operation: "rebuild", files, force: true };
    write(lab, model, what, late_days)?.snapshot.ok_or_else(|| eyre!("the warehouse's rebuild rewrote no date"))
}
