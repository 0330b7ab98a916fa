//! v2, the idempotent job: per run, the affected business dates whose inputs changed get a new
//! version in silver and gold, in ONE transaction with the run's snapshot record. The new version
//! goes into `silver.versions` and `audit.gold_history`; the views `silver.baskets` and
//! `gold.daily_store_sales` show each date's newest version, so the version it replaces stays as
//! history and nothing is deleted.

use super::Lab;
use super::snapshot::{self, Operation, SnapshotRecord, Trigger, TriggerKind};
use crate::rules::LatenessWindow;
use crate::store::{DateAction, DateOutcome, GoldChunk, Rewrite, Store, Tx, UploadCell, hex};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use md5::Digest;
use std::collections::BTreeMap;

pub use crate::rules::DEFAULT_LATE_DAYS;

#[derive(Debug, Clone, Copy)]
pub struct V2Options {
    pub late_days: u32,
    /// Rewrite even dates whose inputs are unchanged (the explorer's crash demo needs a write).
    pub force: bool,
    pub fail_after: Option<usize>,
}

impl Default for V2Options {
    fn default() -> Self {
        V2Options { late_days: DEFAULT_LATE_DAYS, force: false, fail_after: super::fail_after_from_env() }
    }
}

impl V2Options {
    fn window(&self) -> LatenessWindow {
        LatenessWindow::new(self.late_days)
    }
}

/// Rows of the triggering upload that never enter silver, by business date and currency.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BeyondWindow {
    pub business_date: NaiveDate,
    pub currency: String,
    pub rows: i64,
    pub revenue_minor: i64,
    /// Dated after the upload's next day (`rules::future_dated`): a till's clock, not a late row.
    pub future_dated: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    pub snapshot: SnapshotRecord,
    pub dates: Vec<DateOutcome>,
    pub beyond_window: Vec<BeyondWindow>,
    /// Wall time per phase in milliseconds, for `recount bench` (not part of any record).
    #[serde(skip)]
    pub phases: Vec<(String, f64)>,
}

impl RunReport {
    pub fn render(&self) -> String {
        let s = &self.snapshot;
        let mut out = format!("v2 {} -> snapshot {} ({})\n", s.trigger.detail, s.snapshot_id, s.operation.as_str());
        for d in &self.dates {
            match d.action {
                DateAction::Skip => out.push_str(&format!("  {}  skipped    inputs unchanged ({} rows)\n", d.business_date, d.input_rows)),
                action => out.push_str(&format!(
                    "  {}  {:<9}  silver -{} +{}, gold -{} +{}\n",
                    d.business_date,
                    action.as_str(),
                    d.silver_replaced,
                    d.silver_added,
                    d.gold_replaced,
                    d.gold_added
                )),
            }
        }
        if self.dates.is_empty() {
            out.push_str("  no business dates inside the window\n");
        }
        for b in &self.beyond_window {
            out.push_str(&format!(
                "  {}: {} event row(s) of business date {}, {} (listed by `recount late {}`)\n",
                crate::rules::outside_window_word(b.future_dated),
                b.rows,
                b.business_date,
                crate::money::format_major(b.revenue_minor, &b.currency),
                b.business_date
            ));
        }
        out.push_str(&format!("  {}\n", s.fingerprint));
        out
    }
}

/// One v2 run for one upload: every business date of the upload inside the window.
pub fn run_upload(lab: &Lab, upload: NaiveDate, trigger: TriggerKind, opts: V2Options) -> Result<RunReport> {
    let started = std::time::Instant::now();
    let cells = lab.store().upload_cells(upload, upload, opts.window().late_days)?.remove(&upload).unwrap_or_default();
    let (dates, beyond) = affected_dates(upload, cells, opts.window(), &mut |first, last| lab.store().kept_windows(first, last))?;
    // A corrected upload's record names its corrected files and their versions.
    let corrected: Vec<String> = lab
        .store()
        .corrected_files(upload)?
        .into_iter()
        .map(|f| format!("{} v{}", crate::raw::name_in_upload(&f.file), f.version))
        .collect();
    let trigger = Trigger::upload(trigger, upload).with_corrected(&corrected);
    let found = started.elapsed();
    let mut report = rewrite(lab, &dates, trigger, beyond, opts)?;
    report.phases.insert(0, ("find affected dates".into(), found.as_secs_f64() * 1e3));
    Ok(report)
}

