//! Readers while a writer works: reports open the lab read-only, so they run beside an open
//! explorer; a writer in another process makes the explorer let go and reload; and a lab the
//! user cannot write is read, and never changed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::{copy_dir, ok, recount};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux runs (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_for(session: &str, what: &str, secs: u64) -> String {
    let start = Instant::now();
    loop {
        let s = tmux(&["capture-pane", "-p", "-t", session]);
        if s.contains(what) {
            return s;
        }
        assert!(start.elapsed() < Duration::from_secs(secs), "waited {secs}s for '{what}'; screen:\n{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

/// A lab built day by day over the first days of the sample world.
fn sample_lab(dir: &Path) -> PathBuf {
    let lab = dir.join("lab");
    ok(&lab, &["daily", "2026-10-12", "2026-10-20"]);
    lab
}

#[test]
fn reports_run_beside_the_open_explorer_and_another_process_s_write_makes_it_reload() {
    let dir = common::tempdir();
    let lab = sample_lab(dir.path());
    let session = format!("recount-readers-{}", std::process::id());
    // The explorer runs with a config file that rebinds "go to date" to J.
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("recount")).unwrap();
    std::fs::write(xdg.join("recount").join("config.toml"), "[keys]\njump_to_date = \"J\"\n").unwrap();
    let cmd = format!(
        "XDG_CONFIG_HOME={} TERM=xterm-256color {} --lab {} tui 2>/dev/null; sleep 30",
        xdg.display(),
        env!("CARGO_BIN_EXE_recount"),
        lab.display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "150", "-y", "40", &cmd]);
    let _guard = Session(session.clone());
    let s = wait_for(&session, "per country", 60);
    assert!(s.contains("J go to date") && !s.contains(": go to date"), "the hint bar shows the rebound key:\n{s}");

    // A report while the explorer is open: it reads, as the explorer does.
    let check = recount(&lab, &["check", "2026-10-14"]);
    assert_eq!(check.status.code(), Some(0), "check beside the explorer: {}", String::from_utf8_lossy(&check.stderr));
    assert!(String::from_utf8_lossy(&check.stdout).contains("2026-10-14"));
    let before = ok(&lab, &["fingerprint"]);
    // Reports take no lock, so the explorer had no writer to make way for.
    std::thread::sleep(Duration::from_millis(1500));
    let s = tmux(&["capture-pane", "-p", "-t", &session]);
    assert!(!s.contains("writing the lab") && !s.contains("wrote the lab"), "a report made the explorer let go:\n{s}");

    // A writer while the explorer is open: the explorer lets go, the write lands, and the
    // explorer reads the lab again.
    let started = Instant::now();
    let daily = recount(&lab, &["daily", "2026-10-21"]);
    assert!(daily.status.success(), "a write beside the explorer: {}", String::from_utf8_lossy(&daily.stderr));
    assert!(started.elapsed() < Duration::from_secs(20), "the writer waited {:?} for the explorer", started.elapsed());
    let s = wait_for(&session, "wrote the lab; reloaded", 20);
    assert!(s.contains("recount pid"), "the explorer names the writer:\n{s}");
    assert_ne!(ok(&lab, &["fingerprint"]), before, "the upload of 2026-10-21 changed gold");

    // The explorer still writes: it takes the lock for its own write and lets go after.
    tmux(&["send-keys", "-t", &session, "J"]);
    wait_for(&session, "go to date (", 10);
    tmux(&["send-keys", "-t", &session, "10-15", "Enter"]);
    wait_for(&session, "2026-10-15 per country", 20);
    tmux(&["send-keys", "-t", &session, "v"]);
    wait_for(&session, "v1 for 2026-10-15 appended", 20);
    let snapshots = ok(&lab, &["snapshots"]);
    assert!(
        snapshots.lines().rfind(|l| !l.trim().is_empty()).is_some_and(|l| l.contains("append") && l.contains("naive: upload 2026-10-15")),
        "the explorer's v1 run is the lab's newest snapshot:\n{snapshots}"
    );
}

/// Every file under `dir` with its length and modification time.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(listing(&p));
        } else {
            let m = std::fs::metadata(&p).unwrap();
            out.push((p, m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

fn set_mode(dir: &Path, dirs: u32, files: u32) {
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            set_mode(&p, dirs, files);
        } else {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(files)).unwrap();
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(dirs)).unwrap();
}

/// Runs recount as a user who may read the lab but not write it: `nobody` when the tests run as
/// root (root writes anything), else this user once the lab is made read-only.
fn as_reader(lab: &Path, args: &[&str]) -> Output {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", env!("CARGO_BIN_EXE_recount")]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_recount"))
    };
    cmd.env("HOME", "/tmp").env_remove("RECOUNT_LAB").arg("--lab").arg(lab).args(args).output().unwrap()
}

#[test]
fn a_lab_the_user_cannot_write_is_read_with_the_same_answers_and_never_changed() {
    let dir = common::tempdir();
    let lab = sample_lab(dir.path());
    // The same lab, writable, answers first: what the read-only one must answer too. The copy
    // is taken before any report ran, so the read-only lab's caches are out of date.
    let writable = dir.path().join("writable");
    copy_dir(&lab, &writable);
    let reports: [&[&str]; 4] = [&["check", "2026-10-14"], &["lateness"], &["history", "2026-10-19"], &["fingerprint"]];
    let want: Vec<String> = reports.iter().map(|r| ok(&writable, r)).collect();

    set_mode(&lab, 0o555, 0o444);
    set_mode(dir.path(), 0o755, 0o644);
    set_mode(&lab, 0o555, 0o444);
    let before = listing(&lab);
    for (args, want) in reports.iter().zip(&want) {
        let out = as_reader(&lab, args);
        assert!(out.status.success(), "{args:?} on a read-only lab: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(&String::from_utf8_lossy(&out.stdout), want, "{args:?}: the read-only lab answers as the writable one");
    }
    // A command that writes says why it cannot.
    let run = as_reader(&lab, &["run", "2026-10-20"]);
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("recount.lock") && err.contains("ermission denied"), "{err}");
    assert_eq!(listing(&lab), before, "reading changed nothing in the lab");
    set_mode(dir.path(), 0o755, 0o644);
    set_mode(&lab, 0o755, 0o644);
}

#[test]
fn a_report_waits_for_a_writer_then_names_it_and_reading_creates_no_lab() {
    let dir = common::tempdir();
    let lab = sample_lab(dir.path());
    // A writer holds the lab (this test, for longer than a report waits): the report names it.
    let writer = recount::lake::Lab::open(&lab).unwrap();
    let started = Instant::now();
    let out = recount(&lab, &["fingerprint"]);
    assert!(started.elapsed() >= Duration::from_secs(2), "the report waited for the writer first");
    drop(writer);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use by another recount process") && err.contains(&format!("pid {}", std::process::id())), "{err}");
    assert!(ok(&lab, &["fingerprint"]).contains("rows, md5"), "and reads once it has gone");

    // Reading a lab that is not there is an error naming it, and makes nothing on disk.
    let none = dir.path().join("nothing-here");
    let out = recount(&none, &["fingerprint"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no lab at"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!none.exists(), "a report created {}", none.display());
}
