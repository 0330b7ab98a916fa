//! End to end: the real binary in tmux. It opens the explorer on a fresh default lab (built from
//! the bundled sample world), moves to a date, retries v1 and sees the doubling, rebuilds, quits,
//! and the terminal is restored.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn screen(session: &str) -> String {
    tmux(&["capture-pane", "-p", "-t", session])
}

fn wait_for(session: &str, what: &str, secs: u64) -> String {
    wait_until(session, &format!("'{what}'"), secs, |s| s.contains(what))
}

/// The screen once `ready` holds for it; `what` names the wait in the panic after `secs`.
fn wait_until(session: &str, what: &str, secs: u64, ready: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let s = screen(session);
        if ready(&s) {
            return s;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            panic!("waited {secs}s for {what}; screen:\n{s}");
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}

fn keys(session: &str, keys: &[&str]) {
    let mut args = vec!["send-keys", "-t", session];
    args.extend_from_slice(keys);
    tmux(&args);
}

/// The v1 runs figure of the GB row on the Overview screen.
fn gb_v1_runs(s: &str) -> String {
    let line = s.lines().find(|l| l.contains("GB ") && l.contains('£')).unwrap_or_else(|| panic!("no GB row:\n{s}"));
    // Under the "v1 runs" header: numbers are right-aligned to the column's end.
    let header = s.lines().find(|l| l.contains("v1 runs")).unwrap_or_else(|| panic!("no v1 runs column:\n{s}"));
    let end = header[..header.find("v1 runs").unwrap()].chars().count() + "v1 runs".len();
    line.chars().take(end).collect::<String>().split(|c: char| c.is_whitespace() || c == '│').rfind(|w| !w.is_empty()).unwrap().to_string()
}

#[test]
fn explorer_retries_v1_rebuilds_and_restores_the_terminal() {
    assert!(Command::new("tmux").arg("-V").output().is_ok(), "tmux is required: .ci/run installs it (apt-get install tmux)");
    let home = tempfile::tempdir().unwrap();
    let session = format!("recount-e2e-{}", std::process::id());
    let cmd = format!(
        "env -u RECOUNT_LAB XDG_DATA_HOME={} TERM=xterm-256color {} 2>/dev/null; echo EXITED-$?; sleep 60",
        home.path().display(),
        env!("CARGO_BIN_EXE_recount")
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "120", "-y", "40", &cmd]);
    let guard = scopeguard(&session);

    let s = wait_for(&session, "per country", 120);
    assert!(s.contains("1 Overview"), "{s}");
    // Jump to the third sample day, whose window has long closed.
    keys(&session, &[":"]);
    wait_for(&session, "go to date", 10);
    keys(&session, &["10-14", "Enter"]);
    let s = wait_for(&session, "2026-10-14 per country", 30);
    assert_eq!(gb_v1_runs(&s), "1", "the sample lab ran v1 once per day:\n{s}");
    keys(&session, &["v"]);
    let s = wait_for(&session, "v1 for 2026-10-14 appended", 30);
    let s = if gb_v1_runs(&s) == "2" {
        s
    } else {
        std::thread::sleep(Duration::from_secs(1));
        screen(&session)
    };
    assert_eq!(gb_v1_runs(&s), "2", "the retry doubled v1:\n{s}");
    // The Trend screen shows the retry as a spike on that day, in the chart and its table.
    keys(&session, &["7"]);
    wait_for(&session, "GB revenue per business date: v1 spikes on 10-14", 30);
    // The title can be on screen a frame before the table under it: give the table's row time.
    let s = wait_until(&session, "the table's row of 2026-10-14 marked as a v1 spike", 30, |s| {
        s.lines().any(|l| l.contains("2026-10-14") && l.contains("v1 spike"))
    });
    let row = s.lines().find(|l| l.contains("2026-10-14")).unwrap_or_else(|| panic!("the table lists 2026-10-14:\n{s}"));
    assert!(row.contains("v1 spike"), "the doubled day's row is marked:\n{s}");
    assert_eq!(s.lines().filter(|l| l.contains("2026-10-") && l.contains("v1 spike")).count(), 1, "only the retried day spikes:\n{s}");
    keys(&session, &["1"]);
    keys(&session, &["r"]);
    wait_for(&session, "Rebuild 2026-10-14", 30);
    keys(&session, &["y"]);
    wait_for(&session, "v2 found the inputs of 2026-10-14 unchanged: nothing was rebuilt", 30);
    keys(&session, &["q"]);
    let s = wait_for(&session, "EXITED-0", 30);
    assert!(!s.contains("per country"), "the alternate screen is gone after quitting:\n{s}");
    assert_eq!(tmux(&["display-message", "-p", "-t", &session, "#{alternate_on}"]).trim(), "0", "terminal restored");
    drop(guard);
}

