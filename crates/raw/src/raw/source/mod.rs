//! A source description: how a raw zone in another shape maps onto the contract. `recount.toml`
//! at a world's root (or `--source FILE`) names where the upload partitions are and how their
//! names give the upload date, which files hold events and in what format, which path or column
//! gives each contract field, and where the stores are. A world without one is read as the
//! contract lays it out, on the fast reader.
//!
//! The description is data (serde from TOML), checked once into a `Source`; reading it is the
//! same validation, quarantine and limits as the contract's (`event::validate`). What the lab keeps
//! of it is the reading part (`Reader`, the format and the fields): the lab's own raw zone is
//! laid out as the contract's, with each file's bytes as they arrived.

use super::{EVENTS_DIR, STORES_FILE, StoreTable};
use chrono::{DateTime, NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod desc;
mod layout;

pub use desc::*;
use layout::*;
pub use layout::{glob_takes, is_writer_marker, list_dir};

/// The description's file name at a world's root.
pub const SOURCE_FILE: &str = "recount.toml";
/// Where the lab keeps the reading part of the description it landed through.
pub const LAB_SOURCE_FILE: &str = "source.toml";

/// A checked source description: where its partitions are, and how its files and stores read.
#[derive(Debug, Clone)]
pub struct Source {
    /// The description file read, None for the contract's own layout.
    pub origin: Option<PathBuf>,
    pub description: Description,
    /// The template's levels: those that name the upload date, then `below` levels under it.
    segments: Vec<Segment>,
    /// How many of the last levels sit below the day (hourly folders): an upload's files are
    /// found in every folder they match, and named in the lab by their path below the partition.
    below: usize,
}

impl Source {
    /// The contract's layout: `pos/events/upload_date=D/*.jsonl.gz` and `stores.csv`.
    pub fn contract() -> Source {
        Source::from_description(Description::default(), None).unwrap_or_else(|_| unreachable!("the contract's layout is valid"))
    }

    /// The world's description: `--source FILE` when given, else `WORLD/recount.toml`, else the
    /// contract's layout.
    pub fn of_world(world: &Path, given: Option<&Path>) -> Result<Source> {
        let path = match given {
            Some(p) => p.to_path_buf(),
            None => world.join(SOURCE_FILE),
        };
        if given.is_none() {
            // A link counts as there (even a dangling one): it is checked, not passed over.
            if path.symlink_metadata().is_err() {
                return Ok(Source::contract());
            }
            super::inside_world(world, &path)?;
        }
        let text = super::read_small_file(&path).wrap_err("reading the source description")?;
        let d: Description = toml::from_str(&text).map_err(|e| eyre!("{}: {}", path.display(), e.message()))?;
        Source::from_description(d, Some(path.clone())).wrap_err_with(|| format!("{}", path.display()))
    }

    pub fn from_description(d: Description, origin: Option<PathBuf>) -> Result<Source> {
        if let Some(choice) = &d.model {
            let model = choice.model()?;
            if model != crate::model::retail() {
                bail!(
                    "model {}: this command reads retail's worlds only, so it read nothing; `recount land` lands a model's \
                     world into a lab of its own, `recount spark run` into a warehouse, and `recount model WORLD` recounts \
                     gold.{} from its files",
                    model.name,
                    model.gold
                );
            }
        }
        let (segments, below) = parse_template(&d.partitions.template)?;
        check_root(&d.partitions.root)?;
        check_glob(&d.files.glob)?;
        if let Some(f) = &d.files.fields {
            for (name, path) in f.paths() {
                if path.is_empty() || path.split('.').any(str::is_empty) {
                    bail!("fields.{name}: '{path}' is not a path (dot-separated names)");
                }
            }
            if d.files.format != FileFormat::Jsonl && f.amount.tenders.is_some() {
                bail!("fields.amount.tenders: a list of tenders is read from JSON Lines only; map one total column");
            }
        } else if d.files.format != FileFormat::Jsonl {
            bail!("files.format = {:?} needs a [files.fields] mapping: the contract's fields are JSON", d.files.format);
        }
        Ok(Source { origin, description: d, segments, below })
    }

    /// Whether this is the contract's own shape, read on the fast reader.
    pub fn is_contract(&self) -> bool {
        self.description.files == Reader::default()
    }

    pub fn reader(&self) -> &Reader {
        &self.description.files
    }

    fn events_root(&self, world: &Path) -> PathBuf {
        world.join(&self.description.partitions.root)
    }

    /// Every upload partition of the world, oldest first, with its directory. A directory that
    /// the template does not take is an error (a typo would hide a day of sales), except a
    /// writer's own (`_temporary`, dot directories).
    pub fn partitions(&self, world: &Path) -> Result<Vec<(NaiveDate, PathBuf)>> {
        let root = self.events_root(world);
        if !root.exists() {
            return Ok(Vec::new());
        }
        super::inside_world(world, &root)?;
        let mut found = Vec::new();
        self.walk(&root, 0, [None; 3], &mut found)?;
        found.sort();
        if let Some(w) = found.windows(2).find(|w| w[0].0 == w[1].0) {
            bail!("two partitions give upload date {}: {} and {}", w[0].0, w[0].1.display(), w[1].1.display());
        }
        Ok(found)
    }

    fn walk(&self, dir: &Path, level: usize, parts: [Option<u32>; 3], out: &mut Vec<(NaiveDate, PathBuf)>) -> Result<()> {
        let seg = &self.segments[level];
        for entry in std::fs::read_dir(dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_writer_marker(&name) {
                continue;
            }
            let mut parts = parts;
            let date = match_segment(seg, &name, &mut parts).map_err(|e| eyre!("{e} (in {})", dir.display()))?;
            if level + 1 < self.date_levels() {
                self.walk(&entry.path(), level + 1, parts, out)?;
                continue;
            }
            let date = match date {
                Some(d) => d,
                None => {
                    let [Some(y), Some(m), Some(d)] = parts else {
                        bail!("the partition template '{}' gives no whole date", self.description.partitions.template)
                    };
                    NaiveDate::from_ymd_opt(y as i32, m, d)
                        .ok_or_else(|| eyre!("partition {}: {y:04}-{m:02}-{d:02} is not a valid date", entry.path().display()))?
                }
            };
            out.push((date, entry.path()));
        }
        Ok(())
    }

    /// The partition directory of upload `d` in `world` as the template names it.
    pub fn partition_dir(&self, world: &Path, d: NaiveDate) -> PathBuf {
        use chrono::Datelike;
        let mut p = self.events_root(world);
        for s in &self.segments[..self.date_levels()] {
            let v = match s.part {
                Part::Date => d.to_string(),
                Part::Year => format!("{:04}", d.year()),
                Part::Month => format!("{:02}", d.month()),
                Part::Day => format!("{:02}", d.day()),
                Part::Hour | Part::Any | Part::None => String::new(),
            };
            p.push(format!("{}{v}{}", s.prefix, s.suffix));
        }
        p
    }

    /// The data files of upload `d`, by name, and the other files there that the glob does not
    /// take (writer markers left out): land lists those, never silently.
    pub fn files(&self, world: &Path, d: NaiveDate) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let dir = self.partition_dir(world, d);
        super::inside_world(world, &dir)?;
        list_below(&dir, &self.segments[self.date_levels()..], &self.description.files.glob)
    }

    /// The levels that name the upload date (the partition), without those below the day.
    fn date_levels(&self) -> usize {
        self.segments.len() - self.below
    }

    /// A data file's name in its upload: its path below the partition, levels joined by `/`
    /// (`hour=07/pos+0+0000.json.gz` for hourly folders), as the lab records and orders it.
    pub fn name_in_upload(&self, world: &Path, d: NaiveDate, path: &Path) -> String {
        let dir = self.partition_dir(world, d);
        let below = path.strip_prefix(&dir).unwrap_or(path);
        below.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    }

    /// The world's stores, read through the description and checked as stores.csv is.
    pub fn stores(&self, world: &Path) -> Result<StoreTable> {
        let s = &self.description.stores;
        let path = super::world_file(world, &s.file, "stores.file")?;
        let format = s.format.unwrap_or(if s.file.ends_with(".parquet") { FileFormat::Parquet } else { FileFormat::Csv });
        if *s == StoresDesc::default() {
            return StoreTable::read(&path);
        }
        let rows: Vec<[String; 4]> = match format {
            FileFormat::Parquet => {
                super::check_small_file(&path)?;
                super::mapped::values::parquet_columns(&path, [s.store_id.as_str(), &s.country, &s.timezone, &s.currency])?
            }
            FileFormat::Csv => csv_columns(&path, [s.store_id.as_str(), &s.country, &s.timezone, &s.currency])?,
            FileFormat::Jsonl => bail!("stores.format: a store list is CSV or Parquet"),
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["store_id", "country", "timezone", "currency"])?;
        for r in &rows {
            w.write_record(r)?;
        }
        let text = String::from_utf8(w.into_inner().map_err(|e| eyre!("{e}"))?)?;
        StoreTable::parse(&text).wrap_err_with(|| format!("{} (row numbers as in the CSV it reads as)", path.display()))
    }

    /// Whether the world has a stores file where the description says.
    pub fn has_stores(&self, world: &Path) -> bool {
        world.join(&self.description.stores.file).is_file()
    }
}

