//! Runs a parsed command line against a lab and prints what it returns. Every command asks `lake`
//! or `reports` for structs; none touches the database.

use crate::cli::{Cli, Command, Global, Range, Window};
use crate::lake::daily::RunOutcome;
use crate::lake::snapshot::TriggerKind;
use crate::lake::{self, Lab, bootstrap, land, v1, v2};
use crate::reports::day::Day;
use crate::reports::{self, Format, Report};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

mod on_labs;
mod on_spark;
mod on_worlds;
pub(crate) mod shared;

use on_labs::*;
use on_spark::*;
use on_worlds::*;
pub use shared::print;
use shared::*;

// The exit codes are cli's (`cli::EXIT_CODES` says what each means).
use crate::cli::{ALERTED, ENGINES_DISAGREE, FOUND_WRONG, USAGE};

/// Returns the process exit code. A write the disk or the permissions refused is said in
/// recount's own words (`lake::fault`), not DuckDB's.
pub fn dispatch(cli: Cli) -> Result<i32> {
    let g = cli.global;
    let _ = COLOR.set(g.color);
    let _ = BOM.set(g.bom);
    crate::store::set_memory_budget(memory(&g)?.value);
    let Some(command) = cli.command else {
        if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
            return explorer(&g, crate::cli::TuiArgs { theme: None, no_mouse: false, world: None, audit: None, map: None });
        }
        return summary(&g);
    };
    let lab = lab_dir(&g);
    run_command(g, command).map_err(|e| match lake::fault::explain(&e, &lab) {
        Some(line) => color_eyre::eyre::eyre!(line),
        None => e,
    })
}

fn run_command(g: Global, command: Command) -> Result<i32> {
    // A model lab's commands first: its landing reads files on threads of its own, which one
    // malloc arena would make wait on each other.
    if let Some(code) = crate::model_commands::dispatch(&g, &command)? {
        return Ok(code);
    }
    // Bulk work keeps one malloc arena (`store::one_malloc_arena`), set before any thread starts.
    if matches!(command, Command::Land { .. } | Command::Run { .. } | Command::Daily { .. }) {
        crate::store::one_malloc_arena();
    }
    match command {
        Command::Tui { tui } => explorer(&g, tui),
        Command::Demo { no_pause, yes, world } => demo(&g, no_pause, yes, world),
        Command::Generate { out, world, foreign_gold: true, .. } => generate_foreign_gold(&out, world),
        Command::Generate { out, seed, store_factor, model: crate::cli::WorldModel::Manufacturing, .. } => {
            generate_manufacturing(&g, &out, seed, store_factor)
        }
        Command::Model { world, rows } => {
            print(&reports::model::model_report(&world_or_sample(world), rows)?, g.format);
            Ok(0)
        }
        Command::Generate { out, preset, seed, store_factor, corrections, shape, days, .. } => {
            generate(&g, &out, (preset, seed, store_factor, days), corrections, shape)
        }
        Command::Land { range, world, source, .. } => land_range(&g, &range, world, source),
        Command::Source { action: crate::cli::SourceAction::Check { world, source, files } } => source_check(&g, world, source, files),
        Command::Reset { yes } => reset(&g, yes),
        Command::Naive { range } => naive(&g, &range),
        Command::Run { range, window, alert, per_upload } => run(&g, &range, window, alert, per_upload),
        Command::Daily { range, world, window, alert } => daily(&g, &range, world, window, alert),
        Command::Rebuild { dates, force, window } => rebuild(&g, &dates, force, window),
        Command::Check { date, as_of } => check(&g, date.unwrap_or(reports::day::Day::Yesterday), as_of),
        Command::Explain { date, baskets } => explain(&g, date, baskets),
        Command::Lateness { by_country } => {
            print(
                &reports::lateness::lateness(&open_fresh(&g)?, by_country, Some(late_days(crate::cli::Window { late_days: None })?))?,
                g.format,
            );
            Ok(0)
        }
        Command::Fingerprint { as_of } => fingerprint(&g, as_of),
        Command::Late { date, window } => {
            let late_days = late_days(window)?;
            report(&g, |lab| reports::listings::late(lab, date.map(|d| reports::resolve_day(lab, d)).transpose()?, late_days))
        }
        Command::Quarantine { upload } => report(&g, |lab| reports::listings::quarantine(lab, upload)),
        Command::Summary => report(&g, reports::summary::summary),
        Command::Promises { date } => promises(&g, date),
        Command::Audit { foreign, window } => audit(&g, &foreign, window),
        Command::Baskets { date, window } => {
            let late_days = late_days(window)?;
            report(&g, |lab| reports::baskets::resent(lab, reports::resolve_day(lab, date)?, late_days))
        }
        Command::Snapshots => report(&g, reports::history::snapshots),
        Command::History { date, as_of } => report(&g, |lab| reports::history::history(lab, reports::resolve_day(lab, date)?, as_of)),
        Command::Diff { date, from, to, baskets } => diff(&g, date, from, to, baskets),
        Command::Rollback { snapshot, yes } => rollback(&g, snapshot, yes),
        Command::Reopen { date, reason, by } => reopen(&g, date, &reason, by),
        Command::Trend { country } => trend(&g, country.as_deref()),
        Command::Evidence { date, out } => evidence(&g, date, &out),
        Command::Spark { command } => spark(&g, command),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "recount", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man { out } => man(out.as_deref()),
        Command::Config => config_report(&g),
    }
}

