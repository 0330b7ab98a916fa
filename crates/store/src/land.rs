//! land.sql: landing raw files into bronze.

use super::{Exec, Query, Store, Tx, row, statements};
use chrono::{NaiveDate, NaiveDateTime};
use color_eyre::eyre::{Result, WrapErr};
use duckdb::named_params;
use std::collections::HashMap;

row! {
    /// One landed version of a file: its path in the raw zone, its bytes' MD5, its id and
    /// version, and whether it is the current one.
    pub struct LandedFile { pub file: String, pub md5: String, pub file_id: i32, pub version: i32, pub current: bool }
}

row! {
    /// The rows of the lab's largest business date.
    pub struct LargestDateRows { pub rows: i64 }
}

row! {
    /// One row of stores.csv as the lab keeps it.
    pub struct StoreRow { pub store_id: String, pub country: String, pub timezone: String, pub currency: String }
}

row! {
    /// A numbered store row (bronze.store_rows).
    pub struct NumberedStoreRow { pub store_row: i32, pub store_id: String, pub country: String, pub currency: String }
}

row! {
    pub struct NextFileId { pub file_id: i32 }
}

row! {
    pub struct UnknownStore { pub store_id: String }
}

row! {
    /// A current file version whose lines depend on one store's row.
    pub struct FileOfStore { pub file: String, pub upload_date: NaiveDate, pub file_id: i32, pub version: i32 }
}

row! {
    /// A store (or, with no store, a country) whose revenue on a date passes recount's limit.
    pub struct RevenuePastLimit { pub business_date: NaiveDate, pub country: String, pub store_id: Option<String>, pub total: String }
}

row! {
    /// A file of an upload and its current version.
    pub struct FileVersionRow { pub file: String, pub version: i32 }
}

row! {
    pub struct NextLandingId { pub landing_id: i64 }
}

row! {
    pub struct Upload { pub upload_date: NaiveDate }
}

row! {
    pub struct FileCount { pub files: i64 }
}

row! {
    pub struct Threads { pub threads: i64 }
}

row! {
    pub struct Rows { pub rows: i64 }
}

statements! {
    LANDED_FILES: Query<LandedFile> = land::LANDED_FILES;
    STORES: Query<StoreRow> = land::STORES;
    STORE_ROWS: Query<NumberedStoreRow> = land::STORE_ROWS;
    STORE_UPDATE: Exec = land::STORE_UPDATE;
    STORE_CHANGE_INSERT: Exec = land::STORE_CHANGE_INSERT;
    FILES_OF_STORES: Query<FileOfStore> = land::FILES_OF_STORES;
    UNKNOWN_STORES: Query<UnknownStore> = land::UNKNOWN_STORES;
    NEXT_FILE_ID: Query<NextFileId> = land::NEXT_FILE_ID;
    REVENUE_PAST_LIMIT: Query<RevenuePastLimit> = land::REVENUE_PAST_LIMIT;
    CORRECTED_FILES: Query<FileVersionRow> = land::CORRECTED_FILES;
    REDELIVERED_FILES: Query<FileVersionRow> = land::REDELIVERED_FILES;
    SUPERSESSION_INSERT: Exec = land::SUPERSESSION_INSERT;
    NEXT_LANDING_ID: Query<NextLandingId> = land::NEXT_LANDING_ID;
    LANDING_INSERT: Exec = land::LANDING_INSERT;
    LANDED_UPLOADS: Query<Upload> = land::LANDED_UPLOADS;
    FILES_COUNT: Query<FileCount> = land::FILES_COUNT;
    UPLOAD_FILES_COUNT: Query<FileCount> = land::UPLOAD_FILES_COUNT;
    EVENTS_INSERT: Exec = land::EVENTS_INSERT;
    THREADS: Query<Threads> = land::THREADS;
    THREADS_SET: Exec = land::THREADS_SET;
    MEMORY_LIMIT_SET: Exec = land::MEMORY_LIMIT_SET;
    LARGEST_DATE_ROWS: Query<LargestDateRows> = land::LARGEST_DATE_ROWS;
    UNORDERED_INSERT: Exec = land::UNORDERED_INSERT;
    ORDERED_INSERT: Exec = land::ORDERED_INSERT;
}

/// One landed file's record in raw.files.
#[derive(Debug, Clone)]
pub struct FileRecord<'a> {
    pub file_id: i32,
    pub file: &'a str,
    pub upload_date: NaiveDate,
    pub bytes: i64,
    pub md5: &'a str,
    pub lines: i64,
    pub events: i64,
    pub quarantined: i64,
    pub landing_id: i64,
    pub version: i32,
}

