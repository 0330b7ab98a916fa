//! The command line as a user types it: formats, the demo script, and the contract's line.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use std::process::Command;

/// A lab in `dir` built by `daily` over the small world's uploads 0..=`last`: the lab, the
/// world's path and its uploads.
fn daily_lab(dir: &std::path::Path, last: usize) -> (std::path::PathBuf, String, Vec<chrono::NaiveDate>) {
    let lab = dir.join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (ok, _, err) = recount(&lab, &["daily", &ups[0].to_string(), &ups[last].to_string(), "--world", &world]);
    assert!(ok, "{err}");
    (lab, world, ups)
}

fn recount(lab: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = recount_code(lab, args);
    (code == Some(0), out, err)
}

#[test]
fn reports_print_as_table_json_and_csv_with_money_in_minor_units_for_machines() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (d, last) = (ups[3].to_string(), ups[6].to_string());
    let (ok, _, err) = recount(&lab, &["land", &ups[0].to_string(), &last, "--world", &world]);
    assert!(ok, "{err}");
    assert_eq!(err, "", "no progress line off a terminal");
    assert!(recount(&lab, &["run", &ups[0].to_string(), &last]).0);
    let (ok, table, quiet) = recount(&lab, &["check", &d]);
    assert!(ok && table.contains('£') && table.contains('₹') && table.contains("S$"), "{table}");
    assert_eq!(quiet, "", "no statement times unless asked");
    // RECOUNT_PROFILE=sql times every statement on stderr, and leaves the report as it was.
    let traced = binary(&lab, &["check", &d]).env("RECOUNT_PROFILE", "sql").output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&traced.stdout), String::from_utf8_lossy(&traced.stderr));
    assert_eq!(out, table, "the same report with statement times asked for");
    let timed = |name: &str| {
        err.lines().any(|l| l.ends_with(name) && l.trim_start().split(" ms ").next().is_some_and(|ms| ms.parse::<f64>().is_ok()))
    };
    assert!(timed("queries/recompute.sql duckdb_recount_kept") && timed("queries/reports.sql gold_by_store"), "{err}");
    let (_, json, _) = recount(&lab, &["check", &d, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!((v["kind"].as_str(), v["business_date"].as_str()), (Some("check"), Some(d.as_str())), "the envelope: {json}");
    let gb = v["detail"]["countries"].as_array().unwrap().iter().find(|c| c["country"] == "GB").unwrap();
    let gb_row = v["rows"].as_array().unwrap().iter().find(|r| r["country"] == "GB").unwrap();
    assert_eq!(gb_row["v2_revenue_minor"], gb["v2_revenue_minor"], "the rows are the table's, typed: {gb_row}");
    assert_eq!(gb_row["v2_revenue_currency"], "GBP", "{gb_row}");
    assert!(gb["v2_revenue_minor"].is_i64(), "JSON keeps integer minor units: {gb}");
    let (_, csv, _) = recount(&lab, &["check", &d, "--format", "csv"]);
    let header = csv.lines().next().unwrap();
    assert!(header.contains("v2_revenue_minor"), "{header}");
    let gb_line = csv.lines().find(|l| l.starts_with("GB,")).unwrap();
    assert!(gb_line.contains(&format!(",{},", gb["v2_revenue_minor"])), "CSV has the same integer: {gb_line}");
    let cols: Vec<&str> = header.split(',').collect();
    let at = cols.iter().position(|c| *c == "v2_revenue_minor").unwrap();
    assert_eq!(cols[at + 1], "v2_revenue_currency", "a currency column beside the minor units: {header}");
    assert_eq!(gb_line.split(',').nth(at + 1), Some("GBP"), "{gb_line}");
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
    // The v1 runs column, read under its header (numbers are right-aligned to the label's end).
    let lines: Vec<&str> = out.lines().collect();
    let mut runs: Vec<String> = Vec::new();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| l.starts_with("GB ")) {
        let header = lines[..i].iter().rev().find(|h| h.contains("v1 runs")).unwrap();
        let end = header[..header.find("v1 runs").unwrap()].chars().count() + "v1 runs".len();
        let upto: String = l.chars().take(end).collect();
        runs.push(upto.split_whitespace().next_back().unwrap().to_string());
    }
    assert_eq!(&runs[..2], &["1", "2"], "v1 runs once, then twice:\n{out}");
    assert!(out.contains("(skipped)"), "the v2 retry is skipped:\n{out}");

    // On an 80-column screen every line fits, narrations break between words, and each check
    // keeps its three answers: the counts beside them go first.
    let narrow = binary(&lab, &["demo", "--no-pause", "--yes", "--world", &world]).env("COLUMNS", "80").output().unwrap();
    let text = String::from_utf8_lossy(&narrow.stdout);
    assert!(narrow.status.success(), "{}", String::from_utf8_lossy(&narrow.stderr));
    assert!(text.lines().all(|l| unicode_width::UnicodeWidthStr::width(l) <= 80), "{text}");
    let checks: Vec<&str> = text.lines().filter(|l| l.contains("v2 vs recompute")).collect();
    assert!(checks.len() >= 3 && checks.iter().all(|h| h.contains("v2 gold") && h.matches("recompute").count() >= 2), "{text}");
    let words: std::collections::HashSet<&str> = out.split_whitespace().collect();
    let step = text.lines().find(|l| l.starts_with("── step 4: ")).unwrap();
    assert!(step.split_whitespace().all(|w| words.contains(w)), "no word broken: {step}");
}

