//! A raw file as bronze receives it: its parsed events as Arrow columns, its cells (rows and an
//! order-independent digest per business date and currency) and its quarantine, capped.

use super::*;

pub(super) struct ParsedFile {
    pub(super) file_id: i32,
    pub(super) rel: String,
    pub(super) upload_date: NaiveDate,
    /// The size of the file as it arrived (it is copied into the raw zone as it is parsed).
    pub(super) bytes: usize,
    pub(super) md5: String,
    pub(super) lines: u64,
    /// Its bronze rows as one Arrow batch, built in the parsing thread (None when it has none).
    pub(super) batch: Option<RecordBatch>,
    pub(super) events: usize,
    /// The quarantine rows kept (see `Quarantine`), and how many lines were quarantined in all.
    pub(super) quarantine: Vec<Quarantined>,
    pub(super) quarantined_lines: u64,
    pub(super) cells: Vec<CellSum>,
    /// The sum of its events' revenue as absolute values: a bound on any store's or country's
    /// total that its rows add to a date.
    pub(super) abs_revenue: u128,
}

impl ParsedFile {
    pub(super) fn record(&self, landing_id: i64, version: i32) -> FileRecord<'_> {
        FileRecord {
            file_id: self.file_id,
            file: &self.rel,
            upload_date: self.upload_date,
            bytes: self.bytes as i64,
            md5: &self.md5,
            lines: self.lines as i64,
            events: self.events as i64,
            quarantined: self.quarantined_lines as i64,
            landing_id,
            version,
        }
    }
}

/// The most quarantined lines of one file kept one by one; the rest are counted in one summary
/// row, so a file of ten million blank lines costs a thousand rows, not ten million.
pub(super) const MAX_QUARANTINE_ROWS: usize = 1_000;

/// How much of a quarantined line is kept, and of its reason, in characters. A reason quotes a
/// field's name or value from the line, so it is bounded as the line is: a field path of ten
/// thousand names is not kept on every refused line of its file.
pub(crate) const MAX_KEPT_LINE_CHARS: usize = 2_000;
pub(crate) const MAX_REASON_CHARS: usize = 500;

/// A file's quarantined lines as they are found, for retail's landing and every model's: the
/// first ones kept (each line and reason cut to its bound), the rest counted.
#[derive(Default)]
pub(crate) struct Quarantine {
    kept: Vec<Quarantined>,
    more: u64,
    first_more: u32,
    last_more: u32,
}

/// `text` cut to `most` characters, with an ellipsis where it was cut.
fn cut(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl Quarantine {
    /// Line `line`, refused for `reason`; `text` is the line as it is shown.
    pub(crate) fn push(&mut self, line: u32, reason: &str, text: &str) {
        if self.kept.len() < MAX_QUARANTINE_ROWS {
            self.kept.push(Quarantined { line, reason: cut(reason, MAX_REASON_CHARS), raw_line: cut(text, MAX_KEPT_LINE_CHARS) });
        } else {
            if self.more == 0 {
                self.first_more = line;
            }
            self.more += 1;
            self.last_more = line;
        }
    }

    /// The kept rows, and one more row that counts the rest (on the first of them); and how many
    /// lines were quarantined in all.
    pub(crate) fn finish(mut self) -> (Vec<Quarantined>, u64) {
        let total = self.kept.len() as u64 + self.more;
        if self.more > 0 {
            self.kept.push(Quarantined {
                line: self.first_more,
                reason: format!(
                    "and {} more quarantined lines from line {} to {}, counted but not kept one by one",
                    crate::money::format_count(self.more as i64),
                    self.first_more,
                    self.last_more
                ),
                raw_line: String::new(),
            });
        }
        (self.kept, total)
    }
}

/// A line that did not become a bronze row, and why.
pub(crate) struct Quarantined {
    pub(crate) line: u32,
    pub(crate) reason: String,
    /// The line as it was, cut to `MAX_KEPT_LINE_CHARS`.
    pub(crate) raw_line: String,
}

impl Quarantined {
    pub(super) fn record<'a>(&'a self, file: &'a ParsedFile) -> QuarantineRecord<'a> {
        QuarantineRecord {
            file: &file.rel,
            line: self.line as i32,
            upload_date: file.upload_date,
            reason: &self.reason,
            raw_line: &self.raw_line,
            file_id: file.file_id,
        }
    }
}

/// What one file holds for one (business date, currency): see `bronze.cells`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CellSum {
    pub(super) business_date: NaiveDate,
    pub(super) currency: String,
    pub(super) rows: i64,
    pub(super) revenue_minor: i64,
    pub(super) digest: u64,
}

