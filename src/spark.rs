//! Drives the v2 job on Spark, into Iceberg tables (`recount spark ...`).
//!
//! The job is the PySpark driver package in `spark/recount_spark/` and the Spark SQL rules in
//! `queries/spark/`, both compiled into this binary and written out beside the setup when a
//! command runs, so an installed recount needs no checkout. The setup (a Python venv with
//! pyspark and pyiceberg, and the Iceberg runtime jar) is made by `scripts/spark-setup.sh`, which
//! `recount spark setup` runs. The driver answers on stdout, one JSON object a line (progress,
//! then a result or one error line); Spark's and Java's own output goes to a log file.

use crate::reports::{Cell, Note, Report, Status, Table};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use md5::Digest;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Iceberg runtime the setup installs (Spark 3.5, Scala 2.12).
pub(crate) const ICEBERG_JAR: &str = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar";
/// The environment variable that names the setup's directory.
pub(crate) const HOME_VAR: &str = "RECOUNT_SPARK_HOME";

/// The driver, a Python package (`python -m recount_spark`): each module's file name and text.
const DRIVER: &[(&str, &str)] = &[
    ("__init__.py", include_str!("../spark/recount_spark/__init__.py")),
    ("__main__.py", include_str!("../spark/recount_spark/__main__.py")),
    ("cli.py", include_str!("../spark/recount_spark/cli.py")),
    ("evidence.py", include_str!("../spark/recount_spark/evidence.py")),
    ("fast.py", include_str!("../spark/recount_spark/fast.py")),
    ("land.py", include_str!("../spark/recount_spark/land.py")),
    ("lines.py", include_str!("../spark/recount_spark/lines.py")),
    ("mirror.py", include_str!("../spark/recount_spark/mirror.py")),
    ("model.py", include_str!("../spark/recount_spark/model.py")),
    ("model_warehouse.py", include_str!("../spark/recount_spark/model_warehouse.py")),
    ("parse.py", include_str!("../spark/recount_spark/parse.py")),
    ("session.py", include_str!("../spark/recount_spark/session.py")),
    ("source.py", include_str!("../spark/recount_spark/source.py")),
    ("sql.py", include_str!("../spark/recount_spark/sql.py")),
    ("state.py", include_str!("../spark/recount_spark/state.py")),
    ("tables.py", include_str!("../spark/recount_spark/tables.py")),
    ("v2.py", include_str!("../spark/recount_spark/v2.py")),
    ("warehouse.py", include_str!("../spark/recount_spark/warehouse.py")),
    ("wire.py", include_str!("../spark/recount_spark/wire.py")),
];
/// The package's directory in a job.
const PACKAGE: &str = "recount_spark";

/// The version of the rules Spark applies, which every input hash covers (as the lab's cover
/// `lake::code_version`): the package version and a digest of the Spark SQL (read without its
/// comments and layout, as the lab's: `store::sql_for_digest`) and the line parser (the careful
/// parser and its fast path). A changed rule changes every hash, so the next run rebuilds every
/// date it touches.
pub(crate) fn rules_version() -> String {
    let mut h = md5::Md5::new();
    for (name, text) in QUERIES {
        h.update(name);
        h.update(crate::store::sql_for_digest(text));
    }
    for (name, text) in DRIVER.iter().filter(|(n, _)| matches!(*n, "parse.py" | "fast.py")) {
        h.update(name);
        h.update(text);
    }
    format!("{}+spark.{}", env!("CARGO_PKG_VERSION"), &crate::store::hex(&h.finalize())[..12])
}
const SETUP_SCRIPT: &str = include_str!("../scripts/spark-setup.sh");
const QUERIES: &[(&str, &str)] = &[
    ("schema.sql", include_str!("../queries/spark/schema.sql")),
    ("land.sql", include_str!("../queries/spark/land.sql")),
    ("v2.sql", include_str!("../queries/spark/v2.sql")),
    ("fingerprint.sql", include_str!("../queries/spark/fingerprint.sql")),
    ("model.sql", include_str!("../queries/spark/model.sql")),
];