struct Kill(String);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.0]).output();
    }
}
fn scopeguard(s: &str) -> Kill {
    Kill(s.to_string())
}

#[test]
fn recount_lab_naming_a_new_directory_gets_the_first_run_lab_and_opens_on_it() {
    let home = tempfile::tempdir().unwrap();
    let lab = home.path().join("fresh").join("lab");
    let session = format!("recount-e2e-env-{}", std::process::id());
    let cmd = format!(
        "env RECOUNT_LAB={} XDG_DATA_HOME={} TERM=xterm-256color {} tui; echo EXITED-$?; sleep 60",
        lab.display(),
        home.path().join("xdg").display(),
        env!("CARGO_BIN_EXE_recount")
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "120", "-y", "40", &cmd]);
    let guard = scopeguard(&session);
    let s = wait_for(&session, "per country", 120);
    assert!(!s.contains("Press U"), "the default lab, wherever RECOUNT_LAB points, is built on first run:\n{s}");
    // It opens on yesterday: the business date of the newest landed upload (the first run holds
    // back the sample's newest two, 10-31 and 11-01).
    assert!(s.contains("2026-10-30 per country"), "the explorer opens on the newest landed upload's date:\n{s}");
    // With the morning's line: what the newest run moved (`recount summary`'s first line).
    let s = wait_for(&session, "upload 2026-10-30 moved 2026-10-", 30);
    assert!(s.contains("(provisional)"), "the banner says which dates are still provisional:\n{s}");
    keys(&session, &["q"]);
    wait_for(&session, "EXITED-0", 30);
    assert!(lab.join("recount.duckdb").exists(), "the lab was built where RECOUNT_LAB points");
    drop(guard);
}

/// A lab landed from a foreign shape (the Kafka Connect export of the sample world, read through
/// its recount.toml): every screen of the explorer opens on it and shows its numbers.
#[test]
fn every_screen_opens_on_a_lab_landed_from_a_foreign_shape() {
    let home = tempfile::tempdir().unwrap();
    let (world, lab) = (home.path().join("kafka"), home.path().join("lab"));
    let exe = env!("CARGO_BIN_EXE_recount");
    let run = |args: &[&str]| {
        let out = Command::new(exe).arg("--lab").arg(&lab).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["generate", "--out", world.to_str().unwrap(), "--shape", "kafka-connect"]);
    run(&["daily", "2026-10-12", "2026-10-20", "--world", world.to_str().unwrap()]);
    let session = format!("recount-e2e-shape-{}", std::process::id());
    let cmd = format!(
        "env XDG_DATA_HOME={} TERM=xterm-256color {exe} --lab {} tui --world {}; echo EXITED-$?; sleep 60",
        home.path().join("xdg").display(),
        lab.display(),
        world.display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "140", "-y", "45", &cmd]);
    let guard = scopeguard(&session);
    let s = wait_for(&session, "per country", 120);
    assert!(s.contains('£') && s.contains('₹'), "the Overview shows the shape's sales in their currencies:\n{s}");
    for (key, title) in
        [("2", "Explain"), ("3", "Baskets"), ("4", "Late & quarantine"), ("5", "History"), ("6", "Promises"), ("1", "per country")]
    {
        keys(&session, &[key]);
        let s = wait_for(&session, title, 30);
        assert!(!s.contains("Error:") && !s.contains("failed"), "{title} on a foreign-shape lab:\n{s}");
    }
    keys(&session, &["q"]);
    wait_for(&session, "EXITED-0", 30);
    drop(guard);
}

