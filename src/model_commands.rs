//! The commands on a lab of a model other than retail (`lake::model`): `commands` hands a
//! command here when the lab holds a model, when `land` is given a model's world, or when
//! `--warehouse` names a model's warehouse (read through its mirror, a model lab). Each asks
//! `lake::model` or `reports::model_lab` for structs and prints them like every other report.
//! A command that does not read a model lab yet says so, naming the model, rather than reading
//! retail's empty tables.

use crate::cli::{Command, Global, Range};
use crate::commands::shared::{lab_dir, late_days, open, print, world_or_sample};
use crate::lake::{Lab, model as lab_model};
use crate::model::Model;
use crate::reports::model_lab;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::Path;

/// Whether the lab at `root` may hold a model: its kept file versions' folder exists (checked
/// before anything opens a retail lab, so retail pays nothing for it).
fn may_hold_model(root: &Path) -> bool {
    root.join("raw").join("model").is_dir()
}

/// Whether the lab at `root` holds a model: a model's folder in its raw zone and the model's
/// definition in its database. A first landing that failed rolls the definition back and may
/// leave the folder: the lab then holds nothing yet, and the next daily run takes the model again.
fn holds_model(root: &Path) -> Result<bool> {
    if !may_hold_model(root) {
        return Ok(false);
    }
    Ok(lab_model::lab_model(&Lab::open_read(root)?)?.is_some())
}

/// Runs `command` if it is about a model lab (or lands a model's world); None: retail's.
pub(crate) fn dispatch(g: &Global, command: &Command) -> Result<Option<i32>> {
    if let Some(w) = &g.warehouse {
        // A model's warehouse is read through its mirror, a model lab (crates/spark/src/warehouse/); a write
        // is refused here, since Spark writes the warehouse and no write may change a mirror.
        if !reads_lab(command) || !crate::spark::holds_model(w) {
            return Ok(None);
        }
        match command {
            Command::Naive { range } => return naive_on_spark(w, &range.dates()).map(Some),
            Command::Rebuild { dates, force, window } => return rebuild_on_spark(g, w, dates, *force, *window).map(Some),
            _ => {}
        }
        if matches!(command, Command::Run { .. } | Command::Daily { .. } | Command::Reopen { .. } | Command::Rollback { .. }) {
            bail!(
                "the warehouse {} holds a model's gold, which Spark writes: `recount spark run` lands and runs v2, `recount naive` and `recount rebuild` with --warehouse run v1 and rebuild dates, `recount spark reopen DATE` reopens a date and `recount spark rollback SNAPSHOT` rolls back to an Iceberg snapshot (`recount spark snapshots` lists them)",
                w.display()
            );
        }
        return on_model_lab(g, command, &warehouse_model(w)?).map(Some);
    }
    if let Command::Land { range, world, model, .. } = command {
        return land(g, range, world.clone(), model.as_deref());
    }
    // A first daily run of a model's world: the lab takes the world's model.
    if let Command::Daily { world: Some(world), .. } = command
        && declares_model(world, None)?
        && !holds_model(&lab_dir(g))?
    {
        let lab = open(g)?;
        let model = lab_model::model_for_landing(&lab, world, None)?.ok_or_else(|| eyre!("{} declares no model", world.display()))?;
        drop(lab);
        return on_model_lab(g, command, &model).map(Some);
    }
    let root = lab_dir(g);
    if !reads_lab(command) || !may_hold_model(&root) {
        return Ok(None);
    }
    let lab = Lab::open_read(&root)?;
    let Some(model) = lab_model::lab_model(&lab)? else { return Ok(None) };
    drop(lab);
    on_model_lab(g, command, &model).map(Some)
}

/// `recount` with no command and no terminal, on a model lab: retail's glance in the model's
/// words (the lab, gold's fingerprint, the morning's line and the check of the fourth newest
/// date). None: the lab holds no model.
pub(crate) fn glance(g: &Global) -> Result<Option<i32>> {
    let root = lab_dir(g);
    if g.warehouse.is_some() || !may_hold_model(&root) {
        return Ok(None);
    }
    let Some(model) = lab_model::lab_model(&Lab::open_read(&root)?)? else { return Ok(None) };
    let lab = counting_reader(g, &model)?;
    let late = late_days(crate::cli::Window { late_days: None })?;
    println!("{}", crate::sanitize::for_terminal(&format!("lab {}", root.display())));
    println!("{}", lab_model::fingerprint(&lab, &model, None)?);
    println!("{}\n", crate::sanitize::for_terminal(&crate::reports::summary::model_banner(&lab, &model, late)?));
    if let Some(d) = gold_dates(&lab)?.iter().rev().nth(3) {
        print(&crate::reports::check::model_check(&lab, &model, *d, late, None)?, g.format);
    }
    Ok(Some(0))
}