/// A range of uploads in one pass: the union of the dates their per-upload runs would rebuild,
/// rebuilt in one transaction and recorded as one snapshot ("backfill of uploads A..B") that names
/// every upload. A date's input hash does not depend on the run that computes it, so each is
/// the hash the per-upload runs would have recorded last, and a later run of one upload skips
/// what did not change. Returns the report and, per upload, its rows beyond the window (the alert
/// names the upload that brought them).
pub fn run_range(lab: &Lab, uploads: &[NaiveDate], opts: V2Options) -> Result<(RunReport, Vec<(NaiveDate, BeyondWindow)>)> {
    let started = std::time::Instant::now();
    let mut dates = Vec::new();
    let mut met = Vec::new();
    // What every upload holds, in one query over the range.
    let mut cells = match (uploads.iter().min(), uploads.iter().max()) {
        (Some(&first), Some(&last)) => lab.store().upload_cells(first, last, opts.window().late_days)?,
        _ => BTreeMap::new(),
    };
    // The kept windows (a reopening's) of every date, read once if any upload needs them.
    let mut every_kept: Option<BTreeMap<NaiveDate, u32>> = None;
    let mut kept = |first: NaiveDate, last: NaiveDate| -> Result<BTreeMap<NaiveDate, u32>> {
        let all = match &every_kept {
            Some(all) => all,
            None => every_kept.insert(lab.store().kept_windows(NaiveDate::MIN, NaiveDate::MAX)?),
        };
        Ok(all.range(first..=last).map(|(d, k)| (*d, *k)).collect())
    };
    for &u in uploads {
        let (d, beyond) = affected_dates(u, cells.remove(&u).unwrap_or_default(), opts.window(), &mut kept)?;
        dates.extend(d);
        met.extend(beyond.into_iter().map(|b| (u, b)));
    }
    dates.sort();
    dates.dedup();
    let trigger = Trigger { kind: TriggerKind::Backfill, upload: None, detail: format!("backfill of uploads {}", name_runs(uploads)) };
    let found = started.elapsed();
    let mut report = rewrite(lab, &dates, trigger, met.iter().map(|(_, b)| b.clone()).collect(), opts)?;
    report.phases.insert(0, ("find affected dates".into(), found.as_secs_f64() * 1e3));
    Ok((report, met))
}

/// Dates as runs of consecutive days, oldest first: "2026-10-12..2026-10-20, 2026-10-22".
pub fn name_runs(dates: &[NaiveDate]) -> String {
    let mut sorted = dates.to_vec();
    sorted.sort();
    sorted.dedup();
    let mut runs: Vec<(NaiveDate, NaiveDate)> = Vec::new();
    for d in sorted {
        match runs.last_mut() {
            Some((_, last)) if last.succ_opt() == Some(d) => *last = d,
            _ => runs.push((d, d)),
        }
    }
    runs.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a}..{b}") }).collect::<Vec<_>>().join(", ")
}

