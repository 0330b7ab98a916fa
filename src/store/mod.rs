//! The one door to DuckDB. Every statement of `queries/*.sql` is a typed constant here: a
//! `Query<Row>` that reads rows into a struct by column name, or an `Exec` that writes. Each has
//! one method on `Store` (reads) or `Tx` (writes, counted for failure injection) with named
//! parameters. Nothing else in recount holds a connection: the lab, the reports and the front
//! ends ask for structs.
//!
//! Two tests keep the Rust and the SQL in step: every statement in `queries/` is declared here,
//! and every row struct's columns are exactly its statement's (run against a fresh lab).

mod as_of;
mod fingerprint;
mod history;
mod land;
pub(crate) mod mirror;
pub(crate) mod model;
pub(crate) mod parquet;
mod recompute;
mod reports;
mod scan;
mod schema;
mod snapshot;
mod v1;
mod v2;
pub mod vocab;

pub use as_of::FileAt;
pub use fingerprint::{FingerprintRow, GoldChunk, GoldPrefix};
pub use history::{DateAt, DiffBasketRow, DiffPartRow, GoldCountry, NO_VERSION};
pub use land::{CellRecord, FileRecord, KEY_ROWS_PER_SLICE, LandedFile, QuarantineRecord, StoreRow};
pub use recompute::{DuckRecount, RecountRow};
pub use reports::{
    BasketCopyRow, Completeness, CountryEvents, DateSummaryRow, ExplainBasketRow, LateRow, LatenessRow, LatenessState, QuarantineRow,
    RowsHeld, StoreFigures, StoreSumsRow, V1Store,
};
pub use scan::{RowSource, arrow, arrow_date, arrow_days};
pub use schema::LAB_FORMAT;
pub use snapshot::{DateOutcome, RowsOfVersion, SnapshotRow, VersionAt, VersionInputs, VersionedDate};
pub use v2::{CurrentVersion, InputCell, PendingStoreChange, Rewrite, UploadCell};
pub use vocab::{ChangeKind, DateAction, Operation, TriggerKind};

use crate::error::LabError;
use color_eyre::eyre::{Result, WrapErr, eyre};
use duckdb::{Connection, ToSql};
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

use sql::Statement;

/// Values as one list parameter, joined by commas: SQL splits it back (`string_split`), since a
/// bound parameter is one value.
pub(crate) fn listed<T: std::fmt::Display>(values: impl IntoIterator<Item = T>) -> String {
    values.into_iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}

/// Dates as one list parameter (ISO dates joined by commas), as `dates_of($dates)` reads it.
pub(crate) fn date_list(dates: &[chrono::NaiveDate]) -> String {
    listed(dates)
}

/// Named parameters, bound by name: `$name` in the SQL.
pub(crate) type Params<'a> = &'a [(&'a str, &'a dyn ToSql)];

/// A row struct read by column name. `row!` writes the impl from the struct's fields.
pub(crate) trait FromRow: Sized {
    /// The columns, in the struct's order: found once per statement, and checked by the store's
    /// tests of each statement's shape.
    const COLUMNS: &'static [&'static str];
    /// The row, whose columns `COLUMNS` are at `at` (a lookup by name per value was a large share
    /// of reading many rows).
    fn from_row_at(row: &duckdb::Row<'_>, at: &[usize]) -> duckdb::Result<Self>;
}

/// Declares a row struct whose fields are its statement's columns, read by name.
macro_rules! row {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        impl $crate::store::FromRow for $name {
            const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),*];
            fn from_row_at(row: &duckdb::Row<'_>, at: &[usize]) -> duckdb::Result<Self> {
                // Past the end is usize::MAX, which DuckDB refuses as a column index.
                let mut at = at.iter().copied();
                Ok($name { $($field: row.get(at.next().unwrap_or(usize::MAX))?),* })
            }
        }
        #[allow(dead_code)]
        impl $name {
            /// The fields as named parameters, for a statement that inserts the row.
            pub(crate) fn params(&self) -> Vec<(&'static str, &dyn duckdb::ToSql)> {
                vec![$((stringify!($field), &self.$field as &dyn duckdb::ToSql)),*]
            }
        }
    };
}
pub(crate) use row;

/// Declares a file's statements with their shapes, and lists them for the store's tests.
macro_rules! statements {
    ($($name:ident : $ty:ty = $file:ident :: $stmt:ident;)*) => {
        $(const $name: $ty = <$ty>::new(&$crate::store::sql::$file::$stmt);)*
        #[cfg(test)]
        pub(super) fn shapes() -> Vec<$crate::store::Shape> {
            vec![$($crate::store::Declared::shape(&$name)),*]
        }
    };
}
pub(crate) use statements;