/// `tui --audit`: the explorer opens on the Audit screen with the walkthrough's foreign gold
/// (`generate --foreign-gold`). The dates with a wrong row carry the audit's mark, a faulty row
/// names its cause, Enter opens it with both sides and the store's re-sent baskets, and `e`
/// exports the date's rows as every other screen's.
#[test]
fn the_audit_screen_marks_the_wrong_dates_names_each_cause_and_drills_to_the_baskets() {
    let home = tempfile::tempdir().unwrap();
    let (lab, gold) = (home.path().join("lab"), home.path().join("theirs.csv"));
    let exe = env!("CARGO_BIN_EXE_recount");
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let run = |args: &[&str]| {
        let out = Command::new(exe).arg("--lab").arg(&lab).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    run(&["daily", "2026-10-12", "2026-11-01", "--world", sample.to_str().unwrap()]);
    let said = run(&["generate", "--foreign-gold", "--out", gold.to_str().unwrap()]);
    // The row whose re-sent copies were counted: "  2026-10-13 GB001: duplicates_counted".
    let dup = said.lines().find(|l| l.ends_with(": duplicates_counted")).unwrap_or_else(|| panic!("{said}"));
    let (date, store) = dup.trim().trim_end_matches(": duplicates_counted").split_once(' ').unwrap();
    let wrong_dates: std::collections::BTreeSet<&str> = said.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    let session = format!("recount-e2e-audit-{}", std::process::id());
    let cmd = format!(
        "cd {} && env XDG_DATA_HOME={} TERM=xterm-256color {exe} --lab {} tui --audit {}; echo EXITED-$?; sleep 60",
        home.path().display(),
        home.path().join("xdg").display(),
        lab.display(),
        gold.display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "160", "-y", "50", &cmd]);
    let guard = scopeguard(&session);
    // It opens on the first date with a wrong row.
    let first_wrong = wrong_dates.iter().next().unwrap();
    let title = format!("audit of {} for {first_wrong}", gold.display());
    // A frame can be captured half drawn: wait for the whole navigator under the title.
    let s = wait_until(&session, &title, 120, |s| s.contains(&title) && s.lines().filter(|l| l.contains('≠')).count() >= wrong_dates.len());
    let marked = s.lines().filter(|l| l.contains('≠')).count();
    assert_eq!(marked, wrong_dates.len(), "the navigator marks each date with a wrong row: {wrong_dates:?}\n{s}");
    // The title gives the total and its dates; under the rows, where the wrong rows fall.
    let days: Vec<&str> = wrong_dates.iter().map(|d| &d[5..]).collect();
    let total = said.lines().skip(1).filter(|l| l.contains(": ")).count();
    let told = format!("{total} wrong in all, on {} dates, {} to {})", days.len(), days[0], days[days.len() - 1]);
    assert!(s.contains(&told), "{told}\n{s}");
    assert!(s.contains("wrong rows are in") && s.contains("against its share") && s.contains("week of "), "{s}");
    keys(&session, &[":"]);
    wait_for(&session, "go to date", 10);
    keys(&session, &[&date[5..], "Enter"]);
    wait_for(&session, &format!("audit of {} for {date}", gold.display()), 30);
    // The drill-down lists the date's baskets: wait until its view has loaded (the Baskets
    // screen draws it), then come back.
    keys(&session, &["3"]);
    wait_for(&session, &format!("{date}: "), 30);
    keys(&session, &["8"]);
    // The title can be drawn a frame before the rows under it: wait for the duplicate's row.
    let title = format!("audit of {} for {date}", gold.display());
    let has_row = |s: &str| s.lines().any(|l| l.contains(store) && l.contains("duplicates_counted"));
    let s = wait_until(&session, &format!("{store}'s duplicates_counted row"), 30, |s| s.contains(&title) && has_row(s));
    let row = s.lines().position(|l| l.contains(store) && l.contains("duplicates_counted")).unwrap_or_else(|| panic!("{store}:\n{s}"));
    // Down to that row (the table's first row is under the cursor), then open it.
    let first = s.lines().position(|l| l.contains(&date[..4]) && (l.contains("matches") || l.contains('_'))).unwrap();
    for _ in first..row {
        keys(&session, &["j"]);
    }
    keys(&session, &["Enter"]);
    // Opened before the date's reports arrive, the row is drawn again with its baskets.
    let s = wait_for(&session, &format!("re-sent baskets of {store} on the date"), 30);
    assert!(s.contains(&format!("{date} {store}: duplicates_counted")) && s.contains("theirs:") && s.contains("right:"), "{s}");
    keys(&session, &["Escape"]);
    // An Escape and a key sent at once reach the app as one Alt chord: the popup closes first.
    wait_until(&session, "the popup closed", 30, |s| !s.contains("(Esc closes)"));
    keys(&session, &["e"]);
    let s = wait_for(&session, "exported the", 30);
    let file = home.path().join(format!("recount-audit-{date}.csv"));
    let csv = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}\n{s}", file.display()));
    assert!(csv.lines().any(|l| l.contains(store) && l.contains("duplicates_counted")), "{csv}");
    keys(&session, &["q"]);
    wait_for(&session, "EXITED-0", 30);
    drop(guard);
}

