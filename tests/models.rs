//! Models (docs/data-contract.md, "Models"): the manufacturing world as `generate --model
//! manufacturing` writes it, recounted with the model and held to a reading of the contract
//! written here from scratch; the correction scenario; a model of one's own in `recount.toml`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use chrono::{DateTime, NaiveDate, Utc};
use common::*;
use recount::store::for_tests::duckdb;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn world() -> &'static (tempfile::TempDir, PathBuf) {
    static W: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempdir();
        let w = dir.path().join("plant-feed");
        recount::world::manufacturing::generate(&w, 7).unwrap();
        (dir, w)
    })
}

/// A copy of the plant feed in `dir`, for a test that changes its files.
fn world_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("w");
    copy_dir(&world().1, &copy);
    copy
}

fn gunzip(path: &Path) -> String {
    let mut s = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut s).unwrap();
    s
}

/// Section 7 read from scratch: every file's lines, the copy with the smallest (uploaded_at,
/// event_id, upload date, file name, line) kept per record_id, the business date in the plant's
/// zone, rows summed per (date, plant, line, product) and fingerprinted.
/// Gold by (date, plant, line, product): records, units, defects.
type Gold = BTreeMap<(String, String, String, String), [i64; 3]>;

fn oracle(world: &Path) -> (String, Gold) {
    oracle_with(world, None)
}

/// The same with v2's lateness window of `late` days: a row feeds its business date only when it
/// was uploaded from the eve of that date to `late` days after it (None: every row, the recount).
fn oracle_with(world: &Path, late: Option<i64>) -> (String, Gold) {
    oracle_opts(world, late, true)
}

/// The same, and without dedup (`dedup` false: every copy counted, the bug an audit names).
fn oracle_opts(world: &Path, late: Option<i64>, dedup: bool) -> (String, Gold) {
    let zones = zones_of(&world.join("plants.csv"));
    let root = world.join("mes/records");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    parts.sort();
    type Key = (DateTime<Utc>, String, String, String, usize);
    let mut best: HashMap<String, (Key, serde_json::Value)> = HashMap::new();
    let mut every: Vec<serde_json::Value> = Vec::new();
    for part in parts {
        let upload = part.file_name().unwrap().to_str().unwrap().trim_start_matches("upload_date=").to_string();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&part).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_str().unwrap().to_string();
            for (i, line) in gunzip(&f).lines().enumerate() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let (units, defects) = (v["units"].as_i64().unwrap(), v["defects"].as_i64().unwrap());
                if units < 0 || defects < 0 || defects > units || !zones.contains_key(v["plant_id"].as_str().unwrap()) {
                    continue;
                }
                let plant = v["plant_id"].as_str().unwrap();
                let local = DateTime::parse_from_rfc3339(v["produced_at"].as_str().unwrap()).unwrap().with_timezone(&zones[plant]);
                let days = (NaiveDate::parse_from_str(&upload, "%Y-%m-%d").unwrap() - local.date_naive()).num_days();
                if late.is_some_and(|late| !(-1..=late).contains(&days)) {
                    continue;
                }
                let up = DateTime::parse_from_rfc3339(v["uploaded_at"].as_str().unwrap()).unwrap().to_utc();
                let key: Key = (up, v["event_id"].as_str().unwrap().into(), upload.clone(), name.clone(), i);
                let id = v["record_id"].as_str().unwrap().to_string();
                every.push(v.clone());
                if best.get(&id).is_none_or(|(k, _)| key < *k) {
                    best.insert(id, (key, v));
                }
            }
        }
    }
    let mut gold = Gold::new();
    let counted: Vec<&serde_json::Value> = if dedup { best.values().map(|(_, v)| v).collect() } else { every.iter().collect() };
    for v in counted {
        let plant = v["plant_id"].as_str().unwrap().to_string();
        let at = DateTime::parse_from_rfc3339(v["produced_at"].as_str().unwrap()).unwrap().with_timezone(&zones[&plant]);
        let k = (at.date_naive().to_string(), plant, v["line_id"].as_str().unwrap().into(), v["product_id"].as_str().unwrap().into());
        let g = gold.entry(k).or_default();
        g[0] += 1;
        g[1] += v["units"].as_i64().unwrap();
        g[2] += v["defects"].as_i64().unwrap();
    }
    let text: Vec<String> = gold.iter().map(|((d, p, l, pr), m)| format!("{d}|{p}|{l}|{pr}|{}|{}|{}", m[0], m[1], m[2])).collect();
    use md5::Digest;
    let md5: String = md5::Md5::digest(text.join("\n").as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    (format!("gold.daily_metrics: {} rows, md5 {md5}", recount::money::format_count(gold.len() as i64)), gold)
}

fn scenario_row(report: &recount::reports::model::ModelReport) -> Vec<i64> {
    let d = NaiveDate::from_ymd_opt(2026, 6, 29).unwrap();
    let row = report.recount.rows.iter().find(|r| r.business_date == d && r.grain == ["plant-a", "line-1", "gearbox-a"]).unwrap();
    row.measures.clone()
}

#[test]
fn the_manufacturing_world_recounts_to_the_fingerprint_a_reading_from_scratch_gives() {
    let (_, w) = world();
    let report = recount::reports::model::model_report(w, 0).unwrap();
    assert_eq!(report.model.gold, "daily_metrics");
    let (fingerprint, gold) = oracle(w);
    assert_eq!(report.fingerprint, fingerprint);
    assert_eq!(report.recount.rows.len(), gold.len());
    // The scenario as the seed tells it: 120 units and 3 defects on 2026-06-29.
    assert_eq!(scenario_row(&report), [16, 120, 3]);
}

#[test]
fn the_world_holds_what_the_rules_are_about() {
    let (_, w) = world();
    let report = recount::reports::model::model_report(w, 0).unwrap();
    let plants = std::fs::read_to_string(w.join("plants.csv")).unwrap();
    for zone in ["America/Chicago", "Asia/Kolkata", "Europe/Berlin"] {
        assert!(plants.contains(zone), "{plants}");
    }
    let r = &report.recount;
    assert!(r.copies > r.entities, "re-sent records: {} copies of {} records", r.copies, r.entities);
    let reasons: Vec<&str> = r.refused.iter().map(|x| x.reason.as_str()).collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons.iter().any(|x| x.contains("defects_within_units")), "{reasons:?}");
    assert!(reasons.iter().any(|x| x.contains("units_non_negative")), "{reasons:?}");
    assert!(reasons.iter().any(|x| x.contains("unknown plant_id 'plant-z'")), "{reasons:?}");
    assert!(r.refused.iter().all(|x| x.file.starts_with("upload_date=2026-07-02/") && x.line > 0));
    // The offline line's records arrive days late, in one batch.
    let batch = w.join("mes/records/upload_date=2026-07-06/plant-c-backfill.jsonl.gz");
    let late: Vec<String> = gunzip(&batch).lines().map(|l| l[l.find("produced_at").unwrap() + 14..][..10].to_string()).collect();
    assert!(late.iter().any(|d| d.as_str() <= "2026-07-02"), "{late:?}");
    // The night shift (22:00-06:00) crosses local midnight: each date's gearbox-b holds the six
    // counts after one midnight and the two before the next, all eight of its local hours.
    let night: Vec<_> = r.rows.iter().filter(|x| x.grain == ["plant-b", "line-1", "gearbox-b"]).collect();
    assert!(night.len() > 20 && night.iter().all(|x| x.measures[0] == 8), "{:?}", &night[..3]);
}

#[test]
fn the_corrected_file_moves_exactly_its_group_and_the_recompressed_one_moves_nothing() {
    let dir = tempdir();
    let copy = world_copy(dir.path());
    let before = recount::reports::model::model_report(&copy, 0).unwrap();
    let rel = "mes/records/upload_date=2026-06-30/plant-a.jsonl.gz";
    std::fs::copy(copy.join("corrections/01-corrected-counts").join(rel), copy.join(rel)).unwrap();
    let after = recount::reports::model::model_report(&copy, 0).unwrap();
    assert_eq!(scenario_row(&after), [16, 135, 2]);
    let changed: Vec<_> = before.recount.rows.iter().zip(&after.recount.rows).filter(|(a, b)| a != b).collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(after.fingerprint, oracle(&copy).0);
    let bytes_01 = std::fs::read(copy.join(rel)).unwrap();
    std::fs::copy(copy.join("corrections/02-recompressed").join(rel), copy.join(rel)).unwrap();
    assert_ne!(std::fs::read(copy.join(rel)).unwrap(), bytes_01, "other bytes");
    assert_eq!(recount::reports::model::model_report(&copy, 0).unwrap().fingerprint, after.fingerprint);
}

#[test]
fn the_cli_generates_reads_and_checks_a_model_world() {
    let dir = tempdir();
    let w = dir.path().join("plant-feed");
    let ws = w.to_str().unwrap();
    let out = recount(dir.path(), &["generate", "--model", "manufacturing", "--out", ws]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Not into a folder that holds something.
    let again = recount(dir.path(), &["generate", "--model", "manufacturing", "--out", ws]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("not empty"));
    let model = recount(dir.path(), &["model", ws]);
    let text = String::from_utf8_lossy(&model.stdout);
    assert!(model.status.success() && text.contains(&oracle(&w).0), "{text}");
    let check = recount(dir.path(), &["source", "check", ws]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success() && text.contains("defects_within_units: defects <= units"), "{text}");
}

fn json(lab: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(lab, &all)).unwrap()
}

fn fingerprint_of(lab: &Path) -> String {
    ok(lab, &["fingerprint"]).trim().to_string()
}

/// Each snapshot's recorded fingerprint is gold's hashed whole as of that snapshot: a write that
/// resumed hashing from a kept state (model.gold_prefix) hashed what a reading from scratch does.
/// Returns how many snapshots it checked.
fn recorded_fingerprints_hold(lab: &Path) -> usize {
    let snapshots = json(lab, &["snapshots"]);
    let rows = snapshots["detail"]["snapshots"].as_array().unwrap();
    for s in rows {
        let id = s["snapshot_id"].to_string();
        let whole = ok(lab, &["fingerprint", "--as-of", &id]);
        assert!(whole.contains(s["gold_md5"].as_str().unwrap()), "snapshot {id}: recorded {s}, whole {whole}");
    }
    rows.len()
}

const FIRST: &str = "2026-06-18";
const LAST: &str = "2026-07-15";

/// v2's gold of plant-a / line-1 / gearbox-a on 2026-06-29, as `check` shows it.
fn scenario_in_lab(lab: &Path) -> Vec<i64> {
    let check = json(lab, &["check", "2026-06-29"]);
    let row = check["detail"]["v2"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["grain"] == serde_json::json!(["plant-a", "line-1", "gearbox-a"]))
        .unwrap();
    row["measures"].as_array().unwrap().iter().map(|m| m.as_i64().unwrap()).collect()
}

