//! mirror.sql: a warehouse's Parquet files read into a new lab-shaped database (crates/spark/crates/spark/src/warehouse/).

use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::{Result, WrapErr};
use duckdb::named_params;

row! {
    pub struct Unmatched { pub rows: i64 }
}

row! {
    pub struct IcebergOf { pub iceberg_id: i64 }
}

row! {
    pub struct SkippedRow { pub properties: String }
}

row! {
    /// One event of a current file version, as the independent recount reads it.
    pub struct RecountEvent {
        pub basket_id: String,
        pub event_id: String,
        pub uploaded_at_ns: i64,
        pub upload_day: i32,
        pub file: String,
        pub line: i64,
        pub business_day: i32,
        pub store_id: String,
        pub country: String,
        pub currency: String,
        pub revenue_minor: i64,
    }
}

statements! {
    STAGE: Exec = mirror::STAGE;
    STAGE_CHANGES: Exec = mirror::STAGE_CHANGES;
    STAGE_FILES: Exec = mirror::STAGE_FILES;
    STAGE_BRONZE: Exec = mirror::STAGE_BRONZE;
    STAGE_SILVER: Exec = mirror::STAGE_SILVER;
    STAGE_GOLD: Exec = mirror::STAGE_GOLD;
    STAGE_NAIVE: Exec = mirror::STAGE_NAIVE;
    STAGE_SKIPPED: Exec = mirror::STAGE_SKIPPED;
    LOAD_SKIPPED: Exec = mirror::LOAD_SKIPPED;
    SKIPPED_PROPERTIES: Query<SkippedRow> = mirror::SKIPPED_PROPERTIES;
    LOAD_NAIVE: Exec = mirror::LOAD_NAIVE;
    NAIVE_VERSION: Exec = mirror::NAIVE_VERSION;
    LOAD_STORES: Exec = mirror::LOAD_STORES;
    LOAD_CHANGES: Exec = mirror::LOAD_CHANGES;
    LOAD_FILES: Exec = mirror::LOAD_FILES;
    LOAD_BRONZE: Exec = mirror::LOAD_BRONZE;
    LOAD_SILVER: Exec = mirror::LOAD_SILVER;
    LOAD_GOLD: Exec = mirror::LOAD_GOLD;
    FILE_IDS: Exec = mirror::FILE_IDS;
    RAW_FILES: Exec = mirror::RAW_FILES;
    LANDINGS: Exec = mirror::LANDINGS;
    SUPERSESSIONS: Exec = mirror::SUPERSESSIONS;
    PARTITIONS: Exec = mirror::PARTITIONS;
    STORES: Exec = mirror::STORES;
    STORE_CHANGES: Exec = mirror::STORE_CHANGES;
    STORE_ROWS: Exec = mirror::STORE_ROWS;
    EVENTS: Exec = mirror::EVENTS;
    QUARANTINE: Exec = mirror::QUARANTINE;
    CELLS: Exec = mirror::CELLS;
    GOLD_VERSION: Exec = mirror::GOLD_VERSION;
    SILVER_VERSION: Exec = mirror::SILVER_VERSION;
    UNMATCHED_SILVER: Query<Unmatched> = mirror::UNMATCHED_SILVER;
    WINDOW: Exec = mirror::WINDOW;
    RECORD_TOTALS: Exec = mirror::RECORD_TOTALS;
    RECORD_TIME: Exec = mirror::RECORD_TIME;
    FROM_SNAPSHOTS: Exec = mirror::FROM_SNAPSHOTS;
    STORE_CHANGE_SNAPSHOTS: Exec = mirror::STORE_CHANGE_SNAPSHOTS;
    RECOUNT_EVENTS: Query<RecountEvent> = mirror::RECOUNT_EVENTS;
    RECOUNT_EVENTS_AS_OF: Query<RecountEvent> = mirror::RECOUNT_EVENTS_AS_OF;
    ICEBERG_TABLE: Exec = mirror::ICEBERG_TABLE;
    ICEBERG_INSERT: Exec = mirror::ICEBERG_INSERT;
    ICEBERG_OF: Query<IcebergOf> = mirror::ICEBERG_OF;
}

/// A table of the warehouse read whole at its current snapshot.
#[derive(Debug, Clone, Copy)]
pub enum Whole {
    Stores,
    StoreChanges,
    RawFiles,
    BronzeEvents,
}

