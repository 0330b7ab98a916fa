//! Trust: a command never deletes what recount did not make, never says what is not so, never
//! reads outside its world, and never ends quietly where it should stop. Each test stands for one
//! way a careless operator, a hostile world or a first-day user found it wanting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_recount"))
}

/// The binary on `lab`, with no terminal: (exit code, stdout, stderr).
fn run(lab: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = recount(lab, args);
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The binary, killed if it has not finished within `limit`: a read that blocks or never ends
/// fails the test instead of hanging it.
fn run_within(limit: Duration, cmd: &mut Command) -> Output {
    let mut child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("{cmd:?} was still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn line(id: &str, basket: &str, ts: &str, uploaded: &str, minor: i64) -> String {
    event(id, basket, "LON1", ts, uploaded, "GBP", &[minor])
}

/// A world of two uploads: 2026-10-15 (two baskets of that day) and 2026-10-20 (one basket of
/// that day, and one of 2026-10-10, past its window).
fn two_uploads(root: PathBuf) -> HandWorld {
    let w = HandWorld::new(root, STORES);
    w.file(
        "2026-10-15",
        "a.jsonl.gz",
        &[
            line("e1", "B1", "2026-10-15T09:00:00Z", "2026-10-15T12:00:00Z", 1000),
            line("e2", "B2", "2026-10-15T10:00:00Z", "2026-10-15T12:00:00Z", 2000),
        ],
    );
    w.file(
        "2026-10-20",
        "a.jsonl.gz",
        &[
            line("e3", "B3", "2026-10-20T09:00:00Z", "2026-10-20T12:00:00Z", 500),
            line("e4", "B4", "2026-10-10T09:00:00Z", "2026-10-20T12:00:00Z", 700),
        ],
    );
    w
}

fn world_arg(w: &HandWorld) -> String {
    w.root.to_str().unwrap().to_string()
}

/// `daily` of both uploads of `two_uploads`, one after the other.
fn daily_both(lab: &Path, w: &HandWorld) {
    for u in ["2026-10-15", "2026-10-20"] {
        let (code, _, err) = run(lab, &["daily", u, "--world", &world_arg(w)]);
        assert_eq!(code, Some(0), "{u}: {err}");
    }
}

#[test]
fn reset_demo_and_land_refuse_a_folder_that_is_not_a_lab_and_leave_it_as_it_was() {
    let dir = tempdir();
    let folder = dir.path().join("mine");
    std::fs::create_dir_all(folder.join("raw/sub")).unwrap();
    std::fs::write(folder.join("raw/sub/precious.txt"), "keep me").unwrap();
    let w = two_uploads(dir.path().join("world"));
    let world = world_arg(&w);
    for args in [
        vec!["reset"],
        vec!["reset", "--yes"],
        vec!["demo", "--no-pause", "--yes", "--world", &world],
        vec!["land", "2026-10-15", "--world", &world],
    ] {
        let (code, _, err) = run(&folder, &args);
        assert_eq!(code, Some(1), "{args:?} is refused: {err}");
        assert!(err.contains("is not a recount lab") && err.contains(folder.to_str().unwrap()), "{args:?} names the folder: {err}");
        assert_eq!(std::fs::read_to_string(folder.join("raw/sub/precious.txt")).unwrap(), "keep me", "{args:?}");
        let names: Vec<String> =
            std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, vec!["raw".to_string()], "{args:?} wrote nothing into the folder");
    }
    // A new folder, or an empty one, becomes a lab; reset then empties only what it made.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = run(&empty, &["land", "2026-10-15", "--world", &world]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(&empty, &["reset", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("is empty"), "{out}");
}

#[test]
fn a_landing_that_fails_after_its_commit_says_it_landed_and_reports_say_mid_landing_until_the_next_write() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    let world = world_arg(&w);
    assert_eq!(run(&lab, &["land", "2026-10-15", "--world", &world]).0, Some(0));
    // A correction of a.jsonl.gz; the place its superseded version goes cannot be made.
    w.file(
        "2026-10-15",
        "a.jsonl.gz",
        &[
            line("e1", "B1", "2026-10-15T09:00:00Z", "2026-10-15T12:00:00Z", 1500),
            line("e5", "B5", "2026-10-15T11:00:00Z", "2026-10-15T12:00:00Z", 100),
        ],
    );
    std::fs::write(lab.join("raw/versions"), "in the way").unwrap();
    let (code, _, err) = run(&lab, &["land", "2026-10-15", "--world", &world]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("landed:") && err.contains("the next command that writes"), "it says what is true: {err}");
    assert!(!err.contains("nothing of it was written") && !err.contains("as it was before"), "{err}");
    // Until it is finished, a check says the lab is mid-landing, not that the engines disagree.
    let (code, _, err) = run(&lab, &["check", "2026-10-15"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("mid-landing") && !err.contains("ENGINE DISAGREEMENT"), "{err}");
    // Mended, the next writing command finishes it, and the engines agree on the corrected file.
    std::fs::remove_file(lab.join("raw/versions")).unwrap();
    let (code, _, err) = run(&lab, &["run", "2026-10-15"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(&lab, &["check", "2026-10-15", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("mid-landing"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["detail"]["countries"][0]["recompute_revenue_minor"], 1600, "{out}");
    assert_eq!(v["detail"]["countries"][0]["v2_revenue_minor"], 1600, "{out}");
}

#[test]
fn a_world_cannot_make_recount_read_outside_itself_block_or_read_without_limit() {
    let dir = tempdir();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("stores.csv"), STORES).unwrap();
    std::fs::write(elsewhere.join("secret.csv"), "the-secret-first-line,x\n1,2\n").unwrap();
    let cases: Vec<(&str, HostileMaker, &str)> = vec![
        ("stores.csv linked to /dev/zero", Box::new(|w| link(w, "stores.csv", Path::new("/dev/zero"))), "outside the world"),
        (
            "stores.csv linked out of the world",
            Box::new(|w| link(w, "stores.csv", &w.join("../elsewhere/stores.csv"))),
            "outside the world",
        ),
        ("recount.toml linked to /dev/zero", Box::new(|w| link(w, "recount.toml", Path::new("/dev/zero"))), "outside the world"),
        ("a sparse 8 GiB stores.csv", Box::new(|w| sparse(&w.join("stores.csv"), 8 << 30)), "more than the"),
        ("a FIFO for stores.csv", Box::new(|w| fifo(&w.join("stores.csv"))), "not a regular file"),
        ("a FIFO for recount.toml", Box::new(|w| fifo(&w.join("recount.toml"))), "not a regular file"),
        ("stores.file up and out", Box::new(|w| describe_stores(w, "../elsewhere/secret.csv")), "must be a path inside the world"),
        ("stores.file absolute", Box::new(|w| describe_stores(w, "/etc/passwd")), "must be a path inside the world"),
        (
            "stores.file through a link",
            Box::new(|w| {
                link(w, "ref", &w.join("../elsewhere"));
                describe_stores(w, "ref/secret.csv");
            }),
            "outside the world",
        ),
        (
            "the events root through a link",
            Box::new(|w| {
                std::fs::rename(w.join("pos"), w.join("../elsewhere/pos")).unwrap();
                link(w, "pos", &w.join("../elsewhere/pos"));
            }),
            "outside the world",
        ),
    ];
    for (i, (what, make, says)) in cases.iter().enumerate() {
        let w = two_uploads(dir.path().join(format!("w{i}")));
        // The events root moves into `elsewhere` once; later worlds keep their own.
        let _ = std::fs::remove_dir_all(elsewhere.join("pos"));
        make(&w.root);
        let lab = dir.path().join(format!("lab{i}"));
        let world = w.root.to_str().unwrap();
        for args in [vec!["land", "2026-10-15", "--world", world], vec!["source", "check", world]] {
            let out = run_within(Duration::from_secs(60), exe().arg("--lab").arg(&lab).args(&args));
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}: {args:?} fails: {err}");
            assert!(err.contains(says), "{what}: {args:?} says {says:?}: {err}");
            assert!(!err.contains("the-secret-first-line") && !err.contains("root:"), "{what}: no content echoed: {err}");
        }
    }
}

/// What a hostile world's case does to an ordinary world.
type HostileMaker = Box<dyn Fn(&Path)>;

fn link(world: &Path, name: &str, to: &Path) {
    let _ = std::fs::remove_file(world.join(name));
    std::os::unix::fs::symlink(to, world.join(name)).unwrap();
}

fn sparse(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

fn describe_stores(world: &Path, file: &str) {
    std::fs::write(world.join("recount.toml"), format!("[stores]\nfile = \"{file}\"\n")).unwrap();
}

#[test]
fn figures_reconcile_completeness_never_exceeds_landed_and_the_summary_csv_names_its_currency() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    let world = world_arg(&w);
    assert_eq!(run(&lab, &["daily", "2026-10-15", "--world", &world]).0, Some(0));
    let before_correction = head_snapshot(&lab);
    // A correction withdraws B2; v2 rebuilds the date; a rollback brings B2 back into silver.
    w.file("2026-10-15", "a.jsonl.gz", &[line("e1", "B1", "2026-10-15T09:00:00Z", "2026-10-15T12:00:00Z", 1000)]);
    assert_eq!(run(&lab, &["daily", "2026-10-15", "--world", &world]).0, Some(0));
    let (code, _, err) = run(&lab, &["rollback", &before_correction.to_string(), "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    let (_, out, err) = run(&lab, &["promises", "2026-10-15"]);
    let completeness = out.lines().find(|l| l.contains("landed baskets accounted for")).unwrap_or_else(|| panic!("{out}{err}"));
    let numbers: Vec<i64> =
        completeness.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    assert!(numbers[0] <= numbers[1], "never more accounted for than landed: {completeness}");
    assert!(completeness.contains("no current file holds"), "the stale silver basket is named: {completeness}");

    let (code, csv, err) = run(&lab, &["summary", "--format", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    let header = csv.lines().next().unwrap();
    for col in
        ["revenue_minor", "revenue_currency", "revenue_digits", "change_revenue_minor", "change_revenue_currency", "change_revenue_digits"]
    {
        assert!(header.split(',').any(|h| h == col), "{col} in {header}");
    }
    assert!(csv.lines().count() > 1 && csv.lines().skip(1).all(|l| l.contains(",GBP,2,")), "{csv}");
}

/// The newest snapshot's id, as `recount snapshots` lists it.
fn head_snapshot(lab: &Path) -> i64 {
    let (_, csv, err) = run(lab, &["snapshots", "--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let at = rdr.headers().unwrap().iter().position(|h| h == "snapshot_id").unwrap_or_else(|| panic!("{csv}{err}"));
    rdr.records().map(|r| r.unwrap()[at].parse::<i64>().unwrap()).max().unwrap()
}

#[test]
fn beyond_window_rows_are_labelled_as_event_rows_and_are_never_a_cross_on_any_screen() {
    let dir = tempdir();
    let w = two_uploads(dir.path().join("world"));
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, &w.root);
    recount::lake::v2::run_upload(&lab, day("2026-10-15"), recount::store::TriggerKind::Upload, opts()).unwrap();
    let report = recount::lake::v2::run_upload(&lab, day("2026-10-20"), recount::store::TriggerKind::Upload, opts()).unwrap();
    assert!(report.render().contains("1 event row(s) of business date 2026-10-10"), "{}", report.render());
    recount::reports::freshen(&mut lab).unwrap();
    let o = recount::reports::overview::overview(&lab, &w.root).unwrap();
    let past = o.dates.iter().find(|d| d.business_date == day("2026-10-10")).expect("the late date is listed");
    assert!(!past.v2_off, "beyond the window by design is no ✗: {past:?}");
    let trend = recount::reports::table::render(&o.trend, recount::reports::Format::Table, false);
    assert!(!trend.contains("v2 ≠ recompute") && trend.contains("beyond window") && !trend.contains('✗'), "{trend}");
    // A real difference still is one.
    lab.store().connection_for_tests().execute_batch("UPDATE recompute.daily_store_sales SET revenue_minor = revenue_minor + 1").unwrap();
    let o = recount::reports::overview::overview(&lab, &w.root).unwrap();
    assert!(o.dates.iter().any(|d| d.v2_off), "{:?}", o.dates);
}

#[test]
fn trend_works_on_a_lab_only_daily_wrote_and_an_unknown_country_is_an_error() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    daily_both(&lab, &w);
    let (code, out, err) = run(&lab, &["trend"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("GB") && !err.contains("freshen"), "{out}{err}");
    let (code, _, err) = run(&lab, &["trend", "--country", "XX"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no country XX") && err.contains("GB"), "{err}");
}

#[test]
fn a_layout_that_takes_no_file_fails_and_an_upload_the_world_lacks_exits_1() {
    let dir = tempdir();
    let w = two_uploads(dir.path().join("world"));
    // Hourly folders below the partition, which the contract's template does not name.
    let part = w.root.join("pos/events/upload_date=2026-10-15");
    std::fs::create_dir_all(part.join("hour=07")).unwrap();
    std::fs::rename(part.join("a.jsonl.gz"), part.join("hour=07/a.jsonl.gz")).unwrap();
    std::fs::remove_dir_all(w.root.join("pos/events/upload_date=2026-10-20")).unwrap();
    let lab = dir.path().join("lab");
    let (code, _, err) = run(&lab, &["source", "check", &world_arg(&w)]);
    assert_eq!(code, Some(1), "a description that reads nothing fails: {err}");
    assert!(err.contains("took no file"), "{err}");
    let (code, out, err) = run(&lab, &["land", "2026-10-15", "--world", &world_arg(&w)]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("takes none of the 1 entry") && err.contains("hour=07"), "{err}");

    let w = two_uploads(dir.path().join("world2"));
    let (code, out, _) = run(&lab, &["land", "2030-01-01", "--world", &world_arg(&w)]);
    assert_eq!(code, Some(1), "asked to land what the world does not have: {out}");
    assert!(out.contains("no such partition"), "{out}");
    let (code, _, _) = run(&lab, &["daily", "2030-01-01", "--world", &world_arg(&w)]);
    assert_eq!(code, Some(1));
}

#[test]
fn landing_the_original_again_after_a_correction_says_it_reverts_the_correction() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    let world = world_arg(&w);
    let original = std::fs::read(w.root.join("pos/events/upload_date=2026-10-15/a.jsonl.gz")).unwrap();
    assert_eq!(run(&lab, &["land", "2026-10-15", "--world", &world]).0, Some(0));
    w.file("2026-10-15", "a.jsonl.gz", &[line("e1", "B1", "2026-10-15T09:00:00Z", "2026-10-15T12:00:00Z", 1500)]);
    let (_, out, _) = run(&lab, &["land", "2026-10-15", "--world", &world]);
    assert!(out.contains("a.jsonl.gz v2") && !out.contains("reverts"), "{out}");
    std::fs::write(w.root.join("pos/events/upload_date=2026-10-15/a.jsonl.gz"), original).unwrap();
    let (code, out, err) = run(&lab, &["land", "2026-10-15", "--world", &world]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("a.jsonl.gz v3: has the bytes of v1, so it reverts v2"), "{out}");
}

#[test]
fn a_rollback_asks_first_and_a_rollback_to_what_is_current_writes_nothing() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    daily_both(&lab, &w);
    let snapshots = || run(&lab, &["snapshots", "--format", "csv"]).1.lines().count();
    let before = snapshots();
    let fp = run(&lab, &["fingerprint"]).1;
    let (code, _, err) = run(&lab, &["rollback", "1"]);
    assert_eq!(code, Some(2), "no terminal, no --yes: refused: {err}");
    assert!(err.contains("--yes") && err.contains("back as they were at snapshot 1"), "{err}");
    assert_eq!((snapshots(), run(&lab, &["fingerprint"]).1), (before, fp.clone()), "nothing written");
    let (code, _, err) = run(&lab, &["rollback", "1", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(snapshots(), before + 1);
    let (code, out, err) = run(&lab, &["rollback", "1", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("already current") && out.contains("no snapshot written"), "{out}");
    assert_eq!(snapshots(), before + 1, "the second rollback wrote nothing");
}

#[test]
fn a_reopening_needs_a_name_and_history_says_who_reopened_and_why() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    daily_both(&lab, &w);
    let out = exe().env_remove("USER").arg("--lab").arg(&lab).args(["reopen", "2026-10-10", "--reason", "late till"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--by NAME"), "{}", String::from_utf8_lossy(&out.stderr));
    let (code, _, err) = run(&lab, &["reopen", "2026-10-10", "--reason", "late till", "--by", "ana"]);
    assert_eq!(code, Some(0), "{err}");
    let (_, csv, _) = run(&lab, &["history", "2026-10-10", "--format", "csv"]);
    let last = csv.lines().last().unwrap();
    assert!(last.contains("reopened by ana: late till: +1 basket"), "{csv}");
}

#[test]
fn an_upload_dated_in_the_future_lands_with_a_word_and_a_gzip_bomb_is_named_for_what_it_is() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    w.file("2099-01-01", "a.jsonl.gz", &[line("f1", "F1", "2099-01-01T09:00:00Z", "2099-01-01T12:00:00Z", 100)]);
    let (code, out, err) = run(&lab, &["land", "2099-01-01", "--world", &world_arg(&w)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("upload 2099-01-01 is dated after today"), "{out}");
    let (_, out, _) = run(&lab, &["land", "2026-10-15", "--world", &world_arg(&w)]);
    assert!(!out.contains("dated after today"), "{out}");

    // 300 MiB of nothing, gzipped: past the 256 MiB one raw file may inflate to.
    let part = w.root.join("pos/events/upload_date=2026-10-20");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..300 {
        std::io::Write::write_all(&mut gz, &zeros).unwrap();
    }
    std::fs::write(part.join("b.jsonl.gz"), gz.finish().unwrap()).unwrap();
    let (code, out, _) = run(&lab, &["land", "2026-10-20", "--world", &world_arg(&w)]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("HELD BACK") && out.contains("inflates to more than 256 MiB"), "{out}");
    assert!(!out.contains("truncated or corrupt"), "{out}");
    // Under a small budget the files inflating at once share a quarter of it: one file may hold
    // no more than that, and says so.
    let (code, out, _) = run(&dir.path().join("small"), &["land", "2026-10-20", "--world", &world_arg(&w), "--memory", "64MB"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("inflates to more than 16 MiB, the most one raw file may hold within the memory budget"), "{out}");
}

#[test]
fn the_json_of_every_report_is_one_envelope_and_csv_carries_major_units_without_needless_apostrophes() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let w = two_uploads(dir.path().join("world"));
    daily_both(&lab, &w);
    for (args, kind, date) in [
        (vec!["check", "2026-10-15"], "check", Some("2026-10-15")),
        (vec!["history", "2026-10-15"], "history", Some("2026-10-15")),
        (vec!["late"], "late", None),
        (vec!["quarantine"], "quarantine", None),
        (vec!["snapshots"], "snapshots", None),
        (vec!["summary"], "summary", None),
        (vec!["trend"], "trend", None),
        (vec!["fingerprint"], "fingerprint", None),
    ] {
        let mut all = args.clone();
        all.extend(["--format", "json"]);
        let (code, out, err) = run(&lab, &all);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["business_date", "currency_digits", "detail", "kind", "rows"], "{args:?}");
        assert_eq!(v["kind"], kind, "{args:?}");
        assert_eq!(v["business_date"].as_str(), date, "{args:?}");
        assert!(v["rows"].is_array(), "{args:?}");
    }
    let (_, csv, _) = run(&lab, &["history", "2026-10-15", "--format", "csv"]);
    assert!(csv.contains(",+2 baskets,") || csv.contains(",\"+2 baskets, "), "a signed count in words has no apostrophe: {csv}");
    assert!(!csv.contains("'+"), "{csv}");
    let header = csv.lines().next().unwrap();
    assert!(header.contains("revenue_minor,revenue_currency,revenue_digits,revenue_major"), "{header}");
    assert!(csv.lines().nth(1).unwrap().contains(",3000,GBP,2,30.00,"), "{csv}");
    let (_, bom, _) = run(&lab, &["history", "2026-10-15", "--format", "csv", "--bom"]);
    assert_eq!(bom.strip_prefix('\u{feff}'), Some(csv.as_str()), "--bom adds the mark and nothing else");
}

/// A closed date names only uploads that landed: the sample's first upload is 2026-10-12, so the
/// window of 2026-10-12 (uploads 2026-10-11 to 2026-10-14) is awaited from 2026-10-12 on, and no
/// sentence names an upload 2026-10-11 that never was.
#[test]
fn a_closed_date_names_only_uploads_that_landed() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    ok(&lab, &["daily", "2026-10-12", "2026-10-14"]);
    let text = ok(&lab, &["check", "2026-10-12"]);
    assert!(text.contains("closed: uploads 2026-10-12 to 2026-10-14 have all landed"), "{text}");
    assert!(!text.contains("2026-10-11"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&ok(&lab, &["--format", "json", "check", "2026-10-12"])).unwrap();
    assert_eq!(v["detail"]["status"]["window_first_upload"], "2026-10-11", "the rule's window is unchanged: {v}");
    assert_eq!(v["detail"]["status"]["window_awaited_from"], "2026-10-12", "{v}");
}

/// `diff` names the snapshot at which the date changed, and the later one it was read at, from
/// the lab's own history; no "version" it never explains. After `daily` to 2026-10-19 on the
/// sample, 2026-10-12 last changed well before the newest snapshot.
#[test]
fn diff_names_the_snapshot_at_which_the_date_changed() {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    ok(&lab, &["daily", "2026-10-12", "2026-10-19"]);
    let h: serde_json::Value = serde_json::from_str(&ok(&lab, &["--format", "json", "history", "2026-10-12"])).unwrap();
    let ids: Vec<i64> = h["detail"]["entries"].as_array().unwrap().iter().map(|e| e["snapshot_id"].as_i64().unwrap()).collect();
    let (before, changed, newest) = (ids[ids.len() - 2], ids[ids.len() - 1], h["detail"]["as_of_snapshot"].as_i64().unwrap());
    assert!(changed < newest, "the date changed before the newest snapshot: {ids:?}, {newest}");
    let text = ok(&lab, &["diff", "2026-10-12"]);
    assert_eq!(
        text.lines().next().unwrap(),
        format!("diff 2026-10-12: the date as snapshot {before} wrote it → as snapshot {changed} wrote it (still so at snapshot {newest})")
    );
    assert!(!text.contains("version"), "{text}");
}
