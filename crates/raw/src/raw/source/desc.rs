//! A source description as written in `recount.toml`: serde's types, each with its defaults.

use super::*;

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

pub(super) fn default_root() -> String {
    EVENTS_DIR.to_string()
}
pub(super) fn default_template() -> String {
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
    pub format: FileFormat,
    /// None: from the name's ending (`.gz` gzip, `.zst` zstd, else none).
    #[serde(default)]
    pub compression: Option<Compression>,
    /// None: the contract's own fields.
    #[serde(default)]
    pub fields: Option<FieldPaths>,
}

pub(super) fn default_glob() -> String {
    "*.jsonl.gz".to_string()
}

impl Default for Reader {
    fn default() -> Self {
        Reader { glob: default_glob(), format: FileFormat::Jsonl, compression: None, fields: None }
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
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
pub struct FieldPaths {
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
    pub(super) fn nanos(self) -> i128 {
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
    pub format: Option<FileFormat>,
    #[serde(default = "col_store_id")]
    pub store_id: String,
    #[serde(default = "col_country")]
    pub country: String,
    #[serde(default = "col_timezone")]
    pub timezone: String,
    #[serde(default = "col_currency")]
    pub currency: String,
}

pub(super) fn default_stores_file() -> String {
    STORES_FILE.to_string()
}
pub(super) fn col_store_id() -> String {
    "store_id".into()
}
pub(super) fn col_country() -> String {
    "country".into()
}
pub(super) fn col_timezone() -> String {
    "timezone".into()
}
pub(super) fn col_currency() -> String {
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
