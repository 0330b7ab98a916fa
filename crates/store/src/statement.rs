//! A statement of `queries/*.sql` as a typed constant: `Query<Row>` reads rows into a struct by
//! column name (`row!`), `Exec` writes, `Batch` runs several; each error names its statement.

use super::*;

/// A row struct read by column name. `row!` writes the impl from the struct's fields.
pub trait FromRow: Sized {
    /// The columns, in the struct's order: found once per statement, and checked by the store's
    /// tests of each statement's shape.
    const COLUMNS: &'static [&'static str];
    /// The row, whose columns `COLUMNS` are at `at` (a lookup by name per value was a large share
    /// of reading many rows).
    fn from_row_at(row: &duckdb::Row<'_>, at: &[usize]) -> duckdb::Result<Self>;
}

/// Declares a row struct whose fields are its statement's columns, read by name.
macro_rules! row {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        impl $crate::FromRow for $name {
            const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),*];
            fn from_row_at(row: &duckdb::Row<'_>, at: &[usize]) -> duckdb::Result<Self> {
                // Past the end is usize::MAX, which DuckDB refuses as a column index.
                let mut at = at.iter().copied();
                Ok($name { $($field: row.get(at.next().unwrap_or(usize::MAX))?),* })
            }
        }
        #[allow(dead_code)]
        impl $name {
            /// The fields as named parameters, for a statement that inserts the row.
            pub fn params(&self) -> Vec<(&'static str, &dyn duckdb::ToSql)> {
                vec![$((stringify!($field), &self.$field as &dyn duckdb::ToSql)),*]
            }
        }
    };
}
pub(crate) use row;

/// Declares a file's statements with their shapes, and lists them for the store's tests.
macro_rules! statements {
    ($($name:ident : $ty:ty = $file:ident :: $stmt:ident;)*) => {
        $(const $name: $ty = <$ty>::new(&$crate::sql::$file::$stmt);)*
        #[cfg(test)]
        pub(super) fn shapes() -> Vec<$crate::StatementShape> {
            vec![$($crate::Declared::shape(&$name)),*]
        }
    };
}
pub(crate) use statements;

/// What a statement returns: rows with these columns, or nothing (a write or a batch).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
pub struct StatementShape {
    pub stmt: &'static Statement,
    pub columns: Option<&'static [&'static str]>,
    /// A batch runs whole (several statements); it is not prepared.
    pub batch: bool,
}

#[cfg_attr(not(test), allow(dead_code))]
pub trait Declared {
    fn shape(&self) -> StatementShape;
}

/// A statement that returns rows of `R`.
pub struct Query<R> {
    pub(super) stmt: &'static Statement,
    pub(super) _row: PhantomData<fn() -> R>,
}

impl<R: FromRow> Query<R> {
    pub const fn new(stmt: &'static Statement) -> Self {
        Query { stmt, _row: PhantomData }
    }

    /// Calls `f` with each row, in order. A read outside a transaction that runs out of DuckDB's
    /// limit before its first row is run again with a larger one, up to DuckDB's share of the
    /// budget (`Store::raise_limit`): a report never fails for memory the budget still holds.
    pub(super) fn each(&self, store: &Store, params: Params, mut f: impl FnMut(R) -> Result<()>) -> Result<()> {
        loop {
            let mut delivered = false;
            let result = self.each_once(store, params, |r| {
                delivered = true;
                f(r)
            });
            match result {
                Err(e) if !delivered && is_out_of_memory(&e) && !store.in_transaction.get() && store.raise_limit(false)? => continue,
                other => return other,
            }
        }
    }

