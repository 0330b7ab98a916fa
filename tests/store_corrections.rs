//! Store corrections: a landed store whose stores.csv row changes (time zone, country or
//! currency) is a correction. Every date holding its events under the old or the new row is
//! rebuilt in one v2 run, and gold equals gold built from scratch on the corrected stores.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use common::*;
use recount::lake::land;
use recount::lake::{Lab, snapshot, v2};
use recount::reports;
use recount::store::{ChangeKind, DateAction, Operation, TriggerKind};
use std::path::{Path, PathBuf};

#[path = "common/reference.rs"]
mod reference;

/// The small world with one row of stores.csv rewritten by `edit` (store id → new row), in a
/// directory of its own; returns the world and the edited store's id.
fn world_with_store_edit(from: &Path, dest: &Path, edit: impl Fn(&str) -> Option<String>) -> PathBuf {
    copy_dir(from, dest);
    let text = std::fs::read_to_string(dest.join("stores.csv")).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let new = if i == 0 { None } else { edit(line) };
        match new {
            Some(l) if l.is_empty() => continue,
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    std::fs::write(dest.join("stores.csv"), out).unwrap();
    dest.to_path_buf()
}

/// A store of the small world in Europe/London with a basket sent more than once at an hour
/// whose date is the next in Singapore (16:00 to 23:00 UTC): moving the store there moves the
/// re-sent basket to another date, whose copies the landing must list again.
fn a_london_store_whose_re_sent_basket_moves(lab: &Lab) -> String {
    lab.store()
        .connection_for_tests()
        .query_row(
            "SELECT min(store_id) FROM bronze.events
             WHERE store_id IN (SELECT store_id FROM raw.stores WHERE timezone = 'Europe/London')
               AND basket_key IN (SELECT basket_key FROM bronze.multi_copies)
               AND hour(event_ts) BETWEEN 16 AND 22",
            [],
            |r| r.get::<_, Option<String>>(0),
        )
        .unwrap()
        .expect("the small world has a re-sent London basket of an evening")
}

fn daily(lab: &mut Lab, world: &Path) {
    for u in uploads(world) {
        land::land(lab, world, &[u]).unwrap();
        v2::run_upload(lab, u, TriggerKind::Daily, opts()).unwrap();
    }
}

/// A lab built from scratch on `world`, backwards.
fn from_scratch(dir: &Path, world: &Path) -> String {
    let mut lab = Lab::open(&dir.join("fresh")).unwrap();
    land_all(&mut lab, world);
    for u in uploads(world).into_iter().rev() {
        v2::run_upload(&lab, u, TriggerKind::Backfill, opts()).unwrap();
    }
    fingerprint(&lab)
}

#[test]
fn a_time_zone_correction_rebuilds_the_dates_it_moves_and_gold_equals_a_build_on_the_corrected_stores() {
    let dir = tempdir();
    let mut lab = open_lab(dir.path());
    daily(&mut lab, small_world());
    let store = a_london_store_whose_re_sent_basket_moves(&lab);
    let before = fingerprint(&lab);
    let listed: i64 = lab.store().connection_for_tests().query_row("SELECT count(*) FROM bronze.multi_copies", [], |r| r.get(0)).unwrap();

    let world = world_with_store_edit(small_world(), &dir.path().join("corrected"), |line| {
        line.starts_with(&format!("{store},")).then(|| line.replace("Europe/London", "Asia/Singapore"))
    });
    let landed = land::land(&mut lab, &world, &uploads(&world)).unwrap();
    assert_eq!(landed.stores_changed.len(), 1, "{landed:?}");
    assert_eq!(landed.stores_changed[0].describe(), format!("store {store}: time zone Europe/London → Asia/Singapore"));
    assert!(landed.rederived_files > 0 && landed.rederived_events > 0, "{landed:?}");
    // Each re-derived version (under pos/) is a hard link to the bytes of the version it replaces
    // (under versions/), not a copy.
    let linked = lab.store().landed_files().unwrap().into_values().flatten().filter(|f| f.current && f.version > 1).count();
    let mut links = 0;
    let mut dirs = vec![lab.raw_root().join("pos")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                dirs.push(e.path());
            } else if std::os::unix::fs::MetadataExt::nlink(&meta) == 2 {
                links += 1;
            }
        }
    }
    assert_eq!(links, linked, "every re-derived file is linked to its previous version");
    assert!(landed.render().contains("store correction: store"), "{}", landed.render());
    assert!(landed.partitions.iter().all(|p| p.files_landed == 0), "no upload's own files landed again: {landed:?}");
    // Landing alone changes no gold: the next v2 run does.
    assert_eq!(fingerprint(&lab), before);
    // The re-derived files' keys each have a superseded copy too, never read with the new one:
    // the keys v2 ranks stay the re-sent ones (a moved basket adds its new date), and every key
    // with several current copies is listed, on each date of its copies.
    let count = |q: &str| -> i64 { lab.store().connection_for_tests().query_row(q, [], |r| r.get(0)).unwrap() };
    assert!(count("SELECT count(*) FROM bronze.multi_copies") < listed * 11 / 10, "{listed} before");
    let unlisted = "SELECT count(*) FROM (SELECT basket_key, business_date FROM bronze.current_event_rows
                    WHERE basket_key IN (SELECT basket_key FROM bronze.current_event_rows GROUP BY ALL HAVING count(*) > 1)
                    EXCEPT SELECT basket_key, business_date FROM bronze.multi_copies)";
    assert_eq!(count(unlisted), 0);

    let run = v2::run_store_changes(&lab, opts()).unwrap().expect("a pending store correction");
    assert_eq!(run.snapshot.trigger.kind, TriggerKind::Store);
    assert_eq!(run.snapshot.trigger.detail, format!("store {store}: time zone Europe/London → Asia/Singapore"));
    assert_eq!(run.snapshot.operation, Operation::Overwrite);
    let rewritten: Vec<_> = run.dates.iter().filter(|d| d.action == DateAction::Overwrite).map(|d| d.business_date).collect();
    assert!(rewritten.len() > 1, "a time zone 7 or 8 hours east moves evening baskets of many dates: {:?}", run.dates);

    // The invariant: gold equals gold built from scratch on the corrected stores.csv, and the
    // contract's plain reference agrees.
    let after = fingerprint(&lab);
    assert_ne!(after, before);
    assert_eq!(after, from_scratch(dir.path(), &world));
    assert!(after.contains(&reference::v2_fingerprint(&world, 2)), "{after}");

    // The recounts read the corrected row now, and the old one as of the snapshot before: both
    // agree with v2 then and now, on every moved date.
    let prev = run.snapshot.snapshot_id - 1;
    for &d in &rewritten {
        for as_of in [None, Some(prev)] {
            let c = reports::check::check(&lab, d, as_of).unwrap();
            assert!(c.engines_agree, "{d} as of {as_of:?}: {:?}", c.engine_disagreements);
            assert!(c.countries.iter().all(|x| x.v2_explained()), "{d} as of {as_of:?}: {:?}", c.countries);
        }
    }

    // Applied once: nothing pends, and every upload's run finds its inputs as recorded.
    assert!(v2::run_store_changes(&lab, opts()).unwrap().is_none());
    for u in uploads(&world) {
        let again = v2::run_upload(&lab, u, TriggerKind::Upload, opts()).unwrap();
        assert_eq!(again.snapshot.operation, Operation::Skipped, "upload {u}: {:?}", again.dates);
    }

    // History names the change; each moved date's diff is store-correction parts that sum to
    // its change, country by country.
    let mut kinds = std::collections::BTreeSet::new();
    for &d in &rewritten {
        let diff = reports::history::diff(&lab, d, Some(run.snapshot.snapshot_id - 1), Some(run.snapshot.snapshot_id)).unwrap();
        for country in &diff.countries {
            assert!(country.parts_sum_to_change, "{d}: {:?}", country.parts);
            assert!(country.parts.iter().all(|p| p.kind.by_store_correction()), "{d}: {:?}", country.parts);
            kinds.extend(country.parts.iter().map(|p| p.kind));
        }
        let history = reports::history::history(&lab, d, None).unwrap();
        let last = history.entries.last().unwrap();
        assert_eq!(last.trigger.detail, format!("store {store}: time zone Europe/London → Asia/Singapore"));
        assert!(last.countries.iter().any(|c| c.attribution.contains("by a store correction")), "{d}: {:?}", last.countries);
    }
    assert_eq!(kinds, [ChangeKind::StoreMovedIn, ChangeKind::StoreMovedOut].into(), "baskets move both ways between dates");

    // A rollback past the correction brings the old gold back.
    snapshot::rollback(&lab, run.snapshot.snapshot_id - 1, None).unwrap();
    assert_eq!(fingerprint(&lab), before);
}

