//! `recount-bench --store-factor 1,4,10`: the growth table. Every step a user takes, each in a
//! process of its own at each size, so its time and peak RSS are its own: land, the backwards
//! backfill (one pass and `--per-upload`), a daily run of one more upload, the first check (its
//! recount included) and the reports after it, the explorer's far jump, and a store correction.
//! The fingerprint of the default budget is held to the one a lab built with 8 GB gives.

use super::{ChildRun, median, run_child};
use crate::reports::{Cell, Note, Report, Status, Table};
use crate::world::Preset;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail};
use std::path::{Path, PathBuf};

/// Land + backfill at the largest size over the smallest, at most this many times slower per
/// multiple of the world (10x the world in at most 12x the time).
const LAND_GROWTH_PER_FACTOR: f64 = 1.2;
/// A daily run as the lab's history grows tenfold, at most this many times its time at 1x
/// (`scripts/bench-growth.sh` measures that; here the day itself grows with the stores).
const DAILY_GROWTH: f64 = 1.5;
/// Every step's peak RSS at every size, at most this.
const RSS_CEILING_MIB: f64 = 2048.0;
/// The budget the default one's fingerprint is held to.
const WIDE_BUDGET: &str = "8GB";

pub struct GrowthOptions {
    pub preset: Preset,
    pub seed: u64,
    pub factors: Vec<f64>,
    pub runs: usize,
    pub work_dir: PathBuf,
    pub exes: super::Exes,
}

