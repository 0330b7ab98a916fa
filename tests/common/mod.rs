#![allow(dead_code)]
//! Shared helpers: worlds built by hand or by the generator, labs in temp dirs, and a digest of
//! everything a lab holds so "nothing changed" can be asserted.

use chrono::NaiveDate;
use recount::lake::Lab;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The time zone of each row of a dimension file whose first column is its key and third its
/// IANA zone (`stores.csv`, `plants.csv`), read here apart from recount's own reader.
pub fn zones_of(csv: &Path) -> std::collections::HashMap<String, chrono_tz::Tz> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[2].parse().unwrap())
        })
        .collect()
}

/// The real binary on `lab`.
pub fn recount(lab: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_recount")).arg("--lab").arg(lab).args(args).output().unwrap()
}

/// The real binary on `lab`, which must succeed: its stdout.
pub fn ok(lab: &Path, args: &[&str]) -> String {
    let out = recount(lab, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Copies a directory tree (a lab, a world).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() { copy_dir(&p, &dest) } else { std::fs::copy(&p, &dest).map(|_| ()).unwrap() }
    }
}

pub fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("recount-test-").tempdir().unwrap()
}

/// One small generated world, shared by the tests of a binary (generation is deterministic).
pub fn small_world() -> &'static Path {
    static WORLD: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &WORLD
        .get_or_init(|| {
            let dir = tempdir();
            let path = dir.path().join("world");
            recount::world::generate(&path, recount::world::Preset::Small, 7).unwrap();
            (dir, path)
        })
        .1
}

pub fn uploads(world: &Path) -> Vec<NaiveDate> {
    recount::raw::source::uploads_of(world).unwrap()
}

pub fn open_lab(dir: &Path) -> Lab {
    Lab::open(&dir.join("lab")).unwrap()
}

pub fn land_all(lab: &mut Lab, world: &Path) {
    let ups = uploads(world);
    recount::lake::land::land(lab, world, &ups).unwrap();
}

pub fn opts() -> recount::lake::v2::V2Options {
    recount::lake::v2::V2Options { late_days: 2, force: false, fail_after: None }
}

pub fn fingerprint(lab: &Lab) -> String {
    recount::lake::snapshot::fingerprint(lab).unwrap().to_string()
}

