//! `recount demo`: the presenter's script. One line of narration per step, then what the tool
//! shows at that step. Every figure comes from the same reports the CLI and explorer print.

use crate::lake::daily::{LandAndRun, RunOutcome, Step, land_and_run};
use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, land, v1, v2};
use crate::reports::{self, Format, Report};
use color_eyre::eyre::{Result, bail};
use std::io::BufRead;
use std::path::Path;

/// The presenter's screen: the step being told, held until it is complete, then shown so that its
/// narration is on screen when the demo pauses (a step taller than the screen shows its gist, and
/// the rest on request).
struct Teller {
    pause: bool,
    color: bool,
    width: Option<usize>,
    /// The screen's height while the demo pauses on a terminal.
    height: Option<usize>,
    told: usize,
    narration: String,
    blocks: Vec<Block>,
}

/// One thing a step shows: all of it, and its gist (a record's top lines, a report's headline and
/// notes) for a screen too short for all of it.
struct Block {
    full: String,
    gist: String,
}

impl Teller {
    fn new(pause: bool, color: bool) -> Self {
        let size = std::io::IsTerminal::is_terminal(&std::io::stdout()).then(crossterm::terminal::size).and_then(Result::ok);
        let width = size.map(|(w, _)| usize::from(w)).or_else(|| std::env::var("COLUMNS").ok()?.parse().ok()).filter(|w| *w >= 40);
        let height = size.map(|(_, h)| usize::from(h)).filter(|h| pause && *h >= 10);
        Teller { pause, color, width, height, told: 0, narration: String::new(), blocks: Vec::new() }
    }

    /// Ends the step being told (pausing after it on a terminal) and begins the next.
    fn step(&mut self, narration: &str) {
        if self.told > 0 {
            self.tell(self.pause);
        }
        self.told += 1;
        self.narration = self.wrap(&format!("── step {}: {narration}\n", self.told));
        self.blocks.clear();
    }

    /// Text such as a run's record: its gist is its lines that are not indented (each record's
    /// first line), broken between words at the screen's width like the rest.
    fn say(&mut self, text: &str) {
        let gist: String = text.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()).map(|l| format!("{l}\n")).collect();
        let (full, gist) = (self.wrap(text), self.wrap(&gist));
        self.add(full, gist);
    }

    /// A report as the CLI prints it, narrowed to the screen: its gist is its headline and notes.
    fn show<R: Report>(&mut self, r: &R) {
        let full = reports::table::render_fitted(r, Format::Table, self.color, self.width);
        self.add(full, reports::table::render_gist(r, self.color, self.width));
    }

    fn add(&mut self, full: String, gist: String) {
        if self.told == 0 {
            print!("{full}");
        } else {
            self.blocks.push(Block { full, gist });
        }
    }

    fn wrap(&self, text: &str) -> String {
        match self.width {
            Some(w) => reports::table::wrap_lines(text, w),
            None if text.ends_with('\n') || text.is_empty() => text.to_string(),
            None => format!("{text}\n"),
        }
    }

    /// The step on screen. Where it does not fit above the prompt, each block shows its gist (the
    /// first ones none, if even the gists do not fit), the last ones whole as far as room allows
    /// (a step's last report is its point), and the prompt offers the rest; the narration is
    /// shown again under the rest.
    fn tell(&mut self, pause: bool) {
        let lines = |s: &str| s.lines().count();
        let full: usize = self.blocks.iter().map(|b| lines(&b.full)).sum();
        let room = self.height.filter(|_| pause).map_or(usize::MAX, |h| h.saturating_sub(3 + lines(&self.narration)));
        // How many lines each block shows: all of it, its gist, or nothing.
        let mut shown: Vec<Option<&str>> = self.blocks.iter().map(|b| Some(b.full.as_str())).collect();
        if full > room {
            shown = self.blocks.iter().map(|b| Some(b.gist.as_str())).collect();
            let mut used: usize = self.blocks.iter().map(|b| lines(&b.gist)).sum();
            for (i, b) in self.blocks.iter().enumerate() {
                if used > room {
                    used -= lines(&b.gist);
                    shown[i] = None;
                }
            }
            for (i, b) in self.blocks.iter().enumerate().rev() {
                let grown = used - shown[i].map_or(0, lines) + lines(&b.full);
                if grown <= room {
                    used = grown;
                    shown[i] = Some(&b.full);
                }
            }
        }
        print!("\n{}", self.narration);
        for text in shown.iter().flatten() {
            print!("{text}");
        }
        if !pause {
            return;
        }
        let hidden = shown.iter().zip(&self.blocks).any(|(s, b)| s.is_none_or(|s| s.len() < b.full.len()));
        if !hidden {
            ask("[press Enter] ");
            return;
        }
        if ask(&format!("[Enter: next step · m, Enter: all {full} lines of this step] ")).trim() == "m" {
            for b in &self.blocks {
                print!("{}", b.full);
            }
            print!("\n{}", self.narration);
            ask("[press Enter] ");
        }
    }

    /// The last step, whole: the demo ends (or stops on an error) after it.
    fn finish(&mut self) {
        if self.told > 0 {
            self.tell(false);
            self.blocks.clear();
        }
    }
}

