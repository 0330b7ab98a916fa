//! model_mirror.sql: a model's warehouse read into a model lab (crates/spark/src/warehouse/model_mirror.rs),
//! and the recount of its bronze, since a mirror keeps no raw bytes.

use super::model::ModelFile;
use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::Result;
use duckdb::named_params;

row! { pub struct RecordsSize { pub records: i64, pub id_bytes: i64 } }
row! {
    /// One current record of bronze, as the recount of a mirror reads it.
    pub struct BronzeRecord {
        pub entity_key: String, pub event_id: String, pub arrival_ns: i64, pub file_rank: i64, pub line: i32,
        pub business_date: NaiveDate,
        pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
    }
}

statements! {
    IDS_STAGE: Exec = model_mirror::IDS_STAGE;
    ID_INSERT: Exec = model_mirror::ID_INSERT;
    RECORDS_LOAD: Exec = model_mirror::RECORDS_LOAD;
    FILE_INSERT: Exec = model_mirror::FILE_INSERT;
    DIMENSION_INSERT: Exec = model_mirror::DIMENSION_INSERT;
    SKIPPED_INSERT: Exec = model_mirror::SKIPPED_INSERT;
    SNAPSHOT_TIME: Exec = model_mirror::SNAPSHOT_TIME;
    RECORDS_SIZE: Query<RecordsSize> = model_mirror::RECORDS_SIZE;
    RECOUNT_RECORDS: Query<BronzeRecord> = model_mirror::RECOUNT_RECORDS;
    NAIVE_LOAD: Exec = model_mirror::NAIVE_LOAD;
}

impl Store {
    /// How many current records bronze holds, and their ids' bytes: the recount's passes.
    pub fn model_records_size(&self) -> Result<RecordsSize> {
        RECORDS_SIZE.one(self, &[])
    }

    /// Calls `f` with each current record of bronze whose key falls in pass `pass` of `passes`.
    pub fn model_bronze_records(&self, passes: u64, pass: u64, f: impl FnMut(BronzeRecord) -> Result<()>) -> Result<()> {
        RECOUNT_RECORDS.each(self, named_params! { "passes": passes, "pass": pass }, f)
    }
}

impl Tx<'_> {
    /// The stage of every file version's id, before any record loads.
    pub fn model_mirror_ids(&mut self, files: &[ModelFile]) -> Result<()> {
        self.exec("staging the file versions", &IDS_STAGE, &[])?;
        for f in files {
            let p = named_params! { "file_id": f.file_id, "upload_date": f.upload_date, "file": f.file, "version": f.version };
            self.exec("staging a file version", &ID_INSERT, p)?;
        }
        Ok(())
    }
    /// One data file of the warehouse's records, under the staged ids.
    pub fn model_mirror_records(&mut self, path: &str) -> Result<usize> {
        self.exec(&format!("reading {path}"), &RECORDS_LOAD, named_params! { "path": path })
    }
    pub fn model_mirror_file(&mut self, f: &ModelFile, landed_at: NaiveDateTime) -> Result<()> {
        let p = named_params! {
            "file_id": f.file_id, "file": f.file, "upload_date": f.upload_date, "version": f.version, "md5": f.md5,
            "records": f.records, "quarantined": f.quarantined, "landed_at": landed_at,
        };
        self.exec("recording a file version", &FILE_INSERT, p).map(|_| ())
    }
    pub fn model_mirror_dimension(&mut self, version: i32, md5: &str, text: &str, landed_at: NaiveDateTime) -> Result<()> {
        let p = named_params! { "version": version, "md5": md5, "text": text, "landed_at": landed_at };
        self.exec("keeping a dimension version", &DIMENSION_INSERT, p).map(|_| ())
    }
    pub fn model_mirror_skipped(&mut self, uploads: &[NaiveDate], dates: &[NaiveDate], at: NaiveDateTime) -> Result<()> {
        let p = named_params! { "uploads": super::date_list(uploads), "dates": super::date_list(dates), "skipped_at": at };
        self.exec("recording a skipped run", &SKIPPED_INSERT, p).map(|_| ())
    }
    /// One data file of v1's appends, as Spark wrote them.
    pub fn model_mirror_naive(&mut self, path: &str) -> Result<usize> {
        self.exec(&format!("reading {path}"), &NAIVE_LOAD, named_params! { "path": path })
    }
    /// A replayed snapshot's time: the warehouse's commit's.
    pub fn model_mirror_time(&mut self, snapshot_id: i64, at: NaiveDateTime) -> Result<()> {
        self.exec("dating a snapshot", &SNAPSHOT_TIME, named_params! { "snapshot_id": snapshot_id, "created_at": at }).map(|_| ())
    }
}
