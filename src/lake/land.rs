//! Landing: uploads are copied into the lab's raw zone and parsed once into bronze. Every line is
//! either a bronze row or a quarantine row with its file, line and reason.

use super::Lab;
use crate::raw::source::{Reader, Source};
use crate::raw::{self, PosEvent, StoreTable};
use crate::store::RowSource;
use crate::store::arrow::array::{
    ArrayRef, Date32Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder,
};
use crate::store::arrow::datatypes::{DataType, Field, TimeUnit};
use crate::store::arrow::record_batch::RecordBatch;
use crate::store::{CellRecord, FileRecord, QuarantineRecord, StoreRow, Tx, arrow_days};
use chrono::{NaiveDate, Utc};
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Copies written next to their final place: (staged path, final path).
type Staged = Arc<Mutex<Vec<(PathBuf, PathBuf)>>>;

/// What a landing found a file of the world to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Its path had not landed: version 1.
    New,
    /// Its path had landed with other bytes: this is the path's next version, now current.
    Corrected,
    /// The same bytes as the current version: nothing to land.
    Unchanged,
    /// Landed earlier, but no longer in the world: reported, and kept in the lab.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileLanded {
    /// The file's name in its partition.
    pub name: String,
    pub status: FileStatus,
    /// The version current after the landing (for a missing file, the lab's current version).
    pub version: i32,
    /// A correction whose bytes are an earlier version's: (that version, the version it
    /// replaces). Landing the original file again after a vendor's correction reverts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverts: Option<(i32, i32)>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionLanded {
    pub upload_date: NaiveDate,
    /// Files landed by this call: new paths and corrections.
    pub files_landed: usize,
    /// Files whose bytes were landed already (unchanged).
    pub files_already_landed: usize,
    pub events: u64,
    pub quarantined: u64,
    /// False when the world has no such partition yet: nothing arrived, nothing is recorded.
    pub exists: bool,
    /// Every file of the partition, in the world or in the lab, with what the landing found.
    pub files: Vec<FileLanded>,
    /// Files of the partition that the source description's glob does not take (writer markers
    /// aside): listed, never landed, never silently passed over.
    pub not_taken: Vec<String>,
    /// The upload is dated after today (UTC): a partition named for a day that has not come,
    /// landed as it is and said.
    pub dated_in_future: bool,
}

impl PartitionLanded {
    /// The corrections this landing made current.
    pub fn corrected(&self) -> impl Iterator<Item = &FileLanded> {
        self.files.iter().filter(|f| f.status == FileStatus::Corrected)
    }

