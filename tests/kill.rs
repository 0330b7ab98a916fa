//! Kill anywhere: the real binary is killed (SIGKILL) at several moments, or ended at a named
//! crash point, in each command that writes. After each kill, three things must hold: the next
//! command works; finishing the same commands gives the fingerprint a clean lab gives; and
//! `check` finds the two engines agreeing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// How a command is stopped: killed after a share (in thousandths) of the time it takes when left
/// to finish, or ended at a crash point.
#[derive(Debug, Clone, Copy)]
enum Stop {
    After(u32),
    At(&'static str),
}

/// Runs the command and stops it. Each stop must have stopped something: a crash point must
/// fire (the process aborts there; a renamed point would let it finish), and a delayed kill
/// must find the child still running.
fn stopped(lab: &Path, args: &[String], stop: Stop, takes: Duration) {
    use std::os::unix::process::ExitStatusExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_recount"));
    cmd.arg("--lab").arg(lab).args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    match stop {
        Stop::At(point) => {
            cmd.env("RECOUNT_CRASH_AT", point);
            let status = cmd.status().unwrap();
            assert_eq!(status.signal(), Some(libc::SIGABRT), "{args:?}: the crash point {point} never fired ({status})");
        }
        Stop::After(share) => {
            let mut child = cmd.spawn().unwrap();
            let delay = takes * share / 1000;
            std::thread::sleep(delay);
            assert!(
                child.try_wait().unwrap().is_none(),
                "{args:?}: finished before the kill at {delay:?} (it takes {takes:?}): the stop tested nothing"
            );
            child.kill().unwrap();
            let _ = child.wait();
        }
    }
}

/// How long `args` takes on a copy of `prepared`, left to finish.
fn duration_of(prepared: &Path, args: &[String]) -> Duration {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    if prepared.exists() {
        copy_dir(prepared, &lab);
    }
    let started = std::time::Instant::now();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&lab, &args);
    started.elapsed()
}

/// The small world with its corrections, and the world as it is once they arrived.
struct Worlds {
    _dir: tempfile::TempDir,
    world: PathBuf,
    correction: PathBuf,
    corrected_upload: String,
    now: PathBuf,
}

fn worlds() -> &'static Worlds {
    static W: OnceLock<Worlds> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempdir();
        let world = dir.path().join("world");
        copy_dir(small_world(), &world);
        let cs = recount::world::corrections::write(&world).unwrap();
        let c = cs.into_iter().find(|c| c.kind == recount::world::corrections::CorrectionKind::ChangedAmounts).unwrap();
        let now = dir.path().join("now");
        copy_dir(&world, &now);
        copy_dir(&c.dir.join("pos"), &now.join("pos"));
        Worlds { world, correction: c.dir.clone(), corrected_upload: c.upload_date.to_string(), now, _dir: dir }
    })
}

fn span() -> (String, String) {
    let ups = uploads(&worlds().world);
    (ups[0].to_string(), ups.last().unwrap().to_string())
}

fn fingerprint_of(lab: &Path) -> String {
    ok(lab, &["fingerprint"]).trim().to_string()
}

/// The fingerprint of a clean lab: `world` landed and run forwards.
fn clean(world: &Path) -> String {
    let dir = tempdir();
    let lab = dir.path().join("lab");
    let (first, last) = span();
    ok(&lab, &["land", &first, &last, "--world", world.to_str().unwrap()]);
    ok(&lab, &["run", &first, &last]);
    fingerprint_of(&lab)
}

/// For each stop: a copy of the prepared lab, the command stopped, then the checks.
fn harness(prepared: &Path, killed: &[String], finish: &[Vec<String>], want: &str, stops: &[Stop]) {
    let (first, _) = span();
    let takes = duration_of(prepared, killed);
    for (i, stop) in stops.iter().enumerate() {
        let dir = tempdir();
        let lab = dir.path().join("lab");
        if prepared.exists() {
            copy_dir(prepared, &lab);
        }
        stopped(&lab, killed, *stop, takes);
        // The next command works (it waits for the dead holder's lock, recovers a landing). A
        // command killed before it made the lab leaves none, which a report says.
        let after = recount(&lab, &["fingerprint"]);
        let said = String::from_utf8_lossy(&after.stderr);
        assert!(after.status.success() || said.contains("no lab at"), "{killed:?} {stop:?} (#{i}): {said}");
        // The raw zone and bronze agree before anything is redone: the two engines agree (a lab
        // with nothing landed yet has no date to check, and says so).
        let check = recount(&lab, &["check", &first]);
        let said = String::from_utf8_lossy(&check.stderr);
        let nothing_yet = said.contains("no lab at") || said.contains("holds no business dates yet");
        assert!(
            check.status.code() == Some(0) || (check.status.code() == Some(1) && nothing_yet),
            "{killed:?} {stop:?}: check right after: {}{said}",
            String::from_utf8_lossy(&check.stdout)
        );
        for args in finish {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(&lab, &args);
        }
        assert_eq!(fingerprint_of(&lab), want, "{killed:?} {stop:?}: finishing gives the clean lab's fingerprint");
        for d in [first.as_str(), "2026-10-20"] {
            let out = recount(&lab, &["check", d]);
            assert_eq!(out.status.code(), Some(0), "{killed:?} {stop:?}: check {d}: {}", String::from_utf8_lossy(&out.stdout));
        }
    }
}