/// The dates a run of `upload` rebuilds, and its rows beyond the window by date and currency,
/// from what the upload's files hold (`Store::upload_cells`) and the windows reopened dates keep
/// (`kept_windows(first, last)`, as `Store::kept_windows`).
fn affected_dates(
    upload: NaiveDate,
    files: Vec<UploadCell>,
    window: LatenessWindow,
    kept_windows: &mut dyn FnMut(NaiveDate, NaiveDate) -> Result<BTreeMap<NaiveDate, u32>>,
) -> Result<(Vec<NaiveDate>, Vec<BeyondWindow>)> {
    // The upload's files summed per (business date, currency), in order.
    let mut cells: BTreeMap<(NaiveDate, String), (i64, i64, bool, bool)> = BTreeMap::new();
    // Dates of superseded versions are affected too (a correction may withdraw a date's rows);
    // only current versions' rows count as beyond the window.
    let oldest = window.oldest_affected(upload);
    for c in files {
        let sum = cells.entry((c.business_date, c.currency)).or_insert((0, 0, c.business_date >= oldest, false));
        if c.current {
            sum.0 += c.rows;
            sum.1 = sum.1.checked_add(c.revenue_minor).ok_or_else(|| eyre!("upload {upload}: revenue overflows 64 bits"))?;
            sum.3 |= c.beyond;
        }
    }
    // A reopened date keeps its wider window: the upload's rows of it inside that window are
    // affected, not beyond.
    let outside: Vec<NaiveDate> = cells.iter().filter(|(_, c)| !c.2).map(|((d, _), _)| *d).collect();
    if let (Some(&first), Some(&last)) = (outside.iter().min(), outside.iter().max()) {
        let kept = kept_windows(first, last)?;
        for ((d, _), c) in cells.iter_mut() {
            if kept.get(d).is_some_and(|&k| LatenessWindow::new(k).contains(upload, *d)) {
                (c.2, c.3) = (true, false);
            }
        }
    }
    let (mut dates, mut beyond): (Vec<NaiveDate>, Vec<BeyondWindow>) = (Vec::new(), Vec::new());
    for ((business_date, currency), (rows, revenue_minor, affected, is_beyond)) in cells {
        if affected && dates.last() != Some(&business_date) {
            dates.push(business_date);
        }
        if is_beyond {
            let future_dated = crate::rules::future_dated(upload, business_date);
            beyond.push(BeyondWindow { business_date, currency, rows, revenue_minor, future_dated });
        }
    }
    Ok((dates, beyond))
}

/// The v2 run the landed store corrections need (None when none is pending): every business date
/// holding a corrected store's events under its old or its new row, rebuilt under the window rule
/// in one transaction, recorded as one snapshot that names each store and what changed.
pub fn run_store_changes(lab: &Lab, opts: V2Options) -> Result<Option<RunReport>> {
    let pending = lab.store().pending_store_changes()?;
    if pending.is_empty() {
        return Ok(None);
    }
    let dates = lab.store().store_change_dates()?;
    let detail: Vec<String> = pending
        .iter()
        .map(|c| {
            crate::raw::stores::describe_change(
                &c.store_id,
                [&c.old_country, &c.old_timezone, &c.old_currency],
                [&c.new_country, &c.new_timezone, &c.new_currency],
            )
        })
        .collect();
    let trigger = Trigger { kind: TriggerKind::Store, upload: None, detail: detail.join("; ") };
    rewrite(lab, &dates, trigger, Vec::new(), opts).map(Some)
}

/// A manual rebuild of named business dates, under the same window rule.
pub fn rebuild_dates(lab: &Lab, dates: &[NaiveDate], opts: V2Options) -> Result<RunReport> {
    let mut dates = dates.to_vec();
    dates.sort();
    dates.dedup();
    rewrite(lab, &dates, Trigger::manual(&dates), Vec::new(), opts)
}

/// A reopening's write (`lake::reopen`): `d` rebuilt under the wider window `late_days`, which
/// the date keeps for every later write.
pub fn reopen_date(lab: &Lab, d: NaiveDate, late_days: u32, trigger: Trigger, opts: V2Options) -> Result<RunReport> {
    rewrite_with(lab, &[d], trigger, Vec::new(), opts, Some((d, late_days)))
}

/// The input hash of each of `dates`: the exact rows that feed it under the window rule (their
/// count and the wrapping sum of their row digests, kept per file in `bronze.cells`), the window
/// itself and the code version.
pub fn input_hashes(store: &Store, late_days: u32, dates: &[NaiveDate]) -> Result<Vec<(NaiveDate, i64, String)>> {
    input_hashes_at(store, late_days, dates, None)
}