    /// The partition's lines of a landing's report: what landed, and every file said of it.
    fn render(&self) -> String {
        if !self.exists {
            return format!("upload {}: the world has no such partition; nothing landed\n", self.upload_date);
        }
        let mut s = String::new();
        let extra = if self.files_already_landed > 0 { format!(", {} already landed", self.files_already_landed) } else { String::new() };
        let q = if self.quarantined > 0 { format!(", {} quarantined", self.quarantined) } else { String::new() };
        let files =
            if self.files_landed == 0 && self.files_already_landed == 0 { " (an empty partition)".to_string() } else { String::new() };
        let corrected: Vec<String> =
            self.corrected().map(|f| format!("{} v{}", crate::sanitize::for_terminal(&f.name), f.version)).collect();
        let corrected = if corrected.is_empty() { String::new() } else { format!(", corrected: {}", corrected.join(", ")) };
        s.push_str(&format!(
            "landed upload {}: {} file(s), {} events{q}{corrected}{extra}{files}\n",
            self.upload_date,
            self.files_landed,
            crate::money::format_count(self.events as i64)
        ));
        if self.dated_in_future {
            s.push_str(&format!(
                "  upload {} is dated after today ({} UTC): its partition is named for a day that has not come; check the writer's clock\n",
                self.upload_date,
                Utc::now().date_naive()
            ));
        }
        for f in self.files.iter() {
            if let Some((to, replaced)) = f.reverts {
                s.push_str(&format!(
                    "  {} v{}: has the bytes of v{to}, so it reverts v{replaced} (a correction withdrawn; land v{replaced}'s file again to restore it)\n",
                    crate::sanitize::for_terminal(&f.name),
                    f.version
                ));
            }
        }
        for f in self.files.iter().filter(|f| f.status == FileStatus::Missing) {
            s.push_str(&format!(
                "  {} (landed as v{}) is no longer in the world: the lab keeps it and still counts it\n",
                crate::sanitize::for_terminal(&f.name),
                f.version
            ));
        }
        if !self.not_taken.is_empty() {
            let names: Vec<String> = self.not_taken.iter().map(|n| crate::sanitize::for_terminal(n).into_owned()).collect();
            s.push_str(&format!("  not landed, the source's file pattern does not take them: {}\n", names.join(", ")));
        }
        s
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LandReport {
    pub partitions: Vec<PartitionLanded>,
    pub stores_added: usize,
    /// Store corrections: landed stores whose row stores.csv now gives otherwise.
    pub stores_changed: Vec<raw::StoreChange>,
    /// Stores stores.csv adds whose lines had been quarantined as an unknown store: read again.
    pub stores_readmitted: Vec<String>,
    /// Landed stores stores.csv no longer lists: kept, with their row as landed.
    pub stores_removed: Vec<String>,
    /// File versions re-derived from their own bytes for the store corrections, and their events.
    pub rederived_files: usize,
    pub rederived_events: u64,
    pub events: u64,
    pub quarantined: u64,
    /// Uploads held back because one of their files could not be read whole.
    pub held: Vec<HeldUpload>,
    /// Wall time per phase in milliseconds, for RECOUNT_PROFILE (not part of any record).
    #[serde(skip)]
    pub phases: Vec<(String, f64)>,
}

impl LandReport {
    /// Whether an upload asked for has no partition in the world: nothing of it could land.
    pub fn asked_for_what_is_not_there(&self) -> bool {
        self.partitions.iter().any(|p| !p.exists)
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        for p in &self.partitions {
            s.push_str(&p.render());
        }
        for h in &self.held {
            s.push_str(&format!(
                "upload {} HELD BACK: {}: {}; nothing of it landed (fix the file and land {} again)\n",
                h.upload_date,
                crate::sanitize::for_terminal(&h.file),
                crate::sanitize::for_terminal(&h.reason),
                h.upload_date
            ));
        }
        if self.stores_added > 0 {
            s.push_str(&format!("stores: {} added\n", self.stores_added));
        }
        for c in &self.stores_changed {
            s.push_str(&format!("store correction: {}\n", c.describe()));
        }
        for id in &self.stores_readmitted {
            s.push_str(&format!(
                "store {} added: its lines quarantined as an unknown store are read again\n",
                crate::sanitize::for_terminal(id)
            ));
        }
        if !self.stores_changed.is_empty() || !self.stores_readmitted.is_empty() {
            s.push_str(&format!(
                "  {} file version(s) re-derived from their own bytes ({} events); the next v2 run rebuilds the dates they move\n",
                self.rederived_files,
                crate::money::format_count(self.rederived_events as i64)
            ));
        }
        for id in &self.stores_removed {
            s.push_str(&format!(
                "store {} is no longer in stores.csv: the lab keeps it as landed, and still counts its sales\n",
                crate::sanitize::for_terminal(id)
            ));
        }
        if self.quarantined > 0 {
            s.push_str("quarantined lines are listed by `recount quarantine`\n");
        }
        s
    }
}

struct ParsedFile {
    file_id: i32,
    rel: String,
    upload_date: NaiveDate,
    /// The size of the file as it arrived (it is copied into the raw zone as it is parsed).
    bytes: usize,
    md5: String,
    lines: u64,
    /// Its bronze rows as one Arrow batch, built in the parsing thread (None when it has none).
    batch: Option<RecordBatch>,
    events: usize,
    /// The quarantine rows kept (see `Quarantine`), and how many lines were quarantined in all.
    quarantine: Vec<Quarantined>,
    quarantined_lines: u64,
    cells: Vec<Cell>,
    /// The sum of its events' revenue as absolute values: a bound on any store's or country's
    /// total that its rows add to a date.
    abs_revenue: u128,
}

impl ParsedFile {
    fn record(&self, landing_id: i64, version: i32) -> FileRecord<'_> {
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
const MAX_QUARANTINE_ROWS: usize = 1_000;

/// A file's quarantined lines as they are found: the first ones kept, the rest counted.
#[derive(Default)]
struct Quarantine {
    kept: Vec<Quarantined>,
    more: u64,
    first_more: u32,
    last_more: u32,
}

impl Quarantine {
    fn push(&mut self, q: Quarantined) {
        if self.kept.len() < MAX_QUARANTINE_ROWS {
            self.kept.push(q);
        } else {
            if self.more == 0 {
                self.first_more = q.line;
            }
            self.more += 1;
            self.last_more = q.line;
        }
    }

    /// The kept rows, and one more row that counts the rest (on the first of them); and how many
    /// lines were quarantined in all.
    fn finish(mut self) -> (Vec<Quarantined>, u64) {
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
struct Quarantined {
    line: u32,
    reason: String,
    /// The line as it was, cut to 2,000 characters.
    raw_line: String,
}

impl Quarantined {
    fn record<'a>(&'a self, file: &'a ParsedFile) -> QuarantineRecord<'a> {
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
struct Cell {
    business_date: NaiveDate,
    currency: String,
    rows: i64,
    revenue_minor: i64,
    digest: u64,
}

impl Cell {
    fn record<'a>(&'a self, file: &ParsedFile) -> CellRecord<'a> {
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
fn row_digest(e: &PosEvent, buf: &mut Vec<u8>) -> u64 {
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
struct Cells {
    cells: Vec<Cell>,
    buf: Vec<u8>,
}

impl Cells {
    fn add(&mut self, e: &PosEvent<'_>, path: &Path) -> Result<()> {
        let at = match self.cells.iter().rposition(|c| c.business_date == e.business_date && c.currency == e.currency) {
            Some(i) => i,
            None => {
                self.cells.push(Cell {
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
    fn finish(mut self) -> Vec<Cell> {
        self.cells.sort_by(|a, b| (a.business_date, &a.currency).cmp(&(b.business_date, &b.currency)));
        self.cells
    }
}

/// Bronze's columns for one file, filled as its lines are parsed.
struct EventColumns<'s> {
    event_id: StringBuilder,
    basket_id: StringBuilder,
    store_row: Int32Builder,
    till_id: StringBuilder,
    event_ts: TimestampNanosecondBuilder,
    uploaded_at: TimestampNanosecondBuilder,
    upload_date: Date32Builder,
    business_date: Date32Builder,
    revenue: Int64Builder,
    tenders: Int16Builder,
    file_id: Int32Builder,
    line: Int32Builder,
    basket_key: Int64Builder,
    /// The bits of the basket key kept (all 64 but in tests that need keys to collide).
    key_mask: u64,
    /// Each store's row number in this landing (`Tx::number_store_rows`), and the last store
    /// looked up: a file's lines are mostly one store's, and an event's store_id is the store
    /// table's own string, so the same address is the same store.
    store_rows: &'s HashMap<String, i32>,
    last_store: (*const u8, i32),
    rows: usize,
}

impl<'s> EventColumns<'s> {
    fn with_capacity(n: usize, key_mask: u64, store_rows: &'s HashMap<String, i32>) -> EventColumns<'s> {
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
    fn store_row(&mut self, store_id: &str) -> Result<i32> {
        if self.last_store.0 != store_id.as_ptr() {
            let n = *self
                .store_rows
                .get(store_id)
                .ok_or_else(|| eyre!("store {} has no store row", crate::sanitize::for_terminal(store_id)))?;
            self.last_store = (store_id.as_ptr(), n);
        }
        Ok(self.last_store.1)
    }

    fn push(&mut self, e: &PosEvent, file_id: i32, line: u32) -> Result<()> {
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

    fn finish(mut self) -> Result<Option<RecordBatch>> {
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

/// Lands the given upload partitions of `world` into the lab, in one transaction: either every
/// file of the call lands, or none does and the lab is as it was.
pub fn land(lab: &mut Lab, world: &Path, dates: &[NaiveDate]) -> Result<LandReport> {
    let source = Source::of_world(world, None)?;
    land_with(lab, world, &source, dates, super::fail_after_from_env())
}

/// `land` through a given source description (`--source FILE`).
pub fn land_from(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate]) -> Result<LandReport> {
    land_with(lab, world, source, dates, super::fail_after_from_env())
}

pub fn land_with(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate], fail_after: Option<usize>) -> Result<LandReport> {
    // A file that cannot be read whole (corrupt, too big) holds back its own upload: the
    // landing is tried again without it, and the upload is reported with the reason. A landing
    // that ran out of memory is tried again as it was, with more.
    let mut dates = dates.to_vec();
    let mut held: Vec<HeldUpload> = Vec::new();
    loop {
        match land_once(lab, world, source, &dates, fail_after) {
            // Out of DuckDB's limit: nothing of it was kept (land_once undid its copies); again
            // with a larger one, up to DuckDB's share of the memory budget.
            Err(e) if crate::store::is_out_of_memory(&e) && lab.store().raise_limit(true)? => {}
            Err(e) => {
                let Some(bad) = e.downcast_ref::<BadFile>().filter(|b| dates.contains(&b.upload_date)).cloned() else {
                    return Err(e);
                };
                dates.retain(|d| *d != bad.upload_date);
                held.push(HeldUpload { upload_date: bad.upload_date, file: bad.file, reason: bad.reason });
            }
            Ok(mut report) => {
                held.sort_by_key(|h| h.upload_date);
                report.held = held;
                return Ok(report);
            }
        }
    }
}

/// An upload a landing held back, and why: one of its files could not be read whole.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeldUpload {
    pub upload_date: NaiveDate,
    pub file: String,
    pub reason: String,
}

/// A raw file that cannot be landed at all (its upload is held back, not the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadFile {
    pub upload_date: NaiveDate,
    pub file: String,
    pub reason: String,
}

impl std::fmt::Display for BadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.reason)
    }
}

impl std::error::Error for BadFile {}

fn land_once(lab: &mut Lab, world: &Path, source: &Source, dates: &[NaiveDate], fail_after: Option<usize>) -> Result<LandReport> {
    let planning = std::time::Instant::now();
    let plan = plan(lab, world, source, dates)?;
    let planning = planning.elapsed().as_secs_f64() * 1e3;
    let raw_root = lab.raw_root();
    keep_reader(lab, source)?;
    let staged = Staged::default();
    let mut created_dirs = Vec::new();
    // Settings of the connection, not of the transaction: set before it, reset after it, however
    // it ends. A landing is bulk work, in the lower memory limit (`Store::bulk`).
    lab.store().unordered_inserts()?;
    // Until the copies are in place, the next open looks for what a kill would leave.
    super::recovery::mark(&lab.root)?;
    let result = make_partition_dirs(&raw_root, &plan.todo, &mut created_dirs)
        .and_then(|()| lab.store().bulk(false, || write_bronze(lab, &plan, &staged, fail_after)));
    let reset = lab.store().ordered_inserts();
    // Landing may list new basket keys that collide: v2 reads them again.
    lab.key_collisions.set(None);
    let result = result.and_then(|r| reset.map(|()| r).wrap_err("resetting the insertion order"));
    // The copies the parsers staged, even if one of them panicked holding the list.
    let staged = std::mem::take(&mut *staged.lock().unwrap_or_else(|p| p.into_inner()));
    match result {
        Ok(landed) => {
            // Committed: a kill or a failure from here on is finished by the next open
            // (`recovery`), and the error says what is true: the data landed.
            super::crash_point("landing:committed");
            put_in_place(lab, &plan, &staged).map_err(|e| eyre!(crate::error::LabError::LandedUnfinished(format!("{e:#}"))))?;
            Ok(LandReport {
                partitions: landed.partitions,
                stores_added: plan.new_stores.len(),
                stores_changed: plan.changed_stores.clone(),
                stores_readmitted: plan.readmitted_stores.iter().map(|s| s.store_id.clone()).collect(),
                stores_removed: plan.removed_stores.clone(),
                rederived_files: plan.todo.iter().filter(|f| f.rederived).count(),
                rederived_events: landed.rederived_events,
                events: landed.events,
                quarantined: landed.quarantined,
                held: Vec::new(),
                phases: std::iter::once(("planning".to_string(), planning)).chain(landed.phases).collect(),
            })
        }
        Err(e) => {
            undo_copies(&raw_root, &staged, &created_dirs);
            // A copy that could not be removed is left to the next open's recovery.
            if staged.iter().all(|(tmp, _)| !tmp.exists()) {
                super::recovery::unmark(&lab.root)?;
            }
            Err(e)
        }
    }
}

/// What a landing will do: the stores it adds, the files it lands and what each partition holds.
struct Plan {
    dates: Vec<NaiveDate>,
    /// Every store, landed before or now.
    stores: StoreTable,
    new_stores: Vec<raw::Store>,
    changed_stores: Vec<raw::StoreChange>,
    /// New stores whose lines were quarantined as an unknown store: they count now.
    readmitted_stores: Vec<raw::Store>,
    removed_stores: Vec<String>,
    /// Each file to land, new or a correction, or re-derived for a store correction.
    todo: Vec<ToLand>,
    partitions: Vec<PartitionLanded>,
    landed_partitions: std::collections::HashSet<NaiveDate>,
    /// How the files read (the lab's, which the world's must be).
    reader: Reader,
}

/// The lab keeps the reader it lands through (`raw/source.toml`; none for the contract's), since
/// its raw zone holds the files as they came: one lab, one reader. Another reader is refused once
/// a file has landed.
fn keep_reader(lab: &Lab, source: &Source) -> Result<()> {
    let raw_root = lab.raw_root();
    let kept = Reader::of_lab(&raw_root)?;
    if kept == *source.reader() {
        return Ok(());
    }
    if !lab.store().landed_files()?.is_empty() {
        bail!(
            "this lab was landed through another source description (its reader is in {}); land the world it came from, or `recount reset` first",
            raw_root.join(raw::source::LAB_SOURCE_FILE).display()
        );
    }
    std::fs::create_dir_all(&raw_root).wrap_err_with(|| format!("creating {}", raw_root.display()))?;
    let path = raw_root.join(raw::source::LAB_SOURCE_FILE);
    if source.is_contract() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(eyre!(e).wrap_err(format!("removing {}", path.display()))),
            _ => Ok(()),
        };
    }
    write_durably(&path, source.reader().to_toml()?.as_bytes()).wrap_err_with(|| format!("writing {}", path.display()))
}

fn plan(lab: &Lab, world: &Path, source: &Source, dates: &[NaiveDate]) -> Result<Plan> {
    let world_stores = source.stores(world)?;
    // A bad partition name anywhere in the world is an error: it would hide a day of sales.
    source.partitions(world)?;
    let lab_stores = lab.stores()?;
    let mut new_stores = Vec::new();
    let mut changed_stores = Vec::new();
    for s in &world_stores.stores {
        match lab_stores.get(&s.store_id) {
            None => new_stores.push(s.clone()),
            Some(old) if old == s => {}
            Some(old) => changed_stores.push(raw::StoreChange { old: old.clone(), new: s.clone() }),
        }
    }
    let removed_stores: Vec<String> =
        lab_stores.stores.iter().filter(|s| world_stores.get(&s.store_id).is_none()).map(|s| s.store_id.clone()).collect();
    // Every store as the landing reads lines: the world's rows, and the landed stores it no longer lists.
    let mut all_stores = world_stores.stores.clone();
    all_stores.extend(lab_stores.stores.iter().filter(|s| world_stores.get(&s.store_id).is_none()).cloned());
    all_stores.sort_by(|a, b| a.store_id.cmp(&b.store_id));

    // Which files are new; a landed file must be byte-identical to what is offered again.
    let landed_files = lab.store().landed_files()?;
    let mut todo = Vec::new();
    let mut partitions = Vec::new();
    for &d in dates {
        partitions.push(plan_partition(world, source, d, &landed_files, &mut todo)?);
    }
    let readmitted_stores = rederive(lab, &landed_files, &changed_stores, &new_stores, &mut todo)?;
    Ok(Plan {
        dates: dates.to_vec(),
        stores: StoreTable::new(all_stores),
        new_stores,
        changed_stores,
        readmitted_stores,
        removed_stores,
        todo,
        partitions,
        reader: source.reader().clone(),
        landed_partitions: lab.store().landed_uploads()?.into_iter().collect(),
    })
}

/// What the world's partition `d` holds against the lab: each file new (version 1), a correction
/// (other bytes than its current version: its next version) or unchanged, and each landed file
/// the world no longer has (reported). The files to land go into `todo`.
fn plan_partition(
    world: &Path,
    source: &Source,
    d: NaiveDate,
    landed_files: &HashMap<String, Vec<crate::store::LandedFile>>,
    todo: &mut Vec<ToLand>,
) -> Result<PartitionLanded> {
    let dir = source.partition_dir(world, d);
    let exists = dir.is_dir();
    let (files, other) = source.files(world, d)?;
    if files.is_empty() && !other.is_empty() {
        // A description that takes none of a partition's files would land an empty day and say
        // it worked: a layout with a level the template does not name (hourly folders), or a
        // pattern that matches nothing.
        bail!(
            "{}: the source description takes none of the {} entr{} there (the first: {}): the file pattern '{}' matches no file, \
             or the files sit in folders below the partition that the template does not name; nothing was landed",
            dir.display(),
            other.len(),
            if other.len() == 1 { "y" } else { "ies" },
            crate::sanitize::for_terminal(&source.name_in_upload(world, d, &other[0])),
            crate::sanitize::for_terminal(&source.reader().glob)
        );
    }
    let not_taken = other.iter().map(|f| source.name_in_upload(world, d, f)).collect();
    let mut p = PartitionLanded {
        upload_date: d,
        files_landed: 0,
        files_already_landed: 0,
        events: 0,
        quarantined: 0,
        exists,
        files: Vec::new(),
        not_taken,
        dated_in_future: exists && d > Utc::now().date_naive(),
    };
    let prefix = raw::rel_path(d, "");
    let mut seen = std::collections::HashSet::new();
    for path in files {
        let name = source.name_in_upload(world, d, &path);
        let rel = format!("{prefix}{name}");
        seen.insert(rel.clone());
        let versions = landed_files.get(&rel).map(Vec::as_slice).unwrap_or_default();
        let Some(current) = versions.iter().find(|v| v.current) else {
            p.files.push(FileLanded { name: name.clone(), status: FileStatus::New, version: 1, reverts: None });
            todo.push(ToLand { upload_date: d, path, rel, version: 1, supersedes: None, rederived: false });
            continue;
        };
        let md5 = raw::md5_of_file(&path)?;
        if md5 == current.md5 {
            p.files_already_landed += 1;
            p.files.push(FileLanded { name, status: FileStatus::Unchanged, version: current.version, reverts: None });
        } else {
            let version = versions.iter().map(|v| v.version).max().unwrap_or(0) + 1;
            let reverts_to = versions.iter().filter(|v| !v.current && v.md5 == md5).map(|v| v.version).max();
            p.files.push(FileLanded { name, status: FileStatus::Corrected, version, reverts: reverts_to.map(|to| (to, current.version)) });
            todo.push(ToLand {
                upload_date: d,
                path,
                rel,
                version,
                supersedes: Some((current.file_id, current.version)),
                rederived: false,
            });
        }
    }
    let mut missing: Vec<(&String, i32)> = landed_files
        .iter()
        .filter(|(rel, _)| rel.starts_with(&prefix) && !seen.contains(*rel))
        .filter_map(|(rel, vs)| vs.iter().find(|v| v.current).map(|v| (rel, v.version)))
        .collect();
    missing.sort();
    for (rel, version) in missing {
        p.files.push(FileLanded { name: rel[prefix.len()..].to_string(), status: FileStatus::Missing, version, reverts: None });
    }
    Ok(p)
}

/// A store correction, or a new store, re-derives every current file version whose lines depend
/// on the store's row (`files_of_store`): the file's next version, from the bytes the raw zone
/// holds, read under the new row. A file the landing corrects anyway is read under it already.
fn rederive(
    lab: &Lab,
    landed: &HashMap<String, Vec<crate::store::LandedFile>>,
    changed: &[raw::StoreChange],
    new: &[raw::Store],
    todo: &mut Vec<ToLand>,
) -> Result<Vec<raw::Store>> {
    if landed.is_empty() || (changed.is_empty() && new.is_empty()) {
        return Ok(Vec::new());
    }
    let raw_root = lab.raw_root();
    // A new store has no events yet: only lines quarantined as its unknown store depend on it.
    let unknown = if new.is_empty() { Default::default() } else { lab.store().unknown_stores()? };
    let readmitted: Vec<raw::Store> = new.iter().filter(|s| unknown.contains(&s.store_id)).cloned().collect();
    let stores = changed.iter().map(|c| &c.new).chain(&readmitted);
    for store in stores {
        for f in lab.store().files_of_store(&store.store_id)? {
            if todo.iter().any(|t| t.rel == f.file) {
                continue;
            }
            let version = landed.get(&f.file).and_then(|vs| vs.iter().map(|v| v.version).max()).unwrap_or(f.version) + 1;
            todo.push(ToLand {
                upload_date: f.upload_date,
                path: raw_root.join(&f.file),
                rel: f.file,
                version,
                supersedes: Some((f.file_id, f.version)),
                rederived: true,
            });
        }
    }
    Ok(readmitted)
}

/// The partition directories of the raw zone the files go to; those it makes are listed, so that
/// a failure can take them away again.
fn make_partition_dirs(raw_root: &Path, todo: &[ToLand], created: &mut Vec<PathBuf>) -> Result<()> {
    for f in todo {
        // The partition, and the folders below it a described source's file sits in.
        let partition = raw::partition_dir(raw_root, f.upload_date);
        let dir = raw_root.join(&f.rel).parent().map_or(partition.clone(), Path::to_path_buf);
        let mut missing: Vec<PathBuf> =
            dir.ancestors().take_while(|a| a.starts_with(&partition) && !a.exists()).map(Path::to_path_buf).collect();
        if missing.is_empty() {
            continue;
        }
        std::fs::create_dir_all(&dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
        missing.reverse();
        created.extend(missing);
    }
    Ok(())
}

/// What the landing's transaction wrote.
struct Landed {
    partitions: Vec<PartitionLanded>,
    rederived_events: u64,
    events: u64,
    quarantined: u64,
    phases: Vec<(String, f64)>,
}

/// The landing's one transaction: stores, bronze rows, file records, split baskets, partitions.
fn write_bronze(lab: &Lab, plan: &Plan, staged: &Staged, fail_after: Option<usize>) -> Result<Landed> {
    let mut tx = Tx::begin(lab.store(), fail_after)?;
    let t_stores = std::time::Instant::now();
    tx.insert_stores(&plan.new_stores.iter().map(store_row).collect::<Vec<_>>())?;
    let t_stores = t_stores.elapsed();
    let landing_id = tx.store().next_landing_id()?;
    let first_file_id = tx.store().next_file_id()?;
    let t_all = std::time::Instant::now();
    let done = parse_and_insert(lab, &mut tx, plan, staged, first_file_id)?;
    let t_records = std::time::Instant::now();
    let files: Vec<FileRecord> = done.iter().zip(&plan.todo).map(|(pf, f)| pf.record(landing_id, f.version)).collect();
    let cells: Vec<CellRecord> = done.iter().flat_map(|pf| pf.cells.iter().map(|c| c.record(pf))).collect();
    let quarantine: Vec<QuarantineRecord> = done.iter().flat_map(|pf| pf.quarantine.iter().map(|q| q.record(pf))).collect();
    tx.append_landing_records(&files, &cells, &quarantine)?;
    let t_records = t_records.elapsed();
    let mut partitions = plan.partitions.clone();
    let (mut events, mut quarantined, mut rederived_events) = (0u64, 0u64, 0u64);
    for (pf, f) in done.iter().zip(&plan.todo) {
        if f.rederived {
            rederived_events += pf.events as u64;
            continue;
        }
        let p = partitions
            .iter_mut()
            .find(|p| p.upload_date == pf.upload_date)
            .ok_or_else(|| eyre!("upload {} was not planned", pf.upload_date))?;
        p.files_landed += 1;
        p.events += pf.events as u64;
        p.quarantined += pf.quarantined_lines;
        events += pf.events as u64;
        quarantined += pf.quarantined_lines;
    }
    let t_parse_and_append = t_all.elapsed();
    // Every copy is written by now: the disk syncs them while DuckDB looks for split baskets, and
    // the landing waits for both before it commits.
    let raw_root = lab.raw_root();
    let (t_split, synced, t_sync) = std::thread::scope(|s| {
        let sync = s.spawn(|| sync_staged(&plan.todo, &raw_root));
        let abs_revenue: u128 = done.iter().map(|pf| pf.abs_revenue).sum();
        let t_split = keys_and_records(lab, &mut tx, plan, &partitions, (landing_id, first_file_id), (events, quarantined, abs_revenue));
        let waited = std::time::Instant::now();
        let synced = sync.join().unwrap_or_else(|_| Err(eyre!("syncing the landed copies panicked")));
        (t_split, synced, waited.elapsed())
    });
    let t_split = t_split?;
    synced?;
    let commit = tx.commit()?.last().map(|p| p.1).unwrap_or_default();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let phases = vec![
        ("adding stores".to_string(), ms(t_stores)),
        ("parse and insert into bronze, in DuckDB's threads".to_string(), ms(t_parse_and_append - t_records)),
        ("recording files, cells and quarantine".to_string(), ms(t_records)),
        ("finding split baskets".to_string(), ms(t_split)),
        ("waiting for the copies' sync to disk".to_string(), ms(t_sync)),
        ("commit".to_string(), ms(commit)),
    ];
    Ok(Landed { partitions, rederived_events, events, quarantined, phases })
}

/// The landing's work once its rows are in bronze: the revenue check, the keys with several
/// copies and split baskets, and the records of the landing, its partitions, its corrected files
/// and stores. Returns the time the key search took. `abs_revenue`: the landed rows' revenue as
/// absolute values, summed.
fn keys_and_records(
    lab: &Lab,
    tx: &mut Tx,
    plan: &Plan,
    partitions: &[PartitionLanded],
    (landing_id, first_file_id): (i64, i32),
    (events, quarantined, abs_revenue): (u64, u64, u128),
) -> Result<std::time::Duration> {
    // Into an empty bronze (the first file id), every copy of every date is this landing's: when
    // all of them together stay within the limit, no store or country on any date can pass it,
    // and the check's scan of every row, a noticeable part of a first landing, is not needed.
    // Otherwise the check runs, and names the date and the store.
    let within_limit = first_file_id == 1 && abs_revenue <= crate::money::MAX_DAY_REVENUE_MINOR as u128;
    if !plan.todo.is_empty() && !within_limit {
        refuse_revenue_past_limit(tx, first_file_id)?;
    }
    let t_split = std::time::Instant::now();
    if !plan.todo.is_empty() {
        tx.find_split_baskets_and_collisions(first_file_id, lab.key_rows_per_slice)?;
    }
    let t_split = t_split.elapsed();
    // Snapshots from the next one on see the corrections: a diff tells withdrawn baskets by it.
    let from_snapshot = tx.store().snapshot_ids()?.0;
    for (i, f) in plan.todo.iter().enumerate() {
        if let Some((old, _)) = f.supersedes {
            tx.insert_supersession(old, first_file_id + i as i32, from_snapshot)?;
        }
    }
    for c in &plan.changed_stores {
        tx.change_store(&store_row(&c.old), &store_row(&c.new), landing_id, from_snapshot)?;
    }
    for s in &plan.readmitted_stores {
        tx.record_store_change(None, &store_row(s), landing_id, from_snapshot)?;
    }
    let new_partitions: Vec<(NaiveDate, i64)> = partitions
        .iter()
        .filter(|p| p.exists && !plan.landed_partitions.contains(&p.upload_date))
        .map(|p| (p.upload_date, p.files_landed as i64))
        .collect();
    tx.insert_partitions(&new_partitions, landing_id)?;
    if !plan.todo.is_empty() || !plan.new_stores.is_empty() || !plan.changed_stores.is_empty() {
        let (first, last) = (plan.dates.iter().min().copied(), plan.dates.iter().max().copied());
        tx.insert_landing(landing_id, first, last, plan.todo.len() as i64, events as i64, quarantined as i64, Utc::now().naive_utc())?;
    }
    Ok(t_split)
}

/// A date the new files touch whose revenue, summed over every landed copy, would pass what
/// recount keeps exact in every sum: the landing is refused, naming it.
fn refuse_revenue_past_limit(tx: &mut Tx, first_file_id: i32) -> Result<()> {
    let Some(past) = tx.revenue_past_limit(first_file_id, crate::money::MAX_DAY_REVENUE_MINOR)? else { return Ok(()) };
    let who = match &past.store_id {
        Some(s) => format!("store {}", crate::sanitize::for_terminal(s)),
        None => format!("country {}", past.country),
    };
    bail!(
        "business date {}, {who}: revenue over every landed copy would total {} minor units, past the {} recount keeps exact \
         in every sum; nothing was landed",
        past.business_date,
        past.total,
        crate::money::MAX_DAY_REVENUE_MINOR
    )
}

fn store_row(s: &raw::Store) -> StoreRow {
    StoreRow {
        store_id: s.store_id.clone(),
        country: s.country.clone(),
        timezone: s.timezone.name().to_string(),
        currency: s.currency.clone(),
    }
}

/// DuckDB's own threads parse the files (`recount_parse`, below) and insert what they parse, each
/// into its own row groups: parsing, copying and compressing share the cores. Returns the parsed
/// files without their rows, in file id order.
fn parse_and_insert(lab: &Lab, tx: &mut Tx, plan: &Plan, staged: &Staged, first_file_id: i32) -> Result<Vec<ParsedFile>> {
    let threads = tx.store().threads()?;
    let files =
        plan.todo.iter().enumerate().map(|(i, f)| (f.upload_date, f.path.clone(), f.rel.clone(), first_file_id + i as i32)).collect();
    let key_mask = u64::MAX.checked_shr(64 - lab.basket_key_bits.clamp(1, 64)).unwrap_or(u64::MAX);
    let lanes = (threads.max(1) as usize).div_ceil(2);
    let store_rows =
        tx.number_store_rows(plan.stores.stores.iter().map(|s| (s.store_id.as_str(), s.country.as_str(), s.currency.as_str())))?;
    let job = Arc::new(ParseJob::new(
        files,
        plan.stores.clone(),
        store_rows,
        plan.reader.clone(),
        lab.raw_root(),
        key_mask,
        lanes,
        staged.clone(),
    ));
    let inserted = if plan.todo.is_empty() { Ok(0) } else { tx.insert_events(job.clone()) };
    let mut done = std::mem::take(&mut *job.done.lock().map_err(poisoned)?);
    if let Some(e) = job.error.lock().map_err(poisoned)?.take() {
        return Err(e);
    }
    let inserted = inserted.wrap_err("appending bronze events")?;
    done.sort_by_key(|f| f.file_id);
    let parsed_events: usize = done.iter().map(|f| f.events).sum();
    if inserted != parsed_events || done.len() != plan.todo.len() {
        bail!("landing inserted {inserted} events from {} files, but {parsed_events} were parsed from {}", done.len(), plan.todo.len());
    }
    tx.step("appending bronze events")?;
    Ok(done)
}

/// The corrections shipped with `world` (`world/corrections/`) that the lab has not landed.
pub(crate) fn pending_corrections(lab: &Lab, world: &Path) -> Result<Vec<raw::corrections::Correction>> {
    let landed = lab.store().landed_files()?;
    let uploads = lab.store().landed_uploads()?;
    raw::corrections::pending(world, &uploads, |rel, md5| landed.get(rel).is_some_and(|vs| vs.iter().any(|v| v.md5 == md5)))
}

/// One file a landing lands: a new path (version 1) or a correction of a landed one.
struct ToLand {
    upload_date: NaiveDate,
    /// Where the world holds it.
    path: PathBuf,
    /// Its path in the raw zone (upload date and name).
    rel: String,
    version: i32,
    /// The version it replaces: (file id, version).
    supersedes: Option<(i32, i32)>,
    /// Re-derived for a store correction: the same bytes as the version it replaces.
    rederived: bool,
}

/// Writes a staged copy (synced to disk before COMMIT by `sync_staged`).
fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::lake::crash_point("landing:write");
    std::fs::write(path, bytes)
}

/// Waits until the staged copies and their directory entries are on disk: a staged copy must
/// outlive a power cut once the landing's COMMIT says its rows are in bronze. On Linux one
/// syncfs(2) of the raw zone's file system does it for every file at once (one journal commit,
/// not one a file); elsewhere each file and directory is synced.
fn sync_staged(todo: &[ToLand], raw_root: &Path) -> Result<()> {
    crate::lake::crash_point("landing:fsync");
    if todo.is_empty() {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let root = std::fs::File::open(raw_root).wrap_err_with(|| format!("opening {}", raw_root.display()))?;
        // SAFETY: syncfs only reads the descriptor, which `root` keeps open for the call.
        if unsafe { libc::syncfs(root.as_raw_fd()) } == 0 {
            return Ok(());
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for f in todo {
        let staged = staged_path(&raw_root.join(&f.rel));
        std::fs::File::open(&staged).and_then(|f| f.sync_all()).wrap_err_with(|| format!("syncing {}", staged.display()))?;
        dirs.extend(staged.parent().map(Path::to_path_buf));
    }
    // The lab's root holds the mark that sends the next open's recovery to these copies.
    dirs.extend(raw_root.parent().map(Path::to_path_buf));
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        std::fs::File::open(&d).and_then(|f| f.sync_all()).wrap_err_with(|| format!("syncing {}", d.display()))?;
    }
    Ok(())
}

/// After the landing commits: superseded versions set aside, the staged copies moved into place,
/// and the raw zone's stores.csv written as recovery would write it.
fn put_in_place(lab: &Lab, plan: &Plan, staged: &[(PathBuf, PathBuf)]) -> Result<()> {
    let raw_root = lab.raw_root();
    for f in plan.todo.iter().filter(|f| f.supersedes.is_some()) {
        set_aside(&raw_root, f)?;
    }
    super::crash_point("landing:set-aside");
    for (tmp, dest) in staged {
        std::fs::rename(tmp, dest).wrap_err_with(|| format!("moving {} into the raw zone", dest.display()))?;
    }
    std::fs::create_dir_all(&raw_root).wrap_err_with(|| format!("creating {}", raw_root.display()))?;
    let stores = raw_root.join(raw::STORES_FILE);
    std::fs::write(&stores, lab.stores()?.to_csv()?).wrap_err_with(|| format!("writing {}", stores.display()))?;
    super::recovery::unmark(&lab.root)
}

/// After a correction commits: the version it replaces leaves the raw zone's current layout for
/// the versions directory (its bytes unchanged), before the new version is renamed into place.
fn set_aside(raw_root: &Path, f: &ToLand) -> Result<()> {
    let Some((_, old_version)) = f.supersedes else { return Ok(()) };
    let current = raw_root.join(&f.rel);
    let kept = raw::superseded_path(raw_root, &f.rel, old_version);
    if let Some(dir) = kept.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
    }
    std::fs::rename(&current, &kept).wrap_err_with(|| format!("keeping {} as {}", current.display(), kept.display()))
}

/// After a failed landing: the staged copies go, and so do the partition directories the landing
/// made (remove_dir only removes empty ones) and their parents up to the raw root.
fn undo_copies(raw_root: &Path, staged: &[(PathBuf, PathBuf)], created_dirs: &[PathBuf]) {
    for (tmp, _) in staged {
        let _ = std::fs::remove_file(tmp);
    }
    for dir in created_dirs.iter().rev() {
        let mut d = dir.as_path();
        while d.starts_with(raw_root) && std::fs::remove_dir(d).is_ok() {
            match d.parent() {
                Some(p) => d = p,
                None => break,
            }
        }
    }
}

/// Parses one raw file: its bronze rows, cells and quarantine, and the bytes as they arrived.
fn parse_file(job: &ParseJob, path: &Path, rel: &str, upload_date: NaiveDate, file_id: i32) -> Result<(ParsedFile, Vec<u8>)> {
    let (reader, stores) = (&job.reader, &job.stores);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    // About 300 bytes a line, or 40 compressed: enough room for most files without a regrow.
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let per_line = if reader.format == raw::source::Format::Parquet || reader.compression_of(&name) != raw::source::Compression::None {
        40
    } else {
        300
    };
    let mut columns = EventColumns::with_capacity(bytes.len() / per_line + 16, job.key_mask, &job.store_rows);
    let mut cells = Cells::default();
    let mut quarantine = Quarantine::default();
    let mut abs_revenue = 0u128;
    let lines = raw::mapped::read_events(path, &bytes, reader, stores, upload_date, |line, verdict, text| {
        match verdict {
            Ok(e) => {
                columns.push(&e, file_id, line)?;
                abs_revenue += u128::from(e.revenue_minor.unsigned_abs());
                cells.add(&e, path)?;
            }
            Err(reason) => {
                let mut kept: String = text.chars().take(2000).collect();
                if kept.len() < text.len() {
                    kept.push('…');
                }
                quarantine.push(Quarantined { line, reason, raw_line: kept });
            }
        }
        Ok(())
    })
    .map_err(|e| eyre!("{}: {e:#}", path.display()))?;
    let events = columns.rows;
    let (quarantine, quarantined_lines) = quarantine.finish();
    let parsed = ParsedFile {
        file_id,
        rel: rel.to_string(),
        upload_date,
        md5: raw::md5_hex(&bytes),
        bytes: bytes.len(),
        lines,
        batch: columns.finish()?,
        events,
        quarantine,
        quarantined_lines,
        cells: cells.finish(),
        abs_revenue,
    };
    Ok((parsed, bytes))
}

/// Where a file is staged beside its place in the raw zone until the landing commits: its name
/// and `.landing` (recovery finishes or removes what a kill left).
fn staged_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".landing");
    dest.with_file_name(name)
}

/// One landing's files, handed to DuckDB's `recount_parse(job)` scan. DuckDB calls the scan from
/// each of its threads; a thread takes a file, parses it, copies it into the raw zone (staged,
/// renamed after COMMIT) and returns its rows a vector at a time.
///
/// Each thread inserts into row groups of its own, so each thread works through a contiguous run
/// of files: a row group then holds neighbouring uploads, and its zone maps keep a per-date scan
/// to a few row groups (files dealt out in turn spread a date over many row groups, and every
/// per-date statement of the backfill read more). The files are cut into one lane per two threads; the first thread of a lane takes files from its front, the
/// second from its back, and they meet wherever their speeds take them. A thread whose lane is
/// empty (more threads than two per lane) takes from the back of the fullest lane.
struct ParseJob {
    /// (upload date, source path, path in the raw zone, file id), in file id order.
    files: Vec<(NaiveDate, PathBuf, String, i32)>,
    stores: StoreTable,
    /// Each store's row number (`Tx::number_store_rows`).
    store_rows: HashMap<String, i32>,
    reader: Reader,
    raw_root: PathBuf,
    key_mask: u64,
    /// Each lane's files not yet taken: [front, back) indices into `files`.
    lanes: Vec<Mutex<(usize, usize)>>,
    /// The lane of each thread that has called the scan, and whether it works from the back.
    lane_of: Mutex<HashMap<std::thread::ThreadId, (usize, bool)>>,
    /// Each thread's file whose rows are not all returned yet: (rows, first row not returned).
    current: Mutex<HashMap<std::thread::ThreadId, (RecordBatch, usize)>>,
    /// Every parsed file, without its rows.
    done: Mutex<Vec<ParsedFile>>,
    /// Copies written next to their final place, shared with the landing that undoes or moves them.
    staged: Staged,
    /// The first error, with its context (DuckDB's error would carry only its text).
    error: Mutex<Option<color_eyre::Report>>,
}

fn poisoned<T>(_: T) -> color_eyre::Report {
    eyre!("a landing thread panicked")
}

impl ParseJob {
    #[allow(clippy::too_many_arguments)]
    fn new(
        files: Vec<(NaiveDate, PathBuf, String, i32)>,
        stores: StoreTable,
        store_rows: HashMap<String, i32>,
        reader: Reader,
        raw_root: PathBuf,
        key_mask: u64,
        lanes: usize,
        staged: Staged,
    ) -> ParseJob {
        let n = files.len();
        let lanes = lanes.clamp(1, n.max(1));
        ParseJob {
            lanes: (0..lanes).map(|k| Mutex::new((k * n / lanes, (k + 1) * n / lanes))).collect(),
            files,
            stores,
            store_rows,
            reader,
            raw_root,
            key_mask,
            lane_of: Mutex::default(),
            current: Mutex::default(),
            done: Mutex::default(),
            staged,
            error: Mutex::default(),
        }
    }

    /// The next file for this thread: the next of its lane from its end of it, else the back of
    /// the fullest lane.
    fn take_file(&self) -> Result<Option<usize>> {
        let me = std::thread::current().id();
        let (lane, from_back) = {
            let mut lane_of = self.lane_of.lock().map_err(poisoned)?;
            let arrived = lane_of.len();
            *lane_of.entry(me).or_insert(((arrived / 2) % self.lanes.len(), arrived % 2 == 1))
        };
        {
            let mut own = self.lanes[lane].lock().map_err(poisoned)?;
            if own.0 < own.1 {
                return Ok(Some(if from_back {
                    own.1 -= 1;
                    own.1
                } else {
                    own.0 += 1;
                    own.0 - 1
                }));
            }
        }
        let mut fullest: Option<(usize, std::sync::MutexGuard<'_, (usize, usize)>)> = None;
        for l in &self.lanes {
            let g = l.lock().map_err(poisoned)?;
            let left = g.1 - g.0;
            if left > 0 && fullest.as_ref().is_none_or(|(n, _)| left > *n) {
                fullest = Some((left, g));
            }
        }
        Ok(fullest.map(|(_, mut g)| {
            g.1 -= 1;
            g.1
        }))
    }

    /// Parses a file and stages its copy; None when no file is left.
    fn parse_next(&self) -> Result<Option<RecordBatch>> {
        while let Some(i) = self.take_file()? {
            let (d, path, rel, file_id) = &self.files[i];
            let (mut pf, bytes) = parse_file(self, path, rel, *d, *file_id).map_err(|e| {
                let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
                eyre!(BadFile { upload_date: *d, file, reason: format!("{e:#}") })
            })?;
            let dest = self.raw_root.join(rel);
            let tmp = staged_path(&dest);
            self.staged.lock().map_err(poisoned)?.push((tmp.clone(), dest));
            write_durably(&tmp, &bytes).wrap_err_with(|| format!("copying {}", path.display()))?;
            let batch = pf.batch.take();
            self.done.lock().map_err(poisoned)?.push(pf);
            if batch.is_some() {
                return Ok(batch);
            }
        }
        Ok(None)
    }

    /// Up to one vector of rows for the calling thread: the rest of its file, else a new file,
    /// else (when no file is left) the rest of a file another thread started. None: all returned.
    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        let me = std::thread::current().id();
        if let Some(rows) = self.current.lock().map_err(poisoned)?.remove(&me) {
            return Ok(Some(rows));
        }
        if let Some(batch) = self.parse_next()? {
            return Ok(Some((batch, 0)));
        }
        let mut current = self.current.lock().map_err(poisoned)?;
        let other = current.keys().next().copied();
        Ok(other.and_then(|t| current.remove(&t)))
    }
}

/// bronze.event_rows' columns, in order, as the parser builds them.
fn event_fields() -> Vec<Field> {
    let text = |n: &str| Field::new(n, DataType::Utf8, true);
    let ts = |n: &str| Field::new(n, DataType::Timestamp(TimeUnit::Nanosecond, None), true);
    vec![
        text("event_id"),
        text("basket_id"),
        Field::new("store_row", DataType::Int32, true),
        text("till_id"),
        ts("event_ts"),
        ts("uploaded_at"),
        Field::new("upload_date", DataType::Date32, true),
        Field::new("business_date", DataType::Date32, true),
        Field::new("revenue_minor", DataType::Int64, true),
        Field::new("tenders", DataType::Int16, true),
        Field::new("file_id", DataType::Int32, true),
        Field::new("line", DataType::Int32, true),
        Field::new("basket_key", DataType::Int64, true),
    ]
}

/// The landing's files as rows for `recount_parse` (see `ParseJob`).
impl RowSource for ParseJob {
    fn fields(&self) -> Vec<Field> {
        event_fields()
    }

    fn max_threads(&self) -> u64 {
        self.files.len().max(1) as u64
    }

    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        ParseJob::next_rows(self)
    }

    fn keep_rest(&self, batch: RecordBatch, offset: usize) -> Result<()> {
        self.current.lock().map_err(poisoned)?.insert(std::thread::current().id(), (batch, offset));
        Ok(())
    }

    fn failed(&self, e: color_eyre::Report) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(files: usize, lanes: usize) -> ParseJob {
        let d = NaiveDate::from_ymd_opt(2026, 8, 15).unwrap();
        let files = (0..files).map(|i| (d, PathBuf::new(), format!("f{i}"), i as i32 + 1)).collect();
        ParseJob::new(files, StoreTable::default(), HashMap::new(), Reader::default(), PathBuf::new(), u64::MAX, lanes, Staged::default())
    }

    fn take_all(job: &ParseJob) -> Vec<usize> {
        std::iter::from_fn(|| job.take_file().unwrap()).collect()
    }

    #[test]
    fn two_threads_work_a_lane_from_both_ends_and_a_third_takes_the_back_of_the_fullest() {
        let one = job(7, 1);
        let (front, back) = std::thread::scope(|s| {
            let a = s.spawn(|| (one.take_file().unwrap(), one.take_file().unwrap())).join().unwrap();
            let b = s.spawn(|| take_all(&one)).join().unwrap();
            (a, b)
        });
        // The first thread takes files from the front, the second from the back: each thread's
        // files (and so its row groups) stay one contiguous run.
        assert_eq!(front, (Some(0), Some(1)));
        assert_eq!(back, vec![6, 5, 4, 3, 2]);
        assert_eq!(one.take_file().unwrap(), None);

        let two = job(8, 2);
        let got = std::thread::scope(|s| {
            let a = s.spawn(|| two.take_file().unwrap()).join().unwrap();
            let b = s.spawn(|| two.take_file().unwrap()).join().unwrap();
            let c = s.spawn(|| take_all(&two)).join().unwrap();
            (a, b, c)
        });
        // Lanes 0..4 and 4..8: threads one and two share lane 0, thread three has lane 1 and,
        // once it is empty, takes from the back of lane 0.
        assert_eq!(got, (Some(0), Some(3), vec![4, 5, 6, 7, 2, 1]));
    }

    #[test]
    fn one_thread_alone_takes_every_file_once() {
        let five = job(5, 2);
        let mut got = take_all(&five);
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert_eq!(job(0, 2).take_file().unwrap(), None, "a landing with no file");
    }
}
