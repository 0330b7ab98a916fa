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

// The exit codes are cli's (`cli::EXIT_CODES` says what each means).
use crate::cli::{ALERTED, ENGINES_DISAGREE, FOUND_WRONG, USAGE};

/// The --color choice, set once per process by `dispatch`.
static COLOR: std::sync::OnceLock<crate::cli::ColorChoice> = std::sync::OnceLock::new();

fn color() -> bool {
    COLOR.get().copied().unwrap_or_default().on(std::io::stdout().is_terminal())
}

/// The terminal's width, when stdout is one: tables are narrowed to it.
fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::size().ok().map(|(w, _)| usize::from(w)).filter(|w| *w >= 20)
}

pub(crate) fn print<R: Report>(report: &R, format: Format) {
    let bom = if format == Format::Csv && BOM.get().copied().unwrap_or(false) { "\u{feff}" } else { "" };
    print!("{bom}{}", reports::table::render_fitted(report, format, color(), terminal_width()));
}

/// `--bom`: CSV begins with a UTF-8 byte-order mark, by which a spreadsheet on Windows reads £
/// and ₹ as they are.
static BOM: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The config file and the environment, read once per process when a command needs them.
static CONFIG: std::sync::OnceLock<crate::config::Config> = std::sync::OnceLock::new();

fn config() -> Result<&'static crate::config::Config> {
    if let Some(c) = CONFIG.get() {
        return Ok(c);
    }
    let c = crate::config::load()?;
    // A key override that does not parse is an error now, not when the explorer opens.
    crate::tui::keys::KeyTable::with_overrides(&c.keys).wrap_err_with(|| format!("the config file {}: [keys]", c.path.display()))?;
    Ok(CONFIG.get_or_init(|| c))
}

/// The lateness window: --late-days, else the config file's, else the default.
pub(crate) fn late_days(window: Window) -> Result<u32> {
    Ok(match window.late_days {
        Some(n) => n,
        None => config()?.late_days.value,
    })
}

/// The memory budget in effect and where it came from: `--memory`, else `RECOUNT_MEMORY`, else
/// the config file's `memory`, else a quarter of the machine's memory.
fn memory(global: &Global) -> Result<crate::config::Setting<u64>> {
    Ok(match global.memory {
        Some(value) => crate::config::Setting { value, source: crate::config::Source::Flag("--memory".into()) },
        None => config()?.memory.clone(),
    })
}

pub(crate) fn lab_dir(global: &Global) -> PathBuf {
    global.lab.clone().unwrap_or_else(lake::default_lab_dir)
}

/// The lab, for a command that writes: it holds the lab's lock until it returns. A warehouse is
/// written by `recount spark` alone.
pub(crate) fn open(global: &Global) -> Result<Lab> {
    if let Some(w) = &global.warehouse {
        color_eyre::eyre::bail!(
            "this command writes the lab; the warehouse {} is written by Spark: `recount spark run` lands and runs v2, and rollback, reopen, naive and rebuild take --warehouse",
            w.display()
        );
    }
    Lab::open(&lab_dir(global))
}

/// What a report reads, read-only: the warehouse's mirror with --warehouse (src/warehouse.rs),
/// else the lab.
fn open_read(global: &Global) -> Result<Lab> {
    match &global.warehouse {
        Some(w) => crate::warehouse::open(w),
        None => open_lab_read(global),
    }
}

/// The lab, for a report: read-only, beside an open explorer or other reports. A lab that does
/// not exist is an error naming the path: a typo'd --lab never reads as an empty lab.
fn open_lab_read(global: &Global) -> Result<Lab> {
    let dir = lab_dir(global);
    if !lake::exists(&dir) {
        color_eyre::eyre::bail!(
            "no lab at {}: nothing has landed there (a command that writes, such as `recount land`, creates it; --lab names another)",
            dir.display()
        );
    }
    let lab = Lab::open_read(&dir)?;
    if lab.mid_landing()? {
        eprintln!("note: {}", lake::MID_LANDING);
    }
    Ok(lab)
}

/// The lab, for a report that reads the derived caches (the recount, the lateness histogram):
/// read-only, with the caches brought up to date first. Only these pay for a stale cache.
fn open_fresh(global: &Global) -> Result<Lab> {
    let mut lab = open_read(global)?;
    reports::freshen(&mut lab)?;
    Ok(lab)
}

pub(crate) fn world_or_sample(world: Option<PathBuf>) -> PathBuf {
    world.unwrap_or_else(lake::sample_world_dir)
}

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
    if matches!(command, Command::Land { .. } | Command::Run { .. } | Command::Daily { .. } | Command::BenchPhase { .. }) {
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
            print(&reports::lateness::lateness(&open_fresh(&g)?, by_country)?, g.format);
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
        command @ (Command::Bench { .. } | Command::BenchPhase { .. }) => bench(&g, command),
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
    let all = reports::trend::trend(&lab)?;
    if let Some(c) = country {
        let known = all.countries();
        if !known.iter().any(|k| k.eq_ignore_ascii_case(c)) {
            color_eyre::eyre::bail!(
                "no country {} in the lab (it has {})",
                crate::sanitize::for_terminal(c),
                if known.is_empty() { "none yet".to_string() } else { known.join(", ") }
            );
        }
    }
    print(&all.only(country), g.format);
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
    let map = foreign.map.as_deref().map(reports::audit::GoldMap::read).transpose()?.unwrap_or_default();
    let lab = open_fresh(g)?;
    let currencies: std::collections::HashMap<String, String> =
        lab.store().stores()?.into_iter().map(|s| (s.store_id, s.currency)).collect();
    let rows = reports::audit::read_foreign(&foreign.gold, &map, &|s| currencies.get(s).cloned(), &crate::warehouse::foreign_table_files)?;
    let mut report = reports::audit::audit(&lab, &foreign.gold.display().to_string(), &rows, late_days)?;
    report.all = foreign.all || g.format != Format::Table;
    print(&report, g.format);
    Ok(if report.wrong() > 0 { FOUND_WRONG } else { 0 })
}

