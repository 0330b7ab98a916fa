//! Hostile input: what an attacker or an unlucky operator feeds recount gets a clear error or a
//! quarantine row, bounded work, and output that cannot act on a terminal or a spreadsheet.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use recount::lake::{land, v2};
use recount::reports;
use recount::store::TriggerKind;

const TS: &str = "2026-08-15T10:00:00.000Z";
const UP: &str = "2026-08-15T10:00:01.000Z";

#[test]
fn long_lines_long_ids_and_a_flood_of_blank_lines_are_quarantined_within_bounds() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let long_id = "B".repeat(300);
    let mut lines = vec![event("ok", "B-ok", "LON1", TS, UP, "GBP", &[100])];
    lines.push(event("e-long", &"x".repeat(70_000), "LON1", TS, UP, "GBP", &[1]));
    lines.push(event("e-id", &long_id, "LON1", TS, UP, "GBP", &[1]));
    lines.extend(std::iter::repeat_n(String::new(), 5_000));
    w.file("2026-08-15", "a.jsonl.gz", &lines);
    let mut lab = open_lab(dir.path());
    let report = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    assert_eq!(report.events, 1);
    assert_eq!(report.quarantined, 5_002, "every bad line is counted");
    let q = reports::listings::quarantine(&lab, None).unwrap();
    assert!(q.rows.len() <= 1_001, "kept one by one up to a thousand, then summed: {}", q.rows.len());
    assert!(q.rows.iter().any(|r| r.line == 2 && r.reason.contains("longer than the 65536")), "{:?}", &q.rows[..3]);
    assert!(q.rows.iter().any(|r| r.line == 3 && r.reason.contains("basket_id of 300 bytes")), "{:?}", &q.rows[..3]);
    assert!(q.rows.iter().all(|r| r.raw_line.chars().count() <= 2_001), "raw lines are kept cut");
    let last = q.rows.last().unwrap();
    assert!(last.reason.contains("more quarantined lines"), "{last:?}");
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    let check = reports::check::check(&lab, day("2026-08-15"), None).unwrap();
    assert!(check.engines_agree, "the polars recount rejects the same lines: {:?}", check.engine_disagreements);
}

#[test]
fn a_date_whose_revenue_could_pass_64_bits_is_refused_naming_the_store_and_the_date() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let before = {
        let lab = open_lab(dir.path());
        lab_digest(&lab)
    };
    // Past 2^53 on one date and store, though each line and the file's sums fit in 64 bits.
    let past = (1_i64 << 53) + 1;
    w.file("2026-08-15", "a.jsonl.gz", &[event("e1", "B1", "LON1", TS, UP, "GBP", &[past])]);
    let mut lab = open_lab(dir.path());
    let err = format!("{:#}", land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap_err());
    assert!(err.contains("business date 2026-08-15") && err.contains("store LON1") && err.contains("nothing was landed"), "{err}");
    assert_eq!(lab_digest(&lab), before, "nothing landed");
    // Two lines whose sum passes 64 bits in the file itself: the file is refused and its upload
    // held back, with the date in the reason; none of its rows lands.
    let big = 5_000_000_000_000_000_000_i64;
    w.file(
        "2026-08-15",
        "a.jsonl.gz",
        &[event("e1", "B1", "LON1", TS, UP, "GBP", &[big]), event("e2", "B2", "LON1", TS, UP, "GBP", &[big])],
    );
    let report = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    assert_eq!(report.held.len(), 1);
    assert!(report.held[0].reason.contains("2026-08-15") && report.held[0].reason.contains("overflows 64 bits"), "{:?}", report.held);
    assert!(!lab.is_landed(day("2026-08-15")).unwrap());
    assert!(lab.is_empty().unwrap(), "no file of it is recorded");
}

#[test]
fn a_window_past_a_year_is_a_usage_error_not_a_panic() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    for args in [["run", "2026-08-15", "--late-days", "100000000"], ["rebuild", "2026-08-15", "--late-days", "1000000"]] {
        let out = recount(&lab, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("366") && !err.contains("panicked"), "{err}");
    }
    assert_eq!(recount(&lab, &["run", "2026-08-15", "--late-days", "366"]).status.code(), Some(0));
}

