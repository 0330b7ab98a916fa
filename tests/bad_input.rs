//! Bad input gets a clear error or a quarantine row with file, line and reason; never a panic or
//! a silent drop. A failed landing leaves the lab exactly as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use recount::lake::land;
use recount::reports::listings::quarantine;
use recount::store::for_tests::duckdb;

const GOOD_TS: &str = "2026-08-15T10:00:00.000Z";
const GOOD_UP: &str = "2026-08-15T10:00:09.000Z";

fn good(id: &str) -> String {
    event(id, &format!("B-{id}"), "LON1", GOOD_TS, GOOD_UP, "GBP", &[1000])
}

/// A lab that already holds one good upload, so "unchanged" means something.
fn seeded(dir: &std::path::Path) -> (HandWorld, recount::lake::Lab) {
    let w = HandWorld::new(dir.join("world"), STORES);
    w.file("2026-08-14", "ok.jsonl.gz", &[event("e0", "B0", "LON1", "2026-08-14T09:00:00.000Z", "2026-08-14T09:00:01.000Z", "GBP", &[5])]);
    let mut lab = open_lab(dir);
    land::land(&mut lab, &w.root, &[day("2026-08-14")]).unwrap();
    (w, lab)
}

#[test]
fn bad_lines_become_quarantine_rows_with_file_line_and_reason() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    let lines = vec![
        good("g1"),
        "{\"event_id\": \"x\", oops".to_string(),
        good("g2").replace(r#""basket_id":"B-g2","#, ""),
        good("g3").replace("LON1", "NOWHERE"),
        good("g4").replace(r#""amount_minor":1000"#, r#""amount_minor":10.5"#),
        good("g5").replace(r#","amount_minor":1000"#, ""),
        good("g6").replace("2026-08-15T10:00:09", "2026-08-16T00:00:09"),
        good("g7"),
    ];
    w.file("2026-08-15", "mixed.jsonl.gz", &lines);
    let report = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    assert_eq!(report.events, 2);
    assert_eq!(report.quarantined, 6, "every bad line is accounted for");
    let q = quarantine(&lab, Some(day("2026-08-15"))).unwrap();
    let got: Vec<(i64, &str)> = q.rows.iter().map(|r| (r.line, r.reason.as_str())).collect();
    assert!(q.rows.iter().all(|r| r.file == "pos/events/upload_date=2026-08-15/mixed.jsonl.gz"));
    assert!(got[0].0 == 2 && got[0].1.starts_with("malformed JSON"), "{got:?}");
    assert_eq!(got[1], (3, "missing required field basket_id"));
    assert_eq!(got[2], (4, "unknown store_id 'NOWHERE'"));
    assert_eq!(got[3], (5, "tender 1: amount_minor is not a 64-bit integer"), "the raw line beside it shows the value");
    assert!(got[4].0 == 6 && got[4].1.contains("missing amount_minor"), "{got:?}");
    assert!(got[5].0 == 7 && got[5].1.contains("not in partition upload_date=2026-08-15"), "{got:?}");
    // Bronze rows keep their own line numbers.
    let lines: Vec<i64> = {
        let mut s = lab
            .store()
            .connection_for_tests()
            .prepare("SELECT line FROM bronze.events WHERE upload_date = DATE '2026-08-15' ORDER BY line")
            .unwrap();
        s.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(lines, vec![1, 8]);
}

/// The contract's section 2: a file is split at the newline byte before it is decoded, so a line
/// that is not UTF-8 is quarantined alone, and the other lines of its file land, in the landing,
/// in the independent recount, and through the command line (exit 0: nothing is held back).
#[test]
fn a_line_that_is_not_utf8_is_quarantined_alone_and_the_rest_of_its_file_lands() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    let bad_line = good("g2").replace("\"card\"", "\"caf\u{e9}\"");
    let at = bad_line.find("caf").unwrap() + 3;
    let mut bad = bad_line.into_bytes();
    bad.splice(at..at + 2, [0xe9]); // Latin-1's é where UTF-8 has two bytes
    w.file_of_bytes("2026-08-15", "latin.jsonl.gz", &[good("g1").as_bytes(), &bad, good("g3").as_bytes()]);
    let report = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    assert!(report.held.is_empty(), "{:?}", report.held);
    assert_eq!((report.events, report.quarantined), (2, 1), "the file's other lines land");
    let q = quarantine(&lab, Some(day("2026-08-15"))).unwrap();
    assert_eq!(q.rows.len(), 1);
    assert_eq!((q.rows[0].line, q.rows[0].reason.as_str()), (2, format!("not UTF-8 at byte {at}").as_str()));
    // The independent recount reads the same lines: v2 and the recompute agree on the date.
    drop(lab);
    let lab_dir = dir.path().join("lab");
    let check = recount(&lab_dir, &["run", "2026-08-14", "2026-08-15"]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let v: serde_json::Value = serde_json::from_str(&ok(&lab_dir, &["--format", "json", "check", "2026-08-15"])).unwrap();
    let gb = &v["detail"]["countries"][0];
    assert_eq!((gb["v2_baskets"].as_i64(), gb["recompute_baskets"].as_i64()), (Some(2), Some(2)), "{v}");
    assert_eq!(gb["v2_revenue_minor"], gb["recompute_revenue_minor"], "{v}");
}

fn assert_fails_and_lab_unchanged(lab: &mut recount::lake::Lab, world: &std::path::Path, upload: &str, expect: &str) {
    let before = lab_digest(lab);
    let err = land::land(lab, world, &[day(upload)]).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains(expect), "expected '{expect}' in: {msg}");
    assert_eq!(lab_digest(lab), before, "a failed landing must leave the lab as it was");
}

#[test]
fn a_corrupt_gz_holds_back_its_own_upload_the_others_land_and_it_lands_once_fixed() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    w.file("2026-08-15", "a-good.jsonl.gz", &[good("g1")]);
    let bad = w.file("2026-08-15", "b-cut.jsonl.gz", &(0..200).map(|i| good(&format!("c{i}"))).collect::<Vec<_>>());
    let fixed = std::fs::read(&bad).unwrap();
    std::fs::write(&bad, &fixed[..fixed.len() / 2]).unwrap();
    let next = event("n1", "B-n1", "LON1", "2026-08-16T09:00:00.000Z", "2026-08-16T09:00:01.000Z", "GBP", &[7]);
    w.file("2026-08-16", "a.jsonl.gz", &[next]);
    let before = lab_digest(&lab);
    let report = land::land(&mut lab, &w.root, &[day("2026-08-15"), day("2026-08-16")]).unwrap();
    assert_eq!(report.held.len(), 1);
    assert_eq!((report.held[0].upload_date, report.held[0].file.as_str()), (day("2026-08-15"), "b-cut.jsonl.gz"));
    assert!(report.held[0].reason.contains("truncated or corrupt .gz"), "{:?}", report.held);
    assert!(report.render().contains("upload 2026-08-15 HELD BACK: b-cut.jsonl.gz"), "{}", report.render());
    assert_ne!(lab_digest(&lab), before, "the other upload landed");
    assert!(lab.is_landed(day("2026-08-16")).unwrap());
    assert!(!lab.is_landed(day("2026-08-15")).unwrap(), "nothing of the held upload, its good file included");
    // The held upload's good lines never reached the quarantine either: nothing of it is in the lab.
    assert!(quarantine(&lab, Some(day("2026-08-15"))).unwrap().rows.is_empty());
    std::fs::write(&bad, &fixed).unwrap();
    let again = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    assert!(again.held.is_empty());
    assert_eq!(again.partitions[0].files_landed, 2);
    // Not gzip at all, through the command line: the other upload still lands, the exit code is 1.
    std::fs::write(&bad, b"this is not gzip at all").unwrap();
    drop(lab);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["--lab", dir.path().join("lab").to_str().unwrap(), "land", "2026-08-15", "--world", w.root.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("HELD BACK"), "{text}");
}

#[test]
fn a_stores_csv_with_an_unknown_time_zone_is_an_error() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    std::fs::write(w.root.join("stores.csv"), format!("{STORES}MAR1,GB,Mars/Olympus_Mons,GBP\n")).unwrap();
    w.file("2026-08-15", "a.jsonl.gz", &[good("g1")]);
    assert_fails_and_lab_unchanged(&mut lab, &w.root, "2026-08-15", "unknown time zone 'Mars/Olympus_Mons'");
}

