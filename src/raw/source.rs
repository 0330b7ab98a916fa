//! A source description: how a raw zone in another shape maps onto the contract. `recount.toml`
//! at a world's root (or `--source FILE`) names where the upload partitions are and how their
//! names give the upload date, which files hold events and in what format, which path or column
//! gives each contract field, and where the stores are. A world without one is read as the
//! contract lays it out, on the fast reader.
//!
//! The description is data (serde from TOML), checked once into a `Source`; reading it is the
//! same validation, quarantine and limits as the contract's (`event::check`). What the lab keeps
//! of it is the reading part (`Reader`, the format and the fields): the lab's own raw zone is
//! laid out as the contract's, with each file's bytes as they arrived.

use super::{EVENTS_DIR, STORES_FILE, StoreTable};
use chrono::{DateTime, NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The description's file name at a world's root.
pub const SOURCE_FILE: &str = "recount.toml";
/// Where the lab keeps the reading part of the description it landed through.
pub(crate) const LAB_SOURCE_FILE: &str = "source.toml";

/// A source description as written (see docs/data-contract.md, "Source descriptions").
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Description {
    #[serde(default)]
    pub partitions: PartitionsDesc,
    #[serde(default)]
    pub files: Reader,
    #[serde(default)]
    pub stores: StoresDesc,
    /// The daily metric the world feeds (docs/data-contract.md, "Models"): a built-in's name or a
    /// `[model]` table; None is retail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<crate::model::ModelChoice>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PartitionsDesc {
    /// The directory, under the world's root, that holds the partitions.
    #[serde(default = "default_root")]
    pub root: String,
    /// The partition directories below `root`, one segment per level, with `{date}`
    /// (YYYY-MM-DD) or `{yyyy}`, `{mm}` and `{dd}`; then any levels below the day, each `{hh}`
    /// (an hour, 00-23, in its own text: `hour={hh}`), `*` (any folder) or fixed text.
    #[serde(default = "default_template")]
    pub template: String,
}

fn default_root() -> String {
    EVENTS_DIR.to_string()
}
fn default_template() -> String {
    "upload_date={date}".to_string()
}

impl Default for PartitionsDesc {
    fn default() -> Self {
        PartitionsDesc { root: default_root(), template: default_template() }
    }
}

/// How a raw file is read: which files of a partition, their format and compression, and the
/// field mapping. This is what the lab keeps, since its raw zone holds the files as they came.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Reader {
    /// The data files' names in a partition: `*` any run of characters, `?` one.
    #[serde(default = "default_glob")]
    pub glob: String,
    #[serde(default)]
    pub format: Format,
    /// None: from the name's ending (`.gz` gzip, `.zst` zstd, else none).
    #[serde(default)]
    pub compression: Option<Compression>,
    /// None: the contract's own fields.
    #[serde(default)]
    pub fields: Option<Fields>,
}

fn default_glob() -> String {
    "*.jsonl.gz".to_string()
}

impl Default for Reader {
    fn default() -> Self {
        Reader { glob: default_glob(), format: Format::Jsonl, compression: None, fields: None }
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Jsonl,
    Csv,
    Parquet,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Each contract field's path (dot-separated keys in JSON, a column name in CSV and Parquet,
/// dot-separated into a Parquet struct).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    pub event_id: String,
    pub basket_id: String,
    pub store_id: String,
    /// Informational in the contract: a source without tills maps none.
    #[serde(default)]
    pub till_id: Option<String>,
    pub event_ts: StampField,
    pub uploaded_at: StampField,
    pub currency: String,
    pub amount: AmountField,
}

/// A time stamp's path and form: a bare path is ISO-8601.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum StampField {
    Iso(String),
    With {
        path: String,
        #[serde(default)]
        format: StampFormat,
    },
}