/// Where the setup lives: $RECOUNT_SPARK_HOME, else $XDG_DATA_HOME/recount/spark, else
/// ~/.local/share/recount/spark (the same rule as scripts/spark-setup.sh).
pub fn default_home() -> PathBuf {
    if let Some(p) = std::env::var_os(HOME_VAR).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share"));
    data.join("recount/spark")
}

/// A finished setup: its Python and the Iceberg jar.
#[derive(Debug, Clone)]
pub struct Setup {
    pub home: PathBuf,
    pub python: PathBuf,
    pub jar: PathBuf,
}

impl Setup {
    /// The setup at `home`, or an error that says how to make one.
    pub fn find(home: &Path) -> Result<Setup> {
        let setup = Setup { home: home.to_path_buf(), python: home.join("venv/bin/python"), jar: home.join("jars").join(ICEBERG_JAR) };
        if !home.join("ready").is_file() || !setup.python.is_file() || !setup.jar.is_file() {
            bail!(
                "no Spark setup in {}: make one with `recount spark setup` (or scripts/spark-setup.sh; \
                 set {HOME_VAR} to use another directory). It needs Java 17 and about 450 MB from PyPI",
                home.display()
            );
        }
        Ok(setup)
    }

    /// The job's files, written once per version of them under the setup: the job's directory,
    /// holding the driver package (`recount_spark/`) and `queries/`.
    fn job(&self) -> Result<PathBuf> {
        let mut h = md5::Md5::new();
        for (name, text) in DRIVER.iter().chain(QUERIES) {
            h.update(name);
            h.update(text);
        }
        let digest = crate::store::hex(&h.finalize());
        let dir = self.home.join("job").join(&digest[..12]);
        if dir.join(PACKAGE).join("__main__.py").is_file() {
            return Ok(dir);
        }
        let tmp = self.home.join("job").join(format!(".{}-{}", &digest[..12], std::process::id()));
        for sub in [PACKAGE, "queries"] {
            std::fs::create_dir_all(tmp.join(sub)).wrap_err_with(|| format!("creating {}", tmp.join(sub).display()))?;
        }
        for (name, text) in DRIVER {
            std::fs::write(tmp.join(PACKAGE).join(name), text)?;
        }
        for (name, text) in QUERIES {
            std::fs::write(tmp.join("queries").join(name), text)?;
        }
        match std::fs::rename(&tmp, &dir) {
            Ok(()) => {}
            // Another recount wrote the same files first.
            Err(_) if dir.join(PACKAGE).join("__main__.py").is_file() => std::fs::remove_dir_all(&tmp)?,
            Err(e) => return Err(e).wrap_err_with(|| format!("writing the Spark job to {}", dir.display())),
        }
        Ok(dir)
    }
}

/// Runs the setup script compiled into this binary (the repository's scripts/spark-setup.sh).
pub fn setup(home: &Path) -> Result<i32> {
    let status = Command::new("bash")
        .arg("-c")
        .arg(SETUP_SCRIPT)
        .arg("spark-setup")
        .env(HOME_VAR, home)
        .status()
        .wrap_err("running bash for the Spark setup")?;
    Ok(status.code().unwrap_or(1))
}

/// Where one driver call runs, and on what.
#[derive(Debug, Clone)]
pub(crate) struct Driver {
    pub setup: Setup,
    pub warehouse: PathBuf,
    pub master: String,
}

/// One step of long work, as the driver reports it (shown by `crate::progress::Progress`).
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    pub message: String,
    pub done: Option<u64>,
    pub total: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Line {
    Progress(Step),
    Result(serde_json::Value),
    Error { message: String },
    Log { text: String },
}

