//! Snapshot evidence: every write is a snapshot, and every change of a number is explained.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use recount::store::for_tests::duckdb;
use recount::store::{ChangeKind, DateAction, TriggerKind};

use common::*;
use recount::lake::snapshot::{self, Operation};
use recount::lake::{land, v2};
use recount::reports::{self, history};

fn count(lab: &recount::lake::Lab, sql: &str) -> i64 {
    count_bound(lab, sql, [])
}

/// `count` with the query's values bound (`?`), not formatted into its text.
fn count_bound(lab: &recount::lake::Lab, sql: &str, params: impl duckdb::Params) -> i64 {
    lab.store().connection_for_tests().query_row(sql, params, |r| r.get(0)).unwrap()
}

/// The fingerprint a record carries is DuckDB's over all of gold, hashed whole.
fn fingerprint_is_duckdbs(lab: &recount::lake::Lab, rec: &recount::lake::snapshot::SnapshotRecord) {
    assert_eq!((rec.fingerprint.rows, rec.fingerprint.md5.clone()), duckdb_fingerprint(lab), "snapshot {}", rec.snapshot_id);
}

/// A lab run day by day up to and including `upto` uploads.
fn daily(dir: &std::path::Path, upto: usize) -> recount::lake::Lab {
    let mut lab = open_lab(dir);
    for &u in &uploads(small_world())[..upto] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    lab
}

/// A lab of the small world, landed whole and built in one pass.
fn backfilled(dir: &std::path::Path) -> recount::lake::Lab {
    let mut lab = open_lab(dir);
    land_all(&mut lab, small_world());
    v2::run_range(&lab, &uploads(small_world()), opts()).unwrap();
    lab
}

#[test]
fn a_retry_is_recorded_as_skipped_and_adds_no_data_snapshot() {
    let dir = tempdir();
    let lab = daily(dir.path(), 6);
    let u = uploads(small_world())[5];
    let history_rows = count(&lab, "SELECT count(*) FROM audit.gold_history");
    let head = snapshot::head(&lab).unwrap();
    let retry = v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap();
    assert_eq!(retry.snapshot.operation, Operation::Skipped);
    assert!(retry.dates.iter().all(|d| d.action == DateAction::Skip), "{:?}", retry.dates);
    assert_eq!(retry.snapshot.rows_added + retry.snapshot.rows_replaced, 0);
    assert_eq!(snapshot::head(&lab).unwrap(), head, "a skipped run is no data snapshot");
    assert_eq!(count(&lab, "SELECT count(*) FROM audit.gold_history"), history_rows);
    let listed = history::snapshots(&lab).unwrap();
    assert_eq!(listed.records.last().unwrap().operation, Operation::Skipped, "skipped runs are listed");
}