/// What one file holds for one (business date, currency): a row of bronze.cells.
#[derive(Debug, Clone)]
pub struct CellRecord<'a> {
    pub file_id: i32,
    pub upload_date: NaiveDate,
    pub business_date: NaiveDate,
    pub currency: &'a str,
    pub rows: i64,
    pub revenue_minor: i64,
    pub digest: i64,
}

/// A line rejected at landing: a row of bronze.quarantine.
#[derive(Debug, Clone)]
pub struct QuarantineRecord<'a> {
    pub file: &'a str,
    pub line: i32,
    pub upload_date: NaiveDate,
    pub reason: &'a str,
    pub raw_line: &'a str,
    pub file_id: i32,
}

impl Store {
    /// Every landed version of every file, by path in the raw zone, oldest version first.
    pub fn landed_files(&self) -> Result<HashMap<String, Vec<LandedFile>>> {
        let mut files: HashMap<String, Vec<LandedFile>> = HashMap::new();
        for f in LANDED_FILES.all(self, &[])? {
            files.entry(f.file.clone()).or_default().push(f);
        }
        for versions in files.values_mut() {
            versions.sort_by_key(|f| f.version);
        }
        Ok(files)
    }

    pub fn stores(&self) -> Result<Vec<StoreRow>> {
        STORES.all(self, &[])
    }

    /// The current file versions whose lines depend on the row of one of `store_ids`, each once.
    pub fn files_of_stores(&self, store_ids: &[String]) -> Result<Vec<FileOfStore>> {
        let ids = serde_json::to_string(store_ids)?;
        FILES_OF_STORES.all(self, named_params! { "store_ids": ids })
    }

    /// The store_ids some landed line was quarantined for as unknown.
    pub fn unknown_stores(&self) -> Result<std::collections::HashSet<String>> {
        Ok(UNKNOWN_STORES.all(self, &[])?.into_iter().map(|u| u.store_id).collect())
    }

    /// The upload dates landed so far, oldest first.
    pub fn landed_uploads(&self) -> Result<Vec<NaiveDate>> {
        Ok(LANDED_UPLOADS.all(self, &[])?.into_iter().map(|u| u.upload_date).collect())
    }

    /// The files of `upload_date` whose current version is a correction, with that version.
    pub fn corrected_files(&self, upload_date: NaiveDate) -> Result<Vec<FileVersionRow>> {
        CORRECTED_FILES.all(self, named_params! { "upload_date": upload_date })
    }

    /// The files of `upload_date` whose current version re-delivers the rows of the one before.
    pub fn redelivered_files(&self, upload_date: NaiveDate) -> Result<Vec<FileVersionRow>> {
        REDELIVERED_FILES.all(self, named_params! { "upload_date": upload_date })
    }

    pub fn files_count(&self) -> Result<i64> {
        Ok(FILES_COUNT.one(self, &[])?.files)
    }

    pub fn upload_files_count(&self, upload_date: NaiveDate) -> Result<i64> {
        Ok(UPLOAD_FILES_COUNT.one(self, named_params! { "upload_date": upload_date })?.files)
    }

    pub fn next_file_id(&self) -> Result<i32> {
        Ok(NEXT_FILE_ID.one(self, &[])?.file_id)
    }

    pub fn next_landing_id(&self) -> Result<i64> {
        Ok(NEXT_LANDING_ID.one(self, &[])?.landing_id)
    }

    /// DuckDB's thread count.
    pub fn threads(&self) -> Result<i64> {
        Ok(THREADS.one(self, &[])?.threads)
    }

