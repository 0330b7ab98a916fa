//! The memory budget: one setting for the process (`--memory`, `RECOUNT_MEMORY`, `memory` in the
//! config file, else a quarter of the machine), DuckDB's limits fitted to the lab's largest date
//! within it, spilling to the lab's `recount.spill/`, and a budget too small for the work said in
//! one line that leaves the lab as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn sample() -> String {
    std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data").to_str().unwrap().to_string()
}

fn run(lab: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_recount"));
    cmd.env_remove("RECOUNT_MEMORY").env_remove("RECOUNT_MEMORY_LIMIT").env("RECOUNT_CONFIG", lab.with_file_name("none.toml"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("--lab").arg(lab).args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_budget_too_small_for_the_work_is_one_line_that_leaves_the_lab_as_it_was_and_blocks_nothing() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    assert_eq!(run(&lab, &["land", "2026-10-12", "2026-10-30", "--world", &sample()], &[]).0, Some(0));
    let before = (run(&lab, &["fingerprint"], &[]).1, run(&lab, &["snapshots", "--format", "csv"], &[]).1);
    let (code, _, err) = run(&lab, &["--memory", "16MB", "run", "2026-10-12", "2026-10-30"], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("out of memory in queries/") && err.contains("--memory") && err.contains("16 MiB"), "{err}");
    assert!(!err.contains("SET ") && !err.contains("memory_limit") && !err.contains('\u{1b}'), "no DuckDB advice: {err}");
    let after = (run(&lab, &["fingerprint"], &[]).1, run(&lab, &["snapshots", "--format", "csv"], &[]).1);
    assert_eq!(after, before, "the lab is as it was");
    // The next command, with the default budget, is not blocked by the failed one.
    let (code, out, err) = run(&lab, &["run", "2026-10-12", "2026-10-30"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("gold.daily_store_sales: ") && !out.contains(" 0 rows"), "{out}");
}

#[test]
fn the_budget_comes_from_the_flag_the_environment_the_file_or_the_machine_and_config_says_which() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let setting = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["config", "--format", "json"];
        all.extend(args);
        let (code, out, err) = run(&lab, &all, env);
        assert_eq!(code, Some(0), "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["detail"]["settings"].as_array().unwrap().iter().find(|s| s["setting"] == "memory").unwrap().clone()
    };
    let default = setting(&[], &[]);
    assert_eq!(default["source"]["kind"], "default", "{default}");
    let file = dir.path().join("none.toml");
    std::fs::write(&file, "memory = \"3GB\"\n").unwrap();
    let from_file = setting(&[], &[]);
    assert_eq!((from_file["value"].as_str(), from_file["source"]["kind"].as_str()), (Some("3072 MiB"), Some("file")));
    let from_env = setting(&[], &[("RECOUNT_MEMORY", "1GB")]);
    assert_eq!((from_env["value"].as_str(), from_env["source"]["kind"].as_str()), (Some("1024 MiB"), Some("env")));
    let from_flag = setting(&["--memory", "768MB"], &[("RECOUNT_MEMORY", "1GB")]);
    assert_eq!((from_flag["value"].as_str(), from_flag["source"]["kind"].as_str()), (Some("768 MiB"), Some("flag")));
    let (code, _, err) = run(&lab, &["--memory", "lots", "config"], &[]);
    assert_eq!(code, Some(2), "a usage error: {err}");
    assert!(err.contains("not a size"), "{err}");
}

#[test]
fn duckdb_s_limits_follow_the_lab_s_largest_date_within_the_budget_and_a_crash_s_spill_is_cleared() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    assert_eq!(run(&lab, &["land", "2026-10-12", "2026-10-14", "--world", &sample()], &[]).0, Some(0));
    let duckdb = |args: &[&str]| {
        let mut all = vec!["config"];
        all.extend(args);
        run(&lab, &all, &[]).1.lines().find(|l| l.starts_with("duckdb")).unwrap().to_string()
    };
    // A small lab's dates fit one step: 80 MB for reports, 32 MB for bulk work.
    assert!(duckdb(&[]).contains("76 MiB for reports, 30 MiB for bulk work"), "{}", duckdb(&[]));
    // Within a budget of 40 MiB, DuckDB's share is three quarters of it.
    assert!(duckdb(&["--memory", "40MB"]).contains("30 MiB for reports, 30 MiB for bulk work"), "{}", duckdb(&["--memory", "40MB"]));
    // What a killed command spilled is gone once the next writer has the database.
    let spill = lab.join("recount.spill");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::write(spill.join("duckdb_temp_block-1.block"), vec![0u8; 4096]).unwrap();
    assert_eq!(run(&lab, &["run", "2026-10-12"], &[]).0, Some(0));
    assert!(!spill.exists(), "the spill of a killed command is removed");
}

#[test]
fn the_recount_in_any_number_of_passes_is_the_recount_in_one() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let world = small_world();
    land_all(&mut lab, world);
    // A re-sent basket's copies fall in one pass whatever their dates, so the sums add up.
    let one = recount::recompute::recount_in_passes(&lab.raw_root(), Some(1)).unwrap();
    assert!(
        one.rows.len() > 100 && one.events > one.baskets,
        "a world with re-sent copies: {} events, {} baskets",
        one.events,
        one.baskets
    );
    for passes in [2, 3, 7] {
        let many = recount::recompute::recount_in_passes(&lab.raw_root(), Some(passes)).unwrap();
        assert_eq!(many.rows, one.rows, "{passes} passes");
        assert_eq!((many.events, many.baskets, many.rejected_lines), (one.events, one.baskets, one.rejected_lines), "{passes} passes");
    }
    // The buckets were spilled to the lab's spill folder, and nothing of them is left.
    let spill = dir.path().join("lab").join(recount::store::SPILL_DIR);
    let left: Vec<_> = std::fs::read_dir(&spill).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(spill.exists() && left.is_empty(), "{left:?} in {}", spill.display());
}

