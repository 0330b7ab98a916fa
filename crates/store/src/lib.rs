//! The one door to DuckDB. Every statement of `queries/*.sql` is a typed constant here: a
//! `Query<Row>` that reads rows into a struct by column name, or an `Exec` that writes. Each has
//! one method on `Store` (reads) or `Tx` (writes, counted for failure injection) with named
//! parameters. Nothing else in recount holds a connection: the lab, the reports and the front
//! ends ask for structs.
//!
//! Two tests keep the Rust and the SQL in step: every statement in `queries/` is declared here,
//! and every row struct's columns are exactly its statement's (run against a fresh lab).

mod as_of;
pub mod buckets;
mod digest;
mod fingerprint;
pub mod foreign;
mod history;
mod key_search;
mod land;
mod memory;
pub mod mirror;
pub mod model;
pub mod model_mirror;
pub mod parquet;
mod recompute;
mod records;
mod reports;
mod scan;
mod schema;
mod snapshot;
mod statement;
mod v1;
mod v2;
pub mod vocab;

pub use digest::hex;
pub use digest::*;
use memory::*;
pub use memory::{SPILL_DIR, default_memory_budget, memory_budget, one_malloc_arena, parse_size, set_memory_budget};
pub use statement::*;
pub(crate) use statement::{row, statements};

pub use as_of::FileAt;
pub use fingerprint::{FingerprintRow, GoldChunk, GoldPrefix, GoldTables};
pub use history::{DateAt, DiffBasketRow, DiffPartRow, GoldCountry, NO_VERSION};
pub use key_search::{KEY_BYTES, LandedRows};
pub use land::{CellRecord, FileRecord, LandedFile, QuarantineRecord, StoreRow};
pub use recompute::{DuckRecount, RecountRow};
pub use reports::{
    AttributeSums, BasketCopyRow, Completeness, CountryEvents, DateSummaryRow, ExplainBasketRow, ExplainEntityRow, LateRow, LatenessRow,
    LatenessState, QuarantineRow, RowsHeld, StoreFigures, StoreSumsRow, V1Store, VersionChange,
};
pub use scan::{RowSource, arrow, arrow_date, arrow_days};
pub use schema::LAB_FORMAT;
pub use snapshot::{DateOutcome, RowsOfVersion, SnapshotRow, VersionAt, VersionInputs, VersionedDate};
pub use v2::{CurrentVersion, InputCell, PendingStoreChange, Rewrite, UploadCell};
pub use vocab::{ChangeKind, DateAction, Operation, TriggerKind};

use crate::error::LabError;
// The core's modules under the names the store has always used.
use color_eyre::eyre::{Result, WrapErr, eyre};
use duckdb::{Connection, ToSql};
use recount_core::{error, progress, rules, sanitize};
use std::marker::PhantomData;
use std::path::Path;

/// The statements of `queries/*.sql`, compiled in by build.rs: `sql::v2::SILVER_INSERT`.
pub mod sql {
    /// One `-- name:` block of a query file.
    #[derive(Debug)]
    pub struct Statement {
        pub file: &'static str,
        pub name: &'static str,
        pub sql: &'static str,
    }
    include!(concat!(env!("OUT_DIR"), "/statements.rs"));
}

/// DuckDB itself, for the integration tests that look into a lab's tables with SQL of their
/// own. recount's code never names it (`tests/cli.rs` checks): it asks the store.
pub mod for_tests {
    pub use duckdb;
}

use sql::Statement;

/// Values as one list parameter, joined by commas: SQL splits it back (`string_split`), since a
/// bound parameter is one value.
pub fn listed<T: std::fmt::Display>(values: impl IntoIterator<Item = T>) -> String {
    values.into_iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}

/// Dates as one list parameter (ISO dates joined by commas), as `dates_of($dates)` reads it.
pub fn date_list(dates: &[chrono::NaiveDate]) -> String {
    listed(dates)
}

/// Named parameters, bound by name: `$name` in the SQL.
pub type Params<'a> = &'a [(&'a str, &'a dyn ToSql)];

