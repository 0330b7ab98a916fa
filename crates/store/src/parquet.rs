//! Parquet through DuckDB, which reads and writes it already: a source description's Parquet
//! files, read a row at a time as JSON for the one mapping (`raw::mapped`), and the files
//! `generate --shape parquet` writes. Each call has a database of its own, in memory, on one
//! thread: a landing's parse threads call it from inside the lab's own scan.

use super::{Exec, Query, Store, row, statements};
use color_eyre::eyre::{Result, WrapErr, bail};
use std::path::Path;

row! {
    pub struct JsonRow { pub row: String }
}
row! {
    pub struct NameRow { pub name: String }
}

statements! {
    // Read as Arrow batches (`batches`), not as typed rows.
    ROWS: Exec = parquet::ROWS;
    ROWS_AS_JSON: Query<JsonRow> = parquet::ROWS_AS_JSON;
    FLOAT_COLUMNS: Query<NameRow> = parquet::FLOAT_COLUMNS;
    EVENTS_FROM_JSON: Exec = parquet::EVENTS_FROM_JSON;
    STORES_FROM_JSON: Exec = parquet::STORES_FROM_JSON;
    WRITE_SHAPED: Exec = parquet::WRITE_SHAPED;
    WRITE_SHAPED_ZSTD: Exec = parquet::WRITE_SHAPED_ZSTD;
}

fn scratch() -> Result<Store> {
    let config = duckdb::Config::default().enable_autoload_extension(false)?.threads(1)?;
    Ok(Store::with_connection(duckdb::Connection::open_in_memory_with_flags(config)?, super::opening_limit().1))
}

thread_local! {
    /// Each landing thread's own database for the Parquet files it reads, opened once.
    static READER: std::cell::RefCell<Option<Store>> = const { std::cell::RefCell::new(None) };
}

/// `f` on this thread's own database for reading Parquet, opened on first use.
fn with_reader<T>(f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
    READER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let s = match slot.as_mut() {
            Some(s) => s,
            None => slot.insert(scratch()?),
        };
        f(s)
    })
}

/// Every row of a Parquet file as Arrow batches, in order, read on this thread's own database.
pub fn batches(path: &Path) -> Result<Vec<super::arrow::record_batch::RecordBatch>> {
    let p = text(path)?;
    with_reader(|s| {
        let mut stmt = s.conn.prepare_cached(ROWS.stmt.sql)?;
        let params: super::Params = &[("path", &p)];
        let rows = stmt.query_arrow(params).wrap_err_with(|| format!("{}: not a readable Parquet file", path.display()))?;
        Ok(rows.collect())
    })
}

/// The statement that reads every row of a Parquet file (`$path`), for a reader that takes
/// them a row at a time (`foreign`).
pub(crate) fn rows_sql() -> &'static str {
    ROWS.stmt.sql
}

fn text(path: &Path) -> Result<&str> {
    match path.to_str() {
        Some(p) => Ok(p),
        None => bail!("{}: the path is not UTF-8", path.display()),
    }
}

/// Every row of a Parquet file, in order, as one JSON object (DECIMAL values keep their exact
/// text). A column of floats is refused for the whole file: money in a float is not exact.
pub fn rows_as_json(path: &Path) -> Result<Vec<String>> {
    with_reader(|s| rows_as_json_on(s, path))
}

fn rows_as_json_on(s: &Store, path: &Path) -> Result<Vec<String>> {
    let p = text(path)?;
    let floats = FLOAT_COLUMNS.all(s, &[("path", &p)]).wrap_err_with(|| format!("{}: not a readable Parquet file", path.display()))?;
    if let Some(f) = floats.first() {
        bail!("{}: {}", path.display(), floats_refused(&f.name));
    }
    Ok(ROWS_AS_JSON
        .all(s, &[("path", &p)])
        .wrap_err_with(|| format!("{}: not a readable Parquet file", path.display()))?
        .into_iter()
        .map(|r| r.row)
        .collect())
}

/// Why a file with a column of floats is refused: money in a float is not exact.
pub fn floats_refused(column: &str) -> String {
    format!(
        "column '{}' holds floating-point numbers, which cannot carry money or times exactly (write DECIMAL, integers or text)",
        crate::sanitize::for_terminal(column)
    )
}

/// What `write` turns into Parquet: events (a shaped world's files) or stores.
#[derive(Debug, Clone, Copy)]
pub enum Shaped {
    Events,
    /// The same events, with other compression: other bytes, the same rows.
    EventsRecompressed,
    Stores,
}

/// Writes the JSON Lines file `json` (the columns of `queries/parquet.sql`'s shapes) as the
/// Parquet file `out`, rows in order.
pub fn write(json: &Path, out: &Path, what: Shaped) -> Result<()> {
    let s = scratch()?;
    let (j, o) = (text(json)?, text(out)?);
    match what {
        Shaped::Events | Shaped::EventsRecompressed => EVENTS_FROM_JSON.run(&s, &[("path", &j)])?,
        Shaped::Stores => STORES_FROM_JSON.run(&s, &[("path", &j)])?,
    };
    let copy = if matches!(what, Shaped::EventsRecompressed) { &WRITE_SHAPED_ZSTD } else { &WRITE_SHAPED };
    copy.run(&s, &[("out", &o)]).wrap_err_with(|| format!("writing {}", out.display()))?;
    Ok(())
}