#[test]
fn the_manufacturing_lab_gives_the_window_s_gold_forwards_backwards_and_day_by_day() {
    let (_, w) = world();
    let ws = w.to_str().unwrap();
    let (want, _) = oracle_with(w, Some(2));
    assert_ne!(want, oracle(w).0, "the world has rows past their window, so the window matters here");
    let dir = tempdir();
    let (fwd, back, daily) = (dir.path().join("fwd"), dir.path().join("back"), dir.path().join("daily"));
    ok(&fwd, &["land", FIRST, LAST, "--world", ws]);
    ok(&fwd, &["run", FIRST, LAST]);
    assert_eq!(fingerprint_of(&fwd), want);
    ok(&back, &["land", FIRST, LAST, "--world", ws]);
    let uploads: Vec<NaiveDate> = NaiveDate::from_ymd_opt(2026, 6, 18).unwrap().iter_days().take(28).collect();
    for d in uploads.iter().rev() {
        ok(&back, &["run", &d.to_string()]);
    }
    assert_eq!(fingerprint_of(&back), want);
    // Each run from an earlier date than the last made the kept hash states stale.
    assert!(recorded_fingerprints_hold(&back) > 20);
    // The offline line's rows arrive past their window: `--alert-on` exits 5 and says so, as on
    // a retail lab.
    let alerted = recount(&daily, &["daily", FIRST, LAST, "--world", ws, "--alert-on", "beyond-window"]);
    let err = String::from_utf8_lossy(&alerted.stderr);
    assert_eq!(alerted.status.code(), Some(5), "{err}");
    assert!(err.contains("ALERT beyond-window: upload ") && err.contains("record(s) v2 has no copy of"), "{err}");
    assert_eq!(fingerprint_of(&daily), want);
    // Day by day, each write hashed from the state the one before kept.
    assert!(recorded_fingerprints_hold(&daily) > 20);
    // The recount counts every row; v2 leaves out the offline line's rows past their window,
    // which `check` calls beyond window, as on a retail lab: no failure.
    let check = json(&fwd, &["check", "2026-07-02"]);
    assert!(check["detail"]["v2"] != check["detail"]["recompute"], "{check}");
    assert!(!check["detail"]["beyond_window"].as_array().unwrap().is_empty(), "{check}");
    let text = ok(&fwd, &["check", "2026-07-02"]);
    assert!(text.contains("beyond window: v2 differs from the recompute only by records that arrived past the window"), "{text}");
    // A model lab takes no other world: retail's sample lands in a lab of its own.
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let retail = recount(&fwd, &["land", "2026-10-19", "--world", sample.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&retail.stderr);
    assert!(!retail.status.success() && err.contains("holds model manufacturing"), "a retail world into a manufacturing lab: {err}");
}

/// A write finds re-sent keys by model.records.key_hash, kept at landing. A lab an older build
/// landed has no such column, and one whose DuckDB hashed differently has other hashes: the next
/// open makes them again, and gold is the contract's.
#[test]
fn a_lab_without_this_build_s_key_hashes_gets_them_at_its_next_open_and_the_same_gold() {
    let (_, w) = world();
    let ws = w.to_str().unwrap();
    let (want, _) = oracle_with(w, Some(2));
    let dir = tempdir();
    for (name, older) in [
        ("older-build", "ALTER TABLE model.records DROP COLUMN key_hash;"),
        ("other-hash", "UPDATE model.records SET key_hash = key_hash + 1;"),
    ] {
        let lab = dir.path().join(name);
        // Half the uploads landed before, half after: a key re-sent across the two halves is
        // found only if both copies' hashes are this build's.
        ok(&lab, &["land", FIRST, "2026-07-01", "--world", ws]);
        {
            let db = duckdb::Connection::open(lab.join("recount.duckdb")).unwrap();
            db.execute_batch(&format!("{older} DELETE FROM audit.schema;")).unwrap();
        }
        ok(&lab, &["land", "2026-07-02", LAST, "--world", ws]);
        ok(&lab, &["run", FIRST, LAST]);
        assert_eq!(fingerprint_of(&lab), want, "{name}");
        let db = duckdb::Connection::open(lab.join("recount.duckdb")).unwrap();
        let wrong: i64 =
            db.query_row("SELECT count(*) FROM model.records WHERE key_hash IS DISTINCT FROM hash(entity_key)", [], |r| r.get(0)).unwrap();
        assert_eq!(wrong, 0, "{name}");
    }
}

#[test]
fn the_correction_scenario_rewrites_one_date_names_its_file_and_skips_an_identical_redelivery() {
    let (_, w) = world();
    let ws = w.to_str().unwrap();
    let dir = tempdir();
    let lab = dir.path().join("lab");
    ok(&lab, &["land", FIRST, LAST, "--world", ws]);
    ok(&lab, &["run", FIRST, LAST]);
    // Only a report that reads the recount counts the raw zone: not a fingerprint or a history.
    let kept = || -> i64 {
        let db = duckdb::Connection::open(lab.join("recount.duckdb")).unwrap();
        db.query_row("SELECT count(*) FROM model.recount_input", [], |r| r.get(0)).unwrap()
    };
    ok(&lab, &["fingerprint"]);
    ok(&lab, &["history", "2026-06-29"]);
    assert_eq!(kept(), 0);
    assert_eq!(scenario_in_lab(&lab), [16, 120, 3]);
    // The recount is kept with what it counted: a check reads it, and the recount's kept rows are
    // a fresh recount's; the corrected file's landing below makes the next check count again.
    let before = json(&lab, &["check", "2026-06-29"]);
    let units = |check: &serde_json::Value| -> Vec<i64> {
        let rows = check["rows"].as_array().unwrap();
        let row = rows.iter().find(|r| r["plant_id"] == "plant-a" && r["line_id"] == "line-1" && r["product_id"] == "gearbox-a").unwrap();
        ["v2_units_produced", "recompute_units_produced"].map(|k| row[k].as_i64().unwrap()).to_vec()
    };
    assert_eq!(units(&before), [120, 120]);
    assert_eq!(kept(), 1);
    {
        let opened = recount::lake::Lab::open_read(&lab).unwrap();
        let model = recount::lake::model::lab_model(&opened).unwrap().unwrap();
        let fresh = recount::lake::model::recompute_at(&opened, &model, 1).unwrap().rows;
        assert_eq!(recount::lake::model::recompute(&opened, &model).unwrap(), fresh);
    }
    let corrected = w.join("corrections/01-corrected-counts");
    let landed = json(&lab, &["land", "2026-06-30", "--world", corrected.to_str().unwrap()]);
    assert_eq!(landed["detail"]["files"][0]["status"], "corrected", "{landed}");
    let run = json(&lab, &["run", "2026-06-30"]);
    assert_eq!(run["detail"]["runs"][0]["rewritten"], serde_json::json!(["2026-06-29"]), "{run}");
    assert_eq!(scenario_in_lab(&lab), [16, 135, 2]);
    // Gold is gold built from scratch on the world with the corrected file in its place.
    let copy = world_copy(dir.path());
    let rel = "mes/records/upload_date=2026-06-30/plant-a.jsonl.gz";
    std::fs::copy(corrected.join(rel), copy.join(rel)).unwrap();
    assert_eq!(fingerprint_of(&lab), oracle_with(&copy, Some(2)).0);
    // History names the records the correction changed, with the file and its version.
    let history = json(&lab, &["history", "2026-06-29"]);
    let changes = history["detail"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes.iter().all(|c| c["file_after"].as_str().unwrap().ends_with("plant-a.jsonl.gz v2")), "{changes:?}");
    let told: Vec<&str> = changes.iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert!(told.iter().any(|c| c.starts_with("units ")) && told.iter().any(|c| c.starts_with("defects ")), "{told:?}");
    // A screen lists the first of them by key, and says how many changed in all.
    let opened = recount::lake::Lab::open(&lab).unwrap();
    let model = recount::lake::model::lab_model(&opened).unwrap().unwrap();
    let d = "2026-06-29".parse().unwrap();
    let first = recount::reports::model_lab::history_listing(&opened, &model, d, (None, None), None, Some(1)).unwrap();
    assert_eq!((first.changes.len(), first.changes_total), (1, 2));
    let keys: Vec<&str> = changes.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert!(keys.is_sorted() && first.changes[0].key == keys[0], "by key: {keys:?}");
    let title = &recount::reports::Report::tables(&first)[2].title;
    assert!(title.starts_with("the first 1 of 2 records that changed"), "{title}");
    drop(opened);
    // diff --baskets lists the entities behind the change, as retail's lists baskets: in CSV,
    // their rows alone under one header.
    let csv = ok(&lab, &["diff", "2026-06-29", "--baskets", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!((lines[0], lines.len()), ("key,change,file_before,file_after", 3), "{csv}");
    assert!(lines[1..].iter().all(|l| l.ends_with("plant-a.jsonl.gz v2")), "{csv}");
    // Machines read the reports' columns by their keys, people by their labels.
    let first = &history["rows"][0];
    assert!(first["snapshot_id"].is_i64() && first["gold_rows"].is_i64(), "{first}");
    let check = json(&lab, &["check", "2026-06-29"]);
    assert!(check["rows"][0]["v2_units_produced"].is_i64(), "{}", check["rows"][0]);
    assert!(ok(&lab, &["check", "2026-06-29"]).contains("units_produced v2"));
    // History up to the snapshot before the correction shows 120 and 3 as gold then.
    let then = json(&lab, &["history", "2026-06-29", "--as-of", "1"]);
    assert_eq!(then["detail"]["to"], 1, "{then}");
    let row = then["detail"]["gold_after"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["grain"] == serde_json::json!(["plant-a", "line-1", "gearbox-a"]))
        .unwrap();
    assert_eq!(row["measures"], serde_json::json!([16, 120, 3]), "{row}");
    // check --as-of reads the lab as it was, as retail's does: gold then, and the recount of the
    // file versions current then (the corrected file's first version, read from where it is
    // kept), so they agree on 120 and 3; now both say 135 and 2.
    let grain = |check: &serde_json::Value| -> Vec<Option<i64>> {
        let rows = check["rows"].as_array().unwrap();
        let row = rows.iter().find(|r| r["plant_id"] == "plant-a" && r["line_id"] == "line-1" && r["product_id"] == "gearbox-a").unwrap();
        ["v2_units_produced", "recompute_units_produced", "v2_defect_count", "recompute_defect_count"].map(|k| row[k].as_i64()).to_vec()
    };
    let then = json(&lab, &["check", "2026-06-29", "--as-of", "1"]);
    assert_eq!((then["detail"]["as_of_snapshot"].as_i64(), grain(&then)), (Some(1), [120, 120, 3, 3].map(Some).to_vec()), "{then}");
    assert_eq!(grain(&json(&lab, &["check", "2026-06-29"])), [135, 135, 2, 2].map(Some).to_vec(), "the kept recount counted again");
    assert!(ok(&lab, &["check", "2026-06-29", "--as-of", "1"]).starts_with("check 2026-06-29 as of snapshot 1 — "));
    // The inputs as of no snapshot are the inputs now, read by the writes' own statement.
    {
        let opened = recount::lake::Lab::open_read(&lab).unwrap();
        let dates = opened.store().model_record_dates().unwrap();
        let at = opened.store().model_input_hashes_at(&dates, 2, None).unwrap();
        let now = opened.store().model_input_hashes(&dates, 2).unwrap();
        assert!(at.len() > 20 && at.iter().zip(&now).all(|(a, b)| (a.business_date, &a.input_hash) == (b.business_date, &b.input_hash)));
        assert_eq!(at.len(), now.len());
    }
    // The writes add up each file's sums per date, kept as it lands; a file without them (an
    // older build's, a mirror's) is hashed from its records, to the same inputs.
    {
        let opened = recount::lake::Lab::open(&lab).unwrap();
        let dates = opened.store().model_record_dates().unwrap();
        let kept = opened.store().model_input_hashes(&dates, 2).unwrap();
        let forget = "DELETE FROM model.file_date_hashes WHERE file_id % 2 = 0";
        assert!(opened.store().connection_for_tests().execute(forget, []).unwrap() > 0);
        let read = opened.store().model_input_hashes(&dates, 2).unwrap();
        assert!(kept.iter().map(|h| (h.business_date, &h.input_hash)).eq(read.iter().map(|h| (h.business_date, &h.input_hash))));
    }
    // v1 as it stood: an append after snapshot 2 is in the check now, not as of 2.
    ok(&lab, &["naive", "2026-06-29"]);
    let v1 = |check: serde_json::Value| check["rows"].as_array().unwrap().iter().filter(|r| r["v1_records"].is_i64()).count();
    assert!(v1(json(&lab, &["check", "2026-06-29"])) > 0);
    assert_eq!(v1(json(&lab, &["check", "2026-06-29", "--as-of", "2"])), 0);
    let out = recount(&lab, &["check", "2026-06-29", "--as-of", "99"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("snapshot 99 does not exist"), "{}", String::from_utf8_lossy(&out.stderr));
    // The evidence: the date's gold after (135 and 2), the change's records, and every other
    // date untouched by the correction's snapshot.
    let out = dir.path().join("evidence");
    ok(&lab, &["evidence", "2026-06-29", "--out", out.to_str().unwrap()]);
    let read = |name: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap() };
    let gold = read("gold_2026-06-29.json");
    let row = gold["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["plant_id"] == "plant-a" && r["line_id"] == "line-1" && r["product_id"] == "gearbox-a")
        .unwrap();
    assert_eq!((row["units_produced"].as_i64(), row["defect_count"].as_i64()), (Some(135), Some(2)), "{gold}");
    let cmp = read("comparison_2026-06-29.json");
    assert_eq!(cmp["history"]["changes"], history["detail"]["changes"]);
    let others = cmp["other_dates"].as_array().unwrap();
    assert!(others.len() > 20 && others.iter().all(|o| o["untouched"] == true), "{cmp}");
    assert_eq!(read("run_snapshot_map.json")["snapshots"].as_array().unwrap().len(), 2);
    // The identical re-delivery lands as a version, and its run writes no snapshot.
    let before = json(&lab, &["snapshots"])["detail"]["snapshots"].as_array().unwrap().len();
    let landed = json(&lab, &["land", "2026-06-30", "--world", w.join("corrections/02-recompressed").to_str().unwrap()]);
    let statuses: Vec<&str> = landed["detail"]["files"].as_array().unwrap().iter().filter_map(|f| f["status"].as_str()).collect();
    assert!(
        statuses.contains(&"re-delivered (same rows)") && !statuses.contains(&"corrected"),
        "the same rows are no correction: {landed}"
    );
    let run = json(&lab, &["run", "2026-06-30"]);
    assert!(run["detail"]["runs"][0]["snapshot"].is_null() && run["detail"]["runs"][0]["rewritten"] == serde_json::json!([]), "{run}");
    let snapshots = json(&lab, &["snapshots"]);
    assert_eq!(snapshots["detail"]["snapshots"].as_array().unwrap().len(), before);
    assert!(!snapshots["detail"]["skipped_runs"].as_array().unwrap().is_empty(), "{snapshots}");
    // A rollback to before the correction gives 120 and 3 again, as a new snapshot.
    assert_eq!(run["detail"]["runs"][0]["uploads"], serde_json::json!(["2026-06-30"]), "{run}");
    ok(&lab, &["rollback", &(before as i64 - 1).to_string(), "--yes"]);
    assert_eq!(scenario_in_lab(&lab), [16, 120, 3]);
    assert_eq!(json(&lab, &["snapshots"])["detail"]["snapshots"].as_array().unwrap().len(), before + 1);
    assert_eq!(recorded_fingerprints_hold(&lab), before + 1);
    // Again: its versions are current, so nothing is asked and no snapshot is written, as retail's.
    let again = ok(&lab, &["rollback", &(before as i64 - 1).to_string()]);
    assert!(again.contains("already current") && again.contains("no snapshot written"), "{again}");
    assert_eq!(json(&lab, &["snapshots"])["detail"]["snapshots"].as_array().unwrap().len(), before + 1);
    // Back to the first snapshot, which had not built every date: those are emptied, and a
    // second rollback to it finds it current.
    ok(&lab, &["rollback", "1", "--yes"]);
    assert!(ok(&lab, &["rollback", "1"]).contains("already current"));
}

/// A world of one's own model, `examples/parcels/` (the guide's worked example), copied: parcels
/// by depot, with a business date read as-is and copies of one parcel that differ, so that the
/// order of the copies decides the sums (p1 ties on arrival, so the smaller event id wins; p2's
/// earlier arrival wins over its smaller event id). Returns the world and its `recount.toml`.
fn parcels(dir: &Path) -> (PathBuf, String) {
    let w = dir.join("parcels");
    copy_dir(&std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("examples/parcels"), &w);
    let toml = std::fs::read_to_string(w.join("recount.toml")).unwrap();
    (w, toml)
}

/// `recount` with no command and no terminal on a model lab: the model's glance (its lab, gold's
/// fingerprint, the morning's line), never retail's sample built into it; and `reset` without
/// `--yes` asks (here, with no terminal, refuses), as a lab with data must.
#[test]
fn a_model_lab_without_a_command_is_glanced_at_and_never_filled_with_the_sample() {
    let dir = tempdir();
    let (w, _) = parcels(dir.path());
    let lab = dir.path().join("lab");
    ok(&lab, &["daily", "2026-03-02", "--world", w.to_str().unwrap()]);
    let before = fingerprint_of(&lab);
    let glance = ok(&lab, &[]);
    assert!(!glance.contains("built the sample lab"), "{glance}");
    let lines: Vec<&str> = glance.lines().collect();
    assert_eq!(lines[1], before, "{glance}");
    assert!(lines[2].starts_with("upload 2026-03-02 moved 2026-03-01 parcels +2"), "{glance}");
    let reset = recount(&lab, &["reset"]);
    assert!(!reset.status.success(), "{}", String::from_utf8_lossy(&reset.stdout));
    assert_eq!(fingerprint_of(&lab), before);
    assert!(!recount::lake::Lab::open_read(&lab).unwrap().is_empty().unwrap());
}

#[test]
fn a_model_of_one_s_own_is_a_table_in_recount_toml_and_a_broken_one_names_its_key() {
    let dir = tempdir();
    let (w, toml) = parcels(dir.path());
    let report = recount::reports::model::model_report(&w, 0).unwrap();
    let rows: Vec<(String, Vec<i64>)> = report.recount.rows.iter().map(|r| (r.grain[0].clone(), r.measures.clone())).collect();
    assert_eq!(rows, [("north".to_string(), vec![1, 350]), ("south".to_string(), vec![1, 42])]);
    assert!(report.fingerprint.starts_with("gold.daily_deliveries: 2 rows, md5 "));
    std::fs::write(w.join("recount.toml"), toml.replace(r#"of = "items[].grams""#, r#"of = "items.grams * 2""#)).unwrap();
    let err = recount::reports::model::model_report(&w, 0).unwrap_err();
    assert!(format!("{err:#}").contains("model.measures.weight_g"), "{err:#}");
}

#[test]
fn a_corrected_plant_zone_re_reads_its_files_and_gold_is_gold_from_scratch() {
    let (_, w) = world();
    let dir = tempdir();
    let copy = world_copy(dir.path());
    let lab = dir.path().join("lab");
    let ws = copy.to_str().unwrap();
    ok(&lab, &["land", FIRST, LAST, "--world", ws]);
    ok(&lab, &["run", FIRST, LAST]);
    let plants = std::fs::read_to_string(copy.join("plants.csv")).unwrap();
    std::fs::write(copy.join("plants.csv"), plants.replace("Asia/Kolkata", "Asia/Tokyo")).unwrap();
    let landed = json(&lab, &["land", LAST, "--world", ws]);
    assert_eq!(landed["detail"]["dimension_changed"], serde_json::json!(["plant-c"]), "{landed}");
    let files = landed["detail"]["files"].as_array().unwrap();
    assert!(files.iter().filter(|f| f["status"] == "re-read").all(|f| f["file"].as_str().unwrap().starts_with("plant-c")), "{landed}");
    // A re-read version is a hard link to the bytes of the version it follows, not a second copy.
    let reread: Vec<&serde_json::Value> = files.iter().filter(|f| f["status"] == "re-read").collect();
    assert!(!reread.is_empty(), "{landed}");
    for f in reread {
        let at = lab.join("raw/model").join(format!("upload_date={}", f["upload_date"].as_str().unwrap()));
        let path = at.join(format!("{}.v{}", f["file"].as_str().unwrap(), f["version"]));
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&std::fs::metadata(&path).unwrap()), 2, "{path:?}");
    }
    // The run of the last upload alone (a daily's) rebuilds every date the re-read files of
    // older uploads move, in a run of its own, before its upload's.
    let runs = json(&lab, &["run", LAST]);
    let first = &runs["detail"]["runs"][0];
    assert!(first["uploads"].as_array().is_some_and(Vec::is_empty) && first["rewritten"].as_array().unwrap().len() > 2, "{runs}");
    assert_eq!(fingerprint_of(&lab), oracle_with(&copy, Some(2)).0);
    assert_eq!(json(&lab, &["run", LAST])["detail"]["runs"].as_array().unwrap().len(), 1, "the re-read files' dates are rebuilt once");
    // The zone corrected back: the files are re-read again, with their first version's bytes,
    // which is no withdrawn correction; gold is the first world's again.
    std::fs::write(copy.join("plants.csv"), &plants).unwrap();
    let back = ok(&lab, &["land", LAST, "--world", ws]);
    assert!(back.contains("re-read") && !back.contains("reverts"), "{back}");
    ok(&lab, &["run", LAST]);
    assert_eq!(fingerprint_of(&lab), oracle_with(w, Some(2)).0);
}

/// Gold as a foreign pipeline's CSV, in the model's columns.
fn gold_csv(path: &Path, gold: &Gold) {
    let mut text = "business_date,plant_id,line_id,product_id,records,units_produced,defect_count\n".to_string();
    for ((d, p, l, pr), m) in gold {
        text += &format!("{d},{p},{l},{pr},{},{},{}\n", m[0], m[1], m[2]);
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn an_audit_of_a_foreign_plant_gold_names_each_fault_and_flags_no_right_row() {
    let (_, w) = world();
    let ws = w.to_str().unwrap();
    let dir = tempdir();
    let lab = dir.path().join("lab");
    // Day by day, so that each date's earlier versions are gold as it stood after each upload.
    ok(&lab, &["daily", FIRST, LAST, "--world", ws]);
    let (_, right) = oracle_with(w, Some(2));
    // Late arrivals missed: gold built from the uploads up to 2026-06-29 only.
    let cut = dir.path().join("cut");
    copy_dir(w, &cut);
    for e in std::fs::read_dir(cut.join("mes/records")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_str().unwrap() > "upload_date=2026-06-29" {
            std::fs::remove_dir_all(p).unwrap();
        }
    }
    let (_, early) = oracle_with(&cut, Some(2));
    let (late_key, late_row) = early.iter().find(|(k, v)| right.get(*k).is_some_and(|r| r != *v)).map(|(k, v)| (k.clone(), *v)).unwrap();
    // Duplicates counted: every copy of a re-sent record.
    let (_, copies) = oracle_opts(w, Some(2), false);
    let (dup_key, dup_row) =
        copies.iter().find(|(k, v)| k.0 != late_key.0 && right.get(*k).is_some_and(|r| r != *v)).map(|(k, v)| (k.clone(), *v)).unwrap();
    let mut foreign = right.clone();
    foreign.insert(late_key.clone(), late_row);
    foreign.insert(dup_key.clone(), dup_row);
    let keys: Vec<_> = right.keys().filter(|k| k.0 != late_key.0 && k.0 != dup_key.0).cloned().collect();
    let (twice, missing, off) = (keys[0].clone(), keys[10].clone(), keys[20].clone());
    foreign.insert(twice.clone(), right[&twice].map(|x| x * 2));
    foreign.remove(&missing);
    foreign.get_mut(&off).unwrap()[1] += 1;
    let extra = (keys[30].0.clone(), "plant-z".to_string(), "line-9".to_string(), "widget".to_string());
    foreign.insert(extra.clone(), [1, 5, 0]);
    let csv = dir.path().join("their_gold.csv");
    gold_csv(&csv, &foreign);
    let out = recount(&lab, &["--format", "json", "audit", "--gold", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found: BTreeMap<(String, String, String, String), Vec<String>> = BTreeMap::new();
    let mut details = BTreeMap::new();
    for r in report["detail"]["rows"].as_array().unwrap() {
        let g: Vec<String> = r["grain"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
        let causes = r["causes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
        let key = (r["business_date"].as_str().unwrap().to_string(), g[0].clone(), g[1].clone(), g[2].clone());
        details.insert(key.clone(), r["detail"].as_str().unwrap_or_default().to_string());
        found.insert(key, causes);
    }
    let has = |k: &(String, String, String, String), cause: &str| found[k].iter().any(|c| c == cause);
    assert!(has(&late_key, "late_arrivals_missed"), "{late_key:?}: {:?}", found[&late_key]);
    assert!(has(&dup_key, "duplicates_counted"), "{dup_key:?}: {:?}", found[&dup_key]);
    assert_eq!(found[&twice], ["appended_twice"]);
    assert_eq!(found[&missing], ["missing_row"]);
    assert_eq!(found[&off], ["unexplained"]);
    // Its residual names each measure, as retail's names baskets and money.
    assert_eq!(details[&off], "+0 records, +1 units_produced, +0 defect_count against the lab's row");
    assert_eq!(details[&extra], "a row the lab's gold does not have");
    assert_eq!(found[&extra], ["extra_row"]);
    let faulty = [&late_key, &dup_key, &twice, &missing, &off, &extra];
    for (k, causes) in &found {
        if !faulty.contains(&k) {
            assert_eq!(causes, &["matches"], "{k:?} is right and must not be flagged");
        }
    }
    // Where they fall, by the grain's fields: plant-z holds exactly the extra row.
    let table = recount(&lab, &["audit", "--gold", csv.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&table.stdout);
    let z = shown.lines().find(|l| l.starts_with("plant_id") && l.contains("plant-z")).unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(z.split_whitespace().take(4).collect::<Vec<_>>(), ["plant_id", "plant-z", "1", "1"], "{shown}");
    assert!(shown.contains("where the wrong rows fall"), "{shown}");
    // --by plant_id: the same placing, every plant listed; plant-z holds the extra row alone.
    let by = recount(&lab, &["audit", "--gold", csv.to_str().unwrap(), "--by", "plant_id"]);
    let listed = String::from_utf8_lossy(&by.stdout);
    assert_eq!(by.status.code(), Some(4), "{listed}");
    let z = listed.lines().find(|l| l.starts_with("plant-z")).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(z.split_whitespace().take(3).collect::<Vec<_>>(), ["plant-z", "1", "1"], "{listed}");
    assert!(["plant-a", "plant-b", "plant-c"].iter().all(|p| listed.lines().any(|l| l.starts_with(p))), "{listed}");
    // A measure that is not an exact integer: that row is wrong on its own, and the rest is read.
    let inexact = dir.path().join("inexact.csv");
    let mut lines: Vec<String> = std::fs::read_to_string(&csv).unwrap().lines().map(str::to_string).collect();
    let (head, last) = lines[1].rsplit_once(',').map(|(h, l)| (h.to_string(), l.to_string())).unwrap();
    lines[1] = format!("{head},{last}.5");
    std::fs::write(&inexact, lines.join("\n") + "\n").unwrap();
    let out = recount(&lab, &["--format", "csv", "audit", "--gold", inexact.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{shown}");
    assert_eq!(shown.lines().filter(|l| l.contains(",unreadable_value,") && l.contains("line 2: ")).count(), 1, "{shown}");
    // The same gold in the other pipeline's own column names, mapped by a [gold] table: the same
    // verdicts, row for row.
    let text = std::fs::read_to_string(&csv).unwrap();
    let (_, body) = text.split_once('\n').unwrap();
    let theirs = dir.path().join("theirs.csv");
    std::fs::write(&theirs, format!("day,plant,line,product,n,good_units,defects\n{body}")).unwrap();
    let map = dir.path().join("map.toml");
    let names = "business_date = \"day\"\nplant_id = \"plant\"\nline_id = \"line\"\nproduct_id = \"product\"\n";
    std::fs::write(&map, format!("[gold]\n{names}records = \"n\"\nunits_produced = \"good_units\"\ndefect_count = \"defects\"\n")).unwrap();
    let out = recount(&lab, &["--format", "json", "audit", "--gold", theirs.to_str().unwrap(), "--map", map.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let mapped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(mapped["detail"]["rows"], report["detail"]["rows"]);
    // More rows than a tight budget holds, given backwards: sorted in spilled runs, the verdicts
    // spilled too, and the same report as with room to spare, row for row.
    let many = dir.path().join("many.csv");
    let mut text = std::fs::read_to_string(&csv).unwrap();
    for i in (0..40_000).rev() {
        text.push_str(&format!("{},plant-q{i:05},line-1,widget,1,1,0\n", extra.0));
    }
    std::fs::write(&many, text).unwrap();
    let roomy = recount(&lab, &["--format", "json", "audit", "--gold", many.to_str().unwrap()]);
    let tight = recount(&lab, &["--format", "json", "--memory", "64MB", "audit", "--gold", many.to_str().unwrap()]);
    assert_eq!(tight.status.code(), Some(4), "{}", String::from_utf8_lossy(&tight.stderr));
    assert!(tight.stdout == roomy.stdout, "the same report within 64 MB as with room to spare");
    let spilled: serde_json::Value = serde_json::from_slice(&tight.stdout).unwrap();
    assert_eq!(spilled["rows"].as_array().unwrap().len(), found.len() + 40_000);
    // Unmapped, the pipeline's names are not gold's: an error naming the column, before anything runs.
    let out = recount(&lab, &["audit", "--gold", theirs.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no column business_date"), "{err}");

    // The walkthrough's gold for this world: every fault it says it made is found with its cause,
    // and no other row is flagged.
    let made = dir.path().join("walkthrough.csv");
    let out = recount(dir.path(), &["generate", "--foreign-gold", "--world", ws, "--out", made.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let injected: BTreeMap<String, String> = said
        .lines()
        .skip(1)
        .map(|l| {
            let (at, cause) = l.trim().rsplit_once(": ").unwrap();
            (at.replace([' ', '/'], ","), cause.to_string())
        })
        .collect();
    for cause in ["duplicates_counted", "late_arrivals_missed", "utc_business_date", "appended_twice", "missing_row", "unexplained"] {
        assert!(injected.values().any(|c| c == cause), "{cause} is not in {said}");
    }
    let out = recount(&lab, &["--format", "csv", "audit", "--gold", made.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let flagged: BTreeMap<String, String> = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[4] != "matches")
        .map(|r| (format!("{},{},{},{}", &r[0], &r[1], &r[2], &r[3]), r[4].to_string()))
        .collect();
    assert_eq!(flagged.keys().collect::<Vec<_>>(), injected.keys().collect::<Vec<_>>(), "{text}");
    for (k, cause) in &injected {
        assert!(flagged[k].split(", ").any(|c| c == cause), "{k}: {} for {cause}", flagged[k]);
    }
}

#[test]
fn a_model_of_one_s_own_lands_runs_and_reports_in_its_own_words() {
    let dir = tempdir();
    let (w, _) = parcels(dir.path());
    let lab = dir.path().join("lab");
    ok(&lab, &["land", "2026-03-02", "--world", w.to_str().unwrap()]);
    let run = json(&lab, &["run", "2026-03-02"]);
    assert_eq!(run["detail"]["runs"][0]["rewritten"], serde_json::json!(["2026-03-01"]), "{run}");
    let recounted = recount::reports::model::model_report(&w, 0).unwrap().fingerprint;
    assert_eq!(fingerprint_of(&lab), recounted);
    let check = json(&lab, &["check", "2026-03-01"]);
    assert_eq!(check["detail"]["v2"], check["detail"]["recompute"], "{check}");
    let history = ok(&lab, &["history", "2026-03-01"]);
    assert!(history.contains("gold.daily_deliveries") && history.contains("parcels that changed"), "{history}");
    assert!(history.contains("weight_g before"), "{history}");
    let trend = ok(&lab, &["trend"]);
    assert!(trend.starts_with("parcels, weight_g per business date") && trend.contains("\nweight_g\n"), "{trend}");
    // What the lab cannot read for a model yet says so, naming the model.
}

/// A plant lab's `trend` date by date, from its JSON rows (a series per measure): v2's and the
/// recount's records, units and defects, and each series' marks.
#[derive(Debug, Default, Clone)]
struct TrendDay {
    v2: Vec<i64>,
    recompute: Vec<i64>,
    marks: Vec<String>,
}

fn trend_days(lab: &Path) -> BTreeMap<String, TrendDay> {
    let trend = json(lab, &["trend"]);
    let mut out: BTreeMap<String, TrendDay> = BTreeMap::new();
    for m in ["records", "units_produced", "defect_count"] {
        for r in trend["rows"].as_array().unwrap().iter().filter(|r| !r[format!("v2_{m}")].is_null()) {
            let day = out.entry(r["business_date"].as_str().unwrap().to_string()).or_default();
            day.v2.push(r[format!("v2_{m}")].as_i64().unwrap());
            day.recompute.push(r[format!("recompute_{m}")].as_i64().unwrap());
            day.marks.push(r["marks"].as_str().unwrap().to_string());
        }
    }
    assert!(out.values().all(|d| d.v2.len() == 3), "a row per measure and date: {trend}");
    out
}

fn trend_of(lab: &Path, d: &str) -> TrendDay {
    trend_days(lab).remove(d).unwrap_or_else(|| panic!("{d} is not in the trend"))
}

/// The shared corpus (tests/corpus/models.jsonl): the lab's reader gives every verdict, as the
/// Spark driver's does in spark/tests/test_models.py.
#[test]
fn the_lab_s_model_reader_gives_the_shared_corpus_verdict_on_every_line() {
    let model = recount::model::manufacturing();
    let plants = "plant_id,country,timezone\nplant-a,DE,Europe/Berlin\nplant-b,US,America/Chicago\nplant-c,IN,Asia/Kolkata\n";
    let text =
        std::fs::read_to_string(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/corpus/models.jsonl"))
            .unwrap();
    let mut n = 0;
    for line in text.lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let upload: NaiveDate = c["upload_date"].as_str().unwrap().parse().unwrap();
        // A case that names a model of its own reads with it (the plants are the same).
        let own: Option<recount::model::Model> = c.get("model").map(|m| serde_json::from_value(m.clone()).unwrap());
        if let Some(m) = &own {
            m.validate().unwrap();
        }
        let model = own.as_ref().unwrap_or(&model);
        let dims = recount::model::read::DimensionTable::parse(model, plants).unwrap();
        let got = recount::model::read::read_line(model, &dims, c["line"].as_str().unwrap(), upload);
        let (name, want) = (c["case"].as_str().unwrap(), &c["expect"]);
        match (got, want.get("reason"), want.get("reason_starts"), want.get("record")) {
            (Err(r), Some(w), _, _) => assert_eq!(r, w.as_str().unwrap(), "{name}"),
            (Err(r), _, Some(w), _) => assert!(r.starts_with(w.as_str().unwrap()), "{name}: {r}"),
            (Ok(r), _, _, Some(w)) => {
                let got = serde_json::json!({
                    "key": r.key, "event_id": r.event_id, "business_date": r.business_date.to_string(), "grain": r.grain,
                    "attributes": r.attributes, "measures": r.measures, "arrival_ns": r.arrival.timestamp_nanos_opt().unwrap(),
                    "event_ns": r.event_time.timestamp_nanos_opt().unwrap(),
                });
                assert_eq!(&got, w, "{name}");
            }
            (got, ..) => panic!("{name}: {got:?} against {want}"),
        }
        n += 1;
    }
    assert!(n > 35, "{n} cases");
}

/// A copy of the manufacturing world in `dir` whose file `LATIN1_FILE` has a byte that is not
/// UTF-8 on its third line, in its line_id; returns the world and that line's reason.
fn with_a_latin1_line(dir: &Path) -> (PathBuf, String) {
    let copy = dir.join("latin1");
    copy_dir(&world().1, &copy);
    let at = gunzip(&copy.join(LATIN1_FILE)).lines().nth(2).unwrap().find("line-").unwrap();
    set_byte(&copy.join(LATIN1_FILE), 2, at, 0xe9);
    (copy, format!("not UTF-8 at byte {at}"))
}

const LATIN1_FILE: &str = "mes/records/upload_date=2026-06-30/plant-a.jsonl.gz";

/// The contract's section 2, for a model: a line that is not UTF-8 is refused alone, with its
/// reason, and the rest of its file lands and is recounted.
#[test]
fn a_model_line_that_is_not_utf8_is_refused_alone_and_the_rest_of_its_file_lands() {
    let dir = tempdir();
    let (latin1, reason) = with_a_latin1_line(dir.path());
    let upload = ["land", "2026-06-30", "--world"];
    let file_of = |landed: &serde_json::Value| {
        landed["detail"]["files"].as_array().unwrap().iter().find(|f| f["file"] == "plant-a.jsonl.gz").unwrap().clone()
    };
    let clean = file_of(&json(&dir.path().join("clean"), &[&upload[..], &[world().1.to_str().unwrap()]].concat()));
    let bad = file_of(&json(&dir.path().join("bad"), &[&upload[..], &[latin1.to_str().unwrap()]].concat()));
    assert_eq!(bad["records"].as_i64().unwrap(), clean["records"].as_i64().unwrap() - 1, "{bad} against {clean}");
    assert_eq!(bad["quarantined"].as_i64().unwrap(), clean["quarantined"].as_i64().unwrap() + 1);
    // `quarantine` lists it as on a retail lab, in every format.
    let listed = json(&dir.path().join("bad"), &["quarantine", "2026-06-30"]);
    let rows: Vec<_> = listed["detail"]["rows"].as_array().unwrap().iter().filter(|r| r["reason"] == reason.as_str()).collect();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!((rows[0]["file"].as_str().unwrap(), rows[0]["line"].as_i64().unwrap()), (LATIN1_FILE, 3));
    let csv = ok(&dir.path().join("bad"), &["--format", "csv", "quarantine", "2026-06-30"]);
    assert!(csv.starts_with("upload_date,file,line,reason") && csv.contains(&reason), "{csv}");
    let report = recount::reports::model::model_report(&latin1, 0).unwrap();
    let refused: Vec<_> = report.recount.refused.iter().filter(|r| r.reason.starts_with("not UTF-8")).collect();
    assert_eq!(refused.len(), 1, "{:?}", report.recount.refused);
    assert_eq!(
        (refused[0].file.as_str(), refused[0].line, refused[0].reason.as_str()),
        ("upload_date=2026-06-30/plant-a.jsonl.gz", 3, reason.as_str())
    );
}

/// The contract's section 2, for a model: a file that cannot be read whole (a cut gzip) holds
/// back its own upload only; the others land and run, and it lands once whole.
#[test]
fn a_cut_model_file_holds_back_its_own_upload_and_the_others_land() {
    let dir = tempdir();
    let copy = dir.path().join("cut");
    copy_dir(&world().1, &copy);
    let whole = std::fs::read(copy.join(LATIN1_FILE)).unwrap();
    std::fs::write(copy.join(LATIN1_FILE), &whole[..whole.len() / 2]).unwrap();
    // A second file of the upload cut too: the upload is named by its first, in name order,
    // whichever of DuckDB's threads met which first.
    let last = copy.join(LATIN1_FILE.replace("plant-a", "plant-c"));
    let last_whole = std::fs::read(&last).unwrap();
    std::fs::write(&last, &last_whole[..last_whole.len() - 9]).unwrap();
    let (lab, ws) = (dir.path().join("lab"), copy.to_str().unwrap().to_string());
    let out = recount(&lab, &["--format", "json", "daily", "2026-06-29", "2026-07-01", "--world", &ws]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let held = v["detail"]["landing"]["held"].as_array().unwrap();
    assert_eq!(held.len(), 1, "{v}");
    assert_eq!((held[0]["upload_date"].as_str(), held[0]["file"].as_str()), (Some("2026-06-30"), Some("plant-a.jsonl.gz")));
    assert!(held[0]["reason"].as_str().unwrap().starts_with("truncated or corrupt .gz file"), "{v}");
    let ran: Vec<&str> = v["detail"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["uploads"].as_array().unwrap())
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(ran, ["2026-06-29", "2026-07-01"], "the held upload gets no run");
    let files = v["detail"]["landing"]["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["upload_date"] != "2026-06-30"), "nothing of the held upload landed: {v}");
    // Whole again, it lands, with every file of its upload.
    std::fs::write(copy.join(LATIN1_FILE), &whole).unwrap();
    std::fs::write(&last, &last_whole).unwrap();
    let again = json(&lab, &["land", "2026-06-30", "--world", &ws]);
    assert!(again["detail"]["held"].as_array().unwrap().is_empty(), "{again}");
    let parts = std::fs::read_dir(copy.join("mes/records/upload_date=2026-06-30")).unwrap().count();
    assert_eq!(again["detail"]["files"].as_array().unwrap().len(), parts, "{again}");
}

/// A run over a range names the corrected file versions among its uploads in its snapshot,
/// found for the whole range at once, and records each date's version with its gold rows, all
/// dates in one statement.
#[test]
fn a_range_run_s_snapshot_names_the_corrected_file_among_its_uploads_and_each_date_s_gold_rows() {
    let (dir, w) = (tempdir(), &world().1);
    let lab = dir.path().join("lab");
    ok(&lab, &["land", FIRST, LAST, "--world", w.to_str().unwrap()]);
    let corrected = w.join("corrections/01-corrected-counts");
    ok(&lab, &["land", "2026-06-30", "--world", corrected.to_str().unwrap()]);
    ok(&lab, &["run", FIRST, LAST]);
    let snapshots = json(&lab, &["snapshots"]);
    let files = snapshots["rows"].as_array().unwrap().last().unwrap()["files"].as_str().unwrap().to_string();
    assert_eq!(files, format!("uploads {FIRST}..{LAST}, corrected: upload_date=2026-06-30/plant-a.jsonl.gz v2"));
    // Each date's version is recorded with its gold rows, as gold holds them.
    let history = json(&lab, &["history", "2026-06-29"]);
    let versions: Vec<&serde_json::Value> =
        history["rows"].as_array().unwrap().iter().filter(|r| r["table"] == "versions of the date").collect();
    let version = versions.last().copied().unwrap_or_else(|| panic!("{history}")).clone();
    let db = duckdb::Connection::open(lab.join("recount.duckdb")).unwrap();
    let rows: i64 = db
        .query_row(
            "SELECT count(*) FROM model.gold_history WHERE snapshot_id = ? AND business_date = '2026-06-29'",
            [version["snapshot_id"].as_i64().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    assert!(rows > 1 && version["gold_rows"].as_i64() == Some(rows), "{rows}: {version}");
}

/// A key re-sent later with another business date: its first copy (an earlier arrival) wins, on
/// its own date, which the later upload's run does not rewrite. That run's dates must still see
/// the key's copy outside them, or it counts the key twice.
#[test]
fn a_key_re_sent_on_another_date_counts_once_on_its_winner_s_date_day_by_day() {
    let dir = tempdir();
    let w = dir.path().join("resent");
    copy_dir(&world().1, &w);
    let first = gunzip(&w.join("mes/records/upload_date=2026-06-25/plant-a.jsonl.gz"));
    let line = first.lines().next().unwrap();
    assert!(line.contains("\"produced_at\":\"2026-06-24T00:50:00+02:00\""), "{line}");
    let resent = line
        .replace("2026-06-24T00:50:00+02:00", "2026-06-25T00:50:00+02:00")
        .replace("\"uploaded_at\":\"2026-06-25T", "\"uploaded_at\":\"2026-06-27T");
    let later = w.join("mes/records/upload_date=2026-06-27/plant-a.jsonl.gz");
    let text = format!("{}{resent}\n", gunzip(&later));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    std::fs::write(&later, gz.finish().unwrap()).unwrap();
    // Every upload landed first, then run one by one: each run's few dates are a small part of
    // the lab's, so it looks only at its own keys' copies (`shared_stage_of_dates`).
    let lab = dir.path().join("lab");
    ok(&lab, &["land", FIRST, LAST, "--world", w.to_str().unwrap()]);
    for d in NaiveDate::from_ymd_opt(2026, 6, 18).unwrap().iter_days().take(28) {
        ok(&lab, &["run", &d.to_string()]);
    }
    assert_eq!(fingerprint_of(&lab), oracle_with(&w, Some(2)).0);
}

/// A measure whose sum over a date and grain would leave 64 bits is refused at landing, naming
/// the date, the grain, the measure and the file, and the lab is as it was; before, it landed and
/// every later v2 run failed on DuckDB's conversion, naming nothing.
#[test]
fn a_measure_sum_past_64_bits_is_refused_at_landing_naming_the_date_grain_and_file() {
    let dir = tempdir();
    let (w, _) = parcels(dir.path());
    let (lab, ws) = (dir.path().join("lab"), w.to_str().unwrap().to_string());
    let first: Vec<String> = std::fs::read_dir(w.join("feed")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    let upload = first.iter().min().unwrap().trim_start_matches("upload_date=").to_string();
    ok(&lab, &["land", &upload, "--world", &ws]);
    ok(&lab, &["run", &upload]);
    let before = ok(&lab, &["fingerprint"]);
    assert!(!before.contains(": 0 rows"), "{before}");
    // A new upload whose two parcels weigh 5e18 g each on one depot and route date.
    let heavy = |id: &str| {
        format!(
            r#"{{"event_id":"h{id}","parcel_id":"heavy-{id}","depot":"north","route_date":"2026-03-09","delivered_at":"2026-03-09T18:00:00Z","sent_at":"2026-03-10T01:00:00Z","items":[{{"grams":5000000000000000000}}]}}"#
        )
    };
    let part = w.join("feed/upload_date=2026-03-10");
    std::fs::create_dir_all(&part).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, format!("{}\n{}\n", heavy("1"), heavy("2")).as_bytes()).unwrap();
    std::fs::write(part.join("heavy.jsonl.gz"), gz.finish().unwrap()).unwrap();
    let out = recount(&lab, &["land", "2026-03-10", "--world", &ws]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("business date 2026-03-09, depot north: weight_g over every landed copy would total 10000000000000000000")
            && err.contains("upload_date=2026-03-10/heavy.jsonl.gz")
            && err.contains("nothing was landed"),
        "{err}"
    );
    assert_eq!(ok(&lab, &["fingerprint"]), before, "the lab is as it was");
    // No trace of it: no kept copy of its file.
    let mut todo = vec![lab.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            assert!(!e.file_name().to_string_lossy().contains("heavy"), "left behind: {}", e.path().display());
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
        }
    }
}

/// `late DATE` answers for a date whose every record arrived past its window, though no version
/// of gold holds it (before, it said the date was outside the lab), as the run pointed at it.
#[test]
fn late_lists_a_date_whose_every_record_arrived_past_its_window() {
    let dir = tempdir();
    let copy = dir.path().join("w");
    copy_dir(&world().1, &copy);
    let record = serde_json::json!({
        "event_id": "ev-stray", "record_id": "STRAY-1", "plant_id": "plant-a", "line_id": "line-1", "product_id": "gearbox-a",
        "produced_at": "2026-06-01T10:00:00Z", "uploaded_at": "2026-07-01T09:00:00Z", "units": 5, "defects": 0,
    });
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, format!("{record}\n").as_bytes()).unwrap();
    std::fs::write(copy.join("mes/records/upload_date=2026-07-01/zz-stray.jsonl.gz"), gz.finish().unwrap()).unwrap();
    let (lab, ws) = (dir.path().join("lab"), copy.to_str().unwrap().to_string());
    ok(&lab, &["daily", FIRST, "2026-07-01", "--world", &ws]);
    // In no version of gold: v2 has none of it, the recount its one record, past the window.
    let stray = trend_of(&lab, "2026-06-01");
    assert_eq!((&stray.v2[..], &stray.recompute[..]), (&[0, 0, 0][..], &[1, 5, 0][..]), "{stray:?}");
    assert_eq!(stray.marks, ["beyond window", "beyond window", ""], "defects are 0 either way: {stray:?}");
    let late = json(&lab, &["late", "2026-06-01"]);
    let rows = late["detail"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{late}");
    assert_eq!((rows[0]["entity_key"].as_str(), rows[0]["days_late"].as_i64()), (Some("STRAY-1"), Some(30)), "{late}");
}

/// A key gone from the dimension file keeps the row it last had, for every model as retail keeps
/// a store gone from stores.csv: its records stay in gold, nothing is read again, and the landing
/// says so. Before, its files were re-read and every record quarantined as an unknown plant.
#[test]
fn a_key_removed_from_the_dimension_keeps_its_rows_in_gold() {
    let dir = tempdir();
    let copy = dir.path().join("w");
    copy_dir(&world().1, &copy);
    let (lab, ws) = (dir.path().join("lab"), copy.to_str().unwrap().to_string());
    ok(&lab, &["daily", FIRST, "2026-07-01", "--world", &ws]);
    let before = fingerprint_of(&lab);
    let plants = std::fs::read_to_string(copy.join("plants.csv")).unwrap();
    let kept: Vec<&str> = plants.lines().filter(|l| !l.starts_with("plant-c,")).collect();
    assert_eq!(kept.len() + 1, plants.lines().count(), "plant-c was listed");
    std::fs::write(copy.join("plants.csv"), kept.join("\n") + "\n").unwrap();
    let landed = json(&lab, &["land", "2026-07-02", "--world", &ws]);
    assert_eq!(landed["detail"]["dimension_removed"], serde_json::json!(["plant-c"]), "{landed}");
    assert_eq!(landed["detail"]["dimension_changed"], serde_json::json!([]), "{landed}");
    let files = landed["detail"]["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["status"] == "new" && f["upload_date"] == "2026-07-02"), "nothing re-read: {landed}");
    let plant_c = files.iter().find(|f| f["file"] == "plant-c.jsonl.gz").unwrap();
    assert!(plant_c["records"].as_i64().unwrap() > 0, "plant-c's new lines are read by its last row: {plant_c}");
    let text = ok(&lab, &["land", "2026-07-02", "--world", &ws]);
    assert!(text.contains("no longer names plant-c"), "{text}");
    assert_eq!(fingerprint_of(&lab), before, "gold keeps every plant-c row");
    ok(&lab, &["run", "2026-07-02"]);
    let gold = json(&lab, &["check", "2026-06-29"]);
    assert!(gold["detail"]["v2"].as_array().unwrap().iter().any(|r| r["grain"][0] == "plant-c"), "{gold}");
    assert_eq!(gold["detail"]["v2"], gold["detail"]["recompute"], "the recount reads the lab's kept rows too: {gold}");
}

/// Both engines' recounts of the manufacturing world, with its correction applied, print one
/// fingerprint: the lab's (polars) and the Spark driver's Python (spark/recount_spark/model.py).
#[test]
fn the_spark_driver_s_model_recount_prints_the_lab_s_fingerprint() {
    let dir = tempdir();
    let copy = world_copy(dir.path());
    let rel = "mes/records/upload_date=2026-06-30/plant-a.jsonl.gz";
    std::fs::copy(copy.join("corrections/01-corrected-counts").join(rel), copy.join(rel)).unwrap();
    // And a model of one's own whose copies differ: the order of the copies decides its sums;
    // and a line that is not UTF-8, which both refuse alone.
    let (parcels, _) = parcels(dir.path());
    let (latin1, _) = with_a_latin1_line(dir.path());
    for world in [copy, parcels, latin1] {
        let lab = recount::reports::model::model_report(&world, 0).unwrap().fingerprint;
        let out = std::process::Command::new("python3")
            .args(["-m", "recount_spark.model"])
            .arg(&world)
            .current_dir(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("spark"))
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), lab, "{}", world.display());
    }
}

/// `sample-data-manufacturing/` is what `generate --model manufacturing` writes with the default
/// seed, byte for byte.
#[test]
fn the_bundled_plant_feed_is_what_the_generator_writes() {
    let dir = tempdir();
    let fresh = dir.path().join("w");
    recount::world::manufacturing::generate(&fresh, recount::world::DEFAULT_SEED).unwrap();
    let bundled = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing");
    fn files(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files(root, &p, out);
            } else {
                out.push((p.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    files(&fresh, &fresh, &mut a);
    files(&bundled, &bundled, &mut b);
    a.sort();
    b.sort();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!(x == y, "{} differs from {}", x.0, y.0);
    }
}

/// The model's recount in any number of passes (each holding the keys that hash to it) is the
/// recount in one: its rows, its counts and its refused lines.
#[test]
fn the_model_recount_in_any_number_of_passes_is_the_recount_in_one() {
    let (_, w) = world();
    let model = recount::model::manufacturing();
    let one = recount::model::recount::recount_in_passes(w, &model, Some(1)).unwrap();
    for passes in [2, 7] {
        let many = recount::model::recount::recount_in_passes(w, &model, Some(passes)).unwrap();
        assert_eq!(many.rows, one.rows, "{passes} passes");
        assert_eq!((many.copies, many.entities, many.refused.len()), (one.copies, one.entities, one.refused.len()), "{passes} passes");
    }
}

/// The lateness window's shared corpus (tests/corpus/window.jsonl): the lab's rule in Rust
/// (`rules::LatenessWindow`, whose `fate` the model lab's runs use) and in SQL (the `in_window`
/// macro every DuckDB statement applies) give every verdict, as the Spark driver's `fate` does in
/// spark/tests/test_window.py.
#[test]
fn the_window_rule_gives_the_shared_corpus_verdict_in_rust_and_in_sql() {
    let text =
        std::fs::read_to_string(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/corpus/window.jsonl"))
            .unwrap();
    let cases: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(cases.len() > 100);
    let dir = tempdir();
    let lab = recount::lake::Lab::open(dir.path()).unwrap();
    let conn = lab.store().connection_for_tests();
    for c in &cases {
        let upload: NaiveDate = c["upload"].as_str().unwrap().parse().unwrap();
        let d: NaiveDate = c["business_date"].as_str().unwrap().parse().unwrap();
        let late = u32::try_from(c["late_days"].as_u64().unwrap()).unwrap();
        let window = recount::rules::LatenessWindow::new(late);
        assert_eq!(window.contains(upload, d), c["in_window"].as_bool().unwrap(), "{c}");
        assert_eq!(serde_json::to_value(window.fate(upload, d)).unwrap(), c["fate"], "{c}");
        let sql: bool = conn
            .query_row("SELECT in_window(?::DATE, ?::DATE, ?::INTEGER)", duckdb::params![upload.to_string(), d.to_string(), late], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(sql, c["in_window"].as_bool().unwrap(), "SQL: {c}");
    }
}

/// `trend`, `late` and `baskets` on a model lab, in the model's words: every date and measure,
/// provisional or not, v2 beside v1 and the recount; the recount's extra records are exactly the keys
/// past the window that `late` lists (72 on the plant feed, by a reading from scratch); each
/// re-sent key has one winner, its first arrival; v1 run twice on a day spikes.
#[test]
fn the_dates_late_rows_and_re_sent_keys_of_a_model_lab_agree_with_each_other_and_a_reading_from_scratch() {
    let (_, w) = world();
    let dir = tempdir();
    let lab = dir.path().join("lab");
    ok(&lab, &["land", FIRST, LAST, "--world", w.to_str().unwrap()]);
    ok(&lab, &["run", FIRST, LAST]);
    for _ in 0..2 {
        ok(&lab, &["naive", "2026-06-25", "2026-06-25"]);
    }
    let trend = json(&lab, &["trend"]);
    // The records' series: a row per date.
    let rows: Vec<&serde_json::Value> = trend["rows"].as_array().unwrap().iter().filter(|r| !r["v2_records"].is_null()).collect();
    let (_, windowed) = oracle_with(w, Some(2));
    let (_, every) = oracle(w);
    let total = |g: &Gold| g.values().map(|m| m[0]).sum::<i64>();
    let beyond = total(&every) - total(&windowed);
    assert_eq!(beyond, 72, "the plant feed's late line");
    let int = |r: &serde_json::Value, c: &str| r[c].as_i64().unwrap_or(0);
    let v2: i64 = rows.iter().map(|r| int(r, "v2_records")).sum();
    let re: i64 = rows.iter().map(|r| int(r, "recompute_records")).sum();
    assert_eq!((v2, re), (total(&windowed), total(&every)));
    let mut listed = 0;
    for r in &rows {
        let d = r["business_date"].as_str().unwrap();
        let marks = r["marks"].as_str().unwrap();
        let provisional = marks.ends_with("provisional");
        let status = marks.trim_end_matches("provisional").trim_end_matches(", ");
        let late = json(&lab, &["late", d]);
        let never = late["rows"].as_array().unwrap().iter().filter(|l| l["missing_from_v2"] == "yes").count() as i64;
        listed += never;
        match int(r, "recompute_records") - int(r, "v2_records") {
            0 => assert!(status.is_empty(), "{d}: {marks}"),
            n => assert_eq!((status, n), ("beyond window", never), "{d}: the recount's extra records are the date's late ones"),
        }
        // v1 ran twice on the upload that holds half of 2026-06-25: it counts that half twice,
        // 146 beside 144, which is no spike by the one rule (half as much again as the recount).
        let v1 = int(r, "v1_records");
        assert_eq!(v1 > int(r, "recompute_records"), d == "2026-06-25", "{d}: v1 {v1}");
        assert!(!provisional || d >= "2026-07-14", "{d}: {marks}");
    }
    assert_eq!(listed, beyond);
    // rebuild: an unchanged date is skipped and writes no snapshot; forced, it is rewritten as a
    // snapshot of its own, to the same gold.
    let before = fingerprint_of(&lab);
    let snapshots = |lab: &Path| json(lab, &["snapshots"])["detail"]["snapshots"].as_array().unwrap().len();
    let n = snapshots(&lab);
    let skipped = json(&lab, &["rebuild", "2026-06-25"]);
    assert_eq!(skipped["detail"]["runs"][0]["skipped"], serde_json::json!(["2026-06-25"]), "{skipped}");
    assert_eq!(snapshots(&lab), n);
    let forced = json(&lab, &["rebuild", "2026-06-25", "--force"]);
    assert_eq!(forced["detail"]["runs"][0]["rewritten"], serde_json::json!(["2026-06-25"]), "{forced}");
    assert_eq!((snapshots(&lab), fingerprint_of(&lab)), (n + 1, before));
    // lateness counts every record past a window, or dated after its upload's next day, as late
    // lists them date by date.
    let lateness = json(&lab, &["lateness"]);
    let outside: i64 =
        lateness["rows"].as_array().unwrap().iter().filter(|b| b["fate"] != "in the window").map(|b| b["events"].as_i64().unwrap()).sum();
    let late_all: i64 =
        rows.iter().map(|r| json(&lab, &["late", r["business_date"].as_str().unwrap()])["rows"].as_array().unwrap().len() as i64).sum();
    assert_eq!(outside, late_all);
    // A plant feed has no attribute to split its histogram by, as retail's by country.
    let by = recount(&lab, &["lateness", "--by-country"]);
    assert!(!by.status.success() && String::from_utf8_lossy(&by.stderr).contains("no attribute that names a part"), "{by:?}");
    // Promises: a date whose only difference is past the window is correct but for it; v1 run
    // twice on a day is a warning; explain bridges the recount to one v1 run, as retail's does.
    let p = json(&lab, &["promises", "2026-07-01"]);
    let status =
        |p: &serde_json::Value, name: &str| p["rows"].as_array().unwrap().iter().find(|r| r["promise"] == name).unwrap()["status"].clone();
    assert_eq!((status(&p, "completeness"), status(&p, "correctness")), (serde_json::json!("pass"), serde_json::json!("warn")), "{p}");
    let figure = |name: &str| p["rows"].as_array().unwrap().iter().find(|r| r["promise"] == name).unwrap()["figure"].clone();
    assert_eq!(figure("completeness"), "144 of 144 landed records accounted for: 120 in silver, 24 beyond the window", "{p}");
    // The records past the window are what the trend's recount counts beyond v2.
    let day = trend_of(&lab, "2026-07-01");
    let past: Vec<i64> = day.recompute.iter().zip(&day.v2).map(|(r, v)| r - v).collect();
    let want = format!("records {}, units_produced {}, defect_count {}", past[0], past[1], past[2]);
    assert_eq!(figure("correctness"), format!("gold equals the recompute but for beyond-window records ({want})"), "{day:?}");
    assert!(["uniqueness", "timeliness", "consistency"].iter().all(|n| status(&p, n) == "pass"), "{p}");
    // explain: recount - missed + double counted = one v1 run, per measure, and check's v1 (two
    // runs appended on 06-25) is twice that run; --baskets lists the records behind the numbers.
    let totals = |v: &serde_json::Value, side: &str| -> Vec<i64> {
        v["detail"][side].as_array().unwrap().iter().fold(vec![0; 3], |mut t, r| {
            r["measures"].as_array().unwrap().iter().enumerate().for_each(|(i, m)| t[i] += m.as_i64().unwrap());
            t
        })
    };
    let check = json(&lab, &["check", "2026-06-25"]);
    let explain = json(&lab, &["explain", "2026-06-25"]);
    let parts = explain["detail"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "a plant feed's date is one part: {explain}");
    let side = |s: &str| -> Vec<i64> { parts[0][s].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect() };
    assert_eq!(side("gap"), [0, 0, 0], "{explain}");
    assert_eq!(side("recompute"), totals(&check, "recompute"), "{explain}");
    assert_eq!(side("v1").iter().map(|v| 2 * v).collect::<Vec<_>>(), totals(&check, "v1"), "v1 ran twice: {explain}");
    assert!(side("missed")[0] > 0, "the upload of 06-25 holds half of the date: {explain}");
    // On every date the identity holds, and the feed exercises both of its sides.
    let opened = recount::lake::Lab::open_read(&lab).unwrap();
    let plant = recount::model::built_in("manufacturing").unwrap();
    let (mut missed, mut doubled) = (0, 0);
    for r in &rows {
        let d = r["business_date"].as_str().unwrap().parse().unwrap();
        for p in recount::reports::explain::model_explain(&opened, &plant, d).unwrap().parts {
            assert!(p.identity_holds(), "{d}: the gap {:?}", p.gap);
            (missed, doubled) = (missed + p.missed_entities, doubled + p.double_counted_copies);
        }
    }
    drop(opened);
    assert!(missed > 0 && doubled > 0, "missed {missed}, doubled {doubled}");
    let lines = ok(&lab, &["explain", "2026-06-25", "--baskets", "--format", "csv"]);
    assert!(lines.starts_with("kind,record_id,plant_id,line_id,product_id,upload_date,copies_in_run,records,"), "{lines}");
    assert_eq!(lines.lines().filter(|l| l.starts_with("missed,")).count() as i64, parts[0]["missed_entities"].as_i64().unwrap());
    // Re-sent keys: every copy, the winner first and alone.
    let mut keys = 0;
    for r in rows {
        let copies = json(&lab, &["baskets", r["business_date"].as_str().unwrap()]);
        let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in copies["rows"].as_array().unwrap() {
            by_key.entry(c["record_id"].as_str().unwrap().to_string()).or_default().push(c["why"].as_str().unwrap().to_string());
        }
        // The first copy inside the window wins, alone; a copy before it is outside the window.
        for (k, whys) in &by_key {
            let won = whys.iter().position(|w| w.starts_with("won: ")).unwrap_or(whys.len());
            let outside = |w: &String| w == "discarded: outside the lateness window";
            assert!(whys.len() >= 2 && whys[..won].iter().all(outside), "{k}: {whys:?}");
            assert!(whys[won + 1..].iter().all(|w| w.starts_with("discarded: ")), "{k}: {whys:?}");
        }
        keys += by_key.len();
    }
    let (_, copies_counted) = oracle_opts(w, Some(2), false);
    assert!(keys > 0 && total(&copies_counted) > total(&windowed), "the plant feed re-sends records, and gold counts each once");

    // A job that waits for no late upload, not two days, against this lab of one backfill (no
    // earlier version of a date to match): its row is late_arrivals_missed, the window named.
    let (_, narrow) = oracle_with(w, Some(0));
    let (k, v) = narrow.iter().find(|(k, v)| windowed.get(*k).is_some_and(|r| r != *v)).map(|(k, v)| (k.clone(), *v)).unwrap();
    let mut foreign = windowed.clone();
    foreign.insert(k.clone(), v);
    let csv = dir.path().join("narrow.csv");
    gold_csv(&csv, &foreign);
    let out = recount(&lab, &["--format", "csv", "audit", "--gold", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8(out.stdout).unwrap();
    let wrong: Vec<&str> = text.lines().skip(1).filter(|l| !l.contains(",matches,")).collect();
    let at = format!("{},{},{},{},late_arrivals_missed,\"gold with a 0-day window, not 2", k.0, k.1, k.2, k.3);
    assert!(wrong.len() == 1 && wrong[0].starts_with(&at), "{wrong:?}");

    // Reopening 2026-07-01: its records past the window join gold under the window that holds
    // them, which later runs keep; the date then equals the recount, and history names the
    // decision.
    let reopened = json(&lab, &["reopen", "2026-07-01", "--reason", "plant-c line 2 was offline", "--by", "ops"]);
    assert_eq!(reopened["detail"]["runs"][0]["rewritten"], serde_json::json!(["2026-07-01"]), "{reopened}");
    let line = trend_of(&lab, "2026-07-01");
    assert_eq!((&line.v2, line.marks.iter().all(String::is_empty)), (&line.recompute, true), "{line:?}");
    let late = json(&lab, &["late", "2026-07-01"]);
    assert!(late["rows"].as_array().unwrap().iter().all(|r| r["missing_from_v2"] != "yes"), "{late}");
    assert_eq!(late["detail"]["late_days"], 5, "the listing names the window it kept: {late}");
    let baskets = json(&lab, &["baskets", "2026-07-01"]);
    assert_eq!(baskets["detail"]["late_days"], 5, "and so does baskets: {baskets}");
    let history = ok(&lab, &["history", "2026-07-01"]);
    assert!(history.contains("reopen") && history.contains("by ops: plant-c line 2 was offline"), "{history}");
    // A later run of the upload that brought them, and a forced rebuild, keep the wider window.
    let reopened_fp = fingerprint_of(&lab);
    ok(&lab, &["run", "2026-07-06"]);
    ok(&lab, &["rebuild", "2026-07-01", "--force"]);
    let line = trend_of(&lab, "2026-07-01");
    assert_eq!((fingerprint_of(&lab), &line.v2, line.marks.iter().all(String::is_empty)), (reopened_fp, &line.recompute, true));
    // The explorer's rebuild asks with the window the date keeps.
    let opened = recount::lake::Lab::open(&lab).unwrap();
    let preview = recount::lake::v2::preview_model_rebuild(&opened, "2026-07-01".parse().unwrap(), 2).unwrap();
    assert_eq!((preview.window.late_days, preview.unchanged), (5, true), "{}", preview.text());
    drop(opened);
    // A date with nothing past its window has nothing to reopen.
    let out = recount(&lab, &["reopen", "2026-06-25", "--reason", "x", "--by", "ops"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no record past its window"));
}

#[test]
fn a_model_landing_cut_short_lands_nothing_says_so_and_the_next_landing_lands_it_all() {
    let (_, w) = world();
    let ws = w.to_str().unwrap();
    let dir = tempdir();
    let lab = dir.path().join("lab");
    // The landing's transaction fails after its first, second, third and fifth write: the model,
    // the dimension, the records that DuckDB's threads read, a file's row.
    for after in ["1", "2", "3", "5"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
            .env("RECOUNT_FAIL_AFTER", after)
            .args(["--lab", lab.to_str().unwrap(), "land", FIRST, LAST, "--world", ws])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("nothing was landed"), "failing after {after} step(s): {err}");
    }
    // Killed while it writes a kept copy, or while the kept bytes sync to disk, before COMMIT (as
    // retail's landing waits for its copies): nothing landed, and the files it kept are written
    // again by the next landing. Killed just after COMMIT: it all landed.
    let kill_at = |lab: &Path, point: &str| {
        let killed = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
            .env("RECOUNT_CRASH_AT", point)
            .args(["--lab", lab.to_str().unwrap(), "land", FIRST, LAST, "--world", ws])
            .output()
            .unwrap();
        assert!(!killed.status.success() && killed.status.code().is_none(), "the landing never reached {point}: {killed:?}");
    };
    kill_at(&lab, "landing:write");
    kill_at(&lab, "landing:fsync");
    let landed = json(&lab, &["land", FIRST, LAST, "--world", ws]);
    let files = landed["detail"]["files"].as_array().unwrap();
    assert!(!files.is_empty() && files.iter().all(|f| f["status"] == "new" && f["version"] == 1), "{landed}");
    let committed = dir.path().join("committed");
    kill_at(&committed, "landing:committed");
    let again = json(&committed, &["land", FIRST, LAST, "--world", ws]);
    assert!(again["detail"]["files"].as_array().unwrap().iter().all(|f| f["status"] == "unchanged"), "{again}");
    ok(&lab, &["run", FIRST, LAST]);
    assert_eq!(fingerprint_of(&lab), oracle_with(w, Some(2)).0);
    // The same for a first `daily` (a tight budget failed one so): the lab holds no model yet, and
    // the next daily run takes the world's model and lands it all, as the error promised.
    let fresh = dir.path().join("fresh");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .env("RECOUNT_FAIL_AFTER", "1")
        .args(["--lab", fresh.to_str().unwrap(), "daily", FIRST, LAST, "--world", ws])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("nothing was landed"), "{err}");
    ok(&fresh, &["daily", FIRST, LAST, "--world", ws]);
    assert_eq!(fingerprint_of(&fresh), fingerprint_of(&lab));
}

#[test]
fn the_dedup_corpus_s_winners_are_the_lab_s_in_sql_and_in_polars() {
    let dir = tempdir();
    let (w, want, uploads) = dedup_world(dir.path());
    let day = uploads.last().unwrap().clone();
    assert!(want.len() >= 10, "the corpus holds its cases");
    let model = recount::model::recount::model_of(&w).unwrap();
    // The polars recount, in one pass and in several (a key's copies share a pass).
    for passes in [1, 3] {
        let got: BTreeMap<String, i64> = recount::model::recount::recount_in_passes(&w, &model, Some(passes))
            .unwrap()
            .rows
            .into_iter()
            .map(|r| (r.grain[0].clone(), r.measures[0]))
            .collect();
        assert_eq!(got, want, "the recount in {passes} pass(es)");
    }
    // v2's SQL: landed and run, each key's gold is its winner's number.
    let lab = dir.path().join("lab");
    ok(&lab, &["land", &uploads[0], &uploads[uploads.len() - 2], "--world", w.to_str().unwrap()]);
    ok(&lab, &["run", &uploads[0], &uploads[uploads.len() - 2]]);
    let check = json(&lab, &["check", &day]);
    let got: BTreeMap<String, i64> = check["detail"]["v2"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["grain"][0].as_str().unwrap().to_string(), r["measures"][0].as_i64().unwrap()))
        .collect();
    assert_eq!(got, want, "v2's winners");
}

/// Retail's own parts, restated as a `[model]` of a world's `recount.toml`.
const SHOP: &str = include_str!("corpus/retail_restated.toml");

/// Each currency's sum of a money column over a report's rows (`v2_revenue` → its `_minor` and
/// `_currency` columns), and the set of the rows' v2 verdicts.
fn money_and_verdicts(report: &serde_json::Value, money: &str) -> (BTreeMap<String, i64>, std::collections::BTreeSet<String>) {
    let mut sums = BTreeMap::new();
    let mut verdicts = std::collections::BTreeSet::new();
    for r in report["rows"].as_array().unwrap() {
        if let Some(c) = r[format!("{money}_currency")].as_str() {
            *sums.entry(c.to_string()).or_insert(0) += r[format!("{money}_minor")].as_i64().unwrap();
        }
        verdicts.insert(r["v2_status"].as_str().unwrap().to_string());
    }
    (sums, verdicts)
}

/// The sample world through the model pipeline, as a model that restates retail: the same gold,
/// and the same alert exit code, check header, verdicts and money (by currency, with retail's
/// machine columns) as the built-in retail pipeline, on a date past its window and on one that
/// matches.
#[test]
fn a_model_that_restates_retail_answers_as_the_retail_pipeline_does() {
    let dir = tempdir();
    let sample = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let shop = dir.path().join("shop");
    copy_dir(&sample, &shop);
    std::fs::write(shop.join("recount.toml"), SHOP).unwrap();
    let (retail, model) = (dir.path().join("retail-lab"), dir.path().join("shop-lab"));
    let mut alerts = Vec::new();
    for (lab, world) in [(&retail, &sample), (&model, &shop)] {
        let run = recount(lab, &["daily", "2026-10-12", "2026-10-24", "--world", world.to_str().unwrap(), "--alert-on", "beyond-window"]);
        let err = String::from_utf8_lossy(&run.stderr).to_string();
        assert_eq!(run.status.code(), Some(5), "{err}");
        alerts.push(err.lines().filter(|l| l.starts_with("ALERT")).map(str::to_string).collect::<Vec<_>>());
    }
    // The alert counts as a reopening counts, in the same words: baskets v2 lacks, and their money.
    assert!(alerts[0].iter().any(|l| l.contains("13 basket(s) v2 has no copy of, £2,253.82")), "{alerts:?}");
    assert_eq!(alerts[0], alerts[1]);
    let md5 = |lab: &Path| ok(lab, &["fingerprint"]).split(", md5 ").nth(1).unwrap().trim().to_string();
    assert_eq!(md5(&retail), md5(&model));
    // For machines, the same envelope and rows.
    let (r, m) = (json(&retail, &["fingerprint"]), json(&model, &["fingerprint"]));
    assert_eq!((&r["kind"], &r["rows"]), (&m["kind"], &m["rows"]), "{m}");
    assert_eq!(m["rows"][0]["md5"].as_str(), Some(md5(&model).as_str()), "{m}");
    for (d, verdicts) in [("2026-10-18", vec!["beyond window", "match"]), ("2026-10-19", vec!["match"])] {
        let header = |lab: &Path| ok(lab, &["check", d]).lines().next().unwrap().to_string();
        assert_eq!(header(&retail), header(&model), "{d}");
        assert!(header(&model).contains("— closed: uploads"), "{d}: {}", header(&model));
        // history's header is retail's too, with the model's counts after it.
        let history = |lab: &Path| ok(lab, &["history", d]).lines().next().unwrap().to_string();
        assert!(history(&model).starts_with(&format!("{};", history(&retail))), "{d}: {}", history(&model));
        let (r, m) = (json(&retail, &["check", d]), json(&model, &["check", d]));
        for side in ["v2_revenue", "recompute_revenue"] {
            let ((r_money, r_verdicts), (m_money, m_verdicts)) = (money_and_verdicts(&r, side), money_and_verdicts(&m, side));
            assert_eq!(r_money, m_money, "{d} {side}");
            assert_eq!((&r_verdicts, &m_verdicts), (&verdicts.iter().map(|v| v.to_string()).collect(), &r_verdicts), "{d}");
        }
        // The records past the window, listed with their money as retail lists it.
        let late = json(&model, &["late", d]);
        for row in late["rows"].as_array().unwrap() {
            let (minor, digits) = (row["revenue_minor"].as_i64().unwrap(), row["revenue_digits"].as_i64().unwrap());
            assert_eq!(row["revenue_major"].as_str().unwrap().replace('.', "").parse::<i64>().unwrap(), minor, "{row}");
            assert!(row["revenue_currency"].is_string() && digits == 2, "{row}");
        }
        assert_eq!(late["rows"].as_array().unwrap().is_empty(), d == "2026-10-19", "{late}");
        // late and baskets are one report each: the same columns and rows on both labs.
        for report in ["late", "baskets"] {
            for format in ["table", "csv", "json"] {
                assert_eq!(ok(&retail, &[report, d, "--format", format]), ok(&model, &[report, d, "--format", format]), "{report} {d}");
            }
        }
    }
    // The morning's summary, the trend and the lateness histogram are one report each: the same
    // lines, tables, CSV and JSON from both labs.
    // The five promises: the same statuses and figures, but for consistency's words (a grain
    // of the model's, where retail sums stores to countries).
    for d in ["2026-10-18", "2026-10-24"] {
        let promises = |lab: &Path| -> Vec<(String, String, String)> {
            let out = json(lab, &["promises", d]);
            let rows = out["rows"].as_array().unwrap().iter();
            rows.map(|r| {
                let figure = r["figure"].as_str().unwrap();
                let figure = if r["promise"] == "consistency" { figure.split("; ").nth(1).unwrap() } else { figure };
                (r["promise"].to_string(), r["status"].to_string(), figure.to_string())
            })
            .collect()
        };
        assert_eq!(promises(&retail), promises(&model), "{d}");
    }
    for report in [vec!["summary"], vec!["trend"], vec!["trend", "--country", "in"], vec!["lateness"], vec!["lateness", "--by-country"]] {
        for format in ["table", "csv", "json"] {
            let args: Vec<&str> = report.iter().copied().chain(["--format", format]).collect();
            assert_eq!(ok(&retail, &args), ok(&model, &args), "{args:?}");
        }
    }
    let unknown = recount(&model, &["trend", "--country", "XX"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no country XX in the lab (it has GB, IN, SG)"), "{unknown:?}");
    // An audit's money is in the grain's currency, with retail's machine columns on both sides.
    let theirs = dir.path().join("theirs.csv");
    std::fs::write(&theirs, "business_date,store_id,country,currency,baskets,revenue_minor\n2026-10-19,GB001,GB,GBP,1,12345\n").unwrap();
    let out = recount(&model, &["--format", "json", "audit", "--gold", theirs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let audit: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = audit["rows"].as_array().unwrap().iter().find(|r| r["foreign_revenue_minor"] == 12345).unwrap_or_else(|| panic!("{audit}"));
    assert_eq!((row["foreign_revenue_currency"].as_str(), row["foreign_revenue_major"].as_str()), (Some("GBP"), Some("123.45")), "{row}");
    assert_eq!((row["right_revenue_currency"].as_str(), row["right_revenue_digits"].as_i64()), (Some("GBP"), Some(2)), "{row}");
    // A gold without the attributes, in major units: each grain's currency is the lab's, and the
    // wrong rows fall by the grain and its attributes, as retail's do.
    let map = dir.path().join("map.toml");
    std::fs::write(&map, "[gold]\nunit = \"major\"\n").unwrap();
    std::fs::write(&theirs, "business_date,store_id,baskets,revenue_minor\n2026-10-19,GB001,1,123.45\n2026-10-19,XX9,1,1.00\n").unwrap();
    let out = recount(&model, &["--format", "json", "audit", "--gold", theirs.to_str().unwrap(), "--map", map.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let audit: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = audit["rows"].as_array().unwrap().iter().find(|r| r["foreign_revenue_minor"] == 12345).unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(row["foreign_revenue_currency"].as_str(), Some("GBP"), "{row}");
    let by = recount(&model, &["audit", "--gold", theirs.to_str().unwrap(), "--map", map.to_str().unwrap(), "--by", "country"]);
    let table = String::from_utf8_lossy(&by.stdout);
    assert!(by.status.code() == Some(4) && table.contains("GB") && table.contains("(not in the lab)"), "{table}");
    // Reopening the date the alert names says first what it takes in, in the same words.
    let reopen =
        |lab: &Path| ok(lab, &["reopen", "2026-10-20", "--reason", "late tills", "--by", "finance"]).lines().next().unwrap().to_string();
    let (r, m) = (reopen(&retail), reopen(&model));
    assert!(r.starts_with("reopening 2026-10-20: 13 basket(s), £2,253.82, past its 2-day window"), "{r}");
    assert_eq!(r, m);
}

/// `summary` on a model lab says what the newest write moved, as retail's does, in the model's
/// measures (a plant feed has no money, so every measure): each date the daily run rewrote, its
/// totals now as `trend` gives them, and each change against `trend` before the run.
#[test]
fn a_model_lab_s_summary_names_each_date_the_newest_write_moved_with_its_change() {
    let (_, w) = world();
    let dir = tempdir();
    let (lab, ws) = (dir.path().join("lab"), w.to_str().unwrap().to_string());
    ok(&lab, &["land", FIRST, "--world", &ws]);
    assert_eq!(ok(&lab, &["summary"]).lines().next(), Some("nothing built yet: land an upload and run v2"));
    // A landed date v2 has not built, whose window has closed, fails timeliness (exit 4), as on
    // retail's lab.
    let unbuilt = dir.path().join("unbuilt");
    ok(&unbuilt, &["land", FIRST, "2026-06-25", "--world", &ws]);
    let promises = recount(&unbuilt, &["promises", "2026-06-19"]);
    let said = String::from_utf8_lossy(&promises.stdout);
    assert!(promises.status.code() == Some(4) && said.contains("v2 has not built this date yet"), "{said}");
    ok(&lab, &["daily", FIRST, "2026-07-10", "--world", &ws]);
    let totals = |lab: &Path| -> BTreeMap<String, Vec<i64>> { trend_days(lab).into_iter().map(|(d, t)| (d, t.v2)).collect() };
    let before = totals(&lab);
    ok(&lab, &["daily", "2026-07-11", "--world", &ws]);
    let after = totals(&lab);
    let summary = json(&lab, &["summary"]);
    let detail = &summary["detail"];
    assert_eq!(detail["what"], "upload 2026-07-11", "{summary}");
    let moved: Vec<&str> = detail["dates"].as_array().unwrap().iter().map(|d| d["business_date"].as_str().unwrap()).collect();
    let differ: Vec<&str> = after.keys().filter(|d| before.get(*d) != after.get(*d)).map(String::as_str).collect();
    assert!(!moved.is_empty() && moved.iter().all(|d| differ.contains(d)), "{moved:?} against {differ:?}");
    for d in detail["dates"].as_array().unwrap() {
        let day = d["business_date"].as_str().unwrap();
        let values = d["parts"][0]["measures"].as_array().unwrap();
        let was = before.get(day).cloned().unwrap_or_else(|| vec![0; 3]);
        for (i, m) in values.iter().enumerate() {
            assert_eq!(m["now"].as_i64(), Some(after[day][i]), "{day}: {m}");
            assert_eq!(m["change"].as_i64(), Some(after[day][i] - was[i]), "{day}: {m}");
        }
    }
    let line = ok(&lab, &["summary"]).lines().next().unwrap().to_string();
    assert!(line.starts_with(&format!("upload 2026-07-11 moved {} records +", moved.last().unwrap())), "{line}");
}

/// Two grains that each fit 64 bits on a date, whose total does not: `summary` and `trend`, which
/// total each date per part where the lab keeps its rows, say so, naming the date, and never wrap.
#[test]
fn a_date_s_total_past_64_bits_is_an_error_naming_the_date() {
    let dir = tempdir();
    let shop = dir.path().join("shop");
    copy_dir(&PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data"), &shop);
    std::fs::write(shop.join("recount.toml"), SHOP).unwrap();
    let upload = shop.join("pos/events/upload_date=2026-11-02");
    std::fs::create_dir_all(&upload).unwrap();
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(upload.join("huge.jsonl.gz")).unwrap(), flate2::Compression::fast());
    for s in ["GB001", "GB002"] {
        let line = format!(
            "{{\"event_id\":\"ev-{s}\",\"basket_id\":\"{s}-HUGE\",\"store_id\":\"{s}\",\"till_id\":\"{s}-T1\",\"event_ts\":\"2026-11-01T12:00:00.000Z\",\"uploaded_at\":\"2026-11-02T00:00:01.000Z\",\"currency\":\"GBP\",\"tenders\":[{{\"method\":\"card\",\"amount_minor\":5000000000000000000}}],\"items\":[]}}\n"
        );
        std::io::Write::write_all(&mut gz, line.as_bytes()).unwrap();
    }
    gz.finish().unwrap();
    let lab = dir.path().join("lab");
    ok(&lab, &["land", "2026-11-02", "--world", shop.to_str().unwrap()]);
    ok(&lab, &["run", "2026-11-02"]);
    for report in ["summary", "trend"] {
        let out = recount(&lab, &[report]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("a total of 2026-11-01 overflows 64 bits"), "{report}: {err}");
    }
}

/// A model's landing keeps a file's refused lines as retail's does: the first thousand, each
/// line and reason bounded, and one row that counts the rest; the file's count is every line.
#[test]
fn a_model_file_of_many_refused_lines_keeps_a_thousand_and_counts_the_rest() {
    let dir = tempdir();
    let copy = dir.path().join("refusals");
    copy_dir(&world().1, &copy);
    let bad = copy.join("mes/records/upload_date=2026-06-30/plant-z.jsonl.gz");
    let long = format!("{{\"{}\": 1}}", "k".repeat(5_000));
    let lines: String = (0..1_500).map(|_| format!("{long}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&bad).unwrap(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, lines.as_bytes()).unwrap();
    gz.finish().unwrap();
    let lab = dir.path().join("lab");
    let landed = json(&lab, &["land", "2026-06-30", "--world", copy.to_str().unwrap()]);
    let file = landed["detail"]["files"].as_array().unwrap().iter().find(|f| f["file"] == "plant-z.jsonl.gz").unwrap().clone();
    assert_eq!(file["quarantined"], 1_500, "{file}");
    let listed = json(&lab, &["quarantine", "2026-06-30"]);
    let rows: Vec<_> =
        listed["detail"]["rows"].as_array().unwrap().iter().filter(|r| r["file"].as_str().unwrap().ends_with("plant-z.jsonl.gz")).collect();
    assert_eq!(rows.len(), 1_001, "a thousand lines and one that counts the rest");
    assert!(rows.iter().all(|r| r["reason"].as_str().unwrap().chars().count() <= 501), "{}", rows[0]);
    assert!(rows.iter().all(|r| r["raw_line"].as_str().map_or(0, |l| l.chars().count()) <= 2_001), "{}", rows[0]);
    let last = rows.iter().map(|r| r["reason"].as_str().unwrap()).find(|r| r.starts_with("and ")).unwrap();
    assert_eq!(last, "and 500 more quarantined lines from line 1001 to 1500, counted but not kept one by one");
    // The headline counts every refused line, not the rows kept.
    let refused: i64 = landed["detail"]["files"].as_array().unwrap().iter().map(|f| f["quarantined"].as_i64().unwrap()).sum();
    assert_eq!(listed["detail"]["lines"], refused, "{}", listed["detail"]["lines"]);
    let said = ok(&lab, &["quarantine", "2026-06-30"]);
    assert!(said.starts_with(&format!("quarantine: {} line(s)", recount::money::format_count(refused))), "{said}");
}

/// A model landing says what retail's says of a file's bytes and an upload's date: a correction
/// that brings back an earlier version's bytes reverts the correction between, and an upload
/// dated after today is landed as it is, with a word.
#[test]
fn a_model_landing_names_a_reverted_correction_and_an_upload_dated_after_today() {
    let dir = tempdir();
    let copy = world_copy(dir.path());
    let (lab, ws) = (dir.path().join("lab"), copy.to_str().unwrap().to_string());
    ok(&lab, &["land", FIRST, "--world", &ws]);
    let part = copy.join(format!("mes/records/upload_date={FIRST}"));
    let file = std::fs::read_dir(&part).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".jsonl.gz")).unwrap();
    let original = std::fs::read(&file).unwrap();
    let text = gunzip(&file);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, text.lines().next().map(|l| format!("{l}\n")).unwrap().as_bytes()).unwrap();
    std::fs::write(&file, gz.finish().unwrap()).unwrap();
    assert!(!ok(&lab, &["land", FIRST, "--world", &ws]).contains("reverts"));
    std::fs::write(&file, &original).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let again = ok(&lab, &["land", FIRST, "--world", &ws]);
    assert!(again.contains(&format!("{name} v3: has the bytes of v1, so it reverts v2")), "{again}");
    let future = copy.join("mes/records/upload_date=2099-01-01");
    std::fs::create_dir_all(&future).unwrap();
    std::fs::write(future.join(&name), &original).unwrap();
    let out = recount(&lab, &["land", "2099-01-01", "--world", &ws]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("upload 2099-01-01 is dated after today"), "{said}");
    assert!(!again.contains("dated after today"), "{again}");
}