/// The presenter's answer to a prompt.
fn ask(prompt: &str) -> String {
    print!("\n{prompt}");
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    answer
}

pub fn run(lab_dir: &Path, world: &Path, pause: bool, color: bool) -> Result<()> {
    let mut t = Teller::new(pause, color);
    let told = story(&mut t, lab_dir, world);
    // A step cut short by an error is shown as far as it got, before the error.
    t.finish();
    told?;
    print!("\n{}", t.wrap(&format!("The explorer shows all of this interactively: recount tui --lab {}", lab_dir.display())));
    Ok(())
}

fn story(t: &mut Teller, lab_dir: &Path, world: &Path) -> Result<()> {
    let ups = crate::raw::source::uploads_of(world)?;
    if ups.len() < 5 {
        bail!("the demo needs a world with at least five uploads; {} has {}", world.display(), ups.len());
    }
    let mut lab = Lab::open(lab_dir)?;
    lab.reset()?;
    t.say(&format!("recount demo in lab {} (world {})\n", lab_dir.display(), world.display()));
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    let day = ups[2];

    t.step(&format!("The tills upload {} to {}: land them into the raw zone, parsed once into bronze.", ups[0], ups[3]));
    let first = land::land(&mut lab, world, &ups[..4])?;
    t.say(&first.render());
    if let Some(h) = first.held.first() {
        // The story needs every one of the four: a held-back upload gets no run, and the demo says why.
        bail!("{}", LandAndRun::held_line(h));
    }

    t.step(&format!("v1, the naive job, reads upload {day} once and appends per store."));
    v1::run(&lab, day, None)?;
    t.show(&reports::check::check(&lab, day, None)?);

    t.step("A retry of v1 for the same day. It appends again: the day doubles.");
    v1::run(&lab, day, None)?;
    t.show(&reports::check::check(&lab, day, None)?);

    t.step(
        "v2 runs per upload: each affected date gets a new version in one transaction, deduplicated by basket_id; the old version stays as history.");
    for &u in &ups[..4] {
        t.say(&v2::run_upload(&lab, u, TriggerKind::Upload, opts)?.render());
    }
    t.show(&reports::check::check(&lab, day, None)?);

    t.step(&format!("The trend: revenue per date and country, v1 against v2 gold and the recompute. v1's retry of {day} is a spike."));
    t.show(&reports::trend::trend(&lab)?);

    t.step(&format!("The same retry with v2 for upload {day}: its inputs are unchanged, so it is recorded as skipped."));
    // Its record ends with gold's fingerprint: the same as before the retry.
    t.say(&v2::run_upload(&lab, day, TriggerKind::Upload, opts)?.render());

    t.step(&format!("A late upload, {}, lands: offline tills and re-sends reach back into earlier days.", ups[4]));
    told(t, land_and_run(&mut lab, world, ups[4], daily(TriggerKind::Daily, opts))?)?;

    let moved = crate::reports::history::history(&lab, ups[3], None)?;
    t.step(&format!("history explains how {} moved, snapshot by snapshot.", ups[3]));
    t.show(&moved);

    corrections(t, &mut lab, world, opts)?;
    reopening(t, &mut lab, world, opts)?;
    Ok(())
}

