//! Sources: a raw zone in another shape (partition names, formats, field names, major units,
//! epoch time stamps, a store file of its own) read through its `recount.toml`. The rules do not
//! change with the shape: the same events in any shape give the same fingerprint, and a line
//! that does not map is quarantined with a reason naming the field and its path.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use recount::lake::{Lab, land, v2};
use recount::raw::corrections::Correction;
use recount::store::TriggerKind;
use recount::store::for_tests::duckdb;
use recount::world::shape::{Shape, convert};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The small world with its corrections, in the contract's shape and every other, made once.
fn worlds() -> &'static (tempfile::TempDir, Vec<(Shape, PathBuf)>) {
    static W: OnceLock<(tempfile::TempDir, Vec<(Shape, PathBuf)>)> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempdir();
        let contract = dir.path().join("contract");
        recount::world::generate(&contract, recount::world::Preset::Small, 7).unwrap();
        recount::world::corrections::write(&contract).unwrap();
        let mut out = vec![(Shape::Contract, contract.clone())];
        for shape in [Shape::KafkaConnect, Shape::KafkaConnectHourly, Shape::Parquet, Shape::Csv] {
            let to = dir.path().join(format!("{shape:?}"));
            convert(&contract, &to, shape).unwrap();
            out.push((shape, to));
        }
        (dir, out)
    })
}

fn run_all(lab: &Lab, ups: impl Iterator<Item = chrono::NaiveDate>) {
    for u in ups {
        v2::run_upload(lab, u, TriggerKind::Backfill, opts()).unwrap();
    }
}

/// Forwards, backwards, daily, then daily with every correction landed and run: four
/// fingerprints, and the recompute's rows after the corrections.
fn answers(dir: &Path, world: &Path) -> ([String; 4], Vec<recount::recompute::GoldRow>) {
    let ups = uploads(world);
    assert!(ups.len() > 8, "{}: {ups:?}", world.display());
    let mut fwd = Lab::open(&dir.join("fwd")).unwrap();
    land_all(&mut fwd, world);
    run_all(&fwd, ups.iter().copied());
    let mut back = Lab::open(&dir.join("back")).unwrap();
    land_all(&mut back, world);
    run_all(&back, ups.iter().rev().copied());
    let mut daily = Lab::open(&dir.join("daily")).unwrap();
    for &u in &ups {
        land::land(&mut daily, world, &[u]).unwrap();
        v2::run_upload(&daily, u, TriggerKind::Daily, opts()).unwrap();
    }
    let daily_fp = fingerprint(&daily);
    let corrections: Vec<Correction> = recount::raw::corrections::list(world).unwrap();
    assert_eq!(corrections.len(), 4, "{}", world.display());
    for c in &corrections {
        let r = land::land(&mut daily, &c.dir, &[c.upload_date]).unwrap();
        assert!(r.held.is_empty(), "{c:?}: {r:?}");
        v2::run_upload(&daily, c.upload_date, TriggerKind::Upload, opts()).unwrap();
    }
    let recount = recount::recompute::recount(&daily.raw_root()).unwrap();
    ([fingerprint(&fwd), fingerprint(&back), daily_fp, fingerprint(&daily)], recount.rows)
}

#[test]
fn one_world_in_every_shape_gives_the_contract_fingerprint_forwards_backwards_daily_and_after_corrections() {
    let (_, worlds) = worlds();
    let dir = tempdir();
    let (contract, contract_recount) = answers(&dir.path().join("contract"), &worlds[0].1);
    assert_eq!(contract[0], contract[1]);
    assert_eq!(contract[0], contract[2]);
    assert_ne!(contract[2], contract[3], "the corrections change gold");
    for (shape, world) in &worlds[1..] {
        assert!(world.join("recount.toml").is_file());
        let (got, recount) = answers(&dir.path().join(format!("{shape:?}")), world);
        assert_eq!(got, contract, "{shape:?}: forwards, backwards, daily, corrected");
        assert_eq!(recount, contract_recount, "{shape:?}: the recompute");
    }
}