#[test]
fn a_late_upload_overwrites_exactly_its_dates() {
    let dir = tempdir();
    let lab = daily(dir.path(), 7);
    let mut lab = lab;
    let u = uploads(small_world())[7];
    let gold_before: Vec<(String, String)> = {
        let mut s = lab.store().connection_for_tests().prepare("SELECT business_date::VARCHAR, string_agg(concat_ws('|', store_id, baskets, revenue_minor), ',' ORDER BY store_id) FROM gold.daily_store_sales GROUP BY 1 ORDER BY 1").unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    land::land(&mut lab, small_world(), &[u]).unwrap();
    let run = v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    let overwritten: Vec<String> =
        run.dates.iter().filter(|d| d.action == DateAction::Overwrite).map(|d| d.business_date.to_string()).collect();
    assert!(overwritten.len() >= 2, "the new upload feeds its own day and late baskets of earlier ones: {overwritten:?}");
    assert!(run.dates.iter().all(|d| d.business_date >= u - chrono::Duration::days(2)));
    let gold_after: Vec<(String, String)> = {
        let mut s = lab.store().connection_for_tests().prepare("SELECT business_date::VARCHAR, string_agg(concat_ws('|', store_id, baskets, revenue_minor), ',' ORDER BY store_id) FROM gold.daily_store_sales GROUP BY 1 ORDER BY 1").unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    for (d, rows) in &gold_before {
        let after = gold_after.iter().find(|(x, _)| x == d).map(|(_, r)| r);
        if !overwritten.contains(d) {
            assert_eq!(after, Some(rows), "{d} was not overwritten, so its rows must be untouched");
        }
    }
    let changed = gold_before.iter().filter(|(d, rows)| gold_after.iter().any(|(x, r)| x == d && r != rows)).count();
    assert!(changed >= 1, "a late upload changed at least one earlier day");
}

#[test]
fn history_of_a_provisional_date_shows_the_rise_when_the_next_upload_lands() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let d = first_day_with_late_baskets(small_world(), ups[3]);
    let i = ups.iter().position(|u| *u == d).unwrap();
    let mut lab = daily(dir.path(), i + 1);
    let h = history::history(&lab, d, None).unwrap();
    assert_eq!(h.status.finality.word(), "provisional");
    let before: i64 = h.entries.last().unwrap().countries.iter().map(|c| c.baskets).sum();
    land::land(&mut lab, small_world(), &[ups[i + 1]]).unwrap();
    v2::run_upload(&lab, ups[i + 1], TriggerKind::Daily, opts()).unwrap();
    let h = history::history(&lab, d, None).unwrap();
    let last = h.entries.last().unwrap();
    assert_eq!(last.trigger.upload, Some(ups[i + 1]));
    let after: i64 = last.countries.iter().map(|c| c.baskets).sum();
    assert!(after > before, "{before} -> {after}");
    assert_eq!(last.countries.iter().map(|c| c.baskets_delta).sum::<i64>(), after - before);
    assert!(last.countries.iter().any(|c| c.attribution.contains(&format!("from upload {}", ups[i + 1]))), "{:?}", last.countries);
    // Two more uploads close the window.
    for &u in &ups[i + 2..i + 4] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    assert_eq!(history::history(&lab, d, None).unwrap().status.finality.word(), "closed");
}

#[test]
fn diff_parts_sum_to_the_change_for_every_version_of_every_date() {
    let dir = tempdir();
    let lab = daily(dir.path(), 10);
    let mut parts_seen = 0;
    for &d in &uploads(small_world())[..10] {
        let h = history::history(&lab, d, None).unwrap();
        let mut prev = None;
        for e in &h.entries {
            let diff = history::diff(&lab, d, prev, Some(e.snapshot_id)).unwrap();
            for c in &diff.countries {
                assert!(c.parts_sum_to_change, "{d} {} {:?}", c.country, c.parts);
                let sum: i64 = c.parts.iter().map(|p| p.revenue_delta_minor).sum();
                assert_eq!(sum, c.revenue_after_minor - c.revenue_before_minor);
                parts_seen += c.parts.len();
            }
            if prev.is_none() {
                // A date's first version (no older one: `diff_rows` takes it straight from silver)
                // is every basket silver holds, added, read here from silver's own view.
                let silver: Vec<(String, String, i64, i64)> = {
                    let conn = lab.store().connection_for_tests();
                    let mut st = conn
                        .prepare(
                            "SELECT basket_id, event_id, revenue_minor, copies - 1 FROM audit.silver_history
                             WHERE snapshot_id = ? AND business_date = ? ORDER BY basket_id",
                        )
                        .unwrap();
                    st.query_map(duckdb::params![e.snapshot_id, d], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                        .unwrap()
                        .map(Result::unwrap)
                        .collect()
                };
                let mut listed: Vec<(String, String, i64, i64)> = diff
                    .baskets
                    .iter()
                    .map(|b| {
                        assert_eq!(
                            (b.kind, b.baskets_delta, b.event_before.as_deref(), &b.correction),
                            (ChangeKind::Added, 1, None, &None)
                        );
                        (b.basket_id.clone(), b.event_after.clone().unwrap(), b.revenue_delta_minor, b.copies_discarded_delta)
                    })
                    .collect();
                listed.sort();
                assert!(!silver.is_empty());
                let first_difference = listed.iter().zip(&silver).find(|(a, b)| a != b);
                assert!(
                    listed == silver,
                    "{d}: the first version lists {} baskets, silver holds {}; first difference {first_difference:?}",
                    listed.len(),
                    silver.len()
                );
            }
            let baskets_sum: i64 = diff.baskets.iter().map(|b| b.baskets_delta).sum();
            let gold_change: i64 = diff.countries.iter().map(|c| c.baskets_after - c.baskets_before).sum();
            assert_eq!(baskets_sum, gold_change);
            // The parts (summed by DuckDB) are the basket list summed per country, kind and upload.
            let mut from_baskets = std::collections::BTreeMap::new();
            for b in &diff.baskets {
                let p = from_baskets.entry((b.country.clone(), b.kind, b.upload_date)).or_insert((0, 0, 0, 0));
                *p = (p.0 + 1, p.1 + b.baskets_delta, p.2 + b.revenue_delta_minor, p.3 + b.copies_discarded_delta);
            }
            let from_parts: std::collections::BTreeMap<_, _> = diff
                .countries
                .iter()
                .flat_map(|c| {
                    c.parts.iter().map(|p| {
                        (
                            (c.country.clone(), p.kind, p.upload_date),
                            (p.baskets, p.baskets_delta, p.revenue_delta_minor, p.copies_discarded_delta),
                        )
                    })
                })
                .collect();
            assert_eq!(from_baskets, from_parts, "{d} version {}", e.snapshot_id);
            // History shows the same attribution as the diff of the same two versions.
            let shown: Vec<&str> = e.countries.iter().map(|c| c.attribution.as_str()).collect();
            let summaries: Vec<String> = diff.countries.iter().map(|c| c.summary()).collect();
            assert_eq!(shown, summaries.iter().map(String::as_str).collect::<Vec<_>>());
            prev = Some(e.snapshot_id);
        }
    }
    assert!(parts_seen > 20);
}

/// History compares all of a date's versions in one query, and skips the baskets every version
/// holds alike. Versions that rebuilt the date with the same baskets must leave the earlier
/// versions' changes as they were, and show none themselves.
#[test]
fn history_of_a_date_rebuilt_with_the_same_baskets_keeps_its_earlier_changes_and_shows_none_after() {
    let dir = tempdir();
    let lab = daily(dir.path(), 6);
    let d = uploads(small_world())[2];
    let shown = |h: &history::HistoryReport| -> Vec<Vec<(String, i64, i64, String)>> {
        h.entries
            .iter()
            .map(|e| {
                e.countries.iter().map(|c| (c.country.clone(), c.baskets_delta, c.revenue_delta_minor, c.attribution.clone())).collect()
            })
            .collect()
    };
    let before = history::history(&lab, d, None).unwrap();
    assert!(before.entries.len() >= 2, "{d} has {} versions", before.entries.len());
    assert!(before.entries[1..].iter().any(|e| e.countries.iter().any(|c| c.baskets_delta != 0)), "a later version changed {d}");
    for _ in 0..3 {
        v2::rebuild_dates(&lab, &[d], v2::V2Options { force: true, ..opts() }).unwrap();
    }
    let after = history::history(&lab, d, None).unwrap();
    assert_eq!(after.entries.len(), before.entries.len() + 3);
    assert_eq!(shown(&after)[..before.entries.len()], shown(&before)[..]);
    for e in &after.entries[before.entries.len()..] {
        assert!(e.countries.iter().all(|c| (c.baskets_delta, c.revenue_delta_minor) == (0, 0)), "{:?}", e.countries);
    }
    let last = after.entries.last().unwrap().snapshot_id;
    let prev = after.entries[after.entries.len() - 2].snapshot_id;
    assert!(history::diff(&lab, d, Some(prev), Some(last)).unwrap().baskets.is_empty());
    // The rebuilt versions hold the date's baskets (silver keeps each version whole): history
    // found them alike, not missing.
    let first_rebuilt = after.entries[before.entries.len()].snapshot_id;
    let held = count_bound(
        &lab,
        "SELECT count(*) FROM silver.versions WHERE snapshot_id = ? AND business_date = ?",
        duckdb::params![first_rebuilt, d],
    );
    assert!(held > 0);
}

#[test]
fn rollback_restores_an_earlier_fingerprint_and_is_itself_a_snapshot() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let mut lab = daily(dir.path(), 5);
    let target = snapshot::head(&lab).unwrap().unwrap();
    let then = fingerprint(&lab);
    for &u in &ups[5..8] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    assert_ne!(fingerprint(&lab), then);
    let records_before = history::snapshots(&lab).unwrap().records.len();
    let rec = snapshot::rollback(&lab, target, None).unwrap();
    assert_eq!(rec.operation, Operation::Rollback);
    assert_eq!(fingerprint(&lab), then, "gold is as it was at snapshot {target}");
    assert_eq!(rec.fingerprint.to_string(), then);
    let records = history::snapshots(&lab).unwrap().records;
    assert_eq!(records.len(), records_before + 1, "history is never rewritten");
    assert!(records.iter().any(|r| r.snapshot_id == target + 1), "rolled-back snapshots stay listed");
    // Silver is restored too: the same baskets as the recomputed silver of that time.
    let silver: i64 = count(&lab, "SELECT count(*) FROM silver.baskets");
    let gold_baskets: i64 = count(&lab, "SELECT sum(baskets)::BIGINT FROM gold.daily_store_sales");
    assert_eq!(silver, gold_baskets);
    // A v2 retry after the rollback rebuilds what the rollback took away.
    for &u in &ups[5..8] {
        v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap();
    }
    let diff = history::diff(&lab, ups[6], Some(rec.snapshot_id), None).unwrap();
    assert!(diff.countries.iter().all(|c| c.parts_sum_to_change));
}

/// What `check` said per country at a snapshot: country, v2 revenue, v1 revenue.
type CountryFigures = Vec<(String, i64, i64)>;

#[test]
fn as_of_queries_match_what_the_table_said_at_the_time() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let mut lab = open_lab(dir.path());
    let mut seen: Vec<(i64, String, CountryFigures)> = Vec::new();
    let watched = ups[4];
    for &u in &ups[..8] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        recount::lake::v1::run(&lab, u, None).unwrap();
        let run = v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
        let c = reports::check::check(&lab, watched, None).unwrap();
        let per_country = c.countries.iter().map(|c| (c.country.clone(), c.v2_revenue_minor, c.v1_revenue_minor)).collect();
        seen.push((run.snapshot.snapshot_id, fingerprint(&lab), per_country));
    }
    for (snap, fp, per_country) in &seen {
        assert_eq!(&reports::fingerprint(&lab, Some(*snap)).unwrap().line, fp, "fingerprint as of {snap}");
        let c = reports::check::check(&lab, watched, Some(*snap)).unwrap();
        for (country, v2_then, v1_then) in per_country {
            let row = c.countries.iter().find(|x| &x.country == country);
            assert_eq!(row.map(|r| r.v2_revenue_minor).unwrap_or(0), *v2_then, "v2 {country} as of {snap}");
            assert_eq!(row.map(|r| r.v1_revenue_minor).unwrap_or(0), *v1_then, "v1 {country} as of {snap}");
        }
    }
}