/// The lab's DuckDB database.
pub struct Store {
    conn: Connection,
    /// The landings' row sources in flight on this connection (`recount_parse`).
    scans: scan::Scans,
    /// DuckDB's memory limit on this connection (None: `RECOUNT_MEMORY_LIMIT` set one for
    /// everything, and bulk work keeps it). See `Limits`.
    limits: Option<Limits>,
    /// Whether opening this connection created or updated the lab's schema: the first writing
    /// open by this build (or of a new lab).
    schema_written: bool,
    /// The reports' limit as a read that ran out of memory raised it (`raise_limit`).
    raised: std::cell::Cell<Option<u64>>,
    /// Bulk work's limit as a write that ran out of memory raised it.
    bulk_raised: std::cell::Cell<Option<u64>>,
    /// The limit DuckDB has now, as this connection last set it (`set_memory_limit`; at open,
    /// the reports' one): what a statement that raises it for itself puts back.
    limit_now: std::cell::Cell<Option<u64>>,
    /// Whether a `Tx` is open on this connection. duckdb-rs's `is_autocommit` says true inside
    /// one too, so a read that ran out of memory there was retried inside the failed transaction.
    in_transaction: std::cell::Cell<bool>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`: no extension is ever autoloaded (a
    /// named time zone would try to fetch ICU). DuckDB's buffer pool would otherwise grow towards
    /// 80% of RAM; a lab's working set is small (`MEMORY_LIMITS`). `RECOUNT_MEMORY_LIMIT` (a
    /// DuckDB size such as 512MB) sets one limit for everything instead, and `RECOUNT_THREADS`
    /// DuckDB's thread count (default: one per core).
    pub fn open(path: &Path) -> Result<Store> {
        let (limit, limits) = opening_limit();
        let fresh = !path.exists();
        let mut store =
            Store::with_connection(open_connection(path, duckdb::AccessMode::ReadWrite, &limit).map_err(|e| open_failed(path, e))?, limits);
        store.schema_written = store.prepare(fresh)?;
        store.fit_to_work()?;
        Ok(store)
    }

    /// Opens the database at `path` for reading only: nothing in the file changes, and other
    /// processes may read it at the same time (DuckDB shares a file between readers only).
    pub fn open_read(path: &Path) -> Result<Store> {
        let (limit, limits) = opening_limit();
        let mut store =
            Store::with_connection(open_connection(path, duckdb::AccessMode::ReadOnly, &limit).map_err(|e| open_failed(path, e))?, limits);
        store.prepare_read()?;
        store.fit_to_work()?;
        Ok(store)
    }

    /// Runs `write` (a transaction of its own, rolled back when it fails), again with a raised
    /// limit each time it runs out of memory while the budget holds more (`raise_limit`).
    pub fn retrying_out_of_memory<T>(&self, bulk: bool, mut write: impl FnMut() -> Result<T>) -> Result<T> {
        loop {
            match write() {
                Err(e) if is_out_of_memory(&e) && self.raise_limit(bulk)? => continue,
                other => return other,
            }
        }
    }

    /// Raises DuckDB's limit for the statements that follow (`bulk`: bulk work's, set as it
    /// starts; else the connection's, set now): four times what it is, up to DuckDB's share of
    /// the budget. False when it is there already (or `RECOUNT_MEMORY_LIMIT` set one limit for
    /// everything).
    pub fn raise_limit(&self, bulk: bool) -> Result<bool> {
        let Some(limits) = self.limits else { return Ok(false) };
        let (cell, fitted) = if bulk { (&self.bulk_raised, limits.bulk) } else { (&self.raised, limits.reports) };
        let now = cell.get().unwrap_or(fitted);
        let share = duckdb_share(memory_budget()).max(now);
        if now >= share {
            return Ok(false);
        }
        let next = now.saturating_mul(4).min(share);
        cell.set(Some(next));
        eprintln!(
            "note: the work needed more memory than DuckDB's limit of {} MiB; running it again with {} MiB (of a budget of {} MiB)",
            now >> 20,
            next >> 20,
            memory_budget() >> 20
        );
        // The statement runs again: plans prepared against what the failed attempt made (a
        // temporary table it created and its rollback dropped) are prepared anew.
        self.conn.flush_prepared_statement_cache();
        if !bulk {
            self.set_memory_limit(next)?;
        }
        Ok(true)
    }

    /// Sets DuckDB's limits by the lab's largest business date (`Limits::for_rows`), within the
    /// budget; with `RECOUNT_MEMORY_LIMIT` set, the one limit stays.
    pub fn fit_to_work(&mut self) -> Result<()> {
        if self.limits.is_none() {
            return Ok(());
        }
        let limits = Limits::for_rows(self.largest_date_rows()?, memory_budget());
        if Some(limits) != self.limits {
            self.set_memory_limit(limits.reports)?;
            self.limits = Some(limits);
        }
        Ok(())
    }

    /// Raises the reports' limit to what the lab's largest date asks now (`Limits::for_rows`),
    /// within the budget, if that is more than it has. A landing into a lab calls it once its own
    /// rows are in, inside its transaction: the statements that read them then start from their
    /// size, not from the lab's size before it (an empty lab's is DuckDB's smallest).
    pub fn fit_to_rows_written(&self) -> Result<()> {
        let Some(limits) = self.limits else { return Ok(()) };
        let fitted = Limits::for_rows(self.largest_date_rows()?, memory_budget()).reports;
        if fitted > self.raised.get().unwrap_or(limits.reports) {
            self.raised.set(Some(fitted));
            self.set_memory_limit(fitted)?;
        }
        Ok(())
    }

    /// A store on `conn`, with DuckDB's `limits` (None: one limit set for everything) and nothing
    /// raised, written or begun yet.
    pub(crate) fn with_connection(conn: Connection, limits: Option<Limits>) -> Store {
        Store {
            conn,
            scans: Default::default(),
            limits,
            schema_written: false,
            raised: Default::default(),
            bulk_raised: Default::default(),
            limit_now: std::cell::Cell::new(limits.map(|l| l.reports)),
            in_transaction: Default::default(),
        }
    }

    /// An empty database in memory: what a lab holds while its file is being replaced.
    pub fn closed() -> Result<Store> {
        Ok(Store::with_connection(Connection::open_in_memory()?, opening_limit().1))
    }

    /// Whether opening this connection created or updated the lab's schema.
    pub fn schema_written(&self) -> bool {
        self.schema_written
    }

    /// Handles on this connection's running statement, for another thread: Esc's interrupt and
    /// the explorer's progress gauge.
    pub fn running(&self) -> Result<Running> {
        self.conn.set_query_progress_tracking(true)?;
        Ok(Running { interrupt: self.conn.interrupt_handle(), progress: self.conn.progress_handle() })
    }

    /// The connection itself, for tests that inspect a lab's tables. recount's own code reads and
    /// writes through the typed statements only.
    #[doc(hidden)]
    pub fn connection_for_tests(&self) -> &Connection {
        &self.conn
    }
}

/// The running statement of one connection, seen from another thread.
pub struct Running {
    interrupt: std::sync::Arc<duckdb::InterruptHandle>,
    progress: duckdb::progress::ProgressHandle,
}

impl Running {
    /// Stops the statement running now, if any: it fails with `LabError::Interrupted`.
    pub fn interrupt(&self) {
        self.interrupt.interrupt();
    }

    /// DuckDB's estimate of how far the running statement is, in percent.
    pub fn percent(&self) -> Option<f64> {
        self.progress.query_progress().percentage()
    }
}

fn open_connection(path: &Path, mode: duckdb::AccessMode, limit: &str) -> duckdb::Result<Connection> {
    let mut config = duckdb::Config::default().enable_autoload_extension(false)?.max_memory(limit)?.access_mode(mode)?;
    let spill = path.with_file_name(SPILL_DIR);
    config = config.with("temp_directory", spill.to_string_lossy())?;
    if let Some(n) = std::env::var("RECOUNT_THREADS").ok().and_then(|v| v.parse::<i64>().ok()).filter(|n| *n > 0) {
        config = config.threads(n)?;
    }
    Connection::open_with_flags(path, config)
}

/// DuckDB's refusal to share a file with another process is `LabError::DatabaseInUse` (with the
/// holder's pid, which DuckDB names in its message); anything else says what failed.
fn open_failed(path: &Path, e: duckdb::Error) -> color_eyre::Report {
    let text = e.to_string();
    if text.contains("Could not set lock") || text.contains("Conflicting lock") {
        let pid = text.split("(PID ").nth(1).and_then(|t| t.split(')').next()).and_then(|p| p.trim().parse().ok());
        return eyre!(LabError::DatabaseInUse { db: path.to_path_buf(), pid });
    }
    let words = duckdb_words(&e);
    if path.is_file() {
        // The raw zone beside it holds every landed file as it came: a new lab built from it
        // has every row again (snapshot history aside).
        let lab = path.parent().unwrap_or(Path::new("."));
        return eyre!(
            "opening {}: {words}. If the database is damaged, the lab's raw zone still holds every landed file: \
             land it into a new lab (`recount --lab NEW land FIRST LAST --world {}`, with --source {} if that file is there)",
            path.display(),
            lab.join("raw").display(),
            lab.join("raw/source.toml").display()
        );
    }
    eyre!("opening {}: {words}", path.display())
}

/// A transaction whose statements are counted, so a test can fail it after any one of them.
pub struct Tx<'s> {
    store: &'s Store,
    executed: usize,
    fail_after: Option<usize>,
    open: bool,
    /// Wall time of each statement since the last step, for the per-phase profile.
    pub phases: Vec<(String, std::time::Duration)>,
    mark: std::time::Instant,
    /// What the lab keeps in memory about itself, updated only once this transaction commits.
    on_commit: Vec<Box<dyn FnOnce() + 's>>,
}

impl<'s> Tx<'s> {
    pub fn begin(store: &'s Store, fail_after: Option<usize>) -> Result<Tx<'s>> {
        store.conn.execute_batch("BEGIN TRANSACTION").wrap_err("beginning a transaction")?;
        store.in_transaction.set(true);
        Ok(Tx { store, executed: 0, fail_after, open: true, phases: Vec::new(), mark: std::time::Instant::now(), on_commit: Vec::new() })
    }

    /// Reads inside the transaction see its writes.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// Runs `f` once this transaction has committed (never if it rolls back).
    pub fn on_commit(&mut self, f: impl FnOnce() + 's) {
        self.on_commit.push(Box::new(f));
    }

    /// Called after each statement of the transaction.
    pub fn step(&mut self, what: &str) -> Result<()> {
        self.executed += 1;
        let now = std::time::Instant::now();
        self.phases.push((what.to_string(), now - self.mark));
        self.mark = now;
        if self.fail_after == Some(self.executed) {
            return Err(eyre!(LabError::Injected { after: self.executed, step: what.to_string() }));
        }
        Ok(())
    }

    /// Runs a write and counts it as a step.
    fn exec(&mut self, what: &str, exec: &Exec, params: Params) -> Result<usize> {
        let n = exec.run(self.store, params).wrap_err_with(|| what.to_string())?;
        self.step(what)?;
        Ok(n)
    }

    pub fn commit(mut self) -> Result<Vec<(String, std::time::Duration)>> {
        self.open = false;
        let started = std::time::Instant::now();
        let committed = self.store.conn.execute_batch("COMMIT");
        if committed.is_err() {
            // A COMMIT DuckDB refused leaves the transaction to roll back.
            let _ = self.store.conn.execute_batch("ROLLBACK");
        }
        self.store.in_transaction.set(false);
        committed.wrap_err("committing")?;
        for f in std::mem::take(&mut self.on_commit) {
            f();
        }
        let mut phases = std::mem::take(&mut self.phases);
        phases.push(("commit".into(), started.elapsed()));
        Ok(phases)
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.store.conn.execute_batch("ROLLBACK");
            self.store.in_transaction.set(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_digest_reads_the_sql_not_its_comments_or_layout() {
        let a = "-- the window\nSELECT  x,\n       'a  b' -- kept\nFROM t WHERE y = '--not a comment' AND z = 'it''s'";
        let b = "SELECT x, 'a  b'\n-- another comment\nFROM t\n  WHERE y = '--not a comment'   AND z = 'it''s'";
        assert_eq!(sql_for_digest(a), "SELECT x, 'a  b' FROM t WHERE y = '--not a comment' AND z = 'it''s'");
        assert_eq!(sql_for_digest(a), sql_for_digest(b));
        // Inside a literal, every character counts: 'a  b' is not 'a b'.
        assert_ne!(sql_for_digest(a), sql_for_digest(&a.replace("'a  b'", "'a b'")));
        assert_ne!(sql_for_digest(a), sql_for_digest(&a.replace("y =", "y >=")));
        // On the files themselves: a comment added to every statement changes no hash; a changed
        // statement changes every hash.
        let files: Vec<&str> = rules_texts().collect();
        assert_eq!(files.len(), 3);
        let commented: Vec<String> = files.iter().map(|t| t.replace("\nSELECT ", "\n-- a note\nSELECT  ")).collect();
        assert_ne!(commented.iter().map(String::as_str).collect::<Vec<_>>(), files);
        assert_eq!(digest_of(commented.iter().map(String::as_str)), rules_digest());
        let changed: Vec<String> = files.iter().map(|t| t.replace("in_window(upload_date", "in_window(uploaded_at")).collect();
        assert_ne!(digest_of(changed.iter().map(String::as_str)), rules_digest());
    }

    #[test]
    fn the_rules_digest_covers_gold_sums_rust_code_but_not_its_comments() {
        let code = gold_rule_code();
        assert!(code.contains("fn add(") && code.contains("checked_add"), "the marks lost gold's sums: {code}");
        assert!(!code.contains("struct PairHasher"), "the end mark is gone: {code}");
        let sql = || rules_texts();
        assert_eq!(digest_with(sql(), code), rules_digest());
        let commented = code.replace("\n    fn add(", "\n    // a note\n    fn  add(");
        assert_ne!(commented, code);
        assert_eq!(digest_with(sql(), &commented), rules_digest());
        let changed = code.replace("cell.0 += 1;", "cell.0 += 2;");
        assert_ne!(changed, code);
        assert_ne!(digest_with(sql(), &changed), rules_digest());
        // Without its marks, the whole file counts.
        assert_eq!(rule_code("fn a() {}"), "fn a() {}");
    }

    /// A write that outgrows the first limit runs again with a raised one, until it fits: a
    /// cache filled by a process whose lab grew since it opened (the limit is the empty lab's).
    #[test]
    fn a_write_that_runs_out_of_memory_runs_again_with_a_raised_limit_until_it_fits() {
        let first = 8 << 20;
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("SET memory_limit = '{}'; SET temp_directory = ''", duckdb_size(first))).unwrap();
        let store = Store::with_connection(conn, Some(Limits { reports: first, bulk: first }));
        // About 60 MB of text in memory, with nowhere to spill: more than 8 MiB, less than the budget's share.
        let fill = "CREATE OR REPLACE TEMP TABLE t AS SELECT s, count(*) AS n FROM (SELECT repeat('x', 300) || range AS s FROM range(200000)) GROUP BY s";
        let alone = store.conn.execute_batch(fill).map_err(|e| duckdb_error("the fill", e));
        assert!(alone.as_ref().is_err_and(is_out_of_memory), "the write outgrows the first limit: {alone:?}");
        let mut attempts = 0;
        store
            .retrying_out_of_memory(false, || {
                attempts += 1;
                store.conn.execute_batch(fill).map_err(|e| duckdb_error("the fill", e))
            })
            .unwrap();
        assert!(attempts >= 2, "it ran again: {attempts}");
        assert!(store.raised.get().is_some_and(|r| r > first));
        let n: i64 = store.conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 200_000);
    }

    fn shapes() -> Vec<StatementShape> {
        [
            as_of::shapes(),
            fingerprint::shapes(),
            history::shapes(),
            key_search::shapes(),
            land::shapes(),
            mirror::shapes(),
            model::shapes(),
            model_mirror::shapes(),
            recompute::shapes(),
            reports::shapes(),
            schema::shapes(),
            snapshot::shapes(),
            v1::shapes(),
            v2::shapes(),
            parquet::shapes(),
            foreign::shapes(),
        ]
        .concat()
    }

    #[test]
    fn every_statement_in_queries_is_declared_by_the_store_once() {
        let declared: Vec<(&str, &str)> = shapes().iter().map(|s| (s.stmt.file, s.stmt.name)).collect();
        for s in sql::ALL {
            let n = declared.iter().filter(|d| **d == (s.file, s.name)).count();
            assert_eq!(n, 1, "queries/{}.sql {} is declared {n} times in the store", s.file, s.name);
        }
        assert_eq!(declared.len(), sql::ALL.len());
    }

    /// Runs every query on a fresh lab with every parameter NULL and compares the columns it
    /// returns with its row struct's fields; prepares every write.
    #[test]
    fn every_row_struct_has_exactly_its_statements_columns() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lab.duckdb")).unwrap();
        for shape in shapes() {
            let what = format!("queries/{}.sql {}", shape.stmt.file, shape.stmt.name);
            // Parquet's statements read and write the file their parameter names: tests of
            // shapes (tests/sources.rs) run them. A statement that reads rows Rust hands over
            // (`recount_rows`) reads none here: every write runs it.
            if shape.batch
                || shape.stmt.file == "parquet"
                || shape.stmt.sql.contains("read_parquet(")
                || shape.stmt.sql.contains("recount_rows(")
            {
                continue;
            }
            let mut stmt = store.conn.prepare(shape.stmt.sql).unwrap_or_else(|e| panic!("{what}: {e}"));
            for i in 1..=stmt.parameter_count() {
                stmt.raw_bind_parameter(i, duckdb::types::Null).unwrap();
            }
            // A statement that creates what later ones read (a temp table) runs, so they prepare.
            let creates = shape.stmt.sql.lines().find(|l| !l.starts_with("--")).is_some_and(|l| l.starts_with("CREATE"));
            let Some(columns) = shape.columns else {
                if creates {
                    stmt.raw_execute().unwrap_or_else(|e| panic!("{what}: {e}"));
                }
                continue;
            };
            stmt.raw_execute().unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut got = stmt.column_names();
            let mut want: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{what}: the row struct's fields are not the statement's columns");
        }
    }

    #[test]
    fn a_row_struct_that_names_a_missing_column_fails_the_check() {
        // The check above compares names: a struct with a field the statement lacks is caught.
        row! {
            pub struct Wrong { pub files: i64, pub not_there: String }
        }
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lab.duckdb")).unwrap();
        let q: Query<Wrong> = Query::new(&sql::schema::FORMAT);
        let err = q.one(&store, &[]).unwrap_err();
        assert!(format!("{err:#}").contains("not_there"), "{err:#}");
    }

    #[test]
    fn an_interrupted_statement_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lab.duckdb")).unwrap();
        let handle = store.running().unwrap();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            handle.interrupt();
        });
        let slow = Statement { file: "test", name: "slow", sql: "SELECT count(*) AS n FROM range(10000000000) a" };
        row! {
            pub struct N { pub n: i64 }
        }
        let err = Query::<N> { stmt: Box::leak(Box::new(slow)), _row: PhantomData }.one(&store, &[]).unwrap_err();
        t.join().unwrap();
        assert!(matches!(err.downcast_ref::<LabError>(), Some(LabError::Interrupted)), "{err:#}");
    }
}
