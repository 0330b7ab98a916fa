//! Snapshots: every write commits one record, in the same transaction as its data. A rollback is
//! a new snapshot; history is never rewritten.

use crate::lake::Cached;
use super::{Lab, Tx};
use crate::queries::sql;
use chrono::{NaiveDate, NaiveDateTime, Utc};
use color_eyre::eyre::{Result, bail};
use duckdb::OptionalExt;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Append,
    Overwrite,
    Rollback,
    Skipped,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Append => "append",
            Operation::Overwrite => "overwrite",
            Operation::Rollback => "rollback",
            Operation::Skipped => "skipped",
        }
    }
    pub fn parse(s: &str) -> Operation {
        match s {
            "append" => Operation::Append,
            "overwrite" => Operation::Overwrite,
            "rollback" => Operation::Rollback,
            _ => Operation::Skipped,
        }
    }
}

/// What started a write.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trigger {
    /// upload, backfill, daily, manual, naive, rollback
    pub kind: String,
    pub upload: Option<NaiveDate>,
    pub detail: String,
}

impl Trigger {
    pub fn upload(kind: &str, upload: NaiveDate) -> Self {
        Trigger { kind: kind.into(), upload: Some(upload), detail: format!("upload {upload}") }
    }
    pub fn manual(dates: &[NaiveDate]) -> Self {
        let list: Vec<String> = dates.iter().map(|d| d.to_string()).collect();
        Trigger { kind: "manual".into(), upload: None, detail: format!("rebuild of {}", list.join(", ")) }
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

#[derive(Debug, Clone, serde::Serialize)]
pub struct SnapshotRecord {
    pub snapshot_id: i64,
    pub parent_id: Option<i64>,
    pub operation: Operation,
    pub trigger: Trigger,
    pub late_days: u32,
    pub dates_rewritten: i64,
    pub dates_skipped: i64,
    pub rows_deleted: i64,
    pub rows_added: i64,
    pub beyond_window_rows: i64,
    pub fingerprint: Fingerprint,
    pub code_version: String,
    pub created_at: NaiveDateTime,
}

pub fn fingerprint(conn: &duckdb::Connection) -> Result<Fingerprint> {
    Ok(conn.row_cached(sql("fingerprint", "current"), [], |r| Ok(Fingerprint { rows: r.get(0)?, md5: r.get(1)? }))?)
}

/// Gold as the fingerprint's text, one chunk per business date (rows, text). A command that writes
/// many snapshots keeps it in its `Lab` between runs, so each run re-reads only the dates it
/// rewrote and hashes the chunks in Rust. It is taken out of the lab for a write and put back
/// only by that write's COMMIT (`Tx::keep_gold_text`): a failed write leaves no cache behind.
#[derive(Debug, Clone, Default)]
pub struct GoldText {
    chunks: BTreeMap<NaiveDate, (i64, String)>,
}

impl GoldText {
    /// Reads every date's chunk from gold as `conn` sees it.
    fn read_all(&mut self, conn: &duckdb::Connection) -> Result<()> {
        self.chunks.clear();
        let mut stmt = conn.prepare_cached(sql("fingerprint", "chunks"))?;
        self.insert_rows(stmt.query_map([], |r| Ok((r.get::<_, NaiveDate>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)))?)
    }

    /// Replaces the chunks of the dates a write rewrote with the versions it wrote (a date it
    /// emptied has none): read from the write's own rows of gold's history, not through gold's view.
    fn rewrite(&mut self, conn: &duckdb::Connection, written: &Written) -> Result<()> {
        let (Some(first), Some(last)) = (written.dates.first(), written.dates.last()) else { return Ok(()) };
        for d in written.dates {
            self.chunks.remove(d);
        }
        let mut stmt = conn.prepare_cached(sql("fingerprint", "version_chunks"))?;
        self.insert_rows(stmt.query_map(duckdb::params![written.snapshot_id, first, last], |r| {
            Ok((r.get::<_, NaiveDate>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?))
        })?)
    }

    fn insert_rows(&mut self, rows: impl Iterator<Item = duckdb::Result<(NaiveDate, i64, String)>>) -> Result<()> {
        for row in rows {
            let (d, n, text) = row?;
            self.chunks.insert(d, (n, text));
        }
        Ok(())
    }

    fn fingerprint(&self) -> Fingerprint {
        use md5::Digest;
        let mut md5 = md5::Md5::new();
        let mut rows = 0;
        for (i, (n, text)) in self.chunks.values().enumerate() {
            if i > 0 {
                md5.update(b"\n");
            }
            md5.update(text.as_bytes());
            rows += n;
        }
        Fingerprint { rows, md5: crate::queries::hex(&md5.finalize()) }
    }
}

/// What a write put into gold: the version of `dates` (sorted) that snapshot `snapshot_id` wrote.
pub struct Written<'a> {
    pub snapshot_id: i64,
    pub dates: &'a [NaiveDate],
}

/// The fingerprint of gold after a write that rewrote `changed` (None: nothing), seen inside the
/// write's transaction. With nothing rewritten it is the newest record's (every write of gold
/// records one) unless the lab holds gold's text already. The text goes back into the lab when
/// `tx` commits.
pub fn fingerprint_after<'c>(lab: &'c Lab, tx: &mut Tx<'c>, changed: Option<Written>) -> Result<Fingerprint> {
    let cached = lab.gold_text.borrow_mut().take();
    let text = match (cached, &changed) {
        (Some(text), None) => text,
        (Some(mut text), Some(written)) => {
            text.rewrite(tx.conn(), written)?;
            text
        }
        (None, _) => {
            if changed.is_none() {
                let latest = tx
                    .conn()
                    .row_cached(sql("fingerprint", "latest_record"), [], |r| Ok(Fingerprint { rows: r.get(0)?, md5: r.get(1)? }))
                    .optional()?;
                if let Some(fp) = latest {
                    return Ok(fp);
                }
            }
            let mut text = GoldText::default();
            text.read_all(tx.conn())?;
            text
        }
    };
    let fp = text.fingerprint();
    tx.keep_gold_text(&lab.gold_text, text);
    Ok(fp)
}