fn args(s: &[&str]) -> Vec<String> {
    s.iter().map(|a| a.to_string()).collect()
}

/// Kills at 1%, 15%, 30% and 50% of the command's own time: early, in the middle, late.
const DELAYS: [Stop; 4] = [Stop::After(10), Stop::After(150), Stop::After(300), Stop::After(500)];

/// A lab with every upload landed (and run, when `run`), prepared once per test.
fn prepared(dir: &Path, run: bool) -> PathBuf {
    let lab = dir.join("prepared");
    let (first, last) = span();
    ok(&lab, &["land", &first, &last, "--world", worlds().world.to_str().unwrap()]);
    if run {
        // Run by run: a snapshot per upload, so that a rollback has one in the middle to go to.
        ok(&lab, &["run", &first, &last, "--per-upload"]);
    }
    lab
}

#[test]
fn a_landing_killed_anywhere_recovers_and_finishes_clean() {
    let (first, last) = span();
    let w = worlds().world.to_str().unwrap().to_string();
    let land = args(&["land", &first, &last, "--world", &w]);
    let stops = [&DELAYS[..], &[Stop::At("landing:write"), Stop::At("landing:fsync"), Stop::At("landing:committed")]].concat();
    harness(Path::new("/nonexistent"), &land, &[land.clone(), args(&["run", &first, &last])], &clean(&worlds().world), &stops);
}

#[test]
fn a_backfill_or_a_rebuild_killed_anywhere_finishes_clean() {
    let dir = tempdir();
    let (first, last) = span();
    let want = clean(&worlds().world);
    let landed = prepared(dir.path(), false);
    let back = args(&["run", &last, &first]);
    harness(&landed, &back, std::slice::from_ref(&back), &want, &DELAYS);
    let built = dir.path().join("built");
    copy_dir(&landed, &built);
    ok(&built, &["run", &first, &last]);
    let rebuild = args(&["rebuild", "2026-10-14", "2026-10-15", "2026-10-16", "--force"]);
    harness(&built, &rebuild, std::slice::from_ref(&rebuild), &want, &DELAYS[..3]);
}

#[test]
fn a_rollback_or_a_reset_killed_anywhere_finishes_clean() {
    let dir = tempdir();
    let (first, last) = span();
    let built = prepared(dir.path(), true);
    let target = "5";
    let then = ok(&built, &["fingerprint", "--as-of", target]).trim().to_string();
    let rollback = args(&["rollback", target, "--yes"]);
    harness(&built, &rollback, std::slice::from_ref(&rollback), &then, &DELAYS[..3]);
    let w = worlds().world.to_str().unwrap().to_string();
    let again = [args(&["reset", "--yes"]), args(&["land", &first, &last, "--world", &w]), args(&["run", &first, &last])];
    let stops = [&DELAYS[..2], &[Stop::At("reset:marked"), Stop::At("reset:database-removed")]].concat();
    harness(&built, &args(&["reset", "--yes"]), &again, &clean(&worlds().world), &stops);
}

#[test]
fn daily_and_a_correction_killed_anywhere_finish_clean() {
    let dir = tempdir();
    let (first, last) = span();
    let w = worlds().world.to_str().unwrap().to_string();
    let daily = args(&["daily", &first, &last, "--world", &w]);
    harness(Path::new("/nonexistent"), &daily, std::slice::from_ref(&daily), &clean(&worlds().world), &DELAYS);
    let built = prepared(dir.path(), true);
    let u = worlds().corrected_upload.clone();
    let land = args(&["land", &u, "--world", worlds().correction.to_str().unwrap()]);
    let stops = [&DELAYS[..3], &[Stop::At("landing:fsync"), Stop::At("landing:committed"), Stop::At("landing:set-aside")]].concat();
    harness(&built, &land, &[land.clone(), args(&["run", &u])], &clean(&worlds().now), &stops);
}
