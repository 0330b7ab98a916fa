//! A command that could not write the lab, in recount's own words: the disk is full, or the lab's
//! directory is read-only. DuckDB's own message for a failed commit on a full disk ("Failed to
//! commit … Unknown error code") names neither, so the lab's file system is asked.

use std::path::Path;

/// Free bytes below which a failed write is put down to a full disk.
const NEARLY_FULL: u64 = 4 << 20;

/// Why a write to the lab at `root` failed, if it was the disk or the permissions: one line that
/// says what was not written and that the lab is as it was.
pub fn explain(e: &color_eyre::Report, root: &Path) -> Option<String> {
    // A landing that committed and then failed already says what is true of the lab.
    if matches!(crate::error::lab_error(e), Some(crate::error::LabError::LandedUnfinished(_))) {
        return None;
    }
    let what = e.chain().last().map(|c| c.to_string()).unwrap_or_default();
    let first = e.to_string();
    let io_kind = e.chain().filter_map(|c| c.downcast_ref::<std::io::Error>()).map(std::io::Error::kind).next();
    let text = format!("{e:#}");
    // A failed write says so in one of these (DuckDB's words, or the kernel's through std).
    let says_write = ["No space left", "Failed to commit", "Could not write", "read-only", "Read-only", "Permission denied"]
        .iter()
        .any(|w| text.contains(w));
    let kind_is = |k: std::io::ErrorKind| io_kind == Some(k);
    if !says_write && io_kind.is_none() {
        return None;
    }
    let dir = if root.exists() { root } else { root.parent().unwrap_or(root) };
    let free = free_bytes(dir);
    let unchanged = "nothing of it was written, and the lab is as it was before this command";
    if kind_is(std::io::ErrorKind::StorageFull) || text.contains("No space left") || free.is_some_and(|f| f < NEARLY_FULL) {
        let free = free.map(|f| format!("{} KiB free", f / 1024)).unwrap_or_else(|| "no room".into());
        return Some(format!(
            "the disk holding the lab {} is full ({free}): {first}: {unchanged}. Free some space and run the command again",
            root.display()
        ));
    }
    let denied = kind_is(std::io::ErrorKind::ReadOnlyFilesystem) || kind_is(std::io::ErrorKind::PermissionDenied);
    if denied || (says_write && !writable(dir)) {
        return Some(format!(
            "the lab {} cannot be written here (a read-only file system or directory): {first}: {unchanged}. \
             Reports still read it; a command that writes needs write access ({what})",
            root.display()
        ));
    }
    None
}

fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct it is given, and `path` outlives the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: access only reads the path, which outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}
