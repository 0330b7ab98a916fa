//! Runs a parsed command line against a lab and prints what it returns.

use crate::cli::{Cli, Command, Global};
use crate::lake::{self, Lab, bootstrap, land, v1, v2};
use crate::reports::{self, Format, Report};
use color_eyre::eyre::{Result, WrapErr};
use std::io::IsTerminal;
use std::path::PathBuf;

fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

fn print<R: Report>(report: &R, format: Format) {
    print!("{}", reports::table::render(report, format, color()));
}

fn open(global: &Global) -> Result<Lab> {
    let dir = global.lab.clone().unwrap_or_else(lake::default_lab_dir);
    Lab::open(&dir)
}

fn world_or_sample(world: Option<PathBuf>) -> PathBuf {
    world.unwrap_or_else(lake::sample_world_dir)
}

/// Returns the process exit code: 0, or 3 when a check found the two engines disagreeing.
pub fn dispatch(cli: Cli) -> Result<i32> {
    let g = cli.global;
    let v2_opts = |late_days: u32, force: bool| v2::V2Options { late_days, force, fail_after: g.fail_after };
    let Some(command) = cli.command else {
        if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
            return explorer(&g, crate::cli::TuiArgs { theme: std::env::var("RECOUNT_THEME").unwrap_or_else(|_| "dark".into()), no_mouse: false, world: None });
        }
        return summary(&g);
    };
    match command {
        Command::Tui { tui } => return explorer(&g, tui),
        Command::Demo { no_pause, world } => {
            let lab_dir = g.lab.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("recount-demo-{}", std::process::id())));
            crate::demo::run(&lab_dir, &world_or_sample(world), !no_pause && std::io::stdin().is_terminal(), color())?;
        }
        Command::Generate { out, preset, seed, store_factor } => {
            let started = std::time::Instant::now();
            let summary = crate::world::generate_scaled(&out, preset, seed, store_factor).wrap_err_with(|| format!("generating a world in {}", out.display()))?;
            match g.format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
                _ => {
                    print!("{}", summary.render());
                    println!("  written to {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
                }
            }
        }
        Command::Land { range, world } => {
            let mut lab = open(&g)?;
            let world = world_or_sample(world);
            let report = land::land_with(&mut lab, &world, &range.dates(), g.fail_after).wrap_err_with(|| format!("landing from {}", world.display()))?;
            emit_land(&report, g.format)?;
        }
        Command::Reset => {
            let mut lab = open(&g)?;
            lab.reset()?;
            println!("lab {} is empty", lab.root.display());
        }
        Command::Naive { range } => {
            let lab = open(&g)?;
            for d in range.dates() {
                if !v2::is_landed(&lab, d)? {
                    eprintln!("note: upload {d} has not landed; v1 appends nothing for it");
                }
                let rec = v1::run(&lab, d, g.fail_after).wrap_err_with(|| format!("v1 for {d}"))?;
                match g.format {
                    Format::Json => println!("{}", serde_json::to_string(&rec)?),
                    _ => println!("v1 {d} -> snapshot {} (append): {} row(s) appended", rec.snapshot_id, rec.rows_added),
                }
            }
        }
        Command::Run { range, window } => {
            let lab = open(&g)?;
            let dates = range.dates();
            let kind = if dates.len() > 1 { "backfill" } else { "upload" };
            for d in dates {
                if !v2::is_landed(&lab, d)? {
                    eprintln!("note: upload {d} has not landed; nothing to rebuild");
                    continue;
                }
                let report = v2::run_upload(&lab, d, kind, v2_opts(window.late_days, false)).wrap_err_with(|| format!("v2 for upload {d}"))?;
                emit_run(&report, g.format)?;
            }
        }
        Command::Daily { range, world, window } => {
            let mut lab = open(&g)?;
            let world = world_or_sample(world);
            for d in range.dates() {
                let landed = land::land_with(&mut lab, &world, &[d], g.fail_after).wrap_err_with(|| format!("landing {d}"))?;
                emit_land(&landed, g.format)?;
                if v2::is_landed(&lab, d)? {
                    let report = v2::run_upload(&lab, d, "daily", v2_opts(window.late_days, false)).wrap_err_with(|| format!("v2 for upload {d}"))?;
                    emit_run(&report, g.format)?;
                }
            }
        }
        Command::Rebuild { dates, force, window } => {
            let lab = open(&g)?;
            let report = v2::rebuild_dates(&lab, &dates, v2_opts(window.late_days, force))?;
            emit_run(&report, g.format)?;
        }
        Command::Check { date, as_of } => {
            let lab = open(&g)?;
            let report = reports::check::check(&lab, date, as_of)?;
            print(&report, g.format);
            if !report.engines_agree {
                eprintln!("ENGINE DISAGREEMENT: the polars and DuckDB recounts of {date} differ; see above");
                return Ok(3);
            }
        }
        Command::Explain { date, baskets } => {
            let lab = open(&g)?;
            let report = reports::explain::explain(&lab, date)?;
            print(&report, g.format);
            if baskets && g.format == Format::Table {
                print!("\n{}", reports::table::render_table_text(&report.baskets_table(), color()));
            }
        }
        Command::Lateness { by_country } => {
            let lab = open(&g)?;
            print(&reports::lateness::lateness(&lab, by_country)?, g.format);
        }
        Command::Fingerprint { as_of } => {
            let lab = open(&g)?;
            let report = reports::fingerprint(&lab, as_of)?;
            match g.format {
                Format::Table => println!("{}", report.line),
                f => print(&report, f),
            }
        }
        Command::Late { date, window } => {
            let lab = open(&g)?;
            print(&reports::listings::late(&lab, date, window.late_days)?, g.format);
        }
        Command::Quarantine { upload } => {
            let lab = open(&g)?;
            print(&reports::listings::quarantine(&lab, upload)?, g.format);
        }
        Command::Promises { date } => {
            let lab = open(&g)?;
            let check = reports::check::check(&lab, date, None)?;
            print(&reports::promises::promises(&lab, &check)?, g.format);
        }
        Command::Baskets { date, window } => {
            let lab = open(&g)?;
            print(&reports::baskets::resent(&lab, date, window.late_days)?, g.format);
        }
        Command::Bench { world, preset, seed, runs, work_dir, baseline, date } => {
            let report = crate::bench::run(crate::bench::BenchOptions { world, preset, seed, runs, work_dir, baseline, date, exe: std::env::current_exe()? })?;
            print(&report, g.format);
        }
        Command::BenchPhase { world, lab } => {
            println!("{}", crate::bench::land_and_backfill(&world, &lab)?);
        }
        Command::Snapshots => {
            let lab = open(&g)?;
            print(&reports::history::snapshots(&lab)?, g.format);
        }
        Command::History { date, as_of } => {
            let lab = open(&g)?;
            print(&reports::history::history(&lab, date, as_of)?, g.format);
        }
        Command::Diff { date, from, to, baskets } => {
            let lab = open(&g)?;
            let report = reports::history::diff(&lab, date, from, to)?;
            print(&report, g.format);
            if baskets && g.format == Format::Table {
                print!("\n{}", reports::table::render_table_text(&report.baskets_table(), color()));
            }
        }
        Command::Rollback { snapshot } => {
            let lab = open(&g)?;
            let rec = lake::snapshot::rollback(&lab, snapshot, g.fail_after)?;
            match g.format {
                Format::Json => println!("{}", serde_json::to_string(&rec)?),
                _ => println!(
                    "rollback to snapshot {snapshot} -> snapshot {}: {} date(s) restored, rows -{} +{}\n{}",
                    rec.snapshot_id, rec.dates_rewritten, rec.rows_deleted, rec.rows_added, rec.fingerprint
                ),
            }
        }
        Command::Evidence { date, out } => {
            let lab = open(&g)?;
            for f in reports::evidence::write(&lab, date, &out)? {
                println!("{}  {}", f.md5, f.path.display());
            }
        }
    }
    Ok(0)
}