#[test]
fn a_foreign_shape_lands_with_no_quarantine_and_lists_no_writer_marker() {
    let (_, worlds) = worlds();
    for (shape, world) in worlds {
        let dir = tempdir();
        let mut lab = open_lab(dir.path());
        let r = land::land(&mut lab, world, &uploads(world)).unwrap();
        assert_eq!(r.quarantined, 0, "{shape:?}");
        assert!(r.events > 10_000, "{shape:?}: {}", r.events);
        assert!(r.partitions.iter().all(|p| p.not_taken.is_empty()), "{shape:?}: markers are skipped without a word");
    }
}

/// A world of the Kafka Connect shape written by hand: `lines` in one file of upload
/// 2026-10-24, plus the stores.
fn kafka_world(root: &Path, lines: &[String]) -> PathBuf {
    std::fs::create_dir_all(root.join("reference")).unwrap();
    std::fs::write(root.join("recount.toml"), Shape::KafkaConnect.description()).unwrap();
    std::fs::write(
        root.join("reference/locations.csv"),
        "code,country_code,tz,currency_code\nLON1,GB,Europe/London,GBP\nTYO1,JP,Asia/Tokyo,JPY\n",
    )
    .unwrap();
    let dir = root.join("topics/pos-events/year=2026/month=10/day=24");
    std::fs::create_dir_all(&dir).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for l in lines {
        writeln!(gz, "{l}").unwrap();
    }
    std::fs::write(dir.join("tills.json.gz"), gz.finish().unwrap()).unwrap();
    root.to_path_buf()
}

fn kafka_line(basket: &str, store: &str, completed: &str, total: &str, currency: &str) -> String {
    format!(
        r#"{{"message_id":"m-{basket}","transaction":{{"id":"{basket}","till":"T1","completed_at":"{completed}","total":{total},"currency":"{currency}"}},"store":{{"code":"{store}"}},"received_at":1792836000000}}"#
    )
}

