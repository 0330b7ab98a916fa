//! Corrections: a file path that arrives again with other bytes is its next version, and v2
//! rewrites exactly the dates it changes. One test per claim of the contract's section 5.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use recount::lake::land::{self, FileStatus};
use recount::lake::{Lab, snapshot, v1, v2};
use recount::reports;
use recount::store::{ChangeKind, DateAction, Operation, TriggerKind};
use recount::world::corrections::{self, Correction, CorrectionKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "common/reference.rs"]
mod reference;

/// The small world with its four corrections written beside it (in a directory of its own).
fn world_with_corrections(dir: &Path) -> (PathBuf, Vec<Correction>) {
    let world = dir.join("world");
    copy_dir(small_world(), &world);
    let cs = corrections::write(&world).unwrap();
    (world, cs)
}

/// The world as the tills have now delivered it: each corrected file's newest bytes in place.
fn current_world(world: &Path, cs: &[Correction], dest: &Path) -> PathBuf {
    copy_dir(world, dest);
    std::fs::remove_dir_all(dest.join(corrections::CORRECTIONS_DIR)).unwrap();
    for c in cs {
        copy_dir(&c.dir.join("pos"), &dest.join("pos"));
    }
    dest.to_path_buf()
}

/// A lab that landed and ran every upload of the world day by day, and the world's corrections.
fn daily_lab(dir: &Path) -> (PathBuf, Vec<Correction>, Lab) {
    let (world, cs) = world_with_corrections(dir);
    let mut lab = open_lab(dir);
    daily(&mut lab, &world, &uploads(&world));
    (world, cs, lab)
}