#[test]
fn a_failed_run_leaves_no_snapshot() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let mut lab = daily(dir.path(), 3);
    land::land(&mut lab, small_world(), &[ups[3]]).unwrap();
    let records = history::snapshots(&lab).unwrap().records.len();
    let failed = v2::run_upload(&lab, ups[3], TriggerKind::Daily, v2::V2Options { fail_after: Some(3), ..opts() });
    assert!(failed.is_err());
    assert_eq!(history::snapshots(&lab).unwrap().records.len(), records);
    let ok = v2::run_upload(&lab, ups[3], TriggerKind::Daily, opts()).unwrap();
    assert_eq!(ok.snapshot.snapshot_id as usize, records + 1, "the id of the failed run was never taken");
}

#[test]
fn snapshots_csv_has_a_header_then_one_row_per_record_with_the_id_first() {
    let dir = tempdir();
    let lab_dir = dir.path().join("lab");
    let world = small_world().to_str().unwrap().to_string();
    let ups = uploads(small_world());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount")).arg("--lab").arg(&lab_dir).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (a, b) = (ups[0].to_string(), ups[2].to_string());
    run(&["land", &a, &b, "--world", &world]);
    run(&["naive", &a]);
    run(&["run", &a, &b]);
    run(&["run", &b]);
    let csv = run(&["snapshots", "--format", "csv"]);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("snapshot_id,"));
    let ids: Vec<i64> = lines.map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    // v1, the range in one pass, the skipped single run.
    assert_eq!(ids, vec![1, 2, 3]);
    assert!(csv.lines().last().unwrap().contains(",skipped,"), "{csv}");
}