/// The environment variable that names a `recount spark serve` socket: a driver call goes to
/// that warm session instead of starting a JVM of its own.
pub(crate) const SERVER_VAR: &str = "RECOUNT_SPARK_SERVER";
/// The crash hook's variable (tests): a call that sets it starts its own driver, which it kills.
const CRASH_VAR: &str = "RECOUNT_SPARK_CRASH";

/// What a driver said: its result, or its one error line.
struct Said {
    result: Option<serde_json::Value>,
    error: Option<String>,
}

impl Driver {
    /// A driver on `warehouse` with the setup in its usual place (an error says how to make one).
    pub(crate) fn new(warehouse: PathBuf, master: String) -> Result<Driver> {
        Ok(Driver { setup: Setup::find(&default_home())?, warehouse, master })
    }

    /// The driver's arguments after `python -m recount_spark`.
    fn argv(&self, job: &Path, command: &str, args: &[String]) -> Vec<String> {
        let mut argv = vec![
            "--warehouse".to_string(),
            self.warehouse.display().to_string(),
            "--queries".into(),
            job.join("queries").display().to_string(),
            "--jar".into(),
            self.setup.jar.display().to_string(),
            "--master".into(),
            self.master.clone(),
            "--rules".into(),
            rules_version(),
            command.into(),
        ];
        argv.extend(args.iter().cloned());
        argv
    }

    /// `python -m recount_spark ARGV`, its package found through PYTHONPATH by the driver and by
    /// Spark's Python workers (which unpickle the parser by reference to its module).
    fn command(&self, job: &Path, argv: &[String]) -> Command {
        let mut c = Command::new(&self.setup.python);
        c.arg("-m")
            .arg(PACKAGE)
            .args(argv)
            .env("PYSPARK_PYTHON", &self.setup.python)
            .env("PYTHONPATH", job)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1")
            .env("SPARK_LOCAL_IP", std::env::var("SPARK_LOCAL_IP").unwrap_or_else(|_| "127.0.0.1".into()))
            .env_remove(SERVER_VAR);
        c
    }

