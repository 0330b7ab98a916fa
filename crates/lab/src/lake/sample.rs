//! The bundled sample world: compiled into the binary by build.rs and written out where the
//! user's data lives, so the binary never reads the checkout it was built from.

use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/sample_world.rs"));
}

/// The world the first run and the explorer build from: `$RECOUNT_WORLD`, else the bundled
/// sample world. That one is compiled into the binary and written out once per sample (its
/// digest names the folder) beside the default lab, else in the temporary directory: the binary
/// never reads the checkout it was built from, which an installed copy may not have.
pub fn sample_world_dir() -> PathBuf {
    if let Some(dir) = crate::env::var("RECOUNT_WORLD") {
        return PathBuf::from(dir);
    }
    let name = format!("sample-world-{}", embedded::SAMPLE_WORLD_DIGEST);
    let homes = [super::data_home().join("recount"), std::env::temp_dir()];
    homes.iter().map(|h| h.join(&name)).find(|dir| write_sample_world(dir).is_ok()).unwrap_or_else(|| homes[0].join(&name))
}

/// Writes the bundled sample world to `dest` unless it is there: into a new folder beside it,
/// renamed into place whole, so a reader never sees half of it.
fn write_sample_world(dest: &Path) -> std::io::Result<()> {
    if dest.is_dir() {
        return Ok(());
    }
    let parent = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let fresh = tempfile::Builder::new().prefix(".sample-world-").tempdir_in(parent)?;
    for (rel, bytes) in embedded::SAMPLE_WORLD {
        let path = fresh.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, bytes)?;
    }
    match std::fs::rename(fresh.path(), dest) {
        // Another process wrote it first: its copy is the same bytes.
        Err(_) if dest.is_dir() => Ok(()),
        other => other,
    }
}
