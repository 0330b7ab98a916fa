//! Recovery when a lab opens: a landing commits bronze first and moves its staged copies into the
//! raw zone after COMMIT, so a process killed in between leaves `*.landing` files behind. Each is
//! finished (the lab's current version of that path has its bytes: the landing committed) or
//! removed (it did not). After this, the raw zone and bronze agree again.
//!
//! A landing marks the lab (`STAGING`) before it stages its first copy and clears the mark once
//! every copy is in place, so an open looks through the raw zone's partitions only when a landing
//! did not finish (or when this build opens the lab for the first time: an earlier build left no
//! mark). The look costs a directory listing per upload, which grew with history.

use super::Lab;
use crate::raw;
use crate::raw::{md5_of_file, superseded_path};
use color_eyre::eyre::{Result, WrapErr, bail};
use std::path::Path;

const STAGED: &str = ".landing";

/// The mark, in the lab's root, of a landing that may have left staged copies or a stale
/// stores.csv in the raw zone.
pub const STAGING: &str = "recount.staging";

/// Marks the lab before a landing stages anything (see the module's comment).
pub fn mark(root: &Path) -> Result<()> {
    let path = root.join(STAGING);
    std::fs::write(&path, b"").wrap_err_with(|| format!("writing {}", path.display()))
}

/// Clears the mark once every staged copy is in place or gone.
pub fn unmark(root: &Path) -> Result<()> {
    let path = root.join(STAGING);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).wrap_err_with(|| format!("removing {}", path.display())),
        _ => Ok(()),
    }
}

/// Whether the raw zone must be looked through: a landing did not clear its mark, or this
/// connection has just written the lab's schema (a lab of an earlier build, which marked nothing).
fn must_look(lab: &Lab) -> bool {
    lab.root.join(STAGING).exists() || lab.store().schema_written()
}

/// What recovery did, for the record.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Staged copies of a committed landing, moved into place.
    pub finished: usize,
    /// Staged copies of a landing that never committed, removed.
    pub removed: usize,
}

/// Whether `recover` has anything to do: a staged copy in the raw zone, or a stores.csv that
/// does not say what raw.stores says. Reads only.
pub fn pending(lab: &Lab) -> Result<bool> {
    let events = lab.raw_root().join(raw::EVENTS_DIR);
    if !must_look(lab) || !events.is_dir() {
        return Ok(false);
    }
    let stores = lab.stores()?.to_csv()?;
    if std::fs::read_to_string(lab.raw_root().join(raw::STORES_FILE)).ok().as_deref() != Some(stores.as_str()) {
        return Ok(true);
    }
    Ok(!staged_copies(&events)?.is_empty())
}

/// Every staged copy under the raw zone's partitions (at any depth: a file of an hourly folder
/// is staged in its folder), with its partition's directory, in path order.
fn staged_copies(events: &Path) -> Result<Vec<(std::path::PathBuf, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for partition in read_dir_sorted(events)? {
        if !partition.is_dir() {
            continue;
        }
        let mut todo = vec![partition.clone()];
        while let Some(dir) = todo.pop() {
            for p in read_dir_sorted(&dir)? {
                if p.is_dir() {
                    todo.push(p);
                } else if p.to_string_lossy().ends_with(STAGED) {
                    out.push((partition.clone(), p));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn recover(lab: &Lab) -> Result<Recovered> {
    if !must_look(lab) {
        return Ok(Recovered::default());
    }
    let done = finish_or_remove(lab)?;
    unmark(&lab.root)?;
    Ok(done)
}

fn finish_or_remove(lab: &Lab) -> Result<Recovered> {
    let mut done = Recovered::default();
    let events = lab.raw_root().join(raw::EVENTS_DIR);
    if !events.is_dir() {
        return Ok(done);
    }
    // The raw zone's stores.csv is written after COMMIT too: it says what raw.stores says.
    let stores = lab.stores()?.to_csv()?;
    let path = lab.raw_root().join(raw::STORES_FILE);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(stores.as_str()) {
        std::fs::write(&path, stores).wrap_err_with(|| format!("writing {}", path.display()))?;
        done.finished += 1;
    }
    let mut landed: Option<std::collections::HashMap<String, Vec<crate::store::LandedFile>>> = None;
    for (partition, staged) in staged_copies(&events)? {
        // Its name in the upload: its path below the partition, without the staging suffix.
        let below = staged.strip_prefix(&partition).unwrap_or(&staged).to_string_lossy().into_owned();
        let Some(name) = below.strip_suffix(STAGED) else { continue };
        let Ok(upload_date) = raw::parse_partition_name(&partition.file_name().unwrap_or_default().to_string_lossy()) else { continue };
        let rel = raw::rel_path(upload_date, name);
        let landed = match &mut landed {
            Some(l) => l,
            None => landed.insert(lab.store().landed_files()?),
        };
        let versions = landed.get(&rel).map(Vec::as_slice).unwrap_or_default();
        let staged_md5 = md5_of_file(&staged)?;
        if !versions.iter().any(|v| v.current && v.md5 == staged_md5) {
            std::fs::remove_file(&staged).wrap_err_with(|| format!("removing {}", staged.display()))?;
            done.removed += 1;
            continue;
        }
        let dest = partition.join(name);
        if dest.exists() {
            let dest_md5 = md5_of_file(&dest)?;
            match versions.iter().find(|v| !v.current && v.md5 == dest_md5) {
                Some(old) => {
                    let kept = superseded_path(&lab.raw_root(), &rel, old.version);
                    if let Some(dir) = kept.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    std::fs::rename(&dest, &kept).wrap_err_with(|| format!("keeping {}", dest.display()))?;
                }
                None if dest_md5 == staged_md5 => {}
                None => bail!("{} holds bytes the lab never landed; recount will not overwrite it", dest.display()),
            }
        }
        std::fs::rename(&staged, &dest).wrap_err_with(|| format!("moving {} into the raw zone", dest.display()))?;
        done.finished += 1;
    }
    // Partition directories, and folders below them, that a failed landing made and left empty.
    for partition in read_dir_sorted(&events)? {
        remove_empty(&partition);
    }
    Ok(done)
}

/// Removes `dir` and the folders below it that hold nothing (a folder with a file stays).
fn remove_empty(dir: &Path) {
    if !dir.is_dir() {
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            remove_empty(&e.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .wrap_err_with(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    out.sort();
    Ok(out)
}
