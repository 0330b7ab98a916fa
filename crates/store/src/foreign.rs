//! A table another pipeline wrote, read as data and never as code: a base table of a DuckDB
//! database opened read-only with external access off (a view, which could read any file, is
//! refused by name), or Parquet files. Each value comes as its type holds it (`ForeignValue`),
//! so an integer is never read through a float, and only the columns asked for are converted,
//! a row at a time, within the process's memory budget.

use super::{Exec, Query, Store, row, statements};
use color_eyre::eyre::{Result, WrapErr, bail};
use duckdb::types::ValueRef;
use std::path::Path;

row! {
    pub struct TableKindRow { pub kind: String }
}

statements! {
    // Read a row at a time (`each_row`), not as typed rows.
    TABLE_ROWS: Exec = foreign::TABLE_ROWS;
    TABLE_KIND: Query<TableKindRow> = foreign::TABLE_KIND;
}

/// The largest foreign file recount opens: past it, a file is refused before it is read.
pub const MAX_FOREIGN_FILE_BYTES: u64 = 4 << 30;

/// One value of a foreign table, as its column's type holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum ForeignValue {
    Null,
    Int(i128),
    /// FLOAT or DOUBLE: exact only for an integer within ±2^53.
    Float(f64),
    /// Text, an exact DECIMAL's digits or a DATE as `YYYY-MM-DD`.
    Exact(String),
    /// Anything else (a STRUCT, a LIST, a TIMESTAMP, a BLOB…), by its type's name.
    Other(String),
}

/// The largest integer a float holds exactly, and every integer below it too.
const FLOAT_EXACT: f64 = 9_007_199_254_740_992.0;

impl ForeignValue {
    /// The value as text (an id, a date): only text, digits or a date are.
    pub fn text(&self) -> Result<&str, String> {
        match self {
            ForeignValue::Exact(s) => Ok(s),
            ForeignValue::Null => Err("is empty (NULL)".to_string()),
            ForeignValue::Int(i) => Err(format!("is the number {i}, not text")),
            ForeignValue::Float(f) => Err(format!("is the float {f}, not text")),
            ForeignValue::Other(t) => Err(format!("holds a {t}, not a single value")),
        }
    }

