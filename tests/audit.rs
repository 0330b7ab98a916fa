//! `recount audit`: a foreign gold, written here by a small pipeline of its own over the sample
//! world's raw files (the contract's rules, each of which a switch can break), audited against
//! the lab. A right gold matches row for row; each injected fault is named for exactly its rows,
//! from CSV and from Parquet, and no right row is flagged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use chrono::{DateTime, NaiveDate};
use common::*;
use recount::store::for_tests::duckdb;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How the small pipeline builds gold: the contract's rules, or one of them broken.
#[derive(Clone, Copy, Default)]
struct Bugs {
    no_dedup: bool,
    no_window: bool,
    /// Only the uploads up to this one had landed.
    as_of: Option<NaiveDate>,
    /// Events dated in UTC, not in their store's zone.
    utc: bool,
    /// A narrower window than the contract's two days.
    late_days: Option<i64>,
}

type Gold = BTreeMap<(NaiveDate, String), (i64, i64)>;

/// Gold of the sample world built from its files by the contract's rules, with `bugs`.
fn pipeline(world: &Path, bugs: Bugs) -> Gold {
    let zones = zones_of(&world.join("stores.csv"));
    type Order = (DateTime<chrono::Utc>, String, NaiveDate, String, usize);
    let mut copies: Vec<(Order, String, NaiveDate, String, i64)> = Vec::new();
    for up in uploads(world) {
        if bugs.as_of.is_some_and(|a| up > a) {
            continue;
        }
        let dir = world.join(format!("pos/events/upload_date={up}"));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(std::fs::File::open(&f).unwrap()).read_to_string(&mut text).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            for (i, line) in text.lines().enumerate() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
                let (Some(store), Some(ts), Some(at)) = (v["store_id"].as_str(), v["event_ts"].as_str(), v["uploaded_at"].as_str()) else {
                    continue;
                };
                let (Some(zone), Ok(ts), Ok(at)) = (zones.get(store), DateTime::parse_from_rfc3339(ts), DateTime::parse_from_rfc3339(at))
                else {
                    continue;
                };
                let revenue: i64 = v["tenders"].as_array().map(|t| t.iter().filter_map(|x| x["amount_minor"].as_i64()).sum()).unwrap_or(0);
                let d = if bugs.utc { ts.to_utc().date_naive() } else { ts.with_timezone(zone).date_naive() };
                let in_window = up >= d - chrono::Duration::days(1) && up <= d + chrono::Duration::days(bugs.late_days.unwrap_or(2));
                if !in_window && !bugs.no_window {
                    continue;
                }
                let order = (at.to_utc(), v["event_id"].as_str().unwrap_or("").to_string(), up, name.clone(), i);
                copies.push((order, v["basket_id"].as_str().unwrap_or("").to_string(), d, store.to_string(), revenue));
            }
        }
    }
    copies.sort();
    let mut seen = std::collections::HashSet::new();
    let mut gold = Gold::new();
    for (_, basket, d, store, revenue) in copies {
        if !bugs.no_dedup && !seen.insert(basket) {
            continue;
        }
        let g = gold.entry((d, store)).or_default();
        g.0 += 1;
        g.1 += revenue;
    }
    gold
}

fn csv_of(gold: &Gold) -> String {
    let mut s = String::from("business_date,store_id,baskets,revenue_minor\n");
    for ((d, store), (b, r)) in gold {
        s.push_str(&format!("{d},{store},{b},{r}\n"));
    }
    s
}

/// The sample world landed and run upload by upload, forwards: each date has a version per run
/// that brought it rows.
fn lab() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static L: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    L.get_or_init(|| {
        let dir = tempdir();
        let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
        let lab = dir.path().join("lab");
        let ups = uploads(&world);
        for u in &ups {
            ok(&lab, &["daily", &u.to_string(), "--world", world.to_str().unwrap()]);
        }
        (dir, lab, world)
    })
}

/// Where a foreign gold is read from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Csv,
    Parquet,
    /// A folder of Parquet files, the rows split between two.
    ParquetFolder,
    DuckDb,
}