impl CellSum {
    pub(super) fn record<'a>(&'a self, file: &ParsedFile) -> CellRecord<'a> {
        CellRecord {
            file_id: file.file_id,
            upload_date: file.upload_date,
            business_date: self.business_date,
            currency: &self.currency,
            rows: self.rows,
            revenue_minor: self.revenue_minor,
            digest: self.digest as i64,
        }
    }
}

/// A stable 64-bit hash of the fields that make a bronze row what it is (xxh3 over
/// length-prefixed fields). Summed per cell, it gives each date's input hash: adding, removing
/// or changing any feeding row changes the sum; the same rows (a file recompressed, or lines
/// withdrawn around them) leave it as it was. Spark's input hash covers the same fields.
pub(super) fn row_digest(e: &PosEvent, buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    for s in [&*e.event_id, &*e.basket_id, e.store_id, &*e.till_id, e.country, e.currency] {
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
    buf.extend_from_slice(&e.event_ts.timestamp_nanos_opt().unwrap_or(i64::MIN).to_le_bytes());
    buf.extend_from_slice(&e.uploaded_at.timestamp_nanos_opt().unwrap_or(i64::MIN).to_le_bytes());
    buf.extend_from_slice(&arrow_days(e.upload_date).to_le_bytes());
    buf.extend_from_slice(&arrow_days(e.business_date).to_le_bytes());
    buf.extend_from_slice(&e.revenue_minor.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(buf)
}

/// The cells of one file, summed as its rows are parsed: a file holds a few (date, currency)
/// cells, so a short list searched from its newest cell does.
#[derive(Default)]
pub(super) struct CellSums {
    pub(super) cells: Vec<CellSum>,
    pub(super) buf: Vec<u8>,
}

impl CellSums {
    pub(super) fn add(&mut self, e: &PosEvent<'_>, path: &Path) -> Result<()> {
        let at = match self.cells.iter().rposition(|c| c.business_date == e.business_date && c.currency == e.currency) {
            Some(i) => i,
            None => {
                self.cells.push(CellSum {
                    business_date: e.business_date,
                    currency: e.currency.to_string(),
                    rows: 0,
                    revenue_minor: 0,
                    digest: 0,
                });
                self.cells.len() - 1
            }
        };
        let c = &mut self.cells[at];
        c.rows += 1;
        c.revenue_minor = c.revenue_minor.checked_add(e.revenue_minor).ok_or_else(|| {
            eyre!("{}: the revenue of business date {} ({}) overflows 64 bits", path.display(), e.business_date, e.currency)
        })?;
        c.digest = c.digest.wrapping_add(row_digest(e, &mut self.buf));
        Ok(())
    }

    /// The cells by date and currency.
    pub(super) fn finish(mut self) -> Vec<CellSum> {
        self.cells.sort_by(|a, b| (a.business_date, &a.currency).cmp(&(b.business_date, &b.currency)));
        self.cells
    }
}

/// Bronze's columns for one file, filled as its lines are parsed.
pub(super) struct EventColumns<'s> {
    pub(super) event_id: StringBuilder,
    pub(super) basket_id: StringBuilder,
    pub(super) store_row: Int32Builder,
    pub(super) till_id: StringBuilder,
    pub(super) event_ts: TimestampNanosecondBuilder,
    pub(super) uploaded_at: TimestampNanosecondBuilder,
    pub(super) upload_date: Date32Builder,
    pub(super) business_date: Date32Builder,
    pub(super) revenue: Int64Builder,
    pub(super) tenders: Int16Builder,
    pub(super) file_id: Int32Builder,
    pub(super) line: Int32Builder,
    pub(super) basket_key: Int64Builder,
    /// The bits of the basket key kept (all 64 but in tests that need keys to collide).
    pub(super) key_mask: u64,
    /// Each store's row number in this landing (`Tx::number_store_rows`), and the last store
    /// looked up: a file's lines are mostly one store's, and an event's store_id is the store
    /// table's own string, so the same address is the same store.
    pub(super) store_rows: &'s HashMap<String, i32>,
    pub(super) last_store: (*const u8, i32),
    pub(super) rows: usize,
}

impl<'s> EventColumns<'s> {
    pub(super) fn with_capacity(n: usize, key_mask: u64, store_rows: &'s HashMap<String, i32>) -> EventColumns<'s> {
        EventColumns {
            event_id: StringBuilder::with_capacity(n, n * 20),
            basket_id: StringBuilder::with_capacity(n, n * 24),
            store_row: Int32Builder::with_capacity(n),
            till_id: StringBuilder::with_capacity(n, n * 12),
            event_ts: TimestampNanosecondBuilder::with_capacity(n),
            uploaded_at: TimestampNanosecondBuilder::with_capacity(n),
            upload_date: Date32Builder::with_capacity(n),
            business_date: Date32Builder::with_capacity(n),
            revenue: Int64Builder::with_capacity(n),
            tenders: Int16Builder::with_capacity(n),
            file_id: Int32Builder::with_capacity(n),
            line: Int32Builder::with_capacity(n),
            basket_key: Int64Builder::with_capacity(n),
            key_mask,
            store_rows,
            last_store: (std::ptr::null(), 0),
            rows: 0,
        }
    }

    /// The number of the row of the event's store (every parsed event's store is in the table).
    pub(super) fn store_row(&mut self, store_id: &str) -> Result<i32> {
        if self.last_store.0 != store_id.as_ptr() {
            let n = *self
                .store_rows
                .get(store_id)
                .ok_or_else(|| eyre!("store {} has no store row", crate::sanitize::for_terminal(store_id)))?;
            self.last_store = (store_id.as_ptr(), n);
        }
        Ok(self.last_store.1)
    }

    pub(super) fn push(&mut self, e: &PosEvent, file_id: i32, line: u32) -> Result<()> {
        // parse_line has checked both instants fit; an error here would leave no column behind.
        let event_ts = e.event_ts.timestamp_nanos_opt().ok_or_else(|| eyre!("event_ts out of range"))?;
        let uploaded_at = e.uploaded_at.timestamp_nanos_opt().ok_or_else(|| eyre!("uploaded_at out of range"))?;
        let store_row = self.store_row(e.store_id)?;
        self.event_id.append_value(&e.event_id);
        self.basket_id.append_value(&e.basket_id);
        self.store_row.append_value(store_row);
        self.till_id.append_value(&e.till_id);
        self.event_ts.append_value(event_ts);
        self.uploaded_at.append_value(uploaded_at);
        self.upload_date.append_value(arrow_days(e.upload_date));
        self.business_date.append_value(arrow_days(e.business_date));
        self.revenue.append_value(e.revenue_minor);
        self.tenders.append_value(e.tenders.min(i16::MAX as u32) as i16);
        self.file_id.append_value(file_id);
        self.line.append_value(line as i32);
        self.basket_key.append_value((xxhash_rust::xxh3::xxh3_64(e.basket_id.as_bytes()) & self.key_mask) as i64);
        self.rows += 1;
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("event_id", Arc::new(self.event_id.finish())),
            ("basket_id", Arc::new(self.basket_id.finish())),
            ("store_row", Arc::new(self.store_row.finish())),
            ("till_id", Arc::new(self.till_id.finish())),
            ("event_ts", Arc::new(self.event_ts.finish())),
            ("uploaded_at", Arc::new(self.uploaded_at.finish())),
            ("upload_date", Arc::new(self.upload_date.finish())),
            ("business_date", Arc::new(self.business_date.finish())),
            ("revenue_minor", Arc::new(self.revenue.finish())),
            ("tenders", Arc::new(self.tenders.finish())),
            ("file_id", Arc::new(self.file_id.finish())),
            ("line", Arc::new(self.line.finish())),
            ("basket_key", Arc::new(self.basket_key.finish())),
        ];
        Ok(Some(RecordBatch::try_from_iter(columns)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_quarantine_keeps_its_first_lines_each_bounded_and_counts_the_rest() {
        let mut q = Quarantine::default();
        let (reason, text) = ("r".repeat(10_000), "x".repeat(100_000));
        for line in 1..=3_000 {
            q.push(line, &reason, &text);
        }
        let (kept, total) = q.finish();
        assert_eq!((kept.len(), total), (MAX_QUARANTINE_ROWS + 1, 3_000));
        assert_eq!(kept[0].reason.chars().count(), MAX_REASON_CHARS + 1, "cut, with an ellipsis");
        assert_eq!(kept[0].raw_line.chars().count(), MAX_KEPT_LINE_CHARS + 1);
        assert!(kept[0].reason.ends_with("r…") && kept[0].raw_line.ends_with("x…"));
        let last = kept.last().map(|q| q.reason.as_str()).unwrap_or_default();
        assert_eq!(last, "and 2,000 more quarantined lines from line 1001 to 3000, counted but not kept one by one");
        let mut short = Quarantine::default();
        short.push(7, "missing basket_id", "{}");
        let (kept, total) = short.finish();
        assert_eq!((kept[0].reason.as_str(), kept[0].raw_line.as_str(), total), ("missing basket_id", "{}", 1));
    }
}