#[test]
fn a_heavy_quarantine_is_listed_whole_when_it_outgrows_duckdb_s_first_limit() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    // 63 files of 1,001 lines of an unknown store, each line 1.5 KB: the 63,000 lines kept one
    // by one (95 MB of text) do not fit the 80 MB a lab of small dates gives its reports.
    let pad = "x".repeat(1500);
    for k in 0..63 {
        let lines: Vec<String> = (0..1001)
            .map(|i| {
                let line = event(
                    &format!("e{k}-{i}"),
                    &format!("B{k}-{i}"),
                    "NOPE",
                    "2026-10-15T10:00:00Z",
                    "2026-10-15T12:00:00Z",
                    "GBP",
                    &[100],
                );
                format!("{},\"pad\":\"{pad}\"}}", &line[..line.len() - 1])
            })
            .collect();
        w.file("2026-10-15", &format!("f{k:02}.jsonl.gz"), &lines);
    }
    let lab = dir.path().join("lab");
    let (code, _, err) = run(&lab, &["land", "2026-10-15", "--world", w.root.to_str().unwrap()], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, csv, err) = run(&lab, &["quarantine", "--format", "csv"], &[]);
    assert_eq!(code, Some(0), "{err}");
    // 1,000 lines kept one by one per file, and a line counting the rest, under one header.
    assert_eq!(csv.lines().count(), 1 + 63 * 1001, "{}", &err);
    assert!(csv.lines().nth(1).unwrap().contains("unknown store_id 'NOPE'"), "{}", csv.lines().nth(1).unwrap());
}