impl Whole {
    pub const ALL: [Whole; 4] = [Whole::Stores, Whole::StoreChanges, Whole::RawFiles, Whole::BronzeEvents];

    /// The table's name in the warehouse.
    pub fn table(self) -> &'static str {
        match self {
            Whole::Stores => "stores",
            Whole::StoreChanges => "store_changes",
            Whole::RawFiles => "raw_files",
            Whole::BronzeEvents => "bronze_events",
        }
    }

    fn load(self) -> &'static Exec {
        match self {
            Whole::Stores => &LOAD_STORES,
            Whole::StoreChanges => &LOAD_CHANGES,
            Whole::RawFiles => &LOAD_FILES,
            Whole::BronzeEvents => &LOAD_BRONZE,
        }
    }
}

impl Store {
    /// The Iceberg snapshot gold was at after the mirror's snapshot `snapshot_id` (None: not a
    /// mirror's snapshot).
    pub fn iceberg_of(&self, snapshot_id: i64) -> Result<Option<i64>> {
        Ok(ICEBERG_OF.optional(self, named_params! { "snapshot_id": snapshot_id })?.map(|r| r.iceberg_id))
    }

    /// The properties of each run that wrote nothing, as Iceberg snapshot `ice` of the log holds them.
    pub fn skipped_properties(&self, ice: i64) -> Result<Vec<String>> {
        Ok(SKIPPED_PROPERTIES.all(self, named_params! { "ice": ice })?.into_iter().map(|r| r.properties).collect())
    }

    /// Every event of a current file version (as of snapshot `as_of`, None: now), for the
    /// independent recount.
    pub fn recount_events(&self, as_of: Option<i64>, mut f: impl FnMut(RecountEvent)) -> Result<()> {
        let each = |e| {
            f(e);
            Ok(())
        };
        match as_of {
            None => RECOUNT_EVENTS.each(self, &[], each),
            Some(s) => RECOUNT_EVENTS_AS_OF.each(self, named_params! { "snapshot_id": s }, each),
        }
    }
}