/// Gold per business date, as text: which dates a write changed.
fn gold_by_date(lab: &Lab) -> BTreeMap<String, String> {
    let conn = lab.store().connection_for_tests();
    let mut s = conn
        .prepare(
            "SELECT business_date::VARCHAR, string_agg(concat_ws('|', store_id, baskets, revenue_minor), ',' ORDER BY store_id)
             FROM gold.daily_store_sales GROUP BY 1",
        )
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn land_correction(lab: &mut Lab, c: &Correction) -> land::LandReport {
    land::land(lab, &c.dir, &[c.upload_date]).unwrap()
}

fn daily(lab: &mut Lab, world: &Path, ups: &[chrono::NaiveDate]) {
    for &u in ups {
        land::land(lab, world, &[u]).unwrap();
        v2::run_upload(lab, u, TriggerKind::Daily, opts()).unwrap();
    }
}

#[test]
fn a_correction_rewrites_exactly_the_dates_it_changes_and_an_identical_one_is_skipped() {
    let dir = tempdir();
    let (_, cs, mut lab) = daily_lab(dir.path());
    for c in &cs {
        let before = gold_by_date(&lab);
        let head = snapshot::head(&lab).unwrap();
        let landed = land_correction(&mut lab, c);
        let p = &landed.partitions[0];
        let statuses: Vec<(String, FileStatus, i32)> = p.files.iter().map(|f| (f.name.clone(), f.status, f.version)).collect();
        // The same rows in other bytes are a re-delivery, not a correction, and say so.
        let (status, detail) = match c.kind {
            CorrectionKind::Recompressed => (FileStatus::Redelivered, format!("upload {}", c.upload_date)),
            _ => (FileStatus::Corrected, format!("upload {} (corrected: {} v2)", c.upload_date, c.file)),
        };
        assert!(statuses.contains(&(c.file.clone(), status, 2)), "{statuses:?}");
        assert_eq!(p.files.iter().filter(|f| f.status == FileStatus::Unchanged).count(), p.files.len() - 1, "{statuses:?}");
        let run = v2::run_upload(&lab, c.upload_date, TriggerKind::Upload, opts()).unwrap();
        assert_eq!(run.snapshot.trigger.detail, detail, "the record names a correction, and only a correction");
        let after = gold_by_date(&lab);
        let mut changed: Vec<String> = after.keys().chain(before.keys()).filter(|d| before.get(*d) != after.get(*d)).cloned().collect();
        changed.sort();
        changed.dedup();
        let rewritten: Vec<String> =
            run.dates.iter().filter(|d| d.action == DateAction::Overwrite).map(|d| d.business_date.to_string()).collect();
        match c.kind {
            CorrectionKind::Recompressed => {
                assert_eq!(run.snapshot.operation, Operation::Skipped, "the same rows in other bytes change nothing");
                assert_eq!(snapshot::head(&lab).unwrap(), head, "and record no data snapshot");
                assert!(changed.is_empty());
            }
            _ => {
                assert!(!changed.is_empty(), "{:?} changed gold", c.kind);
                // Exactly the dates whose gold changed were rewritten; every other date stayed.
                assert_eq!(rewritten, changed, "{:?}", c.kind);
            }
        }
    }
    // v1 after a correction reads the current version, and a retry still doubles.
    let c = &cs[0];
    let d = c.upload_date;
    v1::run(&lab, d, None).unwrap();
    let once = reports::check::check(&lab, d, None).unwrap();
    v1::run(&lab, d, None).unwrap();
    let twice = reports::check::check(&lab, d, None).unwrap();
    let gb = |r: &reports::check::CheckReport| r.countries.iter().find(|x| x.country == "GB").unwrap().v1_revenue_minor;
    assert_eq!(gb(&twice), 2 * gb(&once));
    let explain = reports::explain::explain(&lab, d).unwrap();
    assert!(explain.parts.iter().all(|c| c.identity_holds()), "v1 and the recompute read the same (current) rows");
    assert!(reports::check::check(&lab, d, None).unwrap().engines_agree);
}

#[test]
fn after_corrections_gold_equals_gold_built_from_a_world_of_current_versions_forwards_backwards_and_daily() {
    // The lab that saw the first deliveries, then the corrections, each followed by its run.
    let dir = tempdir();
    let (world, cs, mut lab) = daily_lab(dir.path());
    let ups = uploads(&world);
    for c in &cs {
        land_correction(&mut lab, c);
        v2::run_upload(&lab, c.upload_date, TriggerKind::Upload, opts()).unwrap();
    }
    let corrected = fingerprint(&lab);
    assert_ne!(corrected, {
        let d2 = tempdir();
        let mut plain = open_lab(d2.path());
        daily(&mut plain, &world, &ups);
        fingerprint(&plain)
    });
    // From scratch on the world that holds each file's current version only.
    let now = current_world(&world, &cs, &dir.path().join("now"));
    for order in ["forwards", "backwards", "daily"] {
        let d = tempdir();
        let mut fresh = open_lab(d.path());
        match order {
            "daily" => daily(&mut fresh, &now, &ups),
            _ => {
                land::land(&mut fresh, &now, &ups).unwrap();
                let mut runs = ups.clone();
                if order == "backwards" {
                    runs.reverse();
                }
                for u in runs {
                    v2::run_upload(&fresh, u, TriggerKind::Backfill, opts()).unwrap();
                }
            }
        }
        assert_eq!(fingerprint(&fresh), corrected, "{order}");
        assert_eq!(fingerprint(&fresh), reference_fingerprint(&now), "{order}: the contract's reference");
    }
    // The lab's own raw zone is that world: the polars recount and DuckDB's agree on every date.
    for d in reports::business_dates(&lab).unwrap() {
        assert!(reports::check::check(&lab, d, None).unwrap().engines_agree, "{d}");
    }
}

fn reference_fingerprint(world: &Path) -> String {
    reference::v2_fingerprint(world, 2)
}

#[test]
fn history_diff_and_evidence_name_each_correction_with_its_file_and_version() {
    let dir = tempdir();
    let (_, cs, mut lab) = daily_lab(dir.path());
    let expect = [
        (CorrectionKind::ChangedAmounts, ChangeKind::RevenueCorrected),
        (CorrectionKind::WithdrawnLines, ChangeKind::Withdrawn),
        (CorrectionKind::AddedBasket, ChangeKind::AddedByCorrection),
    ];
    for (kind, change) in expect {
        let c = cs.iter().find(|c| c.kind == kind).unwrap();
        land_correction(&mut lab, c);
        let run = v2::run_upload(&lab, c.upload_date, TriggerKind::Upload, opts()).unwrap();
        let mut seen = 0i64;
        for d in run.dates.iter().filter(|d| d.action == DateAction::Overwrite) {
            let diff = reports::history::diff(&lab, d.business_date, None, None).unwrap();
            for country in &diff.countries {
                assert!(country.parts_sum_to_change, "{kind:?} {}: {:?}", d.business_date, country.parts);
                for p in country.parts.iter().filter(|p| p.kind == change) {
                    let by = p.correction.as_ref().expect("a correction's change names its file version");
                    assert_eq!((by.file.as_str(), by.version), (c.file.as_str(), 2));
                    seen += p.revenue_delta_minor;
                }
            }
            // No basket is listed whose winner only moved to the new version unchanged.
            assert!(diff.baskets.iter().all(|b| b.baskets_delta != 0 || b.revenue_delta_minor != 0 || b.copies_discarded_delta != 0));
            let history = reports::history::history(&lab, d.business_date, None).unwrap();
            let last = history.entries.last().unwrap();
            assert!(
                last.countries.iter().any(|x| x.attribution.contains(&format!("{} ({} v2)", change.word(), c.file))),
                "{:?}",
                last.countries
            );
        }
        assert_eq!(seen, c.revenue_delta_minor, "{kind:?}: the correction's parts are exactly its revenue change");
        let out = dir.path().join(format!("evidence-{kind:?}"));
        reports::evidence::write(&lab, c.upload_date, &out).unwrap();
        let comparison = std::fs::read_to_string(out.join(format!("comparison_{}.json", c.upload_date))).unwrap();
        assert!(comparison.contains(change.as_str()) && comparison.contains(&c.file), "{kind:?}: {comparison}");
    }
}

#[test]
fn a_correction_to_an_old_upload_outside_every_later_window_rebuilds_its_dates_when_its_upload_runs_again() {
    let dir = tempdir();
    let world = dir.path().join("world");
    copy_dir(small_world(), &world);
    let ups = uploads(&world);
    let mut lab = open_lab(dir.path());
    daily(&mut lab, &world, &ups);
    // Correct the first upload: every later upload is past its dates' window.
    let first = ups[0];
    let file = recount::raw::list_files(&world, first).unwrap().remove(0);
    let text = recount::raw::read_gz_text(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let kept: Vec<String> = lines[1..].iter().map(|l| l.to_string()).collect();
    let fix = dir.path().join("fix");
    let hand = HandWorld::new(fix.clone(), &std::fs::read_to_string(world.join("stores.csv")).unwrap());
    hand.file(&first.to_string(), file.file_name().unwrap().to_str().unwrap(), &kept);
    for f in recount::raw::list_files(&world, first).unwrap().iter().skip(1) {
        std::fs::copy(f, recount::raw::partition_dir(&fix, first).join(f.file_name().unwrap())).unwrap();
    }
    land::land(&mut lab, &fix, &[first]).unwrap();
    // A later upload's run does not reach the old dates...
    let later = v2::run_upload(&lab, *ups.last().unwrap(), TriggerKind::Upload, opts()).unwrap();
    assert!(later.dates.iter().all(|d| d.business_date > first + chrono::Duration::days(2)));
    // ...its own run does.
    let own = v2::run_upload(&lab, first, TriggerKind::Upload, opts()).unwrap();
    assert!(own.dates.iter().any(|d| d.action == DateAction::Overwrite), "{:?}", own.dates);
    let now = dir.path().join("now");
    copy_dir(&world, &now);
    copy_dir(&fix.join("pos"), &now.join("pos"));
    let d2 = tempdir();
    let mut fresh = open_lab(d2.path());
    daily(&mut fresh, &now, &ups);
    assert_eq!(fingerprint(&lab), fingerprint(&fresh));
}

fn line(event: &str, basket: &str, uploaded_at: &str, amount: i64) -> String {
    event_line(event, basket, "LON1", "2026-08-15T10:00:00.000Z", uploaded_at, "GBP", &[amount])
}

fn event_line(event: &str, basket: &str, store: &str, ts: &str, uploaded_at: &str, currency: &str, tenders: &[i64]) -> String {
    common::event(event, basket, store, ts, uploaded_at, currency, tenders)
}

fn silver_winner(lab: &Lab, basket: &str) -> (String, i64) {
    lab.store()
        .connection_for_tests()
        .query_row("SELECT event_id, revenue_minor FROM silver.baskets WHERE basket_id = ?", [basket], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
}

#[test]
fn withdrawing_the_winning_copy_of_a_re_sent_basket_lets_the_next_copy_win() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-08-15",
        "a.jsonl.gz",
        &[line("e1", "B1", "2026-08-15T10:01:00.000Z", 500), line("e9", "B9", "2026-08-15T10:02:00.000Z", 900)],
    );
    w.file("2026-08-16", "a.jsonl.gz", &[line("e2", "B1", "2026-08-16T08:00:00.000Z", 700)]);
    let mut lab = open_lab(dir.path());
    for u in ["2026-08-15", "2026-08-16"] {
        land::land(&mut lab, &w.root, &[day(u)]).unwrap();
        v2::run_upload(&lab, day(u), TriggerKind::Daily, opts()).unwrap();
    }
    assert_eq!(silver_winner(&lab, "B1"), ("e1".to_string(), 500));
    // The vendor re-sends upload 08-15 without e1.
    w.file("2026-08-15", "a.jsonl.gz", &[line("e9", "B9", "2026-08-15T10:02:00.000Z", 900)]);
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    assert_eq!(silver_winner(&lab, "B1"), ("e2".to_string(), 700), "the next copy wins");
    let check = reports::check::check(&lab, day("2026-08-15"), None).unwrap();
    assert!(check.engines_agree);
    let gb = check.countries.iter().find(|c| c.country == "GB").unwrap();
    assert_eq!((gb.v2_revenue_minor, gb.recompute_revenue_minor), (1600, 1600));
    let diff = reports::history::diff(&lab, day("2026-08-15"), None, None).unwrap();
    let kinds: Vec<ChangeKind> = diff.baskets.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![ChangeKind::WinnerChanged], "{:?}", diff.baskets);
}