/// The upload dates of a world, read through its own description (or the contract's layout).
pub fn uploads_of(world: &Path) -> Result<Vec<NaiveDate>> {
    Ok(Source::of_world(world, None)?.partitions(world)?.into_iter().map(|(d, _)| d).collect())
}

impl FieldPaths {
    /// Each mapped field's name and path, in the contract's order.
    pub fn paths(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("event_id", self.event_id.clone()), ("basket_id", self.basket_id.clone()), ("store_id", self.store_id.clone())];
        if let Some(t) = &self.till_id {
            out.push(("till_id", t.clone()));
        }
        out.push(("event_ts", self.event_ts.path().to_string()));
        out.push(("uploaded_at", self.uploaded_at.path().to_string()));
        out.push(("currency", self.currency.clone()));
        out.push(("amount", self.amount.display_path()));
        out
    }
}

impl AmountField {
    /// `total`, or `tenders[].amount` for a list.
    pub fn display_path(&self) -> String {
        match &self.tenders {
            Some(list) => format!("{list}[].{}", self.path),
            None => self.path.clone(),
        }
    }
}

impl Reader {
    /// The contract's own reader.
    pub fn is_default(&self) -> bool {
        *self == Reader::default()
    }

    /// The compression of a file by the description, else by its name.
    pub fn compression_of(&self, name: &str) -> Compression {
        self.compression.unwrap_or(if name.ends_with(".gz") {
            Compression::Gzip
        } else if name.ends_with(".zst") {
            Compression::Zstd
        } else {
            Compression::None
        })
    }

