//! The raw zone as the contract lays it out: `stores.csv` and
//! `pos/events/upload_date=YYYY-MM-DD/*.jsonl.gz`. Nothing here writes.

pub mod event;
pub mod stores;

use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail};
use std::io::Read;
use std::path::{Path, PathBuf};

pub use event::{PosEvent, parse_line};
pub use stores::{Store, StoreTable};

pub const EVENTS_DIR: &str = "pos/events";
pub const STORES_FILE: &str = "stores.csv";

pub fn partition_dir(root: &Path, upload_date: NaiveDate) -> PathBuf {
    root.join(EVENTS_DIR).join(format!("upload_date={upload_date}"))
}

/// Parses a partition directory name; anything that is not `upload_date=<valid date>` is an error.
pub fn parse_partition_name(name: &str) -> Result<NaiveDate, String> {
    let Some(value) = name.strip_prefix("upload_date=") else {
        return Err(format!("partition directory '{name}' is not named upload_date=YYYY-MM-DD"));
    };
    if value.len() != 10 {
        return Err(format!("partition directory '{name}': '{value}' is not a valid date (YYYY-MM-DD)"));
    }
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .map_err(|_| format!("partition directory '{name}': '{value}' is not a valid date (YYYY-MM-DD)"))
}

/// Every upload partition under a raw zone, oldest first. A directory with a bad name is an error,
/// never skipped: a typo in a partition name would otherwise hide a day of sales.
pub fn list_partitions(root: &Path) -> Result<Vec<NaiveDate>> {
    let dir = root.join(EVENTS_DIR);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut dates = Vec::new();
    for entry in std::fs::read_dir(&dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        match parse_partition_name(&name) {
            Ok(d) => dates.push(d),
            Err(e) => bail!("{e} (in {})", dir.display()),
        }
    }
    dates.sort();
    Ok(dates)
}

/// The `.jsonl.gz` files of one partition, by name. A missing partition holds no files.
pub fn list_files(root: &Path, upload_date: NaiveDate) -> Result<Vec<PathBuf>> {
    let dir = partition_dir(root, upload_date);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_file() && path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".jsonl.gz")) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The whole decompressed text of one upload file. A truncated or corrupt gzip is an error for
/// the whole file: its lines cannot be trusted one by one.
pub fn read_gz_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    decompress(&bytes).wrap_err_with(|| format!("{}: truncated or corrupt .gz file", path.display()))
}

pub fn decompress(bytes: &[u8]) -> Result<String> {
    let mut out = Vec::with_capacity(bytes.len() * 6);
    flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out)?;
    match String::from_utf8(out) {
        Ok(s) => Ok(s),
        Err(e) => bail!("not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_must_be_real_dates() {
        assert_eq!(parse_partition_name("upload_date=2026-08-15").unwrap(), "2026-08-15".parse::<NaiveDate>().unwrap());
        assert!(parse_partition_name("upload_date=2026-02-30").unwrap_err().contains("not a valid date"));
        assert!(parse_partition_name("upload_date=2026-8-1").is_err());
        assert!(parse_partition_name("date=2026-08-15").unwrap_err().contains("upload_date=YYYY-MM-DD"));
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let full = enc.finish().unwrap();
        assert!(decompress(&full).is_ok());
        assert!(decompress(&full[..full.len() - 6]).is_err(), "a truncated gzip must not decode");
    }
}
