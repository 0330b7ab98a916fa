//! What the driver answers, as report structs: a run, a fingerprint, the snapshots, a check, the
//! evidence, a reopening and a rollback.

use super::*;
use crate::reports::evidence::EvidenceFile;

/// What `model-run` answers: a model's world landed and run into the warehouse, in the lab's
/// own structs (`lake::model`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ModelRunAnswer {
    pub landing: crate::lake::model::ModelLanding,
    pub runs: Vec<crate::lake::model::ModelRun>,
    pub fingerprint: String,
}

/// What `model-rollback` answers: gold as of the snapshot, read before the rollback, and after it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ModelRollbackAnswer {
    pub model: String,
    pub snapshot_id: i64,
    /// Gold as of the snapshot, read by time travel before the rollback.
    pub target: String,
    /// Gold after it.
    pub line: String,
}

/// What `model-fingerprint` answers.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ModelFingerprintAnswer {
    pub line: String,
}

/// Whether the warehouse holds a model other than retail (its model's table exists).
pub(crate) fn holds_model(warehouse: &Path) -> bool {
    warehouse.join("recount").join("model_definition").join("metadata").is_dir()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct SparkFingerprint {
    pub rows: i64,
    pub md5: String,
    pub as_of: Option<i64>,
    pub reader: String,
}

impl SparkFingerprint {
    pub fn line(&self) -> String {
        crate::lake::snapshot::Fingerprint { rows: self.rows, md5: self.md5.clone() }.to_string()
    }
}

impl Report for SparkFingerprint {
    fn kind(&self) -> &'static str {
        "spark-fingerprint"
    }
    fn headline(&self) -> String {
        self.line()
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new("", &[("rows", "rows"), ("md5", "md5"), ("as_of_snapshot", "as of snapshot"), ("reader", "reader")]);
        t.push(vec![
            Cell::Int(self.rows),
            Cell::text(&self.md5),
            self.as_of.map(|s| Cell::text(s.to_string())).unwrap_or(Cell::Empty),
            Cell::text(&self.reader),
        ]);
        vec![t]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Landing {
    pub upload: NaiveDate,
    pub new: Vec<String>,
    pub corrected: Vec<String>,
    pub unchanged: Vec<String>,
    pub missing: Vec<String>,
    pub events: i64,
    pub quarantined: i64,
    /// Held back: a file that could not be read whole. Nothing of the upload landed, and it got
    /// no v2 run (as `lake::daily` does in the lab).
    #[serde(default)]
    pub held: Option<HeldFile>,
}

/// What the landings did to the stores: the corrections (in words, as history names them), the
/// stores stores.csv no longer lists (kept), and the file versions re-derived for the corrections.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoresLanded {
    pub changed: Vec<String>,
    /// Stores stores.csv adds whose lines had been quarantined as an unknown store.
    #[serde(default)]
    pub readmitted: Vec<String>,
    pub removed: Vec<String>,
    pub rederived_files: i64,
}

impl SparkRun {
    /// What the run was for: its upload, a store correction, or a range in one pass.
    pub(super) fn cause(&self) -> Cell {
        match self.upload {
            Some(u) => Cell::Date(u),
            None if self.trigger == "store" => Cell::text("store correction"),
            None => Cell::text("backfill"),
        }
    }
}

/// The file that held an upload back, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HeldFile {
    pub file: String,
    pub reason: String,
}