#[test]
fn exact_ties_go_to_the_copy_first_in_the_raw_zone_in_v2_and_both_recounts_at_any_thread_count() {
    // The same message (basket, event_id, uploaded_at) three times with other amounts: in two
    // files of one upload and twice in one file. The raw zone's order is upload date, file name
    // (byte order: "B" < "a"), line: the copy on line 2 of B.jsonl.gz wins.
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let at = "2026-08-15T10:05:00.000Z";
    w.file("2026-08-15", "a.jsonl.gz", &[line("e1", "T1", at, 300)]);
    w.file("2026-08-15", "B.jsonl.gz", &[line("x", "X1", at, 1), line("e1", "T1", at, 200), line("e1", "T1", at, 100)]);
    let mut fingerprints = Vec::new();
    for threads in [1, 2, 4] {
        let d = tempdir();
        let mut lab = open_lab(d.path());
        lab.store().connection_for_tests().execute_batch(&format!("SET threads = {threads}")).unwrap();
        land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
        v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
        assert_eq!(silver_winner(&lab, "T1").1, 200, "{threads} threads");
        let check = reports::check::check(&lab, day("2026-08-15"), None).unwrap();
        assert!(check.engines_agree, "{threads} threads: {:?}", check.engine_disagreements);
        let gb = check.countries.iter().find(|c| c.country == "GB").unwrap();
        assert_eq!((gb.v2_revenue_minor, gb.recompute_revenue_minor), (201, 201), "{threads} threads");
        let baskets = reports::baskets::resent(&lab, day("2026-08-15"), 2).unwrap();
        let t1 = baskets.baskets.iter().find(|b| b.key == "T1").unwrap();
        // Retail's measures: baskets, then revenue.
        let won: Vec<(i64, &str)> = t1.copies.iter().map(|c| (c.measures[1], c.why.as_str())).collect();
        assert!(won[0].0 == 200 && won[0].1.contains("first in the raw zone"), "{won:?}");
        fingerprints.push(fingerprint(&lab));
    }
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 1);
    assert_eq!(fingerprints[0], reference_fingerprint(&w.root));
}

