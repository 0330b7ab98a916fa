//! The v2 job on Spark into Iceberg tables, driven through `recount spark`, against the lab.
//!
//! These start real Spark sessions (local[2]) on the bundled sample world. A machine without the
//! Spark setup gets it made first, by `recount spark setup` (from the package registries).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const FIRST: &str = "2026-10-12";
const LAST: &str = "2026-11-01";

fn sample() -> PathBuf {
    std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data")
}

fn exe() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_recount"));
    c.env("NO_COLOR", "1").env_remove("RECOUNT_WAREHOUSE").env("RECOUNT_MIRRORS", test_mirrors());
    if let Some(socket) = server() {
        c.env("RECOUNT_SPARK_SERVER", socket);
    }
    c
}

/// One warm Spark session for every case of this binary (`recount spark serve`), which each
/// case's Spark calls go to instead of starting a JVM each: the warehouses differ, the JVM is
/// one. It ends with this process. `None` until the setup exists (the setup's own call).
fn server() -> Option<&'static Path> {
    static SOCKET: OnceLock<PathBuf> = OnceLock::new();
    if recount::spark::SparkSetup::find(&recount::spark::default_home()).is_err() {
        return None;
    }
    // The server outlives every case and is never waited for: it ends itself with this process.
    #[allow(clippy::zombie_processes)]
    let socket = SOCKET.get_or_init(|| {
        let dir = tempdir().keep();
        let socket = dir.join("spark.sock");
        let mut child = Command::new(env!("CARGO_BIN_EXE_recount"))
            .args(["spark", "serve", "--idle", "600", "--socket"])
            .arg(&socket)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The socket is bound once the session has started.
        let start = std::time::Instant::now();
        while !socket.exists() {
            assert!(child.try_wait().unwrap().is_none(), "recount spark serve ended before it served");
            assert!(start.elapsed().as_secs() < 300, "recount spark serve did not bind {} in 300 s", socket.display());
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        socket
    });
    Some(socket.as_path())
}

/// Runs recount; panics with its stderr unless it exits with `code`.
fn recount_code(args: &[&str], code: i32) -> String {
    ensure_setup();
    let out = exe().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(code), "recount {args:?}\nstdout:\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn recount(args: &[&str]) -> String {
    recount_code(args, 0)
}

/// A command's JSON: a report's own fields (the envelope's `detail`), or a record as it is.
fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    detail(&recount(&all))
}

/// JSON text as a value: a report's own fields (its envelope's `detail`), or a record as it is.
fn detail(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).unwrap();
    if v.get("kind").is_some() && v.get("detail").is_some() { v["detail"].clone() } else { v }
}

/// Where the binary keeps warehouses' mirrors in these tests: under the target directory, emptied
/// once per run. Each test's warehouse is a new path, so each run left its mirrors in the user's
/// cache (`~/.cache/recount/warehouses`) for good.
fn test_mirrors() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spark-mirrors");
        let _ = std::fs::remove_dir_all(&dir);
        dir
    })
}

fn ensure_setup() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        if recount::spark::SparkSetup::find(&recount::spark::default_home()).is_err() {
            let status = exe().args(["spark", "setup"]).status().unwrap();
            assert!(status.success(), "recount spark setup failed");
        }
    });
}

fn w(dir: &Path) -> String {
    dir.join("warehouse").display().to_string()
}

/// The lab's fingerprint on the same uploads: `run` in the order given after landing them all,
/// or `daily`.
fn lab_fingerprint(dir: &Path, range: &[&str], daily: bool) -> String {
    let lab = dir.join("lab").display().to_string();
    let world = sample().display().to_string();
    if daily {
        let mut args = vec!["--lab", &lab, "daily", "--world", &world];
        args.extend(range);
        recount(&args);
    } else {
        let (lo, hi) =
            if range[0] <= range[range.len() - 1] { (range[0], range[range.len() - 1]) } else { (range[range.len() - 1], range[0]) };
        recount(&["--lab", &lab, "land", lo, hi, "--world", &world]);
        let mut args = vec!["--lab", &lab, "run"];
        args.extend(range);
        recount(&args);
    }
    recount(&["--lab", &lab, "fingerprint"]).trim().to_string()
}

fn spark_run(dir: &Path, range: &[&str], world: &Path, daily: bool) -> Value {
    spark_run_with(dir, range, world, if daily { &["--daily"] } else { &[] })
}

fn spark_run_with(dir: &Path, range: &[&str], world: &Path, extra: &[&str]) -> Value {
    let wh = w(dir);
    let world = world.display().to_string();
    let mut args = vec!["spark", "run"];
    args.extend(range);
    args.extend(["--world", &world, "--warehouse", &wh]);
    args.extend(extra);
    json(&args)
}

fn fingerprint_line(v: &Value) -> String {
    recount::lake::snapshot::Fingerprint { rows: v["rows"].as_i64().unwrap(), md5: v["md5"].as_str().unwrap().to_string() }.to_string()
}

/// The dates a run's report (the lab's or Spark's, the same shape) says it rewrote.
fn rewritten(run: &Value) -> Vec<String> {
    run["dates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["action"] == "overwrite")
        .map(|d| d["business_date"].as_str().unwrap().to_string())
        .collect()
}

/// Every Iceberg snapshot id of a table, oldest first (read by pyiceberg).
fn snapshots(dir: &Path, table: &str) -> Vec<Value> {
    json(&["spark", "snapshots", "--warehouse", &w(dir), "--table", table])["snapshots"].as_array().unwrap().clone()
}

/// A report as JSON, with what a warehouse cannot share with a lab taken out: when each snapshot
/// was made, the input hashes (each store hashes its own bronze: Spark hashes rows, the lab sums
/// xxh3 digests) and the quarantined lines' raw text, which the warehouse does not keep.
fn comparable<T: serde::Serialize>(report: color_eyre::eyre::Result<T>) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for key in ["created_at", "input_hash", "raw_line", "computed_at"] {
                    m.remove(key);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    // A report that refuses (a diff of a date with one version) refuses alike.
    let mut v = match report {
        Ok(r) => serde_json::to_value(r).unwrap(),
        Err(e) => serde_json::json!({ "error": format!("{e:#}") }),
    };
    strip(&mut v);
    v
}

/// Where a test's warehouse is mirrored: beside it, in the test's own directory.
fn mirrors(wh: &Path) -> PathBuf {
    wh.with_file_name("mirrors")
}

/// Every report of every business date, read from the lab and from the warehouse (`--warehouse`,
/// its mirror): the same structs, so the CLI, JSON, CSV and the explorer render them alike.
fn same_reports(lab_dir: &Path, wh: &Path, when: &str) {
    use recount::reports::{self, check, explain, history, listings, promises};
    ensure_setup();
    let mut lab = recount::lake::Lab::open(lab_dir).unwrap();
    reports::freshen(&mut lab).unwrap();
    // Told to stop partway through building a mirror (the explorer quitting), the build gives
    // up between its steps and leaves no mirror, whole or half, behind.
    let stopped = wh.with_file_name("mirrors-stopped");
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 3
    };
    let err = recount::warehouse::open_until(wh, &stopped, &stop).err().expect("a stopped mirror build fails");
    assert!(format!("{err:#}").contains("interrupted"), "{err:#}");
    assert_eq!(asked.get(), 4, "it stopped at the first step after being told");
    let left: Vec<_> = std::fs::read_dir(&stopped).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "a stopped build left {left:?}");
    let mirror = recount::warehouse::open_with(wh, &mirrors(wh)).unwrap();
    let dates = reports::business_dates(&lab).unwrap();
    assert_eq!(dates, reports::business_dates(&mirror).unwrap(), "business dates {when}");
    let same = |what: &str, a: Value, b: Value| {
        if a != b {
            panic!("{what} {when}: the lab's and the warehouse's differ\nlab:       {a}\nwarehouse: {b}");
        }
    };
    same("fingerprint", comparable(reports::fingerprint(&lab, None)), comparable(reports::fingerprint(&mirror, None)));
    same("snapshots", comparable(history::snapshots(&lab)), comparable(history::snapshots(&mirror)));
    same(
        "lateness",
        comparable(reports::lateness::lateness(&lab, true, Some(2))),
        comparable(reports::lateness::lateness(&mirror, true, Some(2))),
    );
    same("quarantine", comparable(listings::quarantine(&lab, None)), comparable(listings::quarantine(&mirror, None)));
    same("late", comparable(listings::late(&lab, None, 2)), comparable(listings::late(&mirror, None, 2)));
    same("summary", comparable(reports::summary::summary(&lab)), comparable(reports::summary::summary(&mirror)));
    same("trend", comparable(reports::trend::trend(&lab)), comparable(reports::trend::trend(&mirror)));
    // As of a snapshot half way through the history: both stores' reports look back alike.
    let mid = recount::lake::snapshot::latest_id(&lab).unwrap() / 2;
    same("fingerprint as of", comparable(reports::fingerprint(&lab, Some(mid))), comparable(reports::fingerprint(&mirror, Some(mid))));
    for &d in &dates {
        same(
            &format!("check {d} as of {mid}"),
            comparable(check::check(&lab, d, Some(mid))),
            comparable(check::check(&mirror, d, Some(mid))),
        );
        same(
            &format!("history {d} as of {mid}"),
            comparable(history::history(&lab, d, Some(mid))),
            comparable(history::history(&mirror, d, Some(mid))),
        );
        let (a, b) = (check::check(&lab, d, None).unwrap(), check::check(&mirror, d, None).unwrap());
        same(&format!("promises {d}"), comparable(promises::promises(&lab, &a)), comparable(promises::promises(&mirror, &b)));
        same(&format!("check {d}"), comparable(Ok(a)), comparable(Ok(b)));
        same(&format!("explain {d}"), comparable(explain::explain(&lab, d)), comparable(explain::explain(&mirror, d)));
        let resent = |l: &recount::lake::Lab| comparable(reports::baskets::resent(l, d, 2));
        same(&format!("baskets {d}"), resent(&lab), resent(&mirror));
        same(&format!("late {d}"), comparable(listings::late(&lab, Some(d), 2)), comparable(listings::late(&mirror, Some(d), 2)));
        same(&format!("history {d}"), comparable(history::history(&lab, d, None)), comparable(history::history(&mirror, d, None)));
        same(&format!("diff {d}"), comparable(history::diff(&lab, d, None, None)), comparable(history::diff(&mirror, d, None, None)));
    }
}

