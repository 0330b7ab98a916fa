//! `recount demo`: the presenter's script. One line of narration per step, then what the tool
//! shows at that step. Every figure comes from the same reports the CLI and explorer print.

use crate::lake::daily::{LandAndRun, RunOutcome, Step, land_and_run};
use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, land, v1, v2};
use crate::reports::{self, Format, Report};
use color_eyre::eyre::{Result, bail};
use std::io::BufRead;
use std::path::Path;

/// The steps are numbered as they are told: how many a world's story has depends on its uploads
/// and corrections.
static STEP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn step(narration: &str, pause: bool) {
    let n = STEP.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if pause {
        print!("\n[press Enter] ");
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let _ = std::io::stdin().lock().read_line(&mut String::new());
    }
    println!();
    // Broken between words at the screen's width: a narration never wraps inside a word.
    say(&format!("── step {n}: {narration}"));
}

/// Text as the presenter's screen shows it: each line broken between words at the screen's width
/// (`reports::table::wrap_lines`), never wrapped by the terminal inside a word or an amount.
fn say(text: &str) {
    match screen_width() {
        Some(w) => print!("{}", reports::table::wrap_lines(text, w)),
        None if text.ends_with('\n') => print!("{text}"),
        None => println!("{text}"),
    }
}

/// The width the demo writes to: the terminal's, else `COLUMNS` (a recording sets it).
fn screen_width() -> Option<usize> {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout())
        .then(|| crossterm::terminal::size().ok().map(|(w, _)| usize::from(w)))
        .flatten();
    terminal.or_else(|| std::env::var("COLUMNS").ok()?.parse().ok()).filter(|w| *w >= 40)
}

/// A report as the CLI prints it, narrowed to the terminal when there is one (or to `COLUMNS`,
/// as a recording of the demo sets it): a presenter's screen never wraps a table.
fn show<R: Report>(r: &R, color: bool) {
    print!("{}", reports::table::render_fitted(r, Format::Table, color, screen_width()));
}

pub fn run(lab_dir: &Path, world: &Path, pause: bool, color: bool) -> Result<()> {
    let ups = crate::raw::source::uploads_of(world)?;
    if ups.len() < 5 {
        bail!("the demo needs a world with at least five uploads; {} has {}", world.display(), ups.len());
    }
    let mut lab = Lab::open(lab_dir)?;
    lab.reset()?;
    STEP.store(0, std::sync::atomic::Ordering::Relaxed);
    say(&format!("recount demo in lab {} (world {})\n", lab_dir.display(), world.display()));
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    let day = ups[2];

    step(&format!("The tills upload {} to {}: land them into the raw zone, parsed once into bronze.", ups[0], ups[3]), pause);
    let first = land::land(&mut lab, world, &ups[..4])?;
    say(&first.render());
    if let Some(h) = first.held.first() {
        // The story needs every one of the four: a held-back upload gets no run, and the demo says why.
        bail!("{}", LandAndRun::held_line(h));
    }

    step(&format!("v1, the naive job, reads upload {day} once and appends per store."), pause);
    v1::run(&lab, day, None)?;
    show(&reports::check::check(&lab, day, None)?, color);

    step("A retry of v1 for the same day. It appends again: the day doubles.", pause);
    v1::run(&lab, day, None)?;
    show(&reports::check::check(&lab, day, None)?, color);

    step(
        "v2 runs per upload: each affected date gets a new version in one transaction, deduplicated by basket_id; the old version stays as history.",
        pause,
    );
    for &u in &ups[..4] {
        say(&v2::run_upload(&lab, u, TriggerKind::Upload, opts)?.render());
    }
    show(&reports::check::check(&lab, day, None)?, color);

    step(&format!("The trend: revenue per date and country, v1 against v2 gold and the recompute. v1's retry of {day} is a spike."), pause);
    show(&reports::trend::trend(&lab)?, color);

    step(&format!("The same retry with v2 for upload {day}: its inputs are unchanged, so it is recorded as skipped."), pause);
    // Its record ends with gold's fingerprint: the same as before the retry.
    say(&v2::run_upload(&lab, day, TriggerKind::Upload, opts)?.render());

    step(&format!("A late upload, {}, lands: offline tills and re-sends reach back into earlier days.", ups[4]), pause);
    told(land_and_run(&mut lab, world, ups[4], daily(TriggerKind::Daily, opts))?)?;

    let moved = crate::reports::history::history(&lab, ups[3], None)?;
    step(&format!("history explains how {} moved, snapshot by snapshot.", ups[3]), pause);
    show(&moved, color);

    corrections(&mut lab, world, opts, pause, color)?;
    reopening(&mut lab, world, opts, pause, color)?;
    say(&format!("\nThe explorer shows all of this interactively: recount tui --lab {}\n", lab_dir.display()));
    Ok(())
}

