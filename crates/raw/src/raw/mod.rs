//! The raw zone as the contract lays it out: `stores.csv` and
//! `pos/events/upload_date=YYYY-MM-DD/*.jsonl.gz`. Nothing here writes.

pub mod corrections;
pub mod event;
pub mod fast_line;
mod inflate;
mod line;
pub mod mapped;
mod slow_line;
pub mod source;
pub mod stores;

pub use inflate::{Inflated, decompress, inflate_room, unzstd};

use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::{Path, PathBuf};

pub use event::{PosEvent, parse_line};
pub use stores::{Shop, StoreChange, StoreTable};

pub use crate::model::EVENTS_DIR;
pub const STORES_FILE: &str = "stores.csv";

/// The most a world's small files (its store list, its source description) and recount's config
/// may hold: a list of ten thousand stores is under a megabyte. A larger one (a sparse file, a
/// link to a device) is refused before it is read, never grown into memory.
pub const MAX_SMALL_FILE_BYTES: u64 = 64 << 20;

/// A world's own file, `rel` under `world` (`what` names it in errors: `stores.file`), checked
/// before a byte of it is read: a relative path with no `..`, inside the world once every link
/// is followed (a link that leaves it is refused, with where it leads), and a regular file (a
/// FIFO would block, a device never end). Returns the path to read with `read_small_file`.
pub fn world_file(world: &Path, rel: &str, what: &str) -> Result<PathBuf> {
    let lexical = Path::new(rel);
    if lexical.is_absolute() || lexical.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        bail!("{what} = '{}' must be a path inside the world {}", crate::sanitize::for_terminal(rel), world.display());
    }
    let path = world.join(lexical);
    inside_world(world, &path)?;
    Ok(path)
}

/// Whether `path` (which names something under `world`) stays inside the world once its links
/// are followed: an error naming where it leads when it does not. A path that does not exist
/// stays where it is.
pub fn inside_world(world: &Path, path: &Path) -> Result<()> {
    let Ok(resolved) = path.canonicalize() else { return Ok(()) };
    let home = world.canonicalize().wrap_err_with(|| format!("reading the world {}", world.display()))?;
    if !resolved.starts_with(&home) {
        bail!(
            "{} leads outside the world {} (to {}): recount reads only what is inside a world",
            path.display(),
            world.display(),
            resolved.display()
        );
    }
    Ok(())
}

/// A regular file (links followed) of at most `MAX_SMALL_FILE_BYTES`, by its metadata: what a
/// reader that opens the file itself (DuckDB's Parquet) is given.
pub fn check_small_file(path: &Path) -> Result<()> {
    crate::store::foreign::check_regular_file(path, MAX_SMALL_FILE_BYTES, &format!("{} MiB such a file", MAX_SMALL_FILE_BYTES >> 20))
}

/// The whole text of a small file: a regular file (links followed) of at most
/// `MAX_SMALL_FILE_BYTES`, read through a bound as well, since a file's length may not say what
/// reading it gives (`/proc`). Its content never reaches the error.
pub fn read_small_file(path: &Path) -> Result<String> {
    use std::io::Read;
    check_small_file(path)?;
    let file = std::fs::File::open(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SMALL_FILE_BYTES + 1).read_to_end(&mut bytes).wrap_err_with(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        bail!("{} reads as more than the {} MiB such a file may hold", path.display(), MAX_SMALL_FILE_BYTES >> 20);
    }
    String::from_utf8(bytes)
        .map_err(|e| color_eyre::eyre::eyre!("{}: not UTF-8 text (at byte {})", path.display(), e.utf8_error().valid_up_to()))
}

/// A file's path in a raw zone, relative to its root: `pos/events/upload_date=D/NAME`. The lab
/// records landed files by it.
pub fn rel_path(upload_date: NaiveDate, name: &str) -> String {
    format!("{EVENTS_DIR}/upload_date={upload_date}/{name}")
}