#[test]
fn evidence_files_hold_the_snapshot_map_the_gold_rows_and_proof_other_dates_were_untouched() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let d = first_day_with_late_baskets(small_world(), ups[3]);
    let i = ups.iter().position(|u| *u == d).unwrap();
    let lab = daily(dir.path(), i + 2);
    let out = dir.path().join("evidence");
    let files = recount::reports::evidence::write(&lab, d, &out).unwrap();
    assert_eq!(files.len(), 3);
    let read = |name: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap() };
    let map = read("run_snapshot_map.json");
    assert_eq!(map["snapshots"].as_array().unwrap().len(), history::snapshots(&lab).unwrap().records.len());
    let gold = read(&format!("gold_{d}.json"));
    let rows = gold["rows"].as_array().unwrap();
    let gold_baskets: i64 = rows.iter().map(|r| r["baskets"].as_i64().unwrap()).sum();
    assert_eq!(gold_baskets, count_bound(&lab, "SELECT sum(baskets)::BIGINT FROM gold.daily_store_sales WHERE business_date = ?", [d]));
    let cmp = read(&format!("comparison_{d}.json"));
    assert!(cmp["diff"]["countries"].as_array().unwrap().iter().all(|c| c["parts_sum_to_change"] == true));
    let others = cmp["other_dates"].as_array().unwrap();
    let untouched = others.iter().filter(|o| o["untouched"] == true).count();
    assert!(untouched >= others.len().saturating_sub(3) && untouched > 0, "most other dates were untouched by the last change: {others:?}");
    for f in &files {
        let text = std::fs::read(&f.path).unwrap();
        assert_eq!(recount::store::hex(&<md5::Md5 as md5::Digest>::digest(&text)), f.md5, "the printed digest is the file's");
    }
}

#[test]
fn check_as_of_a_snapshot_gives_the_status_the_recounts_and_the_verdicts_of_then() {
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    assert!(recount::lake::bootstrap::fill_if_empty(&mut lab, &sample).unwrap().is_some());
    let d = day("2026-10-28");
    let head = snapshot::latest_id(&lab).unwrap();
    let then = snapshot::records(&lab, head)
        .unwrap()
        .into_iter()
        .find(|r| r.operation == Operation::Overwrite && r.trigger.upload == Some(d))
        .expect("the v2 run of upload 2026-10-28")
        .snapshot_id;
    reports::freshen(&mut lab).unwrap();
    let now = reports::check::check(&lab, d, None).unwrap();
    assert_eq!(now.status.finality.word(), "closed", "{:?}", now.status);
    let at = reports::check::check(&lab, d, Some(then)).unwrap();
    assert_eq!(at.status.newest_upload, Some(d), "the newest upload then");
    assert_eq!(at.status.finality.word(), "provisional", "{:?}", at.status);
    assert!(at.status.describe().contains("waiting for upload(s) 2026-10-29, 2026-10-30"), "{}", at.status.describe());
    assert!(at.engines_agree, "{:?}", at.engine_disagreements);
    assert!(at.countries.iter().all(|c| c.v2_explained()), "v2 then against the recount then: {:?}", at.countries);
    // The recount then is the recount of a lab that had landed only as far as 2026-10-28.
    let dir2 = tempdir();
    let mut short = open_lab(dir2.path());
    for u in uploads(&sample).into_iter().filter(|u| *u <= d) {
        let step = recount::lake::daily::Step { trigger: TriggerKind::Daily, v1_first: true, opts: opts() };
        let done = recount::lake::daily::land_and_run(&mut short, &sample, u, step).unwrap();
        assert!(matches!(done.run, recount::lake::daily::RunOutcome::Ran(_)));
    }
    reports::freshen(&mut short).unwrap();
    let built_then = reports::check::check(&short, d, None).unwrap();
    let figures = |c: &reports::check::CheckReport| {
        c.countries
            .iter()
            .map(|x| (x.country.clone(), x.recompute_baskets, x.recompute_revenue_minor, x.v2_revenue_minor))
            .collect::<Vec<_>>()
    };
    assert_eq!(figures(&at), figures(&built_then), "as of the snapshot = the lab as it was");
    assert_eq!(at.status.finality, built_then.status.finality);
}