#[test]
fn forwards_spark_gives_the_labs_fingerprint_and_a_rerun_adds_no_snapshot_that_pyiceberg_can_see() {
    let dir = tempdir();
    let lab = lab_fingerprint(dir.path(), &[FIRST, LAST], false);
    let run = spark_run(dir.path(), &[FIRST, LAST], &sample(), false);
    assert_eq!(fingerprint_line(&run["fingerprint"]), lab, "Spark forwards against the lab forwards");
    assert_eq!(lab, "gold.daily_store_sales: 1,260 rows, md5 4eaa9693f648e3fe7340e11ef420c003");
    // The range is one pass: one run, one gold snapshot naming every upload, its trigger and
    // every date's hash.
    let gold = snapshots(dir.path(), "daily_store_sales");
    let written: Vec<&Value> = run["runs"].as_array().unwrap().iter().filter(|r| r["snapshot_id"].is_i64()).collect();
    assert_eq!((gold.len(), written.len()), (1, 1), "one pass, one gold snapshot");
    for (snap, r) in gold.iter().zip(&written) {
        assert_eq!(snap["snapshot_id"], r["snapshot_id"], "the run-to-snapshot map");
        let props = &snap["properties"];
        assert_eq!(props["recount.uploads"].as_str().unwrap().split(',').count(), 21, "{props}");
        assert_eq!(props["recount.detail"], format!("backfill of uploads {FIRST}..{LAST}"));
        assert_eq!(props["recount.trigger"], "backfill");
        for d in r["dates"].as_array().unwrap().iter().filter(|d| d["action"] == "overwrite") {
            let key = format!("recount.input-hash.{}", d["business_date"].as_str().unwrap());
            assert_eq!(props[&key], d["input_hash"], "{key}");
        }
        assert_eq!(snap["operation"], "overwrite");
    }
    assert!(gold.last().unwrap()["current"].as_bool().unwrap());

    // pyiceberg reads the same gold Spark wrote.
    let py = json(&["spark", "fingerprint", "--warehouse", &w(dir.path()), "--reader", "pyiceberg"]);
    assert_eq!(fingerprint_line(&py), lab);
    assert_eq!(py["reader"], "pyiceberg");
    foreign_iceberg_gold_is_audited_on_the_warehouse_and_the_lab(dir.path());

    // The same uploads again: every file unchanged, every run skipped, no snapshot anywhere.
    let before: Vec<usize> =
        ["daily_store_sales", "silver_baskets", "bronze_events", "raw_files"].iter().map(|t| snapshots(dir.path(), t).len()).collect();
    let again = spark_run(dir.path(), &[FIRST, LAST], &sample(), false);
    for l in again["landings"].as_array().unwrap() {
        assert!(l["new"].as_array().unwrap().is_empty() && l["corrected"].as_array().unwrap().is_empty(), "{l}");
    }
    for r in again["runs"].as_array().unwrap() {
        assert_eq!(r["action"], "skipped", "{r}");
        assert!(r["snapshot_id"].is_null());
    }
    let after: Vec<usize> =
        ["daily_store_sales", "silver_baskets", "bronze_events", "raw_files"].iter().map(|t| snapshots(dir.path(), t).len()).collect();
    assert_eq!(before, after, "a rerun with unchanged inputs adds no Iceberg snapshot");
    assert_eq!(fingerprint_line(&again["fingerprint"]), lab);
    // The lab runs the range again too: a skipped run in both histories (the warehouse keeps its
    // own in skipped_runs).
    recount(&["--lab", &dir.path().join("lab").display().to_string(), "run", FIRST, LAST]);

    // A store correction: GB001 was set up in the wrong time zone (nine hours off: its evening
    // sales move a day). Landing one upload of the
    // corrected world re-derives the store's files, and one run of its own rebuilds the dates
    // it moves, in the lab and on Spark alike; gold is then a from-scratch build's.
    let corrected = dir.path().join("store-corrected");
    copy_dir(&sample(), &corrected);
    let stores = std::fs::read_to_string(corrected.join("stores.csv")).unwrap();
    std::fs::write(corrected.join("stores.csv"), stores.replace("GB001,GB,Europe/London,GBP", "GB001,GB,Asia/Tokyo,GBP")).unwrap();
    let what = "store GB001: time zone Europe/London → Asia/Tokyo";
    let spark = spark_run(dir.path(), &[LAST], &corrected, false);
    assert_eq!(spark["stores"]["changed"], serde_json::json!([what]), "{}", spark["stores"]);
    assert!(spark["stores"]["rederived_files"].as_i64().unwrap() > 0);
    let (store_run, upload_run) = (&spark["runs"][0], &spark["runs"][1]);
    assert_eq!((&store_run["trigger"], &store_run["detail"]), (&serde_json::json!("store"), &serde_json::json!(what)));
    assert_eq!(store_run["action"], "overwrite", "{store_run}");
    assert_eq!(upload_run["action"], "skipped", "the store's run took every change: {upload_run}");
    let newest = snapshots(dir.path(), "daily_store_sales").last().unwrap().clone();
    assert_eq!(newest["properties"]["recount.trigger"], "store");
    assert_eq!(newest["properties"]["recount.detail"], what);

    let lab_dir = dir.path().join("lab").display().to_string();
    let corrected_s = corrected.display().to_string();
    recount(&["--lab", &lab_dir, "land", LAST, "--world", &corrected_s]);
    let out = recount(&["--lab", &lab_dir, "run", LAST, "--format", "json"]);
    let lab_store_run = serde_json::Deserializer::from_str(&out).into_iter::<Value>().next().unwrap().unwrap();
    assert_eq!(lab_store_run["snapshot"]["trigger"]["detail"], what, "{lab_store_run}");
    assert_eq!(rewritten(store_run), rewritten(&lab_store_run), "Spark rebuilds exactly the dates the lab rebuilds");
    assert!(!rewritten(store_run).is_empty());
    let fresh = dir.path().join("fresh").display().to_string();
    recount(&["--lab", &fresh, "land", FIRST, LAST, "--world", &corrected_s]);
    recount(&["--lab", &fresh, "run", LAST, FIRST]);
    let scratch = recount(&["--lab", &fresh, "fingerprint"]).trim().to_string();
    assert_ne!(scratch, lab);
    assert_eq!(fingerprint_line(&spark["fingerprint"]), scratch, "Spark after the correction: a from-scratch build's gold");
    assert_eq!(recount(&["--lab", &lab_dir, "fingerprint"]).trim(), scratch, "the lab after the correction too");
    // Every report reads the store correction on the warehouse as on the lab: its run, and the
    // baskets it moved out of one date and into another.
    same_reports(&dir.path().join("lab"), Path::new(&w(dir.path())), "after a one-pass backfill, a rerun and a store correction");
}