#[test]
fn a_partition_directory_that_is_not_a_date_is_an_error() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    w.file("2026-08-15", "a.jsonl.gz", &[good("g1")]);
    std::fs::create_dir_all(w.root.join("pos/events/upload_date=2026-02-30")).unwrap();
    assert_fails_and_lab_unchanged(&mut lab, &w.root, "2026-08-15", "'2026-02-30' is not a valid date");
}

#[test]
fn two_processes_cannot_write_one_lab_at_once() {
    let dir = tempdir();
    let (_w, lab) = seeded(dir.path());
    // A second open in this process (a second lock holder) is refused with a clear message...
    let err = recount::lake::Lab::open(&lab.root).err().expect("second open must fail");
    assert!(format!("{err:#}").contains("in use by another recount process"), "{err:#}");
    // ...and so is a second process.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["--lab", lab.root.to_str().unwrap(), "fingerprint"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("in use by another recount process"), "{stderr}");
    assert!(stderr.contains(&format!("pid {}", std::process::id())), "names the holder: {stderr}");
    drop(lab);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["--lab", dir.path().join("lab").to_str().unwrap(), "fingerprint"])
        .output()
        .unwrap();
    assert!(out.status.success(), "free again once the first holder closes: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_lab_written_by_an_older_layout_is_refused_with_the_way_out() {
    let dir = tempdir();
    {
        let conn = duckdb::Connection::open(dir.path().join("recount.duckdb")).unwrap();
        conn.execute_batch("CREATE SCHEMA bronze; CREATE TABLE bronze.events (event_id VARCHAR, file VARCHAR);").unwrap();
    }
    let err = recount::lake::Lab::open(dir.path()).err().expect("an old lab is refused").to_string();
    assert!(err.contains("another recount") && err.contains("layout 1") && err.contains("delete the lab directory"), "{err}");

    // Layout 2 kept silver as a table.
    let dir = tempdir();
    {
        let conn = duckdb::Connection::open(dir.path().join("recount.duckdb")).unwrap();
        conn.execute_batch("CREATE SCHEMA silver; CREATE TABLE silver.baskets (basket_id VARCHAR);").unwrap();
    }
    let err = recount::lake::Lab::open(dir.path()).err().expect("a layout 2 lab is refused").to_string();
    assert!(err.contains("layout 2") && err.contains("delete the lab directory"), "{err}");

    // Layout 3 had no basket key in bronze.
    let dir = tempdir();
    {
        let conn = duckdb::Connection::open(dir.path().join("recount.duckdb")).unwrap();
        conn.execute_batch("CREATE SCHEMA bronze; CREATE TABLE bronze.events (event_id VARCHAR, basket_id VARCHAR, file_id INTEGER);")
            .unwrap();
    }
    let err = recount::lake::Lab::open(dir.path()).err().expect("a layout 3 lab is refused").to_string();
    assert!(err.contains("layout 3") && err.contains("delete the lab directory"), "{err}");

    // Layout 4 kept gold as a table.
    let dir = tempdir();
    {
        let conn = duckdb::Connection::open(dir.path().join("recount.duckdb")).unwrap();
        conn.execute_batch("CREATE SCHEMA gold; CREATE TABLE gold.daily_store_sales (business_date DATE);").unwrap();
    }
    let err = recount::lake::Lab::open(dir.path()).err().expect("a layout 4 lab is refused").to_string();
    assert!(err.contains("layout 4") && err.contains("delete the lab directory"), "{err}");
}