    /// The reader the lab landed through (`raw/source.toml`), else the contract's.
    pub fn of_lab(raw_root: &Path) -> Result<Reader> {
        let path = raw_root.join(LAB_SOURCE_FILE);
        if !path.exists() {
            return Ok(Reader::default());
        }
        let text = std::fs::read_to_string(&path).wrap_err_with(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).map_err(|e| eyre!("{}: {}", path.display(), e.message()))
    }

    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }
}

/// The named columns of a CSV file, row by row (a byte-order mark and surrounding spaces of
/// names ignored). A missing column is an error naming it.
fn csv_columns(path: &Path, names: [&str; 4]) -> Result<Vec<[String; 4]>> {
    let text = super::read_small_file(path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let headers = rdr.headers()?.clone();
    let mut idx = [0usize; 4];
    for (k, n) in names.iter().enumerate() {
        idx[k] = headers.iter().position(|h| h.trim() == *n).ok_or_else(|| {
            // Only the asked-for name: the header line of a file that is not the store list may
            // be anything, and is never echoed.
            eyre!("{}: no column '{}' among the header's {} column(s)", path.display(), crate::sanitize::for_terminal(n), headers.len())
        })?;
    }
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let rec = rec.wrap_err_with(|| format!("{}: line {}", path.display(), i + 2))?;
        out.push(idx.map(|k| rec.get(k).unwrap_or_default().to_string()));
    }
    Ok(out)
}