/// Another pipeline's gold as an Iceberg table beside the warehouse, written by pyiceberg's SQL
/// catalog: Spark's gold with one row appended twice. `recount spark audit` finds that row on the
/// warehouse's raw zone, through the catalog; `recount audit` finds it on the lab, through the
/// table's directory. Every other row matches.
fn foreign_iceberg_gold_is_audited_on_the_warehouse_and_the_lab(dir: &Path) {
    let (wh, lab) = (w(dir), dir.join("lab").display().to_string());
    let db = dir.join("finance.db");
    let python = recount::spark::SparkSetup::find(&recount::spark::default_home()).unwrap().python;
    let write = r#"
import os, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import StaticTable
db, wh = sys.argv[1], sys.argv[2]
meta = os.path.join(wh, 'recount', 'daily_store_sales', 'metadata')
v = open(os.path.join(meta, 'version-hint.text')).read().strip()
gold = StaticTable.from_metadata(os.path.join(meta, 'v' + v + '.metadata.json')).scan().to_arrow()
rows = sorted(gold.to_pylist(), key=lambda r: (r['business_date'], r['store_id']))
rows[5]['baskets'] *= 2
rows[5]['revenue_minor'] *= 2
cat = SqlCatalog('finance', uri='sqlite:///' + db, warehouse='file://' + wh)
cat.create_namespace('finance')
table = pa.Table.from_pylist(rows, schema=gold.schema)
cat.create_table(('finance', 'daily_sales'), schema=table.schema).append(table)
print(rows[5]['business_date'], rows[5]['store_id'])
"#;
    let out = Command::new(python).arg("-c").arg(write).arg(&db).arg(&wh).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let twice = String::from_utf8(out.stdout).unwrap().trim().replace(' ', ",");
    let wrong = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .skip(1)
            .filter(|l| !l.contains(",matches,"))
            .map(|l| l.split(",appended_twice,").next().unwrap().to_string())
            .collect()
    };
    let audit = |c: &mut Command| {
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(4), "a wrong row exits 4: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.lines().count() > 100, "every row is listed: {stdout}");
        stdout
    };
    let through_catalog = audit(
        exe()
            .env("PYICEBERG_CATALOG__FINANCE__TYPE", "sql")
            .env("PYICEBERG_CATALOG__FINANCE__URI", format!("sqlite:///{}", db.display()))
            .args(["spark", "audit", "--gold", "iceberg:catalog:finance#finance.daily_sales", "--warehouse", &wh, "--format", "csv"]),
    );
    assert_eq!(wrong(&through_catalog), [twice], "{through_catalog}");
    let gold = format!("iceberg:{wh}#finance.daily_sales");
    let on_the_lab = audit(exe().args(["--lab", &lab, "audit", "--gold", &gold, "--format", "csv"]));
    assert_eq!(on_the_lab, through_catalog, "the warehouse's raw zone and the lab's give one audit");
    let out = exe().args(["--lab", &lab, "audit", "--gold", &format!("iceberg:{wh}#finance.nothing")]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("holds no Iceberg table finance.nothing"), "{err}");
}

#[test]
fn backwards_spark_gives_the_labs_fingerprint_even_after_a_kill_between_silver_and_gold() {
    let dir = tempdir();
    let lab = lab_fingerprint(dir.path(), &[LAST, FIRST], false);
    // Killed after silver's commit of the run of 2026-10-25 and before gold's.
    let wh = w(dir.path());
    let world = sample().display().to_string();
    // Run by run (--per-upload), so that the kill falls between two of them.
    let killed = exe()
        .args(["spark", "run", LAST, FIRST, "--world", &world, "--warehouse", &wh, "--per-upload"])
        .env("RECOUNT_SPARK_CRASH", "after-silver:2026-10-25")
        .output()
        .unwrap();
    assert_eq!(killed.status.code(), Some(1), "{}", String::from_utf8_lossy(&killed.stderr));
    let silver_now =
        |dir: &Path| snapshots(dir, "silver_baskets").into_iter().find(|s| s["current"] == true).unwrap()["snapshot_id"].clone();
    let gold_names = |dir: &Path| {
        let gold = snapshots(dir, "daily_store_sales");
        let current = gold.iter().find(|s| s["current"] == true).unwrap().clone();
        current["properties"]["recount.silver-snapshot"].as_str().unwrap().parse::<i64>().unwrap()
    };
    assert_ne!(silver_now(dir.path()).as_i64(), Some(gold_names(dir.path())), "silver is ahead of gold after the kill");
    // The next command, even one that writes nothing (2026-10-31 ran before the kill: skipped),
    // puts silver back to the snapshot gold names.
    let skipped = spark_run(dir.path(), &["2026-10-31"], &sample(), false);
    assert_eq!(skipped["runs"][0]["action"], "skipped");
    assert_eq!(silver_now(dir.path()).as_i64(), Some(gold_names(dir.path())), "silver and gold agree again");
    // And the same backfill again, run by run, finishes to the lab's gold.
    let args = ["spark", "run", LAST, FIRST, "--world", &world, "--warehouse", &wh, "--per-upload", "--format", "json"];
    let run = detail(&recount(&args));
    let uploads: Vec<&str> = run["runs"].as_array().unwrap().iter().map(|r| r["upload"].as_str().unwrap()).collect();
    assert_eq!(uploads.first(), Some(&LAST), "newest first");
    assert_eq!(fingerprint_line(&run["fingerprint"]), lab);
    // The range in one pass over it finds every date's input hash as the runs recorded them.
    let pass = spark_run(dir.path(), &[LAST, FIRST], &sample(), false);
    let runs = pass["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one pass: {pass}");
    assert_eq!((&runs[0]["trigger"], &runs[0]["action"]), (&serde_json::json!("backfill"), &serde_json::json!("skipped")), "{}", runs[0]);
    assert!(runs[0]["dates"].as_array().unwrap().len() > 20, "every date was compared");

    // Finance reopens 2026-10-20, whose GB tills sent baskets past the window: the lab and Spark
    // take the same rows in, to the same gold, and name the decision.
    let reopened = "2026-10-20";
    let lab_dir = dir.path().join("lab").display().to_string();
    recount(&["--lab", &lab_dir, "reopen", reopened, "--reason", "late GB tills approved", "--by", "alice"]);
    let lab_reopened = recount(&["--lab", &lab_dir, "fingerprint"]).trim().to_string();
    assert_ne!(lab_reopened, lab);
    let check = json(&["--lab", &lab_dir, "check", reopened]);
    for c in check["countries"].as_array().unwrap() {
        assert_eq!(c["v2_revenue_minor"], c["recompute_revenue_minor"], "the lab's v2 equals its recompute after the reopening: {c}");
    }
    let before = snapshots(dir.path(), "daily_store_sales").into_iter().find(|s| s["current"] == true).unwrap()["snapshot_id"].clone();
    let done = json(&["spark", "reopen", reopened, "--reason", "late GB tills approved", "--by", "alice", "--warehouse", &wh]);
    assert_eq!(fingerprint_line(&done["fingerprint"]), lab_reopened, "Spark's reopening gives the lab's gold");
    assert_eq!(rewritten(&done["runs"][0]), vec![reopened.to_string()]);
    let props = snapshots(dir.path(), "daily_store_sales").last().unwrap()["properties"].clone();
    assert_eq!((&props["recount.trigger"], &props["recount.by"]), (&serde_json::json!("reopen"), &serde_json::json!("alice")), "{props}");
    assert_eq!(props["recount.reason"], "late GB tills approved");
    assert_eq!(props["recount.window.2026-10-20"], "3", "the wider window is kept: {props}");
    // A later run of an upload that rebuilds the date hashes it under its wider window: the
    // same inputs, so it skips, and the rows stay in (under the old window it would drop them).
    let later = spark_run(dir.path(), &["2026-10-21"], &sample(), false);
    assert_eq!(later["runs"][0]["action"], "skipped", "{}", later["runs"][0]);
    assert_eq!(fingerprint_line(&later["fingerprint"]), lab_reopened);
    // An upload three days after the date, past the default window but inside the kept one,
    // rebuilds the date instead of reporting its rows as beyond the window.
    let beyond_of = |run: &Value| -> bool { run["beyond_window"].as_array().unwrap().iter().any(|b| b["business_date"] == reopened) };
    let inside = spark_run(dir.path(), &["2026-10-23"], &sample(), false);
    assert!(inside["runs"][0]["dates"].as_array().unwrap().iter().any(|d| d["business_date"] == reopened), "{}", inside["runs"][0]);
    assert!(!beyond_of(&inside["runs"][0]), "{}", inside["runs"][0]);
    // A rollback past the reopening brings the old gold back, and the date its old window.
    let back = json(&["spark", "rollback", &before.to_string(), "--warehouse", &wh]);
    assert_eq!(fingerprint_line(&back["fingerprint"]), lab);
    let after = spark_run(dir.path(), &["2026-10-21"], &sample(), false);
    assert_eq!(fingerprint_line(&after["fingerprint"]), lab, "after the rollback a run builds the date by its old window");
    let outside = spark_run(dir.path(), &["2026-10-23"], &sample(), false);
    assert!(beyond_of(&outside["runs"][0]), "under its old window the rows are beyond it again: {}", outside["runs"][0]);
}