/// `input_hashes` over the raw zone as it was when snapshot `as_of` was recorded (None: now).
pub fn input_hashes_at(store: &Store, late_days: u32, dates: &[NaiveDate], as_of: Option<i64>) -> Result<Vec<(NaiveDate, i64, String)>> {
    let (Some(&first), Some(&last)) = (dates.iter().min(), dates.iter().max()) else {
        return Ok(Vec::new());
    };
    let mut sums: BTreeMap<NaiveDate, (i64, u64)> = dates.iter().map(|&d| (d, (0, 0))).collect();
    let add = |c: crate::store::InputCell| {
        if let Some(s) = sums.get_mut(&c.business_date) {
            s.0 += c.rows;
            s.1 = s.1.wrapping_add(c.digest as u64);
        }
    };
    match as_of {
        None => store.input_cells(late_days, first, last, add)?,
        Some(s) => store.input_cells_as_of(s, late_days, first, last, add)?,
    }
    let version = super::code_version();
    Ok(sums
        .into_iter()
        .map(|(d, (n, digest))| {
            let text = format!("{version}|late_days={late_days}|{d}|{n}|{digest:016x}");
            (d, n, hex(&md5::Md5::digest(text.as_bytes())))
        })
        .collect())
}

/// What a rebuild of one date would do, worked out without writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildPreview {
    pub business_date: NaiveDate,
    /// The window the date was last built with (the default when never built): the rebuild uses it.
    pub window: LatenessWindow,
    /// Landed rows that feed the date under that window.
    pub input_rows: i64,
    pub silver_rows: i64,
    pub gold_rows: i64,
    /// The inputs are those the current version was built from: v2 would skip.
    pub unchanged: bool,
}

pub fn preview_rebuild(lab: &Lab, d: NaiveDate) -> Result<RebuildPreview> {
    let current = lab.store().version_at(d, None)?;
    let window = LatenessWindow::as_built(current.as_ref().and_then(|c| c.late_days));
    let (_, input_rows, hash) = input_hashes(lab.store(), window.late_days, &[d])?.into_iter().next().unwrap_or((d, 0, String::new()));
    let held = lab.store().rows_held(d)?;
    Ok(RebuildPreview {
        business_date: d,
        window,
        input_rows,
        silver_rows: held.silver_rows,
        gold_rows: held.gold_rows,
        unchanged: current.is_some_and(|c| c.input_hash == hash),
    })
}

