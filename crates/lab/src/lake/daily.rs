//! Land one upload, then run v2 for it: the production schedule's step. The CLI's `daily`, the
//! explorer's U, the first run and the demo all take it through `land_and_run`, so an upload that
//! landing held back is reported the same way everywhere and never gets a v2 run.

use super::land::{self, HeldUpload, LandReport};
use super::snapshot::TriggerKind;
use super::{Lab, v1, v2};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::path::Path;

/// How one step runs: the trigger its v2 run records, whether v1 runs once first (the first run
/// builds each date as production did, v1 included), and v2's options. `opts.fail_after` applies
/// to the landing too (the failure-injection hook).
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub trigger: TriggerKind,
    pub v1_first: bool,
    pub opts: v2::V2Options,
}

/// What one step did. The landing's report always; the run's outcome beside it.
#[derive(Debug)]
#[must_use = "a held-back upload or a failed run must be reported"]
pub struct LandAndRun {
    pub upload: NaiveDate,
    pub landed: LandReport,
    /// The run for the store corrections pending after the landing (its own snapshot), first.
    pub store_run: Option<Box<v2::RunReport>>,
    pub run: RunOutcome,
}

#[derive(Debug)]
pub enum RunOutcome {
    /// v2 ran and recorded its snapshot.
    Ran(Box<v2::RunReport>),
    /// Landing held the upload back (a file could not be read whole): nothing of it landed, and
    /// neither v1 nor v2 ran for it.
    Held(HeldUpload),
    /// The upload has no landed file (the world has no such partition): nothing to run.
    NothingLanded,
    /// The landing committed; the v2 run then failed, and nothing of the run committed.
    Failed(color_eyre::Report),
}

impl LandAndRun {
    /// The held-back upload, if landing held this one back.
    pub fn held(&self) -> Option<&HeldUpload> {
        match &self.run {
            RunOutcome::Held(h) => Some(h),
            _ => None,
        }
    }

    /// One line for a person: "upload U held back: FILE: REASON; nothing of it landed and v2 did
    /// not run".
    pub fn held_line(h: &HeldUpload) -> String {
        format!(
            "upload {} held back: {}: {}; nothing of it landed and v2 did not run (fix the file and land it again)",
            h.upload_date, h.file, h.reason
        )
    }
}

/// Lands `upload` from `world`, then (unless it was held back or nothing landed) runs v1 once if
/// the step asks, and v2. An error in the landing is returned as an error: nothing landed. An
/// error in v2 after the landing committed is `RunOutcome::Failed`.
pub fn land_and_run(lab: &mut Lab, world: &Path, upload: NaiveDate, step: Step) -> Result<LandAndRun> {
    let source = crate::raw::source::Source::of_world(world, None)?;
    let landed = land::land_with(lab, world, &source, &[upload], step.opts.fail_after)?;
    // A store correction the landing brought (or an earlier one left pending) is rebuilt first,
    // as its own snapshot, whatever became of the upload.
    let store_run = match v2::run_store_changes(lab, step.opts) {
        Ok(r) => r.map(Box::new),
        Err(e) => return Ok(LandAndRun { upload, landed, store_run: None, run: RunOutcome::Failed(e) }),
    };
    if let Some(h) = landed.held.iter().find(|h| h.upload_date == upload).cloned() {
        return Ok(LandAndRun { upload, landed, store_run, run: RunOutcome::Held(h) });
    }
    if !lab.is_landed(upload)? {
        return Ok(LandAndRun { upload, landed, store_run, run: RunOutcome::NothingLanded });
    }
    let ran = (|| {
        if step.v1_first {
            v1::run(lab, upload, step.opts.fail_after)?;
        }
        v2::run_upload(lab, upload, step.trigger, step.opts)
    })();
    let run = match ran {
        Ok(r) => RunOutcome::Ran(Box::new(r)),
        Err(e) => RunOutcome::Failed(e),
    };
    Ok(LandAndRun { upload, landed, store_run, run })
}