/// The model a warehouse holds, from its mirror: read before a write, while the mirror is most
/// likely current (after one, the warehouse's new commit makes it build again).
pub(crate) fn warehouse_model(warehouse: &Path) -> Result<Model> {
    lab_model::lab_model(&crate::warehouse::open_telling(warehouse)?)?
        .ok_or_else(|| eyre!("{}: its mirror holds no model", warehouse.display()))
}

/// v1 on a model's warehouse, run date by run date, through the Spark job
/// (`model_warehouse.naive`): each appends, so a retry doubles the date, on purpose.
fn naive_on_spark(warehouse: &Path, dates: &[NaiveDate]) -> Result<i32> {
    let model = warehouse_model(warehouse)?;
    let driver = crate::spark::Driver::new(warehouse.to_path_buf(), "local[2]".into())?;
    let mut rows = 0;
    for d in dates {
        let answer = driver.model_naive(*d)?;
        rows += answer.rows_added;
    }
    println!("v1 (append) on Spark: {rows} row(s) appended to model {}'s naive table", model.name);
    Ok(0)
}

/// `rebuild DATES --warehouse` on a model's warehouse, through the Spark job
/// (`model_warehouse.rebuild`): each date skipped when its input is its version's own, unless
/// `force`.
fn rebuild_on_spark(g: &Global, warehouse: &Path, dates: &[NaiveDate], force: bool, window: crate::cli::Window) -> Result<i32> {
    let model = warehouse_model(warehouse)?;
    let driver = crate::spark::Driver::new(warehouse.to_path_buf(), "local[2]".into())?;
    let run = driver.model_rebuild(dates, late_days(window)?, force)?;
    let fingerprint = run.fingerprint.clone();
    print(&model_lab::RunsReport { model: model.name, landing: None, runs: vec![run], fingerprint }, g.format);
    Ok(0)
}

/// Whether `command` reads or writes a lab (not `land`, which is handled first, nor a command
/// about worlds, settings or Spark).
fn reads_lab(command: &Command) -> bool {
    matches!(
        command,
        Command::Summary
            | Command::Naive { .. }
            | Command::Run { .. }
            | Command::Daily { .. }
            | Command::Rebuild { .. }
            | Command::Trend { .. }
            | Command::Reopen { .. }
            | Command::Check { .. }
            | Command::Explain { .. }
            | Command::Lateness { .. }
            | Command::Fingerprint { .. }
            | Command::Late { .. }
            | Command::Quarantine { .. }
            | Command::Promises { .. }
            | Command::Audit { .. }
            | Command::Baskets { .. }
            | Command::Snapshots
            | Command::History { .. }
            | Command::Diff { .. }
            | Command::Rollback { .. }
            | Command::Evidence { .. }
    )
}

fn land(g: &Global, range: &Range, world: Option<std::path::PathBuf>, asked: Option<&str>) -> Result<Option<i32>> {
    let world = world_or_sample(world);
    let asked = asked.map(crate::model::built_in).transpose()?;
    if !declares_model(&world, asked.as_ref())? && !may_hold_model(&lab_dir(g)) {
        return Ok(None);
    }
    let mut lab = open(g)?;
    let Some(model) = lab_model::model_for_landing(&lab, &world, asked.as_ref())? else { return Ok(None) };
    let landing =
        lab_model::land(&mut lab, &world, &model, &range.dates()).wrap_err_with(|| format!("landing from {}", world.display()))?;
    let failed = !landing.missing.is_empty() || !landing.held.is_empty();
    print(&model_lab::LandingReport { landing }, g.format);
    Ok(Some(i32::from(failed)))
}

/// Whether `asked` or the world's recount.toml names a model other than retail.
pub(crate) fn declares_model(world: &Path, asked: Option<&Model>) -> Result<bool> {
    Ok(asked.is_some_and(|m| *m != crate::model::retail())
        || world.join(crate::raw::source::SOURCE_FILE).exists() && crate::model::recount::model_of(world)? != crate::model::retail())
}