/// An exact decimal amount turned into minor units of `currency`: minor units must be a whole
/// number; major units may have at most the currency's ISO-4217 digits after the point (zeros
/// past them are exact and allowed). Never rounded, never through a float.
pub fn amount_minor(text: &str, unit: Unit, currency: &str) -> Result<i64, String> {
    let shown = crate::sanitize::for_terminal(text);
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) || body.ends_with('.') {
        return Err(format!("'{shown}' is not a plain decimal number"));
    }
    let digits = match unit {
        Unit::Minor => 0,
        Unit::Major => crate::money::digits(currency).ok_or_else(|| format!("currency '{currency}' has no ISO-4217 digits"))?,
    } as usize;
    let significant = frac.trim_end_matches('0');
    if significant.len() > digits {
        return Err(match unit {
            Unit::Minor => format!("'{shown}' is not a whole number of minor units"),
            Unit::Major => format!("'{shown}' has more decimal places than {currency}'s {digits}"),
        });
    }
    let mut padded = String::with_capacity(int.len() + digits);
    padded.push_str(int);
    padded.push_str(significant);
    padded.extend(std::iter::repeat_n('0', digits - significant.len()));
    let n: i128 = padded.parse().map_err(|_| format!("'{shown}' is too large for 64-bit minor units"))?;
    i64::try_from(if neg { -n } else { n }).map_err(|_| format!("'{shown}' is too large for 64-bit minor units"))
}

/// A count since 1970 in `unit` (an integer, or with a fraction exact to the nanosecond) as a
/// UTC instant; one that nanoseconds since 1970 cannot hold is out of range.
pub fn epoch_instant(text: &str, unit: EpochUnit) -> Result<DateTime<Utc>, String> {
    let shown = crate::sanitize::for_terminal(text);
    let bad = || format!("'{shown}' is not a time since 1970 in {}", unit_name(unit));
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty()
        || int.len() > 20
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || body.ends_with('.')
    {
        return Err(bad());
    }
    let per = unit.nanos();
    let frac_digits = per.ilog10() as usize;
    if frac.trim_end_matches('0').len() > frac_digits {
        return Err(format!("'{shown}' is finer than a nanosecond"));
    }
    let whole: i128 = int.parse().map_err(|_| bad())?;
    let f = frac.trim_end_matches('0');
    let part: i128 = if f.is_empty() { 0 } else { f.parse::<i128>().map_err(|_| bad())? * 10i128.pow((frac_digits - f.len()) as u32) };
    let n = whole * per + part;
    let n = if neg { -n } else { n };
    let n = i64::try_from(n).map_err(|_| format!("'{shown}' is out of range"))?;
    Ok(DateTime::from_timestamp_nanos(n))
}

fn unit_name(u: EpochUnit) -> &'static str {
    match u {
        EpochUnit::Seconds => "seconds",
        EpochUnit::Millis => "milliseconds",
        EpochUnit::Micros => "microseconds",
    }
}