/// Revenue per (country, currency) of one date's gold, read straight from the table.
fn gold_by_country(lab: &recount::lake::Lab, d: chrono::NaiveDate) -> std::collections::BTreeMap<String, i64> {
    let mut stmt = lab
        .store()
        .connection_for_tests()
        .prepare("SELECT country, sum(revenue_minor)::BIGINT FROM gold.daily_store_sales WHERE business_date = ? GROUP BY 1")
        .unwrap();
    stmt.query_map([d], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn the_morning_summary_names_each_date_the_newest_run_moved_with_its_change_and_finality() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let ups = uploads(small_world());
    for &u in &ups[..9] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    let u = ups[9];
    land::land(&mut lab, small_world(), &[u]).unwrap();
    let dates: Vec<_> = (-3..=1).map(|k| u + chrono::Duration::days(k)).collect();
    let before: Vec<_> = dates.iter().map(|d| gold_by_country(&lab, *d)).collect();
    let run = v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    let s = recount::reports::summary::summary(&lab).unwrap();
    assert_eq!(s.snapshot_id, Some(run.snapshot.snapshot_id));
    let moved: Vec<_> = run.dates.iter().filter(|d| d.action == DateAction::Overwrite).map(|d| d.business_date).collect();
    assert!(!moved.is_empty());
    assert_eq!(s.dates.iter().map(|d| d.business_date).collect::<Vec<_>>(), moved);
    for m in &s.dates {
        let k = dates.iter().position(|d| *d == m.business_date).unwrap();
        let after = gold_by_country(&lab, m.business_date);
        for p in &m.parts {
            let (country, revenue) = (&p.part[0], &p.measures[0]);
            assert_eq!(revenue.now, after[country], "{m:?}");
            assert_eq!(revenue.change, after[country] - before[k].get(country).copied().unwrap_or(0), "{m:?}");
        }
    }
    let newest = s.dates.iter().map(|d| d.business_date).max().unwrap();
    assert_eq!(s.dates.iter().find(|d| d.business_date == newest).unwrap().finality, "provisional");
    let line = s.line();
    assert!(line.starts_with(&format!("upload {u} moved {newest} ")), "{line}");
    // The CLI prints the same line first.
    drop(lab);
    let out = ok(&dir.path().join("lab"), &["summary"]);
    assert_eq!(out.lines().next().unwrap(), line);
}

#[test]
fn a_backfills_summary_line_names_its_newest_dates_and_counts_the_rest() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    let ups = uploads(small_world());
    v2::run_range(&lab, &ups, opts()).unwrap();
    let s = recount::reports::summary::summary(&lab).unwrap();
    assert!(s.dates.len() > 3, "{s:?}");
    let line = s.line();
    assert!(line.contains(&format!("and {} older date(s)", s.dates.len() - 3)), "{line}");
    assert_eq!(line.matches("(closed)").count() + line.matches("(provisional)").count(), 3, "{line}");
}

#[test]
fn a_backfills_summary_judges_every_date_it_wrote_as_each_dates_own_check_does() {
    // The summary judges all its dates at once (one read of the landed uploads, one of the inputs
    // per window): closed, stale (the upload landed after the backfill feeds it) and provisional
    // dates each get the word check gives that date alone.
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let ups = uploads(small_world());
    let (built, last) = ups.split_at(ups.len() - 2);
    land::land(&mut lab, small_world(), built).unwrap();
    v2::run_range(&lab, built, opts()).unwrap();
    land::land(&mut lab, small_world(), last).unwrap();
    let s = recount::reports::summary::summary(&lab).unwrap();
    let mut words = std::collections::BTreeSet::new();
    for d in &s.dates {
        let alone = reports::check::check(&lab, d.business_date, None).unwrap().status.finality.word().to_string();
        assert_eq!(d.finality, alone, "{}", d.business_date);
        words.insert(alone);
    }
    assert_eq!(words.into_iter().collect::<Vec<_>>(), ["closed", "provisional", "stale"]);
}

#[test]
fn each_new_process_hashes_gold_from_its_kept_text_to_duckdbs_own_fingerprint() {
    use recount::store::TriggerKind;
    let dir = tempdir();
    let ups = uploads(small_world());
    {
        let mut lab = open_lab(dir.path());
        land_all(&mut lab, small_world());
    }
    // Every run in a lab opened afresh: no text in memory, only what earlier writes kept.
    for &u in ups.iter().rev().take(8) {
        let lab = open_lab(dir.path());
        fingerprint_is_duckdbs(&lab, &v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap().snapshot);
    }
    let lab = open_lab(dir.path());
    let target = snapshot::head(&lab).unwrap().unwrap() - 3;
    drop(lab);
    let lab = open_lab(dir.path());
    fingerprint_is_duckdbs(&lab, &snapshot::rollback(&lab, target, None).unwrap());
    drop(lab);
    let lab = open_lab(dir.path());
    fingerprint_is_duckdbs(&lab, &v2::run_upload(&lab, ups[0], TriggerKind::Upload, opts()).unwrap().snapshot);
    // As of each snapshot, gold's fingerprint (read a slice of dates at a time) is the one its
    // record carries.
    let records = snapshot::records(&lab, snapshot::latest_id(&lab).unwrap()).unwrap();
    assert!(records.len() >= 10, "{}", records.len());
    for rec in &records {
        let fp = reports::fingerprint(&lab, Some(rec.snapshot_id)).unwrap();
        assert_eq!((fp.rows, fp.md5.as_str()), (rec.fingerprint.rows, rec.fingerprint.md5.as_str()), "as of {}", rec.snapshot_id);
    }
}