impl SparkRunReport {
    /// The uploads landing held back.
    pub fn held(&self) -> impl Iterator<Item = (&NaiveDate, &HeldFile)> {
        self.landings.iter().filter_map(|l| l.held.as_ref().map(|h| (&l.upload, h)))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunDate {
    pub business_date: NaiveDate,
    pub action: String,
    pub input_rows: i64,
    pub input_hash: String,
    #[serde(default)]
    pub silver_rows: Option<i64>,
    #[serde(default)]
    pub gold_rows: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Beyond {
    /// The upload that brought the rows, in a run over a range (else the run's own).
    #[serde(default)]
    pub upload: Option<NaiveDate>,
    pub business_date: NaiveDate,
    pub currency: String,
    pub rows: i64,
    pub revenue_minor: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SparkRun {
    /// The upload the run is for; None for a store correction's run.
    pub upload: Option<NaiveDate>,
    pub trigger: String,
    /// A store correction's run: each store and what changed.
    #[serde(default)]
    pub detail: Option<String>,
    pub late_days: u32,
    pub action: String,
    pub dates: Vec<RunDate>,
    pub beyond_window: Vec<Beyond>,
    #[serde(default)]
    pub run: Option<i64>,
    #[serde(default)]
    pub snapshot_id: Option<i64>,
    #[serde(default)]
    pub silver_snapshot_id: Option<i64>,
    #[serde(default)]
    pub corrected: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SparkRunReport {
    pub landings: Vec<Landing>,
    #[serde(default)]
    pub stores: StoresLanded,
    pub runs: Vec<SparkRun>,
    pub fingerprint: SparkFingerprint,
}

impl Report for SparkRunReport {
    fn kind(&self) -> &'static str {
        "spark-run"
    }
    fn headline(&self) -> String {
        let written = self.runs.iter().filter(|r| r.snapshot_id.is_some()).count();
        format!(
            "spark: {} upload(s) landed, {} v2 run(s): {written} wrote a gold snapshot, {} skipped",
            self.landings.len(),
            self.runs.len(),
            self.runs.len() - written
        )
    }
    fn tables(&self) -> Vec<Table> {
        let mut landings = Table::new(
            "landings",
            &[
                ("upload_date", "upload"),
                ("new", "new"),
                ("corrected", "corrected"),
                ("unchanged", "unchanged"),
                ("missing", "missing from the world"),
                ("events", "events"),
                ("quarantined", "quarantined"),
                ("held_back", "held back"),
            ],
        );
        for l in &self.landings {
            landings.push_flagged(
                vec![
                    Cell::Date(l.upload),
                    Cell::Int(l.new.len() as i64),
                    Cell::text(l.corrected.join(", ")),
                    Cell::Int(l.unchanged.len() as i64),
                    Cell::text(l.missing.join(", ")),
                    Cell::Int(l.events),
                    Cell::Int(l.quarantined),
                    Cell::text(l.held.as_ref().map(|h| h.file.as_str()).unwrap_or("")),
                ],
                if l.held.is_some() { Some(Status::Fail) } else { (!l.missing.is_empty() || l.quarantined > 0).then_some(Status::Warn) },
            );
        }
        let mut runs = Table::new(
            "v2 runs",
            &[
                ("upload_date", "upload"),
                ("snapshot_id", "gold snapshot"),
                ("business_date", "business date"),
                ("action", "action"),
                ("input_rows", "input rows"),
                ("silver_rows", "silver rows"),
                ("gold_rows", "gold rows"),
                ("input_hash", "input hash"),
            ],
        );
        for r in &self.runs {
            let snap = r.snapshot_id.map(|s| Cell::text(s.to_string())).unwrap_or_else(|| Cell::text("(skipped)"));
            if r.dates.is_empty() {
                runs.push(vec![
                    r.cause(),
                    snap.clone(),
                    Cell::Empty,
                    Cell::text("nothing affected"),
                    Cell::Empty,
                    Cell::Empty,
                    Cell::Empty,
                    Cell::Empty,
                ]);
            }
            for d in &r.dates {
                let opt = |v: Option<i64>| v.map(Cell::Int).unwrap_or(Cell::Empty);
                runs.push(vec![
                    r.cause(),
                    snap.clone(),
                    Cell::Date(d.business_date),
                    Cell::text(if d.action == "skip" { "skipped: inputs unchanged" } else { "overwrite" }),
                    Cell::Int(d.input_rows),
                    opt(d.silver_rows),
                    opt(d.gold_rows),
                    Cell::text(d.input_hash.get(..18).unwrap_or(&d.input_hash)),
                ]);
            }
        }
        vec![landings, runs]
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        for (upload, h) in self.held() {
            notes.push(Note {
                status: Status::Fail,
                text: format!("upload {upload} HELD BACK: {}: {}; nothing of it landed and it got no v2 run", h.file, h.reason),
            });
        }
        for c in &self.stores.changed {
            notes.push(Note {
                status: Status::Info,
                text: format!(
                    "store correction: {} ({} file version(s) re-derived; rebuilt by its own run)",
                    crate::sanitize::for_terminal(c),
                    self.stores.rederived_files
                ),
            });
        }
        for id in &self.stores.readmitted {
            notes.push(Note {
                status: Status::Info,
                text: format!(
                    "store {} added: its lines quarantined as an unknown store are read again",
                    crate::sanitize::for_terminal(id)
                ),
            });
        }
        for id in &self.stores.removed {
            notes.push(Note {
                status: Status::Warn,
                text: format!(
                    "store {} is no longer in stores.csv: the warehouse keeps it as landed, and still counts its sales",
                    crate::sanitize::for_terminal(id)
                ),
            });
        }
        for r in &self.runs {
            for b in &r.beyond_window {
                let Some(upload) = b.upload.or(r.upload) else { continue };
                notes.push(Note {
                    status: Status::Warn,
                    text: format!(
                        "upload {}: {} event row(s) of business date {} {}, {} (never in silver or gold)",
                        upload,
                        b.rows,
                        b.business_date,
                        crate::rules::outside_window_word(crate::rules::future_dated(upload, b.business_date)),
                        crate::money::format_major(b.revenue_minor, &b.currency)
                    ),
                });
            }
            let Some(upload) = r.upload else { continue };
            if !r.corrected.is_empty() {
                notes.push(Note { status: Status::Info, text: format!("upload {upload} (corrected: {})", r.corrected.join(", ")) });
            }
        }
        for l in &self.landings {
            if !l.missing.is_empty() {
                notes.push(Note {
                    status: Status::Warn,
                    text: format!(
                        "upload {}: landed file(s) missing from the world, kept and still counted: {}",
                        l.upload,
                        l.missing.join(", ")
                    ),
                });
            }
        }
        notes.push(Note { status: Status::Pass, text: self.fingerprint.line() });
        notes
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IcebergSnapshot {
    pub snapshot_id: i64,
    pub parent_id: Option<i64>,
    pub committed_at: String,
    pub operation: Option<String>,
    pub current: bool,
    pub current_ancestor: bool,
    pub properties: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IcebergSnapshotsReport {
    pub table: String,
    pub snapshots: Vec<IcebergSnapshot>,
}

impl Report for IcebergSnapshotsReport {
    fn kind(&self) -> &'static str {
        "spark-snapshots"
    }
    fn headline(&self) -> String {
        format!("{}: {} Iceberg snapshot(s), oldest first", self.table, self.snapshots.len())
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("snapshot_id", "snapshot id"),
                ("parent_id", "parent"),
                ("committed_at", "committed at"),
                ("operation", "operation"),
                ("current", "current"),
                ("run", "run"),
                ("upload", "upload"),
                ("trigger", "trigger"),
                ("dates", "dates"),
                ("properties", "properties"),
            ],
        );
        // These properties have columns of their own; the rest are listed in the last one.
        use crate::warehouse::keys;
        let own = [keys::RUN, keys::UPLOAD, keys::TRIGGER, keys::DATES].map(crate::warehouse::PropKey::full);
        for s in &self.snapshots {
            let p = |k: &str| s.properties.get(k).map(Cell::text).unwrap_or(Cell::Empty);
            let rest: Vec<String> = s.properties.iter().filter(|(k, _)| !own.contains(k)).map(|(k, v)| format!("{k}={v}")).collect();
            t.push_flagged(
                vec![
                    Cell::text(s.snapshot_id.to_string()),
                    s.parent_id.map(|p| Cell::text(p.to_string())).unwrap_or(Cell::Empty),
                    Cell::text(&s.committed_at),
                    s.operation.as_deref().map(Cell::text).unwrap_or(Cell::Empty),
                    Cell::text(if s.current {
                        "current"
                    } else if s.current_ancestor {
                        "ancestor"
                    } else {
                        ""
                    }),
                    p(&own[0]),
                    p(&own[1]),
                    p(&own[2]),
                    p(&own[3]),
                    Cell::text(rest.join("; ")),
                ],
                s.current.then_some(Status::Pass),
            );
        }
        vec![t]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoreGold {
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub baskets: i64,
    pub revenue_minor: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GoldOfDate {
    pub business_date: NaiveDate,
    pub snapshot_id: Option<i64>,
    pub rows: Vec<StoreGold>,
}

/// Spark's gold of a date beside the lab's, store by store.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SparkCheck {
    pub business_date: NaiveDate,
    pub spark_snapshot_id: Option<i64>,
    pub lab: PathBuf,
    pub stores: Vec<StoreComparison>,
    pub agree: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreComparison {
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub spark_baskets: i64,
    pub lab_baskets: i64,
    pub spark_revenue_minor: i64,
    pub lab_revenue_minor: i64,
    pub agree: bool,
}

impl SparkCheck {
    pub fn new(business_date: NaiveDate, spark: GoldOfDate, lab_dir: &Path, lab: Vec<crate::store::StoreFigures>) -> SparkCheck {
        let lab: Vec<StoreGold> = lab
            .into_iter()
            .map(|r| StoreGold {
                store_id: r.store_id,
                country: r.country,
                currency: r.currency,
                baskets: r.baskets,
                revenue_minor: r.revenue_minor,
            })
            .collect();
        // Each store's row on either side; a store agrees when both rows are the same row.
        let mut pairs: std::collections::BTreeMap<&str, (Option<&StoreGold>, Option<&StoreGold>)> = Default::default();
        for r in &spark.rows {
            pairs.entry(&r.store_id).or_default().0 = Some(r);
        }
        for r in &lab {
            pairs.entry(&r.store_id).or_default().1 = Some(r);
        }
        let stores: Vec<StoreComparison> = pairs
            .into_iter()
            .filter_map(|(store_id, (s, l))| {
                let shown = s.or(l)?;
                Some(StoreComparison {
                    store_id: store_id.to_string(),
                    country: shown.country.clone(),
                    currency: shown.currency.clone(),
                    spark_baskets: s.map_or(0, |r| r.baskets),
                    lab_baskets: l.map_or(0, |r| r.baskets),
                    spark_revenue_minor: s.map_or(0, |r| r.revenue_minor),
                    lab_revenue_minor: l.map_or(0, |r| r.revenue_minor),
                    agree: s == l,
                })
            })
            .collect();
        let agree = stores.iter().all(|s| s.agree);
        SparkCheck { business_date, spark_snapshot_id: spark.snapshot_id, lab: lab_dir.to_path_buf(), stores, agree }
    }
}

impl Report for SparkCheck {
    fn kind(&self) -> &'static str {
        "spark-check"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!(
            "spark check {}: Iceberg gold (snapshot {}) beside the lab at {}",
            self.business_date,
            self.spark_snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "none".into()),
            self.lab.display()
        )
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("store_id", "store"),
                ("country", "country"),
                ("spark_baskets", "spark baskets"),
                ("lab_baskets", "lab baskets"),
                ("spark_revenue_minor", "spark revenue"),
                ("lab_revenue_minor", "lab revenue"),
                ("status", "status"),
            ],
        );
        for s in &self.stores {
            t.push_flagged(
                vec![
                    Cell::text(&s.store_id),
                    Cell::text(&s.country),
                    Cell::Int(s.spark_baskets),
                    Cell::Int(s.lab_baskets),
                    Cell::money(s.spark_revenue_minor, &s.currency),
                    Cell::money(s.lab_revenue_minor, &s.currency),
                    Cell::Status(if s.agree { Status::Pass } else { Status::Fail }),
                ],
                (!s.agree).then_some(Status::Fail),
            );
        }
        vec![t]
    }
    fn notes(&self) -> Vec<Note> {
        let differ = self.stores.iter().filter(|s| !s.agree).count();
        vec![if self.agree {
            Note { status: Status::Pass, text: format!("Spark and the lab agree on all {} store(s), to the minor unit", self.stores.len()) }
        } else {
            Note { status: Status::Fail, text: format!("{differ} of {} store(s) differ between Spark and the lab", self.stores.len()) }
        }]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EvidenceReport {
    pub files: Vec<EvidenceFile>,
    pub comparison: serde_json::Value,
}

/// What `recount spark reopen` did: its run, and gold before and after.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ReopenReport {
    pub runs: Vec<SparkRun>,
    pub before: SparkFingerprint,
    pub fingerprint: SparkFingerprint,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RollbackReport {
    pub snapshot_id: i64,
    pub silver_snapshot_id: Option<i64>,
    /// Gold as of the snapshot, read by time travel (VERSION AS OF) before the rollback.
    pub target_fingerprint: SparkFingerprint,
    /// Gold after it: the same, or the rollback did not take.
    pub fingerprint: SparkFingerprint,
}