/// The correction steps, when the world ships corrections: a corrected file changes exactly its
/// dates, and the same rows delivered again in other bytes change nothing.
fn corrections(lab: &mut Lab, world: &Path, opts: v2::V2Options, pause: bool, color: bool) -> Result<()> {
    use crate::raw::corrections::{self, CorrectionKind};
    let all = corrections::list(world)?;
    let (Some(fixed), Some(same)) =
        (all.iter().find(|c| c.kind == CorrectionKind::ChangedAmounts), all.iter().find(|c| c.kind == CorrectionKind::Recompressed))
    else {
        return Ok(());
    };
    let u = fixed.upload_date;
    catch_up(lab, world, u, opts, pause)?;
    step(
        &format!("Upload {u} arrives. Later its till vendor re-exports {} with corrected amounts: a new version of the file.", fixed.file),
        pause,
    );
    ran(land_and_run(lab, world, u, daily(TriggerKind::Daily, opts))?)?;
    let fix = land_and_run(lab, &fixed.dir, u, daily(TriggerKind::Upload, opts))?;
    say(&fix.landed.render());
    let run = ran(fix)?;
    say(&run.render());
    if let Some(d) = run.dates.iter().find(|d| d.action == crate::lake::snapshot::DateAction::Overwrite) {
        let diff = reports::history::diff(lab, d.business_date, None, None)?;
        show(&diff, color);
    }

    let v = same.upload_date;
    catch_up(lab, world, v, opts, pause)?;
    step(&format!("Upload {v}'s {} is delivered again, recompressed: other bytes, the same rows. v2 skips it.", same.file), pause);
    ran(land_and_run(lab, world, v, daily(TriggerKind::Daily, opts))?)?;
    let again = land_and_run(lab, &same.dir, v, daily(TriggerKind::Upload, opts))?;
    say(&again.landed.render());
    say(&ran(again)?.render());
    Ok(())
}

/// A late basket arrives past its date's window, and finance reopens the day: the schedule runs
/// on until an upload brings rows of a closed date, then `reopen` takes them in, and the
/// morning's line says what the newest write moved. A world with no such upload ends before.
fn reopening(lab: &mut Lab, world: &Path, opts: v2::V2Options, pause: bool, color: bool) -> Result<()> {
    let landed_to = crate::raw::list_partitions(&lab.raw_root())?.last().copied();
    let next: Vec<_> = crate::raw::source::uploads_of(world)?.into_iter().filter(|d| landed_to.is_none_or(|l| *d > l)).collect();
    if next.is_empty() {
        return Ok(());
    }
    step("The schedule runs on, upload by upload, until one brings rows of a date whose window has closed.", pause);
    for u in next {
        let run = told(land_and_run(lab, world, u, daily(TriggerKind::Daily, opts))?)?;
        let Some(b) = run.beyond_window.iter().find(|b| !b.future_dated) else { continue };
        let d = b.business_date;
        step(
            &format!(
                "Upload {u} brought {} row(s) of {d}, past its window: v2 kept them out of gold and said so. `recount run --alert-on beyond-window` exits 5 on it, for a scheduler.",
                b.rows
            ),
            pause,
        );
        show(&reports::listings::late(lab, Some(d), opts.late_days)?, color);
        step(
            &format!(
                "Finance decides to take them in: `recount reopen {d} --reason …` widens the date's window, one snapshot naming who and why."
            ),
            pause,
        );
        let decision = crate::lake::reopen::Decision { reason: "late tills approved by finance (demo)", by: "the presenter" };
        say(&crate::lake::reopen::reopen(lab, d, decision, opts)?.render());
        show(&reports::check::check(lab, d, None)?, color);
        step("The morning's line, as `recount summary` prints it for a cron mail: what the newest write moved.", pause);
        say(&format!("{}\n", crate::sanitize::for_terminal(&reports::summary::summary(lab)?.line())));
        return Ok(());
    }
    Ok(())
}

/// The schedule runs on to `to`: every upload after the newest landed one and before `to` lands
/// and gets its v2 run, so the story never skips a day (and no snapshot appears from nowhere).
fn catch_up(lab: &mut Lab, world: &Path, to: chrono::NaiveDate, opts: v2::V2Options, pause: bool) -> Result<()> {
    let landed_to = crate::raw::list_partitions(&lab.raw_root())?.last().copied();
    let between: Vec<_> =
        crate::raw::source::uploads_of(world)?.into_iter().filter(|d| landed_to.is_none_or(|l| *d > l) && *d < to).collect();
    if let (Some(first), Some(last)) = (between.first(), between.last()) {
        step(&format!("The daily schedule runs on: uploads {first} to {last} land, and v2 runs for each."), pause);
        for &d in &between {
            told(land_and_run(lab, world, d, daily(TriggerKind::Daily, opts))?)?;
        }
    }
    Ok(())
}

fn daily(trigger: TriggerKind, opts: v2::V2Options) -> Step {
    Step { trigger, v1_first: false, opts }
}

/// A landing and its run, both shown as the CLI's `daily` shows them.
fn told(done: LandAndRun) -> Result<Box<v2::RunReport>> {
    say(&done.landed.render());
    let run = ran(done)?;
    say(&run.render());
    Ok(run)
}

/// The run of a step the demo needs: a held-back upload or a failed run ends the demo, saying why.
fn ran(done: LandAndRun) -> Result<Box<v2::RunReport>> {
    match done.run {
        RunOutcome::Ran(r) => Ok(r),
        RunOutcome::Held(h) => bail!("{}", LandAndRun::held_line(&h)),
        RunOutcome::NothingLanded => bail!("upload {} has no file to land", done.upload),
        RunOutcome::Failed(e) => Err(e.wrap_err(format!("v2 for upload {}", done.upload))),
    }
}