fn promises(g: &Global, date: Day) -> Result<i32> {
    let lab = open_fresh(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::promises::promises(&lab, &reports::check::check(&lab, date, None)?)?;
    print(&report, g.format);
    Ok(if report.promises.iter().any(|p| p.status == reports::Status::Fail) { FOUND_WRONG } else { 0 })
}

/// Whether a lab that holds data may be emptied: `--yes`, or a "y" typed at the question. With
/// no terminal to ask on, the answer is no.
fn may_empty(lab: &Lab, yes: bool, why: &str) -> Result<bool> {
    if lab.is_empty()? {
        return Ok(true);
    }
    confirmed(yes, &format!("{why} empties the lab at {}: its raw zone, bronze, silver, gold and every snapshot", lab.root.display()))
}

/// Whether a command that changes what every report shows may go ahead: `--yes`, or a "y" typed
/// at the question `what`. With no terminal to ask on, the answer is no, and the error says so.
pub(crate) fn confirmed(yes: bool, what: &str) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        eprintln!("error: {}; pass --yes to go ahead", crate::sanitize::for_terminal(what));
        return Ok(false);
    }
    eprint!("{}. Go ahead? [y/N] ", crate::sanitize::for_terminal(what));
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

fn demo(g: &Global, no_pause: bool, yes: bool, world: Option<PathBuf>) -> Result<i32> {
    let lab_dir = match &g.lab {
        Some(dir) => {
            // A lab the user named may hold their data: ask before the demo resets it.
            let lab = Lab::open(dir)?;
            if !may_empty(&lab, yes, "the demo")? {
                return Ok(USAGE);
            }
            dir.clone()
        }
        None => std::env::temp_dir().join(format!("recount-demo-{}", std::process::id())),
    };
    crate::demo::run(&lab_dir, &world_or_sample(world), !no_pause && std::io::stdin().is_terminal(), color())?;
    Ok(0)
}

fn generate(
    g: &Global,
    out: &Path,
    (preset, seed, store_factor, days): (crate::world::Preset, u64, f64, Option<u32>),
    corrections: bool,
    shape: crate::world::shape::Shape,
) -> Result<i32> {
    use crate::world::shape::Shape;
    let started = std::time::Instant::now();
    let line =
        crate::progress::Progress::start(format!("generating a {} world in {}", format!("{preset:?}").to_lowercase(), out.display()));
    // Another shape is written from the contract's files, made first beside it.
    let scratch = if shape == Shape::Contract { None } else { Some(tempfile::tempdir()?) };
    let contract = scratch.as_ref().map_or(out, |t| t.path());
    let summary = crate::world::generate_with(contract, preset, seed, store_factor, days)
        .wrap_err_with(|| format!("generating a world in {}", contract.display()))?;
    line.set("writing the corrected deliveries", None);
    let mut corrections = if corrections { crate::world::corrections::write(contract)? } else { Vec::new() };
    if shape != Shape::Contract {
        line.set(format!("writing the world as {shape:?}"), None);
        crate::world::shape::convert(contract, out, shape).wrap_err_with(|| format!("writing the world in {}", out.display()))?;
        for c in &mut corrections {
            c.dir = out.join(crate::raw::corrections::CORRECTIONS_DIR).join(c.dir.file_name().unwrap_or_default());
            c.file = crate::world::shape::shaped_name(shape, c.file.strip_suffix(".jsonl.gz").unwrap_or(&c.file));
        }
    }
    drop(line);
    match g.format {
        Format::Json => print_json(&serde_json::json!({ "world": summary, "corrections": corrections }))?,
        _ => {
            print!("{}", summary.render());
            for c in &corrections {
                println!(
                    "  correction {:?} of upload {} {}: land it with `recount land {} --world {}`",
                    c.kind,
                    c.upload_date,
                    c.file,
                    c.upload_date,
                    c.dir.display()
                );
            }
            println!("  written to {} in {:.1} s", out.display(), started.elapsed().as_secs_f64());
        }
    }
    Ok(0)
}

fn land_range(g: &Global, range: &Range, world: Option<PathBuf>, source: Option<PathBuf>) -> Result<i32> {
    let mut lab = open(g)?;
    let world = world_or_sample(world);
    let source = crate::raw::source::Source::of_world(&world, source.as_deref())?;
    let dates = range.dates();
    let line = crate::progress::Progress::start(format!("landing {} upload(s) from {}", dates.len(), world.display()));
    let report =
        land::land_with(&mut lab, &world, &source, &dates, g.fail_after).wrap_err_with(|| format!("landing from {}", world.display()));
    drop(line);
    let report = report?;
    emit_land(&report, g.format)?;
    close(lab);
    // Some upload was held back, or the world has no such upload: what could land did, and the
    // exit code says not all of it.
    Ok(if report.held.is_empty() && !report.asked_for_what_is_not_there() { 0 } else { 1 })
}

