//! A model lab's dates in the model's words: every date with whether it is final and its
//! measures by v1, v2 and the recount (`summary`, `trend`), its promises and lateness. A date's
//! own records are every lab's `late` and `baskets` (`super::listings`, `super::baskets`).

use crate::lake::Lab;
use crate::lake::model::rows_of;
use crate::model::Model;
use crate::model::recount::ModelRow;
use crate::rules::Finality;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use std::collections::BTreeMap;

/// One date (and values of the model's attributes, retail's country and currency) of a model lab.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DateLine {
    pub business_date: NaiveDate,
    /// The values of the model's attributes, in its order (none when it has none).
    pub attributes: Vec<String>,
    pub finality: Finality,
    pub v1: Option<Vec<i64>>,
    pub v2: Option<Vec<i64>>,
    pub recompute: Option<Vec<i64>>,
    /// Where v2 and the recount differ: the first copy of each key that only arrived past the
    /// window, which the recount (no window) counts and gold never does.
    pub beyond_window: Option<Vec<i64>>,
}

impl DateLine {
    /// v2 equals the recount of the lab's current files.
    pub fn agrees(&self) -> bool {
        self.v2 == self.recompute
    }
    /// v2 and the recount differ by exactly the keys past the window: the rules' difference.
    pub fn explained(&self) -> bool {
        let Some(beyond) = &self.beyond_window else { return false };
        let v2 = self.v2.clone().unwrap_or_else(|| vec![0; beyond.len()]);
        let sum: Option<Vec<i64>> = v2.iter().zip(beyond).map(|(a, b)| a.checked_add(*b)).collect();
        sum.as_ref() == self.recompute.as_ref()
    }
}

/// Every date of a model lab, each line a date and part: its `trend` and its navigator read it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DatesReport {
    pub model: Model,
    pub late_days: u32,
    pub newest_upload: Option<NaiveDate>,
    pub dates: Vec<DateLine>,
}

/// Every attribute's position: a date's lines are keyed by all of them (retail's country and
/// currency), so that a trend can show each part and a money measure its currency.
fn every_attribute(model: &Model) -> Vec<usize> {
    (0..model.attributes.len()).collect()
}

pub(crate) type Totals = BTreeMap<(NaiveDate, Vec<String>), Vec<i64>>;

/// Rows summed per date and attribute values; a sum past 64 bits is an error, never a wrapped
/// number.
fn totals(model: &Model, rows: &[ModelRow]) -> Result<Totals> {
    let positions = every_attribute(model);
    let mut out: Totals = BTreeMap::new();
    for r in rows {
        let key = (r.business_date, positions.iter().map(|&i| r.attributes.get(i).cloned().unwrap_or_default()).collect());
        let sum = out.entry(key).or_insert_with(|| vec![0; model.measures.len()]);
        for (s, m) in sum.iter_mut().zip(&r.measures) {
            *s = s.checked_add(*m).ok_or_else(|| eyre!("a total of {} overflows 64 bits", r.business_date))?;
        }
    }
    Ok(out)
}

/// `side`'s totals per date and attribute values (`Store::model_date_totals`), summed by
/// DuckDB: a line per date and part is read, not a row per grain.
fn summed(lab: &Lab, model: &Model, side: &str) -> Result<Totals> {
    totals_by(lab, model, side, &every_attribute(model), None)
}

/// `side`'s totals per date and the values of the attributes at `positions`, as of snapshot
/// `as_of` (None: now; gold alone keeps its versions), summed by DuckDB. A total past 64 bits is
/// an error that names the date.
pub(crate) fn totals_by(lab: &Lab, model: &Model, side: &str, positions: &[usize], as_of: Option<i64>) -> Result<Totals> {
    let mut keyed = [false; crate::store::model::ATTRIBUTE_COLUMNS];
    for &i in positions {
        if let Some(c) = keyed.get_mut(i) {
            *c = true;
        }
    }
    let mut out = Totals::new();
    for t in lab.store().model_date_totals(side, keyed, as_of)? {
        if t.overflows {
            color_eyre::eyre::bail!("a total of {} overflows 64 bits", t.business_date);
        }
        let attributes = [t.a1, t.a2, t.a3, t.a4];
        let key = positions.iter().map(|&i| attributes.get(i).cloned().flatten().unwrap_or_default()).collect();
        let measures = [t.m1, t.m2, t.m3, t.m4, t.m5, t.m6];
        out.insert((t.business_date, key), measures.iter().take(model.measures.len()).map(|m| m.unwrap_or(0)).collect());
    }
    Ok(out)
}

/// Every date of a model lab: gold, v1 and the recount totalled per date and currency, with each
/// date's finality. The kept recount, when current, is totalled where it is kept.
pub fn dates(lab: &Lab, model: &Model, late_days: u32) -> Result<DatesReport> {
    let kept = !lab.is_mirror() && lab.store().model_recount_input()?.1;
    let recompute = if kept { summed(lab, model, "recount")? } else { totals(model, &crate::lake::model::recompute(lab, model)?)? };
    dates_of(lab, model, late_days, recompute)
}

