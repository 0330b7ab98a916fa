//! v2, the idempotent job: per run, the affected business dates whose inputs changed are deleted
//! and rewritten in silver and gold, in ONE transaction with the run's snapshot record. The
//! rewrite is a new version of the dates in `silver.versions` and `audit.gold_history`; the views
//! `silver.baskets` and `gold.daily_store_sales` show each date's newest version, so the old rows
//! leave silver and gold without being moved.

use crate::lake::Cached;
use super::snapshot::{self, DateOutcome, Operation, SnapshotRecord, Trigger};
use super::{Lab, Tx};
use crate::queries::{hex, sql};
use chrono::{Duration, NaiveDate};
use color_eyre::eyre::Result;
use md5::Digest;
use std::collections::HashMap;

pub const DEFAULT_LATE_DAYS: u32 = 2;

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

/// Rows of the triggering upload that never enter silver, by business date and currency.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BeyondWindow {
    pub business_date: NaiveDate,
    pub currency: String,
    pub rows: i64,
    pub revenue_minor: i64,
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
            match d.action.as_str() {
                "skip" => out.push_str(&format!("  {}  skipped    inputs unchanged ({} rows)\n", d.business_date, d.input_rows)),
                _ => out.push_str(&format!(
                    "  {}  {:<9}  silver -{} +{}, gold -{} +{}\n",
                    d.business_date, d.action, d.silver_deleted, d.silver_added, d.gold_deleted, d.gold_added
                )),
            }
        }
        if self.dates.is_empty() {
            out.push_str("  no business dates inside the window\n");
        }
        for b in &self.beyond_window {
            out.push_str(&format!(
                "  beyond the window: {} row(s) of business date {}, {} (listed by `recount late {}`)\n",
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

pub fn is_landed(lab: &Lab, upload: NaiveDate) -> Result<bool> {
    let n: i64 = lab.conn.row_cached(sql("land", "upload_files_count"), [upload], |r| r.get(0))?;
    Ok(n > 0)
}

/// One v2 run for one upload: every business date of the upload inside the window.
pub fn run_upload(lab: &Lab, upload: NaiveDate, trigger_kind: &str, opts: V2Options) -> Result<RunReport> {
    let started = std::time::Instant::now();
    let conn = &lab.conn;
    let oldest = upload - Duration::days(opts.late_days as i64);
    let mut stmt = conn.prepare_cached(sql("v2", "upload_cells"))?;
    let rows = stmt.query_map(duckdb::params![upload, oldest, opts.late_days], |r| {
        Ok(((r.get::<_, NaiveDate>(0)?, r.get::<_, String>(1)?), (r.get::<_, i64>(2)?, r.get::<_, i64>(3)?, r.get::<_, bool>(4)?, r.get::<_, bool>(5)?)))
    })?;
    // The upload's files summed per (business date, currency), in order.
    let mut cells: std::collections::BTreeMap<(NaiveDate, String), (i64, i64, bool, bool)> = Default::default();
    for row in rows {
        let (key, (n, revenue, affected, is_beyond)) = row?;
        let c = cells.entry(key).or_insert((0, 0, affected, is_beyond));
        c.0 += n;
        c.1 = c.1.checked_add(revenue).ok_or_else(|| color_eyre::eyre::eyre!("upload {upload}: revenue overflows 64 bits"))?;
    }
    let (mut dates, mut beyond): (Vec<NaiveDate>, Vec<BeyondWindow>) = (Vec::new(), Vec::new());
    for ((business_date, currency), (rows, revenue_minor, affected, is_beyond)) in cells {
        if affected && dates.last() != Some(&business_date) {
            dates.push(business_date);
        }
        if is_beyond {
            beyond.push(BeyondWindow { business_date, currency, rows, revenue_minor });
        }
    }
    let found = started.elapsed();
    let mut report = rewrite(lab, &dates, Trigger::upload(trigger_kind, upload), beyond, opts)?;
    report.phases.insert(0, ("find affected dates".into(), found.as_secs_f64() * 1e3));
    Ok(report)
}

/// A manual rebuild of named business dates, under the same window rule.
pub fn rebuild_dates(lab: &Lab, dates: &[NaiveDate], opts: V2Options) -> Result<RunReport> {
    let mut dates = dates.to_vec();
    dates.sort();
    dates.dedup();
    rewrite(lab, &dates, Trigger::manual(&dates), Vec::new(), opts)
}

/// The input hash of each of `dates`: the exact rows that feed it under the window rule (their
/// count and the wrapping sum of their row digests, kept per file in `bronze.cells`), the window
/// itself and the code version.
pub fn input_hashes(conn: &duckdb::Connection, late_days: u32, dates: &[NaiveDate]) -> Result<Vec<(NaiveDate, i64, String)>> {
    let (Some(&first), Some(&last)) = (dates.iter().min(), dates.iter().max()) else {
        return Ok(Vec::new());
    };
    let mut sums: std::collections::BTreeMap<NaiveDate, (i64, u64)> = dates.iter().map(|&d| (d, (0, 0))).collect();
    let mut stmt = conn.prepare_cached(sql("v2", "input_cells"))?;
    let rows = stmt.query_map(duckdb::params![late_days, first, last], |r| Ok((r.get::<_, NaiveDate>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?;
    for row in rows {
        let (d, n, digest) = row?;
        if let Some(s) = sums.get_mut(&d) {
            s.0 += n;
            s.1 = s.1.wrapping_add(digest as u64);
        }
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

struct Current {
    input_hash: String,
    silver_rows: i64,
    gold_rows: i64,
    snapshot_id: i64,
}

fn rewrite(lab: &Lab, dates: &[NaiveDate], trigger: Trigger, beyond: Vec<BeyondWindow>, opts: V2Options) -> Result<RunReport> {
    let started = std::time::Instant::now();
    let conn = &lab.conn;
    let hashes = input_hashes(conn, opts.late_days, dates)?;
    // Each date's newest version: the one silver and gold hold now.
    let mut current: HashMap<NaiveDate, Current> = HashMap::new();
    if let (Some(first), Some(last)) = (dates.iter().min(), dates.iter().max()) {
        let mut stmt = conn.prepare_cached(sql("v2", "current_versions"))?;
        let rows = stmt.query_map(duckdb::params![first, last], |r| {
            Ok((r.get::<_, NaiveDate>(0)?, Current { input_hash: r.get(1)?, silver_rows: r.get(2)?, gold_rows: r.get(3)?, snapshot_id: r.get(4)? }))
        })?;
        for row in rows {
            let (d, version) = row?;
            if current.get(&d).is_none_or(|c| c.snapshot_id < version.snapshot_id) {
                current.insert(d, version);
            }
        }
    }

    let mut outcomes = Vec::new();
    for (d, rows, hash) in &hashes {
        let cur = current.get(d);
        let same = cur.is_some_and(|c| &c.input_hash == hash);
        let (silver_deleted, gold_deleted) = cur.map(|c| (c.silver_rows, c.gold_rows)).unwrap_or((0, 0));
        let action = if same && !opts.force { "skip" } else { "overwrite" };
        outcomes.push(DateOutcome {
            business_date: *d,
            action: action.into(),
            input_hash: hash.clone(),
            input_rows: *rows,
            silver_deleted: if action == "skip" { 0 } else { silver_deleted },
            silver_added: 0,
            gold_deleted: if action == "skip" { 0 } else { gold_deleted },
            gold_added: 0,
        });
    }
    let changed_dates: Vec<NaiveDate> = outcomes.iter().filter(|o| o.action == "overwrite").map(|o| o.business_date).collect();
    let changed = changed_dates.len();
    // The changed dates as one bound list (ISO dates, commas), for the statements that need the
    // set; the silver insert needs it only when the dates leave gaps between the first and last.
    let date_list = changed_dates.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
    let gaps = match (changed_dates.first(), changed_dates.last()) {
        (Some(&first), Some(&last)) => (last - first).num_days() + 1 != changed as i64,
        _ => false,
    };
    let operation = if changed == 0 { Operation::Skipped } else { Operation::Overwrite };
    let mut record = snapshot::new_record(lab, operation, trigger, opts.late_days)?;
    record.dates_rewritten = changed as i64;
    record.dates_skipped = (outcomes.len() - changed) as i64;
    record.beyond_window_rows = beyond.iter().map(|b| b.rows).sum();

    let compared = started.elapsed();
    let mut tx = Tx::begin(conn, opts.fail_after)?;
    if let (Some(&first), Some(&last)) = (changed_dates.first(), changed_dates.last()) {
        // The dates' silver rows leave silver now (the view) by the new version replacing them;
        // they stay in silver.versions as the history of the version they belonged to.
        let silver_deleted: i64 = outcomes.iter().map(|o| o.silver_deleted).sum();
        let id = record.snapshot_id;
        let collisions = lab.has_key_collisions()?;
        let listed = gaps.then_some(date_list.as_str());
        let silver_added = tx.execute("silver insert", sql("v2", "silver_insert"), duckdb::params![id, opts.late_days, first, last, collisions, listed])? as i64;
        let gold_deleted: i64 = outcomes.iter().map(|o| o.gold_deleted).sum();
        let gold_added = tx.execute("gold insert", sql("v2", "gold_insert"), duckdb::params![id, first, last])? as i64;
        record.rows_deleted = silver_deleted + gold_deleted;
        record.rows_added = silver_added + gold_added;
        // One date (most runs of a backfill): its counts are the inserts' own.
        let counts: HashMap<NaiveDate, (i64, i64)> = if changed == 1 {
            HashMap::from([(first, (silver_added, gold_added))])
        } else {
            let counts = {
                let mut stmt = tx.conn().prepare_cached(sql("v2", "changed_counts"))?;
                stmt.query_map(duckdb::params![id, first, last, date_list], |r| Ok((r.get::<_, NaiveDate>(0)?, (r.get(1)?, r.get(2)?))))?.collect::<Result<_, _>>()?
            };
            tx.step("counting rows per date")?;
            counts
        };
        for o in outcomes.iter_mut().filter(|o| o.action == "overwrite") {
            let (s, g) = counts.get(&o.business_date).copied().unwrap_or((0, 0));
            o.silver_added = s;
            o.gold_added = g;
        }
    }
    // Silver and gold now (views) show the new versions once the dates are recorded.
    snapshot::insert_dates(&mut tx, record.snapshot_id, &outcomes)?;
    let written = (changed > 0).then_some(snapshot::Written { snapshot_id: record.snapshot_id, dates: &changed_dates });
    record.fingerprint = snapshot::fingerprint_after(lab, &mut tx, written)?;
    tx.step("fingerprint")?;
    snapshot::insert_record(lab, &mut tx, &record)?;
    let mut phases = vec![("input hashes".to_string(), compared.as_secs_f64() * 1e3)];
    phases.extend(tx.commit()?.into_iter().map(|(n, d)| (n, d.as_secs_f64() * 1e3)));
    Ok(RunReport { snapshot: record, dates: outcomes, beyond_window: beyond, phases })
}
