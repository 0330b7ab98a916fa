//! The reports of a model lab (`lake::model`), in the model's words: what a landing and a v2 run
//! did, the snapshots, a date's history with the entities a change touched, and the check of a
//! date's gold against v1 and the independent recount.

use super::model::measure_cells;
use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use crate::lake::model::{ModelLanding, ModelRun, rows_of};
use crate::model::Model;
use crate::model::recount::ModelRow;
use crate::store::model::{DateVersion, ModelSnapshotRow, Skipped, Winner};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};

#[derive(Debug, Clone, serde::Serialize)]
pub struct LandingReport {
    #[serde(flatten)]
    pub landing: ModelLanding,
}

impl Report for LandingReport {
    fn kind(&self) -> &'static str {
        "land"
    }
    fn headline(&self) -> String {
        let count = |s: &str| self.landing.files.iter().filter(|f| f.status == s).count();
        format!(
            "model {}: {} file(s) landed new, {} corrected, {} re-delivered (same rows), {} re-read under a corrected dimension row, {} unchanged",
            self.landing.model,
            count("new"),
            count("corrected"),
            count(crate::lake::model::REDELIVERED),
            count("re-read"),
            count("unchanged")
        )
    }
    fn tables(&self) -> Vec<Table> {
        let cols = [
            ("upload_date", "upload"),
            ("file", "file"),
            ("version", "version"),
            ("status", "status"),
            ("records", "records"),
            ("quarantined", "quarantined"),
        ];
        let mut t = Table::new("files", &cols);
        for f in &self.landing.files {
            t.push(vec![
                Cell::Date(f.upload_date),
                Cell::text(&f.file),
                Cell::Int(i64::from(f.version)),
                Cell::text(&f.status),
                Cell::Int(f.records),
                Cell::Int(f.quarantined),
            ]);
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if !self.landing.dimension_changed.is_empty() {
            notes.push(Note {
                status: Status::Warn,
                text: format!(
                    "the dimension file changed for {}: their files were read again as their next version; run v2 for their uploads",
                    self.landing.dimension_changed.join(", ")
                ),
            });
        }
        if !self.landing.dimension_removed.is_empty() {
            notes.push(Note {
                status: Status::Warn,
                text: format!(
                    "the dimension file no longer names {}: each keeps the row it last had, and its records stay in gold",
                    self.landing
                        .dimension_removed
                        .iter()
                        .map(|k| crate::sanitize::for_terminal(k).into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        let quarantined: i64 = self.landing.files.iter().filter(|f| f.status != "unchanged").map(|f| f.quarantined).sum();
        if quarantined > 0 {
            notes.push(Note { status: Status::Warn, text: format!("{quarantined} line(s) quarantined: `recount quarantine` lists them") });
        }
        for d in &self.landing.missing {
            notes.push(Note { status: Status::Fail, text: format!("the world has no upload {d}") });
        }
        for h in &self.landing.held {
            notes.push(Note {
                status: Status::Fail,
                text: format!(
                    "upload {} HELD BACK: {}: {}; nothing of it landed (the other uploads did), and it gets no v2 run: land it again once the file is whole",
                    h.upload_date,
                    crate::sanitize::for_terminal(&h.file),
                    h.reason
                ),
            });
        }
        notes
    }
}

/// What `run`, `daily` and `spark run` did on a model: the landing when there was one, each v2
/// run, and gold's fingerprint after them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunsReport {
    pub model: String,
    pub landing: Option<ModelLanding>,
    pub runs: Vec<ModelRun>,
    pub fingerprint: String,
}

fn dates(ds: &[NaiveDate]) -> String {
    ds.iter().map(|d| d.format("%m-%d").to_string()).collect::<Vec<_>>().join(" ")
}

impl Report for RunsReport {
    fn kind(&self) -> &'static str {
        "run"
    }
    fn headline(&self) -> String {
        self.fingerprint.clone()
    }
    fn tables(&self) -> Vec<Table> {
        let cols = [
            ("uploads", "uploads"),
            ("snapshot", "snapshot"),
            ("rewritten", "rewritten"),
            ("skipped", "unchanged (skipped)"),
            ("beyond_window", "beyond window"),
            ("future_dated", "future-dated"),
        ];
        let mut t = Table::new(format!("v2 runs of model {}", self.model), &cols);
        let mut tables: Vec<Table> = self.landing.iter().flat_map(|l| LandingReport { landing: l.clone() }.tables()).collect();
        for r in &self.runs {
            t.push(vec![
                Cell::text(crate::lake::v2::name_runs(&r.uploads)),
                r.snapshot.map_or_else(|| Cell::Absent("none: nothing changed".into()), Cell::Id),
                Cell::text(dates(&r.rewritten)),
                Cell::text(dates(&r.skipped)),
                Cell::Int(r.beyond_window),
                Cell::Int(r.future_dated),
            ]);
        }
        tables.push(t);
        tables
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes: Vec<Note> = self.landing.iter().flat_map(|l| LandingReport { landing: l.clone() }.notes()).collect();
        for r in &self.runs {
            if r.snapshot.is_none() && !r.skipped.is_empty() {
                notes.push(Note {
                    status: Status::Pass,
                    text: format!(
                        "uploads {}: every affected date's input is unchanged, so the run was skipped and wrote no snapshot",
                        crate::lake::v2::name_runs(&r.uploads)
                    ),
                });
            }
            if r.beyond_window > 0 {
                notes.push(Note {
                    status: Status::Warn,
                    text: format!("uploads {}: {} row(s) arrived past their date's window: valid, but out of gold (`recount check DATE` shows gold beside the recompute, which counts them)", crate::lake::v2::name_runs(&r.uploads), r.beyond_window),
                });
            }
            if r.future_dated > 0 {
                notes.push(Note {
                    status: Status::Warn,
                    text: format!(
                        "uploads {}: {} row(s) are dated more than a day after their upload",
                        crate::lake::v2::name_runs(&r.uploads),
                        r.future_dated
                    ),
                });
            }
        }
        notes
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelSnapshotsReport {
    pub model: String,
    pub snapshots: Vec<ModelSnapshotRow>,
    pub skipped_runs: Vec<Skipped>,
}

pub fn snapshots(lab: &Lab, model: &Model) -> Result<ModelSnapshotsReport> {
    Ok(ModelSnapshotsReport {
        model: model.name.clone(),
        snapshots: lab.store().model_snapshots()?,
        skipped_runs: lab.store().model_skipped_runs()?,
    })
}

impl Report for ModelSnapshotsReport {
    fn kind(&self) -> &'static str {
        "snapshots"
    }
    fn headline(&self) -> String {
        format!("model {}: {} snapshot(s), {} skipped run(s) that wrote none", self.model, self.snapshots.len(), self.skipped_runs.len())
    }
    fn tables(&self) -> Vec<Table> {
        let cols = [
            ("snapshot_id", "snapshot"),
            ("operation", "operation"),
            ("upload", "upload"),
            ("files", "files"),
            ("dates_rewritten", "dates"),
            ("beyond_window", "beyond window"),
            ("gold_rows", "gold rows"),
            ("gold_md5", "gold md5"),
            ("created_at", "at"),
        ];
        let mut t = Table::new("snapshots", &cols);
        for s in &self.snapshots {
            t.push(vec![
                Cell::Id(s.snapshot_id),
                Cell::text(&s.operation),
                s.upload.map_or(Cell::Empty, Cell::Date),
                Cell::text(&s.files),
                Cell::Int(i64::from(s.dates_rewritten)),
                Cell::Int(s.beyond_window),
                Cell::Int(s.gold_rows),
                Cell::text(&s.gold_md5),
                Cell::text(&s.created_at),
            ]);
        }
        let mut skipped = Table::new("runs skipped: identical input, no snapshot", &[("uploads", "uploads"), ("dates", "dates")]);
        for s in &self.skipped_runs {
            skipped.push(vec![Cell::text(&s.uploads), Cell::text(&s.dates)]);
        }
        vec![t, skipped]
    }
}

/// One entity whose winning copy changed between two versions of a date.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EntityChange {
    pub key: String,
    /// What changed, in the model's fields: `units 120 → 135, defects 3 → 2`; `added`; `withdrawn`.
    pub change: String,
    pub file_before: Option<String>,
    pub file_after: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelHistoryReport {
    pub model: Model,
    pub business_date: NaiveDate,
    pub versions: Vec<DateVersion>,
    /// The two versions compared (None: the date did not exist yet).
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub gold_before: Vec<ModelRow>,
    pub gold_after: Vec<ModelRow>,
    pub changes: Vec<EntityChange>,
}

/// A date's versions, and what changed, entity by entity, between two of them: the snapshots'
/// versions `from` and `to` (default: the newest version and the one before it).
pub fn history(lab: &Lab, model: &Model, d: NaiveDate, from: Option<i64>, to: Option<i64>) -> Result<ModelHistoryReport> {
    let store = lab.store();
    let versions = store.model_date_versions(d)?;
    if versions.is_empty() {
        bail!("business date {d} has no version in this lab: no v2 run has built it");
    }
    let version_at = |s: i64| versions.iter().rev().find(|v| v.snapshot_id <= s).map(|v| v.snapshot_id);
    let (from, to) = match (from, to) {
        (None, None) => (versions.iter().rev().nth(1).map(|v| v.snapshot_id), versions.last().map(|v| v.snapshot_id)),
        (f, t) => (f.and_then(version_at), t.map_or(versions.last().map(|v| v.snapshot_id), version_at)),
    };
    let gold = |v: Option<i64>| -> Result<Vec<ModelRow>> {
        Ok(v.map(|v| store.model_version_gold(v, d)).transpose()?.map(|c| rows_of(model, c)).unwrap_or_default())
    };
    let winners = |v: Option<i64>| -> Result<Vec<Winner>> { Ok(v.map(|v| store.model_winners(v, d)).transpose()?.unwrap_or_default()) };
    let changes = entity_changes(model, &winners(from)?, &winners(to)?);
    Ok(ModelHistoryReport {
        model: model.clone(),
        business_date: d,
        versions,
        from,
        to,
        gold_before: gold(from)?,
        gold_after: gold(to)?,
        changes,
    })
}

fn measures_of(w: &Winner) -> [Option<i64>; 6] {
    [w.m1, w.m2, w.m3, w.m4, w.m5, w.m6]
}

fn file_of(w: &Winner) -> String {
    format!("upload_date={}/{} v{}", w.upload_date, w.file, w.version)
}

/// The entities whose winner differs between two silver versions, described by the fields the
/// model sums.
fn entity_changes(model: &Model, before: &[Winner], after: &[Winner]) -> Vec<EntityChange> {
    let mut out = Vec::new();
    let find = |ws: &[Winner], k: &str| ws.binary_search_by(|w| w.entity_key.as_str().cmp(k)).ok();
    for a in after {
        match find(before, &a.entity_key).map(|i| &before[i]) {
            None => out.push(EntityChange {
                key: a.entity_key.clone(),
                change: "added".into(),
                file_before: None,
                file_after: Some(file_of(a)),
            }),
            Some(b) if measures_of(b) != measures_of(a) || (&b.file, b.upload_date, b.line) != (&a.file, a.upload_date, a.line) => {
                let mut parts = Vec::new();
                for (m, (x, y)) in model.measures.iter().zip(measures_of(b).iter().zip(measures_of(a).iter())) {
                    if x != y && !m.is_count() {
                        parts.push(format!("{} {} → {}", m.of, x.unwrap_or(0), y.unwrap_or(0)));
                    }
                }
                let change = if parts.is_empty() { "same values, another copy".to_string() } else { parts.join(", ") };
                out.push(EntityChange { key: a.entity_key.clone(), change, file_before: Some(file_of(b)), file_after: Some(file_of(a)) });
            }
            Some(_) => {}
        }
    }
    for b in before.iter().filter(|b| find(after, &b.entity_key).is_none()) {
        out.push(EntityChange { key: b.entity_key.clone(), change: "withdrawn".into(), file_before: Some(file_of(b)), file_after: None });
    }
    out.sort_by(|x, y| x.key.cmp(&y.key));
    out
}

impl ModelHistoryReport {
    fn gold_table(&self) -> Table {
        // (key, label): `units_before` for machines, `units before` for people.
        let mut cols: Vec<(String, String)> =
            self.model.grain.iter().chain(&self.model.attributes).map(|c| (c.clone(), c.clone())).collect();
        for m in &self.model.measures {
            for side in ["before", "after"] {
                cols.push((format!("{}_{side}", m.name), format!("{} {side}", m.name)));
            }
        }
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new(
            format!("gold.{} on {}: version {} → {}", self.model.gold, self.business_date, label(self.from), label(self.to)),
            &refs,
        );
        let mut keys: Vec<(&Vec<String>, &Vec<String>)> =
            self.gold_before.iter().chain(&self.gold_after).map(|r| (&r.grain, &r.attributes)).collect();
        keys.sort();
        keys.dedup();
        for (grain, attributes) in keys {
            let find = |rows: &[ModelRow]| {
                rows.iter().find(|r| &r.grain == grain).map(|r| r.measures.clone()).unwrap_or_else(|| vec![0; self.model.measures.len()])
            };
            let (b, a) = (find(&self.gold_before), find(&self.gold_after));
            let mut row: Vec<Cell> = grain.iter().chain(attributes).map(Cell::text).collect();
            let (bc, ac) = (measure_cells(&self.model, attributes, &b), measure_cells(&self.model, attributes, &a));
            for (x, y) in bc.into_iter().zip(ac) {
                row.push(x);
                row.push(y);
            }
            t.push_flagged(row, (a != b).then_some(Status::Warn));
        }
        t
    }
}

fn label(v: Option<i64>) -> String {
    v.map_or_else(|| "none".to_string(), |v| format!("of snapshot {v}"))
}

impl Report for ModelHistoryReport {
    fn kind(&self) -> &'static str {
        "history"
    }
    fn business_date(&self) -> Option<NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!(
            "{}: {} version(s) of gold.{}; {} {}(s) changed in the last change shown",
            self.business_date,
            self.versions.len(),
            self.model.gold,
            self.changes.len(),
            self.model.entity
        )
    }
    fn tables(&self) -> Vec<Table> {
        let cols =
            [("snapshot_id", "snapshot"), ("operation", "operation"), ("upload", "upload"), ("files", "files"), ("gold_rows", "gold rows")];
        let mut versions = Table::new("versions of the date", &cols);
        for v in &self.versions {
            versions.push(vec![
                Cell::Id(v.snapshot_id),
                Cell::text(&v.operation),
                v.upload.map_or(Cell::Empty, Cell::Date),
                Cell::text(&v.files),
                Cell::Int(v.gold_rows),
            ]);
        }
        let cols =
            [("key", self.model.entity.as_str()), ("change", "change"), ("file_before", "file before"), ("file_after", "file after")];
        let mut changes = Table::new(format!("{}s that changed", self.model.entity), &cols);
        for c in &self.changes {
            changes.push(vec![
                Cell::text(&c.key),
                Cell::text(&c.change),
                c.file_before.as_ref().map_or(Cell::Empty, Cell::text),
                c.file_after.as_ref().map_or(Cell::Empty, Cell::text),
            ]);
        }
        vec![versions, self.gold_table(), changes]
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelCheckReport {
    pub model: Model,
    pub business_date: NaiveDate,
    pub v1: Vec<ModelRow>,
    pub v2: Vec<ModelRow>,
    pub recompute: Vec<ModelRow>,
    /// Per grain, the first copies of the keys that only arrived past the window: what the
    /// recount (no window) counts and gold never does. Empty where v2 equals the recount.
    pub beyond_window: Vec<ModelRow>,
}

/// A date's gold beside v1's appends and the independent recount of the lab's current files.
pub fn model_check(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32) -> Result<ModelCheckReport> {
    model_check_with(lab, model, d, &crate::lake::model::recompute(lab, model)?.rows, late_days)
}

/// The same, beside a recount of the lab's current files already made (the explorer makes one
/// per load, for every date it shows).
pub fn model_check_with(lab: &Lab, model: &Model, d: NaiveDate, recount: &[ModelRow], late_days: u32) -> Result<ModelCheckReport> {
    let on = |rows: Vec<ModelRow>| rows.into_iter().filter(|r| r.business_date == d).collect::<Vec<_>>();
    let v2 = on(rows_of(model, lab.store().model_gold(None)?));
    let v1 = on(rows_of(model, lab.store().model_naive()?));
    let recompute: Vec<ModelRow> = recount.iter().filter(|r| r.business_date == d).cloned().collect();
    let beyond_window =
        if v2 == recompute { Vec::new() } else { summed(d, &crate::reports::model_day::never_counted(lab, model, d, late_days)?)? };
    Ok(ModelCheckReport { model: model.clone(), business_date: d, v1, v2, recompute, beyond_window })
}

/// Rows summed per (grain, attributes); a sum past 64 bits is an error naming the date.
fn summed(d: NaiveDate, rows: &[ModelRow]) -> Result<Vec<ModelRow>> {
    let mut sums: std::collections::BTreeMap<(Vec<String>, Vec<String>), Vec<i64>> = std::collections::BTreeMap::new();
    for r in rows {
        let acc = sums.entry((r.grain.clone(), r.attributes.clone())).or_insert_with(|| vec![0; r.measures.len()]);
        for (a, v) in acc.iter_mut().zip(&r.measures) {
            *a = a.checked_add(*v).ok_or_else(|| eyre!("{d}: a sum of the records past the window overflows 64 bits"))?;
        }
    }
    Ok(sums.into_iter().map(|((grain, attributes), measures)| ModelRow { business_date: d, grain, attributes, measures }).collect())
}

impl ModelCheckReport {
    /// Whether gold equals the recount on this date.
    pub fn agrees(&self) -> bool {
        self.v2 == self.recompute
    }

    /// Whether gold and the recount differ, on every grain, by exactly the records past the
    /// window: the rules' difference, which retail's check calls "beyond window" too.
    pub fn explained(&self) -> bool {
        !self.agrees() && self.grains().iter().all(|g| self.grain_explained(g))
    }

    fn grains(&self) -> Vec<&Vec<String>> {
        let mut grains: Vec<&Vec<String>> = self.v1.iter().chain(&self.v2).chain(&self.recompute).map(|r| &r.grain).collect();
        grains.sort();
        grains.dedup();
        grains
    }

    fn measures_of(rows: &[ModelRow], g: &[String]) -> Option<Vec<i64>> {
        rows.iter().find(|r| r.grain == g).map(|r| r.measures.clone())
    }

    /// On this grain, v2 plus the records past the window is the recount.
    fn grain_explained(&self, g: &[String]) -> bool {
        let width = self.model.measures.len();
        let v2 = Self::measures_of(&self.v2, g).unwrap_or_else(|| vec![0; width]);
        let beyond = Self::measures_of(&self.beyond_window, g).unwrap_or_else(|| vec![0; width]);
        let sum: Option<Vec<i64>> = v2.iter().zip(&beyond).map(|(a, b)| a.checked_add(*b)).collect();
        sum == Some(Self::measures_of(&self.recompute, g).unwrap_or_else(|| vec![0; width]))
    }

    /// The same check summed by the grain's first field (a plant, a depot): the explorer's group
    /// by, where retail's splits by country. A sum past 64 bits is an error, never wrapped.
    pub fn grouped(&self) -> Result<ModelCheckReport> {
        let mut model = self.model.clone();
        model.grain.truncate(1);
        let group = |rows: &[ModelRow]| -> Result<Vec<ModelRow>> {
            let mut sums: std::collections::BTreeMap<Vec<String>, Vec<i64>> = std::collections::BTreeMap::new();
            for r in rows {
                let acc = sums.entry(r.grain.iter().take(1).cloned().collect()).or_insert_with(|| vec![0; r.measures.len()]);
                for (a, v) in acc.iter_mut().zip(&r.measures) {
                    *a = a
                        .checked_add(*v)
                        .ok_or_else(|| eyre!("{}: a sum by {} overflows 64 bits", self.business_date, model.grain.join("")))?;
                }
            }
            Ok(sums
                .into_iter()
                .map(|(grain, measures)| ModelRow { business_date: self.business_date, grain, attributes: Vec::new(), measures })
                .collect())
        };
        Ok(ModelCheckReport {
            business_date: self.business_date,
            v1: group(&self.v1)?,
            v2: group(&self.v2)?,
            recompute: group(&self.recompute)?,
            beyond_window: group(&self.beyond_window)?,
            model,
        })
    }

    /// The same check, only the grains where v1 differs from v2: what the naive append got wrong.
    pub fn where_v1_differs(&self) -> ModelCheckReport {
        let of = |rows: &[ModelRow], g: &[String]| rows.iter().find(|r| r.grain == g).map(|r| r.measures.clone());
        let differs = |g: &[String]| of(&self.v1, g) != of(&self.v2, g);
        let keep = |rows: &[ModelRow]| rows.iter().filter(|r| differs(&r.grain)).cloned().collect();
        ModelCheckReport {
            model: self.model.clone(),
            business_date: self.business_date,
            v1: keep(&self.v1),
            v2: keep(&self.v2),
            recompute: keep(&self.recompute),
            beyond_window: keep(&self.beyond_window),
        }
    }
}

impl Report for ModelCheckReport {
    fn kind(&self) -> &'static str {
        "check"
    }
    fn business_date(&self) -> Option<NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        let verdict = if self.agrees() {
            "v2 equals the recompute".to_string()
        } else if self.explained() {
            format!("beyond window: v2 differs from the recompute only by {}s that arrived past the window", self.model.entity)
        } else {
            "v2 differs from the recompute".to_string()
        };
        format!("{} gold.{}: {verdict}", self.business_date, self.model.gold)
    }
    fn tables(&self) -> Vec<Table> {
        let mut cols: Vec<(String, String)> = self.model.grain.iter().map(|c| (c.clone(), c.clone())).collect();
        for m in &self.model.measures {
            for side in ["v1", "v2", "recompute", "beyond_window"] {
                cols.push((format!("{}_{side}", m.name), format!("{} {}", m.name, side.replace('_', " "))));
            }
        }
        cols.push(("status".into(), "status".into()));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new(format!("gold.{} on {}", self.model.gold, self.business_date), &refs);
        for g in self.grains() {
            let of = |rows: &[ModelRow]| Self::measures_of(rows, g);
            let (v1, v2, re, beyond) = (of(&self.v1), of(&self.v2), of(&self.recompute), of(&self.beyond_window));
            // Money by its currency's digits: the grain's attributes name it, on whichever side has the row.
            let attributes = [&self.v2, &self.recompute, &self.v1, &self.beyond_window]
                .iter()
                .find_map(|rows| rows.iter().find(|r| &r.grain == g))
                .map(|r| r.attributes.clone())
                .unwrap_or_default();
            let cells = |m: &Option<Vec<i64>>| m.as_ref().map(|m| measure_cells(&self.model, &attributes, m));
            let sides = [cells(&v1), cells(&v2), cells(&re), cells(&beyond)];
            let mut row: Vec<Cell> = g.iter().map(Cell::text).collect();
            for i in 0..self.model.measures.len() {
                for side in &sides {
                    row.push(side.as_ref().map_or(Cell::Absent("none".into()), |m| m[i].clone()));
                }
            }
            row.push(if v2 == re {
                Cell::Status(Status::Pass)
            } else if self.grain_explained(g) {
                Cell::Term { text: "beyond window".into(), key: "beyond_window".into() }
            } else {
                Cell::Status(Status::Fail)
            });
            t.push(row);
        }
        vec![t]
    }
}
