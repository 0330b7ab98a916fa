//! schema.sql: the lab's tables, views and macros, and its layout.

use super::{Batch, Exec, Query, Store, row, statements};
use crate::error::LabError;
use color_eyre::eyre::{Result, WrapErr, eyre};

/// The layout of the lab's tables. 2: bronze keeps a file id, per-file cells and split baskets.
/// 3: silver keeps every version as pointers to bronze rows (`silver.versions`). 4: bronze keeps
/// a 64-bit key of each basket_id, and the keys that collide. 5: gold is a view of the newest
/// version of each date in `audit.gold_history`. 6: the rows a version supersedes are counted as
/// replaced, not deleted, and raw files are versioned (corrections); 5 is migrated in place.
pub const LAB_FORMAT: i32 = 6;

row! {
    pub struct OldLayout { pub layout: i32 }
}

row! {
    pub struct Format { pub format: Option<i32>, pub files: i64 }
}

row! {
    pub struct Tables { pub tables: i64 }
}

statements! {
    CREATE: Batch = schema::CREATE;
    OLD_LAYOUT: Query<OldLayout> = schema::OLD_LAYOUT;
    HAS_FORMAT: Query<Tables> = schema::HAS_FORMAT;
    FORMAT: Query<Format> = schema::FORMAT;
    FORMAT_INSERT: Exec = schema::FORMAT_INSERT;
    MIGRATE_5_TO_6: Batch = schema::MIGRATE_5_TO_6;
}

impl Store {
    /// Session settings, the schema and the landing's table function: nothing is installed
    /// behind the lab's back either.
    pub(super) fn prepare(&self) -> Result<()> {
        // Checkpoints are taken when a command's lab closes, not every 16 MB of WAL: a backfill
        // otherwise rewrote the same row groups many times over (docs/performance.md).
        self.conn
            .execute_batch("SET autoinstall_known_extensions = false; SET checkpoint_threshold = '1GB';")
            .wrap_err("configuring DuckDB")?;
        let old = OLD_LAYOUT.one(self, &[])?.layout;
        if old > 0 {
            return Err(eyre!(LabError::Layout { found: old, reads: LAB_FORMAT }));
        }
        // A layout-5 lab is migrated before the schema's views, which read the new columns.
        if HAS_FORMAT.one(self, &[])?.tables > 0 && FORMAT.one(self, &[])?.format == Some(5) {
            MIGRATE_5_TO_6.run(self).wrap_err("migrating the lab from layout 5 to 6")?;
        }
        CREATE.run(self).wrap_err("creating the lab schema")?;
        self.conn.set_prepared_statement_cache_capacity(128);
        self.conn.register_table_function::<crate::lake::land::ParseScan>("recount_parse").wrap_err("registering the landing's parser")?;
        let Format { format, files } = FORMAT.one(self, &[])?;
        match format {
            Some(LAB_FORMAT) => {}
            None if files == 0 => {
                FORMAT_INSERT.run(self, duckdb::named_params! { "format": LAB_FORMAT })?;
            }
            other => return Err(eyre!(LabError::Layout { found: other.unwrap_or(1), reads: LAB_FORMAT })),
        }
        Ok(())
    }
}