/// A lab's business dates as `Day` resolves them: every date gold holds, and the newest upload.
fn resolve(lab: &Lab, day: crate::reports::day::Day) -> Result<NaiveDate> {
    resolve_among(lab, day, gold_dates(lab)?)
}

/// The same over every date the landed records hold, gold's or not: what `late` lists (a date
/// whose records all arrived past its window is in no version of gold, and a run points at it).
fn resolve_landed(lab: &Lab, day: crate::reports::day::Day) -> Result<NaiveDate> {
    let mut dates = gold_dates(lab)?;
    dates.extend(lab.store().model_record_dates()?);
    dates.sort();
    dates.dedup();
    resolve_among(lab, day, dates)
}

/// The dates some version of gold holds.
fn gold_dates(lab: &Lab) -> Result<Vec<NaiveDate>> {
    Ok(lab.store().model_versions_at(None)?.into_iter().map(|v| v.business_date).collect())
}

/// `day` among `dates` (oldest first), `yesterday` by the newest upload.
fn resolve_among(lab: &Lab, day: crate::reports::day::Day, dates: Vec<NaiveDate>) -> Result<NaiveDate> {
    let newest = lab.store().model_uploads(None)?.last().copied();
    day.resolve_in(&dates, newest).map_err(|e| eyre!(e))
}

/// What a report reads: the lab, or with --warehouse the warehouse's mirror.
fn reader(g: &Global) -> Result<Lab> {
    match &g.warehouse {
        Some(w) => crate::warehouse::open_telling(w),
        None => Lab::open_read(&lab_dir(g)),
    }
}

/// `reader`, for a report that reads the independent recount: the lab's kept recount is brought
/// up to date first (`lab_model::freshen`), as retail's reports' caches are. The others (a
/// fingerprint, history, a listing) never count the raw zone.
fn counting_reader(g: &Global, model: &Model) -> Result<Lab> {
    let mut lab = reader(g)?;
    if g.warehouse.is_none() {
        lab_model::freshen(&mut lab, model)?;
    }
    Ok(lab)
}

fn on_model_lab(g: &Global, command: &Command, model: &Model) -> Result<i32> {
    match command {
        Command::Daily { world: None, .. } => bail!("daily on a lab of model {} lands from its world: give --world", model.name),
        Command::Run { range, window, alert, .. } => {
            let lab = open(g)?;
            let late = late_days(*window)?;
            let runs = lab_model::run(&lab, model, &range.dates(), late)?;
            // Each run carries gold's fingerprint after it; the last one's is gold's now.
            let fingerprint = match runs.last() {
                Some(r) => r.fingerprint.clone(),
                None => lab_model::fingerprint(&lab, model, None)?,
            };
            let code = alerted(*alert, &lab, model, &runs, late)?;
            print(&model_lab::RunsReport { model: model.name.clone(), landing: None, runs, fingerprint }, g.format);
            return Ok(code.unwrap_or(0));
        }
        Command::Daily { range, world: Some(world), window, alert } => return daily(g, model, range, world, *window, *alert),
        Command::Naive { range } => {
            let lab = open(g)?;
            let rows = lab_model::naive(&lab, &range.dates())?;
            println!("v1 (append): {rows} row(s) appended to model {}'s naive table", model.name);
        }
        Command::Fingerprint { as_of } => {
            let report = crate::reports::model_fingerprint(&reader(g)?, model, *as_of)?;
            crate::commands::shared::print_fingerprint(&report, g.format);
        }
        Command::Snapshots => print(&model_lab::snapshots(&reader(g)?, model)?, g.format),
        Command::History { date, as_of } => history(g, model, *date, *as_of)?,
        Command::Diff { date, from, to, baskets } => diff(g, model, *date, (*from, *to), *baskets)?,
        Command::Check { as_of: Some(_), .. } if g.warehouse.is_some() => {
            bail!(
                "check --as-of reads a lab's raw zone as it was; a warehouse keeps no raw files: `fingerprint --as-of` and `history DATE --as-of` read a snapshot of model {}'s gold",
                model.name
            )
        }
        Command::Check { date, as_of } => {
            let lab = counting_reader(g, model)?;
            let d = resolve_landed(&lab, date.unwrap_or(crate::reports::day::Day::Yesterday))?;
            let report = crate::reports::check::model_check(&lab, model, d, late_days(crate::cli::Window { late_days: None })?, *as_of)?;
            print(&report, g.format);
        }
        Command::Rollback { snapshot, yes } => return rollback(g, model, *snapshot, *yes),
        Command::Audit { foreign, window } => return audit(g, model, foreign, *window),
        Command::Reopen { date, reason, by } => {
            let by = crate::lake::reopen::Decision::by_or_user(by.clone())?;
            let (reason, by) = crate::lake::reopen::Decision { reason, by: &by }.cleaned()?;
            let lab = open(g)?;
            let d = resolve(&lab, *date)?;
            if g.format != crate::reports::Format::Json {
                println!("{}", lab_model::reopen_plan(&lab, model, d, crate::rules::DEFAULT_LATE_DAYS)?.line(&model.entity));
            }
            let run = lab_model::reopen(&lab, model, d, crate::rules::DEFAULT_LATE_DAYS, (&reason, &by))?;
            let fingerprint = run.fingerprint.clone();
            print(&model_lab::RunsReport { model: model.name.clone(), landing: None, runs: vec![run], fingerprint }, g.format);
        }
        Command::Rebuild { dates, force, window } => {
            let lab = open(g)?;
            let run = lab_model::rebuild(&lab, model, dates, late_days(*window)?, *force)?;
            let fingerprint = run.fingerprint.clone();
            print(&model_lab::RunsReport { model: model.name.clone(), landing: None, runs: vec![run], fingerprint }, g.format);
        }
        reading => return day_report(g, reading, model),
    }
    Ok(0)
}

