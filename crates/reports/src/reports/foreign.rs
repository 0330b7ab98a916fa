//! A foreign gold for `recount audit`, read as data: a CSV file with a header, Parquet files, a
//! base table of a DuckDB database or an Iceberg table's data files. Every file is a regular
//! file within a bound, checked before it is opened; the rows come a row at a time, typed, and
//! only their reading (never a file's content) reaches an error. The caller sorts the rows
//! within the memory budget (`audit_spill::Sorter`).

use crate::store::foreign::{ForeignValue, check_foreign_file, columns_at, each_parquet_row, each_table_row};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a foreign gold's columns map onto the grain and the measures: a `[gold]` table (in the
/// world's `recount.toml`, or a file of its own) naming, for any of gold's columns, the foreign
/// column that holds it (by default its own name), and the unit of its money.
#[derive(Debug, Clone, Default)]
pub struct GoldMap {
    /// Gold's column, and the foreign column that holds it.
    columns: BTreeMap<String, String>,
    /// `minor` (the default), or `major`: an exact decimal turned into minor units by the
    /// currency's ISO-4217 digits.
    pub unit: crate::raw::source::Unit,
}

impl GoldMap {
    /// The `[gold]` table of a TOML file; other tables in it (a whole `recount.toml`) are left be.
    pub fn read(path: &Path) -> Result<GoldMap> {
        let text = crate::raw::read_small_file(path)?;
        let file: toml::Table = toml::from_str(&text).map_err(|e| eyre!("{}: {}", path.display(), e.message()))?;
        let Some(gold) = file.get("gold") else {
            bail!("{}: no [gold] table naming the foreign gold's columns", path.display());
        };
        let Some(gold) = gold.as_table() else {
            bail!("{}: gold is a table, [gold]", path.display());
        };
        let mut map = GoldMap::default();
        for (key, value) in gold {
            let shown = crate::sanitize::for_terminal(key);
            match (key.as_str(), value.as_str()) {
                ("unit", Some("minor")) => map.unit = crate::raw::source::Unit::Minor,
                ("unit", Some("major")) => map.unit = crate::raw::source::Unit::Major,
                ("unit", _) => bail!("{}: [gold] unit is \"minor\" or \"major\"", path.display()),
                (_, Some(theirs)) => {
                    map.columns.insert(key.clone(), theirs.to_string());
                }
                (_, None) => bail!("{}: [gold] {shown} names a foreign column, as text", path.display()),
            }
        }
        Ok(map)
    }

    /// Refuses a key that is none of gold's `columns`, naming it, before anything is read.
    pub fn check_columns(&self, columns: &[String]) -> Result<()> {
        match self.columns.keys().find(|k| !columns.contains(k)) {
            Some(k) => bail!(
                "[gold] {}: gold has no such column (its columns: {}, and unit)",
                crate::sanitize::for_terminal(k),
                columns.join(", ")
            ),
            None => Ok(()),
        }
    }

    /// The foreign column that holds `ours`.
    pub fn column<'a>(&'a self, ours: &'a str) -> &'a str {
        self.columns.get(ours).map(String::as_str).unwrap_or(ours)
    }
}

/// Where an Iceberg table's data files are: `(warehouse or catalog:NAME, namespace.table)` to the
/// Parquet files of its current snapshot. The caller gives it (pyiceberg, through the driver), so
/// that reading a foreign gold needs nothing of Spark's here.
pub type IcebergFiles<'a> = &'a dyn Fn(&Path, &str) -> Result<Vec<PathBuf>>;

/// A row's values of the columns asked for, in their order, with where the row is.
pub type OnRow<'a> = &'a mut dyn FnMut(Place, Vec<ForeignValue>) -> Result<()>;