    /// Runs `f`, a landing or a long backfill, with DuckDB's memory limit set to the bulk one
    /// (`Limits`, fitted to the lab's dates as they are now; unless `RECOUNT_MEMORY_LIMIT` set
    /// one for everything) and, when `one_thread`, on one thread; then puts back what the
    /// connection had, however `f` ends. These are settings of the connection, not of a
    /// transaction: `f` begins and ends its own.
    pub fn bulk<T>(&self, one_thread: bool, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let limits = match self.limits {
            Some(_) => {
                let fitted = super::Limits::for_rows(self.largest_date_rows()?, super::memory_budget());
                // A write that ran out of the fitted limit runs again with a raised one.
                Some(super::Limits { bulk: fitted.bulk.max(self.bulk_raised.get().unwrap_or(0)), ..fitted })
            }
            None => None,
        };
        let threads = if one_thread { self.threads()? } else { 1 };
        let lower = || -> Result<()> {
            if let Some(l) = limits {
                self.set_memory_limit(l.bulk)?;
            }
            if threads > 1 {
                THREADS_SET.run(self, named_params! { "threads": 1 })?;
            }
            Ok(())
        };
        let result = lower().wrap_err("setting DuckDB up for bulk work").and_then(|()| f());
        let put_back = || -> Result<()> {
            if threads > 1 {
                THREADS_SET.run(self, named_params! { "threads": threads })?;
            }
            if let Some(l) = self.limits {
                self.set_memory_limit(self.raised.get().unwrap_or(l.reports))?;
            }
            Ok(())
        };
        let put_back = put_back().wrap_err("putting DuckDB's settings back after bulk work");
        result.and_then(|r| put_back.map(|()| r))
    }

    /// DuckDB's limits on this lab as it is now, and the rows of its largest date: (reports,
    /// bulk, rows). With `RECOUNT_MEMORY_LIMIT`, its one limit twice.
    pub fn limits_now(&self) -> Result<(u64, u64, u64)> {
        let rows = self.largest_date_rows()?;
        let l = super::Limits::for_rows(rows, super::memory_budget());
        Ok(match self.limits {
            Some(_) => (l.reports, l.bulk, rows),
            None => {
                let fixed = crate::parse_size(&std::env::var("RECOUNT_MEMORY_LIMIT").unwrap_or_default()).unwrap_or(0);
                (fixed, fixed, rows)
            }
        })
    }

    /// DuckDB's memory limit on this connection, in bytes.
    pub fn set_memory_limit(&self, bytes: u64) -> Result<()> {
        MEMORY_LIMIT_SET.run(self, named_params! { "limit": super::duckdb_size(bytes) })?;
        self.limit_now.set(Some(bytes));
        Ok(())
    }

    /// The rows (every landed copy, every country) of the lab's largest business date: what
    /// DuckDB's limits follow (`Limits::for_rows`). Read from bronze's cells, a few rows a file.
    pub fn largest_date_rows(&self) -> Result<u64> {
        Ok(u64::try_from(LARGEST_DATE_ROWS.one(self, &[])?.rows).unwrap_or(0))
    }

    /// Lets each of DuckDB's threads insert what it parsed into its own row groups (a setting of
    /// the connection: set before a landing's transaction, reset after it however it ends).
    /// Rows keep their file id and line; nothing reads bronze in its physical order.
    pub fn unordered_inserts(&self) -> Result<()> {
        UNORDERED_INSERT.run(self, &[]).map(|_| ())
    }

    pub fn ordered_inserts(&self) -> Result<()> {
        ORDERED_INSERT.run(self, &[]).map(|_| ())
    }
}