    /// A new log file under the setup's logs, the oldest pruned.
    fn log(&self, command: &str) -> Result<(PathBuf, std::fs::File)> {
        let logs = self.setup.home.join("logs");
        std::fs::create_dir_all(&logs).wrap_err_with(|| format!("creating {}", logs.display()))?;
        prune_logs(&logs, 30);
        let path = logs.join(format!("{}-{command}-{}.log", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), std::process::id()));
        let file = std::fs::File::create(&path).wrap_err_with(|| format!("creating {}", path.display()))?;
        Ok((path, file))
    }

    /// Runs `python -m recount_spark COMMAND ARGS`, calling `on_progress` per step, and returns
    /// its result. With `RECOUNT_SPARK_SERVER` naming a served socket, the call goes there.
    pub(crate) fn call<T: for<'de> Deserialize<'de>>(&self, command: &str, args: &[String], on_progress: impl FnMut(&Step)) -> Result<T> {
        self.call_on(command, args, on_progress, true)
    }

    /// A call that needs no Spark session (pyiceberg alone): always a driver process of its own,
    /// so it reads this process's environment (a catalog's PYICEBERG_* settings), not a server's.
    pub(crate) fn call_local<T: for<'de> Deserialize<'de>>(&self, command: &str, args: &[String]) -> Result<T> {
        self.call_on(command, args, |_| {}, false)
    }

    fn call_on<T: for<'de> Deserialize<'de>>(
        &self,
        command: &str,
        args: &[String],
        mut on_progress: impl FnMut(&Step),
        may_serve: bool,
    ) -> Result<T> {
        let job = self.setup.job()?;
        let (log_path, mut log) = self.log(command)?;
        let argv = self.argv(&job, command, args);
        let log_note = format!("full log: {}", log_path.display());
        let served = if may_serve { self.served(&job, &argv, &mut log, &mut on_progress)? } else { None };
        let said = match served {
            Some(said) => said,
            None => {
                let mut child = self
                    .command(&job, &argv)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::from(log.try_clone()?))
                    .spawn()
                    .wrap_err_with(|| format!("starting {}", self.setup.python.display()))?;
                let stdout = child.stdout.take().ok_or_else(|| eyre!("the Spark driver's stdout was not piped"))?;
                let said = read_said(std::io::BufReader::new(stdout), &mut log, &mut on_progress)?;
                let status = child.wait()?;
                if said.error.is_none() && !status.success() {
                    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
                    bail!(
                        "spark {command}: {} ({log_note})",
                        summarise_log(&text).unwrap_or_else(|| format!("the driver exited with {status}"))
                    );
                }
                said
            }
        };
        if let Some(message) = said.error {
            bail!("spark {command}: {} ({log_note})", one_line(&message));
        }
        let value = said.result.ok_or_else(|| eyre!("spark {command}: the driver gave no result ({log_note})"))?;
        serde_json::from_value(value).wrap_err_with(|| format!("spark {command}: reading its result ({log_note})"))
    }

    /// The call on a served session, when `RECOUNT_SPARK_SERVER` names one and the crash hook is
    /// not set; `None` to start a driver instead (no server there: the log says so).
    fn served(&self, job: &Path, argv: &[String], log: &mut std::fs::File, on_progress: &mut impl FnMut(&Step)) -> Result<Option<Said>> {
        let Some(socket) = std::env::var_os(SERVER_VAR).filter(|s| !s.is_empty()) else { return Ok(None) };
        if std::env::var_os(CRASH_VAR).is_some() {
            return Ok(None);
        }
        let mut stream = match std::os::unix::net::UnixStream::connect(&socket) {
            Ok(stream) => stream,
            Err(e) => {
                writeln!(log, "no Spark server at {}: {e}; starting a driver of its own", Path::new(&socket).display())?;
                return Ok(None);
            }
        };
        let cwd = std::env::current_dir().wrap_err("this process's working directory")?;
        let request = serde_json::json!({
            "argv": argv,
            "queries": job.join("queries").display().to_string(),
            "cwd": cwd.display().to_string(),
        });
        writeln!(stream, "{request}").wrap_err("sending the call to the Spark server")?;
        writeln!(log, "served by {}", Path::new(&socket).display())?;
        read_said(std::io::BufReader::new(stream), log, on_progress).map(Some)
    }

    /// `recount spark serve`: one warm session on `socket` until its caller's shell (or this
    /// process) has gone, or `idle` seconds pass without a call. Its log is the setup's.
    pub(crate) fn serve(&self, socket: &Path, idle: u64) -> Result<i32> {
        let job = self.setup.job()?;
        let (log_path, mut log) = self.log("serve")?;
        let mut args = vec!["--socket".to_string(), socket.display().to_string(), "--idle".into(), idle.to_string()];
        for pid in [std::process::id(), std::os::unix::process::parent_id()] {
            args.extend(["--watch".to_string(), pid.to_string()]);
        }
        let argv = self.argv(&job, "serve", &args);
        let mut child = self
            .command(&job, &argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.try_clone()?))
            .spawn()
            .wrap_err_with(|| format!("starting {}", self.setup.python.display()))?;
        let stdout = child.stdout.take().ok_or_else(|| eyre!("the Spark driver's stdout was not piped"))?;
        // Its one progress line says the socket is bound; anything else goes to the log.
        let said = read_said(std::io::BufReader::new(stdout), &mut log, &mut |_| {
            println!(
                "spark: serving on {} (log {}); calls with {SERVER_VAR}={} use it",
                socket.display(),
                log_path.display(),
                socket.display()
            );
        })?;
        if let Some(message) = said.error {
            bail!("spark serve: {} (full log: {})", one_line(&message), log_path.display());
        }
        let status = child.wait()?;
        Ok(if status.success() { 0 } else { 1 })
    }
}