impl StampField {
    pub fn path(&self) -> &str {
        match self {
            StampField::Iso(p) | StampField::With { path: p, .. } => p,
        }
    }
    pub fn format(&self) -> StampFormat {
        match self {
            StampField::Iso(_) => StampFormat::Iso,
            StampField::With { format, .. } => *format,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StampFormat {
    /// ISO-8601 with `Z` or an offset, as the contract writes it.
    #[default]
    Iso,
    EpochS,
    EpochMs,
    EpochUs,
}

/// A count since 1970-01-01T00:00:00Z in one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochUnit {
    Seconds,
    Millis,
    Micros,
}

impl EpochUnit {
    fn nanos(self) -> i128 {
        match self {
            EpochUnit::Seconds => 1_000_000_000,
            EpochUnit::Millis => 1_000_000,
            EpochUnit::Micros => 1_000,
        }
    }
}

/// The amount: one total at `path`, or the sum of `path` over each element of the list at
/// `tenders` (the contract's shape, with other names).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AmountField {
    pub path: String,
    #[serde(default)]
    pub tenders: Option<String>,
    #[serde(default)]
    pub unit: Unit,
}

/// Minor units (pence, yen, fils), or major units (pounds) as an exact decimal turned into minor
/// ones by the currency's ISO-4217 digits.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    #[default]
    Minor,
    Major,
}

/// The store list: a CSV or Parquet file with its own column names.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoresDesc {
    #[serde(default = "default_stores_file")]
    pub file: String,
    /// None: from the name's ending (`.parquet`, else CSV).
    #[serde(default)]
    pub format: Option<Format>,
    #[serde(default = "col_store_id")]
    pub store_id: String,
    #[serde(default = "col_country")]
    pub country: String,
    #[serde(default = "col_timezone")]
    pub timezone: String,
    #[serde(default = "col_currency")]
    pub currency: String,
}

fn default_stores_file() -> String {
    STORES_FILE.to_string()
}
fn col_store_id() -> String {
    "store_id".into()
}
fn col_country() -> String {
    "country".into()
}
fn col_timezone() -> String {
    "timezone".into()
}
fn col_currency() -> String {
    "currency".into()
}

impl Default for StoresDesc {
    fn default() -> Self {
        StoresDesc {
            file: default_stores_file(),
            format: None,
            store_id: col_store_id(),
            country: col_country(),
            timezone: col_timezone(),
            currency: col_currency(),
        }
    }
}

/// One level of a partition template: literal text around at most one placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    prefix: String,
    part: Part,
    suffix: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Date,
    Year,
    Month,
    Day,
    /// A level below the day: an hour, `00` to `23`.
    Hour,
    /// A level below the day written `*`: any folder.
    Any,
    None,
}

impl Part {
    fn width(self) -> usize {
        match self {
            Part::Date => 10,
            Part::Year => 4,
            Part::Month | Part::Day | Part::Hour => 2,
            Part::Any | Part::None => 0,
        }
    }
}

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
            if d.files.format != Format::Jsonl && f.amount.tenders.is_some() {
                bail!("fields.amount.tenders: a list of tenders is read from JSON Lines only; map one total column");
            }
        } else if d.files.format != Format::Jsonl {
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
        let format = s.format.unwrap_or(if s.file.ends_with(".parquet") { Format::Parquet } else { Format::Csv });
        if *s == StoresDesc::default() {
            return StoreTable::read(&path);
        }
        let rows: Vec<[String; 4]> = match format {
            Format::Parquet => {
                super::check_small_file(&path)?;
                super::mapped::parquet_columns(&path, [s.store_id.as_str(), &s.country, &s.timezone, &s.currency])?
            }
            Format::Csv => csv_columns(&path, [s.store_id.as_str(), &s.country, &s.timezone, &s.currency])?,
            Format::Jsonl => bail!("stores.format: a store list is CSV or Parquet"),
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

impl Fields {
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
    pub(crate) fn is_default(&self) -> bool {
        *self == Reader::default()
    }

    /// The compression of a file by the description, else by its name.
    pub(crate) fn compression_of(&self, name: &str) -> Compression {
        self.compression.unwrap_or(if name.ends_with(".gz") {
            Compression::Gzip
        } else if name.ends_with(".zst") {
            Compression::Zstd
        } else {
            Compression::None
        })
    }

    /// The reader the lab landed through (`raw/source.toml`), else the contract's.
    pub(crate) fn of_lab(raw_root: &Path) -> Result<Reader> {
        let path = raw_root.join(LAB_SOURCE_FILE);
        if !path.exists() {
            return Ok(Reader::default());
        }
        let text = std::fs::read_to_string(&path).wrap_err_with(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).map_err(|e| eyre!("{}: {}", path.display(), e.message()))
    }

    pub(crate) fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }
}

/// Writer markers beside the data, skipped without a word: `_SUCCESS`, `*.crc`, `_temporary/`,
/// `_committed_*`/`_started_*` and dot files.
pub(crate) fn is_writer_marker(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_') || name.ends_with(".crc")
}

/// The files of a directory that `glob` takes, by name, and the others (markers left out). A
/// name recount cannot keep exactly is refused before anything is written.
pub(crate) fn list_dir(dir: &Path, glob: &str) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if !dir.exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (mut files, mut other) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if is_writer_marker(&text) || text.ends_with(".landing") {
            continue;
        }
        if !entry.file_type()?.is_file() || !glob_match(glob.as_bytes(), text.as_bytes()) {
            other.push(path);
            continue;
        }
        match name.to_str() {
            Some(n) if !n.chars().any(|c| c.is_control() || crate::sanitize::is_bidi(c)) => files.push(path),
            _ => bail!(
                "{}: the file name {:?} is not plain UTF-8 text; rename it before landing (nothing was landed)",
                dir.display(),
                crate::sanitize::for_terminal(&text)
            ),
        }
    }
    files.sort();
    other.sort();
    Ok((files, other))
}