impl Tx<'_> {
    /// New stores, through one appender: a statement per store made a first landing's cost grow
    /// with the store list.
    pub fn insert_stores(&mut self, stores: &[StoreRow]) -> Result<()> {
        if stores.is_empty() {
            return Ok(());
        }
        (|| -> duckdb::Result<()> {
            let mut app = self.store.conn.appender_to_db("stores", "raw")?;
            for s in stores {
                app.append_row(duckdb::params![s.store_id, s.country, s.timezone, s.currency])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("adding stores", e))?;
        self.step("adding stores")
    }

    /// A store correction: the store's new row, and the change recorded with both rows, seen by
    /// snapshots from `from_snapshot` on.
    pub fn change_store(&mut self, old: &StoreRow, new: &StoreRow, landing_id: i64, from_snapshot: i64) -> Result<()> {
        self.exec("correcting a store", &STORE_UPDATE, &new.params())?;
        self.record_store_change(Some(old), new, landing_id, from_snapshot)
    }

    /// A store's change into raw.store_changes; `old` None for a store stores.csv adds whose lines
    /// were quarantined as an unknown store (its old row is recorded empty).
    pub fn record_store_change(&mut self, old: Option<&StoreRow>, new: &StoreRow, landing_id: i64, from_snapshot: i64) -> Result<()> {
        let (oc, ot, ou) = old.map(|o| (o.country.as_str(), o.timezone.as_str(), o.currency.as_str())).unwrap_or_default();
        let params = named_params! {
            "store_id": new.store_id, "old_country": oc, "old_timezone": ot, "old_currency": ou,
            "new_country": new.country, "new_timezone": new.timezone, "new_currency": new.currency,
            "landing_id": landing_id, "from_snapshot": from_snapshot,
        };
        self.exec("recording a store correction", &STORE_CHANGE_INSERT, params).map(|_| ())
    }

    /// The number of each store's row as `stores` gives it (store_id, country, currency): the
    /// number bronze already has for that row, else a new one, appended to bronze.store_rows in
    /// this transaction. A landing's parser writes these numbers into its rows.
    pub fn number_store_rows<'s>(&mut self, stores: impl Iterator<Item = (&'s str, &'s str, &'s str)>) -> Result<HashMap<String, i32>> {
        let mut known = HashMap::new();
        let mut next = 1;
        STORE_ROWS.each(self.store, &[], |r| {
            next = next.max(r.store_row + 1);
            known.insert((r.store_id, r.country, r.currency), r.store_row);
            Ok(())
        })?;
        let mut numbers = HashMap::new();
        let mut added = Vec::new();
        for (id, country, currency) in stores {
            let key = (id.to_string(), country.to_string(), currency.to_string());
            let n = match known.get(&key) {
                Some(&n) => n,
                None => {
                    let n = next;
                    next += 1;
                    known.insert(key.clone(), n);
                    added.push((n, key));
                    n
                }
            };
            numbers.insert(id.to_string(), n);
        }
        if !added.is_empty() {
            (|| -> duckdb::Result<()> {
                let mut app = self.store.conn.appender_to_db("store_rows", "bronze")?;
                for (n, (id, country, currency)) in &added {
                    app.append_row(duckdb::params![n, id, country, currency])?;
                }
                app.flush()
            })()
            .map_err(|e| super::duckdb_error("numbering store rows", e))?;
        }
        self.step("numbering store rows").map(|_| numbers)
    }

    /// Inserts every row `source` makes, through `recount_parse` on DuckDB's threads. Not a step
    /// of its own: the landing checks its parsers' errors first, then counts the step.
    pub fn insert_events(&mut self, source: std::sync::Arc<dyn super::RowSource>) -> Result<usize> {
        let job = self.store.scans.register(source)?;
        EVENTS_INSERT.run(self.store, named_params! { "job": job.id })
    }

    /// The first store or country of a date the files from `first_file_id` touch whose revenue
    /// over every copy passes `limit`.
    pub fn revenue_past_limit(&mut self, first_file_id: i32, limit: i64) -> Result<Option<RevenuePastLimit>> {
        let found = REVENUE_PAST_LIMIT.optional(self.store, named_params! { "first_file_id": first_file_id, "limit": limit })?;
        self.step("checking revenue totals")?;
        Ok(found)
    }

    /// Version `file_id` of a file is superseded by `by_file_id`, for snapshots from `from_snapshot` on.
    pub fn insert_supersession(&mut self, file_id: i32, by_file_id: i32, from_snapshot: i64) -> Result<()> {
        let params = named_params! { "file_id": file_id, "by_file_id": by_file_id, "from_snapshot": from_snapshot };
        self.exec("recording a superseded file version", &SUPERSESSION_INSERT, params).map(|_| ())
    }

    /// The landing's new upload partitions (upload date, files), through one appender: a
    /// statement a partition made a first landing's cost grow with its uploads.
    pub fn insert_partitions(&mut self, partitions: &[(NaiveDate, i64)], landing_id: i64) -> Result<()> {
        if partitions.is_empty() {
            return Ok(());
        }
        (|| -> duckdb::Result<()> {
            let mut app = self.store.conn.appender_to_db("partitions", "raw")?;
            for (upload_date, files) in partitions {
                app.append_row(duckdb::params![upload_date, files, landing_id])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("recording the partitions", e))?;
        self.step("recording the partitions")
    }

    #[allow(clippy::too_many_arguments)]
    pub fn insert_landing(
        &mut self,
        landing_id: i64,
        first_upload: Option<NaiveDate>,
        last_upload: Option<NaiveDate>,
        files: i64,
        events: i64,
        quarantined: i64,
        landed_at: NaiveDateTime,
    ) -> Result<()> {
        let params = named_params! {
            "landing_id": landing_id, "first_upload": first_upload, "last_upload": last_upload, "files": files,
            "events": events, "quarantined": quarantined, "landed_at": landed_at,
        };
        self.exec("recording the landing", &LANDING_INSERT, params).map(|_| ())
    }

    /// The landed files' records, cells and quarantined lines, through one appender per table
    /// (a statement per file cost more than the rest of recording).
    pub fn append_landing_records(&mut self, files: &[FileRecord], cells: &[CellRecord], quarantine: &[QuarantineRecord]) -> Result<()> {
        let conn = &self.store.conn;
        (|| -> duckdb::Result<()> {
            let mut app = conn.appender_to_db("files", "raw")?;
            for f in files {
                app.append_row(duckdb::params![
                    f.file_id,
                    f.file,
                    f.upload_date,
                    f.bytes,
                    f.md5,
                    f.lines,
                    f.events,
                    f.quarantined,
                    f.landing_id,
                    f.version
                ])?;
            }
            app.flush()?;
            let mut app = conn.appender_to_db("cells", "bronze")?;
            for c in cells {
                app.append_row(duckdb::params![c.file_id, c.upload_date, c.business_date, c.currency, c.rows, c.revenue_minor, c.digest])?;
            }
            app.flush()?;
            let mut app = conn.appender_to_db("quarantine", "bronze")?;
            for q in quarantine {
                app.append_row(duckdb::params![q.file, q.line, q.upload_date, q.reason, q.raw_line, q.file_id])?;
            }
            app.flush()
        })()
        .map_err(|e| super::duckdb_error("recording the raw files, their cells and quarantined lines", e))?;
        self.step("recording the raw files, their cells and quarantined lines")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows written in a transaction raise the reports' limit to what their largest date asks,
    /// never lower it: a landing into an empty lab reads its own rows at their size.
    #[test]
    fn the_limit_follows_the_rows_a_landing_wrote() {
        if std::env::var_os("RECOUNT_MEMORY_LIMIT").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lab.duckdb")).unwrap();
        let limit =
            || -> String { store.connection_for_tests().query_row("SELECT current_setting('memory_limit')", [], |r| r.get(0)).unwrap() };
        let empty = limit();
        store.fit_to_rows_written().unwrap();
        assert_eq!(limit(), empty, "an empty lab's limit stays");
        // 100,000 records on one date: five steps of 24,000 rows, 80 MB each. Their file's row is
        // written first, as a landing writes it, without its sums (the records are counted).
        store
            .connection_for_tests()
            .execute_batch(
                "BEGIN; INSERT INTO model.files VALUES (1, 'f.jsonl.gz', DATE '2026-06-29', 1, '', 100000, 0, now()::TIMESTAMP);
                 INSERT INTO model.records (file_id, line, entity_key, event_id, arrival_ns, event_ns, business_date)
                 SELECT 1, i, 'k' || i, 'e' || i, 0, 0, DATE '2026-06-29' FROM range(100000) t(i)",
            )
            .unwrap();
        store.fit_to_rows_written().unwrap();
        assert_eq!((empty.as_str(), limit().as_str()), ("76.2 MiB", "381.4 MiB"));
        store.connection_for_tests().execute_batch("ROLLBACK").unwrap();
        store.fit_to_rows_written().unwrap();
        assert_eq!(limit(), "381.4 MiB", "never lowered");
    }

    #[test]
    fn bulk_work_puts_the_thread_count_and_memory_limit_back_however_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lab.duckdb")).unwrap();
        store.connection_for_tests().execute_batch("SET threads = 3").unwrap();
        let limit =
            || -> String { store.connection_for_tests().query_row("SELECT current_setting('memory_limit')", [], |r| r.get(0)).unwrap() };
        let session = limit();
        let (threads, bulk) = store.bulk(true, || Ok((store.threads()?, limit()))).unwrap();
        assert_eq!(threads, 1, "a long backfill runs on one thread");
        if std::env::var_os("RECOUNT_MEMORY_LIMIT").is_none() {
            assert_eq!((session.as_str(), bulk.as_str()), ("76.2 MiB", "30.5 MiB"), "80 MB, and 32 MB for bulk work");
        }
        assert_eq!((store.threads().unwrap(), limit()), (3, session.clone()), "both are put back");
        assert_eq!(store.bulk(false, || store.threads()).unwrap(), 3, "a landing keeps every thread");
        let err = store.bulk(true, || -> Result<()> { Err(color_eyre::eyre::eyre!("the write failed")) }).unwrap_err();
        assert!(format!("{err:#}").contains("the write failed"), "{err:#}");
        assert_eq!((store.threads().unwrap(), limit()), (3, session), "put back after a failure too");
    }
}
