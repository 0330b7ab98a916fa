//! `recount evidence DATE --out DIR`: JSON files an auditor can keep.

use super::history::{self, DiffReport};
use crate::lake::Lab;
use crate::lake::snapshot::{self, SnapshotRecord};
use crate::recompute::GoldRow;
use crate::store::hex;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use md5::Digest;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, serde::Serialize)]
pub struct OtherDate {
    pub business_date: NaiveDate,
    pub version_before: Option<i64>,
    pub gold_rows_before: i64,
    pub version_after: Option<i64>,
    pub gold_rows_after: i64,
    pub untouched: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub business_date: NaiveDate,
    /// The two most recent snapshots that rewrote the date.
    pub diff: Option<DiffReport>,
    /// Every other date at those two snapshots: same version and row count means untouched.
    pub other_dates: Vec<OtherDate>,
}

/// A file of evidence and its MD5: the lab's, and the Spark job's as its answer names them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EvidenceFile {
    pub path: PathBuf,
    pub md5: String,
}

/// Writes `value` as pretty JSON to `out/name`, and lists the file with its MD5.
pub fn put(out: &Path, name: &str, value: &serde_json::Value, files: &mut Vec<EvidenceFile>) -> Result<()> {
    let path = out.join(name);
    let text = crate::sanitize::json(serde_json::to_string_pretty(value)?) + "\n";
    std::fs::write(&path, &text).wrap_err_with(|| format!("writing {}", path.display()))?;
    files.push(EvidenceFile { md5: hex(&md5::Md5::digest(text.as_bytes())), path });
    Ok(())
}

/// Each date's version and gold rows as of `snapshot`.
fn dates_at(lab: &Lab, snapshot: i64) -> Result<std::collections::BTreeMap<NaiveDate, (i64, i64)>> {
    Ok(lab.store().dates_at(snapshot)?.into_iter().map(|r| (r.business_date, (r.version, r.gold_rows))).collect())
}

pub fn write(lab: &Lab, d: NaiveDate, out: &Path) -> Result<Vec<EvidenceFile>> {
    std::fs::create_dir_all(out).wrap_err_with(|| format!("creating {}", out.display()))?;
    let records: Vec<SnapshotRecord> = snapshot::records(lab, i64::MAX)?;
    let gold: Vec<GoldRow> = lab
        .store()
        .gold_by_store(d, None)?
        .into_iter()
        .map(|r| GoldRow {
            business_date: d,
            store_id: r.store_id,
            country: r.country,
            currency: r.currency,
            baskets: r.baskets,
            revenue_minor: r.revenue_minor,
        })
        .collect();
    let versions = lab.store().versions_of_date(d, i64::MAX)?;
    let comparison = match versions.as_slice() {
        [] => Comparison { business_date: d, diff: None, other_dates: Vec::new() },
        [.., last] => {
            let prev = versions.len().checked_sub(2).map(|i| versions[i]);
            let diff = history::diff_versions(lab, d, history::Compared::versions(prev, *last))?;
            let before = match prev {
                Some(p) => dates_at(lab, p)?,
                None => Default::default(),
            };
            let after = dates_at(lab, *last)?;
            let mut dates: Vec<NaiveDate> = before.keys().chain(after.keys()).copied().filter(|x| *x != d).collect();
            dates.sort();
            dates.dedup();
            let other_dates = dates
                .into_iter()
                .map(|x| {
                    let b = before.get(&x).copied();
                    let a = after.get(&x).copied();
                    OtherDate {
                        business_date: x,
                        version_before: b.map(|v| v.0),
                        gold_rows_before: b.map(|v| v.1).unwrap_or(0),
                        version_after: a.map(|v| v.0),
                        gold_rows_after: a.map(|v| v.1).unwrap_or(0),
                        untouched: b == a,
                    }
                })
                .collect();
            Comparison { business_date: d, diff: Some(diff), other_dates }
        }
    };
    let mut files = Vec::new();
    let mut put = |name: String, value: serde_json::Value| put(out, &name, &value, &mut files);
    let map: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "snapshot_id": r.snapshot_id, "parent_id": r.parent_id, "operation": r.operation,
                "trigger": r.trigger, "late_days": r.late_days, "dates_rewritten": r.dates_rewritten,
                "rows_replaced": r.rows_replaced, "rows_added": r.rows_added,
                "fingerprint": r.fingerprint.to_string(), "code_version": r.code_version, "created_at": r.created_at,
            })
        })
        .collect();
    put("run_snapshot_map.json".into(), serde_json::json!({ "snapshots": map }))?;
    put(format!("gold_{d}.json"), serde_json::json!({ "business_date": d, "table": "gold.daily_store_sales", "rows": gold }))?;
    put(format!("comparison_{d}.json"), serde_json::to_value(&comparison)?)?;
    Ok(files)
}