    /// The value as an exact integer: an integer type, text of digits (a zero fraction allowed,
    /// as a DECIMAL's `12.00`), or a float only where it is an integer within ±2^53.
    pub fn integer(&self) -> Result<i64, String> {
        match self {
            ForeignValue::Int(i) => i64::try_from(*i).map_err(|_| format!("holds {i}, past 64 bits")),
            ForeignValue::Float(f) if f.fract() == 0.0 && f.abs() <= FLOAT_EXACT => Ok(*f as i64),
            ForeignValue::Float(f) => Err(format!("holds the float {f}, not an integer within ±2^53, so not exact")),
            ForeignValue::Exact(s) => {
                let t = s.trim();
                let whole = match t.split_once('.') {
                    Some((w, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => w,
                    _ => t,
                };
                whole.parse().map_err(|_| format!("{:?} is not an integer", crate::sanitize::for_terminal(s)))
            }
            other => Err(other.text().err().unwrap_or_default()),
        }
    }

    /// The value as exact decimal text (money in major units): text or digits as they are, a
    /// float only where it is an integer within ±2^53.
    pub fn decimal(&self) -> Result<String, String> {
        match self {
            ForeignValue::Int(i) => Ok(i.to_string()),
            ForeignValue::Float(_) => self.integer().map(|i| i.to_string()),
            other => other.text().map(str::to_string),
        }
    }
}

fn value(v: ValueRef<'_>) -> ForeignValue {
    use ForeignValue::*;
    match v {
        ValueRef::Null => Null,
        ValueRef::TinyInt(i) => Int(i.into()),
        ValueRef::SmallInt(i) => Int(i.into()),
        ValueRef::Int(i) => Int(i.into()),
        ValueRef::BigInt(i) => Int(i.into()),
        ValueRef::HugeInt(i) => Int(i),
        ValueRef::UTinyInt(i) => Int(i.into()),
        ValueRef::USmallInt(i) => Int(i.into()),
        ValueRef::UInt(i) => Int(i.into()),
        ValueRef::UBigInt(i) => Int(i.into()),
        ValueRef::UHugeInt(i) => i128::try_from(i).map_or_else(|_| Other("UHUGEINT past 127 bits".to_string()), Int),
        ValueRef::Float(f) => Float(f.into()),
        ValueRef::Double(f) => Float(f),
        ValueRef::Decimal(d) => Exact(d.to_string()),
        ValueRef::Text(b) => Exact(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Date32(days) => {
            match chrono::NaiveDate::from_ymd_opt(1970, 1, 1).and_then(|e| e.checked_add_signed(chrono::Duration::days(days.into()))) {
                Some(d) => Exact(d.to_string()),
                None => Other("DATE out of range".to_string()),
            }
        }
        // The type's name alone (`STRUCT`, not its fields): a foreign name never reaches an error.
        other => Other(format!("{:?}", other.data_type()).split('(').next().unwrap_or_default().to_uppercase()),
    }
}

/// Calls `f` with each row's values of the columns `needed`, in that order, and the row's
/// number (from 1). A column missing, or named twice, is an error before any row.
fn each_row(
    mut stmt: duckdb::Statement<'_>,
    params: super::Params,
    source: &str,
    needed: &[String],
    f: &mut dyn FnMut(usize, Vec<ForeignValue>) -> Result<()>,
) -> Result<()> {
    let mut rows = stmt.query(params).wrap_err_with(|| format!("{source}: not readable"))?;
    let names: Vec<String> = rows.as_ref().map(|s| s.column_names()).unwrap_or_default();
    let at = columns_at(source, &names, needed)?;
    let mut n = 0;
    while let Some(row) = rows.next().wrap_err_with(|| format!("{source}: not readable past row {n}"))? {
        n += 1;
        let values = at.iter().map(|&i| row.get_ref(i).map(value)).collect::<duckdb::Result<Vec<_>>>()?;
        f(n, values)?;
    }
    Ok(())
}

/// Where each of `needed` is among a table's `names`: an error for one missing or given twice.
pub fn columns_at(source: &str, names: &[String], needed: &[String]) -> Result<Vec<usize>> {
    let shown = |c: &str| crate::sanitize::for_terminal(c).into_owned();
    if let Some(twice) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)).map(|(_, n)| n) {
        bail!("{source}: column {} is given twice; which one holds gold is not clear", shown(twice));
    }
    needed
        .iter()
        .map(|c| match names.iter().position(|n| n == c) {
            Some(i) => Ok(i),
            None => bail!(
                "{source}: no column {} (it has: {}); a foreign gold needs {}",
                shown(c),
                names.iter().map(|n| shown(n)).collect::<Vec<_>>().join(", "),
                needed.join(", ")
            ),
        })
        .collect()
}

/// A regular file (links followed) within `MAX_FOREIGN_FILE_BYTES`, checked before it is opened:
/// a FIFO or a device is refused at once, never waited on.
pub fn check_foreign_file(path: &Path) -> Result<()> {
    check_regular_file(path, MAX_FOREIGN_FILE_BYTES, &format!("{} GiB a foreign gold", MAX_FOREIGN_FILE_BYTES >> 30))
}

/// A regular file (links followed) of at most `bound` bytes, by its metadata, before anything
/// opens it; `holder` names the bound in the error ("64 MiB such a file"). Every file recount
/// reads that a world or a user hands it is checked so (`raw::check_small_file` too).
pub fn check_regular_file(path: &Path, bound: u64, holder: &str) -> Result<()> {
    let meta = std::fs::metadata(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file (a folder, a FIFO or a device): recount reads only regular files", path.display());
    }
    if meta.len() > bound {
        bail!("{} holds {} bytes, more than the {holder} may hold", path.display(), meta.len());
    }
    Ok(())
}

/// Each row of base table `table` (`schema.table` or `table`) of the DuckDB database `file`,
/// opened read-only with external access off and within the memory budget: a view is refused,
/// naming it, since its query could read anything.
pub fn each_table_row(
    file: &Path,
    table: &str,
    needed: &[String],
    f: &mut dyn FnMut(usize, Vec<ForeignValue>) -> Result<()>,
) -> Result<()> {
    check_foreign_file(file)?;
    let config = duckdb::Config::default()
        .enable_autoload_extension(false)?
        .access_mode(duckdb::AccessMode::ReadOnly)?
        .enable_external_access(false)?
        .max_memory(&super::opening_limit().0)?
        .threads(1)?;
    let conn = duckdb::Connection::open_with_flags(file, config)
        .wrap_err_with(|| format!("{}: not a DuckDB database this build reads", file.display()))?;
    let s = Store::with_connection(conn, None);
    let shown = crate::sanitize::for_terminal(table);
    let (schema, name) = table.split_once('.').unwrap_or(("main", table));
    match TABLE_KIND.all(&s, &[("schema", &schema), ("name", &name)])?.first().map(|k| k.kind.as_str()) {
        Some("table") => {}
        Some(kind) => bail!("{}: {shown} is a {kind}, not a table: recount reads only a base table's rows, never a query", file.display()),
        None => bail!("{}: no table {shown} to read", file.display()),
    }
    let source = format!("{}#{shown}", file.display());
    each_row(s.conn.prepare(TABLE_ROWS.stmt.sql)?, &[("table", &table)], &source, needed, f)
}

/// Each row of the Parquet files `paths`, one table's rows in file order (numbered on across
/// the files), read on one database within the memory budget.
pub fn each_parquet_row(
    paths: &[std::path::PathBuf],
    needed: &[String],
    f: &mut dyn FnMut(usize, Vec<ForeignValue>) -> Result<()>,
) -> Result<()> {
    let config = duckdb::Config::default().enable_autoload_extension(false)?.max_memory(&super::opening_limit().0)?.threads(1)?;
    let s = Store::with_connection(duckdb::Connection::open_in_memory_with_flags(config)?, None);
    let mut seen = 0;
    for path in paths {
        check_foreign_file(path)?;
        let Some(p) = path.to_str() else { bail!("{}: the path is not UTF-8", path.display()) };
        let mut last = 0;
        let source = path.display().to_string();
        each_row(s.conn.prepare(super::parquet::rows_sql())?, &[("path", &p)], &source, needed, &mut |n, values| {
            last = n;
            f(seen + n, values)
        })?;
        seen += last;
    }
    Ok(())
}