/// One step at one size: the median wall time of its runs and the highest peak RSS.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cost {
    pub seconds: f64,
    pub peak_rss_mib: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct GrowthStep {
    pub name: String,
    /// One per size, in the order of `GrowthReport::sizes`.
    pub costs: Vec<Cost>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Size {
    pub factor: f64,
    pub fingerprint: String,
    pub per_upload_fingerprint: String,
    pub wide_budget_fingerprint: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct GrowthReport {
    pub machine: String,
    pub budget: String,
    pub sizes: Vec<Size>,
    pub steps: Vec<GrowthStep>,
}

/// The steps in the order the table shows them; each size fills its column.
const STEPS: [&str; 14] = [
    "land every upload but the last",
    "v2 backfill backwards, one pass",
    "land + backfill (the two above)",
    "daily: land + v2 of one more upload",
    "check, first after the landing (both recounts)",
    "check, kept",
    "explain",
    "history",
    "quarantine",
    "summary",
    "trend",
    "explorer far jump (process: open, load, jump)",
    "store correction: land + v2 (every 20th store moves zone)",
    "land + v2 backfill --per-upload (second lab)",
];

pub fn run(opts: GrowthOptions) -> Result<GrowthReport> {
    if opts.factors.is_empty() {
        bail!("--store-factor needs at least one size, e.g. 1,4,10");
    }
    std::fs::create_dir_all(&opts.work_dir)?;
    let mut steps: Vec<GrowthStep> = STEPS.iter().map(|n| GrowthStep { name: n.to_string(), costs: Vec::new() }).collect();
    let mut sizes = Vec::new();
    for &factor in &opts.factors {
        let size = one_size(&opts, factor, &mut steps)?;
        sizes.push(size);
    }
    let budget = crate::store::memory_budget();
    Ok(GrowthReport { machine: super::machine(), budget: format!("{} MiB", budget >> 20), sizes, steps })
}

/// The world of one size, generated once and kept in the work directory for later runs.
fn world_of(opts: &GrowthOptions, factor: f64) -> Result<PathBuf> {
    let world = opts.work_dir.join(format!("world-{}-{}-x{factor}", opts.preset.name(), opts.seed));
    if !world.join("recount.toml").exists() && !world.join("stores.csv").exists() {
        let _ = std::fs::remove_dir_all(&world);
        let (seed, f) = (opts.seed.to_string(), factor.to_string());
        recount(opts, &["generate", "--preset", opts.preset.name(), "--seed", &seed, "--store-factor", &f, "--out"], Some(&world))?;
    }
    Ok(world)
}

/// Runs `recount ARGS [PATH]` in a child, with colour off.
fn recount(opts: &GrowthOptions, args: &[&str], path: Option<&Path>) -> Result<ChildRun> {
    let mut cmd = std::process::Command::new(&opts.exes.recount);
    cmd.args(args).env("NO_COLOR", "1");
    if let Some(p) = path {
        cmd.arg(p);
    }
    run_child(&mut cmd)
}

/// Runs one step `runs` times and records its median time and highest peak.
fn timed(step: &mut GrowthStep, runs: usize, mut each: impl FnMut() -> Result<ChildRun>) -> Result<ChildRun> {
    let (mut secs, mut rss, mut last) = (Vec::new(), 0f64, None);
    for _ in 0..runs.max(1) {
        let child = each()?;
        secs.push(child.wall.as_secs_f64());
        rss = rss.max(child.peak_rss_mib);
        last = Some(child);
    }
    step.costs.push(Cost { seconds: median(secs), peak_rss_mib: rss });
    last.ok_or_else(|| color_eyre::eyre::eyre!("no run"))
}

fn one_size(opts: &GrowthOptions, factor: f64, steps: &mut [GrowthStep]) -> Result<Size> {
    let world = world_of(opts, factor)?;
    let ups = crate::raw::list_partitions(&world)?;
    if ups.len() < 3 {
        bail!("{} has {} uploads; the growth table needs three", world.display(), ups.len());
    }
    let (first, penult, last) = (ups[0].to_string(), ups[ups.len() - 2].to_string(), ups[ups.len() - 1].to_string());
    let lab = opts.work_dir.join(format!("lab-x{factor}"));
    let lab_s = lab.to_string_lossy().to_string();
    let w = world.to_string_lossy().to_string();
    let day = report_day(&ups).to_string();
    let fresh = |dir: &Path| -> Result<()> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        Ok(())
    };
    let runs = opts.runs;
    // Land and backfill run together, from an empty lab each time; the lab of the last run stays.
    let (mut land_s, mut back_s, mut both_s, mut land_rss, mut back_rss) = (Vec::new(), Vec::new(), Vec::new(), 0f64, 0f64);
    for _ in 0..runs.max(1) {
        fresh(&lab)?;
        let a = recount(opts, &["--lab", &lab_s, "land", &first, &penult, "--world", &w], None)?;
        let b = recount(opts, &["--lab", &lab_s, "run", &penult, &first], None)?;
        land_s.push(a.wall.as_secs_f64());
        back_s.push(b.wall.as_secs_f64());
        both_s.push(a.wall.as_secs_f64() + b.wall.as_secs_f64());
        land_rss = land_rss.max(a.peak_rss_mib);
        back_rss = back_rss.max(b.peak_rss_mib);
    }
    steps[0].costs.push(Cost { seconds: median(land_s), peak_rss_mib: land_rss });
    steps[1].costs.push(Cost { seconds: median(back_s), peak_rss_mib: back_rss });
    steps[2].costs.push(Cost { seconds: median(both_s), peak_rss_mib: land_rss.max(back_rss) });
    let l = |args: &[&str]| -> Vec<String> { ["--lab", lab_s.as_str()].iter().chain(args).map(|s| s.to_string()).collect() };
    let go = |args: Vec<String>| -> Result<ChildRun> { recount(opts, &args.iter().map(String::as_str).collect::<Vec<_>>(), None) };
    // The daily run of the last upload runs once: a second would find it landed and skip it.
    timed(&mut steps[3], 1, || go(l(&["daily", &last, "--world", &w])))?;
    let fingerprint = go(l(&["fingerprint"]))?.stdout.trim().to_string();
    // The first check after a landing runs once: it is the run that recounts.
    timed(&mut steps[4], 1, || go(l(&["check", &day])))?;
    for (i, args) in [(5, vec!["check", &day]), (6, vec!["explain", &day]), (7, vec!["history", &day])] {
        timed(&mut steps[i], runs, || go(l(&args)))?;
    }
    for (i, cmd) in [(8, "quarantine"), (9, "summary"), (10, "trend")] {
        timed(&mut steps[i], runs, || go(l(&[cmd])))?;
    }
    timed(&mut steps[11], runs, || {
        let mut cmd = std::process::Command::new(&opts.exes.bench);
        cmd.args(["phase", "--jump", "--world", &w, "--lab", &lab_s]).env("NO_COLOR", "1");
        run_child(&mut cmd)
    })?;
    store_correction(opts, &world, &last, &lab_s, &mut steps[12])?;
    let (per_upload_fingerprint, wide_budget_fingerprint) = second_labs(opts, &w, (&first, &last), &mut steps[13])?;
    Ok(Size { factor, fingerprint, per_upload_fingerprint, wide_budget_fingerprint })
}

/// The date the reports are asked about: the day before 2026-08-15's upload when the world has
/// it, else the day before its middle upload.
fn report_day(ups: &[NaiveDate]) -> NaiveDate {
    let aug15 = NaiveDate::from_ymd_opt(2026, 8, 15).unwrap_or_default();
    let mid = if ups.contains(&aug15) { aug15 } else { ups[ups.len() / 2] };
    mid - chrono::Duration::days(1)
}

/// Moves every twentieth store to another time zone (New York, or London for a store already in
/// New York), lands the last upload again (with the corrected store file) and runs v2 for it;
/// the world's file is put back.
fn store_correction(opts: &GrowthOptions, world: &Path, last: &str, lab: &str, step: &mut GrowthStep) -> Result<()> {
    let path = world.join("stores.csv");
    let original = std::fs::read_to_string(&path)?;
    let corrected: Vec<String> = original
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut cols: Vec<&str> = line.split(',').collect();
            if i % 20 == 1 && cols.len() == 4 {
                cols[2] = if cols[2] == "America/New_York" { "Europe/London" } else { "America/New_York" };
            }
            cols.join(",")
        })
        .collect();
    std::fs::write(&path, corrected.join("\n") + "\n")?;
    let w = world.to_string_lossy().to_string();
    let result = (|| -> Result<()> {
        let a = recount(opts, &["--lab", lab, "land", last, "--world", &w], None)?;
        let b = recount(opts, &["--lab", lab, "run", last], None)?;
        step.costs.push(Cost { seconds: a.wall.as_secs_f64() + b.wall.as_secs_f64(), peak_rss_mib: a.peak_rss_mib.max(b.peak_rss_mib) });
        Ok(())
    })();
    std::fs::write(&path, original)?;
    result
}

