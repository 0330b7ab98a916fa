//! `recount demo`: the presenter's script. One line of narration per step, then what the tool
//! shows at that step. Every figure comes from the same reports the CLI and explorer print.

use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, land, v1, v2};
use crate::reports::{self, Format, Report};
use color_eyre::eyre::{Result, bail};
use std::io::BufRead;
use std::path::Path;

fn step(n: usize, narration: &str, pause: bool) {
    if pause {
        print!("\n[press Enter] ");
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let _ = std::io::stdin().lock().read_line(&mut String::new());
    }
    println!("\n── step {n}: {narration}");
}

fn show<R: Report>(r: &R, color: bool) {
    print!("{}", reports::table::render(r, Format::Table, color));
}

pub fn run(lab_dir: &Path, world: &Path, pause: bool, color: bool) -> Result<()> {
    let ups = crate::raw::list_partitions(world)?;
    if ups.len() < 5 {
        bail!("the demo needs a world with at least five uploads; {} has {}", world.display(), ups.len());
    }
    let mut lab = Lab::open(lab_dir)?;
    lab.reset()?;
    println!("recount demo in lab {} (world {})", lab_dir.display(), world.display());
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    let day = ups[2];

    step(1, &format!("The tills upload {} to {}: land them into the raw zone, parsed once into bronze.", ups[0], ups[3]), pause);
    print!("{}", land::land(&mut lab, world, &ups[..4])?.render());

    step(2, &format!("v1, the naive job, reads upload {day} once and appends per store."), pause);
    v1::run(&lab, day, None)?;
    show(&reports::check::check(&lab, day, None)?, color);

    step(3, "A retry of v1 for the same day. It appends again: the day doubles.", pause);
    v1::run(&lab, day, None)?;
    show(&reports::check::check(&lab, day, None)?, color);

    step(
        4,
        "v2 runs per upload: each affected date gets a new version in one transaction, deduplicated by basket_id; the old version stays as history.",
        pause,
    );
    for &u in &ups[..4] {
        print!("{}", v2::run_upload(&lab, u, TriggerKind::Upload, opts)?.render());
    }
    show(&reports::check::check(&lab, day, None)?, color);

    step(5, &format!("The same retry with v2 for upload {day}: its inputs are unchanged, so it is recorded as skipped."), pause);
    print!("{}", v2::run_upload(&lab, day, TriggerKind::Upload, opts)?.render());
    println!("{}", reports::fingerprint(&lab, None)?.line);

    step(6, &format!("A late upload, {}, lands: offline tills and re-sends reach back into earlier days.", ups[4]), pause);
    land::land(&mut lab, world, &[ups[4]])?;
    print!("{}", v2::run_upload(&lab, ups[4], TriggerKind::Daily, opts)?.render());

    let moved = crate::reports::history::history(&lab, ups[3], None)?;
    step(7, &format!("history explains how {} moved, snapshot by snapshot.", ups[3]), pause);
    show(&moved, color);

    corrections(&mut lab, world, opts, pause, color)?;
    println!("\nThe explorer shows all of this interactively: recount tui --lab {}", lab_dir.display());
    Ok(())
}

/// The correction steps, when the world ships corrections: a corrected file changes exactly its
/// dates, and the same rows delivered again in other bytes change nothing.
fn corrections(lab: &mut Lab, world: &Path, opts: v2::V2Options, pause: bool, color: bool) -> Result<()> {
    use crate::world::corrections::{self, CorrectionKind};
    let all = corrections::list(world)?;
    let (Some(fixed), Some(same)) =
        (all.iter().find(|c| c.kind == CorrectionKind::ChangedAmounts), all.iter().find(|c| c.kind == CorrectionKind::Recompressed))
    else {
        return Ok(());
    };
    let u = fixed.upload_date;
    step(
        8,
        &format!("Upload {u} arrives. Later its till vendor re-exports {} with corrected amounts: a new version of the file.", fixed.file),
        pause,
    );
    land::land(lab, world, &[u])?;
    v2::run_upload(lab, u, TriggerKind::Daily, opts)?;
    print!("{}", land::land(lab, &fixed.dir, &[u])?.render());
    let run = v2::run_upload(lab, u, TriggerKind::Upload, opts)?;
    print!("{}", run.render());
    if let Some(d) = run.dates.iter().find(|d| d.action == crate::store::DateAction::Overwrite) {
        let diff = reports::history::diff(lab, d.business_date, None, None)?;
        show(&diff, color);
    }

    let v = same.upload_date;
    step(9, &format!("Upload {v}'s {} is delivered again, recompressed: other bytes, the same rows. v2 skips it.", same.file), pause);
    land::land(lab, world, &[v])?;
    v2::run_upload(lab, v, TriggerKind::Daily, opts)?;
    print!("{}", land::land(lab, &same.dir, &[v])?.render());
    print!("{}", v2::run_upload(lab, v, TriggerKind::Upload, opts)?.render());
    Ok(())
}