#[test]
fn a_landed_file_missing_from_the_world_is_reported_and_kept() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file("2026-08-15", "a.jsonl.gz", &[line("e1", "B1", "2026-08-15T10:01:00.000Z", 500)]);
    let gone = w.file("2026-08-15", "b.jsonl.gz", &[line("e2", "B2", "2026-08-15T10:01:00.000Z", 700)]);
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    std::fs::remove_file(gone).unwrap();
    let again = land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    let files = &again.partitions[0].files;
    assert!(files.iter().any(|f| f.name == "b.jsonl.gz" && f.status == FileStatus::Missing), "{files:?}");
    assert!(again.render().contains("b.jsonl.gz (landed as v1) is no longer in the world"), "{}", again.render());
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    let gb = reports::check::check(&lab, day("2026-08-15"), None).unwrap();
    assert_eq!(gb.countries.iter().find(|c| c.country == "GB").unwrap().v2_revenue_minor, 1200, "nothing done silently");
}

/// Runs `recount land` on a correction in a child that is killed at `crash`, then opens the lab.
fn killed_correction(crash: &str) -> (tempfile::TempDir, Lab, String, String) {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let path = w.file("2026-08-15", "a.jsonl.gz", &[line("e1", "B1", "2026-08-15T10:01:00.000Z", 500)]);
    let old = std::fs::read(&path).unwrap();
    {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    }
    w.file("2026-08-15", "a.jsonl.gz", &[line("e1", "B1", "2026-08-15T10:01:00.000Z", 800)]);
    let new = std::fs::read(&path).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_recount"));
    cmd.args(["--lab", dir.path().join("lab").to_str().unwrap(), "land", "2026-08-15", "--world", w.root.to_str().unwrap()]);
    match crash {
        "fail" => cmd.env("RECOUNT_FAIL_AFTER", "1"),
        point => cmd.env("RECOUNT_CRASH_AT", point),
    };
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{crash}: the landing was stopped");
    if crash != "fail" {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{crash}: the crash point fired ({})", out.status);
    }
    let lab = open_lab(dir.path());
    let md5 = |b: &[u8]| recount::store::hex(&<md5::Md5 as md5::Digest>::digest(b));
    (dir, lab, md5(&old), md5(&new))
}

