//! model.records' columns (how many grain, attribute and measure columns it holds), and a
//! landing's records as those columns: built as Arrow columns where a file is read (any of
//! DuckDB's threads) and handed to DuckDB through the store's scan (`Tx::model_records`), so
//! reading and inserting share the cores.

use super::scan::arrow::array::{ArrayBuilder, ArrayRef, Date32Builder, Int32Builder, Int64Builder, StringBuilder};
use super::scan::arrow::datatypes::{DataType, Field, Schema};
use super::scan::arrow::record_batch::RecordBatch;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

/// How many grain fields, attributes and measures the lab's columns hold.
pub const GRAIN_COLUMNS: usize = 4;
pub const ATTRIBUTE_COLUMNS: usize = 4;
pub const MEASURE_COLUMNS: usize = 6;

/// One record as bronze keeps it.
pub struct RecordRow<'a> {
    pub line: i32,
    pub key: &'a str,
    pub event_id: &'a str,
    pub arrival_ns: i64,
    pub event_ns: i64,
    pub business_date: NaiveDate,
    pub grain: &'a [&'a str],
    pub attributes: &'a [String],
    pub measures: &'a [i64],
}

/// model.records' columns, in its order.
fn record_fields() -> Vec<Field> {
    let mut f = vec![
        Field::new("file_id", DataType::Int32, false),
        Field::new("line", DataType::Int32, false),
        Field::new("entity_key", DataType::Utf8, false),
        Field::new("event_id", DataType::Utf8, false),
        Field::new("arrival_ns", DataType::Int64, false),
        Field::new("event_ns", DataType::Int64, false),
        Field::new("business_date", DataType::Date32, false),
    ];
    f.extend((1..=GRAIN_COLUMNS).map(|i| Field::new(format!("g{i}"), DataType::Utf8, true)));
    f.extend((1..=ATTRIBUTE_COLUMNS).map(|i| Field::new(format!("a{i}"), DataType::Utf8, true)));
    f.extend((1..=MEASURE_COLUMNS).map(|i| Field::new(format!("m{i}"), DataType::Int64, true)));
    f
}

/// A file version's records as bronze's columns, made where they are read (any thread).
pub struct RecordsBatch(RecordBatch);

/// What a model landing's scan reads (`Tx::model_records`), on DuckDB's threads.
pub trait RecordsReader: Send + Sync + 'static {
    /// The next file version's records; None when every version is read.
    fn next_file(&self) -> Result<Option<RecordsBatch>>;
    /// How many threads may read at once.
    fn threads(&self) -> u64;
    /// Keeps the first error a call returned, with its context.
    fn failed(&self, e: color_eyre::Report);
    /// The error kept, if any.
    fn take_error(&self) -> Option<color_eyre::Report>;
}

/// A `RecordsReader` as the scan's row source: a file's rows beyond one of DuckDB's chunks wait
/// for the next call of any thread (bronze's rows carry their file and line, so their order in
/// the table means nothing).
pub(super) struct RecordsScan<R> {
    pub(super) reader: std::sync::Arc<R>,
    pub(super) rest: std::sync::Mutex<Vec<(RecordBatch, usize)>>,
}

impl<R: RecordsReader> super::scan::RowSource for RecordsScan<R> {
    fn fields(&self) -> Vec<Field> {
        record_fields()
    }

    fn max_threads(&self) -> u64 {
        self.reader.threads()
    }

    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        if let Some(rest) = self.rest.lock().map_err(|_| color_eyre::eyre::eyre!("a landing thread panicked"))?.pop() {
            return Ok(Some(rest));
        }
        while let Some(b) = self.reader.next_file()? {
            if b.0.num_rows() > 0 {
                return Ok(Some((b.0, 0)));
            }
        }
        Ok(None)
    }

    fn keep_rest(&self, batch: RecordBatch, offset: usize) -> Result<()> {
        self.rest.lock().map_err(|_| color_eyre::eyre::eyre!("a landing thread panicked"))?.push((batch, offset));
        Ok(())
    }

    fn failed(&self, e: color_eyre::Report) {
        self.reader.failed(e);
    }
}

/// A file version's records, column by column as they are read: `RecordsBatch`'s builder.
pub struct RecordsBuilder {
    file_id: i32,
    line: Int32Builder,
    key: StringBuilder,
    event_id: StringBuilder,
    arrival_ns: Int64Builder,
    event_ns: Int64Builder,
    business_date: Date32Builder,
    grain: [StringBuilder; GRAIN_COLUMNS],
    attributes: [StringBuilder; ATTRIBUTE_COLUMNS],
    measures: [Int64Builder; MEASURE_COLUMNS],
}

impl RecordsBuilder {
    pub fn new(file_id: i32) -> RecordsBuilder {
        RecordsBuilder {
            file_id,
            line: Int32Builder::new(),
            key: StringBuilder::new(),
            event_id: StringBuilder::new(),
            arrival_ns: Int64Builder::new(),
            event_ns: Int64Builder::new(),
            business_date: Date32Builder::new(),
            grain: std::array::from_fn(|_| StringBuilder::new()),
            attributes: std::array::from_fn(|_| StringBuilder::new()),
            measures: std::array::from_fn(|_| Int64Builder::new()),
        }
    }

    /// Adds a record; a model's unused columns are NULL.
    pub fn push(&mut self, r: RecordRow<'_>) {
        self.line.append_value(r.line);
        self.key.append_value(r.key);
        self.event_id.append_value(r.event_id);
        self.arrival_ns.append_value(r.arrival_ns);
        self.event_ns.append_value(r.event_ns);
        self.business_date.append_value(super::scan::arrow_days(r.business_date));
        for (i, b) in self.grain.iter_mut().enumerate() {
            b.append_option(r.grain.get(i));
        }
        for (i, b) in self.attributes.iter_mut().enumerate() {
            b.append_option(r.attributes.get(i));
        }
        for (i, b) in self.measures.iter_mut().enumerate() {
            b.append_option(r.measures.get(i).copied());
        }
    }

    /// How many records it holds.
    pub fn rows(&self) -> usize {
        self.line.len()
    }

    pub fn finish(mut self) -> Result<RecordsBatch> {
        use std::sync::Arc;
        let n = self.rows();
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(super::scan::arrow::array::Int32Array::from_iter_values(std::iter::repeat_n(self.file_id, n))),
            Arc::new(self.line.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.event_id.finish()),
            Arc::new(self.arrival_ns.finish()),
            Arc::new(self.event_ns.finish()),
            Arc::new(self.business_date.finish()),
        ];
        columns.extend(self.grain.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.extend(self.attributes.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        columns.extend(self.measures.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
        Ok(RecordsBatch(RecordBatch::try_new(Arc::new(Schema::new(record_fields())), columns)?))
    }
}