/// `recount source check`: a few files read through the description, before anything lands.
/// `bench` (the figures, or with --store-factor the growth table) and its hidden child phases.
fn bench(g: &Global, command: Command) -> Result<i32> {
    match command {
        Command::Bench { store_factor, preset, seed, runs, work_dir, .. } if !store_factor.is_empty() => {
            let exe = std::env::current_exe()?;
            let opts = crate::bench::growth::GrowthOptions { preset, seed, factors: store_factor, runs, work_dir, exe };
            let line = crate::progress::Progress::start("measuring growth (every step in its own process, at each size)".to_string());
            let report = crate::bench::growth::run(opts);
            drop(line);
            print(&report?, g.format);
        }
        Command::Bench { world, preset, seed, runs, work_dir, baseline, date, .. } => {
            let opts = crate::bench::BenchOptions { world, preset, seed, runs, work_dir, baseline, date, exe: std::env::current_exe()? };
            let line = crate::progress::Progress::start(format!("benchmarking ({runs} run(s) of each measure)"));
            let report = match &g.warehouse {
                Some(w) => crate::bench::warehouse(opts, w),
                None => crate::bench::run(opts),
            };
            drop(line);
            print(&report?, g.format);
        }
        Command::BenchPhase { world, lab, jump: true } => println!("{}", crate::bench::far_jump(&world, &lab)?),
        Command::BenchPhase { world, lab, jump: false } => println!("{}", crate::bench::land_and_backfill(&world, &lab)?),
        _ => {}
    }
    Ok(0)
}

/// `generate --foreign-gold --out FILE`: the world landed and run day by day in a lab of its own
/// (a temporary directory), then its gold written with one row of each fault; the faulty rows
/// and their causes go to stderr, so a walkthrough can show what `audit` will find.
fn generate_foreign_gold(out: &Path, world: Option<PathBuf>) -> Result<i32> {
    if out.exists() {
        return Err(color_eyre::eyre::eyre!("{} exists: the foreign gold is written to a new file only", out.display()));
    }
    let world = world_or_sample(world);
    if crate::model_commands::declares_model(&world, None)? {
        return crate::model_commands::generate_foreign_gold(out, &world);
    }
    let dir = tempfile::tempdir()?;
    let mut lab = Lab::open(dir.path())?;
    let step = lake::daily::Step { trigger: TriggerKind::Daily, v1_first: false, opts: v2::V2Options::default() };
    for d in crate::raw::source::uploads_of(&world)? {
        if let RunOutcome::Failed(e) = lake::daily::land_and_run(&mut lab, &world, d, step)?.run {
            return Err(e.wrap_err(format!("v2 for upload {d}")));
        }
    }
    reports::freshen(&mut lab)?;
    let (rows, faults) = reports::audit::example(&lab, crate::rules::DEFAULT_LATE_DAYS)?;
    let mut csv = String::from("business_date,store_id,baskets,revenue_minor\n");
    for r in &rows {
        csv.push_str(&format!("{},{},{},{}\n", r.business_date, r.store_id, r.baskets, r.revenue_minor));
    }
    std::fs::write(out, csv).wrap_err_with(|| format!("writing {}", out.display()))?;
    eprintln!("{}: {} rows, {} of them wrong on purpose:", out.display(), rows.len(), faults.len());
    for (d, s, cause) in &faults {
        eprintln!("  {d} {s}: {}", cause.word());
    }
    Ok(0)
}

/// `generate --model manufacturing`: a plant's world, into a new or empty folder only.
/// `generate --model manufacturing`: a plant's world; `--store-factor N` gives each plant N times
/// its production lines.
fn generate_manufacturing(g: &Global, out: &Path, seed: u64, factor: f64) -> Result<i32> {
    if out.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        return Err(color_eyre::eyre::eyre!(
            "{} is not empty: a world is generated into a new or empty folder, so nothing of yours is overwritten",
            out.display()
        ));
    }
    if !(1.0..=100_000.0).contains(&factor) {
        return Err(color_eyre::eyre::eyre!("--store-factor {factor}: a plant world takes 1 to 100000 times its lines"));
    }
    let lines = factor.round() as usize;
    let summary = crate::world::manufacturing::generate_scaled(out, seed, lines)
        .wrap_err_with(|| format!("generating a world in {}", out.display()))?;
    match g.format {
        Format::Json => print_json(&serde_json::json!({ "world": summary }))?,
        _ => println!("{}", summary.render()),
    }
    Ok(0)
}

