//! The lab: an immutable raw zone plus one DuckDB file holding bronze, silver, gold, the naive
//! job's table and the audit trail of snapshots. The lab's operations (land, v1, v2, rollback)
//! live here; every statement they run is a method of `store`.

pub mod bootstrap;
pub mod daily;
pub mod fault;
pub mod land;
pub mod model;
mod model_land;
pub mod recovery;
pub mod reopen;
mod sample;
pub mod snapshot;
pub mod v1;
pub mod v2;

use crate::error::{LabError, lab_error};
use crate::store::Store;
use color_eyre::eyre::{Result, WrapErr, eyre};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::store::LAB_FORMAT;
// The handle that interrupts the lab's statement in flight (Esc in the explorer).
pub use crate::store::Running;
// The process's memory budget, which what a lab's reader keeps in memory follows.
pub use crate::store::memory_budget;
pub use sample::sample_world_dir;
pub const DB_FILE: &str = "recount.duckdb";
const LOCK_FILE: &str = "recount.lock";
/// How long opening a lab waits for another process's lock before it says who holds it.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// How long a writer waits for the lab's readers to let go of its database: an explorer lets
/// go within a quarter of a second of seeing a writer's lock, a report when it has printed.
const READERS_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The default lab: `$RECOUNT_LAB`, else `$XDG_DATA_HOME/recount/lab`, else
/// `~/.local/share/recount/lab`.
pub fn default_lab_dir() -> PathBuf {
    if let Some(dir) = crate::env::var("RECOUNT_LAB") {
        return PathBuf::from(dir);
    }
    data_home().join("recount").join("lab")
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
fn data_home() -> PathBuf {
    crate::env::var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::var("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The file in a warehouse's mirror that names the warehouse state it was built from: its
/// presence marks a lab as a mirror (crates/spark/src/warehouse/ writes it).
pub const MIRROR_STATE_FILE: &str = "warehouse-state";

/// Whether a lab exists at `root`: its database, or a reset of it in progress.
pub fn exists(root: &Path) -> bool {
    root.join(DB_FILE).exists() || root.join(RESETTING).exists()
}

pub fn code_version() -> String {
    format!("{}+sql.{}", env!("CARGO_PKG_VERSION"), crate::store::rules_digest())
}

/// An open lab, for writing or for reading. A writer holds the lab's lock: one recount process
/// at a time writes a lab. A reader holds no lock and changes nothing on disk, so several
/// processes read a lab at once, a read-only lab can be read, and a writer waits only for the
/// readers' statements in flight (`Lab::open` waits for them to let go).
pub struct Lab {
    pub root: PathBuf,
    store: Store,
    /// Gold's fingerprint text between the writes of one command (see `snapshot::GoldText`).
    pub gold_text: std::cell::RefCell<Option<snapshot::GoldText>>,
    /// The next snapshot id and the head, as the last write of this lab committed them (None:
    /// not read yet). One process writes a lab (its lock), so they change only through it.
    pub snapshot_ids: std::cell::Cell<Option<(i64, Option<i64>)>>,
    /// Whether bronze lists any basket key that two basket_ids share (None: not read since the
    /// last landing).
    pub key_collisions: std::cell::Cell<Option<bool>>,
    /// A reader's gold fingerprint, now and as its newest snapshot recorded it (see
    /// `snapshot::gold_and_recorded`).
    pub gold_pair: std::cell::RefCell<Option<(snapshot::Fingerprint, Option<snapshot::Fingerprint>)>>,
    /// The (newest file, window) pairs whose recount of every date this process could not keep
    /// (`recompute::duckdb_recount`): it is not tried again for them, each check recounting its
    /// date alone, until a file lands or the lab is opened again.
    pub recounts_not_kept: std::cell::RefCell<std::collections::BTreeSet<(i32, u32)>>,
    /// How many bits of each basket's 64-bit key landing keeps: 64, except in the tests that
    /// make keys collide on purpose.
    pub basket_key_bits: u32,
    /// How many of a landing's rows group their basket keys in one statement: None, as many as
    /// the memory budget holds (`store::KEY_BYTES`), except in the tests that cut a small world
    /// into many slices.
    pub key_rows_per_slice: Option<i64>,
    /// The write lock, while this lab writes (None: opened for reading).
    lock: Option<File>,
    /// A reader that could not write the lab's caches reads a private copy of its database,
    /// kept here (and removed) until it reads the lab again.
    copy: Option<tempfile::TempDir>,
}

impl Lab {
    /// Whether this lab is a warehouse's mirror (it holds no raw files: a recount reads its
    /// bronze).
    pub fn is_mirror(&self) -> bool {
        self.root.join(MIRROR_STATE_FILE).is_file()
    }

    /// Opens (creating if needed) the lab at `root` for writing, taking its lock, and finishes
    /// whatever a killed command left half done.
    pub fn open(root: &Path) -> Result<Lab> {
        refuse_foreign_folder(root)?;
        std::fs::create_dir_all(root).wrap_err_with(|| format!("creating lab directory {}", root.display()))?;
        let lock = take_lock(root)?;
        // A reset killed half way is finished before the database is opened.
        if root.join(RESETTING).exists() {
            empty(root)?;
        }
        // What a killed command spilled: the lock is held, so no process has the database open.
        // Removed before this one opens it: DuckDB may spill while it opens (a long WAL's replay,
        // a schema update), and a file removed under it fails a later statement.
        remove_spill(root)?;
        let opening = std::time::Instant::now();
        let lab = Lab::with(root, open_for_writing(root, true)?, Some(lock), None);
        let recovering = std::time::Instant::now();
        // A landing killed between its COMMIT and moving its copies into place is finished now.
        recovery::recover(&lab).wrap_err("recovering an interrupted landing")?;
        crate::progress::profile(&[
            ("opening the database".to_string(), (recovering - opening).as_secs_f64() * 1e3),
            ("recovery".to_string(), recovering.elapsed().as_secs_f64() * 1e3),
        ]);
        Ok(lab)
    }

    /// Opens the lab at `root` for reading: no lock is taken and nothing on disk changes, so it
    /// works beside other readers (an open explorer) and on a lab the user cannot write. It waits
    /// a moment for a writer at work to finish. A lab this build has not written yet (another
    /// build's views, an older layout) is brought up to date by a writer's open first, when the
    /// lab can be written.
    pub fn open_read(root: &Path) -> Result<Lab> {
        match Lab::open_read_as_is(root) {
            Err(e) if matches!(lab_error(&e), Some(LabError::NeedsWriter(_))) => {
                drop(Lab::open(root).wrap_err_with(|| format!("{e}; updating it needs a writer"))?);
                Lab::open_read_as_is(root)
            }
            // A killed command's leftovers are finished by a writer's open first, when the lab
            // can be written; a lab that cannot is read as it is (its database is whole).
            Ok(lab) if recovery::pending(&lab)? => {
                drop(lab);
                match Lab::open(root) {
                    Ok(writer) => drop(writer),
                    Err(e) if matches!(lab_error(&e), Some(LabError::LockHeld { .. })) => return Err(e),
                    Err(_) => {}
                }
                Lab::open_read_as_is(root)
            }
            other => other,
        }
    }

    fn open_read_as_is(root: &Path) -> Result<Lab> {
        // No lab there yet reads as an empty one (a killed first landing leaves none): an empty
        // private database, and nothing is created where the lab would be.
        let (store, copy) = if root.join(DB_FILE).exists() || root.join(RESETTING).exists() {
            (open_for_reading(root)?, None)
        } else {
            let dir = private_dir()?;
            (Store::open(&dir.path().join(DB_FILE))?, Some(dir))
        };
        Ok(Lab::with(root, store, None, copy))
    }

    fn with(root: &Path, store: Store, lock: Option<File>, copy: Option<tempfile::TempDir>) -> Lab {
        Lab {
            root: root.to_path_buf(),
            store,
            gold_text: Default::default(),
            snapshot_ids: Default::default(),
            key_collisions: Default::default(),
            gold_pair: Default::default(),
            recounts_not_kept: Default::default(),
            basket_key_bits: 64,
            key_rows_per_slice: None,
            lock,
            copy,
        }
    }

    /// Whether this lab was opened for writing (or has begun writing since).
    pub fn is_writer(&self) -> bool {
        self.lock.is_some()
    }

    /// A reader becomes the writer: it takes the lock (failing at once, with who holds it, if
    /// another process writes), reopens the database for writing (waiting for other readers
    /// quietly) and recovers what a killed command left. `end_writing` turns it back.
    pub fn begin_writing(&mut self) -> Result<()> {
        if self.is_writer() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.root).wrap_err_with(|| format!("creating lab directory {}", self.root.display()))?;
        let lock = take_lock(&self.root)?;
        self.forget();
        self.store = Store::closed()?;
        self.copy = None;
        let opened = (|| {
            if self.root.join(RESETTING).exists() {
                empty(&self.root)?;
            }
            open_for_writing(&self.root, false)
        })();
        match opened {
            Ok(store) => self.store = store,
            Err(e) => {
                // Still a reader, as before.
                drop(lock);
                self.store = open_for_reading(&self.root)?;
                return Err(e);
            }
        }
        self.lock = Some(lock);
        recovery::recover(self).wrap_err("recovering an interrupted landing")?;
        Ok(())
    }

    /// Whether this lab may write its derived caches: as the writer, or on a private copy.
    pub fn may_write_caches(&self) -> bool {
        self.is_writer() || self.copy.is_some()
    }

    /// A reader that cannot write the lab (it is read-only, or another process is writing)
    /// reads a private copy of its database from now on, on which the caches the reports need
    /// are computed: nothing of the lab changes. The copy is taken while this reader's own
    /// connection keeps writers out, so it is whole.
    pub fn read_private_copy(&mut self) -> Result<()> {
        if self.may_write_caches() {
            return Ok(());
        }
        let dir = private_dir()?;
        for name in [DB_FILE.to_string(), format!("{DB_FILE}.wal")] {
            let from = self.root.join(&name);
            if from.exists() {
                let to = dir.path().join(&name);
                std::fs::copy(&from, &to).wrap_err_with(|| format!("copying {}", from.display()))?;
                // The copy is this process's to write, whatever the lab's own files allow.
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600))?;
            }
        }
        self.forget();
        self.store = Store::closed()?;
        self.store = Store::open(&dir.path().join(DB_FILE))?;
        self.copy = Some(dir);
        Ok(())
    }

    /// A writer becomes a reader again: the database is closed (checkpointed), reopened for
    /// reading, and the lock let go, so other processes may read and write.
    pub fn end_writing(&mut self) -> Result<()> {
        if !self.is_writer() {
            return Ok(());
        }
        self.forget();
        self.store = Store::closed()?;
        self.lock = None;
        self.store = open_for_reading(&self.root)?;
        Ok(())
    }

    /// The pid in the write lock when another process holds it now (`Some(None)`: held, pid
    /// unknown); None when no one writes. A reader asks, to let go before a writer waits long.
    pub fn writer_elsewhere(&self) -> Option<Option<u32>> {
        if self.is_writer() {
            return None;
        }
        writer_of(&self.root)
    }

    /// A reader lets go of the database (while another process writes it); `reopen` reads
    /// again. Until then every statement fails.
    pub fn let_go(&mut self) -> Result<()> {
        self.forget();
        self.store = Store::closed()?;
        self.copy = None;
        Ok(())
    }

    /// Reads the lab again after `let_go`, as it is now.
    pub fn reopen(&mut self) -> Result<()> {
        self.forget();
        self.store = Store::closed()?;
        self.copy = None;
        self.store = open_for_reading(&self.root)?;
        Ok(())
    }

    /// Forgets what this lab remembers about its database between statements.
    fn forget(&self) {
        self.gold_text.replace(None);
        self.gold_pair.replace(None);
        self.snapshot_ids.set(None);
        self.key_collisions.set(None);
        self.recounts_not_kept.borrow_mut().clear();
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
        self.forget();
        // Close the database file before removing it.
        self.store = Store::closed()?;
        let marker = self.root.join(RESETTING);
        std::fs::File::create(&marker).and_then(|f| f.sync_all()).wrap_err_with(|| format!("writing {}", marker.display()))?;
        crash_point("reset:marked");
        empty(&self.root)?;
        self.store = open_for_writing(&self.root, false)?;
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

    /// Whether a landing committed and has not put all its files in place yet (`recovery`): the
    /// raw zone is behind bronze until the next command that writes finishes it.
    pub fn mid_landing(&self) -> Result<bool> {
        recovery::pending(self)
    }

    /// True when nothing has landed yet: no retail file and no model (a lab that holds a model
    /// is never filled with the sample, nor emptied without asking).
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.store.files_count()? == 0 && self.store.model_definition()?.is_none())
    }

    /// Whether any file of `upload` has landed.
    pub fn is_landed(&self, upload: chrono::NaiveDate) -> Result<bool> {
        Ok(self.store.upload_files_count(upload)? > 0)
    }

    pub fn stores(&self) -> Result<crate::raw::StoreTable> {
        store_table(self.store.stores()?)
    }

    /// The stores as they were when snapshot `snapshot_id` was recorded (before later corrections).
    pub fn stores_as_of(&self, snapshot_id: i64) -> Result<crate::raw::StoreTable> {
        store_table(self.store.stores_as_of(snapshot_id)?)
    }
}