#[test]
fn the_demo_on_the_sample_lands_a_correction_that_changes_exactly_its_date_and_skips_an_identical_one() {
    let dir = tempdir();
    let lab = dir.path().join("demo-lab");
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let out = binary(&lab, &["demo", "--no-pause", "--world", sample.to_str().unwrap()]).env("COLUMNS", "120").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = String::from_utf8(out.stdout).unwrap();
    // Narrowed to 120 columns: no table line wraps on a presenter's screen.
    use unicode_width::UnicodeWidthStr;
    let wide: Vec<&str> =
        out.lines().filter(|l| !l.starts_with("── step") && (l.contains("  ") || l.contains('─')) && l.width() > 120).collect();
    assert!(wide.is_empty(), "table lines wider than 120 columns:\n{}", wide.join("\n"));
    // The steps by what they tell, each up to the next one.
    let steps: Vec<&str> = out.split("\n── step ").skip(1).collect();
    let told = |what: &str| *steps.iter().find(|s| s.contains(what)).unwrap_or_else(|| panic!("no step tells '{what}':\n{out}"));
    let numbers: Vec<usize> = steps.iter().map(|s| s.split(':').next().unwrap().parse().unwrap()).collect();
    assert_eq!(numbers, (1..=steps.len()).collect::<Vec<_>>(), "the steps are told in order, none skipped");
    let fixed = told("re-exports");
    assert!(fixed.contains("corrected: tills-gb.jsonl.gz v2"), "{fixed}");
    assert_eq!(fixed.matches(" overwrite ").count(), 1, "exactly the corrected date is rewritten:\n{fixed}");
    assert!(fixed.contains("revenue corrected (tills-gb.jsonl.gz v2)"), "{fixed}");
    let same = told("recompressed");
    assert!(
        same.contains("re-delivered (same rows): tills-gb.jsonl.gz v2") && !same.contains("corrected:") && same.contains("(skipped)"),
        "{same}"
    );
    // No upload is skipped: every upload the story lands, it lands in order, one after the other.
    let landed: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("landed upload ")).map(|l| &l[..10]).collect();
    let mut seen: Vec<&str> = landed.clone();
    seen.dedup();
    let ups: Vec<String> = uploads(&sample).iter().map(|d| d.to_string()).collect();
    let first = ups.iter().position(|u| u == seen[0]).unwrap();
    for (i, u) in seen.iter().enumerate() {
        assert!(ups[first..].contains(&u.to_string()), "{u}");
        if i > 0 && *u > seen[i - 1] {
            assert_eq!(
                ups.iter().position(|x| x == u),
                ups.iter().position(|x| x == seen[i - 1]).map(|p| p + 1),
                "{u} follows {}",
                seen[i - 1]
            );
        }
    }
    assert_eq!(out.matches("gold.daily_store_sales:").count(), out.matches("-> snapshot").count(), "one fingerprint per run, none twice");
    // The trend shows v1's retry as a spike; a late basket arrives past its window, and finance
    // reopens the day: v2 then equals the recompute there, and the morning's line says so.
    assert!(told("The trend").contains("v1 spikes on"), "{}", told("The trend"));
    let late = told("past its window: v2 kept them out");
    assert!(late.contains("beyond the 2-day window") && late.contains("yes"), "{late}");
    let reopened = told("Finance decides");
    assert!(reopened.contains("reopened by the presenter: late tills approved by finance (demo)"), "{reopened}");
    let rows: Vec<&str> =
        reopened.lines().filter(|l| ["GB ", "IN ", "SG "].iter().any(|c| l.trim_start_matches(['!', '✓', ' ']).starts_with(c))).collect();
    assert!(!rows.is_empty() && rows.iter().all(|l| l.contains(" match ")), "after the reopening v2 matches the recompute:\n{reopened}");
    assert!(told("The morning's line").contains(" moved 2026-10-"), "{}", told("The morning's line"));
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

/// A variable set to nothing is not set: `RECOUNT_LAB= recount …` names no lab (the default one
/// under XDG_DATA_HOME is used), and `RECOUNT_COLOR=` picks no colour, where clap refused the
/// empty value as if `--lab` had been typed without one.
#[test]
fn an_empty_environment_variable_is_treated_as_unset() {
    let dir = tempdir();
    let out = Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["land", "2026-10-12"])
        .env("RECOUNT_LAB", "")
        .env("RECOUNT_COLOR", "")
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("a value is required"), "{err}");
    assert!(dir.path().join("data/recount/lab/recount.duckdb").exists(), "the default lab, not one at \"\"");
}

/// The binary on `lab` as the tests run it: no colour, no stdin.
fn binary(lab: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_recount"));
    c.arg("--lab").arg(lab).args(args).env("NO_COLOR", "1").stdin(std::process::Stdio::null());
    c
}

