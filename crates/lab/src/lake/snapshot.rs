//! Snapshots: every write commits one record, in the same transaction as its data. A rollback is
//! a new snapshot; history is never rewritten.

use super::Lab;
use crate::model::recount::ModelRow;
use crate::store::{DateOutcome, GoldChunk, GoldPrefix, GoldTables, SnapshotRow, Store, Tx};
use chrono::{NaiveDate, NaiveDateTime, Utc};
use color_eyre::eyre::{Result, bail};
use std::collections::BTreeMap;

pub use crate::store::{DateAction, Operation, TriggerKind};

/// What started a write.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub upload: Option<NaiveDate>,
    pub detail: String,
}

impl Trigger {
    pub fn upload(kind: TriggerKind, upload: NaiveDate) -> Self {
        Trigger { kind, upload: Some(upload), detail: format!("upload {upload}") }
    }
    pub fn manual(dates: &[NaiveDate]) -> Self {
        let list: Vec<String> = dates.iter().map(|d| d.to_string()).collect();
        Trigger { kind: TriggerKind::Manual, upload: None, detail: format!("rebuild of {}", list.join(", ")) }
    }
    /// The trigger of a run that took in corrected file versions (`NAME vN`), named after it.
    pub fn with_corrected(mut self, corrected: &[impl AsRef<str>]) -> Self {
        if !corrected.is_empty() {
            let names: Vec<&str> = corrected.iter().map(AsRef::as_ref).collect();
            self.detail = format!("{} (corrected: {})", self.detail, names.join(", "));
        }
        self
    }
    pub fn rollback(target: i64) -> Self {
        Trigger { kind: TriggerKind::Rollback, upload: None, detail: format!("rollback to snapshot {target}") }
    }
}

/// The contract's gold fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fingerprint {
    pub rows: i64,
    pub md5: String,
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "gold.daily_store_sales: {} rows, md5 {}", crate::money::format_count(self.rows), self.md5)
    }
}

