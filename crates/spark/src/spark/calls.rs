//! The driver's commands, one typed method each: the only place that names a command of the
//! driver's protocol or builds its arguments, so a front end asks for a run or a rollback and
//! gets a struct back, never a command name or a flag.

use super::*;
use crate::lake::model::ModelRun;
use crate::lake::snapshot::TriggerKind;

/// Which reader a fingerprint of a warehouse's gold goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldReader {
    /// Spark SQL, in a session.
    Spark,
    /// pyiceberg, with no JVM.
    Pyiceberg,
}

/// `--as-of SNAPSHOT`, when one is named.
fn as_of_args(as_of: Option<i64>) -> Vec<String> {
    as_of.map(|s| vec!["--as-of".to_string(), s.to_string()]).unwrap_or_default()
}

/// `--snapshot N`.
fn snapshot_args(snapshot: i64) -> Vec<String> {
    vec!["--snapshot".into(), snapshot.to_string()]
}

/// `--date D`.
fn date_args(date: NaiveDate) -> Vec<String> {
    vec!["--date".into(), date.to_string()]
}

/// The driver's arguments for rebuilding `dates` under a window of `late_days`.
fn rebuild_args(dates: &[NaiveDate], late_days: u32) -> Vec<String> {
    vec!["--dates".to_string(), crate::store::date_list(dates), "--late-days".into(), late_days.to_string()]
}

/// A run of a world's uploads: what `run` and `model_run` are given.
#[derive(Debug, Clone)]
pub struct RunOf<'a> {
    pub world: &'a Path,
    pub uploads: &'a [NaiveDate],
    pub late_days: u32,
    /// Day by day: one v2 run per upload, as `recount daily` runs.
    pub daily: bool,
}

impl Driver {
    /// Retail: lands `run`'s uploads and runs v2 (`--per-upload`: one run per upload, not per
    /// business date); each store currency's ISO-4217 digits come from the lab's own rules.
    pub fn run(
        &self,
        run: &RunOf,
        trigger: TriggerKind,
        per_upload: bool,
        on_progress: impl FnMut(&SparkProgress),
    ) -> Result<SparkRunReport> {
        let mut args = world_run_args(run.world, run.uploads, run.late_days, run.daily, trigger.as_str())?;
        if per_upload {
            args.push("--per-upload".into());
        }
        self.call("run", &args, on_progress)
    }

    /// Retail: gold (and the silver it names) back to Iceberg snapshot `snapshot`.
    pub fn rollback(&self, snapshot: i64, on_progress: impl FnMut(&SparkProgress)) -> Result<RollbackReport> {
        self.call("rollback", &snapshot_args(snapshot), on_progress)
    }

    /// Retail: v1 for `date` again, which appends.
    pub fn naive(&self, date: NaiveDate, on_progress: impl FnMut(&SparkProgress)) -> Result<NaiveAnswer> {
        self.call("naive", &date_args(date), on_progress)
    }

    /// Retail: v2 rebuilds `dates` (each skipped when its inputs are unchanged).
    pub fn rebuild(&self, dates: &[NaiveDate], late_days: u32, on_progress: impl FnMut(&SparkProgress)) -> Result<RebuildReport> {
        self.call("rebuild", &rebuild_args(dates, late_days), on_progress)
    }

    /// Retail: finance reopens `date`; returns the report and who decided, cleaned as the lab
    /// cleans the decision's words.
    pub fn reopen(
        &self,
        date: NaiveDate,
        (reason, by): (&str, &str),
        late_days: u32,
        on_progress: impl FnMut(&SparkProgress),
    ) -> Result<(ReopenReport, String)> {
        let (args, by) = reopen_args(date, reason, by, late_days)?;
        Ok((self.call("reopen", &args, on_progress)?, by))
    }

