//! The pipeline's claims, one test each.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use recount::store::for_tests::duckdb;
use recount::store::{DateAction, TriggerKind};

use common::*;
use recount::lake::{land, snapshot, v1, v2};
use recount::reports;
use std::collections::BTreeMap;

#[path = "common/reference.rs"]
mod reference;

/// Runs v2 for each upload, and checks each record's fingerprint (kept between runs as text per
/// date, or carried over from the last record when nothing was rewritten) against gold hashed
/// whole by DuckDB.
/// Each rewritten date's silver and gold row counts are checked against the rows the snapshot
/// wrote (a one-date run takes them from its inserts, a longer one counts them per date).
fn backfill(lab: &recount::lake::Lab, uploads: impl Iterator<Item = chrono::NaiveDate>) {
    for u in uploads {
        let r = v2::run_upload(lab, u, TriggerKind::Backfill, opts()).unwrap();
        assert_eq!(r.snapshot.fingerprint.to_string(), fingerprint(lab), "record of the run for {u} ({})", r.snapshot.operation.as_str());
        for d in r.dates.iter().filter(|d| d.action == DateAction::Overwrite) {
            let count = |q: &str| -> i64 {
                lab.store()
                    .connection_for_tests()
                    .query_row(q, duckdb::params![r.snapshot.snapshot_id, d.business_date], |row| row.get(0))
                    .unwrap()
            };
            let silver = count("SELECT count(*) FROM silver.versions WHERE snapshot_id = ? AND business_date = ?");
            let gold = count("SELECT count(*) FROM audit.gold_history WHERE snapshot_id = ? AND business_date = ?");
            assert_eq!((d.silver_added, d.gold_added), (silver, gold), "counts of {} in the run for {u}", d.business_date);
        }
    }
}

#[test]
fn retry_of_v1_doubles_the_day_exactly() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    let d = uploads(small_world())[10];
    v1::run(&lab, d, None).unwrap();
    let once = reports::check::check(&lab, d, None).unwrap();
    v1::run(&lab, d, None).unwrap();
    let twice = reports::check::check(&lab, d, None).unwrap();
    assert_eq!(once.countries.len(), 3);
    for (a, b) in once.countries.iter().zip(&twice.countries) {
        assert!(a.v1_revenue_minor > 0);
        assert_eq!(b.v1_revenue_minor, 2 * a.v1_revenue_minor, "{}", a.country);
        assert_eq!(b.v1_events, 2 * a.v1_events);
        assert_eq!((a.v1_runs, b.v1_runs), (1, 2));
    }
}

#[test]
fn v2_equals_recompute_except_beyond_window_rows_which_late_lists() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    backfill(&lab, uploads(small_world()).into_iter());
    let late = reports::listings::late(&lab, None, 2).unwrap();
    let mut missing: BTreeMap<(chrono::NaiveDate, String), i64> = BTreeMap::new();
    let mut missing_baskets: BTreeMap<(chrono::NaiveDate, String), i64> = BTreeMap::new();
    for r in late.rows.iter().filter(|r| r.missing_from_v2 && r.recompute_copy) {
        // Retail's attributes are its country and currency; its measures, baskets and revenue.
        *missing.entry((r.business_date, r.attributes[0].clone())).or_default() += r.measures[1];
        *missing_baskets.entry((r.business_date, r.attributes[0].clone())).or_default() += 1;
    }
    assert!(!missing.is_empty(), "the small world has baskets beyond the window");
    // Every copy of a basket carries its basket's flag: a basket is missing from v2 or it is not.
    let mut flag: BTreeMap<&str, bool> = BTreeMap::new();
    for r in &late.rows {
        assert_eq!(*flag.entry(&r.entity_key).or_insert(r.missing_from_v2), r.missing_from_v2, "copies of {} disagree", r.entity_key);
    }
    let mut dates_with_gap = 0;
    for d in uploads(small_world()) {
        let check = reports::check::check(&lab, d, None).unwrap();
        assert!(check.engines_agree, "polars and DuckDB disagree on {d}: {:?}", check.engine_disagreements);
        for c in &check.countries {
            let gap = c.recompute_revenue_minor - c.v2_revenue_minor;
            let listed = missing.get(&(d, c.country.clone())).copied().unwrap_or(0);
            assert_eq!(gap, listed, "{d} {}: recompute - v2 must equal what `late` lists", c.country);
            // check's beyond-window column comes from DuckDB's recount statement, `late` from its
            // own: the two say the same.
            assert_eq!(c.beyond_window_revenue_minor, listed, "{d} {}: check's beyond-window revenue", c.country);
            let baskets = missing_baskets.get(&(d, c.country.clone())).copied().unwrap_or(0);
            assert_eq!(c.beyond_window_baskets, baskets, "{d} {}: check's beyond-window baskets", c.country);
            if gap != 0 {
                dates_with_gap += 1;
            }
        }
    }
    assert!(dates_with_gap > 0);
}

#[test]
fn rerunning_a_v2_upload_keeps_the_fingerprint() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    backfill(&lab, uploads(small_world()).into_iter());
    let before = fingerprint(&lab);
    let u = uploads(small_world())[8];
    let again = v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap();
    assert_eq!(fingerprint(&lab), before);
    assert_eq!(again.snapshot.fingerprint.to_string(), before);
}