#[test]
fn a_write_hashes_gold_from_the_state_before_its_first_date_and_never_from_a_stale_one() {
    use recount::lake::reopen::{self, Decision};
    let dir = tempdir();
    let ups = uploads(small_world());
    let (early, late) = ups.split_at(ups.len() - 3);
    let states_of =
        |lab: &recount::lake::Lab, id: i64| count_bound(lab, "SELECT count(*) FROM audit.gold_prefix WHERE snapshot_id = ?", [id]);
    let gold_dates = |lab: &recount::lake::Lab| count(lab, "SELECT count(DISTINCT business_date) FROM gold.daily_store_sales");
    {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, small_world(), early).unwrap();
        let pass = v2::run_range(&lab, early, opts()).unwrap().0.snapshot;
        fingerprint_is_duckdbs(&lab, &pass);
        assert_eq!(states_of(&lab, pass.snapshot_id), gold_dates(&lab), "a first write hashes every date");
    }
    // A daily run in a new process resumes before its first date: it records only the dates
    // from there on, and its fingerprint is DuckDB's over all of gold. Then, in the same process
    // (which holds only that tail of gold's text), an early date is rewritten (reopened: its late
    // baskets taken in), and the states are put back as they were before it, as if a build that
    // keeps none had written it: every state after the date is stale, and the next write must
    // not resume from one.
    let reopened = {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, small_world(), &late[..1]).unwrap();
        let run = v2::run_upload(&lab, late[0], TriggerKind::Daily, opts()).unwrap().snapshot;
        fingerprint_is_duckdbs(&lab, &run);
        let recorded = states_of(&lab, run.snapshot_id);
        assert!(recorded > 0 && recorded < gold_dates(&lab) / 2, "{recorded} states of {} dates", gold_dates(&lab));
        let d = a_date_with_late_baskets(&lab);
        let sql = |q: &str| lab.store().connection_for_tests().execute_batch(q).unwrap();
        sql("CREATE TEMP TABLE states_before AS SELECT * FROM audit.gold_prefix");
        let run = reopen::reopen(&lab, d, Decision { reason: "late tills approved", by: "test" }, opts()).unwrap().snapshot;
        fingerprint_is_duckdbs(&lab, &run);
        sql("DELETE FROM audit.gold_prefix; INSERT INTO audit.gold_prefix SELECT * FROM states_before");
        run.snapshot_id
    };
    {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, small_world(), &late[1..2]).unwrap();
        fingerprint_is_duckdbs(&lab, &v2::run_upload(&lab, late[1], TriggerKind::Daily, opts()).unwrap().snapshot);
    }
    // A state that does not read back is not used either.
    {
        let mut lab = open_lab(dir.path());
        lab.store().connection_for_tests().execute_batch("UPDATE audit.gold_prefix SET state = '\\x01'::BLOB").unwrap();
        land::land(&mut lab, small_world(), &late[2..]).unwrap();
        fingerprint_is_duckdbs(&lab, &v2::run_upload(&lab, late[2], TriggerKind::Daily, opts()).unwrap().snapshot);
    }
    let lab = open_lab(dir.path());
    fingerprint_is_duckdbs(&lab, &snapshot::rollback(&lab, reopened, None).unwrap());
    // A write replaces the states from its first date on: one per date, however many writes.
    assert_eq!(count(&lab, "SELECT count(*) - count(DISTINCT business_date) FROM audit.gold_prefix"), 0);
}

#[test]
fn a_write_that_leaves_its_text_as_it_was_keeps_the_fingerprint_and_carries_only_states_that_held() {
    use recount::lake::reopen::{self, Decision};
    let dir = tempdir();
    let ups = uploads(small_world());
    let (early, late) = ups.split_at(ups.len() - 1);
    let states_from = |lab: &recount::lake::Lab, id: i64, d: chrono::NaiveDate| {
        count_bound(lab, "SELECT count(*) FROM audit.gold_prefix WHERE snapshot_id = ? AND business_date >= ?", duckdb::params![id, d])
    };
    let forced = v2::V2Options { force: true, ..opts() };
    let d = {
        let mut lab = open_lab(dir.path());
        land::land(&mut lab, small_world(), early).unwrap();
        let pass = v2::run_range(&lab, early, opts()).unwrap().0.snapshot;
        fingerprint_is_duckdbs(&lab, &pass);
        // The same inputs rebuilt by the process that hashed them: the text is the same, so the
        // fingerprint is, and every state from the first rebuilt date on still holds.
        let dates: Vec<chrono::NaiveDate> = lab.store().business_dates().unwrap();
        let middle = &dates[dates.len() / 3..dates.len() / 3 + 3];
        let held = states_from(&lab, pass.snapshot_id, middle[0]);
        let rebuilt = v2::rebuild_dates(&lab, middle, forced).unwrap().snapshot;
        assert_eq!(rebuilt.dates_rewritten, 3);
        fingerprint_is_duckdbs(&lab, &rebuilt);
        assert_eq!(rebuilt.fingerprint, pass.fingerprint);
        assert!(held > 3, "{held}");
        assert_eq!(states_from(&lab, rebuilt.snapshot_id, middle[0]), held, "the states are carried to the rebuild");
        // A date rewritten for real (reopened), with the states put back as a build that keeps
        // none would leave them: those from the date on are stale. Rebuilt again unchanged, the
        // date carries none of them.
        let d = a_date_with_late_baskets(&lab);
        let sql = |q: &str| lab.store().connection_for_tests().execute_batch(q).unwrap();
        sql("CREATE TEMP TABLE states_before AS SELECT * FROM audit.gold_prefix");
        let run = reopen::reopen(&lab, d, Decision { reason: "late tills approved", by: "test" }, opts()).unwrap().snapshot;
        fingerprint_is_duckdbs(&lab, &run);
        assert_ne!(run.fingerprint, rebuilt.fingerprint);
        sql("DELETE FROM audit.gold_prefix; INSERT INTO audit.gold_prefix SELECT * FROM states_before");
        let stale = count_bound(&lab, "SELECT count(*) FROM audit.gold_prefix WHERE business_date > ?", [d]);
        assert!(stale > 0, "{stale}");
        let again = v2::rebuild_dates(&lab, &[d], forced).unwrap().snapshot;
        fingerprint_is_duckdbs(&lab, &again);
        assert_eq!(again.fingerprint, run.fingerprint);
        assert_eq!(states_from(&lab, again.snapshot_id, d), 0, "stale states are not carried");
        d
    };
    // The next write, in a new process, resumes only from a state that held.
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, small_world(), late).unwrap();
    let run = v2::run_upload(&lab, late[0], TriggerKind::Daily, opts()).unwrap();
    assert!(run.dates.iter().all(|o| o.business_date > d), "the daily run's dates come after {d}");
    fingerprint_is_duckdbs(&lab, &run.snapshot);
}