#[test]
fn a_currency_correction_takes_in_lines_it_made_valid_and_a_store_gone_from_stores_csv_is_kept() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    w.file(
        "2026-10-20",
        "a.jsonl.gz",
        &[
            event("e1", "b1", "LON1", "2026-10-20T10:00:00Z", "2026-10-20T18:00:00Z", "GBP", &[1000]),
            event("e2", "b2", "LON1", "2026-10-20T11:00:00Z", "2026-10-20T18:00:00Z", "EUR", &[2000]),
            event("e3", "b3", "SIN1", "2026-10-20T03:00:00Z", "2026-10-20T18:00:00Z", "SGD", &[300]),
            event("e4", "b4", "NEW1", "2026-10-20T12:00:00Z", "2026-10-20T18:00:00Z", "GBP", &[500]),
        ],
    );
    let mut lab = open_lab(dir.path());
    daily(&mut lab, &w.root);
    let q = reports::listings::quarantine(&lab, None).unwrap();
    assert_eq!(q.rows.len(), 2, "EUR is not LON1's currency yet, and NEW1 is no store yet: {q:?}");

    // LON1 really takes euros (a store in Dublin); SIN1 is gone from the file; NEW1 is added.
    let fixed = "store_id,country,timezone,currency\nLON1,IE,Europe/Dublin,EUR\nBLR1,IN,Asia/Kolkata,INR\nNEW1,GB,Europe/London,GBP\n";
    let world = dir.path().join("fixed");
    copy_dir(&w.root, &world);
    std::fs::write(world.join("stores.csv"), fixed).unwrap();
    let landed = land::land(&mut lab, &world, &uploads(&world)).unwrap();
    assert_eq!(landed.stores_removed, vec!["SIN1".to_string()]);
    assert_eq!(landed.stores_readmitted, vec!["NEW1".to_string()]);
    assert!(landed.render().contains("store SIN1 is no longer in stores.csv: the lab keeps it"), "{}", landed.render());
    let run = v2::run_store_changes(&lab, opts()).unwrap().unwrap();
    assert_eq!(
        run.snapshot.trigger.detail,
        "store LON1: country GB → IE, time zone Europe/London → Europe/Dublin, currency GBP → EUR; store NEW1: added (GB, Europe/London, GBP)"
    );

    // e2 and NEW1's e4 count now and e1 is quarantined; SIN1's basket is still counted. The
    // quarantine lists the current version's lines only.
    let q = reports::listings::quarantine(&lab, None).unwrap();
    assert_eq!(q.rows.len(), 1, "{q:?}");
    assert!(q.rows[0].reason.contains("'GBP' differs from store LON1's EUR"), "{q:?}");
    let gold = lab.store().connection_for_tests();
    let rows: Vec<(String, String, String, i64)> = gold
        .prepare("SELECT store_id, country, currency, revenue_minor FROM gold.daily_store_sales ORDER BY store_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        vec![
            ("LON1".into(), "IE".into(), "EUR".into(), 2000),
            ("NEW1".into(), "GB".into(), "GBP".into(), 500),
            ("SIN1".into(), "SG".into(), "SGD".into(), 300)
        ]
    );
    // A build from scratch on the corrected stores, with SIN1's row as the lab keeps it.
    let kept = dir.path().join("kept");
    copy_dir(&world, &kept);
    std::fs::write(kept.join("stores.csv"), format!("{fixed}SIN1,SG,Asia/Singapore,SGD\n")).unwrap();
    assert_eq!(fingerprint(&lab), from_scratch(dir.path(), &kept), "gold equals a build on the corrected stores");
    // The diff per country sums: GB lost LON1's basket and gained NEW1's, IE gained one.
    let d = day("2026-10-20");
    let diff = reports::history::diff(&lab, d, Some(run.snapshot.snapshot_id - 1), Some(run.snapshot.snapshot_id)).unwrap();
    let mut parts: Vec<(String, ChangeKind, i64, i64)> = diff
        .countries
        .iter()
        .inspect(|c| assert!(c.parts_sum_to_change, "{c:?}"))
        .flat_map(|c| c.parts.iter().map(|p| (c.country.clone(), p.kind, p.baskets_delta, p.revenue_delta_minor)))
        .collect();
    parts.sort();
    assert_eq!(
        parts,
        vec![
            ("GB".into(), ChangeKind::StoreMovedIn, 1, 500),
            ("GB".into(), ChangeKind::StoreMovedOut, -1, -1000),
            ("IE".into(), ChangeKind::StoreMovedIn, 1, 2000)
        ]
    );
}
