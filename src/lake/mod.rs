//! The lab: an immutable raw zone plus one DuckDB file holding bronze, silver, gold, the naive
//! job's table and the audit trail of snapshots.

pub mod bootstrap;
pub mod land;
pub mod snapshot;
pub mod v1;
pub mod v2;

use crate::queries::sql;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use duckdb::Connection;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const DB_FILE: &str = "recount.duckdb";
/// The layout of the lab's tables. 2: bronze keeps a file id, per-file cells and split baskets.
/// 3: silver keeps every version as pointers to bronze rows (`silver.versions`). 4: bronze keeps
/// a 64-bit key of each basket_id, and the keys that collide. 5: gold is a view of the newest
/// version of each date in `audit.gold_history`.
pub const LAB_FORMAT: i32 = 5;
const LOCK_FILE: &str = "recount.lock";

/// The default lab: `$RECOUNT_LAB`, else `$XDG_DATA_HOME/recount/lab`, else
/// `~/.local/share/recount/lab`.
pub fn default_lab_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RECOUNT_LAB") {
        return PathBuf::from(dir);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("recount").join("lab")
}

/// The bundled sample world, committed with the source.
pub fn sample_world_dir() -> PathBuf {
    std::env::var_os("RECOUNT_WORLD")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data"))
}

pub fn code_version() -> String {
    format!("{}+sql.{}", env!("CARGO_PKG_VERSION"), crate::queries::rules_digest())
}

/// An open lab. Holding it holds the lab's lock: one recount process at a time writes a lab.
pub struct Lab {
    pub root: PathBuf,
    pub conn: Connection,
    /// Gold's fingerprint text between the writes of one command (see `snapshot::GoldText`).
    pub gold_text: std::cell::RefCell<Option<snapshot::GoldText>>,
    /// The next snapshot id and the head, as the last write of this lab committed them (None:
    /// not read yet). One process writes a lab (its lock), so they change only through it.
    pub snapshot_ids: std::cell::Cell<Option<(i64, Option<i64>)>>,
    /// Whether bronze lists any basket key that two basket_ids share (None: not read since the
    /// last landing).
    pub key_collisions: std::cell::Cell<Option<bool>>,
    /// How many bits of each basket's 64-bit key landing keeps: 64, except in the tests that
    /// make keys collide on purpose.
    pub basket_key_bits: u32,
    _lock: File,
}

impl Lab {
    /// Opens (creating if needed) the lab at `root`, taking its lock.
    pub fn open(root: &Path) -> Result<Lab> {
        std::fs::create_dir_all(root).wrap_err_with(|| format!("creating lab directory {}", root.display()))?;
        let lock = take_lock(root)?;
        let db = root.join(DB_FILE);
        let conn = open_db(&db).map_err(|e| {
            let text = e.to_string();
            if text.contains("lock") {
                eyre!("the lab database {} is in use by another process: {text}", db.display())
            } else {
                eyre!("opening {}: {text}", db.display())
            }
        })?;
        prepare(&conn)?;
        Ok(Lab {
            root: root.to_path_buf(),
            conn,
            gold_text: Default::default(),
            snapshot_ids: Default::default(),
            key_collisions: Default::default(),
            basket_key_bits: 64,
            _lock: lock,
        })
    }

    pub fn raw_root(&self) -> PathBuf {
        self.root.join("raw")
    }

    /// Empties the lab: the raw zone and the database. The lock stays held throughout.
    pub fn reset(&mut self) -> Result<()> {
        // Close the database file before removing it.
        self.gold_text.replace(None);
        self.snapshot_ids.set(None);
        self.key_collisions.set(None);
        self.conn = Connection::open_in_memory()?;
        for name in [DB_FILE.to_string(), format!("{DB_FILE}.wal")] {
            let p = self.root.join(name);
            if p.exists() {
                std::fs::remove_file(&p).wrap_err_with(|| format!("removing {}", p.display()))?;
            }
        }
        let raw = self.raw_root();
        if raw.exists() {
            std::fs::remove_dir_all(&raw).wrap_err_with(|| format!("removing {}", raw.display()))?;
        }
        self.conn = open_db(&self.root.join(DB_FILE))?;
        prepare(&self.conn)?;
        Ok(())
    }