/// The lab's store rows as the parser reads them (each zone by name).
fn store_table(rows: Vec<crate::store::StoreRow>) -> Result<crate::raw::StoreTable> {
    let mut stores = Vec::new();
    for s in rows {
        let timezone = crate::tz::parse_zone(&s.timezone).map_err(|e| eyre!(e))?;
        stores.push(crate::raw::Shop { store_id: s.store_id, country: s.country, timezone, currency: s.currency });
    }
    Ok(crate::raw::StoreTable::new(stores))
}

/// What a report says of a lab caught mid-landing.
pub const MID_LANDING: &str = "the lab is mid-landing: a landing committed and its files are not all in the raw zone yet; \
     the next command that writes the lab finishes it (once what stopped it is mended)";

/// The marker of a reset in progress.
const RESETTING: &str = "recount.resetting";

/// What recount may find in a folder that is not a lab yet and still make one there: its own
/// lock, left by a command that stopped before it wrote the database, and a warehouse mirror's
/// state (`warehouse::mirror` writes it into the mirror's new folder first).
const MAY_PRECEDE_A_LAB: [&str; 3] = [LOCK_FILE, "warehouse-state", "warehouse-commits"];

/// A lab is made only in a new or empty folder, or opened where one already is: a `--lab` that
/// names a folder of the user's own files is refused, naming it, before anything is written
/// there. A reset or a demo then never empties a folder recount did not make.
fn refuse_foreign_folder(root: &Path) -> Result<()> {
    if exists(root) {
        return Ok(());
    }
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(eyre!("{} is a file, not a recount lab: --lab names a folder", root.display()));
        }
        Err(e) => return Err(e).wrap_err_with(|| format!("reading {}", root.display())),
    };
    for entry in entries {
        let name = entry.wrap_err_with(|| format!("reading {}", root.display()))?.file_name();
        if !MAY_PRECEDE_A_LAB.iter().any(|m| name == *m) {
            return Err(eyre!(
                "{} is not a recount lab (it holds {} and no {DB_FILE}); recount makes a lab only in a new or empty folder \
                 and never writes or deletes in a folder of other files: name another --lab",
                root.display(),
                crate::sanitize::for_terminal(&name.to_string_lossy())
            ));
        }
    }
    Ok(())
}