/// `recount config`: each setting in effect and where it came from, the explorer's keys, and
/// what the memory budget gives DuckDB on the lab.
fn config_report(g: &Global) -> Result<i32> {
    let lab = crate::config::Setting { value: lab_dir(g), source: g.sources.lab.clone() };
    let color = crate::config::Setting { value: format!("{:?}", g.color).to_lowercase(), source: g.sources.color.clone() };
    let config = config()?;
    let table = crate::tui::keys::KeyTable::with_overrides(&config.keys)?;
    let keys = table.bindings().iter().filter_map(|b| Some((crate::tui::keys::action_name(b.action)?, b.label.clone()))).collect();
    let mut report = crate::config::ConfigReport::new(config, lab, color, memory(g)?, keys);
    // What the budget gives DuckDB on the lab as it is now, when there is one.
    if g.warehouse.is_none() && lake::exists(&lab_dir(g)) {
        let lab = Lab::open_read(&lab_dir(g))?;
        report.duckdb_limits(lab.store().limits_now()?);
    }
    print(&report, g.format);
    Ok(0)
}

/// `recount trend`: it reads the recount, so the caches are brought up to date first (a lab
/// that only a writer has touched has none yet). A country the lab does not have is an error.
fn trend(g: &Global, country: Option<&str>) -> Result<i32> {
    let lab = open_fresh(g)?;
    print(&reports::trend::trend(&lab)?.only(country)?, g.format);
    Ok(0)
}

/// A read-only report of the lab, printed in the chosen format.
fn report<R: Report>(g: &Global, make: impl FnOnce(&Lab) -> Result<R>) -> Result<i32> {
    let lab = open_read(g)?;
    print(&make(&lab)?, g.format);
    Ok(0)
}

fn v2_opts(g: &Global, window: Window, force: bool) -> Result<v2::V2Options> {
    Ok(v2::V2Options { late_days: late_days(window)?, force, fail_after: g.fail_after })
}

/// `audit --gold SOURCE`, of the lab or (with --warehouse) of the warehouse's mirror: exit
/// FOUND_WRONG when any row is wrong.
fn audit(g: &Global, foreign: &crate::cli::ForeignGold, window: Window) -> Result<i32> {
    let late_days = late_days(window)?;
    let map = foreign.map.as_deref().map(reports::foreign::GoldMap::read).transpose()?.unwrap_or_default();
    let lab = open_fresh(g)?;
    let currencies: std::collections::HashMap<String, String> =
        lab.store().stores()?.into_iter().map(|s| (s.store_id, s.currency)).collect();
    let spill = reports::audit_spill::spill_of(&lab);
    let rows =
        reports::audit::read_foreign(&foreign.gold, &map, &|s| currencies.get(s).cloned(), &crate::warehouse::foreign_table_files, &spill)?;
    let mut report = reports::audit::audit(&lab, &foreign.gold.display().to_string(), rows, late_days)?;
    report.all = foreign.all || g.format != Format::Table;
    audited(g, &report, report.wrong(), report.where_wrong(), foreign.by.as_deref())
}