/// `gold` (CSV text) written into `dir` as `source` holds it: the `--gold` argument that reads it.
fn gold_source(dir: &Path, gold_csv: &str, source: Source) -> String {
    let csv = dir.join("gold.csv");
    std::fs::write(&csv, gold_csv).unwrap();
    match source {
        Source::Csv => csv.to_str().unwrap().to_string(),
        Source::Parquet => {
            let p = dir.join("gold.parquet");
            let db = duckdb::Connection::open_in_memory().unwrap();
            db.execute(&format!("COPY (SELECT * FROM read_csv(?)) TO '{}' (FORMAT parquet)", p.display()), [csv.to_str().unwrap()])
                .unwrap();
            p.to_str().unwrap().to_string()
        }
        Source::ParquetFolder => {
            let folder = dir.join("gold");
            std::fs::create_dir(&folder).unwrap();
            let db = duckdb::Connection::open_in_memory().unwrap();
            db.execute("CREATE TABLE g AS SELECT * FROM read_csv(?)", [csv.to_str().unwrap()]).unwrap();
            for (i, half) in ["rowid % 2 = 0", "rowid % 2 = 1"].iter().enumerate() {
                let p = folder.join(format!("part-{i}.parquet"));
                db.execute_batch(&format!("COPY (SELECT * FROM g WHERE {half}) TO '{}' (FORMAT parquet)", p.display())).unwrap();
            }
            std::fs::write(folder.join("_SUCCESS"), "").unwrap();
            folder.to_str().unwrap().to_string()
        }
        Source::DuckDb => {
            let p = dir.join("theirs.duckdb");
            let db = duckdb::Connection::open(&p).unwrap();
            db.execute_batch("CREATE SCHEMA finance").unwrap();
            db.execute("CREATE TABLE finance.daily_sales AS SELECT * FROM read_csv(?)", [csv.to_str().unwrap()]).unwrap();
            drop(db);
            format!("duckdb:{}#finance.daily_sales", p.display())
        }
    }
}