    /// Whether two basket_ids share a basket key anywhere in bronze (normally not): read once
    /// after each landing. Statements that tell baskets apart by key then use basket_id too.
    pub fn has_key_collisions(&self) -> Result<bool> {
        if let Some(c) = self.key_collisions.get() {
            return Ok(c);
        }
        let c = self.conn.row_cached(sql("v2", "key_collisions"), [], |r| r.get::<_, i64>(0))? > 0;
        self.key_collisions.set(Some(c));
        Ok(c)
    }

    /// True when nothing has landed yet.
    pub fn is_empty(&self) -> Result<bool> {
        let n: i64 = self.conn.row_cached(sql("land", "files_count"), [], |r| r.get(0))?;
        Ok(n == 0)
    }

    pub fn stores(&self) -> Result<crate::raw::StoreTable> {
        let mut stmt = self.conn.prepare_cached(sql("land", "stores"))?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
        })?;
        let mut stores = Vec::new();
        for row in rows {
            let (store_id, country, tz, currency) = row?;
            let timezone = crate::tz::parse_zone(&tz).map_err(|e| eyre!(e))?;
            stores.push(crate::raw::Store { store_id, country, timezone, currency });
        }
        Ok(crate::raw::StoreTable::new(stores))
    }
}

/// The lab never reaches for the network: no extension is autoloaded (a named time zone would
/// try to fetch ICU). DuckDB's buffer pool would otherwise grow towards 80% of RAM; a lab's
/// working set is small. `RECOUNT_MEMORY_LIMIT` (a DuckDB size such as 512MB) overrides it, and
/// `RECOUNT_THREADS` DuckDB's thread count (default: one per core).
fn open_db(path: &Path) -> duckdb::Result<Connection> {
    let limit = std::env::var("RECOUNT_MEMORY_LIMIT").unwrap_or_else(|_| "80MB".into());
    let mut config = duckdb::Config::default().enable_autoload_extension(false)?.max_memory(&limit)?;
    if let Some(n) = std::env::var("RECOUNT_THREADS").ok().and_then(|v| v.parse::<i64>().ok()).filter(|n| *n > 0) {
        config = config.threads(n)?;
    }
    Connection::open_with_flags(path, config)
}

fn layout_error(found: i32) -> String {
    format!(
        "this lab was written by another recount (layout {found}; this build reads layout {LAB_FORMAT}): \
         delete the lab directory and land the world again"
    )
}

/// Session settings and the schema: nothing is installed behind the lab's back either.
fn prepare(conn: &Connection) -> Result<()> {
    // Checkpoints are taken when a command's lab closes, not every 16 MB of WAL: a backfill
    // of 128 runs otherwise rewrote the same row groups dozens of times (5.6 s of 22 s).
    conn.execute_batch("SET autoinstall_known_extensions = false; SET checkpoint_threshold = '1GB';").wrap_err("configuring DuckDB")?;
    let old: i32 = conn.query_row(sql("schema", "old_layout"), [], |r| r.get(0))?;
    if old > 0 {
        bail!("{}", layout_error(old));
    }
    conn.execute_batch(sql("schema", "create")).wrap_err("creating the lab schema")?;
    conn.set_prepared_statement_cache_capacity(128);
    conn.register_table_function::<land::ParseScan>("recount_parse").wrap_err("registering the landing's parser")?;
    let (format, files): (Option<i32>, i64) = conn.query_row(sql("schema", "format"), [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    match format {
        Some(LAB_FORMAT) => {}
        None if files == 0 => {
            conn.execute(sql("schema", "format_insert"), [LAB_FORMAT])?;
        }
        other => bail!("{}", layout_error(other.unwrap_or(1))),
    }
    Ok(())
}

fn take_lock(root: &Path) -> Result<File> {
    let path = root.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .wrap_err_with(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(e).wrap_err_with(|| format!("locking {}", path.display())),
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            bail!(
                "the lab at {} is in use by another recount process ({}); wait for it to finish or close it",
                root.display(),
                if holder.trim().is_empty() { "pid unknown".to_string() } else { format!("pid {}", holder.trim()) }
            );
        }
    }
    file.set_len(0)?;
    write!(file, "{}", std::process::id())?;
    Ok(file)
}

/// A transaction whose statements are counted, so a test can fail it after any one of them.
pub struct Tx<'c> {
    conn: &'c Connection,
    executed: usize,
    fail_after: Option<usize>,
    open: bool,
    /// Wall time of each statement since the last step, for the per-phase profile.
    pub phases: Vec<(String, std::time::Duration)>,
    mark: std::time::Instant,
    /// Gold's fingerprint text as this transaction left it, put back into its lab on COMMIT.
    /// What the lab keeps in memory about itself, updated only once this transaction commits.
    on_commit: Vec<Box<dyn FnOnce() + 'c>>,
}