/// The explorer on a lab of a model of one's own (examples/parcels): every screen opens in the
/// model's words; a retried v1 says what it appended, a rebuild of an unchanged date is skipped,
/// a rollback asks first, and the next upload of a world whose every upload has landed says so.
#[test]
fn every_screen_opens_on_a_lab_of_a_model_of_one_s_own() {
    let home = tempfile::tempdir().unwrap();
    let lab = home.path().join("lab");
    let exe = env!("CARGO_BIN_EXE_recount");
    let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("examples/parcels");
    let run = |args: &[&str]| {
        let out = Command::new(exe).arg("--lab").arg(&lab).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["land", "2026-03-02", "--world", world.to_str().unwrap()]);
    run(&["run", "2026-03-02"]);
    run(&["naive", "2026-03-02", "2026-03-02"]);
    let session = format!("recount-e2e-model-{}", std::process::id());
    let cmd = format!(
        "env XDG_DATA_HOME={} TERM=xterm-256color {exe} --lab {} tui --world {}; echo EXITED-$?; sleep 60",
        home.path().join("xdg").display(),
        lab.display(),
        world.display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "160", "-y", "45", &cmd]);
    let guard = scopeguard(&session);
    let s = wait_for(&session, "gold.daily_deliveries, v1 and v2 beside the recount", 60);
    assert!(s.contains("parcels v2") && s.contains("weight_g v2"), "the Overview names the model's measures:\n{s}");
    for (key, title) in [
        ("2", "recompute - missed + double counted = v1"),
        ("3", "re-sent parcel(s)"),
        ("4", "row(s) beyond the 2-day window"),
        ("5", "history of 2026-03-"),
        ("6", "landed parcels accounted for"),
        // The trend is every model's: the chart of its first series, a measure here.
        ("7", "parcels per business date"),
        // The Audit screen serves every lab: with no foreign gold, it says how to give one.
        ("8", "No foreign gold to audit: `recount tui --audit SOURCE`"),
        ("1", "v1 and v2 beside the recount"),
    ] {
        keys(&session, &[key]);
        let s = wait_for(&session, title, 30);
        assert!(!s.contains("Error") && !s.contains("loading"), "{title}:\n{s}");
    }
    keys(&session, &["v"]);
    wait_for(&session, "v1 for 2026-03-01 appended", 30);
    keys(&session, &["r"]);
    wait_for(&session, "Rebuild 2026-03-01 with v2", 30);
    keys(&session, &["y"]);
    wait_for(&session, "v2 found the inputs of 2026-03-01 unchanged", 30);
    // b on History asks before it rolls back to the row's snapshot; n changes nothing.
    keys(&session, &["5"]);
    wait_for(&session, "history of 2026-03-01", 30);
    keys(&session, &["b"]);
    wait_for(&session, "back to snapshot 1?", 30);
    keys(&session, &["n"]);
    wait_until(&session, "the question closed", 30, |s| !s.contains("back to snapshot 1?"));
    keys(&session, &["U"]);
    wait_for(&session, "every upload of the world has landed", 30);
    keys(&session, &["Escape"]);
    wait_until(&session, "the popup closed", 30, |s| !s.contains("every upload of the world"));
    keys(&session, &["q"]);
    wait_for(&session, "EXITED-0", 30);
    drop(guard);
}

/// The presenter's demo on an 80x24 screen: whenever it pauses, the step's narration is on screen,
/// no sentence that carries a figure is cut to `…`, and a step taller than the screen shows its
/// gist and offers the rest, under which the narration is shown again.
#[test]
fn the_demo_pauses_at_80x24_with_every_step_s_narration_on_screen() {
    let home = tempfile::tempdir().unwrap();
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let session = format!("recount-e2e-demo-{}", std::process::id());
    let cmd = format!(
        "env TERM=xterm-256color {} --lab {} demo --world {}; echo EXITED-$?; sleep 60",
        env!("CARGO_BIN_EXE_recount"),
        home.path().join("lab").display(),
        sample.display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "80", "-y", "24", &cmd]);
    let guard = scopeguard(&session);
    let paused =
        |s: &str| s.lines().rfind(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with("[press Enter]") || l.starts_with("[Enter:"));
    let (mut step, mut offered_more) = (1, false);
    loop {
        let s = wait_until(&session, &format!("step {step} to pause"), 60, |s| {
            (paused(s) && s.contains(&format!("── step {step}: "))) || s.contains("EXITED-")
        });
        if s.contains("EXITED-") {
            assert!(s.contains("EXITED-0") && s.contains("The explorer shows all of this"), "{s}");
            break;
        }
        let cut: Vec<&str> = s.lines().filter(|l| l.trim_end().ends_with('…') && l.chars().any(|c| c.is_ascii_digit())).collect();
        assert!(cut.is_empty(), "a figure-bearing line cut at step {step}: {cut:?}\n{s}");
        let prompt = s.lines().rfind(|l| !l.trim().is_empty()).unwrap().to_string();
        if prompt.starts_with("[Enter:") && !offered_more {
            // The rest on request: all of the step, and its narration again above the prompt.
            offered_more = true;
            keys(&session, &["m", "Enter"]);
            let s = wait_until(&session, "the rest of the step", 30, |s| {
                s.lines().rfind(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with("[press Enter]"))
            });
            assert!(s.contains(&format!("── step {step}: ")), "the narration under the rest:\n{s}");
        }
        keys(&session, &["Enter"]);
        step += 1;
    }
    assert!(offered_more && step > 12, "{step} steps, the rest offered: {offered_more}");
    drop(guard);
}