fn recount_code(lab: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = binary(lab, args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn promises_exit_4_when_one_fails_and_0_when_none_does() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (first, last) = (ups[0].to_string(), ups[5].to_string());
    assert_eq!(recount_code(&lab, &["land", &first, &last, "--world", &world]).0, Some(0));
    let (code, out, _) = recount_code(&lab, &["promises", &ups[2].to_string()]);
    assert_eq!(code, Some(4), "not built by v2: timeliness fails\n{out}");
    assert!(out.contains("FAIL"), "{out}");
    assert_eq!(recount_code(&lab, &["run", &first, &last]).0, Some(0));
    let (code, out, _) = recount_code(&lab, &["promises", &ups[2].to_string()]);
    assert_eq!(code, Some(0), "built and closed: no promise fails\n{out}");
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn reset_and_demo_ask_before_emptying_a_lab_with_data_and_yes_answers_for_scripts() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    assert_eq!(recount_code(&lab, &["daily", &ups[0].to_string(), &ups[1].to_string(), "--world", &world]).0, Some(0));
    let before = recount_code(&lab, &["fingerprint"]).1;
    // No terminal to ask on: the answer is no, the lab is left as it was, and the exit code says so.
    let (code, _, err) = recount_code(&lab, &["reset"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("pass --yes"), "{err}");
    let (code, _, err) = recount_code(&lab, &["demo", "--no-pause", "--world", &world]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(recount_code(&lab, &["fingerprint"]).1, before, "nothing was emptied");
    assert_eq!(recount_code(&lab, &["reset", "--yes"]).0, Some(0));
    assert_ne!(recount_code(&lab, &["fingerprint"]).1, before, "emptied");
    // An empty lab needs no question.
    assert_eq!(recount_code(&lab, &["reset"]).0, Some(0));
}

#[test]
fn errors_are_plain_text_off_a_terminal_and_coloured_only_when_asked() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let (code, _, plain) = recount_code(&lab, &["rollback", "99"]);
    assert_eq!(code, Some(1));
    assert!(plain.starts_with("error: ") && !plain.contains('\x1b'), "{plain:?}");
    assert!(!plain.contains("RUST_BACKTRACE"), "no backtrace hint in a log: {plain:?}");
    assert_eq!(plain.lines().count(), 1, "{plain:?}");
    let (_, _, coloured) = recount_code(&lab, &["--color", "always", "rollback", "99"]);
    assert!(coloured.starts_with("\x1b[1;31merror:\x1b[0m "), "{coloured:?}");
    let (_, _, never) = recount_code(&lab, &["--color=never", "rollback", "99"]);
    assert_eq!(never, plain);
}

#[test]
fn completions_and_the_man_page_come_from_the_command_definitions() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let (code, bash, _) = recount_code(&lab, &["completions", "bash"]);
    assert_eq!(code, Some(0));
    assert!(
        bash.contains("_recount()") && bash.contains("fingerprint") && bash.contains("--late-days"),
        "{}",
        &bash[..bash.len().min(400)]
    );
    let (_, zsh, _) = recount_code(&lab, &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef recount"), "{}", &zsh[..zsh.len().min(200)]);
    let (code, page, _) = recount_code(&lab, &["man"]);
    assert_eq!(code, Some(0));
    assert!(page.contains(".TH recount 1") && page.contains("Why did the number move?"), "{}", &page[..page.len().min(400)]);
    // The sections a reader of a man page looks for, from the tables the program reads.
    for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH \"EXPLORER KEYS\"", "RECOUNT_LAB", "engines disagree"] {
        assert!(page.contains(section), "{section} in the man page");
    }
    assert!(!page.contains("EXTRA"), "no catch-all section");
    let out = dir.path().join("man");
    assert_eq!(recount_code(&lab, &["man", "--out", out.to_str().unwrap()]).0, Some(0));
    for page in ["recount.1", "recount-check.1", "recount-spark.1", "recount-spark-run.1"] {
        assert!(out.join(page).is_file(), "{page} written");
    }
}

#[test]
fn the_first_run_builds_the_sample_lab_day_by_day_and_holds_back_the_newest_two_uploads() {
    let home = tempdir();
    let out = Command::new(env!("CARGO_BIN_EXE_recount"))
        .env_remove("RECOUNT_LAB")
        .env("XDG_DATA_HOME", home.path())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The sample world is the binary's own, written beside the lab: an installed binary never
    // reads the checkout it was built from.
    let from = format!(" from {}", home.path().join("recount/sample-world-").display());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&from), "{}", String::from_utf8_lossy(&out.stdout));
    let lab = home.path().join("recount/lab");
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let ups = uploads(&sample);
    let newest = ups[ups.len() - 1 - recount::lake::bootstrap::HELD_BACK];
    let yesterday = newest.pred_opt().unwrap();
    let (_, json, _) = recount_code(&lab, &["history", &yesterday.to_string(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let v = &v["detail"];
    assert_eq!(v["status"]["newest_upload"], newest.to_string(), "the newest two uploads are held back");
    assert_eq!(v["status"]["finality"]["state"], "provisional", "so yesterday is still open: {}", v["status"]);
    // Built upload by upload: yesterday has a version per upload that brought it rows, each
    // made by a daily run of an upload no later than the newest landed one.
    let builders: Vec<String> =
        v["entries"].as_array().unwrap().iter().map(|e| e["trigger"]["upload"].as_str().unwrap().to_string()).collect();
    assert!(builders.len() >= 3, "{builders:?}");
    assert!(builders.windows(2).all(|w| w[0] < w[1]), "one version per upload, in upload order: {builders:?}");
    assert!(builders.iter().all(|b| *b <= newest.to_string()));
    assert!(v["entries"].as_array().unwrap().iter().all(|e| e["trigger"]["kind"] == "daily"));
    // v1 ran once per landed day.
    let (_, check, _) = recount_code(&lab, &["check", &yesterday.to_string(), "--format", "json"]);
    let c: serde_json::Value = serde_json::from_str(&check).unwrap();
    assert!(c["detail"]["countries"].as_array().unwrap().iter().all(|c| c["v1_runs"] == 1), "{check}");
    // Its output carries the morning's line, as `recount summary` prints it first.
    let (_, summary, _) = recount_code(&lab, &["summary"]);
    let line = summary.lines().next().unwrap();
    assert!(line.starts_with(&format!("upload {newest} moved ")), "{line}");
    assert!(String::from_utf8_lossy(&out.stdout).lines().any(|l| l == line), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn the_config_file_sets_the_window_and_keys_and_recount_config_says_where_each_value_came_from() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let conf_dir = dir.path().join("xdg");
    std::fs::create_dir_all(conf_dir.join("recount")).unwrap();
    let file = conf_dir.join("recount").join("config.toml");
    std::fs::write(&file, "late_days = 4\nmouse = false\n[keys]\nland_next = \"L\"\n").unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_recount"));
        c.arg("--lab").arg(&lab).args(args).env("XDG_CONFIG_HOME", &conf_dir).env_remove("RECOUNT_CONFIG").env_remove("RECOUNT_THEME");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value =
        serde_json::from_str(&run(&["config", "--format", "json", "--color", "never"], &[("RECOUNT_THEME", "light")])).unwrap();
    let v = &v["detail"];
    let setting = |name: &str| v["settings"].as_array().unwrap().iter().find(|s| s["setting"] == name).unwrap().clone();
    let from_file = serde_json::json!({ "kind": "file", "name": file });
    assert_eq!((setting("late_days")["value"].clone(), setting("late_days")["source"].clone()), ("4".into(), from_file.clone()));
    assert_eq!((setting("mouse")["value"].clone(), setting("mouse")["source"].clone()), ("false".into(), from_file.clone()));
    assert_eq!(setting("theme")["source"], serde_json::json!({ "kind": "env", "name": "RECOUNT_THEME" }), "the environment beats the file");
    assert_eq!(setting("color")["source"], serde_json::json!({ "kind": "flag", "name": "--color" }));
    assert_eq!(setting("lab")["source"], serde_json::json!({ "kind": "flag", "name": "--lab" }));
    let land_next = v["keys"].as_array().unwrap().iter().find(|k| k["action"] == "land_next").unwrap();
    assert_eq!((land_next["keys"].clone(), land_next["source"].clone()), ("L".into(), from_file));

    // v2 runs with the file's window unless --late-days says otherwise.
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    run(&["land", &ups[0].to_string(), &ups[2].to_string(), "--world", &world], &[]);
    let first = run(&["run", &ups[0].to_string(), "--format", "json"], &[]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&first).unwrap()["snapshot"]["late_days"], 4, "{first}");
    let second = run(&["run", &ups[1].to_string(), "--late-days", "1", "--format", "json"], &[]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&second).unwrap()["snapshot"]["late_days"], 1, "{second}");

    // A broken file is one clear line naming it, and the command does not run.
    std::fs::write(&file, "late_days = 4\nthem = \"light\"\n").unwrap();
    let (code, _, err) = {
        let out = Command::new(env!("CARGO_BIN_EXE_recount"))
            .arg("--lab")
            .arg(&lab)
            .args(["run", &ups[2].to_string()])
            .env("XDG_CONFIG_HOME", &conf_dir)
            .env_remove("RECOUNT_CONFIG")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&file.display().to_string()) && err.contains("line 2, column 1") && err.contains("them"), "{err}");
}