fn emit_land(report: &land::LandReport, format: Format) -> Result<()> {
    profile(&report.phases);
    match format {
        Format::Json => println!("{}", serde_json::to_string(report)?),
        _ => print!("{}", report.render()),
    }
    Ok(())
}

/// RECOUNT_PROFILE=1 prints where a run's or a landing's time went, phase by phase, on stderr.
pub(crate) fn profile(phases: &[(String, f64)]) {
    if std::env::var_os("RECOUNT_PROFILE").is_some() {
        for (phase, ms) in phases {
            eprintln!("  {ms:9.2} ms  {phase}");
        }
    }
}

fn emit_run(report: &v2::RunReport, format: Format) -> Result<()> {
    profile(&report.phases);
    match format {
        Format::Json => println!("{}", serde_json::to_string(report)?),
        _ => print!("{}", report.render()),
    }
    Ok(())
}

fn explorer(g: &Global, tui: crate::cli::TuiArgs) -> Result<i32> {
    let lab_dir = g.lab.clone().unwrap_or_else(lake::default_lab_dir);
    crate::tui::run(crate::tui::TuiOptions {
        bootstrap: g.lab.is_none(),
        lab_dir,
        world: world_or_sample(tui.world),
        theme: tui.theme,
        mouse: !tui.no_mouse,
    })?;
    Ok(0)
}

/// No command: the default lab, built from the bundled sample world on first run, summarised.
fn summary(g: &Global) -> Result<i32> {
    let mut lab = open(g)?;
    if bootstrap::fill_if_empty(&mut lab, &lake::sample_world_dir())? {
        println!("built the sample lab at {} from {}", lab.root.display(), lake::sample_world_dir().display());
    }
    let fp = reports::fingerprint(&lab, None)?;
    println!("lab {}\n{}\n", lab.root.display(), fp.line);
    let dates: Vec<chrono::NaiveDate> = {
        let mut stmt = lab.conn.prepare(crate::queries::sql("reports", "business_dates"))?;
        stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?
    };
    if let Some(d) = dates.iter().rev().nth(3) {
        print(&reports::check::check(&lab, *d, None)?, g.format);
    }
    Ok(0)
}