/// `diff DATE [--from S] [--to S] [--baskets]`: a model's diff lists the entities the change
/// touched in every format; --baskets, as on a retail lab, makes the CSV those rows alone.
fn diff(g: &Global, model: &Model, date: crate::reports::day::Day, between: (Option<i64>, Option<i64>), baskets: bool) -> Result<()> {
    let lab = reader(g)?;
    let report = model_lab::history(&lab, model, resolve(&lab, date)?, between, None)?;
    match (baskets, g.format) {
        (true, crate::reports::Format::Csv) => {
            let entities: Vec<_> = crate::reports::Report::tables(&report).into_iter().last().into_iter().collect();
            print!("{}", crate::reports::table::csv_of(&entities));
        }
        _ => print(&report, g.format),
    }
    Ok(())
}

/// `history DATE [--as-of S]`: up to snapshot S, its newest version of the date against the one
/// before.
fn history(g: &Global, model: &Model, date: crate::reports::day::Day, as_of: Option<i64>) -> Result<()> {
    let lab = reader(g)?;
    let d = resolve(&lab, date)?;
    let (from, to) = match as_of {
        None => (None, None),
        Some(s) => {
            let ids: Vec<i64> = lab.store().model_date_versions(d)?.into_iter().map(|v| v.snapshot_id).filter(|id| *id <= s).collect();
            let Some(&to) = ids.last() else { bail!("{d} has no version at or before snapshot {s}") };
            (ids.len().checked_sub(2).map(|i| ids[i]), Some(to))
        }
    };
    let now = if as_of.is_none() { Some(late_days(crate::cli::Window { late_days: None })?) } else { None };
    print(&model_lab::history(&lab, model, d, (from, to), now)?, g.format);
    Ok(())
}

