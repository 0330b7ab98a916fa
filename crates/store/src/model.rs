//! model.sql: the lab of a model other than retail. A model's grain, attributes and measures sit
//! in fixed columns (`ModelCells`), so one statement serves every model; `lake::model` maps them to
//! and from the model's own names.

pub use super::records::{ATTRIBUTE_COLUMNS, GRAIN_COLUMNS, MEASURE_COLUMNS, RecordRow, RecordsBatch, RecordsBuilder, RecordsReader};
use super::{Exec, Query, Store, Tx, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use duckdb::named_params;

row! { pub struct Definition { pub name: String, pub parts: String } }
row! { pub struct SameRows { pub same: bool } }
row! { pub struct DimensionVersion { pub version: i32, pub md5: String, pub text: String } }
row! {
    /// A landed file's version.
    pub struct ModelFile {
        pub file_id: i32, pub file: String, pub upload_date: NaiveDate, pub version: i32, pub md5: String,
        pub records: i64, pub quarantined: i64,
    }
}
row! { pub struct Next { pub next: i64 } }
row! {
    /// How many business dates the lab's file versions hold.
    pub struct WrittenDates { pub dates: i64 }
}
row! {
    /// A date and grain whose measure would leave 64 bits (`measure_past_limit`): each measure's
    /// total over every copy, as text (they may pass 64 bits), and a new file of the grain.
    pub struct MeasurePastLimit {
        pub business_date: NaiveDate, pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub t1: Option<String>, pub t2: Option<String>, pub t3: Option<String>, pub t4: Option<String>, pub t5: Option<String>,
        pub t6: Option<String>, pub file: Option<String>,
    }
}
row! {
    /// A date's measures summed per the attributes asked for (`date_totals`): the others are
    /// empty; a total past 64 bits is None, and `overflows` says so.
    pub struct DateTotal {
        pub business_date: NaiveDate,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
        pub overflows: bool,
    }
}
row! { pub struct Upload { pub upload_date: NaiveDate } }
row! { pub struct RecordDate { pub business_date: NaiveDate } }
row! { pub struct Reverted { pub file_id: i32, pub reverts_to: i32, pub replaced: i32 } }
row! { pub struct UploadDate { pub upload_date: NaiveDate, pub business_date: NaiveDate, pub current: bool, pub rows: i64 } }
row! { pub struct InputHash { pub business_date: NaiveDate, pub rows: i64, pub input_hash: String } }
row! {
    pub struct ModelCurrentVersion { pub business_date: NaiveDate, pub snapshot_id: i64, pub input_hash: String, pub gold_rows: i64 }
}
row! {
    /// A gold row in the lab's columns.
    pub struct ModelCells {
        pub business_date: NaiveDate,
        pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
    }
}
row! {
    #[derive(serde::Serialize)]
    pub struct ModelSnapshotRow {
        pub snapshot_id: i64, pub operation: String, pub upload: Option<NaiveDate>, pub late_days: i32, pub files: String,
        pub dates_rewritten: i32, pub beyond_window: i64, pub gold_rows: i64, pub gold_md5: String, pub created_at: String,
    }
}
row! { #[derive(serde::Serialize)] pub struct Skipped { pub uploads: String, pub dates: String } }
row! {
    #[derive(serde::Serialize)]
    pub struct DateVersion {
        pub snapshot_id: i64, pub input_hash: String, pub gold_rows: i64, pub operation: String, pub upload: Option<NaiveDate>,
        pub files: String,
    }
}
row! { pub struct VersionAt { pub business_date: NaiveDate, pub snapshot_id: i64 } }
row! {
    /// A record of a date that arrived past its window.
    pub struct LateRecord {
        pub entity_key: String, pub business_date: NaiveDate, pub event_id: String, pub upload_date: NaiveDate, pub days_late: i64,
        pub file: String, pub version: i32, pub line: i32,
        pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
        pub counted: bool, pub recount_copy: bool,
    }
}
row! {
    /// One copy of a re-sent key, in the contract's order.
    pub struct ResentCopy {
        pub entity_key: String, pub business_date: NaiveDate, pub upload_date: NaiveDate, pub file: String, pub version: i32,
        pub line: i32, pub event_id: String, pub arrived: String,
        pub g1: Option<String>, pub g2: Option<String>, pub g3: Option<String>, pub g4: Option<String>,
        pub a1: Option<String>, pub a2: Option<String>, pub a3: Option<String>, pub a4: Option<String>,
        pub m1: Option<i64>, pub m2: Option<i64>, pub m3: Option<i64>, pub m4: Option<i64>, pub m5: Option<i64>, pub m6: Option<i64>,
        pub in_window: bool, pub same_instant: i64, pub same_message: i64,
    }
}
row! { #[derive(serde::Serialize)] pub struct LatenessBucket { pub part: Option<String>, pub days_late: i64, pub records: i64, pub keys: i64 } }
row! { pub struct KeptWindow { pub business_date: NaiveDate, pub late_days: i32 } }
row! { pub struct QuarantineRow { pub upload_date: NaiveDate, pub file: String, pub version: i32, pub line: i32, pub reason: String, pub raw_line: String } }

statements! {
    SAME_ROWS_AS_BEFORE: Query<SameRows> = model::SAME_ROWS_AS_BEFORE;
    LATE_ROWS: Query<LateRecord> = model::LATE_ROWS;
    KEPT_WINDOWS: Query<KeptWindow> = model::KEPT_WINDOWS;
    KEEP_WINDOW: Exec = model::KEEP_WINDOW;
    LATENESS: Query<LatenessBucket> = model::LATENESS;
    SILVER_ROWS: Query<Next> = model::SILVER_ROWS;
    WINDOWED: Query<ModelCells> = model::WINDOWED;
    RESENT: Query<ResentCopy> = model::RESENT;
    DEFINITION_GET: Query<Definition> = model::DEFINITION_GET;
    DEFINITION_SET: Exec = model::DEFINITION_SET;
    DIMENSION_NEWEST: Query<DimensionVersion> = model::DIMENSION_NEWEST;
    DIMENSION_VERSIONS: Query<DimensionVersion> = model::DIMENSION_VERSIONS;
    MEASURE_PAST_LIMIT: Query<MeasurePastLimit> = model::MEASURE_PAST_LIMIT;
    RECORD_DATES: Query<RecordDate> = model::RECORD_DATES;
    DIMENSION_INSERT: Exec = model::DIMENSION_INSERT;
    FILES_OF_UPLOADS: Query<ModelFile> = model::FILES_OF_UPLOADS;
    CORRECTED_FILES_OF_UPLOADS: Query<ModelFile> = model::CORRECTED_FILES_OF_UPLOADS;
    FILES_WITH_KEY: Query<ModelFile> = model::FILES_WITH_KEY;
    FILE_VERSIONS: Query<ModelFile> = model::FILE_VERSIONS;
    NEXT_FILE_ID: Query<Next> = model::NEXT_FILE_ID;
    FILES_INSERT: Exec = model::FILES_INSERT;
    REREAD_PENDING_INSERT: Exec = model::REREAD_PENDING_INSERT;
    REREAD_DATES: Query<RecordDate> = model::REREAD_DATES;
    REVERTED_VERSIONS: Query<Reverted> = model::REVERTED_VERSIONS;
    REREAD_APPLIED: Exec = model::REREAD_APPLIED;
    RECORDS_FROM_ROWS: Exec = model::RECORDS_FROM_ROWS;
    FILE_HASHES_FILL: Exec = model::FILE_HASHES_FILL;
    LANDED_UPLOADS: Query<Upload> = model::LANDED_UPLOADS;
    UPLOAD_DATES: Query<UploadDate> = model::UPLOAD_DATES;
    INPUT_HASHES: Query<InputHash> = model::INPUT_HASHES;
    INPUT_HASHES_AT: Query<InputHash> = model::INPUT_HASHES_AT;
    GOLD_ROWS_OF: Query<ModelCells> = model::GOLD_ROWS_OF;
    NAIVE_ROWS_OF: Query<ModelCells> = model::NAIVE_ROWS_OF;
    DATE_TOTALS: Query<DateTotal> = model::DATE_TOTALS;
    FILES_AT: Query<ModelFile> = model::FILES_AT;
    CURRENT_VERSIONS: Query<ModelCurrentVersion> = model::CURRENT_VERSIONS;
    NEXT_SNAPSHOT: Query<Next> = model::NEXT_SNAPSHOT;
    SHARED_STAGE: Exec = model::SHARED_STAGE;
    SHARED_STAGE_OF_DATES: Exec = model::SHARED_STAGE_OF_DATES;
    WRITTEN_DATES: Query<WrittenDates> = model::WRITTEN_DATES;
    WINNERS_STAGE: Exec = model::WINNERS_STAGE;
    SILVER_INSERT: Exec = model::SILVER_INSERT;
    GOLD_INSERT: Exec = model::GOLD_INSERT;
    WINNERS_DROP: Exec = model::WINNERS_DROP;
    SHARED_DROP: Exec = model::SHARED_DROP;
    DATES_INSERT: Exec = model::DATES_INSERT;
    SNAPSHOT_INSERT: Exec = model::SNAPSHOT_INSERT;
    SKIPPED_INSERT: Exec = model::SKIPPED_INSERT;
    GOLD_ROWS: Query<ModelCells> = model::GOLD_ROWS;
    VERSION_GOLD: Query<ModelCells> = model::VERSION_GOLD;
    SNAPSHOTS: Query<ModelSnapshotRow> = model::SNAPSHOTS;
    SKIPPED_RUNS: Query<Skipped> = model::SKIPPED_RUNS;
    DATE_VERSIONS: Query<DateVersion> = model::DATE_VERSIONS;
    VERSIONS_AT: Query<VersionAt> = model::VERSIONS_AT;
    RESTORE_GOLD: Exec = model::RESTORE_GOLD;
    RESTORE_SILVER: Exec = model::RESTORE_SILVER;
    RESTORE_DATE: Exec = model::RESTORE_DATE;
    NAIVE_APPEND: Exec = model::NAIVE_APPEND;
    NAIVE_ROWS: Query<ModelCells> = model::NAIVE_ROWS;
    QUARANTINE: Query<QuarantineRow> = model::QUARANTINE;
    QUARANTINED_LINES: Query<super::reports::QuarantinedLines> = model::QUARANTINED_LINES;
    COPIES_COUNTED: Query<ModelCells> = model::COPIES_COUNTED;
    UTC_DATED: Query<ModelCells> = model::UTC_DATED;
}

/// A snapshot's record, as a v2 write or a rollback inserts it.
pub struct NewSnapshot<'a> {
    pub snapshot_id: i64,
    pub operation: &'a str,
    pub upload: Option<NaiveDate>,
    pub late_days: u32,
    pub files: &'a str,
    pub dates_rewritten: usize,
    pub beyond_window: i64,
    pub gold_rows: i64,
    pub gold_md5: &'a str,
}

impl Store {
    /// The lab's model, as stored (None: a retail lab).
    pub fn model_definition(&self) -> Result<Option<Definition>> {
        DEFINITION_GET.optional(self, &[])
    }
    pub fn model_dimension(&self) -> Result<Option<DimensionVersion>> {
        DIMENSION_NEWEST.optional(self, &[])
    }
    /// Every version of the dimension file landed by snapshot `as_of` (None: now), oldest first.
    pub fn model_dimension_versions(&self, as_of: Option<i64>) -> Result<Vec<DimensionVersion>> {
        DIMENSION_VERSIONS.all(self, named_params! { "as_of": as_of })
    }
    /// Gold's and v1's rows of date `d` as they stood at snapshot `as_of` (None: now).
    pub fn model_date_rows(&self, d: NaiveDate, as_of: Option<i64>) -> Result<(Vec<ModelCells>, Vec<ModelCells>)> {
        let gold = GOLD_ROWS_OF.all(self, named_params! { "business_date": d, "snapshot_id": as_of })?;
        Ok((gold, NAIVE_ROWS_OF.all(self, named_params! { "business_date": d, "as_of": as_of })?))
    }
    /// Each date's measures of `side` (`gold` as of snapshot `as_of`, None: now; `naive` or
    /// `recount`, the kept one) summed per the attributes `keyed` names.
    pub fn model_date_totals(&self, side: &str, keyed: [bool; ATTRIBUTE_COLUMNS], as_of: Option<i64>) -> Result<Vec<DateTotal>> {
        let [c1, c2, c3, c4] = keyed;
        DATE_TOTALS.all(self, named_params! { "side": side, "c1": c1, "c2": c2, "c3": c3, "c4": c4, "as_of": as_of })
    }
    /// The file versions current as of snapshot `as_of` (None: now), in raw-zone order.
    pub fn model_files_at(&self, as_of: Option<i64>) -> Result<Vec<ModelFile>> {
        FILES_AT.all(self, named_params! { "as_of": as_of })
    }
    /// The current files of each of `uploads`, by upload and name.
    pub fn model_files_of_uploads(&self, uploads: &[NaiveDate]) -> Result<Vec<ModelFile>> {
        if uploads.is_empty() {
            return Ok(Vec::new());
        }
        FILES_OF_UPLOADS.all(self, named_params! { "uploads": super::date_list(uploads) })
    }
    /// The current files of `uploads` past their first version, by upload and name.
    pub fn model_corrected_files_of(&self, uploads: &[NaiveDate]) -> Result<Vec<ModelFile>> {
        if uploads.is_empty() {
            return Ok(Vec::new());
        }
        CORRECTED_FILES_OF_UPLOADS.all(self, named_params! { "uploads": super::date_list(uploads) })
    }
    /// The current files holding a record whose grain column `column` (1-based) is one of `keys`.
    pub fn model_files_with_key(&self, column: usize, keys: &[String]) -> Result<Vec<ModelFile>> {
        let column = i32::try_from(column)?;
        FILES_WITH_KEY.all(self, named_params! { "column": column, "keys": keys.join("\u{1f}") })
    }
    /// Whether file version `file_id` re-delivers the records of its path's version before it.
    /// A landing's corrections (file ids from `first`) that bring back an earlier version's bytes.
    pub fn model_reverted_versions(&self, first: i32) -> Result<Vec<Reverted>> {
        REVERTED_VERSIONS.all(self, named_params! { "first": first })
    }
    /// The dates the pending re-read versions move (`reread_dates`), oldest first.
    pub fn model_reread_dates(&self) -> Result<Vec<NaiveDate>> {
        Ok(REREAD_DATES.all(self, &[])?.into_iter().map(|r| r.business_date).collect())
    }
    pub fn model_same_rows_as_before(&self, file_id: i32) -> Result<bool> {
        Ok(SAME_ROWS_AS_BEFORE.one(self, named_params! { "file_id": file_id })?.same)
    }
    pub fn model_next_file_id(&self) -> Result<i32> {
        Ok(i32::try_from(NEXT_FILE_ID.one(self, &[])?.next)?)
    }
    /// The uploads landed by snapshot `as_of` (None: now).
    pub fn model_uploads(&self, as_of: Option<i64>) -> Result<Vec<NaiveDate>> {
        Ok(LANDED_UPLOADS.all(self, named_params! { "as_of": as_of })?.into_iter().map(|u| u.upload_date).collect())
    }
    /// Every landed version of `file` of upload `upload`, oldest first.
    pub fn model_file_versions(&self, upload: NaiveDate, file: &str) -> Result<Vec<ModelFile>> {
        FILE_VERSIONS.all(self, named_params! { "upload_date": upload, "file": file })
    }
    // The reads of a list of dates answer none for no dates: `dates_of('')` would read one empty
    // date, which does not cast, and an empty lab (a reset one) has no dates to ask about.

    /// What each of `uploads` holds per business date.
    pub fn model_upload_dates(&self, uploads: &[NaiveDate]) -> Result<Vec<UploadDate>> {
        if uploads.is_empty() {
            return Ok(Vec::new());
        }
        UPLOAD_DATES.all(self, named_params! { "uploads": super::date_list(uploads) })
    }
    pub fn model_input_hashes(&self, dates: &[NaiveDate], late_days: u32) -> Result<Vec<InputHash>> {
        if dates.is_empty() {
            return Ok(Vec::new());
        }
        INPUT_HASHES.all(self, named_params! { "dates": super::date_list(dates), "late_days": late_days })
    }
    /// `model_input_hashes` as of snapshot `as_of` (None: now, by another path: a test holds the
    /// two equal).
    pub fn model_input_hashes_at(&self, dates: &[NaiveDate], late_days: u32, as_of: Option<i64>) -> Result<Vec<InputHash>> {
        if dates.is_empty() {
            return Ok(Vec::new());
        }
        INPUT_HASHES_AT.all(self, named_params! { "dates": super::date_list(dates), "late_days": late_days, "as_of": as_of })
    }
    /// The version of each of `dates` gold held at snapshot `as_of` (None: now).
    pub fn model_current_versions(&self, dates: &[NaiveDate], as_of: Option<i64>) -> Result<Vec<ModelCurrentVersion>> {
        if dates.is_empty() {
            return Ok(Vec::new());
        }
        CURRENT_VERSIONS.all(self, named_params! { "dates": super::date_list(dates), "as_of": as_of })
    }
    pub fn model_next_snapshot(&self) -> Result<i64> {
        Ok(NEXT_SNAPSHOT.one(self, &[])?.next)
    }
    /// Gold as it stood at `as_of` (None: now).
    pub fn model_gold(&self, as_of: Option<i64>) -> Result<Vec<ModelCells>> {
        GOLD_ROWS.all(self, named_params! { "snapshot_id": as_of, "from": None::<NaiveDate> })
    }
    /// Gold now from date `from` on (None: every date), in date and grain order.
    pub fn model_gold_from(&self, from: Option<NaiveDate>) -> Result<Vec<ModelCells>> {
        GOLD_ROWS.all(self, named_params! { "snapshot_id": None::<i64>, "from": from })
    }
    pub fn model_version_gold(&self, snapshot_id: i64, d: NaiveDate) -> Result<Vec<ModelCells>> {
        VERSION_GOLD.all(self, named_params! { "snapshot_id": snapshot_id, "business_date": d })
    }
    pub fn model_snapshots(&self) -> Result<Vec<ModelSnapshotRow>> {
        SNAPSHOTS.all(self, &[])
    }
    pub fn model_skipped_runs(&self) -> Result<Vec<Skipped>> {
        SKIPPED_RUNS.all(self, &[])
    }
    pub fn model_date_versions(&self, d: NaiveDate) -> Result<Vec<DateVersion>> {
        DATE_VERSIONS.all(self, named_params! { "business_date": d })
    }
    /// Every business date the current files' records hold, oldest first.
    pub fn model_record_dates(&self) -> Result<Vec<NaiveDate>> {
        Ok(RECORD_DATES.all(self, &[])?.into_iter().map(|d| d.business_date).collect())
    }
    pub fn model_versions_at(&self, as_of: Option<i64>) -> Result<Vec<VersionAt>> {
        VERSIONS_AT.all(self, named_params! { "snapshot_id": as_of })
    }
    /// v1's rows as they stood at snapshot `as_of` (None: now).
    pub fn model_naive(&self, as_of: Option<i64>) -> Result<Vec<ModelCells>> {
        NAIVE_ROWS.all(self, named_params! { "as_of": as_of })
    }
    pub fn model_quarantine(&self) -> Result<Vec<QuarantineRow>> {
        QUARANTINE.all(self, &[])
    }
    /// Every line current file versions refused (of one upload, or all), as retail's.
    pub fn model_quarantined_lines(&self, upload_date: Option<NaiveDate>) -> Result<i64> {
        Ok(QUARANTINED_LINES.one(self, named_params! { "upload_date": upload_date })?.lines)
    }
    /// `d` summed over every copy inside the window: no dedup (an audit's alternative).
    pub fn model_copies_counted(&self, d: NaiveDate, late_days: u32) -> Result<Vec<ModelCells>> {
        COPIES_COUNTED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }
    /// Each reopened date's widest window as of snapshot `as_of` (None: now).
    pub fn model_kept_windows(&self, as_of: Option<i64>) -> Result<std::collections::BTreeMap<NaiveDate, u32>> {
        Ok(KEPT_WINDOWS
            .all(self, named_params! { "as_of": as_of })?
            .into_iter()
            .map(|k| (k.business_date, u32::try_from(k.late_days).unwrap_or(0)))
            .collect())
    }
    /// The winners silver holds now for `d`.
    pub fn model_silver_rows(&self, d: NaiveDate) -> Result<i64> {
        Ok(SILVER_ROWS.one(self, named_params! { "business_date": d })?.next)
    }
    /// The current records by days from business date to upload.
    pub fn model_lateness(&self, part: Option<usize>) -> Result<Vec<LatenessBucket>> {
        LATENESS.all(self, named_params! { "part": part.map_or(0, |i| i + 1) })
    }
    /// `d`'s records that arrived past its window, in the files current as of snapshot `as_of`
    /// (None: now).
    pub fn model_late_rows(&self, d: NaiveDate, late_days: u32, as_of: Option<i64>) -> Result<Vec<LateRecord>> {
        LATE_ROWS.all(self, named_params! { "business_date": d, "late_days": late_days, "as_of": as_of })
    }
    /// Every copy of each key of `d` sent more than once, in the contract's order.
    pub fn model_resent(&self, d: NaiveDate, late_days: u32) -> Result<Vec<ResentCopy>> {
        RESENT.all(self, named_params! { "business_date": d, "late_days": late_days })
    }
    /// `d` as v2 builds it with window `late_days` (an audit's alternative).
    pub fn model_windowed(&self, d: NaiveDate, late_days: u32) -> Result<Vec<ModelCells>> {
        WINDOWED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }
    /// `d` with events dated in UTC (an audit's alternative).
    pub fn model_utc_dated(&self, d: NaiveDate, late_days: u32) -> Result<Vec<ModelCells>> {
        UTC_DATED.all(self, named_params! { "business_date": d, "late_days": late_days })
    }
}

impl Tx<'_> {
    pub fn model_define(&mut self, name: &str, parts: &str) -> Result<()> {
        self.exec("recording the lab's model", &DEFINITION_SET, named_params! { "name": name, "parts": parts }).map(|_| ())
    }
    pub fn model_dimension_insert(&mut self, version: i32, md5: &str, text: &str) -> Result<()> {
        let p = named_params! { "version": version, "md5": md5, "text": text };
        self.exec("keeping the dimension file's version", &DIMENSION_INSERT, p).map(|_| ())
    }
    /// The first date and grain the files from `first_file_id` touch where a measure's total over
    /// every copy passes `limit`.
    pub fn model_measure_past_limit(&mut self, first_file_id: i32, limit: i64) -> Result<Option<MeasurePastLimit>> {
        let found = MEASURE_PAST_LIMIT.optional(self.store, named_params! { "first_file_id": first_file_id, "limit": limit })?;
        self.step("checking the measures' totals")?;
        Ok(found)
    }
    /// Records a landing's file versions, in one statement.
    pub fn model_files_insert(&mut self, files: &[ModelFile]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let list: Vec<serde_json::Value> = files
            .iter()
            .map(|f| {
                serde_json::json!({
                    "file_id": f.file_id, "file": f.file, "upload_date": f.upload_date.to_string(), "version": f.version,
                    "md5": f.md5, "records": f.records, "quarantined": f.quarantined,
                })
            })
            .collect();
        let p = named_params! { "files": serde_json::Value::from(list).to_string() };
        self.exec("recording the landed files", &FILES_INSERT, p).map(|_| ())
    }

    /// A landing's records, read by DuckDB's threads from `reader` through the `recount_rows`
    /// scan: a thread reads the next file version and inserts its rows, so reading and inserting
    /// share the cores, and memory holds a file per thread rather than the landing.
    pub fn model_records<R: RecordsReader>(&mut self, reader: std::sync::Arc<R>) -> Result<()> {
        let scan = super::records::RecordsScan { reader: reader.clone(), rest: std::sync::Mutex::new(Vec::new()) };
        let job = self.store.scans.register(std::sync::Arc::new(scan))?;
        let added = self.exec("adding the records", &RECORDS_FROM_ROWS, named_params! { "job": job.id });
        // The reader's own error has its context; DuckDB's keeps only its text.
        match (added, reader.take_error()) {
            (Err(_), Some(e)) => Err(e),
            (added, _) => added.map(|_| ()),
        }
    }

    /// Each file version's per-date input sums, for the files that have none yet (`input_hashes`
    /// adds them up): after a landing's files are recorded.
    pub fn model_file_hashes(&mut self) -> Result<()> {
        self.exec("summing the new files' input hashes", &FILE_HASHES_FILL, &[]).map(|_| ())
    }

    /// A landing's refused lines (file id, line, reason, the line), through an appender.
    pub fn model_refused(&mut self, refused: &[(i32, i32, String, String)]) -> Result<()> {
        let conn = &self.store.conn;
        (|| -> duckdb::Result<()> {
            let mut app = conn.appender_to_db("quarantine", "model")?;
            for (file_id, line, reason, raw) in refused {
                app.append_row(duckdb::params![file_id, line, reason, raw])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("adding the refused lines", e))?;
        self.step("adding the refused lines")
    }

    /// Snapshot `snapshot_id`'s silver and gold of `dates` (a list), within `late_days`.
    pub fn model_write(&mut self, snapshot_id: i64, dates: &[NaiveDate], late_days: u32) -> Result<()> {
        let p = named_params! { "dates": super::date_list(dates), "late_days": late_days };
        // A run of a few dates looks at their keys' copies; a backfill groups every copy once.
        let lab_dates = WRITTEN_DATES.one(self.store, &[])?.dates;
        if i64::try_from(dates.len())?.saturating_mul(4) < lab_dates {
            let dated = named_params! { "dates": super::date_list(dates) };
            self.exec("finding the keys of more than one copy", &SHARED_STAGE_OF_DATES, dated)?;
        } else {
            self.exec("finding the keys of more than one copy", &SHARED_STAGE, &[])?;
        }
        self.exec("finding the winners", &WINNERS_STAGE, p)?;
        let p = named_params! { "dates": super::date_list(dates), "late_days": late_days, "snapshot_id": snapshot_id };
        self.exec("writing silver", &SILVER_INSERT, p)?;
        self.exec("writing gold", &GOLD_INSERT, p).wrap_err("summing gold (a sum past 64 bits is refused, not wrapped)")?;
        self.exec("dropping the winners", &WINNERS_DROP, &[])?;
        self.exec("dropping the keys of more than one copy", &SHARED_DROP, &[]).map(|_| ())
    }
    /// Snapshot `snapshot_id` reopens `d` with window `late_days`, for `reason`, decided by `by`.
    pub fn model_keep_window(&mut self, snapshot_id: i64, d: NaiveDate, late_days: u32, (reason, by): (&str, &str)) -> Result<()> {
        let p = named_params! { "business_date": d, "late_days": late_days, "snapshot_id": snapshot_id, "reason": reason, "by": by };
        self.exec("keeping the reopened date's window", &KEEP_WINDOW, p).map(|_| ())
    }
    /// The dates snapshot `snapshot_id` wrote, each with the input hash it was built from.
    pub fn model_dates(&mut self, snapshot_id: i64, dates: &[(NaiveDate, String)]) -> Result<()> {
        let list: Vec<serde_json::Value> =
            dates.iter().map(|(d, h)| serde_json::json!({ "business_date": d.to_string(), "input_hash": h })).collect();
        let p = named_params! { "snapshot_id": snapshot_id, "dates": serde_json::Value::from(list).to_string() };
        self.exec("recording the dates' versions", &DATES_INSERT, p).map(|_| ())
    }
    /// Snapshot `snapshot_id` takes `version`'s silver and gold of `d` (None: an empty version).
    pub fn model_restore(&mut self, snapshot_id: i64, version: Option<i64>, d: NaiveDate) -> Result<()> {
        let p = named_params! { "snapshot_id": snapshot_id, "version": version, "business_date": d };
        self.exec("restoring gold", &RESTORE_GOLD, p)?;
        self.exec("restoring silver", &RESTORE_SILVER, p)?;
        self.exec("recording a date's version", &RESTORE_DATE, p).map(|_| ())
    }
    pub fn model_snapshot(&mut self, s: &NewSnapshot<'_>) -> Result<()> {
        let dates = i32::try_from(s.dates_rewritten)?;
        let p = named_params! {
            "snapshot_id": s.snapshot_id, "operation": s.operation, "upload": s.upload, "late_days": s.late_days, "files": s.files,
            "dates_rewritten": dates, "beyond_window": s.beyond_window, "gold_rows": s.gold_rows, "gold_md5": s.gold_md5,
        };
        self.exec("recording the snapshot", &SNAPSHOT_INSERT, p).map(|_| ())
    }
    /// The landing's re-read versions (file ids from `first`), pending their run.
    pub fn model_reread_pending(&mut self, first: i32) -> Result<()> {
        self.exec("recording the re-read files", &REREAD_PENDING_INSERT, named_params! { "first": first }).map(|_| ())
    }
    /// A run rebuilt every pending re-read version's dates.
    pub fn model_rereads_applied(&mut self) -> Result<()> {
        self.exec("recording the re-read files as rebuilt", &REREAD_APPLIED, &[]).map(|_| ())
    }
    pub fn model_skipped(&mut self, uploads: &[NaiveDate], dates: &[NaiveDate]) -> Result<()> {
        let p = named_params! { "uploads": super::date_list(uploads), "dates": super::date_list(dates) };
        self.exec("recording a skipped run", &SKIPPED_INSERT, p).map(|_| ())
    }
    pub fn model_naive(&mut self, run_date: NaiveDate) -> Result<usize> {
        self.exec("appending v1", &NAIVE_APPEND, named_params! { "run_date": run_date })
    }
}