impl From<crate::store::FingerprintRow> for Fingerprint {
    fn from(r: crate::store::FingerprintRow) -> Self {
        Fingerprint { rows: r.rows, md5: r.md5 }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SnapshotRecord {
    pub snapshot_id: i64,
    pub parent_id: Option<i64>,
    pub operation: Operation,
    pub trigger: Trigger,
    pub late_days: u32,
    pub dates_rewritten: i64,
    pub dates_skipped: i64,
    /// Rows of the versions this snapshot made no longer current (kept, as history).
    pub rows_replaced: i64,
    pub rows_added: i64,
    pub beyond_window_rows: i64,
    pub fingerprint: Fingerprint,
    pub code_version: String,
    pub created_at: NaiveDateTime,
}

impl SnapshotRecord {
    fn to_row(&self) -> SnapshotRow {
        SnapshotRow {
            snapshot_id: self.snapshot_id,
            parent_id: self.parent_id,
            operation: self.operation,
            trigger_kind: self.trigger.kind,
            trigger_upload: self.trigger.upload,
            trigger_detail: self.trigger.detail.clone(),
            late_days: self.late_days.into(),
            dates_rewritten: self.dates_rewritten,
            dates_skipped: self.dates_skipped,
            rows_replaced: self.rows_replaced,
            rows_added: self.rows_added,
            beyond_window_rows: self.beyond_window_rows,
            gold_rows: self.fingerprint.rows,
            gold_md5: self.fingerprint.md5.clone(),
            code_version: self.code_version.clone(),
            created_at: self.created_at,
        }
    }
}

impl From<SnapshotRow> for SnapshotRecord {
    fn from(r: SnapshotRow) -> Self {
        SnapshotRecord {
            snapshot_id: r.snapshot_id,
            parent_id: r.parent_id,
            operation: r.operation,
            trigger: Trigger { kind: r.trigger_kind, upload: r.trigger_upload, detail: r.trigger_detail },
            late_days: u32::try_from(r.late_days).unwrap_or(0),
            dates_rewritten: r.dates_rewritten,
            dates_skipped: r.dates_skipped,
            rows_replaced: r.rows_replaced,
            rows_added: r.rows_added,
            beyond_window_rows: r.beyond_window_rows,
            fingerprint: Fingerprint { rows: r.gold_rows, md5: r.gold_md5 },
            code_version: r.code_version,
            created_at: r.created_at,
        }
    }
}

/// Every snapshot record up to `up_to`, oldest first.
pub fn records(lab: &Lab, up_to: i64) -> Result<Vec<SnapshotRecord>> {
    Ok(lab.store().snapshots(up_to)?.into_iter().map(SnapshotRecord::from).collect())
}

/// The contract's fingerprint of gold now, hashed from gold's rows a slice of dates at a time.
pub fn fingerprint(lab: &Lab) -> Result<Fingerprint> {
    hash_chunks(|f| lab.store().gold_chunks(None, f))
}

/// Gold's fingerprint now, and as the newest snapshot recorded it (None: no snapshot yet): the
/// consistency promise compares them. Both read all of gold, and neither depends on a date, so a
/// reader, whose lab does not change under it, keeps the pair for every date it shows.
pub fn gold_and_recorded(lab: &Lab) -> Result<(Fingerprint, Option<Fingerprint>)> {
    if !lab.is_writer()
        && let Some(pair) = lab.gold_pair.borrow().clone()
    {
        return Ok(pair);
    }
    let now = fingerprint(lab)?;
    let recorded = head(lab)?.map(|h| fingerprint_as_of(lab, h)).transpose()?;
    if !lab.is_writer() {
        lab.gold_pair.replace(Some((now.clone(), recorded.clone())));
    }
    Ok((now, recorded))
}

/// Gold's fingerprint as it stood at `snapshot_id`, read the same way.
pub fn fingerprint_as_of(lab: &Lab, snapshot_id: i64) -> Result<Fingerprint> {
    hash_chunks(|f| lab.store().gold_chunks(Some(snapshot_id), f))
}

/// The contract's fingerprint of the chunks `read` gives, in date order, hashed as they come, so
/// only one slice of gold is held at a time.
fn hash_chunks(read: impl FnOnce(&mut dyn FnMut(GoldChunk)) -> Result<()>) -> Result<Fingerprint> {
    let mut h = TextHash::default();
    read(&mut |c: GoldChunk| {
        h.add(c.rows, &c.text);
    })?;
    Ok(h.finish())
}

/// THE rule for gold's fingerprint text: each date's text (its rows joined by newlines) after the
/// last, joined by a newline; a date without rows adds nothing. MD5 of it, and gold's rows.
#[derive(Default)]
struct TextHash {
    rows: i64,
    md5: md5::Md5,
    started: bool,
}

impl TextHash {
    /// Adds one date's text; false when the date has no rows (nothing added).
    fn add(&mut self, rows: i64, text: &str) -> bool {
        use md5::Digest;
        if rows == 0 {
            return false;
        }
        if self.started {
            self.md5.update(b"\n");
        }
        self.started = true;
        self.md5.update(text.as_bytes());
        self.rows += rows;
        true
    }

    fn finish(self) -> Fingerprint {
        use md5::Digest;
        Fingerprint { rows: self.rows, md5: crate::store::hex(&self.md5.finalize()) }
    }
}

/// What a write put into gold: the version of `dates` (sorted) that snapshot `snapshot_id` wrote.
pub struct Written<'a> {
    pub snapshot_id: i64,
    pub dates: &'a [NaiveDate],
    /// The new text of `dates` (a chunk per date with rows), when the write has it from its gold
    /// inserts; None: read from gold (`version_text`) if this process holds gold's text.
    pub text: Option<Vec<GoldChunk>>,
}

/// Gold's text as the fingerprint hashes it, one chunk (rows, text) per date with rows, from date
/// `from` on (None: every date). A command that writes many snapshots keeps it in its `Lab`
/// between writes, so a write reads only its own dates' text; a new process reads only the text
/// it hashes. It is taken out of the lab for a write and put back only by that write's COMMIT: a
/// failed write leaves no cache behind.
#[derive(Debug, Clone, Default)]
pub struct GoldText {
    from: Option<NaiveDate>,
    chunks: BTreeMap<NaiveDate, (i64, String)>,
    /// The fingerprint of all of gold's text, once hashed.
    fingerprint: Option<Fingerprint>,
}

impl GoldText {
    fn of(from: Option<NaiveDate>, chunks: Vec<GoldChunk>) -> GoldText {
        GoldText { from, chunks: chunks.into_iter().map(|c| (c.business_date, (c.rows, c.text))).collect(), fingerprint: None }
    }