fn source_check(g: &Global, world: Option<PathBuf>, source: Option<PathBuf>, files: usize) -> Result<i32> {
    let world = world_or_sample(world);
    if source.is_none() && crate::model::recount::model_of(&world)? != crate::model::retail() {
        // A model's world: the model checked, and its rows as the model reads them.
        print(&reports::model::model_report(&world, files.max(1))?, g.format);
        return Ok(0);
    }
    let source = crate::raw::source::Source::of_world(&world, source.as_deref())?;
    let report = reports::source::check(&world, &source, files)?;
    print(&report, g.format);
    if report.files.is_empty() {
        // Every field "found 0, missing 0" is no verdict: a description that reads nothing fails.
        eprintln!(
            "error: the description took no file in {} upload partition(s): its file pattern matches nothing there, or the files sit in folders the template does not name",
            report.uploads
        );
        return Ok(1);
    }
    Ok(if report.unmapped().is_empty() { 0 } else { 1 })
}

fn reset(g: &Global, yes: bool) -> Result<i32> {
    let mut lab = open(g)?;
    if !may_empty(&lab, yes, "reset")? {
        return Ok(USAGE);
    }
    lab.reset()?;
    println!("lab {} is empty", lab.root.display());
    Ok(0)
}

fn naive(g: &Global, range: &Range) -> Result<i32> {
    if g.warehouse.is_some() {
        for d in range.dates() {
            warehouse_write(g, crate::warehouse::Write::RetryV1(d))?;
        }
        return Ok(0);
    }
    let lab = open(g)?;
    for d in range.dates() {
        if !lab.is_landed(d)? {
            eprintln!("note: upload {d} has not landed; v1 appends nothing for it");
        }
        let rec = v1::run(&lab, d, g.fail_after).wrap_err_with(|| format!("v1 for {d}"))?;
        match g.format {
            Format::Json => print_json(&rec)?,
            _ => println!("v1 {d} -> snapshot {} (append): {} row(s) appended", rec.snapshot_id, rec.rows_added),
        }
    }
    Ok(0)
}

fn run(g: &Global, range: &Range, window: Window, alert: crate::cli::Alert, per_upload: bool) -> Result<i32> {
    let lab = open(g)?;
    let opts = v2_opts(g, window, false)?;
    let mut landed = Vec::new();
    for d in range.dates() {
        if lab.is_landed(d)? {
            landed.push(d);
        } else {
            eprintln!("note: upload {d} has not landed; nothing to rebuild");
        }
    }
    // Landed store corrections are rebuilt first, as their own snapshot.
    if let Some(report) = v2::run_store_changes(&lab, opts).wrap_err("v2 for the store corrections")? {
        emit_run(&report, g.format)?;
    }
    let mut met = Vec::new();
    if landed.len() > 1 && !per_upload {
        let (report, beyond) = v2::run_range(&lab, &landed, opts).wrap_err("v2 for the range of uploads")?;
        emit_run(&report, g.format)?;
        met.extend(beyond.into_iter().filter(|(_, b)| !b.future_dated));
        close(lab);
        return Ok(alerted(alert, &met).unwrap_or(0));
    }
    let kind = trigger_of(false, landed.len());
    for d in landed {
        let report = v2::run_upload(&lab, d, kind, opts).wrap_err_with(|| format!("v2 for upload {d}"))?;
        emit_run(&report, g.format)?;
        met.extend(report.beyond_window.iter().filter(|b| !b.future_dated).map(|b| (d, b.clone())));
    }
    close(lab);
    Ok(alerted(alert, &met).unwrap_or(0))
}

/// With `--alert-on beyond-window`: when the runs met rows that arrived for a date already past
/// its window, says which (upload, date, rows, revenue) on stderr and gives exit code 5.
fn alerted(alert: crate::cli::Alert, met: &[(NaiveDate, v2::BeyondWindow)]) -> Option<i32> {
    alert.alert_on?;
    if met.is_empty() {
        return None;
    }
    for (u, b) in met {
        eprintln!(
            "ALERT beyond-window: upload {u} brought {} event row(s) of business date {}, {} (each copy of a re-sent basket counted; \
             a reopening counts baskets), past its window (recount late {}; finance decides whether to reopen it)",
            b.rows,
            b.business_date,
            crate::money::format_major(b.revenue_minor, &b.currency),
            b.business_date
        );
    }
    Some(ALERTED)
}

fn daily(g: &Global, range: &Range, world: Option<PathBuf>, window: Window, alert: crate::cli::Alert) -> Result<i32> {
    let mut lab = open(g)?;
    let world = world_or_sample(world);
    let mut code = 0;
    let mut met = Vec::new();
    let step = lake::daily::Step { trigger: TriggerKind::Daily, v1_first: false, opts: v2_opts(g, window, false)? };
    for d in range.dates() {
        let done = lake::daily::land_and_run(&mut lab, &world, d, step).wrap_err_with(|| format!("landing {d}"))?;
        emit_land(&done.landed, g.format)?;
        if done.landed.asked_for_what_is_not_there() {
            code = 1;
        }
        if let Some(report) = &done.store_run {
            emit_run(report, g.format)?;
        }
        match done.run {
            RunOutcome::Ran(report) => {
                emit_run(&report, g.format)?;
                met.extend(report.beyond_window.iter().filter(|b| !b.future_dated).map(|b| (d, b.clone())));
            }
            // The landing's report names the held upload and its file; the exit code says not all landed.
            RunOutcome::Held(_) => code = 1,
            RunOutcome::NothingLanded => {}
            RunOutcome::Failed(e) => return Err(e.wrap_err(format!("v2 for upload {d}"))),
        }
    }
    // A held-back upload (exit 1) is said before an alert.
    Ok(if code != 0 { code } else { alerted(alert, &met).unwrap_or(0) })
}