/// Removes what DuckDB spilled to the lab's `recount.spill/` (`store::SPILL_DIR`), if anything.
fn remove_spill(root: &Path) -> Result<()> {
    let spill = root.join(crate::store::SPILL_DIR);
    match std::fs::remove_dir_all(&spill) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).wrap_err_with(|| format!("removing {}", spill.display())),
        _ => Ok(()),
    }
}

/// Removes the database and the raw zone, then the reset marker.
fn empty(root: &Path) -> Result<()> {
    remove_spill(root)?;
    for name in [DB_FILE.to_string(), format!("{DB_FILE}.wal"), recovery::STAGING.to_string()] {
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

/// Opens the database for writing. Readers (an explorer, a report) may hold it: they are waited
/// for, up to `READERS_WAIT`, saying so on stderr after a second when `say` allows.
fn open_for_writing(root: &Path, say: bool) -> Result<Store> {
    let started = std::time::Instant::now();
    let mut said = false;
    loop {
        match Store::open(&root.join(DB_FILE)) {
            Err(e) if matches!(lab_error(&e), Some(LabError::DatabaseInUse { .. })) && started.elapsed() < READERS_WAIT => {
                if say && !said && started.elapsed() > std::time::Duration::from_secs(1) {
                    eprintln!("note: {}; waiting for it to let go", crate::sanitize::for_terminal(&e.to_string()));
                    said = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// A directory for a reader's private database, removed when the reader lets go of it.
fn private_dir() -> Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix("recount-read-").tempdir().wrap_err("making a directory for a private copy of the lab")
}

/// Opens the database for reading, once no writer is at work (waiting `LOCK_WAIT` for one).
fn open_for_reading(root: &Path) -> Result<Store> {
    let db = root.join(DB_FILE);
    if root.join(RESETTING).exists() {
        return Err(eyre!(LabError::NeedsWriter("a reset was interrupted; the next writing command finishes it".into())));
    }
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        let held = writer_of(root);
        let opened = if held.is_none() { Some(Store::open_read(&db)) } else { None };
        match opened {
            Some(Err(e)) if !matches!(lab_error(&e), Some(LabError::DatabaseInUse { .. })) => return Err(e),
            Some(Ok(store)) => return Ok(store),
            // A writer holds the lock, or took the database between our look and our open.
            _ if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(50)),
            _ => {
                return Err(eyre!(LabError::LockHeld {
                    lab: root.to_path_buf(),
                    pid: held.flatten().or_else(|| writer_of(root).flatten())
                }));
            }
        }
    }
}

/// Whether another process holds the lab's write lock now, and its pid if it wrote one.
fn writer_of(root: &Path) -> Option<Option<u32>> {
    let path = root.join(LOCK_FILE);
    // No lock file (a copied lab) or none we may open: no writer we could wait for.
    let file = std::fs::File::open(&path).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            // A writer writes its pid just after taking the lock (`take_lock`): a read in between
            // finds the file empty, and the explorer named "another recount process" instead of
            // the writer (once in four runs of tests/readers.rs on a loaded machine). Read again
            // for a moment before giving up on the pid.
            for _ in 0..PID_READS {
                if let Some(pid) = std::fs::read_to_string(&path).ok().and_then(|t| t.trim().parse().ok()) {
                    return Some(Some(pid));
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Some(None)
        }
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// How many times `writer_of` reads a held lock's pid, 5 ms apart, before it calls the writer
/// unnamed.
const PID_READS: usize = 20;

/// Whether this process holds a lab's write lock now (or held one it has not let go of).
static WRITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process has taken a lab's write lock: a command cut short now leaves work for the
/// next command to finish.
pub fn writing_now() -> bool {
    WRITING.load(std::sync::atomic::Ordering::Relaxed)
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
    WRITING.store(true, std::sync::atomic::Ordering::Relaxed);
    Ok(file)
}

/// Puts `bytes`, which are `existing`'s, at `path`: a hard link to `existing` where the file
/// system has them, else a copy. A re-derived or re-read file version has the bytes of the version
/// before it, and the raw zone never writes into a file, so the two names keep the same bytes.
pub(crate) fn link_or_write(existing: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::hard_link(existing, path).or_else(|_| std::fs::write(path, bytes))
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