/// Bronze's events back as layout 7 kept them: one table with the store's strings on every row.
const BACK_TO_LAYOUT_7_EVENTS: &str = "
    CREATE TABLE bronze.events_7 AS
        SELECT event_id, basket_id, store_id, till_id, country, currency, event_ts, uploaded_at, upload_date,
               business_date, revenue_minor, tenders, file_id, line, basket_key FROM bronze.events ORDER BY file_id, line;
    DROP VIEW bronze.current_events; DROP VIEW bronze.current_event_rows; DROP VIEW raw.current_file_ranks;
    DROP VIEW bronze.events; DROP TABLE bronze.event_rows; DROP TABLE bronze.store_rows;
    ALTER TABLE bronze.events_7 RENAME TO events;";

/// What `sql` counts in the lab.
fn count(lab: &recount::lake::Lab, sql: &str) -> i64 {
    lab.store().connection_for_tests().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A lab in `dir` with the small world's first `n` uploads landed and run one by one, as the
/// daily schedule does, and the business dates those runs wrote.
fn daily_lab(dir: &std::path::Path, n: usize) -> (recount::lake::Lab, Vec<chrono::NaiveDate>) {
    let world = small_world();
    let mut lab = open_lab(dir);
    let mut dates = std::collections::BTreeSet::new();
    for &u in &uploads(world)[..n] {
        recount::lake::land::land(&mut lab, world, &[u]).unwrap();
        let run = recount::lake::v2::run_upload(&lab, u, recount::store::TriggerKind::Daily, opts()).unwrap();
        dates.extend(run.dates.iter().map(|d| d.business_date));
    }
    (lab, dates.into_iter().collect())
}

#[test]
fn a_layout_7_lab_is_migrated_in_place_its_events_numbered_by_store_row() {
    let dir = tempdir();
    let world = small_world();
    let ups = uploads(world);
    // Every event as text, in file and line order: what the migration must keep.
    let events = "SELECT md5(string_agg(concat_ws('|', event_id, basket_id, store_id, till_id, country, currency, event_ts, \
                  uploaded_at, upload_date, business_date, revenue_minor, tenders, file_id, line, basket_key), chr(10) \
                  ORDER BY file_id, line)) FROM bronze.events";
    let text = |lab: &recount::lake::Lab| -> String { lab.store().connection_for_tests().query_row(events, [], |r| r.get(0)).unwrap() };
    let (before, history, dates) = {
        let (lab, dates) = daily_lab(dir.path(), 4);
        let history = recount::reports::history::history(&lab, ups[2], None).unwrap().table().rows.len();
        let before = (fingerprint(&lab), text(&lab));
        lab.store().connection_for_tests().execute_batch(&format!("{BACK_TO_LAYOUT_7_EVENTS} UPDATE audit.lab SET format = 7;")).unwrap();
        assert_eq!(count(&lab, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'store_rows'"), 0);
        (before, history, dates)
    };
    let mut lab = open_lab(dir.path());
    assert_eq!(count(&lab, "SELECT max(format) FROM audit.lab"), i64::from(recount::lake::LAB_FORMAT));
    assert_eq!(
        count(&lab, "SELECT count(*) FROM bronze.store_rows"),
        count(&lab, "SELECT count(*) FROM (SELECT DISTINCT store_id, country, currency FROM bronze.events)"),
        "one number per store row"
    );
    assert_eq!(count(&lab, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'events_7'"), 0, "the old table is gone");
    assert_eq!(text(&lab), before.1, "every event kept, with its store's strings");
    assert_eq!(fingerprint(&lab), before.0);
    assert_eq!(recount::reports::history::history(&lab, ups[2], None).unwrap().table().rows.len(), history);
    // Rebuilt and landed on after the migration, gold is what the events say.
    recount::lake::v2::rebuild_dates(&lab, &dates, recount::lake::v2::V2Options { force: true, ..opts() }).unwrap();
    assert_eq!(fingerprint(&lab), before.0);
    let rows = count(&lab, "SELECT count(*) FROM bronze.store_rows");
    recount::lake::land::land(&mut lab, world, &ups[4..5]).unwrap();
    recount::lake::v2::run_upload(&lab, ups[4], recount::store::TriggerKind::Daily, opts()).unwrap();
    assert_eq!(count(&lab, "SELECT count(*) FROM bronze.store_rows"), rows, "a later landing reuses the numbers");
    let fresh_dir = tempdir();
    let (fresh, _) = daily_lab(fresh_dir.path(), 5);
    assert_eq!(fingerprint(&lab), fingerprint(&fresh), "the migrated lab's gold is a new lab's");
    assert_eq!(text(&lab), text(&fresh), "and so are its events");
}

#[test]
fn a_layout_5_lab_is_migrated_in_place_and_keeps_its_history() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let before = {
        let (lab, _) = daily_lab(dir.path(), 4);
        let history = recount::reports::history::history(&lab, ups[2], None).unwrap();
        // Back to layout 5: the three columns had their old names, and raw files had no versions.
        lab.store().connection_for_tests().execute_batch(BACK_TO_LAYOUT_7_EVENTS).unwrap();
        lab.store()
            .connection_for_tests()
            .execute_batch(
                "DROP VIEW bronze.current_cells; DROP VIEW raw.current_files;
                 DROP TABLE raw.supersessions;
                 ALTER TABLE raw.files DROP COLUMN version;
                 ALTER TABLE audit.snapshots RENAME COLUMN rows_replaced TO rows_deleted;
                 ALTER TABLE audit.snapshot_dates RENAME COLUMN silver_replaced TO silver_deleted;
                 ALTER TABLE audit.snapshot_dates RENAME COLUMN gold_replaced TO gold_deleted;
                 UPDATE audit.lab SET format = 5;",
            )
            .unwrap();
        (fingerprint(&lab), history.table().rows.len(), recount::reports::history::snapshots(&lab).map(|s| s.records.len()).ok())
    };
    let lab = open_lab(dir.path());
    let format: i32 = lab.store().connection_for_tests().query_row("SELECT max(format) FROM audit.lab", [], |r| r.get(0)).unwrap();
    assert_eq!(format, recount::lake::LAB_FORMAT);
    assert_eq!(before.2, None, "a layout-5 lab cannot be read by layout-6 statements before it is migrated");
    assert_eq!(fingerprint(&lab), before.0);
    assert_eq!(recount::reports::history::history(&lab, ups[2], None).unwrap().table().rows.len(), before.1);
    let records = recount::reports::history::snapshots(&lab).unwrap().records;
    assert_eq!(records.len(), 4);
    assert!(records.iter().any(|r| r.rows_replaced > 0), "the renamed column kept its values");
}

#[test]
fn a_current_labs_writing_open_writes_nothing() {
    let dir = tempdir();
    let wal = dir.path().join("lab").join("recount.duckdb.wal");
    {
        let mut lab = open_lab(dir.path());
        let ups = uploads(small_world());
        recount::lake::land::land(&mut lab, small_world(), &ups[..2]).unwrap();
    }
    assert!(!wal.exists(), "closing the lab checkpoints it");
    let _open = open_lab(dir.path());
    // The schema this build writes is there already (its digest says so): creating it again
    // committed each statement on its own, a WAL and an fsync apiece.
    assert!(!wal.exists(), "a writing open of a current lab wrote to the WAL");
}

#[test]
fn a_layout_6_lab_is_migrated_in_place_and_its_keys_with_several_copies_are_listed() {
    let dir = tempdir();
    let (before, listed, dates) = {
        let (lab, dates) = daily_lab(dir.path(), 4);
        let listed = count(&lab, "SELECT count(*) FROM bronze.multi_copies");
        assert!(listed > 0, "the world re-sends baskets, so landing lists keys with several copies");
        // Back to layout 6: no list of keys with several copies.
        lab.store()
            .connection_for_tests()
            .execute_batch(&format!("{BACK_TO_LAYOUT_7_EVENTS} DROP TABLE bronze.multi_copies; UPDATE audit.lab SET format = 6;"))
            .unwrap();
        (fingerprint(&lab), listed, dates)
    };
    let lab = open_lab(dir.path());
    assert_eq!(count(&lab, "SELECT max(format) FROM audit.lab"), i64::from(recount::lake::LAB_FORMAT));
    assert_eq!(count(&lab, "SELECT count(*) FROM bronze.multi_copies"), listed, "the migration lists what landing listed");
    // Rebuilt from the migrated list, every re-sent basket is still counted once.
    let silver = "SELECT count(*) FROM silver.baskets";
    let rows = count(&lab, silver);
    recount::lake::v2::rebuild_dates(&lab, &dates, recount::lake::v2::V2Options { force: true, ..opts() }).unwrap();
    assert_eq!(count(&lab, silver), rows);
    assert_eq!(fingerprint(&lab), before);
}

#[test]
fn a_row_dated_2099_is_future_dated_not_late_in_the_run_and_in_late_with_days_as_a_number() {
    let dir = tempdir();
    let (w, mut lab) = seeded(dir.path());
    let clock = event("f1", "B-f1", "LON1", "2099-01-01T10:00:00.000Z", GOOD_UP, "GBP", &[4200]);
    let old = event("o1", "B-o1", "LON1", "2026-08-01T10:00:00.000Z", GOOD_UP, "GBP", &[100]);
    w.file("2026-08-15", "a.jsonl.gz", &[good("g1"), clock, old]);
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    let run = recount::lake::v2::run_upload(&lab, day("2026-08-15"), recount::store::TriggerKind::Daily, opts()).unwrap();
    let text = run.render();
    assert!(text.contains("future-dated (clock error?): 1 event row(s) of business date 2099-01-01"), "{text}");
    assert!(text.contains("beyond the window: 1 event row(s) of business date 2026-08-01"), "{text}");
    assert_eq!(run.beyond_window.iter().filter(|b| b.future_dated).count(), 1);
    let late = recount::reports::listings::late(&lab, None, 2).unwrap();
    let rendered = recount::reports::table::render(&late, recount::reports::Format::Csv, false);
    let mut rdr = csv::Reader::from_reader(rendered.as_bytes());
    let h = rdr.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let future = rows.iter().find(|r| &r[col("business_date")] == "2099-01-01").unwrap();
    assert_eq!(&future[col("kind")], "future-dated (clock error?)");
    assert!(future[col("days_late")].parse::<i64>().unwrap() < 0, "a number: {:?}", &future[col("days_late")]);
    let late_one = rows.iter().find(|r| &r[col("business_date")] == "2026-08-01").unwrap();
    assert_eq!((&late_one[col("kind")], &late_one[col("days_late")]), ("beyond the window", "14"));
    let table = recount::reports::table::render(&late, recount::reports::Format::Table, false);
    assert!(table.contains("1 of them future-dated (clock error?)"), "{table}");
}

/// A small tmpfs, unmounted when dropped: the tests run as root, as CI does.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn new(at: std::path::PathBuf, size: &str) -> SmallDisk {
        std::fs::create_dir_all(&at).unwrap();
        let st = std::process::Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&at).status();
        assert!(st.is_ok_and(|s| s.success()), "mounting a {size} tmpfs at {} (the test needs root, as CI has)", at.display());
        SmallDisk(at)
    }

    /// Fills the disk to its last byte.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 64 << 10];
        while f.write_all(&chunk).is_ok() {}
        for _ in 0..64 {
            let _ = f.write_all(&[0]);
        }
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_the_lab_as_it_was_and_says_so_in_recounts_words() {
    let dir = tempdir();
    let disk = SmallDisk::new(dir.path().join("disk"), "64m");
    let lab = disk.0.join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (first, fourth) = (ups[0].to_string(), ups[3].to_string());
    ok(&lab, &["daily", &first, &fourth, "--world", &world]);
    let before = ok(&lab, &["fingerprint"]);
    let filler = disk.fill();
    let next = ups[4].to_string();
    for args in [
        vec!["land", next.as_str(), "--world", world.as_str()],
        vec!["rebuild", ups[2].to_string().leak(), "--force"],
        vec!["rollback", "2", "--yes"],
    ] {
        let out = recount(&lab, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("is full") && err.contains("the lab is as it was"), "{args:?}: recount's own words: {err}");
        assert!(!err.contains("Unknown error code"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert_eq!(ok(&lab, &["fingerprint"]), before, "{args:?}: the fingerprint is unchanged");
    }
    std::fs::remove_file(filler).unwrap();
    ok(&lab, &["daily", &next, "--world", &world]);
    assert_ne!(ok(&lab, &["fingerprint"]), before, "with room again, the next upload lands and runs");
}

#[test]
fn a_read_only_lab_is_read_and_a_write_to_it_says_so_in_one_line() {
    let dir = tempdir();
    let disk = SmallDisk::new(dir.path().join("disk"), "64m");
    let lab = disk.0.join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    ok(&lab, &["daily", &ups[0].to_string(), &ups[2].to_string(), "--world", &world]);
    let before = ok(&lab, &["fingerprint"]);
    let st = std::process::Command::new("mount").args(["-o", "remount,ro"]).arg(&disk.0).status().unwrap();
    assert!(st.success(), "remounting the tmpfs read-only");
    assert_eq!(ok(&lab, &["fingerprint"]), before, "a read-only lab is read");
    let out = recount(&lab, &["land", &ups[3].to_string(), "--world", &world]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot be written here") && err.contains("the lab is as it was"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let _ = std::process::Command::new("mount").args(["-o", "remount,rw"]).arg(&disk.0).status();
    assert_eq!(ok(&lab, &["fingerprint"]), before);
}
