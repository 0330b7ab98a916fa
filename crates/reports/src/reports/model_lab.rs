//! The reports of a model lab (`lake::model`), in the model's words: what a landing and a v2 run
//! did, the snapshots, and a date's history with the entities a change touched (its check is
//! retail's, in `check.rs`).

use super::model::measure_cells;
use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use crate::lake::model::{ModelLanding, ModelRun, rows_of};
use crate::model::Model;
use crate::model::recount::ModelRow;
use crate::store::model::{DateVersion, ModelSnapshotRow, Skipped};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail};

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
                    "the dimension file changed for {}: their files were read again as their next version, and the next v2 run rebuilds every date they move",
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
        let mut uploads: Vec<NaiveDate> = self.landing.files.iter().map(|f| f.upload_date).collect();
        uploads.dedup();
        for d in uploads.into_iter().filter(|d| crate::lake::land::is_in_future(*d)) {
            notes.push(Note { status: Status::Warn, text: crate::lake::land::dated_in_future(d) });
        }
        for f in &self.landing.files {
            if let Some(reverts) = f.reverts {
                notes.push(Note { status: Status::Warn, text: crate::lake::land::reverting(&f.file, f.version, reverts) });
            }
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
    /// The lab's newest snapshot and the date's finality now: retail's header (None: the history
    /// is read as of an older snapshot, whose finality a model lab does not keep).
    pub status: Option<(i64, super::status::DateStatus)>,
    pub versions: Vec<DateVersion>,
    /// The two versions compared (None: the date did not exist yet).
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub gold_before: Vec<ModelRow>,
    pub gold_after: Vec<ModelRow>,
    /// The entities that changed, by key: every one, or the first ones a screen shows.
    pub changes: Vec<EntityChange>,
    /// How many entities changed in all.
    pub changes_total: i64,
}

/// A date's versions, and what changed, entity by entity, between two of them: the snapshots'
/// versions `from` and `to` (default: the newest version and the one before it); with the lab's
/// window `now`, the date's finality now in the header.
pub fn history(
    lab: &Lab,
    model: &Model,
    d: NaiveDate,
    between: (Option<i64>, Option<i64>),
    now: Option<u32>,
) -> Result<ModelHistoryReport> {
    history_listing(lab, model, d, between, now, None)
}

/// The same, listing the first `listed` entities that changed (None: every one), and how many
/// changed in all: what a screen shows of a date of a million entities.
pub fn history_listing(
    lab: &Lab,
    model: &Model,
    d: NaiveDate,
    (from, to): (Option<i64>, Option<i64>),
    now: Option<u32>,
    listed: Option<usize>,
) -> Result<ModelHistoryReport> {
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
    let changed = match to {
        Some(to) => store.model_version_changes(d, from, to, listed)?,
        None => Vec::new(),
    };
    let changes_total = changed.first().map_or(0, |c| c.total);
    let changes = changed.into_iter().map(|c| entity_change(model, c)).collect();
    let status = match now {
        Some(late_days) => {
            let newest = store.model_next_snapshot()? - 1;
            super::status::model_statuses(lab, late_days, &[d], None)?.pop().map(|s| (newest, s))
        }
        None => None,
    };
    Ok(ModelHistoryReport {
        model: model.clone(),
        business_date: d,
        status,
        versions,
        from,
        to,
        gold_before: gold(from)?,
        gold_after: gold(to)?,
        changes,
        changes_total,
    })
}

/// A key whose winner differs between two silver versions, described by the fields the model
/// sums: `units 120 → 135, defects 3 → 2`; `added`; `withdrawn`; or another copy of the same.
fn entity_change(model: &Model, c: crate::store::VersionChange) -> EntityChange {
    let file = |f: Option<String>, u: Option<NaiveDate>, v: Option<i32>| Some(format!("upload_date={}/{} v{}", u?, f?, v?));
    let (file_before, file_after) =
        (file(c.file_before, c.upload_before, c.version_before), file(c.file_after, c.upload_after, c.version_after));
    let change = match (&file_before, &file_after) {
        (None, _) => "added".to_string(),
        (_, None) => "withdrawn".to_string(),
        _ => {
            let (before, after) = ([c.b1, c.b2, c.b3, c.b4, c.b5, c.b6], [c.a1, c.a2, c.a3, c.a4, c.a5, c.a6]);
            let parts: Vec<String> = model
                .measures
                .iter()
                .zip(before.iter().zip(&after))
                .filter(|(m, (x, y))| x != y && !m.is_count())
                .map(|(m, (x, y))| format!("{} {} → {}", m.of, x.unwrap_or(0), y.unwrap_or(0)))
                .collect();
            if parts.is_empty() { "same values, another copy".to_string() } else { parts.join(", ") }
        }
    };
    EntityChange { key: c.entity_key, change, file_before, file_after }
}

impl ModelHistoryReport {
    fn gold_table(&self) -> Table {
        // (key, label): `units_before` for machines, `units before` for people.
        let mut cols: Vec<(String, String)> =
            self.model.grain.iter().chain(&self.model.attributes).map(|c| (c.clone(), c.clone())).collect();
        for m in &self.model.measures {
            for side in ["before", "after"] {
                cols.push((super::model::measure_key(m, Some(side)), format!("{} {side}", m.name)));
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
        // Each side by grain, looked up: searching a side for each grain grows with the square
        // of the date's grains.
        let (before, after) = (by_grain(&self.gold_before), by_grain(&self.gold_after));
        let zeros = vec![0; self.model.measures.len()];
        for (grain, attributes) in keys {
            let find =
                |side: &std::collections::HashMap<&[String], &[i64]>| side.get(grain.as_slice()).map_or(zeros.clone(), |m| m.to_vec());
            let (b, a) = (find(&before), find(&after));
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

/// A side of gold by grain, to look each grain up.
fn by_grain(rows: &[ModelRow]) -> std::collections::HashMap<&[String], &[i64]> {
    rows.iter().map(|r| (r.grain.as_slice(), r.measures.as_slice())).collect()
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
        let counts = format!(
            "{} version(s) of gold.{}; {} {}(s) changed in the last change shown",
            self.versions.len(),
            self.model.gold,
            self.changes_total,
            self.model.entity
        );
        match &self.status {
            // Retail's header, and the counts beside it.
            Some((snapshot, status)) => {
                format!("history {} as of snapshot {snapshot} — {}; {counts}", self.business_date, status.describe())
            }
            None => format!("{}: {counts}", self.business_date),
        }
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
        let title = match self.changes.len() as i64 {
            n if n < self.changes_total => format!(
                "the first {} of {} {}s that changed (`recount history {}` lists every one)",
                crate::money::format_count(n),
                crate::money::format_count(self.changes_total),
                self.model.entity,
                self.business_date
            ),
            _ => format!("{}s that changed", self.model.entity),
        };
        let mut changes = Table::new(title, &cols);
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