/// The same, beside a recount of the lab's current files already made.
pub fn dates_with(lab: &Lab, model: &Model, late_days: u32, recount: &[ModelRow]) -> Result<DatesReport> {
    dates_of(lab, model, late_days, totals(model, recount)?)
}

fn dates_of(lab: &Lab, model: &Model, late_days: u32, recompute: Totals) -> Result<DatesReport> {
    let store = lab.store();
    let v2 = summed(lab, model, "gold")?;
    let v1 = summed(lab, model, "naive")?;
    let mut keys: Vec<&(NaiveDate, Vec<String>)> = v2.keys().chain(v1.keys()).chain(recompute.keys()).collect();
    keys.sort();
    keys.dedup();
    let days: Vec<NaiveDate> = {
        let mut d: Vec<NaiveDate> = keys.iter().map(|k| k.0).collect();
        d.dedup();
        d
    };
    let landed = store.model_uploads(None)?;
    let finality: BTreeMap<NaiveDate, Finality> =
        super::status::model_statuses(lab, late_days, &days, None)?.into_iter().map(|s| (s.business_date, s.finality)).collect();
    let differ: std::collections::BTreeSet<NaiveDate> = keys.iter().filter(|k| v2.get(*k) != recompute.get(*k)).map(|k| k.0).collect();
    let mut beyond: Totals = BTreeMap::new();
    for d in differ {
        beyond.extend(totals(model, &crate::lake::model::never_counted(lab, model, d, late_days, None)?)?);
    }
    let dates = keys
        .into_iter()
        .map(|k| DateLine {
            business_date: k.0,
            attributes: k.1.clone(),
            finality: finality.get(&k.0).cloned().unwrap_or(Finality::Unbuilt),
            v1: v1.get(k).cloned(),
            v2: v2.get(k).cloned(),
            recompute: recompute.get(k).cloned(),
            beyond_window: (v2.get(k) != recompute.get(k)).then(|| beyond.get(k).cloned().unwrap_or_else(|| vec![0; model.measures.len()])),
        })
        .collect();
    Ok(DatesReport { model: model.clone(), late_days, newest_upload: landed.last().copied(), dates })
}

/// `evidence DATE --out DIR` on a model lab: every snapshot, the date's gold in the model's
/// columns, and its newest change (the entities it touched, and every other date's version
/// before and after it: the same version is untouched).
pub fn evidence(lab: &Lab, model: &Model, d: NaiveDate, out: &std::path::Path) -> Result<Vec<super::evidence::EvidenceFile>> {
    use color_eyre::eyre::WrapErr;
    std::fs::create_dir_all(out).wrap_err_with(|| format!("creating {}", out.display()))?;
    let store = lab.store();
    let columns = model.gold_columns();
    let gold: Vec<serde_json::Map<String, serde_json::Value>> = rows_of(model, store.model_gold(None)?)
        .into_iter()
        .filter(|r| r.business_date == d)
        .map(|r| {
            let mut values = vec![serde_json::json!(r.business_date)];
            values.extend(r.grain.iter().chain(&r.attributes).map(|v| serde_json::json!(v)));
            values.extend(r.measures.iter().map(|v| serde_json::json!(v)));
            columns.iter().cloned().zip(values).collect()
        })
        .collect();
    let versions = store.model_date_versions(d)?;
    let comparison = match versions.as_slice() {
        [] => serde_json::json!({ "business_date": d, "history": null, "other_dates": [] }),
        [.., last] => {
            let prev = versions.len().checked_sub(2).map(|i| versions[i].snapshot_id);
            let history = super::model_lab::history(lab, model, d, (prev, Some(last.snapshot_id)), None)?;
            let at = |id: Option<i64>| -> Result<BTreeMap<NaiveDate, i64>> {
                Ok(match id {
                    Some(id) => store.model_versions_at(Some(id))?.into_iter().map(|v| (v.business_date, v.snapshot_id)).collect(),
                    None => BTreeMap::new(),
                })
            };
            let (before, after) = (at(prev)?, at(Some(last.snapshot_id))?);
            let mut others: Vec<NaiveDate> = before.keys().chain(after.keys()).copied().filter(|x| *x != d).collect();
            others.sort();
            others.dedup();
            let other_dates: Vec<serde_json::Value> = others
                .into_iter()
                .map(|x| {
                    let (b, a) = (before.get(&x), after.get(&x));
                    serde_json::json!({ "business_date": x, "version_before": b, "version_after": a, "untouched": b == a })
                })
                .collect();
            serde_json::json!({ "business_date": d, "history": history, "other_dates": other_dates })
        }
    };
    let mut files = Vec::new();
    let snapshots = serde_json::json!({ "model": model.name, "snapshots": store.model_snapshots()? });
    super::evidence::put(out, "run_snapshot_map.json", &snapshots, &mut files)?;
    let gold = serde_json::json!({ "business_date": d, "table": format!("gold.{}", model.gold), "rows": gold });
    super::evidence::put(out, &format!("gold_{d}.json"), &gold, &mut files)?;
    super::evidence::put(out, &format!("comparison_{d}.json"), &comparison, &mut files)?;
    Ok(files)
}