    /// Retail: gold's fingerprint through `reader`, as of an Iceberg snapshot when one is named.
    pub fn fingerprint(&self, reader: GoldReader, as_of: Option<i64>) -> Result<SparkFingerprint> {
        let mut args = vec!["--reader".to_string(), if reader == GoldReader::Spark { "spark" } else { "pyiceberg" }.to_string()];
        args.extend(as_of_args(as_of));
        self.call("fingerprint", &args, |_| {})
    }

    /// A table's Iceberg snapshots.
    pub fn snapshots(&self, table: &str) -> Result<IcebergSnapshotsReport> {
        self.call("snapshots", &["--table".into(), table.into()], |_| {})
    }

    /// Retail: the evidence pack of `date`, written under `out`.
    pub fn evidence(&self, date: NaiveDate, out: &Path) -> Result<EvidenceReport> {
        let mut args = date_args(date);
        args.extend(["--out".to_string(), out.display().to_string()]);
        self.call("evidence", &args, |_| {})
    }

    /// Retail: gold of `date`, store by store, as of an Iceberg snapshot when one is named.
    pub fn gold(&self, date: NaiveDate, as_of: Option<i64>) -> Result<GoldOfDate> {
        let mut args = date_args(date);
        args.extend(as_of_args(as_of));
        self.call("gold", &args, |_| {})
    }

    /// A model's world: lands `run`'s uploads and runs v2.
    pub fn model_run(&self, run: &RunOf, on_progress: impl FnMut(&SparkProgress)) -> Result<ModelRunAnswer> {
        let mut args = vec![
            "--world".to_string(),
            run.world.display().to_string(),
            "--uploads".into(),
            crate::store::date_list(run.uploads),
            "--late-days".into(),
            run.late_days.to_string(),
        ];
        if run.daily {
            args.push("--daily".into());
        }
        self.call("model-run", &args, on_progress)
    }

    /// A model's gold back to Iceberg snapshot `snapshot`.
    pub fn model_rollback(&self, snapshot: i64) -> Result<ModelRollbackAnswer> {
        self.call("model-rollback", &snapshot_args(snapshot), |_| {})
    }

    /// A model's v1 for `date` again, which appends.
    pub fn model_naive(&self, date: NaiveDate) -> Result<ModelNaiveAnswer> {
        self.call("model-naive", &date_args(date), |_| {})
    }

    /// A model's v2 rebuilds `dates`: each skipped when its input is its version's own, unless
    /// `force`.
    pub fn model_rebuild(&self, dates: &[NaiveDate], late_days: u32, force: bool) -> Result<ModelRun> {
        let mut args = rebuild_args(dates, late_days);
        if force {
            args.push("--force".into());
        }
        self.call("model-rebuild", &args, |_| {})
    }

    /// Finance reopens a date of a model's gold; returns the run and who decided, cleaned.
    pub fn model_reopen(&self, date: NaiveDate, (reason, by): (&str, &str), late_days: u32) -> Result<(ModelRun, String)> {
        let (args, by) = reopen_args(date, reason, by, late_days)?;
        Ok((self.call("model-reopen", &args, |_| {})?, by))
    }

    /// A model's gold's fingerprint through pyiceberg, as of an Iceberg snapshot when one is named.
    pub fn model_fingerprint(&self, as_of: Option<i64>) -> Result<ModelFingerprintAnswer> {
        self.call_local("model-fingerprint", &as_of_args(as_of))
    }

    /// Another pipeline's table's data files at its current snapshot, through pyiceberg.
    pub fn table_files(&self, table: &str) -> Result<TableFilesAnswer> {
        self.call_local("table-files", &["--table".into(), table.into()])
    }

    /// What a mirror of retail's warehouse reads, planned by pyiceberg.
    pub(crate) fn plan(&self) -> Result<crate::warehouse::MirrorPlan> {
        self.call_local("plan", &[])
    }

    /// What a mirror of a model's warehouse reads, planned by pyiceberg.
    pub(crate) fn model_plan(&self) -> Result<crate::warehouse::model_mirror::ModelMirrorPlan> {
        self.call_local("model-plan", &[])
    }
}
