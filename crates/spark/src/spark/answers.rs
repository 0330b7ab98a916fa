//! What the driver answers, as report structs: a run, a fingerprint, the snapshots, a check, the
//! evidence, a reopening and a rollback.

use super::*;
use crate::reports::evidence::EvidenceFile;

/// What `model-run` answers: a model's world landed and run into the warehouse, in the lab's
/// own structs (`lake::model`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelRunAnswer {
    pub landing: crate::lake::model::ModelLanding,
    pub runs: Vec<crate::lake::model::ModelRun>,
    pub fingerprint: String,
}

/// What `model-rollback` answers: gold as of the snapshot, read before the rollback, and after it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelRollbackAnswer {
    pub model: String,
    pub snapshot_id: i64,
    /// Gold as of the snapshot, read by time travel before the rollback.
    pub target: String,
    /// Gold after it.
    pub line: String,
}

/// What `model-fingerprint` answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelFingerprintAnswer {
    pub line: String,
}

/// Whether the warehouse holds a model other than retail (its model's table exists).
pub fn holds_model(warehouse: &Path) -> bool {
    warehouse.join("recount").join("model_definition").join("metadata").is_dir()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct SparkFingerprint {
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
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct Landing {
    pub upload: NaiveDate,
    pub new: Vec<String>,
    pub corrected: Vec<String>,
    /// A path's next version holding the same rows in other bytes: no correction.
    #[serde(default)]
    pub redelivered: Vec<String>,
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
#[cfg_attr(test, serde(deny_unknown_fields))]
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
#[cfg_attr(test, serde(deny_unknown_fields))]
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
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct RunDate {
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
#[cfg_attr(test, serde(deny_unknown_fields))]
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
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct SparkRun {
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
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct SparkRunReport {
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
                ("redelivered", "re-delivered (same rows)"),
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
                    Cell::text(l.redelivered.join(", ")),
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

/// What `evidence` answers: the files it wrote, and the comparison one of them holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct EvidenceReport {
    pub files: Vec<EvidenceFile>,
    pub comparison: EvidenceComparison,
}

/// The commit that last rewrote a date of gold, against its parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct EvidenceComparison {
    pub business_date: NaiveDate,
    pub snapshot_before: Option<i64>,
    pub snapshot_after: Option<i64>,
    pub run: Option<i64>,
    pub upload: Option<NaiveDate>,
    pub corrected: Vec<String>,
    pub stores: Vec<EvidenceStore>,
    pub gold: Option<EvidencePartitions>,
    /// Silver's, when the commit names a silver snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silver: Option<EvidencePartitions>,
}

/// One store's gold of the date before and after that commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct EvidenceStore {
    pub store_id: String,
    pub currency: String,
    pub baskets_before: i64,
    pub baskets_after: i64,
    pub revenue_before_minor: i64,
    pub revenue_after_minor: i64,
    pub revenue_delta_minor: i64,
}

/// Which partitions a commit rewrote, and that it left every other one's files as they were.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct EvidencePartitions {
    pub rewritten: Vec<NaiveDate>,
    pub rewritten_files_changed: bool,
    pub other_partitions: Vec<EvidencePartition>,
    pub other_partitions_untouched: bool,
}

/// A partition the commit did not rewrite: its data files before and after.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct EvidencePartition {
    pub business_date: NaiveDate,
    pub files_before: i64,
    pub files_after: i64,
    pub same_files: bool,
}

/// What `table-files` answers: another pipeline's table's data files at its current snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct TableFilesAnswer {
    pub files: Vec<PathBuf>,
}

/// What `rebuild` did: its run, and gold after it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct RebuildReport {
    pub runs: Vec<SparkRun>,
    pub fingerprint: SparkFingerprint,
}

