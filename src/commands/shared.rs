//! What every command family shares, and the model commands with them: the lab opened for
//! writing or reading, the settings in effect (the window, the memory budget, the config file),
//! printing a report fitted to the terminal, an audit's exit code, and asking before a change.
//! It imports no command family, so each may use it without a circle.

use crate::cli::{FOUND_WRONG, Global, Window};
use crate::lake::{self, Lab};
use crate::reports::{self, Format, Report};
use color_eyre::eyre::{Result, WrapErr};
use std::io::IsTerminal;
use std::path::PathBuf;

/// The --color choice, set once per process by `dispatch`.
pub(crate) static COLOR: std::sync::OnceLock<crate::cli::ColorChoice> = std::sync::OnceLock::new();

pub(crate) fn color() -> bool {
    COLOR.get().copied().unwrap_or_default().on(std::io::stdout().is_terminal())
}

/// The terminal's width, when stdout is one: tables are narrowed to it.
pub(crate) fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::size().ok().map(|(w, _)| usize::from(w)).filter(|w| *w >= 20)
}

/// Prints `report` in `format`, fitted to the terminal (the bench prints its reports so too).
pub fn print<R: Report>(report: &R, format: Format) {
    let bom = if format == Format::Csv && BOM.get().copied().unwrap_or(false) { "\u{feff}" } else { "" };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = std::io::Write::write_all(&mut out, bom.as_bytes())
        .and_then(|()| reports::table::write_fitted(report, format, color(), terminal_width(), &mut out))
        .and_then(|()| std::io::Write::flush(&mut out));
    // A closed pipe (`| head`) ends the output, as it ends any command's; a full disk is an error.
    if let Err(e) = written.or_else(|e| if e.kind() == std::io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e) }) {
        eprintln!("error: writing the report: {e}");
        std::process::exit(1);
    }
}

/// A report and, with --baskets, the baskets behind it: a second table after it for people; for
/// CSV the basket rows alone, under one header (a file of one table); JSON holds them already.
pub(crate) fn print_with_baskets<R: Report>(report: &R, baskets: Option<reports::Table>, format: Format) {
    match (baskets, format) {
        (None, f) | (Some(_), f @ Format::Json) => print(report, f),
        (Some(b), Format::Csv) => print!("{}", reports::table::csv_of(&[b])),
        (Some(b), Format::Table) => {
            print(report, Format::Table);
            print!("\n{}", reports::table::render_table_fitted(&b, color(), terminal_width()));
        }
    }
}

/// `--bom`: CSV begins with a UTF-8 byte-order mark, by which a spreadsheet on Windows reads £
/// and ₹ as they are.
pub(crate) static BOM: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The config file and the environment, read once per process when a command needs them.
pub(crate) static CONFIG: std::sync::OnceLock<crate::config::Config> = std::sync::OnceLock::new();

pub(crate) fn config() -> Result<&'static crate::config::Config> {
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
pub(crate) fn memory(global: &Global) -> Result<crate::config::Setting<u64>> {
    Ok(match global.memory {
        Some(value) => crate::config::Setting { value, source: crate::config::SettingSource::Flag("--memory".into()) },
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

/// What a report reads, read-only: the warehouse's mirror with --warehouse (crates/spark/src/warehouse/),
/// else the lab.
pub(crate) fn open_read(global: &Global) -> Result<Lab> {
    match &global.warehouse {
        Some(w) => crate::warehouse::open_telling(w),
        None => open_lab_read(global),
    }
}

/// The lab, for a report: read-only, beside an open explorer or other reports. A lab that does
/// not exist is an error naming the path: a typo'd --lab never reads as an empty lab.
pub(crate) fn open_lab_read(global: &Global) -> Result<Lab> {
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
pub(crate) fn open_fresh(global: &Global) -> Result<Lab> {
    let mut lab = open_read(global)?;
    reports::freshen(&mut lab)?;
    Ok(lab)
}

pub(crate) fn world_or_sample(world: Option<PathBuf>) -> PathBuf {
    world.unwrap_or_else(lake::sample_world_dir)
}

/// An audit printed, or its rows by one field (`--by`), for retail and every model: exit
/// FOUND_WRONG when any row is wrong.
pub(crate) fn audited<R: Report>(
    g: &Global,
    report: &R,
    wrong: usize,
    placed: &reports::audit_where::WhereWrong,
    by: Option<&str>,
) -> Result<i32> {
    match by {
        Some(field) => print(&placed.by(&report.headline(), field)?, g.format),
        None => print(report, g.format),
    }
    Ok(if wrong > 0 { FOUND_WRONG } else { 0 })
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

/// The fingerprint's line in a terminal, its report (rows and md5) for machines: on every lab.
pub(crate) fn print_fingerprint(report: &crate::reports::FingerprintReport, format: crate::reports::Format) {
    match format {
        crate::reports::Format::Table => println!("{}", report.line),
        f => print(report, f),
    }
}

/// Where a rollback to `snapshot` ends before it writes, on every lab (`dates`: what it would
/// restore): with nothing to restore it says so and ends (exit 0); otherwise it asks, naming the
/// dates, or takes --yes, and a refusal ends it (USAGE). None: it goes ahead.
pub(crate) fn rollback_ends_here(dates: &[chrono::NaiveDate], snapshot: i64, yes: bool) -> color_eyre::eyre::Result<Option<i32>> {
    let (Some(first), Some(last)) = (dates.first(), dates.last()) else {
        println!("snapshot {snapshot}'s silver and gold are already current: nothing to roll back, and no snapshot written");
        return Ok(Some(0));
    };
    let what = format!(
        "rollback puts {} business date(s) ({first} .. {last}) back as they were at snapshot {snapshot}, as a new snapshot",
        dates.len()
    );
    Ok((!confirmed(yes, &what)?).then_some(crate::cli::USAGE))
}
