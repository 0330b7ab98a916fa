//! `recount-bench`: the developers' measuring tool, a binary of its own beside `recount`. It
//! measures generation, landing, backfill, one run, the reports and the explorer (median of
//! several runs, with the classic pipeline measured in the same run on the same raw zone), the
//! growth table (`--store-factor 1,4,10`: every user-facing step of `recount` in a process of its
//! own at each size) and the reading of a warehouse (`--warehouse`). Its heavy phases run as
//! children (`recount-bench phase`) so their peak RSS is their own; the steps a user runs run as
//! the `recount` binary built beside it.

mod bench;

// The library's floors, under the names the bench's code uses: `crate::lake::Lab`.
use recount::{lake, progress, raw, recompute, reports, rules, store, tui, warehouse, world};

use chrono::NaiveDate;
use clap::{Parser, Subcommand};
use color_eyre::eyre::{Result, eyre};
use std::path::{Path, PathBuf};

#[derive(Debug, Parser)]
#[command(name = "recount-bench", version, about = "Measure recount: the figures, the growth table, a warehouse's reading")]
struct BenchCli {
    #[command(subcommand)]
    phase: Option<Phase>,
    /// A world to measure on [default: generate one with --preset and --seed]
    #[arg(long, value_name = "DIR")]
    world: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = world::Preset::Full)]
    preset: world::Preset,
    #[arg(long, default_value_t = world::DEFAULT_SEED)]
    seed: u64,
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Where the bench keeps its worlds and labs
    #[arg(long, value_name = "DIR", default_value = "/var/tmp/recount-bench")]
    work_dir: PathBuf,
    /// The classic pipeline to measure in the same run, e.g. bench/classic/run.sh
    #[arg(long, value_name = "SCRIPT")]
    baseline: Option<PathBuf>,
    /// The upload for the one-run figures [default: 2026-08-15 when present]
    #[arg(long, value_parser = recount::reports::day::parse_date)]
    date: Option<NaiveDate>,
    /// The growth table instead: every step in a process of its own, on the preset with these
    /// multiples of its stores (e.g. 1,4,10), with each step's time and peak RSS
    #[arg(long, value_name = "N,…", value_delimiter = ',', num_args = 1..)]
    store_factor: Vec<f64>,
    /// Measure reading this Iceberg warehouse instead: its mirror and the explorer on it
    #[arg(long, value_name = "DIR")]
    warehouse: Option<PathBuf>,
    /// Output format of the report
    #[arg(long, default_value = "table", value_parser = recount::cli::format_parser())]
    format: reports::Format,
}

#[derive(Debug, Subcommand)]
enum Phase {
    /// (internal) one measured phase in its own process: land + backfill, the explorer's far jump, or the polars recount
    #[command(hide = true)]
    Phase {
        #[arg(long)]
        world: PathBuf,
        #[arg(long)]
        lab: PathBuf,
        /// The explorer's far jump on a built lab instead of land + backfill
        #[arg(long)]
        jump: bool,
        /// The polars recount of the lab's raw zone alone, no cache read or written
        #[arg(long, conflicts_with = "jump")]
        recount: bool,
    },
}

/// The `recount` binary the bench measures: the one built beside this one.
fn recount_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe()?.with_file_name(format!("recount{}", std::env::consts::EXE_SUFFIX));
    if !exe.is_file() {
        return Err(eyre!("no recount binary beside recount-bench ({}): build both with `cargo build --release`", exe.display()));
    }
    Ok(exe)
}

fn main() {
    // One line per cause, as recount's own errors: nothing from a path or a world reaches the
    // terminal raw.
    if let Err(e) = run(BenchCli::parse()) {
        eprintln!("error: {}", recount::sanitize::for_terminal(&format!("{e:#}")));
        std::process::exit(1);
    }
}

fn run(cli: BenchCli) -> Result<()> {
    if let Some(Phase::Phase { world, lab, jump, recount }) = &cli.phase {
        // Bulk work keeps one malloc arena, as `recount land` and `run` do.
        store::one_malloc_arena();
        let line = match (jump, recount) {
            (true, _) => bench::far_jump(world, lab)?,
            (_, true) => bench::raw_recount(lab)?,
            _ => bench::land_and_backfill(world, lab)?,
        };
        println!("{line}");
        return Ok(());
    }
    let exes = bench::Exes { recount: recount_exe()?, bench: std::env::current_exe()? };
    if !cli.store_factor.is_empty() {
        let opts = bench::growth::GrowthOptions {
            preset: cli.preset,
            seed: cli.seed,
            factors: cli.store_factor,
            runs: cli.runs,
            work_dir: cli.work_dir,
            exes,
        };
        let line = progress::Progress::start("measuring growth (every step in its own process, at each size)".to_string());
        let report = bench::growth::run(opts);
        drop(line);
        recount::commands::print(&report?, cli.format);
        return Ok(());
    }
    let opts = bench::BenchOptions {
        world: cli.world,
        preset: cli.preset,
        seed: cli.seed,
        runs: cli.runs,
        work_dir: cli.work_dir,
        baseline: cli.baseline,
        date: cli.date,
        exes,
    };
    let line = progress::Progress::start(format!("benchmarking ({} run(s) of each measure)", opts.runs));
    let report = match cli.warehouse.as_deref() {
        Some(w) => bench::warehouse(opts, Path::new(w)),
        None => bench::run(opts),
    };
    drop(line);
    recount::commands::print(&report?, cli.format);
    Ok(())
}
