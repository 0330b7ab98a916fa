//! Bad input gets a clear error or a quarantine row with file, line and reason; never a panic or
//! a silent drop. A failed landing leaves the lab exactly as it was.

mod common;

use common::*;
use recount::lake::land;
use recount::reports::listings::quarantine;

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
    assert!(got[3].0 == 5 && got[3].1.contains("amount_minor 10.5 is not a 64-bit integer"), "{got:?}");
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

#[test]
fn a_layout_5_lab_is_migrated_in_place_and_keeps_its_history() {
    let dir = tempdir();
    let world = small_world();
    let ups = uploads(world);
    let before = {
        let mut lab = open_lab(dir.path());
        for &u in &ups[..4] {
            recount::lake::land::land(&mut lab, world, &[u]).unwrap();
            recount::lake::v2::run_upload(&lab, u, recount::store::TriggerKind::Daily, opts()).unwrap();
        }
        let history = recount::reports::history::history(&lab, ups[2], None).unwrap();
        // Back to layout 5: the three columns had their old names, and raw files had no versions.
        lab.store()
            .connection_for_tests()
            .execute_batch(
                "DROP VIEW bronze.current_events; DROP VIEW bronze.current_cells; DROP VIEW raw.current_files;
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