#[test]
fn forward_backward_and_daily_give_the_contracts_fingerprint() {
    let expected = reference::v2_fingerprint(small_world(), 2);
    let ups = uploads(small_world());

    let fwd_dir = tempdir();
    let mut fwd = open_lab(fwd_dir.path());
    land_all(&mut fwd, small_world());
    backfill(&fwd, ups.iter().copied());
    assert_eq!(fingerprint(&fwd), expected, "forward backfill");

    let back_dir = tempdir();
    let mut back = open_lab(back_dir.path());
    land_all(&mut back, small_world());
    backfill(&back, ups.iter().rev().copied());
    assert_eq!(fingerprint(&back), expected, "backwards backfill from nothing");

    // Day by day: land one upload, run v2 for it. A provisional day moves when the next lands.
    let daily_dir = tempdir();
    let mut daily = open_lab(daily_dir.path());
    let watched = first_day_with_late_baskets(small_world(), ups[3]);
    let mut seen: Vec<i64> = Vec::new();
    for &u in &ups {
        land::land(&mut daily, small_world(), &[u]).unwrap();
        v2::run_upload(&daily, u, TriggerKind::Daily, opts()).unwrap();
        if u >= watched && u <= watched + chrono::Duration::days(2) {
            let c = reports::check::check(&daily, watched, None).unwrap();
            seen.push(c.countries.iter().map(|c| c.v2_baskets).sum());
        }
    }
    assert_eq!(fingerprint(&daily), expected, "day by day");
    assert!(seen[1] > seen[0], "the day rose when the next upload landed: {seen:?}");
}

#[test]
fn a_failure_after_any_statement_leaves_silver_gold_and_records_untouched() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let ups = uploads(small_world());
    land::land(&mut lab, small_world(), &ups[..6]).unwrap();
    backfill(&lab, ups[..4].iter().copied());
    let before = lab_digest(&lab);
    let ids = |lab: &recount::lake::Lab| -> (i64, Option<i64>) {
        lab.store()
            .connection_for_tests()
            .query_row("SELECT max(snapshot_id), max(snapshot_id) FILTER (WHERE operation <> 'skipped') FROM audit.snapshots", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
    };
    let (last_id, head) = ids(&lab);
    let mut failures = 0;
    // v2 run for an upload with changed inputs: fail after statement 1, 2, ... until it succeeds.
    for n in 1.. {
        let attempt = v2::run_upload(&lab, ups[4], TriggerKind::Upload, recount::lake::v2::V2Options { fail_after: Some(n), ..opts() });
        match attempt {
            Err(e) => {
                assert!(format!("{e:#}").contains("injected failure"), "{e:#}");
                assert_eq!(lab_digest(&lab), before, "v2 failing after statement {n} changed the lab");
                failures += 1;
            }
            Ok(r) => {
                assert_eq!(r.snapshot.operation, snapshot::Operation::Overwrite);
                // The lab keeps the next id in memory; the failed attempts must not have moved it.
                assert_eq!((r.snapshot.snapshot_id, r.snapshot.parent_id), (last_id + 1, head));
                // Every statement of the transaction was failed after once (the phases besides
                // the transaction's are the comparison before it and the commit).
                let steps =
                    r.phases.iter().filter(|(p, _)| !["find affected dates", "input hashes", "commit"].contains(&p.as_str())).count();
                assert_eq!(failures, steps, "{:?}", r.phases);
                break;
            }
        }
    }
    assert!(failures >= 5, "silver, gold, the dates, the fingerprint and the record: got {failures}");
    // The same for v1, for landing and for a rollback.
    let before = lab_digest(&lab);
    assert!(v1::run(&lab, ups[4], Some(1)).is_err());
    assert_eq!(lab_digest(&lab), before);
    // Landing two uploads: fail after each of its steps (the parallel insert of every file's
    // rows, the files' records, the split baskets ...) until it lands; the raw zone and every
    // table stay as they were.
    let mut land_failures = 0;
    for n in 1.. {
        match land::land_with(&mut lab, small_world(), &recount::raw::source::Source::contract(), &ups[6..8], Some(n)) {
            Err(e) => {
                assert!(format!("{e:#}").contains("injected failure"), "{e:#}");
                assert_eq!(lab_digest(&lab), before, "landing failing after step {n} changed the lab");
                land_failures += 1;
            }
            Ok(r) => {
                assert!(r.events > 0);
                break;
            }
        }
    }
    assert!(land_failures >= 6, "rows, records, three basket statements, partitions: got {land_failures}");
    let before = lab_digest(&lab);
    assert!(snapshot::rollback(&lab, 2, Some(1)).is_err());
    assert_eq!(lab_digest(&lab), before, "a failed run leaves no snapshot and no data");
}