/// The reports of a date, or of every date, on a model lab.
fn day_report(g: &Global, command: &Command, model: &Model) -> Result<i32> {
    match command {
        Command::Summary => {
            let lab = reader(g)?;
            print(&crate::reports::summary::model_summary(&lab, model, late_days(crate::cli::Window { late_days: None })?)?, g.format);
        }
        Command::Trend { country } => {
            let dates =
                crate::reports::model_day::dates(&counting_reader(g, model)?, model, late_days(crate::cli::Window { late_days: None })?)?;
            print(&crate::reports::trend::TrendReport::of_model(&dates).only(country.as_deref())?, g.format);
        }
        Command::Late { date, window } => {
            let lab = reader(g)?;
            // No date: every date's, as on retail's lab.
            let d = date.map(|d| resolve_landed(&lab, d)).transpose()?;
            print(&crate::reports::listings::model_late(&lab, model, d, late_days(*window)?)?, g.format);
        }
        Command::Promises { date } => {
            let lab = counting_reader(g, model)?;
            let d = resolve_landed(&lab, *date)?;
            let check = crate::reports::check::model_check(&lab, model, d, late_days(crate::cli::Window { late_days: None })?, None)?;
            let report = crate::reports::promises::model_promises(&lab, &check)?;
            print(&report, g.format);
            return Ok(if report.failed() { crate::cli::FOUND_WRONG } else { 0 });
        }
        Command::Lateness { by_country } => {
            let late = late_days(crate::cli::Window { late_days: None })?;
            print(&crate::reports::lateness::model_lateness(&reader(g)?, model, *by_country, late)?, g.format);
        }
        Command::Explain { date, baskets } => {
            let lab = counting_reader(g, model)?;
            let report = crate::reports::explain::model_explain(&lab, model, resolve(&lab, *date)?)?;
            crate::commands::shared::print_with_baskets(&report, baskets.then(|| report.baskets_table()), g.format);
        }
        Command::Evidence { date, out } => {
            let lab = counting_reader(g, model)?;
            for f in crate::reports::model_day::evidence(&lab, model, resolve(&lab, *date)?, out)? {
                println!("{}  {}", f.md5, f.path.display());
            }
        }
        Command::Baskets { date, window } => {
            let lab = reader(g)?;
            print(&crate::reports::baskets::model_resent(&lab, model, resolve(&lab, *date)?, late_days(*window)?)?, g.format);
        }
        Command::Quarantine { upload } if g.warehouse.is_some() => {
            // The warehouse keeps each file's count of refused lines, not the lines.
            let lab = reader(g)?;
            let uploads: Vec<NaiveDate> =
                lab.store().model_uploads(None)?.into_iter().filter(|u| upload.is_none_or(|want| *u == want)).collect();
            let n: i64 = lab.store().model_files_of_uploads(&uploads)?.iter().map(|f| f.quarantined).sum();
            println!(
                "{n} line(s) quarantined in the warehouse's current files; it keeps their count, not the lines: `recount quarantine` in a lab of the same world lists them"
            );
        }
        Command::Quarantine { upload } => print(&crate::reports::listings::quarantine(&reader(g)?, *upload)?, g.format),
        other => bail!(
            "`recount {}` does not read a lab of model {} yet; land, run, daily, naive, fingerprint, snapshots, history, diff, check, explain, promises, lateness, summary, trend, late, baskets, evidence, rebuild, reopen, rollback, audit and quarantine do",
            command_name(other),
            model.name
        ),
    }
    Ok(0)
}

/// The subcommand's name, as typed.
fn command_name(command: &Command) -> String {
    let debug = format!("{command:?}");
    debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default().to_lowercase()
}

/// With `--alert-on beyond-window`, as on a retail lab and in its words: when the runs met rows
/// that arrived for a date already past its window, says on stderr which upload brought how many
/// rows of which date, counted as a reopening counts them (the entities gold has no copy of, and
/// their money), and gives exit code 5.
fn alerted(alert: crate::cli::Alert, lab: &Lab, model: &Model, runs: &[lab_model::ModelRun], late_days: u32) -> Result<Option<i32>> {
    if alert.alert_on.is_none() || runs.iter().all(|r| r.beyond_window == 0) {
        return Ok(None);
    }
    let uploads: Vec<NaiveDate> = runs.iter().filter(|r| r.beyond_window > 0).flat_map(|r| r.uploads.iter().copied()).collect();
    for (u, d) in lab_model::beyond_pairs(lab, &uploads, late_days)? {
        let b = lab_model::brought(lab, model, d, u, late_days)?;
        let amounts = if b.revenue.is_empty() { String::new() } else { format!(", {}", b.amounts()) };
        eprintln!(
            "ALERT beyond-window: upload {u} brought {} row(s) of business date {d} past its window: {} {}(s) v2 has no copy of{amounts} \
             (recount late {d}; a reopening takes them in, if finance decides so)",
            b.copies, b.baskets, model.entity
        );
    }
    Ok(Some(crate::cli::ALERTED))
}

/// `rollback SNAPSHOT` on a model lab, asked as retail's is (`shared::rollback_ends_here`).
fn rollback(g: &Global, model: &Model, snapshot: i64, yes: bool) -> Result<i32> {
    let lab = open(g)?;
    let dates: Vec<NaiveDate> = lab_model::rollback_changes(&lab, snapshot)?.into_iter().map(|c| c.0).collect();
    if let Some(code) = crate::commands::shared::rollback_ends_here(&dates, snapshot, yes)? {
        return Ok(code);
    }
    let id = lab_model::rollback(&lab, model, snapshot)?;
    println!("rolled back to snapshot {snapshot} as snapshot {id}: {}", lab_model::fingerprint(&lab, model, None)?);
    Ok(0)
}

