//! `recount spark …`: the same runs and reports on Spark + Iceberg, through the driver.

use super::*;

/// The trigger a command's v2 runs record: day by day, a backfill of several uploads, or one.
pub(super) fn trigger_of(daily: bool, uploads: usize) -> TriggerKind {
    match (daily, uploads) {
        (true, _) => TriggerKind::Daily,
        (false, n) if n > 1 => TriggerKind::Backfill,
        _ => TriggerKind::Upload,
    }
}

/// The warehouse a `spark` command writes or reads: --warehouse, else $RECOUNT_WAREHOUSE.
pub(super) fn spark_warehouse(g: &Global) -> Result<PathBuf> {
    g.warehouse
        .clone()
        .or_else(|| std::env::var_os("RECOUNT_WAREHOUSE").filter(|w| !w.is_empty()).map(PathBuf::from))
        .ok_or_else(|| color_eyre::eyre::eyre!("a spark command needs its Iceberg warehouse: --warehouse DIR (or $RECOUNT_WAREHOUSE)"))
}

pub(super) fn spark_driver(g: &Global, w: &crate::cli::SparkWarehouse) -> Result<crate::spark::Driver> {
    crate::spark::Driver::new(spark_warehouse(g)?, w.master.clone())
}

/// `recount spark ...`: the v2 job on Spark and Iceberg, and what its tables say.
pub(super) fn spark(g: &Global, command: crate::cli::SparkCommand) -> Result<i32> {
    use crate::cli::{SparkCommand, SparkReader};
    use crate::spark;
    match command {
        SparkCommand::Setup => spark::setup(&spark::default_home()),
        SparkCommand::Run { range, world, warehouse, window, daily, per_upload } => {
            spark_run(g, &range, world, &warehouse, window, (daily, per_upload))
        }
        SparkCommand::Fingerprint { warehouse, as_of, .. } if spark::holds_model(&spark_warehouse(g)?) => {
            let answer = spark_driver(g, &warehouse)?.model_fingerprint(as_of)?;
            println!("{}", answer.line);
            Ok(0)
        }
        SparkCommand::Fingerprint { warehouse, as_of, reader } => {
            let reader = if reader == SparkReader::Spark { spark::GoldReader::Spark } else { spark::GoldReader::Pyiceberg };
            let report = spark_driver(g, &warehouse)?.fingerprint(reader, as_of)?;
            match g.format {
                Format::Table => println!("{}", report.line()),
                f => print(&report, f),
            }
            Ok(0)
        }
        SparkCommand::Snapshots { warehouse, table } => {
            let report = spark_driver(g, &warehouse)?.snapshots(&table)?;
            print(&report, g.format);
            Ok(0)
        }
        // A model's warehouse: its evidence is its mirror's, as `--warehouse` reads it.
        SparkCommand::Evidence { date, out, .. } if spark::holds_model(&spark_warehouse(g)?) => {
            let on_warehouse = Global { warehouse: Some(spark_warehouse(g)?), ..g.clone() };
            let command = Command::Evidence { date: crate::reports::day::Day::Date(date), out };
            crate::model_commands::dispatch(&on_warehouse, &command)?.ok_or_else(|| color_eyre::eyre::eyre!("no model's mirror answered"))
        }
        SparkCommand::Check { date, as_of, .. } if spark::holds_model(&spark_warehouse(g)?) => spark_model_check(g, date, as_of),
        SparkCommand::Evidence { date, warehouse, out } => {
            let report = spark_driver(g, &warehouse)?.evidence(date, &out)?;
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
            let gold = spark_driver(g, &warehouse)?.gold(date, as_of)?;
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
pub(super) fn spark_run(
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
    let run = spark::RunOf { world: &world, uploads: &uploads, late_days: late_days(window)?, daily };
    let driver = spark_driver(g, warehouse)?;
    let line = crate::progress::Progress::start("spark: starting");
    let report = driver
        .run(&run, trigger_of(daily, uploads.len()), per_upload, |p| line.set(format!("spark: {}", p.message), p.done.zip(p.total)))?;
    drop(line);
    print(&report, g.format);
    // An upload held back: what could land did, and the exit code says not all of it.
    Ok(if report.held().next().is_some() { 1 } else { 0 })
}

/// `recount spark run` of a model's world (`spark/recount_spark/model_warehouse.py`): printed
/// with the lab's own reports of a landing and its runs.
pub(super) fn spark_model_run(
    g: &Global,
    world: &Path,
    uploads: &[NaiveDate],
    warehouse: &crate::cli::SparkWarehouse,
    (late_days, daily): (u32, bool),
) -> Result<i32> {
    let run = crate::spark::RunOf { world, uploads, late_days, daily };
    let line = crate::progress::Progress::start("spark: starting");
    let answer = spark_driver(g, warehouse)?.model_run(&run, |p| line.set(format!("spark: {}", p.message), p.done.zip(p.total)))?;
    drop(line);
    let missing = !answer.landing.missing.is_empty() || !answer.landing.held.is_empty();
    let model = answer.landing.model.clone();
    let report =
        reports::model_lab::RunsReport { model, landing: Some(answer.landing), runs: answer.runs, fingerprint: answer.fingerprint };
    print(&report, g.format);
    Ok(i32::from(missing))
}

/// `recount spark rollback`: gold (and the silver it names) back to a snapshot, checked against
/// gold as of that snapshot.
/// `spark audit`: the audit of the warehouse's raw zone, through its mirror.
pub(super) fn spark_audit(g: &Global, foreign: &crate::cli::ForeignGold, window: Window) -> Result<i32> {
    let warehouse = spark_warehouse(g)?;
    let on_warehouse = Global { warehouse: Some(warehouse), ..g.clone() };
    // A model's warehouse is audited through its mirror, a model lab.
    let command = Command::Audit { foreign: foreign.clone(), window };
    if let Some(code) = crate::model_commands::dispatch(&on_warehouse, &command)? {
        return Ok(code);
    }
    audit(&on_warehouse, foreign, window)
}

/// `spark check DATE` on a model's warehouse: its gold of the date, read through its mirror,
/// beside the lab's (--lab), which must hold the same model.
fn spark_model_check(g: &Global, date: NaiveDate, as_of: Option<i64>) -> Result<i32> {
    if as_of.is_some() {
        color_eyre::eyre::bail!(
            "check --as-of reads a retail warehouse as it was; on a model's, `recount spark fingerprint --as-of SNAPSHOT` reads its gold as of an Iceberg snapshot"
        );
    }
    let mirror = crate::warehouse::open_telling(&spark_warehouse(g)?)?;
    let model = lake::model::lab_model(&mirror)?.ok_or_else(|| color_eyre::eyre::eyre!("the warehouse's mirror holds no model"))?;
    let lab = open_lab_read(g)?;
    if lake::model::lab_model(&lab)?.as_ref() != Some(&model) {
        color_eyre::eyre::bail!(
            "the lab at {} does not hold model {}: give the lab of the same world (--lab)",
            lab_dir(g).display(),
            model.name
        );
    }
    let of = |l: &Lab| -> Result<Vec<crate::model::recount::ModelRow>> {
        Ok(lake::model::rows_of(&model, l.store().model_gold(None)?).into_iter().filter(|r| r.business_date == date).collect())
    };
    let rows = (of(&mirror)?, of(&lab)?);
    let report = crate::spark::SparkModelCheck::new(model.clone(), date, &lab_dir(g), rows);
    print(&report, g.format);
    Ok(if report.agree { 0 } else { ENGINES_DISAGREE })
}

/// `spark rollback` on a model's warehouse: its gold back to `snapshot`, checked against gold as
/// of the snapshot read before it.
pub(super) fn spark_model_rollback(g: &Global, snapshot: i64, warehouse: &crate::cli::SparkWarehouse) -> Result<i32> {
    let answer = spark_driver(g, warehouse)?.model_rollback(snapshot)?;
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

pub(super) fn spark_rollback(g: &Global, snapshot: i64, warehouse: &crate::cli::SparkWarehouse) -> Result<i32> {
    let line = crate::progress::Progress::start(format!("spark: rolling back to snapshot {snapshot}"));
    let report = spark_driver(g, warehouse)?.rollback(snapshot, |p| line.set(format!("spark: {}", p.message), None))?;
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
pub(super) fn spark_reopen(
    g: &Global,
    date: NaiveDate,
    (reason, by): (&str, Option<String>),
    warehouse: &crate::cli::SparkWarehouse,
    window: Window,
) -> Result<i32> {
    let by = lake::reopen::Decision::by_or_user(by)?;
    let late_days = late_days(window)?;
    // A model's warehouse (`model_warehouse.reopen`): printed with the lab's own report of a run.
    let model = match crate::spark::holds_model(&spark_warehouse(g)?) {
        true => Some(crate::model_commands::warehouse_model(&spark_warehouse(g)?)?),
        false => None,
    };
    let line = crate::progress::Progress::start(format!("spark: reopening {date}"));
    if let Some(model) = model {
        let (run, _) = spark_driver(g, warehouse)?.model_reopen(date, (reason, &by), late_days)?;
        drop(line);
        let fingerprint = run.fingerprint.clone();
        print(&reports::model_lab::RunsReport { model: model.name, landing: None, runs: vec![run], fingerprint }, g.format);
        return Ok(0);
    }
    let (report, _) =
        spark_driver(g, warehouse)?.reopen(date, (reason, &by), late_days, |p| line.set(format!("spark: {}", p.message), None))?;
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