#[test]
fn a_landing_of_a_correction_killed_anywhere_leaves_the_old_or_the_new_version_current_never_a_mix() {
    for (crash, new_is_current) in [("fail", false), ("landing:committed", true), ("landing:set-aside", true)] {
        let (_dir, lab, old, new) = killed_correction(crash);
        let landed = lab.store().landed_files().unwrap();
        let versions = &landed["pos/events/upload_date=2026-08-15/a.jsonl.gz"];
        let current = versions.iter().find(|v| v.current).unwrap();
        let in_raw_zone = recount::store::hex(&<md5::Md5 as md5::Digest>::digest(
            std::fs::read(lab.raw_root().join("pos/events/upload_date=2026-08-15/a.jsonl.gz")).unwrap(),
        ));
        assert_eq!(current.md5, if new_is_current { new.clone() } else { old.clone() }, "{crash}");
        assert_eq!(in_raw_zone, current.md5, "{crash}: the raw zone holds the version bronze says is current");
        let staged: Vec<_> = std::fs::read_dir(lab.raw_root().join("pos/events/upload_date=2026-08-15"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".landing"))
            .collect();
        assert!(staged.is_empty(), "{crash}: {staged:?}");
        if new_is_current {
            let kept = lab.raw_root().join("versions/upload_date=2026-08-15/v1/a.jsonl.gz");
            assert_eq!(recount::store::hex(&<md5::Md5 as md5::Digest>::digest(std::fs::read(kept).unwrap())), old, "{crash}");
        }
        v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
        let check = reports::check::check(&lab, day("2026-08-15"), None).unwrap();
        assert!(check.engines_agree, "{crash}");
        let gb = check.countries.iter().find(|c| c.country == "GB").unwrap();
        assert_eq!(gb.v2_revenue_minor, if new_is_current { 800 } else { 500 }, "{crash}");
    }
}