    pub(super) fn each_once(&self, store: &Store, params: Params, mut f: impl FnMut(R) -> Result<()>) -> Result<()> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let mut rows = stmt.query(params).map_err(|e| failed(self.stmt, e))?;
        let mut at: Option<Vec<usize>> = None;
        while let Some(row) = rows.next().map_err(|e| failed(self.stmt, e))? {
            let at = match &at {
                Some(at) => at,
                None => at.insert(
                    R::COLUMNS
                        .iter()
                        .map(|c| row.as_ref().column_index(c))
                        .collect::<duckdb::Result<_>>()
                        .map_err(|e| failed(self.stmt, e))?,
                ),
            };
            f(R::from_row_at(row, at).map_err(|e| failed(self.stmt, e))?)?;
        }
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(())
    }

    /// The rows as Arrow batches, for a caller that works through many (a write's winners): no
    /// row is read into a struct. `R` names the columns.
    pub(super) fn batches(&self, store: &Store, params: Params) -> Result<Vec<arrow::record_batch::RecordBatch>> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let batches = stmt.query_arrow(params).map_err(|e| failed(self.stmt, e))?.collect();
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(batches)
    }

    /// The rows as a stream of Arrow batches, each handed to `f` as DuckDB makes it.
    pub(super) fn each_batch(
        &self,
        store: &Store,
        params: Params,
        mut f: impl FnMut(arrow::record_batch::RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        for batch in stmt.stream_arrow(params).map_err(|e| failed(self.stmt, e))? {
            f(batch.map_err(|e| failed(self.stmt, e))?)?;
        }
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(())
    }

    pub(super) fn all(&self, store: &Store, params: Params) -> Result<Vec<R>> {
        let mut out = Vec::new();
        self.each(store, params, |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    pub(super) fn optional(&self, store: &Store, params: Params) -> Result<Option<R>> {
        let mut first = None;
        self.each(store, params, |r| {
            first.get_or_insert(r);
            Ok(())
        })?;
        Ok(first)
    }

    /// Exactly one row (an aggregate without GROUP BY).
    pub(super) fn one(&self, store: &Store, params: Params) -> Result<R> {
        self.optional(store, params)?.ok_or_else(|| eyre!("queries/{}.sql {} returned no row", self.stmt.file, self.stmt.name))
    }
}

impl<R: FromRow> Declared for Query<R> {
    fn shape(&self) -> StatementShape {
        StatementShape { stmt: self.stmt, columns: Some(R::COLUMNS), batch: false }
    }
}

/// A statement that writes (or sets), returning the rows it changed.
pub struct Exec {
    pub(super) stmt: &'static Statement,
}

impl Exec {
    pub const fn new(stmt: &'static Statement) -> Self {
        Exec { stmt }
    }

    pub(super) fn run(&self, store: &Store, params: Params) -> Result<usize> {
        let started = std::time::Instant::now();
        let mut stmt = store.conn.prepare_cached(self.stmt.sql).map_err(|e| failed(self.stmt, e))?;
        let changed = stmt.execute(params).map_err(|e| failed(self.stmt, e))?;
        crate::progress::profile_statement(self.stmt.file, self.stmt.name, started);
        Ok(changed)
    }
}

impl Declared for Exec {
    fn shape(&self) -> StatementShape {
        StatementShape { stmt: self.stmt, columns: None, batch: false }
    }
}

/// Several statements run as one batch, with no parameters (the schema, a migration).
pub struct Batch {
    pub(super) stmt: &'static Statement,
}

impl Batch {
    pub const fn new(stmt: &'static Statement) -> Self {
        Batch { stmt }
    }

    pub(super) fn run(&self, store: &Store) -> Result<()> {
        store.conn.execute_batch(self.stmt.sql).map_err(|e| failed(self.stmt, e))
    }
}

impl Declared for Batch {
    fn shape(&self) -> StatementShape {
        StatementShape { stmt: self.stmt, columns: None, batch: true }
    }
}

/// A DuckDB error with the statement it came from. An interrupted statement becomes
/// `LabError::Interrupted`, which callers branch on by type.
pub(super) fn failed(stmt: &Statement, e: duckdb::Error) -> color_eyre::Report {
    if is_interrupt(&e) {
        return eyre!(LabError::Interrupted);
    }
    duckdb_error(&format!("queries/{}.sql: {}", stmt.file, stmt.name), e)
}

/// A DuckDB error of `what` (a statement, an appender's table) in recount's words: out of its
/// memory limit, `LabError::OutOfMemory`, which callers run again with more; else DuckDB's
/// message in one line (`duckdb_words`).
pub fn duckdb_error(what: &str, e: duckdb::Error) -> color_eyre::Report {
    let text = e.to_string();
    if text.contains("Out of Memory Error") || text.contains("failed to pin block") || text.contains("could not allocate block") {
        return eyre!(LabError::OutOfMemory { statement: what.to_string(), budget: memory_budget() });
    }
    eyre!(duckdb_words(&e)).wrap_err(what.to_string())
}

/// DuckDB's message in one line of recount's words: its C API's "Error code 1: Unknown error
/// code" carries nothing, and its advice (`SET threads`, `SET memory_limit`, "Possible
/// solutions") names settings a user of recount does not hold. What is left keeps DuckDB's
/// own reason, its lines joined.
pub fn duckdb_words(e: &duckdb::Error) -> String {
    let text = e.to_string();
    let mut kept = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let advice = ["Possible solution", "SET ", "PRAGMA ", "See also", "https://", "For more information"];
        if advice.iter().any(|a| line.starts_with(a) || line.starts_with(&format!("* {a}"))) {
            break;
        }
        kept.push(line.replace("Error code 1: Unknown error code", "").trim().trim_end_matches(':').to_string());
    }
    let one = kept.into_iter().filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    crate::sanitize::for_terminal(&one).into_owned()
}

/// Whether a statement ran out of DuckDB's memory limit (`LabError::OutOfMemory`).
pub fn is_out_of_memory(e: &color_eyre::Report) -> bool {
    matches!(crate::error::lab_error(e), Some(LabError::OutOfMemory { .. }))
}

/// DuckDB reports an interrupt as an error of its own type; its C API gives the type only in
/// the message's prefix.
pub(super) fn is_interrupt(e: &duckdb::Error) -> bool {
    e.to_string().starts_with("INTERRUPT Error")
}