/// The first date of the small world, landed and run in one pass, with a basket v2 misses
/// because every copy arrived past the window.
fn a_date_with_late_baskets(lab: &recount::lake::Lab) -> chrono::NaiveDate {
    let late = reports::listings::late(lab, None, 2).unwrap();
    late.rows.iter().find(|r| r.upload_date > r.business_date && r.missing_from_v2).expect("the small world has late baskets").business_date
}

#[test]
fn reopening_takes_a_closed_dates_late_rows_in_keeps_its_window_and_rolls_back() {
    use recount::lake::reopen::{self, Decision};
    let dir = tempdir();
    let lab = backfilled(dir.path());
    let d = a_date_with_late_baskets(&lab);
    let before_reopen = snapshot::head(&lab).unwrap().unwrap();
    let fingerprint_before = fingerprint(&lab);
    let gold_before = gold_by_country(&lab, d);
    let check = reports::check::check(&lab, d, None).unwrap();
    assert!(check.countries.iter().any(|c| c.v2_revenue_minor != c.recompute_revenue_minor), "{d} differs before");

    let plan = reopen::plan(&lab, d).unwrap();
    assert!(plan.baskets > 0 && plan.wider_late_days > 2, "{plan:?}");
    let no_reason = reopen::reopen(&lab, d, Decision { reason: " \u{7} ", by: "alice" }, opts()).unwrap_err();
    assert!(no_reason.to_string().contains("needs a reason"), "{no_reason}");
    let run = reopen::reopen(&lab, d, Decision { reason: "late tills approved\u{1b}[2J", by: "alice" }, opts()).unwrap();
    assert_eq!(run.snapshot.trigger.kind, TriggerKind::Reopen);
    assert!(!run.snapshot.trigger.detail.contains('\u{1b}'), "{}", run.snapshot.trigger.detail);

    // v2 now equals the recompute on the date, and gold moved by the plan's amounts exactly.
    let check = reports::check::check(&lab, d, None).unwrap();
    for c in &check.countries {
        assert_eq!((c.v2_baskets, c.v2_revenue_minor), (c.recompute_baskets, c.recompute_revenue_minor), "{d} {}", c.country);
    }
    let gold_after = gold_by_country(&lab, d);
    let moved: std::collections::BTreeMap<String, i64> =
        gold_after.iter().map(|(k, v)| (k.clone(), v - gold_before.get(k).copied().unwrap_or(0))).filter(|(_, v)| *v != 0).collect();
    let planned: std::collections::BTreeMap<String, i64> = {
        let c = reports::check::check(&lab, d, None).unwrap();
        plan.revenue.iter().map(|(cur, v)| (c.countries.iter().find(|x| &x.currency == cur).unwrap().country.clone(), *v)).collect()
    };
    assert_eq!(moved, planned);
    assert!(reports::listings::late(&lab, Some(d), 2).unwrap().rows.iter().all(|r| r.upload_date < d), "nothing late is left");
    assert!(reopen::plan(&lab, d).is_err(), "a second reopening has nothing to take in");

    // History names the decision, and the change's parts sum.
    let h = history::history(&lab, d, None).unwrap();
    let last = h.entries.last().unwrap();
    assert!(last.trigger.detail.starts_with("reopened by alice: late tills approved"), "{}", last.trigger.detail);
    let diff = history::diff(&lab, d, Some(before_reopen), None).unwrap();
    assert!(diff.countries.iter().all(|c| c.parts_sum_to_change));

    // Later writes keep the wider window: a forced rebuild, and the late upload's own run.
    v2::rebuild_dates(&lab, &[d], recount::lake::v2::V2Options { force: true, ..opts() }).unwrap();
    assert_eq!(gold_by_country(&lab, d), gold_after, "a rebuild keeps the reopened window");
    let late_upload = *plan.uploads.last().unwrap();
    let rerun = v2::run_upload(&lab, late_upload, TriggerKind::Upload, recount::lake::v2::V2Options { force: true, ..opts() }).unwrap();
    assert!(rerun.dates.iter().any(|o| o.business_date == d), "the late upload's run rebuilds the reopened date");
    assert!(rerun.beyond_window.iter().all(|b| b.business_date != d), "{:?}", rerun.beyond_window);
    assert_eq!(gold_by_country(&lab, d), gold_after, "the late upload's run does not drop the rows again");
    // A pass over every upload records the hashes per-upload runs would: the next run skips. It
    // reads the date's kept window as the upload's own run does: none of its rows is beyond.
    let (_, beyond) = v2::run_range(&lab, &uploads(small_world()), opts()).unwrap();
    assert!(beyond.iter().all(|(_, b)| b.business_date != d), "{beyond:?}");
    let again = v2::run_upload(&lab, late_upload, TriggerKind::Upload, opts()).unwrap();
    assert_eq!(again.snapshot.operation, Operation::Skipped);

    // A rollback past the reopening restores the fingerprint and narrows the date again.
    snapshot::rollback(&lab, before_reopen, None).unwrap();
    assert_eq!(fingerprint(&lab), fingerprint_before);
    v2::rebuild_dates(&lab, &[d], recount::lake::v2::V2Options { force: true, ..opts() }).unwrap();
    assert_eq!(fingerprint(&lab), fingerprint_before, "after the rollback the date is built with its old window");
    assert!(reopen::plan(&lab, d).is_ok(), "and can be reopened again");
}

