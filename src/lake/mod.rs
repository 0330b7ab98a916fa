//! The lab: an immutable raw zone plus one DuckDB file holding bronze, silver, gold, the naive
//! job's table and the audit trail of snapshots. The lab's operations (land, v1, v2, rollback)
//! live here; every statement they run is a method of `store`.

pub mod bootstrap;
pub mod land;
pub mod recovery;
pub mod snapshot;
pub mod v1;
pub mod v2;

use crate::error::LabError;
use crate::store::Store;
use color_eyre::eyre::{Result, WrapErr, eyre};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::store::LAB_FORMAT;
pub const DB_FILE: &str = "recount.duckdb";
const LOCK_FILE: &str = "recount.lock";
/// How long opening a lab waits for another process's lock before it says who holds it.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
    std::env::var_os("RECOUNT_WORLD").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data"))
}

pub fn code_version() -> String {
    format!("{}+sql.{}", env!("CARGO_PKG_VERSION"), crate::store::rules_digest())
}

/// An open lab. Holding it holds the lab's lock: one recount process at a time writes a lab.
pub struct Lab {
    pub root: PathBuf,
    store: Store,
    /// Gold's fingerprint text between the writes of one command (see `snapshot::GoldText`).
    pub(crate) gold_text: std::cell::RefCell<Option<snapshot::GoldText>>,
    /// The next snapshot id and the head, as the last write of this lab committed them (None:
    /// not read yet). One process writes a lab (its lock), so they change only through it.
    pub(crate) snapshot_ids: std::cell::Cell<Option<(i64, Option<i64>)>>,
    /// Whether bronze lists any basket key that two basket_ids share (None: not read since the
    /// last landing).
    pub(crate) key_collisions: std::cell::Cell<Option<bool>>,
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
        // A reset killed half way is finished before the database is opened.
        if root.join(RESETTING).exists() {
            empty(root)?;
        }
        let store = Store::open(&root.join(DB_FILE))?;
        let lab = Lab {
            root: root.to_path_buf(),
            store,
            gold_text: Default::default(),
            snapshot_ids: Default::default(),
            key_collisions: Default::default(),
            basket_key_bits: 64,
            _lock: lock,
        };
        // A landing killed between its COMMIT and moving its copies into place is finished now.
        recovery::recover(&lab).wrap_err("recovering an interrupted landing")?;
        Ok(lab)
    }

    /// The lab's database: every read and write goes through its typed statements.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn raw_root(&self) -> PathBuf {
        self.root.join("raw")
    }

    /// Empties the lab: the raw zone and the database. The lock stays held throughout. A marker
    /// file is written (and synced) first and removed last: a reset killed half way is finished
    /// by the next open, never left with a database and a raw zone that disagree.
    pub fn reset(&mut self) -> Result<()> {
        self.gold_text.replace(None);
        self.snapshot_ids.set(None);
        self.key_collisions.set(None);
        // Close the database file before removing it.
        self.store = Store::closed()?;
        let marker = self.root.join(RESETTING);
        std::fs::File::create(&marker).and_then(|f| f.sync_all()).wrap_err_with(|| format!("writing {}", marker.display()))?;
        crash_point("reset:marked");
        empty(&self.root)?;
        self.store = Store::open(&self.root.join(DB_FILE))?;
        Ok(())
    }

    /// Whether two basket_ids share a basket key anywhere in bronze (normally not): read once
    /// after each landing. Statements that tell baskets apart by key then use basket_id too.
    pub fn has_key_collisions(&self) -> Result<bool> {
        if let Some(c) = self.key_collisions.get() {
            return Ok(c);
        }
        let c = self.store.key_collisions()? > 0;
        self.key_collisions.set(Some(c));
        Ok(c)
    }

    /// True when nothing has landed yet.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.store.files_count()? == 0)
    }

    /// Whether any file of `upload` has landed.
    pub fn is_landed(&self, upload: chrono::NaiveDate) -> Result<bool> {
        Ok(self.store.upload_files_count(upload)? > 0)
    }

    pub fn stores(&self) -> Result<crate::raw::StoreTable> {
        let mut stores = Vec::new();
        for s in self.store.stores()? {
            let timezone = crate::tz::parse_zone(&s.timezone).map_err(|e| eyre!(e))?;
            stores.push(crate::raw::Store { store_id: s.store_id, country: s.country, timezone, currency: s.currency });
        }
        Ok(crate::raw::StoreTable::new(stores))
    }
}

/// The marker of a reset in progress.
const RESETTING: &str = "recount.resetting";

/// Removes the database and the raw zone, then the reset marker.
fn empty(root: &Path) -> Result<()> {
    for name in [DB_FILE.to_string(), format!("{DB_FILE}.wal")] {
        let p = root.join(name);
        if p.exists() {
            std::fs::remove_file(&p).wrap_err_with(|| format!("removing {}", p.display()))?;
        }
    }
    crash_point("reset:database-removed");
    let raw = root.join("raw");
    if raw.exists() {
        std::fs::remove_dir_all(&raw).wrap_err_with(|| format!("removing {}", raw.display()))?;
    }
    let marker = root.join(RESETTING);
    if marker.exists() {
        std::fs::remove_file(&marker).wrap_err_with(|| format!("removing {}", marker.display()))?;
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
    // A holder that was just killed lets go of the lock as the kernel tears it down: a command
    // started right after waits a moment for that, rather than failing at once.
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::Error(e)) => return Err(e).wrap_err_with(|| format!("locking {}", path.display())),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(eyre!(LabError::LockHeld { lab: root.to_path_buf(), pid: holder.trim().parse().ok() }));
            }
        }
    }
    file.set_len(0)?;
    write!(file, "{}", std::process::id())?;
    Ok(file)
}

/// `RECOUNT_CRASH_AT=NAME` ends the process at once (as a kill would) when it reaches the crash
/// point NAME: the hook behind the tests that kill a landing between its COMMIT and its moves.
pub fn crash_point(name: &str) {
    if std::env::var_os("RECOUNT_CRASH_AT").is_some_and(|v| v == name) {
        std::process::abort();
    }
}

/// `RECOUNT_FAIL_AFTER=N` (or the hidden `--fail-after N`) makes the next write fail after its
/// N-th statement: the hook behind the "nothing changed" tests and the explorer's crash demo.
pub fn fail_after_from_env() -> Option<usize> {
    std::env::var("RECOUNT_FAIL_AFTER").ok().and_then(|v| v.parse().ok())
}
