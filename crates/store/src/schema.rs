//! schema.sql: the lab's tables, views and macros, and its layout.

use super::{Batch, Exec, Query, Store, row, statements};
use crate::error::LabError;
use color_eyre::eyre::{Result, WrapErr, eyre};

/// The layout of the lab's tables. 2: bronze keeps a file id, per-file cells and split baskets.
/// 3: silver keeps every version as pointers to bronze rows (`silver.versions`). 4: bronze keeps
/// a 64-bit key of each basket_id, and the keys that collide. 5: gold is a view of the newest
/// version of each date in `audit.gold_history`. 6: the rows a version supersedes are counted as
/// replaced, not deleted, and raw files are versioned (corrections); 5 is migrated in place.
/// 7: bronze lists the basket keys with more than one copy (`bronze.multi_copies`); 6 is
/// migrated in place. 8: bronze's events carry their store row's number (`bronze.event_rows`,
/// `bronze.store_rows`), and `bronze.events` is a view with the strings; 5 to 7 are migrated in
/// place.
pub const LAB_FORMAT: i32 = 8;

row! {
    pub struct OldLayout { pub layout: i32 }
}

row! {
    pub struct LayoutRow { pub format: Option<i32>, pub files: i64 }
}

row! {
    pub struct Tables { pub tables: i64 }
}

row! {
    pub struct Digest { pub digest: Option<String> }
}

row! {
    pub struct Current { pub format: Option<i32>, pub digest: Option<String> }
}

statements! {
    CREATE: Batch = schema::CREATE;
    AS_OF_CREATE: Batch = as_of::CREATE;
    CURRENT: Query<Current> = schema::CURRENT;
    SCHEMA_DIGEST: Query<Digest> = schema::SCHEMA_DIGEST;
    SCHEMA_DIGEST_CLEAR: Exec = schema::SCHEMA_DIGEST_CLEAR;
    SCHEMA_DIGEST_INSERT: Exec = schema::SCHEMA_DIGEST_INSERT;
    OLD_LAYOUT: Query<OldLayout> = schema::OLD_LAYOUT;
    HAS_FORMAT: Query<Tables> = schema::HAS_FORMAT;
    FORMAT: Query<LayoutRow> = schema::FORMAT;
    FORMAT_INSERT: Exec = schema::FORMAT_INSERT;
    FORMAT_SET: Exec = schema::FORMAT_SET;
    MIGRATE_5_TO_6: Batch = schema::MIGRATE_5_TO_6;
    EVENTS_IS_TABLE: Query<Tables> = schema::EVENTS_IS_TABLE;
    SET_EVENTS_ASIDE: Exec = schema::SET_EVENTS_ASIDE;
    MIGRATE_STORE_ROWS: Batch = schema::MIGRATE_STORE_ROWS;
}

impl Store {
    /// Session settings, the schema and the landing's table function: nothing is installed
    /// behind the lab's back either. True when the schema was created or updated. `fresh`: the
    /// database file did not exist before this connection.
    pub(super) fn prepare(&self, fresh: bool) -> Result<bool> {
        // Checkpoints are taken when a command's lab closes, not every 16 MB of WAL: a backfill
        // otherwise rewrote the same row groups many times over.
        self.conn
            .execute_batch("SET autoinstall_known_extensions = false; SET checkpoint_threshold = '1GB';")
            .wrap_err("configuring DuckDB")?;
        // A lab this build's `create` already brought up to date (its layout, and the digest
        // written once `create` had run whole) is not created again: each of its statements
        // committed on its own, nine fsyncs on every writing command's open. A new file is not
        // asked: the read would fail, and DuckDB keeps the memory of a failed statement for the
        // rest of the process, which nearly doubled a new lab's landing's peak.
        let current = !fresh && self.is_current();
        if !current {
            self.bring_up_to_date(fresh)?;
        }
        self.conn.set_prepared_statement_cache_capacity(128);
        self.conn
            .register_table_function_with_extra_info::<super::scan::ParseScan, _>("recount_parse", &self.scans)
            .wrap_err("registering the landing's parser")?;
        self.conn
            .register_table_function_with_extra_info::<super::scan::ParseScan, _>("recount_rows", &self.scans)
            .wrap_err("registering the scan of a write's rows")?;
        Ok(!current)
    }

    /// Whether the lab's layout is this build's and its schema this build's `create` (one read;
    /// a lab that lacks the tables it reads is not, and the failed read costs memory).
    fn is_current(&self) -> bool {
        CURRENT.one(self, &[]).is_ok_and(|c| c.format == Some(LAB_FORMAT) && c.digest.as_deref() == Some(schema_digest().as_str()))
    }