/// The data files of a partition whose files sit in folders below it (`levels`, each matched as
/// a template level is: hourly folders), and what is there that is not taken. With no levels,
/// the partition's own files (`list_dir`).
fn list_below(dir: &Path, levels: &[Segment], glob: &str) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let Some((level, rest)) = levels.split_first() else { return list_dir(dir, glob) };
    let (mut files, mut other) = (Vec::new(), Vec::new());
    if !dir.exists() {
        return Ok((files, other));
    }
    for entry in std::fs::read_dir(dir).wrap_err_with(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_writer_marker(&name) {
            continue;
        }
        if entry.file_type()?.is_dir() && match_segment(level, &name, &mut [None; 3]).is_ok() {
            let (f, o) = list_below(&entry.path(), rest, glob)?;
            files.extend(f);
            other.extend(o);
        } else {
            other.push(entry.path());
        }
    }
    files.sort();
    other.sort();
    Ok((files, other))
}

/// Whether a file pattern takes a file's name.
pub(crate) fn glob_takes(glob: &str, name: &str) -> bool {
    glob_match(glob.as_bytes(), name.as_bytes())
}

/// `*` any run of characters, `?` exactly one, everything else itself.
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

fn check_glob(glob: &str) -> Result<()> {
    if glob.is_empty() || glob.contains('/') {
        bail!("files.glob: '{glob}' must be a file name pattern (no '/')");
    }
    Ok(())
}

fn check_root(root: &str) -> Result<()> {
    if Path::new(root).is_absolute() || root.split('/').any(|p| p == "..") {
        bail!("partitions.root: '{root}' must be a path inside the world");
    }
    Ok(())
}