#[test]
fn lines_that_do_not_map_are_quarantined_with_their_field_path_and_exact_counts() {
    let dir = tempdir();
    let good = |b: &str| kafka_line(b, "LON1", "2026-10-24T11:00:00+01:00", r#""12.50""#, "GBP");
    let lines = vec![
        good("B1"),
        kafka_line("B2", "TYO1", "2026-10-24T19:00:00+09:00", "1250", "JPY"),
        r#"{"message_id":"m-B3","transaction":{"till":"T1","completed_at":"2026-10-24T11:00:00Z","total":"1.00","currency":"GBP"},"store":{"code":"LON1"},"received_at":1792836000000}"#.to_string(),
        kafka_line("B4", "LON1", "2026-10-24T11:00:00+01:00", r#""12,50""#, "GBP"),
        kafka_line("B5", "LON1", "2026-10-24T11:00:00+01:00", r#""12.505""#, "GBP"),
        kafka_line("B6", "LON1", "24/10/2026 11:00", r#""12.50""#, "GBP"),
        kafka_line("B7", "ZZZ9", "2026-10-24T11:00:00+01:00", r#""12.50""#, "GBP"),
        good("B8"),
    ];
    let world = kafka_world(&dir.path().join("world"), &lines);
    let mut lab = open_lab(dir.path());
    let r = land::land(&mut lab, &world, &uploads(&world)).unwrap();
    assert_eq!((r.events, r.quarantined), (3, 5), "{r:?}");
    let q = recount::reports::listings::quarantine(&lab, None).unwrap();
    let reasons: Vec<(i64, &str)> = q.rows.iter().map(|r| (r.line, r.reason.as_str())).collect();
    assert_eq!(
        reasons,
        vec![
            (3, "missing required field basket_id (transaction.id)"),
            (4, "amount (transaction.total): '12,50' is not a plain decimal number"),
            (5, "amount (transaction.total): '12.505' has more decimal places than GBP's 2"),
            (6, "event_ts (transaction.completed_at) '24/10/2026 11:00' is not an ISO-8601 instant"),
            (7, "unknown store_id 'ZZZ9'"),
        ]
    );
    assert!(q.rows.iter().all(|r| r.file.ends_with("tills.json.gz")), "{q:?}");
    // The good lines count in minor units by each currency's digits: 12.50 GBP and 1250 JPY.
    v2::run_upload(&lab, uploads(&world)[0], TriggerKind::Daily, opts()).unwrap();
    let gold = recount::recompute::recount(&lab.raw_root()).unwrap().rows;
    let by: Vec<(&str, i64, i64)> = gold.iter().map(|g| (g.currency.as_str(), g.baskets, g.revenue_minor)).collect();
    assert_eq!(by, vec![("GBP", 2, 2500), ("JPY", 1, 1250)]);
}

#[test]
fn files_the_pattern_does_not_take_are_listed_and_another_lab_reader_is_refused() {
    let dir = tempdir();
    let world = kafka_world(&dir.path().join("world"), &[kafka_line("B1", "LON1", "2026-10-24T11:00:00Z", "1", "GBP")]);
    let part = world.join("topics/pos-events/year=2026/month=10/day=24");
    std::fs::write(part.join("notes.txt"), "hello").unwrap();
    std::fs::write(part.join("_SUCCESS"), "").unwrap();
    std::fs::write(part.join(".tills.json.gz.crc"), "x").unwrap();
    let mut lab = open_lab(dir.path());
    let r = land::land(&mut lab, &world, &uploads(&world)).unwrap();
    assert_eq!(r.partitions[0].not_taken, vec!["notes.txt".to_string()]);
    assert!(r.render().contains("does not take them: notes.txt"), "{}", r.render());
    // The lab read its files through this description: the contract's world is another reader.
    let err = land::land(&mut lab, small_world(), &uploads(small_world())[..1]).unwrap_err();
    assert!(format!("{err:#}").contains("another source description"), "{err:#}");
}

#[test]
fn zstd_and_plain_json_lines_read_as_the_gzip_they_hold() {
    let dir = tempdir();
    let src = small_world();
    let ups = uploads(src);
    let mut want = Lab::open(&dir.path().join("want")).unwrap();
    land::land(&mut want, src, &ups[..3]).unwrap();
    run_all(&want, ups[..3].iter().copied());
    for (ext, compress) in [("jsonl.zst", true), ("jsonl", false)] {
        let world = dir.path().join(ext);
        std::fs::create_dir_all(&world).unwrap();
        std::fs::copy(src.join("stores.csv"), world.join("stores.csv")).unwrap();
        std::fs::write(world.join("recount.toml"), format!("[files]\nglob = \"*.{ext}\"\n")).unwrap();
        for &u in &ups[..3] {
            let to = world.join(format!("pos/events/upload_date={u}"));
            std::fs::create_dir_all(&to).unwrap();
            for f in recount::raw::list_files(src, u).unwrap() {
                let text = recount::raw::read_gz_text(&f).unwrap();
                let stem = f.file_name().unwrap().to_str().unwrap().trim_end_matches(".jsonl.gz").to_string();
                let bytes = if compress {
                    ruzstd::encoding::compress_to_vec(text.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
                } else {
                    text.into_bytes()
                };
                std::fs::write(to.join(format!("{stem}.{ext}")), bytes).unwrap();
            }
        }
        let mut lab = Lab::open(&dir.path().join(format!("lab-{ext}"))).unwrap();
        land::land(&mut lab, &world, &ups[..3]).unwrap();
        run_all(&lab, ups[..3].iter().copied());
        assert_eq!(fingerprint(&lab), fingerprint(&want), "{ext}");
    }
}

#[test]
fn a_parquet_column_of_floats_holds_its_upload_back() {
    let dir = tempdir();
    let (_, worlds) = worlds();
    let parquet = &worlds.iter().find(|(s, _)| *s == Shape::Parquet).unwrap().1;
    let world = dir.path().join("world");
    copy_dir(parquet, &world);
    let u = uploads(&world)[0];
    let part = world.join(format!("warehouse/pos_events/dt={u}"));
    let victim =
        std::fs::read_dir(&part).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "parquet")).unwrap();
    let conn = duckdb::Connection::open_in_memory().unwrap();
    conn.execute(
        "CREATE TABLE t AS SELECT * REPLACE (amount_minor::DOUBLE AS amount_minor) FROM read_parquet(?)",
        [victim.to_str().unwrap()],
    )
    .unwrap();
    std::fs::remove_file(&victim).unwrap();
    conn.execute_batch(&format!("COPY t TO '{}' (FORMAT parquet)", victim.display())).unwrap();
    let mut lab = open_lab(dir.path());
    let r = land::land(&mut lab, &world, &uploads(&world)[..2]).unwrap();
    assert_eq!(r.held.len(), 1, "{r:?}");
    assert_eq!(r.held[0].upload_date, u);
    assert!(r.held[0].reason.contains("column 'amount_minor' holds floating-point numbers"), "{:?}", r.held[0]);
}

#[test]
fn source_check_shows_each_fields_path_and_samples_and_exits_1_when_one_maps_nothing() {
    let (_, worlds) = worlds();
    let dir = tempdir();
    for (shape, world) in &worlds[1..] {
        let out = recount(dir.path(), &["source", "check", world.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{shape:?}: {text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("every required field maps"), "{shape:?}: {text}");
        assert!(text.contains("0 quarantined"), "{shape:?}: {text}");
    }
    let kafka = &worlds.iter().find(|(s, _)| *s == Shape::KafkaConnect).unwrap().1;
    let wrong = dir.path().join("wrong.toml");
    std::fs::write(&wrong, Shape::KafkaConnect.description().replace("\"transaction.id\"", "\"txn.id\"")).unwrap();
    let out = recount(dir.path(), &["source", "check", kafka.to_str().unwrap(), "--source", wrong.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("basket_id maps nothing: no line read has a value at 'txn.id'"), "{text}");
    assert!(text.contains("missing required field basket_id (txn.id)"), "{text}");
    let json = recount(dir.path(), &["source", "check", kafka.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let basket = v["detail"]["fields"].as_array().unwrap().iter().find(|f| f["field"] == "basket_id").unwrap();
    assert_eq!(basket["path"], "transaction.id");
    assert_eq!(basket["missing"], 0);
    assert!(!basket["samples"].as_array().unwrap().is_empty());
}

#[test]
fn the_shipped_kafka_example_is_the_sample_world_in_that_shape_and_lands_to_its_fingerprint() {
    let root = &std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let (sample, shipped) = (root.join("sample-data"), root.join("sample-data-kafka"));
    let dir = tempdir();
    let fresh = dir.path().join("fresh");
    convert(&sample, &fresh, Shape::KafkaConnect).unwrap();
    let files = |w: &Path| {
        let mut out = Vec::new();
        let mut stack = vec![w.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push((p.strip_prefix(w).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    };
    assert!(files(&shipped) == files(&fresh), "sample-data-kafka/ is `generate --shape kafka-connect` of sample-data/: regenerate it");
    let (mut want, mut got) = (Lab::open(&dir.path().join("a")).unwrap(), Lab::open(&dir.path().join("b")).unwrap());
    for (lab, world) in [(&mut want, &sample), (&mut got, &shipped)] {
        land_all(lab, world);
        run_all(lab, uploads(world).into_iter());
    }
    assert_eq!(fingerprint(&got), fingerprint(&want));
}