pub fn fingerprint_as_of(conn: &duckdb::Connection, snapshot_id: i64) -> Result<Fingerprint> {
    Ok(conn.row_cached(sql("fingerprint", "as_of"), [snapshot_id], |r| Ok(Fingerprint { rows: r.get(0)?, md5: r.get(1)? }))?)
}

/// The next snapshot id, and the head (the newest data snapshot), in one query.
fn ids(conn: &duckdb::Connection) -> Result<(i64, Option<i64>)> {
    Ok(conn.row_cached(sql("snapshot", "ids"), [], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

pub fn next_id(conn: &duckdb::Connection) -> Result<i64> {
    Ok(ids(conn)?.0)
}

pub fn head(conn: &duckdb::Connection) -> Result<Option<i64>> {
    Ok(ids(conn)?.1)
}

/// A fresh record for the next write; the caller fills in its counts.
pub fn new_record(lab: &Lab, operation: Operation, trigger: Trigger, late_days: u32) -> Result<SnapshotRecord> {
    let (snapshot_id, parent_id) = match lab.snapshot_ids.get() {
        Some(ids) => ids,
        None => ids(&lab.conn)?,
    };
    Ok(SnapshotRecord {
        snapshot_id,
        parent_id,
        operation,
        trigger,
        late_days,
        dates_rewritten: 0,
        dates_skipped: 0,
        rows_deleted: 0,
        rows_added: 0,
        beyond_window_rows: 0,
        fingerprint: Fingerprint { rows: 0, md5: String::new() },
        code_version: super::code_version(),
        created_at: Utc::now().naive_utc(),
    })
}

/// Writes the record; once the write commits, the lab knows the next id and head without asking.
pub fn insert_record<'c>(lab: &'c Lab, tx: &mut Tx<'c>, r: &SnapshotRecord) -> Result<()> {
    tx.execute(
        "recording the snapshot",
        sql("snapshot", "insert"),
        duckdb::params![
            r.snapshot_id,
            r.parent_id,
            r.operation.as_str(),
            r.trigger.kind,
            r.trigger.upload,
            r.trigger.detail,
            r.late_days,
            r.dates_rewritten,
            r.dates_skipped,
            r.rows_deleted,
            r.rows_added,
            r.beyond_window_rows,
            r.fingerprint.rows,
            r.fingerprint.md5,
            r.code_version,
            r.created_at
        ],
    )?;
    // Skipped runs change nothing, so they are never a parent: the head stays.
    let next = (r.snapshot_id + 1, if r.operation == Operation::Skipped { r.parent_id } else { Some(r.snapshot_id) });
    let slot = &lab.snapshot_ids;
    tx.on_commit(move || slot.set(Some(next)));
    Ok(())
}

/// One row of `audit.snapshot_dates`: what a snapshot did to one business date.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DateOutcome {
    pub business_date: NaiveDate,
    /// overwrite, skip or restore
    pub action: String,
    pub input_hash: String,
    pub input_rows: i64,
    pub silver_deleted: i64,
    pub silver_added: i64,
    pub gold_deleted: i64,
    pub gold_added: i64,
}

/// Records what the snapshot did to each date, through DuckDB's appender in the write's
/// transaction (one step, however many dates).
pub fn insert_dates(tx: &mut Tx, snapshot_id: i64, dates: &[DateOutcome]) -> Result<()> {
    {
        let mut app = tx.conn().appender_to_db("snapshot_dates", "audit")?;
        for d in dates {
            app.append_row(duckdb::params![snapshot_id, d.business_date, d.action, d.input_hash, d.input_rows, d.silver_deleted, d.silver_added, d.gold_deleted, d.gold_added])?;
        }
        app.flush()?;
    }
    tx.step("recording the dates of the snapshot")
}

/// For each business date, the snapshot whose rows it held as of `snapshot_id`.
pub fn versions_as_of(conn: &duckdb::Connection, snapshot_id: i64) -> Result<BTreeMap<NaiveDate, i64>> {
    let mut stmt = conn.prepare_cached(sql("snapshot", "versions_as_of"))?;
    let rows = stmt.query_map([snapshot_id], |r| Ok((r.get::<_, NaiveDate>(0)?, r.get::<_, i64>(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The version of date `d` as of `snapshot_id`: the newest snapshot up to it that rewrote `d`.
pub fn version_at(conn: &duckdb::Connection, d: NaiveDate, snapshot_id: i64) -> Result<Option<i64>> {
    Ok(conn.row_cached(sql("snapshot", "version_at"), duckdb::params![d, snapshot_id], |r| r.get::<_, Option<i64>>(0)).optional()?.flatten())
}

/// The input hash of the version of `d` that silver and gold hold now; None if never built.
pub fn current_hash(conn: &duckdb::Connection, d: NaiveDate) -> Result<Option<String>> {
    Ok(conn.row_cached(sql("snapshot", "current_hash"), [d], |r| r.get::<_, Option<String>>(0)).optional()?.flatten())
}

pub fn exists(conn: &duckdb::Connection, snapshot_id: i64) -> Result<bool> {
    let n: i64 = conn.row_cached(sql("snapshot", "exists"), [snapshot_id], |r| r.get(0))?;
    Ok(n > 0)
}

pub fn require(conn: &duckdb::Connection, snapshot_id: i64) -> Result<()> {
    if !exists(conn, snapshot_id)? {
        bail!("snapshot {snapshot_id} does not exist; `recount snapshots` lists them");
    }
    Ok(())
}

/// Restores silver and gold as of `target`, as a new snapshot. Only dates whose version differs
/// are rewritten; every other date's rows stay untouched.
pub fn rollback(lab: &Lab, target: i64, fail_after: Option<usize>) -> Result<SnapshotRecord> {
    let conn = &lab.conn;
    require(conn, target)?;
    let head = head(conn)?.unwrap_or(0);
    let now = versions_as_of(conn, head)?;
    let then = versions_as_of(conn, target)?;
    let mut changes: Vec<(NaiveDate, Option<i64>)> = Vec::new();
    for (d, v) in &now {
        if then.get(d) != Some(v) {
            changes.push((*d, then.get(d).copied()));
        }
    }
    let trigger = Trigger { kind: "rollback".into(), upload: None, detail: format!("rollback to snapshot {target}") };
    let mut record = new_record(lab, Operation::Rollback, trigger, 0)?;
    let mut tx = Tx::begin(conn, fail_after)?;
    let mut outcomes = Vec::new();
    for (d, version) in &changes {
        // The date's current version (silver's and gold's rows) leaves silver and gold when this
        // snapshot's version (a copy of the target's, or none) becomes the newest.
        let (silver_deleted, gold_deleted): (i64, i64) =
            tx.conn().row_cached(sql("snapshot", "rows_of_version"), duckdb::params![now[d], d], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (mut silver_added, mut gold_added, mut input_hash, mut input_rows) = (0, 0, String::new(), 0);
        if let Some(v) = version {
            silver_added = tx.execute("restoring silver", sql("snapshot", "restore_silver"), duckdb::params![record.snapshot_id, v, d])? as i64;
            gold_added = tx.execute("restoring gold", sql("snapshot", "restore_gold"), duckdb::params![record.snapshot_id, v, d])? as i64;
            if let Some((h, n)) = tx
                .conn()
                .row_cached(sql("snapshot", "version_of"), duckdb::params![v, d], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .optional()?
            {
                input_hash = h;
                input_rows = n;
            }
        }
        record.rows_deleted += silver_deleted + gold_deleted;
        record.rows_added += silver_added + gold_added;
        outcomes.push(DateOutcome { business_date: *d, action: "restore".into(), input_hash, input_rows, silver_deleted, silver_added, gold_deleted, gold_added });
    }
    record.dates_rewritten = outcomes.len() as i64;
    // Gold now (a view) shows the restored versions once the dates are recorded.
    insert_dates(&mut tx, record.snapshot_id, &outcomes)?;
    let dates: Vec<NaiveDate> = changes.iter().map(|c| c.0).collect();
    record.fingerprint = fingerprint_after(lab, &mut tx, Some(Written { snapshot_id: record.snapshot_id, dates: &dates }).filter(|w| !w.dates.is_empty()))?;
    insert_record(lab, &mut tx, &record)?;
    tx.commit()?;
    Ok(record)
}