/// Gold's fingerprint as DuckDB hashes it over the whole of gold in one string: an oracle for
/// recount's own, which hashes gold a slice of dates at a time (fine for a test's small gold).
pub fn duckdb_fingerprint(lab: &Lab) -> (i64, String) {
    lab.store()
        .connection_for_tests()
        .query_row(
            "SELECT count(*), md5(coalesce(string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                                                      chr(10) ORDER BY business_date, store_id), ''))
             FROM gold.daily_store_sales",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

/// A world written by hand: stores.csv plus files of raw lines.
pub struct HandWorld {
    pub root: PathBuf,
}

pub const STORES: &str =
    "store_id,country,timezone,currency\nLON1,GB,Europe/London,GBP\nBLR1,IN,Asia/Kolkata,INR\nSIN1,SG,Asia/Singapore,SGD\n";

impl HandWorld {
    pub fn new(root: PathBuf, stores_csv: &str) -> HandWorld {
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("stores.csv"), stores_csv).unwrap();
        HandWorld { root }
    }

    pub fn file(&self, upload: &str, name: &str, lines: &[String]) -> PathBuf {
        let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        self.file_of_bytes(upload, name, &lines)
    }

    /// A file of lines given as bytes (a line need not be UTF-8), each ended by a newline.
    pub fn file_of_bytes(&self, upload: &str, name: &str, lines: &[&[u8]]) -> PathBuf {
        let dir = self.root.join(format!("pos/events/upload_date={upload}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for l in lines {
            gz.write_all(l).unwrap();
            gz.write_all(b"\n").unwrap();
        }
        let path = dir.join(name);
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        path
    }
}

/// Rewrites gzip file `path` with byte `at` of its line `line` (from 0) set to `byte`: a line
/// that is not UTF-8 when `byte` is 0x80 or more. Returns the line's new text, shown lossily.
pub fn set_byte(path: &Path, line: usize, at: usize, byte: u8) -> String {
    let text = recount::raw::read_gz_text(path).unwrap();
    let mut bytes = Vec::new();
    let mut shown = String::new();
    for (i, l) in text.lines().enumerate() {
        let mut b = l.as_bytes().to_vec();
        if i == line {
            b[at] = byte;
            shown = String::from_utf8_lossy(&b).into_owned();
        }
        bytes.extend(b);
        bytes.push(b'\n');
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
    shown
}

/// A raw event line. Amount is split over the given tenders.
pub fn event(event_id: &str, basket_id: &str, store: &str, event_ts: &str, uploaded_at: &str, currency: &str, tenders: &[i64]) -> String {
    let t: Vec<String> = tenders.iter().map(|a| format!(r#"{{"method":"card","amount_minor":{a}}}"#)).collect();
    format!(
        r#"{{"event_id":"{event_id}","basket_id":"{basket_id}","store_id":"{store}","till_id":"T1","event_ts":"{event_ts}","uploaded_at":"{uploaded_at}","currency":"{currency}","tenders":[{}]}}"#,
        t.join(",")
    )
}

/// Everything a lab holds: every table's rows in a fixed order, and every raw file's bytes.
pub fn lab_digest(lab: &Lab) -> String {
    use md5::Digest;
    let mut h = md5::Md5::new();
    let tables = [
        "raw.stores",
        "raw.files",
        "raw.partitions",
        "raw.landings",
        "bronze.events",
        "bronze.quarantine",
        "silver.baskets",
        "gold.daily_store_sales",
        "naive.daily_sales",
        "audit.snapshots",
        "audit.snapshot_dates",
        "audit.gold_history",
        "audit.silver_history",
        "silver.versions",
        "bronze.cells",
        "bronze.split_baskets",
        "bronze.multi_copies",
        "bronze.store_rows",
    ];
    for t in tables {
        let text: String = lab
            .store()
            .connection_for_tests()
            .query_row(&format!("SELECT count(*)::VARCHAR || ':' || coalesce(md5(string_agg(CAST(x AS VARCHAR), '\n' ORDER BY CAST(x AS VARCHAR))), '') FROM {t} x"), [], |r| r.get(0))
            .unwrap();
        h.update(t.as_bytes());
        h.update(text.as_bytes());
    }
    let raw = lab.raw_root();
    let mut files = Vec::new();
    if raw.exists() {
        collect(&raw, &mut files);
    }
    files.sort();
    for f in files {
        h.update(f.to_string_lossy().as_bytes());
        if f.is_file() {
            h.update(std::fs::read(&f).unwrap());
        }
    }
    recount::store::hex(&h.finalize())
}

/// Every file and directory under `dir`: a failed run must not leave even an empty directory.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.push(p.clone());
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The first business date on or after `from` with a basket whose every copy arrived in the next
/// day's upload (an offline till): the date rises when that upload lands.
pub fn first_day_with_late_baskets(world: &Path, from: NaiveDate) -> NaiveDate {
    let stores = recount::raw::StoreTable::read(&world.join("stores.csv")).unwrap();
    let mut first_upload: std::collections::HashMap<String, (NaiveDate, NaiveDate)> = Default::default();
    for u in uploads(world) {
        for f in recount::raw::list_files(world, u).unwrap() {
            for line in recount::raw::read_gz_text(&f).unwrap().lines() {
                let e = recount::raw::parse_line(line, &stores, u).unwrap();
                let entry = first_upload.entry(e.basket_id.into_owned()).or_insert((e.business_date, u));
                entry.1 = entry.1.min(u);
            }
        }
    }
    first_upload
        .values()
        .filter(|(d, u)| *d >= from && *u == *d + chrono::Duration::days(1))
        .map(|(d, _)| *d)
        .min()
        .expect("the world has a late basket")
}

#[allow(dead_code)] // used by the tests of models and of Spark
/// The dedup corpus (tests/corpus/dedup.jsonl) as a world: each copy on its line of its file of
/// its upload (blank lines before it), each key's winning copy's number, and the uploads in
/// order followed by the day the cases are dated.
pub fn dedup_world(dir: &Path) -> (PathBuf, std::collections::BTreeMap<String, i64>, Vec<String>) {
    let text =
        std::fs::read_to_string(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/corpus/dedup.jsonl"))
            .unwrap();
    let w = dir.join("dedup");
    std::fs::create_dir_all(&w).unwrap();
    std::fs::copy(
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/corpus/dedup_model.toml"),
        w.join("recount.toml"),
    )
    .unwrap();
    let mut files: std::collections::BTreeMap<(String, String), std::collections::BTreeMap<u64, String>> = Default::default();
    let mut want = std::collections::BTreeMap::new();
    let mut day = String::new();
    for case in text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()) {
        let key = case["key"].as_str().unwrap();
        day = case["day"].as_str().unwrap().to_string();
        for (i, c) in case["copies"].as_array().unwrap().iter().enumerate() {
            let line =
                serde_json::json!({"key": key, "event_id": c["event_id"], "arrival": c["arrival"], "day": case["day"], "copy": i + 1});
            let place = (c["upload_date"].as_str().unwrap().to_string(), c["file"].as_str().unwrap().to_string());
            files.entry(place).or_default().insert(c["line"].as_u64().unwrap(), line.to_string());
        }
        want.insert(key.to_string(), case["winner"].as_i64().unwrap() + 1);
    }
    let mut uploads: Vec<String> = Vec::new();
    for ((upload, file), lines) in files {
        let dir = w.join("events").join(format!("upload_date={upload}"));
        std::fs::create_dir_all(&dir).unwrap();
        let last = *lines.keys().max().unwrap();
        let body: Vec<String> = (1..=last).map(|n| lines.get(&n).cloned().unwrap_or_default()).collect();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, (body.join("\n") + "\n").as_bytes()).unwrap();
        std::fs::write(dir.join(file), gz.finish().unwrap()).unwrap();
        if !uploads.contains(&upload) {
            uploads.push(upload);
        }
    }
    uploads.sort();
    uploads.push(day);
    (w, want, uploads)
}
