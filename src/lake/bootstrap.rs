//! The explorer's out-of-the-box lab: every upload of the bundled world landed, v1 run once per
//! day and v2 run per upload, so there is something to see at once.

use super::snapshot::TriggerKind;
use super::{Lab, land, v1, v2};
use crate::raw;
use color_eyre::eyre::{Result, bail};
use std::path::Path;

/// Fills an empty lab from `world`. Returns false when the lab already had data.
pub fn fill_if_empty(lab: &mut Lab, world: &Path) -> Result<bool> {
    if !lab.is_empty()? {
        return Ok(false);
    }
    let uploads = raw::list_partitions(world)?;
    if uploads.is_empty() {
        bail!("the world at {} has no upload partitions", world.display());
    }
    land::land(lab, world, &uploads)?;
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    for &u in &uploads {
        v1::run(lab, u, None)?;
        v2::run_upload(lab, u, TriggerKind::Upload, opts)?;
    }
    Ok(true)
}