    /// Whether it holds every date from `from` on.
    fn covers(&self, from: Option<NaiveDate>) -> bool {
        match (self.from, from) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(held), Some(needed)) => held <= needed,
        }
    }

    /// Replaces the chunks of the dates a write rewrote (`dates`) with their new text (`new`: a
    /// date it emptied has none). True when some date's text changed.
    fn rewrite(&mut self, dates: &[NaiveDate], new: Vec<GoldChunk>) -> bool {
        let old: BTreeMap<NaiveDate, (i64, String)> = dates.iter().filter_map(|d| self.chunks.remove(d).map(|c| (*d, c))).collect();
        for c in new {
            self.chunks.insert(c.business_date, (c.rows, c.text));
        }
        let new = dates.iter().filter_map(|d| self.chunks.get(d).map(|c| (*d, c)));
        !old.iter().map(|(d, c)| (*d, c)).eq(new)
    }
}

/// The fingerprint of gold after a write that rewrote `changed` (None: nothing), seen inside the
/// write's transaction. With nothing rewritten it is the one this process last hashed, or else
/// the newest record's (every write of gold records one). A write hashes gold's text only from its
/// first date on: it resumes from the state recorded at the end of the date before
/// (audit.gold_prefix), and records its own states for the next write. A daily run rewrites the
/// newest dates, so it reads and hashes a few days of text, not all of gold. A process that holds
/// gold's text reads only the text of the dates a write rewrote; when that text is the text they
/// had (a retry's re-sent baskets, a forced rebuild) it hashes nothing: the fingerprint is the one
/// it hashed last, and the states that held still hold. Without a state to resume from, gold is
/// hashed from its first date.
pub fn fingerprint_after<'c>(lab: &'c Lab, tx: &mut Tx<'c>, changed: Option<Written>) -> Result<Fingerprint> {
    let Some(written) = changed.filter(|w| !w.dates.is_empty()) else {
        if let Some(fp) = lab.gold_text.borrow().as_ref().and_then(|t| t.fingerprint.clone()) {
            return Ok(fp);
        }
        if let Some(fp) = tx.store().latest_recorded_fingerprint()? {
            return Ok(fp.into());
        }
        return Ok(hash_text(None, &gold_text_from(tx.store(), None)?).0);
    };
    let slot = &lab.gold_text;
    // Held text is brought up to date first: a write that left its dates' text as it was leaves
    // the fingerprint and the states as they were.
    let mut cached = slot.borrow_mut().take().filter(|t| t.covers(written.dates.first().copied()));
    let changed = match cached.as_mut() {
        Some(text) => {
            let new = match written.text {
                Some(new) => new,
                None => tx.version_text(written.snapshot_id, written.dates)?,
            };
            text.rewrite(written.dates, new)
        }
        None => true,
    };
    if !changed && let Some(fp) = cached.as_ref().and_then(|t| t.fingerprint.clone()) {
        tx.carry_gold_prefix(written.snapshot_id, written.dates[0])?;
        tx.on_commit(move || {
            slot.replace(cached);
        });
        return Ok(fp);
    }
    let base = tx.store().prefix_before(GoldTables::Retail, written.dates[0])?.and_then(Resume::of);
    let from = base.as_ref().and_then(|b| b.business_date.succ_opt());
    let text = match cached.filter(|t| t.covers(from)) {
        Some(text) => text,
        None => gold_text_from(tx.store(), from)?,
    };
    let (fp, states) = hash_text(base, &text);
    let text = GoldText { fingerprint: Some(fp.clone()), ..text };
    tx.step("hashing gold's text from the write's first date")?;
    // Hashed from gold's first date (no state held), the states start before the write's dates.
    let first = states.first().map_or(written.dates[0], |s| s.business_date.min(written.dates[0]));
    tx.keep_gold_prefix(GoldTables::Retail, written.snapshot_id, first, &states)?;
    tx.on_commit(move || {
        slot.replace(Some(text));
    });
    Ok(fp)
}

