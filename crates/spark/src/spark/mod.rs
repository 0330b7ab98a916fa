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

mod answers;
mod calls;
mod driver;
mod reads;

pub use answers::*;
pub use calls::*;
pub use driver::*;
pub use reads::*;

/// The Iceberg runtime the setup installs (Spark 3.5, Scala 2.12).
pub(crate) const ICEBERG_JAR: &str = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar";
/// The environment variable that names the setup's directory.
pub(crate) const HOME_VAR: &str = "RECOUNT_SPARK_HOME";

/// The driver, a Python package (`python -m recount_spark`): each module's file name and text.
const DRIVER: &[(&str, &str)] = &[
    ("__init__.py", include_str!("../../../../spark/recount_spark/__init__.py")),
    ("__main__.py", include_str!("../../../../spark/recount_spark/__main__.py")),
    ("answers.py", include_str!("../../../../spark/recount_spark/answers.py")),
    ("cli.py", include_str!("../../../../spark/recount_spark/cli.py")),
    ("evidence.py", include_str!("../../../../spark/recount_spark/evidence.py")),
    ("fast.py", include_str!("../../../../spark/recount_spark/fast.py")),
    ("land.py", include_str!("../../../../spark/recount_spark/land.py")),
    ("lines.py", include_str!("../../../../spark/recount_spark/lines.py")),
    ("mirror.py", include_str!("../../../../spark/recount_spark/mirror.py")),
    ("model.py", include_str!("../../../../spark/recount_spark/model.py")),
    ("model_mirror.py", include_str!("../../../../spark/recount_spark/model_mirror.py")),
    ("model_warehouse.py", include_str!("../../../../spark/recount_spark/model_warehouse.py")),
    ("parse.py", include_str!("../../../../spark/recount_spark/parse.py")),
    ("rules.py", include_str!("../../../../spark/recount_spark/rules.py")),
    ("session.py", include_str!("../../../../spark/recount_spark/session.py")),
    ("source.py", include_str!("../../../../spark/recount_spark/source.py")),
    ("sql.py", include_str!("../../../../spark/recount_spark/sql.py")),
    ("state.py", include_str!("../../../../spark/recount_spark/state.py")),
    ("tables.py", include_str!("../../../../spark/recount_spark/tables.py")),
    ("v2.py", include_str!("../../../../spark/recount_spark/v2.py")),
    ("warehouse.py", include_str!("../../../../spark/recount_spark/warehouse.py")),
    ("wire.py", include_str!("../../../../spark/recount_spark/wire.py")),
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
const SETUP_SCRIPT: &str = include_str!("../../../../scripts/spark-setup.sh");
const QUERIES: &[(&str, &str)] = &[
    ("schema.sql", include_str!("../../../../queries/spark/schema.sql")),
    ("land.sql", include_str!("../../../../queries/spark/land.sql")),
    ("v2.sql", include_str!("../../../../queries/spark/v2.sql")),
    ("fingerprint.sql", include_str!("../../../../queries/spark/fingerprint.sql")),
    ("model.sql", include_str!("../../../../queries/spark/model.sql")),
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
pub struct SparkSetup {
    pub home: PathBuf,
    pub python: PathBuf,
    pub jar: PathBuf,
}

impl SparkSetup {
    /// The setup at `home`, or an error that says how to make one.
    pub fn find(home: &Path) -> Result<SparkSetup> {
        let setup = SparkSetup { home: home.to_path_buf(), python: home.join("venv/bin/python"), jar: home.join("jars").join(ICEBERG_JAR) };
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
        let err = SparkSetup::find(dir.path()).unwrap_err().to_string();
        assert!(err.contains("recount spark setup"), "{err}");
        assert!(err.contains(HOME_VAR), "{err}");
    }

    #[test]
    fn the_job_is_written_once_with_every_query_file() {
        let dir = tempfile::tempdir().unwrap();
        let setup = SparkSetup { home: dir.path().to_path_buf(), python: "python3".into(), jar: "x.jar".into() };
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
            .current_dir(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../spark"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python3 runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let ran: usize = err.lines().find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok()).unwrap_or(0);
        assert!(ran >= 9, "{err}");
    }

    /// The names of the files in `dir` (under the workspace's root) ending in `ext`, sorted.
    fn files_ending(dir: &str, ext: &str) -> Vec<String> {
        let mut on_disk: Vec<String> =
            std::fs::read_dir(std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..").join(dir))
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