/// `recount audit` of `gold` (CSV text) from `source`: exit code, and each row's causes by (date, store).
fn audit(dir: &Path, gold_csv: &str, source: Source) -> (i32, BTreeMap<(String, String), String>) {
    let (_, lab, _) = lab();
    let file = gold_source(dir, gold_csv, source);
    let out = recount(lab, &["audit", "--gold", &file, "--format", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = BTreeMap::new();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    for r in reader.records() {
        let r = r.unwrap();
        rows.insert((r[0].to_string(), r[1].to_string()), r[2].to_string());
    }
    assert!(!rows.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap(), rows)
}

/// The rows whose cause is not `matches`.
fn wrong(rows: &BTreeMap<(String, String), String>) -> BTreeMap<(String, String), String> {
    rows.iter().filter(|(_, c)| *c != "matches").map(|(k, c)| (k.clone(), c.clone())).collect()
}

#[test]
fn a_gold_built_by_the_contract_s_rules_matches_row_for_row_from_csv_parquet_and_duckdb() {
    let (_, _, world) = lab();
    let right = pipeline(world, Bugs::default());
    for source in [Source::Csv, Source::Parquet, Source::ParquetFolder, Source::DuckDb] {
        let dir = tempdir();
        let (code, rows) = audit(dir.path(), &csv_of(&right), source);
        assert_eq!(wrong(&rows), BTreeMap::new(), "{source:?}");
        assert_eq!((code, rows.len()), (0, right.len()));
    }
}

/// Faults injected into an otherwise right gold, one kind per row, each from CSV and Parquet.
#[test]
fn each_injected_fault_is_named_for_exactly_its_rows() {
    let (_, _, world) = lab();
    let right = pipeline(world, Bugs::default());
    let no_dedup = pipeline(world, Bugs { no_dedup: true, ..Bugs::default() });
    let no_window = pipeline(world, Bugs { no_window: true, ..Bugs::default() });
    let mut foreign = right.clone();
    let mut expect: BTreeMap<(String, String), &str> = BTreeMap::new();
    let key = |k: &(NaiveDate, String)| (k.0.to_string(), k.1.clone());
    // A row whose re-sent copies were counted, and one that kept rows past the window.
    let dup = no_dedup.iter().find(|(k, v)| right.get(*k) != Some(*v) && no_window.get(*k) != Some(*v)).unwrap();
    foreign.insert(dup.0.clone(), *dup.1);
    expect.insert(key(dup.0), "duplicates_counted");
    let beyond =
        no_window.iter().find(|(k, v)| right.get(*k) != Some(*v) && !expect.contains_key(&key(k)) && no_dedup.get(*k) != Some(*v)).unwrap();
    foreign.insert(beyond.0.clone(), *beyond.1);
    expect.insert(key(beyond.0), "beyond_window_included");
    // A row whose events were dated in UTC, not in the store's zone.
    let utc = pipeline(world, Bugs { utc: true, ..Bugs::default() });
    let utc_row = utc
        .iter()
        .find(|(k, v)| {
            right.get(*k).is_some_and(|r| r != *v)
                && !expect.contains_key(&key(k))
                && no_dedup.get(*k) != Some(*v)
                && no_window.get(*k) != Some(*v)
        })
        .unwrap();
    foreign.insert(utc_row.0.clone(), *utc_row.1);
    expect.insert(key(utc_row.0), "utc_business_date");
    // A row built before its date's late uploads landed: the gold of an earlier upload.
    let late = uploads(world).iter().find_map(|&u| {
        let then = pipeline(world, Bugs { as_of: Some(u), ..Bugs::default() });
        then.into_iter().find(|(k, v)| right.get(k) != Some(v) && k.0 + chrono::Duration::days(2) > u && !expect.contains_key(&key(k)))
    });
    let late = late.unwrap();
    foreign.insert(late.0.clone(), late.1);
    expect.insert(key(&late.0), "late_arrivals_missed");
    // A retried append, a row missing, a row of a store there is none of, and a row off by one.
    let mut rest = right.iter().filter(|(k, _)| !expect.contains_key(&key(k)));
    let twice = rest.next().unwrap();
    let missing = rest.nth(40).unwrap();
    let off = rest.nth(40).unwrap();
    foreign.insert(twice.0.clone(), (twice.1.0 * 2, twice.1.1 * 2));
    expect.insert(key(twice.0), "appended_twice");
    foreign.remove(missing.0);
    expect.insert(key(missing.0), "missing_row");
    foreign.insert(off.0.clone(), (off.1.0, off.1.1 + 1));
    expect.insert(key(off.0), "unexplained");
    let extra = (off.0.0, "ZZ999".to_string());
    foreign.insert(extra.clone(), (3, 3000));
    expect.insert(key(&extra), "extra_row");
    for source in [Source::Csv, Source::Parquet, Source::ParquetFolder, Source::DuckDb] {
        let dir = tempdir();
        let (code, rows) = audit(dir.path(), &csv_of(&foreign), source);
        let got = wrong(&rows);
        let want: BTreeMap<(String, String), String> = expect.iter().map(|(k, c)| (k.clone(), c.to_string())).collect();
        assert_eq!(got, want, "{source:?}");
        assert_eq!(code, 4, "a wrong row exits 4");
    }
}

#[test]
fn a_foreign_gold_without_a_column_is_an_error_and_an_inexact_figure_a_wrong_row_of_its_own() {
    let (_, lab, _) = lab();
    let dir = tempdir();
    let f = dir.path().join("g.csv");
    std::fs::write(&f, "business_date,store,baskets,revenue_minor\n2026-10-12,GB001,1,100\n").unwrap();
    let out = recount(lab, &["audit", "--gold", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no column store_id"), "{err}");
    // A figure that is not an integer: that row is wrong, with its reason, and the rest is read.
    std::fs::write(&f, "business_date,store_id,baskets,revenue_minor\n2026-10-12,GB001,1.5,100\n").unwrap();
    let out = recount(lab, &["audit", "--gold", f.to_str().unwrap(), "--format", "csv"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.starts_with("2026-10-12,GB001,")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(row.contains(",unreadable_value,") && row.contains("line 2: baskets \"\"1.5\"\" is not an integer"), "{row}");
    let out = recount(lab, &["audit", "--gold", &format!("duckdb:{}", f.display())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("a DuckDB source is duckdb:FILE#schema.table"), "{err}");
}

/// A gold built before a vendor's corrected file landed: the lab's date as of the version the
/// correction's run replaced, named with that run.
#[test]
fn a_gold_built_from_a_superseded_file_version_is_a_correction_not_applied() {
    let dir = tempdir();
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let fix = sample.join("corrections/01-changed-amounts");
    let lab = dir.path().join("lab");
    for u in uploads(&sample) {
        ok(&lab, &["daily", &u.to_string(), "--world", sample.to_str().unwrap()]);
    }
    ok(&lab, &["land", "2026-10-19", "--world", fix.to_str().unwrap()]);
    ok(&lab, &["run", "2026-10-19"]);
    // The world as it is now: the corrected file in place of the first version.
    let now = dir.path().join("now");
    copy_dir(&sample, &now);
    let rel = "pos/events/upload_date=2026-10-19/tills-gb.jsonl.gz";
    std::fs::copy(fix.join(rel), now.join(rel)).unwrap();
    let before = pipeline(&sample, Bugs::default());
    let mut foreign = pipeline(&now, Bugs::default());
    let stale: Vec<_> = before.iter().filter(|(k, v)| foreign.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), *v)).collect();
    assert!(!stale.is_empty(), "the correction changes some rows");
    let (k, v) = stale[0].clone();
    foreign.insert(k.clone(), v);
    for source in [Source::Csv, Source::Parquet] {
        let file = gold_source(dir.path(), &csv_of(&foreign), source);
        let out = recount(&lab, &["audit", "--gold", &file, "--format", "csv"]);
        let text = String::from_utf8(out.stdout).unwrap();
        let wrong: Vec<&str> = text.lines().skip(1).filter(|l| !l.contains(",matches,")).collect();
        assert_eq!(wrong.len(), 1, "{source:?}: {wrong:?}");
        assert!(wrong[0].starts_with(&format!("{},{},correction_not_applied,", k.0, k.1)), "{}", wrong[0]);
        assert!(wrong[0].contains("(upload 2026-10-19) applied a corrected file"), "{}", wrong[0]);
    }
}

/// A foreign gold with its own column names and its revenue in major units, mapped by a `[gold]`
/// table: it matches; a decimal with more places than its currency has is an error.
#[test]
fn a_foreign_gold_s_own_column_names_and_major_units_are_mapped_by_a_gold_table() {
    let (_, lab, world) = lab();
    let right = pipeline(world, Bugs::default());
    let dir = tempdir();
    // The [gold] table sits in a world's recount.toml, among the tables that describe its files.
    let map = dir.path().join("recount.toml");
    let gold_table =
        "[gold]\nbusiness_date = \"day\"\nstore_id = \"shop\"\nbaskets = \"n\"\nrevenue_minor = \"net_sales\"\nunit = \"major\"\n";
    std::fs::write(&map, format!("[partitions]\ndir = \"pos/events\"\n\n{gold_table}")).unwrap();
    // Every sample currency has two minor digits (GBP, INR, SGD).
    let mut text = String::from("day,shop,n,net_sales,region\n");
    for ((d, store), (b, r)) in &right {
        assert!(*r >= 0);
        text.push_str(&format!("{d},{store},{b},{}.{:02},EU\n", r / 100, r % 100));
    }
    let gold = dir.path().join("theirs.csv");
    std::fs::write(&gold, &text).unwrap();
    let out = recount(lab, &["audit", "--gold", gold.to_str().unwrap(), "--map", map.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let n = right.len().to_string();
    let grouped = if n.len() > 3 { format!("{},{}", &n[..n.len() - 3], &n[n.len() - 3..]) } else { n };
    assert!(stdout.contains(&format!("{grouped} of its {grouped} rows match, 0 wrong")), "{stdout}");
    // A key that is none of gold's columns is refused, by name, before anything is read.
    let typo = dir.path().join("typo.toml");
    std::fs::write(&typo, gold_table.replace("baskets =", "basket =")).unwrap();
    let out = recount(lab, &["audit", "--gold", gold.to_str().unwrap(), "--map", typo.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("[gold] basket: gold has no such column"), "{err}");
    // Without the map, the columns are not there; with a third decimal place, the amount is refused.
    let out = recount(lab, &["audit", "--gold", gold.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no column business_date"));
    let first = text.lines().nth(1).unwrap().to_string();
    let bad = text.replacen(&first, &first.replace(",EU", "").rsplit_once(',').map(|(a, b)| format!("{a},{b}5,EU")).unwrap(), 1);
    std::fs::write(&gold, bad).unwrap();
    let out = recount(lab, &["audit", "--gold", gold.to_str().unwrap(), "--map", map.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{shown}");
    assert!(shown.contains("unreadable_value") && shown.contains("line 2: net_sales") && shown.contains("decimal places"), "{shown}");
    // A store the lab does not know is an extra row, though its money has no currency to be read in.
    std::fs::write(&gold, format!("{text}2026-10-12,EXTRA-1,3,12.34,EU\n")).unwrap();
    let out = recount(lab, &["audit", "--gold", gold.to_str().unwrap(), "--map", map.to_str().unwrap(), "--format", "csv"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{shown}");
    let extra = shown.lines().find(|l| l.contains(",EXTRA-1,")).unwrap_or_else(|| panic!("{shown}"));
    assert!(extra.contains(",extra_row,") && extra.contains("not in the lab"), "{extra}");
}

/// `generate --foreign-gold` writes the sample's gold with one row of each fault, and says which:
/// the audit of a lab built the same way (day by day) names exactly those rows with those causes.
#[test]
fn the_walkthrough_s_foreign_gold_is_audited_to_exactly_the_faults_it_was_made_with() {
    let (_, lab, _) = lab();
    let dir = tempdir();
    let out = dir.path().join("theirs.csv");
    let made = recount(dir.path(), &["generate", "--foreign-gold", "--out", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&made.stderr);
    assert!(made.status.success(), "{said}");
    let injected: BTreeMap<(String, String), String> = said
        .lines()
        .skip(1)
        .map(|l| {
            let (at, cause) = l.trim().split_once(": ").unwrap();
            let (d, s) = at.split_once(' ').unwrap();
            ((d.to_string(), s.to_string()), cause.to_string())
        })
        .collect();
    assert!(injected.len() >= 8, "{said}");
    for cause in [
        "duplicates_counted",
        "utc_business_date",
        "beyond_window_included",
        "late_arrivals_missed",
        "appended_twice",
        "missing_row",
        "extra_row",
        "unexplained",
    ] {
        assert!(injected.values().any(|c| c == cause), "{cause} is not in {said}");
    }
    let audited = recount(lab, &["audit", "--gold", out.to_str().unwrap(), "--format", "csv"]);
    let text = String::from_utf8(audited.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let wrong: BTreeMap<(String, String), String> = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[2] != "matches")
        .map(|r| ((r[0].to_string(), r[1].to_string()), r[2].to_string()))
        .collect();
    assert_eq!(wrong, injected);
    // Where they fall: each country's wrong rows, counted from the faults (a store's first two
    // letters are its country here; EXTRA-1 is no store of the lab), and each week's.
    let table = recount(lab, &["audit", "--gold", out.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&table.stdout);
    let mut by_country: BTreeMap<String, usize> = BTreeMap::new();
    for (_, store) in injected.keys() {
        let country = if store.starts_with("EXTRA") { "(not in the lab)".to_string() } else { store[..2].to_string() };
        *by_country.entry(country).or_default() += 1;
    }
    for (country, n) in &by_country {
        let line = shown
            .lines()
            .find(|l| l.starts_with("country") && l.contains(country.as_str()))
            .unwrap_or_else(|| panic!("{country}:\n{shown}"));
        assert_eq!(line.split_whitespace().rev().nth(4), Some(n.to_string().as_str()), "{country}: {line}");
    }
    assert!(shown.contains("where the wrong rows fall") && shown.contains(&format!("of {} wrong rows are in", injected.len())), "{shown}");
    // --by country: every country with its rows, each country's wrong rows from the faults, and
    // every row counted once; exit 4, as the audit. An unknown field names the fields there are.
    let by = recount(lab, &["audit", "--gold", out.to_str().unwrap(), "--by", "country", "--format", "csv"]);
    assert_eq!(by.status.code(), Some(4), "{}", String::from_utf8_lossy(&by.stderr));
    let text = String::from_utf8(by.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let counted: BTreeMap<String, (usize, usize)> =
        reader.records().map(|r| r.unwrap()).map(|r| (r[0].to_string(), (r[1].parse().unwrap(), r[2].parse().unwrap()))).collect();
    let wrong_by: BTreeMap<String, usize> = counted.iter().filter(|(_, c)| c.0 > 0).map(|(k, c)| (k.clone(), c.0)).collect();
    assert_eq!(wrong_by, by_country, "{text}");
    assert!(counted.len() >= 4 && counted.values().map(|c| c.1).sum::<usize>() > 1_000, "{text}");
    let unknown = recount(lab, &["audit", "--gold", out.to_str().unwrap(), "--by", "plant_id"]);
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success() && err.contains("they are by store_id, country, currency, week"), "{err}");
    // Not over a file that is there.
    let again = recount(dir.path(), &["generate", "--foreign-gold", "--out", out.to_str().unwrap()]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists"));
}

/// A pipeline that waits one day for late uploads, not two, audited against a lab built in one
/// backfill (no earlier version of any date to match): the rows it misses are
/// `late_arrivals_missed` with the window named, from CSV and from Parquet.
#[test]
fn a_gold_built_with_a_narrower_window_is_late_arrivals_missed_naming_the_window() {
    let dir = tempdir();
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let lab = dir.path().join("lab");
    let ups = uploads(&sample);
    let (first, last) = (ups[0].to_string(), ups[ups.len() - 1].to_string());
    ok(&lab, &["land", &first, &last, "--world", sample.to_str().unwrap()]);
    ok(&lab, &["run", &last, &first]);
    let right = pipeline(&sample, Bugs::default());
    let narrow = pipeline(&sample, Bugs { late_days: Some(1), ..Bugs::default() });
    let (k, v) = narrow.iter().find(|(k, v)| right.get(*k).is_some_and(|r| r != *v)).map(|(k, v)| (k.clone(), *v)).unwrap();
    let mut foreign = right.clone();
    foreign.insert(k.clone(), v);
    for source in [Source::Csv, Source::Parquet] {
        let file = gold_source(dir.path(), &csv_of(&foreign), source);
        let out = recount(&lab, &["audit", "--gold", &file, "--format", "csv"]);
        assert_eq!(out.status.code(), Some(4));
        let text = String::from_utf8(out.stdout).unwrap();
        let wrong: Vec<&str> = text.lines().skip(1).filter(|l| !l.contains(",matches,")).collect();
        assert_eq!(wrong.len(), 1, "{source:?}: {wrong:?}");
        assert!(wrong[0].starts_with(&format!("{},{},late_arrivals_missed,\"gold with a 1-day window, not 2", k.0, k.1)), "{}", wrong[0]);
    }
}

/// A foreign gold is data, never code: a DuckDB view (whose query could read any file) is refused
/// by name, and nothing of the file it reads reaches the error; a FIFO is refused at once; a
/// column given twice, a nested value, an id past the contract's bound and a float that is not an
/// exact integer are errors naming the row; an integer is read exactly, never through a float.
#[test]
fn a_foreign_source_is_read_as_data_exactly_and_never_runs_code() {
    let (_, lab, world) = lab();
    let right = pipeline(world, Bugs::default());
    let ((d, store), (b, r)) = right.iter().next().map(|(k, v)| (k.clone(), *v)).unwrap();
    let dir = tempdir();
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "business_date,store_id,baskets,revenue_minor\n2026-10-12,TOP-SECRET-LINE,1,1\n").unwrap();
    let db = dir.path().join("theirs.duckdb");
    let conn = duckdb::Connection::open(&db).unwrap();
    conn.execute(&format!("CREATE VIEW leak AS SELECT * FROM read_csv('{}')", secret.display()), []).unwrap();
    let row = |revenue: &str, store_sql: &str| {
        format!("SELECT DATE '{d}' AS business_date, {store_sql} AS store_id, {b} AS baskets, {revenue} AS revenue_minor")
    };
    let tables = [
        ("exact", row("9007199254740993::BIGINT", &format!("'{store}'"))),
        ("whole_float", row(&format!("{r}.0::DOUBLE"), &format!("'{store}'"))),
        ("half_float", row(&format!("{r}.5::DOUBLE"), &format!("'{store}'"))),
        ("nested", row(&r.to_string(), &format!("{{'id': '{store}'}}"))),
        ("long_id", row(&r.to_string(), "repeat('x', 300)")),
    ];
    for (name, select) in &tables {
        conn.execute_batch(&format!("CREATE TABLE {name} AS {select}")).unwrap();
    }
    drop(conn);
    let audit = |table: &str| recount(lab, &["audit", "--gold", &format!("duckdb:{}#{table}", db.display()), "--format", "csv"]);
    // The headline counts the file's own rows, and the lab's rows it lacks apart from them.
    let one = dir.path().join("one.csv");
    std::fs::write(&one, format!("business_date,store_id,baskets,revenue_minor\n{d},{store},{b},{r}\n")).unwrap();
    let out = recount(lab, &["audit", "--gold", one.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lacked = right.len() - 1;
    assert!(
        text.contains(&format!(
            "1 of its 1 rows match, 0 wrong; it lacks {} row(s)",
            if lacked > 999 { format!("{},{:03}", lacked / 1000, lacked % 1000) } else { lacked.to_string() }
        )),
        "{text}"
    );
    let out = audit("leak");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("leak is a view") && !err.contains("TOP-SECRET"), "{err}");
    // Exact past 2^53, from a BIGINT.
    let out = audit("exact");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{d},{store},")) && text.contains(",9007199254740993,"), "{text}");
    // A float that is an exact integer holds money; one with a fraction does not.
    let out = audit("whole_float");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{d},{store},matches")), "{}", String::from_utf8_lossy(&out.stderr));
    let out = audit("half_float");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(",unreadable_value,\"row 1: revenue_minor holds the float"), "{text}");
    for (table, says) in
        [("nested", "row 1: store_id holds a STRUCT, not a single value"), ("long_id", "row 1: store_id is 300 bytes long")]
    {
        let out = audit(table);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{table}: {err}");
    }
    // A column given twice, and a FIFO, refused before a row is read.
    let twice = dir.path().join("twice.csv");
    std::fs::write(&twice, format!("business_date,store_id,baskets,revenue_minor,baskets\n{d},{store},{b},{r},{b}\n")).unwrap();
    let out = recount(lab, &["audit", "--gold", twice.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("column baskets is given twice"), "{}", String::from_utf8_lossy(&out.stderr));
    // More rows than the budget holds: sorted in spilled runs and their verdicts spilled, every
    // row still in the CSV, in (date, store) order, each extra row named once; in text, the
    // first rows and a line that says how many there are.
    let many = dir.path().join("many.csv");
    let mut text = String::from("business_date,store_id,baskets,revenue_minor\n");
    for i in (0..200_000).rev() {
        text.push_str(&format!("{d},S{i:06},1,1\n"));
    }
    std::fs::write(&many, text).unwrap();
    let out = recount(lab, &["audit", "--gold", many.to_str().unwrap(), "--memory", "64MB", "--format", "csv"]);
    let csv = String::from_utf8_lossy(&out.stdout);
    let extra: Vec<&str> = csv.lines().filter(|l| l.contains(",extra_row,")).map(|l| l.split(',').nth(1).unwrap_or("")).collect();
    assert_eq!(extra.len(), 200_000, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(extra.windows(2).all(|w| w[0] < w[1]) && extra[0] == "S000000", "in order, each once");
    let out = recount(lab, &["audit", "--gold", many.to_str().unwrap(), "--memory", "64MB"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("200,000 wrong") && text.contains("the table lists the first 10,000 of "), "{text}");
    assert!(text.lines().filter(|l| l.contains("extra_row")).count() < 10_100, "the text table is bounded");
    let mut twice = std::fs::read_to_string(&many).unwrap();
    twice.push_str(&format!("{d},S100000,1,1\n"));
    std::fs::write(&many, twice).unwrap();
    let out = recount(lab, &["audit", "--gold", many.to_str().unwrap(), "--memory", "64MB"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{d} S100000 is given twice")) && out.stdout.is_empty(), "across spilled runs: {err}");
    let fifo = dir.path().join("fifo.csv");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = recount(lab, &["audit", "--gold", fifo.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a regular file"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The audit's windowed alternative at the lab's own window is v2 itself, on every date: a basket
/// whose copies carry two dates counts once, on its first copy's date, as v2 counts it (and as a
/// model's windowed alternative ranks every copy the window sees, not a date's alone).
#[test]
fn the_windowed_alternative_at_the_lab_s_window_is_gold_even_for_a_basket_of_two_dates() {
    let dir = tempdir();
    // B1 again, dated a day later and arrived later: its first copy, on 2026-10-14, wins.
    let (lab, w) = b1_twice(dir.path(), "2026-10-14T10:00:00Z");
    recount::lake::v2::run_range(&lab, &uploads(&w), opts()).unwrap();
    for d in [day("2026-10-14"), day("2026-10-15")] {
        let gold: Vec<(String, i64, i64)> = {
            let conn = lab.store().connection_for_tests();
            let mut stmt = conn
                .prepare("SELECT store_id, baskets, revenue_minor FROM gold.daily_store_sales WHERE business_date = ? ORDER BY 1")
                .unwrap();
            stmt.query_map([d.to_string()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(|r| r.unwrap()).collect()
        };
        let windowed: Vec<(String, i64, i64)> =
            lab.store().windowed(d, 2).unwrap().into_iter().map(|r| (r.store_id, r.baskets, r.revenue_minor)).collect();
        assert_eq!((d, &windowed), (d, &gold));
        assert_eq!(gold.iter().map(|g| g.1).sum::<i64>(), 1, "{d}: one basket each day");
    }
}

/// The UTC-dated alternative ranks a basket's copies as a pipeline that dates in UTC would: among
/// every copy inside its own UTC date's window, counted on its first copy's UTC date. A basket
/// whose first copy falls on the UTC day before is that day's, not the next one's as well.
#[test]
fn the_utc_dated_alternative_counts_a_basket_on_its_first_copy_s_utc_date_alone() {
    let dir = tempdir();
    // 00:30 in London on the 15th, the 14th in UTC; it arrived first, so it wins.
    let (lab, _) = b1_twice(dir.path(), "2026-10-14T23:30:00Z");
    let counted = |d: &str| -> Vec<(String, i64, i64)> {
        lab.store().utc_dated(day(d), 2).unwrap().into_iter().map(|r| (r.store_id, r.baskets, r.revenue_minor)).collect()
    };
    assert_eq!(counted("2026-10-14"), [("LON1".to_string(), 1, 1000)], "B1, by its first copy");
    assert_eq!(counted("2026-10-15"), [("LON1".to_string(), 1, 1000)], "B2 alone");
}

/// A lab of one upload, 2026-10-15, at one London store: basket B1 first at `first_ts`, arrived
/// 01:00, then again dated 2026-10-15 10:00 and arrived 02:00; basket B2 once. Each 1000 pence.
fn b1_twice(dir: &Path, first_ts: &str) -> (recount::lake::Lab, PathBuf) {
    let w = HandWorld::new(dir.join("world"), STORES);
    let at = |id: &str, basket: &str, ts: &str, uploaded: &str| event(id, basket, "LON1", ts, uploaded, "GBP", &[1000]);
    w.file(
        "2026-10-15",
        "a.jsonl.gz",
        &[
            at("e1", "B1", first_ts, "2026-10-15T01:00:00Z"),
            at("e2", "B1", "2026-10-15T10:00:00Z", "2026-10-15T02:00:00Z"),
            at("e3", "B2", "2026-10-15T11:00:00Z", "2026-10-15T12:00:00Z"),
        ],
    );
    let mut lab = open_lab(dir);
    land_all(&mut lab, &w.root);
    (lab, w.root)
}
