//! One call of the Python driver: its process, the protocol (one JSON object a line on stdout:
//! progress, then a result or one error line) and its log.

use super::*;

/// Where one driver call runs, and on what.
#[derive(Debug, Clone)]
pub struct Driver {
    pub setup: SparkSetup,
    pub warehouse: PathBuf,
    pub master: String,
}

/// One step of long work, as the driver reports it (shown by `crate::progress::Progress`).
#[derive(Debug, Clone, Deserialize)]
pub struct SparkProgress {
    pub message: String,
    pub done: Option<u64>,
    pub total: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub(super) enum DriverLine {
    Progress(SparkProgress),
    Result(serde_json::Value),
    Error { message: String },
    Log { text: String },
}

/// The environment variable that names a `recount spark serve` socket: a driver call goes to
/// that warm session instead of starting a JVM of its own.
pub(crate) const SERVER_VAR: &str = "RECOUNT_SPARK_SERVER";
/// The crash hook's variable (tests): a call that sets it starts its own driver, which it kills.
pub(super) const CRASH_VAR: &str = "RECOUNT_SPARK_CRASH";

/// What a driver said: its result, or its one error line.
pub(super) struct DriverAnswer {
    pub(super) result: Option<serde_json::Value>,
    pub(super) error: Option<String>,
}

impl Driver {
    /// A driver on `warehouse` with the setup in its usual place (an error says how to make one).
    pub fn new(warehouse: PathBuf, master: String) -> Result<Driver> {
        Ok(Driver { setup: SparkSetup::find(&default_home())?, warehouse, master })
    }

    /// The driver's arguments after `python -m recount_spark`.
    pub(super) fn argv(&self, job: &Path, command: &str, args: &[String]) -> Vec<String> {
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
    pub(super) fn command(&self, job: &Path, argv: &[String]) -> Command {
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
    pub(super) fn log(&self, command: &str) -> Result<(PathBuf, std::fs::File)> {
        let logs = self.setup.home.join("logs");
        std::fs::create_dir_all(&logs).wrap_err_with(|| format!("creating {}", logs.display()))?;
        prune_logs(&logs, 30);
        let path = logs.join(format!("{}-{command}-{}.log", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), std::process::id()));
        let file = std::fs::File::create(&path).wrap_err_with(|| format!("creating {}", path.display()))?;
        Ok((path, file))
    }

    /// Runs `python -m recount_spark COMMAND ARGS`, calling `on_progress` per step, and returns
    /// its result. With `RECOUNT_SPARK_SERVER` naming a served socket, the call goes there.
    pub(super) fn call<T: for<'de> Deserialize<'de>>(
        &self,
        command: &str,
        args: &[String],
        on_progress: impl FnMut(&SparkProgress),
    ) -> Result<T> {
        self.call_on(command, args, on_progress, true)
    }

    /// A call that needs no Spark session (pyiceberg alone): always a driver process of its own,
    /// so it reads this process's environment (a catalog's PYICEBERG_* settings), not a server's.
    pub(super) fn call_local<T: for<'de> Deserialize<'de>>(&self, command: &str, args: &[String]) -> Result<T> {
        self.call_on(command, args, |_| {}, false)
    }

    pub(super) fn call_on<T: for<'de> Deserialize<'de>>(
        &self,
        command: &str,
        args: &[String],
        mut on_progress: impl FnMut(&SparkProgress),
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
                let (mut child, stdout) = self.spawn(&job, &argv, &log)?;
                let said = read_answer(std::io::BufReader::new(stdout), &mut log, &mut on_progress)?;
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

    /// A driver process for `argv`: its answers on a pipe, Spark's own output into `log`.
    fn spawn(&self, job: &Path, argv: &[String], log: &std::fs::File) -> Result<(std::process::Child, std::process::ChildStdout)> {
        let mut child = self
            .command(job, argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.try_clone()?))
            .spawn()
            .wrap_err_with(|| format!("starting {}", self.setup.python.display()))?;
        let stdout = child.stdout.take().ok_or_else(|| eyre!("the Spark driver's stdout was not piped"))?;
        Ok((child, stdout))
    }

    /// The call on a served session, when `RECOUNT_SPARK_SERVER` names one and the crash hook is
    /// not set; `None` to start a driver instead (no server there: the log says so).
    pub(super) fn served(
        &self,
        job: &Path,
        argv: &[String],
        log: &mut std::fs::File,
        on_progress: &mut impl FnMut(&SparkProgress),
    ) -> Result<Option<DriverAnswer>> {
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
        read_answer(std::io::BufReader::new(stream), log, on_progress).map(Some)
    }

    /// `recount spark serve`: one warm session on `socket` until its caller's shell (or this
    /// process) has gone, or `idle` seconds pass without a call. Its log is the setup's.
    pub fn serve(&self, socket: &Path, idle: u64) -> Result<i32> {
        let job = self.setup.job()?;
        let (log_path, mut log) = self.log("serve")?;
        let mut args = vec!["--socket".to_string(), socket.display().to_string(), "--idle".into(), idle.to_string()];
        for pid in [std::process::id(), std::os::unix::process::parent_id()] {
            args.extend(["--watch".to_string(), pid.to_string()]);
        }
        let argv = self.argv(&job, "serve", &args);
        let (mut child, stdout) = self.spawn(&job, &argv, &log)?;
        // Its one progress line says the socket is bound; anything else goes to the log.
        let said = read_answer(std::io::BufReader::new(stdout), &mut log, &mut |_| {
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
pub(super) fn read_answer(
    reader: impl BufRead,
    log: &mut std::fs::File,
    on_progress: &mut impl FnMut(&SparkProgress),
) -> Result<DriverAnswer> {
    let mut said = DriverAnswer { result: None, error: None };
    for line in reader.lines() {
        let line = line.wrap_err("reading the Spark driver's output")?;
        match serde_json::from_str::<DriverLine>(&line) {
            Ok(DriverLine::Progress(p)) => on_progress(&p),
            Ok(DriverLine::Result(v)) => said.result = Some(v),
            Ok(DriverLine::Error { message }) => said.error = Some(message),
            Ok(DriverLine::Log { text }) => write!(log, "{text}")?,
            Err(_) => writeln!(log, "{line}")?,
        }
    }
    Ok(said)
}

pub(super) fn one_line(text: &str) -> String {
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

pub(super) fn prune_logs(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut logs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
    logs.sort();
    for old in logs.iter().rev().skip(keep) {
        let _ = std::fs::remove_file(old);
    }
}
