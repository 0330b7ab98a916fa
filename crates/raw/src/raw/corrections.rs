//! Corrections as a world ships them: each a directory laid out as a world (`stores.csv` and
//! one upload partition with all its files), in which one file has other bytes than the world's.
//! Landing it lands that file as its next version. `WORLD/corrections/NN-kind/` in delivery
//! order, with `correction.json` saying what changed. The generator writes them
//! (`world::corrections`); the lab reads them here.

use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use std::path::{Path, PathBuf};

pub const CORRECTIONS_DIR: &str = "corrections";
pub const NOTE_FILE: &str = "correction.json";

/// What a correction changes in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorrectionKind {
    /// A few lines' first tender is larger: the vendor re-exported with the right amounts.
    ChangedAmounts,
    /// A few lines are gone: sales that never happened.
    WithdrawnLines,
    /// One more basket: a sale the first export missed.
    AddedBasket,
    /// The same lines, compressed again: other bytes, no change.
    Recompressed,
}

impl CorrectionKind {
    pub fn slug(self) -> &'static str {
        match self {
            CorrectionKind::ChangedAmounts => "changed-amounts",
            CorrectionKind::WithdrawnLines => "withdrawn-lines",
            CorrectionKind::AddedBasket => "added-basket",
            CorrectionKind::Recompressed => "recompressed",
        }
    }
}

/// One correction as written: where it is and what it changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Correction {
    /// Where the delivery is (not written into its note: the note moves with the directory).
    #[serde(skip, default)]
    pub dir: PathBuf,
    pub upload_date: NaiveDate,
    /// The corrected file's name in its partition.
    pub file: String,
    pub kind: CorrectionKind,
    /// The lines (1-based, of the original file) the correction changes or withdraws.
    pub lines: Vec<usize>,
    /// The change in revenue the correction makes, in minor units of the file's currency.
    pub revenue_delta_minor: i64,
}

/// The corrections of `world` in delivery order (none when it has no corrections directory).
pub fn list(world: &Path) -> Result<Vec<Correction>> {
    let root = world.join(CORRECTIONS_DIR);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs.into_iter().filter(|d| d.join(NOTE_FILE).is_file()) {
        let text = std::fs::read_to_string(dir.join(NOTE_FILE))?;
        let mut c: Correction = serde_json::from_str(&text).wrap_err_with(|| format!("reading {}", dir.join(NOTE_FILE).display()))?;
        c.dir = dir;
        out.push(c);
    }
    Ok(out)
}

/// The corrections of `world` not landed yet: their upload has landed (`landed_uploads`, sorted),
/// and some file of theirs has bytes no landed version of its path has (`has_bytes(rel, md5)`).
pub fn pending(world: &Path, landed_uploads: &[NaiveDate], has_bytes: impl Fn(&str, &str) -> bool) -> Result<Vec<Correction>> {
    let mut out = Vec::new();
    for c in list(world)? {
        if landed_uploads.binary_search(&c.upload_date).is_err() {
            continue;
        }
        let mut new_bytes = false;
        let source = super::source::Source::of_world(&c.dir, None)?;
        for f in source.files(&c.dir, c.upload_date)?.0 {
            let rel = super::rel_path(c.upload_date, &source.name_in_upload(&c.dir, c.upload_date, &f));
            new_bytes |= !has_bytes(&rel, &super::md5_of_file(&f)?);
        }
        if new_bytes {
            out.push(c);
        }
    }
    Ok(out)
}