/// A landed file's name in its upload, from its path in the raw zone: what follows its
/// partition (`tills-gb.jsonl.gz`, or `hour=07/pos+0+1.json.gz` from an hourly folder).
pub fn name_in_upload(rel: &str) -> &str {
    rel.strip_prefix(EVENTS_DIR).and_then(|r| r.strip_prefix('/')).and_then(|r| r.split_once('/')).map_or(rel, |(_, name)| name)
}

pub fn partition_dir(root: &Path, upload_date: NaiveDate) -> PathBuf {
    root.join(EVENTS_DIR).join(format!("upload_date={upload_date}"))
}

/// A date written exactly `YYYY-MM-DD`: ASCII digits, a real day of the calendar, years 0001 to
/// 9999 (what every reader, Python's and Spark's among them, reads alike). None for anything else
/// (`2026-3-1`, `+10000-01-01`, `2026-W26-1`).
pub fn strict_date(s: &str) -> Option<NaiveDate> {
    use chrono::Datelike;
    let b = s.as_bytes();
    let shaped = b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok().filter(|_| shaped)?;
    (d.year() >= 1).then_some(d)
}

/// Parses a partition directory name; anything that is not `upload_date=<valid date>` is an error.
pub fn parse_partition_name(name: &str) -> Result<NaiveDate, String> {
    let Some(value) = name.strip_prefix("upload_date=") else {
        return Err(format!("partition directory '{name}' is not named upload_date=YYYY-MM-DD"));
    };
    strict_date(value).ok_or_else(|| format!("partition directory '{name}': '{value}' is not a valid date (YYYY-MM-DD)"))
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

/// The `.jsonl.gz` files of one partition of a world in the contract's layout, by name (as
/// `source::list_dir` lists them: a name recount cannot keep exactly is refused). A missing
/// partition holds no files.
pub fn list_files(root: &Path, upload_date: NaiveDate) -> Result<Vec<PathBuf>> {
    Ok(source::list_dir(&partition_dir(root, upload_date), "*.jsonl.gz")?.0)
}

/// Every file below `dir` in the lab's raw zone, at any depth (a described source's files may
/// sit in folders below their partition: `hour=07/…`), by path; writer markers and a landing's
/// staged copies (`*.landing`) left out. Nothing when `dir` is not there.
pub fn files_below(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = match std::fs::read_dir(&d) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other.wrap_err_with(|| format!("reading {}", d.display()))?,
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if source::is_writer_marker(&name) || name.ends_with(".landing") {
                continue;
            }
            if entry.file_type()?.is_dir() { todo.push(entry.path()) } else { out.push(entry.path()) }
        }
    }
    out.sort();
    Ok(out)
}

/// The whole decompressed text of a gzip file recount wrote itself (a generated world, a test's
/// fixture), which is UTF-8 throughout. A raw file from a world is read by bytes instead
/// (`decompress` and `split_lines`), so that one bad line cannot hold back the others.
pub fn read_gz_text(path: &Path) -> Result<String> {
    let bytes = read_gz_bytes(path)?.into_vec();
    String::from_utf8(bytes).map_err(|e| eyre!("{}: not UTF-8 at byte {}", path.display(), e.utf8_error().valid_up_to()))
}

/// The decompressed bytes of one upload file. A truncated or corrupt gzip is an error for the
/// whole file: its lines cannot be trusted one by one.
pub fn read_gz_bytes(path: &Path) -> Result<Inflated<'static>> {
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    decompress(&bytes).map_err(|e| unreadable(".gz", &e).wrap_err(path.display().to_string()))
}