/// A second lab backfilled `--per-upload`, measured, and a third built with the wide budget:
/// their fingerprints.
fn second_labs(opts: &GrowthOptions, w: &str, (first, last): (&str, &str), step: &mut GrowthStep) -> Result<(String, String)> {
    let mut fingerprints = Vec::new();
    for (name, budget) in [("lab-per-upload", None), ("lab-wide-budget", Some(WIDE_BUDGET))] {
        let lab = opts.work_dir.join(name);
        if lab.exists() {
            std::fs::remove_dir_all(&lab)?;
        }
        let lab = lab.to_string_lossy().to_string();
        let mut base = vec!["--lab", lab.as_str()];
        if let Some(b) = budget {
            base.extend(["--memory", b]);
        }
        let with = |args: &[&str]| -> Vec<String> { base.iter().chain(args).map(|s| s.to_string()).collect() };
        let go = |args: Vec<String>| recount(opts, &args.iter().map(String::as_str).collect::<Vec<_>>(), None);
        let a = go(with(&["land", first, last, "--world", w]))?;
        let b = match budget {
            None => go(with(&["run", last, first, "--per-upload"]))?,
            Some(_) => go(with(&["run", last, first]))?,
        };
        if budget.is_none() {
            step.costs
                .push(Cost { seconds: a.wall.as_secs_f64() + b.wall.as_secs_f64(), peak_rss_mib: a.peak_rss_mib.max(b.peak_rss_mib) });
        }
        fingerprints.push(go(with(&["fingerprint"]))?.stdout.trim().to_string());
        std::fs::remove_dir_all(&lab)?;
    }
    Ok((fingerprints.remove(0), fingerprints.remove(0)))
}

impl GrowthReport {
    /// A step's cost at the largest size over its cost at the smallest.
    fn growth(&self, step: &GrowthStep, f: impl Fn(&Cost) -> f64) -> Option<f64> {
        let (a, b) = (step.costs.first()?, step.costs.last()?);
        (self.sizes.len() > 1 && f(a) > 0.0).then(|| f(b) / f(a))
    }

