//! The command line as a user types it: formats, the demo script, and the contract's line.

mod common;

use common::*;
use std::process::Command;

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

fn recount_code(lab: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_recount"))
        .arg("--lab")
        .arg(lab)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
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
    let lab = home.path().join("recount/lab");
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data");
    let ups = uploads(&sample);
    let newest = ups[ups.len() - 1 - recount::lake::bootstrap::HELD_BACK];
    let yesterday = newest.pred_opt().unwrap();
    let (_, json, _) = recount_code(&lab, &["history", &yesterday.to_string(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
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
    assert!(c["countries"].as_array().unwrap().iter().all(|c| c["v1_runs"] == 1), "{check}");
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
