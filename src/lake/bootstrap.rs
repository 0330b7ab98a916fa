//! The explorer's out-of-the-box lab, built as the pipeline runs in production: upload by
//! upload (land, v1 once, v2), so each date has the versions its late uploads made and History
//! answers "why did yesterday change". The newest uploads are held back: the explorer's "land
//! the next upload" then shows a late upload moving a provisional day.

use super::snapshot::TriggerKind;
use super::{Lab, land, v1, v2};
use crate::raw;
use color_eyre::eyre::{Result, bail};
use std::path::Path;

/// How many of the world's newest uploads the first run leaves for the user to land.
pub const HELD_BACK: usize = 2;

/// Fills an empty lab from `world`, day by day, holding back the newest `HELD_BACK` uploads
/// (all but the first, for a world that small). Returns false when the lab already had data.
pub fn fill_if_empty(lab: &mut Lab, world: &Path) -> Result<bool> {
    if !lab.is_empty()? {
        return Ok(false);
    }
    let uploads = raw::list_partitions(world)?;
    if uploads.is_empty() {
        bail!("the world at {} has no upload partitions", world.display());
    }
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    let keep = uploads.len().saturating_sub(HELD_BACK).max(1);
    for &u in &uploads[..keep] {
        land::land(lab, world, &[u])?;
        v1::run(lab, u, None)?;
        v2::run_upload(lab, u, TriggerKind::Daily, opts)?;
    }
    Ok(true)
}