impl<'c> Tx<'c> {
    pub fn begin(conn: &'c Connection, fail_after: Option<usize>) -> Result<Tx<'c>> {
        conn.execute_batch("BEGIN TRANSACTION")?;
        Ok(Tx { conn, executed: 0, fail_after, open: true, phases: Vec::new(), mark: std::time::Instant::now(), on_commit: Vec::new() })
    }

    /// Hands the lab its gold text back once this transaction has committed (see
    /// `snapshot::fingerprint_after`); a rolled-back one leaves the lab without it.
    pub fn keep_gold_text(&mut self, slot: &'c std::cell::RefCell<Option<snapshot::GoldText>>, text: snapshot::GoldText) {
        self.on_commit(move || {
            slot.replace(Some(text));
        });
    }

    /// Runs `f` once this transaction has committed (never if it rolls back).
    pub fn on_commit(&mut self, f: impl FnOnce() + 'c) {
        self.on_commit.push(Box::new(f));
    }

    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// Called after each statement of the transaction.
    pub fn step(&mut self, what: &str) -> Result<()> {
        self.executed += 1;
        let now = std::time::Instant::now();
        self.phases.push((what.to_string(), now - self.mark));
        self.mark = now;
        if self.fail_after == Some(self.executed) {
            bail!("injected failure after statement {} ({what})", self.executed);
        }
        Ok(())
    }

    pub fn execute<P: duckdb::Params>(&mut self, what: &str, sql: &str, params: P) -> Result<usize> {
        let n = self.conn.exec_cached(sql, params).wrap_err_with(|| what.to_string())?;
        self.step(what)?;
        Ok(n)
    }

    pub fn commit(mut self) -> Result<Vec<(String, std::time::Duration)>> {
        self.open = false;
        let started = std::time::Instant::now();
        self.conn.execute_batch("COMMIT").wrap_err("committing")?;
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
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// `RECOUNT_FAIL_AFTER=N` (or the hidden `--fail-after N`) makes the next write fail after its
/// N-th statement: the hook behind the "nothing changed" tests and the explorer's crash demo.
pub fn fail_after_from_env() -> Option<usize> {
    std::env::var("RECOUNT_FAIL_AFTER").ok().and_then(|v| v.parse().ok())
}

/// Statements through the connection's prepared-statement cache: a v2 run issues about fifteen,
/// and parsing and planning each anew cost more than running most of them.
pub trait Cached {
    fn exec_cached<P: duckdb::Params>(&self, sql: &str, params: P) -> duckdb::Result<usize>;
    fn row_cached<T, P: duckdb::Params, F: FnOnce(&duckdb::Row<'_>) -> duckdb::Result<T>>(&self, sql: &str, params: P, f: F) -> duckdb::Result<T>;
}

impl Cached for Connection {
    fn exec_cached<P: duckdb::Params>(&self, sql: &str, params: P) -> duckdb::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }
    fn row_cached<T, P: duckdb::Params, F: FnOnce(&duckdb::Row<'_>) -> duckdb::Result<T>>(&self, sql: &str, params: P, f: F) -> duckdb::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}