#[test]
fn a_store_correction_on_a_world_of_480_stores_finishes_within_the_budget_with_a_build_from_scratch_s_gold() {
    let dir = tempdir();
    let world = dir.path().join("world");
    let w = world.to_str().unwrap();
    let (code, _, err) = run(dir.path(), &["generate", "--preset", "full", "--store-factor", "0.8", "--days", "60", "--out", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    let ups = uploads(&world);
    let (first, last) = (ups[0].to_string(), ups[ups.len() - 1].to_string());
    let lab = dir.path().join("lab");
    assert_eq!(run(&lab, &["land", &first, &last, "--world", w], &[]).0, Some(0));
    assert_eq!(run(&lab, &["run", &last, &first], &[]).0, Some(0));
    // Forty stores move to New York: every date holding their sales is re-derived and rebuilt.
    let stores = std::fs::read_to_string(world.join("stores.csv")).unwrap();
    let mut moved = 0;
    let corrected: Vec<String> = stores
        .lines()
        .map(|l| {
            if moved < 40 && l.contains(",Europe/London,") {
                moved += 1;
                l.replace(",Europe/London,", ",America/New_York,")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(world.join("stores.csv"), corrected.join("\n") + "\n").unwrap();
    // Its landing re-derives every file of their country, and may outgrow DuckDB's first limit
    // on some machines (then runs again within the budget, as tests below make sure it does).
    let (code, _, err) = run(&lab, &["land", &last, "--world", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(&lab, &["run", &last], &[]);
    assert_eq!(code, Some(0), "{err}");
    // Gold equals gold built from scratch on the corrected stores.
    let fresh = dir.path().join("fresh");
    assert_eq!(run(&fresh, &["land", &first, &last, "--world", w], &[]).0, Some(0));
    assert_eq!(run(&fresh, &["run", &last, &first], &[]).0, Some(0));
    assert_eq!(run(&lab, &["fingerprint"], &[]).1, run(&fresh, &["fingerprint"], &[]).1);
}

/// A field path of ten thousand names in a description: every line is quarantined, and each
/// reason, which names the path, is cut to its bound, so the quarantine of thousands of lines
/// lands within a 512 MiB budget without outgrowing DuckDB's first limit (it did, with 20 KB
/// reasons, before reasons were bounded).
#[test]
fn a_field_path_of_ten_thousand_names_quarantines_every_line_within_the_budget() {
    let dir = tempdir();
    let world = dir.path().join("world");
    copy_dir(&std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-kafka"), &world);
    // Every quarantine reason names the field's path: 20 KB on each of thousands of lines.
    let path = vec!["n"; 10_000].join(".");
    let description = std::fs::read_to_string(world.join("recount.toml")).unwrap();
    std::fs::write(world.join("recount.toml"), description.replace("basket_id = \"transaction.id\"", &format!("basket_id = \"{path}\"")))
        .unwrap();
    let lab = dir.path().join("lab");
    let (code, out, err) = run(&lab, &["--memory", "512MB", "land", "2026-10-12", "2026-10-14", "--world", world.to_str().unwrap()], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("running it again with"), "bounded reasons fit DuckDB's first limit: {err}");
    assert!(out.contains("quarantined") && !out.contains(" 0 quarantined"), "{out}");
    let (code, csv, err) = run(&lab, &["quarantine", "--format", "csv"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(csv.lines().count() > 1000 && csv.contains("missing required field basket_id"), "{}", &csv[..csv.len().min(400)]);
    let longest = csv.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest < 700, "a reason is cut to 500 characters: a line of {longest}");
}

/// A long `daily` process outgrows DuckDB's first limit in a landing, whose reads run inside its
/// transaction: the landing is run again whole with a larger limit (a read there is not retried
/// in the transaction it failed), and gold is gold built from scratch.
#[test]
fn a_long_daily_outgrows_the_first_limit_in_a_landing_and_finishes() {
    let dir = tempdir();
    let world = dir.path().join("world");
    let w = world.to_str().unwrap();
    let (code, _, err) = run(dir.path(), &["generate", "--preset", "full", "--days", "64", "--out", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    let ups = uploads(&world);
    let (first, last) = (ups[0].to_string(), ups[ups.len() - 1].to_string());
    let lab = dir.path().join("lab");
    let (code, _, err) = run(&lab, &["daily", &first, &last, "--world", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("running it again with"), "the first limit was outgrown: {err}");
    let fresh = dir.path().join("fresh");
    assert_eq!(run(&fresh, &["land", &first, &last, "--world", w], &[]).0, Some(0));
    assert_eq!(run(&fresh, &["run", &first, &last], &[]).0, Some(0));
    assert_eq!(run(&lab, &["fingerprint"], &[]).1, run(&fresh, &["fingerprint"], &[]).1);
}

/// A plant world of 191,000 lines lands within a 32 MiB budget, as one landed with the default
/// budget: the landing's check of every measure's total groups all the records of its dates,
/// and builds no text per record (a file's name a record ran out of DuckDB's limit here).
#[test]
fn a_model_landing_checks_its_measures_totals_within_a_small_budget() {
    let dir = tempdir();
    let world = dir.path().join("world");
    let w = world.to_str().unwrap();
    let (code, _, err) = run(dir.path(), &["generate", "--model", "manufacturing", "--store-factor", "50", "--out", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (small, wide) = (dir.path().join("small"), dir.path().join("wide"));
    let (code, _, err) = run(&small, &["--memory", "32MB", "land", "2026-06-18", "2026-07-15", "--world", w], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(run(&wide, &["land", "2026-06-18", "2026-07-15", "--world", w], &[]).0, Some(0));
    for lab in [&small, &wide] {
        assert_eq!(run(lab, &["--memory", "64MB", "run", "2026-06-18", "2026-07-15"], &[]).0, Some(0));
    }
    let fingerprint = run(&small, &["fingerprint"], &[]).1;
    assert!(fingerprint.contains("rows, md5"), "{fingerprint}");
    assert_eq!(fingerprint, run(&wide, &["fingerprint"], &[]).1);
}

/// `recount ARGS` on `lab`, its peak resident memory read from /proc while it runs (the high
/// water mark the kernel keeps, so a peak between two reads is still seen on the next one).
fn run_measured(lab: &Path, args: &[&str]) -> (Option<i32>, String, String, u64) {
    let out = lab.with_file_name("measured.out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_recount"))
        .env_remove("RECOUNT_MEMORY")
        .env_remove("RECOUNT_MEMORY_LIMIT")
        .env("RECOUNT_CONFIG", lab.with_file_name("none.toml"))
        .arg("--lab")
        .arg(lab)
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let code = loop {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("VmHWM:").and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok()))
        });
        peak_kib = peak_kib.max(hwm.unwrap_or(0));
        if let Some(done) = child.try_wait().unwrap() {
            break done.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let said = |p: &Path| std::fs::read_to_string(p).unwrap();
    (code, said(&out), said(&out.with_extension("err")), peak_kib * 1024)
}

/// One file's 100,000 lines, most of them refused, as `good(i)` and `unknown(i)` write them: a
/// good line every thousandth, then in turn one that is not UTF-8, one that is not JSON and one
/// that names no known store or plant.
fn refusals(good: impl Fn(usize) -> String, unknown: impl Fn(usize) -> String) -> Vec<Vec<u8>> {
    (0..100_000)
        .map(|i| match (i % 1000, i % 3) {
            (0, _) => good(i).into_bytes(),
            (_, 0) => [&b"{\"id\":\"caf"[..], &[0xe9], b"\"}"].concat(),
            (_, 1) => format!("{{\"cut\": {i}").into_bytes(),
            _ => unknown(i).into_bytes(),
        })
        .collect()
}

/// A file of 100,000 lines, all but a hundred refused, lands within a 512 MiB budget on a retail
/// lab and on a model lab: its good lines land, every refused line is counted, the first
/// thousand are kept one by one with a row that counts the rest, and the process's peak memory
/// stays inside the budget (the reasons are kept to a bound, not one per line).
#[test]
fn a_file_of_a_hundred_thousand_refused_lines_lands_within_a_512_mib_budget_in_every_model() {
    let dir = tempdir();
    let shop = HandWorld::new(dir.path().join("shop"), STORES);
    let good = |i: usize| event(&format!("e{i}"), &format!("B{i}"), "LON1", "2026-10-15T10:00:00Z", "2026-10-15T12:00:00Z", "GBP", &[100]);
    let unknown =
        |i: usize| event(&format!("e{i}"), &format!("B{i}"), "NOPE", "2026-10-15T10:00:00Z", "2026-10-15T12:00:00Z", "GBP", &[100]);
    let lines = refusals(good, unknown);
    shop.file_of_bytes("2026-10-15", "refusals.jsonl.gz", &lines.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let plant = dir.path().join("plant");
    copy_dir(&std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing"), &plant);
    let record = |i: usize, plant: &str| {
        format!(
            r#"{{"event_id":"z{i}","record_id":"Z-{i}","plant_id":"{plant}","line_id":"line-1","product_id":"gearbox-b","produced_at":"2026-06-23T00:50:00+02:00","uploaded_at":"2026-06-24T01:30:00.000Z","units":9,"defects":0}}"#
        )
    };
    let lines = refusals(|i| record(i, "plant-a"), |i| record(i, "nope"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for l in &lines {
        std::io::Write::write_all(&mut gz, l).unwrap();
        std::io::Write::write_all(&mut gz, b"\n").unwrap();
    }
    std::fs::write(plant.join("mes/records/upload_date=2026-06-24/refusals.jsonl.gz"), gz.finish().unwrap()).unwrap();
    for (world, upload) in [(&shop.root, "2026-10-15"), (&plant, "2026-06-24")] {
        let lab = dir.path().join(format!("{upload}-lab"));
        let (code, out, err, peak) =
            run_measured(&lab, &["--memory", "512MB", "--format", "json", "land", upload, "--world", world.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        assert!(peak > 0 && peak < 512 << 20, "{world:?}: a peak of {} MiB", peak >> 20);
        let landed: serde_json::Value = serde_json::from_str(&out).unwrap();
        // A retail landing counts per upload, a model's per file, and only a model's is wrapped
        // as every other report is (one landing report is issue 68's).
        let d = if landed["detail"].is_null() { &landed } else { &landed["detail"] };
        let (good, refused) = match d["partitions"].as_array() {
            Some(p) => (p[0]["events"].as_i64(), p[0]["quarantined"].as_i64()),
            None => {
                let f = d["files"].as_array().unwrap().iter().find(|f| f["file"] == "refusals.jsonl.gz").unwrap();
                (f["records"].as_i64(), f["quarantined"].as_i64())
            }
        };
        assert_eq!((good, refused), (Some(100), Some(99_900)), "{world:?}: {d}");
        let (code, listed, err) = run(&lab, &["--format", "json", "quarantine", upload], &[]);
        assert_eq!(code, Some(0), "{err}");
        let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
        let rows: Vec<&str> = listed["detail"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["file"].as_str().unwrap().ends_with("refusals.jsonl.gz"))
            .map(|r| r["reason"].as_str().unwrap())
            .collect();
        assert_eq!(rows.len(), 1_001, "{world:?}: a thousand lines and one that counts the rest");
        assert!(rows.iter().any(|r| r.starts_with("not UTF-8 at byte 10")), "{world:?}: {:?}", &rows[..3]);
        assert!(rows[1_000].starts_with("and 98,900 more quarantined lines from line"), "{}", rows[1_000]);
    }
}