/// What a statement returns: rows with these columns, or nothing (a write or a batch).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Shape {
    pub stmt: &'static Statement,
    pub columns: Option<&'static [&'static str]>,
    /// A batch runs whole (several statements); it is not prepared.
    pub batch: bool,
}

#[cfg_attr(not(test), allow(dead_code))]
pub(crate) trait Declared {
    fn shape(&self) -> Shape;
}

/// A statement that returns rows of `R`.
pub(crate) struct Query<R> {
    stmt: &'static Statement,
    _row: PhantomData<fn() -> R>,
}

impl<R: FromRow> Query<R> {
    pub const fn new(stmt: &'static Statement) -> Self {
        Query { stmt, _row: PhantomData }
    }

    /// Calls `f` with each row, in order. A read outside a transaction that runs out of DuckDB's
    /// limit before its first row is run again with a larger one, up to DuckDB's share of the
    /// budget (`Store::raise_limit`): a report never fails for memory the budget still holds.
    fn each(&self, store: &Store, params: Params, mut f: impl FnMut(R) -> Result<()>) -> Result<()> {
        loop {
            let mut delivered = false;
            let result = self.each_once(store, params, |r| {
                delivered = true;
                f(r)
            });
            match result {
                Err(e) if !delivered && is_out_of_memory(&e) && !store.in_transaction.get() && store.raise_limit(false)? => continue,
                other => return other,
            }
        }
    }

    fn each_once(&self, store: &Store, params: Params, mut f: impl FnMut(R) -> Result<()>) -> Result<()> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let mut rows = stmt.query(params).map_err(|e| failed(self.stmt, e))?;
        let mut at: Option<Vec<usize>> = None;
        while let Some(row) = rows.next().map_err(|e| failed(self.stmt, e))? {
            let at = match &at {
                Some(at) => at,
                None => at.insert(
                    R::COLUMNS
                        .iter()
                        .map(|c| row.as_ref().column_index(c))
                        .collect::<duckdb::Result<_>>()
                        .map_err(|e| failed(self.stmt, e))?,
                ),
            };
            f(R::from_row_at(row, at).map_err(|e| failed(self.stmt, e))?)?;
        }
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(())
    }

    /// The rows as Arrow batches, for a caller that works through many (a write's winners): no
    /// row is read into a struct. `R` names the columns.
    fn batches(&self, store: &Store, params: Params) -> Result<Vec<arrow::record_batch::RecordBatch>> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let batches = stmt.query_arrow(params).map_err(|e| failed(self.stmt, e))?.collect();
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(batches)
    }

    /// The rows as a stream of Arrow batches, each handed to `f` as DuckDB makes it.
    fn each_batch(&self, store: &Store, params: Params, mut f: impl FnMut(arrow::record_batch::RecordBatch) -> Result<()>) -> Result<()> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        for batch in stmt.stream_arrow(params).map_err(|e| failed(self.stmt, e))? {
            f(batch.map_err(|e| failed(self.stmt, e))?)?;
        }
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(())
    }

    fn all(&self, store: &Store, params: Params) -> Result<Vec<R>> {
        let mut out = Vec::new();
        self.each(store, params, |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    fn optional(&self, store: &Store, params: Params) -> Result<Option<R>> {
        let mut first = None;
        self.each(store, params, |r| {
            first.get_or_insert(r);
            Ok(())
        })?;
        Ok(first)
    }

    /// Exactly one row (an aggregate without GROUP BY).
    fn one(&self, store: &Store, params: Params) -> Result<R> {
        self.optional(store, params)?.ok_or_else(|| eyre!("queries/{}.sql {} returned no row", self.stmt.file, self.stmt.name))
    }
}

impl<R: FromRow> Declared for Query<R> {
    fn shape(&self) -> Shape {
        Shape { stmt: self.stmt, columns: Some(R::COLUMNS), batch: false }
    }
}

/// A statement that writes (or sets), returning the rows it changed.
pub(crate) struct Exec {
    stmt: &'static Statement,
}

impl Exec {
    pub const fn new(stmt: &'static Statement) -> Self {
        Exec { stmt }
    }

    fn run(&self, store: &Store, params: Params) -> Result<usize> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let changed = stmt.execute(params).map_err(|e| failed(self.stmt, e))?;
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(changed)
    }
}

impl Declared for Exec {
    fn shape(&self) -> Shape {
        Shape { stmt: self.stmt, columns: None, batch: false }
    }
}

/// Several statements run as one batch, with no parameters (the schema, a migration).
pub(crate) struct Batch {
    stmt: &'static Statement,
}

