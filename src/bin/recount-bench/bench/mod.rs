//! The bench's figures: the performance figures, median of several runs, with the classic baseline
//! measured in the same run on the same raw zone. Heavy phases run in a child process so their
//! peak RSS is their own.

mod explorer;
pub mod growth;

use explorer::bench_explorer;
pub(crate) use explorer::far_jump;

use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, land, v2};
use crate::reports::{self, Cell, Report, Table};
use crate::world::{self, Preset};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The targets of land + backwards backfill against the classic pipeline in the same run: how
/// many times faster, and at most what share of its peak RSS.
const SPEEDUP_TARGET: f64 = 25.0;
const RSS_TARGET: f64 = 1.0 / 3.0;

#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchFigure {
    pub name: String,
    pub runs: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub peak_rss_mib: Option<f64>,
    /// The most anonymous memory (RssAnon: the heap and DuckDB's pool, not the code and data
    /// mapped from files) seen while polling the child.
    pub peak_anon_mib: Option<f64>,
    pub target: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    pub world: PathBuf,
    pub seed: Option<u64>,
    pub machine: String,
    pub measures: Vec<BenchFigure>,
    pub v2_phases_ms: Vec<(String, f64)>,
    pub fingerprint: String,
    pub baseline: Option<Baseline>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Baseline {
    pub command: String,
    pub wall_ms: f64,
    pub peak_rss_mib: f64,
    pub peak_anon_mib: f64,
    pub fingerprint: String,
    pub speedup: f64,
    pub rss_ratio: f64,
    /// recount's peak anonymous memory over the baseline's: the share without the pages both
    /// map from their DuckDB library's file (its code and read-only data, about 40 MiB each).
    pub anon_ratio: f64,
    pub same_fingerprint: bool,
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

impl BenchFigure {
    fn from_times(name: impl Into<String>, target: &str, times: &[f64], peak_rss_mib: Option<f64>) -> BenchFigure {
        BenchFigure::with_memory(name, target, times, peak_rss_mib, None)
    }

    fn with_memory(
        name: impl Into<String>,
        target: &str,
        times: &[f64],
        peak_rss_mib: Option<f64>,
        peak_anon_mib: Option<f64>,
    ) -> BenchFigure {
        BenchFigure {
            name: name.into(),
            runs: times.len(),
            median_ms: median(times.to_vec()),
            min_ms: times.iter().copied().fold(f64::INFINITY, f64::min),
            max_ms: times.iter().copied().fold(0.0, f64::max),
            peak_rss_mib,
            peak_anon_mib,
            target: target.into(),
        }
    }
}

fn measure(name: &str, target: &str, runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<BenchFigure> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(BenchFigure::from_times(name, target, &times, None))
}

/// One field of /proc/PID/status in KiB (`VmHWM:`, `RssAnon:`).
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

/// What `run_child` saw of a finished child.
pub(crate) struct ChildRun {
    pub wall: Duration,
    /// VmHWM: the peak resident memory, in MiB.
    pub peak_rss_mib: f64,
    /// The most RssAnon seen while polling, in MiB.
    pub peak_anon_mib: f64,
    pub stdout: String,
}

/// Runs a command to completion: its wall time, peak RSS, peak anonymous memory and stdout.
/// The peak is VmHWM, polled while the child runs: wait4's ru_maxrss would also count the
/// pages the child shared with this (large) process between fork and exec.
pub(crate) fn run_child(cmd: &mut std::process::Command) -> Result<ChildRun> {
    let started = Instant::now();
    let mut child =
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::inherit()).spawn().wrap_err("starting a child process")?;
    let pid = child.id();
    let mut stdout = child.stdout.take().ok_or_else(|| color_eyre::eyre::eyre!("the child's stdout was not piped"))?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let (mut peak_kib, mut anon_kib) = (0u64, 0u64);
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            peak_kib = peak_kib.max(status_kib(&text, "VmHWM:").unwrap_or(0));
            anon_kib = anon_kib.max(status_kib(&text, "RssAnon:").unwrap_or(0));
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        bail!("{cmd:?} failed ({status}): {out}");
    }
    Ok(ChildRun { wall: elapsed, peak_rss_mib: peak_kib as f64 / 1024.0, peak_anon_mib: anon_kib as f64 / 1024.0, stdout: out })
}

pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown cpu".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse::<f64>().unwrap_or(0.0) / 1024.0 / 1024.0))
        .unwrap_or(0.0);
    format!("{} cores, {cpu}, {mem:.0} GiB", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

/// The hidden child phase: land every upload of `world` into a fresh lab, then backfill every
/// upload, newest first, in one pass (`recount run B A`). Prints the fingerprint.
pub(crate) fn land_and_backfill(world: &Path, lab_dir: &Path) -> Result<String> {
    if lab_dir.exists() {
        std::fs::remove_dir_all(lab_dir)?;
    }
    let mut lab = Lab::open(lab_dir)?;
    let ups = crate::raw::source::uploads_of(world)?;
    let t = Instant::now();
    land::land(&mut lab, world, &ups)?;
    let landed = t.elapsed();
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    // RECOUNT_PROFILE=1: the backfill's phases, on stderr.
    let newest_first: Vec<NaiveDate> = ups.iter().rev().copied().collect();
    let phases = v2::run_range(&lab, &newest_first, opts)?.0.phases;
    let mut report = vec![("landing".to_string(), landed.as_secs_f64() * 1e3)];
    report.extend(phases.into_iter().map(|(name, ms)| (format!("backfill: {name}"), ms)));
    report.push(("total before close".to_string(), t.elapsed().as_secs_f64() * 1e3));
    crate::progress::profile(&report);
    Ok(reports::fingerprint(&lab, None)?.line)
}

/// The hidden child phase `--recount`: the polars recount of a built lab's raw zone, with no
/// cache read or written. Prints its rows, events and baskets, and its time.
pub(crate) fn raw_recount(lab_dir: &Path) -> Result<String> {
    let lab = Lab::open(lab_dir)?;
    let t = Instant::now();
    let r = crate::recompute::recount(&lab.raw_root())?;
    Ok(format!("{} rows, {} events, {} baskets in {:.2} s", r.rows.len(), r.events, r.baskets, t.elapsed().as_secs_f64()))
}

/// The binaries a bench's children run: `recount`, for the steps a user runs, and this bench,
/// for its own measured phases (`recount-bench phase`).
#[derive(Debug, Clone)]
pub struct Exes {
    pub recount: PathBuf,
    pub bench: PathBuf,
}

pub struct BenchOptions {
    pub world: Option<PathBuf>,
    pub preset: Preset,
    pub seed: u64,
    pub runs: usize,
    pub work_dir: PathBuf,
    pub baseline: Option<PathBuf>,
    pub date: Option<NaiveDate>,
    /// The binaries the children run.
    pub exes: Exes,
}

pub fn run(opts: BenchOptions) -> Result<BenchReport> {
    std::fs::create_dir_all(&opts.work_dir)?;
    let mut measures = Vec::new();
    let (world, seed) = bench_world(&opts, &mut measures)?;
    let ups = crate::raw::list_partitions(&world)?;
    if ups.is_empty() {
        bail!("{} has no upload partitions", world.display());
    }
    let lab_dir = opts.work_dir.join("lab");
    let fingerprint = bench_land_and_backfill(&opts, &world, &lab_dir, ups.len(), &mut measures)?;
    bench_landing(&opts, &world, &ups, &mut measures)?;
    let v2_phases = bench_runs_and_reports(&opts, &lab_dir, &ups, &mut measures)?;
    bench_explorer(&opts, &world, &lab_dir, &mut measures)?;
    let baseline = match &opts.baseline {
        None => None,
        Some(script) => Some(bench_baseline(&opts, script, &world, &fingerprint, &measures)?),
    };
    Ok(BenchReport { world, seed, machine: machine(), measures, v2_phases_ms: v2_phases, fingerprint, baseline })
}

/// `recount-bench --warehouse WH`: reading a warehouse. Its mirror built from nothing (pyiceberg's
/// plan, DuckDB reading the Parquet files, gold's log laid out as snapshots), opening it when it is
/// current (the plan alone), and the explorer on it: a cold start, a move to a date loaded ahead
/// and a far jump (the Overview of a date not loaded yet).
pub fn warehouse(opts: BenchOptions, warehouse: &Path) -> Result<BenchReport> {
    std::fs::create_dir_all(&opts.work_dir)?;
    let mirrors = opts.work_dir.join("mirrors");
    let mut measures = vec![measure("mirror the warehouse from nothing (plan, read, lay out)", "", opts.runs.max(1), || {
        if mirrors.exists() {
            std::fs::remove_dir_all(&mirrors)?;
        }
        crate::warehouse::open_with(warehouse, &mirrors).map(drop)
    })?];
    measures.push(measure("open the warehouse, its mirror current (its tables' version hints read)", "", opts.runs.max(3), || {
        crate::warehouse::open_with(warehouse, &mirrors).map(drop)
    })?);
    let lab = crate::warehouse::open_with(warehouse, &mirrors)?;
    let fingerprint = reports::fingerprint(&lab, None)?.line;
    let lab_dir = lab.root.clone();
    drop(lab);
    let world = opts.world.clone().unwrap_or_else(crate::lake::sample_world_dir);
    bench_explorer(&opts, &world, &lab_dir, &mut measures)?;
    Ok(BenchReport {
        world: warehouse.to_path_buf(),
        seed: None,
        machine: machine(),
        measures,
        v2_phases_ms: Vec::new(),
        fingerprint,
        baseline: None,
    })
}

/// The world to measure on: the one named, or one generated (and its generation measured).
fn bench_world(opts: &BenchOptions, measures: &mut Vec<BenchFigure>) -> Result<(PathBuf, Option<u64>)> {
    if let Some(w) = &opts.world {
        return Ok((w.clone(), None));
    }
    let w = opts.work_dir.join(format!("world-{}-{}", opts.preset.name(), opts.seed));
    let mut times = Vec::new();
    for i in 0..opts.runs.max(1) {
        let target = if i == 0 { w.clone() } else { opts.work_dir.join("world-scratch") };
        if target.exists() {
            std::fs::remove_dir_all(&target)?;
        }
        let t = Instant::now();
        world::generate(&target, opts.preset, opts.seed)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let _ = std::fs::remove_dir_all(opts.work_dir.join("world-scratch"));
    measures.push(BenchFigure::from_times(
        format!("generate the {} world (seed {})", opts.preset.name(), opts.seed),
        "≤ 30 s (full)",
        &times,
        None,
    ));
    Ok((w, Some(opts.seed)))
}

/// Land everything and backfill backwards from an empty lab, in a child: wall time and RSS. The
/// last child's lab stays for the measures after it. Returns the fingerprint it printed.
fn bench_land_and_backfill(
    opts: &BenchOptions,
    world: &Path,
    lab_dir: &Path,
    uploads: usize,
    measures: &mut Vec<BenchFigure>,
) -> Result<String> {
    let (mut times, mut rss, mut anon, mut fingerprint) = (Vec::new(), Vec::new(), Vec::new(), String::new());
    for _ in 0..opts.runs.max(1) {
        // The last run's lab goes before the clock starts, since deleting it is no step a user
        // times: the child's clock covers landing into an empty directory and the backfill.
        if lab_dir.exists() {
            std::fs::remove_dir_all(lab_dir)?;
        }
        let child =
            run_child(std::process::Command::new(&opts.exes.bench).args(["phase", "--world"]).arg(world).arg("--lab").arg(lab_dir))?;
        times.push(child.wall.as_secs_f64() * 1e3);
        rss.push(child.peak_rss_mib);
        anon.push(child.peak_anon_mib);
        fingerprint = child.stdout.trim().to_string();
    }
    let name = format!("land {uploads} uploads + v2 backfill backwards, from an empty lab");
    let target = format!("≥ {SPEEDUP_TARGET}x the baseline, ≤ ⅓ its RSS");
    measures.push(BenchFigure::with_memory(name, &target, &times, Some(median(rss)), Some(median(anon))));
    Ok(fingerprint)
}

/// Landing alone, into a fresh lab each time.
fn bench_landing(opts: &BenchOptions, world: &Path, ups: &[NaiveDate], measures: &mut Vec<BenchFigure>) -> Result<()> {
    let landed_only = opts.work_dir.join("lab-landed");
    let mut times = Vec::new();
    for _ in 0..opts.runs.max(1) {
        if landed_only.exists() {
            std::fs::remove_dir_all(&landed_only)?;
        }
        let mut l = Lab::open(&landed_only)?;
        let t = Instant::now();
        land::land(&mut l, world, ups)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    measures.push(BenchFigure::from_times(format!("land {} uploads (parse once into bronze)", ups.len()), "", &times, None));
    let _ = std::fs::remove_dir_all(&landed_only);
    Ok(())
}

/// One v2 run (skipped, and forced) and the reports, on the warm lab. Returns the forced run's
/// phases, averaged.
fn bench_runs_and_reports(
    opts: &BenchOptions,
    lab_dir: &Path,
    ups: &[NaiveDate],
    measures: &mut Vec<BenchFigure>,
) -> Result<Vec<(String, f64)>> {
    let lab = Lab::open(lab_dir)?;
    let mid = opts.date.unwrap_or_else(|| {
        let aug15 = NaiveDate::from_ymd_opt(2026, 8, 15).unwrap_or_default();
        if ups.contains(&aug15) { aug15 } else { ups[ups.len() / 2] }
    });
    let v2opts = v2::V2Options { fail_after: None, ..Default::default() };
    let mut phases: Vec<Vec<(String, f64)>> = Vec::new();
    measures.push(measure(
        &format!("one v2 run, upload {mid}, warm lab (inputs unchanged: skipped)"),
        "≤ 50 ms",
        opts.runs.max(5),
        || {
            v2::run_upload(&lab, mid, TriggerKind::Upload, v2opts)?;
            Ok(())
        },
    )?);
    // The dates the upload's run rebuilds, found once: the measure is `rebuild DATES --force`,
    // not the skipped run that names them.
    let dates: Vec<NaiveDate> = v2::run_upload(&lab, mid, TriggerKind::Upload, v2opts)?.dates.iter().map(|d| d.business_date).collect();
    measures.push(measure(
        &format!("one v2 run, upload {mid}, warm lab, forced rewrite of its {} dates", dates.len()),
        "≤ 50 ms",
        opts.runs.max(5),
        || {
            phases.push(v2::rebuild_dates(&lab, &dates, v2::V2Options { force: true, ..v2opts })?.phases);
            Ok(())
        },
    )?);
    let day = mid - chrono::Duration::days(1);
    crate::recompute::ensure_cached(&lab)?;
    measures.push(measure(
        &format!("check {day}, first after a landing (DuckDB recounts every date, then keeps it)"),
        "",
        opts.runs.max(3),
        || {
            crate::recompute::forget_duckdb_recounts(&lab)?;
            reports::check::check(&lab, day, None).map(|_| ())
        },
    )?);
    measures.push(measure(&format!("check {day}"), "≤ 50 ms", opts.runs.max(5), || reports::check::check(&lab, day, None).map(|_| ()))?);
    measures.push(measure(&format!("explain {day}"), "≤ 50 ms", opts.runs.max(5), || reports::explain::explain(&lab, day).map(|_| ()))?);
    measures.push(measure("lateness, first after a landing (counted over bronze, then kept)", "", opts.runs.max(3), || {
        reports::lateness::forget(&lab)?;
        reports::lateness::lateness(&lab, false, None).map(|_| ())
    })?);
    measures.push(measure("lateness, kept", "", opts.runs.max(5), || reports::lateness::lateness(&lab, false, None).map(|_| ()))?);
    measures.push(measure(&format!("history {day}"), "≤ 60 ms", opts.runs.max(5), || {
        reports::history::history(&lab, day, None).map(|_| ())
    })?);
    measures.push(measure("recompute from raw with polars (no cache)", "", opts.runs.max(1), || {
        crate::recompute::recount(&lab.raw_root()).map(|_| ())
    })?);
    Ok(mean_phases(&phases))
}

/// Each phase's mean over the runs.
fn mean_phases(runs: &[Vec<(String, f64)>]) -> Vec<(String, f64)> {
    let n = runs.len().max(1) as f64;
    let mut mean: Vec<(String, f64)> = Vec::new();
    for run in runs {
        for (name, ms) in run {
            match mean.iter_mut().find(|(n2, _)| n2 == name) {
                Some(p) => p.1 += ms / n,
                None => mean.push((name.clone(), ms / n)),
            }
        }
    }
    mean
}

/// The classic pipeline on the same world, in a child: its wall time, RSS and fingerprint.
fn bench_baseline(opts: &BenchOptions, script: &Path, world: &Path, fingerprint: &str, measures: &[BenchFigure]) -> Result<Baseline> {
    let db = opts.work_dir.join("baseline.duckdb");
    let _ = std::fs::remove_file(&db);
    let child = run_child(std::process::Command::new("bash").arg(script).arg("runs").arg(world).arg("--backward").arg("--db").arg(&db))
        .wrap_err("running the baseline")?;
    let fp = child.stdout.lines().find(|l| l.starts_with("gold.daily_store_sales")).unwrap_or("").trim().to_string();
    let ours = measures
        .iter()
        .find(|m| m.name.starts_with("land ") && m.peak_rss_mib.is_some())
        .ok_or_else(|| eyre!("no land+backfill figure"))?;
    Ok(Baseline {
        command: format!("bash {} runs {} --backward --db {}", script.display(), world.display(), db.display()),
        wall_ms: child.wall.as_secs_f64() * 1e3,
        peak_rss_mib: child.peak_rss_mib,
        peak_anon_mib: child.peak_anon_mib,
        speedup: child.wall.as_secs_f64() * 1e3 / ours.median_ms,
        rss_ratio: ours.peak_rss_mib.unwrap_or(0.0) / child.peak_rss_mib,
        anon_ratio: ours.peak_anon_mib.unwrap_or(0.0) / child.peak_anon_mib,
        same_fingerprint: fp == fingerprint,
        fingerprint: fp,
    })
}

impl Report for BenchReport {
    fn kind(&self) -> &'static str {
        "bench"
    }
    fn headline(&self) -> String {
        let seed = self.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
        format!("recount-bench on {} ({}{seed})\n{}", self.machine, self.world.display(), self.fingerprint)
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "",
            &[
                ("measure", "measure"),
                ("runs", "runs"),
                ("median_ms", "median ms"),
                ("min_ms", "min"),
                ("max_ms", "max"),
                ("peak_rss_mib", "peak RSS MiB"),
                ("peak_anon_mib", "anon MiB"),
                ("target", "target"),
            ],
        );
        let f = |v: f64| Cell::text(format!("{v:.1}"));
        for m in &self.measures {
            t.push(vec![
                Cell::text(&m.name),
                Cell::Int(m.runs as i64),
                f(m.median_ms),
                f(m.min_ms),
                f(m.max_ms),
                m.peak_rss_mib.map(f).unwrap_or(Cell::Empty),
                m.peak_anon_mib.map(f).unwrap_or(Cell::Empty),
                Cell::text(&m.target),
            ]);
        }
        let mut p = Table::new("one forced v2 run by phase (mean ms)", &[("phase", "phase"), ("ms", "ms")]);
        for (name, ms) in &self.v2_phases_ms {
            p.push(vec![Cell::text(name), f(*ms)]);
        }
        vec![t, p]
    }
    fn notes(&self) -> Vec<reports::Note> {
        let Some(b) = &self.baseline else {
            return vec![reports::Note {
                status: reports::Status::Info,
                text: "baseline not run (pass --baseline bench/classic/run.sh)".into(),
            }];
        };
        vec![
            reports::Note {
                status: reports::Status::Info,
                text: format!("baseline: {} → {:.1} s, peak RSS {:.0} MiB", b.command, b.wall_ms / 1e3, b.peak_rss_mib),
            },
            reports::Note {
                status: if b.speedup >= SPEEDUP_TARGET { reports::Status::Pass } else { reports::Status::Warn },
                text: format!("land + backwards backfill: {:.1}x faster than the baseline (target ≥ {SPEEDUP_TARGET}x)", b.speedup),
            },
            reports::Note {
                status: if b.rss_ratio <= RSS_TARGET { reports::Status::Pass } else { reports::Status::Warn },
                text: format!("peak RSS: {:.2} of the baseline's (target ≤ {RSS_TARGET:.2})", b.rss_ratio),
            },
            reports::Note {
                status: reports::Status::Info,
                text: format!(
                    "peak anonymous memory (heap and buffers; the code and data mapped from files left out): {:.2} of the baseline's {:.0} MiB",
                    b.anon_ratio, b.peak_anon_mib
                ),
            },
            reports::Note {
                status: if b.same_fingerprint { reports::Status::Pass } else { reports::Status::Fail },
                text: format!("baseline fingerprint: {}", b.fingerprint),
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_field_is_read_in_kib_and_a_missing_one_is_none() {
        let status = "Name:\trecount\nVmHWM:\t  152184 kB\nVmRSS:\t  140000 kB\nRssAnon:\t  108780 kB\nRssFile:\t   43404 kB\n";
        assert_eq!(status_kib(status, "VmHWM:"), Some(152_184));
        assert_eq!(status_kib(status, "RssAnon:"), Some(108_780));
        assert_eq!(status_kib(status, "RssShmem:"), None);
    }

    /// A child that holds 64 MiB of written anonymous memory for a moment: the poll sees it in
    /// both figures, and the anonymous figure is part of the peak.
    #[test]
    fn a_child_holding_64_mib_shows_it_as_anonymous_memory_within_its_peak() {
        let child = run_child(
            std::process::Command::new("python3")
                .args(["-c", "import time; b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.5); print('held')"]),
        )
        .expect("python3 runs");
        assert_eq!(child.stdout.trim(), "held");
        assert!(child.peak_anon_mib >= 64.0, "anonymous memory seen: {:.1} MiB", child.peak_anon_mib);
        assert!(child.peak_rss_mib >= child.peak_anon_mib, "peak {:.1} < anonymous {:.1}", child.peak_rss_mib, child.peak_anon_mib);
    }
}