/// Where a foreign row is, as its reader would look for it: a CSV file's line (its header is
/// line 1), or a table's row (from 1).
#[derive(Debug, Clone, Copy)]
pub enum Place {
    Line(u64),
    Row(usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// Calls `f` with each row of the foreign gold `path`: a CSV file with a header, a Parquet file
/// (`.parquet`) or a folder of them, a base table of a DuckDB database (`duckdb:FILE#schema.table`),
/// or an Iceberg table (`iceberg:WAREHOUSE#namespace.table`, WAREHOUSE a directory or
/// `catalog:NAME`); its values are those of the columns `needed`, in order.
pub fn each_record(path: &Path, needed: &[String], iceberg: IcebergFiles<'_>, f: OnRow<'_>) -> Result<()> {
    let text = path.to_string_lossy();
    let source = |prefix: &str, what: &str| -> Result<Option<(String, String)>> {
        match text.strip_prefix(prefix) {
            None => Ok(None),
            Some(rest) => match rest.rsplit_once('#') {
                Some((file, table)) if !file.is_empty() && !table.is_empty() => Ok(Some((file.to_string(), table.to_string()))),
                _ => bail!("{text}: {what}"),
            },
        }
    };
    if let Some((file, table)) = source("duckdb:", "a DuckDB source is duckdb:FILE#schema.table")? {
        return each_table_row(Path::new(&file), &table, needed, &mut |n, values| f(Place::Row(n), values));
    }
    let files = if let Some((warehouse, table)) = source("iceberg:", "an Iceberg source is iceberg:WAREHOUSE#namespace.table")? {
        iceberg(Path::new(&warehouse), &table).wrap_err_with(|| format!("reading {text}"))?
    } else if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .wrap_err_with(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!("{}: a folder with no .parquet file in it", path.display());
        }
        files
    } else if path.extension().is_some_and(|e| e == "parquet") {
        vec![path.to_path_buf()]
    } else {
        return each_csv_record(path, needed, f);
    };
    each_parquet_row(&files, needed, &mut |n, values| f(Place::Row(n), values))
}

/// A CSV file's records, read a record at a time: every value is text.
fn each_csv_record(path: &Path, needed: &[String], f: OnRow<'_>) -> Result<()> {
    check_foreign_file(path)?;
    let file = std::fs::File::open(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut reader = csv::ReaderBuilder::new().from_reader(std::io::BufReader::new(file));
    let header: Vec<String> =
        reader.headers().wrap_err_with(|| format!("{}: no header", path.display()))?.iter().map(str::to_string).collect();
    let at = columns_at(&path.display().to_string(), &header, needed)?;
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).wrap_err_with(|| format!("{}", path.display()))? {
        let line = record.position().map_or(0, csv::Position::line);
        f(Place::Line(line), at.iter().map(|&i| ForeignValue::Exact(record.get(i).unwrap_or_default().to_string())).collect())?;
    }
    Ok(())
}

/// An id (a store, a grain's key) from a value: text within the contract's bound on ids.
pub fn id(v: &ForeignValue) -> Result<String, String> {
    let s = v.text()?;
    if s.len() > crate::raw::MAX_ID_BYTES {
        return Err(format!("is {} bytes long, longer than the {} an id may be", s.len(), crate::raw::MAX_ID_BYTES));
    }
    Ok(s.to_string())
}

/// A business date from a value: a DATE, or text written `YYYY-MM-DD`.
pub fn date(v: &ForeignValue) -> Result<chrono::NaiveDate, String> {
    let s = v.text()?;
    crate::raw::strict_date(s.trim()).ok_or_else(|| format!("{:?} is not a date (YYYY-MM-DD)", crate::sanitize::for_terminal(s)))
}

/// Money from a value, in minor units: an exact integer (`unit` minor), or an exact decimal in
/// `currency`'s ISO-4217 digits (`unit` major).
pub fn money(v: &ForeignValue, unit: crate::raw::source::Unit, currency: Option<&str>) -> Result<i64, String> {
    match (unit, currency) {
        (crate::raw::source::Unit::Major, Some(currency)) => {
            crate::raw::source::amount_minor(v.decimal()?.trim(), crate::raw::source::Unit::Major, currency)
        }
        _ => v.integer(),
    }
}