impl Batch {
    pub const fn new(stmt: &'static Statement) -> Self {
        Batch { stmt }
    }

    fn run(&self, store: &Store) -> Result<()> {
        store.conn.execute_batch(self.stmt.sql).map_err(|e| failed(self.stmt, e))
    }
}

impl Declared for Batch {
    fn shape(&self) -> Shape {
        Shape { stmt: self.stmt, columns: None, batch: true }
    }
}

/// A DuckDB error with the statement it came from. An interrupted statement becomes
/// `LabError::Interrupted`, which callers branch on by type.
fn failed(stmt: &Statement, e: duckdb::Error) -> color_eyre::Report {
    if is_interrupt(&e) {
        return eyre!(LabError::Interrupted);
    }
    duckdb_error(&format!("queries/{}.sql: {}", stmt.file, stmt.name), e)
}

/// A DuckDB error of `what` (a statement, an appender's table) in recount's words: out of its
/// memory limit, `LabError::OutOfMemory`, which callers run again with more; else DuckDB's
/// message in one line (`duckdb_words`).
pub(crate) fn duckdb_error(what: &str, e: duckdb::Error) -> color_eyre::Report {
    let text = e.to_string();
    if text.contains("Out of Memory Error") || text.contains("failed to pin block") || text.contains("could not allocate block") {
        return eyre!(LabError::OutOfMemory { statement: what.to_string(), budget: memory_budget() });
    }
    eyre!(duckdb_words(&e)).wrap_err(what.to_string())
}

/// DuckDB's message in one line of recount's words: its C API's "Error code 1: Unknown error
/// code" carries nothing, and its advice (`SET threads`, `SET memory_limit`, "Possible
/// solutions") names settings a user of recount does not hold. What is left keeps DuckDB's
/// own reason, its lines joined.
pub(crate) fn duckdb_words(e: &duckdb::Error) -> String {
    let text = e.to_string();
    let mut kept = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let advice = ["Possible solution", "SET ", "PRAGMA ", "See also", "https://", "For more information"];
        if advice.iter().any(|a| line.starts_with(a) || line.starts_with(&format!("* {a}"))) {
            break;
        }
        kept.push(line.replace("Error code 1: Unknown error code", "").trim().trim_end_matches(':').to_string());
    }
    let one = kept.into_iter().filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    crate::sanitize::for_terminal(&one).into_owned()
}

/// Whether a statement ran out of DuckDB's memory limit (`LabError::OutOfMemory`).
pub(crate) fn is_out_of_memory(e: &color_eyre::Report) -> bool {
    matches!(crate::error::lab_error(e), Some(LabError::OutOfMemory { .. }))
}

/// DuckDB reports an interrupt as an error of its own type; its C API gives the type only in
/// the message's prefix.
fn is_interrupt(e: &duckdb::Error) -> bool {
    e.to_string().starts_with("INTERRUPT Error")
}

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
    /// Whether a `Tx` is open on this connection. duckdb-rs's `is_autocommit` says true inside
    /// one too, so a read that ran out of memory there was retried inside the failed transaction.
    in_transaction: std::cell::Cell<bool>,
}

/// DuckDB's memory limit for a lab whose largest business date holds `ROWS_PER_STEP` rows or
/// fewer: reports and the explorer get the first; a landing and a long backfill
/// (`Store::bulk`), whose statements are cut to fit (slices of keys and of dates, one thread),
/// the second, which keeps their peak RSS down. A lab with larger dates
/// gets as many times each as its largest date holds steps of rows: the work of a statement
/// grows with the date it works on. Never more than DuckDB's share of the memory budget
/// (`duckdb_share`); past what is held, DuckDB spills to the lab's `recount.spill/`.
const MEMORY_PER_STEP: (u64, u64) = (80_000_000, 32_000_000);

/// The rows of one business date (every country) that one step of memory serves: about the
/// full world's largest date.
const ROWS_PER_STEP: u64 = 24_000;

/// The process's memory budget in bytes, set once by the command line (`--memory`,
/// `RECOUNT_MEMORY`, `memory` in the config file), else `default_memory_budget`.
static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Sets the process's memory budget: before any lab is opened (later calls are ignored).
pub fn set_memory_budget(bytes: u64) {
    let _ = BUDGET.set(bytes);
}

/// The memory budget the process works in.
pub fn memory_budget() -> u64 {
    *BUDGET.get_or_init(default_memory_budget)
}