#[test]
fn dedup_is_by_basket_id_and_exact_ties_break_by_event_id() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let same = "2026-08-15T10:00:05.000Z";
    w.file(
        "2026-08-15",
        "a.jsonl.gz",
        &[
            // Three copies of one basket; two tie on uploaded_at, so event_id decides.
            event("ev-b", "B1", "LON1", "2026-08-15T10:00:00.000Z", same, "GBP", &[700]),
            event("ev-a", "B1", "LON1", "2026-08-15T10:00:00.000Z", same, "GBP", &[500]),
            event("ev-0", "B1", "LON1", "2026-08-15T10:00:00.000Z", "2026-08-15T10:09:00.000Z", "GBP", &[900]),
            // Two baskets that share nothing but an event_id prefix.
            event("ev-c", "B2", "LON1", "2026-08-15T11:00:00.000Z", "2026-08-15T11:00:01.000Z", "GBP", &[100, 23]),
        ],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    let (baskets, revenue): (i64, i64) = lab
        .store()
        .connection_for_tests()
        .query_row("SELECT baskets, revenue_minor FROM gold.daily_store_sales WHERE store_id = 'LON1'", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(baskets, 2, "two basket_ids, four events");
    assert_eq!(revenue, 500 + 123, "B1's winner is ev-a: the tie on uploaded_at goes to the smaller event_id");
    let winner: String = lab
        .store()
        .connection_for_tests()
        .query_row("SELECT event_id FROM silver.baskets WHERE basket_id = 'B1'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(winner, "ev-a");
    let recount = recount::recompute::recount(&lab.raw_root()).unwrap();
    assert_eq!(recount.rows[0].revenue_minor, 623, "the polars recount applies the same rule");
}

#[test]
fn business_dates_are_right_when_london_leaves_summer_time_and_in_kolkata() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-10-24",
        "a.jsonl.gz",
        &[
            // 23:30 UTC on the 24th is 00:30 BST on the 25th.
            event("e1", "L1", "LON1", "2026-10-24T23:30:00.000Z", "2026-10-24T23:31:00.000Z", "GBP", &[100]),
            // 18:29:59 UTC is 23:59:59 IST on the 24th; 18:30 is midnight, the 25th.
            event("e2", "I1", "BLR1", "2026-10-24T18:29:59.000Z", "2026-10-24T18:31:00.000Z", "INR", &[200]),
            event("e3", "I2", "BLR1", "2026-10-24T18:30:00.000Z", "2026-10-24T18:31:00.000Z", "INR", &[300]),
        ],
    );
    w.file(
        "2026-10-25",
        "a.jsonl.gz",
        &[
            // After the change London is UTC+0: 23:30 UTC on the 25th is still the 25th.
            event("e4", "L2", "LON1", "2026-10-25T23:30:00.000Z", "2026-10-25T23:31:00.000Z", "GBP", &[400]),
            // 00:30 UTC on the 25th is 01:30 BST, before the clocks go back.
            event("e5", "L3", "LON1", "2026-10-25T00:30:00.000Z", "2026-10-25T00:31:00.000Z", "GBP", &[800]),
        ],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-10-24"), day("2026-10-25")]).unwrap();
    for u in [day("2026-10-24"), day("2026-10-25")] {
        v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap();
    }
    let mut stmt = lab
        .store()
        .connection_for_tests()
        .prepare("SELECT business_date, store_id, revenue_minor FROM gold.daily_store_sales ORDER BY 1, 2")
        .unwrap();
    let rows: Vec<(chrono::NaiveDate, String, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    assert_eq!(
        rows,
        vec![
            (day("2026-10-24"), "BLR1".to_string(), 200),
            (day("2026-10-25"), "BLR1".to_string(), 300),
            (day("2026-10-25"), "LON1".to_string(), 100 + 400 + 800),
        ]
    );
}

#[test]
fn explain_identity_holds_to_the_minor_unit() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    let (mut missed, mut doubled) = (0, 0);
    for d in uploads(small_world()).into_iter().skip(1) {
        let e = reports::explain::explain(&lab, d).unwrap();
        // Retail's measures: baskets, then revenue; the identity holds for both.
        for c in &e.parts {
            assert_eq!(c.gap, [0, 0], "{d} {}: recompute - missed + double counted must equal v1", c.part);
            assert_eq!(c.missed_lines.iter().map(|b| b.measures[1]).sum::<i64>(), c.missed[1]);
            missed += c.missed_entities;
            doubled += c.double_counted_copies;
            // v1 as the naive job computes it, not just as explain derives it.
        }
        let rec = v1::run(&lab, d, None).unwrap();
        assert!(rec.rows_added > 0);
        let check = reports::check::check(&lab, d, None).unwrap();
        for (c, x) in check.countries.iter().zip(&e.parts) {
            assert_eq!(c.v1_revenue_minor, x.v1[1], "{d} {}: explain's v1 is the naive job's", c.country);
        }
    }
    assert!(missed > 0 && doubled > 0, "the world exercises both sides: missed {missed}, doubled {doubled}");
}

#[test]
fn a_basket_whose_copies_carry_two_business_dates_is_counted_once_by_both_engines() {
    // A till re-sends basket S1 with a corrected clock: the copies fall on the 14th and the 15th.
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-08-15",
        "a.jsonl.gz",
        &[
            event("ev-1", "S1", "LON1", "2026-08-14T22:30:00.000Z", "2026-08-15T08:00:00.000Z", "GBP", &[1000]),
            event("ev-9", "X1", "LON1", "2026-08-15T09:00:00.000Z", "2026-08-15T09:00:01.000Z", "GBP", &[7]),
        ],
    );
    w.file(
        "2026-08-16",
        "b.jsonl.gz",
        &[
            event("ev-2", "S1", "LON1", "2026-08-14T23:30:00.000Z", "2026-08-16T08:00:00.000Z", "GBP", &[1000]),
            // A basket sent once, in the next day's upload: v1 of the 15th misses it.
            event("ev-3", "M1", "LON1", "2026-08-15T10:00:00.000Z", "2026-08-16T08:00:01.000Z", "GBP", &[50]),
        ],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    land::land(&mut lab, &w.root, &[day("2026-08-16")]).unwrap();
    let split: Vec<(String, chrono::NaiveDate)> = {
        let mut stmt =
            lab.store().connection_for_tests().prepare("SELECT basket_id, business_date FROM bronze.split_baskets ORDER BY 2").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    assert_eq!(
        split,
        vec![("S1".to_string(), day("2026-08-14")), ("S1".to_string(), day("2026-08-15"))],
        "found when the second copy landed"
    );
    // The first copy (uploaded first) wins: S1 belongs to the 14th, London's 23:30 BST.
    for d in ["2026-08-14", "2026-08-15"] {
        let c = reports::check::check(&lab, day(d), None).unwrap();
        assert!(c.engine_disagreements.is_empty(), "{d}: {:?}", c.engine_disagreements);
        let counted: (i64, i64) = c.countries.iter().fold((0, 0), |a, c| (a.0 + c.recompute_baskets, a.1 + c.recompute_revenue_minor));
        assert_eq!(counted, if d == "2026-08-14" { (1, 1000) } else { (2, 57) }, "{d}: S1 counted on the 14th only");
    }
    // What one v1 run of each date misses: S1 (sent twice, ranked) on the 14th, whose winner came
    // in the 15th's upload; M1 (sent once, its row wins alone) on the 15th.
    let missed = |d: &str| -> Vec<(String, chrono::NaiveDate, i64)> {
        let e = reports::explain::explain(&lab, day(d)).unwrap();
        assert!(e.parts.iter().all(|c| c.identity_holds() && c.double_counted_lines.is_empty()), "{d}: {e:?}");
        e.parts.iter().flat_map(|c| c.missed_lines.iter().map(|b| (b.key.clone(), b.upload_date, b.measures[1]))).collect()
    };
    assert_eq!(missed("2026-08-14"), vec![("S1".to_string(), day("2026-08-15"), 1000)]);
    assert_eq!(missed("2026-08-15"), vec![("M1".to_string(), day("2026-08-16"), 50)]);
    // As of a snapshot, DuckDB's recount still ranks S1's copies across both dates.
    let snap = v2::run_upload(&lab, day("2026-08-16"), TriggerKind::Upload, opts()).unwrap().snapshot.snapshot_id;
    for (d, want) in [("2026-08-14", (1, 1000)), ("2026-08-15", (2, 57))] {
        let c = reports::check::check(&lab, day(d), Some(snap)).unwrap();
        assert!(c.engine_disagreements.is_empty(), "{d} as of {snap}: {:?}", c.engine_disagreements);
        let counted = c.countries.iter().fold((0, 0), |a, c| (a.0 + c.recompute_baskets, a.1 + c.recompute_revenue_minor));
        assert_eq!(counted, want, "{d} as of {snap}");
    }
    let on_15 = reports::baskets::resent(&lab, day("2026-08-15"), 2).unwrap();
    let copies: Vec<String> = on_15.baskets.iter().flat_map(|b| b.copies.iter().map(|c| c.event_id.clone())).collect();
    assert_eq!(copies, vec!["ev-1", "ev-2"], "the 15th's re-sent basket lists its copy dated the 14th too");
}

#[test]
fn explain_counts_the_copies_of_a_runs_own_date_only() {
    // One upload holds both copies of basket S2, with two business dates: London's 00:30 on the
    // 16th (sent first: the winner) and a copy whose clock is half a day behind, on the 15th. One
    // v1 run of the 16th counts the copy dated the 16th once, and nothing is double counted,
    // although explain's copies of the 16th's baskets hold both.
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-08-16",
        "a.jsonl.gz",
        &[
            event("ev-5", "S2", "LON1", "2026-08-15T23:30:00.000Z", "2026-08-16T08:00:00.000Z", "GBP", &[1000]),
            event("ev-4", "S2", "LON1", "2026-08-15T10:00:00.000Z", "2026-08-16T08:00:05.000Z", "GBP", &[1000]),
            event("ev-6", "Y1", "LON1", "2026-08-16T09:00:00.000Z", "2026-08-16T09:00:01.000Z", "GBP", &[30]),
        ],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-16")]).unwrap();
    let split: i64 = lab
        .store()
        .connection_for_tests()
        .query_row("SELECT count(*) FROM bronze.split_baskets WHERE basket_id = 'S2'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(split, 2, "S2's copies carry two business dates");
    let e = reports::explain::explain(&lab, day("2026-08-16")).unwrap();
    for c in &e.parts {
        assert!(c.identity_holds(), "{c:?}");
        assert!(c.double_counted_lines.is_empty() && c.missed_lines.is_empty(), "{c:?}");
    }
    let v1: i64 = e.parts.iter().map(|c| c.v1[1]).sum();
    assert_eq!(v1, 1000 + 30, "one v1 run of the 16th counts S2's copy dated the 16th, once");
}

#[test]
fn the_lateness_histogram_is_recounted_after_each_landing() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let ups = uploads(small_world());
    let direct = |lab: &recount::lake::Lab| -> Vec<(i64, i64, i64)> {
        let mut stmt = lab
            .store()
            .connection_for_tests()
            .prepare("SELECT (upload_date - business_date)::BIGINT, count(*), count(DISTINCT basket_id) FROM bronze.events GROUP BY 1 ORDER BY 1")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    let shown = |lab: &recount::lake::Lab| -> Vec<(i64, i64, i64)> {
        reports::lateness::lateness(lab, false, None).unwrap().buckets.iter().map(|b| (b.days, b.events, b.keys)).collect()
    };
    land::land(&mut lab, small_world(), &ups[..3]).unwrap();
    let first = shown(&lab);
    assert_eq!(first, direct(&lab));
    land::land(&mut lab, small_world(), &ups[3..6]).unwrap();
    let second = shown(&lab);
    assert_ne!(first, second, "three more uploads landed");
    assert_eq!(second, direct(&lab));
    let by_country: i64 = reports::lateness::lateness(&lab, true, None).unwrap().buckets.iter().map(|b| b.events).sum();
    assert_eq!(by_country, second.iter().map(|b| b.1).sum::<i64>(), "per country sums to the whole in events");
}

#[test]
fn the_kept_duckdb_recount_is_each_dates_own_recount_and_is_counted_again_after_a_landing() {
    // check reads DuckDB's recount of every date at once, kept per window until a file lands. It
    // must give each date, window and store what the date's own statement gives (re-sent and
    // split baskets, and the part beyond the window), with whole keys and with colliding ones.
    let ups = uploads(small_world());
    let (first, rest) = ups.split_at(ups.len() / 2);
    for bits in [64, 6] {
        let dir = tempdir();
        let mut lab = open_lab(dir.path());
        lab.basket_key_bits = bits;
        let compare = |lab: &recount::lake::Lab| -> BTreeMap<(chrono::NaiveDate, u32), Vec<recount::store::DuckRecount>> {
            let mut stmt =
                lab.store().connection_for_tests().prepare("SELECT DISTINCT business_date FROM bronze.cells ORDER BY 1").unwrap();
            let dates: Vec<chrono::NaiveDate> = stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
            let mut all = BTreeMap::new();
            for late_days in [0, 2, 5] {
                for &d in &dates {
                    let kept = recount::recompute::duckdb_recount(lab, d, late_days).unwrap();
                    assert_eq!(
                        kept,
                        recount::recompute::duckdb_recount_alone(lab, d, late_days).unwrap(),
                        "{bits} bits, {d}, window {late_days}"
                    );
                    all.insert((d, late_days), kept);
                }
            }
            all
        };
        land::land(&mut lab, small_world(), first).unwrap();
        let before = compare(&lab);
        assert!(before.values().flatten().any(|r| r.beyond_baskets > 0), "some winners lie beyond a window");
        land::land(&mut lab, small_world(), rest).unwrap();
        let after = compare(&lab);
        let changed = before.iter().filter(|(k, v)| after.get(*k) != Some(*v)).count();
        assert!(changed > 0, "{bits} bits: the later uploads' late rows change some dates, and the kept recount shows them");
        let kept = |q: &str| -> i64 { lab.store().connection_for_tests().query_row(q, [], |r| r.get(0)).unwrap() };
        assert_eq!(kept("SELECT count(DISTINCT through_file_id) FROM recompute.duckdb_recount"), 1, "the older bronze's recounts are gone");
        assert_eq!(kept("SELECT count(DISTINCT late_days) FROM recompute.duckdb_recount"), 3, "one recount per window asked for");
        assert_eq!(kept("SELECT count(*) FROM recompute.duckdb_recounted"), 3, "and each listed once");
    }
}

#[test]
fn a_check_whose_recount_of_every_date_cannot_be_kept_recounts_its_date_alone() {
    // The kept recount only saves time. Make its table unwritable (a view in its place): the
    // statement for every date fails, its transaction rolls back, and check answers from the
    // date's own recount, as it did before the recount was kept.
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    let ups = uploads(small_world());
    land::land(&mut lab, small_world(), &ups[..4]).unwrap();
    backfill(&lab, ups[..4].iter().rev().copied());
    lab.store()
        .connection_for_tests()
        .execute_batch("ALTER TABLE recompute.duckdb_recount RENAME TO recount_aside; CREATE VIEW recompute.duckdb_recount AS SELECT * FROM recompute.recount_aside")
        .unwrap();
    // Bringing the caches up to date keeps the others, and leaves this one to the checks.
    reports::freshen(&mut lab).unwrap();
    let conn = lab.store().connection_for_tests();
    for &d in &ups[1..4] {
        let kept = recount::recompute::duckdb_recount(&lab, d, 2).unwrap();
        assert!(!kept.is_empty(), "{d}");
        assert_eq!(kept, recount::recompute::duckdb_recount_alone(&lab, d, 2).unwrap(), "{d}");
        let c = reports::check::check(&lab, d, None).unwrap();
        assert!(c.engines_agree, "{d}: {:?}", c.engine_disagreements);
    }
    let listed = |lab: &recount::lake::Lab| -> i64 {
        lab.store().connection_for_tests().query_row("SELECT count(*) FROM recompute.duckdb_recounted", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(listed(&lab), 0, "nothing is listed as kept: the attempt rolled back");
    // The table back in place: this process does not try again (the statement costs 0.3-0.45 s
    // on the full world, and would fail the same way on every check), so its checks still answer
    // from the date alone, and nothing is kept...
    conn.execute_batch("DROP VIEW recompute.duckdb_recount; ALTER TABLE recompute.recount_aside RENAME TO duckdb_recount").unwrap();
    for &d in &ups[1..4] {
        assert!(reports::check::check(&lab, d, None).unwrap().engines_agree, "{d}");
    }
    reports::freshen(&mut lab).unwrap();
    assert_eq!(listed(&lab), 0, "the same process tried the same newest file and window once");
    // ...until the lab is opened again (or a file lands): its first check keeps the recount.
    drop(lab);
    let lab = open_lab(dir.path());
    assert!(reports::check::check(&lab, ups[2], None).unwrap().engines_agree);
    assert_eq!(listed(&lab), 1, "a new process keeps the recount of the default window");
}

#[test]
fn a_run_whose_rows_are_all_beyond_the_window_is_recorded_as_skipped_with_them() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-08-10",
        "a.jsonl.gz",
        &[event("ev-1", "B1", "LON1", "2026-08-10T09:00:00.000Z", "2026-08-10T09:00:01.000Z", "GBP", &[500])],
    );
    // A till five days late: its only row is older than upload - late_days.
    w.file(
        "2026-08-15",
        "b.jsonl.gz",
        &[event("ev-2", "B2", "LON1", "2026-08-10T10:00:00.000Z", "2026-08-15T08:00:00.000Z", "GBP", &[700])],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-10"), day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-10"), TriggerKind::Upload, opts()).unwrap();
    let r = v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    assert_eq!(r.snapshot.operation, snapshot::Operation::Skipped);
    assert!(r.dates.is_empty(), "{:?}", r.dates);
    assert_eq!(
        r.beyond_window,
        vec![v2::BeyondWindow {
            business_date: day("2026-08-10"),
            currency: "GBP".into(),
            rows: 1,
            revenue_minor: 700,
            future_dated: false
        }]
    );
    assert_eq!(r.snapshot.beyond_window_rows, 1);
    assert_eq!(r.snapshot.fingerprint.to_string(), fingerprint(&lab), "the record carries gold as it stands");
}

#[test]
fn landing_on_one_thread_or_four_gives_the_same_bronze() {
    // DuckDB's threads parse the files and insert what they parse: the rows, cells and records
    // must not depend on how many threads there are or which thread took which file.
    let table_digest = |lab: &recount::lake::Lab, t: &str| -> String {
        lab.store()
            .connection_for_tests()
            .query_row(
                &format!("SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(CAST(x AS VARCHAR))::HUGEINT), 0)::VARCHAR FROM {t} x"),
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let mut digests = Vec::new();
    for threads in [1, 4] {
        let dir = tempdir();
        let mut lab = open_lab(dir.path());
        lab.store().connection_for_tests().execute_batch(&format!("SET threads = {threads}")).unwrap();
        land_all(&mut lab, small_world());
        let files: i64 = lab.store().connection_for_tests().query_row("SELECT count(*) FROM raw.files", [], |r| r.get(0)).unwrap();
        assert!(files > 8, "the small world has enough files for every thread");
        digests.push(
            ["bronze.events", "bronze.cells", "bronze.quarantine", "bronze.split_baskets", "bronze.multi_copies", "raw.files"]
                .map(|t| table_digest(&lab, t)),
        );
    }
    assert_eq!(digests[0], digests[1]);
}

#[test]
fn baskets_whose_keys_collide_are_still_told_apart_by_basket_id() {
    // v2 tells baskets apart by a 64-bit key of basket_id. With 6 bits kept, thousands of
    // baskets share each key: landing must list the collisions, and v2 must then give the same
    // silver, gold and fingerprint as a lab whose keys are whole.
    let ups = uploads(small_world());
    let build = |bits: u32| {
        let dir = tempdir();
        let mut lab = open_lab(dir.path());
        lab.basket_key_bits = bits;
        land_all(&mut lab, small_world());
        backfill(&lab, ups.iter().rev().copied());
        (dir, lab)
    };
    let (_a, whole) = build(64);
    let (_b, narrow) = build(6);
    let count = |lab: &recount::lake::Lab, q: &str| -> i64 { lab.store().connection_for_tests().query_row(q, [], |r| r.get(0)).unwrap() };
    assert_eq!(count(&whole, "SELECT count(*) FROM bronze.key_collisions"), 0);
    assert_eq!(count(&narrow, "SELECT count(*) FROM bronze.key_collisions"), 64, "every 6-bit key is shared");
    assert!(count(&narrow, "SELECT count(DISTINCT basket_key) FROM bronze.events") <= 64);
    assert_eq!(fingerprint(&narrow), fingerprint(&whole));
    let silver = "SELECT count(*)::VARCHAR || ':' || sum(hash(basket_id || '|' || event_id)::HUGEINT)::VARCHAR FROM silver.baskets";
    let text = |lab: &recount::lake::Lab, q: &str| -> String { lab.store().connection_for_tests().query_row(q, [], |r| r.get(0)).unwrap() };
    assert_eq!(text(&narrow, silver), text(&whole, silver), "the same winners");
    let split = "SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(basket_id || '|' || business_date)::HUGEINT), 0)::VARCHAR FROM bronze.split_baskets";
    assert_eq!(text(&narrow, split), text(&whole, split), "the same split baskets");
    // Landed one upload at a time, each landing looks only at the keys its files hold, among
    // everything landed before: the same split baskets and the same collisions.
    let dir = tempdir();
    let mut daily = open_lab(dir.path());
    daily.basket_key_bits = 6;
    for &u in &ups {
        land::land(&mut daily, small_world(), &[u]).unwrap();
    }
    assert_eq!(text(&daily, split), text(&whole, split), "the same split baskets, landed day by day");
    assert_eq!(count(&daily, "SELECT count(*) FROM bronze.key_collisions"), 64, "the same collisions, landed day by day");
    // And the same keys with several copies: those v2 ranks, while every other key's row wins alone.
    let multi =
        "SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(basket_key, business_date)::HUGEINT), 0)::VARCHAR FROM bronze.multi_copies";
    let dir = tempdir();
    let mut daily_whole = open_lab(dir.path());
    for &u in &ups {
        land::land(&mut daily_whole, small_world(), &[u]).unwrap();
    }
    assert!(count(&whole, "SELECT count(*) FROM bronze.multi_copies") > 0, "the small world re-sends baskets");
    assert_eq!(text(&daily_whole, multi), text(&whole, multi), "the same keys with several copies, landed day by day");
    // check's DuckDB recount tells baskets apart the same way: it still agrees with polars.
    for &d in &ups[2..5] {
        let c = reports::check::check(&narrow, d, None).unwrap();
        assert!(c.engines_agree, "{d}: {:?}", c.engine_disagreements);
        let w = reports::check::check(&whole, d, None).unwrap();
        let baskets = |c: &reports::check::CheckReport| c.countries.iter().map(|x| (x.v2_baskets, x.recompute_baskets)).collect::<Vec<_>>();
        assert_eq!(baskets(&c), baskets(&w), "{d}");
    }

    // Colliding baskets that share a date and nothing else: eight baskets, one copy each, and
    // one bit of key, so at least two of them share a key.
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let lines: Vec<String> = (0..8)
        .map(|i| event(&format!("ev-{i}"), &format!("B{i}"), "LON1", "2026-08-15T10:00:00.000Z", "2026-08-15T10:05:00.000Z", "GBP", &[100]))
        .collect();
    w.file("2026-08-15", "a.jsonl.gz", &lines);
    let mut lab = open_lab(dir.path());
    lab.basket_key_bits = 1;
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    assert!(count(&lab, "SELECT count(*) FROM bronze.key_collisions") > 0, "the shared keys are listed");
    assert_eq!(count(&lab, "SELECT sum(baskets) FROM gold.daily_store_sales"), 8, "eight baskets, whatever their keys");
}

#[test]
fn landing_in_slices_of_basket_keys_finds_the_same_copies() {
    // A landing groups basket keys a slice at a time (the keys whose low bits are the slice's
    // number) when its budget does not hold them at once. Cut the small world into many
    // slices, with whole keys and with 6-bit keys that collide, in a first landing (every key
    // new), a day on top of it (bronze probed with the day's keys) and the rest at once (as
    // large as bronze: every key grouped): the split baskets, the keys with several copies and
    // the collisions are those of one landing of the world in one slice.
    let ups = uploads(small_world());
    let (first, rest) = ups.split_at(ups.len() / 2);
    let (day, rest) = rest.split_at(1);
    let lists = |bits: u32, rows_per_slice: i64, landings: &[&[chrono::NaiveDate]]| -> Vec<String> {
        let dir = tempdir();
        let mut lab = open_lab(dir.path());
        lab.basket_key_bits = bits;
        lab.key_rows_per_slice = Some(rows_per_slice);
        for ups in landings {
            land::land(&mut lab, small_world(), ups).unwrap();
        }
        [
            "SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(basket_id || '|' || business_date)::HUGEINT), 0)::VARCHAR FROM bronze.split_baskets",
            "SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(basket_key, business_date)::HUGEINT), 0)::VARCHAR FROM bronze.multi_copies",
            "SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(basket_key)::HUGEINT), 0)::VARCHAR FROM bronze.key_collisions",
        ]
        .iter()
        .map(|q| lab.store().connection_for_tests().query_row(q, [], |r| r.get::<_, String>(0)).unwrap())
        .collect()
    };
    let landings: [&[chrono::NaiveDate]; 3] = [first, day, rest];
    for bits in [64, 6] {
        let whole = lists(bits, i64::MAX, &[&ups]);
        assert!(!whole[1].starts_with("0:"), "{bits} bits: the small world re-sends baskets");
        assert_eq!(lists(bits, i64::MAX, &landings), whole, "{bits} bits, three landings");
        // 500 rows a slice: each landing (about 15,000, 1,500 and 15,000 rows) in up to 32
        // slices; 7,000: in up to 4.
        assert_eq!(lists(bits, 500, &landings), whole, "{bits} bits, many slices");
        assert_eq!(lists(bits, 7_000, &landings), whole, "{bits} bits, a few slices");
    }
}

#[test]
fn a_rebuild_of_dates_with_a_gap_rewrites_just_those_dates() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land_all(&mut lab, small_world());
    let ups = uploads(small_world());
    backfill(&lab, ups.iter().copied());
    let before = fingerprint(&lab);
    let (a, b) = (ups[1], ups[3]);
    let r = v2::rebuild_dates(&lab, &[b, a], v2::V2Options { force: true, ..opts() }).unwrap();
    assert_eq!(r.dates.iter().map(|d| (d.business_date, d.action.as_str())).collect::<Vec<_>>(), vec![(a, "overwrite"), (b, "overwrite")]);
    let count = |q: &str, d: chrono::NaiveDate| -> i64 {
        lab.store().connection_for_tests().query_row(q, duckdb::params![r.snapshot.snapshot_id, d], |row| row.get(0)).unwrap()
    };
    for d in &r.dates {
        let silver = count("SELECT count(*) FROM silver.versions WHERE snapshot_id = ? AND business_date = ?", d.business_date);
        let gold = count("SELECT count(*) FROM audit.gold_history WHERE snapshot_id = ? AND business_date = ?", d.business_date);
        assert!(silver > 0 && gold > 0);
        assert_eq!((d.silver_added, d.gold_added), (silver, gold), "{}", d.business_date);
        assert_eq!((d.silver_replaced, d.gold_replaced), (silver, gold), "same inputs, same rows");
    }
    let between = count("SELECT count(*) FROM silver.versions WHERE snapshot_id = ? AND business_date = ?", ups[2]);
    assert_eq!(between, 0, "the date between them is not rewritten");
    assert_eq!(fingerprint(&lab), before, "the same inputs give the same gold");
    assert_eq!(r.snapshot.fingerprint.to_string(), before);
}

/// Each date's current version: its input hash, as the snapshot that wrote it recorded it.
fn current_hashes(lab: &recount::lake::Lab) -> Vec<(String, String)> {
    let conn = lab.store().connection_for_tests();
    let mut s = conn
        .prepare(
            "SELECT sd.business_date::VARCHAR, sd.input_hash FROM audit.snapshot_dates sd
             JOIN audit.versions_as_of(NULL) v USING (business_date, snapshot_id) ORDER BY 1",
        )
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_range_in_one_pass_gives_the_per_upload_loops_gold_and_hashes_in_one_snapshot() {
    let dir = tempdir();
    let ups = uploads(small_world());
    let mut one = recount::lake::Lab::open(&dir.path().join("one")).unwrap();
    let mut each = recount::lake::Lab::open(&dir.path().join("each")).unwrap();
    land_all(&mut one, small_world());
    land_all(&mut each, small_world());
    let (report, beyond) = v2::run_range(&one, &ups, opts()).unwrap();
    for &u in ups.iter().rev() {
        v2::run_upload(&each, u, TriggerKind::Backfill, opts()).unwrap();
    }
    // The pass's gold sums its winners again (a long write), the per-upload runs' sum the silver
    // rows each just wrote (a few dates each): the two statements give the same gold.
    assert_eq!(fingerprint(&one), fingerprint(&each), "the same gold");
    assert_eq!(current_hashes(&one), current_hashes(&each), "the same input hash for every date");
    // One write: one snapshot that names every upload, and every date written by it.
    assert_eq!(recount::lake::snapshot::head(&one).unwrap(), Some(report.snapshot.snapshot_id));
    assert_eq!(report.snapshot.trigger.kind, TriggerKind::Backfill);
    assert_eq!(report.snapshot.trigger.detail, format!("backfill of uploads {}..{}", ups[0], ups[ups.len() - 1]));
    assert_eq!(report.snapshot.dates_rewritten as usize, current_hashes(&one).len());
    let per_upload_beyond: i64 = ups
        .iter()
        .map(|&u| v2::run_upload(&each, u, TriggerKind::Upload, opts()).unwrap().beyond_window.iter().map(|b| b.rows).sum::<i64>())
        .sum();
    assert_eq!(beyond.iter().map(|(_, b)| b.rows).sum::<i64>(), per_upload_beyond, "every upload's rows beyond the window, once");
    // The next single run finds its inputs as the pass recorded them.
    for &u in &ups {
        let again = v2::run_upload(&one, u, TriggerKind::Upload, opts()).unwrap();
        assert_eq!(again.snapshot.operation, recount::store::Operation::Skipped, "upload {u}: {:?}", again.dates);
    }
    // Its diff is one write whose parts sum to each date's change.
    let d = ups[ups.len() / 2];
    let diff = reports::history::diff(&one, d, None, Some(report.snapshot.snapshot_id)).unwrap();
    assert!(diff.countries.iter().all(|c| c.parts_sum_to_change && c.baskets_before == 0), "{:?}", diff.countries);
}

#[test]
fn a_range_longer_than_one_insert_is_written_in_slices_with_the_per_upload_loops_gold_and_counts() {
    // 90 upload days: the pass rebuilds more dates than one silver insert takes (64), so it
    // writes them a slice at a time in its one transaction.
    let dir = tempdir();
    let world = dir.path().join("world");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["generate", "--preset", "small", "--days", "90", "--out", world.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ups = uploads(&world);
    assert_eq!(ups.len(), 90);
    let mut one = recount::lake::Lab::open(&dir.path().join("one")).unwrap();
    let mut each = recount::lake::Lab::open(&dir.path().join("each")).unwrap();
    land_all(&mut one, &world);
    land_all(&mut each, &world);
    let (report, _) = v2::run_range(&one, &ups, opts()).unwrap();
    assert!(report.snapshot.dates_rewritten > 64, "{}", report.snapshot.dates_rewritten);
    for &u in &ups {
        v2::run_upload(&each, u, TriggerKind::Backfill, opts()).unwrap();
    }
    assert_eq!(fingerprint(&one), fingerprint(&each), "the same gold");
    assert_eq!(current_hashes(&one), current_hashes(&each), "the same input hash for every date");
    // Every date's counts are its own slice's: silver rows are baskets, gold rows are stores.
    for d in report.dates.iter().filter(|d| d.action == recount::store::DateAction::Overwrite) {
        assert!(d.silver_added > 0 && d.gold_added > 0 && d.gold_added <= 60, "{d:?}");
    }
    // The record's fingerprint and `fingerprint`, both from gold's text read a slice of days at a
    // time, are the one DuckDB hashes over the whole of gold in one string.
    let whole = duckdb_fingerprint(&one);
    assert_eq!((report.snapshot.fingerprint.rows, report.snapshot.fingerprint.md5.clone()), whole);
    let now = recount::lake::snapshot::fingerprint(&one).unwrap();
    assert_eq!((now.rows, now.md5), whole);
    let total: i64 = report.dates.iter().map(|d| d.gold_added).sum();
    assert_eq!(total, recount::lake::snapshot::fingerprint(&one).unwrap().rows, "gold's rows, each counted once");
}

#[test]
fn bronze_keeps_event_and_basket_ids_uncompressed_and_till_id_compressed() {
    // Nearly every event_id and basket_id is distinct: compressing them was a large part of a
    // landing's insert, for a file a third smaller (docs/performance.md). The other columns keep
    // DuckDB's choice, which for till_id (a few values a store) is a compressed one.
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, small_world(), &uploads(small_world())).unwrap();
    let conn = lab.store().connection_for_tests();
    conn.execute_batch("CHECKPOINT").unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT column_name, string_agg(DISTINCT compression, ',' ORDER BY compression) FROM pragma_storage_info('bronze.event_rows') \
             WHERE segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1",
        )
        .unwrap();
    let kinds: BTreeMap<String, String> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap();
    for column in ["event_id", "basket_id"] {
        assert_eq!(kinds.get(column).map(String::as_str), Some("Uncompressed"), "{column}: {kinds:?}");
    }
    assert!(kinds.get("till_id").is_some_and(|k| !k.contains("Uncompressed")), "till_id is compressed: {kinds:?}");
}