#[test]
fn the_command_line_definition_passes_claps_own_checks() {
    use clap::CommandFactory;
    // clap_builder keeps its debug assertions in the release profile (Cargo.toml), so this
    // checks every subcommand's arguments: duplicate names, conflicting shorts, bad defaults.
    recount::cli::Cli::command().debug_assert();
}

/// The binary with its stdout a pipe whose reader is already gone: its first write meets EPIPE.
fn into_closed_pipe(lab: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = binary(lab, args).stdout(writer).stderr(std::process::Stdio::piped()).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_pipe_ends_quietly_with_exit_0_and_a_cut_daily_is_finished_by_the_next() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    for args in [&["completions", "bash"][..], &["man"], &["--help"]] {
        let (code, err) = into_closed_pipe(&lab, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?} is quiet: {err}");
    }
    // A daily whose reader went away stops at its first line, says so, and leaves the lab whole.
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let (first, third) = (ups[0].to_string(), ups[2].to_string());
    let (code, err) = into_closed_pipe(&lab, &["daily", &first, &third, "--world", &world]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("the output was closed") && err.contains("finishes the rest"), "{err}");
    let (ok, _, err) = recount(&lab, &["daily", &first, &third, "--world", &world]);
    assert!(ok, "{err}");
    let whole = dir.path().join("whole");
    assert!(recount(&whole, &["daily", &first, &third, "--world", &world]).0);
    assert_eq!(recount(&lab, &["fingerprint"]).1, recount(&whole, &["fingerprint"]).1, "the next daily finished the cut one");
}

#[test]
fn the_explorer_without_a_terminal_says_so_in_one_line() {
    let dir = tempdir();
    let (code, out, err) = recount_code(&dir.path().join("lab"), &["tui"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs a terminal") && !err.contains("panicked"), "{err}");
}

#[test]
fn a_report_on_a_lab_that_does_not_exist_is_an_error_naming_the_path() {
    let dir = tempdir();
    let missing = dir.path().join("no-such-lab");
    for args in [&["check", "2026-10-28"][..], &["fingerprint"], &["history", "2026-10-28"], &["late"], &["snapshots"]] {
        let (code, out, err) = recount_code(&missing, args);
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(err.contains("no lab at") && err.contains("no-such-lab"), "{args:?}: {err}");
        assert!(!out.contains("provisional"), "nothing reads as an empty lab: {out}");
    }
    assert!(!missing.exists(), "a report creates nothing");
}

#[test]
fn late_gives_every_copy_its_baskets_flag_and_says_which_copy_counts_with_days_as_numbers() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let world = sample.to_str().unwrap();
    assert!(recount(&lab, &["daily", "2026-10-19", "2026-10-23", "--world", world]).0);
    // Both copies of this basket arrived in upload 10-23, beyond 10-20's window: the basket is
    // not in v2, whichever copy a row shows.
    let (ok, json, err) = recount(&lab, &["late", "2026-10-20", "--format", "json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let copies: Vec<&serde_json::Value> =
        v["detail"]["rows"].as_array().unwrap().iter().filter(|r| r["entity_key"] == "GB003-20261020-T3-0004").collect();
    assert_eq!(copies.len(), 2, "{json}");
    assert!(copies.iter().all(|r| r["missing_from_v2"] == true), "{copies:?}");
    assert_eq!(copies.iter().filter(|r| r["recompute_copy"] == true).count(), 1, "one copy counts: {copies:?}");
    assert!(copies.iter().all(|r| r["days_late"].is_i64()), "{copies:?}");
    let (_, csv, _) = recount(&lab, &["late", "2026-10-20", "--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let header = rdr.headers().unwrap().clone();
    let days = header.iter().position(|h| h == "days_late").unwrap();
    let counted = header.iter().position(|h| h == "recompute_copy").unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    for r in &rows {
        assert!(r[days].parse::<i64>().is_ok(), "days_late is a number a spreadsheet sums: {:?}", &r[days]);
        assert!(["this copy", "another copy"].contains(&&r[counted]), "{r:?}");
    }
}

/// Every Rust file under src/ and each crate's crates/NAME/src/.
fn source_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out)
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p)
            }
        }
    }
    let root = &std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        walk(&krate.unwrap().path().join("src"), &mut files);
    }
    assert!(files.len() > 40, "the walk found the modules");
    assert!(files.iter().any(|f| f.ends_with("crates/store/src/lib.rs")), "the walk found the crates");
    files
}

#[test]
fn no_function_under_src_is_80_lines_or_longer() {
    // A function starts at a line `fn NAME` (any visibility) and ends at the first line after it
    // that is its indentation and `}`, as rustfmt writes them.
    let mut long = Vec::new();
    for f in source_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let body = l.trim_start();
            let indent = &l[..l.len() - body.len()];
            let head =
                ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn ", "const fn ", "pub const fn "].iter().any(|p| body.starts_with(p));
            if !head || body.ends_with(';') {
                continue;
            }
            let close = format!("{indent}}}");
            if let Some(end) = lines[i + 1..].iter().position(|x| *x == close)
                && end + 2 >= 80
            {
                long.push(format!("{}:{} ({} lines)", f.display(), i + 1, end + 2));
            }
        }
    }
    assert!(long.is_empty(), "functions of 80 lines or more: {long:?}");
}

#[test]
fn every_module_under_src_is_on_the_architecture_map() {
    let root = &std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let map = doc.split("## The map: who owns what").nth(1).unwrap().split("\n## ").next().unwrap();
    let files = source_files();
    let missing: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .filter(|rel| !map.contains(&format!("`{rel}`")))
        .collect();
    assert!(missing.is_empty(), "docs/architecture.md's map does not name: {missing:?}");
}