/// A quarter of the machine's memory, and never less than `MIN_DEFAULT_BUDGET`.
pub fn default_memory_budget() -> u64 {
    // SAFETY: sysconf only reads the system's configuration.
    let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let physical = u64::try_from(pages).unwrap_or(0).saturating_mul(u64::try_from(page).unwrap_or(0));
    (physical / 4).max(MIN_DEFAULT_BUDGET)
}

/// The default budget's floor: a small machine still lands the full world.
const MIN_DEFAULT_BUDGET: u64 = 512 << 20;

/// DuckDB's share of the budget: the rest is the recount's (polars) and the parser's.
fn duckdb_share(budget: u64) -> u64 {
    budget / 4 * 3
}

/// DuckDB's memory limits for a lab whose largest business date holds `rows`: (reports, bulk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub reports: u64,
    pub bulk: u64,
}

impl Limits {
    pub(crate) fn for_rows(rows: u64, budget: u64) -> Limits {
        let steps = rows.div_ceil(ROWS_PER_STEP).max(1);
        let cap = duckdb_share(budget).max(1 << 20);
        Limits { reports: MEMORY_PER_STEP.0.saturating_mul(steps).min(cap), bulk: MEMORY_PER_STEP.1.saturating_mul(steps).min(cap) }
    }
}

/// A size in bytes as DuckDB's `memory_limit` reads it.
pub(crate) fn duckdb_size(bytes: u64) -> String {
    format!("{}KiB", bytes.div_ceil(1024))
}

/// Keeps the process's allocations in one glibc malloc arena, for the commands whose work is bulk
/// (`land`, `run`, `daily` and the bench's land + backfill child). glibc gives each thread
/// that allocates an arena of its own, and memory freed into one stays in the process: with
/// DuckDB's and the parser's threads, bulk work held more heap at its peak in many arenas, at
/// no gain in time. The explorer and the reports keep glibc's default: their short writes were
/// a little slower in one arena. `MALLOC_ARENA_MAX`, when set, is left to decide.
pub fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a tunable of glibc's allocator, which any thread may call.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// The memory limit a connection opens with: `RECOUNT_MEMORY_LIMIT` (a DuckDB size, for every
/// statement), else the reports' limit of a lab of small dates (`Store::fit_to_work` raises it
/// once it has read the lab's dates).
fn opening_limit() -> (String, Option<Limits>) {
    match std::env::var("RECOUNT_MEMORY_LIMIT") {
        Ok(limit) => (limit, None),
        Err(_) => {
            let limits = Limits::for_rows(0, memory_budget());
            (duckdb_size(limits.reports), Some(limits))
        }
    }
}

