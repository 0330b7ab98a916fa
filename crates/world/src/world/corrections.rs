//! Corrected deliveries of a world's files, for trying the correction path: each is a directory
//! laid out as a world (`stores.csv` and one upload partition with all its files), in which one
//! file has other bytes than the world's. Landing it (`recount land DATE --world DIR`) lands that
//! file as its next version; the partition's other files are unchanged.
//!
//! `WORLD/corrections/NN-kind/` in delivery order, with `correction.json` saying what changed.

use crate::raw;
use crate::raw::corrections::NOTE_FILE;
pub use crate::raw::corrections::{CORRECTIONS_DIR, Correction, CorrectionKind, list};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::io::Write;
use std::path::Path;

/// The amount a changed line's first tender grows by.
const AMOUNT_CHANGE_MINOR: i64 = 1_000;

/// Writes the four kinds of correction for `world`, each of its own upload, and returns them.
pub fn write(world: &Path) -> Result<Vec<Correction>> {
    let uploads = raw::list_partitions(world)?;
    if uploads.len() < 8 {
        bail!("corrections need a world of at least 8 uploads; {} has {}", world.display(), uploads.len());
    }
    let n = uploads.len();
    let plan = [
        (uploads[n / 3], CorrectionKind::ChangedAmounts),
        (uploads[n / 2], CorrectionKind::WithdrawnLines),
        (uploads[2 * n / 3], CorrectionKind::AddedBasket),
        (uploads[n / 3 + 1], CorrectionKind::Recompressed),
    ];
    let root = world.join(CORRECTIONS_DIR);
    if root.exists() {
        std::fs::remove_dir_all(&root).wrap_err_with(|| format!("removing {}", root.display()))?;
    }
    let mut out = Vec::new();
    for (i, (upload, kind)) in plan.into_iter().enumerate() {
        let dir = root.join(format!("{:02}-{}", i + 1, kind.slug()));
        out.push(write_one(world, &dir, upload, kind)?);
    }
    Ok(out)
}

fn write_one(world: &Path, dir: &Path, upload: NaiveDate, kind: CorrectionKind) -> Result<Correction> {
    let files = raw::list_files(world, upload)?;
    let Some(target) = files.first() else { bail!("upload {upload} of {} has no files", world.display()) };
    let dest = raw::partition_dir(dir, upload);
    std::fs::create_dir_all(&dest).wrap_err_with(|| format!("creating {}", dest.display()))?;
    std::fs::copy(world.join(raw::STORES_FILE), dir.join(raw::STORES_FILE))?;
    for f in &files[1..] {
        std::fs::copy(f, dest.join(f.file_name().unwrap_or_default()))?;
    }
    let text = raw::read_gz_text(target)?;
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 8 {
        bail!("{} has too few lines to correct", target.display());
    }
    // Lines spread through the file, the same every time.
    let picked: Vec<usize> = (1..=3).map(|k| k * lines.len() / 4).collect();
    let (body, changed, delta) = match kind {
        CorrectionKind::ChangedAmounts => {
            let mut out = Vec::with_capacity(lines.len());
            for (i, l) in lines.iter().enumerate() {
                out.push(if picked.contains(&i) { with_first_tender_raised(l, AMOUNT_CHANGE_MINOR)? } else { l.to_string() });
            }
            (out, picked.clone(), AMOUNT_CHANGE_MINOR * picked.len() as i64)
        }
        CorrectionKind::WithdrawnLines => {
            let gone = &picked[..2];
            let mut delta = 0;
            for &i in gone {
                delta -= revenue(lines[i])?;
            }
            let kept = lines.iter().enumerate().filter(|(i, _)| !gone.contains(i)).map(|(_, l)| l.to_string()).collect();
            (kept, gone.to_vec(), delta)
        }
        CorrectionKind::AddedBasket => {
            let model = lines[picked[0]];
            let added = as_new_basket(model)?;
            let delta = revenue(&added)?;
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out.push(added);
            (out, vec![lines.len()], delta)
        }
        CorrectionKind::Recompressed => (lines.iter().map(|l| l.to_string()).collect(), Vec::new(), 0),
    };
    // Another compression level than the file's (the presets use 9 and 1): other bytes even for
    // the same lines.
    let level = if std::fs::read(target)? == gzip(&text, 9)? { 6 } else { 9 };
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level));
    for l in &body {
        gz.write_all(l.as_bytes())?;
        gz.write_all(b"\n")?;
    }
    let name = target.file_name().unwrap_or_default().to_string_lossy().into_owned();
    std::fs::write(dest.join(&name), gz.finish()?)?;
    let correction = Correction {
        dir: dir.to_path_buf(),
        upload_date: upload,
        file: name,
        kind,
        lines: changed.iter().map(|i| i + 1).collect(),
        revenue_delta_minor: delta,
    };
    std::fs::write(dir.join(NOTE_FILE), serde_json::to_string_pretty(&correction)? + "\n")?;
    Ok(correction)
}

fn gzip(text: &str, level: u32) -> Result<Vec<u8>> {
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level));
    gz.write_all(text.as_bytes())?;
    Ok(gz.finish()?)
}

fn parse(line: &str) -> Result<serde_json::Value> {
    serde_json::from_str(line).map_err(|e| eyre!("a line to correct is not JSON: {e}"))
}

/// A basket's revenue: the sum of its tenders.
fn revenue(line: &str) -> Result<i64> {
    let v = parse(line)?;
    let tenders = v["tenders"].as_array().ok_or_else(|| eyre!("a line to correct has no tenders"))?;
    tenders.iter().map(|t| t["amount_minor"].as_i64().ok_or_else(|| eyre!("a tender has no amount"))).sum()
}

fn with_first_tender_raised(line: &str, by: i64) -> Result<String> {
    let mut v = parse(line)?;
    let amount = v["tenders"][0]["amount_minor"].as_i64().ok_or_else(|| eyre!("a line to correct has no first tender"))?;
    v["tenders"][0]["amount_minor"] = (amount + by).into();
    Ok(v.to_string())
}

/// The same sale as a basket of its own: a new basket_id and event_id.
fn as_new_basket(line: &str) -> Result<String> {
    let mut v = parse(line)?;
    for field in ["basket_id", "event_id"] {
        let old = v[field].as_str().ok_or_else(|| eyre!("a line to correct has no {field}"))?.to_string();
        v[field] = format!("{old}-added").into();
    }
    Ok(v.to_string())
}