/// A model's gold fingerprint after write `snapshot_id` of `dates` (sorted), inside its
/// transaction, by retail's rule: hashed from the state kept at the end of the last date before
/// its first (model.gold_prefix) on, with `gold_from` giving gold's rows from a date on (None:
/// every date). It keeps the states it reaches for the next write, so a daily write hashes its
/// few newest dates, not all of gold.
pub fn model_fingerprint_after(
    tx: &mut Tx<'_>,
    snapshot_id: i64,
    dates: &[NaiveDate],
    gold_from: impl FnOnce(Option<NaiveDate>) -> Result<Vec<ModelRow>>,
) -> Result<Fingerprint> {
    // A write of no date (a rollback to gold as it is) hashes gold whole.
    let first = dates.first().copied().unwrap_or(NaiveDate::MIN);
    let base = tx.store().prefix_before(GoldTables::Model, first)?.and_then(Resume::of);
    let from = base.as_ref().and_then(|b| b.business_date.succ_opt());
    let text = GoldText::of(from, model_chunks(&gold_from(from)?));
    let (fp, states) = hash_text(base, &text);
    tx.step("hashing gold's text from the write's first date")?;
    let first = states.first().map_or(first, |s| s.business_date.min(first));
    tx.keep_gold_prefix(GoldTables::Model, snapshot_id, first, &states)?;
    Ok(fp)
}

/// A model's gold rows as the fingerprint's text, a chunk per date, in the contract's order.
fn model_chunks(rows: &[ModelRow]) -> Vec<GoldChunk> {
    let mut chunks: Vec<GoldChunk> = Vec::new();
    for r in crate::model::recount::in_fingerprint_order(rows) {
        let line = crate::model::recount::fingerprint_text(r);
        match chunks.last_mut() {
            Some(c) if c.business_date == r.business_date => {
                c.rows += 1;
                c.text.push('\n');
                c.text.push_str(&line);
            }
            _ => chunks.push(GoldChunk { business_date: r.business_date, rows: 1, text: line }),
        }
    }
    chunks
}

/// Gold's text now, read from gold's rows from date `from` on (None: every date).
fn gold_text_from(store: &Store, from: Option<NaiveDate>) -> Result<GoldText> {
    let mut chunks = Vec::new();
    store.gold_chunks_from(None, from, |c| chunks.push(c))?;
    Ok(GoldText::of(from, chunks))
}

/// A recorded state to resume hashing from: the MD5 state at the end of `business_date`.
struct Resume {
    business_date: NaiveDate,
    rows: i64,
    md5: md5::Md5,
}

impl Resume {
    /// None for a state that does not read back (then gold is hashed from its first date).
    fn of(p: GoldPrefix) -> Option<Resume> {
        use md5::digest::common::hazmat::{SerializableState, SerializedState};
        let state = SerializedState::<md5::Md5>::try_from(p.state.as_slice()).ok()?;
        let md5 = md5::Md5::deserialize(&state).ok()?;
        Some(Resume { business_date: p.business_date, rows: p.rows, md5 })
    }
}

/// The contract's fingerprint of gold's text: the chunks after `base`'s date (all of them without
/// one), joined by newlines after what `base` hashed; with the state at the end of each chunk.
fn hash_text(base: Option<Resume>, text: &GoldText) -> (Fingerprint, Vec<GoldPrefix>) {
    use md5::digest::common::hazmat::SerializableState;
    let after = base.as_ref().map(|b| b.business_date);
    let mut h = base.map(|b| TextHash { rows: b.rows, md5: b.md5, started: true }).unwrap_or_default();
    let mut states = Vec::new();
    for (&d, (n, chunk)) in text.chunks.iter().filter(|(d, _)| Some(**d) > after) {
        if h.add(*n, chunk) {
            states.push(GoldPrefix { business_date: d, rows: h.rows, state: h.md5.serialize().to_vec() });
        }
    }
    (h.finish(), states)
}

/// The next snapshot id, and the head (the newest data snapshot).
fn ids(lab: &Lab) -> Result<(i64, Option<i64>)> {
    match lab.snapshot_ids.get() {
        Some(ids) => Ok(ids),
        None => lab.store().snapshot_ids(),
    }
}

/// The newest snapshot id (0: none yet).
pub fn latest_id(lab: &Lab) -> Result<i64> {
    Ok(ids(lab)?.0 - 1)
}

/// The newest data snapshot (skipped runs change nothing, so they are never the head).
pub fn head(lab: &Lab) -> Result<Option<i64>> {
    Ok(ids(lab)?.1)
}

/// A fresh record for the next write; the caller fills in its counts.
pub fn new_record(lab: &Lab, operation: Operation, trigger: Trigger, late_days: u32) -> Result<SnapshotRecord> {
    let (snapshot_id, parent_id) = ids(lab)?;
    Ok(SnapshotRecord {
        snapshot_id,
        parent_id,
        operation,
        trigger,
        late_days,
        dates_rewritten: 0,
        dates_skipped: 0,
        rows_replaced: 0,
        rows_added: 0,
        beyond_window_rows: 0,
        fingerprint: Fingerprint { rows: 0, md5: String::new() },
        code_version: super::code_version(),
        created_at: Utc::now().naive_utc(),
    })
}