    /// Refuses an old layout, migrates layouts 5 to 7, creates the schema in one transaction
    /// and records its digest, and records the layout of a new lab. A new file (`fresh`) holds no
    /// layout to tell apart, and the probes of the catalog were a good part of a new lab's open.
    fn bring_up_to_date(&self, fresh: bool) -> Result<()> {
        let old = if fresh { 0 } else { OLD_LAYOUT.one(self, &[])?.layout };
        if old > 0 {
            return Err(eyre!(LabError::Layout { found: old, reads: LAB_FORMAT }));
        }
        let has_format = !fresh && HAS_FORMAT.one(self, &[])?.tables > 0;
        // The layout the lab records before this open (None: none yet).
        let mut format = if has_format { FORMAT.one(self, &[])?.format } else { None };
        // A layout-5 lab is migrated before the schema's views, which read the new columns.
        if format == Some(5) {
            MIGRATE_5_TO_6.run(self).wrap_err("migrating the lab from layout 5 to 6")?;
            format = Some(6);
        }
        // Events kept as one table of strings (layouts 5 to 7) are set aside, then numbered into
        // layout 8's tables once `create` has made them, in the same transaction. A layout-6 lab
        // may have them numbered already (its keys' listing below had not committed), so the
        // catalog is asked; a lab of this layout or none is not.
        let events_table = matches!(format, Some(5..LAB_FORMAT)) && EVENTS_IS_TABLE.one(self, &[])?.tables > 0;
        // One transaction, so one commit to sync, not one a statement (about 40 of them).
        let tx = super::Tx::begin(self, None)?;
        if events_table {
            SET_EVENTS_ASIDE.run(self, &[]).wrap_err("setting layout 7's events aside")?;
        }
        CREATE.run(self).wrap_err("creating the lab schema")?;
        AS_OF_CREATE.run(self).wrap_err("creating the as-of macros")?;
        if events_table {
            MIGRATE_STORE_ROWS.run(self).wrap_err("migrating bronze's events to layout 8")?;
            if format == Some(7) {
                FORMAT_SET.run(self, duckdb::named_params! { "format": LAB_FORMAT })?;
            }
        }
        tx.commit()?;
        if format == Some(6) {
            self.migrate_6().wrap_err(format!("migrating the lab from layout 6 to {LAB_FORMAT}"))?;
        }
        let digest = schema_digest();
        if SCHEMA_DIGEST.one(self, &[])?.digest.as_deref() != Some(digest.as_str()) {
            SCHEMA_DIGEST_CLEAR.run(self, &[])?;
            SCHEMA_DIGEST_INSERT.run(self, duckdb::named_params! { "digest": digest })?;
        }
        let LayoutRow { format, files } = FORMAT.one(self, &[])?;
        match format {
            Some(LAB_FORMAT) => Ok(()),
            None if files == 0 => FORMAT_INSERT.run(self, duckdb::named_params! { "format": LAB_FORMAT }).map(|_| ()),
            other => Err(eyre!(LabError::Layout { found: other.unwrap_or(1), reads: LAB_FORMAT })),
        }
    }

    /// Layout 7 lists every basket key with more than one copy: found from all of bronze by a
    /// first landing's own statements (split baskets and collisions already listed are kept
    /// once), in one transaction with the new layout's record. Bronze's events are layout 8's
    /// already (`bring_up_to_date` numbered them first).
    fn migrate_6(&self) -> Result<()> {
        let mut tx = super::Tx::begin(self, None)?;
        tx.find_split_baskets_and_collisions(&crate::key_search::LandedRows::all_from(1), None)?;
        FORMAT_SET.run(self, duckdb::named_params! { "format": LAB_FORMAT })?;
        tx.commit().map(|_| ())
    }

    /// What a reading connection sets up: nothing in the lab's file changes, so the lab must
    /// already be as this build writes it (its layout, and the views of this build's `create`).
    /// When it is not, `LabError::NeedsWriter` says why: a writer's open brings it up to date.
    pub(super) fn prepare_read(&self) -> Result<()> {
        self.conn.execute_batch("SET autoinstall_known_extensions = false;").wrap_err("configuring DuckDB")?;
        if !self.is_current() {
            return Err(self.why_not_current());
        }
        self.conn.set_prepared_statement_cache_capacity(128);
        Ok(())
    }

    /// Why a reading connection cannot read the lab as it is.
    fn why_not_current(&self) -> color_eyre::Report {
        let stale = |why: &str| eyre!(LabError::NeedsWriter(why.to_string()));
        let old = match OLD_LAYOUT.one(self, &[]) {
            Ok(o) => o.layout,
            Err(e) => return e,
        };
        if old > 0 {
            return eyre!(LabError::Layout { found: old, reads: LAB_FORMAT });
        }
        if !HAS_FORMAT.one(self, &[]).is_ok_and(|t| t.tables > 0) {
            return stale("its schema has not been created");
        }
        match FORMAT.one(self, &[]).map(|f| f.format) {
            Err(e) => e,
            Ok(Some(LAB_FORMAT)) => stale("its views were written by another build of recount"),
            Ok(Some(old @ 5..LAB_FORMAT)) => stale(&format!("its layout {old} is migrated to {LAB_FORMAT} by the next writing command")),
            Ok(None) => stale("its layout is not recorded yet"),
            Ok(Some(other)) => eyre!(LabError::Layout { found: other, reads: LAB_FORMAT }),
        }
    }
}

/// The digest of the schema's persistent part (tables, views, macros in the lab's file).
fn schema_digest() -> String {
    use md5::Digest;
    let mut h = md5::Md5::new();
    h.update(super::sql::schema::CREATE.sql.as_bytes());
    h.update(super::sql::as_of::CREATE.sql.as_bytes());
    // The schema keeps hashes DuckDB made (model.records.key_hash): a DuckDB whose hash() differs
    // must make them again, so its version is part of the digest.
    h.update(duckdb_version().as_bytes());
    super::hex(&h.finalize())
}

/// The version of the DuckDB library this build links, as DuckDB names it.
fn duckdb_version() -> String {
    // SAFETY: duckdb_library_version returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(duckdb::ffi::duckdb_library_version()) }.to_string_lossy().into_owned()
}