/// Where DuckDB spills what does not fit its limit: `recount.spill/` beside the lab's database,
/// emptied by the next writer's open after a crash (`lake::Lab::open`).
pub const SPILL_DIR: &str = "recount.spill";

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
    pub(crate) fn open_read(path: &Path) -> Result<Store> {
        let (limit, limits) = opening_limit();
        let mut store =
            Store::with_connection(open_connection(path, duckdb::AccessMode::ReadOnly, &limit).map_err(|e| open_failed(path, e))?, limits);
        store.prepare_read()?;
        store.fit_to_work()?;
        Ok(store)
    }

    /// Runs `write` (a transaction of its own, rolled back when it fails), again with a raised
    /// limit each time it runs out of memory while the budget holds more (`raise_limit`).
    pub(crate) fn retrying_out_of_memory<T>(&self, bulk: bool, mut write: impl FnMut() -> Result<T>) -> Result<T> {
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
    pub(crate) fn raise_limit(&self, bulk: bool) -> Result<bool> {
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
    pub(crate) fn fit_to_work(&mut self) -> Result<()> {
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

    /// A store on `conn`, with DuckDB's `limits` (None: one limit set for everything) and nothing
    /// raised, written or begun yet.
    pub(super) fn with_connection(conn: Connection, limits: Option<Limits>) -> Store {
        Store {
            conn,
            scans: Default::default(),
            limits,
            schema_written: false,
            raised: Default::default(),
            bulk_raised: Default::default(),
            in_transaction: Default::default(),
        }
    }

    /// An empty database in memory: what a lab holds while its file is being replaced.
    pub fn closed() -> Result<Store> {
        Ok(Store::with_connection(Connection::open_in_memory()?, opening_limit().1))
    }

    /// Whether opening this connection created or updated the lab's schema.
    pub(crate) fn schema_written(&self) -> bool {
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
    pub(crate) fn interrupt(&self) {
        self.interrupt.interrupt();
    }

    /// DuckDB's estimate of how far the running statement is, in percent.
    pub(crate) fn percent(&self) -> Option<f64> {
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
pub(crate) struct Tx<'s> {
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
    pub(crate) fn begin(store: &'s Store, fail_after: Option<usize>) -> Result<Tx<'s>> {
        store.conn.execute_batch("BEGIN TRANSACTION").wrap_err("beginning a transaction")?;
        store.in_transaction.set(true);
        Ok(Tx { store, executed: 0, fail_after, open: true, phases: Vec::new(), mark: std::time::Instant::now(), on_commit: Vec::new() })
    }

    /// Reads inside the transaction see its writes.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// Runs `f` once this transaction has committed (never if it rolls back).
    pub(crate) fn on_commit(&mut self, f: impl FnOnce() + 's) {
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

/// A short digest of the SQL that decides silver and gold: part of every input hash, so a
/// changed rule rebuilds instead of skipping. schema.sql holds the window rule (`in_window`).
/// The files are read as `sql_for_digest` reads them: an edit to a comment, or to how a
/// statement is laid out, leaves every date's hash as it was (it made every date of a lab
/// built before look stale, and rebuilt them all); an edit to the SQL itself does not.
/// Worked out once per process: a write's input hashes and its record both name it, and there
/// is no reason to read and hash the SQL twice.
pub(crate) fn rules_digest() -> String {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| digest_of(rules_texts())).clone()
}

/// The texts of the SQL files the rules digest covers, in order.
fn rules_texts() -> impl Iterator<Item = &'static str> {
    sql::FILES.iter().filter(|(file, _)| matches!(*file, "v2" | "snapshot" | "schema")).map(|(_, text)| *text)
}

/// The Rust code of gold's sums (`v2::GoldSums`), between its marks in src/store/v2.rs.
fn gold_rule_code() -> &'static str {
    rule_code(include_str!("v2.rs"))
}

/// The code between the lines `// gold's rule: begin` and `// gold's rule: end` of `source`
/// (all of it, should the marks be missing: a digest that changes too often is safe).
fn rule_code(source: &str) -> &str {
    let begin = source.find("// gold's rule: begin").unwrap_or(0);
    let end = source[begin..].find("// gold's rule: end").map_or(source.len(), |e| begin + e);
    &source[begin..end]
}

/// `rules_digest` of the SQL files' texts, in order, and of gold's Rust code.
fn digest_of<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    digest_with(texts, gold_rule_code())
}

fn digest_with<'a>(texts: impl Iterator<Item = &'a str>, rust: &str) -> String {
    use md5::Digest;
    let mut h = md5::Md5::new();
    for text in texts {
        h.update(sql_for_digest(text).as_bytes());
    }
    h.update(rust_for_digest(rust).as_bytes());
    hex(&h.finalize())[..8].to_string()
}

/// Rust code without its lines that are only a comment (`//`, `///`), each run of whitespace one
/// space: an edit to a comment or to the layout leaves the digest as it was. A comment at the end
/// of a line of code counts (more often than needed, which is safe).
fn rust_for_digest(code: &str) -> String {
    code.lines().filter(|l| !l.trim_start().starts_with("//")).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ")
}

/// SQL text without its `--` comments, each run of whitespace one space, outside quoted
/// literals and identifiers ('…', "…"), which are kept as written (a doubled quote inside one
/// is an escaped quote). Two texts that differ only in comments and layout read the same.
pub(crate) fn sql_for_digest(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    // Whitespace or a comment since the last token: one space before the next.
    let mut gap = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if c == '-' && chars.peek() == Some(&'-') {
            for d in chars.by_ref() {
                if d == '\n' {
                    break;
                }
            }
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        out.push(c);
        if c == '\'' || c == '"' {
            while let Some(d) = chars.next() {
                out.push(d);
                if d == c {
                    match chars.next_if_eq(&c) {
                        Some(escaped) => out.push(escaped),
                        None => break,
                    }
                }
            }
        }
    }
    out
}

pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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

    fn shapes() -> Vec<Shape> {
        [
            as_of::shapes(),
            fingerprint::shapes(),
            history::shapes(),
            land::shapes(),
            mirror::shapes(),
            model::shapes(),
            recompute::shapes(),
            reports::shapes(),
            schema::shapes(),
            snapshot::shapes(),
            v1::shapes(),
            v2::shapes(),
            parquet::shapes(),
        ]
        .concat()
    }

    #[test]
    fn every_statement_in_queries_is_declared_by_the_store_once() {
        let declared: Vec<(&str, &str)> = shapes().iter().map(|s| (s.stmt.file, s.stmt.name)).collect();
        for s in sql::ALL {
            let n = declared.iter().filter(|d| **d == (s.file, s.name)).count();
            assert_eq!(n, 1, "queries/{}.sql {} is declared {n} times in src/store", s.file, s.name);
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