/// What rebuilding date `d` of a model lab with window `late_days` would do, as `preview_rebuild`.
pub fn preview_model_rebuild(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<RebuildPreview> {
    let store = lab.store();
    let input = store.model_input_hashes(&[d], late_days)?.into_iter().next();
    let current = store.model_current_versions(&[d], None)?.into_iter().next();
    Ok(crate::lake::v2::RebuildPreview {
        business_date: d,
        // A reopened date is rebuilt with the wider window it keeps.
        window: crate::rules::LatenessWindow::with_kept(late_days, store.model_kept_windows(None)?.get(&d).copied()),
        input_rows: input.as_ref().map_or(0, |i| i.rows),
        silver_rows: store.model_silver_rows(d)?,
        gold_rows: current.as_ref().map_or(0, |c| c.gold_rows),
        unchanged: matches!((&input, &current), (Some(i), Some(c)) if i.input_hash == c.input_hash),
    })
}

impl RebuildPreview {
    pub fn text(&self) -> String {
        let verdict = if self.unchanged {
            "its inputs are unchanged, so v2 will record a skipped run and rewrite nothing"
        } else {
            "its inputs changed, so v2 will write a new version of it in one transaction"
        };
        format!(
            "Rebuild {} with v2 (window {} days)?\n\n{} landed rows feed it.\nIt holds {} silver rows and {} gold rows now.\n{verdict}.",
            self.business_date, self.window.late_days, self.input_rows, self.silver_rows, self.gold_rows
        )
    }
}

/// What each date gets: its new input hash compared with the one its current version was built
/// from; unchanged dates are skipped unless forced.
fn plan(store: &Store, dates: &[NaiveDate], opts: V2Options, current: &Versions) -> Result<Vec<DateOutcome>> {
    let hashes = input_hashes(store, opts.late_days, dates)?;
    Ok(hashes
        .into_iter()
        .map(|(d, rows, hash)| {
            let cur = current.get(&d);
            let same = cur.is_some_and(|c| c.input_hash == hash);
            let action = if same && !opts.force { DateAction::Skip } else { DateAction::Overwrite };
            let (silver_replaced, gold_replaced) = match (action, cur) {
                (DateAction::Overwrite, Some(c)) => (c.silver_rows, c.gold_rows),
                _ => (0, 0),
            };
            DateOutcome {
                business_date: d,
                action,
                input_hash: hash,
                input_rows: rows,
                silver_replaced,
                silver_added: 0,
                gold_replaced,
                gold_added: 0,
            }
        })
        .collect())
}

/// The version each date holds now (`Store::current_versions`).
type Versions = BTreeMap<NaiveDate, crate::store::CurrentVersion>;

/// The window each of `dates` is built with, grouped: the run's, or a kept one (a reopening's,
/// or `reopen`'s new one), which a write carries on to the date's new version. Sorted dates.
fn windows(
    dates: &[NaiveDate],
    opts: V2Options,
    reopen: Option<(NaiveDate, u32)>,
    current: &Versions,
) -> BTreeMap<(u32, bool), Vec<NaiveDate>> {
    let mut groups: BTreeMap<(u32, bool), Vec<NaiveDate>> = BTreeMap::new();
    for &d in dates {
        let kept = current.get(&d).and_then(|c| c.kept_window());
        let key = match (reopen.filter(|r| r.0 == d), kept) {
            (Some((_, wide)), _) => (wide, true),
            (None, Some(k)) => (LatenessWindow::with_kept(opts.late_days, Some(k)).late_days, true),
            (None, None) => (opts.late_days, false),
        };
        groups.entry(key).or_default().push(d);
    }
    groups
}

fn rewrite(lab: &Lab, dates: &[NaiveDate], trigger: Trigger, beyond: Vec<BeyondWindow>, opts: V2Options) -> Result<RunReport> {
    rewrite_with(lab, dates, trigger, beyond, opts, None)
}

fn rewrite_with(
    lab: &Lab,
    dates: &[NaiveDate],
    trigger: Trigger,
    beyond: Vec<BeyondWindow>,
    opts: V2Options,
    reopen: Option<(NaiveDate, u32)>,
) -> Result<RunReport> {
    let started = std::time::Instant::now();
    let current = match (dates.iter().min(), dates.iter().max()) {
        (Some(&first), Some(&last)) => lab.store().current_versions(first, last)?,
        _ => BTreeMap::new(),
    };
    let groups = windows(dates, opts, reopen, &current);
    let mut outcomes = Vec::new();
    for (&(late_days, _), ds) in &groups {
        outcomes.extend(plan(lab.store(), ds, V2Options { late_days, ..opts }, &current)?);
    }
    outcomes.sort_by_key(|o| o.business_date);
    let changed: Vec<NaiveDate> = outcomes.iter().filter(|o| o.action == DateAction::Overwrite).map(|o| o.business_date).collect();
    let operation = if changed.is_empty() { Operation::Skipped } else { Operation::Overwrite };
    let mut record = snapshot::new_record(lab, operation, trigger, opts.late_days)?;
    record.dates_rewritten = changed.len() as i64;
    record.dates_skipped = (outcomes.len() - changed.len()) as i64;
    record.beyond_window_rows = beyond.iter().map(|b| b.rows).sum();
    let compared = started.elapsed();

    // A write that runs out of DuckDB's limit rolled back whole: it runs again, from the same
    // record and outcomes, with a larger limit, up to DuckDB's share of the memory budget
    // (`Store::raise_limit`); past that, its error says to raise the budget.
    let committed = loop {
        let (mut attempt_record, mut attempt_outcomes) = (record.clone(), outcomes.clone());
        let mut write = || -> Result<Vec<(String, std::time::Duration)>> {
            let mut tx = Tx::begin(lab.store(), opts.fail_after)?;
            write_dates(lab, &mut tx, &groups, &changed, &mut attempt_record, &mut attempt_outcomes)?;
            tx.commit()
        };
        // A run of many dates is bulk work: one DuckDB thread in the lower memory limit. Two
        // threads run out of it, even with 16 dates a slice (memory is the bench's tighter target).
        let long = is_long(changed.len());
        let result = if long { lab.store().bulk(true, write) } else { write() };
        match result {
            Err(e) if crate::store::is_out_of_memory(&e) && lab.store().raise_limit(long)? => continue,
            Err(e) => return Err(e),
            Ok(c) => {
                (record, outcomes) = (attempt_record, attempt_outcomes);
                break c;
            }
        }
    };
    let mut phases = vec![("input hashes".to_string(), compared.as_secs_f64() * 1e3)];
    phases.extend(committed.into_iter().map(|(n, d)| (n, d.as_secs_f64() * 1e3)));
    Ok(RunReport { snapshot: record, dates: outcomes, beyond_window: beyond, phases })
}

/// The most dates a write rewrites on every DuckDB thread, in the session's memory limit: a
/// day's run, and a rebuild of a few dates. More are bulk work (`Store::bulk`).
const DATES_ON_EVERY_THREAD: usize = 8;

/// A write of `dates` changed dates is long: bulk work.
fn is_long(dates: usize) -> bool {
    dates > DATES_ON_EVERY_THREAD
}

/// The new versions of the `changed` dates of `groups`, their windows, snapshot dates and
/// fingerprint, and the snapshot's record, in `tx`.
fn write_dates<'c>(
    lab: &'c Lab,
    tx: &mut Tx<'c>,
    groups: &BTreeMap<(u32, bool), Vec<NaiveDate>>,
    changed: &[NaiveDate],
    record: &mut snapshot::SnapshotRecord,
    outcomes: &mut [DateOutcome],
) -> Result<()> {
    // A long range is written a slice of dates at a time, in the same transaction: each slice's
    // window over its copies fits DuckDB's memory limit, however long the lab's history.
    let key_collisions = lab.has_key_collisions()?;
    let long = is_long(changed.len());
    // The new text of the written dates, from a short write's gold inserts, when this process
    // holds gold's text to bring up to date (None: a long write, or no text held).
    let with_text = !long && lab.gold_text.borrow().is_some();
    let mut text = with_text.then(Vec::new);
    for (&(late_days, kept), ds) in groups {
        let changed: Vec<NaiveDate> = ds.iter().copied().filter(|d| changed.binary_search(d).is_ok()).collect();
        for slice in changed.chunks(DATES_PER_INSERT) {
            let (Some(&first), Some(&last)) = (slice.first(), slice.last()) else { continue };
            let date_list = crate::store::date_list(slice);
            let w = Rewrite {
                snapshot_id: record.snapshot_id,
                late_days,
                first,
                last,
                dates: &date_list,
                gaps: (last - first).num_days() + 1 != slice.len() as i64,
                key_collisions,
                long,
                text: with_text,
            };
            let slice_text = write_versions(tx, &w, slice, outcomes)?;
            if let (Some(all), Some(more)) = (text.as_mut(), slice_text) {
                all.extend(more);
            }
            if kept {
                tx.keep_windows(record.snapshot_id, late_days, &date_list)?;
            }
        }
    }
    record.rows_replaced = outcomes.iter().map(|o| o.silver_replaced + o.gold_replaced).sum();
    record.rows_added = outcomes.iter().map(|o| o.silver_added + o.gold_added).sum();
    // Silver and gold now (views) show the new versions once the dates are recorded.
    tx.append_snapshot_dates(record.snapshot_id, outcomes)?;
    if record.trigger.kind == TriggerKind::Store {
        tx.mark_store_changes_applied(record.snapshot_id)?;
    }
    let written = (!changed.is_empty()).then_some(snapshot::Written { snapshot_id: record.snapshot_id, dates: changed, text });
    record.fingerprint = snapshot::fingerprint_after(lab, tx, written)?;
    tx.step("fingerprint")?;
    snapshot::insert_record(lab, tx, record)
}