/// A raw file's lines, as the contract's section 2 splits them: at the newline byte, before
/// anything is decoded, one carriage return before each newline dropped, and no line after a
/// final newline (as `str::lines`). Each line is decoded on its own (`line_text`), so a line that
/// is not UTF-8 is quarantined alone and the rest of its file lands.
pub fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', bytes);
    std::iter::from_fn(move || {
        let line = match ends.next() {
            Some(end) => {
                let line = &bytes[start..end];
                start = end + 1;
                line.strip_suffix(b"\r").unwrap_or(line)
            }
            None if start < bytes.len() => {
                let line = &bytes[start..];
                start = bytes.len();
                line
            }
            None => return None,
        };
        Some(line)
    })
}

/// One line's text, or its quarantine reason: `not UTF-8 at byte N`, N counted from the line's
/// first byte (0), where its first byte that is not part of valid UTF-8 stands.
pub fn line_text(line: &[u8]) -> std::result::Result<&str, String> {
    std::str::from_utf8(line).map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))
}

/// Why a compressed file cannot be read whole, in one phrase: one that inflates past the limit
/// says so (a gzip bomb is no corrupt file); anything else is truncated or corrupt.
pub fn unreadable(kind: &str, e: &color_eyre::Report) -> color_eyre::Report {
    let text = e.to_string();
    if text.starts_with(INFLATES_PAST) {
        color_eyre::eyre::eyre!("the {kind} file {text}")
    } else {
        color_eyre::eyre::eyre!("truncated or corrupt {kind} file ({text})")
    }
}

/// How the inflate limit's error begins (`gunzip`, `unzstd`).
const INFLATES_PAST: &str = "inflates to more than";

/// The most one raw file may inflate to. A day's file of one store group is a few megabytes; a
/// file past this is refused (its upload is held back), so a gzip bomb cannot exhaust memory.
pub const MAX_INFLATED_BYTES: usize = 256 << 20;

/// The longest line recount parses; a longer one is quarantined with its file and line. A sale
/// is a few hundred bytes.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// The longest id (event_id, basket_id, store_id, till_id) and currency recount keeps.
pub const MAX_ID_BYTES: usize = 256;

/// Where a superseded version of a raw-zone file is kept: `raw/versions/upload_date=D/vN/NAME`.
/// The raw zone's own layout then always holds exactly the current versions.
pub fn superseded_path(raw_root: &Path, rel: &str, version: i32) -> PathBuf {
    // `pos/events/upload_date=D/NAME`, where NAME may run through folders (`hour=07/f.json.gz`).
    let below_events = Path::new(rel).strip_prefix(EVENTS_DIR).unwrap_or(Path::new(rel));
    let mut parts = below_events.components();
    let partition = parts.next().map(|c| c.as_os_str().to_os_string()).unwrap_or_default();
    raw_root.join(VERSIONS_DIR).join(partition).join(format!("v{version}")).join(parts.as_path())
}

/// The directory of superseded versions, beside `pos/`.
pub const VERSIONS_DIR: &str = "versions";

/// The MD5 of a file's bytes, as the lab records landed files by it.
pub fn md5_of_file(path: &Path) -> Result<String> {
    Ok(md5_hex(&std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?))
}