#[test]
fn a_bad_key_override_in_the_config_file_is_an_error_naming_the_file_before_any_command_runs() {
    let dir = tempdir();
    let conf_dir = dir.path().join("xdg");
    std::fs::create_dir_all(conf_dir.join("recount")).unwrap();
    let file = conf_dir.join("recount").join("config.toml");
    for (text, says) in [
        ("[keys]\nland_next = \"ctrl-\"\n", "ctrl-"),
        ("[keys]\nno_such_action = \"x\"\n", "no_such_action"),
        ("[keys]\nland_next = \"q\"\n", "q"),
    ] {
        std::fs::write(&file, text).unwrap();
        let out =
            binary(&dir.path().join("lab"), &["config"]).env("XDG_CONFIG_HOME", &conf_dir).env_remove("RECOUNT_CONFIG").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text:?}: {err}");
        assert!(err.contains(&file.display().to_string()) && err.contains("[keys]") && err.contains(says), "{text:?}: {err}");
    }
}

#[test]
fn dates_are_read_strictly_mm_dd_within_the_lab_and_a_date_outside_it_says_so() {
    let dir = tempdir();
    let (lab, world, ups) = daily_lab(dir.path(), 3);
    let d = ups[2];
    let (ok, full, _) = recount(&lab, &["check", &d.to_string(), "--format", "json"]);
    assert!(ok);
    let (ok, short, err) = recount(&lab, &["check", &d.format("%m-%d").to_string(), "--format", "json"]);
    assert!(ok, "{err}");
    assert_eq!(short, full, "MM-DD is the lab's date of that month and day");
    // No date, or `yesterday`, is the newest landed upload's own date, as the explorer opens on.
    let newest = ups[3].to_string();
    let (ok, out, err) = recount(&lab, &["check", &newest, "--format", "json"]);
    assert!(ok, "{err}");
    for words in [vec!["check", "yesterday"], vec!["check"]] {
        let mut args = words.clone();
        args.extend(["--format", "json"]);
        let (ok, same, err) = recount(&lab, &args);
        assert!(ok && same == out, "{words:?}: {err}");
    }
    for bad in ["26-10-28", "2026-02-30", "yester", "2026-10-8"] {
        let (code, _, err) = recount_code(&lab, &["check", bad]);
        assert_eq!(code, Some(2), "{bad}: a usage error: {err}");
        assert!(err.contains("YYYY-MM-DD") && err.contains("MM-DD"), "{bad}: the error names both forms: {err}");
    }
    let (code, out, err) = recount_code(&lab, &["check", "2027-01-01"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(err.contains("2027-01-01 is outside the lab") && !out.contains("provisional"), "{err}");
    // An upload date is whole: MM-DD names no upload.
    let (code, _, err) = recount_code(&lab, &["land", "10-13", "--world", &world]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn v1_that_never_ran_says_so_and_flags_nothing_and_explain_names_one_run() {
    let dir = tempdir();
    let (lab, _, ups) = daily_lab(dir.path(), 5);
    let d = ups[1].to_string();
    let (ok, table, err) = recount(&lab, &["check", &d]);
    assert!(ok, "{err}");
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("GB ") || l.contains("IN ") || l.contains("SG ")).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for r in rows {
        assert!(r.contains("not run") && r.contains("v1 not run"), "{r}");
        if r.contains(" match ") {
            assert!(!r.trim_start().starts_with('!'), "a v1 that never ran is no warning: {r}");
        }
    }
    let (_, explain, _) = recount(&lab, &["explain", &d]);
    assert!(explain.contains("what ONE v1 run counts") && explain.contains("check's v1 column sums every run"), "{explain}");
}

/// What a CSV column holds, by its name: the one convention every report keeps.
fn column_kind(name: &str) -> &'static str {
    if name.ends_with("_currency") {
        "currency"
    } else if name.ends_with("_digits") {
        "digits"
    } else if name.ends_with("_major") {
        "decimal"
    } else if name.ends_with("_minor") {
        "integer"
    } else if name == "business_date" || name == "upload_date" || name.ends_with("_date") {
        "date"
    } else if ["days_late", "line", "days", "events", "v1_runs", "rows", "snapshot_id", "baskets", "copies"].contains(&name)
        || name.ends_with("_baskets")
        || name.ends_with("_delta")
        || name.ends_with("_copies")
        || name.ends_with("_rows")
        || name.ends_with("_events")
    {
        "integer"
    } else {
        "text"
    }
}

#[test]
fn every_reports_csv_parses_with_one_header_and_each_column_holds_its_type() {
    let dir = tempdir();
    let (lab, _, ups) = daily_lab(dir.path(), 7);
    let d = ups[3].to_string();
    assert!(recount(&lab, &["naive", &d]).0);
    let reports: Vec<Vec<&str>> = vec![
        vec!["check", &d],
        vec!["explain", &d],
        vec!["explain", &d, "--baskets"],
        vec!["baskets", &d],
        vec!["late"],
        vec!["late", &d],
        vec!["quarantine"],
        vec!["lateness"],
        vec!["lateness", "--by-country"],
        vec!["history", &d],
        vec!["diff", &d],
        vec!["diff", &d, "--baskets"],
        vec!["promises", &d],
        vec!["snapshots"],
        vec!["fingerprint"],
    ];
    let mut checked = 0;
    for args in reports {
        let mut all = args.clone();
        all.extend(["--format", "csv"]);
        let (code, csv, err) = recount_code(&lab, &all);
        assert!(code == Some(0) || code == Some(4), "{args:?}: {err}");
        assert!(!csv.contains("\n\n"), "{args:?}: one table, one header:\n{csv}");
        let mut rdr = csv::Reader::from_reader(csv.as_bytes());
        let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
        assert!(!header.is_empty(), "{args:?}");
        for (n, rec) in rdr.records().enumerate() {
            let rec = rec.unwrap_or_else(|e| panic!("{args:?} row {n}: {e}\n{csv}"));
            assert_eq!(rec.len(), header.len(), "{args:?} row {n}: every row complete");
            for (col, v) in header.iter().zip(rec.iter()) {
                let ok = v.is_empty()
                    || match column_kind(col) {
                        "integer" => v.parse::<i64>().is_ok(),
                        "digits" => v.parse::<u32>().is_ok_and(|d| d <= 4),
                        "decimal" => {
                            v.strip_prefix('-').unwrap_or(v).split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                        }
                        "currency" => v.len() == 3 && v.chars().all(|c| c.is_ascii_uppercase()),
                        "date" => v.parse::<chrono::NaiveDate>().is_ok(),
                        _ => true,
                    };
                assert!(ok, "{args:?} row {n}: {col} = {v:?} is not a {}", column_kind(col));
                assert!(!(col == "basket_id" && v.is_empty()), "{args:?} row {n}: every row carries its basket_id");
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked} values checked");
}

#[test]
fn alert_on_beyond_window_exits_5_on_the_samples_late_arrivals_and_0_without_it() {
    let dir = tempdir();
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let world = sample.to_str().unwrap();
    // The sample's upload 2026-10-23 brings rows of 10-20, past its window (late lists them).
    let quiet = dir.path().join("quiet");
    let (code, _, err) = recount_code(&quiet, &["daily", "2026-10-19", "2026-10-23", "--world", world]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("ALERT"), "{err}");
    let watched = dir.path().join("watched");
    let (code, out, err) = recount_code(&watched, &["daily", "2026-10-19", "2026-10-23", "--world", world, "--alert-on", "beyond-window"]);
    assert_eq!(code, Some(5), "{out}{err}");
    let alert = err.lines().find(|l| l.starts_with("ALERT beyond-window: upload 2026-10-23")).unwrap_or_else(|| panic!("{err}"));
    assert!(alert.contains("business date 2026-10-20") && alert.contains('£'), "{alert}");
    // `run` watches the same, and the same runs with nothing late exit 0.
    let (code, _, err) = recount_code(&watched, &["run", "2026-10-23", "--alert-on", "beyond-window"]);
    assert_eq!(code, Some(5), "{err}");
    let (code, _, err) = recount_code(&watched, &["run", "2026-10-22", "--alert-on", "beyond-window"]);
    assert_eq!(code, Some(0), "upload 2026-10-22 brings nothing past a window: {err}");
    // The alert counts what the reopening takes in: the same baskets, the same amount.
    let counted = alert.split(": ").nth(2).and_then(|s| s.split(" (recount late").next()).unwrap_or_else(|| panic!("{alert}"));
    let (baskets, amount) = counted.split_once(" basket(s) v2 has no copy of, ").unwrap_or_else(|| panic!("{alert}"));
    let (code, out, err) = recount_code(&watched, &["reopen", "2026-10-20", "--reason", "late tills", "--by", "finance"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!("({baskets} basket(s), {amount} from upload(s) 2026-10-23")),
        "the alert said {counted}; the reopening: {out}"
    );
}

/// docs/architecture.md's picture of the crates is `cargo metadata`'s graph: each workspace
/// crate and the workspace crates it depends on, nothing more, nothing less.
#[test]
fn the_crates_picture_is_cargo_metadata_s_graph() {
    let root = &std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo).args(["metadata", "--format-version", "1", "--no-deps", "--offline"]).current_dir(root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: std::collections::BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let mut graph = std::collections::BTreeMap::new();
    for p in packages {
        let uses: std::collections::BTreeSet<String> = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null() && ours.contains(d["name"].as_str().unwrap()))
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect();
        graph.insert(p["name"].as_str().unwrap().to_string(), uses);
        // Only the store names DuckDB, in any kind of dependency.
        let duck = p["dependencies"].as_array().unwrap().iter().any(|d| d["name"] == "duckdb");
        assert_eq!(duck, p["name"] == "recount-store", "{} and duckdb", p["name"]);
    }
    assert!(graph.len() >= 3, "the workspace's crates: {graph:?}");
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let picture = doc.split("## The crates").nth(1).unwrap().split("```text\n").nth(1).unwrap().split("```").next().unwrap();
    let mut drawn = std::collections::BTreeMap::new();
    for line in picture.lines() {
        let (name, uses) = line.split_once(" uses ").unwrap();
        let uses = uses.trim();
        let set: std::collections::BTreeSet<String> =
            if uses == "nothing of recount's" { Default::default() } else { uses.split(", ").map(str::to_string).collect() };
        drawn.insert(name.trim().to_string(), set);
    }
    assert_eq!(drawn, graph, "docs/architecture.md's crates against cargo metadata");
}

/// Nothing under src/ or a crate other than the store names DuckDB's crate: it asks the store.
#[test]
fn only_the_store_crate_names_duckdb() {
    let named: Vec<String> = source_files()
        .into_iter()
        .filter(|f| !f.to_string_lossy().contains("crates/store/"))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.contains("duckdb::") || text.contains("for_tests")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(named.is_empty(), "DuckDB named outside the store: {named:?}");
}

/// Within the top crate the compiler cannot refuse an arrow, so this does: each module of it on
/// docs/architecture.md's map (src/…) names, as `crate::NAME` (or, for the bench, `recount::`),
/// only the modules its "may use" column lists and the core's words, which everything may use.
#[test]
fn each_top_crate_module_uses_only_what_the_map_lets_it() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let map = doc.split("## The map: who owns what").nth(1).unwrap().split("\n## ").next().unwrap();
    let core = ["env", "error", "money", "progress", "rules", "sanitize", "tz"];
    let word =
        |text: &str| -> Vec<String> { text.split('`').skip(1).step_by(2).map(|w| w.split("::").next().unwrap().to_string()).collect() };
    let mut checked = 0;
    for row in map.lines().filter(|l| l.starts_with("| `src/") && !l.contains("`src/main.rs`")) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
        let path = word(cells[0]).into_iter().next().unwrap();
        let own = path.trim_end_matches('/').trim_end_matches(".rs").rsplit('/').next().unwrap().to_string();
        let allowed: std::collections::BTreeSet<String> = word(cells[cells.len() - 1]).into_iter().chain(core.map(String::from)).collect();
        let files: Vec<std::path::PathBuf> = if path.ends_with('/') {
            source_files().into_iter().filter(|f| f.starts_with(root.join(&path))).collect()
        } else {
            vec![root.join(&path)]
        };
        assert!(!files.is_empty(), "{path}: no files");
        let mut used = std::collections::BTreeSet::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for (i, _) in text.match_indices("crate::") {
                let name: String = text[i + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                used.insert(name);
            }
            for line in text.lines().filter_map(|l| l.strip_prefix("use recount::{")) {
                used.extend(line.trim_end_matches("};").split(", ").map(str::to_string));
            }
        }
        used.remove(&own);
        used.remove("");
        let outside: Vec<&String> = used.iter().filter(|u| !allowed.contains(*u)).collect();
        assert!(outside.is_empty(), "{path} names {outside:?}, which its row of the map does not let it (may use: {allowed:?})");
        checked += 1;
    }
    assert!(checked >= 7, "the map's rows of the top crate: {checked}");
}

/// Code reads the checkout's files through the manifest directory cargo gives it when it runs,
/// never one compiled in: a target directory shared by two checkouts (CI's clone and a working
/// copy) keeps a compiled-in path of whichever built it first, and the test would read that one.
#[test]
fn no_code_reads_the_checkout_through_a_compiled_in_path() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files = source_files();
    for dir in ["tests", "benches"] {
        files.extend(
            std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "rs")),
        );
    }
    files.push(root.join("tests/common/mod.rs"));
    let compiled_in = ["env!(", "\"CARGO_MANIFEST_DIR\")"].concat();
    let named: Vec<String> =
        files.iter().filter(|f| std::fs::read_to_string(f).unwrap().contains(&compiled_in)).map(|f| f.display().to_string()).collect();
    assert!(files.len() > 60 && named.is_empty(), "{compiled_in} in: {named:?}");
}