/// A world of the two corrected deliveries the sample ships for uploads 2026-10-19 (changed
/// amounts) and 2026-10-20 (the same rows recompressed), so one run lands both.
fn corrected_world(dir: &Path) -> PathBuf {
    let world = dir.join("corrected-world");
    let corrections = sample().join("corrections");
    for (delivery, upload) in [("01-changed-amounts", "2026-10-19"), ("04-recompressed", "2026-10-20")] {
        let from = corrections.join(delivery).join(format!("pos/events/upload_date={upload}"));
        let to = world.join(format!("pos/events/upload_date={upload}"));
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&from).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    std::fs::copy(sample().join("stores.csv"), world.join("stores.csv")).unwrap();
    world
}

#[test]
fn daily_spark_gives_the_labs_fingerprint_and_a_correction_overwrites_exactly_its_partitions_and_time_travel_and_rollback_bring_back_the_old_gold()
 {
    let dir = tempdir();
    let wh = w(dir.path());
    let lab = dir.path().join("lab").display().to_string();
    // Day by day to 2026-10-20 in both (each upload landed, then run: late uploads move earlier
    // days), then the corrected deliveries of 2026-10-19 and 2026-10-20.
    let lab_daily = lab_fingerprint(dir.path(), &[FIRST, "2026-10-20"], true);
    let first = spark_run(dir.path(), &[FIRST, "2026-10-20"], &sample(), true);
    assert_eq!(first["runs"][0]["trigger"], "daily");
    assert_eq!(first["runs"].as_array().unwrap().len(), 9);
    let old_fp = fingerprint_line(&first["fingerprint"]);
    assert_eq!(old_fp, lab_daily, "Spark day by day against the lab day by day");
    let old_snapshot = snapshots(dir.path(), "daily_store_sales").last().unwrap()["snapshot_id"].as_i64().unwrap();
    // v1 for 2026-10-14, twice, in both: the retry doubles the day's v1 (the naive job appends).
    for _ in 0..2 {
        recount(&["--lab", &lab, "naive", "2026-10-14", "2026-10-14"]);
        recount(&["naive", "2026-10-14", "2026-10-14", "--warehouse", &wh]);
    }
    // Every report reads the warehouse as it reads the lab: nine daily writes, two v1 runs.
    same_reports(Path::new(&lab), Path::new(&wh), "after nine daily runs and v1 twice");
    let v1 = recount::reports::check::check(
        &recount::warehouse::open_with(Path::new(&wh), &mirrors(Path::new(&wh))).unwrap(),
        day("2026-10-14"),
        None,
    )
    .unwrap();
    assert!(v1.countries.iter().all(|c| c.v1_runs == 2 && c.v1_events > 0), "v1 ran twice on Spark: {:?}", v1.countries);

    let fixed = corrected_world(dir.path());
    let fixed_s = fixed.display().to_string();
    recount(&["--lab", &lab, "land", "2026-10-19", "2026-10-20", "--world", &fixed_s]);
    // Run by run, as Spark below: the recompressed upload's run finds its rows unchanged.
    let out = recount(&["--lab", &lab, "run", "2026-10-19", "2026-10-20", "--per-upload", "--format", "json"]);
    let lab_run = serde_json::Deserializer::from_str(&out).into_iter::<Value>().next().unwrap().unwrap();
    let lab_rewritten = rewritten(&lab_run);
    let gold_before = snapshots(dir.path(), "daily_store_sales").len();
    // Run by run: each corrected upload's run names its file versions.
    let run = spark_run_with(dir.path(), &["2026-10-19", "2026-10-20"], &fixed, &["--per-upload"]);
    assert_eq!(run["landings"][0]["corrected"], serde_json::json!(["tills-gb.jsonl.gz v2"]));
    // The recompressed file is a new version too, with the same rows: a re-delivery, as the lab says.
    assert_eq!(
        (&run["landings"][1]["corrected"], run["landings"][1]["redelivered"].as_array().unwrap().len()),
        (&serde_json::json!([]), 1),
        "{run}"
    );
    let r = &run["runs"][0];
    let spark_rewritten = rewritten(r);
    assert!(!spark_rewritten.is_empty());
    assert_eq!(spark_rewritten, lab_rewritten, "Spark rewrites exactly the dates the lab rewrites");
    // The same rows in other bytes: a skipped run, and no snapshot for it.
    assert_eq!(run["runs"][1]["action"], "skipped", "{}", run["runs"][1]);
    assert_eq!(snapshots(dir.path(), "daily_store_sales").len(), gold_before + 1, "one gold snapshot: the correction's");
    let new_fp = fingerprint_line(&run["fingerprint"]);
    assert_ne!(new_fp, old_fp, "the correction changes gold");
    assert_eq!(new_fp, recount(&["--lab", &lab, "fingerprint"]).trim(), "and Spark's gold is the lab's");
    let newest = snapshots(dir.path(), "daily_store_sales").last().unwrap().clone();
    assert_eq!(newest["properties"]["recount.corrected"], "tills-gb.jsonl.gz v2");
    // A correction's history and diff, basket by basket, on both stores alike.
    same_reports(Path::new(&lab), Path::new(&wh), "after a correction");
    assert_eq!(newest["properties"]["recount.dates"], spark_rewritten.join(","));

    // The evidence, from Iceberg's metadata: that commit against its parent.
    let out = dir.path().join("evidence");
    let date = spark_rewritten[0].as_str();
    recount(&["spark", "evidence", date, "--warehouse", &wh, "--out", out.to_str().unwrap()]);
    let cmp: Value = serde_json::from_str(&std::fs::read_to_string(out.join(format!("snapshot_comparison_{date}.json"))).unwrap()).unwrap();
    for layer in ["gold", "silver"] {
        assert_eq!(cmp[layer]["other_partitions_untouched"], true, "{layer}: {}", cmp[layer]);
        assert_eq!(cmp[layer]["rewritten_files_changed"], true, "{layer}");
        assert!(cmp[layer]["other_partitions"].as_array().unwrap().len() >= 5, "other dates were there to compare");
    }
    let delta: i64 = cmp["stores"].as_array().unwrap().iter().map(|s| s["revenue_delta_minor"].as_i64().unwrap()).sum();
    assert_eq!(delta, 3000, "the correction's +£30.00 (sample-data/corrections/01-changed-amounts/correction.json)");
    let map: Value = serde_json::from_str(&std::fs::read_to_string(out.join("run_snapshot_map.json")).unwrap()).unwrap();
    assert_eq!(map["runs"].as_array().unwrap().last().unwrap()["snapshot_id"], newest["snapshot_id"]);
    assert!(out.join(format!("gold_{date}.json")).is_file());

    // Spark's gold of the date beside the lab's, store by store: they agree.
    let check = json(&["--lab", &lab, "spark", "check", date, "--warehouse", &wh]);
    assert_eq!(check["agree"], true, "{check}");

    // The lab holds the corrected gold, the old snapshot the old one: check says so, exit 3.
    let old_check = detail(&recount_code(
        &["--lab", &lab, "spark", "check", date, "--warehouse", &wh, "--as-of", &old_snapshot.to_string(), "--format", "json"],
        3,
    ));
    assert_eq!(old_check["agree"], false);
    let differ: Vec<&Value> = old_check["stores"].as_array().unwrap().iter().filter(|s| s["agree"] == false).collect();
    assert!(!differ.is_empty() && differ.iter().all(|s| s["country"] == "GB"), "only GB stores changed: {differ:?}");
    // pyiceberg reads gold as of that snapshot too, a date's partition at a time: the old gold.
    let py_then = json(&["spark", "fingerprint", "--warehouse", &wh, "--reader", "pyiceberg", "--as-of", &old_snapshot.to_string()]);
    assert_eq!(fingerprint_line(&py_then), old_fp, "pyiceberg as of the snapshot before the correction");
    // Rollback to the snapshot before the correction: it reads gold VERSION AS OF that snapshot
    // first (the old values), then makes it current again (the old fingerprint).
    let back = json(&["spark", "rollback", &old_snapshot.to_string(), "--warehouse", &wh]);
    assert_eq!(fingerprint_line(&back["target_fingerprint"]), old_fp, "VERSION AS OF gives the old gold");
    assert_eq!(back["target_fingerprint"]["as_of"].as_i64(), Some(old_snapshot));
    assert_eq!(fingerprint_line(&back["fingerprint"]), old_fp, "rollback restores it");
    let current: Vec<Value> = snapshots(dir.path(), "daily_store_sales").into_iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current[0]["snapshot_id"].as_i64(), Some(old_snapshot));
    // pyiceberg, reading the metadata Spark wrote, sees the same gold.
    let py = json(&["spark", "fingerprint", "--warehouse", &wh, "--reader", "pyiceberg"]);
    assert_eq!(fingerprint_line(&py), old_fp);
    // The lab rolled back to its ninth snapshot, as the warehouse to its ninth: the same reports,
    // the rollback a snapshot of its own in both histories.
    recount(&["--lab", &lab, "rollback", "9", "--yes"]);
    same_reports(Path::new(&lab), Path::new(&wh), "after a rollback");
    // And the command line reads the warehouse with --warehouse, as it reads the lab.
    let lab_history = recount(&["--lab", &lab, "history", date, "--format", "csv"]);
    let read = |c: &mut Command| {
        let out = c.env("RECOUNT_MIRRORS", mirrors(Path::new(&wh))).args(["history", date, "--format", "csv"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(read(exe().args(["--warehouse", &wh])), lab_history);
    assert!(lab_history.contains("rollback"), "{lab_history}");

    // The same tables through a catalog: pyiceberg's SQL catalog on a SQLite file (no server),
    // each table registered at the metadata Spark wrote. `--warehouse catalog:NAME` reads it
    // through load_catalog, configured here by PYICEBERG_CATALOG__BOOKS__* variables.
    let db = dir.path().join("catalog.db");
    let python = recount::spark::SparkSetup::find(&recount::spark::default_home()).unwrap().python;
    let register = r#"
import os, sys
from pyiceberg.catalog.sql import SqlCatalog
db, wh = sys.argv[1], sys.argv[2]
cat = SqlCatalog('books', uri='sqlite:///' + db, warehouse='file://' + wh)
cat.create_namespace('recount')
for t in sorted(os.listdir(os.path.join(wh, 'recount'))):
    meta = os.path.join(wh, 'recount', t, 'metadata')
    v = open(os.path.join(meta, 'version-hint.text')).read().strip()
    cat.register_table(('recount', t), os.path.join(meta, 'v' + v + '.metadata.json'))
"#;
    assert!(Command::new(python).arg("-c").arg(register).arg(&db).arg(&wh).status().unwrap().success());
    let via_catalog = read(
        exe()
            .env_remove("RECOUNT_SPARK_SERVER")
            .env("PYICEBERG_CATALOG__BOOKS__TYPE", "sql")
            .env("PYICEBERG_CATALOG__BOOKS__URI", format!("sqlite:///{}", db.display()))
            .args(["--warehouse", "catalog:books"]),
    );
    assert_eq!(via_catalog, lab_history, "the catalog's tables are the warehouse's");

    explore_the_warehouse(&wh, dir.path());
    bench_the_warehouse(&wh, dir.path());
}

/// `recount-bench --warehouse`: the bench reads a warehouse as the reports do (a mirror of its
/// own, built from nothing, with the warehouse's fingerprint) and measures the explorer on it.
fn bench_the_warehouse(wh: &str, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_recount-bench"))
        .args(["--warehouse", wh, "--runs", "1", "--format", "json", "--work-dir"])
        .arg(dir.join("bench"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = detail(&String::from_utf8_lossy(&out.stdout));
    let fingerprint = recount(&["--warehouse", wh, "fingerprint"]);
    assert_eq!(report["fingerprint"].as_str().map(str::trim), Some(fingerprint.trim()), "{report}");
    let measured: Vec<&str> = report["measures"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
    for name in ["mirror the warehouse from nothing", "explorer cold start"] {
        assert!(measured.iter().any(|m| m.starts_with(name)), "{name}: {measured:?}");
    }
}

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until the explorer's screen in tmux `session` shows `what`; returns the screen.
fn wait_for(session: &str, what: &str, secs: u64) -> String {
    let start = std::time::Instant::now();
    loop {
        let s = tmux(&["capture-pane", "-p", "-t", session]);
        if s.contains(what) {
            return s;
        }
        assert!(start.elapsed().as_secs() < secs, "waited {secs}s for '{what}'; screen:\n{s}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

struct KillSession(String);
impl Drop for KillSession {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.0]).output();
    }
}

/// The explorer on warehouse `wh` in a tmux session named after `name` (killed when the guard
/// drops), its mirrors under `mirrors`, its config under `dir`, with `more` arguments; it warms
/// through the shared Spark server when there is one.
fn explorer_in_tmux(name: &str, wh: &str, (dir, mirrors): (&Path, &Path), more: &str) -> (String, KillSession) {
    let session = format!("{name}-{}", std::process::id());
    let socket = server().map(|s| format!("RECOUNT_SPARK_SERVER={}", s.display())).unwrap_or_default();
    let cmd = format!(
        "env {socket} RECOUNT_MIRRORS={} XDG_CONFIG_HOME={} TERM=xterm-256color {} tui --warehouse {wh}{more}; echo EXITED-$?; sleep 60",
        mirrors.display(),
        dir.join("config").display(),
        env!("CARGO_BIN_EXE_recount")
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "150", "-y", "45", &cmd]);
    let guard = KillSession(session.clone());
    (session, guard)
}

/// Presses `key` in the explorer in tmux `session` and waits until its screen shows `what`;
/// returns the screen.
fn press(session: &str, key: &str, what: &str, secs: u64) -> String {
    tmux(&["send-keys", "-t", session, key]);
    wait_for(session, what, secs)
}

/// Each screen by its key, each waited for by its title, none showing `error`.
fn visit_screens(session: &str, screens: &[(&str, &str)], error: &str) {
    for (key, title) in screens {
        let s = press(session, key, title, 30);
        assert!(!s.contains(error), "{title} on a warehouse:\n{s}");
    }
}

/// The explorer on a warehouse (the daily test's, 2026-10-12..2026-10-20 with a correction
/// rolled back), in tmux: its screens read the warehouse, a write goes through the Spark job
/// (U lands the next upload), v1 (the lab's alone) says so, and another process's commit
/// reloads it.
fn explore_the_warehouse(wh: &str, dir: &Path) {
    let (session, _guard) = explorer_in_tmux("recount-spark-tui", wh, (dir, &mirrors(Path::new(wh))), "");
    let s = wait_for(&session, "per country", 120);
    assert!(s.contains("2026-10-20 per country"), "it opens on the newest landed upload's date:\n{s}");
    let screens =
        [("2", "Explain"), ("3", "Baskets"), ("4", "Late & quarantine"), ("5", "History"), ("6", "Promises"), ("1", "per country")];
    visit_screens(&session, &screens, "Error:");
    // v retries v1 for the date, through the Spark job: the warehouse's first v1 run of it.
    press(&session, "v", "spark ran v1 for 2026-10-20: appended", 120);
    // U lands 2026-10-21 with Spark and reads the warehouse again.
    press(&session, "U", "Land upload 2026-10-21", 30);
    press(&session, "y", "spark landed upload 2026-10-21 and ran v2: gold snapshot", 300);
    // Another process commits (the next day, from the command line): the explorer reloads.
    let world = sample().display().to_string();
    recount(&["spark", "run", "2026-10-22", "--world", &world, "--warehouse", wh, "--daily"]);
    wait_for(&session, "the warehouse has a new commit; reloaded", 120);
    // Quitting waits for the worker's current job; right after a reload that may be the mirror's
    // rebuild (Python and polars, which an interrupt does not stop), slow on a loaded machine.
    press(&session, "q", "EXITED-0", 120);
}

#[test]
fn a_missing_warehouse_is_one_clear_line_with_the_log_named() {
    let dir = tempdir();
    ensure_setup();
    let err = exe().args(["spark", "snapshots", "--warehouse", &w(dir.path())]).output().unwrap();
    assert_eq!(err.status.code(), Some(1));
    let text = String::from_utf8_lossy(&err.stderr);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("holds no Iceberg table") && text.contains("full log:"), "{text}");
    let log = text.rsplit("full log: ").next().unwrap().trim_end().trim_end_matches(')');
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("Traceback"), "the log keeps the whole story");
    // The call went to this binary's warm session, whose traceback came back into its log.
    assert!(log.starts_with("served by "), "{log}");
}

#[test]
fn a_corrupt_file_on_spark_holds_back_its_own_upload_as_in_the_lab() {
    let dir = tempdir();
    let world = dir.path().join("world");
    copy_dir(&sample(), &world);
    let part = world.join("pos/events/upload_date=2026-10-13");
    let mut files: Vec<_> = std::fs::read_dir(&part).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    // And in another upload, a line that is not UTF-8: quarantined alone on both engines, the
    // rest of its file landed (the contract's section 2).
    let mut latin: Vec<_> =
        std::fs::read_dir(world.join("pos/events/upload_date=2026-10-12")).unwrap().map(|e| e.unwrap().path()).collect();
    latin.sort();
    set_byte(&latin[0], 1, 1, 0xff);
    let latin_name = format!("pos/events/upload_date=2026-10-12/{}", latin[0].file_name().unwrap().to_str().unwrap());
    let world_s = world.display().to_string();
    // Spark: the other two uploads land and run; the cut one is held back, and the exit code says so.
    let wh = w(dir.path());
    let out = recount_code(
        &["spark", "run", "2026-10-12", "2026-10-14", "--world", &world_s, "--warehouse", &wh, "--daily", "--format", "json"],
        1,
    );
    let v = detail(&out);
    let held: Vec<&Value> = v["landings"].as_array().unwrap().iter().filter(|l| !l["held"].is_null()).collect();
    assert_eq!(held.len(), 1, "{v}");
    assert_eq!(held[0]["upload"], "2026-10-13");
    assert!(held[0]["held"]["reason"].as_str().unwrap().contains("truncated or corrupt"), "{v}");
    let ran: Vec<&str> = v["runs"].as_array().unwrap().iter().map(|r| r["upload"].as_str().unwrap()).collect();
    assert_eq!(ran, ["2026-10-12", "2026-10-14"], "the held upload gets no run");
    // The lab, on the same world: the same upload held, the same gold.
    let lab = dir.path().join("lab").display().to_string();
    recount_code(&["--lab", &lab, "daily", "2026-10-12", "2026-10-14", "--world", &world_s], 1);
    assert_eq!(fingerprint_line(&v["fingerprint"]), recount(&["--lab", &lab, "fingerprint"]).trim());
    let lab = recount::lake::Lab::open(&dir.path().join("lab")).unwrap();
    let mirror = recount::warehouse::open_with(Path::new(&wh), &mirrors(Path::new(&wh))).unwrap();
    for (engine, store) in [("lab", &lab), ("warehouse", &mirror)] {
        let q = recount::reports::listings::quarantine(store, Some("2026-10-12".parse().unwrap())).unwrap();
        let not_utf8: Vec<_> =
            q.rows.iter().filter(|r| r.reason.starts_with("not UTF-8")).map(|r| (r.file.as_str(), r.line, r.reason.as_str())).collect();
        assert_eq!(not_utf8, [(latin_name.as_str(), 2, "not UTF-8 at byte 1")], "{engine}");
    }
}

/// One world in three foreign shapes, each read through its recount.toml by the Spark job: the
/// contract shape's fingerprint from the lab, in one pass over every upload, and after a
/// correction delivered in the shape.
#[test]
fn spark_reads_every_shape_through_its_description_to_the_labs_fingerprint() {
    let dir = tempdir();
    let make = |shape: &str| {
        let out = dir.path().join(shape);
        recount(&["generate", "--out", out.to_str().unwrap(), "--shape", shape, "--corrections"]);
        out
    };
    let contract = make("contract");
    let lab = dir.path().join("lab").display().to_string();
    let c = contract.display().to_string();
    recount(&["--lab", &lab, "land", FIRST, LAST, "--world", &c]);
    recount(&["--lab", &lab, "run", FIRST, LAST]);
    let want = recount(&["--lab", &lab, "fingerprint"]).trim().to_string();
    let first = recount::raw::corrections::list(&contract).unwrap().remove(0);
    let d = first.upload_date.to_string();
    recount(&["--lab", &lab, "daily", &d, "--world", first.dir.to_str().unwrap()]);
    let corrected = recount(&["--lab", &lab, "fingerprint"]).trim().to_string();
    assert_ne!(want, corrected);
    for shape in ["kafka-connect", "kafka-connect-hourly", "parquet", "csv"] {
        let world = make(shape);
        let wh = dir.path().join(format!("wh-{shape}"));
        let run = spark_run(&wh, &[FIRST, LAST], &world, false);
        assert_eq!(fingerprint_line(&run["fingerprint"]), want, "{shape}");
        if shape == "kafka-connect" {
            let fix = world.join("corrections").join(first.dir.file_name().unwrap());
            let run = spark_run(&wh, &[&d], &fix, true);
            assert_eq!(fingerprint_line(&run["fingerprint"]), corrected, "{shape}, corrected");
        }
    }
}

/// The dedup order's shared corpus on Spark's SQL: the world written from
/// tests/corpus/dedup.jsonl gives the lab's gold, whose winners tests/models.rs holds to the
/// corpus (every key's gold is its winning copy's number).
#[test]
fn the_dedup_corpus_gives_the_lab_s_winners_on_spark() {
    let dir = tempdir();
    let (world, want, uploads) = dedup_world(dir.path());
    let (first, last) = (uploads[0].as_str(), uploads[uploads.len() - 2].as_str());
    let (ws, lab) = (world.display().to_string(), dir.path().join("lab").display().to_string());
    recount(&["--lab", &lab, "land", first, last, "--world", &ws]);
    recount(&["--lab", &lab, "run", first, last]);
    let run = spark_run(dir.path(), &[first, last], &world, false);
    let fingerprint = recount(&["--lab", &lab, "fingerprint"]).trim().to_string();
    assert!(fingerprint.starts_with(&format!("gold.daily_winners: {} rows", want.len())), "{fingerprint}");
    assert_eq!(run["fingerprint"], fingerprint.as_str(), "{run}");
    // A range is one pass on both engines, as retail's: one run, one write of gold naming its uploads.
    assert_eq!(run["runs"].as_array().unwrap().len(), 1, "{run}");
    let writes: Vec<Value> =
        snapshots(dir.path(), "daily_winners").into_iter().filter(|s| !s["properties"]["recount.dates"].is_null()).collect();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["properties"]["recount.uploads"], uploads[..uploads.len() - 1].join(","), "{writes:?}");
}

/// The manufacturing model on Spark (contract section 7), on a week of the bundled plant feed:
/// the lab's fingerprint, then the correction scenario. The corrected file rewrites exactly
/// 2026-06-29's partition with overwritePartitions(), the snapshot's properties name the date and
/// the file's version, and the identical re-delivery commits nothing to gold.
#[test]
fn the_manufacturing_model_on_spark_gives_the_labs_gold_and_its_correction_scenario() {
    let dir = tempdir();
    let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing");
    let (ws, lab) = (world.display().to_string(), dir.path().join("lab").display().to_string());
    let (first, last) = ("2026-06-27", "2026-07-02");
    // Day by day on both engines: the same runs, so the same snapshots.
    recount(&["--lab", &lab, "daily", first, last, "--world", &ws]);
    let run = spark_run(dir.path(), &[first, last], &world, true);
    let fingerprint = recount(&["--lab", &lab, "fingerprint"]).trim().to_string();
    assert_eq!(run["fingerprint"], fingerprint.as_str(), "{run}");
    assert!(fingerprint.starts_with("gold.daily_metrics: "), "{fingerprint}");
    assert_eq!(recount(&["spark", "fingerprint", "--warehouse", &w(dir.path())]).trim(), fingerprint);
    // The warehouse read through its mirror, a model lab: every report is the lab's.
    same_model_reports(&lab, &w(dir.path()), "after the daily runs");
    // v1, the naive append, on both engines: a retry doubles the day on each, alike.
    for _ in 0..2 {
        recount(&["--lab", &lab, "naive", "2026-06-29"]);
        let said = recount(&["--warehouse", &w(dir.path()), "naive", "2026-06-29"]);
        assert!(said.contains("appended to model manufacturing's naive table"), "{said}");
    }
    let v1 = json(&["--warehouse", &w(dir.path()), "check", "2026-06-29"]);
    assert!(!v1["v1"].as_array().unwrap().is_empty(), "{v1}");
    // A rebuild of a date on both: skipped while its input is its version's own, done with --force.
    for extra in [&[][..], &["--force"][..]] {
        let on_lab = json(&[&["--lab", &lab, "rebuild", "2026-06-29"][..], extra].concat());
        let on_spark = json(&[&["--warehouse", &w(dir.path()), "rebuild", "2026-06-29"][..], extra].concat());
        assert_eq!(on_lab["runs"][0]["rewritten"], on_spark["runs"][0]["rewritten"], "{on_lab}\n{on_spark}");
        assert_eq!(on_spark["runs"][0]["snapshot"].is_null(), extra.is_empty(), "{on_spark}");
    }
    let corrected = world.join("corrections/01-corrected-counts");
    recount(&["--lab", &lab, "land", "2026-06-30", "--world", &corrected.display().to_string()]);
    recount(&["--lab", &lab, "run", "2026-06-30"]);
    let run = spark_run(dir.path(), &["2026-06-30"], &corrected, false);
    assert_eq!(run["runs"][0]["rewritten"], serde_json::json!(["2026-06-29"]), "{run}");
    assert_eq!(run["fingerprint"], recount(&["--lab", &lab, "fingerprint"]).trim(), "{run}");
    let gold = json(&["spark", "snapshots", "--warehouse", &w(dir.path())]);
    assert_eq!(gold["table"], "recount.daily_metrics", "{gold}");
    let newest = gold["snapshots"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(newest["properties"]["recount.dates"], "2026-06-29", "{newest}");
    assert_eq!(newest["properties"]["recount.files"], "plant-a.jsonl.gz v2, plant-b.jsonl.gz v1, plant-c.jsonl.gz v1", "{newest}");
    assert_eq!(newest["operation"], "overwrite", "{newest}");
    same_model_reports(&lab, &w(dir.path()), "after the correction");
    // The warehouse's history names the record, the file and its version: 120 and 3 became 135 and 2.
    let history = recount(&["--warehouse", &w(dir.path()), "history", "2026-06-29"]);
    for want in ["gearbox-a", "120", "135", "units 8 → 23", "defects 1 → 0", "upload_date=2026-06-30/plant-a.jsonl.gz v2"] {
        assert!(history.contains(want), "{want}:\n{history}");
    }
    let run = spark_run(dir.path(), &["2026-06-30"], &world.join("corrections/02-recompressed"), false);
    assert!(run["runs"][0]["snapshot"].is_null(), "{run}");
    // The same records in other bytes: a re-delivery on both engines, never a correction.
    let again: Vec<&Value> = run["landing"]["files"].as_array().unwrap().iter().filter(|f| f["version"].as_i64() > Some(1)).collect();
    assert!(!again.is_empty() && again.iter().all(|f| f["status"] == "re-delivered (same rows)"), "{run}");
    let after = json(&["spark", "snapshots", "--warehouse", &w(dir.path())]);
    assert_eq!(after["snapshots"].as_array().unwrap().len(), gold["snapshots"].as_array().unwrap().len(), "no new snapshot");
    let mirrored = json(&["--warehouse", &w(dir.path()), "snapshots"]);
    let skipped = mirrored["skipped_runs"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "the unforced rebuild and the re-delivery are skipped runs: {mirrored}");
    assert_eq!(skipped[1]["uploads"], "2026-06-30", "{mirrored}");
    // A rollback to the snapshot before the correction gives the gold before it (120 and 3 on
    // 2026-06-29), read by time travel first; the mirror replays it as the lab's rollback. The
    // next run of the corrected upload sees the lineage's hashes and writes the correction again.
    let snaps = after["snapshots"].as_array().unwrap();
    let before = snaps[snaps.len() - 2]["snapshot_id"].as_i64().unwrap();
    let said = recount(&["spark", "rollback", &before.to_string(), "--warehouse", &w(dir.path())]);
    assert!(said.contains(&format!("gold of model manufacturing is at snapshot {before} again")) && said.contains(&fingerprint), "{said}");
    assert_eq!(recount(&["spark", "fingerprint", "--warehouse", &w(dir.path())]).trim(), fingerprint);
    assert_eq!(recount(&["--warehouse", &w(dir.path()), "fingerprint"]).trim(), fingerprint, "the mirror after the rollback");
    // The engines compared date by date: rolled back, the warehouse's 2026-06-29 is the one
    // before the correction and the lab's the corrected one (exit 3: the engines disagree).
    let check = ["--lab", &lab, "spark", "check", "2026-06-29", "--warehouse", &w(dir.path())];
    let differ = recount_code(&check, recount::cli::ENGINES_DISAGREE);
    assert!(differ.contains("1 of 9 row(s) of the date differ"), "{differ}");
    let again = spark_run(dir.path(), &["2026-06-30"], &corrected, false);
    assert_eq!(again["runs"][0]["rewritten"], serde_json::json!(["2026-06-29"]), "{again}");
    assert_eq!(again["fingerprint"], recount(&["--lab", &lab, "fingerprint"]).trim(), "{again}");
    let agree = recount(&check);
    assert!(agree.contains("Spark and the lab agree on all 9 row(s) of the date"), "{agree}");
    // A dimension correction (plant-c moves to Tokyo's zone): both engines read plant-c's files
    // again as their next version and rebuild the dates they move; gold is the lab's.
    let moved = dir.path().join("moved");
    copy_dir(&world, &moved);
    let plants = std::fs::read_to_string(moved.join("plants.csv")).unwrap();
    std::fs::write(moved.join("plants.csv"), plants.replace("Asia/Kolkata", "Asia/Tokyo")).unwrap();
    recount(&["--lab", &lab, "land", last, "--world", &moved.display().to_string()]);
    recount(&["--lab", &lab, "run", first, last]);
    let run = spark_run(dir.path(), &[last], &moved, false);
    assert_eq!(run["landing"]["dimension_changed"], serde_json::json!(["plant-c"]), "{run}");
    let reread: Vec<&Value> = run["landing"]["files"].as_array().unwrap().iter().filter(|f| f["status"] == "re-read").collect();
    assert!(!reread.is_empty() && reread.iter().all(|f| f["file"] == "plant-c.jsonl.gz" && f["version"] == 2), "{run}");
    // One pass, as the lab's run: the re-read files' uploads run too, in the same write.
    assert_eq!(run["runs"].as_array().unwrap().len(), 1, "{run}");
    assert!(run["runs"][0]["uploads"].as_array().unwrap().len() > 1, "the re-read files' uploads run too: {run}");
    assert_eq!(run["fingerprint"], recount(&["--lab", &lab, "fingerprint"]).trim(), "{run}");
    assert_ne!(run["fingerprint"], again["fingerprint"], "the zone moved some records' dates: {run}");
    assert_eq!(recount(&["--warehouse", &w(dir.path()), "fingerprint"]).trim(), run["fingerprint"], "the mirror after the zone moved");
    // Spark writes a model's warehouse: a lab's write with --warehouse says so.
    let out = exe().args(["--warehouse", &w(dir.path()), "run", "2026-06-29"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("which Spark writes"), "{err}");
    reopen_on_both(&lab, dir.path(), &moved);
    bad_bytes_on_both(&lab, dir.path(), &moved);
    explore_the_model_warehouse(&w(dir.path()), dir.path(), &moved);
}

/// The contract's section 2 on a model, on both engines: a line that is not UTF-8 (upload
/// 2026-07-07) is quarantined alone and the rest of its file lands; a cut file (upload
/// 2026-07-08) holds back its own upload only, which gets no run. The same gold on both.
fn bad_bytes_on_both(lab: &str, dir: &Path, world: &Path) {
    let bad = dir.join("bad-bytes");
    copy_dir(world, &bad);
    let first = |upload: &str| {
        let mut files: Vec<_> =
            std::fs::read_dir(bad.join(format!("mes/records/upload_date={upload}"))).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files.remove(0)
    };
    let latin = first("2026-07-07");
    set_byte(&latin, 0, 1, 0xff);
    let cut = first("2026-07-08");
    let whole = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    // And plant-b gone from plants.csv: it keeps its last row on both, and its records stay in gold.
    let plants = std::fs::read_to_string(bad.join("plants.csv")).unwrap();
    let kept: Vec<&str> = plants.lines().filter(|l| !l.starts_with("plant-b,")).collect();
    assert_eq!(kept.len() + 1, plants.lines().count());
    std::fs::write(bad.join("plants.csv"), kept.join("\n") + "\n").unwrap();
    let bs = bad.display().to_string();
    let on_lab = detail(&recount_code(&["--lab", lab, "daily", "2026-07-07", "2026-07-08", "--world", &bs, "--format", "json"], 1));
    let on_spark = detail(&recount_code(
        &["spark", "run", "2026-07-07", "2026-07-08", "--world", &bs, "--warehouse", &w(dir), "--daily", "--format", "json"],
        1,
    ));
    let name = latin.file_name().unwrap().to_str().unwrap();
    for (engine, v) in [("lab", &on_lab), ("spark", &on_spark)] {
        let held = v["landing"]["held"].as_array().unwrap();
        assert_eq!(held.len(), 1, "{engine}: {v}");
        assert_eq!(v["landing"]["dimension_removed"], serde_json::json!(["plant-b"]), "{engine}: {v}");
        assert!(v["landing"]["files"].as_array().unwrap().iter().all(|f| f["status"] != "re-read"), "{engine}: nothing is re-read: {v}");
        assert_eq!(held[0]["upload_date"], "2026-07-08", "{engine}: {v}");
        let ran: Vec<&Value> = v["runs"].as_array().unwrap().iter().flat_map(|r| r["uploads"].as_array().unwrap()).collect();
        assert_eq!(ran, [&Value::from("2026-07-07")], "{engine}: the held upload gets no run: {v}");
        let file =
            v["landing"]["files"].as_array().unwrap().iter().find(|f| f["file"] == name && f["upload_date"] == "2026-07-07").unwrap();
        assert!(file["records"].as_i64().unwrap() > 0 && file["quarantined"].as_i64().unwrap() >= 1, "{engine}: {file}");
    }
    let file_of = |v: &Value| v["landing"]["files"].as_array().unwrap().iter().find(|f| f["file"] == name).unwrap().clone();
    assert_eq!(file_of(&on_lab), file_of(&on_spark), "the same records and quarantined lines");
    assert_eq!(on_spark["fingerprint"], recount(&["--lab", lab, "fingerprint"]).trim());
}

/// The uploads that bring 2026-07-01..03's late records (a line offline for days), then finance
/// reopens 2026-07-01 on both engines: the same window kept, the same gold, and the mirror
/// replays the reopening as the lab's own; the next day's run keeps the wider window on both.
fn reopen_on_both(lab: &str, dir: &Path, world: &Path) {
    let ws = world.display().to_string();
    recount(&["--lab", lab, "daily", "2026-07-03", "2026-07-06", "--world", &ws]);
    spark_run(dir, &["2026-07-03", "2026-07-06"], world, true);
    assert_eq!(recount(&["--lab", lab, "fingerprint"]), recount(&["spark", "fingerprint", "--warehouse", &w(dir)]));
    let decision = ["--reason", "line 3 was offline", "--by", "ops"];
    let on_lab = json(&[&["--lab", lab, "reopen", "2026-07-01"][..], &decision].concat());
    let on_spark = json(&[&["spark", "reopen", "2026-07-01", "--warehouse", &w(dir)][..], &decision].concat());
    assert_eq!(on_lab["runs"][0]["rewritten"], serde_json::json!(["2026-07-01"]), "{on_lab}");
    let runs = |v: &Value| {
        let mut runs = v["runs"].clone();
        runs.as_array_mut().unwrap().iter_mut().for_each(|r| drop(r.as_object_mut().unwrap().remove("snapshot")));
        runs
    };
    assert_eq!(runs(&on_spark), runs(&on_lab), "the same run, but for its snapshot's id");
    let newest = snapshots(dir, "daily_metrics").last().unwrap().clone();
    assert_eq!(newest["properties"]["recount.window.2026-07-01"], "5", "{newest}");
    assert_eq!(newest["properties"]["recount.by"], "ops", "{newest}");
    // Each engine numbers its own snapshots: the rest of the check is the same.
    let check = |at: &[&str]| {
        let mut v = json(&[at, &["check", "2026-07-01"][..]].concat());
        v.as_object_mut().unwrap().remove("as_of_snapshot");
        v
    };
    assert_eq!(check(&["--lab", lab]), check(&["--warehouse", &w(dir)]), "the reopened date, in the lab and the mirror");
    // A late record of the reopened date corrected afterwards (its file sent again, 6 units
    // now 60): the date keeps its wider window, so both engines rebuild it from the new version.
    let reopened = recount(&["--lab", lab, "fingerprint"]);
    let name = "mes/records/upload_date=2026-07-06/plant-c-backfill.jsonl.gz";
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(std::fs::File::open(world.join(name)).unwrap()), &mut text)
        .unwrap();
    let fixed: String = text
        .lines()
        .map(|l| if l.contains(r#""record_id":"PC-L2-2026070105""#) { l.replace(r#""units":6,"#, r#""units":60,"#) } else { l.to_string() } + "\n")
        .collect();
    assert_ne!(fixed, text, "the late record's line is there to correct");
    let fix = dir.join("late-fix");
    std::fs::create_dir_all(fix.join(name).parent().unwrap()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, fixed.as_bytes()).unwrap();
    std::fs::write(fix.join(name), gz.finish().unwrap()).unwrap();
    recount(&["--lab", lab, "land", "2026-07-06", "--world", &fix.display().to_string()]);
    recount(&["--lab", lab, "run", "2026-07-06"]);
    let run = spark_run(dir, &["2026-07-06"], &fix, false);
    assert!(run["runs"][0]["rewritten"].as_array().unwrap().contains(&serde_json::json!("2026-07-01")), "{run}");
    let fingerprint = recount(&["--lab", lab, "fingerprint"]);
    assert_ne!(fingerprint, reopened, "the correction moved gold");
    assert_eq!(recount(&["spark", "fingerprint", "--warehouse", &w(dir)]), fingerprint, "the reopened date keeps its window");
    assert_eq!(recount(&["--warehouse", &w(dir), "fingerprint"]), fingerprint, "the mirror after the reopening");
}

/// A model's reports from the lab and from the warehouse's mirror (`--warehouse`), as JSON with
/// what the engines cannot share taken out (times, input hashes, quarantined lines' text):
/// the same runs give the same reports, entity by entity.
fn same_model_reports(lab: &str, wh: &str, when: &str) {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for key in ["created_at", "input_hash", "raw_line", "computed_at"] {
                    m.remove(key);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let read = |at: &[&str], args: &[&str]| {
        let mut all = at.to_vec();
        all.extend(args);
        let mut v = json(&all);
        strip(&mut v);
        v
    };
    let (on_lab, on_wh) = (["--lab", lab], ["--warehouse", wh]);
    let mut reports: Vec<Vec<&str>> = vec![vec!["summary"], vec!["snapshots"], vec!["lateness"], vec!["trend"]];
    for d in ["2026-06-28", "2026-06-29", "2026-07-01"] {
        for what in ["check", "history", "late", "baskets", "promises", "explain"] {
            reports.push(vec![what, d]);
        }
    }
    for args in &reports {
        let (a, b) = (read(&on_lab, args), read(&on_wh, args));
        assert_eq!(a, b, "{args:?} {when}: the lab's and the warehouse's differ");
    }
    assert_eq!(recount(&["--lab", lab, "fingerprint"]), recount(&["--warehouse", wh, "fingerprint"]), "{when}");
}

/// The explorer on a model's warehouse, in tmux: every screen reads its mirror, and its writes
/// (v1 again, the next upload) go to the Spark job.
fn explore_the_model_warehouse(wh: &str, dir: &Path, world: &Path) {
    let more = format!(" --world {}", world.display());
    let (session, _guard) = explorer_in_tmux("recount-spark-model-tui", wh, (dir, test_mirrors()), &more);
    wait_for(&session, "gold.daily_metrics, v1 and v2 beside the recount", 120);
    let screens = [
        ("2", "recompute - missed + double counted = v1"),
        ("3", "re-sent record(s)"),
        ("4", "row(s) beyond the 2-day window"),
        ("5", "every version of gold.daily_metrics"),
        ("6", "promises for"),
        ("7", "records per business date"),
        ("8", "No foreign gold to audit: `recount tui --audit SOURCE`"),
        ("1", "v1 and v2 beside the recount"),
    ];
    visit_screens(&session, &screens, "error (Esc closes)");
    // The explorer's writes go to the Spark job, and the warehouse is read again after each.
    // U lands the world's first upload the warehouse lacks (the world starts on 2026-06-18).
    press(&session, "U", "Land upload 2026-06-18", 30);
    press(&session, "y", "spark landed upload 2026-06-18 and ran v2: gold snapshot", 180);
    press(&session, "v", "spark ran v1 for", 120);
    press(&session, "q", "EXITED-0", 60);
}