/// Writes the record; once the write commits, the lab knows the next id and head without asking.
pub fn insert_record<'c>(lab: &'c Lab, tx: &mut Tx<'c>, r: &SnapshotRecord) -> Result<()> {
    tx.insert_snapshot(&r.to_row())?;
    // Skipped runs change nothing, so they are never a parent: the head stays.
    let next = (r.snapshot_id + 1, if r.operation == Operation::Skipped { r.parent_id } else { Some(r.snapshot_id) });
    let slot = &lab.snapshot_ids;
    tx.on_commit(move || slot.set(Some(next)));
    Ok(())
}

/// For each business date, the snapshot whose rows it held as of `snapshot_id`.
pub fn versions_as_of(lab: &Lab, snapshot_id: i64) -> Result<BTreeMap<NaiveDate, i64>> {
    Ok(lab.store().versions_as_of(Some(snapshot_id))?.into_iter().map(|v| (v.business_date, v.version)).collect())
}

/// The version of date `d` as of `snapshot_id`: the newest snapshot up to it that rewrote `d`.
pub fn version_at(lab: &Lab, d: NaiveDate, snapshot_id: i64) -> Result<Option<i64>> {
    Ok(lab.store().version_at(d, Some(snapshot_id))?.map(|v| v.version))
}

/// Fails with the way out when `snapshot_id` names no snapshot.
pub fn require(lab: &Lab, snapshot_id: i64) -> Result<()> {
    if !lab.store().snapshot_exists(snapshot_id)? {
        bail!("snapshot {snapshot_id} does not exist; `recount snapshots` lists them");
    }
    Ok(())
}

/// An error, in retail's words, unless a model lab recorded snapshot `s`: what reads or rolls
/// back to a snapshot asks first.
pub fn model_require(lab: &Lab, s: i64) -> Result<()> {
    if !lab.store().model_snapshots()?.iter().any(|r| r.snapshot_id == s) {
        bail!("snapshot {s} does not exist; `recount snapshots` lists them");
    }
    Ok(())
}

/// The dates a model lab's rollback to snapshot `target` would restore, oldest first, each with
/// the version it takes (None: the target had not built it, so it is emptied): every date whose
/// version then and now differ in input hash or rows (a restored or re-skipped version keeps its
/// input's hash, as v2's skip does). None at all: the target's versions are current.
pub fn model_rollback_changes(lab: &Lab, target: i64) -> Result<Vec<(NaiveDate, Option<i64>)>> {
    model_require(lab, target)?;
    let store = lab.store();
    let dates: Vec<NaiveDate> = store.model_versions_at(None)?.into_iter().map(|v| v.business_date).collect();
    let (then, now) = (store.model_current_versions(&dates, Some(target))?, store.model_current_versions(&dates, None)?);
    let of = |vs: &[crate::store::model::ModelCurrentVersion], d: NaiveDate| vs.iter().find(|v| v.business_date == d).cloned();
    let key = |v: Option<crate::store::model::ModelCurrentVersion>| v.map_or((String::new(), 0), |v| (v.input_hash, v.gold_rows));
    let mut changes: Vec<(NaiveDate, Option<i64>)> =
        dates.into_iter().filter(|&d| key(of(&then, d)) != key(of(&now, d))).map(|d| (d, of(&then, d).map(|v| v.snapshot_id))).collect();
    changes.sort();
    Ok(changes)
}

/// Rolls a model lab's gold and silver back to snapshot `target`, as a new snapshot, as
/// `rollback` does retail's: every date whose version differs takes the target's. `gold_from`
/// reads gold from a date on, in the model's columns (for the fingerprint).
pub fn model_rollback(lab: &Lab, target: i64, gold_from: impl FnOnce(Option<NaiveDate>) -> Result<Vec<ModelRow>>) -> Result<i64> {
    let store = lab.store();
    let changes = model_rollback_changes(lab, target)?;
    let dates: Vec<NaiveDate> = changes.iter().map(|c| c.0).collect();
    let id = store.model_next_snapshot()?;
    let mut tx = Tx::begin(store, super::fail_after_from_env())?;
    for &(d, version) in &changes {
        tx.model_restore(id, version, d)?;
    }
    let Fingerprint { rows, md5 } = model_fingerprint_after(&mut tx, id, &dates, gold_from)?;
    let files = format!("to snapshot {target}");
    let record = crate::store::model::NewSnapshot {
        snapshot_id: id,
        operation: "rollback",
        upload: None,
        late_days: 0,
        files: &files,
        dates_rewritten: dates.len(),
        beyond_window: 0,
        gold_rows: rows,
        gold_md5: &md5,
    };
    tx.model_snapshot(&record)?;
    tx.commit().map_err(|e| e.wrap_err("rollback: nothing was written (the transaction rolled back)"))?;
    Ok(id)
}