/// A file that does one job fits in 600 lines: a longer one is split by its jobs.
#[test]
fn no_file_under_src_is_over_600_lines() {
    let long: Vec<String> = source_files()
        .into_iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            (n > 600).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 600 lines: {long:?}");
}

/// One meaning per type name: no struct, enum, trait or type alias under src/ or a crate shares
/// its name with another, so a reader never wonders which `Store` or `Step` this is.
#[test]
fn no_type_name_is_defined_twice() {
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in source_files() {
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let body = line.trim_start();
            let body = ["pub(crate) ", "pub(super) ", "pub "].iter().find_map(|p| body.strip_prefix(p)).unwrap_or(body);
            // An associated type (`type Value = …` inside an impl) is indented; an alias is not.
            let kinds: &[&str] = if line.starts_with(char::is_whitespace) {
                &["struct ", "enum ", "trait "]
            } else {
                &["struct ", "enum ", "trait ", "type "]
            };
            let Some(rest) = kinds.iter().find_map(|k| body.strip_prefix(k)) else { continue };
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                seen.entry(name).or_default().push(format!("{}:{}", f.display(), n + 1));
            }
        }
    }
    assert!(seen.len() > 100, "the scan found the types: {}", seen.len());
    let twice: Vec<String> = seen.iter().filter(|(_, at)| at.len() > 1).map(|(name, at)| format!("{name}: {at:?}")).collect();
    assert!(twice.is_empty(), "type names defined more than once:\n{}", twice.join("\n"));
}