impl StampFormat {
    pub fn epoch(self) -> Option<EpochUnit> {
        match self {
            StampFormat::Iso => None,
            StampFormat::EpochS => Some(EpochUnit::Seconds),
            StampFormat::EpochMs => Some(EpochUnit::Millis),
            StampFormat::EpochUs => Some(EpochUnit::Micros),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_units_turn_into_minor_by_the_currencys_digits_and_are_never_rounded() {
        assert_eq!(amount_minor("12.50", Unit::Major, "GBP"), Ok(1250));
        assert_eq!(amount_minor("12.5", Unit::Major, "GBP"), Ok(1250));
        assert_eq!(amount_minor("12", Unit::Major, "GBP"), Ok(1200));
        assert_eq!(amount_minor("12.500", Unit::Major, "GBP"), Ok(1250), "zeros past the digits are exact");
        assert_eq!(amount_minor("-0.07", Unit::Major, "GBP"), Ok(-7));
        assert_eq!(amount_minor("1250", Unit::Major, "JPY"), Ok(1250));
        assert_eq!(amount_minor("1.234", Unit::Major, "KWD"), Ok(1234));
        assert!(amount_minor("12.505", Unit::Major, "GBP").unwrap_err().contains("more decimal places than GBP's 2"));
        assert!(amount_minor("12.5", Unit::Major, "JPY").unwrap_err().contains("JPY's 0"));
        assert!(amount_minor("12.5", Unit::Minor, "GBP").unwrap_err().contains("whole number of minor units"));
        for bad in ["", "1e3", "+1", "1.", ".5", "1,50", " 1", "NaN", "--1"] {
            assert!(amount_minor(bad, Unit::Major, "GBP").unwrap_err().contains("plain decimal"), "{bad:?}");
        }
        assert_eq!(amount_minor("92233720368547758.07", Unit::Major, "GBP"), Ok(i64::MAX));
        assert!(amount_minor("92233720368547758.08", Unit::Major, "GBP").unwrap_err().contains("too large"));
    }

    #[test]
    fn epoch_counts_are_exact_instants() {
        let t = |s: &str, u| epoch_instant(s, u).map(|t| t.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string());
        assert_eq!(t("1760520000123", EpochUnit::Millis).unwrap(), "2025-10-15T09:20:00.123000000Z");
        assert_eq!(t("1760520000123456", EpochUnit::Micros).unwrap(), "2025-10-15T09:20:00.123456000Z");
        assert_eq!(t("1760520000", EpochUnit::Seconds).unwrap(), "2025-10-15T09:20:00.000000000Z");
        assert_eq!(t("1760520000.5", EpochUnit::Seconds).unwrap(), "2025-10-15T09:20:00.500000000Z");
        assert_eq!(t("-1", EpochUnit::Seconds).unwrap(), "1969-12-31T23:59:59.000000000Z");
        assert!(t("1760520000.0000000001", EpochUnit::Seconds).unwrap_err().contains("finer than a nanosecond"));
        assert!(t("99999999999999999999", EpochUnit::Seconds).unwrap_err().contains("out of range"));
        assert!(t("2026-10-15", EpochUnit::Millis).unwrap_err().contains("milliseconds"));
    }

    #[test]
    fn templates_name_the_upload_date_once() {
        assert!(parse_template("dt={date}").is_ok());
        assert!(parse_template("year={yyyy}/month={mm}/day={dd}").is_ok());
        assert!(parse_template("{yyyy}/{mm}/{dd}").is_ok());
        assert!(parse_template("dt={date}/hour=00").is_ok());
        assert!(parse_template("year={yyyy}/month={mm}").unwrap_err().to_string().contains("once"));
        assert!(parse_template("d={date}/e={date}").is_err());
        assert!(parse_template("d={when}").unwrap_err().to_string().contains("{when}"));
        // Levels below the day: an hour, any folder, fixed text after them; never above the day.
        assert_eq!(parse_template("year={yyyy}/month={mm}/day={dd}/hour={hh}").unwrap().1, 1);
        assert_eq!(parse_template("dt={date}/hour=00").unwrap().1, 0, "fixed text after the date is the partition's");
        assert_eq!(parse_template("dt={date}/*/part={hh}/x").unwrap().1, 3);
        assert!(parse_template("hour={hh}/dt={date}").unwrap_err().to_string().contains("must come below"));
        assert!(parse_template("dt={date}/h*").unwrap_err().to_string().contains("taken literally"));
        let hour = &parse_template("dt={date}/hour={hh}").unwrap().0[1];
        assert!(match_segment(hour, "hour=07", &mut [None; 3]).is_ok());
        assert!(match_segment(hour, "hour=24", &mut [None; 3]).unwrap_err().contains("not an hour"));
        let seg = &parse_template("dt={date}").unwrap().0[0];
        let mut parts = [None; 3];
        assert_eq!(match_segment(seg, "dt=2026-10-15", &mut parts).unwrap(), "2026-10-15".parse().ok());
        assert!(match_segment(seg, "dt=2026-02-30", &mut parts).unwrap_err().contains("not a valid date"));
        assert!(match_segment(seg, "date=2026-10-15", &mut parts).unwrap_err().contains("not named dt=YYYY-MM-DD"));
        let month = &parse_template("year={yyyy}/month={mm}/day={dd}").unwrap().0[1];
        assert!(match_segment(month, "month=13", &mut parts).is_err());
        assert!(match_segment(month, "month=1", &mut parts).is_err());
    }

    #[test]
    fn globs_take_names_and_markers_are_skipped() {
        assert!(glob_match(b"*.jsonl.gz", b"a.jsonl.gz"));
        assert!(!glob_match(b"*.jsonl.gz", b"a.jsonl"));
        assert!(glob_match(b"part-*.parquet", b"part-00000-x.snappy.parquet"));
        assert!(glob_match(b"?.csv", b"a.csv"));
        assert!(!glob_match(b"?.csv", b"ab.csv"));
        for m in ["_SUCCESS", ".part-0.parquet.crc", "part-0.parquet.crc", "_temporary", ".DS_Store"] {
            assert!(is_writer_marker(m), "{m}");
        }
        assert!(!is_writer_marker("part-0.parquet"));
    }
}