#[test]
fn baskets_judges_a_reopened_dates_copies_by_its_wider_window_as_v2_does() {
    use recount::lake::reopen::{self, Decision};
    let dir = tempdir();
    let lab = backfilled(dir.path());
    // A date with a re-sent basket one of whose copies arrived past the 2-day window.
    let late = |r: &reports::baskets::BasketsReport, inside: bool| -> usize {
        let d = r.business_date;
        r.baskets.iter().flat_map(|b| &b.copies).filter(|c| c.business_date == d && c.upload_date > d && c.in_window == inside).count()
    };
    let dates = lab.store().business_dates().unwrap();
    let before = dates
        .iter()
        .map(|&d| reports::baskets::resent(&lab, d, 2).unwrap())
        .find(|r| late(r, false) > 0)
        .expect("the small world re-sends a basket past its window");
    let d = before.business_date;
    let plan = reopen::plan(&lab, d).unwrap();
    reopen::reopen(&lab, d, Decision { reason: "late tills approved", by: "alice" }, opts()).unwrap();
    let after = reports::baskets::resent(&lab, d, 2).unwrap();
    assert_eq!(after.late_days, plan.wider_late_days, "the listing names the window it judged by");
    assert_eq!((late(&after, false), late(&after, true)), (0, late(&before, true) + late(&before, false)));
    // Each basket's winner is the copy silver holds.
    let conn = lab.store().connection_for_tests();
    for b in &after.baskets {
        let won: Vec<&str> = b.copies.iter().filter(|c| c.won).map(|c| c.event_id.as_str()).collect();
        let silver: String = conn.query_row("SELECT event_id FROM silver.baskets WHERE basket_id = ?", [&b.key], |r| r.get(0)).unwrap();
        assert_eq!(won, [silver.as_str()], "{}", b.key);
    }
}

#[test]
fn a_write_whose_windows_interleave_writes_each_dates_gold_once() {
    // Three neighbouring dates kept under two windows (as reopenings leave them): the middle one
    // under 3 days, the outer two under 4. One forced write rebuilds them a window at a time, the
    // 4-day group's first and last date around the 3-day one, written first in the same snapshot.
    let dir = tempdir();
    let lab = backfilled(dir.path());
    let dates = lab.store().business_dates().unwrap();
    let [a, b, c] = [dates[5], dates[6], dates[7]];
    let keep = |d: chrono::NaiveDate, days: u32| {
        lab.store()
            .connection_for_tests()
            .execute(
                "INSERT INTO audit.date_windows SELECT snapshot_id, business_date, ? FROM audit.versions_as_of(NULL) WHERE business_date = ?",
                duckdb::params![days, d],
            )
            .unwrap();
    };
    keep(a, 4);
    keep(b, 3);
    keep(c, 4);
    let forced = v2::V2Options { force: true, ..opts() };
    let gold = |lab: &recount::lake::Lab| -> Vec<(String, String, i64, i64)> {
        let conn = lab.store().connection_for_tests();
        let mut q = conn
            .prepare(
                "SELECT business_date::VARCHAR, store_id, baskets, revenue_minor FROM gold.daily_store_sales
                 WHERE business_date BETWEEN ? AND ? ORDER BY ALL",
            )
            .unwrap();
        q.query_map(duckdb::params![a, c], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect()
    };
    let together = v2::rebuild_dates(&lab, &[a, b, c], forced).unwrap();
    assert_eq!(together.snapshot.dates_rewritten, 3);
    let kept = |days: u32| {
        let sql = "SELECT count(*) FROM audit.date_windows WHERE snapshot_id = ? AND late_days = ?";
        count_bound(&lab, sql, duckdb::params![together.snapshot.snapshot_id, days])
    };
    assert_eq!((kept(3), kept(4)), (1, 2), "the write kept both windows: two groups");
    let once = gold(&lab);
    let stores = count_bound(
        &lab,
        "SELECT count(DISTINCT (business_date, store_id)) FROM gold.daily_store_sales WHERE business_date BETWEEN ? AND ?",
        [a, c],
    );
    assert_eq!(once.len() as i64, stores, "one gold row per date and store");
    let middle = together.dates.iter().find(|o| o.business_date == b).unwrap();
    assert_eq!(middle.gold_added, once.iter().filter(|r| r.0 == b.to_string()).count() as i64);
    fingerprint_is_duckdbs(&lab, &together.snapshot);
    // Each date rebuilt on its own (no other window's dates in between) gives the same gold.
    for d in [a, b, c] {
        v2::rebuild_dates(&lab, &[d], forced).unwrap();
    }
    assert_eq!(gold(&lab), once);
}