/// The most dates one silver and gold insert rewrites. On one thread, a slice of 32 dates of the
/// full world fits a 24 MB memory limit and one of 64 did not, so bulk work's 32 MB leaves room
/// for the slice.
const DATES_PER_INSERT: usize = 32;

/// The new silver and gold versions of the dates of `w`, and the rows each holds. Returns the
/// new text of the dates a short write wrote (`Tx::insert_versions`).
fn write_versions(tx: &mut Tx, w: &Rewrite, slice: &[NaiveDate], outcomes: &mut [DateOutcome]) -> Result<Option<Vec<GoldChunk>>> {
    let (counts, text) = tx.insert_versions(w)?;
    for o in outcomes.iter_mut().filter(|o| o.action == DateAction::Overwrite && slice.binary_search(&o.business_date).is_ok()) {
        (o.silver_added, o.gold_added) = counts.get(&o.business_date).copied().unwrap_or((0, 0));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    /// The words both engines write (tests/corpus/words.jsonl; the Spark driver reads the same
    /// cases in spark/tests/test_corpus.py): run names, a store's change, the fingerprint's line.
    #[test]
    fn the_shared_words_corpus_gets_every_answer() {
        let text = include_str!("../../../../tests/corpus/words.jsonl");
        let (mut rules, mut cases) = (std::collections::BTreeSet::new(), 0);
        for line in text.lines() {
            let c: serde_json::Value = serde_json::from_str(line).unwrap();
            let expect = c["expect"].as_str().unwrap();
            let strs = |k: &str| -> Vec<String> { c[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect() };
            let got = match c["rule"].as_str().unwrap() {
                "name_runs" => {
                    let dates: Vec<chrono::NaiveDate> = strs("dates").iter().map(|d| d.parse().unwrap()).collect();
                    crate::lake::v2::name_runs(&dates)
                }
                "describe_change" => {
                    let (old, new) = (strs("old"), strs("new"));
                    let three = |v: &[String]| [v[0].as_str(), v[1].as_str(), v[2].as_str()].map(str::to_string);
                    let (o, n) = (three(&old), three(&new));
                    crate::raw::stores::describe_change(
                        c["store_id"].as_str().unwrap(),
                        o.each_ref().map(String::as_str),
                        n.each_ref().map(String::as_str),
                    )
                }
                "fingerprint_line" => {
                    let model = crate::model::Model { gold: c["gold"].as_str().unwrap().into(), ..crate::model::manufacturing() };
                    let (rows, md5) = (c["rows"].as_i64().unwrap(), c["md5"].as_str().unwrap());
                    let line = crate::model::recount::fingerprint_line(&model, rows, md5);
                    if model.gold == "daily_store_sales" {
                        // Retail's own fingerprint prints the same line.
                        assert_eq!(crate::lake::snapshot::Fingerprint { rows, md5: md5.into() }.to_string(), line);
                    }
                    line
                }
                other => panic!("a rule the corpus does not know: {other}"),
            };
            assert_eq!(got, expect, "{line}");
            rules.insert(c["rule"].as_str().unwrap().to_string());
            cases += 1;
        }
        assert_eq!(rules.len(), 3);
        assert!(cases >= 18, "{cases} cases");
    }
}
