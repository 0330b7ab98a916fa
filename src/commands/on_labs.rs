//! The commands on a lab's data: v1 and v2 runs, `daily`, `rebuild`, the reports of a date,
//! `rollback`, `reopen`, `evidence`, the explorer and `summary`.

use super::*;

pub(super) fn naive(g: &Global, range: &Range) -> Result<i32> {
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

pub(super) fn run(g: &Global, range: &Range, window: Window, alert: crate::cli::Alert, per_upload: bool) -> Result<i32> {
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
        let code = alerted(alert, &lab, &met)?.unwrap_or(0);
        close(lab);
        return Ok(code);
    }
    let kind = trigger_of(false, landed.len());
    for d in landed {
        let report = v2::run_upload(&lab, d, kind, opts).wrap_err_with(|| format!("v2 for upload {d}"))?;
        emit_run(&report, g.format)?;
        met.extend(report.beyond_window.iter().filter(|b| !b.future_dated).map(|b| (d, b.clone())));
    }
    let code = alerted(alert, &lab, &met)?.unwrap_or(0);
    close(lab);
    Ok(code)
}

/// With `--alert-on beyond-window`: when the runs met rows that arrived for a date already past
/// its window, says which on stderr, counted as a reopening counts them (baskets v2 lacks, and
/// their revenue), with the copies seen, and gives exit code 5.
pub(super) fn alerted(alert: crate::cli::Alert, lab: &Lab, met: &[(NaiveDate, v2::BeyondWindow)]) -> Result<Option<i32>> {
    if alert.alert_on.is_none() || met.is_empty() {
        return Ok(None);
    }
    // One line per upload and date (the runs report a date once per currency).
    let pairs: std::collections::BTreeSet<(NaiveDate, NaiveDate)> = met.iter().map(|(u, b)| (*u, b.business_date)).collect();
    for (u, d) in pairs {
        let b = lake::reopen::brought(lab, d, u)?;
        let amounts = if b.revenue.is_empty() { String::new() } else { format!(", {}", b.amounts()) };
        eprintln!(
            "ALERT beyond-window: upload {u} brought {} row(s) of business date {d} past its window: {} basket(s) v2 has no copy of{amounts} \
             (recount late {d}; a reopening takes them in, if finance decides so)",
            b.copies, b.baskets
        );
    }
    Ok(Some(ALERTED))
}

pub(super) fn daily(g: &Global, range: &Range, world: Option<PathBuf>, window: Window, alert: crate::cli::Alert) -> Result<i32> {
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
    Ok(if code != 0 { code } else { alerted(alert, &lab, &met)?.unwrap_or(0) })
}

pub(super) fn rebuild(g: &Global, dates: &[NaiveDate], force: bool, window: Window) -> Result<i32> {
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

pub(super) fn check(g: &Global, date: Day, as_of: Option<i64>) -> Result<i32> {
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

pub(super) fn explain(g: &Global, date: Day, baskets: bool) -> Result<i32> {
    let lab = open_fresh(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::explain::explain(&lab, date)?;
    print_with_baskets(&report, baskets.then(|| report.baskets_table()), g.format);
    Ok(0)
}

pub(super) fn fingerprint(g: &Global, as_of: Option<i64>) -> Result<i32> {
    let lab = open_read(g)?;
    print_fingerprint(&reports::fingerprint(&lab, as_of)?, g.format);
    Ok(0)
}

pub(super) fn diff(g: &Global, date: Day, from: Option<i64>, to: Option<i64>, baskets: bool) -> Result<i32> {
    let lab = open_read(g)?;
    let date = reports::resolve_day(&lab, date)?;
    let report = reports::history::diff(&lab, date, from, to)?;
    print_with_baskets(&report, baskets.then(|| report.baskets_table()), g.format);
    Ok(0)
}

pub(super) fn rollback(g: &Global, snapshot: i64, yes: bool) -> Result<i32> {
    if let Some(w) = &g.warehouse {
        if !confirmed(yes, &format!("rollback puts the warehouse {} back to snapshot {snapshot}, as a new snapshot", w.display()))? {
            return Ok(USAGE);
        }
        return warehouse_write(g, crate::warehouse::Write::Rollback(snapshot));
    }
    let lab = open(g)?;
    let dates = lake::snapshot::rollback_changes(&lab, snapshot)?;
    if let Some(code) = rollback_ends_here(&dates, snapshot, yes)? {
        return Ok(code);
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
pub(super) fn warehouse_write(g: &Global, write: crate::warehouse::Write) -> Result<i32> {
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
pub(super) fn reopen(g: &Global, date: Day, reason: &str, by: Option<String>) -> Result<i32> {
    let by = lake::reopen::Decision::by_or_user(by)?;
    if g.warehouse.is_some() {
        let date = reports::resolve_day(&open_read(g)?, date)?;
        return warehouse_write(g, crate::warehouse::Write::Reopen { date, reason: reason.to_string(), by });
    }
    let lab = open(g)?;
    let d = reports::resolve_day(&lab, date)?;
    let plan = lake::reopen::plan(&lab, d)?;
    if g.format != Format::Json {
        println!("{}", plan.line("basket"));
    }
    let report = lake::reopen::reopen(&lab, d, lake::reopen::Decision { reason, by: &by }, v2_opts(g, Window { late_days: None }, false)?)?;
    emit_run(&report, g.format)?;
    Ok(0)
}

pub(super) fn evidence(g: &Global, date: Day, out: &Path) -> Result<i32> {
    let lab = open_read(g)?;
    let date = reports::resolve_day(&lab, date)?;
    for f in reports::evidence::write(&lab, date, out)? {
        println!("{}  {}", f.md5, f.path.display());
    }
    Ok(0)
}