/// `recount-bench` is a binary of its own, using the library as any user does: its measured
/// phase lands and backfills a world into a lab with the same gold as `recount land` and `run`
/// build, and its far jump opens the explorer headless on that lab.
#[test]
fn the_bench_binary_s_phases_build_the_gold_recount_builds() {
    let dir = tempdir();
    let world = small_world();
    let bench = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_recount-bench")).args(args).env("NO_COLOR", "1").output().unwrap();
        assert!(out.status.success(), "recount-bench {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let (w, bench_lab) = (world.to_str().unwrap(), dir.path().join("bench-lab"));
    let line = bench(&["phase", "--world", w, "--lab", bench_lab.to_str().unwrap()]);
    let ups = uploads(world);
    let (first, last) = (ups[0].to_string(), ups[ups.len() - 1].to_string());
    let lab = dir.path().join("lab");
    assert!(recount(&lab, &["land", &first, &last, "--world", w]).0);
    assert!(recount(&lab, &["run", &last, &first]).0);
    let (ok, fingerprint, err) = recount(&lab, &["fingerprint"]);
    assert!(ok && line.starts_with("gold.daily_store_sales: ") && line == fingerprint.trim(), "{line} against {fingerprint}: {err}");
    let jump = bench(&["phase", "--jump", "--world", w, "--lab", bench_lab.to_str().unwrap()]);
    assert!(jump.contains("Overview drawn in") && jump.contains("every screen in"), "{jump}");
}

/// The statements of one dialect's query files, comments dropped and whitespace made single
/// spaces, with the number of `copy_order` defines among them.
fn sql_code(dir: &std::path::Path) -> (String, usize) {
    let (mut code, mut defines) = (String::new(), 0);
    let mut files: Vec<_> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "sql")).collect();
    files.sort();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let line = line.trim();
            if line == "-- define: copy_order" {
                defines += 1;
            }
            if !line.starts_with("--") {
                code.push(' ');
                code.push_str(line);
            }
        }
    }
    (code.split_whitespace().collect::<Vec<_>>().join(" "), defines)
}

/// The lateness window is written once per dialect: DuckDB's `in_window` macro, and Spark SQL's
/// `window_days` define, through which its `in_window` and `past_window` read it. No statement
/// spells the window again with date arithmetic on a row's dates.
#[test]
fn the_lateness_window_is_written_once_per_dialect() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("queries");
    let (duck, _) = sql_code(&root);
    assert_eq!(duck.matches("MACRO in_window(").count(), 1, "one window macro");
    for spelled in ["business_date - 1", "business_date + $late_days", "business_date + late"] {
        assert!(!duck.contains(spelled), "DuckDB: the window spelled outside in_window: {spelled}");
    }
    let (spark, _) = sql_code(&root.join("spark"));
    assert_eq!(spark.matches("date_sub(business_date, 1)").count(), 1, "Spark: the window's near end, in window_days alone");
    for spelled in ["date_add(business_date", "date_sub(upload_date", "date_add(upload_date"] {
        assert!(!spark.contains(spelled), "Spark: the window spelled outside window_days: {spelled}");
    }
    let compared = spark.matches("@window_days <= :late_days").count() + spark.matches("@window_days > :late_days").count();
    assert_eq!(compared, 2, "Spark: a row's window compared with :late_days in in_window and past_window alone");
}