/// Reads a driver's JSON lines: progress to `on_progress`, a served call's traceback and any
/// other line a library printed to the log, the result and the error kept.
fn read_said(reader: impl BufRead, log: &mut std::fs::File, on_progress: &mut impl FnMut(&Step)) -> Result<Said> {
    let mut said = Said { result: None, error: None };
    for line in reader.lines() {
        let line = line.wrap_err("reading the Spark driver's output")?;
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Progress(p)) => on_progress(&p),
            Ok(Line::Result(v)) => said.result = Some(v),
            Ok(Line::Error { message }) => said.error = Some(message),
            Ok(Line::Log { text }) => write!(log, "{text}")?,
            Err(_) => writeln!(log, "{line}")?,
        }
    }
    Ok(said)
}

fn one_line(text: &str) -> String {
    crate::sanitize::for_terminal(text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error")).into_owned()
}

/// The line of a log that says what went wrong: the last Python or Java exception line.
pub(crate) fn summarise_log(text: &str) -> Option<String> {
    let is_exception = |l: &str| {
        let head = l.split(':').next().unwrap_or("");
        !head.contains(' ') && (head.ends_with("Error") || head.ends_with("Exception")) && l.contains(':')
    };
    // Java prints a cause as ": java.lang.X: message" under py4j's own line.
    text.lines().map(|l| l.trim().trim_start_matches(": ")).rev().find(|l| is_exception(l)).map(one_line)
}

fn prune_logs(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut logs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
    logs.sort();
    for old in logs.iter().rev().skip(keep) {
        let _ = std::fs::remove_file(old);
    }
}

// --- what the driver answers ---------------------------------------------------------------------

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
    fn cause(&self) -> Cell {
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
pub struct SnapshotsReport {
    pub table: String,
    pub snapshots: Vec<IcebergSnapshot>,
}

impl Report for SnapshotsReport {
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
        let own = [keys::RUN, keys::UPLOAD, keys::TRIGGER, keys::DATES].map(crate::warehouse::Key::full);
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
pub struct GoldRow {
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
    pub rows: Vec<GoldRow>,
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
        let lab: Vec<GoldRow> = lab
            .into_iter()
            .map(|r| GoldRow {
                store_id: r.store_id,
                country: r.country,
                currency: r.currency,
                baskets: r.baskets,
                revenue_minor: r.revenue_minor,
            })
            .collect();
        // Each store's row on either side; a store agrees when both rows are the same row.
        let mut pairs: std::collections::BTreeMap<&str, (Option<&GoldRow>, Option<&GoldRow>)> = Default::default();
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
pub struct EvidenceFile {
    pub path: PathBuf,
    pub md5: String,
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

/// `GBP=2,JPY=0,…`: the minor digits of every store currency, for the driver's `--digits`.
pub(crate) fn digits_arg(stores: &crate::raw::StoreTable) -> String {
    let mut codes: Vec<&str> = stores.stores.iter().map(|s| s.currency.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    codes.iter().filter_map(|c| crate::money::digits(c).map(|d| format!("{c}={d}"))).collect::<Vec<_>>().join(",")
}

/// The driver's arguments for reopening `date`, the decision's words cleaned as the lab cleans
/// them (`lake::reopen::Decision`); returns them with who decided, cleaned.
pub(crate) fn reopen_args(date: NaiveDate, reason: &str, by: &str, late_days: u32) -> Result<(Vec<String>, String)> {
    let (reason, by) = crate::lake::reopen::Decision { reason, by }.cleaned()?;
    let args = vec![
        "--date".to_string(),
        date.to_string(),
        "--reason".into(),
        reason,
        "--by".into(),
        by.clone(),
        "--late-days".into(),
        late_days.to_string(),
    ];
    Ok((args, by))
}

/// The driver's arguments for a run of `uploads` of `world`, with each store currency's ISO-4217
/// digits: the world's stores are read through its description and checked by the lab's own rules
/// (zones, countries, currencies) before Spark lands anything.
pub(crate) fn world_run_args(world: &Path, uploads: &[NaiveDate], late_days: u32, daily: bool, trigger: &str) -> Result<Vec<String>> {
    let stores =
        crate::raw::source::Source::of_world(world, None)?.stores(world).wrap_err("the world's stores, before Spark lands them")?;
    let mut args = run_args(world, uploads, late_days, daily, trigger);
    args.extend(["--digits".to_string(), digits_arg(&stores)]);
    Ok(args)
}

/// The driver's arguments for a run of `uploads`, in the order given.
pub(crate) fn run_args(world: &Path, uploads: &[NaiveDate], late_days: u32, daily: bool, trigger: &str) -> Vec<String> {
    let mut args = vec![
        "--world".to_string(),
        world.display().to_string(),
        "--uploads".to_string(),
        uploads.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","),
        "--late-days".to_string(),
        late_days.to_string(),
        "--trigger".to_string(),
        trigger.to_string(),
    ];
    if daily {
        args.push("--daily".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_summarised_by_its_last_exception_line() {
        let log = "26/12/01 WARN Utils: loopback\nTraceback (most recent call last):\n  File \"x.py\", line 3\n\
                   py4j.protocol.Py4JJavaError: An error occurred while calling o41.sql.\n\
                   : java.lang.OutOfMemoryError: Java heap space\n\tat org.apache.spark.Foo(Foo.scala:1)\n";
        assert_eq!(summarise_log(log).as_deref(), Some("java.lang.OutOfMemoryError: Java heap space"));
        assert_eq!(summarise_log("all fine\n"), None);
    }

    #[test]
    fn a_missing_setup_says_how_to_make_one() {
        let dir = tempfile::tempdir().unwrap();
        let err = Setup::find(dir.path()).unwrap_err().to_string();
        assert!(err.contains("recount spark setup"), "{err}");
        assert!(err.contains(HOME_VAR), "{err}");
    }

    #[test]
    fn the_job_is_written_once_with_every_query_file() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup { home: dir.path().to_path_buf(), python: "python3".into(), jar: "x.jar".into() };
        let job = setup.job().unwrap();
        for (name, text) in DRIVER {
            assert_eq!(std::fs::read_to_string(job.join(PACKAGE).join(name)).unwrap(), *text);
        }
        for (name, text) in QUERIES {
            assert_eq!(std::fs::read_to_string(job.join("queries").join(name)).unwrap(), *text);
        }
        assert_eq!(setup.job().unwrap(), job, "the same files are not written again");
    }

    /// The driver's own unit tests (its parser on the shared corpus, its SQL loader) under plain
    /// python3, no Spark: `cargo test` runs them too.
    #[test]
    fn the_driver_packages_own_tests_pass_under_plain_python() {
        let out = Command::new("python3")
            .args(["-m", "unittest", "discover", "-s", "tests"])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/spark"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python3 runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let ran: usize = err.lines().find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok()).unwrap_or(0);
        assert!(ran >= 9, "{err}");
    }

    /// The names of the files in `dir` (under the manifest's directory) ending in `ext`, sorted.
    fn files_ending(dir: &str, ext: &str) -> Vec<String> {
        let mut on_disk: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(ext))
            .collect();
        on_disk.sort();
        on_disk
    }

    #[test]
    fn every_module_of_the_driver_package_is_compiled_in() {
        let on_disk = files_ending("spark/recount_spark", ".py");
        let compiled: Vec<String> = DRIVER.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(on_disk, compiled, "DRIVER lists every module, in name order");
    }

    #[test]
    fn every_spark_sql_file_is_compiled_in() {
        let on_disk = files_ending("queries/spark", ".sql");
        let mut compiled: Vec<String> = QUERIES.iter().map(|(n, _)| n.to_string()).collect();
        compiled.sort();
        assert_eq!(on_disk, compiled);
    }
}
