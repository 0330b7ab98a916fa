//! The landing's copies in the raw zone: each written beside its final place, synced before the
//! landing commits, moved into place after it, and taken away after a failed one.

use super::*;

/// Writes a staged copy (synced to disk before COMMIT by `sync_staged`).
pub(super) fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::lake::crash_point("landing:write");
    std::fs::write(path, bytes)
}

/// Stages a re-derived file version, whose bytes are the ones already at its place in the raw
/// zone: a hard link to them (`link_or_write`), not a copy (a store correction re-derives most of
/// the raw zone, and copying it again was a large part of its cost).
pub(super) fn stage_in_place(current: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::lake::crash_point("landing:write");
    crate::lake::link_or_write(current, path, bytes)
}

/// Waits until the staged copies and their directory entries are on disk: a staged copy must
/// outlive a power cut once the landing's COMMIT says its rows are in bronze. On Linux one
/// syncfs(2) of the raw zone's file system does it for every file at once (one journal commit,
/// not one a file); elsewhere each file and directory is synced.
pub(super) fn sync_staged(todo: &[ToLand], raw_root: &Path) -> Result<()> {
    let staged: Vec<PathBuf> = todo.iter().map(|f| staged_path(&raw_root.join(&f.rel))).collect();
    sync_to_disk(&staged, raw_root)
}

/// Waits until the raw zone's new `files` and their directory entries are on disk: a landing's
/// COMMIT may not name bytes a power cut could take (retail's staged copies, a model's kept
/// versions). One syncfs(2) of the raw zone's file system on Linux; elsewhere each file and
/// directory, and the lab's root.
pub(crate) fn sync_to_disk(files: &[PathBuf], raw_root: &Path) -> Result<()> {
    crate::lake::crash_point("landing:fsync");
    if files.is_empty() {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let root = std::fs::File::open(raw_root).wrap_err_with(|| format!("opening {}", raw_root.display()))?;
        // SAFETY: syncfs only reads the descriptor, which `root` keeps open for the call.
        if unsafe { libc::syncfs(root.as_raw_fd()) } == 0 {
            return Ok(());
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for staged in files {
        std::fs::File::open(staged).and_then(|f| f.sync_all()).wrap_err_with(|| format!("syncing {}", staged.display()))?;
        dirs.extend(staged.parent().map(Path::to_path_buf));
    }
    // The lab's root holds the mark that sends the next open's recovery to these copies.
    dirs.extend(raw_root.parent().map(Path::to_path_buf));
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        std::fs::File::open(&d).and_then(|f| f.sync_all()).wrap_err_with(|| format!("syncing {}", d.display()))?;
    }
    Ok(())
}

/// After the landing commits: superseded versions set aside, the staged copies moved into place,
/// and the raw zone's stores.csv written as recovery would write it.
pub(super) fn put_in_place(lab: &Lab, plan: &Plan, staged: &[(PathBuf, PathBuf)]) -> Result<()> {
    let raw_root = lab.raw_root();
    for f in plan.todo.iter().filter(|f| f.supersedes.is_some()) {
        set_aside(&raw_root, f)?;
    }
    crate::lake::crash_point("landing:set-aside");
    for (tmp, dest) in staged {
        std::fs::rename(tmp, dest).wrap_err_with(|| format!("moving {} into the raw zone", dest.display()))?;
    }
    std::fs::create_dir_all(&raw_root).wrap_err_with(|| format!("creating {}", raw_root.display()))?;
    let stores = raw_root.join(raw::STORES_FILE);
    std::fs::write(&stores, lab.stores()?.to_csv()?).wrap_err_with(|| format!("writing {}", stores.display()))?;
    crate::lake::recovery::unmark(&lab.root)
}

/// After a correction commits: the version it replaces leaves the raw zone's current layout for
/// the versions directory (its bytes unchanged), before the new version is renamed into place.
pub(super) fn set_aside(raw_root: &Path, f: &ToLand) -> Result<()> {
    let Some((_, old_version)) = f.supersedes else { return Ok(()) };
    let current = raw_root.join(&f.rel);
    let kept = raw::superseded_path(raw_root, &f.rel, old_version);
    if let Some(dir) = kept.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
    }
    std::fs::rename(&current, &kept).wrap_err_with(|| format!("keeping {} as {}", current.display(), kept.display()))
}

/// After a failed landing: the staged copies go, and so do the partition directories the landing
/// made (remove_dir only removes empty ones) and their parents up to the raw root.
pub(super) fn undo_copies(raw_root: &Path, staged: &[(PathBuf, PathBuf)], created_dirs: &[PathBuf]) {
    for (tmp, _) in staged {
        let _ = std::fs::remove_file(tmp);
    }
    for dir in created_dirs.iter().rev() {
        let mut d = dir.as_path();
        while d.starts_with(raw_root) && std::fs::remove_dir(d).is_ok() {
            match d.parent() {
                Some(p) => d = p,
                None => break,
            }
        }
    }
}