#[test]
fn an_open_looks_through_the_raw_zone_only_when_a_landing_left_its_mark() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let root = {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, small_world(), &ups[..2]).unwrap();
        assert!(!lab.root.join(recount::lake::recovery::STAGING).exists(), "a landing that finished clears its mark");
        lab.root.clone()
    };
    // A staged copy of bytes no landing committed, as a landing killed before its COMMIT leaves.
    let partition = std::fs::read_dir(root.join("raw/pos/events")).unwrap().next().unwrap().unwrap().path();
    let stray = partition.join("stray.jsonl.gz.landing");
    std::fs::write(&stray, b"never landed").unwrap();
    drop(open_lab(dir.path()));
    assert!(stray.exists(), "without the mark, an open lists no partition");
    std::fs::write(root.join(recount::lake::recovery::STAGING), b"").unwrap();
    drop(open_lab(dir.path()));
    assert!(!stray.exists(), "with the mark, recovery removes what never committed");
    assert!(!root.join(recount::lake::recovery::STAGING).exists(), "and clears the mark");
    // A lab an earlier build wrote (another schema digest) has no mark to go by: the open that
    // brings its schema up to date looks through the raw zone too.
    std::fs::write(&stray, b"never landed").unwrap();
    open_lab(dir.path()).store().connection_for_tests().execute_batch("DELETE FROM audit.schema").unwrap();
    drop(open_lab(dir.path()));
    assert!(!stray.exists(), "the first open by this build looks");
}

#[test]
fn a_date_whose_rows_a_correction_all_withdraws_is_rebuilt_empty() {
    // Upload 08-16 holds a sale of 08-16 and the only sale of 08-15 (a late till). Its
    // correction withdraws the 08-15 sale: 08-15 has no row left, and must still be rebuilt.
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let late = event_line("e1", "B1", "LON1", "2026-08-15T10:00:00.000Z", "2026-08-16T08:00:00.000Z", "GBP", &[400]);
    let today = event_line("e2", "B2", "LON1", "2026-08-16T10:00:00.000Z", "2026-08-16T10:01:00.000Z", "GBP", &[600]);
    w.file("2026-08-16", "a.jsonl.gz", &[late, today.clone()]);
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-16")]).unwrap();
    v2::run_upload(&lab, day("2026-08-16"), TriggerKind::Upload, opts()).unwrap();
    assert_eq!(gold_by_date(&lab).len(), 2);
    w.file("2026-08-16", "a.jsonl.gz", &[today]);
    land::land(&mut lab, &w.root, &[day("2026-08-16")]).unwrap();
    let run = v2::run_upload(&lab, day("2026-08-16"), TriggerKind::Upload, opts()).unwrap();
    let overwritten: Vec<String> =
        run.dates.iter().filter(|d| d.action == DateAction::Overwrite).map(|d| d.business_date.to_string()).collect();
    assert_eq!(overwritten, vec!["2026-08-15".to_string()], "{:?}", run.dates);
    let gold = gold_by_date(&lab);
    assert_eq!(gold.keys().cloned().collect::<Vec<_>>(), vec!["2026-08-16".to_string()], "08-15 is empty now");
    assert_eq!(fingerprint(&lab), reference_fingerprint(&w.root));
    let diff = reports::history::diff(&lab, day("2026-08-15"), None, None).unwrap();
    assert_eq!(diff.baskets.iter().map(|b| b.kind).collect::<Vec<_>>(), vec![ChangeKind::Withdrawn]);
}
