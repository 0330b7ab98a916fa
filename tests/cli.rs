//! The command line as a user types it: formats, the demo script, and the contract's line.

mod common;

use common::*;
use std::process::Command;

fn recount(lab: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_recount")).arg("--lab").arg(lab).args(args).env("NO_COLOR", "1").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn reports_print_as_table_json_and_csv_with_money_in_minor_units_for_machines() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (d, last) = (ups[3].to_string(), ups[6].to_string());
    assert!(recount(&lab, &["land", &ups[0].to_string(), &last, "--world", &world]).0);
    assert!(recount(&lab, &["run", &ups[0].to_string(), &last]).0);
    let (ok, table, _) = recount(&lab, &["check", &d]);
    assert!(ok && table.contains('£') && table.contains('₹') && table.contains("S$"), "{table}");
    let (_, json, _) = recount(&lab, &["check", &d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let gb = v["countries"].as_array().unwrap().iter().find(|c| c["country"] == "GB").unwrap();
    assert!(gb["v2_revenue_minor"].is_i64(), "JSON keeps integer minor units: {gb}");
    let (_, csv, _) = recount(&lab, &["check", &d, "--format", "csv"]);
    let header = csv.lines().next().unwrap();
    assert!(header.contains("v2_revenue_minor"), "{header}");
    let gb_line = csv.lines().find(|l| l.starts_with("GB,")).unwrap();
    assert!(gb_line.contains(&format!(",{},", gb["v2_revenue_minor"])), "CSV has the same integer: {gb_line}");
    let (_, fp, _) = recount(&lab, &["fingerprint"]);
    let re_ok = fp.starts_with("gold.daily_store_sales: ") && fp.contains(" rows, md5 ") && fp.trim_end().len() > 40;
    assert!(re_ok, "{fp}");
}

#[test]
fn the_demo_narrates_the_doubling_and_the_skipped_retry() {
    let dir = tempdir();
    let lab = dir.path().join("demo-lab");
    let world = small_world().to_str().unwrap().to_string();
    let (ok, out, err) = recount(&lab, &["demo", "--no-pause", "--world", &world]);
    assert!(ok, "{err}");
    for step in 1..=7 {
        assert!(out.contains(&format!("── step {step}: ")), "step {step} missing:\n{out}");
    }
    assert!(out.contains("It appends again: the day doubles."));
    let runs: Vec<&str> = out.lines().filter(|l| l.starts_with("GB ")).map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(&runs[..2], &["1", "2"], "v1 runs once, then twice:\n{out}");
    assert!(out.contains("(skipped)"), "the v2 retry is skipped:\n{out}");
}

#[test]
fn the_demo_on_the_sample_lands_a_correction_that_changes_exactly_its_date_and_skips_an_identical_one() {
    let dir = tempdir();
    let lab = dir.path().join("demo-lab");
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data");
    let (ok, out, err) = recount(&lab, &["demo", "--no-pause", "--world", sample.to_str().unwrap()]);
    assert!(ok, "{err}");
    let step8 = &out[out.find("── step 8: ").expect("step 8")..out.find("── step 9: ").expect("step 9")];
    assert!(step8.contains("corrected: tills-gb.jsonl.gz v2"), "{step8}");
    assert_eq!(step8.matches(" overwrite ").count(), 1, "exactly the corrected date is rewritten:\n{step8}");
    assert!(step8.contains("revenue corrected (tills-gb.jsonl.gz v2)"), "{step8}");
    let step9 = &out[out.find("── step 9: ").unwrap()..];
    assert!(step9.contains("corrected: tills-gb.jsonl.gz v2") && step9.contains("(skipped)"), "{step9}");
}

#[test]
fn an_unknown_snapshot_or_a_bad_date_is_a_clear_error() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let (ok, _, err) = recount(&lab, &["rollback", "42"]);
    assert!(!ok && err.contains("snapshot 42 does not exist"), "{err}");
    let (ok, _, err) = recount(&lab, &["check", "2026-02-30"]);
    assert!(!ok && err.contains("2026-02-30"), "{err}");
}