fn promises(g: &Global, date: Day) -> Result<i32> {
    let lab = open_fresh(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::promises::promises(&lab, &reports::check::check(&lab, date, None)?)?;
    print(&report, g.format);
    Ok(if report.failed() { FOUND_WRONG } else { 0 })
}

/// Whether a lab that holds data may be emptied: `--yes`, or a "y" typed at the question. With
/// no terminal to ask on, the answer is no.
fn may_empty(lab: &Lab, yes: bool, why: &str) -> Result<bool> {
    if lab.is_empty()? {
        return Ok(true);
    }
    confirmed(yes, &format!("{why} empties the lab at {}: its raw zone, bronze, silver, gold and every snapshot", lab.root.display()))
}

/// JSON as every report prints it: pretty, and nothing a terminal would act on left raw.
fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<()> {
    println!("{}", crate::sanitize::json(serde_json::to_string_pretty(value)?));
    Ok(())
}

fn emit_land(report: &land::LandReport, format: Format) -> Result<()> {
    crate::progress::profile(&report.phases);
    match format {
        Format::Json => print_json(report)?,
        _ => print!("{}", report.render()),
    }
    Ok(())
}

/// Lets go of a lab that wrote: DuckDB checkpoints it as it closes, which RECOUNT_PROFILE times.
fn close(lab: Lab) {
    let closing = std::time::Instant::now();
    drop(lab);
    crate::progress::profile(&[("closing the lab (checkpoint)".to_string(), closing.elapsed().as_secs_f64() * 1e3)]);
}

fn emit_run(report: &v2::RunReport, format: Format) -> Result<()> {
    crate::progress::profile(&report.phases);
    match format {
        Format::Json => print_json(report)?,
        _ => print!("{}", report.render()),
    }
    Ok(())
}

fn explorer(g: &Global, tui: crate::cli::TuiArgs) -> Result<i32> {
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        eprintln!(
            "error: the explorer needs a terminal (stdin and stdout); the reports (`recount check`, `recount --help`) print without one"
        );
        return Ok(USAGE);
    }
    let config = config()?;
    crate::tui::keys::install(crate::tui::keys::KeyTable::with_overrides(&config.keys)?);
    // The map is read before the terminal is taken, so that a broken one is a plain error.
    let map = tui.map.as_deref().map(reports::foreign::GoldMap::read).transpose()?.unwrap_or_default();
    let audit = tui.audit.map(|gold| crate::tui::worker::AuditSource { gold, map });
    crate::tui::run(crate::tui::TuiOptions {
        // The default lab, wherever RECOUNT_LAB points, is built on first run; a lab named with
        // --lab is opened as it is.
        bootstrap: !matches!(g.sources.lab, crate::config::SettingSource::Flag(_)) && g.warehouse.is_none(),
        lab_dir: lab_dir(g),
        world: world_or_sample(tui.world),
        theme: tui.theme.unwrap_or_else(|| config.theme.value.clone()),
        mouse: !tui.no_mouse && config.mouse.value,
        late_days: config.late_days.value,
        warehouse: g.warehouse.clone(),
        audit,
    })?;
    Ok(0)
}

/// No command: the default lab, built from the bundled sample world on first run, summarised.
fn summary(g: &Global) -> Result<i32> {
    if let Some(code) = crate::model_commands::glance(g)? {
        return Ok(code);
    }
    let lab = match open_fresh(g) {
        Ok(lab) if !lab.is_empty()? => lab,
        // A warehouse is never built from the sample: its error is the answer.
        other if g.warehouse.is_some() => other?,
        _ => {
            let mut lab = open(g)?;
            if let Some(first) = bootstrap::fill_if_empty(&mut lab, &lake::sample_world_dir())? {
                println!("built the sample lab at {} from {}", lab.root.display(), lake::sample_world_dir().display());
                for line in first.held_lines() {
                    println!("{}", crate::sanitize::for_terminal(&line));
                }
            }
            lab
        }
    };
    let fp = reports::fingerprint(&lab, None)?;
    let store = match &g.warehouse {
        Some(w) => format!("warehouse {}", w.display()),
        None => format!("lab {}", lab.root.display()),
    };
    println!("{}\n{}", crate::sanitize::for_terminal(&store), fp.line);
    // The morning's line, as `recount summary` and the explorer open with it.
    println!("{}\n", crate::sanitize::for_terminal(&reports::summary::banner(&lab)?));
    if let Some(d) = reports::business_dates(&lab)?.iter().rev().nth(3) {
        print(&reports::check::check(&lab, *d, None)?, g.format);
    }
    Ok(0)
}
