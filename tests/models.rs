//! Models (docs/data-contract.md, "Models"): the manufacturing world as `generate --model
//! manufacturing` writes it, recounted with the model and held to a reading of the contract
//! written here from scratch; the correction scenario; a model of one's own in `recount.toml`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use chrono::{DateTime, NaiveDate, Utc};
use common::*;
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
    let zones = zones_of(&world.join("plants.csv"));
    let root = world.join("mes/records");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    parts.sort();
    type Key = (DateTime<Utc>, String, String, String, usize);
    let mut best: HashMap<String, (Key, serde_json::Value)> = HashMap::new();
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
                let up = DateTime::parse_from_rfc3339(v["uploaded_at"].as_str().unwrap()).unwrap().to_utc();
                let key: Key = (up, v["event_id"].as_str().unwrap().into(), upload.clone(), name.clone(), i);
                let id = v["record_id"].as_str().unwrap().to_string();
                if best.get(&id).is_none_or(|(k, _)| key < *k) {
                    best.insert(id, (key, v));
                }
            }
        }
    }
    let mut gold = Gold::new();
    for (_, v) in best.values() {
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
    let (_, w) = world();
    let dir = tempdir();
    let copy = dir.path().join("w");
    copy_dir(w, &copy);
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
fn the_cli_generates_reads_and_checks_a_model_world_and_refuses_to_land_it_into_a_lab() {
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
    let lab = dir.path().join("lab");
    let land = recount(&lab, &["land", "2026-06-19", "2026-07-15", "--world", ws]);
    let err = String::from_utf8_lossy(&land.stderr);
    assert!(!land.status.success() && err.contains("nothing was landed") && err.contains("recount model"), "{err}");
    assert!(!lab.join("raw").exists(), "nothing was copied");
}

/// A world of one's own model: parcels by depot, with a business date read as-is and copies of
/// one parcel that differ, so that the order of the copies decides the sums. Returns the world and
/// its `recount.toml`.
fn parcels(dir: &Path) -> (PathBuf, &'static str) {
    let w = dir.join("parcels");
    let part = w.join("feed/upload_date=2026-03-02");
    std::fs::create_dir_all(&part).unwrap();
    let toml: &'static str = r#"
[model]
name = "parcels"
gold = "daily_deliveries"
entity = "parcel"
key = "parcel_id"
event_time = "delivered_at"
arrival_time = "sent_at"
events_root = "feed"
business_date = "route_date"
grain = ["depot"]
measures = [{ name = "parcels", of = "count" }, { name = "weight_g", of = "items[].grams" }]
"#;
    std::fs::write(w.join("recount.toml"), toml).unwrap();
    let line = |id: &str, ev: &str, sent: &str, depot: &str, grams: [i64; 2]| {
        format!(
            r#"{{"event_id":"{ev}","parcel_id":"{id}","depot":"{depot}","route_date":"2026-03-01","delivered_at":"2026-03-01T18:00:00Z","sent_at":"2026-03-02T{sent}Z","items":[{{"grams":{}}},{{"grams":{}}}]}}"#,
            grams[0], grams[1]
        )
    };
    // Copies that differ: p1 ties on arrival, so the smaller event id wins; p2's earlier arrival
    // wins over its smaller event id.
    let text = [
        line("p1", "e2", "01:00:00", "north", [100, 999]),
        line("p1", "e1", "01:00:00", "north", [100, 250]),
        line("p2", "e3", "01:00:00", "south", [40, 2]),
        line("p2", "e0", "02:00:00", "south", [40, 7000]),
    ]
    .join("\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    std::fs::write(part.join("a.jsonl.gz"), gz.finish().unwrap()).unwrap();
    (w, toml)
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

/// The shared corpus (tests/corpus/models.jsonl): the lab's reader gives every verdict, as the
/// Spark driver's does in spark/tests/test_models.py.
#[test]
fn the_lab_s_model_reader_gives_the_shared_corpus_verdict_on_every_line() {
    let model = recount::model::manufacturing();
    let plants = "plant_id,country,timezone\nplant-a,DE,Europe/Berlin\nplant-b,US,America/Chicago\nplant-c,IN,Asia/Kolkata\n";
    let dims = recount::model::read::DimensionTable::parse(&model, plants).unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/models.jsonl")).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let upload: NaiveDate = c["upload_date"].as_str().unwrap().parse().unwrap();
        let got = recount::model::read::read_line(&model, &dims, c["line"].as_str().unwrap(), upload);
        let (name, want) = (c["case"].as_str().unwrap(), &c["expect"]);
        match (got, want.get("reason"), want.get("reason_starts"), want.get("record")) {
            (Err(r), Some(w), _, _) => assert_eq!(r, w.as_str().unwrap(), "{name}"),
            (Err(r), _, Some(w), _) => assert!(r.starts_with(w.as_str().unwrap()), "{name}: {r}"),
            (Ok(r), _, _, Some(w)) => {
                let got = serde_json::json!({
                    "key": r.key, "event_id": r.event_id, "business_date": r.business_date.to_string(), "grain": r.grain,
                    "attributes": r.attributes, "measures": r.measures, "arrival_ns": r.arrival.timestamp_nanos_opt().unwrap(),
                });
                assert_eq!(&got, w, "{name}");
            }
            (got, ..) => panic!("{name}: {got:?} against {want}"),
        }
        n += 1;
    }
    assert!(n > 25, "{n} cases");
}

/// Both engines' recounts of the manufacturing world, with its correction applied, print one
/// fingerprint: the lab's (polars) and the Spark driver's Python (spark/recount_spark/model.py).
#[test]
fn the_spark_driver_s_model_recount_prints_the_lab_s_fingerprint() {
    let (_, w) = world();
    let dir = tempdir();
    let copy = dir.path().join("w");
    copy_dir(w, &copy);
    let rel = "mes/records/upload_date=2026-06-30/plant-a.jsonl.gz";
    std::fs::copy(copy.join("corrections/01-corrected-counts").join(rel), copy.join(rel)).unwrap();
    // And a model of one's own whose copies differ: the order of the copies decides its sums.
    let (parcels, _) = parcels(dir.path());
    for world in [copy, parcels] {
        let lab = recount::reports::model::model_report(&world, 0).unwrap().fingerprint;
        let out = std::process::Command::new("python3")
            .args(["-m", "recount_spark.model"])
            .arg(&world)
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("spark"))
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
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data-manufacturing");
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
