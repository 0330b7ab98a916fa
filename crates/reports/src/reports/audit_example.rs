//! A foreign gold for a walkthrough of `recount audit` (`generate --foreign-gold`): the lab's gold
//! with one row of each fault the raw zone can show put in, each taken from what the lab says
//! that fault gives, so the audit names exactly these rows.

use super::audit::{Cause, ForeignRow, by_store, causes_of, facts, pair, snapshots};
use crate::lake::Lab;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use std::collections::BTreeMap;

/// A row put wrong on purpose: its date, its store and its cause.
pub type Fault = (NaiveDate, String, Cause);

/// A foreign gold for a walkthrough: the lab's gold with one row of each fault put in, each
/// fault's row taken from what the lab says that bug gives (so `audit` names exactly these rows).
/// Returns the rows, and each faulty row with its cause.
pub fn example(lab: &Lab, late_days: u32) -> Result<(Vec<ForeignRow>, Vec<Fault>)> {
    let mut gold: BTreeMap<(NaiveDate, String), (i64, i64)> = BTreeMap::new();
    let snapshots = snapshots(lab)?;
    let dates = lab.store().business_dates()?;
    let mut all = Vec::new();
    for &d in &dates {
        let f = facts(lab, d, late_days, by_store(lab.store().gold_by_store(d, None)?), &snapshots)?;
        gold.extend(f.right.values().map(|r| ((d, r.store_id.clone()), (r.baskets, r.revenue_minor))));
        all.push((d, f));
    }
    let mut faults: Vec<Fault> = Vec::new();
    let taken = |faults: &[Fault], d: NaiveDate, s: &str| faults.iter().any(|(fd, fs, _)| *fd == d && fs == s);
    // One row for each cause the raw zone can show: the first whose figures only that cause gives.
    for cause in [Cause::DuplicatesCounted, Cause::UtcBusinessDate, Cause::BeyondWindowIncluded, Cause::LateArrivalsMissed] {
        let found = all.iter().find_map(|(d, f)| {
            f.right.keys().find_map(|s| {
                let alt = match cause {
                    Cause::DuplicatesCounted => pair(f.copies.get(s)),
                    Cause::UtcBusinessDate => pair(f.utc.get(s)),
                    Cause::BeyondWindowIncluded => pair(f.recount.get(s)),
                    _ => f.earlier.iter().rev().find_map(|e| pair(e.gold.get(s)).filter(|_| !e.corrected)),
                }?;
                let only = causes_of(alt, s, f).iter().map(|c| c.0).collect::<Vec<_>>() == [cause];
                (only && !taken(&faults, *d, s)).then(|| (*d, s.clone(), alt))
            })
        });
        if let Some((d, s, alt)) = found {
            gold.insert((d, s.clone()), alt);
            faults.push((d, s, cause));
        }
    }
    // A retried append, a row left out, a row off by one minor unit, and a store there is none of.
    let mut rest: Vec<(NaiveDate, String)> = gold.keys().filter(|(d, s)| !taken(&faults, *d, s)).cloned().collect();
    rest.sort();
    for (i, cause) in
        [(rest.len() / 5, Cause::AppendedTwice), (2 * rest.len() / 5, Cause::MissingRow), (3 * rest.len() / 5, Cause::Unexplained)]
    {
        let Some(key) = rest.get(i).cloned() else { continue };
        let (b, r) = gold[&key];
        match cause {
            Cause::AppendedTwice => gold.insert(key.clone(), (b * 2, r.checked_mul(2).ok_or_else(|| eyre!("revenue overflows"))?)),
            Cause::MissingRow => gold.remove(&key),
            _ => gold.insert(key.clone(), (b, r.checked_add(1).ok_or_else(|| eyre!("revenue overflows"))?)),
        };
        faults.push((key.0, key.1, cause));
    }
    if let Some(d) = dates.first() {
        gold.insert((*d, "EXTRA-1".to_string()), (1, 100));
        faults.push((*d, "EXTRA-1".to_string(), Cause::ExtraRow));
    }
    faults.sort();
    let rows = gold.into_iter().map(|((business_date, store_id), (baskets, revenue_minor))| ForeignRow {
        business_date,
        store_id,
        baskets,
        revenue_minor,
        unread: None,
    });
    Ok((rows.collect(), faults))
}