#[test]
fn csv_json_and_errors_carry_no_control_or_bidi_character_and_csv_no_formula() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    // A basket_id with an OSC 52 escape (it would set the clipboard), a C1 CSI and a bidi
    // override, that a spreadsheet would also run as a formula; sent twice so `baskets` lists it.
    let evil = r#"=HYPERLINK(\"http://x\")\u001b]52;c;aGk=\u0007\u009b\u202e"#;
    let a = event("e1", evil, "LON1", TS, UP, "GBP", &[100]);
    let b = event("e2", evil, "LON1", TS, "2026-08-15T10:05:00.000Z", "GBP", &[100]);
    w.file("2026-08-15", "a.jsonl.gz", &[a, b]);
    let lab = dir.path().join("lab");
    assert!(recount(&lab, &["land", "2026-08-15", "--world", w.root.to_str().unwrap()]).status.success());
    assert!(recount(&lab, &["run", "2026-08-15"]).status.success());
    let bad = |c: char| (c.is_control() && c != '\n' && c != '\r') || ('\u{202a}'..='\u{202e}').contains(&c);
    let csv = String::from_utf8(recount(&lab, &["baskets", "2026-08-15", "--format", "csv"]).stdout).unwrap();
    assert!(!csv.chars().any(bad), "{csv:?}");
    let row = csv.lines().find(|l| l.contains("HYPERLINK")).unwrap();
    assert!(row.starts_with("\"'=HYPERLINK") || row.starts_with("'=HYPERLINK"), "a formula is text: {row}");
    let json = String::from_utf8(recount(&lab, &["baskets", "2026-08-15", "--format", "json"]).stdout).unwrap();
    assert!(!json.chars().any(bad), "{json:?}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["detail"]["baskets"][0]["key"].as_str().unwrap().contains('\u{1b}'), "JSON keeps the data, escaped");
    // An error that quotes the data: a file name with a bidi override.
    let wb = HandWorld::new(dir.path().join("world2"), STORES);
    let p = wb.file(
        "2026-08-16",
        "a.jsonl.gz",
        &[event("e3", "B3", "LON1", "2026-08-16T10:00:00.000Z", "2026-08-16T10:00:01.000Z", "GBP", &[1])],
    );
    std::fs::rename(&p, p.with_file_name("ev\u{202e}lig.jsonl.gz")).unwrap();
    let out = recount(&lab, &["land", "2026-08-16", "--world", wb.root.to_str().unwrap()]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not plain UTF-8 text") && !err.chars().any(bad), "{err:?}");
}

#[test]
fn a_file_name_that_is_not_utf8_is_refused_before_anything_is_written() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let good = w.file("2026-08-15", "a.jsonl.gz", &[event("e1", "B1", "LON1", TS, UP, "GBP", &[100])]);
    // Two names that differ only in a byte that is not UTF-8 would collapse into one.
    for b in [0xffu8, 0xfe] {
        let name = [b"a".as_slice(), &[b], b".jsonl.gz"].concat();
        std::fs::copy(&good, good.with_file_name(std::ffi::OsStr::from_bytes(&name))).unwrap();
    }
    let mut lab = open_lab(dir.path());
    let before = lab_digest(&lab);
    let err = format!("{:#}", land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap_err());
    assert!(err.contains("not plain UTF-8 text"), "{err}");
    assert_eq!(lab_digest(&lab), before);
}

#[test]
fn a_command_started_while_another_holds_the_lab_waits_for_it_briefly() {
    let dir = tempdir();
    let lab = open_lab(dir.path());
    let root = lab.root.clone();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(600));
        drop(lab);
    });
    let out = recount(&root, &["fingerprint"]);
    holder.join().unwrap();
    assert!(out.status.success(), "the lock came free within the wait: {}", String::from_utf8_lossy(&out.stderr));
}
