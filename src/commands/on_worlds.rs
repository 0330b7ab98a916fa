//! The commands that make or read a world rather than a lab: `demo`, `generate`, `land`,
//! `source check`, `reset`, `man`.

use super::*;

pub(super) fn demo(g: &Global, no_pause: bool, yes: bool, world: Option<PathBuf>) -> Result<i32> {
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

pub(super) fn generate(
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

pub(super) fn land_range(g: &Global, range: &Range, world: Option<PathBuf>, source: Option<PathBuf>) -> Result<i32> {
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
/// `generate --foreign-gold --out FILE`: the world landed and run day by day in a lab of its own
/// (a temporary directory), then its gold written with one row of each fault; the faulty rows
/// and their causes go to stderr, so a walkthrough can show what `audit` will find.
pub(super) fn generate_foreign_gold(out: &Path, world: Option<PathBuf>) -> Result<i32> {
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
    let (rows, faults) = reports::audit_example::example(&lab, crate::rules::DEFAULT_LATE_DAYS)?;
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
pub(super) fn generate_manufacturing(g: &Global, out: &Path, seed: u64, factor: f64) -> Result<i32> {
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

pub(super) fn source_check(g: &Global, world: Option<PathBuf>, source: Option<PathBuf>, files: usize) -> Result<i32> {
    let world = world_or_sample(world);
    if source.is_none() && crate::model::recount::model_of(&world)? != crate::model::retail() {
        // A model's world: the model checked, and its rows as the model reads them.
        print(&reports::model::model_report(&world, files.max(1))?, g.format);
        return Ok(0);
    }
    let source = crate::raw::source::Source::of_world(&world, source.as_deref())?;
    let report = reports::source::try_description(&world, &source, files)?;
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

pub(super) fn reset(g: &Global, yes: bool) -> Result<i32> {
    let mut lab = open(g)?;
    if !may_empty(&lab, yes, "reset")? {
        return Ok(USAGE);
    }
    lab.reset()?;
    println!("lab {} is empty", lab.root.display());
    Ok(0)
}

/// The manual page from the clap definitions: the one source of every option's text.
pub(super) fn man(out: Option<&Path>) -> Result<i32> {
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
pub(super) fn man_page(cmd: clap::Command, out: &mut dyn std::io::Write) -> Result<()> {
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