/// `daily --world W` on a model lab: each upload landed, then run.
fn daily(g: &Global, model: &Model, range: &Range, world: &Path, window: crate::cli::Window, alert: crate::cli::Alert) -> Result<i32> {
    let mut lab = open(g)?;
    let late = late_days(window)?;
    let (mut runs, mut landed) = (Vec::new(), None::<lab_model::ModelLanding>);
    for d in range.dates() {
        let landing = lab_model::land(&mut lab, world, model, &[d])?;
        // A held upload landed nothing, so it gets no run.
        if landing.held.is_empty() {
            runs.extend(lab_model::run(&lab, model, &[d], late)?);
        }
        match &mut landed {
            Some(all) => {
                all.files.extend(landing.files);
                all.missing.extend(landing.missing);
                all.dimension_changed.extend(landing.dimension_changed);
                all.dimension_removed = landing.dimension_removed;
                all.held.extend(landing.held);
            }
            None => landed = Some(landing),
        }
    }
    let missing = landed.as_ref().is_some_and(|l| !l.missing.is_empty() || !l.held.is_empty());
    // The last run's fingerprint is gold's now (a landing after it changes no gold): read at 10x
    // the world, gold whole again cost most of a day's run.
    let fingerprint = match runs.last() {
        Some(r) => r.fingerprint.clone(),
        None => lab_model::fingerprint(&lab, model, None)?,
    };
    let code = alerted(alert, &lab, model, &runs, late)?;
    print(&model_lab::RunsReport { model: model.name.clone(), landing: landed, runs, fingerprint }, g.format);
    Ok(code.unwrap_or(i32::from(missing)))
}

/// `audit --gold SOURCE` on a model lab: exit FOUND_WRONG when any row is wrong.
fn audit(g: &Global, model: &Model, foreign: &crate::cli::ForeignGold, window: crate::cli::Window) -> Result<i32> {
    let map = foreign.map.as_deref().map(crate::reports::foreign::GoldMap::read).transpose()?.unwrap_or_default();
    let lab = counting_reader(g, model)?;
    let spill = crate::reports::audit_spill::spill_of(&lab);
    let rows = crate::reports::model_audit::read_foreign(&foreign.gold, &lab, model, &map, &crate::warehouse::foreign_table_files, &spill)?;
    let mut report = crate::reports::model_audit::audit(&lab, model, &foreign.gold.display().to_string(), rows, late_days(window)?)?;
    report.all = foreign.all || g.format != crate::reports::Format::Table;
    crate::commands::shared::audited(g, &report, report.wrong(), report.where_wrong(), foreign.by.as_deref())
}

/// `generate --foreign-gold --out FILE --world W` for a model's world: landed and run upload by
/// upload in a lab of its own, then its gold, in gold's columns, with one row of each fault; the
/// faulty rows and their causes go to stderr.
pub(crate) fn generate_foreign_gold(out: &Path, world: &Path) -> Result<i32> {
    let dir = tempfile::tempdir()?;
    let mut lab = crate::lake::Lab::open(dir.path())?;
    let Some(model) = lab_model::model_for_landing(&lab, world, None)? else {
        bail!("{}: its recount.toml names no model", world.display());
    };
    let late = crate::rules::DEFAULT_LATE_DAYS;
    let uploads: std::collections::BTreeSet<chrono::NaiveDate> =
        crate::model::recount::files_of(world, &model)?.into_iter().map(|f| f.0).collect();
    for d in uploads {
        lab_model::land(&mut lab, world, &model, &[d]).wrap_err_with(|| format!("landing upload {d} from {}", world.display()))?;
        lab_model::run(&lab, &model, &[d], late)?;
    }
    let (rows, faults) = crate::reports::model_audit::example(&lab, &model, late)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(model.gold_columns())?;
    for r in &rows {
        let mut cells = vec![r.business_date.to_string()];
        cells.extend(r.grain.iter().chain(&r.attributes).map(|t| crate::sanitize::for_csv(t).into_owned()));
        cells.extend(r.measures.iter().map(i64::to_string));
        w.write_record(&cells)?;
    }
    std::fs::write(out, w.into_inner().map_err(|e| eyre!("{e}"))?).wrap_err_with(|| format!("writing {}", out.display()))?;
    eprintln!("{}: {} rows, {} of them wrong on purpose:", out.display(), rows.len(), faults.len());
    for (d, g, cause) in &faults {
        eprintln!("  {d} {}: {}", crate::sanitize::for_terminal(&g.join("/")), cause.word());
    }
    Ok(0)
}