/// The correction steps, when the world ships corrections: a corrected file changes exactly its
/// dates, and the same rows delivered again in other bytes change nothing.
fn corrections(t: &mut Teller, lab: &mut Lab, world: &Path, opts: v2::V2Options) -> Result<()> {
    use crate::raw::corrections::{self, CorrectionKind};
    let all = corrections::list(world)?;
    let (Some(fixed), Some(same)) =
        (all.iter().find(|c| c.kind == CorrectionKind::ChangedAmounts), all.iter().find(|c| c.kind == CorrectionKind::Recompressed))
    else {
        return Ok(());
    };
    let u = fixed.upload_date;
    catch_up(t, lab, world, u, opts)?;
    t.step(&format!(
        "Upload {u} arrives. Later its till vendor re-exports {} with corrected amounts: a new version of the file.",
        fixed.file
    ));
    ran(land_and_run(lab, world, u, daily(TriggerKind::Daily, opts))?)?;
    let fix = land_and_run(lab, &fixed.dir, u, daily(TriggerKind::Upload, opts))?;
    t.say(&fix.landed.render());
    let run = ran(fix)?;
    t.say(&run.render());
    if let Some(d) = run.dates.iter().find(|d| d.action == crate::lake::snapshot::DateAction::Overwrite) {
        let diff = reports::history::diff(lab, d.business_date, None, None)?;
        t.show(&diff);
    }

    let v = same.upload_date;
    catch_up(t, lab, world, v, opts)?;
    t.step(&format!("Upload {v}'s {} is delivered again, recompressed: other bytes, the same rows. v2 skips it.", same.file));
    ran(land_and_run(lab, world, v, daily(TriggerKind::Daily, opts))?)?;
    let again = land_and_run(lab, &same.dir, v, daily(TriggerKind::Upload, opts))?;
    t.say(&again.landed.render());
    t.say(&ran(again)?.render());
    Ok(())
}

/// A late basket arrives past its date's window, and finance reopens the day: the schedule runs
/// on until an upload brings rows of a closed date, then `reopen` takes them in, and the
/// morning's line says what the newest write moved. A world with no such upload ends before.
fn reopening(t: &mut Teller, lab: &mut Lab, world: &Path, opts: v2::V2Options) -> Result<()> {
    let landed_to = crate::raw::list_partitions(&lab.raw_root())?.last().copied();
    let next: Vec<_> = crate::raw::source::uploads_of(world)?.into_iter().filter(|d| landed_to.is_none_or(|l| *d > l)).collect();
    if next.is_empty() {
        return Ok(());
    }
    t.step("The schedule runs on, upload by upload, until one brings rows of a date whose window has closed.");
    for u in next {
        let run = told(t, land_and_run(lab, world, u, daily(TriggerKind::Daily, opts))?)?;
        let Some(b) = run.beyond_window.iter().find(|b| !b.future_dated) else { continue };
        let d = b.business_date;
        t.step(
            &format!(
                "Upload {u} brought {} row(s) of {d}, past its window: v2 kept them out of gold and said so. `recount run --alert-on beyond-window` exits 5 on it, for a scheduler.",
                b.rows
            ));
        t.show(&reports::listings::late(lab, Some(d), opts.late_days)?);
        t.step(&format!(
            "Finance decides to take them in: `recount reopen {d} --reason …` widens the date's window, one snapshot naming who and why."
        ));
        let decision = crate::lake::reopen::Decision { reason: "late tills approved by finance (demo)", by: "the presenter" };
        t.say(&crate::lake::reopen::reopen(lab, d, decision, opts)?.render());
        t.show(&reports::check::check(lab, d, None)?);
        t.step("The morning's line, as `recount summary` prints it for a cron mail: what the newest write moved.");
        t.say(&format!("{}\n", crate::sanitize::for_terminal(&reports::summary::summary(lab)?.line())));
        return Ok(());
    }
    Ok(())
}

/// The schedule runs on to `to`: every upload after the newest landed one and before `to` lands
/// and gets its v2 run, so the story never skips a day (and no snapshot appears from nowhere).
fn catch_up(t: &mut Teller, lab: &mut Lab, world: &Path, to: chrono::NaiveDate, opts: v2::V2Options) -> Result<()> {
    let landed_to = crate::raw::list_partitions(&lab.raw_root())?.last().copied();
    let between: Vec<_> =
        crate::raw::source::uploads_of(world)?.into_iter().filter(|d| landed_to.is_none_or(|l| *d > l) && *d < to).collect();
    if let (Some(first), Some(last)) = (between.first(), between.last()) {
        t.step(&format!("The daily schedule runs on: uploads {first} to {last} land, and v2 runs for each."));
        for &d in &between {
            told(t, land_and_run(lab, world, d, daily(TriggerKind::Daily, opts))?)?;
        }
    }
    Ok(())
}

fn daily(trigger: TriggerKind, opts: v2::V2Options) -> Step {
    Step { trigger, v1_first: false, opts }
}

/// A landing and its run, both shown as the CLI's `daily` shows them.
fn told(t: &mut Teller, done: LandAndRun) -> Result<Box<v2::RunReport>> {
    t.say(&done.landed.render());
    let run = ran(done)?;
    t.say(&run.render());
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