impl Tx<'_> {
    /// The stage tables, empty, and the mirror's own table of Iceberg ids.
    pub fn mirror_stage(&mut self) -> Result<()> {
        for s in
            [&STAGE, &STAGE_CHANGES, &STAGE_FILES, &STAGE_BRONZE, &STAGE_SILVER, &STAGE_GOLD, &STAGE_NAIVE, &STAGE_SKIPPED, &ICEBERG_TABLE]
        {
            self.exec("making the mirror's stage", s, &[])?;
        }
        Ok(())
    }

    /// One data file of a table read whole into its stage.
    pub fn mirror_load(&mut self, table: Whole, path: &str) -> Result<()> {
        self.exec(&format!("reading {path}"), table.load(), named_params! { "path": path }).map(|_| ())
    }

    /// One data file of silver or gold as Iceberg snapshot `ice` holds the dates `dates` (ISO
    /// dates joined by commas).
    pub fn mirror_load_version(&mut self, gold: bool, path: &str, ice: i64, dates: &str) -> Result<()> {
        let load = if gold { &LOAD_GOLD } else { &LOAD_SILVER };
        self.exec(&format!("reading {path}"), load, named_params! { "path": path, "ice": ice, "dates": dates }).map(|_| ())
    }

    /// The rows v1 appended in Iceberg snapshot `ice`, from one of its data files.
    pub fn mirror_load_naive(&mut self, path: &str, ice: i64) -> Result<()> {
        self.exec(&format!("reading {path}"), &LOAD_NAIVE, named_params! { "path": path, "ice": ice }).map(|_| ())
    }

    /// The log rows of runs that wrote nothing, from one data file of Iceberg snapshot `ice`.
    pub fn mirror_load_skipped(&mut self, path: &str, ice: i64) -> Result<()> {
        self.exec(&format!("reading {path}"), &LOAD_SKIPPED, named_params! { "path": path, "ice": ice }).map(|_| ())
    }

    /// v1's rows of Iceberg snapshot `ice` as the mirror's snapshot `snapshot_id`; how many.
    pub fn mirror_naive_version(&mut self, snapshot_id: i64, ice: i64) -> Result<i64> {
        let n = self.exec("v1's rows", &NAIVE_VERSION, named_params! { "snapshot_id": snapshot_id, "ice": ice })?;
        Ok(n as i64)
    }

    /// The stage laid out as the lab's raw catalogue and bronze.
    pub fn mirror_lay_out(&mut self) -> Result<()> {
        for (what, s) in [
            ("the file versions' ids", &FILE_IDS),
            ("the file versions", &RAW_FILES),
            ("the landings", &LANDINGS),
            ("the supersessions", &SUPERSESSIONS),
            ("the partitions", &PARTITIONS),
            ("the stores", &STORES),
            ("the store corrections", &STORE_CHANGES),
            ("bronze's store rows", &STORE_ROWS),
            ("bronze's events", &EVENTS),
            ("the quarantined lines", &QUARANTINE),
            ("bronze's cells", &CELLS),
        ] {
            self.exec(&format!("laying out {what}"), s, &[])?;
        }
        // Split baskets, colliding keys and keys with several copies, as a first landing finds them.
        self.find_split_baskets_and_collisions(&crate::key_search::LandedRows::all_from(1), None)
    }

    /// Silver's and gold's rows that Iceberg snapshot `ice` wrote, as snapshot `snapshot_id`.
    /// Fails when a silver row points at a file version bronze does not hold.
    pub fn mirror_version(&mut self, snapshot_id: i64, ice: i64) -> Result<()> {
        let unmatched = UNMATCHED_SILVER.one(self.store, named_params! { "ice": ice })?.rows;
        if unmatched > 0 {
            color_eyre::eyre::bail!("{unmatched} silver row(s) of Iceberg snapshot {ice} point at file versions raw_files does not record");
        }
        let params = named_params! { "snapshot_id": snapshot_id, "ice": ice };
        self.exec("gold's version", &GOLD_VERSION, params)?;
        self.exec("silver's version", &SILVER_VERSION, params).map(|_| ())
    }

    /// A date's kept window (a reopening's) in snapshot `snapshot_id`.
    pub fn mirror_window(&mut self, snapshot_id: i64, d: NaiveDate, late_days: u32) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "business_date": d, "late_days": late_days };
        self.exec("a kept window", &WINDOW, params).map(|_| ())
    }

    /// The record's figures, known once its dates are recorded.
    pub fn mirror_record_totals(&mut self, snapshot_id: i64, totals: RecordTotals<'_>) -> Result<()> {
        let params = named_params! {
            "snapshot_id": snapshot_id, "rows": totals.gold_rows, "md5": totals.gold_md5,
            "rows_replaced": totals.rows_replaced, "rows_added": totals.rows_added,
        };
        self.exec("the snapshot's figures", &RECORD_TOTALS, params).map(|_| ())
    }

    /// Snapshot `snapshot_id` left gold at Iceberg snapshot `iceberg_id`.
    pub fn mirror_iceberg_id(&mut self, snapshot_id: i64, iceberg_id: i64) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "iceberg_id": iceberg_id };
        self.exec("the snapshot's Iceberg id", &ICEBERG_INSERT, params).map(|_| ())
    }

    /// When the warehouse made the snapshot (a rollback's record is written now).
    pub fn mirror_record_time(&mut self, snapshot_id: i64, at: NaiveDateTime) -> Result<()> {
        self.exec("the snapshot's time", &RECORD_TIME, named_params! { "snapshot_id": snapshot_id, "created_at": at }).map(|_| ())
    }

    /// Which snapshot first sees each correction, and which rebuilt each store correction
    /// (`ids`: Iceberg id=mirror id, joined by commas).
    pub fn mirror_link_snapshots(&mut self, ids: &str) -> Result<()> {
        self.exec("the corrections' first snapshots", &FROM_SNAPSHOTS, &[])?;
        self.exec("the store corrections' snapshots", &STORE_CHANGE_SNAPSHOTS, named_params! { "ids": ids })
            .wrap_err("linking store corrections to their rebuilds")
            .map(|_| ())
    }
}

/// A mirrored snapshot's figures, set once its dates are recorded.
pub struct RecordTotals<'a> {
    pub gold_rows: i64,
    pub gold_md5: &'a str,
    pub rows_replaced: i64,
    pub rows_added: i64,
}
