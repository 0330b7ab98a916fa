//! The explorer's out-of-the-box lab, built as the pipeline runs in production: upload by
//! upload (land, v1 once, v2), so each date has the versions its late uploads made and History
//! answers "why did yesterday change". The newest uploads are held back: the explorer's "land
//! the next upload" then shows a late upload moving a provisional day.

use super::daily::{LandAndRun, RunOutcome, Step, land_and_run};
use super::land::HeldUpload;
use super::snapshot::TriggerKind;
use super::{Lab, v2};
use crate::raw;
use color_eyre::eyre::{Result, bail};
use std::path::Path;

/// How many of the world's newest uploads the first run leaves for the user to land.
pub const HELD_BACK: usize = 2;

/// What a first run built: how many uploads it landed and ran, and those landing held back (a
/// file that could not be read whole), which got no run.
#[derive(Debug, Default)]
#[must_use = "uploads held back must be reported"]
pub struct FirstRun {
    pub built: usize,
    pub held: Vec<HeldUpload>,
}

impl FirstRun {
    /// One line per held-back upload, for a person.
    pub fn held_lines(&self) -> Vec<String> {
        self.held.iter().map(LandAndRun::held_line).collect()
    }
}

/// Fills an empty lab from `world`, day by day, holding back the newest `HELD_BACK` uploads
/// (all but the first, for a world that small). None when the lab already had data.
pub fn fill_if_empty(lab: &mut Lab, world: &Path) -> Result<Option<FirstRun>> {
    if !lab.is_empty()? {
        return Ok(None);
    }
    let uploads = raw::source::uploads_of(world)?;
    if uploads.is_empty() {
        bail!("the world at {} has no upload partitions", world.display());
    }
    let step = Step { trigger: TriggerKind::Daily, v1_first: true, opts: v2::V2Options { fail_after: None, ..Default::default() } };
    let keep = uploads.len().saturating_sub(HELD_BACK).max(1);
    let mut first = FirstRun::default();
    for &u in &uploads[..keep] {
        match land_and_run(lab, world, u, step)?.run {
            RunOutcome::Ran(_) => first.built += 1,
            RunOutcome::Held(h) => first.held.push(h),
            RunOutcome::NothingLanded => {}
            RunOutcome::Failed(e) => return Err(e.wrap_err(format!("v2 for upload {u}"))),
        }
    }
    Ok(Some(first))
}