/// What `naive` did: the rows v1 appended for a run date, its snapshot of v1's table, and gold's
/// fingerprint, which v1 never moves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct NaiveAnswer {
    pub run_date: NaiveDate,
    pub rows_added: i64,
    pub snapshot_id: Option<i64>,
    pub fingerprint: SparkFingerprint,
}

/// What `recount spark reopen` did: its run, and gold before and after.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ReopenReport {
    pub runs: Vec<SparkRun>,
    pub before: SparkFingerprint,
    pub fingerprint: SparkFingerprint,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct RollbackReport {
    pub snapshot_id: i64,
    pub silver_snapshot_id: Option<i64>,
    /// Gold as of the snapshot, read by time travel (VERSION AS OF) before the rollback.
    pub target_fingerprint: SparkFingerprint,
    /// Gold after it: the same, or the rollback did not take.
    pub fingerprint: SparkFingerprint,
}

/// `model-naive`: v1 of a model for one run date, appended to the warehouse's model_naive.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ModelNaiveAnswer {
    pub run_date: NaiveDate,
    pub rows_added: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;

    /// tests/corpus/answers.jsonl: each answer's fields and their types, as the driver's
    /// TypedDicts (spark/recount_spark/answers.py) are held to them too.
    fn schema() -> BTreeMap<String, Vec<(String, String)>> {
        let text = include_str!("../../../../tests/corpus/answers.jsonl");
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let fields = v["fields"].as_object().unwrap().iter().map(|(k, t)| (k.clone(), t.as_str().unwrap().to_string())).collect();
                (v["answer"].as_str().unwrap().to_string(), fields)
            })
            .collect()
    }

    /// A value of schema type `t`, with every field of an answer present.
    fn sample(schema: &BTreeMap<String, Vec<(String, String)>>, t: &str) -> Value {
        if let Some(inner) = t.strip_suffix('?') {
            return sample(schema, inner);
        }
        if let Some(inner) = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return json!([sample(schema, inner)]);
        }
        match t {
            "int" => json!(7),
            "str" => json!("text"),
            "bool" => json!(true),
            "date" => json!("2026-06-29"),
            map if map.starts_with('{') => json!({ "key": sample(schema, &map[1..map.len() - 1]) }),
            answer => {
                let fields = schema.get(answer).unwrap_or_else(|| panic!("the schema names no answer {answer}"));
                Value::Object(fields.iter().map(|(k, t)| (k.trim_end_matches('?').to_string(), sample(schema, t))).collect())
            }
        }
    }

    /// The fields of `T` as it reads `v` and writes it again. In tests the answers deny a field
    /// they do not have, so a field only the schema names fails here.
    fn round_trip<T: DeserializeOwned + Serialize>(v: Value) -> Result<Vec<String>, String> {
        let t: T = serde_json::from_value(v).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(&t).unwrap().as_object().unwrap().keys().cloned().collect())
    }

    #[test]
    fn every_answer_struct_has_exactly_the_schema_s_fields() {
        use crate::warehouse::model_mirror as mirror;
        let schema = schema();
        assert!(schema.len() >= 41, "{}", schema.len());
        for (answer, fields) in &schema {
            let v = sample(&schema, answer);
            let got = match answer.as_str() {
                "Fingerprint" => round_trip::<SparkFingerprint>(v),
                "HeldFile" => round_trip::<HeldFile>(v),
                "Landing" => round_trip::<Landing>(v),
                "StoresLanded" => round_trip::<StoresLanded>(v),
                "RunDate" => round_trip::<RunDate>(v),
                "BeyondWindow" => round_trip::<Beyond>(v),
                "Run" => round_trip::<SparkRun>(v),
                "RunAnswer" => round_trip::<SparkRunReport>(v),
                "RollbackAnswer" => round_trip::<RollbackReport>(v),
                "ReopenAnswer" => round_trip::<ReopenReport>(v),
                "RebuildAnswer" => round_trip::<RebuildReport>(v),
                "NaiveAnswer" => round_trip::<NaiveAnswer>(v),
                "ModelLandedFile" => round_trip::<crate::lake::model::ModelLandedFile>(v),
                "ModelHeld" => round_trip::<crate::lake::land::HeldUpload>(v),
                "ModelLanding" => round_trip::<crate::lake::model::ModelLanding>(v),
                "ModelRun" => round_trip::<crate::lake::model::ModelRun>(v),
                "ModelRunAnswer" => round_trip::<ModelRunAnswer>(v),
                "ModelRollbackAnswer" => round_trip::<ModelRollbackAnswer>(v),
                "ModelFingerprintAnswer" => round_trip::<ModelFingerprintAnswer>(v),
                "TableState" => round_trip::<mirror::TableState>(v),
                "MirrorFile" => round_trip::<mirror::MirrorFile>(v),
                "MirrorDimension" => round_trip::<mirror::MirrorDimension>(v),
                "MirrorSkipped" => round_trip::<mirror::MirrorSkipped>(v),
                "MirrorGoldSnapshot" => round_trip::<mirror::MirrorGoldSnapshot>(v),
                "MirrorLogEntry" => round_trip::<mirror::MirrorLogEntry>(v),
                "ModelMirrorPlan" => round_trip::<mirror::ModelMirrorPlan>(v),
                "MirrorNaive" => round_trip::<mirror::MirrorNaive>(v),
                "ModelNaiveAnswer" => round_trip::<ModelNaiveAnswer>(v),
                "IcebergSnapshot" => round_trip::<IcebergSnapshot>(v),
                "SnapshotsAnswer" => round_trip::<IcebergSnapshotsReport>(v),
                "StoreGold" => round_trip::<StoreGold>(v),
                "GoldAnswer" => round_trip::<GoldOfDate>(v),
                "EvidenceFile" => round_trip::<EvidenceFile>(v),
                "EvidenceStore" => round_trip::<EvidenceStore>(v),
                "EvidencePartition" => round_trip::<EvidencePartition>(v),
                "EvidencePartitions" => round_trip::<EvidencePartitions>(v),
                "EvidenceComparison" => round_trip::<EvidenceComparison>(v),
                "EvidenceAnswer" => round_trip::<EvidenceReport>(v),
                "TableFilesAnswer" => round_trip::<TableFilesAnswer>(v),
                "MirrorSnapshot" => round_trip::<crate::warehouse::SnapshotPlan>(v),
                "MirrorAppend" => round_trip::<crate::warehouse::Append>(v),
                "MirrorPlan" => round_trip::<crate::warehouse::MirrorPlan>(v),
                other => panic!("no Rust struct reads the driver's {other}"),
            };
            let mut got = got.unwrap_or_else(|e| panic!("{answer}: {e}"));
            let mut want: Vec<String> = fields.iter().map(|(k, _)| k.trim_end_matches('?').to_string()).collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{answer}: the Rust struct's fields against the schema's");
        }
    }

    /// A key the schema marks as one the driver may leave out is one Rust reads when absent.
    #[test]
    fn an_answer_reads_without_the_keys_the_driver_may_leave_out() {
        let schema = schema();
        let mut cases = 0;
        for (answer, fields) in schema.iter().filter(|(_, f)| f.iter().any(|(k, _)| k.ends_with('?'))) {
            let mut v = sample(&schema, answer);
            for (k, _) in fields.iter().filter(|(k, _)| k.ends_with('?')) {
                v.as_object_mut().unwrap().remove(k.trim_end_matches('?'));
            }
            let read = match answer.as_str() {
                "RunDate" => round_trip::<RunDate>(v),
                "BeyondWindow" => round_trip::<Beyond>(v),
                "Run" => round_trip::<SparkRun>(v),
                "EvidenceComparison" => round_trip::<EvidenceComparison>(v),
                other => panic!("{other} has keys the driver may leave out: add it here"),
            };
            assert!(read.is_ok(), "{answer}: {read:?}");
            cases += 1;
        }
        assert_eq!(cases, 4);
    }
}