    fn step(&self, name_starts: &str) -> Option<&GrowthStep> {
        self.steps.iter().find(|s| s.name.starts_with(name_starts))
    }

    fn span(&self) -> f64 {
        match (self.sizes.first(), self.sizes.last()) {
            (Some(a), Some(b)) if a.factor > 0.0 => b.factor / a.factor,
            _ => 1.0,
        }
    }
}

impl Report for GrowthReport {
    fn kind(&self) -> &'static str {
        "bench-growth"
    }
    fn headline(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(|s| format!("{}x", s.factor)).collect();
        format!("recount-bench growth on {} (budget {}), sizes {}", self.machine, self.budget, sizes.join(", "))
    }
    fn tables(&self) -> Vec<Table> {
        let mut cols: Vec<(String, String)> = vec![("step".into(), "step".into())];
        for s in &self.sizes {
            cols.push((format!("x{}_s", s.factor), format!("{}x s", s.factor)));
            cols.push((format!("x{}_rss_mib", s.factor), format!("{}x MiB", s.factor)));
        }
        cols.push(("growth".into(), "time growth".into()));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, h)| (k.as_str(), h.as_str())).collect();
        let mut t = Table::new("", &refs);
        for step in &self.steps {
            let mut row = vec![Cell::text(&step.name)];
            for c in &step.costs {
                row.push(Cell::text(format!("{:.2}", c.seconds)));
                row.push(Cell::text(format!("{:.0}", c.peak_rss_mib)));
            }
            row.push(self.growth(step, |c| c.seconds).map(|g| Cell::text(format!("{g:.2}x"))).unwrap_or(Cell::Empty));
            t.push(row);
        }
        let mut f = Table::new(
            "fingerprints",
            &[("size", "size"), ("default", "default budget"), ("per_upload", "--per-upload"), ("wide", "8 GB budget")],
        );
        for s in &self.sizes {
            f.push(vec![
                Cell::text(format!("{}x", s.factor)),
                Cell::text(&s.fingerprint),
                Cell::text(&s.per_upload_fingerprint),
                Cell::text(&s.wide_budget_fingerprint),
            ]);
        }
        vec![t, f]
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        let pass = |ok: bool| if ok { Status::Pass } else { Status::Warn };
        let span = self.span();
        if let Some(g) = self.step("land + backfill").and_then(|s| self.growth(s, |c| c.seconds)) {
            let target = LAND_GROWTH_PER_FACTOR * span;
            notes.push(Note {
                status: pass(g <= target),
                text: format!("land + backfill: {g:.2}x the time for {span}x the world (target ≤ {target:.1}x)"),
            });
        }
        if let Some(g) = self.step("daily").and_then(|s| self.growth(s, |c| c.seconds)) {
            notes.push(Note {
                status: pass(g <= DAILY_GROWTH),
                text: format!(
                    "daily run: {g:.2}x its time at the smallest size, whose day is {span}x smaller (≤ {DAILY_GROWTH}x is the target as history grows: scripts/bench-growth.sh)"
                ),
            });
        }
        let worst = self
            .steps
            .iter()
            .flat_map(|s| s.costs.iter().map(move |c| (s, c)))
            .max_by(|a, b| a.1.peak_rss_mib.total_cmp(&b.1.peak_rss_mib));
        if let Some((s, c)) = worst {
            notes.push(Note {
                status: pass(c.peak_rss_mib <= RSS_CEILING_MIB),
                text: format!("highest peak RSS: {:.0} MiB, {} (target ≤ {RSS_CEILING_MIB:.0} MiB at every size)", c.peak_rss_mib, s.name),
            });
        }
        for s in &self.sizes {
            let same = s.fingerprint == s.per_upload_fingerprint && s.fingerprint == s.wide_budget_fingerprint;
            notes.push(Note {
                status: if same { Status::Pass } else { Status::Fail },
                text: format!(
                    "{}x: one pass, --per-upload and an {WIDE_BUDGET} budget give {}",
                    s.factor,
                    if same { "one fingerprint" } else { "different fingerprints" }
                ),
            });
        }
        notes
    }
}