fn rebuild(g: &Global, dates: &[NaiveDate], force: bool, window: Window) -> Result<i32> {
    if g.warehouse.is_some() && !force {
        for &date in dates {
            warehouse_write(g, crate::warehouse::Write::Rebuild { date, late_days: late_days(window)? })?;
        }
        return Ok(0);
    }
    let lab = open(g)?;
    emit_run(&v2::rebuild_dates(&lab, dates, v2_opts(g, window, force)?)?, g.format)?;
    Ok(0)
}

fn check(g: &Global, date: Day, as_of: Option<i64>) -> Result<i32> {
    let lab = open_fresh(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::check::check(&lab, date, as_of)?;
    print(&report, g.format);
    if !report.engines_agree && lab.mid_landing()? {
        // polars reads the raw zone, where the landing's files are not all in place yet: the
        // engines are not comparable until it is finished, which is no disagreement.
        eprintln!("error: the recounts of {date} cannot be compared yet: {}", lake::MID_LANDING);
        return Ok(1);
    }
    if !report.engines_agree {
        eprintln!("ENGINE DISAGREEMENT: the polars and DuckDB recounts of {date} differ; see above");
        return Ok(ENGINES_DISAGREE);
    }
    Ok(0)
}

fn explain(g: &Global, date: Day, baskets: bool) -> Result<i32> {
    let lab = open_fresh(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::explain::explain(&lab, date)?;
    print_with_baskets(&report, baskets.then(|| report.baskets_table()), g.format);
    Ok(0)
}

fn fingerprint(g: &Global, as_of: Option<i64>) -> Result<i32> {
    let lab = open_read(g)?;
    let report = reports::fingerprint(&lab, as_of)?;
    match g.format {
        Format::Table => println!("{}", report.line),
        f => print(&report, f),
    }
    Ok(0)
}

fn diff(g: &Global, date: Day, from: Option<i64>, to: Option<i64>, baskets: bool) -> Result<i32> {
    let lab = open_read(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::history::diff(&lab, date, from, to)?;
    print_with_baskets(&report, baskets.then(|| report.baskets_table()), g.format);
    Ok(0)
}

fn rollback(g: &Global, snapshot: i64, yes: bool) -> Result<i32> {
    if let Some(w) = &g.warehouse {
        if !confirmed(yes, &format!("rollback puts the warehouse {} back to snapshot {snapshot}, as a new snapshot", w.display()))? {
            return Ok(USAGE);
        }
        return warehouse_write(g, crate::warehouse::Write::Rollback(snapshot));
    }
    let lab = open(g)?;
    let dates = lake::snapshot::rollback_changes(&lab, snapshot)?;
    if dates.is_empty() {
        println!("snapshot {snapshot}'s silver and gold are already current: nothing to roll back, and no snapshot written");
        return Ok(0);
    }
    let what = format!(
        "rollback puts {} business date(s) ({} .. {}) back as they were at snapshot {snapshot}, as a new snapshot",
        dates.len(),
        dates[0],
        dates[dates.len() - 1]
    );
    if !confirmed(yes, &what)? {
        return Ok(USAGE);
    }
    let rec = lake::snapshot::rollback(&lab, snapshot, g.fail_after)?;
    match g.format {
        Format::Json => print_json(&rec)?,
        _ => println!(
            "rollback to snapshot {snapshot} -> snapshot {}: {} date(s) restored, rows -{} +{}\n{}",
            rec.snapshot_id, rec.dates_rewritten, rec.rows_replaced, rec.rows_added, rec.fingerprint
        ),
    }
    Ok(0)
}

/// A write the command line asks of the warehouse (--warehouse): Spark does it, on a local[2]
/// master, and the line says what it did. The snapshot numbers are the ones the reports show.
fn warehouse_write(g: &Global, write: crate::warehouse::Write) -> Result<i32> {
    let Some(warehouse) = g.warehouse.clone() else { color_eyre::eyre::bail!("no --warehouse to write") };
    let mirror = open_read(g)?;
    let spark = crate::warehouse::Spark { warehouse, master: "local[2]".into(), late_days: late_days(Window { late_days: None })? };
    let line = crate::progress::Progress::start("spark: starting");
    let done = spark.write(&mirror, write, |p| line.set(format!("spark: {}", p.message), p.done.zip(p.total)))?;
    drop(line);
    println!("{}", crate::sanitize::for_terminal(&done));
    Ok(0)
}

/// `recount reopen`: what the reopening takes in, then its run.
fn reopen(g: &Global, date: Day, reason: &str, by: Option<String>) -> Result<i32> {
    let by = lake::reopen::Decision::by_or_user(by)?;
    if g.warehouse.is_some() {
        let date = reports::resolve_day(&open_read(g)?, date)?;
        return warehouse_write(g, crate::warehouse::Write::Reopen { date, reason: reason.to_string(), by });
    }
    let lab = open(g)?;
    let d = reports::resolve_day(&lab, date)?;
    let plan = lake::reopen::plan(&lab, d)?;
    if g.format != Format::Json {
        println!(
            "reopening {d}: {} basket(s), {}, past its {}-day window (window now {} days)",
            plan.baskets,
            plan.amounts(),
            plan.late_days,
            plan.wider_late_days
        );
    }
    let report = lake::reopen::reopen(&lab, d, lake::reopen::Decision { reason, by: &by }, v2_opts(g, Window { late_days: None }, false)?)?;
    emit_run(&report, g.format)?;
    Ok(0)
}

fn evidence(g: &Global, date: Day, out: &Path) -> Result<i32> {
    let lab = open_read(g)?;
    let date = reports::resolve_day(&lab, date)?;
    for f in reports::evidence::write(&lab, date, out)? {
        println!("{}  {}", f.md5, f.path.display());
    }
    Ok(0)
}

/// A report and, with --baskets, the baskets behind it: a second table after it for people; for
/// CSV the basket rows alone, under one header (a file of one table); JSON holds them already.
fn print_with_baskets<R: Report>(report: &R, baskets: Option<reports::Table>, format: Format) {
    match (baskets, format) {
        (None, f) | (Some(_), f @ Format::Json) => print(report, f),
        (Some(b), Format::Csv) => print!("{}", reports::table::csv_of(&[b])),
        (Some(b), Format::Table) => {
            print(report, Format::Table);
            print!("\n{}", reports::table::render_table_fitted(&b, color(), terminal_width()));
        }
    }
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
    let map = tui.map.as_deref().map(reports::audit::GoldMap::read).transpose()?.unwrap_or_default();
    let audit = tui.audit.map(|gold| crate::tui::worker::AuditSource { gold, map });
    crate::tui::run(crate::tui::TuiOptions {
        // The default lab, wherever RECOUNT_LAB points, is built on first run; a lab named with
        // --lab is opened as it is.
        bootstrap: !matches!(g.sources.lab, crate::config::Source::Flag(_)) && g.warehouse.is_none(),
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

/// The trigger a command's v2 runs record: day by day, a backfill of several uploads, or one.
fn trigger_of(daily: bool, uploads: usize) -> TriggerKind {
    match (daily, uploads) {
        (true, _) => TriggerKind::Daily,
        (false, n) if n > 1 => TriggerKind::Backfill,
        _ => TriggerKind::Upload,
    }
}

/// The Spark driver's `--as-of SNAPSHOT`, when one is named.
fn as_of_args(as_of: Option<i64>) -> Vec<String> {
    as_of.map(|s| vec!["--as-of".to_string(), s.to_string()]).unwrap_or_default()
}

/// The warehouse a `spark` command writes or reads: --warehouse, else $RECOUNT_WAREHOUSE.
fn spark_warehouse(g: &Global) -> Result<PathBuf> {
    g.warehouse
        .clone()
        .or_else(|| std::env::var_os("RECOUNT_WAREHOUSE").filter(|w| !w.is_empty()).map(PathBuf::from))
        .ok_or_else(|| color_eyre::eyre::eyre!("a spark command needs its Iceberg warehouse: --warehouse DIR (or $RECOUNT_WAREHOUSE)"))
}

fn spark_driver(g: &Global, w: &crate::cli::SparkWarehouse) -> Result<crate::spark::Driver> {
    crate::spark::Driver::new(spark_warehouse(g)?, w.master.clone())
}

/// `recount spark ...`: the v2 job on Spark and Iceberg, and what its tables say.
fn spark(g: &Global, command: crate::cli::SparkCommand) -> Result<i32> {
    use crate::cli::{SparkCommand, SparkReader};
    use crate::spark;
    let quiet = |_: &spark::Step| {};
    match command {
        SparkCommand::Setup => spark::setup(&spark::default_home()),
        SparkCommand::Run { range, world, warehouse, window, daily, per_upload } => {
            spark_run(g, &range, world, &warehouse, window, (daily, per_upload))
        }
        SparkCommand::Fingerprint { warehouse, as_of, .. } if spark::holds_model(&spark_warehouse(g)?) => {
            let answer: spark::ModelFingerprintAnswer = spark_driver(g, &warehouse)?.call_local("model-fingerprint", &as_of_args(as_of))?;
            println!("{}", answer.line);
            Ok(0)
        }
        SparkCommand::Fingerprint { warehouse, as_of, reader } => {
            let driver = spark_driver(g, &warehouse)?;
            let mut args = vec!["--reader".to_string(), if reader == SparkReader::Spark { "spark" } else { "pyiceberg" }.to_string()];
            args.extend(as_of_args(as_of));
            let report: spark::SparkFingerprint = driver.call("fingerprint", &args, quiet)?;
            match g.format {
                Format::Table => println!("{}", report.line()),
                f => print(&report, f),
            }
            Ok(0)
        }
        SparkCommand::Snapshots { warehouse, table } => {
            let report: spark::SnapshotsReport = spark_driver(g, &warehouse)?.call("snapshots", &["--table".into(), table], quiet)?;
            print(&report, g.format);
            Ok(0)
        }
        SparkCommand::Evidence { .. } | SparkCommand::Check { .. } | SparkCommand::Reopen { .. }
            if spark::holds_model(&spark_warehouse(g)?) =>
        {
            color_eyre::eyre::bail!(
                "{}: the warehouse holds a model's gold; on it, spark run, fingerprint, snapshots and rollback answer, and a lab of the same world answers the rest",
                spark_warehouse(g)?.display()
            )
        }
        SparkCommand::Evidence { date, warehouse, out } => {
            let args = vec!["--date".to_string(), date.to_string(), "--out".to_string(), out.display().to_string()];
            let report: spark::EvidenceReport = spark_driver(g, &warehouse)?.call("evidence", &args, quiet)?;
            match g.format {
                Format::Json => print_json(&report)?,
                _ => {
                    for f in &report.files {
                        println!("{}  {}", f.md5, crate::sanitize::for_terminal(&f.path.display().to_string()));
                    }
                }
            }
            Ok(0)
        }
        SparkCommand::Check { date, warehouse, as_of } => {
            let mut args = vec!["--date".to_string(), date.to_string()];
            args.extend(as_of_args(as_of));
            let gold: spark::GoldOfDate = spark_driver(g, &warehouse)?.call("gold", &args, quiet)?;
            let lab_dir = lab_dir(g);
            let lab = open_lab_read(g)?;
            let report = spark::SparkCheck::new(date, gold, &lab_dir, reports::lab_gold_by_store(&lab, date)?);
            print(&report, g.format);
            Ok(if report.agree { 0 } else { ENGINES_DISAGREE })
        }
        SparkCommand::Rollback { snapshot, warehouse } if spark::holds_model(&spark_warehouse(g)?) => {
            spark_model_rollback(g, snapshot, &warehouse)
        }
        SparkCommand::Rollback { snapshot, warehouse } => spark_rollback(g, snapshot, &warehouse),
        SparkCommand::Reopen { date, reason, by, warehouse, window } => spark_reopen(g, date, (&reason, by), &warehouse, window),
        SparkCommand::Audit { foreign, window } => spark_audit(g, &foreign, window),
        SparkCommand::Serve { socket, idle, master } => spark::Driver::new(PathBuf::new(), master)?.serve(&socket, idle),
    }
}

/// `recount spark run`: the driver lands and runs the uploads into the warehouse.
/// `modes`: (--daily, --per-upload).
fn spark_run(
    g: &Global,
    range: &Range,
    world: Option<PathBuf>,
    warehouse: &crate::cli::SparkWarehouse,
    window: Window,
    modes: (bool, bool),
) -> Result<i32> {
    let (daily, per_upload) = modes;
    use crate::spark;
    let world = world_or_sample(world);
    let uploads = range.dates();
    let declares =
        world.join(crate::raw::source::SOURCE_FILE).exists() && crate::model::recount::model_of(&world)? != crate::model::retail();
    if declares || spark::holds_model(&spark_warehouse(g)?) {
        return spark_model_run(g, &world, &uploads, warehouse, (late_days(window)?, daily));
    }
    // stores.csv is checked by the lab's own rules before Spark lands anything, and each store
    // currency's ISO-4217 digits (money::digits) are handed to the driver: one rule for both
    // engines, written once.
    let mut args = spark::world_run_args(&world, &uploads, late_days(window)?, daily, trigger_of(daily, uploads.len()).as_str())?;
    let driver = spark_driver(g, warehouse)?;
    if per_upload {
        args.push("--per-upload".into());
    }
    let line = crate::progress::Progress::start("spark: starting");
    let report: spark::SparkRunReport = driver.call("run", &args, |p| line.set(format!("spark: {}", p.message), p.done.zip(p.total)))?;
    drop(line);
    print(&report, g.format);
    // An upload held back: what could land did, and the exit code says not all of it.
    Ok(if report.held().next().is_some() { 1 } else { 0 })
}

/// `recount spark run` of a model's world (`spark/recount_spark/model_warehouse.py`): printed
/// with the lab's own reports of a landing and its runs.
fn spark_model_run(
    g: &Global,
    world: &Path,
    uploads: &[NaiveDate],
    warehouse: &crate::cli::SparkWarehouse,
    (late_days, daily): (u32, bool),
) -> Result<i32> {
    let mut args = vec![
        "--world".to_string(),
        world.display().to_string(),
        "--uploads".into(),
        crate::store::date_list(uploads),
        "--late-days".into(),
        late_days.to_string(),
    ];
    if daily {
        args.push("--daily".into());
    }
    let line = crate::progress::Progress::start("spark: starting");
    let answer: crate::spark::ModelRunAnswer =
        spark_driver(g, warehouse)?.call("model-run", &args, |p| line.set(format!("spark: {}", p.message), p.done.zip(p.total)))?;
    drop(line);
    let missing = !answer.landing.missing.is_empty();
    let model = answer.landing.model.clone();
    let report =
        reports::model_lab::RunsReport { model, landing: Some(answer.landing), runs: answer.runs, fingerprint: answer.fingerprint };
    print(&report, g.format);
    Ok(i32::from(missing))
}

/// `recount spark rollback`: gold (and the silver it names) back to a snapshot, checked against
/// gold as of that snapshot.
/// `spark audit`: the audit of the warehouse's raw zone, through its mirror.
fn spark_audit(g: &Global, foreign: &crate::cli::ForeignGold, window: Window) -> Result<i32> {
    let warehouse = spark_warehouse(g)?;
    if crate::spark::holds_model(&warehouse) {
        color_eyre::eyre::bail!(
            "{}: the warehouse holds a model's gold, whose raw zone recount does not mirror; audit it in a lab (`recount land --world …`, then `recount audit`)",
            warehouse.display()
        );
    }
    audit(&Global { warehouse: Some(warehouse), ..g.clone() }, foreign, window)
}

/// `spark rollback` on a model's warehouse: its gold back to `snapshot`, checked against gold as
/// of the snapshot read before it.
fn spark_model_rollback(g: &Global, snapshot: i64, warehouse: &crate::cli::SparkWarehouse) -> Result<i32> {
    let answer: crate::spark::ModelRollbackAnswer =
        spark_driver(g, warehouse)?.call("model-rollback", &["--snapshot".into(), snapshot.to_string()], |_| {})?;
    println!("spark rollback: gold of model {} is at snapshot {} again\n{}", answer.model, answer.snapshot_id, answer.line);
    if answer.line != answer.target {
        color_eyre::eyre::bail!(
            "spark rollback: gold after the rollback ({}) is not gold as of snapshot {} ({})",
            answer.line,
            answer.snapshot_id,
            answer.target
        );
    }
    Ok(0)
}

fn spark_rollback(g: &Global, snapshot: i64, warehouse: &crate::cli::SparkWarehouse) -> Result<i32> {
    let line = crate::progress::Progress::start(format!("spark: rolling back to snapshot {snapshot}"));
    let report: crate::spark::RollbackReport =
        spark_driver(g, warehouse)?
            .call("rollback", &["--snapshot".into(), snapshot.to_string()], |p| line.set(format!("spark: {}", p.message), None))?;
    drop(line);
    match g.format {
        Format::Json => print_json(&report)?,
        _ => println!(
            "spark rollback: gold is at snapshot {} again (silver at {})\n{}",
            report.snapshot_id,
            report.silver_snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "its first".into()),
            report.fingerprint.line()
        ),
    }
    if report.fingerprint.line() != report.target_fingerprint.line() {
        color_eyre::eyre::bail!(
            "spark rollback: gold after the rollback ({}) is not gold as of snapshot {} ({})",
            report.fingerprint.line(),
            report.snapshot_id,
            report.target_fingerprint.line()
        );
    }
    Ok(0)
}

/// `recount spark reopen`: the driver reopens a date of the warehouse, as `recount reopen` does
/// the lab's, with the decision's words cleaned as the lab cleans them.
fn spark_reopen(
    g: &Global,
    date: NaiveDate,
    (reason, by): (&str, Option<String>),
    warehouse: &crate::cli::SparkWarehouse,
    window: Window,
) -> Result<i32> {
    let by = lake::reopen::Decision::by_or_user(by)?;
    let (args, _) = crate::spark::reopen_args(date, reason, &by, late_days(window)?)?;
    let line = crate::progress::Progress::start(format!("spark: reopening {date}"));
    let report: crate::spark::ReopenReport =
        spark_driver(g, warehouse)?.call("reopen", &args, |p| line.set(format!("spark: {}", p.message), None))?;
    drop(line);
    match g.format {
        Format::Json => print_json(&report)?,
        _ => {
            for run in &report.runs {
                println!(
                    "spark {} -> gold snapshot {}",
                    run.detail.as_deref().unwrap_or("reopen"),
                    run.snapshot_id.map(|s| s.to_string()).unwrap_or_else(|| "none (inputs unchanged)".into())
                );
            }
            println!("{}", report.fingerprint.line());
        }
    }
    Ok(0)
}

/// The manual page from the clap definitions: the one source of every option's text.
fn man(out: Option<&Path>) -> Result<i32> {
    let cmd = <Cli as clap::CommandFactory>::command();
    match out {
        None => man_page(cmd, &mut std::io::stdout())?,
        Some(dir) => {
            std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd.clone(), dir).wrap_err_with(|| format!("writing manual pages to {}", dir.display()))?;
            // The top page, with the sections clap_mangen knows nothing of.
            let top = dir.join("recount.1");
            let mut file = std::fs::File::create(&top).wrap_err_with(|| format!("writing {}", top.display()))?;
            man_page(cmd, &mut file)?;
            println!("manual pages written to {}", dir.display());
        }
    }
    Ok(0)
}

/// recount(1): clap_mangen's sections from the command definitions, then EXIT STATUS,
/// ENVIRONMENT, FILES and the explorer's keys, each from the table the program itself reads.
fn man_page(cmd: clap::Command, out: &mut dyn std::io::Write) -> Result<()> {
    let man = clap_mangen::Man::new(cmd);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    let roff = |s: &str| crate::sanitize::for_terminal(s).replace('\\', "\\e").replace('-', "\\-");
    let mut text = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in crate::cli::EXIT_CODES {
        text.push_str(&format!(".TP\n{code}\n{}\n", roff(meaning)));
    }
    text.push_str(".SH ENVIRONMENT\n");
    for (name, meaning) in crate::cli::ENVIRONMENT {
        text.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(name), roff(meaning)));
    }
    text.push_str(".SH FILES\n.TP\n\\fILAB\\fR/recount.duckdb, \\fILAB\\fR/raw/\nthe lab: one DuckDB file, and the raw zone's immutable copies of every upload and version\n");
    text.push_str(".SH \"EXPLORER KEYS\"\n");
    for (label, line) in crate::tui::keys::help_lines() {
        text.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(label), roff(&line)));
    }
    out.write_all(text.as_bytes())?;
    man.render_version_section(out)?;
    Ok(())
}