/// The lowercase hex MD5 of bytes, as the lab records landed files by it.
pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_in_its_upload_by_its_path_below_the_partition() {
        assert_eq!(name_in_upload("pos/events/upload_date=2026-10-15/tills-gb.jsonl.gz"), "tills-gb.jsonl.gz");
        assert_eq!(name_in_upload("pos/events/upload_date=2026-10-15/hour=07/p+0.json.gz"), "hour=07/p+0.json.gz");
    }

    #[test]
    fn a_superseded_version_is_kept_under_its_partition_and_version_with_its_folders() {
        let root = Path::new("/lab/raw");
        assert_eq!(
            superseded_path(root, "pos/events/upload_date=2026-10-15/tills-gb.jsonl.gz", 2),
            Path::new("/lab/raw/versions/upload_date=2026-10-15/v2/tills-gb.jsonl.gz")
        );
        assert_eq!(
            superseded_path(root, "pos/events/upload_date=2026-10-15/hour=07/pos+0+1.json.gz", 3),
            Path::new("/lab/raw/versions/upload_date=2026-10-15/v3/hour=07/pos+0+1.json.gz")
        );
    }

    #[test]
    fn partition_names_must_be_real_dates() {
        assert_eq!(parse_partition_name("upload_date=2026-08-15").unwrap(), "2026-08-15".parse::<NaiveDate>().unwrap());
        assert!(parse_partition_name("upload_date=2026-02-30").unwrap_err().contains("not a valid date"));
        assert!(parse_partition_name("upload_date=2026-8-1").is_err());
        assert!(parse_partition_name("date=2026-08-15").unwrap_err().contains("upload_date=YYYY-MM-DD"));
    }

    #[test]
    fn a_file_that_inflates_past_the_limit_is_refused_without_inflating_it_all() {
        let zeros = vec![b'\n'; 5 << 20];
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &zeros).unwrap();
        let bomb = enc.finish().unwrap();
        assert!(bomb.len() < 64 << 10, "a small file: {}", bomb.len());
        let err = inflate::gunzip(&bomb, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("more than 1 MiB"), "{err}");
        assert_eq!(inflate::gunzip(&bomb, 5 << 20).unwrap().len(), 5 << 20, "a file at the limit inflates");
    }

    /// A raw file's bytes as lines (tests/corpus/split.jsonl; the Spark driver reads the same
    /// cases in spark/tests/test_corpus.py): split at the newline byte, each decoded on its own.
    #[test]
    fn the_shared_split_corpus_gets_every_line() {
        let text = include_str!("../../../../tests/corpus/split.jsonl");
        let (mut cases, mut bad) = (0, 0);
        for case in text.lines() {
            let c: serde_json::Value = serde_json::from_str(case).unwrap();
            let hex = c["hex"].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
            let got: Vec<serde_json::Value> = split_lines(&bytes)
                .map(|l| match line_text(l) {
                    Ok(t) => serde_json::json!({ "text": t }),
                    Err(r) => serde_json::json!({ "reason": r }),
                })
                .collect();
            assert_eq!(got, c["lines"].as_array().unwrap().clone(), "{}", c["case"]);
            bad += got.iter().filter(|l| l.get("reason").is_some()).count();
            cases += 1;
        }
        assert!(cases >= 20 && bad >= 10, "{cases} cases, {bad} bad lines");
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let full = enc.finish().unwrap();
        assert!(decompress(&full).is_ok());
        assert!(decompress(&full[..full.len() - 6]).is_err(), "a truncated gzip must not decode");
        assert!(decompress(b"").is_err(), "an empty file is no gzip stream");
    }

    #[test]
    fn every_member_of_a_multi_member_gzip_is_read() {
        let member = |text: &[u8], level| {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), level);
            std::io::Write::write_all(&mut enc, text).unwrap();
            enc.finish().unwrap()
        };
        // The second member is far bigger than the first, whose buffer comes from the last
        // member's trailer: both the too-big and the too-small first guess are taken.
        let big: Vec<u8> = (0..100_000u32).flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes()).collect();
        let mut file = member(b"{\"first\":1}\n", flate2::Compression::fast());
        file.extend(member(&big, flate2::Compression::default()));
        file.extend(member(b"{\"last\":3}\n", flate2::Compression::fast()));
        let text = String::from_utf8(decompress(&file).unwrap().into_vec()).unwrap();
        assert!(text.starts_with("{\"first\":1}\n{\"n\":0}\n"));
        assert!(text.ends_with("{\"n\":99999}\n{\"last\":3}\n"));
        assert_eq!(text.len(), 12 + big.len() + 11);
        let mut garbage = file.clone();
        garbage.extend_from_slice(b"trailing bytes");
        assert!(decompress(&garbage).is_err(), "bytes after the last member are not gzip");
    }
}