fn parse_template(t: &str) -> Result<(Vec<Segment>, usize)> {
    let mut out = Vec::new();
    for seg in t.split('/') {
        if seg.contains('*') && seg != "*" {
            bail!(
                "partitions.template: '{seg}': a * stands for a whole level, written '*' alone; inside other text it would be taken literally"
            );
        }
        let (prefix, part, suffix) = match seg.find('{') {
            None if seg == "*" => (String::new(), Part::Any, String::new()),
            None => (seg.to_string(), Part::None, String::new()),
            Some(open) => {
                let close =
                    seg[open..].find('}').map(|c| open + c).ok_or_else(|| eyre!("partitions.template: '{seg}' has an unclosed '{{'"))?;
                let part = match &seg[open + 1..close] {
                    "date" => Part::Date,
                    "yyyy" => Part::Year,
                    "mm" => Part::Month,
                    "dd" => Part::Day,
                    "hh" => Part::Hour,
                    other => bail!("partitions.template: '{{{other}}}' is not one of {{date}}, {{yyyy}}, {{mm}}, {{dd}}, {{hh}}"),
                };
                let suffix = &seg[close + 1..];
                if suffix.contains('{') {
                    bail!("partitions.template: '{seg}' has more than one placeholder");
                }
                (seg[..open].to_string(), part, suffix.to_string())
            }
        };
        if seg.is_empty() || seg == ".." || seg == "." {
            bail!("partitions.template: '{t}' has an empty or relative level");
        }
        out.push(Segment { prefix, part, suffix });
    }
    let has = |p: Part| out.iter().filter(|s| s.part == p).count();
    let whole = has(Part::Date) == 1 && has(Part::Year) + has(Part::Month) + has(Part::Day) == 0;
    let split = has(Part::Date) == 0 && has(Part::Year) == 1 && has(Part::Month) == 1 && has(Part::Day) == 1;
    if !whole && !split {
        bail!("partitions.template: '{t}' must name the upload date once, as {{date}} or as {{yyyy}}, {{mm}} and {{dd}}");
    }
    // The levels below the day: from the first hour or wildcard level on (fixed text between
    // the date and it is part of the partition's path, as it always was). A part of the date
    // below it would split one upload over folders the date does not name.
    let dated = out.iter().position(|s| matches!(s.part, Part::Hour | Part::Any)).unwrap_or(out.len());
    if out[dated..].iter().any(|s| matches!(s.part, Part::Date | Part::Year | Part::Month | Part::Day)) {
        bail!("partitions.template: '{t}': an hour or a '*' level must come below the levels that name the date");
    }
    let below = out.len() - dated;
    Ok((out, below))
}

/// Matches one directory name against a template level; a whole date when it gives one.
fn match_segment(seg: &Segment, name: &str, parts: &mut [Option<u32>; 3]) -> Result<Option<NaiveDate>, String> {
    let pattern = format!(
        "{}{}{}",
        seg.prefix,
        match seg.part {
            Part::Date => "YYYY-MM-DD",
            Part::Year => "YYYY",
            Part::Month => "MM",
            Part::Day => "DD",
            Part::Hour => "HH",
            Part::Any => "*",
            Part::None => "",
        },
        seg.suffix
    );
    if seg.part == Part::Any {
        return Ok(None);
    }
    let shown = crate::sanitize::for_terminal(name);
    let value = name
        .strip_prefix(seg.prefix.as_str())
        .and_then(|r| r.strip_suffix(seg.suffix.as_str()))
        .ok_or_else(|| format!("partition directory '{shown}' is not named {pattern}"))?;
    if value.len() != seg.part.width() || !value.bytes().all(|b| b.is_ascii_digit() || (seg.part == Part::Date && b == b'-')) {
        return Err(format!("partition directory '{shown}': '{}' is not a valid {pattern}", crate::sanitize::for_terminal(value)));
    }
    let bad = || format!("partition directory '{shown}': '{value}' is not a valid date ({pattern})");
    match seg.part {
        Part::Date => NaiveDate::parse_from_str(value, "%Y-%m-%d").map(Some).map_err(|_| bad()),
        Part::None | Part::Any => Ok(None),
        Part::Hour if value.parse::<u32>().is_ok_and(|h| h < 24) => Ok(None),
        Part::Hour => Err(format!("partition directory '{shown}': '{value}' is not an hour (00 to 23, {pattern})")),
        p => {
            let n: u32 = value.parse().map_err(|_| bad())?;
            let (slot, ok) = match p {
                Part::Year => (0, n >= 1),
                Part::Month => (1, (1..=12).contains(&n)),
                _ => (2, (1..=31).contains(&n)),
            };
            if !ok {
                return Err(bad());
            }
            parts[slot] = Some(n);
            Ok(None)
        }
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
pub(crate) fn amount_minor(text: &str, unit: Unit, currency: &str) -> Result<i64, String> {
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
pub(crate) fn epoch_instant(text: &str, unit: EpochUnit) -> Result<DateTime<Utc>, String> {
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
    pub(crate) fn epoch(self) -> Option<EpochUnit> {
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