/// Restores silver and gold as of `target`, as a new snapshot. Only dates whose version differs
/// are rewritten; every other date's rows stay untouched.
pub fn rollback(lab: &Lab, target: i64, fail_after: Option<usize>) -> Result<SnapshotRecord> {
    let (now, changes) = changes_back_to(lab, target)?;
    let mut record = new_record(lab, Operation::Rollback, Trigger::rollback(target), 0)?;
    let mut tx = Tx::begin(lab.store(), fail_after)?;
    let mut outcomes = Vec::new();
    for (d, version) in &changes {
        outcomes.push(restore_date(&mut tx, record.snapshot_id, *d, now[d], *version)?);
    }
    record.rows_replaced = outcomes.iter().map(|o| o.silver_replaced + o.gold_replaced).sum();
    record.rows_added = outcomes.iter().map(|o| o.silver_added + o.gold_added).sum();
    record.dates_rewritten = outcomes.len() as i64;
    // Gold now (a view) shows the restored versions once the dates are recorded.
    tx.append_snapshot_dates(record.snapshot_id, &outcomes)?;
    let dates: Vec<NaiveDate> = changes.iter().map(|c| c.0).collect();
    let written = (!dates.is_empty()).then_some(Written { snapshot_id: record.snapshot_id, dates: &dates, text: None });
    record.fingerprint = fingerprint_after(lab, &mut tx, written)?;
    insert_record(lab, &mut tx, &record)?;
    tx.commit()?;
    Ok(record)
}

/// The business dates a rollback to `target` would rewrite, oldest first: none when the lab's
/// silver and gold are already as they were then (a second rollback to the same snapshot).
pub fn rollback_changes(lab: &Lab, target: i64) -> Result<Vec<NaiveDate>> {
    Ok(changes_back_to(lab, target)?.1.into_iter().map(|c| c.0).collect())
}

/// Each date's current version, and the dates whose version at `target` differs (None: the date
/// had no version then).
#[allow(clippy::type_complexity)]
fn changes_back_to(lab: &Lab, target: i64) -> Result<(BTreeMap<NaiveDate, i64>, Vec<(NaiveDate, Option<i64>)>)> {
    require(lab, target)?;
    let now = versions_as_of(lab, head(lab)?.unwrap_or(0))?;
    let then = versions_as_of(lab, target)?;
    let mut changes = Vec::new();
    for (d, v) in &now {
        match then.get(d) {
            Some(t) if t == v => {}
            // A date with no version then whose version now holds nothing (an earlier rollback
            // emptied it) is already as it was.
            None if lab.store().rows_of_version(*v, *d)?.is_empty() => {}
            t => changes.push((*d, t.copied())),
        }
    }
    Ok((now, changes))
}

/// Snapshot `snapshot_id` makes `version` of `d` current again (a copy of its rows), replacing
/// `current`; with no version, the date is emptied.
fn restore_date(tx: &mut Tx, snapshot_id: i64, d: NaiveDate, current: i64, version: Option<i64>) -> Result<DateOutcome> {
    let replaced = tx.store().rows_of_version(current, d)?;
    let mut outcome = DateOutcome {
        business_date: d,
        action: DateAction::Restore,
        input_hash: String::new(),
        input_rows: 0,
        silver_replaced: replaced.silver_rows,
        silver_added: 0,
        gold_replaced: replaced.gold_rows,
        gold_added: 0,
    };
    if let Some(v) = version {
        outcome.silver_added = tx.restore_silver(snapshot_id, v, d)?;
        outcome.gold_added = tx.restore_gold(snapshot_id, v, d)?;
        tx.restore_window(snapshot_id, v, d)?;
        if let Some(inputs) = tx.store().version_inputs(v, d)? {
            outcome.input_hash = inputs.input_hash;
            outcome.input_rows = inputs.input_rows;
        }
    }
    Ok(outcome)
}