/// The copy order is one define per dialect (DuckDB's and Spark SQL's): every window over an
/// entity's copies and every arg_min over them orders by @copy_order, and the order's columns are
/// written in the define alone, for retail and every model.
#[test]
fn every_statement_that_ranks_copies_orders_them_by_the_one_copy_order() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("queries");
    for (dir, columns) in [(root.clone(), "arrival, event_id, upload_date"), (root.join("spark"), "arrival_ns, event_id, upload_date")] {
        let (code, defines) = sql_code(&dir);
        assert_eq!(defines, 1, "{}: one copy_order define", dir.display());
        assert_eq!(code.matches(columns).count(), 1, "{}: the copy order's columns are spelled outside its define", dir.display());
        let mut ranked = 0;
        for key in ["basket_id", "basket_key", "entity_key"] {
            for (at, _) in
                code.match_indices(&format!("PARTITION BY {key} ORDER BY ")).chain(code.match_indices(&format!(".{key} ORDER BY ")))
            {
                let rest = &code[at..];
                let order = &rest[rest.find("ORDER BY ").unwrap() + 9..];
                assert!(
                    order.starts_with("@copy_order)"),
                    "{}: copies ranked by another order: {}",
                    dir.display(),
                    &rest[..rest.len().min(120)]
                );
                ranked += 1;
            }
        }
        for (at, _) in code.match_indices("arg_min(") {
            let rest = &code[at..code.len().min(at + 200)];
            assert!(rest.contains("row(@copy_order)"), "{}: an arg_min over copies by another order: {rest}", dir.display());
        }
        // Both engines rank copies in several statements, models' included: the check found them.
        assert!(ranked >= 2 + usize::from(dir == root) * 5, "{}: {ranked} ranking statements found", dir.display());
    }
}

/// A source file's crate root and its module path within it (`src/tui/app/mod.rs` → `src`,
/// `[tui, app]`): a crate under crates/, a binary under src/bin/, else recount's own.
fn module_of(root: &std::path::Path, file: &std::path::Path) -> (std::path::PathBuf, Vec<String>) {
    let rel = file.strip_prefix(root).unwrap();
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let skip = match parts[0].as_str() {
        "crates" => 3,
        _ if parts.get(1).is_some_and(|p| p == "bin") => 3,
        _ => 1,
    };
    let crate_root = root.join(parts[..skip].iter().collect::<std::path::PathBuf>());
    let mut module: Vec<String> = parts[skip..].iter().map(|p| p.trim_end_matches(".rs").to_string()).collect();
    if module.last().is_some_and(|m| ["mod", "lib", "main"].contains(&m.as_str())) {
        module.pop();
    }
    (crate_root, module)
}

/// The files a file imports within its own crate, by `crate::` and `super::` paths in its code
/// (comments left out): a path names the file of its longest prefix that is a module. A module's
/// own ancestors are left out (a child reads its parent's names; the parent declares it).
fn imports_of(root: &std::path::Path, file: &std::path::Path, files: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let (crate_root, module) = module_of(root, file);
    let code: String =
        std::fs::read_to_string(file).unwrap().lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", module[..module.len().saturating_sub(1)].to_vec())] {
        for (at, _) in code.match_indices(prefix) {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let mut path: Vec<String> = base.clone();
            let mut tail = rest;
            loop {
                let id: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if id.is_empty() {
                    break;
                }
                tail = &tail[id.len()..];
                path.push(id);
                match tail.strip_prefix("::") {
                    Some(more) => tail = more,
                    None => break,
                }
            }
            let target = (1..=path.len()).rev().find_map(|n| {
                let dir = crate_root.join(path[..n].iter().collect::<std::path::PathBuf>());
                [dir.with_extension("rs"), dir.join("mod.rs")].into_iter().find(|f| files.contains(f))
            });
            if let Some(t) = target {
                let (_, to) = module_of(root, &t);
                if !module.starts_with(&to) && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// No two source files import each other, directly or round a longer loop: each layer reads the
/// ones below it (the explorer's screens, the commands, the raw readers and the reports
/// included). The check found the imports it follows.
#[test]
fn no_source_files_import_each_other_in_a_circle() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let files = source_files();
    let graph: Vec<Vec<usize>> =
        files.iter().map(|f| imports_of(&root, f, &files).iter().map(|t| files.iter().position(|x| x == t).unwrap()).collect()).collect();
    assert!(graph.iter().map(Vec::len).sum::<usize>() > 120, "the imports were found: {}", graph.iter().map(Vec::len).sum::<usize>());
    // Depth first: a file met again while it is still on the path closes a circle.
    fn visit(n: usize, graph: &[Vec<usize>], state: &mut [u8], path: &mut Vec<usize>) -> Option<Vec<usize>> {
        state[n] = 1;
        path.push(n);
        for &m in &graph[n] {
            if state[m] == 1 {
                return Some(path[path.iter().position(|&p| p == m).unwrap()..].to_vec());
            }
            if state[m] == 0
                && let Some(c) = visit(m, graph, state, path)
            {
                return Some(c);
            }
        }
        path.pop();
        state[n] = 2;
        None
    }
    let mut state = vec![0u8; files.len()];
    for n in 0..files.len() {
        if state[n] == 0
            && let Some(circle) = visit(n, &graph, &mut state, &mut Vec::new())
        {
            let names: Vec<String> = circle.iter().map(|&i| files[i].strip_prefix(&root).unwrap().display().to_string()).collect();
            panic!("files that import each other: {}", names.join(" -> "));
        }
    }
}

/// The Spark driver the binary writes out (`spark::DRIVER`) holds every module of
/// `spark/recount_spark/`: a module the list lacks is missing from every job, and the driver
/// fails to import it when its session starts.
#[test]
fn the_spark_driver_the_binary_writes_holds_every_module_of_the_package() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let listed = std::fs::read_to_string(root.join("crates/spark/src/spark/mod.rs")).unwrap();
    let mut modules: Vec<String> = std::fs::read_dir(root.join("spark/recount_spark"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py"))
        .collect();
    modules.sort();
    assert!(modules.len() > 10 && modules.iter().any(|m| m == "warehouse.py"), "{modules:?}");
    let missing: Vec<&String> = modules.iter().filter(|m| !listed.contains(&format!("(\"{m}\", include_str!"))).collect();
    assert!(missing.is_empty(), "modules the driver does not write: {missing:?}");
}
